"""Paired-end reads on the seeded path: a fragment-length model, pairs scored jointly over
both mates' windows, mate rescue by exact DP where the fragment puts the mate, pair-aware
MAPQ.

A batch holds its pairs interleaved (mate 1 of pair ``k`` at read ``2k``, mate 2 at
``2k + 1``: :func:`s2g.reads.iter_pair_batches`). Each mate is first aligned as a single
read (:meth:`SeededAligner.align_batch`: every window's exact score, ``res.tasks``); then:

1. **Positions and fragments.** A window's end column is put on the forward copy of its
   segment (a reverse-strand mate's end base is the leftmost of its span there). Two
   placements form an FR pair when one mate is on each strand and the reverse one's span
   lies after the forward one's along some walk; the fragment length is the mates' rows
   plus the fewest bases a walk takes between them (:func:`walk_steps`: a sweep over the
   nodes between them in topological order, bounded by the model's upper end), so
   alternative alleles between the mates do not count, as with vg giraffe's minimum
   distance. Overlapping mates count the overlap back.
2. **Fragment model** (:class:`FragmentModel`): given (``--fragment-mean/--fragment-sd``)
   or learned from the first batch with enough confidently placed pairs (both mates'
   single-end MAPQ >= 30, FR orientation, fragment < 10 kbp): median and 1.4826 x MAD.
3. **Rescue.** A pair with no properly oriented combination of windows inside
   ``mean + 4 sd``: each mate placed with single-end MAPQ >= ``RESCUE_MAPQ`` gets its
   mate aligned by exact DP over the nodes a walk reaches from it within ``mean + 4 sd``
   bases (and a read length back, for overlapping mates), their copies on the other
   strand (a window like any other: :mod:`s2g.window`), each node cut to the columns an
   alignment ending within that reach can use (:func:`rescue_pieces`: a node of 150 kbp
   is not searched whole, where a better copy of the mate far out of reach would hide
   the one the fragment puts it at); a rescue counts when it scores at least
   ``RESCUE_MIN`` x the mate's perfect score. A proper pair is rescued too when one
   mate scores below ``RESCUE_POOR`` x its perfect score (its true place may have had no
   seeds: a window elsewhere won alone), from the other mate. A mate without a usable
   chain whose own mate such a rescue starts from is not given full-graph DP first
   (``--unseeded auto``): it waits for the rescue, and only if that leaves it unplaced
   gets full-graph DP after pairing (:meth:`PairedAligner._defer`).
4. **Joint choice.** Over every combination (window or rescue of mate 1) x (of mate 2):
   ``S = s1 + s2 - penalty(fragment)``, the penalty being the fragment's log-likelihood
   under a normal model in score units (a mismatch, ``a + b``, is worth 20 phred as in
   :mod:`s2g.seeded.mapq`), capped at ``U`` (= ``UNPAIRED`` mismatches: what leaving the
   pair unpaired costs; improper orientation costs ``U``). Ties: the mates' own window
   order. A pair is *proper* when its choice pays less than ``U``.
5. **MAPQ** of a mate in a proper pair: from the best score of each other placement of
   that mate (its other windows, each with its best partner), as :func:`pick` does for a
   single read, at most its single-end MAPQ + 40 (a placement the pair moved: at most
   40), as bwa-mem caps it. Improper pairs keep single-end MAPQ. After the traceback,
   another copy inside a mate's window (or a rescued mate's rescue window) counts as
   more placements of the pair (:mod:`s2g.seeded.pair_copies`).

Both devices run the same steps (rescue windows on the CPU window kernel), so GPU and
CPU give the same GAF.
"""
from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass

import numba
import numpy as np

from .._numba import NJIT
from ..errors import S2GError
from ..result import BatchResult
from ..scoring import NEG_INF
from ..window import WindowGraph

#: unpaired penalty, in mismatches (bwa-mem's 17 with match 1 / mismatch 4 is ~3.4)
UNPAIRED = 3.5
#: rescue from a mate placed with at least this single-end MAPQ
RESCUE_MAPQ = 10
#: a rescued mate counts when it scores at least this fraction of its perfect score
RESCUE_MIN = 0.4
#: a mate aligned below this fraction of its perfect score is rescued beside its mate
#: even in a proper pair (1% errors score ~0.97; a mate with 10% substitutions ~0.7)
RESCUE_POOR = 0.8
#: rescue region: the fragment's mean +- this many standard deviations
RESCUE_SD = 4.0
#: learning the fragment model: pairs with both mates at this single-end MAPQ or more ...
LEARN_MAPQ = 30
#: ... and at most this fragment length; at least LEARN_MIN such pairs in a batch
LEARN_MAX = 10_000
LEARN_MIN = 50
#: proper-pair MAPQ: at most the single-end MAPQ + this (bwa-mem's +40)
PAIR_BOOST = 40
MAPQ_MAX = 60


@dataclass(frozen=True)
class FragmentModel:
    """Fragment length (walk bases from the forward mate's first base to the reverse
    mate's): mean, standard deviation, and how
    it was obtained (``"given"`` or ``"learned from N pairs"``)."""
    mean: float
    sd: float
    source: str = "given"

    def __post_init__(self):
        if not (self.mean > 0 and self.sd > 0):
            raise S2GError(f"the fragment length model needs mean > 0 and sd > 0, got "
                           f"mean {self.mean}, sd {self.sd}")

    def describe(self) -> str:
        return f"fragment length {self.mean:.0f} +- {self.sd:.0f} ({self.source})"


def learn_model(frag):
    """:class:`FragmentModel` of observed fragment lengths (robust: median, 1.4826 MAD),
    or None with fewer than LEARN_MIN."""
    frag = np.asarray(frag, np.float64)
    if len(frag) < LEARN_MIN:
        return None
    med = float(np.median(frag))
    sd = max(1.4826 * float(np.median(np.abs(frag - med))), 1.0, 0.02 * med)
    return FragmentModel(med, sd, f"learned from {len(frag):,} pairs")


# ------------------------------------------------------------------ positions (Numba)

#: walk searches: at most this many nodes in topological order from the start, and
#: positions whose columns lie further apart than AXIS_SPAN x the limit are not searched
SWEEP_NODES = 20_000
AXIS_SPAN = 12


def strand_maps(graph):
    """(seg_node, mirror, copies): per segment its first node on each strand (-1: none),
    shape (n_seg, 2); per node the first node of the same segment on the other strand
    (-1: none); ``copies`` = (ptr, nodes): the nodes of segment ``s`` on strand ``r`` are
    ``nodes[ptr[2 s + r]:ptr[2 s + r + 1]]`` (one each, or a cyclic graph's unrolled
    copies). Cached on the graph."""
    hit = graph.__dict__.get("_pair_maps")
    if hit is None:
        n_seg = len(graph.seg_len)
        rev = graph.node_rev.astype(np.int64)
        seg_node = np.full((n_seg, 2), -1, np.int64)
        v = np.arange(graph.n_nodes)[::-1]                    # the first copy wins
        seg_node[graph.node_seg[v], rev[v]] = v
        mirror = seg_node[graph.node_seg, 1 - rev]
        key = 2 * graph.node_seg.astype(np.int64) + rev
        nodes = np.argsort(key, kind="stable").astype(np.int64)
        ptr = np.zeros(2 * n_seg + 1, np.int64)
        np.cumsum(np.bincount(key, minlength=2 * n_seg), out=ptr[1:])
        hit = (seg_node, mirror, (ptr, nodes))
        graph.__dict__["_pair_maps"] = hit
    return hit


@numba.njit(**NJIT)
def end_columns(col, node_start, node_seg, node_rev, seg_node):
    """Per alignment ending at graph column ``col``: its strand (0/1; -1 where ``col < 0``)
    and the column of its end base on the forward copy of its segment (a reverse-strand
    alignment's end base is the leftmost of its span on the forward strand)."""
    n = len(col)
    strand = np.full(n, -1, np.int64)
    fcol = np.full(n, -1, np.int64)
    for t in range(n):
        c = col[t]
        if c < 0:
            continue
        v = np.searchsorted(node_start, c, side="right") - 1
        k = c - node_start[v]
        if node_rev[v] == 0:
            strand[t] = 0
            fcol[t] = c
        else:
            f = seg_node[node_seg[v], 0]
            if f < 0:
                continue
            strand[t] = 1
            fcol[t] = node_start[f] + (node_start[v + 1] - node_start[v] - 1 - k)
    return strand, fcol


@numba.njit(**NJIT)
def sweep(c0, n, node_start, pred_ptr, pred_idx, limit, axis_stop):
    """Fewest steps from column ``c0`` to the first base of each of the ``n`` nodes from
    its own on, in topological order (``limit + 1``: not reached within ``limit``); the
    sweep stops at the first node starting more than ``axis_stop`` columns after ``c0``.
    Returns the steps and how many nodes were swept."""
    v0 = np.searchsorted(node_start, c0, side="right") - 1
    big = limit + 1
    s = np.full(n, big, np.int64)
    s[0] = -(c0 - node_start[v0])
    for x in range(1, n):
        v = v0 + x
        if node_start[v] - c0 > axis_stop:
            return s, x
        best = big
        for k in range(pred_ptr[v], pred_ptr[v + 1]):
            u = pred_idx[k]
            if u < v0 or u >= v:
                continue
            su = s[u - v0]
            if su >= big:
                continue
            t = su + (node_start[u + 1] - node_start[u])      # the step onto v
            if t < best:
                best = t
        s[x] = best if best <= limit else big
    return s, n


@numba.njit(**NJIT)
def walk_steps(c0, c1, node_start, pred_ptr, pred_idx, limit, max_nodes):
    """Fewest steps from column ``c0`` to column ``c1`` along walks of the graph (0 when
    equal; one step per base passed), or -1 when ``c1`` is not reached within ``limit``
    steps (or lies before ``c0`` in topological order, or more than ``max_nodes`` nodes
    on): :func:`sweep` over the nodes between them."""
    if c1 < c0:
        return -1
    v0 = np.searchsorted(node_start, c0, side="right") - 1
    v1 = np.searchsorted(node_start, c1, side="right") - 1
    if v1 == v0:
        return c1 - c0 if c1 - c0 <= limit else -1
    n = v1 - v0 + 1
    if n > max_nodes:
        return -1
    s, _ = sweep(c0, n, node_start, pred_ptr, pred_idx, limit, c1 - c0)
    r = s[n - 1]
    if r > limit:
        return -1
    r += c1 - node_start[v1]
    return r if r <= limit else -1


@numba.njit(**NJIT)
def _fragment(fF, rF, fR, rR, node_start, pred_ptr, pred_idx, limit, max_nodes, axis_span):
    """The fragment of a forward mate whose rows end at column ``fF`` and a reverse mate
    whose leftmost base is at forward column ``fR`` (-1: no walk joins them in reach):
    rows_F + rows_R + steps(fF -> fR) - 1, or with overlapping mates rows_F + rows_R -
    steps(fR -> fF) - 1."""
    if fR >= fF:
        if fR - fF > axis_span * limit:
            return -1
        st = walk_steps(fF, fR, node_start, pred_ptr, pred_idx, limit, max_nodes)
        if st < 0:
            return -1
        frag = rF + rR + st - 1
    else:
        lim = min(rF, rR)
        if fF - fR > axis_span * lim:
            return -1
        st = walk_steps(fR, fF, node_start, pred_ptr, pred_idx, lim, max_nodes)
        if st < 0:
            return -1
        frag = rF + rR - st - 1
    if frag < 1 or frag > limit:
        return -1
    return frag


@numba.njit(**NJIT)
def pair_fragment(s1, f1, r1, s2, f2, r2, gr, copies, limit, max_nodes, axis_span,
                  target=0.0):
    """Fragment length of two placements (strand, forward end column, aligned rows), or
    -1 unless FR: one mate on each strand, the forward one's span before the reverse
    one's end along some walk, within ``limit`` bases (:func:`_fragment`). A reverse
    mate's forward column names the first copy of its segment; on a cyclic graph's
    unrolling every copy is tried (``copies``: :func:`strand_maps`'), and the fragment
    closest to ``target`` (the model's mean; 0: the shortest) wins: the turn of the
    cycle the pair most likely spans. ``gr``: (node_start, pred_ptr, pred_idx,
    node_seg)."""
    node_start, pred_ptr, pred_idx, node_seg = gr
    if s1 < 0 or s2 < 0 or s1 == s2:
        return -1
    if s1 == 0:
        fF, rF, fR, rR = f1, r1, f2, r2
    else:
        fF, rF, fR, rR = f2, r2, f1, r1
    ptr, nodes = copies
    v = np.searchsorted(node_start, fR, side="right") - 1
    off = fR - node_start[v]
    sg = node_seg[v]
    best = -1
    for t in range(ptr[2 * sg], ptr[2 * sg + 1]):
        u = nodes[t]
        f = _fragment(fF, rF, node_start[u] + off, rR, node_start, pred_ptr, pred_idx, limit,
                      max_nodes, axis_span)
        if f > 0 and (best < 0 or abs(f - target) < abs(best - target)):
            best = f
    return best


@numba.njit(inline="always", **NJIT)
def _penalty(frag, mean, sd, cap, unit):
    """Score penalty of a fragment length (-1: not FR or out of reach: ``cap``)."""
    if frag < 1:
        return cap
    z = (frag - mean) / sd
    return min(unit * z * z / (2.0 * math.log(10.0)), cap)


@numba.njit(**NJIT)
def _frags(k, c_first, c_n, c_strand, c_col, c_rows, gr, limit, target):
    """Fragment lengths of every combination of pair ``k``'s candidates (-1: improper);
    ``gr``: (node_start, pred_ptr, pred_idx, node_seg, copies)."""
    g4 = (gr[0], gr[1], gr[2], gr[3])
    a, b = 2 * k, 2 * k + 1
    out = np.full((c_n[a], c_n[b]), -1, np.int64)
    for x in range(c_n[a]):
        i = c_first[a] + x
        for y in range(c_n[b]):
            j = c_first[b] + y
            out[x, y] = pair_fragment(c_strand[i], c_col[i], c_rows[i], c_strand[j], c_col[j],
                                      c_rows[j], g4, gr[4], limit, SWEEP_NODES, AXIS_SPAN,
                                      target)
    return out


@numba.njit(**NJIT)
def any_proper(n_pairs, c_first, c_n, c_strand, c_col, c_rows, gr, limit, mean, sd, cap,
               unit):
    """Per pair: whether some combination of the mates' candidates pays less than ``cap``."""
    out = np.zeros(n_pairs, np.bool_)
    for k in range(n_pairs):
        if c_n[2 * k] == 0 or c_n[2 * k + 1] == 0:
            continue
        fr = _frags(k, c_first, c_n, c_strand, c_col, c_rows, gr, limit, mean)
        for x in range(fr.shape[0]):
            for y in range(fr.shape[1]):
                if _penalty(fr[x, y], mean, sd, cap, unit) < cap:
                    out[k] = True
    return out


@numba.njit(**NJIT)
def choose_pairs(n_pairs, cand, gr, limit, mean, sd, cap, unit, per_mm):
    """Per mate: the chosen candidate (or -1: none), and per mate its pair MAPQ (from its
    other placements' best pair scores, :func:`s2g.seeded.mapq.pick`'s formula); per pair:
    proper or not and the chosen fragment length (0: not proper). ``cand``: (first, n,
    score, strand, forward end column, rows) of every read's candidates."""
    c_first, c_n, c_score, c_strand, c_col, c_rows = cand
    n = 2 * n_pairs
    chosen = np.full(n, -1, np.int64)
    q = np.zeros(n, np.float64)
    proper = np.zeros(n_pairs, np.bool_)
    frag = np.zeros(n_pairs, np.int64)
    for k in range(n_pairs):
        a, b = 2 * k, 2 * k + 1
        na, nb = c_n[a], c_n[b]
        if na == 0 or nb == 0:
            continue
        fr = _frags(k, c_first, c_n, c_strand, c_col, c_rows, gr, limit, mean)
        S = np.empty((na, nb), np.float64)
        best = -1e300
        bx = -1
        by = -1
        for x in range(na):
            for y in range(nb):
                S[x, y] = (c_score[c_first[a] + x] + c_score[c_first[b] + y]
                           - _penalty(fr[x, y], mean, sd, cap, unit))
                if S[x, y] > best:
                    best, bx, by = S[x, y], x, y
        chosen[a], chosen[b] = c_first[a] + bx, c_first[b] + by
        if _penalty(fr[bx, by], mean, sd, cap, unit) < cap:
            proper[k] = True
            frag[k] = fr[bx, by]
        tot = 0.0                      # mate 1: its other placements, each at its best
        for x in range(na):
            if x == bx:
                continue
            sx = -1e300
            for y in range(nb):
                sx = max(sx, S[x, y])
            tot += 10.0 ** (-per_mm * ((best - sx) / unit) / 10.0)
        q[a] = 1e9 if tot <= 0 else -10.0 * math.log10(tot / (1.0 + tot))
        tot = 0.0
        for y in range(nb):
            if y == by:
                continue
            sy = -1e300
            for x in range(na):
                sy = max(sy, S[x, y])
            tot += 10.0 ** (-per_mm * ((best - sy) / unit) / 10.0)
        q[b] = 1e9 if tot <= 0 else -10.0 * math.log10(tot / (1.0 + tot))
    return chosen, q, proper, frag


@numba.njit(**NJIT)
def rescue_nodes(anchor_col, gr, copies, limit, max_nodes, back):
    """The nodes of one rescue window: from the anchor's end column (on its own strand),
    every node a walk reaches within ``limit`` steps (:func:`sweep`: the fragment's far
    end), plus the nodes up to ``back`` columns before it (overlapping mates), each swapped
    for its copies on the other strand (the mate's; every unrolled copy of a cyclic
    graph's segment), ascending and distinct; empty where none. ``gr``: (node_start,
    pred_ptr, pred_idx, node_seg, node_rev)."""
    node_start, pred_ptr, pred_idx, node_seg, node_rev = gr
    ptr, nodes = copies
    c0 = anchor_col
    v0 = np.searchsorted(node_start, c0, side="right") - 1
    vb = np.searchsorted(node_start, max(0, c0 - back), side="right") - 1
    n_max = min(len(node_start) - 1 - v0, max_nodes)
    s, n = sweep(c0, n_max, node_start, pred_ptr, pred_idx, limit, AXIS_SPAN * limit)
    out = []
    for v in range(vb, v0 + n):
        if v <= v0 or s[v - v0] <= limit:
            key = 2 * node_seg[v] + 1 - node_rev[v]
            for t in range(ptr[key], ptr[key + 1]):
                out.append(nodes[t])
    res = np.empty(len(out), np.int64)
    for x in range(len(out)):
        res[x] = out[x]
    res = np.unique(res)
    return res


@numba.njit(**NJIT)
def rescue_pieces(anchor_col, gr, copies, limit, max_nodes, back, span):
    """One rescue window as node pieces (node, in-node ``lo``, ``hi``, inclusive; by node
    then ``lo``, disjoint; empty where none): :func:`rescue_nodes`' nodes, each cut to
    the columns an alignment of the mate can use whose end the fragment puts within
    reach of the anchor. On the anchor's strand (``x`` a column, ``D_f(x)``/``D_b(x)``
    the fewest steps from the anchor's end to ``x``/from ``x`` to it) the mate's end lies
    at some ``x`` with ``D_f(x) <= limit`` or ``D_b(x) <= back`` (:func:`_fragment`, its
    two cases, on the other strand's mirror), and its alignment runs on from there for
    at most ``span`` columns (``span``: rows plus the deletions a rescue that counts can
    afford). So the anchor's node keeps ``[off - back, off + limit + span]`` (``off``:
    the anchor's in-node offset); a node after it, entered at ``D_f = s``, its first
    ``limit + span - s + 1`` columns; a node before it its last ``back - off`` (no
    walk from an earlier column reaches the anchor within ``back``) and, unless it is
    the first node of the window (nothing before it to come from), its first ``span``.
    Every alignment of the whole nodes that ends within reach lies inside these pieces,
    and a window's DP never scores a cell above its whole nodes' (:mod:`s2g.window`), so
    the pieces' best is the whole nodes' best wherever that is within reach (same end
    cell: the pieces keep the columns' order). The pieces then move to the other strand
    (in-node offset ``k`` -> ``len - 1 - k``) on every copy of the segment, as
    :func:`rescue_nodes`. Exact on graphs whose strands mirror each other with one node
    per segment and strand (:meth:`PairedAligner._rescue` takes whole nodes elsewhere).
    ``gr``: (node_start, pred_ptr, pred_idx, node_seg, node_rev)."""
    node_start, pred_ptr, pred_idx, node_seg, node_rev = gr
    ptr, nodes = copies
    c0 = anchor_col
    v0 = np.searchsorted(node_start, c0, side="right") - 1
    vb = np.searchsorted(node_start, max(0, c0 - back), side="right") - 1
    off = c0 - node_start[v0]
    n_max = min(len(node_start) - 1 - v0, max_nodes)
    s, n = sweep(c0, n_max, node_start, pred_ptr, pred_idx, limit, AXIS_SPAN * limit)
    iv_v = []                            # intervals on the anchor's strand
    iv_lo = []
    iv_hi = []
    for v in range(vb, v0 + n):
        ln = node_start[v + 1] - node_start[v]
        if v < v0:
            tail = max(0, ln - (back - off))
            if v > vb and tail <= span:
                iv_v.append(v)
                iv_lo.append(0)
                iv_hi.append(ln - 1)
                continue
            if v > vb:
                iv_v.append(v)
                iv_lo.append(0)
                iv_hi.append(min(span, ln) - 1)
            iv_v.append(v)
            iv_lo.append(tail)
            iv_hi.append(ln - 1)
        elif v == v0:
            iv_v.append(v)
            iv_lo.append(max(0, off - back))
            iv_hi.append(min(ln - 1, off + limit + span))
        elif s[v - v0] <= limit:
            iv_v.append(v)
            iv_lo.append(0)
            iv_hi.append(min(ln - 1, limit + span - s[v - v0]))
    m = 0
    for x in range(len(iv_v)):
        key = 2 * node_seg[iv_v[x]] + 1 - node_rev[iv_v[x]]
        m += ptr[key + 1] - ptr[key]
    pn = np.empty(m, np.int64)
    plo = np.empty(m, np.int64)
    phi = np.empty(m, np.int64)
    m = 0
    for x in range(len(iv_v)):
        v = iv_v[x]
        ln = node_start[v + 1] - node_start[v]
        key = 2 * node_seg[v] + 1 - node_rev[v]
        for t in range(ptr[key], ptr[key + 1]):
            pn[m] = nodes[t]
            plo[m] = ln - 1 - iv_hi[x]
            phi[m] = ln - 1 - iv_lo[x]
            m += 1
    order = np.argsort(pn * (np.int64(1) << 32) + plo)   # by node, then lo; then merged
    out_n = np.empty(m, np.int64)
    out_lo = np.empty(m, np.int64)
    out_hi = np.empty(m, np.int64)
    k = -1
    for x in order:
        if k >= 0 and out_n[k] == pn[x] and plo[x] <= out_hi[k] + 1:
            out_hi[k] = max(out_hi[k], phi[x])
        else:
            k += 1
            out_n[k], out_lo[k], out_hi[k] = pn[x], plo[x], phi[x]
    return out_n[:k + 1], out_lo[:k + 1], out_hi[:k + 1]


@numba.njit(**NJIT)
def _learn_frags(n_pairs, strand, fcol, rows, gr, limit):
    """Fragment length of each pair whose mates both have a strand (-1 elsewhere)."""
    g4 = (gr[0], gr[1], gr[2], gr[3])
    out = np.full(n_pairs, -1, np.int64)
    for k in range(n_pairs):
        a, b = 2 * k, 2 * k + 1
        out[k] = pair_fragment(strand[a], fcol[a], rows[a], strand[b], fcol[b], rows[b],
                               g4, gr[4], limit, SWEEP_NODES, AXIS_SPAN)
    return out


class PairedAligner:
    """Paired-end alignment on top of a :class:`~s2g.seeded.SeededAligner` (``seeded``):
    the same interface (``align_batch``, ``traceback``, ``seed_batches``, ``totals``,
    ``graph``), batches holding their pairs interleaved. ``model``: a
    :class:`FragmentModel`, or None to learn one from the first batch that allows it
    (until then pairs are left unpaired). ``rescue``: mate rescue on or off."""

    def __init__(self, seeded, model=None, rescue=True):
        if seeded.graph.strands != "both":
            raise S2GError("paired-end reads need both strands of the graph (--strands both): "
                           "the mates of a pair lie on opposite strands")
        self.seeded = seeded
        seeded.drop_windows = False           # every window is a pair candidate
        self.model = model
        self.rescue = bool(rescue)
        self.graph = seeded.graph
        self.totals = seeded.totals
        for k in ("pairs", "pairs proper", "rescue attempts", "rescued mates",
                  "unseeded rescued", "seconds pairing"):
            self.totals.setdefault(k, 0.0 if k.startswith("seconds") else 0)

    def __getattr__(self, name):             # index, scoring, mode, device, ...
        return getattr(self.__dict__["seeded"], name)

    def seed_batches(self, batches):
        return self.seeded.seed_batches(batches)

    # -------------------------------------------------------------- alignment
    def align_batch(self, reads, cand=None) -> BatchResult:
        if reads.n_reads % 2:
            raise S2GError(f"a paired batch holds an odd number of reads ({reads.n_reads})")
        res = self.seeded.align_batch(reads, cand, defer=self._defer if self.rescue else None)
        t0 = time.perf_counter()
        n_pairs = reads.n_reads // 2
        res.pair_proper = np.zeros(n_pairs, np.bool_)
        res.pair_frag = np.zeros(n_pairs, np.int64)
        res.rescue = None
        self._count("pairs", n_pairs)
        try:
            self._pair(reads, res, n_pairs)
        finally:
            self._count("seconds pairing", time.perf_counter() - t0)
        d = res.deferred
        left = d[~res.aligned()[d]]              # not rescued: full-graph DP after all
        self._count("unseeded rescued", len(d) - len(left))
        self.seeded.full_dp(reads, res, left)
        return res

    @staticmethod
    def _defer(res, idx):
        """Of the reads ``idx`` due for full-graph DP (no usable chain), those whose mate
        is placed well enough to rescue them from (its window, MAPQ >= RESCUE_MAPQ): rescue
        is exact DP in the few kbp the fragment allows, full-graph DP the whole graph (on
        MHC, 5.3 Mbp, 1,004 such mates cost more than the other 39,000 reads together)."""
        m = idx ^ 1
        return (res.aligned()[m] & (res.best_task[m] >= 0) & (res.mapq[m] >= RESCUE_MAPQ)
                & (res.lengths[idx] > 0))

    def _gr(self):
        g = self.graph
        return (g.node_start, g.pred_ptr, g.pred_idx, g.node_seg, strand_maps(g)[2])

    def _pair(self, reads, res, n_pairs):
        g = self.graph
        seg_node, mirror, copies = strand_maps(g)
        tk = res.tasks
        a, b, _, _ = self.scoring.as_tuple()
        unit = float(a + b)
        cap = UNPAIRED * unit
        n = reads.n_reads
        lens = np.asarray(reads.lengths(), np.int64)
        # candidates: every read's windows, its full-graph DP result (reads whose windows
        # it replaced), its rescues; kind 0 window task, 1 the result as is, 2 rescue
        live = np.nonzero(tk.ncand[tk.read] > 0)[0]
        full = np.nonzero((res.best_task < 0) & res.aligned())[0]
        parts = [(tk.read[live], tk.score[live], tk.col[live], tk.end_i[live], 0, live),
                 (full, res.score[full], res.end_j[full], res.end_i[full], 1, full)]
        if self.model is None:
            self.model = self._learn(res, n_pairs)
            if self.model is None:
                return
        m = self.model
        limit = int(math.ceil(m.mean + RESCUE_SD * m.sd))
        cand = self._candidates(parts, n)
        resc = None
        if self.rescue:
            ok = any_proper(n_pairs, *cand[:2], *cand[3:6], self._gr(), limit, m.mean, m.sd,
                            cap, unit)
            resc = self._rescue(reads, res, ok, lens, limit, copies)
            if resc is not None:
                x = np.arange(len(resc["read"]))
                parts.append((resc["read"], resc["score"], resc["col"], resc["end_i"], 2, x))
                cand = self._candidates(parts, n)
        from .mapq import MAPQ_PER_MISMATCH
        chosen, qp, proper, frag = choose_pairs(n_pairs, cand[:6], self._gr(), limit, m.mean,
                                                m.sd, cap, unit, MAPQ_PER_MISMATCH)
        self._apply(res, tk, chosen, qp, proper, cand[6], cand[7], resc)
        res.pair_proper = proper
        res.pair_frag = frag
        self._count("pairs proper", int(np.count_nonzero(proper)))
        self.seeded.set_secondaries(reads, res)

    def _candidates(self, parts, n):
        """(first, n, score, strand, forward end column, rows, kind, index) of every
        read's candidates, grouped by read in the order of ``parts``."""
        g = self.graph
        seg_node = strand_maps(g)[0]
        owner = np.concatenate([p[0] for p in parts]).astype(np.int64)
        order = np.argsort(owner, kind="stable")
        score = np.concatenate([p[1] for p in parts]).astype(np.float64)[order]
        col = np.concatenate([p[2] for p in parts]).astype(np.int64)[order]
        rows = np.concatenate([p[3] for p in parts]).astype(np.int64)[order]
        kind = np.concatenate([np.full(len(p[0]), p[4], np.int64) for p in parts])[order]
        idx = np.concatenate([np.asarray(p[5], np.int64) for p in parts])[order]
        strand, fcol = end_columns(col, g.node_start, g.node_seg, g.node_rev, seg_node)
        strand[score <= NEG_INF] = -1
        c_n = np.bincount(owner, minlength=n).astype(np.int64)
        c_first = np.zeros(n, np.int64)
        np.cumsum(c_n[:-1], out=c_first[1:])
        return c_first, c_n, score, strand, fcol, rows, kind, idx

    def _learn(self, res, n_pairs):
        """The fragment model of this batch's confidently placed pairs, or None."""
        sure = (res.mapq >= LEARN_MAPQ) & (res.best_task >= 0)
        r = np.nonzero(sure)[0]
        g = self.graph
        seg_node = strand_maps(g)[0]
        strand, fcol = end_columns(np.asarray(res.end_j, np.int64)[r], g.node_start,
                                   g.node_seg, g.node_rev, seg_node)
        st = np.full(2 * n_pairs, -1, np.int64)
        fc = np.zeros(2 * n_pairs, np.int64)
        st[r], fc[r] = strand, fcol
        rows = np.asarray(res.end_i, np.int64)
        frag = _learn_frags(n_pairs, st, fc, rows, self._gr(), LEARN_MAX)
        frag = frag[frag > 0]
        model = learn_model(frag)
        if model is None:
            warnings.warn(f"paired-end reads: {len(frag)} confidently placed pairs in this "
                          f"batch, fewer than {LEARN_MIN} to learn the fragment length from; "
                          "its pairs are aligned unpaired (give --fragment-mean and "
                          "--fragment-sd)")
        return model

    def _rescue(self, reads, res, ok, lens, limit, copies):
        """Rescue windows for the mates of well-placed anchors in pairs without a proper
        combination, and for poorly aligned mates (below ``RESCUE_POOR`` x a perfect
        score: their true place may have had no seeds) of well-placed ones in proper
        pairs (:func:`rescue_pieces`; whole nodes, :func:`rescue_nodes`, where a segment
        has several copies on a strand), aligned exactly: their read, score, end cell and
        column, window graph (or None when there is none)."""
        g = self.graph
        mate = np.arange(len(lens)) ^ 1
        poor = res.aligned() & (res.score < RESCUE_POOR * self.scoring.as_tuple()[0] * lens)
        anchor = res.aligned() & (res.mapq >= RESCUE_MAPQ)
        anchor &= np.repeat(~ok, 2) | (poor[mate] & ~poor)
        anchor &= lens[mate] > 0
        rs = np.nonzero(anchor)[0]
        if len(rs) == 0:
            return None
        pad = int(8 + lens.max(initial=0) // 10)
        a, _, o, e = self.scoring.as_tuple()
        gr = (g.node_start, g.pred_ptr, g.pred_idx, g.node_seg, g.node_rev)
        # pieces (rescue_pieces) where each segment has one node per strand; whole nodes
        # on a cyclic graph's unrolling (its copies' fragments are not the anchor's own)
        cut = not (np.diff(copies[0]) > 1).any()
        pieces = []
        for r in rs.tolist():
            m = int(lens[r ^ 1])
            if cut:                     # rows + the deletions a counting rescue affords
                span = m + max(0, int((a * m * (1.0 - RESCUE_MIN) - o) // e)) + 1
                pieces.append(rescue_pieces(int(res.end_j[r]), gr, copies, limit + pad,
                                            SWEEP_NODES, m + pad, span))
            else:
                v = rescue_nodes(int(res.end_j[r]), gr, copies, limit + pad, SWEEP_NODES,
                                 m + pad)
                pieces.append((v, np.zeros(len(v), np.int64), np.diff(g.node_start)[v] - 1))
        keep = np.array([len(x[0]) > 0 for x in pieces], np.bool_)
        self._count("rescue attempts", int(np.count_nonzero(keep)))
        if not keep.any():
            return None
        pieces = [x for x, k in zip(pieces, keep) if k]
        t_read = (rs[keep] ^ 1).astype(np.int64)
        piece_at = np.zeros(len(pieces) + 1, np.int64)
        np.cumsum([len(x[0]) for x in pieces], out=piece_at[1:])
        p_node = np.concatenate([x[0] for x in pieces]).astype(np.int32)
        p_lo = np.concatenate([x[1] for x in pieces]).astype(np.int32)
        p_hi = np.concatenate([x[2] for x in pieces]).astype(np.int32)
        wg = WindowGraph(g, piece_at, p_node, p_lo, p_hi)
        sc, ei, ej = self.seeded.window_kernel(wg.graph, reads.codes_flat, reads.offsets,
                                               t_read, wg.t_lo, wg.t_hi, self.scoring,
                                               self.mode)
        good = (sc > NEG_INF) & (sc >= RESCUE_MIN * a * lens[t_read])
        # a poor mate's rescue in a proper pair counts only when it beats the mate's own
        # windows (else it is one of them again, and would halve its MAPQ as a tie)
        good &= ~np.repeat(ok, 2)[t_read] | (sc > res.score[t_read])
        sc = np.where(good, sc, NEG_INF)
        return {"read": t_read, "score": sc, "end_i": ei, "end_j": ej,
                "col": np.where(good, wg.columns(ej), -1), "lo": wg.t_lo, "wg": wg}

    def _apply(self, res, tk, chosen, qp, proper, kind, idx, resc):
        """Move the mates of proper pairs to their chosen candidates (a window, or a
        rescue) with their pair MAPQ; improper pairs keep their single-end results, and so
        does a mate whose full-graph DP result was chosen (MAPQ 255: not computed)."""
        move = (chosen >= 0) & np.repeat(proper, 2)
        ck = np.where(move, kind[np.maximum(chosen, 0)], -1)
        ci = np.where(move, idx[np.maximum(chosen, 0)], -1)
        q_se = np.asarray(res.mapq, np.int64).copy()
        was = res.best_task.copy()
        w = np.nonzero((ck == 0) & (ci != was))[0]
        t = ci[w]
        res.score[w], res.end_i[w], res.end_j[w] = tk.score[t], tk.end_i[t], tk.col[t]
        res.col_lo[w], res.wg_end_j[w], res.best_task[w] = tk.lo[t], tk.end_j[t], t
        res.rescue = None
        rsc = np.nonzero(ck == 2)[0]
        if len(rsc):
            x = ci[rsc]
            res.score[rsc], res.end_i[rsc], res.end_j[rsc] = (resc["score"][x], resc["end_i"][x],
                                                              resc["col"][x])
            res.col_lo[rsc] = resc["lo"][x]
            res.best_task[rsc] = -2                   # traced on the rescue windows
            res.rescue = (rsc, resc["wg"], resc["lo"][x], resc["end_j"][x], x)
            self._count("rescued mates", len(rsc))
        same = (ck == 0) & (ci == was)
        cap = np.where(same, q_se + PAIR_BOOST, PAIR_BOOST)
        q = np.minimum(np.minimum(qp, cap), MAPQ_MAX)
        res.mapq = np.where(move & (ck != 1), np.floor(q + 0.5).astype(np.int64), q_se)
        # for the copies inside a window (s2g.seeded.copies, after the traceback)
        res.pair_q, res.pair_cap, res.pair_moved = qp, cap, move & (ck != 1)
        res.pair_model = self.model
        if len(w) and getattr(res, "t_strong", None) is not None:
            res.copies[w] = res.t_strong[t]


    # -------------------------------------------------------------- traceback
    def traceback(self, reads, res, max_cells=None, threads=None, late=False):
        """The seeded traceback, and the rescued mates' on their rescue windows (``late``:
        as :meth:`SeededAligner.traceback`'s where no mate was rescued)."""
        rescue = getattr(res, "rescue", None)
        if rescue is None:
            return self.seeded.traceback(reads, res, max_cells, threads, late=late)
        from ..trace import MAX_CELLS, FlatTracebacks, traceback_batch
        rsc, wg, lo, ej, tasks = rescue
        # rescued mates (best_task -2) are left to their rescue windows by the seeded
        # traceback; their scores stay as the pair placed them (pair MAPQ of copies reads
        # them: hidden as NEG_INF they once made a pair's MAPQ 0)
        self.seeded.traceback(reads, res, max_cells, threads)
        n = len(res)
        score = np.full(n, NEG_INF, np.int64)
        score[rsc] = res.score[rsc]
        end_i = np.zeros(n, np.int64)
        end_i[rsc] = res.end_i[rsc]
        end_j = np.full(n, -1, np.int64)
        end_j[rsc] = ej
        col_lo = np.zeros(n, np.int64)
        col_lo[rsc] = lo
        tres = BatchResult(res.names, res.lengths, score, end_i, end_j)
        traceback_batch(wg.graph, reads, self.scoring, self.mode, tres,
                        max_cells=max_cells or MAX_CELLS, threads=threads, col_lo=col_lo,
                        flat=FlatTracebacks(n), idx=rsc.astype(np.int64))
        rflat = wg.map_tracebacks(tres.flat)
        res.set_flat(res.flat.merged(rflat))
        if self.seeded.copies_mapq:             # and the copies rescore left waiting
            self.seeded.rescue_copies(reads, res, wg, tasks, rsc, rflat)
        res.rescue = None
        return res
