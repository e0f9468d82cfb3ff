"""Paired-end reads on the seeded path: a fragment-length model, pairs scored jointly over
both mates' windows, mate rescue by exact DP where the fragment puts the mate, pair-aware
MAPQ.

A batch holds its pairs interleaved (mate 1 of pair ``k`` at read ``2k``, mate 2 at
``2k + 1``: :func:`s2g.reads.iter_pair_batches`). Each mate is first aligned as a single
read (:meth:`SeededAligner.align_batch`: every window's exact score, ``res.tasks``); then:

1. **Positions.** A window's end column becomes a *forward coordinate*: the column of
   the same base on the forward copy of its segment (reverse-copy columns mirrored), so
   both strands share one axis, the graph's topological order. A mate on the forward
   strand starts its fragment at ``end - (end_i - 1)``; a mate on the reverse strand ends
   it at ``end + (end_i - 1)``. Distances on this axis count every base sorted between
   two positions, alternative alleles included: an upper bound of the walk distance, and
   the fragment model is learned on the same axis, so the inflation of a typical bubble
   is part of the model (measured: README, "Paired-end reads").
2. **Fragment model** (:class:`FragmentModel`): given (``--fragment-mean/--fragment-sd``)
   or learned from the first batch with enough confidently placed pairs (both mates'
   single-end MAPQ >= 30, FR orientation, fragment < 10 kbp): median and 1.4826 x MAD.
3. **Rescue.** A pair with no properly oriented combination of windows inside
   ``mean +- 4 sd``: each mate placed with single-end MAPQ >= ``RESCUE_MAPQ`` gets its
   mate aligned by exact DP over the graph nodes of the region the model implies, on the
   opposite strand (a window like any other: :mod:`s2g.window`); a rescue counts when it
   scores at least ``RESCUE_MIN`` x the mate's perfect score.
4. **Joint choice.** Over every combination (window or rescue of mate 1) x (of mate 2):
   ``S = s1 + s2 - penalty(fragment)``, the penalty being the fragment's log-likelihood
   under a normal model in score units (a mismatch, ``a + b``, is worth 20 phred as in
   :mod:`s2g.seeded.mapq`), capped at ``U`` (= ``UNPAIRED`` mismatches: what leaving the
   pair unpaired costs; improper orientation costs ``U``). Ties: the mates' own window
   order. A pair is *proper* when its choice pays less than ``U``.
5. **MAPQ** of a mate in a proper pair: from the best score of each other placement of
   that mate (its other windows, each with its best partner), as :func:`pick` does for a
   single read, at most its single-end MAPQ + 40 (a placement the pair moved: at most
   40), as bwa-mem caps it. Improper pairs keep single-end MAPQ.

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
    """Fragment length on the forward-coordinate axis: mean, standard deviation, and how
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

def segment_axis(graph):
    """Per segment, the forward coordinate of its first base: the first column of its
    forward copy (the first such node), else of its reverse copy. Cached on the graph."""
    hit = graph.__dict__.get("_pair_axis")
    if hit is None:
        n_seg = len(graph.seg_len)
        f = np.full(n_seg, -1, np.int64)
        r = np.full(n_seg, -1, np.int64)
        starts = np.asarray(graph.node_start[:-1], np.int64)
        fw = np.nonzero(graph.node_rev == 0)[0]
        rv = np.nonzero(graph.node_rev != 0)[0]
        # the first node of each segment (nodes in ascending order: assign in reverse)
        f[graph.node_seg[fw[::-1]]] = starts[fw[::-1]]
        r[graph.node_seg[rv[::-1]]] = starts[rv[::-1]]
        hit = np.where(f >= 0, f, r)
        # nodes on each strand sorted by their forward interval (rescue regions)
        lens = np.diff(np.asarray(graph.node_start, np.int64))
        lo = hit[graph.node_seg]
        order = {}
        for strand, nodes in ((0, fw), (1, rv)):
            o = nodes[np.lexsort((nodes, lo[nodes]))]
            order[strand] = (o.astype(np.int64), lo[o], lo[o] + lens[o] - 1)
        hit = (hit, order)
        graph.__dict__["_pair_axis"] = hit
    return hit


@numba.njit(**NJIT)
def fragment_ends(col, end_i, node_start, node_seg, node_rev, seg_f):
    """Per alignment ending at graph column ``col`` (row ``end_i``): strand (0/1) and the
    fragment end its read's first base implies on the forward axis (forward strand: the
    fragment's left end; reverse: its right end); strand -1 where ``col < 0``."""
    n = len(col)
    strand = np.full(n, -1, np.int64)
    end = np.zeros(n, np.int64)
    for t in range(n):
        c = col[t]
        if c < 0:
            continue
        v = np.searchsorted(node_start, c, side="right") - 1
        k = c - node_start[v]
        ln = node_start[v + 1] - node_start[v]
        f0 = seg_f[node_seg[v]]
        if node_rev[v] == 0:
            strand[t] = 0
            end[t] = f0 + k - (end_i[t] - 1)
        else:
            strand[t] = 1
            end[t] = f0 + (ln - 1 - k) + (end_i[t] - 1)
    return strand, end


@numba.njit(inline="always", **NJIT)
def _penalty(s1, e1, s2, e2, mean, sd, cap, unit):
    """Score penalty of a pair's fragment: ``cap`` unless FR (one mate on each strand,
    the forward one's fragment start at or before the reverse one's end)."""
    if s1 < 0 or s2 < 0 or s1 == s2:
        return cap
    if s1 == 0:
        frag = e2 - e1 + 1
    else:
        frag = e1 - e2 + 1
    if frag < 1:
        return cap
    z = (frag - mean) / sd
    p = unit * z * z / (2.0 * math.log(10.0))
    return min(p, cap)


@numba.njit(**NJIT)
def any_proper(n_pairs, c_first, c_n, c_strand, c_end, mean, sd, cap, unit):
    """Per pair: whether some combination of the mates' candidates pays less than ``cap``."""
    out = np.zeros(n_pairs, np.bool_)
    for k in range(n_pairs):
        a, b = 2 * k, 2 * k + 1
        for i in range(c_first[a], c_first[a] + c_n[a]):
            for j in range(c_first[b], c_first[b] + c_n[b]):
                if _penalty(c_strand[i], c_end[i], c_strand[j], c_end[j], mean, sd, cap,
                            unit) < cap:
                    out[k] = True
    return out


@numba.njit(**NJIT)
def choose_pairs(n_pairs, c_first, c_n, c_score, c_strand, c_end, mean, sd, cap, unit,
                 per_mm):
    """Per mate: the chosen candidate (or -1: none), and per mate its pair MAPQ (from its
    other placements' best pair scores, :func:`s2g.seeded.mapq.pick`'s formula); per pair:
    proper or not and the chosen fragment length (0: not proper)."""
    n = 2 * n_pairs
    chosen = np.full(n, -1, np.int64)
    q = np.zeros(n, np.float64)
    proper = np.zeros(n_pairs, np.bool_)
    frag = np.zeros(n_pairs, np.int64)
    for k in range(n_pairs):
        a, b = 2 * k, 2 * k + 1
        if c_n[a] == 0 or c_n[b] == 0:
            continue
        best = -1e300
        bi = -1
        bj = -1
        bp = cap
        for i in range(c_first[a], c_first[a] + c_n[a]):
            for j in range(c_first[b], c_first[b] + c_n[b]):
                p = _penalty(c_strand[i], c_end[i], c_strand[j], c_end[j], mean, sd, cap, unit)
                s = c_score[i] + c_score[j] - p
                if s > best:
                    best, bi, bj, bp = s, i, j, p
        chosen[a], chosen[b] = bi, bj
        if bp < cap:
            proper[k] = True
            frag[k] = abs(c_end[bj] - c_end[bi]) + 1
        for m in range(2):
            me = a if m == 0 else b
            other = b if m == 0 else a
            mine = bi if m == 0 else bj
            tot = 0.0
            for i in range(c_first[me], c_first[me] + c_n[me]):
                if i == mine:
                    continue
                si = -1e300
                for j in range(c_first[other], c_first[other] + c_n[other]):
                    if m == 0:
                        p = _penalty(c_strand[i], c_end[i], c_strand[j], c_end[j], mean, sd,
                                     cap, unit)
                    else:
                        p = _penalty(c_strand[j], c_end[j], c_strand[i], c_end[i], mean, sd,
                                     cap, unit)
                    si = max(si, c_score[i] + c_score[j] - p)
                d = (best - si) / unit
                tot += 10.0 ** (-per_mm * d / 10.0)
            q[me] = 1e9 if tot <= 0 else -10.0 * math.log10(tot / (1.0 + tot))
    return chosen, q, proper, frag


@numba.njit(**NJIT)
def rescue_regions(n_pairs, anchor_ok, strand, end, lens, lo_frag, hi_frag, pad):
    """Rescue tasks: (mate to rescue, strand it must take, forward interval lo..hi) for each
    anchor mate ``anchor_ok`` whose pair lacks a proper combination."""
    ro = []
    rs = []
    rl = []
    rh = []
    for r in range(2 * n_pairs):
        if not anchor_ok[r]:
            continue
        y = r ^ 1
        L = lens[y]
        if L == 0:
            continue
        if strand[r] == 0:          # anchor on the left: the mate reverse, on the right
            lo = end[r] + lo_frag - L - pad
            hi = end[r] + hi_frag - 1 + pad
            s = 1
        else:                       # anchor on the right: the mate forward, on the left
            lo = end[r] - hi_frag + 1 - pad
            hi = end[r] - lo_frag + L + pad
            s = 0
        ro.append(y)
        rs.append(s)
        rl.append(lo)
        rh.append(hi)
    n = len(ro)
    out = np.empty((n, 4), np.int64)
    for x in range(n):
        out[x, 0], out[x, 1], out[x, 2], out[x, 3] = ro[x], rs[x], rl[x], rh[x]
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
        self.model = model
        self.rescue = bool(rescue)
        self.graph = seeded.graph
        self.totals = seeded.totals
        for k in ("pairs", "pairs proper", "rescue attempts", "rescued mates",
                  "seconds pairing"):
            self.totals.setdefault(k, 0.0 if k.startswith("seconds") else 0)

    def __getattr__(self, name):             # index, scoring, mode, device, ...
        return getattr(self.__dict__["seeded"], name)

    def seed_batches(self, batches):
        return self.seeded.seed_batches(batches)

    # -------------------------------------------------------------- alignment
    def align_batch(self, reads, cand=None) -> BatchResult:
        if reads.n_reads % 2:
            raise S2GError(f"a paired batch holds an odd number of reads ({reads.n_reads})")
        res = self.seeded.align_batch(reads, cand)
        t0 = time.perf_counter()
        n_pairs = reads.n_reads // 2
        g = self.graph
        seg_f, _ = segment_axis(g)
        tk = res.tasks
        lens = np.asarray(reads.lengths(), np.int64)
        a, b, _, _ = self.scoring.as_tuple()
        unit = float(a + b)
        cap = UNPAIRED * unit
        t_strand, t_end = fragment_ends(tk.col, tk.end_i, g.node_start, g.node_seg, g.node_rev,
                                        seg_f)
        t_strand[tk.score <= NEG_INF] = -1
        res.pair_proper = np.zeros(n_pairs, np.bool_)
        res.pair_frag = np.zeros(n_pairs, np.int64)
        res.rescue = None
        self.totals["pairs"] += n_pairs
        if self.model is None:
            self.model = self._learn(res, tk, t_strand, t_end, n_pairs)
            if self.model is None:
                self.totals["seconds pairing"] += time.perf_counter() - t0
                return res
        m = self.model
        # candidates: each read's windows (tasks), then its rescues
        c_first, c_n = tk.first.copy(), tk.ncand.copy()
        c_score = tk.score.astype(np.float64)
        c_strand, c_end = t_strand, t_end
        resc = None
        if self.rescue:
            ok = any_proper(n_pairs, c_first, c_n, c_strand, c_end, m.mean, m.sd, cap, unit)
            resc = self._rescue(reads, res, ok, t_strand, t_end, lens)
        if resc is not None:
            # merge: per read its windows then its rescues (tasks kept in place, rescues
            # appended, an index array per read)
            r_read = resc["read"]
            n_t = len(tk.score)
            live = np.nonzero(tk.ncand[tk.read] > 0)[0]     # not replaced by full-graph DP
            idx_all = np.concatenate([live, n_t + np.arange(len(r_read))])
            owner = np.concatenate([tk.read[live], r_read])
            order = np.lexsort((idx_all, owner))
            c_score = np.concatenate([c_score, resc["score"].astype(np.float64)])[idx_all[order]]
            c_strand = np.concatenate([t_strand, resc["strand"]])[idx_all[order]]
            c_end = np.concatenate([t_end, resc["end"]])[idx_all[order]]
            src = idx_all[order]
            c_n = np.bincount(owner, minlength=reads.n_reads).astype(np.int64)
            c_first = np.zeros(reads.n_reads, np.int64)
            np.cumsum(c_n[:-1], out=c_first[1:])
        else:
            src = np.arange(len(tk.score))
            n_t = len(tk.score)
        from .mapq import MAPQ_PER_MISMATCH
        chosen, qp, proper, frag = choose_pairs(n_pairs, c_first, c_n, c_score, c_strand, c_end,
                                                m.mean, m.sd, cap, unit, MAPQ_PER_MISMATCH)
        self._apply(res, tk, chosen, qp, proper, src, n_t, resc)
        res.pair_proper = proper
        res.pair_frag = frag
        self.totals["pairs proper"] += int(np.count_nonzero(proper))
        self.seeded.set_secondaries(reads, res)
        self.totals["seconds pairing"] += time.perf_counter() - t0
        return res

    def _learn(self, res, tk, t_strand, t_end, n_pairs):
        bt = res.best_task
        ok = (bt >= 0) & (res.mapq >= LEARN_MAPQ)
        a, b = np.arange(0, 2 * n_pairs, 2), np.arange(1, 2 * n_pairs, 2)
        both = ok[a] & ok[b]
        ta, tb = bt[a][both], bt[b][both]
        sa, sb = t_strand[ta], t_strand[tb]
        ea, eb = t_end[ta], t_end[tb]
        fr = (sa != sb)
        frag = np.where(sa == 0, eb - ea + 1, ea - eb + 1)[fr]
        frag = frag[(frag >= 1) & (frag <= LEARN_MAX)]
        model = learn_model(frag)
        if model is None:
            warnings.warn(f"paired-end reads: {len(frag)} confidently placed pairs in this "
                          f"batch, fewer than {LEARN_MIN} to learn the fragment length from; "
                          "its pairs are aligned unpaired (give --fragment-mean and "
                          "--fragment-sd)")
        return model

    def _rescue(self, reads, res, ok, t_strand, t_end, lens):
        """Rescue windows for the mates of well-placed anchors in pairs without a proper
        combination: aligned exactly; returns their read, score, end cell, strand, fragment
        end, window graph (or None when there is none)."""
        m = self.model
        n_pairs = len(ok)
        bt = res.best_task
        anchor = (bt >= 0) & (res.mapq >= RESCUE_MAPQ)
        anchor &= ~np.repeat(ok, 2)
        if not anchor.any():
            return None
        strand = np.where(bt >= 0, t_strand[np.maximum(bt, 0)], -1)
        end = np.where(bt >= 0, t_end[np.maximum(bt, 0)], 0)
        anchor &= strand >= 0
        lo_f = max(1, int(m.mean - RESCUE_SD * m.sd))
        hi_f = int(math.ceil(m.mean + RESCUE_SD * m.sd))
        reg = rescue_regions(n_pairs, anchor, strand, end, lens, lo_f, hi_f,
                             int(8 + lens.max(initial=0) // 10))
        if len(reg) == 0:
            return None
        _, order = segment_axis(self.graph)
        nodes, piece_at = [], np.zeros(len(reg) + 1, np.int64)
        for x, (y, s, lo, hi) in enumerate(reg.tolist()):
            o, flo, fhi = order[s]
            i0 = np.searchsorted(fhi, lo, side="left")
            i1 = np.searchsorted(flo, hi, side="right")
            sel = np.sort(o[i0:i1]) if i1 > i0 else o[:0]
            nodes.append(sel)
            piece_at[x + 1] = piece_at[x] + len(sel)
        keep = np.diff(piece_at) > 0
        self.totals["rescue attempts"] += int(np.count_nonzero(keep))
        if not keep.any():
            return None
        reg = reg[keep]
        nodes = [nd for nd, k in zip(nodes, keep) if k]
        piece_at = np.zeros(len(reg) + 1, np.int64)
        np.cumsum([len(nd) for nd in nodes], out=piece_at[1:])
        p_node = np.concatenate(nodes).astype(np.int32)
        g = self.graph
        p_hi = (np.diff(g.node_start)[p_node] - 1).astype(np.int32)
        wg = WindowGraph(g, piece_at, p_node, np.zeros(len(p_node), np.int32), p_hi)
        t_read = reg[:, 0].astype(np.int64)
        sc, ei, ej = self.seeded.window_kernel(wg.graph, reads.codes_flat, reads.offsets,
                                               t_read, wg.t_lo, wg.t_hi, self.scoring,
                                               self.mode)
        a = self.scoring.as_tuple()[0]
        good = (sc > NEG_INF) & (sc >= RESCUE_MIN * a * lens[t_read])
        col = wg.columns(ej)
        st, en = fragment_ends(col, ei, g.node_start, g.node_seg, g.node_rev,
                               segment_axis(g)[0])
        sc = np.where(good, sc, NEG_INF)
        st = np.where(good, st, -1)
        return {"read": t_read, "score": sc, "end_i": ei, "end_j": ej, "col": col,
                "lo": wg.t_lo, "strand": st, "end": en, "wg": wg, "good": good}

    def _apply(self, res, tk, chosen, qp, proper, src, n_t, resc):
        """Move the mates of proper pairs to their chosen candidates (a window, or a
        rescue) with their pair MAPQ; improper pairs keep their single-end results."""
        move = (chosen >= 0) & np.repeat(proper, 2)
        pick_src = np.where(move, src[np.maximum(chosen, 0)], -1)
        q_se = np.asarray(res.mapq, np.int64).copy()
        was = res.best_task.copy()
        w = np.nonzero(move & (pick_src < n_t) & (pick_src != was))[0]
        t = pick_src[w]
        res.score[w], res.end_i[w], res.end_j[w] = tk.score[t], tk.end_i[t], tk.col[t]
        res.col_lo[w], res.wg_end_j[w], res.best_task[w] = tk.lo[t], tk.end_j[t], t
        res.rescue = None
        rsc = np.nonzero(move & (pick_src >= n_t))[0]
        if len(rsc):
            x = pick_src[rsc] - n_t
            res.score[rsc], res.end_i[rsc], res.end_j[rsc] = (resc["score"][x], resc["end_i"][x],
                                                              resc["col"][x])
            res.col_lo[rsc] = resc["lo"][x]
            res.best_task[rsc] = -2                   # traced on the rescue windows
            res.rescue = (rsc, resc["wg"], resc["lo"][x], resc["end_j"][x])
            self.totals["rescued mates"] += len(rsc)
        same = pick_src == was
        cap = np.where(same, q_se + PAIR_BOOST, PAIR_BOOST)
        q = np.minimum(np.minimum(qp, cap), MAPQ_MAX)
        res.mapq = np.where(move, np.floor(q + 0.5).astype(np.int64), q_se)

    # -------------------------------------------------------------- traceback
    def traceback(self, reads, res, max_cells=None, threads=None):
        """The seeded traceback, and the rescued mates' on their rescue windows."""
        rescue = getattr(res, "rescue", None)
        if rescue is None:
            return self.seeded.traceback(reads, res, max_cells, threads)
        from ..trace import MAX_CELLS, FlatTracebacks, traceback_batch
        rsc, wg, lo, ej = rescue
        keep = res.score[rsc].copy()
        res.score[rsc] = NEG_INF                  # hidden from the window traceback
        try:
            self.seeded.traceback(reads, res, max_cells, threads)
        finally:
            res.score[rsc] = keep
        n = len(res)
        score = np.full(n, NEG_INF, np.int64)
        score[rsc] = keep
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
        res.rescue = None
        return res
