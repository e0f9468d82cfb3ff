"""V0 — sequential CPU baseline and the correctness oracle.

Strategy: one read at a time, nodes in topological order, one column at a time
(column-major), int64 arithmetic so no scoring scheme can overflow. The first column
of a node reads its predecessors' last columns from the node_bound store (``slot``),
or the previous column when the node is simple; see :mod:`s2g.dp` for the
recurrence and the boundary of each mode.

Memory per read: 2 x (n_slots + 3) x (m + 1) int64 — independent of the graph size.
Tie rule for the end cell: the smallest column j, then the smallest row i (columns
are scanned in ascending order and only a strictly better cell replaces the best).
"""
import numba
import numpy as np

from .._numba import NJIT
from ..dp import GLOBAL, LOCAL, SEMIGLOBAL, column, virtual_column
from ..result import BatchResult
from ..scoring import NEG_INF


@numba.njit(**NJIT)
def align_read(q, base, node_start, pred_ptr, pred_idx, slot, is_sink, n_slots,
               mode, a, b, o, e):
    """Best score and end cell (score, i, j) of read codes ``q``; (NEG_INF, -1, -1) if none."""
    m = len(q)
    SH = np.empty((max(n_slots, 1), m + 1), np.int64)
    SE = np.empty((max(n_slots, 1), m + 1), np.int64)
    PH = np.empty(m + 1, np.int64)
    PE = np.empty(m + 1, np.int64)
    H = np.empty((2, m + 1), np.int64)
    E = np.empty((2, m + 1), np.int64)
    best, bi, bj = NEG_INF, -1, -1
    cur = 0
    n_nodes = len(node_start) - 1
    for v in range(n_nodes):
        pa, pb = pred_ptr[v], pred_ptr[v + 1]
        s0, s1 = node_start[v], node_start[v + 1]
        for j in range(s0, s1):
            prev = 1 - cur
            if j > s0 or (pb - pa == 1 and pred_idx[pa] == v - 1):
                for i in range(m + 1):       # previous column (same node, or simple node)
                    PH[i] = H[prev, i]
                    PE[i] = max(H[prev, i] - o - e, E[prev, i] - e)
            elif pb == pa:
                virtual_column(PH, PE, m, mode, o, e)
            else:
                for i in range(m + 1):
                    PH[i] = NEG_INF
                    PE[i] = NEG_INF
                for k in range(pa, pb):
                    s = slot[pred_idx[k]]
                    for i in range(m + 1):
                        PH[i] = max(PH[i], SH[s, i])
                        PE[i] = max(PE[i], max(SH[s, i] - o - e, SE[s, i] - e))
            column(q, m, base[j], PH, PE, H[cur], E[cur], mode, a, b, o, e)
            if mode == LOCAL:
                for i in range(1, m + 1):
                    if H[cur, i] > best:
                        best, bi, bj = H[cur, i], i, j
            elif mode == SEMIGLOBAL or (j == s1 - 1 and is_sink[v]):
                if H[cur, m] > best:
                    best, bi, bj = H[cur, m], m, j
            cur = 1 - cur
        if slot[v] >= 0:
            last = 1 - cur
            for i in range(m + 1):
                SH[slot[v], i] = H[last, i]
                SE[slot[v], i] = E[last, i]
    if mode == LOCAL and best <= 0:
        return NEG_INF, -1, -1
    return best, bi, bj


def align_batch(graph, reads, scoring, mode) -> BatchResult:
    """The variant contract: score and end cell of every read, sequentially."""
    n = reads.n_reads
    score = np.full(n, NEG_INF, np.int64)
    end_i = np.full(n, -1, np.int64)
    end_j = np.full(n, -1, np.int64)
    args = graph.kernel_arrays()
    a, b, o, e = scoring.as_tuple()
    for r in range(n):
        q = reads.codes(r)
        if len(q) == 0:
            continue
        score[r], end_i[r], end_j[r] = align_read(q, *args, graph.n_slots, int(mode), a, b, o, e)
    return BatchResult(reads.names, reads.lengths(), score, end_i, end_j)


__all__ = ["align_batch", "align_read", "GLOBAL", "LOCAL", "SEMIGLOBAL"]
