"""Variant registry: a table, not a class tree (STYLE.md habit 2; sgkit's distance api).

Each entry names a module that exposes the common contract::

    align_batch(graph: FlatGraph, reads: ReadBatch, scoring: Scoring, mode: Mode)
        -> BatchResult

Variants return scores and end cells only (``BatchResult`` without paths); the traceback
is the driver's (:class:`s2g.aligner.Aligner`, from the end cells:
:func:`s2g.traceback.traceback_batch`). A variant may take keyword arguments of its own
(``fast``: ``on_launch``; ``simd``: ``force_type``, ``lanes``).

Modules are imported only when a variant is used, so ``import s2g`` and
``s2g --help`` never touch CUDA (STYLE.md habit 3).
"""
from __future__ import annotations

import importlib
import importlib.util
import threading
import time
from dataclasses import dataclass

from ..errors import S2GError


@dataclass(frozen=True)
class VariantInfo:
    name: str
    module: str
    device: str       # "cpu" or "cuda"
    summary: str
    limits: str
    rank: int         # larger = preferred by --variant auto among those that can run
    auto: bool = True  # False: runnable by name only (not yet verified exact on a GPU)


REGISTRY: dict = {}


def register(info: VariantInfo) -> None:
    REGISTRY[info.name] = info


register(VariantInfo(
    "v0", "s2g.variants.v0_cpu", "cpu",
    "Sequential CPU baseline and correctness oracle: one read at a time, nodes in "
    "topological order, one column at a time, int64 scores.",
    "none beyond memory: 16 x (n_slots + 3) x (read length + 1) bytes per read", 0))
register(VariantInfo(
    "cpu", "s2g.variants.cpu_parallel", "cpu",
    "V0's kernel on every core (Numba prange over reads); identical results.",
    "as v0, per thread", 10))
register(VariantInfo(
    "simd", "s2g.variants.simd", "cpu",
    "V0's recurrence with reads in SIMD lanes: length-bucketed groups of 64 int16 lanes "
    "(32 int32, 16 int64 by the score bound), [row][lane] arrays vectorised by LLVM, "
    "prange over groups; same scores and end cells as V0; also aligns seeded windows.",
    "(2 x n_slots + 7) x (longest read + 1) x lanes cells per group in flight, per thread", 15))

# GPU variants (modules owned by their issues; each module docstring has the details)
register(VariantInfo(
    "v1", "s2g.variants.v1_antidiag", "cuda",
    "Anti-diagonal tiling, naive: one thread per cell, H/E/F fully in global memory, "
    "one kernel launch per anti-diagonal.",
    "3 full (m+1) x N int32 matrices (longest read) must fit in free device memory; one launch per anti-diagonal per read", 1))
register(VariantInfo(
    "v2", "s2g.variants.v2_rolling", "cuda",
    "Rolling anti-diagonal buffers plus a node_bound store of predecessor columns; "
    "all reads of a batch advance together, one host-driven launch per anti-diagonal.",
    "(9 + 2 x n_slots) x 4 bytes per read base in global memory; launch-bound", 2))
register(VariantInfo(
    "v3", "s2g.variants.v3_coop", "cuda",
    "One cooperative kernel, grid-wide barrier per anti-diagonal, three rotating "
    "anti-diagonal buffers, strided rows, atomic max of the packed best cell.",
    "grid limited by cooperative-launch occupancy (strided rows cover any batch); "
    "one grid barrier per anti-diagonal", 3))
register(VariantInfo(
    "v4", "s2g.variants.v4_interread", "cuda",
    "One thread block per read, rolling buffers and node_bound in shared memory, "
    "block barrier per anti-diagonal; long reads in passes.",
    "(7 + 2 x n_slots) x block x 4 bytes of shared memory (<= 48 KiB); reads longer "
    "than the block (<= 256) take extra passes over the graph", 4))
register(VariantInfo(
    "fast", "s2g.variants.fast", "cuda",
    "Production fast path: groups of 4-8 lanes per read inside a warp (in local mode two "
    "reads, scores in 16-bit halves, s16x2 DPX instructions), K rows per lane in "
    "registers, columns streamed as a wavefront with shfl_up_sync, lane-private "
    "node_bound slots (shared memory first); traceback on the GPU from its end cells. "
    "Exact against the CPU oracle on the H200; 3,129 GCUPS at 150 bp on a 100 kbp "
    "SNP graph (bench/NOTES.md, run 7).",
    "16-bit pairs where the score bound allows (local mode), else int32, else the cpu "
    "variant; long reads in strips of 192 rows with an 8 x columns byte buffer per "
    "group in flight", 20))


def list_variants():
    return list(REGISTRY.values())


def get_variant(name: str):
    """The module of variant ``name`` (imported now), or a clear error."""
    info = REGISTRY.get(name)
    if info is None:
        raise S2GError(f"unknown variant {name!r}; registered: {', '.join(REGISTRY)}")
    ok, why = can_run(info)
    if not ok:
        raise S2GError(f"variant {name!r} cannot run here: {why}")
    return importlib.import_module(info.module)


_CUDA_STATE = None
_CUDA_LOCK = threading.Lock()       # cuda_available: one thread starts CUDA, others wait
#: time.perf_counter() when cuda_available's answer was found (--timings' start-up line)
CUDA_AT = None


def _no_driver() -> bool:
    """True when the CUDA driver library cannot be loaded (the check CUDA Python's own
    loader makes, by name): then there is no GPU to find, and importing numba.cuda to
    say so (0.35-0.5 s) is skipped. Never where the simulator is asked for, or where
    ``NUMBA_CUDA_DRIVER`` names a driver elsewhere."""
    import ctypes
    import os
    import sys
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0") or \
            os.environ.get("NUMBA_CUDA_DRIVER"):
        return False
    names = ("nvcuda.dll",) if sys.platform == "win32" else ("libcuda.so.1", "libcuda.so")
    for name in names:
        try:
            ctypes.CDLL(name)
            return False
        except OSError:
            continue
    return True


def cuda_available():
    """(True, device name) or (False, reason); imports numba.cuda only when called, and
    not at all where there is no CUDA driver (:func:`_no_driver`). Thread-safe: a call
    while :func:`start_cuda`'s thread is starting CUDA waits for its answer."""
    global _CUDA_STATE, CUDA_AT
    if _CUDA_STATE is not None:
        return _CUDA_STATE
    with _CUDA_LOCK:
        if _CUDA_STATE is None:
            state = _probe()
            CUDA_AT = time.perf_counter()      # before the answer is visible lock-free
            _CUDA_STATE = state
        return _CUDA_STATE


def _probe():
    """:func:`cuda_available`'s answer, found: CUDA started where there is a GPU."""
    if _no_driver():
        return False, "no CUDA GPU or driver found"
    from . import _lean
    if _lean.active():                  # the lean path: the driver itself, no numba.cuda
        try:
            from . import _driver
            _driver.ensure()
            return True, _driver.device_name()
        except Exception as exc:  # noqa: BLE001 - as below
            return False, f"CUDA unavailable ({type(exc).__name__}: {exc})"
    try:
        from numba import cuda
        if not cuda.is_available():
            return False, "no CUDA GPU or driver found"
        # the simulator's FakeCUDADevice has no name in numba-cuda 0.30
        name = getattr(cuda.get_current_device(), "name", None) or "CUDA simulator"
        return True, name.decode() if isinstance(name, bytes) else str(name)
    except Exception as exc:  # a broken CUDA install must not break CPU use
        return False, f"CUDA unavailable ({type(exc).__name__}: {exc})"


def cuda_at() -> float:
    """``time.perf_counter()`` when :func:`cuda_available` found its answer (now if not yet)."""
    return CUDA_AT if CUDA_AT is not None else time.perf_counter()


def start_cuda(then=None):
    """:func:`cuda_available` in a background thread (``s2g-cuda-start``; then ``then()``
    where a GPU was found, its errors ignored), so that CUDA's start (numba.cuda's import,
    the driver's and the context's start: ~0.7-1.1 s on the GPU machine) overlaps what the
    caller does meanwhile (``s2g align``: the first reads, the graph); a later
    :func:`cuda_available` waits for it. With the knob ``cuda_context_early``, the driver
    and the context start in a thread of their own beside numba.cuda's import
    (:func:`early_context`). Returns the thread."""
    from ..config import settings
    if _CUDA_STATE is None and settings().cuda_context_early:
        threading.Thread(target=early_context, name="s2g-cuda-context", daemon=True).start()

    def run():
        ok, _ = cuda_available()
        if ok and then is not None:
            try:
                then()
            except Exception:           # noqa: BLE001 - an optimisation: the run redoes it
                pass
    t = threading.Thread(target=run, name="s2g-cuda-start", daemon=True)
    t.start()
    return t


_EARLY = []          # early_context's (library, context handle): kept for the process


def early_context() -> bool:
    """The CUDA driver started (``cuInit``) and device 0's primary context retained, made
    current in no thread, through ctypes: each call leaves the GIL free, where numba.cuda's
    import, which runs meanwhile in another thread, holds it (0.67-0.96 s on the GPU
    machine's host, with 0.22-0.33 s of driver and context start after it, session 56's
    ``bench/cuda_start_probe.py``). numba.cuda then retains the same context (a primary
    context is one a device; retaining it again returns it) and finds it made. Device 0:
    the device Numba uses unless told otherwise (s2g never tells it). Once a process;
    False where the simulator is asked for, there is no driver, or a call fails (Numba's
    own start then does it all, and says why)."""
    import ctypes
    import os
    with _EARLY_LOCK:
        if _EARLY:
            return _EARLY[0] is not None
        _EARLY.append(None)
        if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0") or \
                os.environ.get("NUMBA_CUDA_DRIVER"):
            return False
        try:
            lib = ctypes.CDLL("libcuda.so.1")
            dev, ctx = ctypes.c_int(), ctypes.c_void_p()
            if lib.cuInit(0) != 0 or lib.cuDeviceGet(ctypes.byref(dev), 0) != 0 or \
                    lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) != 0:
                return False
        except (OSError, AttributeError):
            return False
        _EARLY[0] = (lib, ctx.value)
        return True


_EARLY_LOCK = threading.Lock()


def traceback_on_gpu(where, info) -> bool:
    """``--traceback-on``: auto follows the variant's device; gpu needs a usable GPU."""
    if where == "cpu" or (where == "auto" and info.device != "cuda"):
        return False
    ok, why = cuda_available()
    if not ok:
        if where == "gpu":
            raise S2GError(f"--traceback-on gpu: {why}")
        return False
    return True


def can_run(info: VariantInfo):
    if importlib.util.find_spec(info.module) is None:
        return False, f"module {info.module} is not installed"
    if info.device == "cpu":
        return True, "CPU"
    return cuda_available()


class AutoName(str):
    """A variant name chosen by ``auto`` for no batch in particular (:func:`pick_auto`
    without a shape): it names the machine's default and marks the choice as ``auto``,
    so an :class:`~s2g.aligner.Aligner` given it picks again for each batch's shape.
    ``cpu_only``: picked among the CPU variants (``auto`` chose the CPU path on a machine
    with a GPU, :func:`s2g.plan.choose_device`)."""

    auto = True
    cpu_only = False


def pick_auto(n_reads=None, max_len=None, n_cols=None, *, lengths=None, mode=0,
              scoring=None, threads=None, cpu_only=False) -> str:
    """The variant ``auto`` runs.

    Without a batch shape: the fastest registered variant this machine can run by rank
    (an :class:`AutoName`): ``fast`` with a GPU, else ``simd`` (many short reads' choice;
    what ``s2g variants`` marks). With one (``n_reads`` reads of at most ``max_len``
    bases, or their ``lengths``; ``n_cols`` graph columns; ``mode``, ``scoring``: the
    lane type) on a machine whose choice is a CPU variant: ``simd`` or ``cpu``, whichever
    :func:`cpu_costs` says is faster for the batch (a GPU's choice is kept for every
    shape). ``cpu_only``: among the CPU variants only (the name returned without a shape
    says so: :attr:`AutoName.cpu_only`).
    """
    best = max((v for v in REGISTRY.values() if v.auto and (v.device == "cpu" or not cpu_only)
                and can_run(v)[0]), key=lambda v: v.rank)
    if lengths is None and n_reads is None:
        name = AutoName(best.name)
        name.cpu_only = bool(cpu_only)
        return name
    if best.device != "cpu" or best.name != "simd" or not REGISTRY["cpu"].auto:
        return best.name
    costs = cpu_costs(lengths if lengths is not None else [max_len or 0] * int(n_reads),
                      n_cols or 0, mode, scoring, threads)
    return "simd" if costs["simd"] < costs["cpu"] else "cpu"


#: ``auto`` on a CPU (issue #40): ``simd`` runs a lane group of LANES reads for the time
#: of its longest read whether 1 or 128 lanes are busy, one group a thread; ``cpu`` runs
#: each read alone. ``SIMD_LANE_SPEEDUP[lane type]``: (read length, one simd lane-cell's
#: speed over one ``cpu`` cell) measured on one thread (NUMBA_NUM_THREADS=1), warm,
#: median of 3: ``cpu`` on 2 reads against ``simd`` on one full group (128 int16 / 32
#: int32 lanes) of reads of that length; 10 kbp example graph (20,000 columns), local
#: mode (int32 at 2 kbp: semiglobal); AMD EPYC (AVX-512) 2-core VM shared with other
#: jobs, 2026-11-28 (README "Variants": how it was timed). Between points:
#: log-log interpolation; below the first: its value; above the last: the last two
#: points' slope, floor 1 (20 kbp: 2.7; the issue's 100 kbp read: < 3.2). int16 lanes
#: stay in cache; int32's ``(2 x slots + 7) x (m + 1) x 32 x 4`` bytes a group do not
#: for long reads (33 MB at 20 kbp), which is what makes ``simd`` slow there.
SIMD_LANE_SPEEDUP = {
    "int16": ((150, 16.3), (1000, 14.4), (2000, 16.0), (3000, 10.7)),
    "int32": ((2000, 10.4), (5000, 11.7), (10000, 7.7), (20000, 2.7)),
}


def _speedup(table, m):
    import math
    if m <= table[0][0]:
        return table[0][1]
    for (l0, s0), (l1, s1) in zip(table, table[1:]):
        if m <= l1:
            t = math.log(m / l0) / math.log(l1 / l0)
            return math.exp(math.log(s0) + t * (math.log(s1) - math.log(s0)))
    (l0, s0), (l1, s1) = table[-2], table[-1]
    slope = (math.log(s1) - math.log(s0)) / math.log(l1 / l0)
    return max(1.0, math.exp(math.log(s1) + slope * math.log(m / l1)))


def cpu_costs(lengths, n_cols=0, mode=0, scoring=None, threads=None) -> dict:
    """Estimated time of a batch of reads of ``lengths`` under ``cpu`` and ``simd``, in
    units of one ``cpu`` cell times the graph's columns (which cancel): ``cpu`` runs
    read r in ``len(r)``, ``simd`` (as :func:`s2g.variants.simd.run_tasks` groups them:
    by lane type, sorted by length, LANES a group) a group with longest read m in
    ``LANES x m / SIMD_LANE_SPEEDUP(type, m)`` (int64 tasks: as ``cpu``); each on
    ``threads`` threads (default: Numba's current count) as ``max(total / threads,
    largest item)``. ``n_cols``, ``mode`` and ``scoring`` decide the lane type."""
    import numpy as np

    from ..scoring import Mode, Scoring
    from . import simd
    if threads is None:
        import numba
        threads = numba.get_num_threads()
    threads = max(1, int(threads))
    sc, mode = scoring or Scoring(), Mode(int(mode))
    L = np.sort(np.asarray(lengths, np.int64))
    L = L[L > 0]
    if len(L) == 0:
        return {"cpu": 0.0, "simd": 0.0}

    # the lane type grows with the read length: split the sorted lengths where it changes
    def type_of(m):
        return np.dtype(simd.lane_type(sc, mode, int(m), int(n_cols))).name
    by_type, k = {}, 0
    while k < len(L):
        t = type_of(L[k])
        lo, hi = k, len(L)                    # last index of type t: binary search
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if type_of(L[mid]) == t else (lo, mid)
        by_type[t], k = L[k:hi].tolist(), hi
    items = []
    for t, ms in by_type.items():
        if t not in SIMD_LANE_SPEEDUP:
            items += ms                        # int64: V0's kernel, one read a thread
            continue
        lanes = simd.LANES[np.dtype(t).type]
        for k in range(0, len(ms), lanes):
            m = ms[min(k + lanes, len(ms)) - 1]
            items.append(lanes * m / _speedup(SIMD_LANE_SPEEDUP[t], m))

    def span(x):
        return max(sum(x) / threads, max(x))
    return {"cpu": float(span(L.tolist())), "simd": float(span(items))}
