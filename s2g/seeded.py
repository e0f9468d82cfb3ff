"""Seeded alignment: syncmer seeds -> chains -> column windows -> exact DP in each window.

Full-graph DP costs (graph columns x read length) per read, whatever the graph's size;
on a 100 Mbp graph that is seconds per read even at the GPU kernel's 3,000 GCUPS. Like
every practical graph mapper (vg giraffe, GraphAligner, minigraph) s2g seeds first and
runs DP only near the seeds; unlike them, the DP inside a candidate region stays exact:
**the reported alignment is the exact optimum over every walk inside the window it
names** (:mod:`s2g.window`), and a read's answer is the best of its windows.

Per read (all compiled, in parallel over reads: :func:`_candidates`):

1. *Seeds*: the read's closed syncmers (:mod:`s2g.index`, same k and s) looked up in the
   index; k-mers with more than ``max_occ`` graph positions are skipped (repeats) and
   counted.
2. *Chains*: anchors (read position, column) sorted by column; colinear chaining as in
   minimap2 (each anchor extends the best of the previous ``CHAIN_LOOKBACK`` anchors that
   precede it on both axes; gain ``min(dq, dc, k)``; gaps cost ``0.01 k |dc - dq| +
   0.5 log2 |dc - dq|`` when the read loses bases, only the log term when the graph
   does: a walk that skips a bubble's other branch advances more columns than read
   bases). Chains are taken best first, each anchor once.
3. *Windows*: a chain from (q0, c0) to (q1, c1) becomes the column range from the
   lowest column within walk distance ``q0 + 1 + pad`` upstream of ``c0`` to the highest
   within ``m - q1 + pad`` downstream of ``c1`` (``pad = 16 + m / 8`` for indels; walk
   distance in bases, by a bounded Dijkstra over the nodes, :func:`_reach`): every walk
   the read's flanks can follow from the chain's ends lies inside, whatever bubbles the
   topological order puts between its columns. Capped at ``max_window`` columns (at
   least 8 m). Overlapping windows merge. At most ``max_cand`` windows per read, best chains first, and only
   chains scoring at least ``min_chain`` (default: two anchors' worth).

Then the exact DP runs in every window (the ``simd`` CPU kernel's ``align_windows``, the
GPU's :func:`s2g.gpu_traceback.run_windows`, or :func:`s2g.window.align_windows_ref`: one
contract), the best window is the read's alignment (ties:
the smaller end column), and the traceback recomputes it restricted to the window.

MAPQ (GAF column 12) compares the best score ``s1`` with the other windows' scores
``s2``: a score difference of one mismatch (``a + b``) is the evidence a sequencing
error gives, worth ``MAPQ_PER_MISMATCH`` phred units, so ``MAPQ = min(60, round(-10
log10(sum_i 10^(-c d_i) / (1 + sum_i ...))))`` with ``d_i = (s1 - s2_i) / (a + b)``.
Reads whose skipped (over-frequent) seeds outnumber the anchors of their best chain
(their other copies were not examined) get at most ``MAPQ_REPEAT_CAP``. Measured
calibration: README.md ("Seeded alignment").
"""
from __future__ import annotations

import heapq
import math
import time

import numba
import numpy as np

from ._numba import NJIT, PARALLEL
from .index import hash64, is_closed_syncmer, lookup
from .result import BatchResult
from .scoring import NEG_INF
from .window import check_mode

#: most windows DP'd per read
MAX_CAND = 5
#: anchors considered as predecessors in chaining
CHAIN_LOOKBACK = 50
#: k-mers with more graph positions than this are skipped as repeats
MAX_OCC = 200
#: widest window (columns) for a read of m bases: max(MAX_WINDOW, 8 m)
MAX_WINDOW = 100_000
MAPQ_PER_MISMATCH = 20.0
MAPQ_MAX = 60
MAPQ_REPEAT_CAP = 3
#: candidate record fields (float64 columns of the per-read candidate table)
C_LO, C_HI, C_SCORE, C_ANCHORS = 0, 1, 2, 3


@numba.njit(**NJIT)
def read_syncmers(q, k, s):
    """Closed syncmers of read codes ``q``: (hashes, position of each k-mer's last base)."""
    m = len(q)
    kmask = (np.uint64(1) << np.uint64(2 * k)) - np.uint64(1)
    hs = np.empty(max(m - k + 1, 0), np.uint64)
    ps = np.empty(max(m - k + 1, 0), np.int64)
    n = 0
    x = np.uint64(0)
    ln = 0
    for i in range(m):
        b = q[i]
        if b > 3:
            ln = 0
            x = np.uint64(0)
            continue
        x = ((x << np.uint64(2)) | np.uint64(b)) & kmask
        ln += 1
        if ln >= k and is_closed_syncmer(x, k, s):
            hs[n] = hash64(x, kmask)
            ps[n] = i
            n += 1
    return hs[:n], ps[:n]


@numba.njit(**NJIT)
def _anchors(q, keys, kcols, starts, shift, k, s, max_occ):
    """Anchors (column, read position) of read ``q``, sorted; and the count of skipped seeds."""
    hs, ps = read_syncmers(q, k, s)
    n = 0
    skipped = 0
    lo_at = np.full(len(hs), -1, np.int64)
    hi_at = np.full(len(hs), -1, np.int64)
    for t in range(len(hs)):
        x, y = lookup(keys, starts, shift, hs[t])
        if y > x:
            if y - x > max_occ:
                skipped += 1
            else:
                lo_at[t] = x
                hi_at[t] = y
                n += y - x
    ac = np.empty(n, np.int64)
    aq = np.empty(n, np.int64)
    p = 0
    for t in range(len(hs)):
        x = lo_at[t]
        if x < 0:
            continue
        for u in range(x, hi_at[t]):
            ac[p] = kcols[u]
            aq[p] = ps[t]
            p += 1
    order = np.argsort(ac * np.int64(1 << 24) + aq) if n < (1 << 20) else np.argsort(ac)
    return ac[order], aq[order], skipped


@numba.njit(**NJIT)
def _chain(ac, aq, k, max_skip, max_ins):
    """Best colinear chaining score ending at each anchor, and the predecessor."""
    n = len(ac)
    f = np.empty(n, np.float64)
    pred = np.full(n, -1, np.int64)
    for i in range(n):
        best = float(k)
        bp = -1
        for j in range(i - 1, max(-1, i - 1 - CHAIN_LOOKBACK), -1):
            dc = ac[i] - ac[j]
            dq = aq[i] - aq[j]
            if dq <= 0 or dc <= 0:
                continue
            d = dc - dq
            if d > max_skip or -d > max_ins:
                continue
            gain = min(dq, dc, k)
            ad = abs(d)
            pen = 0.0
            if ad > 0:
                pen = 0.5 * math.log2(ad + 1.0)
                if d < 0:
                    pen += 0.01 * k * ad
            sc = f[j] + gain - pen
            if sc > best:
                best = sc
                bp = j
        f[i] = best
        pred[i] = bp
    return f, pred


@numba.njit(**NJIT)
def _reach(c, dist, node_start, ptr, idx, forward):
    """The lowest (``forward=False``: walking predecessors) or highest column whose walk
    distance from column ``c`` (both ends counted) is at most ``dist`` bases."""
    v = np.searchsorted(node_start, c, side="right") - 1
    if forward:
        room = node_start[v + 1] - 1 - c              # bases after c inside v
        if room + 1 >= dist:
            return c + dist - 1
    else:
        room = c - node_start[v]
        if room + 1 >= dist:
            return c - dist + 1
    best = node_start[v + 1] - 1 if forward else node_start[v]
    # heap of (bases used so far, node); a node is entered at its first (last) base
    heap = [(np.int64(room + 1), np.int64(v))]
    seen = {np.int64(v): np.int64(room + 1)}
    while len(heap) > 0:
        d, u = heapq.heappop(heap)
        if seen[u] < d:
            continue
        for t in range(ptr[u], ptr[u + 1]):
            w = np.int64(idx[t])
            ln = np.int64(node_start[w + 1] - node_start[w])
            if d + ln >= dist:                        # the walk ends inside w
                col = node_start[w] + (dist - d) - 1 if forward else node_start[w + 1] - (dist - d)
            else:
                col = node_start[w + 1] - 1 if forward else node_start[w]
                nd = np.int64(d + ln)
                if w not in seen or nd < seen[w]:
                    seen[w] = nd
                    heapq.heappush(heap, (nd, w))
            if forward:
                best = max(best, col)
            else:
                best = min(best, col)
    return best


@numba.njit(**NJIT)
def _read_candidates(q, keys, kcols, starts, shift, k, s, max_occ, max_cand, min_chain, max_window,
                     node_start, pred_ptr, pred_idx, succ_ptr, succ_idx, out, stats):
    """Windows of one read into ``out`` (max_cand x 4: lo, hi, chain score, anchors), best
    chain first, overlapping windows merged; returns how many. ``stats``: seeds skipped,
    anchors."""
    m = len(q)
    ac, aq, skipped = _anchors(q, keys, kcols, starts, shift, k, s, max_occ)
    stats[0] = skipped
    stats[1] = len(ac)
    n = len(ac)
    if n == 0:
        return 0
    max_skip = max(max_window, 8 * m)
    f, pred = _chain(ac, aq, k, max_skip, m // 4 + 16)
    order = np.argsort(-f)
    used = np.zeros(n, np.bool_)
    nc = 0
    pad = 16 + m // 8
    width_cap = max(max_window, 8 * m)
    for t in range(n):
        i = order[t]
        if used[i]:
            continue
        if f[i] < min_chain or nc == max_cand:
            break
        # walk back to the chain's first anchor (stop at an anchor of an earlier chain)
        j = i
        cnt = 1
        used[i] = True
        while pred[j] >= 0 and not used[pred[j]]:
            j = pred[j]
            used[j] = True
            cnt += 1
        sc = f[i] - (f[pred[j]] if pred[j] >= 0 else 0.0)
        if sc < min_chain:
            continue
        q0, c0, q1, c1 = aq[j], ac[j], aq[i], ac[i]
        lo = _reach(c0, q0 + 1 + pad, node_start, pred_ptr, pred_idx, False)
        hi = _reach(c1, m - q1 + pad, node_start, succ_ptr, succ_idx, True) + 1
        if hi - lo > width_cap:          # a chain across a huge bubble: keep its middle
            mid = (lo + hi) // 2
            lo = mid - width_cap // 2
            hi = lo + width_cap
        lo = max(0, lo)
        hi = min(node_start[-1], hi)
        # merge into an overlapping window
        merged = False
        for x in range(nc):
            if lo < out[x, C_HI] and out[x, C_LO] < hi:
                out[x, C_LO] = min(out[x, C_LO], lo)
                out[x, C_HI] = max(out[x, C_HI], hi)
                out[x, C_ANCHORS] += cnt
                merged = True
                break
        if not merged:
            out[nc, C_LO] = lo
            out[nc, C_HI] = hi
            out[nc, C_SCORE] = sc
            out[nc, C_ANCHORS] = cnt
            nc += 1
    return nc


@numba.njit(**PARALLEL)
def _candidates(codes, offs, keys, kcols, starts, shift, k, s, max_occ, max_cand, min_chain, max_window,
                node_start, pred_ptr, pred_idx, succ_ptr, succ_idx):
    n = len(offs) - 1
    cand = np.zeros((n, max_cand, 4), np.float64)
    ncand = np.zeros(n, np.int64)
    stats = np.zeros((n, 2), np.int64)
    for r in numba.prange(n):
        q = codes[offs[r]:offs[r + 1]]
        if len(q) == 0:
            continue
        ncand[r] = _read_candidates(q, keys, kcols, starts, shift, k, s, max_occ, max_cand, min_chain,
                                    max_window, node_start, pred_ptr, pred_idx, succ_ptr,
                                    succ_idx, cand[r], stats[r])
    return cand, ncand, stats


@numba.njit(**NJIT)
def _secondaries(ncand, t_score, first, best_t, ratio, most):
    """(read, task) of each read's secondary alignments: its other windows scoring at
    least ``ratio`` x the best, best first, at most ``most`` per read."""
    rr = []
    tt = []
    for r in range(len(ncand)):
        bt = best_t[r]
        if bt < 0:
            continue
        cand = []
        for t in range(first[r], first[r] + ncand[r]):
            if t != bt and t_score[t] > NEG_INF and t_score[t] >= ratio * t_score[bt]:
                cand.append((-t_score[t], t))
        cand.sort()
        for x in range(min(most, len(cand))):
            rr.append(r)
            tt.append(cand[x][1])
    out_r = np.empty(len(rr), np.int64)
    out_t = np.empty(len(tt), np.int64)
    for x in range(len(rr)):
        out_r[x] = rr[x]
        out_t[x] = tt[x]
    return out_r, out_t


@numba.njit(**NJIT)
def _pick(ncand, t_score, t_ei, t_ej, t_lo, first, match_mis, per_mm, skipped, anchors_best,
          repeat_cap):
    """Best window per read (ties: smaller end column), its lower bound, and MAPQ."""
    n = len(ncand)
    score = np.full(n, NEG_INF, np.int64)
    ei = np.full(n, -1, np.int64)
    ej = np.full(n, -1, np.int64)
    lo = np.zeros(n, np.int64)
    mapq = np.zeros(n, np.int64)
    best_t = np.full(n, -1, np.int64)
    for r in range(n):
        bt = -1
        for t in range(first[r], first[r] + ncand[r]):
            if t_score[t] <= NEG_INF:
                continue
            if bt < 0 or t_score[t] > t_score[bt] or (t_score[t] == t_score[bt]
                                                       and t_ej[t] < t_ej[bt]):
                bt = t
        if bt < 0:
            continue
        best_t[r] = bt
        score[r], ei[r], ej[r], lo[r] = t_score[bt], t_ei[bt], t_ej[bt], t_lo[bt]
        s1 = t_score[bt]
        tot = 0.0
        for t in range(first[r], first[r] + ncand[r]):
            if t == bt or t_score[t] <= NEG_INF:
                continue
            d = (s1 - t_score[t]) / match_mis
            tot += 10.0 ** (-per_mm * d / 10.0)
        if tot > 0:
            q = -10.0 * math.log10(tot / (1.0 + tot))
        else:
            q = 1e9
        q = min(float(MAPQ_MAX), q)
        if skipped[r] > 0 and skipped[r] >= anchors_best[r]:
            q = min(q, float(repeat_cap))
        mapq[r] = int(q + 0.5)
    return score, ei, ej, lo, mapq, best_t


class SeededAligner:
    """Seeded alignment of read batches against one graph and its index.

    ``window_kernel(graph, codes, offsets, task_read, task_lo, task_hi, scoring, mode)``
    returns (score, end_i, end_j) per window (default: ``s2g.variants.simd.align_windows``;
    :func:`s2g.window.align_windows_ref` is the scalar reference).
    ``n_secondary``: up to this many secondary alignments per read (its other windows
    scoring at least ``secondary_ratio`` x the best; MAPQ 0, GAF tag ``tp:A:S``, as
    minimap2's ``-N``/``-p``), in ``res.secondary`` (a BatchResult whose ``owner`` gives
    each row's read).
    ``unseeded``: ``"unmapped"`` (a no-hit line) or ``"full"`` (full-graph DP with
    ``full_module``, MAPQ 255) for reads without a window. ``device="gpu"``: the windows
    run on the GPU (:func:`s2g.gpu_traceback.run_windows`: one thread per window finds the
    best cell and walks back from it in the same pass; windows too large for it run on the
    CPU), and the chosen windows' walks become the tracebacks.
    """

    def __init__(self, graph, index, scoring, mode, max_occ=MAX_OCC, max_cand=MAX_CAND,
                 min_chain=None, max_window=MAX_WINDOW, window_kernel=None,
                 unseeded="unmapped", full_module=None, device="cpu", n_secondary=0,
                 secondary_ratio=0.8):
        check_mode(mode)
        self.graph, self.index, self.scoring, self.mode = graph, index, scoring, mode
        self.max_occ, self.max_cand, self.max_window = int(max_occ), int(max_cand), int(max_window)
        self.min_chain = float(2 * index.k if min_chain is None else min_chain)
        if window_kernel is None:
            from .variants import simd       # the SIMD kernel's windows (exact, ~4x the ref)
            window_kernel = simd.align_windows
        self.window_kernel = window_kernel
        if unseeded not in ("unmapped", "full"):
            raise ValueError(f"unseeded must be 'unmapped' or 'full', got {unseeded!r}")
        self.unseeded = unseeded
        self.full_module = full_module
        if device not in ("cpu", "gpu"):
            raise ValueError(f"device must be 'cpu' or 'gpu', got {device!r}")
        self.device = device
        self.n_secondary, self.secondary_ratio = int(n_secondary), float(secondary_ratio)
        self.totals = {"reads": 0, "windows": 0, "window_cells": 0, "unseeded": 0,
                       "windows left to the CPU": 0,
                       "seconds seeds+chains": 0.0, "seconds windows": 0.0}
        self._succ = None

    def candidates(self, reads):
        """(cand [n, max_cand, 4], ncand [n], stats [n, 2]) for a ReadBatch."""
        ix, g = self.index, self.graph
        if self._succ is None:
            order = np.argsort(g.pred_idx, kind="stable")
            ptr = np.zeros(g.n_nodes + 1, np.int64)
            np.cumsum(np.bincount(g.pred_idx, minlength=g.n_nodes), out=ptr[1:])
            dst = np.repeat(np.arange(g.n_nodes, dtype=np.int32), np.diff(g.pred_ptr))
            self._succ = (ptr, dst[order])
        starts, shift = ix.buckets
        return _candidates(reads.codes_flat, np.asarray(reads.offsets, np.int64), ix.keys,
                           ix.cols, starts, shift, ix.k, ix.s, self.max_occ, self.max_cand,
                           self.min_chain, self.max_window, g.node_start, g.pred_ptr,
                           g.pred_idx, self._succ[0], self._succ[1])

    def seed_batches(self, batches):
        """The batches of ``batches``, each with its :meth:`candidates` attached (``_seeds``):
        run in a reader thread (s2g align does), the seeding of the next batches overlaps
        the windows of this one, and :meth:`align_batch` takes them from there."""
        for reads in batches:
            t0 = time.perf_counter()
            reads._seeds = self.candidates(reads)
            self.totals["seconds seeds+chains"] += time.perf_counter() - t0
            yield reads

    def align_batch(self, reads, cand=None) -> BatchResult:
        """Scores, end cells, MAPQ (``res.mapq``) and window bounds (``res.col_lo``);
        ``cand``: the batch's :meth:`candidates`, when already computed (default: those
        :meth:`seed_batches` attached, taken off the batch)."""
        if cand is None:
            cand = reads.__dict__.pop("_seeds", None)
        if cand is None:
            t0 = time.perf_counter()
            cand = self.candidates(reads)
            self.totals["seconds seeds+chains"] += time.perf_counter() - t0
        cand, ncand, stats = cand
        t1 = time.perf_counter()
        n = reads.n_reads
        first = np.zeros(n, np.int64)
        np.cumsum(ncand[:-1], out=first[1:])
        total = int(ncand.sum())
        sel = np.arange(self.max_cand)[None, :] < ncand[:, None]
        t_read = np.repeat(np.arange(n, dtype=np.int64), ncand)
        t_lo = cand[:, :, C_LO][sel].astype(np.int64)
        t_hi = cand[:, :, C_HI][sel].astype(np.int64)
        wr = None
        if self.device == "gpu":
            from . import gpu_traceback
            wr = gpu_traceback.run_windows(self.graph, reads, self.scoring, self.mode, t_read,
                                           t_lo, t_hi)
            ts, tei, tej = wr.score.copy(), wr.end_i.copy(), wr.end_j.copy()
            left = np.nonzero(~wr.on_gpu)[0]
            self.totals["windows left to the CPU"] += len(left)
            if len(left):
                ts[left], tei[left], tej[left] = self.window_kernel(
                    self.graph, reads.codes_flat, reads.offsets, t_read[left], t_lo[left],
                    t_hi[left], self.scoring, self.mode)
        else:
            ts, tei, tej = self.window_kernel(self.graph, reads.codes_flat, reads.offsets,
                                              t_read, t_lo, t_hi, self.scoring, self.mode)
        self.totals["seconds windows"] += time.perf_counter() - t1
        a, b, _, _ = self.scoring.as_tuple()
        anchors_best = np.where(ncand > 0, cand[:, 0, C_ANCHORS], 0).astype(np.int64)
        score, ei, ej, lo, mapq, best_t = _pick(ncand, ts, tei, tej, t_lo, first, float(a + b),
                                           MAPQ_PER_MISMATCH, stats[:, 0], anchors_best,
                                           MAPQ_REPEAT_CAP)
        lens = reads.lengths()
        self.totals["reads"] += n
        self.totals["windows"] += total
        self.totals["window_cells"] += int(((t_hi - t_lo) * lens[t_read]).sum()) if total else 0
        res = BatchResult(reads.names, lens, score, ei, ej)
        res.mapq = mapq
        res.col_lo = lo
        res.n_windows = ncand
        res.best_task = best_t
        res.window_run = wr
        res.secondary = None
        if self.n_secondary > 0:
            sr, st = _secondaries(ncand, ts, first, best_t, self.secondary_ratio,
                                  self.n_secondary)
            sec = BatchResult([reads.names[r] for r in sr.tolist()], lens[sr], ts[st], tei[st],
                              tej[st])
            sec.mapq = np.zeros(len(sr), np.int64)
            sec.col_lo = t_lo[st]
            sec.owner = sr
            sec.task = st
            res.secondary = sec
        no_seed = np.nonzero((ncand == 0) & (lens > 0))[0]
        self.totals["unseeded"] += len(no_seed)
        if len(no_seed) and self.unseeded == "full":
            sub = reads.subset(no_seed)
            full = self.full_module.align_batch(self.graph, sub, self.scoring, self.mode,
                                                traceback=False)
            res.score[no_seed] = full.score
            res.end_i[no_seed] = full.end_i
            res.end_j[no_seed] = full.end_j
            res.mapq[no_seed] = 255
            res.col_lo[no_seed] = 0
        return res

    def traceback(self, reads, res, max_cells=None, threads=None):
        """Path and CIGAR of every aligned read, restricted to its window; GPU windows
        reuse the walk the kernel already made."""
        from .traceback import MAX_CELLS, FlatTracebacks, traceback_batch
        flat = idx = None
        wr = getattr(res, "window_run", None)
        sec = getattr(res, "secondary", None)
        if sec is not None and len(sec):
            sub = reads.subset(sec.owner)
            sflat = sidx = None
            if wr is not None:
                sflat = FlatTracebacks(len(sec))
                g = wr.on_gpu[sec.task]
                if g.any():
                    wr.add_tracebacks(self.graph, sec.task[g], np.nonzero(g)[0], sflat,
                                      np.asarray(sec.end_i, np.int64))
                sidx = np.nonzero(~g)[0].astype(np.int64)
            traceback_batch(self.graph, sub, self.scoring, self.mode, sec,
                            max_cells=max_cells or MAX_CELLS, threads=threads,
                            col_lo=sec.col_lo, flat=sflat, idx=sidx)
        if wr is not None:
            flat = FlatTracebacks(len(res))
            aligned = np.nonzero(res.aligned())[0]
            bt = res.best_task[aligned]
            gpu = np.zeros(len(aligned), bool)
            gpu[bt >= 0] = wr.on_gpu[bt[bt >= 0]]
            if gpu.any():
                wr.add_tracebacks(self.graph, bt[gpu], aligned[gpu], flat,
                                  np.asarray(res.end_i, np.int64))
            idx = aligned[~gpu].astype(np.int64)
            res.window_run = None                  # the walks are no longer needed
        traceback_batch(self.graph, reads, self.scoring, self.mode, res,
                        max_cells=max_cells or MAX_CELLS, threads=threads, col_lo=res.col_lo,
                        flat=flat, idx=idx)
        return res
