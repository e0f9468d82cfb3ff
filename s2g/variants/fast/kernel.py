"""The compiled ``fast`` kernels: the generated module loaded from its cached file
(:func:`kernel_source`), its explicit signature, and one ``cuda.jit`` dispatcher per
configuration (:func:`get_kernel`).

Generated source
    The kernel is Python source generated per (G, K, mode) with the K rows as scalars
    (``cuda.local.array(K)`` went to local memory at K >= 12), written to
    ``~/.cache/s2g/kernels`` (the ``cache_dir`` knob) and compiled with
    ``cuda.jit(cache=True)``: the first run compiles (13.6 s for K = 19), later runs load
    the cached cubin.

Simulator
    Under ``NUMBA_ENABLE_CUDASIM=1`` the same kernel is built with a shared-memory
    exchange and ``syncthreads`` in place of the shuffles, one warp per block
    (tests/fast_cudasim_check.py).

Knobs (s2g/config.py, fixed at import: ``S2G_CONFIG=name=value``)
    ``fast_maxreg`` a register cap for ptxas, ``fast_exchange=shared`` the simulator's
    exchange on a real GPU; ``no_cache`` compiles without Numba's disk cache.
"""
from __future__ import annotations

import threading

from ..._numba import loaded
from ...config import compile_time
from .. import _lean
from ..codegen import load_source
from .constants import WARP
from .render import module_text

#: register cap per thread (0 = ptxas's choice; it took 168 for K = 19: 3 blocks per SM)
MAX_REGISTERS = compile_time("fast_maxreg")
#: "shfl" (warp shuffles) or "shared" (the simulator's shared-memory exchange with
#: syncthreads, one warp per block, also on a real GPU: a diagnostic and fallback)
EXCHANGE = compile_time("fast_exchange")
#: Numba's on-disk cache of the compiled kernels off (the ``no_cache`` knob)
NO_CACHE = compile_time("no_cache")


def kernel_source(G: int, K: int, mode: int, sim: bool = False, cache: bool = True,
                  prmt_sub: bool = True, pair: bool = False, note: str = "", pipe: int = 0,
                  win: bool = False, tb: bool = False):
    """The Python function of the kernel for ``G`` lanes x ``K`` rows in ``mode``.

    ``sim``: build the CUDA-simulator form (shared-memory exchange + syncthreads in
    place of shuffles; launch one warp per block). Returned undecorated so that tests
    can ``compile_ptx`` it; its text is ``fast_kernel.__s2g_source__``.

    The module is written to a file named by its hash under the ``cache_dir`` knob's
    folder (default ``~/.cache/s2g/kernels``) and imported from there, so that Numba's
    on-disk cache (``cuda.jit(cache=True)``) can key on a source file: the first run
    compiles (about 14 s for K = 19 on the H200 host), later runs load the cubin. Where
    no writable folder exists the text is executed in memory (no cache).
    """
    assert WARP % G == 0 and K >= 1
    text = module_text(G, K, int(mode), bool(sim), bool(prmt_sub), bool(pair), int(pipe),
                       bool(win), bool(tb))
    if note:          # compile options: part of the file's hash, so of the cache's key
        text = f"# {note}\n" + text
    fn = load_source(text, "s2g_fast_", "fast_kernel",
                     f"<s2g.fast kernel G={G} K={K} mode={int(mode)} sim={sim}>", cache)
    return fn


def kernel_signature(tb: bool = False):
    """Explicit argument types of :func:`kernel_source`'s kernel (for compile_ptx); ``tb``:
    the traceback form's, with its stores (:data:`.render_tb.PARAMS`)."""
    from numba import types as T
    i32a = T.int32[::1]
    return (i32a, i32a, i32a, i32a, i32a, i32a, T.uint8[::1], T.int64[::1], T.int32[::1], i32a,
            i32a, T.int64, T.int64, T.int64, T.int64, T.int32, T.int32, T.int32, T.int32,
            T.int32, T.int32,
            T.int32, i32a, i32a, i32a, i32a, i32a, i32a, i32a) + (
            (i32a, T.uint8[::1], T.uint8[::1], i32a, T.uint64[::1], T.uint64[::1]) if tb else ())


_KERNELS: dict = {}
_KERNELS_LOCK = threading.Lock()
_KEY_LOCKS: dict = {}


def shared_exchange() -> bool:
    """Whether the kernel exchanges through shared memory (the simulator, or
    ``fast_exchange=shared``), one warp a block."""
    return sim() or EXCHANGE == "shared"


def sim() -> bool:
    """Whether Numba runs the CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``)."""
    from numba import config
    return bool(config.ENABLE_CUDASIM)


def _key(G, K, mode, prmt_sub=True, pair=False, pipe=0, win=False, tb=False):
    return (G, K, int(mode), shared_exchange(), MAX_REGISTERS, sim(), bool(prmt_sub),
            bool(pair), int(pipe), bool(win), bool(tb))


def stored(*args) -> bool:
    """Whether the lean path's store holds the kernel of :func:`get_kernel`'s ``args``
    (warm-up's probe on that path: it renders no source and imports no numba.cuda)."""
    return _lean.load(f"fast.{_key(*args)}") is not None


def get_kernel(G, K, mode, prmt_sub=True, pair=False, pipe=0, win=False, tb=False):
    """The compiled kernel; ``pipe``: groups a stage of the pipelined kernel (0: off);
    ``win``: the seeded-window form (:mod:`.windows`); ``tb``: its traceback form
    (:mod:`.render_tb`)."""
    key = _key(G, K, mode, prmt_sub, pair, pipe, win, tb)
    with _KERNELS_LOCK:           # the stages' threads ask for kernels (s2g._numba.loaded)
        hit = _KERNELS.get(key)
        if hit is not None:
            return hit
        lock = _KEY_LOCKS.setdefault(key, threading.Lock())
    # one lock a kernel: a thread compiling one (the traceback form's first use compiled for
    # 70-110 s on the H200 host) kept every other thread from the kernels it had already
    # (s58: the align stage stalled as long)
    with lock:
        hit = _KERNELS.get(key)
        if hit is None:
            hit = _compile(key)
            with _KERNELS_LOCK:
                _KERNELS[key] = hit
        return hit


def compiled_source(G, K, mode, prmt_sub=True, pair=False, pipe=0, win=False, tb=False):
    """(the Python function, ``cuda.jit`` options) :func:`get_kernel` compiles for these
    arguments under this process's knobs (``fast_exchange``, ``fast_maxreg``): also the
    source whose disk cache :func:`s2g.warmup.cold` looks at."""
    exchange = shared_exchange()
    opts = {"max_registers": MAX_REGISTERS} if MAX_REGISTERS and not exchange else {}
    # numba's on-disk cache keys on the source, not on max_registers: a cap goes in
    # the source's text (a cached cubin of another cap was loaded silently before)
    fn = kernel_source(G, K, int(mode), sim=exchange, prmt_sub=bool(prmt_sub),
                       pair=bool(pair), note=f"max_registers={MAX_REGISTERS}" if opts else "",
                       pipe=int(pipe), win=bool(win), tb=bool(tb))
    return fn, opts


def _compile(key):
    """The dispatcher of :func:`get_kernel`'s ``key`` (on the lean path its stored cubin,
    found without rendering the kernel's source, whose module imports numba.cuda)."""
    return _lean.kernel(f"fast.{key}", lambda: _build(key))


def _build(key):
    from numba import cuda
    G, K, mode, _, _, _, prmt_sub, pair, pipe, win, tb = key     # (exchange: this process's)
    fn, opts = compiled_source(G, K, mode, prmt_sub, pair, pipe, win, tb)
    if sim():
        return cuda.jit(fn)
    if fn.__s2g_cached__ and not NO_CACHE:
        opts["cache"] = True
    return loaded(cuda.jit(kernel_signature(tb), **opts)(fn))
