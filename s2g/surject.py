"""Surjection: graph alignments projected onto one reference path, written as SAM/BAM.

A read's graph alignment (:class:`~s2g.result.Traceback`: a walk of oriented nodes, the
walk offsets ``path_start``/``path_end``, the read clip ``qstart``/``qend``) is placed on
a reference path (a GFA ``P`` or ``W`` line, :class:`RefPath`) in three steps, all in
Numba over the whole batch:

1. **Placement** (:func:`_place`, parallel over reads). Every walk node that overlaps
   the aligned part of the walk and whose segment occurs on the path votes, once per
   occurrence, for a strand (the node in the step's orientation: forward; in the
   opposite one: reverse) and an offset between walk and path coordinates, weighted by
   the bases it covers. The heaviest cluster of votes of one strand whose offsets lie
   within ``16 + indels + aligned_walk_len/4`` of each other is the first candidate;
   up to :data:`CANDIDATES` windows with at least half its weight follow (a path through
   collapsed repeats, LPA's KIV-2 copies, repeats the read's segments; each candidate is
   realigned and the best score wins, ties to the heaviest; a repeat closer than the
   tolerance widens one window instead). Each window is the cluster's span around the
   aligned walk, plus a
   pad of ``8 + I + D`` bases (the graph CIGAR's inserted and deleted bases), clamped to
   the path. A walk with no node on the path: unmapped (FLAG 4) with its graph placement
   in tags ``XG:Z`` (GAF path) and ``XP:i`` (path start).
2. **Realignment** (:func:`_realign`, parallel over reads, int32). The aligned part of
   the read (``qstart..qend``, reverse-complemented on the reverse strand) is aligned
   globally in the read and with free end gaps in the reference window (glocal) with the
   same affine scoring as the graph DP (match ``+a``, mismatch/N ``-b``, gap of ``k``
   ``-(o + k*e)``), in a diagonal band that holds the graph alignment's diagonals (the
   expected start and end diagonals +- the pad). On a linear stretch of the path the
   result is the best alignment of that read part to the window, so AS equals the graph
   score there. Tie order in the traceback: match/mismatch, then insertion, then
   deletion; the leftmost end column of the last row.
3. **Formatting** (:func:`_format_sam`, sequential Numba, like :mod:`s2g.gaf`): SAM
   lines with ``M``/``I``/``D`` CIGARs, ``S`` for the clipped read ends, ``NM:i``,
   ``MD:Z``, ``AS:i`` (the realigned score), MAPQ from the graph alignment (255 when the
   aligner did not compute one), ``XG:Z``/``XP:i``. Reverse-strand records carry FLAG
   16 and the reverse-complemented SEQ/QUAL, as SAM wants.

Exactly one primary record per input read, in input order (secondary graph alignments
are not surjected). Pairs: :meth:`SamWriter.write_batch` with ``pairs`` (2n reads
interleaved, mate 1 of pair k at 2k) sets FLAG 1/2/8/32/64/128, RNEXT/PNEXT/TLEN and
places an unmapped mate at its mate's position (SAM 1.6, section 2.4).

BAM goes through pysam (imported only then: ``pip install 's2g[bam]'``); ``sort``
writes a coordinate-sorted BAM (``pysam.sort``), ``index`` its ``.bai``.
"""
from __future__ import annotations

import io
import os
import re
import shlex
import shutil
import tempfile

import numba
import numpy as np

from ._numba import NJIT, PARALLEL
from .errors import S2GError
from .graph_core import COMPLEMENT_CODE
from .scoring import Scoring

#: placement status of a read (what :func:`_place` writes)
NONE, OFF_PATH, FORWARD, REVERSE = 0, 1, 2, 3
#: candidate windows realigned per read (a path repeating the read's segments, as LPA's
#: KIV-2 copies do, votes for several places; the best realigned score wins) ...
CANDIDATES = 16
#: ... each with at least 1/MIN_SHARE of the heaviest window's votes
MIN_SHARE = 2
#: realignment column ops (what :func:`_realign` writes)
OP_MATCH, OP_MISMATCH, OP_INS, OP_DEL = 0, 1, 2, 3

_NEG = np.int32(-(1 << 29))          # int32 "minus infinity" (as s2g.scoring.NEG_INF)
_W_NAME = re.compile(r"^[^#]*#[^#]*#[^#]*:\d+-\d+$")          # W lines: sample#hap#seq:start-end
_REF_LIKE = re.compile(r"(?i)^ref|grch|hg\d\d|chm13|t2t")


# ------------------------------------------------------------------ the reference path

class RefPath:
    """The reference path of ``graph`` (loaded with ``keep_paths=True``) as arrays.

    ``name``: a path's exact name; a W line also by a prefix ending before a ``#`` or the
    ``:start-end`` (``CHM13#0#chr6``) when that names one walk. None: the only path, else
    the first reference-looking P line (``ref``, ``GRCh38``, ``CHM13``, ...), else the
    first path. ``seq``: the path's bases (codes 0-4) in the path's orientation;
    ``step_seg``/``step_rev``/``step_off``: each step's segment, orientation and offset on
    the path (a segment may occur more than once); ``occ_ptr``/``occ_step``: the steps of
    each segment (CSR).
    """

    def __init__(self, graph, name=None):
        paths = getattr(graph, "paths", None) or {}
        if not paths:
            raise S2GError(f"{_source(graph)}has no paths (P or W lines) to surject onto; "
                           "SAM/BAM output needs a reference path (a graph loaded with "
                           "keep_paths=True)")
        self.name = choose_path(paths, name, _source(graph))
        steps = np.asarray(paths[self.name], np.int64).reshape(-1, 2)
        if len(steps) == 0:
            raise S2GError(f"{_source(graph)}path {self.name!r} is empty")
        self.step_seg = np.ascontiguousarray(steps[:, 0], np.int64)
        self.step_rev = np.ascontiguousarray(steps[:, 1], np.uint8)
        seg_len = np.asarray(graph.seg_len, np.int64)
        self.step_off = np.zeros(len(steps) + 1, np.int64)
        np.cumsum(seg_len[self.step_seg], out=self.step_off[1:])
        self.length = int(self.step_off[-1])
        n_seg = len(seg_len)
        # one node of each segment, and its bases as the forward strand (any copy of an
        # unrolled cyclic graph will do: they hold the same bases)
        node_seg = np.asarray(graph.node_seg, np.int64)
        seg_node = np.full(n_seg, -1, np.int64)
        seg_node[node_seg[::-1]] = np.arange(len(node_seg) - 1, -1, -1)
        if (seg_node[self.step_seg] < 0).any():
            bad = int(self.step_seg[np.flatnonzero(seg_node[self.step_seg] < 0)[0]])
            raise S2GError(f"{_source(graph)}path {self.name!r} uses segment "
                           f"{graph.seg_names[bad]!r}, which is not in the graph as loaded")
        self.seq = _path_bases(self.step_seg, self.step_rev, self.step_off, seg_node,
                               np.asarray(graph.node_start, np.int64),
                               np.asarray(graph.node_rev, np.uint8), graph.base, COMPLEMENT_CODE)
        order = np.argsort(self.step_seg, kind="stable")
        self.occ_step = order.astype(np.int64)
        self.occ_ptr = np.zeros(n_seg + 1, np.int64)
        np.cumsum(np.bincount(self.step_seg, minlength=n_seg), out=self.occ_ptr[1:])

    def sequence(self, start=0, end=None) -> str:
        """The path's bases ``[start, end)`` as text (tests, debugging)."""
        return np.frombuffer(b"ACGTN", np.uint8)[self.seq[start:end]].tobytes().decode()


def _source(graph):
    src = getattr(graph, "source", "")
    return f"{src}: " if src else ""


def choose_path(paths, name, where=""):
    """The name of the path to surject onto (see :class:`RefPath`)."""
    names = list(paths)
    if name is None:
        if len(names) == 1:
            return names[0]
        p_lines = [x for x in names if not _W_NAME.match(x)]
        w_lines = [x for x in names if _W_NAME.match(x)]
        for x in p_lines + w_lines:
            if _REF_LIKE.search(x):
                return x
        return names[0]
    if name in paths:
        return name
    hits = [x for x in names if x.startswith(name + "#") or x.startswith(name + ":")]
    if len(hits) == 1:
        return hits[0]
    shown = ", ".join(names[:10]) + (f", ... ({len(names)} in all)" if len(names) > 10 else "")
    if hits:
        shown = ", ".join(hits[:10]) + (f", ... ({len(hits)})" if len(hits) > 10 else "")
        raise S2GError(f"{where}reference path {name!r} is ambiguous: it is a prefix of "
                       f"{len(hits)} paths ({shown}); give the full name")
    raise S2GError(f"{where}no path named {name!r}; the graph's paths: {shown}")


@numba.njit(**NJIT)
def _path_bases(step_seg, step_rev, step_off, seg_node, node_start, node_rev, base, comp):
    out = np.empty(step_off[-1], np.uint8)
    for i in range(len(step_seg)):
        v = seg_node[step_seg[i]]
        a = node_start[v]
        ln = node_start[v + 1] - a
        o = step_off[i]
        # the node's bases are in the node's orientation; flip when it differs from the step's
        if node_rev[v] == step_rev[i]:
            for k in range(ln):
                out[o + k] = base[a + k]
        else:
            for k in range(ln):
                out[o + k] = comp[base[a + ln - 1 - k]]
    return out


# ------------------------------------------------------------------------ placement

@numba.njit(**PARALLEL)
def _place(has, qstart, qend, ps, pe, indel, path_at, n_path, path, node_start, node_seg,
           node_rev, occ_ptr, occ_step, step_rev, step_off, plen, K, out):
    """Per read ``r``, up to ``K`` candidate windows, heaviest first: ``out[r*K + c]`` =
    (status, window start, window end, band low diagonal, band high diagonal, qstart,
    qend), the diagonals ``j - i`` (window column minus row of the read part, oriented as
    it aligns to the path) that the realignment computes; status NONE for no window
    (OFF_PATH in the first when the walk has no node on the path)."""
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
                    if step_rev[i] == node_rev[v]:
                        # walk x -> path x + shift
                        key[c] = step_off[i] - w
                    else:
                        # walk x -> path shift - 1 - x; reverse votes sort after forward ones
                        key[c] = (step_off[i] + ln + w) + (np.int64(1) << 42)
                    wt[c] = ov
                    c += 1
            w += ln
        order = np.argsort(key)
        tol = 16 + indel[r] + (b - a) // 4
        pad = 8 + indel[r]
        m = qend[r] - qstart[r]
        used = np.zeros(cnt, np.bool_)
        first = np.int64(0)
        for c in range(K):
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
    ``read_of[t]`` (see the module doc). ``ops[ops_at[t]:]``: its alignment columns (OP_*), ``out[t]`` =
    (number of columns, 0-based start on the path, score, NM, left clip, right clip)."""
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
                    if h < _NEG:
                        h = _NEG
                    hc[j] = h
                    hleft = h
                    tb[row + (j - i - dlo)] = flag
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
            if hp[j] > best:
                best = hp[j]
                jb = j
        # traceback (columns written backwards, then reversed in place)
        at = ops_at[r]
        i, j = m, jb
        state = 0
        c = 0
        nm = 0
        while i > 0:
            f = tb[i * bw + (j - i - dlo)]
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
        out[r, 2] = best
        out[r, 3] = nm
        out[r, 4] = clip_l
        out[r, 5] = clip_r


# ----------------------------------------------------------------------- formatting

@numba.njit(inline="always", **NJIT)
def _put(buf, p, src, a, b):
    for k in range(a, b):
        buf[p] = src[k]
        p += 1
    return p


@numba.njit(**NJIT)
def _put_int(buf, p, x):
    if x < 0:
        buf[p] = 45
        p += 1
        x = -x
    nd = 1
    y = x
    while y >= 10:
        y //= 10
        nd += 1
    for k in range(nd):
        buf[p + nd - 1 - k] = 48 + x % 10
        x //= 10
    return p + nd


@numba.njit(**NJIT)
def _put_tag(buf, p, t0, t1, ty):      # "\t" t0 t1 ":" ty ":"
    buf[p] = 9
    buf[p + 1] = t0
    buf[p + 2] = t1
    buf[p + 3] = 58
    buf[p + 4] = ty
    buf[p + 5] = 58
    return p + 6


@numba.njit(**NJIT)
def _put_run(buf, p, ln, op):
    p = _put_int(buf, p, ln)
    buf[p] = op
    return p + 1


@numba.njit(**NJIT)
def _format_sam(names, rows, seqs, aln, graph_tags, lits):
    """The batch's SAM lines as bytes (sequential: see s2g.gaf.format_gaf on why).

    ``names``: (newline-separated name bytes, each name's newline index); ``rows``:
    int64[n, 10] (flag, 1-based pos, mapq, rname set, rnext: 0 '*' 1 '=', pnext, tlen,
    mapped, AS, NM); ``seqs``: (read codes, offsets, quality bytes, has quality);
    ``aln``: (ops, ops_at, realign out, reference codes); ``graph_tags``: (has a graph
    placement, path_at, n_path, path, path start, node step bytes, offsets);
    ``lits``: (reference name bytes, letters ACGTN, complement letters TGCAN)."""
    nblob, nend = names
    rflat, roff, qual, has_q = seqs
    ops, ops_at, rea, ref = aln
    g_has, path_at, n_path, path, gps, vblob, voff = graph_tags
    rname, letters, cletters = lits
    n = len(nend)
    cap = 1 << 16
    buf = np.empty(cap, np.uint8)
    p = 0
    for r in range(n):
        qlen = roff[r + 1] - roff[r]
        na = nend[r - 1] + 1 if r else 0
        ncol = rea[r, 0] if rows[r, 7] else 0
        bound = (nend[r] - na) + 2 * qlen + 20 * ncol + len(rname) + 16 * 24 + 64
        if g_has[r]:
            for t in range(path_at[r], path_at[r] + n_path[r]):
                bound += voff[path[t] + 1] - voff[path[t]]
        if p + bound > len(buf):
            nb = np.empty(max(2 * len(buf), p + bound), np.uint8)
            nb[:p] = buf[:p]
            buf = nb
        flag = rows[r, 0]
        rev = (flag & 16) != 0
        p = _put(buf, p, nblob, na, nend[r])
        buf[p] = 9
        p = _put_int(buf, p + 1, flag)
        buf[p] = 9
        p += 1
        if rows[r, 3]:
            p = _put(buf, p, rname, 0, len(rname))
        else:
            buf[p] = 42
            p += 1
        buf[p] = 9
        p = _put_int(buf, p + 1, rows[r, 1])
        buf[p] = 9
        p = _put_int(buf, p + 1, rows[r, 2])
        buf[p] = 9
        p += 1
        if rows[r, 7]:
            # CIGAR: S, runs of M (match + mismatch) / I / D, S
            at = ops_at[r]
            if rea[r, 4] > 0:
                p = _put_run(buf, p, rea[r, 4], 83)
            k = 0
            while k < ncol:
                op = ops[at + k]
                cls = 0 if op <= OP_MISMATCH else op
                t = k + 1
                while t < ncol and (0 if ops[at + t] <= OP_MISMATCH else ops[at + t]) == cls:
                    t += 1
                p = _put_run(buf, p, t - k, 77 if cls == 0 else (73 if cls == OP_INS else 68))
                k = t
            if rea[r, 5] > 0:
                p = _put_run(buf, p, rea[r, 5], 83)
        else:
            buf[p] = 42
            p += 1
        buf[p] = 9
        p += 1
        if rows[r, 4] == 1:
            buf[p] = 61
            p += 1
        else:
            buf[p] = 42
            p += 1
        buf[p] = 9
        p = _put_int(buf, p + 1, rows[r, 5])
        buf[p] = 9
        p = _put_int(buf, p + 1, rows[r, 6])
        buf[p] = 9
        p += 1
        # SEQ / QUAL: as given, or reverse-complemented on the reverse strand
        s0 = roff[r]
        if qlen == 0:
            buf[p] = 42
            buf[p + 1] = 9
            buf[p + 2] = 42
            p += 3
        else:
            if rev:
                for k in range(qlen):
                    buf[p + k] = cletters[rflat[s0 + qlen - 1 - k]]
            else:
                for k in range(qlen):
                    buf[p + k] = letters[rflat[s0 + k]]
            p += qlen
            buf[p] = 9
            p += 1
            if has_q:
                if rev:
                    for k in range(qlen):
                        buf[p + k] = qual[s0 + qlen - 1 - k]
                else:
                    for k in range(qlen):
                        buf[p + k] = qual[s0 + k]
                p += qlen
            else:
                buf[p] = 42
                p += 1
        if rows[r, 7]:
            p = _put_tag(buf, p, 78, 77, 105)            # NM:i:
            p = _put_int(buf, p, rows[r, 9])
            p = _put_tag(buf, p, 77, 68, 90)             # MD:Z:
            at = ops_at[r]
            rp = rea[r, 1]
            cnt = 0
            k = 0
            while k < ncol:
                op = ops[at + k]
                if op == OP_MATCH:
                    cnt += 1
                    rp += 1
                    k += 1
                elif op == OP_MISMATCH:
                    p = _put_int(buf, p, cnt)
                    cnt = 0
                    buf[p] = letters[ref[rp]]
                    p += 1
                    rp += 1
                    k += 1
                elif op == OP_INS:
                    k += 1
                else:
                    p = _put_int(buf, p, cnt)
                    cnt = 0
                    buf[p] = 94                          # '^'
                    p += 1
                    while k < ncol and ops[at + k] == OP_DEL:
                        buf[p] = letters[ref[rp]]
                        p += 1
                        rp += 1
                        k += 1
            p = _put_int(buf, p, cnt)
            p = _put_tag(buf, p, 65, 83, 105)            # AS:i:
            p = _put_int(buf, p, rows[r, 8])
        if g_has[r]:
            p = _put_tag(buf, p, 88, 71, 90)             # XG:Z: the graph path
            for t in range(path_at[r], path_at[r] + n_path[r]):
                v = path[t]
                p = _put(buf, p, vblob, voff[v], voff[v + 1])
            p = _put_tag(buf, p, 88, 80, 105)            # XP:i: its path start
            p = _put_int(buf, p, gps[r])
        buf[p] = 10
        p += 1
    return buf[:p]


_LETTERS = np.frombuffer(b"ACGTN", np.uint8)
_CLETTERS = np.frombuffer(b"TGCAN", np.uint8)


# ----------------------------------------------------------------- batch surjection

class _Tracebacks:
    """A batch's graph alignments as arrays, from a BatchResult's FlatTracebacks or from
    :class:`~s2g.result.Traceback` objects (per-read results, as the GAF writer takes)."""

    def __init__(self, res, n):
        from .result import BatchResult
        from .scoring import NEG_INF
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
            return
        rows = list(res)
        if len(rows) != n:
            raise S2GError(f"SAM writer: {len(rows)} results for {n} reads")
        self.has = np.zeros(n, np.bool_)
        self.qstart, self.qend, self.ps, self.pe, self.indel, self.path_at, self.n_path = (
            np.zeros(n, np.int64) for _ in range(7))
        self.mapq = np.zeros(n, np.int64)
        nodes = []
        at = 0
        for r, x in enumerate(rows):
            self.mapq[r] = x.mapq
            tb = x.traceback
            self.path_at[r] = at
            if not x.aligned or tb is None:
                continue
            self.has[r] = True
            self.qstart[r], self.qend[r] = tb.qstart, tb.qend
            self.ps[r], self.pe[r] = tb.path_start, tb.path_end
            self.indel[r] = sum(int(k) for k, op in re.findall(r"(\d+)([ID])", tb.cigar))
            self.n_path[r] = len(tb.path)
            nodes.extend(tb.path)
            at += len(tb.path)
        self.path = np.asarray(nodes, np.int64)


def surject_batch(graph, ref: RefPath, reads, res, scoring: Scoring | None = None):
    """Place and realign every read of ``reads`` (a :class:`~s2g.reads.ReadBatch`) from
    its graph alignment ``res`` (a BatchResult, or per-read AlignResults); returns a
    :class:`Surjected` (arrays, one row per read)."""
    sc = scoring or Scoring()
    n = reads.n_reads
    tbs = _Tracebacks(res, n)
    rflat = np.asarray(reads.codes_flat, np.uint8)
    roff = np.asarray(reads.offsets, np.int64)
    K = CANDIDATES
    items = np.zeros((n * K, 7), np.int64)
    if n:
        _place(tbs.has, tbs.qstart, tbs.qend, tbs.ps, tbs.pe, tbs.indel, tbs.path_at,
               tbs.n_path, tbs.path, np.asarray(graph.node_start, np.int64),
               np.asarray(graph.node_seg, np.int64), np.asarray(graph.node_rev, np.uint8),
               ref.occ_ptr, ref.occ_step, ref.step_rev, ref.step_off, ref.length, K, items)
    live = np.flatnonzero(items[:, 0] >= FORWARD)          # candidate windows to realign
    it = items[live]
    size = (it[:, 6] - it[:, 5]) + (it[:, 2] - it[:, 1])
    ops_at = np.zeros(len(live) + 1, np.int64)
    np.cumsum(size, out=ops_at[1:])
    ops = np.zeros(int(ops_at[-1]), np.uint8)
    rea_live = np.zeros((len(live), 6), np.int64)
    if len(live):
        _realign(it, live // K, rflat, roff, ref.seq, COMPLEMENT_CODE, sc.match, sc.mismatch,
                 sc.gap_open, sc.gap_extend, ops_at, ops, rea_live)
    # per read, the candidate with the best realigned score (ties: the heaviest window)
    score = np.full(n * K, np.iinfo(np.int64).min, np.int64)
    score[live] = rea_live[:, 2]
    row = np.full(n * K, -1, np.int64)
    row[live] = np.arange(len(live))
    pick = np.arange(n) * K + (np.argmax(score.reshape(n, K), axis=1) if n else 0)
    place = items[pick]
    got = row[pick]
    place[:, 0] = np.where(got >= 0, items[pick, 0], items[np.arange(n) * K, 0])
    rea = np.zeros((n, 6), np.int64)
    rea[got >= 0] = rea_live[got[got >= 0]]
    ops_at = np.where(got >= 0, ops_at[np.maximum(got, 0)], 0)
    return Surjected(place, rea, ops, ops_at, tbs)


class Surjected:
    """What :func:`surject_batch` found, per read: ``status`` (NONE, OFF_PATH, FORWARD,
    REVERSE), ``pos`` (0-based start on the path, -1 unmapped), ``end`` (end-exclusive),
    ``score`` (AS), ``nm``; the column ops for the formatter."""

    def __init__(self, place, rea, ops, ops_at, tbs):
        self.place, self.rea, self.ops, self.ops_at, self.tbs = place, rea, ops, ops_at, tbs
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


# ------------------------------------------------------------------------- writer

_MATE = re.compile(r"/[12]$")


def _pysam():
    try:
        import pysam
    except ImportError:
        raise S2GError("BAM output needs pysam: pip install 's2g[bam]'") from None
    return pysam


class SamWriter:
    """SAM or BAM records of graph alignments surjected onto ``ref`` (a :class:`RefPath`
    or a path name for :class:`RefPath`).

    ``path_or_fh``: a file name, or a text file object (SAM) / binary or text file object
    (BAM: written whole at :meth:`close`); ``fmt``: ``"sam"`` or ``"bam"``; ``argv``: the
    command line for ``@PG CL``; ``sort``: coordinate-sorted output (``pysam.sort``: BAM,
    or SAM when ``fmt="sam"``); ``index``: also ``PATH.bai`` (sorted BAM written to a
    file name only); ``scoring``: the alignment's :class:`~s2g.scoring.Scoring` (the
    realignment's, reported as AS); ``threads``: pysam's compression/sort threads.
    Use as a context manager or call :meth:`close`.
    """

    def __init__(self, path_or_fh, graph, ref=None, fmt="sam", argv=None, sort=False,
                 index=False, scoring: Scoring | None = None, threads: int = 1):
        from . import __version__
        if fmt not in ("sam", "bam"):
            raise S2GError(f"unknown output format {fmt!r}; choose sam or bam")
        if index and not (sort and fmt == "bam"):
            raise S2GError("an index (.bai) needs a coordinate-sorted BAM (sort the output)")
        self.graph = graph
        self.ref = ref if isinstance(ref, RefPath) else RefPath(graph, ref)
        self.fmt, self.sort, self.index = fmt, sort, index
        self.scoring = scoring or Scoring()
        self.threads = max(1, int(threads))
        self.n_written = 0
        is_name = isinstance(path_or_fh, (str, os.PathLike))
        if index and not is_name:
            raise S2GError("an index (.bai) needs the BAM written to a file name")
        self._target = os.fspath(path_or_fh) if is_name else path_or_fh
        cl = " ".join(shlex.quote(x) for x in argv) if argv else None
        self.header_text = self._header(cl, __version__)
        self._rname = self.ref.name.encode("utf-8", "surrogateescape")
        self._tmpdir = None
        self._bam = None
        self._fh = None
        self._own_fh = False
        if self.fmt == "bam" or sort:
            pysam = _pysam()
            self._pysam = pysam
        if self.fmt == "sam" and not sort:
            if is_name:
                self._fh = open(self._target, "w", encoding="utf-8", errors="surrogateescape")
                self._own_fh = True
            else:
                self._fh = self._target
            self._fh.write(self.header_text)
        else:
            # records go to an unsorted BAM first: the output itself, or a temporary file
            # to sort or to copy to a file object at the end
            direct = self.fmt == "bam" and not sort and is_name
            if direct:
                self._bam_path = self._target
            else:
                base = os.path.dirname(os.path.abspath(self._target)) if is_name else None
                self._tmpdir = tempfile.mkdtemp(prefix=".s2g-sam-", dir=base)
                self._bam_path = os.path.join(self._tmpdir, "unsorted.bam")
            self._header_obj = pysam.AlignmentHeader.from_text(self.header_text)
            self._bam = pysam.AlignmentFile(self._bam_path, "wb", header=self._header_obj,
                                            threads=self.threads)

    def _header(self, cl, version):
        lines = ["@HD\tVN:1.6\tSO:" + ("coordinate" if self.sort else "unsorted"),
                 f"@SQ\tSN:{self.ref.name}\tLN:{self.ref.length}"]
        pg = f"@PG\tID:s2g\tPN:s2g\tVN:{version}"
        if cl:
            pg += "\tCL:" + re.sub(r"[\t\n\r]", " ", cl)
        lines.append(pg)
        return "\n".join(lines) + "\n"

    # ---------------------------------------------------------------- records
    def sam_bytes(self, reads, res, pairs=None, graph=None) -> bytes:
        """The SAM records (no header) of one batch, as :meth:`write_batch` writes them."""
        n = reads.n_reads
        graph = self.graph if graph is None else graph
        sj = surject_batch(graph, self.ref, reads, res, self.scoring)
        names = list(reads.names)
        rows = np.zeros((n, 10), np.int64)
        flag = np.where(sj.mapped, 0, 4) | np.where(sj.reverse, 16, 0)
        pos1 = np.where(sj.mapped, sj.pos + 1, 0)
        rname = sj.mapped.copy()
        rnext = np.zeros(n, np.int64)
        pnext = np.zeros(n, np.int64)
        tlen = np.zeros(n, np.int64)
        if pairs is not None:
            proper = np.asarray(getattr(pairs, "proper", pairs), np.bool_).reshape(-1)
            if n != 2 * len(proper):
                raise S2GError(f"SAM writer: a paired batch holds 2 reads per pair; got {n} "
                               f"reads for {len(proper)} pairs")
            names = [_MATE.sub("", x) for x in names]
            me = np.arange(n)
            mate = me ^ 1
            m_me, m_mate = sj.mapped, sj.mapped[mate]
            flag = flag | 1 | np.where(me % 2 == 0, 64, 128)
            flag |= np.where(~m_mate, 8, 0)
            flag |= np.where(m_mate & sj.reverse[mate], 32, 0)
            flag |= np.where(np.repeat(proper, 2) & m_me & m_mate, 2, 0)
            # an unmapped read whose mate is mapped sits at its mate's position
            placed = ~m_me & m_mate
            pos1 = np.where(placed, pos1[mate], pos1)
            rname = m_me | m_mate
            rnext = rname.astype(np.int64)
            pnext = np.where(rname, pos1[mate], 0)
            both = m_me & m_mate
            left = np.minimum(sj.pos, sj.pos[mate])
            right = np.maximum(sj.end, sj.end[mate])
            first = (sj.pos < sj.pos[mate]) | ((sj.pos == sj.pos[mate]) & (me % 2 == 0))
            tlen = np.where(both, np.where(first, 1, -1) * (right - left), 0)
        rows[:, 0] = flag
        rows[:, 1] = pos1
        rows[:, 2] = np.where(sj.mapped, np.clip(sj.tbs.mapq, 0, 255), 0)
        rows[:, 3] = rname
        rows[:, 4] = rnext
        rows[:, 5] = pnext
        rows[:, 6] = tlen
        rows[:, 7] = sj.mapped
        rows[:, 8] = sj.score
        rows[:, 9] = sj.nm
        if n == 0:
            return b""
        nblob = np.frombuffer(("\n".join(names) + "\n").encode("utf-8", "surrogateescape"),
                              np.uint8)
        nend = np.flatnonzero(nblob == 10).astype(np.int64)
        qual, has_q = _qualities(reads)
        from .gaf import _oriented_blob
        vblob, voff = _oriented_blob(graph)
        out = _format_sam((nblob, nend), rows,
                          (np.asarray(reads.codes_flat, np.uint8),
                           np.asarray(reads.offsets, np.int64), qual, has_q),
                          (sj.ops, sj.ops_at, sj.rea, self.ref.seq),
                          (sj.tbs.has, sj.tbs.path_at, sj.tbs.n_path, sj.tbs.path, sj.tbs.ps,
                           vblob, voff),
                          (np.frombuffer(self._rname, np.uint8), _LETTERS, _CLETTERS))
        return out.tobytes()

    def write_batch(self, reads, res, pairs=None, graph=None) -> int:
        """Write one record per read of ``reads`` (a :class:`~s2g.reads.ReadBatch`), in
        order, from ``res`` (its BatchResult, or per-read AlignResults). ``pairs``: None
        (single-end), or for a batch of 2n reads interleaved (mate 1 of pair k at 2k, mate 2
        at 2k+1) n booleans (or an object with ``.proper``): which pairs are proper.
        ``graph``: the FlatGraph this batch was aligned to when it is not the writer's (a
        cyclic graph unrolled per batch: node ids differ, segments and paths do not).
        Returns the number of records."""
        return self.write_records(self.sam_bytes(reads, res, pairs, graph), reads.n_reads)

    def write_records(self, data: bytes, n: int) -> int:
        """Write :meth:`sam_bytes`' records of ``n`` reads (made in another thread)."""
        if self._fh is not None:
            self._fh.write(data.decode("utf-8", "surrogateescape"))
        elif data:
            from_string = self._pysam.AlignedSegment.fromstring
            hdr = self._header_obj
            write = self._bam.write
            for line in data.decode("utf-8", "surrogateescape").split("\n")[:-1]:
                write(from_string(line, hdr))
        self.n_written += n
        return n

    def close(self):
        """Finish the output: close the file, sort and index when asked."""
        try:
            if self._fh is not None:
                if self._own_fh:
                    self._fh.close()
                else:
                    self._fh.flush()
                self._fh = None
            if self._bam is not None:
                self._bam.close()
                self._bam = None
                self._finish()
        finally:
            if self._tmpdir is not None:
                shutil.rmtree(self._tmpdir, ignore_errors=True)
                self._tmpdir = None

    def _finish(self):
        pysam = self._pysam
        src = self._bam_path
        if self._tmpdir is None:
            return                                        # unsorted BAM written in place
        is_name = isinstance(self._target, str)
        out = self._target if is_name else os.path.join(self._tmpdir, "out")
        if self.sort:
            args = ["-o", out, "-O", "bam" if self.fmt == "bam" else "sam",
                    "-T", os.path.join(self._tmpdir, "sort")]
            if self.threads > 1:
                args += ["-@", str(self.threads)]
            pysam.sort(*args, src)
        else:
            out = src
        if self.index:
            pysam.index(out)
        if not is_name:
            fh = self._target
            raw = getattr(fh, "buffer", None)        # a text stream over bytes (stdout)
            with open(out, "rb") as f:
                if raw is not None:
                    fh.flush()
                    shutil.copyfileobj(f, raw)
                    raw.flush()
                elif isinstance(fh, io.TextIOBase):   # StringIO: SAM text only
                    fh.write(f.read().decode("utf-8", "surrogateescape"))
                else:
                    shutil.copyfileobj(f, fh)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def index_bam(path):
    """Write ``path.bai`` for a coordinate-sorted BAM (``pysam.index``)."""
    _pysam().index(os.fspath(path))


def _qualities(reads):
    """``(flat ASCII qualities aligned with the codes, True)`` when the batch carries
    qualities (attribute ``quals`` or ``qualities``: a uint8 array as long as the codes, or
    one str/bytes per read), else ``(empty, False)``: QUAL is then ``*``."""
    q = getattr(reads, "quals", None)
    if q is None:
        q = getattr(reads, "qualities", None)
    if q is None:
        return np.zeros(0, np.uint8), False
    if isinstance(q, np.ndarray):
        if len(q) != len(reads.codes_flat):
            raise S2GError("read qualities do not match the bases")
        return np.ascontiguousarray(q, np.uint8), True
    parts = [x.encode() if isinstance(x, str) else bytes(x) for x in q]
    flat = np.frombuffer(b"".join(parts), np.uint8)
    if len(flat) != len(reads.codes_flat):
        raise S2GError("read qualities do not match the bases")
    return flat, True


def write_sam(path_or_fh, graph, reads, res, ref=None, fmt="sam", pairs=None, **kw) -> int:
    """One batch in one call: :class:`SamWriter` + :meth:`~SamWriter.write_batch`."""
    with SamWriter(path_or_fh, graph, ref, fmt=fmt, **kw) as w:
        return w.write_batch(reads, res, pairs)
