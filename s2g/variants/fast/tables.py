"""Host tables of the ``fast`` kernel: the per-column words (colinfo, mword, the merge CSR,
row 0 of the mode, the substitution words), the kernel's node_bound slots and the
graph's column cuts; built with numpy (global mode's row 0 compiled), uploaded once a
(graph, mode, scoring).

node_bound store
    A column whose node is not simple (pred != [v-1]) merges its predecessors' last
    columns from FlatGraph's liveness slots. Each lane keeps its *own* rows of a slot
    (``H-o-e`` and ``E`` of each row as the registers hold them, and the H of the row
    above its top row, which is the diagonal of its first row), so the store is
    lane-private:
    no barrier and no cross-lane hazard. The first ``n_sh`` slots live in shared
    memory (word ``w`` of slot ``s`` of a lane at ``(s*(2K+1) + w)*32 + lane`` of its
    warp's region: one bank per lane), as many as fit without lowering the occupancy
    that the registers allow (3 of 3 on the SNP graph at K = 19); the rest in global
    memory, each lane's slots contiguous. A merge column's predecessor slots come
    packed in one prefetched word (``mword``, up to 3) or from the CSR (``mptr``/
    ``mslot``). Shared slots: 995 GCUPS against 779 all-global (bench/NOTES.md run 3).

Keep merges
    A merge column one of whose predecessors is the previous column (v-1: the last
    node of a bubble's branch, the closing node's usual case) keeps that column in
    registers and loads only its other predecessors (``CI_KEEP``); the kernel's own
    liveness slots (:func:`fast_slots`) drop v-1's slot where nothing else reads it.
    A merge folds ``H = max(H, H')`` and ``E = max(E, E')`` per predecessor, so a keep
    merge needs no conversion of the registers it keeps (the next cell's
    ``max(H, E - e)`` distributes over the predecessors). DRB1 (4.4 bp nodes): slot
    loads 10,237 -> 6,758, 1,425 -> 1,826 GCUPS; SNP 100 kbp 2,364 -> 2,594 (run 6).
    Slots hold E itself, not the outgoing ``max(H-o-e, E-e)`` (run 7): a store is
    2K + 1 stores and no arithmetic (19 ALU instructions fewer per store at K = 19; the
    ALU pipe is the kernel's bottleneck, ncu). 64-bit slot words (one LDS.64 per row's
    two values) were measured and dropped: no faster (the load/store pipe is not the
    limit, and pairing a row's values for STS.64 costs a move per row).

Ends
    Global row 0 (``H[0][j] = E[0][j]``, deletion of a graph prefix) depends on the
    graph only and is computed here (:func:`row0_global`), not on the device.
"""
from __future__ import annotations

import numba
import numpy as np

from ..._numba import NJIT
from ...dp import GLOBAL
from ...scoring import NEG_INF
from .. import _devpool, _lean
from .constants import (CI_BASE, CI_KEEP, CI_MERGE, CI_SINK, CI_SLOT_SHIFT, CI_VIRT, GRAPH_N,
                        PACKED_PREDS, SLOT_BITS, SLOT_MASK, pack16)


def column_tables(base, node_start, pred_ptr, pred_idx, slot, is_sink, mode, o, e, vslot):
    """colinfo, mword, merge CSR over columns (mptr, mslot), row 0 of the mode (H0 - o - e).

    Kernel slots are the graph's slots + 1: slot ``vslot`` (= the graph's n_slots, the
    last, always in global memory) is the *virtual* column before every source node
    (each lane writes it at the start of a strip), so that a source's first column is an
    ordinary merge column with one predecessor (no third code path, whose register
    copies cost ~4 instructions per cell on every column; bench/NOTES.md run 4).

    numpy, no Numba: the tables are built before the first launch, and a first compiled
    call would start Numba's CPU target there (0.4-0.6 s on the GPU machine's host)
    instead of while the kernel runs (:func:`s2g._numba.start_cpu_target`); global
    mode's row 0 (a pass in topological order) is the one compiled part.
    """
    node_start = np.asarray(node_start, np.int64)
    ptr = np.asarray(pred_ptr, np.int64)
    n = len(node_start) - 1
    N = int(node_start[n])
    lens = np.diff(node_start)
    indeg = np.diff(ptr)
    v_all = np.arange(n, dtype=np.int64)
    tgt = np.repeat(v_all, indeg)                    # each edge's node, in CSR order
    src = np.asarray(pred_idx[:ptr[n]], np.int64)
    first = np.full(n, -2, np.int64)
    has = indeg > 0
    first[has] = src[ptr[:-1][has]]
    simple = (indeg == 1) & (first == v_all - 1)
    source = indeg == 0
    merge = ~simple & ~source                        # a merge column with predecessors
    prev = src == tgt - 1                            # edges from the previous column
    keep = merge & (np.bincount(tgt[prev], minlength=n) > 0)
    live = lens > 0                                  # (a node without columns adds nothing)
    # colinfo: the base; flags on a node's first and last column
    colinfo = np.where(base >= 4, GRAPH_N, base).astype(np.int32)
    s0 = node_start[:-1][live]
    f0 = np.where(source, CI_VIRT | CI_MERGE, 0) | np.where(merge, CI_MERGE, 0) \
        | np.where(keep, CI_KEEP, 0)
    slot64 = np.asarray(slot, np.int64)
    f1 = np.where(np.asarray(is_sink) != 0, CI_SINK, 0) \
        | np.where(slot64 >= 0, (slot64 + 1) << CI_SLOT_SHIFT, 0)
    colinfo[s0] |= f0[live].astype(np.int32)
    colinfo[node_start[1:][live] - 1] |= f1[live].astype(np.int32)
    # merge lists: a source's the virtual slot; a merge's predecessors but v - 1 (keep)
    cnt = np.where(live & source, 1, 0) + np.where(live & merge, indeg - keep, 0)
    off = np.zeros(n + 1, np.int64)
    np.cumsum(cnt, out=off[1:])
    n_m = int(np.where(simple, 0, np.maximum(indeg, 1)).sum())
    mslot = np.zeros(max(n_m, 1), np.int32)
    sel = np.nonzero((live & merge)[tgt] & ~prev)[0]
    st = tgt[sel]
    rank = np.arange(len(sel), dtype=np.int64) - np.searchsorted(st, st)
    sq = slot64[src[sel]]
    mslot[off[st] + rank] = sq
    vs = np.nonzero(live & source)[0]
    mslot[off[vs]] = vslot
    mptr = np.empty(N + 1, np.int32)
    mptr[:N] = np.repeat(off[1:], lens)              # past the node's own entries ...
    mptr[s0] = off[:-1][live]                        # ... but at its first column
    mptr[N] = off[n]
    # mword: up to PACKED_PREDS slots + 1 of SLOT_BITS each, else -1 (read the CSR)
    mword = np.zeros(N, np.int32)
    mword[node_start[vs]] = vslot + 1 if vslot + 1 < SLOT_MASK else -1
    ok = (sq + 1 < SLOT_MASK) & (rank < PACKED_PREDS)
    field = np.where(ok, (sq + 1) << (SLOT_BITS * np.minimum(rank, PACKED_PREDS)), 0)
    word = np.bincount(st, weights=field, minlength=n).astype(np.int64)   # < 2**30: exact
    bad = np.bincount(st, weights=~ok, minlength=n) > 0
    mv = np.nonzero(live & merge)[0]
    mword[node_start[mv]] = np.where(bad[mv], -1, word[mv])
    # row 0 (s2g.dp.column: global H[0] = E[0] = PE[0]; else 0)
    if mode == GLOBAL:
        h0 = row0_global(node_start, ptr, np.asarray(pred_idx, np.int64), o, e)
        row0 = np.maximum(h0 - o - e, NEG_INF).astype(np.int32)
    else:
        row0 = np.full(N, max(-(o + e), NEG_INF), np.int32)
    return colinfo, mword, mptr, mslot, row0


@numba.njit(**NJIT)
def row0_global(node_start, pred_ptr, pred_idx, o, e):
    """Global mode's ``H[0][j]`` per column (= E[0][j]): a gap from the virtual column
    before every source, along the best walk, in topological order."""
    n_nodes = len(node_start) - 1
    h0 = np.empty(node_start[n_nodes], np.int64)
    for v in range(n_nodes):
        pa, pb = pred_ptr[v], pred_ptr[v + 1]
        simple = pb - pa == 1 and pred_idx[pa] == v - 1
        for j in range(node_start[v], node_start[v + 1]):
            if j > node_start[v] or simple:
                pe = max(h0[j - 1] - o - e, h0[j - 1] - e)
            elif pb == pa:
                pe = -(o + e)
            else:
                pe = NEG_INF
                for q in range(pa, pb):
                    lp = node_start[pred_idx[q] + 1] - 1
                    pe = max(pe, max(h0[lp] - o - e, h0[lp] - e))
            h0[j] = pe
    return h0


class GraphOnDevice:
    """Column tables of one (graph, mode, scoring) on the device, built once."""

    def __init__(self, graph, mode, scoring):
        cuda = _lean.api()
        a, b, o, e = scoring.as_tuple()
        slot, n_slots = fast_slots(graph)
        ci, mw, mp, ms, r0 = column_tables(graph.base, graph.node_start, graph.pred_ptr,
                                           graph.pred_idx, slot, graph.is_sink, int(mode),
                                           o, e, n_slots)
        self.n_cols = len(ci)
        self.n_merge_cols = int(((ci & CI_MERGE) != 0).sum())
        self.n_keep_cols = int(((ci & CI_KEEP) != 0).sum())
        self.colinfo, self.mword = cuda.to_device(ci), cuda.to_device(mw)
        self.mptr = cuda.to_device(mp)
        self.mslot, self.row0 = cuda.to_device(ms), cuda.to_device(r0)
        _devpool.shared(self.colinfo, self.mword, self.mptr, self.mslot, self.row0)
        self._ci, self._sc, self._sub = ci, scoring, {}

    def colsub(self, pair: bool, prmt_sub: bool):
        """The kernel's per-column substitution words (:func:`column_sub`), on the device."""
        key = (bool(pair), bool(prmt_sub))
        if key not in self._sub:
            cuda = _lean.api()
            self._sub[key] = _devpool.shared(cuda.to_device(column_sub(self._ci, self._sc, *key)))
        return self._sub[key]


def kernel_constants(scoring, pair: bool):
    """(-e, -o-e, PRMT mismatch word) as the kernel takes them: in both 16-bit halves for
    the pair kernel; the mismatch score ``o + e - b`` in every byte."""
    a, b, o, e = scoring.as_tuple()
    w = (lambda v: np.int32(pack16(v))) if pair else np.int32
    mis = mismatch_word(scoring)
    return w(-e), w(-(o + e)), np.int32(mis - (1 << 32) if mis >= 1 << 31 else mis)


def mismatch_word(scoring) -> int:
    """The PRMT tables' mismatch byte ``o + e - b`` in all four bytes (unsigned 32 bits)."""
    a, b, o, e = scoring.as_tuple()
    return ((o + e - b) & 0xFF) * 0x01010101


def column_sub(colinfo, scoring, pair: bool, prmt_sub: bool) -> np.ndarray:
    """Per column, what the kernel's substitution needs of the graph base ``g``
    (``colinfo & CI_BASE``; N is GRAPH_N): the pair kernel's 4-byte score table (byte
    ``c`` = score(c, g) + o + e, PRMT-selected by the read base), the 32-bit kernel's
    PRMT selector of ``g``'s byte, or ``g`` itself (compare-and-select fallback)."""
    a, b, o, e = scoring.as_tuple()
    g = (np.asarray(colinfo) & CI_BASE).astype(np.int64)
    if pair:
        sa, sb = a + o + e, o + e - b
        mis = mismatch_word(scoring)
        w = np.where(g < 4, mis ^ (((sa ^ sb) & 0xFF) << ((g & 3) * 8)), mis)
        return (w & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
    if prmt_sub:
        return (g * 0x1111 + 0x8880).astype(np.int32)
    return g.astype(np.int32)


_GCACHE: dict = {}


def graph_tables(graph, mode, scoring):
    """The :class:`GraphOnDevice` of (graph, mode, scoring), built once (the last one kept)."""
    key = (id(graph), int(mode), scoring.as_tuple())
    hit = _GCACHE.get(key)
    if hit is None or hit[0] is not graph:
        _GCACHE.clear()           # one graph at a time keeps device memory bounded
        hit = (graph, GraphOnDevice(graph, mode, scoring))
        _GCACHE[key] = hit
    return hit[1]


_SLOTS: dict = {}


def fast_slots(graph):
    """(slot, n_slots) of the kernel: FlatGraph's liveness slots, except that a merge
    column reads its predecessor v-1 from the registers (the previous column), so a node
    needs a slot only for its other non-simple successors (``keep_prev``)."""
    hit = _SLOTS.get(id(graph))
    if hit is None or hit[0] is not graph:
        from ...graph_core import _liveness_slots, _small
        slot, n = _small(_liveness_slots, graph.n_nodes)(graph.n_nodes, graph.pred_ptr,
                                                         graph.pred_idx, True)
        _SLOTS.clear()
        hit = _SLOTS[id(graph)] = (graph, slot, int(n))
    return hit[1], hit[2]


def kernel_slots(graph) -> int:
    """node_bound slots per lane in the kernel: :func:`fast_slots`' + the virtual slot (last)."""
    return fast_slots(graph)[1] + 1


_CUTS: dict = {}


def column_cuts(graph) -> np.ndarray:
    """Columns ``c`` (node starts, ascending) where the DP falls apart: no edge goes from a
    node before ``c`` to one at or after it, so columns ``[.., c)`` and ``[c, ..)`` never meet
    (a read's H, E and F on one side do not depend on the other). The two strands of a
    graph without inversions are such halves: the topological order (Kahn, LIFO) finishes
    one strand's component before it starts the other."""
    hit = _CUTS.get(id(graph))
    if hit is not None and hit[0] is graph:
        return hit[1]
    n = int(graph.n_nodes)
    ptr = np.asarray(graph.pred_ptr, np.int64)
    minpred = np.arange(n, dtype=np.int64)
    has = ptr[1:] > ptr[:-1]
    if n and has.any():
        # consecutive non-empty predecessor lists tile pred_idx: one reduceat
        minpred[has] = np.minimum.reduceat(np.asarray(graph.pred_idx, np.int64), ptr[:-1][has])
    suf = np.minimum.accumulate(minpred[::-1])[::-1] if n else minpred
    k = np.arange(1, n)
    cuts = np.asarray(graph.node_start, np.int64)[k[suf[1:] >= k]]
    cuts = cuts[(cuts > 0) & (cuts < int(graph.n_bases))]
    _CUTS.clear()
    _CUTS[id(graph)] = (graph, cuts)
    return cuts


def column_ranges(graph, n_rng: int) -> np.ndarray:
    """Starts of ``n_rng`` column ranges (at :func:`column_cuts`, as even as they allow) and
    the column count: int32 ``[0, c1, .., N]``; fewer where the graph has fewer cuts."""
    N = int(graph.n_bases)
    cuts = column_cuts(graph)
    n_rng = max(1, min(int(n_rng), len(cuts) + 1))
    lo, k = [0], 0                      # cuts[k:] are still free
    for q in range(1, n_rng):
        # the cut nearest q / n_rng of the columns, leaving one for each later range
        cand = cuts[k:len(cuts) - (n_rng - 1 - q)]
        x = int(np.argmin(np.abs(cand - q * N / n_rng)))
        lo.append(int(cand[x]))
        k += x + 1
    return np.asarray(lo + [N], np.int32)


def window_node_parts(wgraph, piece_at):
    """What the window form's tables need per node of a window graph whose window ``t``
    owns nodes ``piece_at[t]:piece_at[t + 1]`` (host and GPU builders alike): (node_start,
    pred_ptr, pred_idx) as int32, the keep-merge liveness slots and their count
    (:func:`s2g.window.window_liveness`), and each node's merge-list offset (int64,
    :func:`window_merge_counts`, nodes + 1). Made once a window graph and ``piece_at``
    (that very array) and kept on the graph: the score pass's tables, the traceback
    form's and its walk's all take them (three makings a batch cost the GPU path's align
    and traceback threads ~0.3 s each a 1,000,000 reads, H100 host, session 59);
    the seeding thread makes them first where it has the time."""
    kept = wgraph.__dict__.get("_s2g_node_parts")
    if kept is not None and kept[0] is piece_at:
        return kept[1]
    from ...window import window_liveness
    ns = np.asarray(wgraph.node_start, np.int32)
    ptr = np.asarray(wgraph.pred_ptr, np.int32)
    idx = np.asarray(wgraph.pred_idx, np.int32)
    pa = np.asarray(piece_at, np.int64)
    n = len(ns) - 1
    slot, nsl = window_liveness(pa, ptr, idx, True)
    cnt = np.zeros(n + 1, np.int64)
    window_merge_counts(pa, ptr, idx, cnt)
    off = np.zeros(n + 1, np.int64)
    np.cumsum(cnt[:n], out=off[1:])
    parts = ns, ptr, idx, slot, int(nsl), off
    wgraph.__dict__["_s2g_node_parts"] = (piece_at, parts)
    return parts


@numba.njit(parallel=True, **NJIT)
def window_merge_counts(piece_at, ptr, idx, cnt):
    """Per node its merge-list length (``cnt``): a source 1 (the virtual slot), a merge
    its predecessors but v - 1 (which the registers keep), window by window (a window
    graph whose window ``t`` owns nodes ``piece_at[t]:piece_at[t + 1]``; the window
    form's tables, :mod:`.windows` on the host and :mod:`.wtables_gpu` on the GPU)."""
    for t in numba.prange(len(piece_at) - 1):
        for v in range(piece_at[t], piece_at[t + 1]):
            pa, pb = ptr[v], ptr[v + 1]
            if pb == pa:
                cnt[v] = 1
            elif not (pb - pa == 1 and idx[pa] == v - 1):
                c = 0
                for k in range(pa, pb):
                    if idx[k] != v - 1:
                        c += 1
                cnt[v] = c
