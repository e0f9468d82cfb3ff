"""V2 — rolling anti-diagonal buffers plus a node_bound store; host-driven launches.

Strategy: as V1, one kernel launch per anti-diagonal ``d = i + j`` and one thread per
cell, but (1) the rows of *all reads of the batch* are laid end to end (row ``i`` of
read ``r`` is flat row ``offsets[r] + i - 1``, which is also the index of its read
base in ``ReadBatch.codes_flat``), so one launch advances every read by one
anti-diagonal, and (2) the full matrices are gone.

Memory (int32, per flat row, i.e. per read base of the batch): H of anti-diagonals
``d``, ``d-1``, ``d-2`` (three rotating buffers, index ``d mod 3``: a cell reads
``H(i-1, j)`` and ``H(i, j-1)`` from ``d-1`` and ``H(i-1, j-1)`` from ``d-2``), E and F
of ``d`` and ``d-1`` (two each), the per-row best (score, column), and the
node_bound store: ``n_slots`` x rows for H and for E. A node's last column writes
its slot (``write_slot`` in the column table); a merge column reads its
predecessors' slots (``pred_slot``). Slots come from ``_cuda_common.gpu_slots``,
which keeps a slot until two columns after its last reader, so no anti-diagonal
both reads and overwrites one. Row 0 is not stored: rows 1 take the mode's boundary
from ``row0h``/``diag0``. Total ``(9 + 2 n_slots) x 4`` bytes per read base, graph
size free (V1: ``12 (m+1) N`` bytes per read).

Limits: int32 scores, ``N x (m+1) < 2**34``, ``ROWS_PER_LAUNCH`` read bases per
launch group (larger batches are split). Still ``max m + N - 1`` launches per group:
launch latency bounds it, but it is paid once per batch instead of once per read.
Previous version: V1. What changed: batch of reads per launch, rolling buffers and
node_bound store instead of full matrices (memory independent of the graph size).
"""
from __future__ import annotations

import numpy as np
from numba import cuda, int32, uint8, void

from . import _cuda_common as cc
from ._cuda_common import (K_PREV, K_VIRT, LOCAL, NEG, finish_cell, is_candidate, sub_score32,
                           virt_h)

SIG_DIAG = void(uint8[::1], int32[::1], int32[::1], int32, int32,
                int32[::1], int32[::1], int32[::1], int32[::1], int32[::1], int32[::1],
                int32, int32, int32, int32, int32, int32,
                int32[::1], int32[::1], int32[::1], int32[::1], int32[::1], int32[::1], int32[::1])


@cuda.jit(device=True, inline=True)
def rolling_cell(d, f_row, rows, cols, sc, bufs):
    """Cell (i, d - i) of flat row ``f_row`` from the rolling buffers (s2g.dp recurrence).

    Shared by V2 (one launch per anti-diagonal) and V3 (one cooperative kernel). The
    kernels' arrays and scalars come in tuples (inlined: no cost): ``rows`` = ``(codes,
    row_i, row_m, T)``, ``cols`` = ``(N, colw, col_node, pred_ptr, pred_slot, row0h,
    diag0)``, ``sc`` = ``(mode, a, nb, o, e)``, ``bufs`` = ``(HB, EB, FB, SH, SE, bh,
    bj)``.
    """
    codes, row_i, row_m, T = rows
    N, colw, col_node, pred_ptr, pred_slot, row0h, diag0 = cols
    mode, a, nb, o, e = sc
    HB, EB, FB, SH, SE, bh, bj = bufs
    i = row_i[f_row]
    j = int32(d - i)
    if j < 0 or j >= N:            # guard: this row has no cell on anti-diagonal d
        return
    m = row_m[f_row]
    oe = int32(o + e)
    local = mode == LOCAL
    c0 = (d % 3) * T               # rotating H buffers: d, d-1, d-2
    c1 = ((d + 2) % 3) * T
    c2 = ((d + 1) % 3) * T
    p0 = (d & 1) * T               # E, F: d and d-1
    p1 = ((d + 1) & 1) * T
    w = colw[j]
    kind = (w >> 3) & 3
    s = sub_score32(codes[f_row], int32(w & 7), a, nb)
    if i == 1:
        uph = row0h[j]
        upf = int32(NEG)
    else:
        uph = HB[c1 + f_row - 1]
        upf = FB[p1 + f_row - 1]
    if kind == K_PREV:
        hdiag = diag0[j] if i == 1 else HB[c2 + f_row - 1]
        pe = max(int32(HB[c1 + f_row] - oe), int32(EB[p1 + f_row] - e))
    elif kind == K_VIRT:
        hdiag = virt_h(int32(i - 1), local, o, e)
        pe = int32(virt_h(i, local, o, e) - oe)
    else:
        v = col_node[j]
        hdiag = diag0[j] if i == 1 else int32(NEG)
        pe = int32(NEG)
        for k in range(pred_ptr[v], pred_ptr[v + 1]):
            sl = pred_slot[k] * T
            if i > 1:
                hdiag = max(hdiag, SH[sl + f_row - 1])
            pe = max(pe, max(int32(SH[sl + f_row] - oe), int32(SE[sl + f_row] - e)))
    h, f = finish_cell(hdiag, pe, uph, upf, s, oe, e, local)
    HB[c0 + f_row] = h
    EB[p0 + f_row] = pe
    FB[p0 + f_row] = f
    ws = (w >> 6) - 1
    if ws >= 0:                    # a node's last column that a merge column will read
        SH[ws * T + f_row] = h
        SE[ws * T + f_row] = pe
    if is_candidate(h, i, m, w, mode) and h > bh[f_row]:   # columns rise: first j wins
        bh[f_row] = h
        bj[f_row] = j


def _diag(codes, row_i, row_m, T, N, colw, col_node, pred_ptr, pred_slot, row0h, diag0,
          d, mode, a, nb, o, e, HB, EB, FB, SH, SE, bh, bj):
    f_row = cuda.grid(1)
    if f_row >= T:                 # guard: the last block overhangs the rows
        return
    rolling_cell(d, f_row, (codes, row_i, row_m, T),
                 (N, colw, col_node, pred_ptr, pred_slot, row0h, diag0), (mode, a, nb, o, e),
                 (HB, EB, FB, SH, SE, bh, bj))


KERNELS = {"diag": (_diag, SIG_DIAG)}
_kernel = cc.lazy_kernels(KERNELS)


def row_groups(lens, limit):
    """Consecutive read ranges [r0, r1) with at most ``limit`` bases each (>= 1 read)."""
    groups, r0, acc = [], 0, 0
    for r, m in enumerate(lens.tolist()):
        if acc and acc + m > limit:
            groups.append((r0, r))
            r0, acc = r, 0
        acc += m
    groups.append((r0, len(lens)))
    return groups


def prepare_group(reads, r0, r1):
    """Flat rows of reads r0..r1-1: codes, row_i, row_m, row_read (host arrays)."""
    lens = reads.lengths()[r0:r1].astype(np.int64)
    a, b = int(reads.offsets[r0]), int(reads.offsets[r1])
    codes = reads.codes_flat[a:b]
    row_read = np.repeat(np.arange(r0, r1), lens)
    starts = np.repeat(np.cumsum(lens) - lens, lens)
    row_i = (np.arange(b - a) - starts + 1).astype(np.int32)
    row_m = np.repeat(lens, lens).astype(np.int32)
    return codes, row_i, row_m, row_read


def align_batch(graph, reads, scoring, mode):
    bt = cc.start_batch(graph, reads, scoring, mode, "v2")
    mode, lens, score, end_i, end_j, N = bt.mode, bt.lens, bt.score, bt.end_i, bt.end_j, bt.N
    if bt.empty:
        return cc.finish(reads, score, end_i, end_j)
    dev, S, a, nb, o, e, row0h, diag0 = bt.dev, bt.S, bt.a, bt.nb, bt.o, bt.e, bt.row0h, bt.diag0
    kern = _kernel("diag")
    B = cc.BLOCK
    md = np.int32(int(mode))
    for r0, r1 in row_groups(lens, cc.ROWS_PER_LAUNCH):
        codes, row_i, row_m, row_read = prepare_group(reads, r0, r1)
        T = len(codes)
        if T == 0:
            continue
        dcodes, drow_i, drow_m = cuda.to_device(codes), cuda.to_device(row_i), cuda.to_device(row_m)
        HB = cuda.device_array(3 * T, np.int32)
        EB = cuda.device_array(2 * T, np.int32)
        FB = cuda.device_array(2 * T, np.int32)
        SH = cuda.device_array(S * T, np.int32)
        SE = cuda.device_array(S * T, np.int32)
        bh = cuda.to_device(np.full(T, cc.BH_NONE, np.int32))
        bj = cuda.to_device(np.full(T, -1, np.int32))
        maxm = int(row_m.max())
        grid = cc.ceil_div(T, B)
        start, stop = cuda.event(), cuda.event()
        start.record()
        for d in range(1, maxm + N):
            cc.launch(kern, grid, B,
                      (dcodes, drow_i, drow_m, np.int32(T), np.int32(N), dev["colw"],
                       dev["col_node"], dev["pred_ptr"], dev["pred_slot"], row0h, diag0,
                       np.int32(d), md, a, nb, o, e, HB, EB, FB, SH, SE, bh, bj))
        stop.record()
        stop.synchronize()
        cc.last_kernel_ms += cc.elapsed_ms(start, stop)
        s_, i_, j_ = cc.reduce_rows(bh.copy_to_host(), bj.copy_to_host(), row_read - r0, row_i, r1 - r0)
        score[r0:r1], end_i[r0:r1], end_j[r0:r1] = s_, i_, j_
    return cc.finish(reads, score, end_i, end_j)
