"""The ``fast`` variant's batch driver: one kernel launch a chunk of reads
(:func:`run_kernel`: tables, buffers, launch, end cells), the ranges' end cells combined,
and the variant contract (:func:`align_batch`: scores and end cells; the driver,
:mod:`s2g.aligner`, does the traceback).

Status
    Every read's status starts at ST_NOT_RUN; the kernel writes ST_OK. The host raises
    :class:`s2g.errors.S2GError` if any read was not processed.
"""
from __future__ import annotations

import time
import warnings

import numpy as np

from ...config import settings
from ...counters import Counters
from ...errors import S2GError
from ...result import BatchResult
from ...scoring import NEG_INF, Mode, fits_int32
from .. import _devpool, _lean
from .constants import ST_NOT_RUN, ST_OK
from .geometry import launch_shape, pair_fits, plan, prmt_scores, shared_slots
from .kernel import get_kernel
from .tables import column_ranges, graph_tables, kernel_constants, kernel_slots

#: What this process's launches of :func:`run_kernel` cost (``s2g align --timings`` prints
#: it): launches, DP cells (read bases x graph columns), the kernels' seconds (CUDA events
#: around each launch), run_kernel's wall seconds (the kernel, its buffers, transfers) and
#: its setup before the launch (graph tables, loading the kernel, buffers)
PROFILE = Counters({"launches": 0, "cells": 0, "kernel": 0.0, "wall": 0.0, "setup": 0.0})


def run_kernel(graph, codes, offsets, lengths, scoring, mode, G=None, K=None,
               events=None, pair=None, pipe=None, on_launch=None, ranges=None):
    """Launch the kernel on arrays (host numpy); returns (score, end_i, end_j) int32 arrays.

    ``pair``: the 16-bit two-reads-per-group kernel (default: where :func:`pair_fits`
    and the ``fast_pair`` knob allow it); ``False`` forces 32 bits; ``True`` where it fits.
    ``pipe``: the pipelined kernel for reads of several strips (:func:`pipe_groups`).
    ``ranges``: column ranges a read (:func:`choose_ranges`; each a unit of the kernel,
    their end cells combined here in V0's order).

    ``events``: optional (start, stop) CUDA events recorded around the launch only.
    ``on_launch``: called once the kernel is queued, before this thread waits for it (the
    aligner starts host work there that would otherwise follow the kernel).
    """
    cuda = _lean.api()
    t_start = time.perf_counter()
    n = len(lengths)
    tab = graph_tables(graph, mode, scoring)
    max_len = int(lengths.max(initial=0))
    fits = pair_fits(scoring, mode, max_len)
    pair = fits and (settings().fast_pair if pair is None else bool(pair))
    n_units = -(-n // 2) if pair else n
    G, K, NR = launch_shape(graph, max_len, pair, n_units, G, K, ranges)
    rlo = column_ranges(graph, NR)
    G, K, blocks, block, groups, P, SG = plan(graph, max_len, n_units * NR, G, K, pair, pipe)
    a, b, o, e = scoring.as_tuple()
    order = np.argsort(-lengths, kind="stable").astype(np.int32)
    dp = _devpool.pool()                                # buffers allocated once, reused
    d_codes = dp.put("fast.codes", codes if len(codes) else np.zeros(1, np.uint8))
    d_off = dp.put("fast.off", offsets[:-1].astype(np.int64))
    d_len = dp.put("fast.len", lengths.astype(np.int32))
    d_ord = dp.put("fast.order", order)
    d_rlo = dp.put("fast.rlo", rlo)
    prmt_sub = prmt_scores(a, b, o, e)
    kern = get_kernel(G, K, mode, prmt_sub, pair, SG)
    n_sh, sh_bytes = shared_slots(kern, G, K, kernel_slots(graph), block)
    n_gl = kernel_slots(graph) - n_sh                   # slots in global memory (>= 1)
    store = dp.empty("fast.store", groups * n_gl * (2 * K + 1) * G, np.int32)
    npass = -(-max_len // (G * K))
    bn = (blocks * SG * (P + 1) if P else groups) * graph.n_bases if npass > 1 else 1
    bndH = dp.empty("fast.bndH", bn, np.int32)
    bndF = dp.empty("fast.bndF", bn, np.int32)
    out_s = dp.empty("fast.out_s", n * NR, np.int32)      # [read][range]
    out_i = dp.empty("fast.out_i", n * NR, np.int32)
    out_j = dp.empty("fast.out_j", n * NR, np.int32)
    status = dp.put("fast.status", np.full(n * NR, ST_NOT_RUN, np.int32))
    PROFILE.add(setup=time.perf_counter() - t_start)
    mine = cuda.event(), cuda.event()
    mine[0].record()
    if events:
        events[0].record()
    # The default stream, synchronised (numba-cuda 0.30 rejects a literal stream 0 with
    # a shared-memory size; its default_stream() object is the same stream).
    kern[blocks, block, cuda.default_stream(), sh_bytes](
        tab.colinfo, tab.colsub(pair, prmt_sub), tab.mword, tab.mptr, tab.mslot, tab.row0,
        d_codes, d_off, d_len, d_ord, d_rlo,
        n, NR, n_gl, n_sh, np.int32(a), np.int32(b), np.int32(o), np.int32(e),
        *kernel_constants(scoring, pair), store, bndH, bndF,
        out_s, out_i, out_j, status)
    if events:
        events[1].record()
    mine[1].record()
    if on_launch is not None:
        on_launch()
    cuda.default_stream().synchronize()     # this thread's stream (see fast.windows.run)
    st = status.copy_to_host()
    res = (out_s.copy_to_host(), out_i.copy_to_host(), out_j.copy_to_host())
    PROFILE.add(launches=1, cells=int(lengths.sum(dtype=np.int64)) * int(graph.n_bases),
                kernel=max(0.0, mine[0].elapsed_time(mine[1]) / 1e3),   # simulator: -1
                wall=time.perf_counter() - t_start)
    bad = np.nonzero((st != ST_OK).reshape(n, NR).any(axis=1))[0]
    if len(bad):
        raise S2GError(f"fast: GPU kernel left {len(bad)} read(s) unprocessed (first: read index "
                       f"{int(bad[0])}, status {st.reshape(n, NR)[bad[0]].tolist()}); please "
                       "report this")
    return combine_ranges(*res, NR)


def combine_ranges(s, i, j, NR):
    """Each read's end cell over its ``NR`` ranges (arrays ``[read][range]``) in V0's order:
    the highest score, then the smallest column, then the smallest row (j < 0: none)."""
    if NR == 1:
        return s, i, j
    s, i, j = (x.reshape(-1, NR) for x in (s, i, j))
    bs, bi, bj = s[:, 0].copy(), i[:, 0].copy(), j[:, 0].copy()
    for r in range(1, NR):
        x, xi, xj = s[:, r], i[:, r], j[:, r]
        better = (xj >= 0) & ((bj < 0) | (x > bs) | ((x == bs) & (
            (xj < bj) | ((xj == bj) & (xi < bi)))))
        bs = np.where(better, x, bs)
        bi = np.where(better, xi, bi)
        bj = np.where(better, xj, bj)
    return bs, bi, bj


#: reads per kernel launch (bounds host and device buffers; stream over larger inputs)
BATCH_READS = 1 << 18


def align_batch(graph, reads, scoring, mode, on_launch=None) -> BatchResult:
    """The variant contract; exact int32 on the GPU, or the int64 CPU path if the bound fails.
    ``on_launch``: :func:`run_kernel`'s, at the first launch (never on the CPU path)."""
    mode = Mode(int(mode))
    n = reads.n_reads
    lens = reads.lengths()
    score = np.full(n, NEG_INF, np.int64)
    end_i = np.full(n, -1, np.int64)
    end_j = np.full(n, -1, np.int64)
    if not fits_int32(scoring, mode, reads.max_len, graph.n_bases):
        warnings.warn("fast: scores may exceed int32 for this input; using the exact int64 "
                      "CPU variant 'cpu' instead", RuntimeWarning, stacklevel=2)
        from .. import cpu_parallel
        return cpu_parallel.align_batch(graph, reads, scoring, mode)
    idx_all = np.nonzero(lens > 0)[0]
    for c in range(0, len(idx_all), BATCH_READS):
        idx = idx_all[c:c + BATCH_READS]
        sub_lens = lens[idx]
        offs = np.zeros(len(idx) + 1, np.int64)
        np.cumsum(sub_lens, out=offs[1:])
        # empty reads own no codes: the non-empty reads' codes are one slice of codes_flat
        ro = reads.offsets
        codes = reads.codes_flat[ro[idx[0]]:ro[idx[-1] + 1]] if len(idx) else np.zeros(0, np.uint8)
        s, i, j = run_kernel(graph, np.ascontiguousarray(codes, np.uint8), offs, sub_lens,
                             scoring, mode, on_launch=on_launch if c == 0 else None)
        ok = j >= 0
        score[idx] = np.where(ok, s, NEG_INF)
        end_i[idx] = np.where(ok, i, -1)
        end_j[idx] = np.where(ok, j, -1)
    return BatchResult(reads.names, lens, score, end_i, end_j)
