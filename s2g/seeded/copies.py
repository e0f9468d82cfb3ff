"""MAPQ against other copies inside the read's own window.

Windows of chains that share a node merge into one window (two overlapping windows would
report one alignment twice), so a read whose chains fall on two nearby copies of a repeat
(C4's tandem copies; a segmental duplication within a read length or two) gets one window
holding both, and MAPQ, which compares windows, saw one candidate: a read fitting both
copies equally got MAPQ 60 (bench.seeded on C4, 300 x 5 kbp at 10% errors: 8 of 281
reads with MAPQ >= 30 off their true walk, each scoring exactly its true walk's score).

After the traceback, each read whose best window merged two or more chains scoring at
least ``CUT_RATIO`` x its best chain is aligned once more in that window with the columns
its alignment uses taken out (:func:`masked_pieces`): the best alignment there that
shares no base with the reported one (another copy; a long bubble's other allele). It
counts in MAPQ as another window would (:func:`s2g.seeded.mapq.add_competitor`). The
window is first bounded (:func:`s2g.seeded.windows.dropped_by_bound`: where the masked
window's longest walk or q-gram bound is ``MAPQ_FAR`` mismatches below the best score it
adds nothing and is not aligned), and the pass stops ``MAPQ_FAR`` mismatches below the
best (``floor``). Knob ``copies_mapq`` (on). A mate whose MAPQ is its pair's
(:class:`s2g.seeded.pairs.PairedAligner`, ``res.pair_moved``) counts the copy in its pair
MAPQ instead (:mod:`s2g.seeded.pair_copies`).
"""
from __future__ import annotations

import numba
import numpy as np

from .._numba import NJIT
from ..config import settings
from ..scoring import NEG_INF
from ..window import WindowGraph
from .mapq import MAPQ_FAR, MAPQ_PER_MISMATCH, add_competitor
from .windows import dropped_by_bound


@numba.njit(**NJIT)
def masked_pieces(reads, tasks, piece_at, p_node, p_lo, p_hi, path_at, n_path, path, geo,
                  node_start):
    """The pieces of window ``tasks[x]`` less the bases read ``reads[x]``'s alignment
    covers (its graph path ``path[path_at[r]:...]`` from in-path offset ``geo[r, 1]`` to
    ``geo[r, 2]``, end exclusive): each piece keeps what lies before and after the covered
    part of its node. Returns (piece_at, p_node, p_lo, p_hi) of the masked windows, one
    per read, pieces by (node, lo) as in the window's."""
    n = len(reads)
    cap = 0
    for x in range(n):
        cap += 2 * (piece_at[tasks[x] + 1] - piece_at[tasks[x]])
    o_node = np.empty(cap, np.int32)
    o_lo = np.empty(cap, np.int32)
    o_hi = np.empty(cap, np.int32)
    o_at = np.zeros(n + 1, np.int64)
    k = 0
    for x in range(n):
        r, t = reads[x], tasks[x]
        a, np_ = path_at[r], n_path[r]
        c0, c1 = geo[r, 1], geo[r, 2]          # covered: path offsets [c0, c1)
        # walk nodes ascend (node ids are topological), as the window's pieces do
        w = 0
        cum = 0                                 # path offset where path[a + w] starts
        for z in range(piece_at[t], piece_at[t + 1]):
            v = p_node[z]
            while w < np_ and path[a + w] < v:
                cum += node_start[path[a + w] + 1] - node_start[path[a + w]]
                w += 1
            lo, hi = np.int64(p_lo[z]), np.int64(p_hi[z])
            if w < np_ and path[a + w] == v:
                ln = node_start[v + 1] - node_start[v]
                u0 = max(np.int64(0), c0 - cum)          # covered in-node [u0, u1]
                u1 = min(ln, c1 - cum) - 1
                if u0 <= u1:
                    if lo < u0:
                        o_node[k], o_lo[k], o_hi[k] = v, lo, min(hi, u0 - 1)
                        k += 1
                    if hi > u1:
                        o_node[k], o_lo[k], o_hi[k] = v, max(lo, u1 + 1), hi
                        k += 1
                    continue
            o_node[k], o_lo[k], o_hi[k] = v, lo, hi
            k += 1
        o_at[x + 1] = k
    return o_at, o_node[:k], o_lo[:k], o_hi[:k]


def rescore(sa, reads, res, wg, flat):
    """Lower ``res.mapq`` of the reads whose best window merged several strong chains
    (``res.copies`` >= 2) by the best alignment in that window sharing no base with
    theirs (module doc). ``sa``: the SeededAligner, ``wg``: the batch's window graph,
    ``flat``: the batch's tracebacks on the graph. Mates placed by their pair go to
    :func:`.pair_copies.apply`, or wait for the rescued mates' copies where mates were
    rescued (``res.rescue``: :func:`rescue_copies`). Returns the number of windows aligned."""
    terms = getattr(res, "mapq_terms", None)
    copies = getattr(res, "copies", None)
    if terms is None or copies is None or flat is None or len(copies) == 0:
        return 0
    bt = res.best_task
    sel = np.nonzero((copies >= 2) & (bt >= 0) & _live(res) & flat.has
                     & (flat.n_path > 0))[0]
    if not len(sel):
        return 0
    s2, e2, c2, n = _copy_scores(sa, reads, res, wg, sel, bt[sel], flat, sa.n_secondary > 0)
    a, b, _, _ = sa.scoring.as_tuple()
    tots, caps = terms
    paired = getattr(res, "pair_moved", None)   # mates whose MAPQ is their pair's
    one = np.ones(len(sel), np.bool_) if paired is None else ~paired[sel]
    add_competitor(sel[one], s2[one], res.score, tots, caps, res.mapq, float(a + b),
                   MAPQ_PER_MISMATCH)
    if not one.all():
        part = (sel[~one], s2[~one], e2[~one], c2[~one])
        if getattr(res, "rescue", None) is not None:
            res.copies_pending = part           # counted with the rescued mates' copies
        else:
            from .pair_copies import apply
            apply(sa, res, *part)
    res.copy_score = np.full(len(res.score), NEG_INF, np.int64)
    res.copy_score[sel] = s2                    # the other copy's score (NEG_INF: none)
    return n


def _live(res):
    """Reads whose MAPQ a copy can still lower: above 0, or a pair-placed mate whose mate's
    is (a copy lowers the mate's too: :func:`.pair_copies.pair_copy_q`)."""
    live = np.asarray(res.mapq) > 0
    paired = getattr(res, "pair_moved", None)
    if paired is not None and len(live) % 2 == 0:
        live = live | (paired & live[np.arange(len(live)) ^ 1])
    return live


def _copy_scores(sa, reads, res, wg, sel, tasks, flat, secondaries):
    """(score, end row, graph end column, windows aligned) of the best alignment of each
    read ``sel[x]`` in its window ``tasks[x]`` of ``wg`` less the bases its alignment in
    ``flat`` covers (NEG_INF, -1, -1: none within ``MAPQ_FAR`` mismatches of its score);
    ``secondaries``: also reported as such (``-N``, :func:`_secondaries`)."""
    at, node, lo, hi = masked_pieces(sel, tasks, wg.piece_at, wg.p_node, wg.p_lo, wg.p_hi,
                                     flat.path_at, flat.n_path, flat.path, flat.geo,
                                     sa.graph.node_start)
    a, b, _, _ = sa.scoring.as_tuple()
    keep = np.diff(at) > 0                      # nothing left: no other copy there
    s2 = np.full(len(sel), NEG_INF, np.int64)
    e2 = np.full(len(sel), -1, np.int64)        # the copy's end row and graph column
    c2 = np.full(len(sel), -1, np.int64)
    n = 0
    if keep.any():
        sub = np.nonzero(keep)[0]
        # the empty windows hold no pieces: the others' pieces are all of them
        mwg = WindowGraph(sa.graph, np.concatenate(([0], at[1:][keep])), node, lo, hi)
        t_read = sel[sub].astype(np.int64)
        top = res.score[t_read]
        todo = ~dropped_by_bound(mwg, reads, np.ones(len(sub), np.bool_), t_read, top,
                                 sa.scoring)
        x = np.nonzero(todo)[0]
        n = len(x)
        if n:
            sc, ei, ej = _align_masked(sa, reads, mwg, t_read, todo,
                                       top - MAPQ_FAR * (a + b))
            s2[sub[x]] = sc
            e2[sub[x]] = ei
            c2[sub[x]] = np.where(ej >= 0, mwg.columns(np.maximum(ej, 0)), -1)
            if secondaries:
                _secondaries(sa, reads, res, mwg, x, (t_read[x], sc, ei, ej))
        sa._count("windows realigned for copies", n)
    return s2, e2, c2, n


def rescue_copies(sa, reads, res, wg, tasks, rsc, flat):
    """Pair MAPQ of the rescued mates ``rsc`` (:class:`.pairs.PairedAligner`: aligned in
    windows ``tasks`` of its rescue window graph ``wg``, traced into ``flat``) with another
    copy inside their rescue window (it spans the fragment's reach: a tandem repeat there
    is one candidate), as :func:`rescore` finds a window's other copy, counted by
    :func:`.pair_copies.apply` together with the copies of the mates :func:`rescore` left
    waiting (``res.copies_pending``). Returns the number of windows aligned."""
    from .pair_copies import apply
    pend = getattr(res, "copies_pending", None)
    res.copies_pending = None
    n = 0
    parts = [] if pend is None else [pend]
    rsc = np.asarray(rsc, np.int64)
    tasks = np.asarray(tasks, np.int64)
    if getattr(res, "pair_moved", None) is not None and flat is not None and len(rsc):
        ok = res.pair_moved[rsc] & _live(res)[rsc] & flat.has[rsc] & (flat.n_path[rsc] > 0)
        sel, t = rsc[ok], tasks[ok]
        if len(sel):
            s2, e2, c2, n = _copy_scores(sa, reads, res, wg, sel, t, flat, False)
            parts.append((sel, s2, e2, c2))
            if getattr(res, "copy_score", None) is None:
                res.copy_score = np.full(len(res.score), NEG_INF, np.int64)
            res.copy_score[sel] = s2
    if parts:
        apply(sa, res, *(np.concatenate([p[k] for p in parts]) for k in range(4)))
    return n


def _align_masked(sa, reads, mwg, t_read, todo, floor):
    """(score, end row, end column) of the masked windows ``todo`` (a mask over ``mwg``'s
    windows, read ``t_read[t]`` each), stopping at ``floor``: on the GPU where the reads
    ran there (:func:`s2g.trace.gpu.run_windows`; a 30 kbp read's masked window at 10%
    errors took 6.6 s of one host thread, H200) unless the batch has fewer than
    ``copies_gpu_min`` of them (a knob: a few hundred short windows may finish on the CPU
    before the GPU, busy with other threads' kernels, takes them), what it leaves and all
    on the CPU with ``sa.window_kernel``. Scores and end cells are the same on both (exact
    windows, V0's end cell); a window below ``floor``, which some kernels stop at and others
    score, comes back as none (NEG_INF) from all (:func:`s2g.seeded.mapq.add_competitor`
    leaves it out either way; a secondary at ``--secondary-ratio`` could have been one)."""
    x = np.nonzero(todo)[0]
    sc = np.full(len(x), NEG_INF, np.int64)
    ei = np.full(len(x), -1, np.int64)
    ej = np.full(len(x), -1, np.int64)
    left = np.ones(len(x), np.bool_)
    if sa.device == "gpu" and len(x) >= settings().copies_gpu_min:
        from ..trace import gpu
        part = gpu.run_windows(mwg.graph, reads, sa.scoring, sa.mode, t_read, mwg.t_lo,
                               mwg.t_hi, piece_at=mwg.piece_at, only=todo, floor=floor)
        on = part.on_gpu[x]
        sc[on], ei[on], ej[on] = part.score[x][on], part.end_i[x][on], part.end_j[x][on]
        left = ~on
        sa._count("copies windows on the GPU", int(np.count_nonzero(on)))
    if left.any():
        y = x[left]
        kw = {}
        if getattr(sa.window_kernel, "takes_floor", False):
            kw["floor"] = floor[y]
        sc[left], ei[left], ej[left] = sa.window_kernel(
            mwg.graph, reads.codes_flat, reads.offsets, t_read[y], mwg.t_lo[y], mwg.t_hi[y],
            sa.scoring, sa.mode, **kw)
    below = sc < floor[x]
    sc[below], ei[below], ej[below] = NEG_INF, -1, -1
    return sc, ei, ej


def _secondaries(sa, reads, res, mwg, x, got):
    """With ``-N``: the other copy of each read in ``got`` = (reads, scores, end rows,
    end columns of masked tasks ``x`` of ``mwg``) scoring at least ``secondary_ratio`` x
    the best, where the read has fewer than ``n_secondary`` secondaries, traced in its
    masked window and added to ``res.secondary`` (MAPQ 0; rows by read)."""
    from ..result import BatchResult
    from ..trace import MAX_CELLS, FlatTracebacks, traceback_batch
    rd, sc, ei, ej = got
    old = getattr(res, "secondary", None)
    have = np.bincount(np.asarray(old.owner, np.int64), minlength=len(res.score)) \
        if old is not None and len(old) else np.zeros(len(res.score), np.int64)
    ok = (sc > NEG_INF) & (sc >= sa.secondary_ratio * res.score[rd]) & \
        (have[rd] < sa.n_secondary)
    if not ok.any():
        return
    rd, sc, ei, ej, tx = rd[ok], sc[ok], ei[ok], ej[ok], x[ok]
    names = [reads.names[r] for r in rd.tolist()]
    lens = res.lengths[rd]
    tres = BatchResult(names, lens, sc, ei, ej)
    traceback_batch(mwg.graph, reads.subset(rd), sa.scoring, sa.mode, tres,
                    max_cells=MAX_CELLS, col_lo=mwg.t_lo[tx], flat=FlatTracebacks(len(rd)),
                    idx=np.arange(len(rd), dtype=np.int64))
    flat = mwg.map_tracebacks(tres.flat)
    new = BatchResult(names, lens, sc, ei, mwg.columns(ej))
    new.mapq = np.zeros(len(rd), np.int64)
    new.col_lo = mwg.t_lo[tx]
    new.wg_end_j = ej
    new.owner = rd
    new.task = np.full(len(rd), -1, np.int64)          # not a task of the batch's windows
    if old is None or not len(old):
        new.set_flat(flat)
        res.secondary = new
        sa._count("secondaries of copies", len(rd))
        return
    owner = np.concatenate((np.asarray(old.owner, np.int64), rd))
    order = np.argsort(owner, kind="stable")        # a read's windows' first, then its copy
    cat = (lambda a, b: np.concatenate((np.asarray(a), np.asarray(b)))[order])
    names_all = [(list(old.names) + names)[k] for k in order.tolist()]
    out = BatchResult(names_all, cat(old.lengths, lens), cat(old.score, sc),
                      cat(old.end_i, ei), cat(old.end_j, new.end_j))
    out.mapq = np.zeros(len(owner), np.int64)
    out.col_lo = cat(old.col_lo, new.col_lo)
    out.wg_end_j = cat(old.wg_end_j, ej)
    out.owner = owner[order]
    out.task = cat(old.task, new.task)
    out.set_flat(old.flat.stacked(flat, order))
    res.secondary = out
    sa._count("secondaries of copies", len(rd))

