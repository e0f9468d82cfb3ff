"""simd — V0's recurrence with reads in SIMD lanes (int16 where the score bound fits).

Strategy: *lanes across reads* (abPOA's and PaSGAL's inter-sequence layout). Reads (or
seeded-alignment window tasks, :func:`align_windows`) are bucketed by length into lane
groups of ``LANES[dtype]`` reads; a group walks the graph's columns in topological order
exactly as V0 does, but every DP vector is a ``[row][lane]`` array and the lane loop is
the innermost loop, so LLVM turns one row step of the whole group into one vector
instruction per operation. Groups are independent: ``prange`` over groups.

Types (abPOA's int16/int32 switch, checked per group with
:func:`s2g.scoring.score_bound` for the group's longest read):
``int16`` x 128 lanes (four zmm registers) when the bound is <= ``INT16_BOUND``, else
``int32`` x 32 lanes (two) when :func:`s2g.scoring.fits_int32`; beyond that (reads of
~27 kbp with a match score of 10,000, or global mode on a graph of 2**27 bases)
V0's int64 kernel runs those reads (window tasks: s2g.window's reference).
The margins: every value is in ``[-bound, bound]``, a value minus one gap open stays
above ``-2 * bound``, and the sentinel ``NEG`` (< ``-2 * bound``) minus a penalty
stays inside the type.

Memory per group: ``(2 x n_slots + 7) x (m + 1) x lanes`` cells of the lane type
(``n_slots`` = the graph's node_bound slots) and the substitution profile's ``5 x (m + 1)
x lanes``: 128 reads of 150 bp on a graph with 4 slots take 580 + 190 kB. Each
predecessor store holds ``H`` and ``X = max(H - o - e, E - e)`` (what a successor's ``PE``
needs), so a merge is two maxima per cell and ``E`` itself
is never stored. A node's last column is written straight into its slot.

Exactness (score AND end cell equal V0's, tie rule: smallest column j, then smallest
row i). V0 scans columns ascending and rows ascending inside a column and replaces the
best only on a strictly larger cell. Here, per lane: local mode keeps a column maximum
while computing the column (one ``vpmaxsw`` per row); after the column, only a lane
whose column maximum is strictly above its best scans that column for the first row
holding it (rare: the best grows a few hundred times per read). Semiglobal compares
row ``m`` of each lane after each column, global only at sinks' last columns.
A lane shorter than its group's longest read sees padding rows (code ``PAD_CODE``,
never a match) below its last row: the answer of semiglobal/global reads row ``m`` of
the lane; in local mode a padding cell can never be strictly larger than a cell
scanned before it (its diagonal, E and F sources are earlier cells minus a
non-negative penalty, or the floor 0), so it never replaces the best.

Windows (:func:`align_windows`, the semantics of :mod:`s2g.window`), two layouts:

* *union range*: tasks sorted by window start; a group runs the union of its lanes'
  column ranges, all lanes at the same column (merges vectorised across lanes); lane
  ``l`` outside ``[lo_l, hi_l)`` computes values nobody reads. At ``j == lo_l`` the
  lane's predecessor vectors are overwritten with the virtual column; at a merge a
  predecessor whose last column is below ``lo_l`` is masked for that lane by adding
  ``NEG`` (branch-free); merges start from the virtual column, which never beats a
  real predecessor in local and semiglobal mode (s2g/window.py).
* *lockstep*: at step k lane l computes its own column ``lo_l + k`` (per-lane graph
  base); a lane at a non-simple node-first column merges its own in-window
  predecessors with scalar loops over its rows (strided), and stores a node's last
  column into the node's slot the same way. Tasks are grouped by window width.

A group sorted by start whose union range is at most ``UNION_RATIO`` x its widest
window runs the union range, the rest run in lockstep. Measured (1 thread, 2-core
VM shared with other jobs, 2026-11-23; 1,536 windows of 400 columns x 150 bp reads,
100 kbp SNP graph; /tmp script, numbers vary +-30% with the load): all windows at the
same start: union 4.4-6.0 GCUPS, lockstep 1.3-2.1; random starts: lockstep 1.2-2.1,
union would run ~64 x 400 columns of a 200 kbp graph per group (0.24 GCUPS measured
before lockstep existed); the scalar reference 0.27. Lockstep's cost is the strided
per-lane merges and slot copies (a SNP graph has a merge every ~50 columns per lane).
Best tracking of a lane starts at its first column and stops past its last (its
threshold is set to the type's maximum outside the window).

Assembly (``run_groups.inspect_asm``, Numba 0.68 / LLVM, znver4 = AMD EPYC with
AVX-512, 2026-11-23): Numba types ``int16 + int16`` as int64, so a plain loop keeps
int64 lanes and narrows at the store (``vpmaxsq``/``vpmovqw``: 8 lanes per zmm). Every
sum and difference here is cast back to the lane type (:func:`cast`), and ``max`` of
two lane-type values stays in the lane type, so the int16 column loop compiles to
zmm ``vpaddw``/``vpsubw``/``vpmaxsw``/``vpcmpeqw``/``vpblendmw`` only (32 lanes per
instruction; see ``asm_report()`` for the counts of the current build). Since
2026-11-26 the lane count is a compile-time constant (:func:`_column`) and
:func:`_group` reads a substitution profile per graph base (:func:`_profiles`) instead
of comparing codes; the two together: 8.6x -> 11.2-11.4x V0 on one Xeon core for the
first (H100 host, A/B), and +9-29% for the second on the dev VM (three alternations of
``python3 -m bench.simd --reads 512 --reps 5 --modes local --threads 1``).
"""
from __future__ import annotations

import numba
import numpy as np
from numba.extending import overload
from numba.np.numpy_support import as_dtype

from .._numba import NJIT, PARALLEL
from ..dp import GLOBAL, LOCAL, SEMIGLOBAL
from ..errors import S2GError
from ..graph_core import column_nodes
from ..result import BatchResult
from ..scoring import NEG_INF
from ..lanes import (GRAPH_N, INT16_BOUND, NEG16, NEG32, PAD_CODE, cast, dealt, graph_codes,
                     lane_type, vector_op_counts)
from .v0_cpu import align_read

#: lanes per group for each lane type. Several 512-bit registers per row step hide the
#: latency of F's row-to-row chain (32 int16 lanes, one register, measured 2.3 GCUPS in
#: the column loop alone; 64 lanes 5.3) and share the row step's scalar work (index
#: arithmetic, spills: ~23 instructions at 64 lanes, ~33 at 128, beside 22 and 56 vector
#: ones; asm_report): int16 128 lanes ran +30%
#: over 64 in bench.simd (150 bp reads, AMD dev VM, three alternations 2026-11-26:
#: 10.7 / 10.5 / 9.8 -> 14.3 / 11.4 / 13.4 GCUPS; 256: 14.0 / 14.4; 1,500 bp reads 6.5 /
#: 5.9 -> 6.8 / 7.0). int32 stays at 32: 64 lanes ran 2.8 against 3.0-3.4 GCUPS on
#: 4 kbp reads (a 4 kbp column of 64 int32 lanes is 1 MB an array: past L2).
LANES = {np.int16: 128, np.int32: 32}
#: a group of windows sorted by start runs its union range when that is at most this
#: many times its widest window; otherwise its windows run in lockstep
UNION_RATIO = 1.3


def lanes_of(like):
    """``LANES`` of ``like``'s type; in compiled code a constant (see :func:`_column`)."""
    return LANES[type(like)]


@overload(lanes_of, inline="always")
def _lanes_of_impl(like):
    n = LANES[as_dtype(like).type]

    def impl(like):
        return n
    return impl


def _sub(Q, G, i, l, a, mb):
    """Row ``i`` lane ``l``'s substitution score: with ``G`` None, ``Q`` is the column's
    profile (:func:`_profiles`) and holds it; else ``a`` where the read code ``Q[i, l]``
    equals the lane's graph code ``G[l]``, ``mb`` otherwise."""
    if G is None:
        return Q[i, l]
    return a if Q[i, l] == G[l] else mb


@overload(_sub, inline="always")
def _sub_impl(Q, G, i, l, a, mb):
    if isinstance(G, numba.types.NoneType):
        def impl(Q, G, i, l, a, mb):
            return Q[i, l]
    else:
        def impl(Q, G, i, l, a, mb):
            return a if Q[i, l] == G[l] else mb
    return impl


#: profile of graph code GRAPH_N (and any code above 3): never a match
PROF_N = 4


@numba.njit(inline="always", **NJIT)
def _profiles(Q, a, mb):
    """``P[c, i, l]``: the substitution score of read code ``Q[i, l]`` against graph code
    ``c`` (0-3; ``PROF_N``: graph N, never a match), so a column of graph code ``c``
    reads ``P[c]`` instead of comparing codes (one load a row step for a load, a compare
    and a blend: +15% in the int16 column loop, dev VM micro-benchmark, 2026-11-26)."""
    P = np.empty((PROF_N + 1, Q.shape[0], Q.shape[1]), Q.dtype)
    for c in range(PROF_N + 1):
        cc = cast(c, a)
        for i in range(Q.shape[0]):
            for l in range(Q.shape[1]):
                P[c, i, l] = a if Q[i, l] == cc and c < PROF_N else mb
    return P


@numba.njit(inline="always", **NJIT)
def _column(Q, M, G, PH, PX, H, X, f, cmax, mode, a, mb, oe, e, floor, z):
    """One column of the group: V0's ``column`` (s2g.dp) on every lane at once.

    ``Q``/``G``: the read codes ``[row][lane]`` and ``G[l]`` the graph base of lane l's
    column (the lockstep window kernel, where each lane is at its own column); or, with
    ``G`` None, ``Q`` is the column's substitution profile (:func:`_profiles`: every
    lane at the same column, :func:`_group`).

    ``PH``/``PX``: the predecessor vectors ``PH[i] = max_p H[i][p]`` and
    ``PX[i] = max_p max(H[i][p] - o - e, E[i][p] - e)`` (= this column's E); writes
    ``H`` and ``X = max(H - o - e, E - e)`` for the successors, and ``cmax`` = the
    maximum of rows 1..M per lane. ``floor`` is 0 in local mode and NEG otherwise.

    The lane count is ``LANES`` of the lane type (:func:`_chunk` pads groups to it), and
    the loops run to that compile-time constant: LLVM then hoists the vector loop's
    runtime alias checks out of the row loop and drops its remainder loop (one row step
    was ~70 instructions for 64 lanes, half of them scalar; +12% in the column loop on
    the AMD dev VM, 2026-11-26).
    """
    L = lanes_of(z)
    if mode == GLOBAL:
        for l in range(L):
            h0 = PX[0, l]
            H[0, l] = h0
            X[0, l] = max(cast(h0 - oe, z), cast(h0 - e, z))
    else:
        mo = cast(z - oe, z)
        for l in range(L):
            H[0, l] = z
            X[0, l] = mo
    for l in range(L):
        f[l] = cast(H[0, l] - oe, z)         # F of row 1 (F[0] = -inf)
        cmax[l] = z
    for i in range(1, M + 1):
        # the hot loop: every operand is the lane type (see the module doc's assembly);
        # F runs down through f[] (never re-read from H: a load of H[i-1] beside the
        # store to H[i] makes LLVM's alias check fail and run the scalar loop)
        for l in range(L):
            ev = PX[i, l]
            fv = f[l]
            s = _sub(Q, G, i - 1, l, a, mb)
            h = max(max(cast(PH[i - 1, l] + s, z), ev), max(fv, floor))
            H[i, l] = h
            ho = cast(h - oe, z)
            X[i, l] = max(ho, cast(ev - e, z))
            f[l] = max(ho, cast(fv - e, z))
            cmax[l] = max(cmax[l], h)


@numba.njit(inline="always", **NJIT)
def _best_local(cmax, bestT, best, bi, bj, H, M, L, base, col):
    """Local mode, V0's scan order: a lane whose column maximum beats its best so far takes
    the first row holding that maximum (strictly better replaces); its column is
    ``base[lane] + col``."""
    hit = False
    for l in range(L):
        hit |= cmax[l] > bestT[l]
    if hit:
        for l in range(L):
            if cmax[l] > bestT[l]:
                c = cmax[l]
                for i in range(1, M + 1):
                    if H[i, l] == c:
                        bestT[l] = c
                        best[l] = c
                        bi[l] = i
                        bj[l] = base[l] + col
                        break


@numba.njit(inline="always", **NJIT)
def _best_row(H, mrow, bestT, best, bi, bj, L, base, col):
    """Semiglobal/global: each lane's last row ``mrow[lane]`` against its best so far."""
    for l in range(L):
        h = H[mrow[l], l]
        if h > bestT[l]:
            bestT[l] = h
            best[l] = h
            bi[l] = mrow[l]
            bj[l] = base[l] + col


@numba.njit(**NJIT)
def _group(gi, grp, tasks, gr, mode, window, sc, out):
    """Run lane group ``gi`` over its column range; write its tasks' (score, i, j).

    ``grp`` = ``(groups, g_m, g_lo, g_hi)``: ``groups[gi, l]`` the task in lane l, or -1
    (an idle lane: zero length, never active), the longest read and the union column
    range of each group. Tasks of a group are sorted by ``task_lo`` (lane order = window
    order). ``tasks`` = ``(codes, offs, task_read, task_lo, task_hi, gcode)``, ``gr`` =
    ``(node_start, pred_ptr, pred_idx, slot, is_sink, n_slots)``, ``sc`` = ``(a, mb, o, e,
    neg, big)`` in the lane type, ``out`` = ``(score, end_i, end_j)`` (:func:`run_tasks`;
    tuples keep the signature short, LLVM removes the packing).
    """
    groups, g_m, g_lo, g_hi = grp
    codes, offs, task_read, task_lo, task_hi, gcode = tasks
    node_start, pred_ptr, pred_idx, slot, is_sink, n_slots = gr
    a, mb, o, e, neg, big = sc
    score, end_i, end_j = out
    z = cast(0, a)
    oe = cast(o + e, a)
    floor = z if mode == LOCAL else neg
    L = groups.shape[1]
    M = g_m[gi]
    jlo, jhi = g_lo[gi], g_hi[gi]
    # ---- lanes: query codes [row][lane], padding below each read
    Q = np.full((max(M, 1), L), cast(PAD_CODE, a))
    mrow = np.zeros(L, np.int64)
    lo = np.full(L, jhi, np.int64)      # idle lanes: never enter
    hi = np.full(L, jhi, np.int64)
    uniform = True
    for l in range(L):
        t = groups[gi, l]
        if t < 0:
            uniform = False
            continue
        r = task_read[t]
        m = offs[r + 1] - offs[r]
        mrow[l] = m
        if m != M:
            uniform = False
        lo[l] = max(task_lo[t], jlo)
        hi[l] = min(task_hi[t], jhi)
        for i in range(m):
            Q[i, l] = cast(codes[offs[r] + i], a)
    Pf = _profiles(Q, a, mb)             # every lane is at the same column
    # lane events in column order: entries (lo ascending) and exits (hi ascending)
    ent = np.argsort(lo, kind="mergesort")
    ext = np.argsort(hi, kind="mergesort")
    n_ent = 0
    n_ext = 0
    # ---- buffers
    R = M + 1
    Hb = np.empty((2, R, L), Q.dtype)
    Xb = np.empty((2, R, L), Q.dtype)
    SH = np.empty((max(n_slots, 1), R, L), Q.dtype)
    SX = np.empty((max(n_slots, 1), R, L), Q.dtype)
    VH = np.empty((R, L), Q.dtype)       # the virtual column (s2g.dp.virtual_column)
    VX = np.empty((R, L), Q.dtype)
    MH = np.empty((R, L), Q.dtype)       # merge buffer
    MX = np.empty((R, L), Q.dtype)
    f = np.empty(L, Q.dtype)
    cmax = np.empty(L, Q.dtype)
    pen = np.zeros(L, Q.dtype)
    bestT = np.full(L, big)              # per-lane threshold: big = not in its window
    zero = np.zeros(L, np.int64)         # _group's columns are absolute
    best = np.full(L, NEG_INF, np.int64)
    bi = np.full(L, -1, np.int64)
    bj = np.full(L, -1, np.int64)
    for i in range(R):
        vh = 0 if (mode == LOCAL or i == 0) else -(o + e * i)
        for l in range(L):
            VH[i, l] = cast(vh, a)
            VX[i, l] = cast(vh - o - e, a)
    v_first = np.searchsorted(node_start, jlo, side="right") - 1
    v_last = np.searchsorted(node_start, jhi - 1, side="right") - 1
    cur = 0
    PH = VH
    PX = VX
    H = Hb[0]
    X = Xb[0]
    for v in range(v_first, v_last + 1):
        pa, pb = pred_ptr[v], pred_ptr[v + 1]
        n0, n1 = node_start[v], node_start[v + 1]
        s0, s1 = max(n0, jlo), min(n1, jhi)
        simple = pb - pa == 1 and pred_idx[pa] == v - 1
        sv = slot[v]
        for j in range(s0, s1):
            # ---- predecessor vectors (V0's three cases)
            pv = False
            if j > s0 or (j > jlo and simple):
                PH = H                       # the previous column (this node, or v-1)
                PX = X
            elif j == n0 and pb > pa:
                for i in range(R):           # merge: start from the virtual column
                    for l in range(L):
                        MH[i, l] = VH[i, l] if mode != GLOBAL else neg
                        MX[i, l] = VX[i, l] if mode != GLOBAL else neg
                for k in range(pa, pb):
                    u = pred_idx[k]
                    last_u = node_start[u + 1] - 1
                    if last_u < jlo:
                        continue             # never computed: outside every lane's window
                    s = slot[u]
                    if window:
                        for l in range(L):   # lane mask: u lies before lane l's window
                            pen[l] = z if last_u >= lo[l] else neg
                        for i in range(R):
                            for l in range(L):
                                MH[i, l] = max(MH[i, l], cast(SH[s, i, l] + pen[l], z))
                                MX[i, l] = max(MX[i, l], cast(SX[s, i, l] + pen[l], z))
                    else:
                        for i in range(R):
                            for l in range(L):
                                MH[i, l] = max(MH[i, l], SH[s, i, l])
                                MX[i, l] = max(MX[i, l], SX[s, i, l])
                PH = MH
                PX = MX
            else:
                PH = VH                      # no predecessor in the window
                PX = VX
                pv = True
            # ---- lanes entering their window here read the virtual column
            while n_ent < L and lo[ent[n_ent]] <= j:
                l = ent[n_ent]
                n_ent += 1
                if lo[l] != j:
                    continue
                bestT[l] = z if mode == LOCAL else neg
                if j > jlo and not pv:
                    for i in range(R):
                        PH[i, l] = VH[i, l]
                        PX[i, l] = VX[i, l]
            while n_ext < L and hi[ext[n_ext]] <= j:
                bestT[ext[n_ext]] = big      # past the lane's window: never a best again
                n_ext += 1
            # ---- the column, written into v's slot when it is v's last
            if j == n1 - 1 and sv >= 0:
                H = SH[sv]
                X = SX[sv]
            else:
                H = Hb[cur]
                X = Xb[cur]
                cur = 1 - cur
            _column(Pf[min(gcode[j], PROF_N)], M, None, PH, PX, H, X, f, cmax, mode, a, mb,
                    oe, e, floor, z)
            # ---- best cell, V0's scan order (strictly better replaces)
            if mode == LOCAL:
                _best_local(cmax, bestT, best, bi, bj, H, M, L, zero, j)
            elif mode == SEMIGLOBAL or (j == n1 - 1 and is_sink[v]):
                if uniform:
                    hit = False
                    for l in range(L):
                        hit |= H[M, l] > bestT[l]
                else:
                    hit = True
                if hit:
                    _best_row(H, mrow, bestT, best, bi, bj, L, zero, j)
    for l in range(L):
        t = groups[gi, l]
        if t < 0:
            continue
        if mode == LOCAL and best[l] <= 0:
            continue
        score[t] = best[l]
        end_i[t] = bi[l]
        end_j[t] = bj[l]


@numba.njit(**NJIT)
def _group_lockstep(gi, grp, tasks, col_node, gr, mode, sc, out):
    """Window lane group ``gi`` in lockstep: at step k lane l computes its own column
    ``lo_l + k`` (windows far apart share a group without running the columns between).

    Every lane enters at step 0 (the virtual column); a lane at a node-first column
    that is not simple merges its own in-window predecessors from the graph's slots
    (rows strided by the lane count: scalar, but once per node and lane); a lane at a
    node's last column copies it into the node's slot. The graph's liveness slots are
    valid for any window: a lane visits its window's nodes in topological order.

    ``grp`` = ``(groups, g_m, g_w)`` (``g_w``: each group's widest window); ``col_node``:
    the node of each column; ``tasks``, ``gr``, ``sc``, ``out`` as in :func:`_group`.
    """
    groups, g_m, g_w = grp
    codes, offs, task_read, task_lo, task_hi, gcode = tasks
    node_start, pred_ptr, pred_idx, slot, _, n_slots = gr
    a, mb, o, e, neg, big = sc
    score, end_i, end_j = out
    z = cast(0, a)
    oe = cast(o + e, a)
    floor = z if mode == LOCAL else neg
    L = groups.shape[1]
    M = g_m[gi]
    W = g_w[gi]
    Q = np.full((max(M, 1), L), cast(PAD_CODE, a))
    mrow = np.zeros(L, np.int64)
    lo = np.zeros(L, np.int64)
    wl = np.zeros(L, np.int64)          # window width; idle lanes: 0
    for l in range(L):
        t = groups[gi, l]
        if t < 0:
            continue
        r = task_read[t]
        m = offs[r + 1] - offs[r]
        mrow[l] = m
        lo[l] = task_lo[t]
        wl[l] = task_hi[t] - task_lo[t]
        for i in range(m):
            Q[i, l] = cast(codes[offs[r] + i], a)
    R = M + 1
    Hb = np.empty((2, R, L), Q.dtype)
    Xb = np.empty((2, R, L), Q.dtype)
    SH = np.empty((max(n_slots, 1), R, L), Q.dtype)
    SX = np.empty((max(n_slots, 1), R, L), Q.dtype)
    VH = np.empty((R, L), Q.dtype)
    VX = np.empty((R, L), Q.dtype)
    f = np.empty(L, Q.dtype)
    cmax = np.empty(L, Q.dtype)
    G = np.empty(L, Q.dtype)
    bestT = np.full(L, big)
    best = np.full(L, NEG_INF, np.int64)
    bi = np.full(L, -1, np.int64)
    bj = np.full(L, -1, np.int64)
    for i in range(R):
        vh = 0 if (mode == LOCAL or i == 0) else -(o + e * i)
        for l in range(L):
            VH[i, l] = cast(vh, a)
            VX[i, l] = cast(vh - o - e, a)
    for l in range(L):
        if wl[l] > 0:
            bestT[l] = z if mode == LOCAL else neg
    gn = cast(GRAPH_N, a)
    cur = 0
    for k in range(W):
        if k == 0:
            PH = VH
            PX = VX
        else:
            PH = Hb[1 - cur]
            PX = Xb[1 - cur]
        for l in range(L):
            if k >= wl[l]:
                G[l] = gn
                if k == wl[l]:
                    bestT[l] = big         # past the window: never a best again
                continue
            j = lo[l] + k
            G[l] = cast(gcode[j], a)
            if k == 0:
                continue
            v = col_node[j]
            pa, pb = pred_ptr[v], pred_ptr[v + 1]
            if j != node_start[v] or (pb - pa == 1 and pred_idx[pa] == v - 1):
                continue                   # the previous column (this node, or v-1)
            # merge the lane's in-window predecessors; the virtual column only when
            # there is none (it never beats a real one: s2g/window.py), which saves a
            # strided pass over the rows
            first = True
            for q in range(pa, pb):
                u = pred_idx[q]
                if node_start[u + 1] - 1 < lo[l]:
                    continue               # outside the lane's window
                s = slot[u]
                if first:
                    for i in range(R):
                        PH[i, l] = SH[s, i, l]
                        PX[i, l] = SX[s, i, l]
                    first = False
                else:
                    for i in range(R):
                        PH[i, l] = max(PH[i, l], SH[s, i, l])
                        PX[i, l] = max(PX[i, l], SX[s, i, l])
            if first:
                for i in range(R):
                    PH[i, l] = VH[i, l]
                    PX[i, l] = VX[i, l]
        H = Hb[cur]
        X = Xb[cur]
        cur = 1 - cur
        _column(Q, M, G, PH, PX, H, X, f, cmax, mode, a, mb, oe, e, floor, z)
        for l in range(L):                 # a node's last column into its slot
            if k >= wl[l]:
                continue
            j = lo[l] + k
            v = col_node[j]
            s = slot[v]
            if s >= 0 and j == node_start[v + 1] - 1:
                for i in range(R):
                    SH[s, i, l] = H[i, l]
                    SX[s, i, l] = X[i, l]
        if mode == LOCAL:
            _best_local(cmax, bestT, best, bi, bj, H, M, L, lo, k)
        else:
            _best_row(H, mrow, bestT, best, bi, bj, L, lo, k)
    for l in range(L):
        t = groups[gi, l]
        if t < 0 or (mode == LOCAL and best[l] <= 0):
            continue
        score[t] = best[l]
        end_i[t] = bi[l]
        end_j[t] = bj[l]


@numba.njit(**PARALLEL)
def run_lockstep(grp, tasks, col_node, gr, mode, sc, out, n_threads):
    """Lockstep groups (:func:`_group_lockstep`'s arguments) dealt to the threads as in
    :func:`run_groups`."""
    for t in numba.prange(n_threads):
        for gi in dealt(t, grp[0].shape[0], n_threads):
            _group_lockstep(gi, grp, tasks, col_node, gr, mode, sc, out)


@numba.njit(**PARALLEL)
def run_groups(grp, tasks, gr, mode, window, sc, out, n_threads):
    """Every group, dealt to ``n_threads`` threads back and forth (:func:`dealt`).
    Groups come sorted by read length, and Numba's prange hands each thread one
    contiguous equal share of the iterations (whatever ``set_parallel_chunksize`` says;
    numba 0.68, omp and workqueue layers, checked with ``get_thread_id``), so over groups
    it gave the last thread all the longest reads. Arguments: :func:`_group`'s."""
    for t in numba.prange(n_threads):
        for gi in dealt(t, grp[0].shape[0], n_threads):
            _group(gi, grp, tasks, gr, mode, window, sc, out)



# --------------------------------------------------------------------------- host side

_TYPES = (np.int16, np.int32, np.int64)
_NEG = {np.int16: NEG16, np.int32: NEG32}


@numba.njit(**PARALLEL)
def _run_int64(tasks, reads, garr, n_slots, mode, sc, score, end_i, end_j):
    """Whole-graph tasks whose score bound fits no lane type: V0's kernel, one per thread.
    ``reads`` = ``(codes, offs, task_read)``, ``garr``: ``FlatGraph.kernel_arrays()``,
    ``sc`` = ``(a, b, o, e)``. The output arrays stay separate arguments: arrays unpacked
    from a tuple argument and written inside a ``prange`` can lose the writes (numba 0.68.1;
    a tuple handed on to a callee, as :func:`run_groups` does, is fine)."""
    codes, offs, task_read = reads
    base, node_start, pred_ptr, pred_idx, slot, is_sink = garr
    a, b, o, e = sc
    for k in numba.prange(len(tasks)):
        t = tasks[k]
        r = task_read[t]
        score[t], end_i[t], end_j[t] = align_read(
            codes[offs[r]:offs[r + 1]], base, node_start, pred_ptr, pred_idx, slot, is_sink,
            n_slots, mode, a, b, o, e)


def _fallback(graph, codes, offs, task_read, lo, hi, sel, scoring, mode, window, out):
    """Tasks ``sel`` in int64: V0's kernel, or the window reference for windows."""
    score, end_i, end_j = out
    if window:
        from ..window import align_windows_ref
        s, i, j = align_windows_ref(graph, codes, offs, task_read[sel], lo[sel], hi[sel],
                                    scoring, mode)
        score[sel], end_i[sel], end_j[sel] = s, i, j
    else:
        _run_int64(sel, (codes, offs, task_read), graph.kernel_arrays(), graph.n_slots,
                   int(mode), scoring.as_tuple(), score, end_i, end_j)


def _chunk(order, L, width=None):
    """Tasks in ``order`` cut into groups of L tasks, each a row of ``width`` lanes
    (default L; the kernels need ``LANES`` of the type: :func:`_column`); -1 pads."""
    width = L if width is None else width
    assert width >= L
    n_g = -(-len(order) // L)
    groups = np.full((n_g, width), -1, np.int64)
    if len(order):
        full = np.full(n_g * L, -1, np.int64)
        full[:len(order)] = order
        groups[:, :L] = full.reshape(n_g, L)
    return groups


def _group_ranges(groups, lens, lo, hi, nb):
    """(longest read, union column range start, end) of each group."""
    idle = groups < 0
    gt = np.maximum(groups, 0)
    g_m = np.where(idle, 0, lens[gt]).max(axis=1).astype(np.int64)
    g_lo = np.where(idle, nb, lo[gt]).min(axis=1).astype(np.int64)
    g_hi = np.where(idle, 0, hi[gt]).max(axis=1).astype(np.int64)
    return g_m, g_lo, g_hi


def _col_node(graph):
    """Column -> node of ``graph`` (cached on it; a seeded batch's window graph is new
    every batch: :func:`s2g.graph_core.column_nodes`, without the GIL)."""
    cn = graph.__dict__.get("_simd_col_node")
    if cn is None:
        cn = graph.__dict__["_simd_col_node"] = column_nodes(graph.node_start)
    return cn


def run_tasks(graph, codes, offs, task_read, task_lo, task_hi, scoring, mode, window,
              force_type=None, lanes=None):
    """(score, end_i, end_j) of every task: read ``task_read[t]`` in columns
    ``[task_lo[t], task_hi[t])``; int64 arrays, NEG_INF/-1/-1 where there is no alignment.

    Tasks are split by lane type (:func:`lane_type` of the task's read length, or
    ``force_type`` where that is wider: the tests force int32 and the int64 fallback),
    sorted by (window start, read length) or by read length, and cut into groups of
    ``LANES[type]`` lanes (``lanes`` overrides, for tests of partial groups).
    """
    n = len(task_read)
    score = np.full(n, NEG_INF, np.int64)
    end_i = np.full(n, -1, np.int64)
    end_j = np.full(n, -1, np.int64)
    nb = graph.n_bases
    lens = (offs[1:] - offs[:-1])[task_read] if n else np.zeros(0, np.int64)
    lo = np.maximum(task_lo, 0).astype(np.int64)
    hi = np.minimum(task_hi, nb).astype(np.int64)
    live = (lens > 0) & (hi > lo)
    if not live.any():
        return score, end_i, end_j
    a, b, o, e = scoring.as_tuple()
    # lane type per task (monotone in the read length, so a group's longest read decides)
    tcode = np.zeros(n, np.int64)
    ulens = np.unique(lens[live])
    ucode = np.array([_TYPES.index(lane_type(scoring, mode, int(m), nb)) for m in ulens])
    tcode[live] = ucode[np.searchsorted(ulens, lens[live])]
    if force_type is not None:
        tcode = np.maximum(tcode, _TYPES.index(force_type))
    gcode = graph_codes(graph)
    for k, T in enumerate(_TYPES):
        sel = np.nonzero(live & (tcode == k))[0]
        if len(sel) == 0:
            continue
        if T is np.int64:
            _fallback(graph, codes, offs, task_read, lo, hi, sel, scoring, mode, window,
                      (score, end_i, end_j))
            continue
        L, W = lanes or LANES[T], LANES[T]
        if L > W:
            raise S2GError(f"simd: at most {W} {np.dtype(T).name} lanes a group, not {L}")
        tasks = (codes, offs, task_read, lo, hi, gcode)
        gr = (graph.node_start, graph.pred_ptr, graph.pred_idx, graph.slot, graph.is_sink,
              graph.n_slots)
        sc = (T(a), T(-b), T(o), T(e), T(_NEG[T]), T(np.iinfo(T).max))
        out = (score, end_i, end_j)
        nth = np.int64(numba.get_num_threads())
        if not window:
            groups = _chunk(sel[np.argsort(lens[sel], kind="stable")], L, W)
            run_groups((groups, *_group_ranges(groups, lens, lo, hi, nb)), tasks, gr,
                       int(mode), False, sc, out, nth)
            continue
        # windows: groups of nearby windows run their union range; the others run in
        # lockstep, grouped by width (see the module doc)
        groups = _chunk(sel[np.lexsort((lens[sel], lo[sel]))], L, W)
        g_m, g_lo, g_hi = _group_ranges(groups, lens, lo, hi, nb)
        gt = np.maximum(groups, 0)
        g_w = np.where(groups < 0, 0, hi[gt] - lo[gt]).max(axis=1)
        union = (g_hi - g_lo) <= UNION_RATIO * g_w
        if union.any():
            ug = groups[union]
            run_groups((ug, g_m[union], g_lo[union], g_hi[union]), tasks, gr, int(mode), True,
                       sc, out, nth)
        if not union.all():
            rest = groups[~union].ravel()
            rest = rest[rest >= 0]
            lg = _chunk(rest[np.lexsort((lens[rest], hi[rest] - lo[rest]))], L, W)
            lgt = np.maximum(lg, 0)
            l_m = np.where(lg < 0, 0, lens[lgt]).max(axis=1).astype(np.int64)
            l_w = np.where(lg < 0, 0, hi[lgt] - lo[lgt]).max(axis=1).astype(np.int64)
            run_lockstep((lg, l_m, l_w), tasks, _col_node(graph), gr, int(mode), sc, out, nth)
    return score, end_i, end_j


def align_batch(graph, reads, scoring, mode, force_type=None, lanes=None) -> BatchResult:
    """The variant contract: score and end cell of every read, as V0 returns them
    (``force_type``, ``lanes``: see :func:`run_tasks`)."""
    n = reads.n_reads
    task = np.arange(n, dtype=np.int64)
    score, end_i, end_j = run_tasks(
        graph, reads.codes_flat, np.asarray(reads.offsets, np.int64), task,
        np.zeros(n, np.int64), np.full(n, graph.n_bases, np.int64), scoring, mode,
        window=False, force_type=force_type, lanes=lanes)
    return BatchResult(reads.names, reads.lengths(), score, end_i, end_j)


def align_windows(graph, codes_flat, offsets, task_read, task_lo, task_hi, scoring, mode,
                  force_type=None, lanes=None, floor=None, bands=None):
    """Score and end cell of every window task, exactly as ``s2g.window.align_windows_ref``.

    Task ``t`` aligns read ``task_read[t]`` (``codes_flat[offsets[r]:offsets[r+1]]``,
    the ReadBatch layout) to graph columns ``[task_lo[t], task_hi[t])`` (clipped to the
    graph). Returns int64 arrays (score, end_i, end_j), NEG_INF/-1/-1 where the window
    holds no alignment. Local and semiglobal mode only. Reads of at least
    ``prune_min_len`` bases run in :mod:`s2g.variants.pruned` (only the cells that can
    still hold the optimum), where ``floor`` (per task) lets a window scoring below it
    come back as none (NEG_INF), and ``bands`` (a dict) gets their kept rows
    (:func:`s2g.variants.pruned.align_windows`); a few of at least ``striped_min_len``
    striped.
    """
    if int(mode) not in (LOCAL, SEMIGLOBAL):
        raise S2GError("windows are aligned in local or semiglobal mode only (a window holds "
                       "no source-to-sink walk)")
    codes, offs = np.asarray(codes_flat, np.uint8), np.asarray(offsets, np.int64)
    tr, lo, hi = (np.asarray(x, np.int64) for x in (task_read, task_lo, task_hi))
    from . import pruned, striped
    pr = pruned.long_tasks(offs, tr) if force_type is None and lanes is None else None
    if pr is not None:                   # long reads' windows: the cells that can count
        res = pruned.align_selected(graph, codes, offs, tr, lo, hi, scoring, mode, pr, floor,
                                    bands)
        if (~pr).any():
            out = align_windows(graph, codes, offs, tr[~pr], lo[~pr], hi[~pr], scoring, mode)
            for r, x in zip(res, out):
                r[~pr] = x
        return res
    few = striped.few_long(offs, tr) if force_type is None and lanes is None else None
    if few is None:
        return run_tasks(graph, codes, offs, tr, lo, hi, scoring, mode, window=True,
                         force_type=force_type, lanes=lanes)
    out = run_tasks(graph, codes, offs, tr[~few], lo[~few], hi[~few], scoring, mode,
                    window=True)
    got = striped.align_windows(graph, codes, offs, tr[few], lo[few], hi[few], scoring, mode)
    res = tuple(np.empty(len(tr), np.int64) for _ in range(3))
    for r, x, y in zip(res, out, got):
        r[~few], r[few] = x, y
    return res


align_windows.takes_floor = True


def asm_report(dtype=np.int16, keep=None):
    """Counts of vector instructions (mnemonic, register width) in the group kernel's
    assembly for lane type ``dtype``.

    ``keep``: a list to append the assembly text to. Compiles an uncached copy of :func:`_group` (Numba cannot inspect code loaded from
    its cache) on a one-column problem, so it takes a few seconds.
    """
    T = dtype
    probe = numba.njit(nogil=True)(_group.py_func)
    one = np.zeros(1, np.int64)
    node = np.array([0, 1], np.int32)
    res = (np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1, np.int64))
    groups = np.full((1, LANES[T]), -1, np.int64)      # the kernels' width (_chunk)
    groups[0, 0] = 0
    probe(0, (groups, one + 1, one, one + 1),
          (np.zeros(1, np.uint8), np.array([0, 1], np.int64), one, one, one + 1,
           np.zeros(1, np.uint8)),
          (node, np.zeros(2, np.int32), np.zeros(0, np.int32), np.full(1, -1, np.int32),
           np.ones(1, np.uint8), 0), LOCAL, False,
          (T(2), T(-4), T(4), T(2), T(_NEG[T]), T(np.iinfo(T).max)), res)
    asm = probe.inspect_asm(probe.signatures[0])
    if keep is not None:
        keep.append(asm)
    return vector_op_counts(asm, r"vp(?:max|min|add|sub)s?[bwdq]|vpmov[a-z]+|vpcmpeq[bwdq]|"
                                 r"vpblendm[bwdq]")


__all__ = ["align_batch", "align_windows", "lane_type", "run_tasks", "LANES", "INT16_BOUND"]
