"""Which Numba cache loads a run makes, when, from which thread, and what each costs
(issue #42, ``docs/plans/startup.md`` candidate 2: the start-up's "first calls"):

    python -m bench.cache_load_probe [--out loads.tsv] -- align GRAPH READS -o out.gaf --timings

Runs ``s2g.cli.main`` with those arguments in this process, with every Numba cache's
``load_overload`` (Numba's CPU caches and numba-cuda's, whichever the run imports)
wrapped: per load its start (seconds since this probe started), its wall seconds, the
thread, the function and whether it was found. Prints a summary to stderr (loads, their
summed wall by thread, the 15 dearest) and writes every load as TSV to ``--out``. The
wrapped calls are the same calls; the timing adds ~1 us each. As the ``s2g`` command does
(``s2g/__main__.py``), Numba's BLAS probes are skipped first (knob ``blas_probe``); the
probe leaves with ``sys.exit`` (the command's ``fast_exit`` does not apply).
"""
from __future__ import annotations

import argparse
import importlib.abc
import importlib.util
import sys
import threading
import time

T0 = time.perf_counter()
LOADS: list = []
_PATCHED: set = set()


def _wrap(cls):
    if cls in _PATCHED or "load_overload" not in vars(cls):
        return
    _PATCHED.add(cls)
    orig = cls.load_overload

    def load_overload(self, sig, target_context, _orig=orig):
        t = time.perf_counter()
        res = _orig(self, sig, target_context)
        name = getattr(getattr(self, "_py_func", None), "__qualname__", None) or \
            getattr(self, "_name", "?")
        LOADS.append((t - T0, time.perf_counter() - t, threading.current_thread().name,
                      str(name), res is not None))
        return res
    cls.load_overload = load_overload


def _wrap_module(module):
    for v in vars(module).values():
        if isinstance(v, type):
            _wrap(v)


class _Finder(importlib.abc.MetaPathFinder):
    """Wraps the ``Cache`` classes of any module named ``*.caching`` as it is imported."""

    def find_spec(self, fullname, path, target=None):
        if not fullname.endswith("caching"):
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def run(module):
            exec_module(module)
            _wrap_module(module)
        spec.loader.exec_module = run
        return spec


def summary(loads, out=sys.stderr):
    total = sum(d for _, d, *_ in loads)
    print(f"# {len(loads)} cache loads, {total:.3f} s summed wall "
          f"({sum(1 for *_, hit in loads if hit)} found)", file=out)
    by_thread: dict = {}
    for _, d, th, *_ in loads:
        by_thread[th] = by_thread.get(th, 0.0) + d
    for th, d in sorted(by_thread.items(), key=lambda x: -x[1]):
        print(f"#   thread {th}: {d:.3f} s", file=out)
    print("# dearest: start_s wall_s thread function found", file=out)
    for t, d, th, name, hit in sorted(loads, key=lambda x: -x[1])[:15]:
        print(f"  {t:7.3f} {d:6.3f} {th:<20} {name} {hit}", file=out)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", help="TSV of every load")
    if "--" not in argv:
        ap.error("give the s2g arguments after --")
    cut = argv.index("--")
    args = ap.parse_args(argv[:cut])
    sys.meta_path.insert(0, _Finder())
    for mod in list(sys.modules.values()):          # already imported (rare)
        if getattr(mod, "__name__", "").endswith("caching"):
            _wrap_module(mod)
    from s2g._numba import skip_blas_probe
    skip_blas_probe()                               # as s2g/__main__.py's entry()
    from s2g.cli import main as s2g_main
    code = s2g_main(argv[cut + 1:])
    loads = list(LOADS)
    summary(loads)
    if args.out:
        with open(args.out, "w") as f:
            f.write("start_s\twall_s\tthread\tfunction\tfound\n")
            for row in sorted(loads):
                f.write("\t".join(f"{x:.4f}" if isinstance(x, float) else str(x)
                                  for x in row) + "\n")
    return code


if __name__ == "__main__":
    sys.exit(main())
