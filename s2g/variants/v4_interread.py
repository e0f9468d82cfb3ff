"""V4 — inter-read parallelism: one thread block per read, many reads per launch.

Strategy: block ``r`` aligns read ``r``; thread ``t`` owns read row ``r0 + 1 + t`` of
the current pass and walks the graph columns as an anti-diagonal wavefront: at local
step ``dd`` it computes column ``j = dd - t``, then the block waits at
``cuda.syncthreads()`` (a block barrier per anti-diagonal instead of V3's grid
barrier or V2's kernel launch). Every read of the batch runs concurrently, as many
blocks per SM as shared memory and registers allow, so the GPU is filled by reads,
not by the rows of one read.

Memory, all in dynamic shared memory of ``(7 + 2 S) x T x 4`` bytes (``T`` threads,
``S`` node_bound slots): three rotating H buffers (``dd mod 3``), two E and two F
buffers, and the node_bound store ``S x T`` for H and for E (slots from
``_cuda_common.gpu_slots``). ``T`` is the read length rounded up to a warp, at most
``_cuda_common.V4_MAX_BLOCK``, halved while the shared memory would pass
``SHMEM_LIMIT``.

Reads longer than ``T`` rows are done in passes (strips of ``T`` rows). The last row
of a strip writes its H and F for every column to global memory; the first row of the
next strip reads them as its row above, including the predecessors' last columns at
merge columns (so the boundary row needs no node_bound store). Two such rows per
read alternate between passes (a merge column of the next strip may read a column
that the current strip's last row would already have overwritten), 16 x N bytes per
multi-pass read, grouped so a launch stays under ``V4_GBUF_BYTES``. Each pass costs
a full sweep of ``T + N - 1`` barriers however few rows it has: the throughput cliff
just above ``T``.

Best cell: per-thread registers (score, column, row) under the tie rule, then one
``atomic.max`` of the packed int64 key per thread.

Limits: int32 scores, ``N x (m+1) < 2**34``, ``(7 + 2 S) x 32 x 4 <= SHMEM_LIMIT``
(S <= 188 slots), and per-read wall time ~ passes x (T + N) barrier steps.
Previous version: V3. What changed: a block per read instead of a grid per batch
(block barrier, about 20x cheaper than a grid barrier), buffers and node_bound in
shared memory instead of global, best kept in registers.
"""
from __future__ import annotations

import numpy as np
from numba import cuda, int32, int64, uint8, void

from . import _cuda_common as cc
from ._cuda_common import (BH_NONE, K_PREV, K_VIRT, LOCAL, NEG, better, finish_cell, is_candidate,
                           pack_key, sub_score32, virt_h)

SIG_BLOCK = void(uint8[::1], int32[::1], int32, int32,
                 int32[::1], int32[::1], int32[::1], int32[::1], int32[::1], int32[::1],
                 int32[::1], int32, int32, int32, int32, int32, int32[::1], int64[::1])


def _block(codes, rstart, N, S, colw, col_node, pred_ptr, pred_last, pred_slot, row0h, diag0,
           mode, a, nb, o, e, gbuf, best):
    """Read ``blockIdx.x``, rows in passes of blockDim.x (s2g.dp recurrence per cell)."""
    sm = cuda.shared.array(0, int32)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    T = cuda.blockDim.x
    q0 = rstart[r]
    m = int32(rstart[r + 1] - q0)
    if m == 0:                     # uniform per block: no barrier is skipped by a few
        return
    oe = int32(o + e)
    local = mode == LOCAL
    oHB = 0                        # shared layout: H x3, E x2, F x2, SH x S, SE x S
    oEB = 3 * T
    oFB = 5 * T
    oSH = 7 * T
    oSE = (7 + S) * T
    bh = int32(BH_NONE)
    bj = int32(-1)
    bi = int32(-1)
    npass = (m + T - 1) // T
    gstride = int64(2) * N
    for p in range(npass):
        r0 = int32(p * T)
        rows = min(T, m - r0)
        i = int32(r0 + 1 + t)
        active = t < rows
        qb = codes[q0 + i - 1] if active else uint8(4)
        gin = (int64(r) * 2 + (p & 1)) * gstride         # boundary row above this strip
        gout = (int64(r) * 2 + ((p + 1) & 1)) * gstride  # boundary row for the next strip
        write_out = (p + 1 < npass) and (t == rows - 1)
        # rotating buffer offsets of anti-diagonals dd, dd-1, dd-2 (H) and dd, dd-1 (E, F),
        # rotated in registers: a 64-bit ``dd % 3`` per step cost more than the cell
        c0 = int32(0)
        c1 = int32(2 * T)
        c2 = int32(T)
        p0 = int32(0)
        p1 = int32(T)
        j = int32(-t)
        for _dd in range(rows + N - 1):
            if active and j >= 0 and j < N:               # guard: cell inside the matrix
                w = colw[j]
                kind = (w >> 3) & 3
                s = sub_score32(qb, int32(w & 7), a, nb)
                if t == 0:
                    if p == 0:
                        uph = row0h[j]
                        upf = int32(NEG)
                    else:
                        uph = gbuf[gin + j]
                        upf = gbuf[gin + N + j]
                else:
                    uph = sm[oHB + c1 + t - 1]
                    upf = sm[oFB + p1 + t - 1]
                if kind == K_PREV:
                    if t > 0:
                        hdiag = sm[oHB + c2 + t - 1]
                    elif p == 0:
                        hdiag = diag0[j]
                    else:
                        hdiag = gbuf[gin + j - 1]
                    pe = max(int32(sm[oHB + c1 + t] - oe), int32(sm[oEB + p1 + t] - e))
                elif kind == K_VIRT:
                    hdiag = virt_h(int32(i - 1), local, o, e)
                    pe = int32(virt_h(i, local, o, e) - oe)
                else:
                    v = col_node[j]
                    hdiag = diag0[j] if (t == 0 and p == 0) else int32(NEG)
                    pe = int32(NEG)
                    for k in range(pred_ptr[v], pred_ptr[v + 1]):
                        sl = pred_slot[k] * T
                        if t > 0:
                            hdiag = max(hdiag, sm[oSH + sl + t - 1])
                        elif p > 0:
                            hdiag = max(hdiag, gbuf[gin + pred_last[k]])
                        pe = max(pe, max(int32(sm[oSH + sl + t] - oe), int32(sm[oSE + sl + t] - e)))
                h, f = finish_cell(hdiag, pe, uph, upf, s, oe, e, local)
                sm[oHB + c0 + t] = h
                sm[oEB + p0 + t] = pe
                sm[oFB + p0 + t] = f
                ws = (w >> 6) - 1
                if ws >= 0:        # a node's last column that a merge column will read
                    sm[oSH + ws * T + t] = h
                    sm[oSE + ws * T + t] = pe
                if write_out:
                    gbuf[gout + j] = h
                    gbuf[gout + N + j] = f
                if is_candidate(h, i, m, w, mode) and better(h, j, i, bh, bj, bi):
                    bh = h
                    bj = j
                    bi = i
            cuda.syncthreads()     # anti-diagonal dd complete in the block
            c0, c1, c2 = c2, c0, c1
            p0, p1 = p1, p0
            j = int32(j + 1)
    if bj >= 0:
        cuda.atomic.max(best, r, pack_key(bh, bj, bi, m))


KERNELS = {"block": (_block, SIG_BLOCK)}
_kernel = cc.lazy_kernels(KERNELS)


def shared_bytes(T: int, S: int) -> int:
    return (7 + 2 * S) * T * 4


def block_size(max_len: int, n_slots: int) -> int:
    """Threads per block: read length rounded up to a warp, capped, fitted to shared memory."""
    S = max(n_slots, 1)
    cap = max(cc.V4_MAX_BLOCK, 1)
    T = min(cap, max(32, cc.ceil_div(max_len, 32) * 32)) if cap >= 32 else cap
    while T > 32 and shared_bytes(T, S) > cc.SHMEM_LIMIT:
        T = max(32, (T // 2) // 32 * 32)
    if shared_bytes(T, S) > cc.SHMEM_LIMIT:
        raise cc.S2GError(
            f"v4: {S} node_bound slots need (7 + 2 x {S}) x {T} x 4 = {shared_bytes(T, S)} bytes "
            f"of shared memory per block, more than {cc.SHMEM_LIMIT}; use v3")
    return T


def align_batch(graph, reads, scoring, mode):
    bt = cc.start_batch(graph, reads, scoring, mode, "v4")
    mode, lens, score, end_i, end_j, N = bt.mode, bt.lens, bt.score, bt.end_i, bt.end_j, bt.N
    if bt.empty:
        return cc.finish(reads, score, end_i, end_j)
    dev, S, a, nb, o, e, row0h, diag0 = bt.dev, bt.S, bt.a, bt.nb, bt.o, bt.e, bt.row0h, bt.diag0
    n, maxm = reads.n_reads, bt.maxm
    T = block_size(maxm, S)
    shmem = shared_bytes(T, S)
    kern = _kernel("block")
    per_launch = n if maxm <= T else max(1, cc.V4_GBUF_BYTES // (16 * N))
    codes_all = reads.codes_flat
    for r0 in range(0, n, per_launch):
        r1 = min(n, r0 + per_launch)
        a0, a1 = int(reads.offsets[r0]), int(reads.offsets[r1])
        if a1 == a0:
            continue
        rstart = (reads.offsets[r0:r1 + 1] - a0).astype(np.int32)
        multi = int(lens[r0:r1].max()) > T
        gbuf = cuda.device_array(4 * N * (r1 - r0) if multi else 1, np.int32)
        best = cuda.to_device(np.full(r1 - r0, -1, np.int64))
        args = (cuda.to_device(codes_all[a0:a1]), cuda.to_device(rstart), np.int32(N), np.int32(S),
                dev["colw"], dev["col_node"], dev["pred_ptr"], dev["pred_last"], dev["pred_slot"],
                row0h, diag0, np.int32(int(mode)), a, nb, o, e, gbuf, best)
        start, stop = cuda.event(), cuda.event()
        start.record()
        cc.launch(kern, r1 - r0, T, args, sharedmem=shmem)
        stop.record()
        stop.synchronize()
        cc.last_kernel_ms += cc.elapsed_ms(start, stop)
        s_, i_, j_ = cc.decode_keys(best.copy_to_host(), lens[r0:r1])
        score[r0:r1], end_i[r0:r1], end_j[r0:r1] = s_, i_, j_
    return cc.finish(reads, score, end_i, end_j)
