"""V3 — one cooperative kernel for a whole batch, a grid-wide barrier per anti-diagonal.

Strategy: V2's cell (``v2_rolling.rolling_cell``, the same rows laid end to end and
the same three rotating H buffers indexed ``d mod 3``, two E/F buffers and node_bound
store) but the loop over anti-diagonals runs *inside* one kernel: after each
anti-diagonal every thread waits at ``cuda.cg.this_grid().sync()``. The grid is
fixed (at most the cooperative-launch occupancy limit,
``max_cooperative_grid_blocks``, of ``_cuda_common.BLOCK`` threads) and each thread
takes flat rows ``tid, tid + gridsize, ...`` (strided rows), so one launch covers
any batch. Per-column facts (base, kind, node, write slot) come from the precomputed
column tables (``colw``/``col_node``), one load per cell.

Best cell: per-row bests as in V2; at the end each thread packs its rows' bests into
the int64 key of ``_cuda_common`` (score in the high bits, then inverted column and
row, so the largest key obeys the tie rule) and folds them into its read's best with
one ``cuda.atomic.max``; the host only decodes keys.

Memory: as V2, ``(9 + 2 n_slots) x 4`` bytes per read base, plus 8 bytes per read.
Limits: int32 scores, ``N x (m+1) < 2**34``, the grid barrier's cost (about 1.5 us
on an H200) is paid ``max m + N - 1`` times per launch group, whatever the batch.
Previous version: V2. What changed: one launch per batch instead of one per
anti-diagonal (launch latency -> grid-barrier latency), strided rows, the best cell
reduced on the device with an atomic max.
"""
from __future__ import annotations

import numpy as np
from numba import cuda, int32, int64, uint8, void

from . import _cuda_common as cc
from ._cuda_common import pack_key
from .v2_rolling import prepare_group, rolling_cell, row_groups

SIG_COOP = void(uint8[::1], int32[::1], int32[::1], int32[::1], int32, int32, int32,
                int32[::1], int32[::1], int32[::1], int32[::1], int32[::1], int32[::1],
                int32, int32, int32, int32, int32,
                int32[::1], int32[::1], int32[::1], int32[::1], int32[::1], int32[::1], int32[::1],
                int64[::1])


def _coop(codes, row_i, row_m, row_read, T, N, dmax, colw, col_node, pred_ptr, pred_slot,
          row0h, diag0, mode, a, nb, o, e, HB, EB, FB, SH, SE, bh, bj, best):
    grid = cuda.cg.this_grid()
    tid = cuda.grid(1)
    nth = cuda.gridsize(1)
    rows = (codes, row_i, row_m, T)               # rolling_cell's tuples
    cols = (N, colw, col_node, pred_ptr, pred_slot, row0h, diag0)
    sc = (mode, a, nb, o, e)
    bufs = (HB, EB, FB, SH, SE, bh, bj)
    for dd in range(1, dmax + 1):
        d = int32(dd)
        for f_row in range(tid, T, nth):          # strided rows: any batch, fixed grid
            rolling_cell(d, f_row, rows, cols, sc, bufs)
        grid.sync()                               # anti-diagonal d complete everywhere
    for f_row in range(tid, T, nth):
        if bj[f_row] >= 0:
            cuda.atomic.max(best, row_read[f_row],
                            pack_key(bh[f_row], bj[f_row], row_i[f_row], row_m[f_row]))


KERNELS = {"coop": (_coop, SIG_COOP)}
_kernel = cc.lazy_kernels(KERNELS)
#: grid in the simulator: it runs blocks one after another and its grid.sync() is only
#: a block barrier (numba-cuda 0.30 simulator/kernelapi.py), so one block, strided rows.
SIM_GRID = 1


def grid_blocks(kern, rows):
    """Blocks of the cooperative grid: enough for the rows, never above occupancy."""
    B = cc.BLOCK
    want = cc.ceil_div(rows, B)
    if cc.simulator():
        return max(1, min(want, SIM_GRID))
    limit = next(iter(kern.overloads.values())).max_cooperative_grid_blocks(B)
    if limit < 1:
        raise cc.S2GError(f"v3: the device cannot co-schedule one block of {B} threads "
                          "for a cooperative launch; use v4")
    return max(1, min(want, limit))


def align_batch(graph, reads, scoring, mode):
    bt = cc.start_batch(graph, reads, scoring, mode, "v3")
    mode, lens, score, end_i, end_j, N = bt.mode, bt.lens, bt.score, bt.end_i, bt.end_j, bt.N
    if bt.empty:
        return cc.finish(reads, score, end_i, end_j)
    dev, S, a, nb, o, e, row0h, diag0 = bt.dev, bt.S, bt.a, bt.nb, bt.o, bt.e, bt.row0h, bt.diag0
    kern = _kernel("coop")
    B = cc.BLOCK
    for r0, r1 in row_groups(lens, cc.ROWS_PER_LAUNCH):
        codes, row_i, row_m, row_read = prepare_group(reads, r0, r1)
        T = len(codes)
        if T == 0:
            continue
        HB = cuda.device_array(3 * T, np.int32)
        EB = cuda.device_array(2 * T, np.int32)
        FB = cuda.device_array(2 * T, np.int32)
        SH = cuda.device_array(S * T, np.int32)
        SE = cuda.device_array(S * T, np.int32)
        bh = cuda.to_device(np.full(T, cc.BH_NONE, np.int32))
        bj = cuda.to_device(np.full(T, -1, np.int32))
        best = cuda.to_device(np.full(r1 - r0, -1, np.int64))
        args = (cuda.to_device(codes), cuda.to_device(row_i), cuda.to_device(row_m),
                cuda.to_device((row_read - r0).astype(np.int32)), np.int32(T), np.int32(N),
                np.int32(int(row_m.max()) + N - 1), dev["colw"], dev["col_node"],
                dev["pred_ptr"], dev["pred_slot"], row0h, diag0, np.int32(int(mode)),
                a, nb, o, e, HB, EB, FB, SH, SE, bh, bj, best)
        blocks = grid_blocks(kern, T)
        start, stop = cuda.event(), cuda.event()
        start.record()
        cc.launch(kern, blocks, B, args)
        stop.record()
        stop.synchronize()
        cc.last_kernel_ms += cc.elapsed_ms(start, stop)
        s_, i_, j_ = cc.decode_keys(best.copy_to_host(), lens[r0:r1])
        score[r0:r1], end_i[r0:r1], end_j[r0:r1] = s_, i_, j_
    return cc.finish(reads, score, end_i, end_j)
