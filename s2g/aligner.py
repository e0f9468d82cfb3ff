"""The align driver: one object that turns batches of reads into results and GAF text.

``s2g align`` (cli.py), the Python API (:func:`s2g.align`) and the Dask workers
(distributed.py) all align through an :class:`Aligner`; they differ only in where the
batches come from and where the text goes::

    batch ──align_scores──▶ BatchResult ──finish──▶ + tracebacks ──gaf_text──▶ bytes
            (kernel, or seeds       (CPU traceback; the GPU      (GAF lines)
             + window DP + MAPQ;     half already done in
             GPU traceback half)     align_scores)

:meth:`Aligner.align` runs the three stages one after the other (API, Dask workers);
:meth:`Aligner.run` runs them overlapped in threads over a stream of batches
(:func:`s2g.pipeline.run`, what ``s2g align`` does). The choice of the variant and of
seeded or full-graph DP is the run's plan (:mod:`s2g.plan`, :meth:`Aligner.from_plan`);
the CLI keeps argument parsing, output files, the progress bar and the report, which
reads :meth:`Aligner.stats`.

What the driver owns (and nothing else does):

* the graph a batch is aligned to: a FlatGraph, or a cyclic graph
  (:class:`~s2g.cyclic.CyclicGraph`) unrolled for each batch's longest read (full-graph
  DP) or once for ``--max-read-len`` (seeded alignment, whose index belongs to that DAG);
* full-graph DP (``variant``'s kernel) or seeded alignment (a
  :class:`~s2g.seeded.SeededAligner`);
* where the traceback runs: on the GPU its half runs right after the batch's kernel in
  the aligning thread (the GPU is one queue), the reads it leaves (long windows) in the
  finishing thread.
"""
from __future__ import annotations

import os
import sys
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from .config import settings
from .variants._devpool import expect_batch
from .plan import Kernel, resolve_kernel
from .scoring import Mode, Scoring

#: the interpreter's GIL switch interval (the stages run with it unless knob switch_us)
PY_SWITCH = sys.getswitchinterval()

#: counters the aligning threads add to (``align_workers``)
_COUNT_LOCK = threading.Lock()


@dataclass
class AlignStats:
    """What a run measured (:meth:`Aligner.stats`), for ``s2g align``'s closing line and
    ``--timings``."""

    #: stage -> seconds spent in it (``align``, ``traceback``, ``GAF text``, ``write``;
    #: the stages overlap: they run in their own threads) and stage -> [first start,
    #: last end], seconds from :meth:`Aligner.run`'s ``t0``
    seconds: dict = field(default_factory=dict)
    span: dict = field(default_factory=dict)
    #: the first batch's align stage (compilation or cache loads included)
    first_batch_s: float | None = None
    #: variant -> [batches, reads] it aligned (full-graph DP)
    ran: dict = field(default_factory=dict)
    #: reads longer than a cyclic graph's seeded unrolling
    too_long: int = 0
    #: seeded alignment's counters and seconds (:attr:`s2g.seeded.SeededAligner.totals`)
    seeded: dict | None = None
    #: the GPU code's own counters, where it ran: ``fast`` (its kernel's launches, cells
    #: and seconds), ``fast_windows`` (its window form's, seeded), ``gpu_traceback`` (seconds per part, long-window kernel), ``devpool``
    #: (the most device and pinned bytes held at once)
    profiles: dict = field(default_factory=dict)
    #: the process's CPU use while :meth:`Aligner.run`'s pipeline ran: (wall seconds,
    #: user seconds, system seconds), every thread's (os.times); with knob ``gil_probe``
    #: also :meth:`s2g.pipeline.GilProbe.stop`'s (samples, mean late, 95th percentile)
    cpu: tuple | None = None


def gpu_profiles() -> dict:
    """Copies of the GPU modules' counters (module globals: ``s2g.variants.fast.PROFILE``,
    ``s2g.trace.gpu_chunk.PROFILE``, ``s2g.variants._devpool.PEAK``) for those imported;
    nothing is imported here."""
    out = {}
    for key, mod, name in (("fast", "s2g.variants.fast", "PROFILE"),
                           ("fast_windows", "s2g.variants.fast.windows", "PROFILE"),
                           ("gpu_traceback", "s2g.trace.gpu_chunk", "PROFILE"),
                           ("gpu_tb_warp", "s2g.trace.gpu_warp", "PROFILE"),
                           ("window_search", "s2g.seeded.windows_gpu", "PROFILE"),
                           ("devpool", "s2g.variants._devpool", "PEAK")):
        m = sys.modules.get(mod)
        if m is not None and hasattr(m, name):
            out[key] = dict(getattr(m, name))
    return out


class Aligner:
    """Alignment of read batches to one graph with one configuration.

    ``graph``: a :class:`~s2g.graph.FlatGraph` or a cyclic graph from
    :func:`s2g.graph.open_graph` (unrolled per batch). ``variant``: a registered name or
    ``"auto"`` (or :func:`~s2g.variants.registry.pick_auto`'s name without a shape): with
    a GPU its variant; on a CPU, ``simd`` or ``cpu`` for each batch by its shape (read
    count and lengths: :func:`~s2g.variants.registry.cpu_costs`, issue #40), every
    variant being exact. ``traceback``: compute paths and CIGARs. ``traceback_on``: ``"auto"``
    (the variant's device), ``"gpu"`` or ``"cpu"``, or a bool (True: GPU). ``seeded``: a
    :class:`~s2g.seeded.SeededAligner` (seeded alignment; its graph is the DAG used), or
    None for full-graph DP. ``max_read_len``: for a cyclic graph, the least read length
    it is unrolled for. ``threads``: Numba threads in every stage (None: all).
    ``variant`` may also be a resolved :class:`~s2g.plan.Kernel` (then ``traceback_on`` is
    its own); a run's :class:`~s2g.plan.Plan` gives one (:meth:`from_plan`).
    """

    def __init__(self, graph, scoring: Scoring | None = None, mode="local", variant="auto",
                 traceback: bool = True, traceback_on="auto", max_traceback_cells=None,
                 seeded=None, max_read_len=None, threads=None):
        from .graph import FlatGraph
        from .trace import MAX_CELLS

        self.scoring = scoring or Scoring()
        self.mode = Mode.parse(mode)
        k = variant if isinstance(variant, Kernel) else resolve_kernel(variant, traceback_on)
        #: the variant given (auto: the machine's default, what ``s2g variants`` marks);
        #: with ``auto`` each full-graph batch runs :meth:`variant_for` its shape
        self.auto = bool(getattr(k.variant, "auto", False))
        self.variant = k.variant
        self.module = k.module
        self._modules = {}            # auto: the other variants' modules, once imported
        #: variant -> [batches, reads] it aligned (full-graph DP), for :meth:`describe`
        self.ran = {}
        self.traceback = bool(traceback)
        self.max_traceback_cells = max_traceback_cells or MAX_CELLS
        self.tb_gpu = k.tb_gpu
        self.seeded = seeded
        self.max_read_len = max_read_len
        self.cyclic = None if isinstance(graph, FlatGraph) else graph
        self.graph = seeded.graph if seeded is not None else graph
        self.seeded_read_len = None   # cyclic + seeded: the read length it was unrolled for
        if self.cyclic is not None and seeded is not None:
            from .cyclic import SEEDED_READ_LEN
            self.seeded_read_len = max_read_len or SEEDED_READ_LEN
        #: reads longer than the seeded unrolling's read length (a warning at the end)
        self.too_long = 0
        # the GPU half of the traceback in the aligning thread, right after the kernel
        # (the tb_inline knob, s2g/config.py)
        self._inline = self.tb_gpu and self.traceback and settings().tb_inline
        self.first_batch_s = None
        self._prepared_len = 0     # reads up to this long: GPU traceback kernels loaded
        self._shadow = False       # the first launch's shadow work started (_in_kernel_shadow)
        #: first use on cold caches: the background compile workers (s2g.warmup), or None
        self.prewarm = None
        #: Numba threads for every stage (``numba.set_num_threads`` holds per calling
        #: thread, and the stages run in the pipeline's threads), None: all
        self.threads = threads
        #: :meth:`run`'s stage seconds and spans (:class:`AlignStats`)
        self.seconds, self.span = {}, {}
        self.cpu = None             # AlignStats.cpu

    @classmethod
    def from_plan(cls, plan):
        """The Aligner of a run's :class:`~s2g.plan.Plan`: its variant, traceback place and
        seeded aligner (or full-graph DP), with its options' scoring, mode, traceback,
        threads."""
        o = plan.options
        return cls(plan.graph, o.scoring, o.mode, plan.kernel, traceback=o.traceback,
                   max_traceback_cells=o.max_traceback_cells, seeded=plan.seeded,
                   max_read_len=o.max_read_len, threads=o.threads)

    def stats(self) -> AlignStats:
        """What this aligner measured so far, and the GPU code's counters."""
        return AlignStats(dict(self.seconds), {k: list(v) for k, v in self.span.items()},
                          self.first_batch_s, {k: list(v) for k, v in self.ran.items()},
                          self.too_long,
                          dict(self.seeded.totals) if self.seeded is not None else None,
                          gpu_profiles(), self.cpu)

    def _use_threads(self, stage=None):
        """This thread's Numba threads: ``--threads`` (None: all), or for ``stage``
        ("seed", "align", "traceback") its knob where set (``seed_threads``,
        ``align_threads``, ``tb_threads``; at most ``--threads``): the pipeline's stages run
        at once in their own threads, each with a parallel region of its own, on the same
        cores."""
        import numba
        top = numba.config.NUMBA_NUM_THREADS
        n = int(self.threads) if self.threads else 0
        knob = {"seed": "seed_threads", "align": "align_threads",
                "traceback": "tb_threads"}.get(stage)
        k = int(getattr(settings(), knob)) if knob else 0
        if k > 0:
            n = min(k, n) if n else k
        if n:
            numba.set_num_threads(max(1, min(n, top)))

    # ------------------------------------------------------------------ stages
    def graph_for(self, batch):
        """The DAG ``batch`` is aligned to: a cyclic graph unrolled for its longest read
        (seeded alignment: the one DAG its index belongs to)."""
        if self.cyclic is None or self.seeded is not None:
            return self.graph
        return self.cyclic.for_reads(batch.max_len, self.scoring, self.mode,
                                     floor=self.max_read_len)

    def align_scores(self, batch):
        """Stage 1: scores and end cells (seeded: windows, MAPQ), and the GPU half of the
        traceback where it runs there."""
        self._use_threads("align")
        self._wait("align")
        t = time.perf_counter()
        if self.seeded is not None:
            if self.seeded_read_len is not None:
                n_long = int(np.count_nonzero(batch.lengths() > self.seeded_read_len))
                with _COUNT_LOCK:                # (align_workers: several threads)
                    self.too_long += n_long
            res = self.seeded.align_batch(batch)
        else:
            from .trace import traceback_gpu_part
            g = self.graph_for(batch)
            name = self.variant_for(batch, g)
            module = self._module(name)
            ran = self.ran.setdefault(name, [0, 0])
            ran[0] += 1
            ran[1] += batch.n_reads
            kw, prep = {}, None
            tb_len = batch.max_len if self._inline and batch.max_len > self._prepared_len else 0
            if (tb_len or not self._shadow) and _takes(module.align_batch, "on_launch"):
                # while the full-graph kernel runs this host thread only waits: Numba's
                # CPU target starts then (the graph and the kernel's tables were made
                # without it) and the GPU traceback's kernels load
                import threading
                prep = threading.Thread(target=_in_kernel_shadow, name="s2g-tb-prepare",
                                        args=(self.mode, self.scoring, tb_len, not self._shadow),
                                        daemon=True)
                kw["on_launch"] = prep.start
                self._shadow = True
                self._prepared_len = max(self._prepared_len, tb_len)
            try:
                res = module.align_batch(g, batch, self.scoring, self.mode, **kw)
            finally:
                if prep is not None and prep.ident is not None:
                    prep.join()
            if self._inline:
                res._gpu_part = traceback_gpu_part(g, batch, self.scoring, self.mode, res,
                                                   self.max_traceback_cells)
        if self.first_batch_s is None:
            self.first_batch_s = time.perf_counter() - t
        return res

    def variant_for(self, batch, graph=None) -> str:
        """The variant that aligns ``batch`` (full-graph DP): the one given, or with
        ``auto`` :func:`~s2g.variants.registry.pick_auto` of the batch's read lengths,
        the graph's columns and the Numba threads of this stage."""
        if not self.auto:
            return self.variant
        from .variants import registry
        g = graph if graph is not None else self.graph_for(batch)
        return registry.pick_auto(lengths=batch.lengths(), n_cols=g.n_bases, mode=self.mode,
                                  scoring=self.scoring,
                                  cpu_only=getattr(self.variant, "cpu_only", False))

    def _module(self, name):
        if name == self.variant:
            return self.module
        mod = self._modules.get(name)
        if mod is None:
            from .variants import registry
            mod = self._modules[name] = registry.get_variant(name)
        return mod

    def finish(self, batch, res, late=False):
        """Stage 2: the tracebacks (what the GPU half left, or all of them). ``late``:
        seeded GPU walks' packing may be left to the first reader of ``res.flat``
        (:meth:`s2g.seeded.SeededAligner.traceback`; :meth:`run` formats in another
        thread)."""
        if not self.traceback:
            return res
        self._use_threads("traceback")
        self._wait("traceback")
        if self.seeded is not None:
            self.seeded.traceback(batch, res, max_cells=self.max_traceback_cells, late=late)
            return res
        from .trace import traceback_batch
        flat, idx = res.__dict__.pop("_gpu_part", (None, None))
        traceback_batch(self.graph_for(batch), batch, self.scoring, self.mode, res,
                        max_cells=self.max_traceback_cells, device=self.tb_gpu, flat=flat,
                        idx=idx)
        return res

    def gaf_text(self, batch, res) -> bytes:
        """Stage 3: the batch's GAF lines."""
        from .gaf import gaf_bytes
        self._wait("gaf")
        return gaf_bytes(self.graph_for(batch), res)

    def align(self, batch):
        """The three stages' results for one batch, one after the other: a BatchResult
        (one result per read, in order)."""
        return self.finish(batch, self.align_scores(batch))

    def _wait(self, stage):
        if self.prewarm is not None:
            self.prewarm.wait(stage)

    def start_prewarm(self, batch):
        """First use on cold caches: compile what this run needs in background processes
        (:func:`s2g.warmup.start`, sized by ``batch``, the first batch), each stage waiting
        for its own part before its first call (seeded: :func:`s2g.warmup.seeded_plan`,
        whose ``seed`` stage the reader thread waits for). ``S2G_PREWARM=0`` turns it off."""
        if self.prewarm is not None:
            return self.prewarm
        from . import warmup
        seeded = self.seeded is not None
        try:
            self._use_threads()         # auto: the first batch's variant on these threads
            self.prewarm = warmup.start(self.variant if seeded else self.variant_for(batch),
                                        self.mode, self.scoring, batch.max_len,
                                        self.traceback, self.tb_gpu, self._inline,
                                        seeded=seeded)
        except Exception:            # noqa: BLE001 - an optimisation: compile in-process
            self.prewarm = None
        return self.prewarm

    def close_prewarm(self):
        if self.prewarm is not None:
            self.prewarm.close()

    # ------------------------------------------------------------------ streams
    def batches(self, batches):
        """``batches`` as :meth:`run` consumes them (seeded: seeds attached in the
        reader thread, a batch ahead of the windows)."""
        if self.seeded is None:
            return batches

        def seeded():                   # runs in the pipeline's reader thread
            self._use_threads("seed")
            self._wait("seed")
            # reading and encoding (Python, holding the GIL) in a thread of their own:
            # the seeding (Numba, without the GIL) overlaps them (1,000,000 reads on MHC,
            # H200 host: 2.0 of the seeding thread's 6.7 s were reading, session 31)
            from .pipeline import prefetch
            yield from self.seeded.seed_batches(prefetch(batches, 2, name="s2g-parse"))
        return seeded()

    def run(self, batches, write, t0=None, text=None) -> int:
        """Align a stream of batches with the stages overlapped in threads
        (:func:`s2g.pipeline.run`); ``write((n_reads, n_aligned, gaf_bytes))`` is called
        in input order, in the calling thread (``text(batch, res)``: another output
        format's bytes instead of GAF). Each stage (``"align"``, ``"traceback"``,
        ``"GAF text"``, ``"write"``) is timed into :meth:`stats` (spans from ``t0``, a
        ``time.perf_counter()``; default: now). Returns the number of batches."""
        import itertools

        from . import pipeline
        timed = self._timer(time.perf_counter() if t0 is None else t0)
        batches = iter(batches)          # cold caches: compile ahead while the first batch
        first = next(batches, None)      # is read (s2g.warmup); its size picks the kernels
        if first is not None:
            self.start_prewarm(first)
            batches = itertools.chain([first], batches)

        fmt = text or self.gaf_text

        def format_one(batch, res):
            self._use_threads("traceback")      # late_packing's tracebacks run here
            return (batch.n_reads, int(np.count_nonzero(res.aligned())), fmt(batch, res))

        switch = sys.getswitchinterval()
        if settings().switch_us > 0:        # the stages' threads take the GIL in turn
            sys.setswitchinterval(settings().switch_us / 1e6)
        elif settings().startup_switch_us > 0:      # (s2g align's start-up ends here)
            sys.setswitchinterval(PY_SWITCH)
        pipeline.STAGE_LOG.clear()           # (knob stage_log: this run's calls only)
        c0, w0 = os.times(), time.perf_counter()
        probe = pipeline.GilProbe() if settings().gil_probe else None
        try:
            late = settings().late_packing
            return pipeline.run(self.batches(batches), timed("align", self.align_scores),
                                timed("traceback", lambda b, r: self.finish(b, r, late)),
                                timed("write", write),
                                format_one=timed("GAF text", format_one),
                                finish_workers=settings().finish_workers,
                                align_workers=settings().align_workers,
                                format_workers=settings().format_workers)
        finally:
            c1 = os.times()
            self.cpu = (time.perf_counter() - w0, c1.user - c0.user, c1.system - c0.system)
            if probe is not None:
                self.cpu += probe.stop()
            sys.setswitchinterval(switch)
            self.close_prewarm()

    def _timer(self, t0):
        """``timed(name, fn)``: ``fn`` adding its seconds to :attr:`seconds` and its span
        (from ``t0``) to :attr:`span` under ``name``."""
        from .pipeline import log_stage
        spent, span = self.seconds, self.span
        lock = threading.Lock()          # stages of several workers (finish_workers)

        def timed(name, fn):
            def run(*a):
                t = time.perf_counter()
                expect_batch(a[0] if a else None)   # (a ramp's pieces: buffers' growth)
                try:
                    return fn(*a)
                finally:
                    t1 = time.perf_counter()
                    log_stage(name, t, t1)
                    with lock:
                        spent[name] = spent.get(name, 0.0) + t1 - t
                        sp = span.setdefault(name, [t - t0, 0.0])
                        sp[0] = min(sp[0], t - t0)
                        sp[1] = max(sp[1], t1 - t0)
            return run
        return timed

    def describe(self) -> str:
        """How the reads were aligned, for the CLI's closing line."""
        if self.seeded is None:
            if len(self.ran) <= 1:          # the one that ran (auto: picked by shape)
                return f"variant {next(iter(self.ran), self.variant)}"
            return "variants by batch shape (auto): " + ", ".join(
                f"{v} {b:,} batch{'es' if b > 1 else ''} ({r:,} reads)"
                for v, (b, r) in self.ran.items())
        t = self.seeded.totals
        nr = max(t['reads'], 1)
        skipped = t.get("windows dropped by bound", 0) + t.get("windows dropped by chain", 0)
        parts = [f"{t['windows'] / nr:.2f} windows per read"
                 + (f" ({(t['windows'] - skipped) / nr:.2f} aligned)" if skipped else "")
                 + "".join(f", {t[k]:,} {k}" for k in ("windows dropped by bound",
                                                       "windows dropped by chain",
                                                       "windows left to the CPU",
                                                       "windows realigned for copies")
                           if t.get(k)),
                 f"{t['unseeded']} reads without a seed chain"]
        for key, what in (("unseeded rescued", "rescued beside their mates"),
                          ("unseeded full DP", "by full-graph DP"),
                          ("unseeded below min score", "under --unseeded-min-score"),
                          ("unseeded weak windows", "in single-anchor windows"),
                          ("unseeded unaligned", "left unaligned")):
            if t.get(key):
                parts.append(f"{t[key]} {what}")
        if t.get("pairs"):
            m = getattr(self.seeded, "model", None)
            parts.append(f"{t['pairs']:,} pairs, {t['pairs proper'] / t['pairs']:.1%} properly "
                         f"paired, {t['rescued mates']:,} mates rescued, "
                         + (m.describe() if m is not None else "no fragment length model"))
        return f"seeded ({', '.join(parts)})"


def _in_kernel_shadow(mode, scoring, tb_len, cpu):
    """Host work for the time a GPU kernel runs: Numba's CPU target started (``cpu``:
    :func:`s2g._numba.start_cpu_target`) and, for reads up to ``tb_len`` bases (0: none),
    the GPU traceback's kernels loaded (:func:`s2g.trace.gpu.prepare`)."""
    if cpu:
        from . import _numba
        _numba.start_cpu_target()
    if tb_len:
        from .trace import gpu
        gpu.prepare(mode, scoring, tb_len)


def _takes(fn, name) -> bool:
    """Whether ``fn`` accepts the keyword ``name``."""
    import inspect
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
