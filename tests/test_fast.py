"""Tests of the `fast` variant (s2g/variants/fast/).

Layers: (1) the PTX of the kernel for sm_90 — the cell loop must be 32-bit (no
simulator checks types); (2) the same kernel in its simulator form under
NUMBA_ENABLE_CUDASIM=1, in a subprocess, against V0; (3) ``-m gpu`` on a real GPU:
random graphs and reads in every mode, real graphs, long reads (several strips).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from s2g.scoring import NEG_INF, Mode, Scoring

REPO = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------ (1) PTX

def _line_blocks(ptx):
    """Basic blocks of a PTX function body: lists of instruction lines (stripped)."""
    out, cur = [], []
    for line in ptx.splitlines():
        s = line.strip()
        if s.startswith("$L__") and s.endswith(":"):
            out.append(cur)
            cur = []
        elif re.match(r"(?:@!?%p\d+\s+)?[a-z]", s):
            cur.append(s)
            if re.match(r"(?:@!?%p\d+\s+)?bra", s):
                out.append(cur)
                cur = []
    out.append(cur)
    return out


_OP = re.compile(r"(?:@!?%p\d+\s+)?([a-z][\w.]*)")


def _blocks(ptx):
    """Basic blocks of a PTX function body: lists of instruction mnemonics."""
    return [[_OP.match(ln).group(1) for ln in blk] for blk in _line_blocks(ptx)]


WIDE = re.compile(r"^(add|sub|max|min|mul|mad|selp|neg|abs)\.(s64|u64|b64|lo\.s64|wide)")


def cell_loop_stats(ptx, K):
    """(64-bit ops, 32-bit max ops) in the block with the most max.s32: the unrolled cells."""
    blk = max(_blocks(ptx), key=lambda b: sum(op == "max.s32" for op in b))
    wide = sum(bool(WIDE.match(op)) or op.startswith("mul.wide") for op in blk)
    return wide, sum(op == "max.s32" for op in blk), len(blk)


def _ptx(fn, sig):
    try:
        from numba import cuda
        return cuda.compile_ptx(fn, sig, cc=(9, 0))[0]
    except Exception as exc:  # no NVVM: the toolchain is a test dependency (pyproject)
        pytest.skip(f"compile_ptx unavailable: {type(exc).__name__}: {exc}")


@pytest.mark.parametrize("mode,K", [(Mode.LOCAL, 6), (Mode.GLOBAL, 6), (Mode.LOCAL, 19),
                                    (Mode.SEMIGLOBAL, 24)])
def test_ptx_cell_loop_is_32bit(mode, K):
    """K = 19 and 24 matter: with ``cuda.local.array(K)`` rows, LLVM stopped unrolling at
    K >= 12 and the rows went to local memory (the kernel is now generated with scalars)."""
    from s2g.variants import fast
    _assert_32bit_cell_loop(_ptx(fast.kernel_source(8, K, int(mode)), fast.kernel_signature()),
                            K)


def _assert_32bit_cell_loop(ptx, K):
    """The cell loop unrolled, 32-bit, in registers, about 12 PTX instructions a cell."""
    wide, maxes, n = cell_loop_stats(ptx, K)
    assert maxes >= 3 * K, f"cell loop not found/unrolled: {maxes} max.s32 in the largest block"
    assert wide == 0, f"{wide} 64-bit arithmetic ops in the cell loop ({n} instructions)"
    assert "max.s64" not in ptx and "min.s64" not in ptx
    assert "ld.local" not in ptx and "st.local" not in ptx, "row registers spilled to local memory"
    # about 12 PTX instructions per cell (module docstring); fail if it grows a lot
    assert n / K < 16, f"{n / K:.1f} PTX instructions per cell"


@pytest.mark.parametrize("G,K,mode", [(8, 19, Mode.LOCAL), (32, 24, Mode.SEMIGLOBAL)])
def test_ptx_window_form_cell_loop_is_32bit(G, K, mode):
    """The seeded-window form (s2g/variants/fast/windows.py): the same 32-bit cell loop,
    no local memory, no 64-bit max/min (its only additions are per unit, not per cell)."""
    from s2g.variants import fast
    ptx = _ptx(fast.kernel_source(G, K, int(mode), win=True), fast.kernel_signature())
    _assert_32bit_cell_loop(ptx, K)
    assert "shfl.sync.bfly" in ptx       # the warp's longest range, by shuffles


@pytest.mark.parametrize("K,mode", [(8, Mode.LOCAL)])
def test_ptx_window_traceback_form_is_32bit(K, mode):
    """The window form's traceback form (s2g/variants/fast/render_tb.py, knob gpu_tb_warp):
    the cell loop with its direction codes still 32-bit (int32 shift counts: a Python
    literal made every code's shift and mask 64-bit), no local memory, and the codes
    stored as whole 32-bit words (ceil(K / 8) a lane and step, uint64 offsets)."""
    from s2g.variants import fast
    ptx = _ptx(fast.kernel_source(8, K, int(mode), win=True, tb=True),
               fast.kernel_signature(True))
    wide, maxes, n = cell_loop_stats(ptx, K)
    assert maxes >= 3 * K, f"cell loop not found/unrolled: {maxes} max.s32"
    blk = max(_blocks(ptx), key=lambda b: sum(op == "max.s32" for op in b))
    assert blk.count("st.global.u32") == (K + 7) // 8, "code words stored with the cells"
    # the store's address: doff + s * NW * G + t + w * G (a few 64-bit adds a step, not a cell)
    assert wide <= 6, f"{wide} 64-bit arithmetic ops in the cell loop ({n} instructions)"
    assert "ld.local" not in ptx and "st.local" not in ptx
    assert n / K < 36, f"{n / K:.1f} PTX instructions per cell"


def _slot_store_offsets(ptx, K):
    """Word offsets, relative to the first, of the first run of 2K+1 int32 stores whose
    addresses are one base register plus an immediate (the node_bound slot write)."""
    import re
    pat = re.compile(r"st\.global\.u32\s+\[%rd\d+(?:\+(-?\d+))?\]")
    offs = [int(m.group(1) or 0) for m in pat.finditer(ptx)]
    return [(o - offs[0]) // 4 for o in offs[:2 * K + 1]]


@pytest.mark.parametrize("K", [5, 19])
def test_ptx_slot_write_is_contiguous(K):
    """The slot write stores words sbase+0 .. sbase+2K. numba-cuda 0.30.4 once compiled
    ``store[sp + 1 + K + r]`` into stores whose base advanced every iteration (offsets
    0, 1, 6, 8, 13, 16, ... for K = 5): wrong scores on the GPU only."""
    from s2g.variants import fast
    ptx = _ptx(fast.kernel_source(8, K, int(Mode.LOCAL)), fast.kernel_signature())
    assert sorted(_slot_store_offsets(ptx, K)) == list(range(2 * K + 1))


@pytest.mark.parametrize("K", [8, 19])
def test_ptx_slot_blocks_have_no_index_arithmetic(K):
    """Slot stores and merges: one base register + immediates. A signed index costs
    numba's negative-index wraparound (setp, selp, 64-bit adds) on every access; the
    kernel uses uint64 offsets. A slot store is its 2K + 1 stores (H - o - e and E are
    stored as they are: no arithmetic); a merge one max per loaded word (``H = max(H,
    H')``, ``E = max(E, E')``), + a few instructions for the slot's address."""
    from s2g.variants import fast
    ptx = _ptx(fast.kernel_source(8, K, int(Mode.LOCAL)), fast.kernel_signature())
    acc = re.compile(r"(ld|st)\.(shared|global)\.u32\s+(.*);")
    found = 0
    for blk in _line_blocks(ptx):
        hits = [m.group(3) for m in map(acc.match, blk) if m]
        if len(hits) < 2 * K + 1:
            continue
        if len(set(re.findall(r"%r\d+", " ".join(hits)))) < K:
            continue        # the virtual slot's write of constants, once per strip: not hot
        found += 1
        merge = any(ln.startswith("ld.") for ln in blk)
        assert len(blk) <= len(hits) * (2 if merge else 1) + 8, \
            f"{len(blk)} instructions for {len(hits)} slot accesses"
        assert not any(ln.startswith("selp") for ln in blk)
    assert found == 4, f"{found} slot blocks (shared/global x load/store expected)"


@pytest.mark.parametrize("K", [8, 19])
def test_ptx_pair_kernel_is_packed_16bit(K):
    """The local-mode pair kernel: two reads per group, scores in the halves of 32-bit
    words. Its cell loop must be ``.s16x2`` DPX arithmetic (5 max + 4 add per row, each
    add+max pair one VIADDMNMX.S16x2 after ptxas), with no 64-bit ops, no local memory."""
    from s2g.variants import fast
    ptx = _ptx(fast.kernel_source(8, K, int(Mode.LOCAL), pair=True), fast.kernel_signature())
    assert "ld.local" not in ptx and "st.local" not in ptx
    blk = max(_blocks(ptx), key=lambda b: sum(op == "max.s16x2" for op in b))
    assert sum(op == "max.s16x2" for op in blk) >= 5 * K
    assert sum(op == "add.s16x2" for op in blk) >= 4 * K
    assert sum(op.startswith("prmt") for op in blk) >= K
    assert not any(WIDE.match(op) for op in blk)
    assert len(blk) / K < 16, f"{len(blk) / K:.1f} PTX instructions per row (two cells)"


@pytest.mark.parametrize("mode,pair,G", [(Mode.LOCAL, True, 8), (Mode.SEMIGLOBAL, False, 32)])
def test_ptx_pipelined_long_kernel(mode, pair, G):
    """The long-read kernel (a warp a stage of 32 / G reads, the stages of a block
    pipelined on the same reads' strips): its cells stay 32-bit or packed 16-bit, nothing in local memory, and the
    hand-over between warps is there — shared-memory atomics for the progress counters
    and block-scope fences (``membar.cta``/``fence.acq_rel.cta``) around them."""
    from s2g.variants import fast
    K = fast.choose_config(10_000, pair)[1]
    ptx = _ptx(fast.kernel_source(G, K, int(mode), pair=pair, pipe=fast.WARP // G),
               fast.kernel_signature())
    assert "ld.local" not in ptx and "st.local" not in ptx
    if pair:
        blk = max(_blocks(ptx), key=lambda b: sum(op == "max.s16x2" for op in b))
        assert sum(op == "max.s16x2" for op in blk) >= 5 * K
    else:
        wide, maxes, n = cell_loop_stats(ptx, K)
        assert maxes >= 3 * K and wide == 0
    assert re.search(r"atom\.shared\.(exch|add)", ptx), "no shared-memory progress counters"
    assert re.search(r"membar\.cta|fence\.\S*cta", ptx), "no block-scope fence"
    assert "bar.sync" in ptx or "barrier.sync" in ptx        # units are separated by syncthreads


@pytest.mark.parametrize("scoring", [(2, 4, 4, 2), (1, 1, 0, 1), (5, 3, 10, 1), (1, 9, 6, 3)])
def test_column_sub_and_constants_give_the_substitution_scores(scoring):
    """The host-made column words (``column_sub``) and constants (``kernel_constants``),
    put through the kernel's PRMT lookups (``prmt_py``), give score(read, graph) + o + e
    for every read base, pad row and graph base (N is a mismatch), in both kernels."""
    from s2g.variants import fast
    from s2g.variants._ptx import prmt_py
    sc = Scoring(*scoring)
    a, b, o, e = sc.as_tuple()
    graph_bases = np.array([0, 1, 2, 3, fast.GRAPH_N], np.int32)
    for pair in (True, False):
        nege, noe, misw = fast.kernel_constants(sc, pair)
        half = (lambda v: ((v & 0xFFFF) ^ 0x8000) - 0x8000) if pair else int   # low 16 bits
        assert half(int(nege)) == -e and half(int(noe)) == -(o + e)
        sub = fast.column_sub(graph_bases, sc, pair, True)
        sa, sb = a + o + e, o + e - b
        diff = (sa ^ sb) & 0xFF
        for gi, g in enumerate(graph_bases):
            for c in (0, 1, 2, 3, 4, fast.READ_PAD):
                want = sa if c == g and c < 4 else sb
                if pair:       # the row's selector of read A's (low) and read B's (high) base
                    q = c | ((c | 8) << 4) | (c << 8) | ((c | 8) << 12)
                    got = int(prmt_py(sub[gi], misw, q))
                    assert (half(got), got >> 16) == (want, want), (g, c)
                else:          # the row's table (byte x: score against graph base x)
                    q = (int(misw) ^ (diff << ((c & 3) * 8))) if c < 4 else int(misw)
                    assert int(prmt_py(q, misw, sub[gi])) == want, (g, c)


def test_pair_fits_bounds():
    """Pair kernel only where every value fits 16 bits; 32 bits (or the CPU) otherwise."""
    from s2g.variants import fast
    sc = Scoring()
    assert fast.pair_fits(sc, Mode.LOCAL, 150) and fast.pair_fits(sc, Mode.LOCAL, 10_000)
    assert not fast.pair_fits(sc, Mode.LOCAL, 20_000)         # 2 x 20,000 > 32,000
    assert not fast.pair_fits(sc, Mode.SEMIGLOBAL, 150)
    assert not fast.pair_fits(Scoring(200, 4, 6, 2), Mode.LOCAL, 150)   # byte tables


def test_ptx_counter_detects_64bit():
    """The counter above is not vacuous: int64 arithmetic in a loop is found."""
    from numba import types as T

    def k64(x, y):
        acc = x[0]
        for r in range(8):
            acc = max(acc + y[r], acc - 3)
        x[0] = acc

    ptx = _ptx(k64, (T.int64[::1], T.int64[::1]))
    blk = max(_blocks(ptx), key=len)
    assert sum(bool(WIDE.match(op)) for op in blk) > 0


# ------------------------------------------------------------------ (2) simulator

def test_cuda_simulator_matches_v0():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=str(REPO))
    p = subprocess.run([sys.executable, str(REPO / "tests" / "fast_cudasim_check.py"), "3"],
                       env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0 and "OK" in p.stdout, p.stdout[-2000:] + p.stderr[-4000:]


def test_config_and_tables():
    from s2g.variants import fast
    assert fast.choose_config(150) == (8, 19)
    assert fast.choose_config(100) == (8, 13)           # Illumina 100 bp: one strip, 4 pad rows
    assert fast.choose_config(1) == (8, 4)
    assert fast.choose_config(150, pair=True) == (4, 38)
    assert fast.choose_config(100, pair=True) == (4, 26)
    assert fast.choose_config(153, pair=True) == (8, 26)     # past 4 x 38: 8 lanes, one strip
    assert fast.choose_config(250, pair=True) == (8, 38)
    assert fast.choose_config(304, pair=True) == (8, 38)
    assert fast.choose_config(305, pair=True) == (32, 38)    # past 8 x 38: warp strips
    assert fast.choose_config(305, True, fast.BIG_UNITS_PER_SM * 132, 132) == (fast.BIG_G, fast.BIG_K)
    assert fast.choose_config(10_000) == (fast.LONG_G, fast.LONG_K)
    assert fast.choose_config(10_000, pair=True) == (fast.LONG_G, fast.PAIR_LONG_K)
    # big batches of long reads: 8-lane groups (BIG_UNITS_PER_SM reads or pairs an SM)
    big = fast.BIG_UNITS_PER_SM * 132
    assert fast.choose_config(10_000, True, big, 132) == (fast.BIG_G, fast.BIG_K)
    assert fast.choose_config(10_000, True, big - 1, 132) == (fast.LONG_G, fast.PAIR_LONG_K)
    assert fast.choose_config(150, True, big, 132) == (4, 38)       # short reads: unchanged


def test_kernel_cache_key_includes_compile_options(tmp_path, monkeypatch):
    """numba's on-disk cache keys on the source file: a register cap must change it
    (fast_maxreg once loaded the uncapped cached cubin and measured nothing)."""
    from s2g import config
    from s2g.variants import fast
    monkeypatch.setattr(config, "_SETTINGS", config.settings())   # restored afterwards
    config.configure(cache_dir=str(tmp_path))
    plain = fast.kernel_source(8, 4, int(Mode.LOCAL))
    capped = fast.kernel_source(8, 4, int(Mode.LOCAL), note="max_registers=128")
    assert plain.__s2g_cached__ and capped.__s2g_cached__
    assert plain.__code__.co_filename != capped.__code__.co_filename
    assert len(list(tmp_path.glob("s2g_fast_*.py"))) == 2


def test_keep_merge_tables():
    """A merge column with the previous column among its predecessors is flagged keep and
    lists only its other predecessors' slots (fast's own liveness slots)."""
    from s2g.graph import load_graph
    from s2g.variants import fast
    g = load_graph(str(REPO / "graphs" / "cactus-BRCA2.gfa"))
    slot, n = fast.fast_slots(g)
    ci, mw, mp, ms, _ = fast.column_tables(g.base, g.node_start, g.pred_ptr, g.pred_idx, slot,
                                            g.is_sink, 0, 4, 2, n)
    n_keep = 0
    for v in range(g.n_nodes):
        preds = list(g.pred_idx[g.pred_ptr[v]:g.pred_ptr[v + 1]])
        j = g.node_start[v]
        if preds == [v - 1] or not preds:
            assert not ci[j] & fast.CI_KEEP
            continue
        keep = (v - 1) in preds
        assert bool(ci[j] & fast.CI_KEEP) == keep and ci[j] & fast.CI_MERGE
        want = sorted(int(slot[u]) for u in preds if not (keep and u == v - 1))
        assert sorted(ms[mp[j]:mp[j + 1]].tolist()) == want
        n_keep += keep
    assert n_keep > 0


def test_column_tables_match_the_column_loop():
    """The vectorised tables equal the column-by-column loop they replaced, on random and
    real graphs, every mode, both kinds of slots, and slots too large to pack (mword -1)."""
    import warnings

    from gpu_cases import random_graph
    from s2g.graph import load_graph
    from s2g.graph_core import _liveness_slots
    from s2g.variants import fast
    rng = np.random.default_rng(23)
    graphs = [random_graph(rng, n_seg=int(rng.integers(1, 12)), max_seg_len=int(rng.integers(1, 9)))
              for _ in range(25)]
    real = REPO / "tests" / "data" / "real"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graphs += [load_graph(str(REPO / "graphs" / name)) for name in ("example.gfa",
                                                                        "cactus-BRCA2.gfa")]
        graphs += [load_graph(str(real / name), break_cycles=True)
                   for name in ("drb1_odgi/DRB1-3123.gfa", "mt_minigraph/MT.gfa")]
    n_unpacked = 0
    for g in graphs:
        for keep in (False, True):
            slot, n = _liveness_slots(g.n_nodes, g.pred_ptr, g.pred_idx, keep)
            wide = np.where(slot >= 0, slot * rng.integers(1, 700, len(slot)), -1).astype(np.int32)
            for sl, vslot in ((slot, n), (wide, 1021), (wide, 1022)):
                # every mode on the small graphs, one (drawn) on the large ones (speed)
                for mode in Mode if g.n_bases < 5000 else [Mode(int(rng.integers(0, 3)))]:
                    o, e = int(rng.integers(0, 7)), int(rng.integers(1, 4))
                    args = (g.base, g.node_start, g.pred_ptr, g.pred_idx, sl, g.is_sink,
                            int(mode), o, e, vslot)
                    got = fast.column_tables(*args)
                    want = _column_tables_ref(fast, *args)
                    for x, y, name in zip(got, want, ("colinfo", "mword", "mptr", "mslot", "row0")):
                        assert x.dtype == y.dtype and x.shape == y.shape, name
                        assert np.array_equal(x, y), (name, np.nonzero(x != y)[0][:5])
                    n_unpacked += int((got[1] == -1).sum())
    assert n_unpacked > 0            # the -1 (read the CSR) case was met


def _column_tables_ref(fast, base, node_start, pred_ptr, pred_idx, slot, is_sink, mode, o, e, vslot):
    """fast's column tables as they were built column by column in a compiled loop
    (until session 23): the oracle of the vectorised :func:`fast.column_tables`."""
    n_nodes = len(node_start) - 1
    N = node_start[n_nodes]
    colinfo = np.empty(N, np.int32)
    mword = np.zeros(N, np.int32)
    mptr = np.zeros(N + 1, np.int32)
    n_m = 0
    for v in range(n_nodes):
        pa, pb = pred_ptr[v], pred_ptr[v + 1]
        if not (pb - pa == 1 and pred_idx[pa] == v - 1):
            n_m += max(pb - pa, 1)        # (one less for a keep merge: an upper bound)
    mslot = np.zeros(max(n_m, 1), np.int32)
    row0 = np.empty(N, np.int32)      # H[0][j] - o - e
    h0 = np.empty(N, np.int64)        # H[0][j] (= E[0][j] in global mode)
    k = 0
    for v in range(n_nodes):
        pa, pb = pred_ptr[v], pred_ptr[v + 1]
        s0, s1 = node_start[v], node_start[v + 1]
        simple = pb - pa == 1 and pred_idx[pa] == v - 1
        for j in range(s0, s1):
            bc = base[j]
            w = fast.GRAPH_N if bc >= 4 else bc
            keep = False
            if j == s0:
                if pb == pa:
                    w |= fast.CI_VIRT | fast.CI_MERGE
                elif not simple:
                    w |= fast.CI_MERGE
                    for q in range(pa, pb):
                        if pred_idx[q] == v - 1:
                            keep = True
                    if keep:
                        w |= fast.CI_KEEP
            if j == s1 - 1:
                if is_sink[v]:
                    w |= fast.CI_SINK
                if slot[v] >= 0:
                    w |= (slot[v] + 1) << fast.CI_SLOT_SHIFT
            colinfo[j] = w
            mptr[j] = k
            if j == s0 and pb == pa:
                mslot[k] = vslot                                # the virtual slot
                k += 1
                mword[j] = vslot + 1 if vslot + 1 < fast.SLOT_MASK else -1
            elif j == s0 and not simple:
                packed = pb - pa - (1 if keep else 0) <= fast.PACKED_PREDS
                w = 0
                c = 0
                for q in range(pa, pb):
                    if keep and pred_idx[q] == v - 1:
                        continue                    # still in registers: not from a slot
                    sq = slot[pred_idx[q]]
                    mslot[k] = sq
                    k += 1
                    if sq + 1 >= fast.SLOT_MASK:
                        packed = False
                    else:
                        w |= (sq + 1) << (fast.SLOT_BITS * c)
                    c += 1
                mword[j] = w if packed else -1
            # row 0 (s2g.dp.column: global H[0] = E[0] = PE[0]; else 0)
            if mode == int(Mode.GLOBAL):
                if j > s0 or simple:
                    pe = max(h0[j - 1] - o - e, h0[j - 1] - e)
                elif pb == pa:
                    pe = -(o + e)
                else:
                    pe = NEG_INF
                    for q in range(pa, pb):
                        lp = node_start[pred_idx[q] + 1] - 1
                        pe = max(pe, max(h0[lp] - o - e, h0[lp] - e))
                h0[j] = pe
            else:
                h0[j] = 0
            row0[j] = max(h0[j] - o - e, NEG_INF)
    mptr[N] = k
    return colinfo, mword, mptr, mslot, row0


# ------------------------------------------------------------------ (3) GPU
#
# Kernels: every test here uses the `fast` kernels of gpu_cases.fast_kernels() only (the
# configurations choose_config picks in production; forced (G, K) among them), so a
# cold run compiles each of them once (conftest.py compiles them in parallel first);
# test_gpu_every_kernel_configuration runs each of them deliberately.

def _gpu():
    from s2g.variants.registry import cuda_available
    ok, why = cuda_available()
    if not ok:
        pytest.skip(f"no GPU: {why}")


def _cmp(g, reads, sc, mode, ref=None, **kw):
    """fast == V0 (score, end row, end column of every read). ``ref``: V0's result for
    these reads, when the caller has it; ``kw``: run_kernel's (G, K, pair) for a forced
    configuration, else the variant's align_batch (its own choice)."""
    from s2g.variants import fast, v0_cpu
    ref = v0_cpu.align_batch(g, reads, sc, mode) if ref is None else ref
    if kw:
        lens = reads.lengths()
        idx = np.nonzero(lens > 0)[0]
        offs = np.zeros(len(idx) + 1, np.int64)
        np.cumsum(lens[idx], out=offs[1:])
        codes = np.concatenate([reads.codes(int(r)) for r in idx])
        s, i, j = fast.run_kernel(g, codes, offs, lens[idx], sc, mode, **kw)
        got = (np.full(reads.n_reads, -(1 << 29)), np.full(reads.n_reads, -1),
               np.full(reads.n_reads, -1))
        ok = j >= 0
        got[0][idx] = np.where(ok, s, -(1 << 29))
        got[1][idx] = np.where(ok, i, -1)
        got[2][idx] = j
    else:
        res = fast.align_batch(g, reads, sc, mode)
        got = (res.score, res.end_i, res.end_j)
    bad = np.nonzero((got[0] != ref.score) | (got[1] != ref.end_i) | (got[2] != ref.end_j))[0]
    assert len(bad) == 0, [(int(r), int(got[0][r]), int(got[1][r]), int(got[2][r]),
                            int(ref.score[r]), int(ref.end_i[r]), int(ref.end_j[r])) for r in bad[:3]]


def _sub(ref, idx):
    """``ref`` (a BatchResult) restricted to reads ``idx``."""
    return type(ref)([ref.names[k] for k in idx], ref.lengths[idx], ref.score[idx],
                     ref.end_i[idx], ref.end_j[idx])


@pytest.mark.gpu
@pytest.mark.parametrize("mode", list(Mode))
def test_gpu_random_graphs(mode):
    """25 random graphs, 40 random reads of 0..L bp each (L in 1..300), random scorings:
    the variant's own configuration (local: the 16-bit pair kernel), several strips
    (32-row strips: up to 10), and in local mode the 32-bit kernel (2 strips past 192);
    the pipelined kernel (warps of a block on one read's 64-row strips)."""
    _gpu()
    import gpu_cases as gc
    from s2g.variants import fast, v0_cpu
    rng = np.random.default_rng(11 + int(mode))
    for _ in range(25):
        g = gc.random_graph(rng, n_seg=int(rng.integers(1, 12)), max_seg_len=int(rng.integers(1, 30)))
        reads = gc.random_reads(rng, 40, int(rng.integers(1, 300)))
        sc = gc.random_scoring(rng)
        ref = v0_cpu.align_batch(g, reads, sc, mode)
        _cmp(g, reads, sc, mode, ref)                 # local: the 16-bit pair kernel
        if mode == Mode.LOCAL:
            _cmp(g, reads, sc, mode, ref, G=fast.PAIR_G, K=8)        # several strips
            _cmp(g, reads, sc, mode, ref, G=fast.LONG_G, K=fast.LONG_K, pair=False)  # 32-bit
        else:
            _cmp(g, reads, sc, mode, ref, G=fast.SHORT_G, K=4)       # several strips
        # the pipelined long-read kernel with 64- and 16-row strips: up to 8 warps a read
        # (pair), each strip's bottom row handed to the next warp through the block's ring
        _cmp(g, reads, sc, mode, ref, G=fast.WARP, K=2, pipe=True)
        _cmp(g, reads, sc, mode, ref, G=8, K=2, pipe=True)       # 4 reads (pairs) a warp
        _cmp(g, reads, sc, mode, ref, G=fast.BIG_G, K=fast.BIG_K)   # big batches' groups
        if mode == Mode.LOCAL:
            _cmp(g, reads, sc, mode, ref, G=fast.WARP, K=2, pipe=True, pair=False)
        # column ranges (a batch this small splits at every cut by itself): none, and all
        _cmp(g, reads, sc, mode, ref, G=fast.WARP, K=2, ranges=1)
        _cmp(g, reads, sc, mode, ref, G=fast.SHORT_G, K=4, ranges=fast.MAX_RANGES)


@pytest.mark.gpu
def test_gpu_every_kernel_configuration():
    """Each kernel of gpu_cases.fast_kernels() (every configuration choose_config picks),
    chosen by the variant itself for reads whose longest fills it (its strip's last row;
    long-read strips: 2.5 strips), on random graphs with random scorings."""
    _gpu()
    import gpu_cases as gc
    from s2g.variants import fast, v0_cpu
    rng = np.random.default_rng(29)
    graphs = [gc.random_graph(rng, n_seg=int(rng.integers(4, 12)), max_seg_len=int(rng.integers(5, 30)))
              for _ in range(2)]
    for G, K, mode, pair in gc.fast_kernels():
        L = gc.fill_length(G, K, pair)
        assert fast.choose_config(L, pair) == (G, K)
        for g in graphs:
            reads = gc.reads_up_to(rng, 24, L)
            sc = gc.random_scoring(rng)
            assert fast.pair_fits(sc, mode, L) or not pair
            ref = v0_cpu.align_batch(g, reads, sc, mode)
            _cmp(g, reads, sc, mode, ref, pair=pair)
            if mode == Mode.LOCAL and pair:          # and the variant's entry point
                _cmp(g, reads, sc, mode, ref)


def _fasta(path):
    seqs, cur = [], []
    for line in open(path):
        if line.startswith(">"):
            if cur:
                seqs.append("".join(cur))
            cur = []
        else:
            cur.append(line.strip().upper())
    if cur:
        seqs.append("".join(cur))
    return ["".join(c if c in "ACGT" else "N" for c in s) for s in seqs]


def pieces(haplotypes, n, length, rng):
    """A ReadBatch of ``n`` random ``length``-bp pieces, cycling over the haplotypes."""
    from s2g.reads import ReadBatch
    seqs = []
    for k in range(n):
        s = haplotypes[k % len(haplotypes)]
        p = int(rng.integers(0, len(s) - length + 1))
        seqs.append(s[p:p + length])
    return ReadBatch.from_sequences([f"r{k}" for k in range(n)], seqs)


@pytest.mark.gpu
@pytest.mark.parametrize("name,fa,brk", [
    ("c4_gwfa/C4-90.gfa", "c4_gwfa/C4-NA19240.1.fa", False),
    ("drb1_odgi/DRB1-3123.gfa", "drb1_odgi/DRB1-3123.fa", False),
    ("lpa_odgi/LPA.gfa", "lpa_odgi/LPA.fa", True),
    ("mt_minigraph/MT.gfa", "mt_minigraph/MT-chimp.fa", True),
])
def test_gpu_real_graphs_and_long_reads(name, fa, brk, real_data, real_graph):
    """The real graphs (tests/data/real) with 150 bp pieces of their haplotypes, local and
    semiglobal; on MT also long reads: two 10 kbp pieces (the pair kernel, 16-bit scores
    up to 20,000, 53 strips) and a 20 kbp read (the haplotype twice, across its ends; over
    16 bits: the 32-bit kernel, 105 strips). References: V0's kernel on every core (the
    ``cpu`` variant, equal to V0 by construction and by test_v0)."""
    _gpu()
    from s2g.reads import ReadBatch
    from s2g.variants import cpu_parallel, fast
    g = real_graph(name, brk)
    hs = [s for s in _fasta(str(real_data / fa)) if len(s) >= 150]
    rng = np.random.default_rng(3)
    reads = pieces(hs, 24, 150, rng)
    _cmp(g, reads, Scoring(), Mode.LOCAL, cpu_parallel.align_batch(g, reads, Scoring(), Mode.LOCAL))
    semi = reads.subset(range(6))
    _cmp(g, semi, Scoring(), Mode.SEMIGLOBAL,
         cpu_parallel.align_batch(g, semi, Scoring(), Mode.SEMIGLOBAL))
    if name.startswith("mt"):
        s = max(hs, key=len)
        lr = ReadBatch.from_sequences(["l10k", "l10k2", "l20k"],
                                      [s[1000:11000], s[5000:15000], (s * 2)[8000:28000]])
        ref = cpu_parallel.align_batch(g, lr, Scoring(), Mode.LOCAL)   # the three at once
        assert fast.pair_fits(Scoring(), Mode.LOCAL, 10_000)
        assert not fast.pair_fits(Scoring(), Mode.LOCAL, 20_000)
        _cmp(g, lr.subset([0, 1]), Scoring(), Mode.LOCAL, _sub(ref, [0, 1]))
        _cmp(g, lr.subset([2]), Scoring(), Mode.LOCAL, _sub(ref, [2]))


def test_column_ranges_split_where_no_edge_crosses(tmp_path):
    """The DP's independent column ranges: the strands of a graph without inversions (two
    halves), none where an edge joins them, and the end cells combined in V0's order."""
    import numpy as np
    from s2g.graph import load_graph
    from s2g.variants import fast
    p = tmp_path / "g.gfa"
    # two chains and a bubble: every strand a component (4 pieces with both strands)
    p.write_text("H\tVN:Z:1.0\nS\ta\tACGT\nS\tb\tGG\nS\tc\tT\nS\td\tCCA\nS\te\tTTT\n"
                 "L\ta\t+\tb\t+\t0M\nL\ta\t+\tc\t+\t0M\nL\tb\t+\td\t+\t0M\nL\tc\t+\td\t+\t0M\n")
    g = load_graph(str(p))
    cuts = fast.column_cuts(g)
    assert len(cuts) == 3 and np.all(np.diff(cuts) > 0)
    # every cut: no predecessor edge from before it to at or after it
    col_node = np.repeat(np.arange(g.n_nodes), np.diff(g.node_start))
    for c in cuts:
        k = col_node[c]
        assert g.node_start[k] == c
        for v in range(k, g.n_nodes):
            assert all(u >= k for u in g.pred_idx[g.pred_ptr[v]:g.pred_ptr[v + 1]])
    r2 = fast.column_ranges(g, 2)
    assert r2[0] == 0 and r2[-1] == g.n_bases and len(r2) == 3 and r2[1] in cuts
    assert len(fast.column_ranges(g, 16)) == 5          # at most the pieces
    assert fast.choose_ranges(g, 32, 10, ranges=16) == 4
    assert fast.choose_ranges(g, 32, 10, ranges=1) == 1
    # an inversion joins the strands (a+ -> b+ -> a-, a+ -> b- -> a-): one piece
    p.write_text("H\tVN:Z:1.0\nS\ta\tACGT\nS\tb\tGG\nL\ta\t+\tb\t+\t0M\n"
                 "L\ta\t+\tb\t-\t0M\n")
    assert len(fast.column_cuts(load_graph(str(p)))) == 0
    # the combine: score desc, then column asc, then row asc; j = -1 is no end cell
    s = np.array([5, 7, 7, 7, 3, -9], np.int32)
    i = np.array([1, 4, 2, 9, 1, -1], np.int32)
    j = np.array([3, 8, 8, 2, 4, -1], np.int32)
    bs, bi, bj = fast.combine_ranges(s, i, j, 2)
    assert bs.tolist() == [7, 7, 3] and bj.tolist() == [8, 2, 4] and bi.tolist() == [4, 9, 1]
    bs, bi, bj = fast.combine_ranges(np.array([-9, -9], np.int32), np.array([-1, -1], np.int32),
                                     np.array([-1, -1], np.int32), 2)
    assert bj.tolist() == [-1]
    bs, bi, bj = fast.combine_ranges(s, i, np.array([3, 3, 8, 8, 2, 2], np.int32), 2)
    assert bi.tolist() == [4, 2, 1] and bs.tolist() == [7, 7, 3]


def test_launch_shape_splits_batches_that_leave_the_gpu_idle(tmp_path, monkeypatch):
    """On a GPU of 132 SMs (monkeypatched), 10 kbp reads on a two-strand graph: 500 pairs
    (1,000 reads) split into both strands (1,000 warps, FILL_WARPS_PER_SM a little under
    8 an SM); 1,000 pairs already give 1,000 warps: whole; 2,000 pairs reach the 8-lane
    groups' BIG_UNITS_PER_SM once split, and take every range; fast_ranges=1 never
    splits; a forced configuration (G, K) splits by the fill rule alone."""
    from s2g.graph import load_graph
    from s2g.simulate import snp_graph
    from s2g.variants import fast
    sg, ref = snp_graph(2000, 50, 2, 1)
    p = tmp_path / "g.gfa"
    sg.write_gfa(str(p), ref)
    g = load_graph(str(p))
    assert len(fast.column_ranges(g, 16)) == 3               # the two strands
    monkeypatch.setattr(fast.geometry, "sm_count", lambda: 132)
    monkeypatch.setattr(fast.geometry, "sim", lambda: False)
    assert fast.launch_shape(g, 10_000, True, 500) == (fast.LONG_G, fast.PAIR_LONG_K, 2)
    assert fast.launch_shape(g, 10_000, True, 1000) == (fast.LONG_G, fast.PAIR_LONG_K, 1)
    assert fast.launch_shape(g, 10_000, True, 2000) == (fast.BIG_G, fast.BIG_K, 2)
    assert fast.launch_shape(g, 10_000, True, 4000) == (fast.BIG_G, fast.BIG_K, 2)
    assert fast.launch_shape(g, 10_000, True, 2000, ranges=1) == (
        fast.LONG_G, fast.PAIR_LONG_K, 1)
    assert fast.launch_shape(g, 10_000, True, 2000, G=fast.BIG_G, K=fast.BIG_K) == (
        fast.BIG_G, fast.BIG_K, 2)                            # 500 warps: under 8 an SM
    assert fast.launch_shape(g, 150, True, 100_000) == (fast.PAIR_G, 38, 1)
    from s2g import config
    monkeypatch.setattr(config, "_SETTINGS", config.settings())   # restored afterwards
    config.configure(fast_ranges="1")
    assert fast.launch_shape(g, 10_000, True, 500) == (fast.LONG_G, fast.PAIR_LONG_K, 1)
