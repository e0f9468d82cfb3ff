"""Tests of the GPU traceback (s2g/trace/gpu*.py, s2g/trace/long/).

(1) the kernel compiles to PTX for sm_90 without local memory (no GPU needed); (2) under
the CUDA simulator, in a subprocess, its tracebacks equal the CPU's field for field in
every mode, with several chunks and with a GPU/CPU mix; (3) ``-m gpu``: the same on a
real GPU for random graphs, the SNP graph, a real graph and reads long enough to be sent
back to the CPU; (4) the CLI's ``--traceback-on``.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from s2g.scoring import Mode, Scoring

REPO = Path(__file__).resolve().parents[1]


def _sm90(monkeypatch):
    # numba-cuda asks for "the current device" (shared arrays, cooperative helpers) even in
    # compile_ptx; without a GPU there is none, so name sm_90 (as tests/test_ptx.py does)
    import types
    import numba.cuda.dispatcher as disp
    monkeypatch.setattr(disp, "get_current_device",
                        lambda: types.SimpleNamespace(compute_capability=(9, 0)))


def test_ptx_compiles_without_local_memory(monkeypatch):
    from s2g.trace import gpu_kernel
    _sm90(monkeypatch)
    try:
        ptx = gpu_kernel.compile_ptx((9, 0))
    except Exception as exc:  # no NVVM: the toolchain is a test dependency (pyproject)
        pytest.skip(f"compile_ptx unavailable: {type(exc).__name__}: {exc}")
    assert ".entry" in ptx
    assert ".local" not in ptx          # no per-thread arrays or spills in the kernel


def _sim_check(*args, **knobs):
    """tests/gpu_tb_cudasim_check.py ``args`` under the CUDA simulator with ``knobs`` set
    (S2G_CONFIG); asserts it printed OK. Returns the finished process."""
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=str(REPO),
               S2G_CONFIG=",".join(f"{k}={v}" for k, v in knobs.items()))
    p = subprocess.run([sys.executable, str(REPO / "tests" / "gpu_tb_cudasim_check.py"), *args],
                       env=env, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0 and "OK" in p.stdout, p.stdout[-2000:] + p.stderr[-4000:]
    return p


def test_warp_walk_ptx_compiles_without_local_memory(monkeypatch):
    """The traceback form's walk (s2g/trace/warp_walk.py) compiles for sm_90 with its
    signature, no per-thread arrays."""
    from s2g.trace import warp_walk
    _sm90(monkeypatch)
    try:
        ptx = warp_walk.compile_ptx((9, 0))
    except Exception as exc:  # no NVVM: the toolchain is a test dependency (pyproject)
        pytest.skip(f"compile_ptx unavailable: {type(exc).__name__}: {exc}")
    assert ".entry" in ptx and ".local" not in ptx


def test_gpu_summary_ptx_compiles_without_local_memory(monkeypatch):
    """The walks' summaries and their packing on the GPU (s2g/trace/gpu_summary.py, knob
    gpu_tb_summary) compile for sm_90 with their signatures, no per-thread arrays."""
    pytest.importorskip("numba.cuda")
    from s2g.trace import gpu_summary
    _sm90(monkeypatch)
    try:
        ptxs = gpu_summary.compile_ptx((9, 0))
    except Exception as exc:  # no NVVM: the toolchain is a test dependency (pyproject)
        pytest.skip(f"compile_ptx unavailable: {type(exc).__name__}: {exc}")
    for ptx in ptxs:
        assert ".entry" in ptx and ".local" not in ptx and "atom." not in ptx


def test_traceback_form_under_the_cuda_simulator_matches_cpu():
    """The fast kernel's traceback form and its walk (knob gpu_tb_warp,
    tests/tbw_cudasim_check.py): the CPU traceback's paths and CIGARs, ties included (case
    1: the tie-rich scoring (1,1,0,1), nodes of 1-5 bases, both strands;
    a slot predecessor losing a tie to the kept one fails it)."""
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=str(REPO))
    p = subprocess.run([sys.executable, str(REPO / "tests" / "tbw_cudasim_check.py"), "1", "1"],
                       env=env, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0 and p.stdout.startswith("OK 1"), p.stdout[-2000:] + p.stderr[-4000:]


def test_traceback_form_premises():
    """What the walk relies on: a window graph's predecessor lists ascend (the kept
    predecessor, v - 1, is the last, so a choice byte k names pred_idx's k-th entry), and
    only local and semiglobal reads of 1 to 192 rows take the path (gpu_warp.fits)."""
    import tempfile

    from s2g.graph import load_graph
    from s2g.index import build_index
    from s2g.reads import ReadBatch
    from s2g.seeded import SeededAligner
    from s2g.simulate import sample_reads, snp_graph
    from s2g.trace import gpu_warp
    with tempfile.TemporaryDirectory() as tmp:
        sg, ref = snp_graph(400, 4, 3, 5)
        path = os.path.join(tmp, "g.gfa")
        sg.write_gfa(path, ref)
        g = load_graph(path, strands="both")
    ix = build_index(g, k=11, s=5)
    reads = ReadBatch.from_sequences([f"r{k}" for k in range(6)],
                                     [s for _, s, _ in sample_reads(sg, 6, 40, 0.05, 0.5, 3)])
    wg = SeededAligner(g, ix, Scoring(), Mode.LOCAL, min_chain=11).candidates(reads).wg
    ptr, idx = np.asarray(wg.graph.pred_ptr), np.asarray(wg.graph.pred_idx)
    merges = 0
    for v in range(len(ptr) - 1):
        lst = idx[ptr[v]:ptr[v + 1]]
        assert (np.diff(lst) > 0).all() and (lst < v).all(), (v, lst)
        merges += len(lst) > 1
    assert merges > 0
    assert list(gpu_warp.fits([0, 1, 150, 192, 193], Mode.LOCAL)) == [False, True, True, True,
                                                                      False]
    assert not gpu_warp.fits([150], Mode.GLOBAL).any()


#: the long-kernel checks: 8-row strips, blocks of 1-2 threads (several rounds a window)
LONG_SIM = dict(long_strip=8, long_max_t=2)


def test_cuda_simulator_matches_cpu_traceback():
    _sim_check("9")


@pytest.mark.parametrize("S,local,prmt,prune", [(32, True, True, False),
                                                 (8, False, False, False),
                                                 (32, True, True, True)])
def test_long_kernel_ptx_compiles_without_local_memory(monkeypatch, S, local, prmt, prune):
    """The generated long-window kernel (the default strips of 32 rows in local mode with
    PRMT tables; 8-row strips for global/semiglobal with compare + select; the pruned
    kernel, s2g/trace/long/prune.py): no per-thread arrays, and its cells written out S
    times use 32-bit arithmetic only; it waits on the previous round (atomics) and
    publishes its hand-off behind a fence."""
    import re
    from s2g.trace.long import source
    _sm90(monkeypatch)
    try:
        ptx = source.compile_ptx((9, 0), S, local, prmt, prune)
    except Exception as exc:  # no NVVM: the toolchain is a test dependency (pyproject)
        pytest.skip(f"compile_ptx unavailable: {type(exc).__name__}: {exc}")
    assert ".entry" in ptx and "bar.sync" in ptx     # the block's barrier per step
    assert ".local" not in ptx
    assert "atom.global.add" in ptx and "atom.global.max" in ptx and "membar.gl" in ptx
    if prmt:          # the cells: from the first row's substitution PRMT to the last row's
        lines = ptx.splitlines()
        at = [i for i, ln in enumerate(lines) if "prmt.b32" in ln]
        assert len(at) == S
        wide = [ln for ln in lines[at[0]:at[-1]] if re.search(r"\.[sub]64\b", ln)]
        assert not wide, wide[:5]


def test_pruned_long_kernel_under_the_cuda_simulator_matches_the_reference():
    """The pruned long-window kernel (s2g/trace/long/prune.py): every window's best cell ==
    the window reference's, floors and passes that fall short included, and its windows
    traced in the rows it kept == traced in their slack bands
    (tests/pruned_gpu_cudasim_check.py)."""
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=str(REPO),
               S2G_CONFIG=",".join(f"{k}={v}" for k, v in LONG_SIM.items()))
    p = subprocess.run([sys.executable, str(REPO / "tests" / "pruned_gpu_cudasim_check.py"),
                        "1"], env=env, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.startswith("OK 1"), p.stdout
    # with the CPU's hit bound (knob gpu_prune_hits; its own margins and cut-off)
    hits = dict(env, S2G_CONFIG=env["S2G_CONFIG"] + ",gpu_prune_hits=1")
    p = subprocess.run([sys.executable, str(REPO / "tests" / "pruned_gpu_cudasim_check.py"),
                        "1"], env=hits, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0 and p.stdout.startswith("OK 1"), p.stdout + p.stderr
    # ... and when the traceback's bands, narrowed to the rows the pruned pass kept, are
    # halved (a band missing cells of an optimal alignment does not pass unseen)
    p = subprocess.run([sys.executable, str(REPO / "tests" / "pruned_gpu_cudasim_check.py"),
                        "1", "narrow"], env=env, capture_output=True, text=True, timeout=900)
    assert p.returncode != 0 and ("does not reproduce" in p.stderr or "!= in the slack band"
                                  in p.stderr), p.stdout + p.stderr[-2000:]
    # the same check fails when the walk bound (the columns each round steps over) is
    # 1,000 too high (long_debug 32): the rounds' column ranges are what the kernel uses
    env["S2G_CONFIG"] += ",long_debug=32"
    p = subprocess.run([sys.executable, str(REPO / "tests" / "pruned_gpu_cudasim_check.py"),
                        "1"], env=env, capture_output=True, text=True, timeout=900)
    assert p.returncode != 0 and "!= expected" in p.stderr, p.stdout + p.stderr[-2000:]


def test_long_walk_kernel_ptx_compiles(monkeypatch):
    """The long windows' second kernel (best of the rounds' cells, then the walk) compiles
    for sm_90 with its signature (the first one's PTX:
    :func:`test_long_kernel_ptx_compiles_without_local_memory`)."""
    from numba import cuda
    from s2g.trace.long import launch
    _sm90(monkeypatch)
    try:
        launch._cuda()                  # the module global its body uses
        ptx = cuda.compile_ptx(launch.walk_body, launch.walk_signature(), cc=(9, 0))[0]
    except Exception as exc:  # no NVVM: the toolchain is a test dependency (pyproject)
        pytest.skip(f"compile_ptx unavailable: {type(exc).__name__}: {exc}")
    assert ".entry" in ptx and ".local" not in ptx


def test_long_program_spread_kernel_ptx_compiles(monkeypatch):
    """The kernel that spreads seeded long windows' per-node records over their columns
    (s2g/trace/long/programs_gpu.py; its words are checked against the host's in
    tests/pruned_gpu_cudasim_check.py) compiles for sm_90 with its signature, no local
    memory."""
    from numba import cuda
    from s2g.trace.long import programs_gpu
    _sm90(monkeypatch)
    monkeypatch.setattr(programs_gpu, "cuda", cuda)     # the module global its body uses
    try:
        ptx = cuda.compile_ptx(programs_gpu.spread_body, programs_gpu.SIGNATURE, cc=(9, 0))[0]
    except Exception as exc:  # no NVVM: the toolchain is a test dependency (pyproject)
        pytest.skip(f"compile_ptx unavailable: {type(exc).__name__}: {exc}")
    assert ".entry" in ptx and ".local" not in ptx


def test_prune_ranges_kernel_ptx_compiles(monkeypatch):
    """The kernel that finds pruned rounds' columns before a launch (their hand-offs'
    sizes, s2g/trace/long/prune.py; checked in tests/pruned_gpu_cudasim_check.py)
    compiles for sm_90 with its signature, no local memory."""
    from numba import cuda
    from s2g.trace.long import prune
    _sm90(monkeypatch)
    try:
        ptx = cuda.compile_ptx(prune.ranges_source(), prune.ranges_signature(), cc=(9, 0))[0]
    except Exception as exc:  # no NVVM: the toolchain is a test dependency (pyproject)
        pytest.skip(f"compile_ptx unavailable: {type(exc).__name__}: {exc}")
    assert ".entry" in ptx and ".local" not in ptx


def test_cuda_simulator_long_kernel_matches_cpu_traceback():
    """Every window on the long-window kernel (s2g/trace/long/), 8-row strips and 2 threads
    per block: several strips per thread and several rounds per window."""
    _sim_check("2", "long", **LONG_SIM)


def test_cuda_simulator_long_windows_in_several_launches():
    """The long-window kernel with launches of a few windows each (a 3,000-byte budget),
    whole windows' codes kept (long_band=0): each launch's programs, codes and bands
    are made in a worker thread while the previous launch runs (long_prefetch,
    gpu_groups.long_prefetched); the tracebacks equal the CPU's."""
    p = _sim_check("2", "long", long_chunk_bytes=3000, long_log=1, long_band=0, **LONG_SIM)
    assert "host half made in the worker thread" in p.stderr, p.stderr[-2000:]


def test_cuda_simulator_long_kernel_keeps_the_band_only():
    """Reads of 56-80 bases at 1% errors (narrow bands): the long kernel keeps only the
    band's direction codes and merge choices (plan.band_layout; the check fails unless
    under 60% of the code words were kept), the walk reads them there, and the tracebacks
    equal the CPU's. Launches of 20,000 bytes: one or two windows each, cut from the
    programs and bands made for groups of windows (gpu_groups.long_banded, groups of
    10,000 bytes here: the next one made in the worker thread); the windows
    of the 56-80 base reads take more than that with every row's codes (with the whole
    windows' bytes as the bound they went to the CPU), their bands' less."""
    p = _sim_check("1", "band", long_chunk_bytes=20000, long_log=1, long_group_bytes=10000,
                   **LONG_SIM)
    # groups of ~10,000 bytes of host programs (two windows or so): the next group's made
    # in the worker thread while this one's launches run
    assert "made in the worker thread" in p.stderr, p.stderr[-2000:]
    launches = [ln for ln in p.stderr.splitlines() if "long-window launch:" in ln]
    # two tracebacks (local, semiglobal) of one batch: more launches means cut batches
    assert len(launches) > 2, p.stderr[-2000:]
    rows = [int(ln.split("rows ")[1].split(",")[0].split("-")[1]) for ln in launches]
    assert max(rows) >= 56, launches


def test_band_layout_offsets():
    """plan.band_layout against a Python reading of its rule: per column the code
    words its band's rows meet, consecutive in the window (word bcw + q for q in
    bql..bqh - 1), and a merge column's choice rows from one word above the band."""
    from s2g.trace.long import plan
    rng = np.random.default_rng(3)
    rows = np.array([37, 0, 20], np.int64)
    W = np.array([9, 3, 6], np.int64)
    coff = np.concatenate([[0], np.cumsum(W)]).astype(np.int64)
    n = int(coff[-1])
    blo = np.empty(n, np.int32)
    bhi = np.empty(n, np.int32)
    for k in range(3):
        for w in range(coff[k], coff[k + 1]):
            lo = int(rng.integers(0, rows[k] + 1))
            hi = int(rng.integers(lo, rows[k] + 1))
            blo[w], bhi[w] = (lo, hi) if rng.random() < 0.8 else (rows[k] + 1, -1)
    p_mrank = np.where(rng.random(n) < 0.5, 0, -1).astype(np.int32)
    bcw, bxc = np.full(n, -99, np.int32), np.full(n, -99, np.int32)
    nwd, nxr = np.zeros(3, np.int64), np.zeros(3, np.int64)
    plan.band_layout(coff, rows, p_mrank, blo, bhi, bcw, bxc, nwd, nxr)
    for k in range(3):
        words = rows_x = 0
        for w in range(coff[k], coff[k + 1]):
            if bhi[w] < blo[w]:
                continue
            ql, qh = blo[w] // 8, bhi[w] // 8 + 1
            assert bcw[w] + ql == words          # the column's first word
            words += qh - ql
            if p_mrank[w] >= 0:
                xl = max(0, 8 * int(ql) - 8)
                assert bxc[w] + xl == rows_x
                rows_x += min(int(rows[k]) + 1, 8 * int(qh)) - xl
        assert (nwd[k], nxr[k]) == (words, rows_x)


def test_round_columns_are_the_kernels():
    """plan.round_columns against the kernel's own rule, read literally (a column is
    the round's where ``blo <= min(R, (g + 1) T S - 1)`` and ``bhi >= g T S``, empty
    bands included), and handoff_columns: each round's range in 32-column lines, none
    after a window's last round."""
    from s2g.trace.long import plan
    rng = np.random.default_rng(5)
    for T in (1, 2, 3, 32):
        rows = rng.integers(0, 300, 6).astype(np.int64)
        W = rng.integers(1, 40, 6).astype(np.int64)
        coff = np.concatenate([[0], np.cumsum(W)]).astype(np.int64)
        n = int(coff[-1])
        blo, bhi = np.empty(n, np.int32), np.empty(n, np.int32)
        for k in range(6):
            for w in range(coff[k], coff[k + 1]):
                lo = int(rng.integers(0, rows[k] + 1))
                hi = int(rng.integers(lo, rows[k] + 1))
                u = rng.random()
                blo[w], bhi[w] = ((lo, hi) if u < 0.7 else (rows[k] + 1, -1) if u < 0.85
                                  else (hi, lo))           # empty bands, both kinds
        G = -(-plan.n_strips(rows) // T)
        roff = np.concatenate([[0], np.cumsum(G)]).astype(np.int64)
        rlo, rhi = np.empty(roff[-1], np.int64), np.empty(roff[-1], np.int64)
        plan.round_columns(coff, rows, blo, bhi, T, plan.S, roff, rlo, rhi)
        TS = T * plan.S
        want = 0
        hc = plan.handoff_columns(coff, rows, blo, bhi, T)
        for k in range(6):
            tot = 0
            for g in range(G[k]):
                ylo, yhi = g * TS, min(int(rows[k]), (g + 1) * TS - 1)
                xs = [x for x in range(W[k]) if blo[coff[k] + x] <= yhi
                      and bhi[coff[k] + x] >= ylo]
                lo, hi = (min(xs), max(xs)) if xs else (W[k], -1)
                assert (rlo[roff[k] + g], rhi[roff[k] + g]) == (lo, hi)
                if g < G[k] - 1:
                    tot += (max(hi - lo + 1, 0) + 31) // 32 * 32
                want += 1
            assert hc[k] == tot
        assert want == roff[-1]


def test_long_window_launches_are_even():
    """Long windows per launch: the fewest launches the memory budget allows, cut evenly
    (a greedy cut left a launch of a few windows: one more wave of blocks, 0.74 s against
    0.53 s for 1,000 windows on an H100), each within the budget; a window over the
    budget alone; every window in exactly one launch, in order."""
    from s2g.trace.gpu_groups import even_bounds as _even_bounds

    def check(per, budget):
        cuts = _even_bounds(per, budget)
        assert [c0 for c0, _ in cuts][1:] == [c1 for _, c1 in cuts][:-1]
        assert (cuts[0][0], cuts[-1][1]) == (0, len(per))
        for c0, c1 in cuts:
            assert c1 > c0 and (sum(per[c0:c1]) <= budget or c1 - c0 == 1)
        return [c1 - c0 for c0, c1 in cuts]

    assert check([100] * 1000, 41_400) == [333, 333, 334]      # greedy: 414, 414, 172
    assert check([100] * 1000, 100_000) == [1000]
    assert check([100] * 10, 100) == [1] * 10
    assert check([50, 500, 50, 50], 120) == [1, 1, 2]         # the large one alone
    rng = np.random.default_rng(5)
    for _ in range(300):
        per = [int(x) for x in rng.integers(1, 50, rng.integers(1, 60))]
        budget = int(rng.integers(1, 400))
        greedy, acc = 0, None                 # the fewest runs (greedy is optimal)
        for x in per:
            if acc is None or acc + x > budget:
                greedy, acc = greedy + 1, x
            else:
                acc += x
        assert len(check(per, budget)) == greedy
    assert _even_bounds([], 10) == []
    # with the GPU's capacity (windows at once): fewer waves of blocks in all
    assert check([100] * 1000, 41_400) == [333, 333, 334]
    cuts = _even_bounds([100] * 4000, 41_400, cap=396)     # greedy: 10 x 400 (20 waves)
    assert len(cuts) == 11 and {b - a for a, b in cuts} == {363, 364}
    assert [b - a for a, b in _even_bounds([100] * 1000, 41_400, cap=396)] == [333, 333, 334]
    assert len(_even_bounds([100] * 1000, 70_000, cap=396)) == 3      # not 2 x 500
    assert len(_even_bounds([100] * 300, 70_000, cap=396)) == 1       # one wave: one launch
    for _ in range(100):
        per = [int(x) for x in rng.integers(1, 50, rng.integers(1, 200))]
        budget, cap = int(rng.integers(50, 2000)), int(rng.integers(1, 40))
        cuts = _even_bounds(per, budget, cap)
        assert [c0 for c0, _ in cuts][1:] == [c1 for _, c1 in cuts][:-1]
        assert (cuts[0][0], cuts[-1][1]) == (0, len(per))
        assert all(sum(per[a:b]) <= budget or b - a == 1 for a, b in cuts)


def test_long_window_resident_windows(monkeypatch):
    """Blocks an SM holds: 3 of 160 threads at 128 registers (65,536 / (5 warps x 4,096))."""
    from s2g.trace.long import plan
    monkeypatch.setattr(plan, "_sm_count", lambda: 132)

    class Dev:
        MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 233472

    class Cuda:
        @staticmethod
        def get_current_device():
            return Dev()
    monkeypatch.setattr(plan, "cuda", Cuda)
    monkeypatch.setattr(plan, "MAXREG", 128)
    assert plan.resident_windows(160, 1) == 3 * 132
    assert plan.resident_windows(224, 1) == 2 * 132     # 7 warps: 2 by registers
    monkeypatch.setattr(plan, "_sm_count", lambda: 0)
    assert plan.resident_windows(160, 1) == 0


def test_long_window_threads(monkeypatch):
    """Launches of fewer windows than SMs take wider blocks (more strips in flight, one
    block an SM); device memory is sized for the widest choice."""
    from s2g.config import configure
    from s2g.trace.long import plan
    monkeypatch.setattr(plan, "_sm_count", lambda: 132)
    configure(long_round_t=0)         # (tests/conftest.py restores the settings)
    for ns in (1, 40, 188, 313, 1563, 5000):
        narrow, wide = plan.launch_threads(ns, 500), plan.launch_threads(ns, 100)
        assert narrow == plan.threads_for(ns) and narrow <= wide <= plan.MAX_T
        assert wide == plan.memory_threads(ns) and wide % 32 == 0
    assert (plan.launch_threads(1563, 100), plan.launch_threads(1563, 500)) == (224, 160)
    assert plan.launch_threads(188, 131) == 192 and plan.launch_threads(188, 132) == 96


def test_long_window_one_warp_rounds(monkeypatch):
    """By default every launch takes ROUND_T-thread blocks (one warp a round, whatever the
    windows' height or count), device memory is sized for that width, its shared budget
    keeps the column alone, and its launches are cut by bytes only (no wave model)."""
    from s2g.config import configure
    from s2g.trace.gpu_groups import long_bounds as _long_bounds
    from s2g.trace.long import plan
    monkeypatch.setattr(plan, "_sm_count", lambda: 132)
    configure(long_round_t=32)        # (tests/conftest.py restores the settings)
    monkeypatch.setattr(plan, "MAX_T", 256)
    for ns in (1, 40, 188, 313, 1563, 5000):
        for nb in (5, 100, 500, 5000):
            assert plan.launch_threads(ns, nb) == 32
        assert plan.memory_threads(ns) == 32
    assert plan.shared_plan(32, 3, plan.round_shared())[0] == 0
    sz = np.tile(np.array([[12000, 200, 400, 2, 2]], np.int64), (100, 1))
    rows = np.full(100, 10000, np.int64)
    L = np.full(100, 10000, np.int64)
    one = plan.device_bytes(sz, rows, L, 32)
    assert (plan.window_bytes(sz, rows, L) == one).all()
    monkeypatch.setattr(plan, "chunk_budget", lambda: int(one.sum()))
    monkeypatch.setattr(plan, "resident_windows", lambda T, n: 10)   # ignored
    assert list(_long_bounds(sz, rows, L)) == [(0, 100)]
    monkeypatch.setattr(plan, "chunk_budget", lambda: int(one.sum()) // 2)
    assert list(_long_bounds(sz, rows, L)) == [(0, 50), (50, 100)]


def test_cli_traceback_on_gpu_without_gpu(tmp_path):
    from s2g.variants.registry import cuda_available
    if cuda_available()[0]:
        pytest.skip("this machine has a GPU")
    g = tmp_path / "g.gfa"
    g.write_text("H\tVN:Z:1.0\nS\t1\tACGTACGT\n")
    r = tmp_path / "r.fa"
    r.write_text(">r\nACGT\n")
    p = subprocess.run([sys.executable, "-m", "s2g", "align", str(g), str(r), "--variant", "cpu",
                        "--traceback-on", "gpu"], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert p.returncode != 0
    assert "--traceback-on gpu" in p.stderr and "Traceback" not in p.stderr


def test_cli_timings_lines_under_the_simulator(tmp_path):
    """`--timings` with the fast variant: the full-graph kernel's line (launches, cells =
    read bases x columns of both strands; the simulator has no GPU timing, and says so)
    and the GPU traceback's parts; the GAF as on a GPU."""
    g = tmp_path / "g.gfa"
    g.write_text("H\tVN:Z:1.0\nS\t1\tACGTACGTAC\nS\t2\tGGTTA\nL\t1\t+\t2\t+\t0M\n")
    r = tmp_path / "r.fa"
    r.write_text(">r\nACGTACGG\n")
    out = tmp_path / "o.gaf"
    p = subprocess.run([sys.executable, "-m", "s2g", "align", str(g), str(r), "-o", str(out),
                        "--variant", "fast", "--timings", "--no-progress"], capture_output=True,
                       text=True, env=dict(os.environ, PYTHONPATH=str(REPO),
                                           NUMBA_ENABLE_CUDASIM="1", S2G_PREWARM="0"))
    assert p.returncode == 0, p.stderr
    assert ("s2g: fast kernel: 1 launch, 240 cells, 0.00 s, no GPU timing (CUDA simulator)"
            in p.stderr), p.stderr
    tb = [ln for ln in p.stderr.splitlines() if ln.startswith("s2g: GPU traceback, seconds: ")]
    assert len(tb) == 1 and "kernel 0.00" in tb[0] and "-0.00" not in tb[0], p.stderr
    assert out.read_text().split("\t")[5] == ">1>2" and "cg:Z:8=" in out.read_text()


# ------------------------------------------------------------------ (3) real GPU

def _gpu():
    from s2g.variants.registry import cuda_available
    ok, why = cuda_available()
    if not ok:
        pytest.skip(f"no GPU: {why}")


def _same(g, reads, sc, mode):
    """GPU and CPU tracebacks of V0's end cells are identical; returns reads traced on GPU."""
    from s2g.trace import FlatTracebacks, gpu, traceback_batch
    from s2g.variants import cpu_parallel
    res = cpu_parallel.align_batch(g, reads, sc, mode)
    traceback_batch(g, reads, sc, mode, res)
    want = list(res.tracebacks)
    idx = np.nonzero(res.aligned())[0].astype(np.int64)
    left = gpu.run(g, reads, sc, mode, res, idx, FlatTracebacks(len(res)), long_cells=1 << 40)
    traceback_batch(g, reads, sc, mode, res, device=True)
    bad = [r for r in range(len(res)) if want[r] != res.tracebacks[r]]
    assert not bad, [(r, want[r], res.tracebacks[r]) for r in bad[:2]]
    return len(idx) - len(left)


def _snp_reads(tmp_path, bases, seed, groups):
    """A simulated SNP graph of ``bases`` bp (50 bp nodes, 2 alleles; both strands) and a
    batch of reads sampled from it: per group (count, length, error, seed)."""
    from s2g.graph import load_graph
    from s2g.reads import ReadBatch
    from s2g.simulate import sample_reads, snp_graph
    sg, ref = snp_graph(bases, 50, 2, seed)
    p = str(tmp_path / "g.gfa")
    sg.write_gfa(p, ref)
    seqs = [s for n, length, err, sd in groups
            for _, s, _ in sample_reads(sg, n, length, err, 0.5, sd)]
    return load_graph(p), ReadBatch.from_sequences([f"r{k}" for k in range(len(seqs))], seqs)


@pytest.mark.gpu
@pytest.mark.parametrize("mode", list(Mode))
def test_gpu_random_graphs(mode):
    _gpu()
    sys.path.insert(0, str(REPO / "tests"))
    import gpu_cases as gc
    rng = np.random.default_rng(41 + int(mode))
    n_gpu = 0
    for _ in range(20):
        g = gc.random_graph(rng, n_seg=int(rng.integers(1, 12)), max_seg_len=int(rng.integers(1, 30)))
        reads = gc.random_reads(rng, 40, int(rng.integers(1, 300)))
        n_gpu += _same(g, reads, gc.random_scoring(rng), mode)
    assert n_gpu > 0


@pytest.mark.gpu
def test_gpu_snp_graph_and_long_reads(tmp_path):
    """1,000 simulated 150 bp reads on a 20 kbp SNP graph (both strands), traced on the
    GPU, and 4 reads of 3 kbp in the same batch, whose windows go to the CPU (local and
    semiglobal); then 500 reads in 1 MB chunks (many chunks)."""
    _gpu()
    from s2g.config import configure
    # 4 long reads: windows over gpu_tb_max_cells (the long kernel's, or the CPU's), same batch
    g, reads = _snp_reads(tmp_path, 20000, 5, [(1000, 150, 0.02, 6), (4, 3000, 0.02, 7)])
    # Semiglobal with scores 1/1/1/1: the 3 kbp reads' score bound then fits the CPU
    # reference's int16 lanes too (with 2/4/4/2 it takes int32 lanes, a minute more of
    # compiling for CPU-against-CPU tracebacks). The 3 kbp reads' windows (over
    # gpu_tb_max_cells) run on the long-window kernel (s2g/trace/long/), or without it on
    # the CPU (tests/conftest.py restores the settings that configure() changes)
    for mode, sc in ((Mode.LOCAL, Scoring()), (Mode.SEMIGLOBAL, Scoring(1, 1, 1, 1))):
        assert _same(g, reads, sc, mode) == reads.n_reads
    configure(gpu_long=False)
    n_gpu = _same(g, reads, Scoring(), Mode.LOCAL)
    assert 1000 <= n_gpu < reads.n_reads, n_gpu
    configure(gpu_long=True, gpu_tb_chunk_bytes=1 << 20)         # many chunks
    _same(g, reads.subset(range(500)), Scoring(), Mode.LOCAL)


@pytest.mark.gpu
@pytest.mark.parametrize("strip", [8, 32])
def test_gpu_long_kernel_random_graphs(strip):
    """Every window on the long-window kernel (strips of 8 rows: several rounds; 32: the
    default), random graphs, reads and scoring, every mode: tracebacks == the CPU's."""
    _gpu()
    sys.path.insert(0, str(REPO / "tests"))
    import gpu_cases as gc
    from s2g.config import configure
    from s2g.trace.long import plan
    rng = np.random.default_rng(77 + strip)
    old = plan.S
    try:
        configure(gpu_tb_max_cells=0)     # (tests/conftest.py restores the settings)
        plan.S = strip                    # one kernel per strip height (generated)
        for mode in Mode:
            for _ in range(6):
                g = gc.random_graph(rng, n_seg=int(rng.integers(1, 12)),
                                    max_seg_len=int(rng.integers(1, 30)))
                reads = gc.random_reads(rng, 40, int(rng.integers(1, 600)))
                _same(g, reads, gc.random_scoring(rng), mode)
    finally:
        plan.S = old


@pytest.mark.gpu
def test_gpu_long_kernel_wide_blocks(tmp_path):
    """Windows of 188-219 strips in a launch of fewer windows than SMs: blocks of 192-224
    threads (above the 160 that 48 KB of shared memory allow, by opt-in); tracebacks ==
    the CPU's, local and semiglobal."""
    _gpu()
    from s2g.config import configure
    from s2g.trace.long import plan
    g, reads = _snp_reads(tmp_path, 12000, 9, [(3, 6000, 0.03, 10), (2, 7000, 0.03, 11)])
    # the widths of sessions 16-21 (default: one warp); tests/conftest.py restores them
    configure(long_round_t=0)
    assert plan.launch_threads(int(plan.n_strips(np.array([6000])).max()), 5) > 160
    configure(gpu_tb_max_cells=0)
    for mode, sc in ((Mode.LOCAL, Scoring()), (Mode.SEMIGLOBAL, Scoring(1, 1, 1, 1))):
        assert _same(g, reads, sc, mode) == reads.n_reads


@pytest.mark.gpu
@pytest.mark.parametrize("name,fa,brk", [
    ("c4_gwfa/C4-90.gfa", "c4_gwfa/C4-NA19240.1.fa", False),
    ("lpa_odgi/LPA.gfa", "lpa_odgi/LPA.fa", True),
])
def test_gpu_real_graphs(name, fa, brk, real_data, real_graph):
    """64 pieces of 150 bp of the haplotypes, every one traced on the GPU (local), and 16
    in semiglobal mode."""
    _gpu()
    sys.path.insert(0, str(REPO / "tests"))
    from test_fast import _fasta, pieces
    g = real_graph(name, brk)
    hs = [s for s in _fasta(str(real_data / fa)) if len(s) >= 150]
    reads = pieces(hs, 64, 150, np.random.default_rng(9))
    assert _same(g, reads, Scoring(), Mode.LOCAL) == reads.n_reads
    _same(g, reads.subset(range(16)), Scoring(), Mode.SEMIGLOBAL)


def test_device_pool_limit_bounds_growth_and_trim_drops_what_is_over(monkeypatch):
    """A pool's bounded buffers (``limit``: long launches' share of ``long_device_bytes``)
    grow by a quarter only within the bound; ``trim`` drops them all (not the others) once
    a launch left them over it, and their bytes leave HELD; ``thread_share`` is the knob
    over the aligning threads and one more (the traceback threads take turns), by default
    a quarter of the GPU's memory, at most 7 GB."""
    from numba import cuda
    from s2g.config import configure, settings
    from s2g.trace.long import plan as long_plan
    from s2g.variants import _devpool
    made = []

    def device_array(size, dtype):
        made.append(size)
        return np.empty(size, dtype)

    monkeypatch.setattr(cuda, "device_array", device_array)
    monkeypatch.setattr(_devpool, "ENABLED", True)
    pool = _devpool.DevicePool()
    held0 = _devpool.HELD["device"]
    pool.limit(("long.",), 4000)
    pool.empty("x", 2000, np.int32)                          # not bounded
    pool.empty("long.b", 400, np.int32)                      # 1,600 bytes
    pool.empty("long.a", 500, np.int32)
    pool.empty("long.a", 600, np.int32)                      # a quarter more: 625; room 600
    assert made[-1] == 600
    assert not pool.trim() and pool.trims == 0               # 4,000 bytes: within
    pool.empty("long.b", 500, np.int32)                      # no room: the size asked
    assert made[-1] == 500
    assert _devpool.HELD["device"] - held0 == 4 * (2000 + 600 + 500)
    assert pool.trim() and pool.trims == 1                   # 4,400 bytes: dropped
    assert _devpool.HELD["device"] - held0 == 4 * 2000
    assert pool.held("x") == 8000 and pool.held("long.a", "long.b") == 0
    pool.empty("long.a", 600, np.int32)                      # made again, its size
    assert made[-1] == 600
    pool.clear()
    old = {k: getattr(settings(), k) for k in ("long_device_bytes", "align_workers",
                                               "finish_workers")}
    try:
        configure(long_device_bytes=9_000_000_000, align_workers=1, finish_workers=2)
        assert long_plan.thread_share() == 4_500_000_000
        assert long_plan.chunk_budget() <= 4_500_000_000
        configure(long_device_bytes=0)           # a quarter of the GPU (none here)
        assert long_plan.thread_share() is None

        class Ctx:                               # a GPU of 80 GB, then of 16 GB
            total = 80 << 30

            def get_memory_info(self):
                return self.total // 2, self.total

        ctx = Ctx()
        monkeypatch.setattr(long_plan, "cuda", type("C", (), {
            "current_context": staticmethod(lambda: ctx)}))
        assert long_plan.thread_share() == 3_500_000_000
        ctx.total = 16 << 30
        assert long_plan.thread_share() == (4 << 30) // 2
    finally:
        configure(**old)


def test_traceback_threads_take_turns_at_long_launches(monkeypatch):
    """``trace_turn``: one thread's long traceback launches at a time (they share one
    ``thread_share``), and each turn ends with that thread's long buffers dropped (the
    others' kept)."""
    import threading
    import time
    from numba import cuda
    from s2g.trace.long import plan as long_plan
    from s2g.variants import _devpool
    monkeypatch.setattr(cuda, "device_array", lambda size, dtype: np.empty(size, dtype))
    monkeypatch.setattr(_devpool, "ENABLED", True)
    inside, most, kept = [0], [0], []

    def turn():
        pool = _devpool.pool()
        with long_plan.trace_turn():
            inside[0] += 1
            most[0] = max(most[0], inside[0])
            pool.empty("long.0", 100, np.int32)
            pool.empty("tb.0", 100, np.int32)
            time.sleep(0.05)
            inside[0] -= 1
        kept.append((pool.held("long.0"), pool.held("tb.0")))

    threads = [threading.Thread(target=turn) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most[0] == 1
    assert kept == [(0, 400)] * 3


def test_device_pool_growth_falls_back_to_the_size_asked(monkeypatch):
    """A pooled buffer grows by a quarter; where that does not fit (a direction-code buffer
    of half the GPU, C4 seeded windows on an H100) it takes the size asked for; other
    errors, and an exact size that does not fit, propagate."""
    from numba import cuda
    from s2g.variants import _devpool
    made = []

    def device_array(size, dtype):
        if size > 950:
            raise RuntimeError("[CUresult.CUDA_ERROR_OUT_OF_MEMORY: 2] Call to cuMemAlloc")
        made.append(size)
        return np.empty(size, dtype)

    monkeypatch.setattr(cuda, "device_array", device_array)
    monkeypatch.setattr(_devpool, "ENABLED", True)
    pool = _devpool.DevicePool()
    assert pool.empty("x", 800, np.int32).size == 800
    assert pool.empty("x", 900, np.int32).size == 900       # 1,000 refused: 900
    assert made == [800, 900]
    assert pool.empty("y", 500, np.int32).size == 500
    assert pool.empty("y", 600, np.int32).size == 600       # 625 fits: grown
    assert made[-1] == 625
    with pytest.raises(RuntimeError, match="OUT_OF_MEMORY"):
        pool.empty("x", 960, np.int32)                     # the exact size does not fit
    monkeypatch.setattr(cuda, "device_array", lambda size, dtype: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        pool.empty("z", 10, np.int32)


def test_cuda_simulator_matches_cpu_traceback_with_packed_uploads():
    """Knob gpu_pack_uploads: a chunk's small inputs in one upload and its outputs in one
    download (typed views at 256-byte offsets of one buffer): the same tracebacks."""
    _sim_check("9", gpu_pack_uploads=1)


def test_packed_layout_and_views_keep_each_array():
    """put_packed's and empty_packed's layout: every piece at a 256-byte boundary, none
    overlapping, an empty array given one element; typed views read back what was packed."""
    from s2g.variants._devpool import host_views, packed_layout, typed_view
    arrays = [np.arange(5, dtype=np.int64), np.zeros(0, np.int32),
              np.array([1, 2, 3], np.uint8), np.arange(7, dtype=np.int16) - 3]
    sizes = [max(a.size, 1) * a.itemsize for a in arrays]
    offs, total = packed_layout(sizes)
    assert all(o % 256 == 0 for o in offs)
    assert all(offs[k] + sizes[k] <= offs[k + 1] for k in range(len(offs) - 1))
    assert total == offs[-1] + sizes[-1]
    buf = np.zeros(total, np.uint8)
    for a, o in zip(arrays, offs):
        buf[o:o + a.nbytes] = a.view(np.uint8)
    for a, o in zip(arrays, offs):
        v = typed_view(buf, o, a.dtype, max(a.size, 1))
        assert v.dtype == a.dtype and np.array_equal(v[:a.size], a)
    got = host_views(buf, offs, [(a.size, a.dtype) for a in arrays])
    assert [len(g) for g in got] == [5, 1, 3, 7] and np.array_equal(got[3], arrays[3])
