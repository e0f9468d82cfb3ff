"""Shared fixtures and markers for the s2g test suite.

Markers are registered here (there is no pytest.ini); other test modules may append
their own ``config.addinivalue_line("markers", ...)`` lines to ``pytest_configure``.
"""
from __future__ import annotations

import atexit
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
# `pytest tests/...` (without -m) must still import s2g from this checkout and tests/naive.py
for _p in (str(REPO), str(TESTS)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

#: the five real graphs and their queries (tests/data/real/README.md: sources, MIT
#: notices), carried by the repository; ../shared/data/real where a checkout lacks them.
#: The big LPA files are gzipped here: use the ``real_data`` fixture, which gives every
#: file under its plain name; REAL_DATA itself holds the others under their plain names.
REAL_DATA_REPO = TESTS / "data" / "real"
REAL_DATA = REAL_DATA_REPO if REAL_DATA_REPO.is_dir() else (REPO / ".." / "shared" / "data" / "real").resolve()


from crash_dumps import pytest_sessionstart  # noqa: E402,F401 - a hook (tests/crash_dumps.py)
from crash_dumps import pytest_configure as _crash_configure  # noqa: E402
from crash_dumps import pytest_terminal_summary as _crash_summary  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU")
    config.addinivalue_line("markers", "slow: takes more than a few seconds")
    _crash_configure(config)


def write_text(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


@pytest.fixture
def gfa_file(tmp_path):
    """Factory: gfa_file(text, name='g.gfa') -> path of a GFA file with that text."""
    counter = [0]

    def make(text: str, name: str | None = None) -> str:
        counter[0] += 1
        return write_text(tmp_path / (name or f"g{counter[0]}.gfa"), text)

    return make


@pytest.fixture
def reads_file(tmp_path):
    """Factory: reads_file([(name, seq), ...], fmt='fasta'|'fastq') -> path."""
    counter = [0]

    def make(reads, fmt: str = "fasta", name: str | None = None) -> str:
        counter[0] += 1
        if fmt == "fasta":
            text = "".join(f">{n}\n{s}\n" for n, s in reads)
        else:
            text = "".join(f"@{n}\n{s}\n+\n{'I' * len(s)}\n" for n, s in reads)
        return write_text(tmp_path / (name or f"r{counter[0]}.{'fa' if fmt == 'fasta' else 'fq'}"), text)

    return make


def plain_real_data(dest: Path) -> Path:
    """REAL_DATA with every ``X.gz`` available as ``X``: links to the plain files and the
    compressed ones decompressed, under ``dest`` (or REAL_DATA itself if nothing is
    compressed)."""
    import gzip
    import shutil

    if not any(REAL_DATA.glob("*/*.gz")):
        return REAL_DATA
    for src in sorted(REAL_DATA.glob("*/*")):
        out = dest / src.parent.name / src.name
        out.parent.mkdir(parents=True, exist_ok=True)
        if src.suffix == ".gz":
            with gzip.open(src, "rb") as fi, open(out.with_suffix(""), "wb") as fo:
                shutil.copyfileobj(fi, fo)
        else:
            out.symlink_to(src)
    return dest


@pytest.fixture(scope="session")
def real_data(tmp_path_factory):
    if not REAL_DATA.is_dir():
        pytest.skip(f"real graphs not found at {REAL_DATA}")
    return plain_real_data(tmp_path_factory.mktemp("real"))


@pytest.fixture(scope="session")
def real_graph(real_data):
    """``real_graph("mt_minigraph/MT.gfa", break_cycles)``: a real graph, loaded once per
    session (the GPU tests of several modules share them, and `fast`'s device tables
    are cached per graph object)."""
    import warnings

    from s2g.graph import load_graph
    cache = {}

    def get(name: str, break_cycles: bool = True):
        key = (name, bool(break_cycles))
        if key not in cache:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                cache[key] = load_graph(str(Path(real_data) / name), break_cycles=break_cycles)
        return cache[key]

    return get


# ------------------------------------------------------------------ -m gpu: compile once
#
# A cold ``pytest -m gpu`` spent most of its time compiling, one kernel after another.
# When GPU tests are selected and a GPU is present, the `fast` kernels and the Numba CPU
# code those tests need (tests/gpu_cases.py: fast_kernels, WARM_BY_MODULE, warm) are
# compiled from the session's start by worker processes (``python -c``, one per task,
# as many at a time as CPUs but one) into the disk caches, in the background; the tests
# then load them. A GPU test waits only for the tasks of its own module, and a run of
# GPU tests only takes the modules in the order of GPU_MODULE_ORDER (those that need
# little compiled first), so the early ones run while the rest compile.
# S2G_TEST_WARM=0 turns the pool off, S2G_TEST_WARM=N sets the number of workers.
# Nothing here can fail a test: a failed task is reported and its code compiles in the
# test as before. The terminal summary reports the pool and what the test process
# still compiled itself.

#: GPU tests run module by module in this order (least to compile first)
GPU_MODULE_ORDER = ("test_gpu_real", "test_v0", "test_fast", "test_seeded", "test_gpu_traceback")

_GPU_REPORT: dict = {}


def _module_name(item) -> str:
    mod = getattr(item, "module", None)
    return mod.__name__.rpartition(".")[2] if mod is not None else ""


@pytest.hookimpl(trylast=True)          # after ``-m``/``-k`` deselected what they do
def pytest_collection_modifyitems(config, items):
    """A run of GPU tests only (``-m gpu``): modules in GPU_MODULE_ORDER (stable within
    a module). Any other selection keeps its order."""
    if not items or any(it.get_closest_marker("gpu") is None for it in items):
        return
    rank = {m: r for r, m in enumerate(GPU_MODULE_ORDER)}
    items.sort(key=lambda it: rank.get(_module_name(it), len(rank)))


def _unit_name(item) -> str:
    """What a GPU test waits for (gpu_cases.unit: its module, or the test itself)."""
    import gpu_cases
    return gpu_cases.unit(_module_name(item), getattr(item, "originalname", item.name))


def pytest_collection_finish(session):
    session.config._s2g_gpu_modules = sorted({
        _unit_name(item) for item in session.items if item.get_closest_marker("gpu") is not None})


def _gpu_here() -> bool:
    import os
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "") == "1":
        return False
    from s2g.variants.registry import cuda_available
    return cuda_available()[0]


@pytest.fixture(scope="session", autouse=True)
def _gpu_compile_once(request):
    import os
    modules = getattr(request.config, "_s2g_gpu_modules", [])
    if not modules or not _gpu_here():
        yield
        return
    _watch_compiles()
    from s2g.config import settings
    setting = os.environ.get("S2G_TEST_WARM", "")
    if setting == "0" or settings().no_cache:
        _GPU_REPORT["pool"] = f"off (S2G_TEST_WARM={setting!r}, no_cache={settings().no_cache})"
        yield
        return
    import gpu_cases
    tasks = gpu_cases.warm_tasks(modules, first=GPU_MODULE_ORDER[:2])
    workers = int(setting) if setting.isdigit() else max(1, (os.cpu_count() or 2) - 1)
    pool = _WarmPool(tasks, max(1, min(len(tasks), workers)))
    _GPU_REPORT["pool"] = pool
    yield
    pool.finish()


@pytest.fixture(autouse=True)
def _knobs_per_test():
    """s2g/config.py reads the environment once: what a test changes (an S2G_* variable
    set with monkeypatch, then ``config.reset()``; ``config.configure()``) ends with it,
    the settings going back to those before it."""
    from s2g import config
    before = config._SETTINGS
    yield
    config._SETTINGS = before


@pytest.fixture(autouse=True)
def _numba_launches_off_the_gpu_tests(request, monkeypatch):
    """Tests not marked ``gpu`` see numba.cuda's launch path on every host, as in CI (no
    driver there): on a GPU machine the lean path (knob ``lean_cuda``) would be on in this
    process; the ones about it set ``_lean._STATE`` themselves."""
    if request.node.get_closest_marker("gpu") is None:
        from s2g.variants import _lean
        monkeypatch.setattr(_lean, "_STATE", [False])
    yield


@pytest.fixture(autouse=True)
def _gpu_wait_for_compiles(request):
    """A GPU test starts when its module's (or its own, gpu_cases.WARM_BY_TEST) precompile
    tasks are done."""
    pool = _GPU_REPORT.get("pool")
    if isinstance(pool, _WarmPool) and request.node.get_closest_marker("gpu") is not None:
        pool.wait_module(_unit_name(request.node))


class _WarmPool:
    """gpu_cases.warm(task) for every task, each in a fresh ``python -c`` process, at most
    ``n`` at a time, in order (gpu_cases.warm_tasks: longest first), in a thread."""

    CODE = ("import json, sys; sys.path[:0] = json.loads(sys.argv[1]); import gpu_cases; "
            "r = gpu_cases.warm(tuple(json.loads(sys.argv[2]))); "
            "print('S2G-WARM', json.dumps([r[1], r[2]]), flush=True)")

    def __init__(self, tasks, n):
        import tempfile
        import threading
        import time
        self.tasks, self.n = list(tasks), n
        self.events = {t: threading.Event() for t in self.tasks}
        self.done, self.waits, self.running = [], [], []
        self.stop = False
        self.t0 = time.perf_counter()
        self.wall = None
        self.tmp = tempfile.TemporaryDirectory()
        self.thread = threading.Thread(target=self._run, name="s2g-warm", daemon=True)
        self.thread.start()

    #: a task running longer than this is killed (reported; the test compiles it)
    TIMEOUT = 900

    def _run(self):
        try:
            self._schedule()
        finally:                     # whatever happens, no test waits forever
            for ev in self.events.values():
                ev.set()

    def _schedule(self):
        import json
        import os
        import subprocess
        import time
        pending = list(self.tasks)
        while pending or self.running:
            if self.stop:
                pending = []
                self.kill()
            while pending and len(self.running) < self.n:
                task = pending.pop(0)
                out = open(os.path.join(self.tmp.name, f"{len(pending)}.log"), "w+")
                p = subprocess.Popen([sys.executable, "-c", self.CODE,
                                      json.dumps([str(REPO), str(TESTS)]), json.dumps(list(task))],
                                     stdout=out, stderr=subprocess.STDOUT)
                self.running.append((task, p, out, time.perf_counter()))
            time.sleep(0.05)
            for task, p, _, t1 in self.running:
                if time.perf_counter() - t1 > self.TIMEOUT:
                    p.kill()
            for item in [r for r in self.running if r[1].poll() is not None]:
                self.running.remove(item)
                task, p, out, t1 = item
                out.seek(0)
                text = out.read()
                out.close()
                line = [ln for ln in text.splitlines() if ln.startswith("S2G-WARM ")]
                if p.returncode == 0 and line:
                    sec, err = json.loads(line[-1][len("S2G-WARM "):])
                else:
                    sec, err = time.perf_counter() - t1, f"exit {p.returncode}: {text[-800:]}"
                self.done.append((task, t1 - self.t0, sec, err))
                self.events[task].set()
        self.wall = time.perf_counter() - self.t0

    def wait_module(self, module):
        import time
        import gpu_cases
        t = time.perf_counter()
        for task in gpu_cases.warm_tasks([module]):
            if task in self.events:
                self.events[task].wait()
        if time.perf_counter() - t > 0.01:
            self.waits.append((module, t - self.t0, time.perf_counter() - t))

    def finish(self):
        """The tests are over (or interrupted): stop the tasks still running or pending."""
        self.stop = True
        self.thread.join()
        self.tmp.cleanup()

    def kill(self):
        for _, p, _, _ in list(self.running):
            p.kill()


def _kill_pool():
    pool = _GPU_REPORT.get("pool")
    if isinstance(pool, _WarmPool):
        pool.kill()


atexit.register(_kill_pool)      # a session interrupted by Ctrl-C leaves no workers behind


def _watch_compiles():
    """Record what this process compiles: Numba CPU functions (numba:compile events,
    outermost only), `fast` kernels (loaded from the disk cache or compiled), the GPU
    traceback kernel and V1-V4's kernels (first request, timed)."""
    import importlib
    import time

    from numba.core import event

    class Compiles(event.Listener):
        def __init__(self):
            self.depth, self.t0, self.rows = 0, 0.0, []

        def on_start(self, ev):
            self.depth += 1
            if self.depth == 1:
                self.t0 = time.perf_counter()

        def on_end(self, ev):
            self.depth -= 1
            if self.depth == 0:
                disp = ev.data["dispatcher"]
                name = f"{disp.py_func.__module__}.{disp.py_func.__qualname__}"
                self.rows.append((time.perf_counter() - self.t0, name,
                                  tuple(map(str, ev.data["args"]))))

    cpu = Compiles()
    event.register("numba:compile", cpu)
    _GPU_REPORT["cpu"] = cpu.rows
    kern = _GPU_REPORT.setdefault("kernels", [])

    def timed(label, get):
        seen = set()

        def wrapper(*args, **kw):
            key = (args, tuple(sorted(kw.items())))
            if key in seen:
                return get(*args, **kw)
            t = time.perf_counter()
            k = get(*args, **kw)
            seen.add(key)
            hits = sum(k._cache_hits.values()) if hasattr(k, "_cache_hits") else None
            kern.append((label, args, time.perf_counter() - t, hits))
            return k
        return wrapper

    from s2g.trace import gpu_kernel
    from s2g.variants import fast
    from s2g.variants.fast import driver as fast_driver
    # wrapped where the callers look them up: s2g.variants.fast.driver imports the name
    # (its launches), s2g.warmup_worker reads fast.get_kernel, s2g.trace.gpu calls
    # gpu_kernel.get_kernel()
    fast.get_kernel = fast_driver.get_kernel = timed("fast", fast.get_kernel)
    gpu_kernel.get_kernel = timed("gpu_traceback", gpu_kernel.get_kernel)
    for v in ("v1_antidiag", "v2_rolling", "v3_coop", "v4_interread"):
        mod = importlib.import_module(f"s2g.variants.{v}")
        mod._kernel = timed(v, mod._kernel)


def pytest_terminal_summary(terminalreporter, config):
    _gpu_summary(terminalreporter)
    _crash_summary(terminalreporter, config)      # last: CI keeps the output's tail


def _gpu_summary(terminalreporter):
    if not _GPU_REPORT:
        return
    w = terminalreporter.write_line
    terminalreporter.section("s2g: GPU compile report")
    pool = _GPU_REPORT.get("pool")
    if isinstance(pool, _WarmPool):
        wall = f"{pool.wall:.1f} s" if pool.wall is not None else "unfinished"
        w(f"precompile pool: {len(pool.tasks)} tasks, {pool.n} processes at a time, {wall} "
          "from the session's first test (start, seconds, task):")
        for task, start, sec, err in sorted(pool.done, key=lambda r: r[1]):
            w(f"  {start:6.1f} {sec:6.1f}  {task}" + (f"  FAILED: {err}" if err else ""))
        for module, at, sec in pool.waits:
            w(f"  {module}'s first GPU test waited {sec:.1f} s for its tasks (at {at:.1f} s)")
    elif pool:
        w(f"precompile pool: {pool}")
    import gpu_cases
    from s2g.scoring import Mode
    want = {(G, K, int(m), bool(p)) for G, K, m, p in gpu_cases.fast_kernels()}
    rows = _GPU_REPORT.get("kernels", [])
    fk = [r for r in rows if r[0] == "fast"]
    used = {(a[0], a[1], int(a[2]), bool(a[4]) if len(a) > 4 else False) for _, a, _, _ in fk}
    w(f"fast kernels used in this process: {len(used)} (gpu_cases.fast_kernels(): {len(want)}); "
      f"loaded from the disk cache: {sum(1 for r in fk if r[3])}, "
      f"compiled here: {sum(1 for r in fk if not r[3])} ({sum(r[2] for r in fk if not r[3]):.1f} s)")
    for extra in sorted(used - want):
        w(f"  not in fast_kernels(): G={extra[0]} K={extra[1]} {Mode(extra[2]).name} pair={extra[3]}")
    for label, args, sec, hits in rows:
        if sec >= 0.5 or label != "fast":
            w(f"  {sec:6.1f} s  {label}{tuple(args)}" + ("" if hits is None else f"  (disk cache hits {hits})"))
    cpu = _GPU_REPORT.get("cpu", [])
    w(f"Numba CPU functions compiled in this process: {len(cpu)}, {sum(r[0] for r in cpu):.1f} s")
    for sec, name, _ in sorted(cpu, reverse=True)[:20]:
        w(f"  {sec:6.1f} s  {name}")
