"""Where a GPU run's start-up goes before any read is aligned (issue #42: the GPU path's
fixed cost against the CPU path's), each step timed in fresh processes:

    python -m bench.start_probe [--runs 3]

Rows: the interpreter alone; ``import s2g.cli``; ``from numba import cuda``;
``cuda.is_available()`` (cuInit, device count); the first device's name
(``cuda.gpus[0].name``); ``cuda.get_current_device()`` (the primary context);
a first ``device_array``; and the process's exit with a context held (os._exit, as
``s2g align`` leaves) against without. Per row the median of ``--runs`` fresh processes.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

STEPS = r"""
import time, json, os, sys
T = [("start", time.perf_counter())]
import s2g.cli
T.append(("import s2g.cli", time.perf_counter()))
from numba import cuda
T.append(("import numba.cuda", time.perf_counter()))
ok = cuda.is_available()
T.append(("cuda.is_available()", time.perf_counter()))
name = cuda.gpus[0].name if ok else None
T.append(("cuda.gpus[0].name", time.perf_counter()))
if ok:
    cuda.get_current_device()
T.append(("get_current_device() (context)", time.perf_counter()))
if ok:
    cuda.device_array(16)
T.append(("first device_array", time.perf_counter()))
if ok:
    from s2g.seeded import chains_gpu
    chains_gpu.kernels()
T.append(("chains_gpu.kernels() (seeding kernels loaded)", time.perf_counter()))
print(json.dumps([(k, b - a) for (_, a), (k, b) in zip(T, T[1:])] + [("name", str(name))]))
sys.stdout.flush()
os._exit(0)
"""


def _proc(code: str) -> tuple:
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return time.perf_counter() - t, p.stdout, p.stderr


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    rows: dict = {}
    for _ in range(args.runs):
        for label, code in (("process: python -c pass", "pass"),
                            ("process: import s2g.cli, os._exit", "import s2g.cli, os; os._exit(0)"),
                            ("process: a context, os._exit",
                             "from numba import cuda; import os; cuda.device_array(1); os._exit(0)"),
                            ("process: a context, normal exit",
                             "from numba import cuda; cuda.device_array(1)")):
            rows.setdefault(label, []).append(_proc(code)[0])
        wall, out, err = _proc(STEPS)
        rows.setdefault("process: all steps", []).append(wall)
        try:
            for k, v in json.loads(out.strip().splitlines()[-1]):
                if k != "name":
                    rows.setdefault(k, []).append(v)
                else:
                    rows["device"] = v
        except (ValueError, IndexError):
            print(err, file=sys.stderr)
    for k, v in rows.items():
        print(f"{k:45s} {v}" if isinstance(v, str) else
              f"{k:45s} median {statistics.median(v):.3f} s  ({', '.join(f'{x:.3f}' for x in v)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
