"""Pair MAPQ of mates with another copy inside their window (:mod:`s2g.seeded.copies`).

A mate placed by its pair (:class:`s2g.seeded.pairs.PairedAligner`: ``res.pair_moved``)
whose best window merged two or more strong chains gets its copy (the best alignment in
that window sharing no base with its own) as one more placement of the pair: the copy
paired with the mate's placement, one of the mate's other windows or the mate's own copy,
whichever pays most (a fragment inside a tandem repeat fits (copy 2, copy 2) as well as
(copy 1, copy 1), and a copy alone beside the mate's placement is an improper pair); the
mate counts each of its other windows beside that copy. MAPQs are the pair MAPQs with
those competitors added, by :func:`s2g.seeded.pairs.choose_pairs`' formula and cap.
MHC, 10,000 pairs: MAPQ >= 30 mates off their true walk 8 -> 0 (docs/pairs.md).
"""
from __future__ import annotations

import math

import numba
import numpy as np

from .._numba import NJIT
from ..scoring import NEG_INF
from .pairs import AXIS_SPAN, MAPQ_MAX, RESCUE_SD, SWEEP_NODES, UNPAIRED, _penalty, \
    end_columns, pair_fragment, strand_maps


@numba.njit(**NJIT)
def _competitor(tot, best, alt, unit, per_mm, far):
    """``tot`` (a MAPQ's competitor sum) with a placement scoring ``alt`` against ``best``."""
    d = (best - alt) / unit
    if d >= far:
        return tot
    return tot + 10.0 ** (-per_mm * d / 10.0)


@numba.njit(**NJIT)
def pair_copy_q(sel, cp, placed, pairs, gr, copies, model, far, tasks):
    """Pair MAPQs (unrounded) with the copies of mates ``sel`` inside their windows (``cp`` =
    their scores ``s2``, end rows, strands and forward end columns; NEG_INF: none) as more
    placements: for mate ``r``, its copy paired with the mate's placement, one of the
    mate's other windows or the mate's own copy, whichever pays most (a pair on a tandem
    repeat fits both copies together: (copy, copy) is the other placement); for its mate,
    each of the mate's other windows paired with ``r``'s copy (MHC: a mate's window on
    another haplotype's copy fits only beside its mate's copy). ``tasks`` = (first, n,
    score, strand, forward end column, end row) of every read's windows; ``placed`` = each
    read's (score, end row, strand, forward end column, chosen task, whether its MAPQ is
    its pair's); ``pairs`` = (each pair's chosen fragment, the pair MAPQ of every mate:
    :func:`s2g.seeded.pairs.choose_pairs`);
    ``model`` = (limit, mean, sd, cap, unit, per_mm); a placement ``far`` units or more
    below the pair's score adds nothing (as :func:`s2g.seeded.mapq.add_competitor`).
    Returns the reads whose MAPQ changed and their MAPQs."""
    limit, mean, sd, cap, unit, per_mm = model
    t_first, t_n, t_score, t_strand, t_fcol, t_rows = tasks
    s2, e2, st2, fc2 = cp
    score, end_i, strand, fcol, chosen, moved = placed
    frag, pq = pairs
    n = len(score)
    tot = np.zeros(n, np.float64)
    for r in range(n):                          # the sums pq was made from
        p = 10.0 ** (-pq[r] / 10.0)
        tot[r] = 0.0 if pq[r] >= 1e8 else np.inf if p >= 1.0 else p / (1.0 - p)
    touched = np.zeros(n, np.bool_)
    mine = np.full(n, -1, np.int64)             # each mate's copy: its index in sel
    for x in range(len(sel)):
        if s2[x] > NEG_INF:
            mine[sel[x]] = x
    for x in range(len(sel)):
        r = sel[x]
        m = r ^ 1
        if s2[x] <= NEG_INF or score[r] <= NEG_INF or score[m] <= NEG_INF:
            continue
        best = score[r] + score[m] - _penalty(frag[r >> 1], mean, sd, cap, unit)
        f = pair_fragment(st2[x], fc2[x], e2[x], strand[m], fcol[m], end_i[m], gr, copies,
                          limit, SWEEP_NODES, AXIS_SPAN, mean)
        alt = s2[x] + score[m] - _penalty(f, mean, sd, cap, unit)
        for t in range(t_first[m], t_first[m] + t_n[m]):
            if t_score[t] <= NEG_INF or t == chosen[m]:
                continue
            f = pair_fragment(st2[x], fc2[x], e2[x], t_strand[t], t_fcol[t], t_rows[t], gr,
                              copies, limit, SWEEP_NODES, AXIS_SPAN, mean)
            a = s2[x] + t_score[t] - _penalty(f, mean, sd, cap, unit)
            alt = max(alt, a)
            if moved[m]:                        # the mate's other window beside r's copy
                tot[m] = _competitor(tot[m], best, a, unit, per_mm, far)
                touched[m] = True
        y = mine[m]
        if y >= 0:
            f = pair_fragment(st2[x], fc2[x], e2[x], st2[y], fc2[y], e2[y], gr, copies, limit,
                              SWEEP_NODES, AXIS_SPAN, mean)
            alt = max(alt, s2[x] + s2[y] - _penalty(f, mean, sd, cap, unit))
        tot[r] = _competitor(tot[r], best, alt, unit, per_mm, far)
        touched[r] = True
    who = np.nonzero(touched)[0]
    out = np.empty(len(who), np.float64)
    for k in range(len(who)):
        r = who[k]
        t = tot[r]
        out[k] = pq[r] if t <= 0 else 0.0 if not np.isfinite(t) else \
            -10.0 * math.log10(t / (1.0 + t))
    return who, out


def apply(sa, res, sel, s2, e2, c2):
    """Lower the pair MAPQs (``res.mapq``) of the pair-placed mates ``sel`` and of their
    mates by ``sel``'s copies (scores ``s2``, end rows ``e2``, graph end columns ``c2``;
    NEG_INF: none): :func:`pair_copy_q`, then the pair's cap (``res.pair_cap``) and 60.
    ``sa``: the SeededAligner."""
    from .mapq import MAPQ_FAR, MAPQ_PER_MISMATCH
    g, m = sa.graph, res.pair_model
    a, b, _, _ = sa.scoring.as_tuple()
    unit = float(a + b)
    seg_node, _, copies = strand_maps(g)
    st2, fc2 = end_columns(np.maximum(c2, 0), g.node_start, g.node_seg, g.node_rev, seg_node)
    st2[c2 < 0] = -1
    st, fc = end_columns(np.asarray(res.end_j, np.int64), g.node_start, g.node_seg,
                         g.node_rev, seg_node)
    limit = int(math.ceil(m.mean + RESCUE_SD * m.sd))
    tk = res.tasks
    t_st, t_fc = end_columns(np.asarray(tk.col, np.int64), g.node_start, g.node_seg,
                             g.node_rev, seg_node)
    tasks = (np.asarray(tk.first, np.int64), np.asarray(tk.ncand, np.int64),
             np.asarray(tk.score, np.float64), t_st, t_fc, np.asarray(tk.end_i, np.int64))
    placed = (np.asarray(res.score, np.float64), np.asarray(res.end_i, np.int64), st, fc,
              np.asarray(res.best_task, np.int64), np.asarray(res.pair_moved, np.bool_))
    who, q = pair_copy_q(sel, (s2, e2, st2, fc2), placed, (res.pair_frag, res.pair_q),
                         (g.node_start, g.pred_ptr, g.pred_idx, g.node_seg), copies,
                         (limit, m.mean, m.sd, UNPAIRED * unit, unit, MAPQ_PER_MISMATCH),
                         float(MAPQ_FAR), tasks)
    res.pair_q[who] = q
    q = np.minimum(np.minimum(q, res.pair_cap[who]), MAPQ_MAX)
    res.mapq[who] = np.minimum(res.mapq[who], np.floor(q + 0.5).astype(np.int64))
