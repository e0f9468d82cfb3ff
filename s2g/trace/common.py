"""What the CPU traceback (:mod:`s2g.trace`) and the GPU one (:mod:`s2g.trace.gpu`)
share: op and status codes, the traceback window's backward search, the cell with its
direction bits and tie order, the walk summary (CIGAR runs, path) and the status
message. Both import it; neither imports the other at module level.
"""
from __future__ import annotations


import numba
import numpy as np

from .._numba import NJIT
from ..dp import F_EXT, GLOBAL, H_DEL, H_DIAG, H_INS, H_START, LOCAL, sub_score
from ..errors import S2GError

OP_EQ, OP_X, OP_I, OP_D = 0, 1, 2, 3
OPCH = "=XID"
ST_OK, ST_TOO_BIG, ST_MISMATCH = 0, 1, 2


@numba.njit(**NJIT)
def window(v_end, joff, L, node_start, pred_ptr, pred_idx, lo=0):
    """Window nodes (ascending) with the first and last in-window column offsets.

    A backward search from the end cell's node in decreasing topological order: a
    node's distance (bases from its last column to the end cell, counting both) is final
    when it is taken, since all its successors have higher indices and were taken
    before. The frontier is an array sorted by node (taken from its end; a predecessor
    is found by binary search), not a heap and a dict: a window has a few frontier nodes
    at a time, and this took 3.2 us per 150 bp read with typed containers.

    ``lo``: no column below it is in the window (a seeded alignment's window,
    :mod:`s2g.window`); a node cut by it starts from the virtual column."""
    cap = 16
    fn = np.empty(cap, np.int64)             # frontier nodes, ascending
    fd = np.empty(cap, np.int64)             # their distances so far
    fn[0] = v_end
    fd[0] = 0
    nf = 1
    nodes = np.empty(cap, np.int64)
    ws = np.empty(cap, np.int64)
    we = np.empty(cap, np.int64)
    n = 0
    while nf > 0:
        nf -= 1
        u = fn[nf]
        ln = node_start[u + 1] - node_start[u]
        if u == v_end:
            last = joff
            dfirst = joff + 1
        else:
            last = ln - 1
            dfirst = fd[nf] + ln - 1
        first = max(0, dfirst - L)  # column k has distance dfirst - k; keep those <= L
        first = max(first, lo - node_start[u])
        if n == len(nodes):
            nodes = _grown(nodes, n)
            ws = _grown(ws, n)
            we = _grown(we, n)
        nodes[n] = u
        ws[n] = first
        we[n] = last
        n += 1
        if first == 0:
            cand = dfirst + 1
            if cand <= L:
                for k in range(pred_ptr[u], pred_ptr[u + 1]):
                    p = pred_idx[k]
                    if node_start[p + 1] - 1 < lo:
                        continue
                    x0 = 0                   # first frontier position with node >= p
                    x1 = nf
                    while x0 < x1:
                        mid = (x0 + x1) >> 1
                        if fn[mid] < p:
                            x0 = mid + 1
                        else:
                            x1 = mid
                    if x0 < nf and fn[x0] == p:
                        if cand < fd[x0]:
                            fd[x0] = cand
                        continue
                    if nf == len(fn):
                        fn = _grown(fn, nf)
                        fd = _grown(fd, nf)
                    for x in range(nf, x0, -1):
                        fn[x] = fn[x - 1]
                        fd[x] = fd[x - 1]
                    fn[x0] = p
                    fd[x0] = cand
                    nf += 1
    return nodes[:n][::-1].copy(), ws[:n][::-1].copy(), we[:n][::-1].copy()


@numba.njit(inline="always", **NJIT)
def _grown(a, n):
    """A copy of ``a[:n]`` with twice the room."""
    out = np.empty(2 * len(a), a.dtype)
    out[:n] = a[:n]
    return out


@numba.njit(inline="always", **NJIT)
def tb_cell(diag, ev, hup, f, qb, gb, mode, a, b, o, e):
    """One cell below row 0 with its direction bits: ``(H, F, bits)`` from the diagonal
    ``diag`` (H of the predecessor one row up), ``ev`` (E, from the predecessor column),
    ``hup`` (H one row up) and ``f`` (F one row up). Tie order (abPOA's backtrack
    order): match/mismatch, then deletion (E), then insertion (F); a gap that can be
    opened or extended with the same score is opened; a local cell whose value is 0 is a
    start. Shared by the CPU traceback and the GPU kernel (:mod:`s2g.trace.gpu`)."""
    fo = hup - o - e
    fx = f - e
    d = 0
    if fx > fo:
        f = fx
        d = F_EXT
    else:
        f = fo
    h = diag + sub_score(qb, gb, a, b)
    src = H_DIAG
    if ev > h:
        h = ev
        src = H_DEL
    if f > h:
        h = f
        src = H_INS
    if mode == LOCAL and h <= 0:
        h = 0
        src = H_START
    return h, f, d | src


@numba.njit(**NJIT)
def summarize(k, op_r, col_r, end_jr, node_start, oo, co, run_op, run_len, n_runs, path,
               n_path, geo, counts):
    """What a GAF line needs from one walk (``op_r``/``col_r`` reversed), into row ``k`` of
    the flat outputs: CIGAR runs in read order from ``oo[k]``, path nodes from ``co[k]``
    (consumed columns' nodes, repeats collapsed), path length, start and end offsets, op
    counts. Shared by the CPU walk and the GPU one (:mod:`s2g.trace.gpu`)."""
    no = len(op_r)
    nc = len(col_r)
    x0 = oo[k]
    nr = 0
    # the run being read, kept in registers: stored (and counted) when it ends (a store an
    # op before: 50.4 -> 44-45 ms a 50,000 walks, one thread, bench/summarize_bench.py)
    cur = -1
    ln = 0
    for t in range(no):
        op = op_r[no - 1 - t]
        if op == cur:
            ln += 1
            continue
        if ln > 0:
            run_op[x0 + nr] = cur
            run_len[x0 + nr] = ln
            counts[k, cur] += ln
            nr += 1
        cur = op
        ln = 1
    if ln > 0:
        run_op[x0 + nr] = cur
        run_len[x0 + nr] = ln
        counts[k, cur] += ln
        nr += 1
    n_runs[k] = nr
    p0 = co[k]
    npth = 0
    if nc > 0:
        first_col = col_r[nc - 1]
        last_col = col_r[0]
        lo, hi = 1, 0                        # the last node's columns (none yet)
        for t in range(nc):
            j = col_r[nc - 1 - t]
            if lo <= j < hi:
                continue                     # still in the last node (most columns)
            v = np.searchsorted(node_start, j, side="right") - 1
            lo, hi = node_start[v], node_start[v + 1]
            if npth == 0 or path[p0 + npth - 1] != v:
                path[p0 + npth] = v
                npth += 1
    else:   # only insertions: an empty interval at the end column
        first_col = end_jr + 1
        last_col = end_jr
        path[p0] = np.searchsorted(node_start, end_jr, side="right") - 1
        npth = 1
    n_path[k] = npth
    plen = 0
    for t in range(npth):
        v = path[p0 + t]
        plen += node_start[v + 1] - node_start[v]
    vl = path[p0 + npth - 1]
    geo[k, 0] = plen
    geo[k, 1] = first_col - node_start[path[p0]]
    geo[k, 2] = plen - (node_start[vl + 1] - node_start[vl]) + (last_col - node_start[vl]) + 1


@numba.njit(**NJIT)
def summary_arrays(n, oo, co):
    run_op = np.empty(oo[n], np.uint8)
    run_len = np.empty(oo[n], np.int32)
    path = np.empty(co[n], np.int32)
    n_runs = np.zeros(n, np.int64)
    n_path = np.zeros(n, np.int64)
    geo = np.zeros((n, 3), np.int64)         # path_len, path_start, path_end
    counts = np.zeros((n, 4), np.int64)
    return run_op, run_len, n_runs, path, n_path, geo, counts


def raise_status(reads, idx, st, cells, score, ei, ej, max_cells):
    """The one-line error for the first read whose status is not ST_OK (if any)."""
    bad = np.nonzero(st != ST_OK)[0]
    if len(bad) == 0:
        return
    k = int(bad[0])
    r = int(idx[k])
    name = reads.names[r]
    if st[k] == ST_TOO_BIG:
        raise S2GError(f"read {name!r}: traceback window of {int(cells[k])} cells does not fit "
                       f"in {max_cells} bytes even with row checkpoints "
                       "(--max-traceback-cells); raise it or use --no-traceback")
    raise S2GError(f"internal error: windowed traceback of read {name!r} does not reproduce "
                   f"score {int(score[r])} at ({int(ei[r])}, {int(ej[r])}); please report this")


# ------------------------------------------------------------------ lane column programs
# The CPU lane traceback's window as a column program (s2g/trace/lanes.py), which the GPU
# traceback's program builder (s2g/gpu_traceback.py) extends.

#: program column kinds: continue the previous window column; or start from the virtual
#: column (K_VIRT) or from "unreachable" (K_NEG, global mode) and merge a predecessor list
K_CONT, K_VIRT, K_NEG = 0, 1, 2


@numba.njit(**NJIT)
def window_band(p_kind, p_mpa, p_mpn, mp_wcol, R, D, I, blo, bhi):
    """Rows ``blo[w]..bhi[w]`` of window column ``w`` (``len(blo)`` columns) that a cell of
    an optimal alignment ending at the window's end cell (row ``R``, its last column) can
    take, ``D`` and ``I`` the most deletions and insertions its slack allows
    (:func:`s2g.trace.gpu_program.band_rows` gives the argument); an empty band (``R + 1``,
    ``-1``) where no walk leads to the end. The program's arrays are the window's own
    (``mp_wcol`` from its first merge edge); ``p_kind == 0`` is a column continuing the
    previous one in both program forms (:data:`K_CONT`, :data:`s2g.trace.gpu_walk.K_CONT`),
    any other kind merges its ``p_mpn`` predecessors' last columns ``mp_wcol``."""
    W = len(blo)
    big = np.int64(1) << 40
    dmin = np.full(W, big, np.int64)
    lmax = np.full(W, np.int64(-1), np.int64)
    if W > 0:
        dmin[W - 1] = 0
        lmax[W - 1] = 0
    for w in range(W - 1, -1, -1):
        if dmin[w] == big:
            continue
        if p_kind[w] == 0:
            if w > 0:
                dmin[w - 1] = min(dmin[w - 1], dmin[w] + 1)
                lmax[w - 1] = max(lmax[w - 1], lmax[w] + 1)
        else:
            ma = p_mpa[w]
            for x in range(p_mpn[w]):
                q = mp_wcol[ma + x]
                dmin[q] = min(dmin[q], dmin[w] + 1)
                lmax[q] = max(lmax[q], lmax[w] + 1)
    for w in range(W):
        if dmin[w] == big:
            blo[w] = R + 1
            bhi[w] = -1
        else:
            blo[w] = max(np.int64(0), R - lmax[w] - I - 1)
            bhi[w] = min(R, R - dmin[w] + D + 1)


@numba.njit(inline="always", **NJIT)
def _in_window(wn, p):
    """Index of node ``p`` in the ascending window nodes ``wn``, or -1."""
    k = np.searchsorted(wn, p)
    return k if k < len(wn) and wn[k] == p else -1


@numba.njit(**NJIT)
def lane_program(wn, ws, we, mode, graph, fill, c0, m0, prog, sizes):
    """A read's traceback window (``wn, ws, we`` from :func:`window`) as a column
    program, one record per window column ``w`` (flat index ``c0 + w``): graph column,
    kind (``K_CONT``, or a merge from ``K_VIRT``/``K_NEG`` exactly where
    :func:`s2g.trace.scalar._sweep` starts from the virtual column or unreachable), the
    merge's list of in-window predecessors (entries ``m0 + p_mpa[w] ..``: the window slot
    holding each one's last column and that column's window index), the merge's rank among
    the read's merges with a list (where its choices are kept), and the window slot the
    column is stored into (-1: none). Window slots are allocated by liveness as in
    :mod:`s2g.trace.gpu`. Always writes ``sizes`` = (window columns, merges with a
    list, list entries, window slots, longest list, node-first columns with
    predecessors); the program only with ``fill``: :func:`node_program`'s records, one a
    window node, spread over its columns (the GPU spreads the same records itself,
    :mod:`s2g.trace.long.programs_gpu`).

    ``graph`` = ``(node_start, pred_ptr, pred_idx)``; ``prog`` = ``(p_col, p_kind, p_mpa,
    p_mpn, p_mrank, p_store, mp_slot, mp_wcol)``, the program's arrays.
    """
    node_start = graph[0]
    p_col, p_kind, p_mpa, p_mpn, p_mrank, p_store, mp_slot, mp_wcol = prog
    nodes = np.empty((N_NODE, len(wn) if fill else 0), np.int64)
    node_program(wn, ws, we, mode, graph, fill, m0, mp_slot, mp_wcol, nodes, sizes)
    if not fill:
        return
    for k in range(len(wn)):
        v = wn[k]
        for c in range(ws[k], we[k] + 1):
            w = c0 + nodes[0, k] + c - ws[k]
            p_col[w] = node_start[v] + c
            if c == ws[k]:
                p_kind[w] = nodes[1, k]
                p_mrank[w] = nodes[2, k]
                p_mpa[w] = nodes[3, k]
                p_mpn[w] = nodes[4, k]
            else:
                p_kind[w] = K_CONT
                p_mrank[w] = -1
                p_mpa[w] = 0
                p_mpn[w] = 0
            p_store[w] = nodes[5, k] if c == we[k] else -1


#: rows of :func:`node_program`'s records
N_NODE = 6


@numba.njit(**NJIT)
def node_program(wn, ws, we, mode, graph, fill, m0, mp_slot, mp_wcol, nodes, sizes):
    """:func:`lane_program`'s work per window node: ``sizes`` always; with ``fill`` the
    merge lists (``mp_slot``, ``mp_wcol`` from entry ``m0``) and per window node ``k``
    the record ``nodes[:, k]`` = (its first column's window index; that column's kind,
    merge rank, list start and length (``K_CONT``, -1, 0, 0 without a list); the window
    slot its last column is stored into, -1: none). Every other column of a node
    continues the one before it, with no list and no slot."""
    node_start, pred_ptr, pred_idx = graph
    nw = len(wn)
    woff = np.zeros(nw + 1, np.int64)
    nf = 0
    for k in range(nw):
        woff[k + 1] = woff[k] + we[k] - ws[k] + 1
        if ws[k] == 0 and pred_ptr[wn[k] + 1] > pred_ptr[wn[k]]:
            nf += 1
    merges = np.zeros(nw, np.bool_)
    last_use = np.full(nw, -1, np.int64)
    for k in range(nw):
        v = wn[k]
        pa, pb = pred_ptr[v], pred_ptr[v + 1]
        if ws[k] != 0 or pb == pa:
            continue
        if pb - pa == 1 and pred_idx[pa] == v - 1 and k > 0 and wn[k - 1] == v - 1:
            continue                         # continues the previous window column
        merges[k] = True
        for u in range(pa, pb):
            kp = _in_window(wn, pred_idx[u])
            if kp >= 0:
                last_use[kp] = k
    slot_of = np.full(nw, -1, np.int64)
    used = np.zeros(nw + 1, np.bool_)
    n_sl = 0
    nm = 0
    nmp = 0
    longest = 0
    for k in range(nw):
        v = wn[k]
        pa, pb = pred_ptr[v], pred_ptr[v + 1]
        n_list = 0
        if merges[k]:
            for u in range(pa, pb):          # ascending: the lowest index wins ties
                kp = _in_window(wn, pred_idx[u])
                if kp >= 0:
                    if fill:
                        mp_slot[m0 + nmp + n_list] = slot_of[kp]
                        mp_wcol[m0 + nmp + n_list] = woff[kp + 1] - 1
                    n_list += 1
        if fill:
            nodes[0, k] = woff[k]
            nodes[2, k] = -1
            nodes[3, k] = 0
            nodes[4, k] = 0
            nodes[5, k] = -1
            if ws[k] == 0 and pb > pa and not merges[k]:
                nodes[1, k] = K_CONT
            else:
                nodes[1, k] = K_NEG if (mode == GLOBAL and (ws[k] > 0 or pb > pa)) else K_VIRT
                if n_list > 0:
                    nodes[2, k] = nm
                    nodes[3, k] = nmp
                    nodes[4, k] = n_list
        if n_list > 0:
            nm += 1
            nmp += n_list
            longest = max(longest, n_list)
        if merges[k]:                        # free the slots this node read last
            for u in range(pa, pb):
                kp = _in_window(wn, pred_idx[u])
                if kp >= 0 and last_use[kp] == k and slot_of[kp] >= 0:
                    used[slot_of[kp]] = False
        if last_use[k] >= 0:
            s = 0
            while used[s]:
                s += 1
            used[s] = True
            slot_of[k] = s
            n_sl = max(n_sl, s + 1)
            if fill:
                nodes[5, k] = s
    sizes[0] = woff[nw]
    sizes[1] = nm
    sizes[2] = nmp
    sizes[3] = n_sl
    sizes[4] = longest
    sizes[5] = nf
