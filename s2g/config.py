"""Every knob of s2g in one place: its default, its type and one line of doc.

Users choose alignments with command-line options and :func:`s2g.align`'s arguments; the
knobs here are the rest: caches, start-up, and the tuning constants of the kernels that
the bench experiments vary. ``s2g info --config`` prints the values in effect and where
each came from.

Where a value comes from, last wins:

1. the default below;
2. the environment, read once, at the first call of :func:`settings` (not when a module
   is imported): five documented variables, ``S2G_CACHE_DIR``, ``S2G_NO_CACHE``,
   ``S2G_PREWARM``, ``S2G_DEBUG``, and ``S2G_CONFIG=name=value[,name=value...]`` for any
   knob (e.g. ``S2G_CONFIG=fast_block=256,long_log=1``);
3. :func:`configure` (the Python API, tests and bench experiments).

A knob marked *compile* is baked into a kernel when that kernel's module is first
imported (CUDA and Numba kernels read it as a constant); setting it afterwards changes
nothing in this process, and :func:`configure` says so with a warning. Knobs marked
*run* are read at each use.

The variables of earlier versions (``S2G_FAST_BLOCK``, ``S2G_LONG_STRIP``, ...) are no
longer read; one that is set draws a warning naming its ``S2G_CONFIG`` spelling.
"""
from __future__ import annotations

import dataclasses
import os
import threading
import warnings

#: the documented environment variables, each the override of one knob
ENV_OF = {"cache_dir": "S2G_CACHE_DIR", "no_cache": "S2G_NO_CACHE", "prewarm": "S2G_PREWARM",
          "debug": "S2G_DEBUG"}
#: the variable that sets any knob
ENV_CONFIG = "S2G_CONFIG"


@dataclasses.dataclass(frozen=True)
class Knob:
    name: str
    default: object
    kind: type          # int, bool or str
    when: str           # "run" (read at each use) or "compile" (fixed at first import)
    doc: str


KNOBS = (
    # ---- caches and start-up
    Knob("cache_dir", "", str, "run",
         "kernel source cache; empty: $XDG_CACHE_HOME/s2g/kernels or ~/.cache/s2g/kernels"),
    Knob("no_cache", False, bool, "compile",
         "no on-disk cache of compiled kernels (Numba cache=False, no kernel source cache)"),
    Knob("prewarm", "auto", str, "run",
         "background compilation of the run's kernels: auto (with enough cores), 1, 0"),
    Knob("debug", False, bool, "run", "full Python traceback on an internal error"),
    Knob("vector_width", 512, int, "compile",
         "widest CPU vectors LLVM may prefer on AVX-512 hosts (512 or 256)"),
    Knob("py_nodes", 30_000, int, "run",
         "graphs of at most this many nodes build their tables in Python, not compiled"),
    Knob("devpool", True, bool, "run", "reuse GPU buffers between batches"),
    Knob("devpool_names", False, bool, "run",
         "--timings: the largest GPU buffers by name (where device memory goes)"),
    Knob("gpu_pending_frees", 0.02, float, "compile",
         "share of the GPU's memory Numba may hold in deferred frees (0: Numba's own, "
         "0.2, which held up to 16 GB of an H100 beyond the run's buffers; 0.02 keeps the "
         "device's memory in use near what they hold: with long_device_bytes, "
         "docs/gpu.md)"),
    Knob("per_thread_streams", True, bool, "compile",
         "each thread's GPU work on its own default stream (CUDA per-thread default "
         "streams), so a thread's copies wait for its own kernels, not every thread's"),
    Knob("tb_inline", True, bool, "run",
         "the GPU half of the traceback runs in the aligning thread after each kernel"),
    Knob("seed_threads", 0, int, "run",
         "Numba threads of the seeding stage (0: as every stage, --threads or all)"),
    Knob("align_threads", 0, int, "run",
         "Numba threads of the align stage (0: as every stage)"),
    Knob("tb_threads", 0, int, "run",
         "Numba threads of the traceback stage (0: as every stage)"),
    Knob("switch_us", 0, int, "run",
         "microseconds a thread holds the GIL before another may take it, while the stages "
         "run (sys.setswitchinterval; 0: Python's own, 5000)"),
    Knob("startup_switch_us", 0, int, "run",
         "microseconds a thread holds the GIL before another may take it, from the start of "
         "s2g align until its pipeline starts (the first reads and the graph are read while "
         "numba.cuda is imported in a thread; 0: Python's own, 5000)"),
    Knob("stage_log", False, bool, "run",
         "--timings also prints every stage call of the pipeline (stage, thread, start and "
         "end in seconds from the start, in start order): which stage waits for which"),
    Knob("serial_stages", False, bool, "run",
         "the align, traceback, GAF-text and write stages of each batch one after another in "
         "one thread (the seeding threads still run ahead): their seconds without each other "
         "running at once, for comparison with the threaded run's"),
    Knob("gil_probe", False, bool, "run",
         "--timings also says how long a thread that sleeps 1 ms waits for the GIL to run "
         "again while the pipeline runs (mean, 95th percentile): near the switch interval "
         "(5 ms), the stages queue for the GIL"),
    Knob("cand_min_pct", 0, int, "run",
         "seeded: chains under this percent of a read's best chain get no window (not "
         "aligned, not counted in MAPQ; at most 50; 0: every chain up to max_cand)"),
    Knob("seed_node_parts", False, bool, "run",
         "the window kernel's per-node tables made in the seeding thread (else: in the "
         "align thread, before the kernel; off until measured on a GPU)"),
    Knob("early_cpu_seeds", False, bool, "run",
         "auto on a GPU machine: the first batch seeded on the CPU while CUDA starts "
         "(s2g/seeded/early.py; the same candidates the GPU makes)"),
    Knob("seed_stages", 2, int, "run",
         "seeding in two threads, chains a batch ahead of windows (1: one thread)"),
    Knob("late_packing", True, bool, "run",
         "seeded GPU tracebacks' packing of CIGARs and paths done in the GAF thread (else: "
         "in the traceback thread)"),
    Knob("gpu_tb_summary", True, bool, "run",
         "the GPU traceback form's CIGAR runs and paths summarised and packed on the GPU "
         "(s2g/trace/gpu_summary.py): ~50 bytes a window copied back instead of its walk's "
         "~1 KB, no summaries on the host"),
    Knob("late_summary", True, bool, "run",
         "with gpu_tb_summary off: the GPU traceback form's CIGAR runs and paths summarised "
         "on the host where late_packing packs them (else: in the traceback thread, right "
         "after its walk kernel)"),
    Knob("align_workers", 1, int, "run",
         "batches aligned at once (threads of the align stage, each with its own GPU "
         "stream and buffers; output stays in input order)"),
    Knob("fast_fastq", True, bool, "run",
         "plain four-line FASTQ read by s2g's own pass (s2g/fastq_blocks.py; anything else "
         "by dnaio, as with this off)"),
    Knob("batch_bases", 25_000_000, int, "run",
         "a batch of reads also ends at this many bases (--batch-size counts reads): long "
         "reads' batches stay small enough for the pipeline's stages to overlap (0: no bound)"),
    # GPU batches: larger ones keep it fuller (100,000 x 150 bp, H200: 2.93 s at 50,000, 3.19 at
    # 20,000); growing ones after a 50,000-read first: docs/performance.md, session 66
    Knob("batch_first", 50_000, int, "run",
         "with a GPU and no --batch-size: the first batch's reads (then batch_grow)"),
    Knob("batch_grow", 200_000, int, "run",
         "with a GPU and no --batch-size: each batch after the first may hold twice the reads "
         "of the one before, up to this many (0: all of batch_first's size); a small "
         "first batch starts the pipeline soon, larger ones cost less a read"),
    Knob("batch_ramp", 0, int, "run",
         "seeded: the first batch cut into pieces 1/2^n, 1/2^n, ..., 1/2 of it and the last "
         "into halves down to 1/2^n (the pipeline's fill and drain; 0: whole batches)"),
    Knob("batch_ramp_ends", "both", str, "run",
         "which batches batch_ramp cuts: both, first or last"),
    Knob("blas_probe", False, bool, "compile",
         "the s2g command lets Numba probe for BLAS (it imports scipy.linalg where SciPy is "
         "installed: 0.16-0.39 s of the start-up; s2g's kernels use no BLAS)"),
    Knob("lean_cuda", True, bool, "run",
         "GPU runs launch their kernels' stored cubins through the CUDA driver (ctypes) and "
         "never import numba.cuda once every kernel is stored (the first run stores them; "
         "s2g/variants/_lean.py; 1.0-1.4 s less a run on MHC, docs/performance.md session 70); "
         "off: every launch through numba.cuda"),
    Knob("cached_seeded_dag", True, bool, "run",
         "a cyclic graph read from its graph cache brings its seeded DAG (no unrolling, no "
         "analysis of its cycles at the start); off: unrolled at each run as before"),
    Knob("fast_exit", True, bool, "run",
         "the s2g command leaves without the interpreter's clean-up once its output is "
         "flushed and closed (os._exit; that clean-up took 0.4-0.5 s)"),
    Knob("dask_parts", True, bool, "run",
         "--dask: workers read their own byte ranges of a plain or BGZF FASTA/FASTQ file "
         "through the whole pipeline (else: the client reads and sends chunks of reads)"),
    Knob("dask_part_bytes", 0, int, "run",
         "--dask: bytes of the reads file a worker's range holds, at most (0: the file "
         "over the workers' threads, between 16 MiB and 1 GiB)"),
    Knob("dask_malloc", True, bool, "run",
         "--dask workers: glibc's mmap and trim thresholds put back where Dask's nanny "
         "(MALLOC_TRIM_THRESHOLD_) moved them (s2g.distributed_worker.malloc_as_usual)"),
    Knob("finish_workers", 2, int, "run",
         "batches traced at once (threads of the traceback stage; output stays in input "
         "order)"),
    Knob("processes", 1, int, "run",
         "s2g align in this many processes (s2g/processes.py): a plain or BGZF reads file cut "
         "into byte ranges, each aligned by a forked child with a GIL (and a CUDA context) of "
         "its own, the GAF written in input order; 1: one process"),
    Knob("processes_import_cuda", True, bool, "run",
         "with processes > 1 on a machine with a CUDA driver: numba.cuda imported once before "
         "the children are forked (its import is ~1 s of Python each child would otherwise "
         "spend holding its GIL at start-up; CUDA itself starts in each child)"),
    Knob("processes_min_bytes", 32 << 20, int, "run",
         "with processes > 1: the least bytes of the reads file a part holds (a smaller file "
         "stays in fewer processes)"),
    Knob("gpu_preimport", True, bool, "run",
         "auto on a GPU machine: the GPU run's modules imported while CUDA starts in its "
         "thread (not after the plan, in the main thread)"),
    Knob("cuda_context_early", True, bool, "run",
         "where CUDA starts in a background thread: the driver's start and device 0's "
         "primary context made in a thread of their own through ctypes (calls that leave "
         "the GIL free) while numba.cuda is imported, which then finds the context made"),
    Knob("cuda_early_bytes", 64 << 20, int, "run",
         "auto on a GPU machine: a reads file of at least this many bytes starts CUDA before "
         "its first batch is read (smaller: once that batch says the GPU is clearly worth it, "
         "while the graph loads; 0: the latter only; -1: then, in the main thread, before the "
         "graph loads, as before session 56)"),
    Knob("format_workers", 1, int, "run",
         "batches formatted at once (threads of the GAF-text stage, which also completes "
         "late_packing's tracebacks; output stays in input order)"),
    # ---- fast (full-graph GPU kernel), s2g/variants/fast.py
    Knob("fast_block", 128, int, "compile", "fast: threads per block"),
    Knob("fast_maxreg", 0, int, "compile", "fast: register cap for ptxas (0: its choice)"),
    Knob("fast_pipe", True, bool, "compile",
         "fast: long reads pipelined across the groups of a block"),
    Knob("fast_pipe_p", 0, int, "run", "fast: pipeline stages a block (0: automatic)"),
    Knob("fast_pair", True, bool, "run", "fast: the 16-bit pair kernel where the bound allows"),
    Knob("fast_exchange", "shfl", str, "compile",
         "fast: lane exchange, shfl (warp shuffles) or shared (the simulator's)"),
    Knob("fast_nsh", "auto", str, "run",
         "fast: node_bound slots in shared memory (auto or a number)"),
    Knob("fast_ranges", "auto", str, "run",
         "fast: column ranges a unit for small batches (auto or a number; 1: no split)"),
    # ---- seeded windows, s2g/seeded/windows.py
    Knob("corridor_min_len", 1000, int, "run",
         "reads of at least this many bases get corridor windows (reaches between chain "
         "waypoints, not the chain's whole span); 0: never"),
    Knob("corridor_waypoints", 64, int, "run", "most waypoints a chain of a corridor"),
    Knob("corridor_merge_flanks", False, bool, "run",
         "a later chain merging into a window brings its flank searches too (0: not)"),
    Knob("window_bounds", True, bool, "run",
         "long reads skip windows whose score bound cannot reach their best window's "
         "(results identical; 0: align every window)"),
    Knob("copies_mapq", True, bool, "run",
         "a read whose best window merged several strong chains is aligned again there "
         "without its alignment's bases; that score counts in MAPQ (0: windows only)"),
    Knob("copies_gpu_min", 0, int, "run",
         "GPU runs: a batch's copies windows (copies_mapq) go to the GPU from this many on, "
         "fewer run on the CPU (0: always the GPU; the GAF is the same either way)"),
    Knob("long_cand_ratio", 0.5, float, "run",
         "long reads skip windows whose chain scores under this share of their best "
         "chain's (never counted in MAPQ, as chains cut by --max-windows under CUT_RATIO); "
         "0: align them"),
    Knob("prune_min_len", 1000, int, "run",
         "CPU windows of reads of at least this many bases compute only the cells that can "
         "still hold the optimum (score bounds; exact; s2g/variants/pruned.py); 0: never"),
    Knob("prune_loose_xdrop", True, bool, "run",
         "pruned CPU windows whose bound is loose (high error rates) run one exact pass at "
         "their X-drop pass's score instead of striped, recording the walk (0: striped)"),
    Knob("prune_hits", True, bool, "run",
         "pruned CPU windows bound a read suffix by the fewest error positions its "
         "q-grams missing from the window need (0: by their count over q, looser)"),
    Knob("prune_record_bytes", 1 << 28, int, "run",
         "most direction bytes a pruned CPU window's pass records for its walk, per thread "
         "(a window past it is traced in its band: less memory, a slower traceback)"),
    Knob("tb_prune_band", True, bool, "run",
         "the CPU traceback of a pruned window computes only the rows its scoring pass "
         "kept (0: its slack band alone)"),
    Knob("tb_prune_walk", True, bool, "run",
         "a pruned CPU window pass records its cells' direction bytes and walks back from "
         "its best cell; the traceback reuses that walk (0: traced again, in its band)"),
    Knob("striped_min_len", 1000, int, "run",
         "CPU windows of reads of at least this many bases run striped (rows in lanes, one "
         "window a thread) when few (below); 0: never"),
    Knob("striped_tasks_per_thread", 64, int, "run",
         "... few: fewer such windows than this x threads (else lanes across reads)"),
    # ---- GPU traceback, s2g/gpu_traceback.py
    Knob("gpu_tb_max_cells", 1 << 21, int, "run",
         "largest window (cells) traced by the one-thread GPU kernel"),
    Knob("gpu_window_max_cells", 0, int, "run",
         "the same bound for seeded windows (0: gpu_tb_max_cells)"),
    Knob("gpu_window_fast", True, bool, "run",
         "seeded windows of short reads on the fast kernel (else: the traceback kernel's "
         "find mode for every window)"),
    Knob("gpu_seeds", True, bool, "run",
         "seeds and chains of reads without corridor waypoints made on the GPU, one thread "
         "a read (else: on the host's threads)"),
    Knob("gpu_window_search", True, bool, "run",
         "seeded windows: each chain's graph searches (its node pieces) on the GPU, one "
         "thread a chain, right after the chain kernels, the host assembling windows from "
         "the lists (else: searched on the host's threads)"),
    Knob("lazy_window_bases", True, bool, "run",
         "seeded windows: a window graph's bases gathered from the graph's only when "
         "something asks for them (CPU kernels, tracebacks; the GPU path reads the graph's)"),
    Knob("gpu_window_bases", True, bool, "run",
         "seeded windows: the GPU gathers a window graph's bases from the graph's (on the "
         "device once) instead of receiving them (a byte a window column)"),
    Knob("gpu_long_programs", True, bool, "run",
         "seeded long windows' column programs and walk bounds made on the GPU from "
         "per-node records (else: on the host, uploaded, ~30 bytes a window column)"),
    Knob("gpu_window_tables", True, bool, "run",
         "the fast kernel's window tables made on the GPU from per-node data and bases "
         "(else: on the host, uploaded)"),
    Knob("gpu_window_long_cells", 1 << 40, int, "run",
         "largest seeded window (cells) for the long-window kernel (and one launch's memory)"),
    Knob("gpu_tb_chunk_bytes", 1 << 30, int, "run", "device bytes for one chunk of reads"),
    Knob("gpu_tb_warp", True, bool, "run",
         "trace the fast kernel's chosen seeded windows (reads up to 192 bases) by running "
         "them again in its traceback form, 8 lanes a window, and walking the stored codes "
         "(s2g/trace/gpu_warp.py; 1,000,000 reads 0.8-1.7 s faster on an H100, GAF "
         "identical); off: the one-thread traceback kernel and its host column programs"),
    Knob("gpu_tbw_chunk_bytes", 1 << 30, int, "run",
         "device bytes for one launch of gpu_tb_warp's windows (direction codes, choices, "
         "walks)"),
    Knob("gpu_pack_uploads", False, bool, "run",
         "GPU traceback chunks and fast window launches: the small inputs in one upload and "
         "the outputs in one download (fewer driver calls, each of which gives up the GIL; "
         "no gain on an H100, 2026-12-06)"),
    Knob("gpu_reuse_events", False, bool, "run",
         "the CUDA events that time the window, traceback and chaining kernels made once a "
         "thread (py-spy: creating them took 0.36 s of a 1M-read run's threads; no gain on "
         "an H100, 2026-12-06)"),
    Knob("gpu_sync_first", False, bool, "run",
         "wait for a thread's stream before a copy back that waits for its kernel (the "
         "traceback chunk's, the chaining's), not inside the copy (no gain on an H100, "
         "2026-12-06)"),
    Knob("gpu_tb_interleave", True, bool, "run",
         "column scratch interleaved across the reads of a chunk"),
    Knob("gpu_long", True, bool, "run", "use the long-window kernel (else: CPU)"),
    Knob("long_group_bytes", 2 << 30, int, "run", "long windows: host bytes a group"),
    Knob("long_prefetch", True, bool, "run",
         "long windows: prepare the next launch while the kernel runs"),
    Knob("long_log", False, bool, "run", "long windows: one stderr line per launch"),
    Knob("long_band", True, bool, "run", "long windows: rounds compute only their band"),
    Knob("tb_band", True, bool, "run",
         "CPU traceback of long windows: row bands compute only their slack band's columns"),
    Knob("long_score_first", True, bool, "run",
         "seeded long windows: scores first (no codes), the chosen ones traced in their band"),
    Knob("gpu_prune", True, bool, "run",
         "seeded long windows scored first (local mode): the cells that can still hold the "
         "optimum only (score bounds; exact; s2g/trace/long/prune.py)"),
    Knob("gpu_prune_hits", False, bool, "run",
         "pruned GPU windows bound a read suffix as the CPU's do (knob prune_hits: the "
         "fewest error positions; off: the q-gram count, as measured on a GPU so far)"),
    Knob("gpu_prune_margin", 100, int, "run",
         "pruned GPU windows: the first threshold's margin, percent of the CPU's"),
    Knob("gpu_prune_band", True, bool, "run",
         "the GPU traceback of a pruned window computes and keeps only the rows its "
         "scoring pass kept (each strip's columns with a kept cell; 0: its slack band "
         "alone)"),
    Knob("gpu_prune_handoff", True, bool, "run",
         "pruned GPU windows: each round's hand-off to the next allocated for the columns it "
         "steps over (found by a kernel before the launch) instead of the window's width"),
    # ---- long-window kernel, s2g/gpu_long.py
    Knob("long_strip", 32, int, "compile", "long kernel: rows a strip (8, 16, 24 or 32)"),
    Knob("long_max_t", 256, int, "compile", "long kernel: most threads a block"),
    Knob("long_shared", 48 * 1024, int, "run", "long kernel: shared bytes a block"),
    Knob("long_few_shared", 96 * 1024, int, "run",
         "long kernel: shared bytes a block in launches of fewer windows than SMs"),
    Knob("long_round_t", 32, int, "run", "long kernel: threads a block (0: the widths above)"),
    Knob("long_round_shared", 12 * 1024, int, "run", "long kernel: shared bytes with long_round_t"),
    Knob("long_debug", 0, int, "compile",
         "long kernel timing experiments (results wrong): 1 no stores, 4 no barrier, 8 no "
         "walk, 32 pruned passes' walk bound 1,000 too high (tests)"),
    Knob("long_maxreg", 168, int, "compile", "long kernel: register cap for ptxas"),
    Knob("long_chunk_bytes", 6_000_000_000, int, "run",
         "long kernel: device bytes a launch (0: half of free memory)"),
    Knob("long_device_bytes", 0, int, "run",
         "long kernel: device bytes all threads' long launches hold at once (a thread's "
         "launches get this over align_workers + 1: the traceback threads take turns; 0: "
         "a quarter of the GPU's memory, at most 7 GB)"),
)
_BY_NAME = {k.name: k for k in KNOBS}


class Settings:
    """The knobs' values (attributes by knob name) and where each came from."""

    __slots__ = ("_values", "_source")

    def __init__(self, values: dict, source: dict):
        object.__setattr__(self, "_values", dict(values))
        object.__setattr__(self, "_source", dict(source))

    def __getattr__(self, name):
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"no knob {name!r} (s2g info --config lists them)") from None

    def __setattr__(self, name, value):
        raise AttributeError("Settings are read-only; use s2g.config.configure()")

    def source(self, name: str) -> str:
        return self._source[name]

    def as_dict(self) -> dict:
        return dict(self._values)


def parse(knob: Knob, text: str):
    """A knob's value from text; ValueError with a one-line reason."""
    text = text.strip()
    if knob.kind is bool:
        low = text.lower()
        if low in ("1", "true", "yes", "on"):
            return True
        if low in ("0", "false", "no", "off", ""):
            return False
        raise ValueError(f"{knob.name}: {text!r} is not a boolean (1/0, true/false)")
    if knob.kind is int:
        try:
            return int(text.replace("_", ""), 0)
        except ValueError:
            raise ValueError(f"{knob.name}: {text!r} is not an integer") from None
    if knob.kind is float:
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"{knob.name}: {text!r} is not a number") from None
    return text


def _check(knob: Knob, value):
    if knob.kind is bool and not isinstance(value, bool):
        raise ValueError(f"{knob.name}: {value!r} is not a boolean")
    if knob.kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise ValueError(f"{knob.name}: {value!r} is not an integer")
    if knob.kind is float and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise ValueError(f"{knob.name}: {value!r} is not a number")
    if knob.kind is str and not isinstance(value, str):
        raise ValueError(f"{knob.name}: {value!r} is not a string")
    if knob.name == "long_strip" and not (8 <= value <= 32 and value % 8 == 0):
        raise ValueError("long_strip must be 8, 16, 24 or 32")
    if knob.name == "cand_min_pct" and not 0 <= value <= 50:
        raise ValueError("cand_min_pct must be 0 to 50")
    if knob.name == "vector_width" and value not in (256, 512):
        raise ValueError("vector_width must be 256 or 512")
    if knob.name == "prewarm" and value not in ("auto", "0", "1"):
        raise ValueError("prewarm must be auto, 0 or 1")
    if knob.name == "batch_ramp_ends" and value not in ("both", "first", "last"):
        raise ValueError("batch_ramp_ends must be both, first or last")
    if knob.name == "batch_first" and value < 1:
        raise ValueError("batch_first must be >= 1")
    if knob.name in ("align_workers", "batch_ramp") and not 0 <= value <= 16:
        raise ValueError(f"{knob.name} must be 0 to 16")
    if knob.name == "processes" and not 1 <= value <= 64:
        raise ValueError("processes must be 1 to 64")
    if knob.name == "processes_min_bytes" and value < 1:
        raise ValueError("processes_min_bytes must be >= 1")
    if knob.name == "format_workers" and not 1 <= value <= 16:
        raise ValueError("format_workers must be 1 to 16")
    if knob.name == "batch_bases" and value < 0:
        raise ValueError("batch_bases must be >= 0")
    if knob.name == "fast_exchange" and value not in ("shfl", "shared"):
        raise ValueError("fast_exchange must be shfl or shared")
    return value


def from_environ(environ) -> tuple[dict, dict]:
    """Values and sources from an environment mapping; ValueError on a bad value."""
    values = {k.name: k.default for k in KNOBS}
    source = {k.name: "default" for k in KNOBS}
    for name, var in ENV_OF.items():
        text = environ.get(var)
        if text is None:
            continue
        knob = _BY_NAME[name]
        if knob.kind is bool:       # these were "set to anything" flags: keep that meaning
            values[name] = text.strip().lower() not in ("", "0", "false", "no", "off")
        elif name == "prewarm":
            values[name] = {"": "auto"}.get(text.strip(), text.strip())
            try:
                _check(knob, values[name])
            except ValueError as exc:
                raise ValueError(f"{var}: {exc}") from None
        else:
            values[name] = text
        source[name] = var
    for item in (environ.get(ENV_CONFIG) or "").split(","):
        if not item.strip():
            continue
        name, sep, text = item.partition("=")
        name = name.strip().lower()
        if not sep or name not in _BY_NAME:
            raise ValueError(f"{ENV_CONFIG}: {item.strip()!r} is not name=value of a knob "
                             "(s2g info --config lists them)")
        try:
            values[name] = _check(_BY_NAME[name], parse(_BY_NAME[name], text))
        except ValueError as exc:
            raise ValueError(f"{ENV_CONFIG}: {exc}") from None
        source[name] = ENV_CONFIG
    return values, source


def _legacy(environ) -> list[str]:
    """Variables of earlier versions that are set: their S2G_CONFIG spelling."""
    known = set(ENV_OF.values()) | {ENV_CONFIG}
    out = []
    for var in sorted(environ):
        if var.startswith("S2G_") and var not in known:
            name = var[4:].lower()
            if name in _BY_NAME:
                out.append(f"{var} is no longer read; use {ENV_CONFIG}={name}={environ[var]}")
    return out


_LOCK = threading.Lock()
_SETTINGS: Settings | None = None
_COMPILED: set = set()       # compile knobs already read by a kernel module


def settings() -> Settings:
    """The values in effect (the environment is read at the first call)."""
    global _SETTINGS
    s = _SETTINGS
    if s is not None:
        return s
    with _LOCK:
        if _SETTINGS is None:
            try:
                values, source = from_environ(os.environ)
            except ValueError as exc:
                from .errors import S2GError
                raise S2GError(str(exc)) from None
            for line in _legacy(os.environ):
                warnings.warn(line, stacklevel=2)
            _SETTINGS = Settings(values, source)
        return _SETTINGS


def compile_time(name: str):
    """A *compile* knob's value, for a kernel module at its import: later
    :func:`configure` calls of this knob warn that they come too late.

    Importing never fails: before the first :func:`settings` call the environment is
    read here without keeping it, and a bad ``S2G_CONFIG`` gives the knob's default (the
    one-line error comes at that first call, before anything runs: ``s2g`` makes it
    first thing, the API where it first reads a run knob); a legacy variable's warning
    waits for that call too."""
    _COMPILED.add(name)
    s = _SETTINGS
    if s is not None:
        return getattr(s, name)
    try:
        values, _ = from_environ(os.environ)
    except ValueError:
        return _BY_NAME[name].default
    return values[name]


def configure(**values) -> Settings:
    """Set knobs for this process (validated); returns the new settings."""
    global _SETTINGS
    cur = settings()
    new, source = cur.as_dict(), dict(cur._source)
    for name, value in values.items():
        knob = _BY_NAME.get(name)
        if knob is None:
            raise ValueError(f"no knob {name!r} (s2g info --config lists them)")
        new[name] = _check(knob, value)
        source[name] = "configure()"
        if knob.when == "compile" and name in _COMPILED and value != cur.as_dict()[name]:
            warnings.warn(f"{name} is fixed when its kernels are compiled; the new value "
                          "applies to a new process", stacklevel=2)
    with _LOCK:
        _SETTINGS = Settings(new, source)
    return _SETTINGS


def reset() -> None:
    """Forget the values (tests): the next :func:`settings` reads the environment again."""
    global _SETTINGS
    with _LOCK:
        _SETTINGS = None


def child_environ(**overrides) -> dict:
    """``os.environ`` for a child process (the warm-up workers) that runs with the
    settings in effect here, ``configure()`` calls included, and ``overrides``: the
    documented knobs as their own variables (``S2G_PREWARM=0``; a path may hold a comma),
    every other knob not at its default in ``S2G_CONFIG``."""
    values = dict(settings().as_dict())
    for name, value in overrides.items():
        values[name] = _check(_BY_NAME[name], value)
    env = dict(os.environ)
    env.pop(ENV_CONFIG, None)
    items = []
    for k in KNOBS:
        v, var = values[k.name], ENV_OF.get(k.name)
        if var is None:
            if v != k.default:
                items.append(f"{k.name}={int(v) if k.kind is bool else v}")
        elif v is True or (k.kind is not bool and v != k.default):
            env[var] = "1" if v is True else str(v)
        else:
            env.pop(var, None)
    if items:
        env[ENV_CONFIG] = ",".join(items)
    return env


def describe() -> list[tuple[str, object, str, str, str]]:
    """(name, value, source, when, doc) of every knob, in :data:`KNOBS` order."""
    s = settings()
    return [(k.name, getattr(s, k.name), s.source(k.name), k.when, k.doc) for k in KNOBS]
