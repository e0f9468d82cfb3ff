"""The mates' path candidates chosen together (paired SAM/BAM; see :mod:`s2g.sam`).

Each mate's graph alignment can vote for several places on the reference path (a repeat
the path holds twice and the graph once); :func:`surject_batch` realigns every candidate.
A read alone takes its best candidate, and its MAPQ is capped by the best one elsewhere
on the path. For a pair that throws away what the other mate knows: a mate inside the
repeat ties between the copies while its mate, spanning into unique sequence, says which
copy the fragment came from. So, as :mod:`s2g.seeded.pairs` does on the graph, every
combination (candidate of mate 1) x (candidate of mate 2) scores
``S = s1 + s2 - penalty(fragment on the path)`` (the fragment model's log-likelihood in
score units, capped at the unpaired penalty ``U``; not forward-reverse: ``U``), the best
combination wins (ties: the mates' own candidate order, so an improper best is the
single-end choice), and a mate's margin is ``S`` less the best combination placing that
mate elsewhere on the path (at least half its aligned part away). That margin can raise a
mate's MAPQ cap above its own single-read cap only as far as its partner's confidence
(``writer._path_mapq``): the partner's candidates come from its one graph walk, and where
the partner itself was placed by a coin flip in the graph (MAPQ 3), its other place, which
would pair the mate with the other copy, is no candidate here. A read whose candidates
were cut at :data:`~s2g.sam.project.CANDIDATES` (a tandem of many copies) may lack the
true one: its pair is not chosen together.
"""
from __future__ import annotations

import numba
import numpy as np

from .._numba import NJIT
from ..seeded.pairs import UNPAIRED, _penalty

_LOW = np.iinfo(np.int64).min


@numba.njit(inline="always", **NJIT)
def _elsewhere(start, lo, hi, x, c, half):
    """Candidate ``x`` places the read's bases of candidate ``c`` elsewhere on the path."""
    ov = min(hi[x], hi[c]) - max(lo[x], lo[c])
    return abs(start[x] - start[c]) >= half and 2 * ov > hi[c] - lo[c]


@numba.njit(**NJIT)
def _pair_pick(score, fwd, start, end, lo, hi, half, cut, model, pick, margin):
    """Per pair ``p`` (reads ``2p``, ``2p + 1``), ``score[r, c]`` the realigned score of
    read ``r``'s candidate ``c`` (int64 min: none), ``fwd`` whether it is on the forward
    strand, ``start``/``end`` its span on the path, ``lo``/``hi`` the read bases it
    aligns, ``half[r]`` the least distance that counts as elsewhere (for a candidate
    aligning more than half the bases the chosen one does: not another part of the
    read), ``cut[r]`` whether its candidates were cut at the most kept (the true copy may
    be among those left out: the pair is not chosen together); ``model`` = (mean, sd,
    cap, unit). Writes the chosen candidates to ``pick`` and each mate's margin to
    ``margin`` (int64 max: nothing elsewhere) for pairs whose mates both have a
    candidate; leaves the others as they are."""
    mean, sd, cap, unit = model
    n, K = score.shape
    for p in range(n // 2):
        a, b = 2 * p, 2 * p + 1
        if cut[a] or cut[b]:
            continue
        best = -np.inf
        bx, by = -1, -1
        tot = np.full((K, K), -np.inf)
        for x in range(K):
            if score[a, x] == _LOW:
                continue
            for y in range(K):
                if score[b, y] == _LOW:
                    continue
                frag = -1                          # (same strand: not forward-reverse)
                if fwd[a, x] != fwd[b, y]:
                    frag = end[b, y] - start[a, x] if fwd[a, x] else end[a, x] - start[b, y]
                pen = _penalty(frag, mean, sd, cap, unit)
                s = float(score[a, x] + score[b, y]) - pen
                tot[x, y] = s
                if s > best:
                    best, bx, by = s, x, y
        if bx < 0:
            continue
        pick[a], pick[b] = bx, by
        ra, rb = -np.inf, -np.inf
        for x in range(K):
            for y in range(K):
                s = tot[x, y]
                if s == -np.inf:
                    continue
                if s > ra and _elsewhere(start[a], lo[a], hi[a], x, bx, half[a]):
                    ra = s
                if s > rb and _elsewhere(start[b], lo[b], hi[b], y, by, half[b]):
                    rb = s
        margin[a] = np.iinfo(np.int64).max if ra == -np.inf else np.int64(np.floor(best - ra))
        margin[b] = np.iinfo(np.int64).max if rb == -np.inf else np.int64(np.floor(best - rb))


def pair_pick(score, fwd, start, end, lo, hi, half, cut, model, a, b, pick, margin):
    """The joint choice of :func:`_pair_pick` for a batch of ``len(score) // 2`` pairs
    (``score``, ``fwd``, ``start``, ``end``, ``lo``, ``hi``: (reads, candidates) arrays;
    ``half``, ``cut``:
    per read; ``model``: a
    :class:`~s2g.seeded.pairs.FragmentModel`; ``a``, ``b``: match and mismatch scores),
    updating ``pick`` (candidate index per read) and ``margin`` in place."""
    unit = float(a + b)
    if len(score) >= 2:
        _pair_pick(score, fwd, start, end, lo, hi, half, cut,
                   (float(model.mean), float(model.sd), UNPAIRED * unit, unit), pick, margin)
