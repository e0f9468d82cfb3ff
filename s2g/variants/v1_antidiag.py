"""V1 — anti-diagonal tiling, naive (the design's first GPU step).

Strategy: reads one after another. The cells of one anti-diagonal ``d = i + j``
(row ``i`` = read position 1..m, column ``j`` = graph base in topological order)
depend only on earlier anti-diagonals, so each is computed by one kernel launch with
one CUDA thread per cell, blocks of ``_cuda_common.BLOCK`` threads. That is
``m + N - 1`` launches per read, O(M + N); launch latency, not arithmetic, sets the
speed.

Memory: H, E and F fully materialised in global memory, three ``(m+1) x N`` int32
matrices for the longest read of the batch (row 0 = the mode's boundary, from
``_cuda_common.GraphTables.row0``). A merge column (the first column of a node with
predecessors other than the previous node) maxes over its predecessors' last columns
straight from the full matrices through the CSR, so V1 needs no node_bound store.
The need, ``3 x (m+1) x N x 4`` bytes, is checked against the device's free memory
before anything is allocated, and refused with an S2GError that shows the formula.

Best cell: each thread keeps its row's best (score, column) in two per-row arrays
(one thread per row per launch, so no race); the host reduces rows with the tie rule
(score, then smallest column, then smallest row).

Limits: int32 scores (``fits_int32``), the memory above, ``N x (m+1) < 2**34``.
Previous version: V0 (CPU, column-major, int64). What changed: the traversal order
(anti-diagonals instead of columns), int32 arithmetic and the device.
"""
from __future__ import annotations

import numpy as np
from numba import cuda, int32, int64, uint8, void

from . import _cuda_common as cc
from ._cuda_common import (K_PREV, K_VIRT, LOCAL, NEG, finish_cell, is_candidate,
                           sub_score32, virt_h)

SIG_INIT = void(int32[:, ::1], int32[:, ::1], int32[:, ::1], int32[::1], int32)
SIG_DIAG = void(int32[:, ::1], int32[:, ::1], int32[:, ::1], uint8[::1], int64,
                int32[::1], int32[::1], int32[::1], int32[::1],
                int32, int32, int32, int32, int32, int32, int32, int32, int32,
                int32[::1], int32[::1])


def _init_row0(H, E, F, row0h, N):
    """Row 0 of the full matrices: the mode's boundary H, E = F = -inf."""
    j = cuda.grid(1)
    if j < N:                      # guard: the last block overhangs the row
        H[0, j] = row0h[j]
        E[0, j] = NEG
        F[0, j] = NEG


def _diag(H, E, F, codes, q0, colw, col_node, pred_ptr, pred_last,
          m, N, d, ilo, mode, a, nb, o, e, bh, bj):
    """Cells (i, d - i) for i = ilo + thread index (s2g.dp recurrence, one cell each)."""
    i = int32(ilo + cuda.grid(1))
    j = int32(d - i)
    if i > m or j < 0:             # guard: threads past the anti-diagonal's last cell
        return
    oe = int32(o + e)
    local = mode == LOCAL
    w = colw[j]
    kind = (w >> 3) & 3
    s = sub_score32(codes[q0 + i - 1], int32(w & 7), a, nb)
    if kind == K_PREV:
        hdiag = H[i - 1, j - 1]
        pe = max(int32(H[i, j - 1] - oe), int32(E[i, j - 1] - e))
    elif kind == K_VIRT:
        hdiag = virt_h(int32(i - 1), local, o, e)
        pe = int32(virt_h(i, local, o, e) - oe)
    else:
        v = col_node[j]
        hdiag = int32(NEG)
        pe = int32(NEG)
        for k in range(pred_ptr[v], pred_ptr[v + 1]):
            c = pred_last[k]
            hdiag = max(hdiag, H[i - 1, c])
            pe = max(pe, max(int32(H[i, c] - oe), int32(E[i, c] - e)))
    h, f = finish_cell(hdiag, pe, H[i - 1, j], F[i - 1, j], s, oe, e, local)
    H[i, j] = h
    E[i, j] = pe
    F[i, j] = f
    if is_candidate(h, i, m, w, mode) and h > bh[i]:   # columns rise: first j wins ties
        bh[i] = h
        bj[i] = j


KERNELS = {"init_row0": (_init_row0, SIG_INIT), "diag": (_diag, SIG_DIAG)}
_kernel = cc.lazy_kernels(KERNELS)


def memory_needed(max_len: int, n_bases: int) -> int:
    """Bytes of the three full int32 matrices."""
    return 3 * (max_len + 1) * n_bases * 4


def align_batch(graph, reads, scoring, mode):
    mode = cc.check_problem(graph, reads, scoring, mode, "v1")
    n = reads.n_reads
    lens = reads.lengths()
    score, end_i, end_j = cc.empty_results(n)
    maxm = int(lens.max(initial=0))
    N = graph.n_bases
    if maxm == 0 or N == 0:
        cc.last_kernel_ms = 0.0
        return cc.finish(reads, score, end_i, end_j)
    need = memory_needed(maxm, N)
    free = cc.free_device_memory()
    if free is not None and need > free:
        raise cc.S2GError(
            f"v1: the full H, E, F matrices need 3 x (m+1) x N x 4 bytes = 3 x {maxm + 1} x {N} x 4"
            f" = {need:,} bytes, more than the {free:,} bytes free on the device; use v2, v3 or v4")
    t = cc.tables(graph)
    dev = t.device()
    a, nb, o, e, _ = cc.scoring32(scoring)
    row0h, _ = t.device_row0(mode, int(o), int(e))
    H = cuda.device_array((maxm + 1, N), np.int32)
    E = cuda.device_array((maxm + 1, N), np.int32)
    F = cuda.device_array((maxm + 1, N), np.int32)
    codes = cuda.to_device(reads.codes_flat if len(reads.codes_flat) else np.zeros(1, np.uint8))
    init, diag = _kernel("init_row0"), _kernel("diag")
    B = cc.BLOCK
    cc.launch(init, cc.ceil_div(N, B), B, (H, E, F, row0h, np.int32(N)))
    start, stop = cuda.event(), cuda.event()
    start.record()
    md = int(mode)
    for r in range(n):
        m = int(lens[r])
        if m == 0:
            continue
        bh = cuda.to_device(np.full(m + 1, cc.BH_NONE, np.int32))
        bj = cuda.to_device(np.full(m + 1, -1, np.int32))
        q0 = np.int64(reads.offsets[r])
        for d in range(1, m + N):
            ilo = max(1, d - N + 1)
            cnt = min(m, d) - ilo + 1
            cc.launch(diag, cc.ceil_div(cnt, B), B,
                      (H, E, F, codes, q0, dev["colw"], dev["col_node"], dev["pred_ptr"],
                       dev["pred_last"], np.int32(m), np.int32(N), np.int32(d), np.int32(ilo),
                       np.int32(md), a, nb, o, e, bh, bj))
        rows = np.arange(m + 1)
        s_, i_, j_ = cc.reduce_rows(bh.copy_to_host(), bj.copy_to_host(), np.zeros(m + 1), rows, 1)
        score[r], end_i[r], end_j[r] = s_[0], i_[0], j_[0]
    stop.record()
    stop.synchronize()
    cc.last_kernel_ms = cc.elapsed_ms(start, stop)
    return cc.finish(reads, score, end_i, end_j)
