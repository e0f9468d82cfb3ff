"""Slow reference for cyclic graphs: the affine DP run to its fixed point on the graph
itself, with no unrolling and no topological order (tests/test_cyclic.py).

Independent of s2g: the base-level graph is built here from ``naive.parse_gfa_text``'s
segments and links (one node per base of both strands, edges inside segments and from
a segment's last base to the next one's first, each link and its mirror), and the
recurrence of ARCHITECTURE.md is solved row by row:

* row i's diagonal and insertion (F) terms read row i - 1 only, so they are computed
  directly; a base with no predecessor reads the *virtual* column (H = 0, or
  -(o + e*i) in semiglobal mode; E = -inf), as in tests/naive.py;
* the deletion term E[i][v] = max over predecessors p of (H[i][p] - o - e, E[i][p] - e)
  reads the same row and runs round cycles: it is relaxed Bellman-Ford style (a FIFO
  work list of cells whose H or E rose) from E = -inf until nothing changes. Every
  cycle costs at least e > 0 per lap, so this ends, at the least fixed point: the best
  over every finite walk, a segment visited any number of times.

The same Python function runs as written (tiny hypothesis graphs) and compiled by Numba
(``fixed_point_fast``; the real graphs LPA and MT, 35-412 thousand bases).
"""
from __future__ import annotations

import numba
import numpy as np

import naive

NEG = -(1 << 40)
CODE = {c: k for k, c in enumerate("ACGTN")}


def base_arrays(segs, links, strands="both"):
    """(base codes, pred CSR, succ CSR) of the base-level graph: the oriented segments'
    bases one after the other (``+`` then ``-`` of each segment), an edge from each base
    to the next inside a segment, and from a segment's last base to the first of every
    segment a link (or its mirror) leads to."""
    chunks, first, last, pos = [], {}, {}, 0
    for name in segs:
        for st in ("+", "-") if strands == "both" else ("+",):
            s = naive.oriented_seq(segs, name, st)
            first[name, st], last[name, st] = pos, pos + len(s) - 1
            pos += len(s)
            chunks.append(s)
    n = pos
    table = np.full(256, 4, np.int64)
    for c, k in CODE.items():
        table[ord(c)] = k
    base = table[np.frombuffer("".join(chunks).encode(), np.uint8)]
    starts = np.zeros(n + 1, bool)
    starts[[first[k] for k in first]] = True
    inner = np.flatnonzero(~starts[1:n])          # k -> k + 1 inside one segment
    lk = sorted((last[u], first[v]) for u, v in naive.oriented_edges(links, strands))
    src = np.concatenate([inner, np.array([u for u, _ in lk], np.int64)]).astype(np.int64)
    dst = np.concatenate([inner + 1, np.array([v for _, v in lk], np.int64)]).astype(np.int64)

    def csr(x, y):
        order = np.lexsort((y, x))
        ptr = np.zeros(n + 1, np.int64)
        np.cumsum(np.bincount(x, minlength=n), out=ptr[1:])
        return ptr, y[order]

    pp, pi = csr(dst, src)
    sp, si = csr(src, dst)
    return base, pp, pi, sp, si


def fixed_point(q, base, pred_ptr, pred_idx, succ_ptr, succ_idx, local, a, b, o, e):
    """Best score of read codes ``q`` (local or semiglobal); NEG if none. Loops only
    over arrays, so Numba can compile it unchanged."""
    n = len(base)
    m = len(q)
    Hp = np.zeros(n, np.int64)           # row 0: H = 0 everywhere (local, semiglobal)
    Fp = np.full(n, NEG, np.int64)
    H = np.zeros(n, np.int64)
    E = np.zeros(n, np.int64)
    F = np.zeros(n, np.int64)
    queue = np.zeros(n, np.int64)
    inq = np.zeros(n, np.bool_)
    best = NEG
    for i in range(1, m + 1):
        v_prev = 0 if (local or i == 1) else -(o + e * (i - 1))   # virtual column, row i-1
        v_cur = 0 if local else -(o + e * i)
        for v in range(n):
            if pred_ptr[v] == pred_ptr[v + 1]:
                diag = v_prev
                E[v] = v_cur - o - e
            else:
                diag = NEG
                for k in range(pred_ptr[v], pred_ptr[v + 1]):
                    diag = max(diag, Hp[pred_idx[k]])
                E[v] = NEG
            s = a if (q[i - 1] == base[v] and base[v] < 4) else -b
            F[v] = max(Hp[v] - o - e, Fp[v] - e)
            h = max(diag + s, F[v], E[v])
            H[v] = max(h, 0) if local else h
        # E within the row: relax to the fixed point (Bellman-Ford with a FIFO work list)
        head = 0
        size = n
        for v in range(n):
            queue[v] = v
            inq[v] = True
        while size > 0:
            p = queue[head]
            head = (head + 1) % n
            size -= 1
            inq[p] = False
            cand = max(H[p] - o - e, E[p] - e)
            for k in range(succ_ptr[p], succ_ptr[p + 1]):
                v = succ_idx[k]
                if cand > E[v]:
                    E[v] = cand
                    if cand > H[v]:
                        H[v] = cand
                    if not inq[v]:
                        inq[v] = True
                        queue[(head + size) % n] = v
                        size += 1
        if local or i == m:
            for v in range(n):
                best = max(best, H[v])
        for v in range(n):
            Hp[v] = H[v]
            Fp[v] = F[v]
    return best


fixed_point_fast = numba.njit(cache=True)(fixed_point)


def align_cyclic(arrays, read: str, mode="local", a=2, b=4, o=4, e=2, fast=False):
    """Optimal score of ``read`` on the base graph ``arrays`` (:func:`base_arrays`);
    None for no local alignment."""
    base, pp, pi, sp, si = arrays
    q = np.array([CODE.get(c, 4) for c in read.upper()], np.int64)
    fn = fixed_point_fast if fast else fixed_point
    best = fn(q, base, pp, pi, sp, si, mode == "local", a, b, o, e)
    if mode == "local" and best <= 0:
        return None
    return int(best)
