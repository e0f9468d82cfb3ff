"""cpu — V0's exact kernel on every core (Numba ``prange`` over reads).

Strategy: inter-read parallelism only; each read runs :func:`v0_cpu.align_read`
unchanged, so results are identical to V0 by construction (and tested). Threads:
Numba's default (all cores) or ``NUMBA_NUM_THREADS``. Memory: V0's per read, times
the number of threads. ``auto``'s choice without a usable GPU for batches of few or long
reads (``registry.pick_auto``: a simd lane group costs its longest read).
"""
import numba
import numpy as np

from .._numba import PARALLEL
from ..result import BatchResult
from ..scoring import NEG_INF
from .v0_cpu import align_read


@numba.njit(**PARALLEL)
def _align_all(codes, offsets, base, node_start, pred_ptr, pred_idx, slot, is_sink,
               n_slots, mode, a, b, o, e, score, end_i, end_j):
    n = len(offsets) - 1
    for r in numba.prange(n):
        q = codes[offsets[r]:offsets[r + 1]]
        if len(q) == 0:
            continue
        s, i, j = align_read(q, base, node_start, pred_ptr, pred_idx, slot, is_sink,
                             n_slots, mode, a, b, o, e)
        score[r], end_i[r], end_j[r] = s, i, j


def align_batch(graph, reads, scoring, mode, traceback=False) -> BatchResult:
    n = reads.n_reads
    score = np.full(n, NEG_INF, np.int64)
    end_i = np.full(n, -1, np.int64)
    end_j = np.full(n, -1, np.int64)
    a, b, o, e = scoring.as_tuple()
    _align_all(reads.codes_flat, reads.offsets, *graph.kernel_arrays(), graph.n_slots,
               int(mode), a, b, o, e, score, end_i, end_j)
    res = BatchResult(reads.names, reads.lengths(), score, end_i, end_j)
    if traceback:
        from ..traceback import traceback_batch
        traceback_batch(graph, reads, scoring, mode, res)
    return res
