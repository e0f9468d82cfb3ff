"""Pair MAPQ of mates with another copy inside their window (:mod:`s2g.seeded.copies`).

A mate placed by its pair (:class:`s2g.seeded.pairs.PairedAligner`: ``res.pair_moved``)
whose best window merged two or more strong chains gets its copy (the best alignment in
that window sharing no base with its own) as one more placement of the pair: the copy
paired with the mate's placement, or with the mate's own copy, whichever pays more (a
fragment inside a tandem repeat fits (copy 2, copy 2) as well as (copy 1, copy 1), and a
copy alone beside the mate's placement is an improper pair). Its MAPQ is the pair MAPQ
with that competitor added, by :func:`s2g.seeded.pairs.choose_pairs`' formula and cap.
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
def pair_copy_q(sel, s2, e2, st2, fc2, score, end_i, strand, fcol, frag, pq, gr, copies,
                model, far):
    """Pair MAPQ (unrounded) of mates ``sel`` with one more competitor each: their copy
    inside the window (score ``s2``, end row ``e2``, strand and forward end column) paired
    with the mate's placement or with the mate's own copy, whichever pays more (a pair on
    a tandem repeat fits both copies together: (copy, copy) is the other placement);
    ``pq`` the pair MAPQ of every mate (:func:`s2g.seeded.pairs.choose_pairs`), ``frag``
    each pair's chosen fragment, ``model`` = (limit, mean, sd, cap, unit, per_mm); a
    competitor ``far`` units or more below the pair's score adds nothing (as
    :func:`s2g.seeded.mapq.add_competitor`)."""
    limit, mean, sd, cap, unit, per_mm = model
    n = len(score)
    mine = np.full(n, -1, np.int64)             # each mate's copy: its index in sel
    for x in range(len(sel)):
        if s2[x] > NEG_INF:
            mine[sel[x]] = x
    out = np.empty(len(sel), np.float64)
    for x in range(len(sel)):
        r = sel[x]
        m = r ^ 1
        out[x] = pq[r]
        if s2[x] <= NEG_INF:
            continue
        best = score[r] + score[m] - _penalty(frag[r >> 1], mean, sd, cap, unit)
        f = pair_fragment(st2[x], fc2[x], e2[x], strand[m], fcol[m], end_i[m], gr, copies,
                          limit, SWEEP_NODES, AXIS_SPAN, mean)
        alt = s2[x] + score[m] - _penalty(f, mean, sd, cap, unit)
        y = mine[m]
        if y >= 0:
            f = pair_fragment(st2[x], fc2[x], e2[x], st2[y], fc2[y], e2[y], gr, copies, limit,
                              SWEEP_NODES, AXIS_SPAN, mean)
            alt = max(alt, s2[x] + s2[y] - _penalty(f, mean, sd, cap, unit))
        d = (best - alt) / unit
        if d >= far:
            continue
        p = 10.0 ** (-pq[r] / 10.0)
        tot = 0.0 if pq[r] >= 1e8 else p / (1.0 - p)
        tot += 10.0 ** (-per_mm * d / 10.0)
        out[x] = -10.0 * math.log10(tot / (1.0 + tot))
    return out


def apply(sa, res, sel, s2, e2, c2):
    """Lower ``res.mapq`` of the pair-placed mates ``sel`` by their copies (scores ``s2``,
    end rows ``e2``, graph end columns ``c2``; NEG_INF: none): :func:`pair_copy_q`, then
    the pair's cap (``res.pair_cap``) and 60. ``sa``: the SeededAligner."""
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
    q = pair_copy_q(sel, s2, e2, st2, fc2, np.asarray(res.score, np.float64),
                    np.asarray(res.end_i, np.int64), st, fc, res.pair_frag, res.pair_q,
                    (g.node_start, g.pred_ptr, g.pred_idx, g.node_seg), copies,
                    (limit, m.mean, m.sd, UNPAIRED * unit, unit, MAPQ_PER_MISMATCH),
                    float(MAPQ_FAR))
    res.pair_q[sel] = q
    q = np.minimum(np.minimum(q, res.pair_cap[sel]), MAPQ_MAX)
    res.mapq[sel] = np.minimum(res.mapq[sel], np.floor(q + 0.5).astype(np.int64))
