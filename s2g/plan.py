"""A run's plan, decided in one place: the variant, where the traceback runs, and
full-graph DP or seeded alignment (issue #41).

``s2g align`` (cli.py), :func:`s2g.align` and the Dask workers (distributed.py) describe
a run with a :class:`RunOptions` record and get a :class:`Plan` from :func:`plan`:

* the variant resolved once (:func:`resolve_kernel`: ``auto`` is
  :func:`~s2g.variants.registry.pick_auto`'s name for no batch in particular, which an
  :class:`~s2g.aligner.Aligner` refines per batch shape on a CPU) and its module loaded,
  so an unknown or unusable variant fails before anything is read;
* ``method`` ``auto``: seeded alignment on large graphs unless the whole input is known
  to be small (:func:`choose_method`, the notes ``s2g align`` prints);
* seeded alignment's :class:`~s2g.seeded.SeededAligner` with its index
  (:func:`seeded_aligner`).

:meth:`s2g.aligner.Aligner.from_plan` aligns by the plan. A Dask client plans once and
sends the workers :meth:`Plan.worker_options` (the method decided, the index's absolute
path); each worker plans again from that record (its own ``auto`` variant: a GPU
worker picks its GPU variant).
"""
from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from .config import settings
from .errors import S2GError
from .scoring import Mode, Scoring

#: --seeded/--exact unset: seeded alignment from this many graph columns (both strands) up.
#: Full DP costs columns x read length per read: 1M columns is ~20,000 reads/s on an H200
#: (3,000 GCUPS), 100,000 columns ~30 reads/s per CPU core; seeded alignment costs a few
#: windows of a few hundred columns per read (README.md, "Seeded alignment").
AUTO_SEEDED_COLUMNS = {"cuda": 1_000_000, "cpu": 100_000}
#: ... unless the whole input is known (one batch) and its full-graph DP is cheap: on a CPU
#: at most this many cells (graph columns x read bases) a thread (~5 s at the simd kernel's
#: ~1 GCUPS a thread); on a GPU at most AUTO_EXACT_GPU_S seconds of the fast kernel at its
#: rate for that many reads (:func:`exact_gpu_seconds`): then full-graph DP, exact for
#: every read
AUTO_EXACT_CELLS = {"cpu": 5_000_000_000}
AUTO_EXACT_GPU_S = 0.4

#: ``auto``'s device (issue #42: auto never picks the slower device). Measured on an NVIDIA
#: H200 host (16 Intel vCPUs), 2026-12-04, each run a fresh ``s2g align`` process, the
#: first N reads of a file (``bash bench/device_choice.sh``; bench/results/nvidia-h200/
#: device_choice/): ``GPU_START_S``: seconds the GPU path's process spends beyond the CPU
#: path's whatever the input (CUDA's import, driver and context, its kernels' loading);
#: ``SEEDED_COSTS``: (read length, CPU thread-seconds a read, GPU-path seconds a read) of
#: seeded alignment (150 bp: MHC, 1% errors, the slopes between 30,000 and 200,000 reads;
#: 10 kbp: 5% errors, between 100 and 300 reads, its CPU cost taken x3: a read's error
#: rate is unknown before it aligns, and at 10% errors 30 x 10 kbp took 2.64-2.86 s on
#: the CPU path against 1.01 s on the GPU path, warm, while 0.2 thread-s a read said the
#: CPU, ~0.4 s (2026-12-05, same host): erring towards the GPU costs at most its
#: start-up, towards the CPU several times that), log-log between the points;
#: ``EXACT_CPU_CELL_S``: CPU thread-seconds a full-graph DP cell (simd, 1.5 GCUPS a
#: thread); ``EXACT_GPU_CELLS_S``: the fast kernel's cells a second with at least
#: ``EXACT_GPU_FULL_READS`` reads (fewer fill the GPU that much less).
GPU_START_S = 0.75
SEEDED_COSTS = ((150, 200e-6, 9.7e-6), (10_000, 0.6, 0.77e-3))
EXACT_CPU_CELL_S = 6.8e-10
EXACT_GPU_CELLS_S = 1.7e12
EXACT_GPU_FULL_READS = 16_384

METHODS = ("auto", "seeded", "exact")


def short_e(x) -> str:
    """``5e7`` for 50,000,000 (a cell budget in messages; Python's ``.0e`` writes 5e+07)."""
    m, ex = f"{float(x):.0e}".split("e")
    return f"{m}e{int(ex)}"


@dataclass(frozen=True)
class SeededOptions:
    """Seeded alignment's options (``s2g align``'s "seeded alignment" group).

    ``index``: the seed index file (None: the graph's path + ``.s2gi``, built and saved
    there when missing; for a graph without a path, built in memory)."""

    index: str | None = None
    max_occ: int = 200
    max_windows: int = 5
    unseeded: str = "auto"
    secondary: int = 0
    secondary_ratio: float = 0.8
    #: reads aligned by full-graph DP for want of a seed chain: the least score reported
    #: (None: :data:`s2g.unseeded.UNSEEDED_MIN_MATCHES` x the match score)
    unseeded_min_score: int | None = None


@dataclass(frozen=True)
class SamOptions:
    """SAM/BAM output (:mod:`s2g.sam`): the reference path (``ref_path``: a name, None:
    the default choice), the ``@SQ`` line's name and length, the ``@RG`` line."""

    ref_path: str | None = None
    ref_name: str | None = None
    ref_length: int | None = None
    read_group: str | None = None


@dataclass(frozen=True)
class PairOptions:
    """Paired-end reads (``s2g align G R1 R2`` or ``--interleaved``): the fragment
    length model (mean and standard deviation; None: learned from the first batch) and
    mate rescue (:mod:`s2g.seeded.pairs`)."""

    interleaved: bool = False
    fragment_mean: float | None = None
    fragment_sd: float | None = None
    rescue: bool = True

    def model(self):
        """The given :class:`~s2g.seeded.pairs.FragmentModel`, or None (learn one)."""
        if self.fragment_mean is None and self.fragment_sd is None:
            return None
        if self.fragment_mean is None or self.fragment_sd is None:
            raise S2GError("give both --fragment-mean and --fragment-sd, or neither (learned "
                           "from the reads)")
        from .seeded.pairs import FragmentModel
        return FragmentModel(float(self.fragment_mean), float(self.fragment_sd))


@dataclass(frozen=True)
class RunOptions:
    """How to align: everything a run needs besides its graph, reads and output; frozen,
    hashable and picklable (it crosses to Dask workers).

    ``variant``: a registered name or ``"auto"``. ``method``: ``"exact"`` (full-graph DP),
    ``"seeded"`` or ``"auto"`` (:func:`choose_method`). ``traceback_on``: ``"auto"`` (the
    variant's device), ``"gpu"``, ``"cpu"``, or a bool (True: GPU). ``threads``: Numba
    threads in every stage (None: all cores). ``graph_path``, ``strands``,
    ``break_cycles``, ``max_read_len``: how the graph was opened (the seed index lies
    beside ``graph_path``; ``max_read_len``: a cyclic graph's least unrolling).
    ``pairs``: :class:`PairOptions` for paired-end reads (seeded alignment only), or None.
    ``sam``: :class:`SamOptions` of SAM/BAM output (``auto`` then seeds, for MAPQ:
    :func:`choose_method`; the workers of a Dask run format the records), or None: GAF."""

    scoring: Scoring = field(default_factory=Scoring)
    mode: Mode = Mode.LOCAL
    variant: str = "auto"
    method: str = "exact"
    traceback: bool = True
    traceback_on: object = "auto"
    max_traceback_cells: int | None = None
    seeded: SeededOptions = field(default_factory=SeededOptions)
    threads: int | None = None
    graph_path: str | None = None
    strands: str = "both"
    break_cycles: bool = False
    max_read_len: int | None = None
    pairs: PairOptions | None = None
    sam: SamOptions | None = None

    @property
    def kernel_args(self):
        """(variant, traceback_on): :func:`resolve_kernel`'s arguments."""
        return self.variant, self.traceback_on

    def __post_init__(self):
        object.__setattr__(self, "mode", Mode.parse(self.mode))
        if self.method not in METHODS:
            raise S2GError(f"unknown method {self.method!r}; choose one of: {', '.join(METHODS)}")


class Kernel(NamedTuple):
    """The variant a run uses, resolved (:func:`resolve_kernel`)."""

    variant: str         # registered name; auto: an AutoName (s2g.variants.registry)
    module: object       # its module (align_batch)
    device: str          # "cpu" or "cuda"
    tb_gpu: bool         # the traceback runs on the GPU


def resolve_kernel(variant="auto", traceback_on="auto") -> Kernel:
    """``variant`` resolved (``auto``: the machine's default, what ``s2g variants``
    marks) and its module imported, and where the traceback runs; an unknown variant,
    one that cannot run here, or ``traceback_on="gpu"`` without a GPU: S2GError."""
    from .variants import registry
    name = registry.pick_auto() if variant == "auto" else variant
    module = registry.get_variant(name)
    info = registry.REGISTRY[name]
    tb_gpu = (traceback_on if isinstance(traceback_on, bool)
              else registry.traceback_on_gpu(traceback_on, info))
    return Kernel(name, module, info.device, tb_gpu)


@dataclass
class Plan:
    """What :func:`plan` decided. ``graph``: as given (a cyclic graph stays cyclic:
    full-graph DP unrolls it per batch; ``seeded.graph`` is its one seeded unrolling)."""

    graph: object
    options: RunOptions
    kernel: Kernel
    method: str                     # "exact" or "seeded"
    seeded: object = None           # the SeededAligner, or None for full-graph DP

    @property
    def variant(self) -> str:
        return self.kernel.variant

    def worker_options(self) -> RunOptions:
        """The options a Dask worker plans from: the method decided here, the seed
        index's absolute path (the workers load it; they never build it)."""
        so = self.options.seeded
        if self.method == "seeded":
            from .index import index_path
            path = so.index or index_path(self.options.graph_path)
            so = replace(so, index=os.path.abspath(path))
        return replace(self.options, method=self.method, seeded=so)


def cores() -> int:
    """CPU cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def plan(graph, options: RunOptions, run_cells=None, say=None, index=None,
         kernel: Kernel | None = None, run_reads=None, estimate=None, early=None) -> Plan:
    """The plan of a run on ``graph`` (a FlatGraph or a cyclic graph).

    ``run_cells``: the whole input's full-graph DP cells (graph columns x read bases) when
    known (one batch), for ``method="auto"``. ``say(line)``: the one-line notes of the
    choice and of the index (built, rebuilt), without the ``s2g: `` prefix (None: none).
    ``index``: a loaded :class:`~s2g.index.SeedIndex`, or
    :func:`~s2g.index.preload_index`'s future of the index file, or None (read, or built
    and saved, beside ``options.graph_path``; in memory without a path). ``kernel``:
    :func:`resolve_kernel`'s result when the caller resolved it already. ``run_reads``:
    the reads of ``run_cells``. ``estimate``: the whole input's :class:`InputEstimate`
    (``s2g align``), where it was counted: ``run_cells`` and ``run_reads``. ``early``: the
    first batch's seeding begun (:func:`early_seeds`), for a seeded run's aligner."""
    kernel = kernel or resolve_kernel(options.variant, options.traceback_on)
    if run_cells is None:
        run_cells, run_reads = _counted(graph, estimate, run_reads)
    method = choose_method(graph, options, kernel.device, run_cells, say, run_reads)
    seeded = None if method == "exact" else seeded_aligner(graph, options, kernel, say, index)
    if seeded is not None and early is not None:
        seeded.early = early
    return Plan(graph, options, kernel, method, seeded)


def early_seeds(clear, graph, options: RunOptions, index, batches, run=None, dask=None):
    """Where the GPU is ``clear`` (:func:`peek_start_cuda`) and the knob
    ``early_cpu_seeds`` is on: (``batches``, the first batch's seeding on the CPU begun
    while CUDA starts: :func:`s2g.seeded.early.start`) where it may (``index``: the seed
    index file's future; single reads, one process, an acyclic graph, the first batch
    left whole by ``batch_ramp``, a run that :func:`will_seed`; ``run``: the input's
    :class:`InputEstimate`), else (``batches``, None)."""
    cfg = settings()
    if not clear or not cfg.early_cpu_seeds or index is None or dask or \
            options.pairs is not None or is_cyclic(graph) or \
            (cfg.batch_ramp and cfg.batch_ramp_ends != "last") or \
            not will_seed(graph, options, "cuda", run):
        return batches, None
    from .seeded import early
    return early.start(graph, options, index, batches)


def _counted(graph, estimate, run_reads=None):
    """(full-graph DP cells, reads) of the whole input where ``estimate`` counted it, else
    (None, ``run_reads``)."""
    if estimate is not None and estimate.counted:
        return int(graph.n_bases) * estimate.bases, estimate.reads
    return None, run_reads


def will_seed(graph, options: RunOptions, device: str, estimate=None) -> bool:
    """Whether :func:`plan` will choose seeded alignment on ``device`` for the input of
    ``estimate`` (an :class:`InputEstimate`, None: unknown), saying and warning nothing."""
    run_cells, run_reads = _counted(graph, estimate)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return choose_method(graph, options, device, run_cells, None, run_reads) == "seeded"


def choose_method(graph, options: RunOptions, device: str, run_cells=None, say=None,
                  run_reads=None) -> str:
    """``"seeded"`` or ``"exact"``: ``options.method``, or for ``auto`` seeded alignment
    for SAM/BAM output (``options.sam``; not in global mode) and from
    :data:`AUTO_SEEDED_COLUMNS` graph columns up, except for a small input
    (``run_cells`` over ``run_reads`` reads within :func:`small_exact`) and in global
    mode (seeded alignment does not run there); ``say`` gets the note of auto's choice
    on a large graph. ``-N`` without seeded alignment: a warning."""
    method = options.method
    if options.pairs is not None:
        if options.mode == Mode.GLOBAL:
            raise S2GError("paired-end reads are aligned by seeded alignment, which has no "
                           "global mode; use -m local or -m semiglobal")
        if method == "exact":
            raise S2GError("paired-end reads are aligned by seeded alignment (their pairing "
                           "and mate rescue work on its windows); drop --exact, or align the "
                           "mates as single reads")
        return "seeded"
    if method == "auto" and options.sam is not None and options.mode != Mode.GLOBAL:
        # full-graph DP's MAPQ is 255 ("not available"), which GATK's read filters drop
        if say and graph.n_bases < AUTO_SEEDED_COLUMNS[device]:
            say("SAM/BAM output: seeded alignment, which computes MAPQ (full-graph DP writes "
                "255, which GATK drops; --exact for it)")
        method = "seeded"
    if method == "auto":
        method = "seeded" if graph.n_bases >= AUTO_SEEDED_COLUMNS[device] else "exact"
        why = "global mode" if options.mode == Mode.GLOBAL else None
        if method == "seeded" and run_cells is not None and small_exact(run_cells, run_reads,
                                                                        device, options):
            method = "exact"
            if say:
                say(f"{graph.n_bases:,} graph columns, a small input ({run_cells:,} "
                    "cells): full-graph DP (--seeded to seed)")
        if method == "seeded" and why:      # seeded alignment runs neither: say so, stay exact
            method = "exact"
            if say:
                say(f"{graph.n_bases:,} graph columns: full-graph DP (seeded alignment "
                    f"does not run with {why})")
        elif method == "seeded" and say:
            say(f"{graph.n_bases:,} graph columns: seeded alignment (--exact for "
                "full-graph DP)")
    if method == "exact" and options.seeded.secondary:
        warnings.warn("-N/--secondary is ignored: secondary alignments come from seeded "
                      "alignment (--seeded)")
    return method


def exact_gpu_seconds(cells, reads) -> float:
    """Seconds of the fast kernel for ``cells`` of full-graph DP over ``reads`` reads: at
    :data:`EXACT_GPU_CELLS_S`, scaled down where fewer than :data:`EXACT_GPU_FULL_READS`
    reads leave the GPU partly idle (3 reads of 10 kbp on a 5 Mbp graph took 13.9 s, not
    the 0.2 s of a full GPU: H200, 2026-12-04)."""
    fill = min(1.0, max(int(reads or 1), 1) / EXACT_GPU_FULL_READS)
    return float(cells) / (EXACT_GPU_CELLS_S * fill)


def small_exact(run_cells, run_reads, device, options) -> bool:
    """Whether the whole input's full-graph DP (``run_cells`` over ``run_reads`` reads) is
    cheap enough for ``auto`` to choose it: :data:`AUTO_EXACT_CELLS` a thread on a CPU,
    :data:`AUTO_EXACT_GPU_S` seconds on a GPU (:func:`exact_gpu_seconds`; ``run_reads``
    None: one read, the least filled GPU)."""
    if device == "cpu":
        return run_cells <= AUTO_EXACT_CELLS["cpu"] * (options.threads or cores())
    return exact_gpu_seconds(run_cells, run_reads) <= AUTO_EXACT_GPU_S


class InputEstimate(NamedTuple):
    """The whole input as far as it is known before aligning (:func:`estimate_input`)."""

    reads: int              # reads (estimated unless ``counted``)
    bases: int              # their bases
    seeded_cpu: float       # seeded alignment's CPU thread-seconds (SEEDED_COSTS)
    seeded_gpu: float       # its GPU path's seconds
    counted: bool           # the input ended in the first batch: counted, not estimated


def seeded_costs(lengths):
    """(CPU thread-seconds, GPU seconds) of seeded alignment of reads of ``lengths``
    (:data:`SEEDED_COSTS`, log-log between its points and along its slope beyond them)."""
    import numpy as np
    (l0, c0, g0), (l1, c1, g1) = SEEDED_COSTS
    x = np.log(np.maximum(np.asarray(lengths, np.float64), 1.0) / l0) / np.log(l1 / l0)
    x = np.maximum(x, np.log(1.0 / l0) / np.log(l1 / l0))
    cpu = np.exp(np.log(c0) + x * np.log(c1 / c0))
    gpu = np.exp(np.log(g0) + x * np.log(g1 / g0))
    return float(cpu.sum()), float(gpu.sum())


#: bytes a reader may have read past the records it parsed (its buffers: ~128 KiB plain,
#: ~512 KiB gzip, measured 2026-12-04): :func:`estimate_input` scales by the bytes read less
#: this, so a compressed file's estimate errs high (towards the GPU, the default), and a
#: first batch within twice this is too small to scale from
READ_AHEAD = 512 << 10


def estimate_input(first, size=None):
    """The whole input from its first batch: counted where the input ended in it
    (``is_last``), else scaled by the file's ``size`` over the bytes read for it
    (``input_pos``, :func:`s2g.reads.input_position`, less :data:`READ_AHEAD` unless the
    reader says it is where the batch's records end, ``input_pos_exact``); None where
    neither is known (standard input past one batch, a pipe) or the batch is too small."""
    lengths = first.lengths()
    if getattr(first, "is_last", False):
        scale, counted = 1.0, True
    else:
        pos = getattr(first, "input_pos", None)
        if not pos or not size or pos < 2 * READ_AHEAD:
            return None
        ahead = 0 if getattr(first, "input_pos_exact", False) else READ_AHEAD
        scale, counted = max(1.0, float(size) / float(pos - ahead)), False
    cpu, gpu = seeded_costs(lengths)
    return InputEstimate(int(round(len(lengths) * scale)), int(round(lengths.sum() * scale)),
                         cpu * scale, gpu * scale, counted)


def peek_input(batches, reads):
    """(``batches`` with their first put back, :func:`estimate_input` of it or None) for
    the reads file ``reads``."""
    import itertools

    from .reads import input_size
    first = next(batches, None)
    if first is None:                   # no reads: nothing for CUDA to do
        return iter(()), InputEstimate(0, 0, 0.0, 0.0, True)
    return itertools.chain([first], batches), estimate_input(first, input_size(reads))


def input_decides(options: RunOptions, dask=None) -> bool:
    """Whether ``auto``'s device waits for the input (:func:`choose_device`): the variant
    and the traceback's place left to ``auto``, one process, single reads, and a CUDA
    driver installed (without one the CPU is the only choice, and CUDA is never started)."""
    from .variants import registry
    return (options.variant == "auto" and options.traceback_on in ("auto", "cpu") and not dask
            and options.pairs is None and not registry._no_driver())


def threads_of(options: RunOptions) -> int:
    """The CPU threads a run aligns with: ``--threads``, else the cores here within
    Numba's thread count (NUMBA_NUM_THREADS)."""
    if options.threads:
        return int(options.threads)
    from numba import config
    return max(1, min(cores(), int(config.NUMBA_NUM_THREADS)))


#: the modules a seeded GPU run imports between its plan and its first aligned batch
#: (and those import the rest: s2g.trace, its GPU and long-window parts, fast's window form)
GPU_RUN_MODULES = ("s2g.aligner", "s2g.warmup", "s2g.gaf", "s2g.trace.gpu",
                   "s2g.trace.gpu_warp", "s2g.trace.warp_walk", "s2g.variants._ptx",
                   "s2g.variants.fast.windows", "s2g.variants.fast.wtables_gpu")


def preimport_gpu(gpu=True):
    """With ``gpu``, import :data:`GPU_RUN_MODULES` now (knob ``gpu_preimport``): ``s2g
    align`` calls it where it would otherwise wait for CUDA's start in another thread,
    whose driver calls leave the GIL free (these imports took ~0.3 s of the main thread
    after the plan, H100 host, session 59's profile). An optimisation: an import that
    fails here fails again, with its error, where the run needs the module."""
    import importlib
    if not gpu or not settings().gpu_preimport:
        return
    for name in GPU_RUN_MODULES:
        try:
            importlib.import_module(name)
        except Exception:               # noqa: BLE001 - see the docstring
            return


def start_cuda_soon(index, upload=True):
    """CUDA started in a background thread (:func:`s2g.variants.registry.start_cuda`) and,
    with ``index`` (the future of a seed index found, :func:`s2g.index.preload_index`), the
    seeding kernels loaded and, with ``upload``, the index uploaded after it
    (:func:`s2g.seeded.chains_gpu.preload`): ``s2g align`` reads its first reads and loads
    its graph meanwhile, where it used to wait for CUDA (0.7-1.1 s on the GPU machine)."""
    from .variants import registry

    def seeds():
        from .seeded import chains_gpu      # (imports numba.cuda: in that thread)
        chains_gpu.preload(index if upload else None)
    registry.start_cuda(seeds if index is not None else None)


def cuda_early(path) -> bool:
    """Whether the reads file ``path`` is large enough (knob ``cuda_early_bytes``) that
    ``auto`` will most likely align it on the GPU: then CUDA starts before its first batch
    is read (a wrong guess costs a background thread's start-up, not the run's output)."""
    from .reads import input_size
    least = settings().cuda_early_bytes
    return least > 0 and (input_size(path) or 0) >= least


def peek_start_cuda(batches, reads, options: RunOptions, index):
    """``auto`` with a CUDA driver: (``batches`` with their first put back, its
    :func:`estimate_input`, whether the GPU is :func:`gpu_clearly` worth it), CUDA started
    in a background thread where it is (:func:`start_cuda_soon`; a large reads file,
    :func:`cuda_early`: before the first batch is read, the seeding kernels loaded only
    once the batch says the GPU is clear: a CPU run after a wrong guess does not wait on
    Numba's compiler lock for them)."""
    from .variants import registry
    early = cuda_early(reads)
    if early:
        start_cuda_soon(None)
    batches, run = peek_input(batches, reads)
    clear = gpu_clearly(run, options)
    if clear and not early and settings().cuda_early_bytes < 0:
        registry.cuda_available()               # the order before (A/B): CUDA started here
    if clear:                   # (early: a second thread waits for the first, then loads)
        # the index goes up now where the reads are short: long ones chain on the CPU
        # (corridors), and a 1 Gbp graph's index holds 9.5 GB of the device
        start_cuda_soon(index, run is None or
                        run.bases < settings().corridor_min_len * max(run.reads, 1))
    return batches, run, clear


def gpu_clearly(run, options: RunOptions) -> bool:
    """Before the graph is loaded: whether seeded alignment of ``run`` (an
    :class:`InputEstimate`, None: size unknown) is the GPU's by :data:`SEEDED_COSTS`;
    then ``s2g align`` starts CUDA before loading the graph, and the seeding kernels load
    beside it, as before the device waited for the input. Not for a GFA file too small to
    hold :data:`AUTO_SEEDED_COLUMNS` columns (at most 2 a byte, both strands): the GPU
    would run full-graph DP there, which :func:`cpu_faster` weighs once the (small) graph
    is loaded. (A larger file of fewer columns, paths mostly, is taken as seeded.)"""
    if run is None:
        return True
    path = options.graph_path
    if path and not path.endswith((".gz", ".bgz")) and os.path.isfile(path) and \
            2 * os.path.getsize(path) < AUTO_SEEDED_COLUMNS["cuda"]:
        return False
    return run.seeded_cpu / threads_of(options) >= GPU_START_S + run.seeded_gpu


def cpu_faster(graph, options: RunOptions, run, say=None) -> bool:
    """Whether the CPU path would finish the whole input (``run``, an
    :class:`InputEstimate`) before the GPU path with its start-up (:data:`GPU_START_S`),
    each with the method ``auto`` takes there (:func:`choose_method`); ``say`` gets a note
    when it would."""
    threads = threads_of(options)
    cells = int(graph.n_bases) * run.bases
    known = cells if run.counted else None
    with warnings.catch_warnings():         # choose_method's own warnings: plan() gives them
        warnings.simplefilter("ignore")
        m_gpu = choose_method(graph, options, "cuda", known, run_reads=run.reads)
        m_cpu = choose_method(graph, options, "cpu", known, run_reads=run.reads)
    gpu_s = GPU_START_S + (run.seeded_gpu if m_gpu == "seeded"
                           else exact_gpu_seconds(cells, run.reads))
    cpu_s = (run.seeded_cpu if m_cpu == "seeded" else cells * EXACT_CPU_CELL_S) / threads
    if cpu_s >= gpu_s:
        return False
    if say and run.reads:
        def secs(x):
            return f"~{x:.1f} s" if x >= 0.1 else "under 0.1 s"
        say(f"{'' if run.counted else '~'}{run.reads:,} reads: the CPU ({threads} thread"
            f"{'s' if threads > 1 else ''}) should align them in {secs(cpu_s)}, the GPU in "
            f"{secs(gpu_s)} counting its start-up; aligning on the CPU (--variant fast for "
            "the GPU)")
    return True


def choose_device(graph, options: RunOptions, run, say=None) -> Kernel:
    """``auto``'s kernel where :func:`input_decides`: ``auto`` among the CPU variants when
    :func:`cpu_faster` (CUDA is then not started, unless a large reads file started it in
    a background thread, :func:`cuda_early`: its start-up and exit are most of what the GPU
    path loses on a small input), else the machine's default (``run`` None,
    an input of unknown size: the default)."""
    if run is None or not cpu_faster(graph, options, run, say):
        return resolve_kernel(options.variant, options.traceback_on)
    from .variants import registry
    name = registry.pick_auto(cpu_only=True)
    return Kernel(name, registry.get_variant(name), "cpu", False)


def is_cyclic(graph) -> bool:
    """True for a :class:`~s2g.cyclic.CyclicGraph` (a graph still to be unrolled)."""
    from .graph import FlatGraph
    return not isinstance(graph, FlatGraph)


def seeded_aligner(graph, options: RunOptions, kernel: Kernel, say=None, index=None):
    """The :class:`~s2g.seeded.SeededAligner` of ``options`` on ``graph`` (a cyclic graph:
    the one DAG its index belongs to, unrolled for ``max_read_len``); ``index`` and
    ``say`` as :func:`plan`'s."""
    from .seeded import SeededAligner
    if is_cyclic(graph):   # cyclic: the one DAG its index belongs to
        graph = graph.for_seeded(options.max_read_len)
    so = options.seeded
    if so.max_occ < 1 or so.max_windows < 1:
        raise S2GError("--max-occ and --max-windows must be >= 1")
    if so.secondary < 0 or not 0 <= so.secondary_ratio <= 1:
        raise S2GError("-N/--secondary must be >= 0 and --secondary-ratio between 0 and 1")
    ix = seed_index(graph, options, say, index)
    sa = SeededAligner(graph, ix, options.scoring, options.mode, max_occ=so.max_occ,
                       max_cand=so.max_windows, unseeded=so.unseeded,
                       full_module=kernel.module,
                       device="gpu" if kernel.device == "cuda" else "cpu",
                       n_secondary=so.secondary, secondary_ratio=so.secondary_ratio,
                       unseeded_min_score=so.unseeded_min_score)
    if options.pairs is None:
        return sa
    from .seeded.pairs import PairedAligner
    return PairedAligner(sa, options.pairs.model(), options.pairs.rescue)


def seed_index(graph, options: RunOptions, say=None, index=None):
    """The seed index for ``graph``: ``index`` when it is one; else beside
    ``options.graph_path`` or at ``options.seeded.index`` (:func:`~s2g.index.get_index`:
    built and saved when missing, ``say`` gets its notes; ``index`` may be its preloaded
    future); without a graph path, the file ``options.seeded.index`` or built in memory."""
    from .index import SeedIndex, build_index, get_index, load_index
    if isinstance(index, SeedIndex):
        return index
    path = options.seeded.index
    if options.graph_path is None:
        return load_index(path, graph) if path else build_index(graph)
    return get_index(graph, options.graph_path, path, progress=say, preloaded=index)
