"""Surjection of a batch (see :mod:`s2g.sam`): placement of each read's graph alignment
on the reference path (:func:`_place`), banded glocal realignment of its candidate
windows (:func:`_realign`), the best candidate per read (:func:`surject_batch`,
:class:`Surjected`), the graph alignments as arrays (:class:`_Tracebacks`) and the
reference span of each record (:func:`_ref_span`).
"""
from __future__ import annotations

import re

import numba
import numpy as np

from .._numba import NJIT, PARALLEL
from ..errors import S2GError
from ..graph_core import COMPLEMENT_CODE
from ..scoring import Scoring
from .pairing import pair_pick
from .refpath import RefPath

#: placement status of a read (what :func:`_place` writes)
NONE, OFF_PATH, FORWARD, REVERSE = 0, 1, 2, 3
#: candidate windows realigned per read (a path repeating the read's segments, as LPA's
#: KIV-2 copies do, votes for several places; the best realigned score wins) ...
CANDIDATES = 16
#: ... each with at least 1/MIN_SHARE of the heaviest window's votes
MIN_SHARE = 2
#: the least path gap (bases) one candidate window takes in whatever the read's length
#: (:func:`_skip_cap`)
MIN_SKIP_CAP = 200
#: what clipping read bases at either end costs in the realignment, in matches (bwa-mem's
#: -L 5,5 at match 1): an end on sequence the path lacks (an insertion allele, a read past
#: the path's end, an SV) is soft-clipped instead of forced onto the path
CLIP_PENALTY = 5
#: a candidate whose realigned score falls this many mismatches below the graph
#: alignment's is realigned over a wider window (:func:`_realign_wider`)
RETRY_GAP = 10
#: ... where that is at most this many cells (short reads)
RETRY_CELLS = 1 << 22
#: a supplementary record (:func:`_supplementary`) aligns at least this many read bases
#: the primary leaves clipped, and scores at least that many matches
SUPP_MIN_BASES = 30
#: realignment column ops (what :func:`_realign` writes)
OP_MATCH, OP_MISMATCH, OP_INS, OP_DEL = 0, 1, 2, 3

_NEG = np.int32(-(1 << 29))          # int32 "minus infinity" (as s2g.scoring.NEG_INF)


# ------------------------------------------------------------------------ placement

@numba.njit(inline="always", **NJIT)
def _shift(off, fw, w, ln):
    """A walk node's vote (its walk offset ``w``, length ``ln``) from a path step at path
    offset ``off``: walk x -> path x + shift on the same strand (``fw``), else walk x ->
    path shift - 1 - x."""
    return off - w if fw else off + ln + w


@numba.njit(**NJIT)
def _skip_cap(m):
    """The largest path gap one window takes in (bases): a read's length, at least
    :data:`MIN_SKIP_CAP`; a larger deletion or insertion allele (an SV against the path)
    splits the read's votes into windows of their own."""
    return max(np.int64(m), np.int64(MIN_SKIP_CAP))


@numba.njit(**NJIT)
def _skips(tbs, r, nodes, occ, cap):
    """The path bases read ``r``'s walk skips or adds between its consecutive on-path
    nodes: per pair, the least shift change between an occurrence of the one and of the
    next (same orientation; up to ``cap``, larger ones left out). A walk through a
    deletion allele (an edge over path segments) or an insertion allele (nodes off the
    path) has no I or D in its graph CIGAR, but its on-path nodes before and after vote
    for shifts that far apart: the votes' tolerance takes it in, so one window (and its
    band, which spans the votes' shifts) holds the whole read."""
    has, qstart, qend, ps, pe, indel, path_at, n_path, path = tbs
    node_start, node_seg, node_rev = nodes
    occ_ptr, occ_step, step_rev, step_off = occ
    a, b = ps[r], pe[r]
    tot = np.int64(0)
    w = np.int64(0)
    pv = np.int64(-1)                       # the previous on-path walk node and its offset
    pw = np.int64(0)
    for t in range(path_at[r], path_at[r] + n_path[r]):
        v = path[t]
        ln = node_start[v + 1] - node_start[v]
        s = node_seg[v]
        if min(w + ln, b) > max(w, a) and occ_ptr[s + 1] > occ_ptr[s]:
            if pv >= 0:
                ps_ = node_seg[pv]
                lnp = node_start[pv + 1] - node_start[pv]
                best = cap + 1
                for k in range(occ_ptr[s], occ_ptr[s + 1]):
                    i = occ_step[k]
                    fw = step_rev[i] == node_rev[v]
                    kv = _shift(step_off[i], fw, w, ln)
                    for k2 in range(occ_ptr[ps_], occ_ptr[ps_ + 1]):
                        i2 = occ_step[k2]
                        if (step_rev[i2] == node_rev[pv]) != fw:
                            continue
                        kp = _shift(step_off[i2], fw, pw, lnp)
                        best = min(best, abs(kv - kp))
                if best <= cap:
                    tot += best
            pv, pw = v, w
        w += ln
    return min(tot, cap)


@numba.njit(**PARALLEL)
def _place(tbs, nodes, occ, plen, K, out):
    """Per read ``r``, up to ``K`` candidate windows, heaviest first: ``out[r*K + c]`` =
    (status, window start, window end, band low diagonal, band high diagonal, qstart,
    qend, 0), ``out[r*K, 7]`` = 1 where the read had more than ``K``; the diagonals
    ``j - i`` (window column minus row of the read part, oriented as it aligns to the
    path) that the realignment computes; status NONE for no window
    (OFF_PATH in the first when the walk has no node on the path).

    ``tbs``: the graph alignments (has, qstart, qend, walk start, walk end, indel bases,
    path_at, n_path, path: :class:`_Tracebacks`); ``nodes``: the graph's (node_start,
    node_seg, node_rev); ``occ``: the reference path's (occ_ptr, occ_step, step_rev,
    step_off); ``plen``: its length. ``out`` stays a parameter of its own (written in the
    ``prange``: see docs/architecture.md, "Size rules")."""
    has, qstart, qend, ps, pe, indel, path_at, n_path, path = tbs
    node_start, node_seg, node_rev = nodes
    occ_ptr, occ_step, step_rev, step_off = occ
    n = len(has)
    for r in numba.prange(n):
        if not has[r] or qend[r] <= qstart[r]:
            continue
        a, b = ps[r], pe[r]
        cnt = 0
        w = 0
        for t in range(path_at[r], path_at[r] + n_path[r]):
            v = path[t]
            ln = node_start[v + 1] - node_start[v]
            if min(w + ln, b) > max(w, a):
                s = node_seg[v]
                cnt += occ_ptr[s + 1] - occ_ptr[s]
            w += ln
        out[r * K, 0] = OFF_PATH
        if cnt == 0:
            continue
        key = np.empty(cnt, np.int64)
        wt = np.empty(cnt, np.int64)
        c = 0
        w = 0
        for t in range(path_at[r], path_at[r] + n_path[r]):
            v = path[t]
            ln = node_start[v + 1] - node_start[v]
            ov = min(w + ln, b) - max(w, a)
            if ov > 0:
                s = node_seg[v]
                for k in range(occ_ptr[s], occ_ptr[s + 1]):
                    i = occ_step[k]
                    fw = step_rev[i] == node_rev[v]
                    # (reverse votes sort after forward ones)
                    key[c] = _shift(step_off[i], fw, w, ln) + (0 if fw else np.int64(1) << 42)
                    wt[c] = ov
                    c += 1
            w += ln
        order = np.argsort(key)
        skip = _skips(tbs, r, nodes, occ, _skip_cap(qend[r] - qstart[r]))
        tol = 16 + indel[r] + (b - a) // 4 + skip
        pad = 8 + indel[r]
        m = qend[r] - qstart[r]
        used = np.zeros(cnt, np.bool_)
        first = np.int64(0)
        for c in range(K + 1):
            # the heaviest window of votes within tol, among votes no earlier window took
            best, ba, bb = np.int64(0), -1, -1
            acc = np.int64(0)
            lo = 0
            for hi in range(cnt):
                if used[hi]:
                    acc = 0
                    lo = hi + 1
                    continue
                acc += wt[order[hi]]
                while key[order[hi]] - key[order[lo]] > tol:
                    acc -= wt[order[lo]]
                    lo += 1
                if acc > best:
                    best, ba, bb = acc, lo, hi
            if ba < 0 or (c > 0 and best * MIN_SHARE < first):
                break
            if c == K:                               # one more than K: the list is cut
                out[r * K, 7] = 1
                break
            if c == 0:
                first = best
            for k in range(ba, bb + 1):
                used[k] = True
            smin, smax = key[order[ba]], key[order[bb]]
            rev = smin >= (np.int64(1) << 41)
            if rev:
                smin -= np.int64(1) << 42
                smax -= np.int64(1) << 42
                s0, s1 = smin - b, smax - a          # the aligned walk on the path: [s0, s1)
            else:
                s0, s1 = a + smin, b + smax
            ws = max(0, s0 - pad)
            we = min(plen, s1 + pad)
            if we <= ws:
                continue                             # the votes fall off the path's ends
            d0 = s0 - ws                             # expected start diagonal (row 0)
            d1 = (s1 - ws) - m                       # expected end diagonal (row m)
            t = r * K + c
            out[t, 0] = REVERSE if rev else FORWARD
            out[t, 1] = ws
            out[t, 2] = we
            out[t, 3] = min(d0, d1) - pad
            out[t, 4] = max(d0, d1) + pad
            out[t, 5] = qstart[r]
            out[t, 6] = qend[r]


# ---------------------------------------------------------------------- realignment

@numba.njit(**PARALLEL)
def _realign(place, read_of, rflat, roff, ref, comp, a, b, o, e, ops_at, ops, out):
    """Banded glocal affine realignment of each candidate window ``t`` of read
    ``read_of[t]`` (see :mod:`s2g.sam`), its read ends clipped where that pays more than
    :data:`CLIP_PENALTY` matches. ``ops[ops_at[t]:]``: its alignment columns (OP_*),
    ``out[t]`` = (number of columns, 0-based start on the path, score (AS, the CIGAR's),
    NM, left clip, right clip, score less the clip penalties)."""
    n = len(place)
    for r in numba.prange(n):
        st = place[r, 0]
        if st < FORWARD:
            continue
        ws, we = place[r, 1], place[r, 2]
        nn = we - ws
        rd = read_of[r]
        qlen = roff[rd + 1] - roff[rd]
        q0r, q1r = place[r, 5], place[r, 6]        # aligned part, read coordinates
        m = q1r - q0r
        q = np.empty(m, np.uint8)
        base = roff[rd]
        if st == FORWARD:
            for k in range(m):
                q[k] = rflat[base + q0r + k]
            clip_l, clip_r = q0r, qlen - q1r
        else:
            for k in range(m):
                q[k] = comp[rflat[base + q1r - 1 - k]]
            clip_l, clip_r = qlen - q1r, q0r
        # the band: every row non-empty and connected to the next (row m reachable)
        dlo = max(min(place[r, 3], nn - m), -m)
        dhi = min(max(place[r, 4], 0), nn)
        if dhi < dlo:
            dhi = dlo
        bw = dhi - dlo + 1
        tb = np.zeros((m + 1) * bw, np.uint8)
        hp = np.full(nn + 2, _NEG, np.int32)
        hc = np.full(nn + 2, _NEG, np.int32)
        fp = np.full(nn + 2, _NEG, np.int32)
        fc = np.full(nn + 2, _NEG, np.int32)
        # row 0: free reference prefix (glocal)
        for j in range(max(0, dlo), min(nn, dhi) + 1):
            hp[j] = 0
        goe = np.int32(o + e)
        ge = np.int32(e)
        pclip = np.int32(CLIP_PENALTY * a)
        clip0 = -pclip
        bv, bi, bj = _NEG, np.int64(0), np.int64(0)
        for i in range(1, m + 1):
            lo = max(0, i + dlo)
            hi = min(nn, i + dhi)
            x = q[i - 1]
            erun = _NEG
            hleft = _NEG
            row = i * bw
            if lo <= hi:
                for j in range(lo, hi + 1):
                    flag = 0
                    # deletion (consumes reference): from the left cell of this row
                    e1 = hleft - goe
                    e2 = erun - ge
                    if e2 > e1:
                        erun = e2
                        flag |= 4
                    else:
                        erun = e1
                    # insertion (consumes read): from the cell above
                    f1 = hp[j] - goe
                    f2 = fp[j] - ge
                    if f2 > f1:
                        fv = f2
                        flag |= 8
                    else:
                        fv = f1
                    fc[j] = fv
                    # match/mismatch; N scores as a mismatch
                    if j > 0:
                        y = ref[ws + j - 1]
                        h = hp[j - 1] + (np.int32(a) if (x == y and x < 4) else np.int32(-b))
                    else:
                        h = _NEG
                    # tie order: diagonal, insertion, deletion
                    if fv > h:
                        h = fv
                        flag |= 2
                    if erun > h:
                        h = erun
                        flag = (flag & 12) | 1
                    if h < clip0:                  # read bases 0..i-1 clipped, start here
                        h = clip0
                        flag = (flag & 12) | 16
                    hc[j] = h
                    hleft = h
                    tb[row + (j - i - dlo)] = flag
                    if i < m and h > clip0 and h - pclip > bv:   # bases i.. clipped
                        bv, bi, bj = h - pclip, i, j
                if hi + 1 <= nn:
                    hc[hi + 1] = _NEG
                    fc[hi + 1] = _NEG
                if lo - 1 >= 0:
                    hc[lo - 1] = _NEG
                    fc[lo - 1] = _NEG
            hp, hc = hc, hp
            fp, fc = fc, fp
        # best end: free reference suffix, leftmost of the best
        lo = max(0, m + dlo)
        hi = min(nn, m + dhi)
        best = _NEG
        jb = lo
        for j in range(lo, hi + 1):
            if hp[j] > best and not tb[m * bw + (j - m - dlo)] & 16:   # (not all clipped)
                best = hp[j]
                jb = j
        ib = m
        if bv > best:                             # clipped at the end (ties: the whole read)
            best, ib, jb = bv, bi, bj
        if best <= _NEG:                          # nothing of the read aligns here
            out[r, 0] = -1
            out[r, 6] = _NEG
            continue
        # traceback (columns written backwards, then reversed in place)
        at = ops_at[r]
        i, j = ib, jb
        state = 0
        c = 0
        nm = 0
        while i > 0:
            f = tb[i * bw + (j - i - dlo)]
            if state == 0 and f & 16:             # the alignment starts here
                break
            if state == 0:
                src = f & 3
                if src == 0:
                    y = ref[ws + j - 1]
                    x = q[i - 1]
                    if x == y and x < 4:
                        ops[at + c] = OP_MATCH
                    else:
                        ops[at + c] = OP_MISMATCH
                        nm += 1
                    c += 1
                    i -= 1
                    j -= 1
                elif src == 1:
                    state = 1
                else:
                    state = 2
            elif state == 1:
                ops[at + c] = OP_DEL
                c += 1
                nm += 1
                if not (f & 4):
                    state = 0
                j -= 1
            else:
                ops[at + c] = OP_INS
                c += 1
                nm += 1
                if not (f & 8):
                    state = 0
                i -= 1
        for k in range(c // 2):
            t = ops[at + k]
            ops[at + k] = ops[at + c - 1 - k]
            ops[at + c - 1 - k] = t
        out[r, 0] = c
        out[r, 1] = ws + j
        out[r, 2] = best + pclip * ((i > 0) + (ib < m))   # AS: the CIGAR's own score
        out[r, 3] = nm
        out[r, 4] = clip_l + i                    # and the read bases the DP clipped
        out[r, 5] = clip_r + (m - ib)
        out[r, 6] = best                          # clip penalties in: candidates by it



# ----------------------------------------------------------------- batch surjection

def _realign_wider(it, read_of, reads, ref, sc, gscore, ops, ops_at, rea):
    """Candidates whose banded realignment scores more than :data:`RETRY_GAP` mismatches
    below the read's graph alignment, realigned once more over the whole band of their
    window widened by the read part's length on both sides (the votes of a walk through an
    allele the path lacks can set the band beside the path's own copy: a tandem repeat's
    next period). The wider search holds the narrow one, so it never scores less; kept
    where it scores more. Short reads only: at most :data:`RETRY_CELLS` cells a
    candidate. Returns (ops, row starts in ops), ``rea`` updated in place."""
    a, b = sc.match, sc.mismatch
    poor = np.flatnonzero(rea[:, 6] < gscore[read_of] - RETRY_GAP * (a + b))
    m = it[poor, 6] - it[poor, 5]
    ws = np.maximum(it[poor, 1] - m, 0)
    we = np.minimum(it[poor, 2] + m, ref.length)
    small = (m + 1) * (we - ws + m + 1) <= RETRY_CELLS
    poor, m, ws, we = poor[small], m[small], ws[small], we[small]
    if len(poor) == 0:
        return ops, ops_at
    w = it[poor].copy()
    w[:, 1], w[:, 2] = ws, we
    w[:, 3] = -(np.int64(1) << 40)                  # (the whole band: _realign clamps it)
    w[:, 4] = np.int64(1) << 40
    at2 = np.zeros(len(poor) + 1, np.int64)
    np.cumsum(m + (w[:, 2] - w[:, 1]), out=at2[1:])
    ops2 = np.zeros(int(at2[-1]), np.uint8)
    rea2 = np.zeros((len(poor), 7), np.int64)
    _realign(w, read_of[poor], reads[0], reads[1], ref.seq, COMPLEMENT_CODE, a, b,
             sc.gap_open, sc.gap_extend, at2, ops2, rea2)
    better = rea2[:, 6] > rea[poor, 6]
    if not better.any():
        return ops, ops_at
    ops_at = ops_at.copy()
    rea[poor[better]] = rea2[better]
    ops_at[poor[better]] = len(ops) + at2[:-1][better]
    return np.concatenate([ops, ops2]), ops_at


def _read_span(it, rea, qlen):
    """The read bases (forward read coordinates, [lo, hi)) each realigned candidate
    aligns: its part less the clips (``rea`` columns 4 and 5, in the candidate's
    orientation)."""
    lo = np.where(it[:, 0] == REVERSE, rea[:, 5], rea[:, 4])
    hi = qlen - np.where(it[:, 0] == REVERSE, rea[:, 4], rea[:, 5])
    return lo, hi


def _overlap(lo, hi, pick):
    """Per candidate (rows of reads by ``K``), how many read bases it aligns of those its
    read's candidate ``pick[r]`` (flat index) aligns, and how many that one aligns."""
    K = len(lo) // max(len(pick), 1)
    plo, phi = np.repeat(lo[pick], K), np.repeat(hi[pick], K)
    return np.maximum(0, np.minimum(hi, phi) - np.maximum(lo, plo)), phi - plo


def _same_part(lo, hi, pick):
    """Per candidate, whether it aligns more than half the read bases its read's chosen
    candidate (``pick``, flat index) aligns."""
    ov, ln = _overlap(lo, hi, pick)
    return 2 * ov > ln


def _supplementary(lo, hi, score, as_score, pick, a):
    """Per read, the candidate (flat index; -1: none) a supplementary record is written
    for: the best scoring one (``score``: clip penalties in, int64 min where nothing was
    found) that aligns at least :data:`SUPP_MIN_BASES` read bases its primary (flat index
    ``pick[r]``, -1: unmapped) leaves out, overlapping the primary's by at most half its
    own, and scoring (``as_score``) at least as many matches (the other side of an SV-size
    deletion, inversion or translocation against the path, as bwa mem and minimap2 write
    them); and its margin over the best other candidate covering more than half of its
    bases (int64 max: none). ``lo``/``hi``: the read bases each candidate aligns."""
    n = len(pick)
    low, top = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    supp = np.full(n, -1, np.int64)
    margin = np.full(n, top, np.int64)
    if n == 0:
        return supp, margin
    K = len(lo) // n
    ov, _ = _overlap(lo, hi, np.maximum(pick, 0))
    ln = hi - lo
    ok = ((score > low) & np.repeat(pick >= 0, K) & (np.arange(n * K) != np.repeat(pick, K))
          & (ln - ov >= SUPP_MIN_BASES) & (2 * ov <= ln) & (as_score >= SUPP_MIN_BASES * a))
    cand = np.where(ok, score, low).reshape(n, K)
    has = cand.max(axis=1) > low
    supp[has] = (np.arange(n) * K + np.argmax(cand, axis=1))[has]
    if has.any():
        at = np.maximum(supp, 0)
        o, sl = _overlap(lo, hi, at)
        flat = np.arange(n * K)
        rival = ((score > low) & (2 * o > sl) & (flat != np.repeat(at, K))
                 & (flat != np.repeat(pick, K)))
        second = np.where(rival, score, low).reshape(n, K).max(axis=1)
        near = has & (second > low)
        margin[near] = score[supp[near]] - second[near]
    return supp, margin


class _Tracebacks:
    """A batch's graph alignments as arrays, from a BatchResult's FlatTracebacks or from
    :class:`~s2g.result.Traceback` objects (per-read results, as the GAF writer takes)."""

    def __init__(self, res, n):
        from ..result import BatchResult
        from ..scoring import NEG_INF
        flat = res.flat if isinstance(res, BatchResult) else None
        if flat is not None:
            aligned = (np.asarray(res.score, np.int64) > NEG_INF) & (np.asarray(res.end_j) >= 0)
            self.has = np.asarray(flat.has, np.bool_) & aligned
            self.qstart = np.asarray(flat.qstart, np.int64)
            self.qend = np.asarray(flat.qend, np.int64)
            self.ps = np.asarray(flat.geo[:, 1], np.int64)
            self.pe = np.asarray(flat.geo[:, 2], np.int64)
            self.indel = np.asarray(flat.counts[:, 2] + flat.counts[:, 3], np.int64)
            self.path_at = np.asarray(flat.path_at, np.int64)
            self.n_path = np.asarray(flat.n_path, np.int64)
            self.path = np.asarray(flat.path, np.int64)
            self.mapq = (np.full(n, 255, np.int64) if res.mapq is None
                         else np.asarray(res.mapq, np.int64))
            self.score = np.asarray(res.score, np.int64)
            return
        rows = list(res)
        if len(rows) != n:
            raise S2GError(f"SAM writer: {len(rows)} results for {n} reads")
        self.has = np.zeros(n, np.bool_)
        self.qstart, self.qend, self.ps, self.pe, self.indel, self.path_at, self.n_path = (
            np.zeros(n, np.int64) for _ in range(7))
        self.mapq = np.zeros(n, np.int64)
        self.score = np.zeros(n, np.int64)
        nodes = []
        at = 0
        for r, x in enumerate(rows):
            self.mapq[r] = x.mapq
            tb = x.traceback
            self.path_at[r] = at
            if not x.aligned or tb is None:
                continue
            self.has[r] = True
            self.score[r] = x.score
            self.qstart[r], self.qend[r] = tb.qstart, tb.qend
            self.ps[r], self.pe[r] = tb.path_start, tb.path_end
            self.indel[r] = sum(int(k) for k, op in re.findall(r"(\d+)([ID])", tb.cigar))
            self.n_path[r] = len(tb.path)
            nodes.extend(tb.path)
            at += len(tb.path)
        self.path = np.asarray(nodes, np.int64)


def _node_arrays(graph):
    """(node_start int64, node_seg int64, node_rev uint8) of ``graph`` for :func:`_place`,
    made once per graph object (at every batch they were an O(graph) copy)."""
    got = graph.__dict__.get("_s2g_place_nodes")
    if got is None:
        got = graph.__dict__["_s2g_place_nodes"] = (
            np.asarray(graph.node_start, np.int64), np.asarray(graph.node_seg, np.int64),
            np.asarray(graph.node_rev, np.uint8))
    return got


def surject_batch(graph, ref: RefPath, reads, res, scoring: Scoring | None = None,
                  model=None):
    """Place and realign every read of ``reads`` (a :class:`~s2g.reads.ReadBatch`) from
    its graph alignment ``res`` (a BatchResult, or per-read AlignResults); returns a
    :class:`Surjected` (arrays, one row per read). ``model``: the pairs' fragment model
    (a :class:`~s2g.seeded.pairs.FragmentModel`; reads ``2p``, ``2p + 1`` are pair ``p``):
    the mates' candidates are chosen together (:mod:`s2g.sam.pairing`)."""
    sc = scoring or Scoring()
    n = reads.n_reads
    tbs = _Tracebacks(res, n)
    rflat = np.asarray(reads.codes_flat, np.uint8)
    roff = np.asarray(reads.offsets, np.int64)
    K = CANDIDATES
    items = np.zeros((n * K, 8), np.int64)
    if n:
        _place((tbs.has, tbs.qstart, tbs.qend, tbs.ps, tbs.pe, tbs.indel, tbs.path_at,
                tbs.n_path, tbs.path),
               _node_arrays(graph),
               (ref.occ_ptr, ref.occ_step, ref.step_rev, ref.step_off), ref.length, K, items)
    live = np.flatnonzero(items[:, 0] >= FORWARD)          # candidate windows to realign
    it = items[live]
    size = (it[:, 6] - it[:, 5]) + (it[:, 2] - it[:, 1])
    ops_at = np.zeros(len(live) + 1, np.int64)
    np.cumsum(size, out=ops_at[1:])
    ops = np.zeros(int(ops_at[-1]), np.uint8)
    rea_live = np.zeros((len(live), 7), np.int64)
    if len(live):
        _realign(it, live // K, rflat, roff, ref.seq, COMPLEMENT_CODE, sc.match, sc.mismatch,
                 sc.gap_open, sc.gap_extend, ops_at, ops, rea_live)
    ops, ops_at = _realign_wider(it, live // K, (rflat, roff), ref, sc, tbs.score, ops,
                                 ops_at[:-1], rea_live)
    # per read, the candidate with the best realigned score (ties: the heaviest window)
    score = np.full(n * K, np.iinfo(np.int64).min, np.int64)
    score[live] = rea_live[:, 6]
    row = np.full(n * K, -1, np.int64)
    row[live] = np.arange(len(live))
    none = live[rea_live[:, 0] < 0]              # the realignment found nothing there
    score[none] = np.iinfo(np.int64).min
    row[none] = -1
    choice = np.argmax(score.reshape(n, K), axis=1) if n else np.zeros(0, np.int64)
    half = np.maximum((items[np.arange(n) * K, 6] - items[np.arange(n) * K, 5]) // 2, 1)
    start = np.full(n * K, -(1 << 40), np.int64)
    start[live] = rea_live[:, 1]
    lo = np.zeros(n * K, np.int64)               # the read bases each candidate aligns
    hi = np.zeros(n * K, np.int64)
    lo[live], hi[live] = _read_span(it, rea_live, (roff[1:] - roff[:-1])[live // K])
    joint = np.full(n, -1, np.int64)             # the mates' margins where chosen together
    if model is not None:
        end = start.copy()
        end[live] += _ref_span(ops, ops_at, rea_live[:, 0], rea_live[:, 0] >= 0)
        pair_pick(score.reshape(n, K), (items[:, 0] == FORWARD).reshape(n, K),
                  start.reshape(n, K), end.reshape(n, K), lo.reshape(n, K), hi.reshape(n, K),
                  half, items[::K, 7] > 0, model, sc.match, sc.mismatch, choice, joint)
    pick = np.arange(n) * K + choice
    place = items[pick]
    got = row[pick]
    first = items[np.arange(n) * K, 0]
    place[:, 0] = np.where(got >= 0, items[pick, 0], np.minimum(first, OFF_PATH))
    rea = np.zeros((n, 7), np.int64)
    rea[got >= 0] = rea_live[got[got >= 0]]
    ops_at_live = ops_at
    ops_at = (np.where(got >= 0, ops_at[np.maximum(got, 0)], 0) if len(ops_at)
              else np.zeros(n, np.int64))           # (no candidate in the whole batch)
    # the runner-up elsewhere on the path (a start at least half the read part away): the
    # path repeats what the graph keeps once (a collapsed repeat): MAPQ is capped by it
    # (and aligning at least half the bases the chosen one does: not another part of the
    # read, as the far side of an SV is)
    far = np.abs(start - np.repeat(start[pick], K)) >= np.repeat(half, K)
    far &= _same_part(lo, hi, pick)
    low = np.iinfo(np.int64).min
    other = np.where(far & (row >= 0), score, low).reshape(n, K)
    second = other.max(axis=1) if n else np.zeros(0, np.int64)
    has2 = (got >= 0) & (second > low)          # (no runner-up: no cap; never best - min)
    margin = np.full(n, np.iinfo(np.int64).max, np.int64)
    margin[has2] = score[pick][has2] - second[has2]
    as_score = np.zeros(n * K, np.int64)
    as_score[live] = rea_live[:, 2]
    supp, supp_margin = _supplementary(lo, hi, score, as_score,
                                       np.where(got >= 0, pick, -1), sc.match)
    sj = Surjected(place, rea, ops, ops_at, tbs, margin, joint)
    sj.supp = Supplementary(np.where(supp >= 0, row[np.maximum(supp, 0)], -1), supp_margin,
                            it, rea_live, ops_at_live)
    return sj


class Supplementary:
    """A batch's supplementary alignments (:func:`_supplementary`): ``row[r]`` the
    candidate of read ``r`` (-1: none), ``margin[r]``; ``status``/``rea``/``ops_at`` of
    every candidate (their ops are the batch's :class:`Surjected` ops)."""

    def __init__(self, row, margin, it, rea, ops_at):
        self.row, self.margin = row, margin
        self.status, self.rea, self.ops_at = it[:, 0], rea, ops_at
        self.reads = np.flatnonzero(row >= 0)


class Surjected:
    """What :func:`surject_batch` found, per read: ``status`` (NONE, OFF_PATH, FORWARD,
    REVERSE), ``pos`` (0-based start on the path, -1 unmapped), ``end`` (end-exclusive),
    ``score`` (AS), ``nm``, ``margin``, ``pair_margin``; the column ops for the formatter."""

    def __init__(self, place, rea, ops, ops_at, tbs, margin=None, pair_margin=None):
        self.place, self.rea, self.ops, self.ops_at, self.tbs = place, rea, ops, ops_at, tbs
        #: the chosen candidate's score less the best one elsewhere on the path (a
        #: repeat the path holds twice; int64 max: none)
        self.margin = (np.full(len(place), np.iinfo(np.int64).max, np.int64)
                       if margin is None else margin)
        #: a mate's pair score less the best combination placing it elsewhere on the path
        #: (:mod:`s2g.sam.pairing`; -1: not chosen together)
        self.pair_margin = (np.full(len(place), -1, np.int64) if pair_margin is None
                            else pair_margin)
        self.status = place[:, 0]
        self.mapped = self.status >= FORWARD
        self.reverse = self.status == REVERSE
        self.pos = np.where(self.mapped, rea[:, 1], -1)
        ref_span = _ref_span(ops, ops_at, rea[:, 0], self.mapped)
        self.end = np.where(self.mapped, rea[:, 1] + ref_span, -1)
        self.score = rea[:, 2]
        self.nm = rea[:, 3]


@numba.njit(**NJIT)
def _ref_span_kernel(ops, ops_at, ncol, mapped, out):
    for r in range(len(mapped)):
        if mapped[r]:
            s = 0
            for k in range(ops_at[r], ops_at[r] + ncol[r]):
                if ops[k] != OP_INS:
                    s += 1
            out[r] = s


def _ref_span(ops, ops_at, ncol, mapped):
    out = np.zeros(len(mapped), np.int64)
    if len(mapped):
        _ref_span_kernel(ops, ops_at, ncol, mapped, out)
    return out
