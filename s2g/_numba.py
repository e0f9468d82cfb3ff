"""Numba options in one place (STYLE.md habit 5).

``cache=True`` keeps compiled CPU kernels on disk between runs, so the CLI pays the
JIT once per machine. ``fastmath`` stays off: every kernel is integer DP, where it
buys nothing and could reorder comparisons that decide ties.

**512-bit vectors on Intel Xeons.** LLVM tunes Intel server CPUs (Skylake-SP to
Emerald Rapids) to *prefer 256-bit vectors* even where AVX-512 is there: on the GPU
machine's Emerald Rapids the `simd` kernel's int16 lane loops came out as ymm/xmm
(`simd.asm_report()`), 16 lanes an instruction where AMD's Zen 4 got zmm and 32. Where
the host has AVX-512BW, :func:`prefer_512` adds ``-prefer-256-bit`` to the CPU features
Numba hands LLVM (before the first compilation; part of Numba's cache key, so cached
code of the other width is not loaded). The knob ``vector_width=256``
(``S2G_CONFIG=vector_width=256``, s2g/config.py) keeps LLVM's choice;
a user's own ``NUMBA_CPU_FEATURES`` is left alone (``NUMBA_CPU_NAME`` is not: the
tests tune for an Intel CPU with it and check for zmm).
"""
import hashlib
import os
import sys
import threading

from .config import compile_time

#: read when the decorators run (s2g/config.py: *compile* knobs)
NJIT = dict(cache=not compile_time("no_cache"), nogil=True)
#: for small kernels called in hot loops that allocate nothing: compiled without Numba's
#: runtime, so their array arguments are not reference-counted. Numba increfs an
#: argument at entry (an atomic add; and decrefs it at exit) wherever its pruning pass
#: cannot prove the pair useless (loops with early exits, calls): 16 atomics a call of
#: the pruned pass's deletion chain, called per 512-column chunk of every row, were ~30%
#: of the CPU long-read windows' time (perf, 2-core EPYC VM, 2026-12-04).
NJIT_NORC = dict(NJIT, _nrt=False)
PARALLEL = dict(NJIT, parallel=True)


def prefer_512() -> bool:
    """Let LLVM use 512-bit vectors where the CPU has AVX-512BW (see the module doc);
    True when the features were changed. Effective only before Numba's first CPU
    compilation in the process (s2g calls it on import)."""
    if compile_time("vector_width") == 256:
        return False
    from numba.core import config
    if config.CPU_FEATURES is not None:
        return False                  # the user chose the features
    from numba.core.codegen import get_host_cpu_features
    try:
        feats = get_host_cpu_features()
    except Exception:                 # noqa: BLE001 - no feature map: LLVM's defaults
        return False
    if "+avx512bw" not in feats.split(","):
        return False
    config.CPU_FEATURES = feats + ",-prefer-256-bit"
    return True


PREFER_512 = prefer_512()

#: the file in the package's ``__pycache__`` that records the sources its caches are of
STAMP = "s2g-sources.stamp"
#: this process's :func:`source_stamp` of the package (taken at import by
#: :func:`drop_stale_caches`; None with the disk cache off): the lean path's cubin store
#: keys on it (s2g/variants/_lean.py)
SOURCES = None


def source_stamp(root: str) -> str:
    """A digest of every ``.py`` file under ``root``: path, size and modification time."""
    h = hashlib.sha1()
    for dirpath, dirnames, files in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for f in sorted(files):
            if f.endswith(".py"):
                st = os.stat(os.path.join(dirpath, f))
                rel = os.path.relpath(os.path.join(dirpath, f), root)
                h.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def drop_stale_caches(root: str = os.path.dirname(os.path.abspath(__file__))) -> int:
    """Numba keys a function's on-disk cache on its own source file only, and a cached
    function holds the machine code of the functions it calls from other modules: after
    an edit of ``pruned_rows.py`` alone, ``pruned.py``'s cached pass still ran the old row
    kernels (seen 2026-12-04: timings and the profiled code were the edit's predecessor's
    until the caches were deleted). A checkout or an editable install that changes some
    sources could so run stale kernels. Here, when the sources under ``root`` differ from
    those the package's ``__pycache__`` caches were made of (:func:`source_stamp`), every
    cached kernel there (``*.nbi``, ``*.nbc``) is deleted first and compiled again on use.
    Returns the files deleted; never fails an import (a read-only install keeps Numba's
    own per-file check: reinstalling rewrites every file)."""
    global SOURCES
    try:
        stamp = SOURCES = source_stamp(root)
        path = os.path.join(root, "__pycache__", STAMP)
        try:
            with open(path) as fh:
                if fh.read().strip() == stamp:
                    return 0
        except OSError:
            pass
        n = 0
        for dirpath, _, files in os.walk(root):
            if os.path.basename(dirpath) != "__pycache__":
                continue
            for f in files:
                if f.endswith((".nbi", ".nbc")):
                    try:
                        os.remove(os.path.join(dirpath, f))
                        n += 1
                    except OSError:
                        pass
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}"
        with open(tmp, "w") as fh:
            fh.write(stamp + "\n")
        os.replace(tmp, path)
        return n
    except OSError:
        return 0


def name_cache_entries_by_key() -> None:
    """Numba names a function's cached versions ``.1.nbc``, ``.2.nbc``, ... by the first
    number its index (read at that moment) does not use: two processes compiling the same
    function for different argument types at once pick the same name, each writes its
    index and its data, and where one's index and the other's data win, the index points a
    signature at machine code built for other types: a segfault when a later process
    loads it (CI, 2026-12-05: two pytest workers and a CUDA-simulator subprocess compiling
    the pairs code together; a fresh cache ran clean). Here each new entry is named by a
    digest of its key instead, so different signatures never share a file; the index's
    last writer may still drop the other's entry, which is then compiled again. Patches
    Numba's ``IndexDataCacheFile.save`` once (its other methods are unchanged)."""
    import pickle

    from numba.core import caching
    cls = caching.IndexDataCacheFile
    if getattr(cls, "_s2g_named_by_key", False):
        return

    def save(self, key, data):
        overloads = self._load_index()
        data_name = overloads.get(key)
        if data_name is None:
            digest = hashlib.sha1(pickle.dumps(key, protocol=4)).hexdigest()
            data_name = self._data_name(int(digest[:12], 16))
            overloads[key] = data_name
            self._save_index(overloads)
        self._save_data(data_name, data)

    cls.save = save
    cls._s2g_named_by_key = True


if NJIT["cache"]:
    drop_stale_caches()
    name_cache_entries_by_key()


#: set while no :func:`start_cpu_target_soon` thread (named _START_THREAD) is running
_TARGET_READY = threading.Event()
_TARGET_READY.set()
_START_THREAD = "s2g-numba-start"


def start_cpu_target_soon() -> None:
    """:func:`start_cpu_target` in a thread started now: ``s2g align`` calls it first
    thing, so that it runs beside CUDA's start-up (which waits on the driver, not the GIL)
    and the graph's loading instead of in the first compiled call (in a seeded run the
    index's bucket table, which the first batch waits for: 0.4-0.9 s). Until it ends, a
    compiled function's first call in any other thread waits for it
    (:func:`_first_calls_wait`)."""
    _first_calls_wait()
    _TARGET_READY.clear()

    def run():
        try:
            start_cpu_target()
        finally:
            _TARGET_READY.set()
    threading.Thread(target=run, name=_START_THREAD, daemon=True).start()


def _first_calls_wait() -> None:
    """Numba types a call's arguments (``typeof``, a ``functools.singledispatch``) outside
    its compiler lock, and the target's start imports modules that register more types in
    that dispatcher: a first call in one thread while the start ran in another failed
    with "RuntimeError: dictionary changed size during iteration" (CI, 2026-12-08, the
    ``processes`` knob's children, in ``simd.run_tasks``; 5 of 60 such runs here). So
    ``typeof_pyval``, where a dispatcher's first call (and the native dispatcher's
    fallback) types its arguments, waits for the start first (at most 60 s)."""
    from numba.core.dispatcher import _DispatcherBase
    if getattr(_DispatcherBase, "_s2g_waits", False):
        return
    typeof_pyval = _DispatcherBase.typeof_pyval

    def waiting(self, val):
        if not _TARGET_READY.is_set() and \
                threading.current_thread().name != _START_THREAD:
            _TARGET_READY.wait(60)
        return typeof_pyval(self, val)

    _DispatcherBase.typeof_pyval = waiting
    _DispatcherBase._s2g_waits = True


def start_cpu_target() -> None:
    """Start Numba's CPU target now: import and install its typing and lowering
    registries, which the first compiled call of a process otherwise does (0.4-0.6 s of
    Python on the GPU machine's host, ~0.35 s here; py-spy, bench/NOTES.md run 18).
    ``s2g align`` on a GPU calls it in a thread while its first kernel runs
    (:meth:`s2g.aligner.Aligner.align_scores`), having loaded the graph and built the
    kernel's tables without Numba (the ``py_nodes`` knob, :func:`s2g.graph_core.py_nodes`). An optimisation only:
    errors are left to the first compiled call."""
    try:
        from numba.core.compiler_lock import global_compiler_lock
        from numba.core.registry import cpu_target
        with global_compiler_lock:          # as a compiled call's cache load holds it
            cpu_target.target_context.refresh()
    except Exception:                       # noqa: BLE001
        pass


_LOAD_LOCK = threading.Lock()


def loaded(kernel):
    """``kernel`` (a CUDA dispatcher compiled for its signatures) with each of its
    overloads' modules loaded into the current context, under one process-wide lock.
    numba-cuda loads a kernel's module on its first launch
    (``CUDACodeLibrary.get_cufunc``) without a lock; two threads launching the same kernel
    for the first time both load it, and the second fails with "AssertionError: key
    already in dictionary: <CUlibrary ...>" (seen on the GPU machine, 2026-12-02: the seed
    kernels, loaded by ``chains_gpu.preload``'s thread while the seeding thread launched
    them). Every kernel factory of s2g returns its kernels through here, so a kernel is
    loaded once, by one thread, before any thread launches it. Nothing in the simulator
    (its dispatchers have no overloads to load)."""
    with _LOAD_LOCK:
        for ov in getattr(kernel, "overloads", {}).values():
            lib = getattr(ov, "_codelibrary", None)
            if lib is not None and hasattr(lib, "get_cufunc"):
                lib.get_cufunc()
    return kernel


#: the modules whose ``_check_blas()`` imports scipy.linalg at their import: Numba's CPU
#: target's and numba-cuda's copy of it (the CUDA target's, imported at its first use: the
#: first kernel a run compiles or loads from its cache)
_BLAS_PROBES = ("numba.np.arraymath", "numba.cuda.np.arraymath")


class _NoBlasProbe:
    """A ``sys.meta_path`` finder that answers Numba's BLAS probes "no" (see
    :func:`skip_blas_probe`): ``scipy.linalg`` imported from a probe's frame. Every other
    import, ``scipy.linalg`` from anywhere else included, passes through untouched."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "scipy.linalg":
            return None
        f = sys._getframe(1)
        while f is not None:
            if f.f_code.co_name == "_check_blas" and \
                    f.f_globals.get("__name__") in _BLAS_PROBES:
                raise ImportError("s2g: Numba's BLAS probe skipped (s2g/_numba.py)")
            f = f.f_back
        return None


_BLAS_SKIP = _NoBlasProbe()


def skip_blas_probe() -> bool:
    """Numba's CPU target, when first used in a process, imports ``numba.np.arraymath``,
    which probes for BLAS by importing ``scipy.linalg`` where SciPy is installed: 0.16 s
    on the 2-core VM, 0.39 s of the GPU host's start-up (H100 host, MHC, ``python -X
    importtime``, 2026-12-07), all of it holding the GIL while CUDA starts; numba-cuda's
    CUDA target does the same at its first use (``numba.cuda.np.arraymath``: the first
    kernel loaded, on the way to the first seeds). s2g's kernels call no BLAS; the probe's
    only other use is ``np.correlate``/``np.convolve`` of floats in Numba code, which then
    use Numba's own loop. The ``s2g`` command calls this first thing (knob ``blas_probe``
    on: the probes run as in any Numba program); the library leaves a user's process
    alone. Returns True when the probes will be skipped."""
    from .config import compile_time
    if compile_time("blas_probe") or all(m in sys.modules for m in _BLAS_PROBES):
        return False
    if _BLAS_SKIP not in sys.meta_path:
        sys.meta_path.insert(0, _BLAS_SKIP)
    return True
