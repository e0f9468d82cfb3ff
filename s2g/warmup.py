"""Compile ahead: fill the on-disk caches in parallel worker processes (issue 16).

A first ``s2g align`` on a machine with empty caches spends most of its time compiling
(the bundled example on the 2-core dev VM: ~65 s of ~70 s; a fresh H100 host: ~50 s of
~60 s). Numba compiles one function at a time per process (one compiler lock), and the
big ones are independent: the CPU path's alignment kernel (``simd.run_groups``, ~18 s
here) and lane traceback (``traceback._run_lanes``, ~45 s), the GPU path's ``fast``
kernel (~15-25 s of NVVM + ptxas) and the GPU traceback's host code (``_sizes``,
``_fill_into``, ``_summarize_all``, ~45 s here). So they are compiled by separate
processes, each running one stage of the real code on a tiny simulated input
(:func:`s2g.warmup_worker.run_task`), which leaves its machine code in the same caches a run loads from:
Numba's (``cache=True``, ``$NUMBA_CACHE_DIR`` or ``__pycache__``) and, for ``fast``,
the generated kernel sources' in ``~/.cache/s2g/kernels``. Seeded alignment (the
default on graphs of 100,000 columns and more, 1,000,000 with a GPU variant) has a task
of its own (:func:`seeded_plan`): ``s2g align --seeded`` on a tiny graph, which builds,
saves and loads the tiny graph's index and runs the seeds, chains, windows and window
kernel (on a GPU variant the GPU windows), so a first seeded run and a first
``s2g index`` load all of it (2-core VM: 83 s and 7.6 s cold, 1.5 s and 0.7 s after
``s2g warmup``). Each generated long-window kernel a run's reads reach is a task of its
own (:func:`long_kernel_tasks`): they are the largest compilations (a fresh H100 spent
262-300 s on a 10 kbp run's tasks when the ``seeded`` process compiled them too).

Two ways in:

* **At first use** (:func:`start`, called by :meth:`s2g.aligner.Aligner.run` with the
  first batch): for the run's configuration (variant, mode, scoring, the first batch's
  longest read, where the traceback runs) the tasks whose cache is cold (:func:`cold`:
  the task's main function has no fresh cache entry) start as background processes;
  each pipeline stage waits for its own tasks before its first call (:meth:`Prewarm.wait`)
  and then loads from the cache. Nothing starts when the caches are warm (a check of a
  few index files, ~1 ms). ``start(..., seeded=True)`` plans a seeded run's tasks (stages
  ``seed``: the seeding, in the reader thread; ``align``: the window kernel;
  ``traceback``, ``gaf``).
* **Ahead** (``python -m s2g.warmup`` / ``s2g warmup``, :func:`main`): the common
  configurations (this machine's ``auto`` variant and ``cpu``, which ``auto`` picks on a
  CPU for some batch shapes; with a GPU also ``simd``; each full-graph and seeded; local
  mode, default scoring, 150 bp reads) compiled in parallel, e.g. right after
  ``pip install``.

A run that will compile (a task of its configuration is :func:`cold`) says so on stderr
first (:func:`compile_note`), since a first run is otherwise silent for a minute or more
when stderr is not a terminal.

Safety: a task is an optimisation only. A worker that fails, hangs (:data:`TIMEOUT`) or
is killed leaves the stage to compile in-process as before; Numba writes cache files
atomically (temporary file + rename), so a killed worker leaves no partial entry.
Workers exit when the parent does (they watch their stdin) and run with the parent's
settings (:func:`s2g.config.child_environ`) and ``S2G_PREWARM=0``. First-use workers start
only on machines with :data:`MIN_CORES` cores (the ``prewarm`` knob, ``S2G_PREWARM``:
``1`` always, ``0`` never); ``no_cache`` (``S2G_NO_CACHE``: no disk cache) and the CUDA
simulator turn them off.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time

from . import warmup_unmet

#: a worker running longer than this is killed (its stage compiles in-process). A cold
#: task takes ~15-60 s (the lane traceback up to ~120 s on a busy 2-core VM); a stage
#: waits for its tasks, so this bounds what a slow task can cost a run (``--timings``
#: prints the waits: ``stages waited``)
TIMEOUT = 300.0
#: tiny inputs: reads per task, graph bases at least this (and 4 x the read length)
TINY_READS, TINY_BASES = 8, 1000
#: a task's reads are at most this long: longer reads take no code path that reads of
#: 5 kbp miss (int32 lanes, row-banded and GPU long-window traceback all start below
#: 2 kbp with the default scoring), and the task's input stays small. Uncapped, a 50 kbp
#: run's GAF task ran V0 on 8 x 50 kbp reads of a 200 kbp graph on one thread (~1.6e11
#: cells) while the run's GAF stage waited for it: 600 s (issue 15's "50 kbp hang")
WARM_MAX_LEN = 5000
#: reads above this get LONG_READS reads on a graph of read length + LONG_SLACK bases
LONG_LEN, LONG_READS, LONG_SLACK = 1000, 2, 2000


def warm_len(read_len) -> int:
    """The read length a warm-up task runs for a batch whose longest read is ``read_len``."""
    return int(min(max(1, read_len), WARM_MAX_LEN))

# ------------------------------------------------------------------ which tasks


def _sc(scoring):
    return list(scoring.as_tuple()) if hasattr(scoring, "as_tuple") else [int(x) for x in scoring]


def fast_key(scoring, mode, max_len):
    """(G, K, mode, prmt_sub, pair, pipe) of the `fast` kernel
    :func:`s2g.variants.fast.run_kernel` launches for a batch whose longest read is
    ``max_len``, or None where it runs the CPU instead (scores beyond int32)."""
    from .scoring import Scoring, fits_int32
    from .variants import fast
    sc = scoring if isinstance(scoring, Scoring) else Scoring(*scoring)
    if not fits_int32(sc, mode, max_len, max(TINY_BASES, 1)):
        return None
    a, b, o, e = sc.as_tuple()
    from .config import settings
    pair = fast.pair_fits(sc, mode, max_len) and settings().fast_pair
    G, K = fast.choose_config(max_len, pair)
    pipe = fast.WARP // G if fast.PIPE and max_len > G * K else 0   # fast.pipe_groups's SG
    return [G, K, int(mode), bool(fast.prmt_scores(a, b, o, e)), bool(pair), int(pipe)]


def fast_keys(scoring, mode, max_len):
    """Every `fast` kernel a batch of reads up to ``max_len`` may launch: :func:`fast_key`,
    and for long reads also the kernel without the pipeline (fast.pipe_groups runs it
    for batches that fill the GPU with a warp a read) and big batches' 8-lane groups."""
    key = fast_key(scoring, mode, max_len)
    if key is None or not key[5]:
        return [] if key is None else [key]
    from .variants import fast
    return [key, key[:5] + [0], [fast.BIG_G, fast.BIG_K] + key[2:5] + [0]]


def plan(variant, mode, scoring, read_len, traceback=True, tb_gpu=False, inline=True,
         seeded=False):
    """The tasks of one run's configuration: a list of (task, stages that need it); a
    task is a JSON-able dict (:func:`s2g.warmup_worker.run_task`). Variants other than ``simd``, ``cpu``
    and ``fast`` (the baselines V0-V4) get none for their kernel. ``seeded``: the run
    aligns by seeds and windows (:func:`seeded_plan`)."""
    from .scoring import Mode
    mode, sc, L = int(mode), _sc(scoring), warm_len(read_len)
    if seeded:
        return seeded_plan(variant, mode, sc, read_len, traceback)
    out = []
    if variant == "fast":
        keys = fast_keys(sc, mode, int(max(1, read_len)))      # names kernels: not capped
        for key in keys:
            out.append(({"kind": "fast_kernel", "key": key}, ("align",)))
        if keys and mode == int(Mode.GLOBAL):   # the tables' one compiled part
            out.append(({"kind": "fast_host", "mode": mode, "scoring": sc}, ("align",)))
    elif variant in ("simd", "cpu"):
        out.append(({"kind": "align", "variant": variant, "mode": mode, "scoring": sc,
                     "read_len": L}, ("align",)))
    if traceback:
        stages = ("traceback", "gaf") + (("align",) if tb_gpu and inline else ())
        out.append(({"kind": "trace", "gpu": bool(tb_gpu), "mode": mode, "scoring": sc,
                     "read_len": L}, stages))
        if tb_gpu:                  # windows past the one-thread kernel: the long one's
            out += [(t, stages) for t in _trace_long_kernel(mode, sc, read_len)]
    else:
        out.append(({"kind": "gaf", "mode": mode, "scoring": sc, "read_len": L}, ("gaf",)))
    return out


#: a seeded task's reads are at least this long (shorter ones may have no seed chain and
#: would take the unseeded reads' full-graph DP instead of the seeded code)
SEEDED_MIN_LEN = 100


def _device(variant) -> str:
    from .variants import registry
    info = registry.REGISTRY.get(variant)
    return info.device if info is not None else "cpu"


def seeded_plan(variant, mode, scoring, read_len, traceback=True):
    """The tasks of a seeded run (``s2g align --seeded``, the default on large graphs):
    one ``seeded`` task, a tiny seeded run that compiles the index build and lookup, the
    seeds, chains and windows, the window kernel (CPU: ``simd.align_windows``; GPU:
    :func:`s2g.trace.gpu.run_windows`, and its walks taken as tracebacks) and the
    window graph's mapping; then the CPU lane traceback (the ``trace`` task: the windows'
    traceback is the full-graph one's, on the window graph) and the GAF; for reads whose
    windows run pruned (``prune_min_len``) and are traced by the walks their passes
    record (``tb_prune_walk``), the ``gaf`` task alone: such a run never compiles the
    lanes, and probing them said "compiling (first run)" on every warm long-read CPU run
    (2-core VM, session 51; on 4 cores or more it started a worker too). None in global
    mode (seeded alignment does not run there)."""
    from .scoring import Mode
    mode, sc = int(mode), _sc(scoring)
    if mode == int(Mode.GLOBAL):
        return []
    L = max(warm_len(read_len), SEEDED_MIN_LEN)
    if _device(variant) == "cuda":     # GPU windows: the walks are the tracebacks
        return [({"kind": "seeded", "gpu": True, "variant": variant, "mode": mode,
                  "scoring": sc, "read_len": L}, ("seed", "align", "traceback", "gaf"))
                ] + window_kernel_tasks(mode, sc, read_len) + long_kernel_tasks(
                    mode, sc, read_len, traceback)
    out = [({"kind": "seeded", "gpu": False, "mode": mode, "scoring": sc, "read_len": L},
            ("seed", "align"))]
    from .config import settings
    cfg = settings()
    if traceback and not (0 < cfg.prune_min_len <= max(1, int(read_len))
                          and cfg.tb_prune_walk):
        out.append(({"kind": "trace", "gpu": False, "mode": mode, "scoring": sc,
                     "read_len": L}, ("traceback", "gaf")))
    else:
        out.append(({"kind": "gaf", "mode": mode, "scoring": sc, "read_len": L}, ("gaf",)))
    return out


def window_kernel_tasks(mode, scoring, read_len):
    """The ``fast`` kernel's window form a seeded GPU run of reads up to ``read_len``
    bases launches (:func:`s2g.variants.fast.windows.run`, its shape for the longest
    read), as a ``fast_kernel`` task of its own beside the ``seeded`` one (as
    :func:`long_kernel_tasks`); none past :data:`~s2g.variants.fast.windows.MAX_ROWS`
    or with ``gpu_window_fast`` off."""
    from .config import settings
    from .variants import fast
    from .variants.fast import windows as fast_windows
    n = int(max(1, read_len))
    if not settings().gpu_window_fast or n > fast_windows.MAX_ROWS:
        return []
    G, K = fast_windows.shape(n)
    prmt = bool(fast.prmt_scores(*(int(x) for x in scoring)))
    tasks = [({"kind": "fast_kernel", "key": [G, K, int(mode), prmt, False, 0, True]},
              ("align",))]
    if warp_form(mode, n):
        # its traceback form (s2g/trace/gpu_warp.py), one shape for all its windows:
        # 47-80 s to compile on the H100 host
        from .trace.gpu_warp import form_shape
        tasks.append(({"kind": "fast_kernel",
                       "key": [*form_shape(), int(mode), prmt, False, 0, True, True]},
                      ("align",)))
    return tasks


def warp_form(mode, read_len) -> bool:
    """Whether a seeded GPU run of reads up to ``read_len`` bases traces its windows in the
    ``fast`` kernel's traceback form (knob ``gpu_tb_warp``; the rows it takes:
    :func:`s2g.trace.gpu_warp.fits`)."""
    from .config import settings
    from .trace.gpu_warp import fits
    return bool(settings().gpu_tb_warp and settings().gpu_window_fast
                and fits([max(1, int(read_len))], mode)[0])


def long_kernel_tasks(mode, scoring, read_len, traceback=True):
    """The long-window kernels a seeded GPU run of reads up to ``read_len`` bases launches,
    one task each (``long_kernel``): in local mode the pruned scoring kernel (stage
    ``align``) and the kernel that traces the chosen windows (``traceback``); in the
    other modes the one kernel both use. Each is a generated kernel of ~600-760 KB of PTX
    (NVVM 10-30 s on the 2-core VM, then ptxas on the GPU machine), and a fresh H100 spent
    262-300 s compiling a 10 kbp run's tasks in the one ``seeded`` process (sessions 50-51):
    in processes of their own they compile beside it, and the ``seeded`` task, which
    reaches them after its seeds, chains and windows, loads them from the disk cache (or,
    where it gets there first, compiles them as before). None where the run's windows do
    not reach the long-window kernel (short reads, ``gpu_long`` or ``long_score_first``
    off); without ``traceback`` (``--no-traceback``) not the traced kernel local mode
    would trace with."""
    from .config import settings
    from .dp import LOCAL
    from .trace.gpu import window_max_cells
    cfg = settings()
    if not (cfg.gpu_long and cfg.long_score_first) or \
            int(max(1, read_len)) ** 2 <= window_max_cells():
        return []
    if int(mode) == LOCAL and cfg.gpu_prune:
        return [(_long_task(mode, scoring, True), ("align",))] + (
            [(_long_task(mode, scoring), ("traceback",))] if traceback else [])
    return [(_long_task(mode, scoring), ("align", "traceback"))]


def _trace_long_kernel(mode, scoring, read_len):
    """The long-window kernel a full-graph run's GPU traceback launches for reads of
    ``read_len`` (:func:`s2g.trace.gpu.prepare`'s condition), as a task of its own (see
    :func:`long_kernel_tasks`); none for shorter reads."""
    from .config import settings
    from .trace.gpu import max_cells
    if not settings().gpu_long or int(max(1, read_len)) ** 2 <= max_cells():
        return []
    return [_long_task(mode, scoring)]


def _long_task(mode, scoring, prune=False):
    """The ``long_kernel`` task of the kernel :func:`s2g.trace.long.launch.get_kernel`
    gives a run in ``mode`` with ``scoring`` (pruned or not): key (local, PRMT tables,
    pruned)."""
    from .dp import LOCAL
    from .trace.long import source
    prmt = bool(source.prmt_fits(int(scoring[0]), int(scoring[1])))
    return {"kind": "long_kernel", "key": [int(mode) == LOCAL, prmt, bool(prune)]}


def fast_args(key):
    """:func:`s2g.variants.fast.get_kernel`'s arguments (G, K, mode, prmt_sub, pair, pipe,
    win, tb) from a ``fast_kernel`` task's key (its 7th element, the windows' form, and 8th,
    their traceback form, optional)."""
    G, K, mode, prmt, pair, pipe, *win = key
    return (G, K, mode, prmt, pair, pipe, bool(win and win[0]),
            bool(len(win) > 1 and win[1]))


def task_name(task) -> str:
    return json.dumps(task, sort_keys=True, separators=(",", ":"))


def _dispatchers(task):
    """The dispatchers whose cache entries tell whether ``task`` is warm: the function
    each of its stages spends its compile time in (the entry points of the stage)."""
    k = task["kind"]
    if k == "fast_kernel":
        from .variants import _lean
        if _lean.active():              # its stored cubin or none (no numba.cuda here)
            from .variants.fast import kernel
            return [] if kernel.stored(*fast_args(task["key"])) else [_Cold()]
        from numba import cuda

        from .variants import fast
        fn, _ = fast.compiled_source(*fast_args(task["key"]))
        if not fn.__s2g_cached__:
            return []
        return [cuda.jit(cache=True)(fn)]          # lazy: only its cache is looked at
    if k == "fast_host":
        from .variants import fast
        return [fast.row0_global]
    if k == "long_kernel":
        from .trace.long import launch
        key = tuple(bool(x) for x in task["key"])          # local, prmt, prune
        return _kernel_probe(lambda: launch.stored(*key), lambda: launch.cache_probe(*key))
    if k == "align":
        if task["variant"] == "simd":
            from .variants import simd
            return [simd.run_groups]
        from .variants import cpu_parallel
        return [cpu_parallel._align_all]
    if k == "trace":
        if task["gpu"]:
            from .trace import gpu_program
            # (reads whose windows go to the long-window kernel: its cache is probed by
            # the long_kernel task plan() puts beside this one)
            return [gpu_program.sizes, gpu_program.fill_into]
        from .trace import lanes
        return [lanes.run_lanes]
    if k == "gaf":
        from . import gaf
        return [gaf.format_gaf]
    if k == "seeded":
        from . import index, seeded, window
        from .config import settings
        from .dp import LOCAL
        from .variants import pruned, simd, striped
        # the CPU window kernel the tiny run's reads take: long reads' windows run pruned
        # (simd.align_windows), or a few striped (striped.few_long), and then lockstep is
        # never compiled (probing it kept every seeded 10 kbp run on the GPU machine
        # starting a 3 s task, session 30)
        L = int(task["read_len"])
        long_kernel = (pruned._align_windows if 0 < settings().prune_min_len <= L else
                       striped._align_windows if 0 < settings().striped_min_len <= L else
                       None)
        # not the index build's functions: a run builds its index (when it has none)
        # before it probes, and one that loads it never compiles them (probing them kept
        # every run after a source change saying it compiled: :func:`index_build_cold`)
        ds = [index.bucket_starts, seeded.batch_windows, seeded.pick, window.wg_count,
              window.wg_paths]
        if not task["gpu"]:
            return ds + [seeded.batch_chains,
                         long_kernel if long_kernel is not None else simd.run_lockstep]
        # seeds and chains on the GPU (gpu_seeds) but for reads whose chains keep waypoints
        cfg = settings()
        if not cfg.gpu_seeds or 0 < cfg.corridor_min_len <= int(task["read_len"]):
            ds.append(seeded.batch_chains)
        # on a GPU the tiny run's windows take the GPU: short reads' on the `fast` kernel's
        # window form (its host tables), never a CPU window kernel (probing simd's kept
        # every warm 150 bp GPU run waiting 4 s on a task, H200, session 31)
        from .trace import gpu_program
        from .variants.fast import tables as fast_tables
        from .variants.fast import windows as fast_windows
        if settings().gpu_window_fast and int(task["read_len"]) <= fast_windows.MAX_ROWS:
            # scored without walks (summarize_sel never runs), traced from their end cells:
            # in the fast kernel's traceback form where it applies, and then the one-thread
            # kernel's column programs (gpu_program.sizes) only for windows the form leaves,
            # so no run compiles them (probing sizes kept every warm 150 bp GPU run after
            # a fresh install waiting ~1.6-2 s for a worker that compiled nothing: first
            # chains 2.1-2.6 s from the start against 0.65-0.75 once a long-read run had
            # compiled it, MHC, H100, session 69)
            tb = [] if warp_form(int(task["mode"]), int(task["read_len"])) else \
                [gpu_program.sizes]
            return ds + tb + [fast_tables.window_merge_counts
                              if settings().gpu_window_tables else fast_windows._tables_fill]
        from .trace.gpu import window_max_cells
        if cfg.gpu_long and cfg.long_score_first and \
                int(task["read_len"]) ** 2 > window_max_cells():
            # long windows: scored on the long-window kernel, traced from their end cells;
            # summarize_sel (find mode's walks) never runs (probing it kept every warm
            # 10 kbp GPU run waiting 2.5 s on a task, H200, session 35); in local mode
            # pruned (its host half; its kernel is probed by the long_kernel task
            # seeded_plan plans beside this one: probed here too, a cold kernel alone
            # would start this task as well and compile it twice)
            ds = ds + [gpu_program.sizes]
            if cfg.gpu_prune and int(task["mode"]) == LOCAL:
                from .trace.long import prune
                ds += [prune._bounds, prune.strip_thresholds, prune.envelope,
                       prune.gather_rows]
                if cfg.gpu_prune_handoff:         # the hand-offs sized by a kernel
                    ds += _kernel_probe(prune.ranges_stored, prune.ranges_probe)
                # the programs: per node on the host, spread by a kernel (gpu_long_programs;
                # probing walk_bounds, which that run never calls, kept every warm 10 kbp run
                # waiting 3.5 s on a task, H200, session 39), or per column on the host
                if cfg.gpu_long_programs:
                    from .trace.long import programs_gpu
                    ds += [programs_gpu.node_records,
                           *_kernel_probe(programs_gpu.stored, programs_gpu.cache_probe)]
                else:
                    ds.append(prune.walk_bounds)
            return ds
        return ds + [gpu_program.sizes, gpu_program.summarize_sel]
    raise ValueError(f"unknown warm-up task {task!r}")


class _Cold:
    """A dispatcher stand-in whose cache holds nothing (a lean kernel not yet stored)."""
    _cache = None


def _kernel_probe(stored, probe) -> list:
    """A CUDA kernel's probe: on the lean path its stored cubin (``stored()``; nothing to
    probe, or a :class:`_Cold`; no numba.cuda imported), else ``probe()``'s lazy
    dispatcher over the source it compiles (its Numba cache)."""
    from .variants import _lean
    if _lean.active():
        return [] if stored() else [_Cold()]
    return [probe()]


def _has_entry(disp) -> bool:
    """Whether ``disp``'s disk cache holds a fresh entry (any signature)."""
    if isinstance(disp, _Cold):
        return False
    cache = getattr(disp, "_cache", None)
    cf = getattr(cache, "_cache_file", None)
    if cf is None:                   # caching off (NullCache): nothing to warm
        return True
    return bool(cf._load_index())


def index_build_cold() -> bool:
    """True when the seed index build's functions have no fresh disk cache entry (``s2g
    index`` says it compiles); False where in doubt, as :func:`cold`."""
    try:
        from . import index
        return not all(_has_entry(d) for d in (index.collect_syncmers,
                                                index.interior_syncmers, index.sort_by_hash))
    except Exception:                # noqa: BLE001 - a probe only
        return False


def cold(task, raw=False) -> bool:
    """True when ``task``'s main functions have no fresh disk cache entry, unless a worker
    of it ended well and left it so (:mod:`s2g.warmup_unmet`; ``raw``: the probe alone).
    Any doubt (private Numba API changed, a name gone) answers False: then nothing starts
    and the run compiles in-process, as it did before this module."""
    try:
        if not raw and task_name(task) in warmup_unmet.known():
            return False
        ds = _dispatchers(task)
        return bool(ds) and not all(_has_entry(d) for d in ds)
    except Exception:                # noqa: BLE001 - a probe only
        return False


#: first use: workers only with at least this many usable cores (``prewarm`` 1: always).
#: On the 2-core dev VM, busy, they did not pay: the example's cold run took 124 and 175 s
#: with them against 121 s without (2026-11-23, load 4): the tasks repeat the graph
#: loading and V0 compiles, and two cores leave nothing idle to overlap.
MIN_CORES = 4


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def enabled(first_use=False) -> bool:
    """Whether workers may start: not with ``prewarm`` 0 (``S2G_PREWARM=0``), ``no_cache``
    (no disk cache), the CUDA simulator or NUMBA_DISABLE_JIT; at first use (``first_use``)
    only with :data:`MIN_CORES` cores unless ``prewarm`` is 1."""
    from numba import config

    from .config import settings
    flag = settings().prewarm
    if flag == "0" or settings().no_cache or config.ENABLE_CUDASIM or config.DISABLE_JIT:
        return False
    return flag == "1" or not first_use or _cores() >= MIN_CORES


#: the kinds of task (:func:`plan`)
KINDS = ("fast_kernel", "fast_host", "long_kernel", "align", "trace", "gaf", "seeded")


# ------------------------------------------------------------------ the workers

_CODE = ("import sys, threading, os; "
         "threading.Thread(target=lambda: (sys.stdin.read(), os._exit(3)), daemon=True).start(); "
         "from s2g.warmup_worker import worker; worker(sys.argv[1])")


class Prewarm:
    """Background worker processes, one per task, at most ``jobs`` at a time, in a
    thread; :meth:`wait` blocks until the tasks of a stage are over."""

    def __init__(self, tasks, jobs=None, timeout=TIMEOUT):
        """``tasks``: (task, stages) pairs (:func:`plan`)."""
        self.tasks = [t for t, _ in tasks]
        self.stages = {}
        for t, st in tasks:
            for s in st:
                self.stages.setdefault(s, []).append(task_name(t))
        self.jobs = max(1, jobs or len(self.tasks) or 1)
        self.timeout = timeout
        self.events = {task_name(t): threading.Event() for t in self.tasks}
        self.results = {}            # name -> (seconds, error or None)
        self.unmet = []              # tasks whose worker ended well, still cold
        self.waited = {}             # stage -> seconds waited
        self._procs = {}
        self._stop = False
        self._lock = threading.Lock()
        self.t0 = time.perf_counter()
        self._thread = threading.Thread(target=self._run, name="s2g-prewarm", daemon=True)
        self._thread.start()

    def _run(self):
        try:
            self._schedule()
        finally:                     # whatever happens, no stage waits forever
            for ev in self.events.values():
                ev.set()

    def _schedule(self):
        pending = list(self.tasks)
        running = []
        # S2G_PREWARM=0: a task that runs the CLI (seeded) starts no workers of its own;
        # the other knobs as here (configure() included): the same kernels, the same caches
        from .config import child_environ
        env = dict(child_environ(prewarm="0"), NUMBA_NUM_THREADS="1", PYTHONUNBUFFERED="1")
        while (pending or running) and not self._stop:
            while pending and len(running) < self.jobs:
                task = pending.pop(0)
                log = tempfile.TemporaryFile("w+")
                p = subprocess.Popen([sys.executable, "-c", _CODE, task_name(task)],
                                     stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT,
                                     env=env)
                with self._lock:
                    self._procs[task_name(task)] = p
                running.append((task_name(task), p, log, time.perf_counter()))
            time.sleep(0.02)
            for item in list(running):
                name, p, log, t1 = item
                if p.poll() is None:
                    if time.perf_counter() - t1 > self.timeout:
                        p.kill()
                    continue
                running.remove(item)
                log.seek(0)
                text = log.read()
                log.close()
                ok = p.returncode == 0 and "S2G-WARM-OK" in text
                self.results[name] = (time.perf_counter() - t1,
                                      None if ok else f"exit {p.returncode}: {text[-600:]}")
                self.events[name].set()          # (its stages go on meanwhile)
                if ok and cold(json.loads(name), raw=True):     # a probe no worker meets
                    self.unmet.append(name)
                    warmup_unmet.remember([name])
        for name, p, log, _ in running:
            p.kill()
            log.close()

    def wait(self, stage, timeout=None):
        """Block until every task ``stage`` needs is over (done, failed or killed)."""
        names = self.stages.get(stage, ())
        t = time.perf_counter()
        for n in names:
            self.events[n].wait(timeout)
        if names:
            self.waited[stage] = self.waited.get(stage, 0.0) + time.perf_counter() - t

    def done(self) -> bool:
        return all(ev.is_set() for ev in self.events.values())

    def close(self):
        """Stop what still runs (a run that ended early does not leave workers behind)."""
        self._stop = True
        with self._lock:
            procs = list(self._procs.values())
        for p in procs:
            if p.poll() is None:
                p.kill()
        self._thread.join(timeout=5)

    def report(self) -> str:
        parts = [f"{_label(json.loads(n))} {s:.1f} s" + (" FAILED" if err else "")
                 for n, (s, err) in self.results.items()]
        waits = ", ".join(f"{k} {v:.1f} s" for k, v in self.waited.items())
        unmet = ", ".join(_label(json.loads(n)) for n in self.unmet)
        return (f"compiled ahead in {len(self.tasks)} processes: " + ", ".join(parts)
                + (f"; stages waited: {waits}" if waits else "")
                + (f"; still cold after its worker, not waited for again: {unmet}"
                   if unmet else ""))


def _label(task) -> str:
    """A task's name in :meth:`Prewarm.report` (its kind; which long-window kernel)."""
    if task["kind"] == "long_kernel":
        return "long_kernel (pruned)" if task["key"][2] else "long_kernel"
    return task["kind"]


def start(variant, mode, scoring, read_len, traceback=True, tb_gpu=False, inline=True,
          jobs=None, seeded=False):
    """First use: a :class:`Prewarm` of the cold tasks of this configuration, or None
    (caches warm, or turned off). ``seeded``: a seeded run's tasks (:func:`seeded_plan`;
    its stages: ``seed`` (seeds, chains, windows), ``align`` (the window kernel),
    ``traceback``, ``gaf``)."""
    if not enabled(first_use=True):
        return None
    tasks = [(t, st) for t, st in plan(variant, mode, scoring, read_len, traceback, tb_gpu,
                                       inline, seeded=seeded) if cold(t)]
    if not tasks:
        return None
    return Prewarm(tasks, jobs=jobs or _cores())


def run_plan(aligner, read_len=150):
    """:func:`plan` of an :class:`~s2g.aligner.Aligner`'s configuration (full-graph DP or
    seeded) for reads of ``read_len``."""
    return plan(aligner.variant, aligner.mode, aligner.scoring, read_len, aligner.traceback,
                aligner.tb_gpu, getattr(aligner, "_inline", True),
                seeded=aligner.seeded is not None)


#: what a run says on stderr before it compiles (:func:`compile_note`)
COMPILE_NOTE = "s2g: compiling (first run) ..."


def compile_note(aligner, quiet=False, read_len=150, file=None, reads=None) -> bool:
    """Say :data:`COMPILE_NOTE` on ``file`` (stderr) when this run will compile: a task of
    its configuration (:func:`run_plan`) is :func:`cold`. A first run spends a minute or
    more there (the lane traceback alone ~45 s on a 2-core VM), and with stderr not a
    terminal nothing else is printed meanwhile. Not with ``quiet``; True when said.
    ``read_len``: the probes' read length (only the GPU kernels' probes depend on it), or
    the first read's of the file ``reads`` where it is a regular file (every warm run of
    10 kbp reads said it compiled: the probes of 150-base reads' kernels, which it never
    compiles, were cold, H200, session 40)."""
    if quiet:
        return False
    read_len = _first_len(reads, read_len)
    try:
        # not the window kernel's task: its shape is the first batch's longest read's,
        # which one read does not tell (a probe of another shape would say "compiling"
        # on every warm run)
        if not any(cold(t) for t, _ in run_plan(aligner, read_len) if not _windows_form(t)):
            return False
    except Exception:            # noqa: BLE001 - a note only
        return False
    print(COMPILE_NOTE, file=file or sys.stderr, flush=True)
    return True


def _windows_form(task) -> bool:
    """Whether ``task`` is the `fast` kernel's window form (:func:`window_kernel_tasks`)."""
    return task["kind"] == "fast_kernel" and fast_args(task["key"])[6]


#: reads :func:`_first_len` looks at, and bases at most: the `fast` kernel's shape is the
#: first batch's longest read's, and reads of mixed lengths (trimmed) whose first one was
#: short had the note probe a shape no run compiles, "compiling (first run)" on every
#: warm run
NOTE_READS, NOTE_BASES = 1000, 4_000_000


def _first_len(path, default: int) -> int:
    """The longest of the first :data:`NOTE_READS` reads (:data:`NOTE_BASES` at most) of
    the FASTA/FASTQ file ``path`` (``default`` where there is none, it is not a regular
    file, or cannot be read)."""
    if path is None or path == "-" or not os.path.isfile(path):
        return default
    n = bases = 0
    try:
        from .reads import _open
        with _open(path) as fh:
            for k, rec in enumerate(fh):
                n = max(n, len(rec.sequence))
                bases += len(rec.sequence)
                if k + 1 >= NOTE_READS or bases >= NOTE_BASES:
                    break
    except Exception:            # noqa: BLE001 - a note only; the run reports bad input
        return default
    return max(n, 1) if n else default


# ------------------------------------------------------------------ ahead: s2g warmup

def common_tasks(variants=None, modes=("local",), read_lens=(150,), scoring=None,
                 traceback=True, seeded=True):
    """The tasks of the common configurations: ``variants`` (default: this machine's
    ``auto`` and ``cpu``, which ``auto`` picks on a CPU for some batch shapes; with a GPU,
    ``simd`` and ``cpu`` too), each mode, each read length;
    the traceback where ``s2g align`` puts it (GPU with a GPU variant); with ``seeded``
    also each one's seeded run (:func:`seeded_plan`: the default on graphs of 100,000
    columns and more, 1,000,000 with a GPU variant). Duplicates once."""
    from .scoring import Mode, Scoring
    from .variants import registry
    if not variants:
        variants = [registry.pick_auto()]
        if registry.REGISTRY[variants[0]].device == "cuda":
            variants += ["simd", "cpu"]
        elif variants[0] == "simd" and registry.REGISTRY["cpu"].auto:
            variants += ["cpu"]        # auto on a CPU picks simd or cpu by batch shape
    sc = scoring or Scoring()
    seen, out = set(), []
    for v in variants:
        v = registry.pick_auto() if v == "auto" else v
        info = registry.REGISTRY[v]
        tb_gpu = registry.traceback_on_gpu("auto", info)
        for m in modes:
            for L in read_lens:
                tasks = plan(v, Mode.parse(m), sc, L, traceback, tb_gpu)
                if seeded:
                    tasks += seeded_plan(v, Mode.parse(m), sc, L, traceback)
                for t, st in tasks:
                    if task_name(t) not in seen:
                        seen.add(task_name(t))
                        out.append((t, st))
    return out


def warm(tasks, jobs=None, only_cold=True, progress=None):
    """Run ``tasks`` ((task, stages) pairs) in parallel worker processes and wait; returns
    the finished :class:`Prewarm` (``results``: name -> (seconds, error))."""
    if only_cold:
        tasks = [(t, st) for t, st in tasks if cold(t)]
    pw = Prewarm(tasks, jobs=jobs or _cores())
    try:
        for t, _ in tasks:
            pw.events[task_name(t)].wait()
            if progress is not None:
                s, err = pw.results.get(task_name(t), (0.0, "not run"))
                progress(f"{task_name(t)}: {s:.1f} s" + (f" FAILED {err}" if err else ""))
    finally:
        pw.close()
    return pw


def add_parser(sub):
    """``s2g warmup``'s arguments on a subparsers object (cli.py)."""
    p = sub.add_parser(
        "warmup", help="compile the kernels ahead (parallel), so the first align is fast",
        description="Compile the common configurations' kernels into the on-disk caches, in "
                    "parallel worker processes (run once after installing).")
    add_arguments(p)
    return p


def add_arguments(p):
    p.add_argument("--variant", "-v", action="append", default=None,
                   help="variant to compile for (repeat; default: auto and cpu, with a GPU also "
                        "simd), each for full-graph DP and seeded alignment")
    p.add_argument("--mode", "-m", action="append", default=None,
                   choices=["local", "semiglobal", "global"], help="modes (default: local)")
    p.add_argument("--read-len", action="append", type=int, default=None,
                   help="read lengths (default: 150)")
    p.add_argument("--jobs", "-j", type=int, default=None, help="processes (default: all cores)")
    p.add_argument("--all", action="store_true", help="also tasks whose cache looks warm")
    p.add_argument("--quiet", "-q", action="store_true")


def cmd_warmup(args) -> int:
    """``s2g warmup``: compile, report, exit 0 (1 if a task failed)."""
    t = time.perf_counter()
    from .config import settings
    if not enabled() and settings().prewarm != "0":
        print("s2g: warmup: nothing to do (disk caches off: S2G_NO_CACHE, the CUDA simulator "
              "or NUMBA_DISABLE_JIT)", file=sys.stderr)
        return 0
    tasks = common_tasks(args.variant, args.mode or ("local",), args.read_len or (150,))
    say = None if args.quiet else (lambda m: print(f"s2g: warmup: {m}", file=sys.stderr))
    pw = warm(tasks, jobs=args.jobs, only_cold=not args.all, progress=say)
    bad = [n for n, (_, err) in pw.results.items() if err]
    if not args.quiet:
        print(f"s2g: warmup: {len(pw.tasks)} of {len(tasks)} tasks compiled "
              f"({len(tasks) - len(pw.tasks)} already cached), {len(bad)} failed, "
              f"{time.perf_counter() - t:.1f} s", file=sys.stderr)
    return 1 if bad else 0


def main(argv=None) -> int:
    import argparse
    p = argparse.ArgumentParser(prog="python -m s2g.warmup", description=cmd_warmup.__doc__)
    add_arguments(p)
    return cmd_warmup(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
