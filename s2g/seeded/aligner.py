"""SeededAligner: seeds, chains and windows of read batches, the exact DP in each window,
the best window per read, its traceback, and the fallbacks for reads without a chain.

The exact DP runs in every window (the ``simd`` CPU kernel's ``align_windows``, the
GPU's :func:`s2g.trace.gpu.run_windows`, or :func:`s2g.window.align_windows_ref`:
one contract), the best window is the read's alignment (ties: the smaller end column,
:func:`s2g.seeded.mapq.pick`), and the traceback recomputes it restricted to the window.
"""
from __future__ import annotations

import threading
import time
from typing import NamedTuple

import numba
import numpy as np

from ..config import settings
from ..variants._devpool import expect_batch
from ..graph_core import successors
from ..pipeline import log_stage
from ..unseeded import FULL_FALLBACK_CELLS, UNSEEDED_MIN_MATCHES
from ..result import BatchResult
from ..scoring import NEG_INF
from ..window import WindowGraph, check_mode
from .chains import MAX_WINDOW, batch_chains
from .mapq import (CUT_RATIO, MAPQ_CUT_CAP, MAPQ_FAR, MAPQ_PER_MISMATCH, MAPQ_REPEAT_CAP, pick,
                   secondaries)
from .seeds import MAX_OCC
from . import copies
from .search import SCRATCH_BYTES, SCRATCH_NODE_BYTES, scratch_pool
from .windows import Windows, dropped_by_bound, window_pieces

#: most windows DP'd per read
MAX_CAND = 5
#: a long read's window is not aligned when a bound on its score is this many mismatches'
#: worth (a + b) below its best chain's window score, and a later window's pass stops there
#: (SeededAligner._windows): it is never picked, and MAPQ leaves out windows that far below
#: the best (:data:`.mapq.MAPQ_FAR`). 200 until 2026-12-05 (a term 0.0 in float64): 30 x 10
#: kbp reads at 10% errors on MHC, the later windows' passes 3.6 -> 1.5 s on one core
DROP_MISMATCHES = MAPQ_FAR
class TaskResults(NamedTuple):
    """Every window's DP result in a batch (task ``t``): score, end cell in the window graph
    (row ``end_i``, column ``end_j``), end column in the graph (``col``), window start
    ``lo``; read ``r``'s windows are tasks ``first[r]:first[r] + ncand[r]`` (``ncand`` 0:
    its windows were replaced by full-graph DP), task ``t``'s read ``read[t]``."""
    score: np.ndarray
    end_i: np.ndarray
    end_j: np.ndarray
    col: np.ndarray
    lo: np.ndarray
    first: np.ndarray
    ncand: np.ndarray
    read: np.ndarray


class SeededAligner:
    """Seeded alignment of read batches against one graph and its index.

    ``window_kernel(graph, codes, offsets, task_read, task_lo, task_hi, scoring, mode)``
    returns (score, end_i, end_j) per window (default: ``s2g.variants.simd.align_windows``;
    :func:`s2g.window.align_windows_ref` is the scalar reference).
    ``n_secondary``: up to this many secondary alignments per read (its other windows
    scoring at least ``secondary_ratio`` x the best; MAPQ 0, GAF tag ``tp:A:S``, as
    minimap2's ``-N``/``-p``), in ``res.secondary`` (a BatchResult whose ``owner`` gives
    each row's read).
    ``unseeded``: what reads without a usable chain (none scoring ``min_chain``) get:
    ``"auto"`` full-graph DP with ``full_module`` (default: ``simd``; with
    ``device="gpu"`` the ``fast`` kernel) (MAPQ 255) where it costs at most
    ``full_cells`` cells a read (default ``FULL_FALLBACK_CELLS``), else the windows
    of their weak chains (one anchor and up; MAPQ <= 3) or, without any anchor, a no-hit
    line (counted in ``totals``); ``"full"``: full-graph DP always; ``"unmapped"``: weak
    windows or a no-hit line, never full-graph DP. ``device="gpu"``: the windows
    run on the GPU (:func:`s2g.trace.gpu.run_windows`: reads up to 768 bases on the
    ``fast`` kernel's window form, best cells only, the chosen window then traced from its
    end cell; longer ones one thread (or block) a window that finds the best cell and walks
    back from it in the same pass; windows too large for the GPU run on the CPU).
    """

    def __init__(self, graph, index, scoring, mode, max_occ=MAX_OCC, max_cand=MAX_CAND,
                 min_chain=None, max_window=MAX_WINDOW, window_kernel=None,
                 unseeded="auto", full_module=None, device="cpu", n_secondary=0,
                 secondary_ratio=0.8, full_cells=None, unseeded_min_score=None):
        check_mode(mode)
        self.graph, self.index, self.scoring, self.mode = graph, index, scoring, mode
        self.max_occ, self.max_cand, self.max_window = int(max_occ), int(max_cand), int(max_window)
        self.min_chain = float(2 * index.k if min_chain is None else min_chain)
        if window_kernel is None:
            from ..variants import simd       # the SIMD kernel's windows (exact, ~4x the ref)
            window_kernel = simd.align_windows
        self.window_kernel = window_kernel
        if unseeded not in ("auto", "unmapped", "full"):
            raise ValueError(f"unseeded must be 'auto', 'unmapped' or 'full', got {unseeded!r}")
        if unseeded != "unmapped" and full_module is None:
            # the device's own full-graph kernel
            if device == "gpu":
                from ..variants import fast as full_module
            else:
                from ..variants import simd as full_module
        self.unseeded = unseeded
        self.full_module = full_module
        if device not in ("cpu", "gpu"):
            raise ValueError(f"device must be 'cpu' or 'gpu', got {device!r}")
        self.device = device
        self.full_cells = FULL_FALLBACK_CELLS if full_cells is None else int(full_cells)
        self.unseeded_min_score = (UNSEEDED_MIN_MATCHES * scoring.match
                                   if unseeded_min_score is None else int(unseeded_min_score))
        self.n_secondary, self.secondary_ratio = int(n_secondary), float(secondary_ratio)
        #: long reads' windows dropped by their bound (:meth:`_windows`); a pairing
        #: wrapper turns it off (every window is a pair candidate)
        self.drop_windows = settings().window_bounds
        #: other copies inside the best window count in MAPQ (s2g.seeded.copies); a
        #: mate placed by its pair counts them in its pair MAPQ (s2g.seeded.pair_copies)
        self.copies_mapq = settings().copies_mapq
        #: --timings' start-up line: method name (``chains``, ``windows_of``,
        #: ``candidates``) -> the ``time.perf_counter()`` its first call in
        #: :meth:`seed_batches` ended
        self.first_at = {}
        self.totals = {"reads": 0, "windows": 0, "window_cells": 0, "unseeded": 0,
                       "unseeded full DP": 0, "unseeded weak windows": 0,
                       "unseeded below min score": 0,
                       "unseeded unaligned": 0, "windows left to the CPU": 0,
                       "windows dropped by bound": 0, "windows dropped by chain": 0,
                       "windows realigned for copies": 0, "secondaries of copies": 0,
                       "copies windows on the GPU": 0,
                       "reads walked at their score": 0, "reads seeded on the CPU at the start": 0,
                       "seconds seeds+chains": 0.0, "seconds windows": 0.0,
                       "seconds CPU windows": 0.0, "seconds copies": 0.0}
        self._totals_lock = threading.Lock()   # the stages' threads count at once
        self._scratch = []        # windows_of's search scratch, kept (search.scratch_pool)
        self._dix = None          # the index on the GPU (chains_gpu.DeviceIndex; False: none)
        #: the first batch's candidates made on the CPU while CUDA started (s2g align:
        #: :class:`s2g.seeded.early.EarlySeeds`), taken by :meth:`seed_batches`
        self.early = None

    def _take_scratch(self, n_work):
        """A :func:`~s2g.seeded.search.scratch_pool` of ``n_work`` workers, kept from an
        earlier batch when one is free (two threads may seed at once: each takes its own)."""
        with self._totals_lock:
            for i, pool in enumerate(self._scratch):
                if pool[0].shape[0] == n_work:
                    return self._scratch.pop(i)
        return scratch_pool(n_work, self.graph.n_nodes)

    def _give_scratch(self, pool):
        with self._totals_lock:
            if not self._scratch:             # one kept: up to SCRATCH_BYTES
                self._scratch.append(pool)

    def _count(self, key, value):
        """``totals[key] += value`` (the seeding and aligning threads count at once)."""
        with self._totals_lock:
            self.totals[key] += value

    def candidates(self, reads) -> Windows:
        """The :class:`Windows` of a ReadBatch: seeds, chains, node-set windows and their
        window graph (:meth:`chains`, then :meth:`windows_of`)."""
        return self.windows_of(reads, self.chains(reads))

    def chains(self, reads):
        """Seeds and chains of a ReadBatch (``batch_chains``' arrays: on the GPU where
        :meth:`_gpu_chains` runs, else on the CPU; from the GPU with knob
        ``gpu_window_search`` a sixth, the chains' window lists: :meth:`windows_of`)."""
        ix = self.index
        starts, shift = ix.buckets
        offs = np.asarray(reads.offsets, np.int64)
        cfg = settings()
        n_way = cfg.corridor_waypoints if reads.max_len >= cfg.corridor_min_len > 0 else 0
        got = self._gpu_chains(reads, offs) if n_way == 0 else None
        if got is None:
            got = batch_chains(
                reads.codes_flat, offs, ix.keys, ix.cols, starts, shift, ix.k, ix.s,
                self.max_occ, 2 * self.max_cand, self.min_chain, self.max_window, n_way,
                cfg.corridor_min_len)
        return got

    def windows_of(self, reads, got) -> Windows:
        """The :class:`Windows` of a ReadBatch from its chains ``got`` (:meth:`chains`)."""
        g, cfg = self.graph, settings()
        offs = np.asarray(reads.offsets, np.int64)
        ch, nch, stats, way, nway = got[:5]
        made = got[5] if len(got) > 5 else None      # the chains' lists (_gpu_chains)
        nch = weak_chains_dropped(ch, nch, cfg.cand_min_pct)
        n = reads.n_reads
        a, _, _, e = self.scoring.as_tuple()
        gr = (g.node_start, g.pred_ptr, g.pred_idx, *successors(g))   # (kept on the graph)
        n_work = max(1, min(numba.get_num_threads(), n,
                            SCRATCH_BYTES // (SCRATCH_NODE_BYTES * max(g.n_nodes, 1))))
        pool = self._take_scratch(n_work)
        if made is None and self.device == "gpu" and cfg.gpu_window_search and n and \
                way.shape[2] == 0 and not self._gpu_loading():
            from . import windows_gpu           # the chains' searches on the GPU
            made = windows_gpu.chain_lists(g, ch, nch, offs, a / e)
        p_node, p_lo, p_hi, info, nwin, cut = window_pieces(
            offs, ch, nch, self.max_cand, a / e, gr, pool,
            (way, nway, bool(cfg.corridor_merge_flanks), made))
        self._give_scratch(pool)
        sel = np.arange(self.max_cand)[None, :] < nwin[:, None]
        piece_at = np.zeros(int(nwin.sum()) + 1, np.int64)
        np.cumsum(info[:, :, 2][sel].astype(np.int64), out=piece_at[1:])
        wg = WindowGraph(g, piece_at, p_node, p_lo, p_hi)
        if self.device == "gpu" and cfg.seed_node_parts and cfg.gpu_window_fast and \
                cfg.gpu_window_tables and n:
            # the window kernel's per-node tables, here (the seeding thread has the time;
            # the align thread, which would make them, sets the pace)
            from ..variants.fast.tables import window_node_parts
            from ..variants.fast.windows import MAX_ROWS
            if int(np.diff(offs).min()) <= MAX_ROWS:
                window_node_parts(wg.graph, wg.piece_at)   # (kept on the graph)
        return Windows(nwin, info, stats, wg, cut)

    def _gpu_chains(self, reads, offs):
        """:func:`batch_chains` on the GPU (:mod:`s2g.seeded.chains_gpu`, knob
        ``gpu_seeds``), or None where it does not run (a CPU aligner, an index the kernels
        do not take, a read of 2^20 anchors)."""
        if self.device != "gpu" or not settings().gpu_seeds:
            return None
        from . import chains_gpu
        if self._dix is None and self._gpu_loading():
            # on the CPU while the kernels load and the index goes up (the same chains)
            self._count("reads seeded on the CPU at the start", len(offs) - 1)
            return None
        t0 = time.perf_counter()
        if self._dix is None:           # (the first call: preload's upload, or waits for it)
            self._dix = chains_gpu.device_index(self.index) if chains_gpu.usable(self.index) \
                else False
            log_stage("device_index", t0, time.perf_counter())
        if self._dix is False:
            return None
        dev = {} if settings().gpu_window_search else None
        t1 = time.perf_counter()
        got = chains_gpu.batch_chains(self._dix, reads.codes_flat, offs, self.max_occ,
                                      2 * self.max_cand, self.min_chain, self.max_window,
                                      dev=dev)
        t2 = time.perf_counter()
        log_stage("gpu_chains", t1, t2)          # (knob stage_log: the first call's parts)
        if got is None or not dev:
            return got
        # the windows' searches right after the chains, on this thread's stream, reading the
        # chains where they are (no upload); every chain's list, weak ones too (unused)
        from . import windows_gpu
        a, _, _, e = self.scoring.as_tuple()
        lists = windows_gpu.chain_lists(self.graph, got[0], got[1], offs, a / e,
                                        on_device=(dev["ch"], dev["nch"]))
        log_stage("chain_lists", t2, time.perf_counter())
        return (*got, lists)

    def _gpu_loading(self) -> bool:
        """Whether the GPU's seeding kernels and index are still loading
        (:func:`.chains_gpu.preload`) and the knob ``early_cpu_seeds`` seeds on the CPU
        meanwhile (the same chains and windows)."""
        if self._dix is not None or not settings().early_cpu_seeds:
            return False
        from . import chains_gpu
        return chains_gpu.preloading()

    def _fallback(self, ncand, weak, lens):
        """(lost, full): reads without a usable chain (no window, or only weak ones), and
        those of them that full-graph DP aligns instead (``unseeded``: all of them with
        "full", none with "unmapped", with "auto" those whose full DP costs at most
        ``full_cells`` cells)."""
        lost = ((ncand == 0) | weak) & (lens > 0)
        if self.unseeded == "full":
            return lost, lost
        if self.unseeded == "unmapped":
            return lost, np.zeros_like(lost)
        cells = np.asarray(lens, np.int64) * np.int64(self.graph.n_bases)
        return lost, lost & (cells <= self.full_cells)

    def _warm_graph(self):
        """The graph's tables that the first batch's stages would each make in turn, made
        meanwhile in a thread of their own: successor lists (seeding), the GAF path steps
        (GAF text) and, on the GPU, the bases on the device (window kernel): 0.2, 0.3 and
        0.3 s at the first batch of a 1 Gbp graph (H100 host, py-spy). An optimisation
        only: a stage that finds one missing makes it itself."""
        g, cfg = self.graph, settings()

        def run():
            try:
                successors(g)
                from ..gaf import _oriented_blob
                _oriented_blob(g)
                if self.device == "gpu" and cfg.gpu_window_fast:
                    from ..variants.fast.wtables_gpu import parent_bases
                    parent_bases(g.base)
                if self.device == "gpu" and cfg.gpu_window_search:
                    from .windows_gpu import device_graph
                    device_graph(g)
            except Exception:                   # noqa: BLE001 - the stages redo it
                pass
        threading.Thread(target=run, name="s2g-warm-graph", daemon=True).start()

    def seed_batches(self, batches):
        """The batches of ``batches``, each with its :meth:`candidates` attached (``_seeds``):
        run in a reader thread (s2g align does), the seeding of the next batches overlaps
        the windows of this one, and :meth:`align_batch` takes them from there. With the
        ``seed_stages`` knob at 2 (default), the chains of a batch (:meth:`chains`, on the
        GPU: kernels and copies) are made in a thread of their own a batch ahead of its
        windows (:meth:`windows_of`: searches on the CPU), the two halves overlapped."""
        self._warm_graph()

        def timed(fn, *args):
            t0 = time.perf_counter()
            expect_batch(args[0])               # (a ramp's pieces: buffers' growth)
            out = fn(*args)
            t1 = time.perf_counter()
            log_stage(fn.__name__, t0, t1)
            self._count("seconds seeds+chains", t1 - t0)
            self.first_at.setdefault(fn.__name__, t1)    # --timings' start-up line
            return out

        early, self.early = self.early, None

        def made(reads):                        # the early batch's candidates, or None
            return None if early is None else self._take_early(early, reads)

        if settings().seed_stages >= 2:
            from ..pipeline import prefetch
            n_threads = numba.get_num_threads()     # the stage's share (Aligner._use_threads)

            def chained():
                numba.set_num_threads(n_threads)
                for reads in batches:
                    w = made(reads)
                    yield reads, (w if w is not None else timed(self.chains, reads))
            for reads, got in prefetch(chained(), 1, name="s2g-chains"):
                reads._seeds = got if isinstance(got, Windows) else \
                    timed(self.windows_of, reads, got)
                yield reads
            return
        for reads in batches:
            w = made(reads)
            reads._seeds = w if w is not None else timed(self.candidates, reads)
            yield reads

    def _take_early(self, early, reads):
        """``early``'s candidates when ``reads`` is its batch (counted as this aligner's
        seeding, its search scratch kept), else None."""
        w = early.take(reads)
        if w is None:
            return None
        self._count("seconds seeds+chains", sum(early.seconds))
        self._count("reads seeded on the CPU at the start", reads.n_reads)
        for name, at in early.ended.items():
            self.first_at.setdefault(name, at)
        if early.pool is not None:
            self._give_scratch(early.pool)
        return w

    def align_batch(self, reads, cand=None, defer=None) -> BatchResult:
        """Scores, end cells, MAPQ (``res.mapq``) and window bounds (``res.col_lo``);
        ``cand``: the batch's :meth:`candidates`, when already computed (default: those
        :meth:`seed_batches` attached, taken off the batch). ``defer(res, idx)``: of the
        reads ``idx`` due for full-graph DP, those to leave unaligned for now (a bool mask;
        :class:`~s2g.seeded.pairs.PairedAligner` rescues them beside their mates first and
        gives what is left to :meth:`full_dp`); ``res.deferred`` lists them."""
        if cand is None:
            cand = reads.__dict__.pop("_seeds", None)
        if cand is None:
            t0 = time.perf_counter()
            cand = self.candidates(reads)
            self._count("seconds seeds+chains", time.perf_counter() - t0)
        wg = cand.wg
        ncand = cand.ncand
        t1 = time.perf_counter()
        n = reads.n_reads
        first = cand.first
        total = cand.n_tasks
        t_read, t_lo, t_hi = cand.t_read, wg.t_lo, wg.t_hi
        ts, tei, tej, wr, tbands = self._windows(cand, reads)
        self._count("seconds windows", time.perf_counter() - t1)
        a, b, _, _ = self.scoring.as_tuple()
        tcol = wg.columns(tej)                     # end cells in graph columns (ties, GAF)
        lens = reads.lengths()
        lost, full_r = self._fallback(ncand, cand.weak, lens)
        ncand_w = np.where(full_r, 0, ncand)       # full-graph DP replaces their windows
        score, ei, ej, lo, mapq, best_t, tots, caps = pick(
            ncand_w, ts, tei, tcol, t_lo, first, float(a + b), MAPQ_PER_MISMATCH,
            cand.stats[:, 0], cand.anchors_best, MAPQ_REPEAT_CAP, cand.cut, cand.weak,
            cand.t_chain, MAPQ_CUT_CAP)
        self._count("reads", n)
        self._count("windows", total)
        self._count("window_cells", int(((t_hi - t_lo) * lens[t_read]).sum()) if total else 0)
        res = BatchResult(reads.names, lens, score, ei, ej)
        res.mapq = mapq
        #: MAPQ's competitor sums and caps, and the strong chains merged into each read's
        #: best window (other copies there: s2g.seeded.copies, after the traceback)
        res.mapq_terms = (tots, caps)
        res.copies = np.where(best_t >= 0, cand.t_strong[np.maximum(best_t, 0)], 0) \
            if total else np.zeros(n, np.int64)
        res.t_strong = cand.t_strong               # per window (a pair may choose another)
        res.col_lo = lo                            # window-graph coordinates, as is
        res.wg_end_j = np.full(n, -1, np.int64)
        res.wg_end_j[best_t >= 0] = tej[best_t[best_t >= 0]]
        res.wg = wg
        res.n_windows = ncand_w
        res.best_task = best_t
        res.window_run = wr
        res.tbands = tbands                        # pruned windows' kept rows (traceback)
        #: every window's result (pairing, s2g.seeded.pairs, picks among them)
        res.tasks = TaskResults(ts, tei, tej, tcol, t_lo, first, ncand_w, t_read)
        self.set_secondaries(reads, res)
        no_seed = np.nonzero(full_r)[0]
        self._count("unseeded", int(np.count_nonzero(lost)))
        self._count("unseeded weak windows", int(np.count_nonzero(lost & ~full_r & (ncand > 0))))
        self._count("unseeded unaligned", int(np.count_nonzero(lost & ~full_r & (ncand == 0))))
        res.deferred = no_seed[:0]
        if defer is not None and len(no_seed):
            d = np.asarray(defer(res, no_seed), np.bool_)
            res.deferred, no_seed = no_seed[d], no_seed[~d]
        self.full_dp(reads, res, no_seed)
        return res

    def full_dp(self, reads, res, idx):
        """Full-graph DP (``full_module``) of reads ``idx`` into ``res`` (MAPQ 255, no
        window: traced on the graph by :meth:`traceback`); those scoring under
        ``unseeded_min_score`` are left unaligned (a no-hit line), counted apart."""
        if not len(idx):
            return
        full = self._full_module(reads, idx).align_batch(self.graph, reads.subset(idx),
                                                         self.scoring, self.mode)
        low = (full.score > NEG_INF) & (full.score < self.unseeded_min_score)
        self._count("unseeded full DP", int(np.count_nonzero(~low)))
        self._count("unseeded below min score", int(np.count_nonzero(low)))
        res.score[idx] = np.where(low, NEG_INF, full.score)
        res.end_i[idx] = np.where(low, -1, full.end_i)
        res.end_j[idx] = np.where(low, -1, full.end_j)
        res.mapq[idx] = np.where(low, 0, 255)
        res.col_lo[idx] = 0

    def _full_module(self, reads, idx):
        """``full_module``, or where that is ``simd`` and the reads ``idx`` are few, the
        ``cpu`` variant (V0's recurrence, one read a thread; the same scores and ends):
        what ``auto`` picks among the CPU variants for them
        (:func:`~s2g.variants.registry.pick_auto`, by its cost model). A simd lane
        group costs its 128 lanes' work however few are live: one seedless 150 bp read on
        the 2.56 M-column M. bovis graph took 5.2 s in simd, 0.83 s in ``cpu`` (2-core VM,
        2026-12-06), and such reads come one or two a batch."""
        mod = self.full_module
        if getattr(mod, "__name__", "") != "s2g.variants.simd":
            return mod
        from ..variants import registry
        name = registry.pick_auto(lengths=reads.lengths()[idx], n_cols=self.graph.n_bases,
                                  mode=int(self.mode), scoring=self.scoring, cpu_only=True)
        return mod if name == "simd" else registry.get_variant(name)

    def _align_tasks(self, cand, reads, sel, out, floor=None):
        """Align the windows ``sel`` (a task mask) into ``out = [ts, tei, tej, wr,
        tbands]``: on
        the GPU (:func:`s2g.trace.gpu.run_windows`, its :class:`WindowRun` merged into
        ``out[3]``; what it leaves runs here), or with ``window_kernel``. ``floor`` (per
        task): a window scoring below it may be left unaligned (NEG_INF) by a kernel that
        takes one (``window_kernel.takes_floor``), which also fills ``tbands`` (task ->
        kept rows) where ``tb_prune_band`` is on."""
        ts, tei, tej, wr, _ = out
        wg = cand.wg
        t_read, t_lo, t_hi = cand.t_read, wg.t_lo, wg.t_hi
        args = (wg.graph, reads.codes_flat, reads.offsets)
        if self.device == "gpu":
            from ..trace import gpu
            part = gpu.run_windows(wg.graph, reads, self.scoring, self.mode, t_read, t_lo,
                                   t_hi, piece_at=wg.piece_at, only=sel, floor=floor)
            if wr is None:
                out[3] = wr = part
            else:
                wr.merge(part, sel)
            on = sel & part.on_gpu
            ts[on], tei[on], tej[on] = part.score[on], part.end_i[on], part.end_j[on]
            sel = sel & ~part.on_gpu
            self._count("windows left to the CPU", int(np.count_nonzero(sel)))
        x = np.nonzero(sel)[0]
        if len(x):
            t0 = time.perf_counter()
            kw = {}
            if getattr(self.window_kernel, "takes_floor", False):
                if floor is not None:
                    kw["floor"] = floor[x]
                if settings().tb_prune_band:
                    kw["bands"] = {}
            ts[x], tei[x], tej[x] = self.window_kernel(*args, t_read[x], t_lo[x], t_hi[x],
                                                       self.scoring, self.mode, **kw)
            for k, v in kw.get("bands", {}).items():
                out[4][int(x[k])] = v
            if self.device == "gpu":
                self._count("seconds CPU windows", time.perf_counter() - t0)

    def _windows(self, cand, reads):
        """Every window's (score, end_i, end_j), the GPU's :class:`WindowRun` (None on
        the CPU) and the CPU's pruned windows' kept rows (task -> (rlo, rhi), a band
        for the traceback: :func:`s2g.variants.pruned.align_windows`). Reads of at
        least ``corridor_min_len`` bases with several windows align their best chain's
        window first (with every window of other reads); a window
        whose bound (``a`` x its longest walk, :func:`longest_walks`, or the q-gram
        lemma's, :func:`qgram_bounds`) is at least ``DROP_MISMATCHES`` mismatches' worth
        below that score is then not aligned: it could not be picked, and the MAPQ sum
        leaves out windows that far below the best (:func:`s2g.seeded.mapq.pick`,
        ``MAPQ_FAR``), so scores, ends and MAPQ are those of aligning it; nor is one whose
        chain is weak (:meth:`_weak_chains`) (neither with ``n_secondary``: it might
        have been a secondary; not under :class:`~s2g.seeded.pairs.PairedAligner`: every
        window is a pair candidate)."""
        wg = cand.wg
        t_read = cand.t_read
        n = len(t_read)
        out = [np.full(n, NEG_INF, np.int64), np.full(n, -1, np.int64),
               np.full(n, -1, np.int64), None, {}]
        cfg = settings()
        lens = reads.lengths()
        first, ncand = cand.first, cand.ncand
        lead = first[(ncand > 1) & (lens >= max(cfg.corridor_min_len, 1))]
        if self.n_secondary > 0 or not self.drop_windows or not len(lead):
            self._align_tasks(cand, reads, np.ones(n, np.bool_), out)
            return tuple(out)
        rd = np.zeros(len(lens), np.bool_)       # later: those reads' other windows
        rd[t_read[lead]] = True
        later = rd[t_read]
        later[lead] = False
        self._align_tasks(cand, reads, ~later, out)
        ts = out[0]
        a, b, _, _ = self.scoring.as_tuple()
        top = np.full(len(lens), NEG_INF, np.int64)
        top[t_read[lead]] = ts[lead]
        gap = DROP_MISMATCHES * (a + b)
        drop = dropped_by_bound(wg, reads, later, t_read, top[t_read], self.scoring)
        self._count("windows dropped by bound", int(np.count_nonzero(drop)))
        weak = self._weak_chains(cand, later & ~drop & (top[t_read] > NEG_INF))
        self._count("windows dropped by chain", int(np.count_nonzero(weak)))
        drop |= weak
        if (later & ~drop).any():
            # the same argument inside a window: below top - gap it is never picked and
            # MAPQ leaves it out, so a kernel may stop there (s2g.variants.pruned)
            floor = np.where(top[t_read] > gap, top[t_read] - gap, NEG_INF)
            self._align_tasks(cand, reads, later & ~drop, out, floor=floor)
        return tuple(out)

    @staticmethod
    def _weak_chains(cand, sel):
        """Tasks of ``sel`` (a long read's later windows) whose chain scores under knob
        ``long_cand_ratio`` x the read's best chain's (its lead window's): not aligned. No
        bound holds there: at 10% errors a window the read does not align to (a repeat's
        few anchors) has a q-gram bound at or above the true window's score (every read
        q-gram is missing from it, but a missing q-gram only proves an error per ``q``
        bases), and
        such windows cost as much as the lead one or more (30 MHC 10 kbp reads: 87 later
        windows, chains at 1.6-16% of the lead chain's but one at 38%, scores at 1-40% of
        the lead window's). A chain under ``CUT_RATIO`` of the best is what MAPQ already
        ignores when ``max_cand`` cuts it (:func:`s2g.seeded.mapq.pick`); the default is
        that share."""
        ratio = settings().long_cand_ratio
        if ratio <= 0 or not sel.any():
            return np.zeros(len(sel), np.bool_)
        best = np.zeros(int(cand.t_read.max()) + 1)
        np.maximum.at(best, cand.t_read, cand.t_chain)
        return sel & (cand.t_chain < ratio * best[cand.t_read])

    def _walk_at_scores(self, reads, res, wg, idx, flat, tres):
        """Reads ``idx`` of long windows that have no recorded walk (striped: loose bounds)
        walked by one pruned pass at their known score (:func:`s2g.variants.pruned
        .align_windows`, ``known``: the fewest cells) into ``flat``, when fewer than
        :data:`AT_SCORE_MAX`; returns the others. Not those whose scoring pass already ran
        at the score and outgrew the record (:class:`~s2g.variants.pruned_walk.AtScoreBand`:
        traced in its band)."""
        from ..variants import pruned
        from ..variants.pruned_walk import AtScoreBand, Walked, add_walks
        if not len(idx) or not settings().tb_prune_walk or \
                not getattr(self.window_kernel, "takes_floor", False):
            return idx
        offs = np.asarray(reads.offsets, np.int64)
        sel = pruned.long_tasks(offs, idx)
        if sel is None:
            return idx
        r = idx[sel]
        tb = getattr(res, "tbands", None) or {}
        r = r[[not isinstance(tb.get(int(t)), AtScoreBand) for t in res.best_task[r]]]
        if not len(r) or len(r) >= AT_SCORE_MAX:
            return idx
        t = res.best_task[r]
        got = {}
        _, ei, ej = pruned.align_windows(wg.graph, reads.codes_flat, offs, r, wg.t_lo[t],
                                         wg.t_hi[t], self.scoring, self.mode,
                                         floor=np.asarray(res.score, np.int64)[r], bands=got,
                                         known=True)
        ok = [k for k, w in got.items() if isinstance(w, Walked) and ei[k] == tres.end_i[r[k]]
              and ej[k] == tres.end_j[r[k]]]
        self._count("reads walked at their score", len(ok))
        if not ok:
            return idx
        add_walks(flat, r[ok], [got[k] for k in ok], tres.end_i, tres.end_j, wg.graph.node_start)
        return np.setdiff1d(idx, r[ok]).astype(np.int64)

    def rescue_copies(self, reads, res, wg, tasks, rsc, flat):
        """:func:`s2g.seeded.copies.rescue_copies` (pairs' rescued mates; here so that
        :mod:`.pairs` does not import :mod:`.copies`, which imports it)."""
        return copies.rescue_copies(self, reads, res, wg, tasks, rsc, flat)

    def set_secondaries(self, reads, res):
        """``res.secondary``: each read's other windows scoring at least
        ``secondary_ratio`` x its chosen one (``res.best_task``), up to ``n_secondary``."""
        res.secondary = None
        if self.n_secondary <= 0:
            return
        tk = res.tasks
        sr, st = secondaries(tk.ncand, tk.score, tk.first, res.best_task, self.secondary_ratio,
                             self.n_secondary)
        sec = BatchResult([reads.names[r] for r in sr.tolist()], res.lengths[sr], tk.score[st],
                          tk.end_i[st], tk.col[st])
        sec.mapq = np.zeros(len(sr), np.int64)
        sec.col_lo = tk.lo[st]
        sec.wg_end_j = tk.end_j[st]
        sec.owner = sr
        sec.task = st
        res.secondary = sec

    def traceback(self, reads, res, max_cells=None, threads=None, late=False):
        """Path and CIGAR of every aligned read, restricted to its window (traced on the
        window graph, then moved onto the graph); GPU windows reuse the walk the kernel
        already made. Reads aligned by full-graph DP (``unseeded="full"``) trace on the
        graph. ``late``: where every window's walk came from the GPU, the packing of CIGARs
        and paths, their move onto the graph and the tracebacks of reads aligned by
        full-graph DP are left to whoever reads ``res.flat`` first
        (:meth:`BatchResult.set_pending`: the pipeline's formatting thread)."""
        from ..trace import MAX_CELLS, FlatTracebacks, traceback_batch
        max_cells = max_cells or MAX_CELLS
        wg = res.wg
        wr = getattr(res, "window_run", None)
        sec = getattr(res, "secondary", None)
        if sec is not None and len(sec):
            sub = reads.subset(sec.owner)
            sres = BatchResult(sec.names, sec.lengths, sec.score, sec.end_i, sec.wg_end_j)
            sflat = FlatTracebacks(len(sec))
            sidx = np.arange(len(sec), dtype=np.int64)
            if wr is not None:
                sidx = _gpu_traces(wr, wg, sub, self.scoring, self.mode, sres,
                                   sec.task, sidx, sflat, max_cells)
            traceback_batch(wg.graph, sub, self.scoring, self.mode, sres, max_cells=max_cells,
                            threads=threads, col_lo=sec.col_lo, flat=sflat, idx=sidx)
            sec.set_flat(wg.map_tracebacks(sres.flat))
        aligned = np.nonzero(res.aligned())[0]
        bt = res.best_task[aligned]
        win = aligned[bt >= 0]                    # aligned in a window
        tres = BatchResult(res.names, res.lengths, res.score, res.end_i, res.wg_end_j)
        flat = FlatTracebacks(len(res))
        idx = win.astype(np.int64)
        if wr is not None:
            idx = _gpu_traces(wr, wg, reads, self.scoring, self.mode, tres,
                              res.best_task[win], idx, flat, max_cells)
            res.window_run = None                  # the walks are no longer needed
        full = aligned[bt == -1]                   # full-graph DP (unseeded="full"; -2:
                                                   # a rescued mate, PairedAligner's)
        idx = _walked_traces(getattr(res, "tbands", None), res.best_task, idx, flat, tres,
                             wg.graph)
        if wr is None:
            idx = self._walk_at_scores(reads, res, wg, idx, flat, tres)
        bands = _trace_bands(getattr(res, "tbands", None), res.best_task, idx, len(res))
        res.tbands = None

        def complete():
            traceback_batch(wg.graph, reads, self.scoring, self.mode, tres,
                            max_cells=max_cells, threads=threads, col_lo=res.col_lo, flat=flat,
                            idx=idx, bands=bands)
            out = wg.map_tracebacks(tres.flat)
            if len(full):
                fres = BatchResult(res.names, res.lengths, res.score, res.end_i, res.end_j)
                traceback_batch(self.graph, reads, self.scoring, self.mode, fres,
                                max_cells=max_cells, threads=threads,
                                flat=FlatTracebacks(len(res)), idx=full.astype(np.int64))
                out = out.merged(fres.flat)
            if self.copies_mapq:
                t0 = time.perf_counter()
                copies.rescore(self, reads, res, wg, out)
                self._count("seconds copies", time.perf_counter() - t0)
            res.set_flat(out)
            res.wg = None

        if late and len(idx) == 0:      # nothing left to trace on the CPU in windows
            res.set_pending(complete)
        else:
            complete()
        return res


#: at most this many long reads without a recorded walk are walked at their score; more go
#: to the lanes (8 windows at once: 20 x 10 kbp at 10% errors, one 2-core-VM thread, 1.5 s
#: there against 2.1 s walked at their scores, 15% of the cells; one read alone 3.4 s
#: against 1.4 s)
AT_SCORE_MAX = 8


def _walked_traces(tbands, best_task, idx, flat, tres, wgraph):
    """Reads ``idx`` whose chosen window's pruned pass recorded its walk (``tbands``:
    task -> :class:`~s2g.variants.pruned_walk.Walked`) traced from it into ``flat``; returns
    the others."""
    if not tbands:
        return idx
    from ..variants.pruned_walk import Walked, add_walks
    rows, got = [], []
    for r in idx.tolist():
        w = tbands.get(int(best_task[r]))
        if isinstance(w, Walked):
            rows.append(r)
            got.append(w)
    if not rows:
        return idx
    add_walks(flat, rows, got, tres.end_i, tres.end_j, wgraph.node_start)
    return np.setdiff1d(idx, np.asarray(rows, np.int64)).astype(np.int64)


def _trace_bands(tbands, best_task, idx, n):
    """The traceback's bands (:func:`s2g.trace.traceback_batch`'s ``bands``) of reads
    ``idx`` whose chosen window has kept rows from the pruned scoring pass (``tbands``:
    task -> (first rows, last rows)), or None where none has."""
    if not tbands:
        return None
    off = np.full(n, -1, np.int64)
    width = np.zeros(n, np.int64)
    parts = []
    pos = 0
    for r in idx.tolist():
        got = tbands.get(int(best_task[r]))
        if not isinstance(got, tuple) or len(got) != 2:    # none, or a walk
            continue
        rlo, rhi = got
        off[r], width[r] = pos, len(rlo)
        parts += [rlo, rhi]
        pos += 2 * len(rlo)
    if not parts:
        return None
    return off, width, np.concatenate(parts).astype(np.int32)


def weak_chains_dropped(ch, nch, pct):
    """``nch`` with each read's chains below ``pct`` percent of its best chain's score left
    out (chains come best first, so a prefix is kept; ``pct`` 0: all kept). They get no
    window: not aligned, and not counted against MAPQ, as a chain cut by ``max_cand`` that
    scores under ``CUT_RATIO`` of the best is not (:func:`s2g.seeded.mapq.pick`), so
    ``pct`` is at most 100 x CUT_RATIO (knob ``cand_min_pct``)."""
    if pct <= 0 or len(nch) == 0 or ch.shape[1] == 0:
        return nch
    if pct > 100 * CUT_RATIO:
        raise ValueError(f"cand_min_pct must be at most {100 * CUT_RATIO:g}, got {pct}")
    ok = ch[:, :, 4] >= (pct / 100.0) * ch[:, :1, 4]
    return np.minimum(nch, ok.sum(axis=1)).astype(nch.dtype)


def _gpu_traces(wr, wg, reads, scoring, mode, tres, tasks, rows, flat, max_cells):
    """Tracebacks on the GPU of rows ``rows`` of ``tres`` (window-graph end cells), whose
    windows are ``tasks`` of the :class:`~s2g.trace.gpu.WindowRun` ``wr`` on the
    :class:`~s2g.window.WindowGraph` ``wg``: the walks the find-mode kernel made
    (``wr.walked``), and for windows the ``fast`` kernel scored, the traceback kernel run
    from the end cell on the window graph (:func:`s2g.trace.gpu.run`; with the
    ``gpu_tb_warp`` knob, short reads' windows in the ``fast`` kernel's traceback form,
    :func:`s2g.trace.gpu_warp.run`); returns the rows left to the CPU (windows the GPU
    did not run, or too large for it)."""
    from ..trace import gpu
    wgraph = wg.graph
    walked = wr.walked[tasks]
    if walked.any():
        wr.add_tracebacks(wgraph, tasks[walked], rows[walked], flat,
                          np.asarray(tres.end_i, np.int64))
    by_end = wr.on_gpu[tasks] & ~walked
    left = rows[~walked & ~by_end]
    if by_end.any() and settings().gpu_tb_warp:
        from ..trace import gpu_warp
        rest = gpu_warp.run(wg, reads, scoring, mode, tres, tasks[by_end], rows[by_end], flat)
        by_end &= np.isin(rows, rest)
    if by_end.any():
        more = gpu.run(wgraph, reads, scoring, mode, tres, rows[by_end], flat,
                       max_cells=min(gpu.max_cells(), max_cells), long_cells=2 * max_cells,
                       live=wr.live_of(tasks[by_end], rows[by_end], len(tres.score)))
        left = np.sort(np.concatenate([left, np.asarray(more, np.int64)]))
    return left.astype(np.int64)
