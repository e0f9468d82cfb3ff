"""s2g.warmup: compile ahead in worker processes (issue 16, cold start).

What must hold: the plan names the kernels a run really launches; the probes that decide
"cold" look at functions that exist; a first run on empty caches starts workers, waits
for them, and writes the same GAF; a failing or hanging worker never breaks a run.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from s2g import config, warmup, warmup_worker
from s2g.scoring import Mode, Scoring

REPO = Path(__file__).resolve().parents[1]


def kinds(tasks):
    return sorted(t["kind"] for t, _ in tasks)


def test_plan_per_variant():
    sc = Scoring()
    cpu = warmup.plan("simd", Mode.LOCAL, sc, 150, traceback=True, tb_gpu=False)
    assert kinds(cpu) == ["align", "trace"]
    stages = {t["kind"]: st for t, st in cpu}
    assert stages == {"align": ("align",), "trace": ("traceback", "gaf")}
    gpu = warmup.plan("fast", Mode.LOCAL, sc, 150, traceback=True, tb_gpu=True, inline=True)
    assert kinds(gpu) == ["fast_kernel", "trace"]    # fast's tables: numpy in local mode
    assert kinds(warmup.plan("fast", Mode.GLOBAL, sc, 150, traceback=False)) == [
        "fast_host", "fast_kernel", "gaf"]            # ... and global row 0 compiled
    trace = [st for t, st in gpu if t["kind"] == "trace"][0]
    assert "align" in trace            # the GPU traceback's half runs in the align stage
    assert kinds(warmup.plan("cpu", Mode.GLOBAL, sc, 100, traceback=False)) == ["align", "gaf"]
    assert kinds(warmup.plan("v0", Mode.LOCAL, sc, 100, traceback=False)) == ["gaf"]


def test_seeded_plan():
    """A seeded run (the default on graphs over 100,000 columns): the seeded task (index,
    seeds, chains, windows, window kernel) for the seeding and window stages, the CPU lane
    traceback (the windows' traceback) and GAF; on a GPU variant one task that runs the
    GPU windows (their walks are the tracebacks). None in global mode."""
    sc = Scoring()
    for v in ("simd", "cpu", "v0"):
        tasks = warmup.plan(v, Mode.LOCAL, sc, 150, traceback=True, seeded=True)
        assert tasks == warmup.seeded_plan(v, Mode.LOCAL, sc, 150)
        assert kinds(tasks) == ["seeded", "trace"]
        st = {t["kind"]: s for t, s in tasks}
        assert st == {"seeded": ("seed", "align"), "trace": ("traceback", "gaf")}
        seeded, trace = (t for t, _ in tasks)
        assert seeded == {"kind": "seeded", "gpu": False, "mode": 0, "scoring": [2, 4, 4, 2],
                          "read_len": 150}                     # the same for every CPU variant
        assert trace == {"kind": "trace", "gpu": False, "mode": 0, "scoring": [2, 4, 4, 2],
                         "read_len": 150}                       # = the full-DP run's task
        assert trace in [t for t, _ in warmup.plan("simd", Mode.LOCAL, sc, 150)]
    assert kinds(warmup.seeded_plan("simd", Mode.SEMIGLOBAL, sc, 150, traceback=False)) == [
        "gaf", "seeded"]
    assert warmup.seeded_plan("simd", Mode.GLOBAL, sc, 150) == []
    # long reads' windows run pruned and are traced by their recorded walks: no lanes
    # (probing them said "compiling" on every warm long-read CPU run); the GAF task
    assert kinds(warmup.seeded_plan("simd", Mode.LOCAL, sc, 10_000)) == ["gaf", "seeded"]
    config.configure(prune_min_len=8000)     # the run's read length decides, not the
    try:                                      # task's (capped at WARM_MAX_LEN)
        assert kinds(warmup.seeded_plan("simd", Mode.LOCAL, sc, 10_000)) == ["gaf", "seeded"]
        assert kinds(warmup.seeded_plan("simd", Mode.LOCAL, sc, 6_000)) == ["seeded", "trace"]
    finally:
        config.reset()
    for knob in ("tb_prune_walk", "prune_min_len"):
        config.configure(**{knob: False if knob == "tb_prune_walk" else 0})
        try:
            assert kinds(warmup.seeded_plan("simd", Mode.LOCAL, sc, 10_000)) == [
                "seeded", "trace"]
        finally:
            config.reset()
    # reads too short to seed would take the unseeded reads' full DP instead
    lens = {n: warmup.seeded_plan("simd", Mode.LOCAL, sc, n)[0][0]["read_len"]
            for n in (30, 50_000)}
    assert lens == {30: warmup.SEEDED_MIN_LEN, 50_000: warmup.WARM_MAX_LEN}
    (gpu, st), (win, wst), (tbw, tst) = warmup.seeded_plan("fast", Mode.LOCAL, sc, 150)
    assert gpu == {"kind": "seeded", "gpu": True, "variant": "fast", "mode": 0,
                   "scoring": [2, 4, 4, 2], "read_len": 150}
    assert st == ("seed", "align", "traceback", "gaf")
    # the window kernel (the `fast` kernel's window form) compiles in a task of its own
    from s2g.variants import fast
    from s2g.variants.fast import windows as fast_windows
    G, K = fast_windows.shape(150)
    assert win == {"kind": "fast_kernel",
                   "key": [G, K, 0, bool(fast.prmt_scores(2, 4, 4, 2)), False, 0, True]}
    assert wst == tst == ("align",)
    # and its traceback form (gpu_tb_warp, on by default): one shape whatever the reads
    from s2g.trace.gpu_warp import form_shape
    assert tbw["key"] == [*form_shape()] + win["key"][2:] + [True]
    (probe,) = warmup._dispatchers(win)
    assert probe.py_func.__s2g_source__ == fast.kernel_source(
        G, K, 0, prmt_sub=True, win=True).__s2g_source__ != fast.kernel_source(
        G, K, 0, prmt_sub=True).__s2g_source__
    config.configure(gpu_window_fast=False)
    try:
        assert kinds(warmup.seeded_plan("fast", Mode.LOCAL, sc, 150)) == ["seeded"]
    finally:
        config.reset()


@pytest.mark.parametrize("mode,n", [(Mode.LOCAL, 150), (Mode.LOCAL, 100), (Mode.LOCAL, 1000),
                                    (Mode.SEMIGLOBAL, 150), (Mode.GLOBAL, 40),
                                    (Mode.LOCAL, 10_000), (Mode.SEMIGLOBAL, 10_000)])
def test_fast_key_is_what_run_kernel_launches(mode, n):
    """fast_key repeats run_kernel's choice: pair kernel where it fits, choose_config."""
    from s2g.variants import fast
    sc = Scoring()
    G, K, m, prmt, pair, pipe = warmup.fast_key(sc, mode, n)
    want_pair = fast.pair_fits(sc, mode, n) and config.settings().fast_pair
    assert (G, K) == fast.choose_config(n, want_pair) and pair == want_pair and m == int(mode)
    # the pipelined kernel for reads of several strips (SG = 32 / G groups a stage)
    assert pipe == (fast.WARP // G if fast.PIPE and n > G * K else 0)
    if n == 10_000:
        assert pipe == 1 and G == fast.WARP
        keys = warmup.fast_keys(sc, mode, n)                  # every long-read group size
        assert keys == [[G, K, m, prmt, pair, 1], [G, K, m, prmt, pair, 0],
                        [fast.BIG_G, fast.BIG_K, m, prmt, pair, 0]]
        tasks = [t for t, _ in warmup.plan("fast", mode, sc, n) if t["kind"] == "fast_kernel"]
        assert [t["key"] for t in tasks] == keys
    else:
        assert warmup.fast_keys(sc, mode, n) == [[G, K, m, prmt, pair, pipe]]
    assert prmt == fast.prmt_scores(*sc.as_tuple())
    if mode == Mode.LOCAL and n == 150:
        assert (G, K, pair) == (fast.PAIR_G, 38, True)      # the bundled example's kernel


def test_fast_key_none_beyond_int32():
    assert warmup.fast_key(Scoring(100, 4, 4, 2), Mode.GLOBAL, 10_000_000) is None


ALL_TASKS = [{"kind": "fast_kernel", "key": [4, 38, 0, True, True, 0]},
             {"kind": "fast_host", "mode": 2, "scoring": [2, 4, 4, 2]},
             {"kind": "align", "variant": "simd", "mode": 0, "scoring": [2, 4, 4, 2], "read_len": 9},
             {"kind": "align", "variant": "cpu", "mode": 0, "scoring": [2, 4, 4, 2], "read_len": 9},
             {"kind": "trace", "gpu": False, "mode": 0, "scoring": [2, 4, 4, 2], "read_len": 9},
             {"kind": "trace", "gpu": True, "mode": 0, "scoring": [2, 4, 4, 2], "read_len": 9},
             {"kind": "trace", "gpu": True, "mode": 0, "scoring": [2, 4, 4, 2], "read_len": 3000},
             {"kind": "gaf", "mode": 0, "scoring": [2, 4, 4, 2], "read_len": 9},
             {"kind": "seeded", "gpu": False, "mode": 0, "scoring": [2, 4, 4, 2], "read_len": 100},
             {"kind": "seeded", "gpu": True, "variant": "fast", "mode": 0, "scoring": [2, 4, 4, 2],
              "read_len": 100},
             {"kind": "fast_kernel", "key": [8, 19, 0, True, False, 0, True]},
             {"kind": "long_kernel", "key": [True, True, True]},
             {"kind": "long_kernel", "key": [False, True, False]}]


@pytest.mark.parametrize("task", ALL_TASKS, ids=lambda t: t["kind"] + str(t.get("gpu", "")))
def test_probes_name_cached_dispatchers(task):
    """Every task's cold probe looks at real, disk-cached dispatchers (a rename in the
    kernel modules would otherwise silently turn first-use compiling off)."""
    ds = warmup._dispatchers(task)
    assert ds, task
    for d in ds:
        cf = d._cache._cache_file
        assert cf._index_path.endswith(".nbi")
        assert isinstance(cf._load_index(), dict)


def test_long_reads_probe_the_long_window_kernel():
    """Reads whose traceback windows go to the long-window kernel (s2g/trace/long/): a
    full-graph GPU run plans that kernel's own task beside the trace task, whose probe is
    the kernel's cache (the generated source get_kernel compiles), so a new kernel is
    compiled ahead even where the host code is warm; the trace task's probe is its host
    code alone (a cold kernel does not start it too)."""
    from s2g.trace.long import plan, source
    sc = Scoring()
    for n in (900, 3000):
        tasks = [t for t, _ in warmup.plan("fast", Mode.LOCAL, sc, n, traceback=True,
                                           tb_gpu=True)]
        (trace,) = [t for t in tasks if t["kind"] == "trace"]
        assert len(warmup._dispatchers(trace)) == 2
        longs = [t for t in tasks if t["kind"] == "long_kernel"]
        if n == 900:
            assert not longs
            continue
        assert longs == [{"kind": "long_kernel", "key": [True, True, False]}]
        (probe,) = warmup._dispatchers(longs[0])
        src = probe.py_func.__s2g_source__
        assert src == source.kernel_source(plan.S, True, True, sim=False,
                                           note=f"max_registers={plan.MAXREG}").__s2g_source__
        assert "IS_LOCAL = 1" in src

@pytest.mark.parametrize("mode", [Mode.LOCAL, Mode.SEMIGLOBAL])
def test_long_reads_compile_their_long_window_kernels_in_tasks_of_their_own(mode):
    """Seeded GPU runs of reads whose windows reach the long-window kernel, and full-graph
    runs whose GPU traceback does: each generated long-window kernel is a task of its own
    (a fresh H100 spent 262-300 s compiling a 10 kbp run's tasks in one process), for the
    stages that launch it: in local mode the pruned scoring kernel for the window stage
    and the traced one for the traceback; one kernel for both in the other modes. Its
    probe is the source :func:`s2g.trace.long.launch.get_kernel` compiles; none for short
    reads, CPU variants, or with ``gpu_long`` off."""
    from s2g.trace.long import plan as lplan
    from s2g.trace.long import source
    sc = Scoring()
    local = mode == Mode.LOCAL
    got = [(t["key"], st) for t, st in warmup.seeded_plan("fast", mode, sc, 10_000)
           if t["kind"] == "long_kernel"]
    if local:
        assert got == [([True, True, True], ("align",)), ([True, True, False], ("traceback",))]
    else:
        assert got == [([False, True, False], ("align", "traceback"))]
    for key, _ in got:
        (probe,) = warmup._dispatchers({"kind": "long_kernel", "key": key})
        want = source.kernel_source(lplan.S, key[0], key[1], sim=False, prune=key[2],
                                    note=f"max_registers={lplan.MAXREG}")
        assert probe.py_func.__s2g_source__ == want.__s2g_source__
        assert ("IS_LOCAL = 1" in want.__s2g_source__) == key[0]
    # full-graph DP with the traceback on the GPU: the traced kernel, beside the trace task
    full = [t for t, _ in warmup.plan("fast", mode, sc, 3000, traceback=True, tb_gpu=True)]
    assert {"kind": "long_kernel", "key": [local, True, False]} in full
    assert not [t for t, _ in warmup.plan("fast", mode, sc, 150, traceback=True, tb_gpu=True)
                if t["kind"] == "long_kernel"]
    for n in (150, 1000):
        assert "long_kernel" not in kinds(warmup.seeded_plan("fast", mode, sc, n))
    assert "long_kernel" not in kinds(warmup.seeded_plan("simd", mode, sc, 10_000))
    assert [warmup._label(t) for t, _ in warmup.seeded_plan("fast", mode, sc, 10_000)] == (
        ["seeded", "long_kernel (pruned)", "long_kernel"] if local else
        ["seeded", "long_kernel"])
    config.configure(gpu_long=False)
    try:
        assert kinds(warmup.seeded_plan("fast", mode, sc, 10_000)) == ["seeded"]
    finally:
        config.reset()


def test_kernel_tasks_get_their_kernels(monkeypatch):
    """The worker's side: a ``long_kernel`` task asks
    :func:`s2g.trace.long.launch.get_kernel` for its key's kernel at the default strip
    height, a ``fast_kernel`` task :func:`s2g.variants.fast.get_kernel` for its key's, the
    window form where the key's 7th element says so (on a GPU each compiles its kernel
    for its signature into the disk cache)."""
    from s2g import warmup_worker
    from s2g.trace.long import launch
    from s2g.variants import fast
    seen = []
    monkeypatch.setattr(launch, "get_kernel", lambda *a: seen.append(a))
    monkeypatch.setattr(fast, "get_kernel", lambda *a: seen.append(a))
    for key in ([True, False, True], [False, True, False]):
        warmup_worker.run_task({"kind": "long_kernel", "key": key})
    warmup_worker.run_task({"kind": "fast_kernel", "key": [8, 19, 1, False, False, 0, True]})
    warmup_worker.run_task({"kind": "fast_kernel", "key": [4, 38, 0, True, True, 1]})
    warmup_worker.run_task({"kind": "fast_kernel",
                            "key": [8, 19, 0, True, False, 0, True, True]})
    assert seen == [(None, True, False, True), (None, False, True, False),
                    (8, 19, 1, False, False, 0, True, False),
                    (4, 38, 0, True, True, 1, False, False),
                    (8, 19, 0, True, False, 0, True, True)]     # the traceback form


def test_traceback_form_is_warmed_with_its_knob():
    """With ``gpu_tb_warp`` on, a seeded run of short reads warms the window form's
    traceback form beside the window form (it compiled for 47-110 s in the first run that
    used it, sessions 58-59), in the one shape every launch of it has (8 lanes x 24 rows:
    150 bp reads with insertions reach 160 rows, which took a second shape, K = 24, that
    warm-up had not compiled); not for reads over one 8-lane strip, not in global mode
    (the form traces local and semiglobal windows), nor with the knob off."""
    from s2g.config import configure, settings
    from s2g.trace.gpu_warp import form_shape
    from s2g.variants.fast.geometry import MAX_K, SHORT_G
    from s2g.warmup import window_kernel_tasks
    old = settings().gpu_tb_warp
    try:
        configure(gpu_tb_warp=True)
        assert form_shape() == (SHORT_G, MAX_K)
        for mode in (0, 1):
            for n in (60, 150, 190):
                keys = [t["key"] for t, _ in window_kernel_tasks(mode, (2, 4, 4, 2), n)]
                assert keys[1] == [SHORT_G, MAX_K] + keys[0][2:] + [True]
        assert len(window_kernel_tasks(2, (2, 4, 4, 2), 150)) == 1
        assert len(window_kernel_tasks(0, (2, 4, 4, 2), 300)) == 1
        configure(gpu_tb_warp=False)
        assert len(window_kernel_tasks(0, (2, 4, 4, 2), 150)) == 1
    finally:
        configure(gpu_tb_warp=old)


def test_kernel_probes_are_what_the_run_compiles(monkeypatch):
    """The cold probe of a ``long_kernel`` or window-form ``fast_kernel`` task is the
    source :func:`get_kernel` itself hands ``cuda.jit`` (a probe of another source is cold
    on every warm run: "compiling (first run)" and a worker each time), also under a
    register cap or the shared-memory exchange, which go into the source's text."""
    import types

    import numba.cuda
    from s2g.trace.long import launch
    from s2g.trace.long import plan as lplan
    from s2g.variants.fast import kernel as fk
    jitted = []

    def jit(*a, **k):            # records the kernels (the generated modules' functions)
        return lambda fn: (jitted.append(fn) if hasattr(fn, "__s2g_source__") else None) or fn
    monkeypatch.setattr(launch, "cuda", types.SimpleNamespace(jit=jit))
    monkeypatch.setattr(launch, "loaded", lambda d: d)
    monkeypatch.setattr(launch, "_KERNELS", {})
    monkeypatch.setattr(numba.cuda, "jit", jit)
    monkeypatch.setattr(fk, "loaded", lambda d: d)
    monkeypatch.setattr(fk, "_KERNELS", {})
    for maxreg in (0, 96):
        monkeypatch.setattr(lplan, "MAXREG", maxreg)
        for key in ([True, True, True], [True, False, False], [False, True, False]):
            jitted.clear()
            launch._KERNELS.clear()            # (its key leaves the process's cap out)
            launch.get_kernel(None, *key)
            (probe,) = warmup._dispatchers({"kind": "long_kernel", "key": key})
            assert jitted[0].__s2g_source__ == jitted[1].__s2g_source__, (maxreg, key)
            assert probe is jitted[1]          # (the fake jit hands the function back)
    for maxreg, exchange in ((0, "shfl"), (64, "shfl"), (0, "shared")):
        monkeypatch.setattr(fk, "MAX_REGISTERS", maxreg)
        monkeypatch.setattr(fk, "EXCHANGE", exchange)
        for key in ([8, 19, 0, True, False, 0, True], [32, 24, 1, False, False, 0, True]):
            jitted.clear()
            fk._KERNELS.clear()
            fk.get_kernel(*key)
            (probe,) = warmup._dispatchers({"kind": "fast_kernel", "key": key})
            assert jitted[0].__s2g_source__ == jitted[1].__s2g_source__, (maxreg, key)
            assert probe is jitted[1]


def test_kernel_tasks_follow_the_scoring_and_the_traceback():
    """Scores beyond the PRMT byte tables take the compare + select kernels (the key's
    ``prmt`` False, as the launches decide); ``--no-traceback`` plans no traced
    long-window kernel in local mode."""
    from s2g.trace.long import source
    from s2g.variants import fast
    big = [200, 4, 4, 2]
    assert not source.prmt_fits(200, 4) and not fast.prmt_scores(*big)
    keys = [t["key"] for t, _ in warmup.long_kernel_tasks(Mode.LOCAL, big, 10_000)]
    assert keys == [[True, False, True], [True, False, False]]
    assert [t["key"] for t, _ in warmup.long_kernel_tasks(Mode.LOCAL, big, 10_000,
                                                         traceback=False)] == [[True, False, True]]
    (win, _), (tbw, _) = warmup.window_kernel_tasks(Mode.LOCAL, big, 150)
    assert win["key"][3] is False and tbw["key"][3] is False
    seeded = warmup.seeded_plan("fast", Mode.LOCAL, Scoring(), 10_000, traceback=False)
    assert [t["key"] for t, _ in seeded if t["kind"] == "long_kernel"] == [[True, True, True]]


def test_long_seeded_gpu_probe_skips_find_mode():
    """A seeded GPU task of long reads (windows past the one-thread kernel: long-window
    kernel, scores first) does not probe ``summarize_sel``, which such a run never
    compiles: probing it started a 2.5 s task on every warm 10 kbp run (H200, session 35)."""
    from s2g.trace import gpu_program
    base = {"kind": "seeded", "gpu": True, "variant": "fast", "mode": 0,
            "scoring": [2, 4, 4, 2]}
    mid = warmup._dispatchers(dict(base, read_len=1000))      # 1e6 cells: find mode
    assert gpu_program.summarize_sel in mid
    long = warmup._dispatchers(dict(base, read_len=10000))
    assert gpu_program.summarize_sel not in long and gpu_program.sizes in long
    # pruned long windows: the programs made per node (gpu_long_programs), not per column:
    # walk_bounds is not probed (such a run never compiles it; probing it kept the first
    # warm runs after a cold start waiting 3.5 s each, H200, session 39)
    from s2g.trace.long import programs_gpu, prune
    assert prune.walk_bounds not in long and programs_gpu.node_records in long
    assert any(getattr(d, "py_func", None) is programs_gpu.spread_body for d in long)
    # not the pruned long-window kernel: a long_kernel task of its own probes it
    assert not [d for d in long if "IS_LOCAL" in getattr(getattr(d, "py_func", None),
                                                         "__s2g_source__", "")]
    # the hand-offs' ranges kernel (gpu_prune_handoff, on by default)
    assert sum(getattr(getattr(d, "py_func", None), "__name__", "") == "prune_ranges"
               for d in long) == 1
    config.configure(gpu_long_programs=False)
    try:
        off = warmup._dispatchers(dict(base, read_len=10000))
    finally:
        config.reset()
    assert prune.walk_bounds in off and programs_gpu.node_records not in off


def test_short_seeded_gpu_probe_skips_the_column_programs():
    """A seeded GPU task of short reads traced in the fast kernel's traceback form
    (gpu_tb_warp) does not probe ``gpu_program.sizes``, which such a run never compiles:
    probing it kept every warm 150 bp GPU run after a fresh install waiting ~1.6-2 s for
    a worker (MHC, H100, session 69). Global mode and the knob off do compile it."""
    from s2g.trace import gpu_program
    base = {"kind": "seeded", "gpu": True, "variant": "fast", "scoring": [2, 4, 4, 2],
            "read_len": 150}
    for mode in (Mode.LOCAL, Mode.SEMIGLOBAL):
        assert gpu_program.sizes not in warmup._dispatchers(dict(base, mode=int(mode)))
    assert gpu_program.sizes in warmup._dispatchers(dict(base, mode=int(Mode.GLOBAL)))
    config.configure(gpu_tb_warp=False)
    try:
        assert gpu_program.sizes in warmup._dispatchers(dict(base, mode=int(Mode.LOCAL)))
    finally:
        config.reset()


_PROBED = """
import sys
from s2g import warmup
from s2g.graph import load_graph
from s2g.index import build_index
from s2g.reads import read_reads
from s2g.scoring import Mode, Scoring
from s2g.seeded import SeededAligner
from s2g.simulate import simulate
gfa, fq, _ = simulate(sys.argv[1], total_bases=6000, n_reads=3, seed=4)
g = load_graph(gfa)
reads = read_reads(fq)
for mode in (Mode.LOCAL, Mode.SEMIGLOBAL):
    gpu = SeededAligner(g, build_index(g), Scoring(), mode, device="gpu")
    res = gpu.align_batch(reads)
    gpu.traceback(reads, res)
    (task,) = [t for t, _ in warmup.seeded_plan("fast", mode, Scoring(), 150)
               if t["kind"] == "seeded"]
    cold = [d.py_func.__qualname__ for d in warmup._dispatchers(task)
            if hasattr(d, "signatures") and not d.signatures]
    print(int(mode), "cold:", *cold)
"""


def test_seeded_gpu_probe_is_what_a_gpu_run_compiles(tmp_path):
    """Every function the seeded GPU task probes is one a seeded GPU run of short reads
    compiles (under the CUDA simulator, local and semiglobal mode): a probed function no run
    compiles leaves the task cold for ever, and every run starts a worker and waits."""
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", S2G_CONFIG="no_cache=1",
               PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    p = subprocess.run([sys.executable, "-c", _PROBED, str(tmp_path / "s")], env=env,
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout + p.stderr
    lines = p.stdout.strip().splitlines()
    assert lines == [f"{int(Mode.LOCAL)} cold:", f"{int(Mode.SEMIGLOBAL)} cold:"], p.stdout


def _env(monkeypatch, **values):
    """Set (a string) or unset (None) S2G_* variables; the settings read them again."""
    for var, v in values.items():
        if v is None:
            monkeypatch.delenv(var, raising=False)
        else:
            monkeypatch.setenv(var, v)
    config.reset()


def test_off_switches(monkeypatch):
    _env(monkeypatch, S2G_PREWARM="0")
    assert not warmup.enabled()
    assert warmup.start("simd", Mode.LOCAL, Scoring(), 150) is None
    _env(monkeypatch, S2G_PREWARM="1", S2G_NO_CACHE="1")
    assert not warmup.enabled()
    _env(monkeypatch, S2G_NO_CACHE=None, S2G_PREWARM=None, S2G_CONFIG=None)
    monkeypatch.setattr(warmup, "_cores", lambda: 2)
    assert warmup.enabled() and not warmup.enabled(first_use=True)   # s2g warmup: yes
    monkeypatch.setattr(warmup, "_cores", lambda: 16)
    assert warmup.enabled(first_use=True)
    _env(monkeypatch, S2G_PREWARM="1")
    monkeypatch.setattr(warmup, "_cores", lambda: 1)
    assert warmup.enabled(first_use=True)
    config.configure(prewarm="0")                       # the API's way
    assert not warmup.enabled()


def test_workers_get_the_settings_and_prewarm_off(monkeypatch):
    """The warm-up workers run with this process's knobs (configure() included) and
    S2G_PREWARM=0 (a seeded task runs the CLI, which must not start workers of its own)."""
    _env(monkeypatch, S2G_PREWARM="1", S2G_CONFIG="prewarm=1,long_log=1", S2G_NO_CACHE=None)
    config.configure(fast_pipe_p=3)
    env = config.child_environ(prewarm="0")
    assert env["S2G_PREWARM"] == "0" and "prewarm" not in env.get("S2G_CONFIG", "")
    assert sorted(env["S2G_CONFIG"].split(",")) == ["fast_pipe_p=3", "long_log=1"]
    values, _ = config.from_environ(env)
    assert values["prewarm"] == "0" and values["long_log"] is True and values["fast_pipe_p"] == 3


def _sleeper(monkeypatch):
    monkeypatch.setattr(warmup, "_CODE", "import time; time.sleep(60)")


def test_hung_worker_is_killed(monkeypatch):
    _sleeper(monkeypatch)
    t = time.perf_counter()
    pw = warmup.Prewarm([({"kind": "gaf"}, ("gaf",))], timeout=1.0)
    pw.wait("gaf")
    assert time.perf_counter() - t < 20
    (sec, err), = pw.results.values()
    assert err is not None and sec < 20
    # the report --timings prints: the task, its seconds, FAILED, and the stage's wait
    rep = pw.report()
    assert rep.startswith("compiled ahead in 1 processes: gaf ") and "FAILED" in rep
    assert "stages waited: gaf " in rep
    pw.close()


def test_close_stops_workers(monkeypatch):
    _sleeper(monkeypatch)
    pw = warmup.Prewarm([({"kind": "gaf"}, ("gaf",)), ({"kind": "x"}, ("align",))], jobs=2)
    time.sleep(0.5)
    procs = list(pw._procs.values())
    assert procs
    pw.close()
    for p in procs:
        assert p.wait(timeout=10) is not None
    pw.wait("gaf", timeout=10)
    pw.wait("align", timeout=10)
    assert pw.done()


def test_a_probe_no_worker_meets_is_not_waited_for_again(tmp_path, monkeypatch):
    """A task whose worker ends well but whose probe stays cold (a probed function the
    worker never compiles) is remembered for these sources: later runs neither start it
    nor say they compile; a failed worker is not; an edit of s2g forgets it."""
    from s2g import _numba, warmup_unmet
    from s2g.variants import codegen
    monkeypatch.setattr(codegen, "_cache_dir", lambda: str(tmp_path))
    monkeypatch.setattr(_numba, "SOURCES", "stamp-a")
    monkeypatch.setattr(warmup, "_dispatchers", lambda task: [warmup._Cold()])
    never, bad = {"kind": "gaf", "x": 1}, {"kind": "gaf", "x": 2}
    assert warmup.cold(never) and warmup.cold(bad)
    monkeypatch.setattr(warmup, "_CODE", "import sys; print('S2G-WARM-OK' if "
                        "sys.argv[1].endswith('1}') else 'no')")
    pw = warmup.Prewarm([(never, ("gaf",)), (bad, ("align",))], jobs=2)
    pw.wait("gaf", timeout=60)
    pw.wait("align", timeout=60)
    pw.close()
    assert pw.unmet == [warmup.task_name(never)]
    assert "still cold after its worker, not waited for again: gaf" in pw.report()
    assert not warmup.cold(never) and warmup.cold(never, raw=True)
    assert warmup.cold(bad)                        # its worker failed: tried again
    assert (tmp_path / "warmup-unmet.json").exists()
    monkeypatch.setattr(_numba, "SOURCES", "stamp-b")             # s2g edited
    assert warmup.cold(never) and warmup_unmet.known() == set()


def _example(tmp_path, n_reads=6):
    from s2g.simulate import simulate
    gfa, fq, _ = simulate(str(tmp_path / "s"), total_bases=600, n_reads=n_reads, seed=4,
                          read_len=60)
    return gfa, fq


def _run_aligner(gfa, fq, variant="v0", traceback=True):
    import s2g
    from s2g.aligner import Aligner
    from s2g.reads import iter_read_batches
    al = Aligner(s2g.load_graph(gfa), Scoring(), "local", variant, traceback=traceback)
    out = []
    al.run(iter_read_batches(fq, 4), lambda item: out.append(item[2]))
    return b"".join(out), al


def test_failing_worker_does_not_break_a_run(tmp_path, monkeypatch):
    """Workers that fail: every stage still runs (in-process) and writes the same GAF."""
    gfa, fq = _example(tmp_path)
    want, al = _run_aligner(gfa, fq)
    assert al.prewarm is None or al.prewarm.done()
    bad = [({"kind": "no such task"}, ("align", "traceback", "gaf"))]
    monkeypatch.setattr(warmup, "plan", lambda *a, **k: bad)
    monkeypatch.setattr(warmup, "cold", lambda task: True)
    _env(monkeypatch, S2G_PREWARM="1", S2G_NO_CACHE=None)
    got, al = _run_aligner(gfa, fq)
    assert got == want
    assert al.prewarm is not None and al.prewarm.done()
    (sec, err), = al.prewarm.results.values()
    assert err and "unknown warm-up task" in err


COLD_RUN = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, sys.argv[1])
    sys.path.insert(0, sys.argv[2])
    from test_warmup import _run_aligner
    from s2g import warmup
    gaf, al = _run_aligner(sys.argv[3], sys.argv[4], variant="cpu", traceback=False)
    pw = al.prewarm
    print(json.dumps({"gaf": gaf.decode(), "tasks": [] if pw is None else pw.tasks,
                      "errors": [] if pw is None else [e for _, e in pw.results.values()],
                      "cold": [warmup.cold(t) for t, _ in warmup.plan(
                          "cpu", 0, [2, 4, 4, 2], 60, traceback=False)]}))
""")


@pytest.mark.slow
def test_cold_first_run_compiles_in_workers(tmp_path):
    """Empty caches: Aligner.run starts the workers of its plan, the GAF is the same as a
    warm run's, and afterwards the caches are warm (a second run starts none)."""
    gfa, fq = _example(tmp_path)
    want, _ = _run_aligner(gfa, fq, variant="cpu", traceback=False)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"),
               S2G_CACHE_DIR=str(tmp_path / "kernels"), S2G_PREWARM="1")
    env.pop("S2G_NO_CACHE", None)
    args = [sys.executable, "-c", COLD_RUN, str(REPO), str(REPO / "tests"), gfa, fq]
    first = json.loads(subprocess.run(args, env=env, capture_output=True, text=True,
                                      check=True, timeout=900).stdout)
    assert first["gaf"] == want.decode()
    assert kinds([(t, ()) for t in first["tasks"]]) == ["align", "gaf"]
    assert first["errors"] == [None, None]
    assert first["cold"] == [False, False]
    second = json.loads(subprocess.run(args, env=env, capture_output=True, text=True,
                                       check=True, timeout=900).stdout)
    assert second["tasks"] == [] and second["gaf"] == want.decode()


def test_common_tasks_cpu_machine(monkeypatch):
    """simd (auto) and cpu (auto picks it by batch shape), full-graph DP and seeded."""
    from s2g.variants import registry
    monkeypatch.setattr(registry, "pick_auto", lambda: "simd")
    tasks = warmup.common_tasks(modes=("local", "semiglobal"), read_lens=(150, 150))
    assert kinds(tasks) == ["align"] * 4 + ["seeded"] * 2 + ["trace"] * 2   # duplicates once
    assert sorted(t["variant"] for t, _ in tasks if t["kind"] == "align") == [
        "cpu", "cpu", "simd", "simd"]
    assert len({warmup.task_name(t) for t, _ in tasks}) == 8
    assert np.all([t["read_len"] == 150 for t, _ in tasks])
    assert kinds(warmup.common_tasks(["simd"], seeded=False)) == ["align", "trace"]
    assert kinds(warmup.common_tasks(["simd"], modes=("global",))) == ["align", "trace"]


def test_first_use_of_a_seeded_run(monkeypatch):
    """start(seeded=True): the cold seeded tasks as workers, the seeding stage waiting for
    the seeded task, the traceback and GAF stages for the lane traceback's."""
    got = []
    _env(monkeypatch, S2G_PREWARM="1", S2G_NO_CACHE=None)
    monkeypatch.setattr(warmup, "cold", lambda t: t["kind"] != "trace")
    monkeypatch.setattr(warmup, "Prewarm", lambda tasks, jobs=None: got.append(tasks) or "pw")
    assert warmup.start("simd", Mode.LOCAL, Scoring(), 150, seeded=True) == "pw"
    (task, stages), = got[0]                  # the trace task is warm: not started
    assert task["kind"] == "seeded" and stages == ("seed", "align")
    got.clear()
    warmup.start("simd", Mode.LOCAL, Scoring(), 150)
    assert kinds(got[0]) == ["align"]


def test_common_tasks_gpu_machine_plans_seeded_gpu(monkeypatch):
    """With a GPU variant, its seeded run's GPU windows too (planned only: no GPU here,
    and the CUDA simulator does not compile)."""
    from s2g.variants import registry
    monkeypatch.setattr(registry, "pick_auto", lambda: "fast")
    tasks = warmup.common_tasks()
    seeded = sorted((t["gpu"], t.get("variant")) for t, _ in tasks if t["kind"] == "seeded")
    assert seeded == [(False, None), (True, "fast")]
    assert {t["variant"] for t, _ in tasks if t["kind"] == "align"} == {"simd", "cpu"}


@pytest.mark.slow
def test_seeded_task_covers_a_seeded_run(tmp_path, monkeypatch):
    """After the seeded plan's tasks, a seeded run on another graph (loaded from its graph
    cache, the index built by 's2g index', other read lengths) needs no function they did
    not compile: every dispatcher's signatures (int and float types, array layouts) are
    the run's, so a run after 's2g warmup' loads them all from the cache."""
    from numba.core.registry import CPUDispatcher

    from s2g import cli
    from s2g.simulate import simulate
    _env(monkeypatch, S2G_PREWARM="0")
    for t, _ in warmup.seeded_plan("simd", Mode.LOCAL, Scoring(), 150):
        warmup_worker.run_task(t)

    def sigs():
        out = {}
        for name, mod in list(sys.modules.items()):
            if name.startswith("s2g"):
                for k, v in list(vars(mod).items()):
                    if isinstance(v, CPUDispatcher):
                        out[f"{v.py_func.__module__}.{v.py_func.__qualname__}"] = set(v.signatures)
        return out
    before = sigs()
    gfa, fq, _ = simulate(str(tmp_path / "g"), total_bases=30_000, n_reads=300, seed=3,
                          read_len=120)
    assert cli.main(["index", gfa]) == 0
    assert cli.main(["align", gfa, fq, "--seeded", "-q", "-o", str(tmp_path / "o.gaf")]) == 0
    after = sigs()
    new = sorted(k for k, v in after.items() if v - before.get(k, set()))
    assert not new, new
    assert (tmp_path / "o.gaf").read_text().count("\n") == 300


@pytest.mark.parametrize("mode", [Mode.LOCAL, Mode.SEMIGLOBAL, Mode.GLOBAL])
def test_long_reads_get_a_small_warm_up_input(mode):
    """A 50 kbp batch's tasks run reads of at most WARM_MAX_LEN on a graph of a few kbp
    (uncapped, its GAF task ran V0 on 8 x 50 kbp reads of a 200 kbp graph: ~10 minutes,
    the run's GAF stage waiting), yet still take the long-read code paths: int32 lanes
    and windows over the lanes' cell bound (row bands)."""
    from s2g.trace import batch
    from s2g.variants import simd
    sc = Scoring()
    for variant, tb_gpu in (("fast", True), ("simd", False)):
        tasks = warmup.plan(variant, mode, sc, 50_000, traceback=True, tb_gpu=tb_gpu)
        lens = [t["read_len"] for t, _ in tasks if "read_len" in t]
        assert lens and max(lens) == warmup.WARM_MAX_LEN
    n, bases = warmup_worker.tiny_size(50_000)
    L = warmup.warm_len(50_000)
    assert n * L * 2 * bases < 2e8                      # V0 cells of the task, both strands
    assert simd.lane_type(sc, mode, L, bases) == simd.lane_type(sc, mode, 50_000, 200_000)
    assert L * L > batch.LANE_CELLS
    assert warmup_worker.tiny_size(150) == (warmup.TINY_READS, warmup.TINY_BASES)
    # the fast kernels are named by the real length (a key, no input)
    assert warmup.fast_keys(sc, mode, 50_000) == [
        t["key"] for t, _ in warmup.plan("fast", mode, sc, 50_000) if t["kind"] == "fast_kernel"]


def test_seeded_probe_leaves_out_the_index_build():
    """A seeded run builds its index (when it has none) before it probes, and one that
    loads it never compiles the build: its probe must not name the build's functions
    (after a source change every run with a saved index said "compiling (first run)");
    ``s2g index`` probes them itself (warmup.index_build_cold), real cached dispatchers."""
    from s2g import index
    task = {"kind": "seeded", "gpu": False, "mode": 0, "scoring": [2, 4, 4, 2],
            "read_len": 150}
    build = {index.collect_syncmers, index.interior_syncmers, index.sort_by_hash}
    ds = warmup._dispatchers(task)
    assert index.bucket_starts in ds and not build & set(ds)
    for d in build:
        assert d._cache._cache_file._index_path.endswith(".nbi")
    assert warmup.index_build_cold() in (True, False)
