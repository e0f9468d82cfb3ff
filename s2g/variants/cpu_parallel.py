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
def _align_all(codes, offsets, garr, n_slots, mode, sc, score, end_i, end_j):
    """Every read of ``codes``/``offsets``; ``garr``: ``FlatGraph.kernel_arrays()``, ``sc``
    = ``(a, b, o, e)``. The output arrays stay separate arguments: arrays unpacked from a
    tuple argument and written inside a ``prange`` can lose the writes (numba 0.68.1)."""
    base, node_start, pred_ptr, pred_idx, slot, is_sink = garr
    a, b, o, e = sc
    n = len(offsets) - 1
    for r in numba.prange(n):
        q = codes[offsets[r]:offsets[r + 1]]
        if len(q) == 0:
            continue
        s, i, j = align_read(q, base, node_start, pred_ptr, pred_idx, slot, is_sink,
                             n_slots, mode, a, b, o, e)
        score[r], end_i[r], end_j[r] = s, i, j


def align_batch(graph, reads, scoring, mode) -> BatchResult:
    n = reads.n_reads
    score = np.full(n, NEG_INF, np.int64)
    end_i = np.full(n, -1, np.int64)
    end_j = np.full(n, -1, np.int64)
    _align_all(reads.codes_flat, reads.offsets, graph.kernel_arrays(), graph.n_slots,
               int(mode), scoring.as_tuple(), score, end_i, end_j)
    return BatchResult(reads.names, reads.lengths(), score, end_i, end_j)
