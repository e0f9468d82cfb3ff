"""What the generated CUDA kernels' builders share (:mod:`s2g.variants.fast`'s and
:mod:`s2g.gpu_long`'s): rows of generated source, loading a generated module (cached as a
file named by its hash), and raising a kernel's dynamic shared-memory limit. Both import
it; neither imports the other for these.
"""
from __future__ import annotations

import os
import threading
import warnings

from ..config import settings


def emit_rows(K, text, indent, reverse=False):
    """``text`` once per row r (``{r}``, ``{r1}`` = r + 1, ``{rk}`` = 1 + K + r; ``{k}`` =
    r // 8 and ``{sh}`` = 4 (r % 8), a row's 32-bit word and shift of 4-bit codes, for
    :mod:`s2g.gpu_long`), indented."""
    out = []
    for r in (range(K - 1, -1, -1) if reverse else range(K)):
        for line in text.strip("\n").splitlines():
            out.append(" " * indent + line.format(r=r, r1=r + 1, rk=1 + K + r, k=r // 8,
                                                  sh=4 * (r % 8)))
    return "\n".join(out)


def _cache_dir():
    """The folder of the generated kernels' files: the ``cache_dir`` knob, else
    ``$XDG_CACHE_HOME/s2g/kernels`` or ``~/.cache/s2g/kernels``; None where it cannot be
    written."""
    d = settings().cache_dir or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "s2g", "kernels")
    try:
        os.makedirs(d, exist_ok=True)
        return d if os.access(d, os.W_OK) else None
    except OSError:
        return None


def load_source(text: str, prefix: str, name: str, label: str, cache: bool = True):
    """Function ``name`` of the module ``text``: written to a file named by its hash
    (``prefix`` + 20 hex digits) under :func:`_cache_dir` and imported from there, so that
    Numba's on-disk cache (``cuda.jit(cache=True)``) can key on a source file; executed in
    memory (``label`` its file name) where no writable folder exists or ``cache`` is off.
    Sets ``__s2g_cached__`` (whether a file backs it) and ``__s2g_source__``. The ``fast``
    kernels and :mod:`s2g.gpu_long`'s use it."""
    import hashlib
    import importlib.util
    d = _cache_dir() if cache else None
    digest = hashlib.sha256(text.encode()).hexdigest()
    memo = (digest, name, d)
    hit = _LOADED.get(memo)
    if hit is not None:           # once a process: warmup's cache probe, then get_kernel
        return hit
    fn = None
    if d is not None:
        mname = prefix + digest[:20]
        path = os.path.join(d, mname + ".py")
        try:
            if not os.path.exists(path):
                tmp = f"{path}.{os.getpid()}.tmp"
                with open(tmp, "w") as fh:
                    fh.write(text)
                os.replace(tmp, path)
            spec = importlib.util.spec_from_file_location(mname, path)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            fn = getattr(mod, name)
            fn.__s2g_cached__ = True
        except OSError:
            fn = None
    if fn is None:
        env: dict = {}
        exec(compile(text, label, "exec"), env)
        fn = env[name]
        fn.__s2g_cached__ = False
    fn.__s2g_source__ = text
    _LOADED[memo] = fn
    return fn


#: load_source's functions by (text hash, name, folder): a module file is executed once a
#: process (0.06-0.13 s each on the GPU machine's host, py-spy, session 17)
_LOADED: dict = {}


def allow_shared(kern, nbytes) -> bool:
    """Raise the kernel's dynamic shared memory limit above 48 KB (cuKernelSetAttribute).

    The limit only ever rises (to the largest ``nbytes`` asked for), under a lock: the
    attribute belongs to the function, not to a launch, so a thread that set a smaller
    limit between another thread's call and its launch would make that launch fail with
    CUDA_ERROR_INVALID_VALUE (the likely cause when a window launch failed so on the 4Sim
    graph, bench/results/nvidia-h100/seeded/s55/). A lean kernel (``lean_cuda``) raises
    its own at launch, likewise."""
    from ._driver import Kernel
    if isinstance(kern, Kernel):
        return True
    with _SHARED_LOCK:
        key = id(kern)
        held = _SHARED.get(key)
        if held is not None and held[0] is kern and held[1] >= nbytes:
            return True
        try:
            from numba.cuda.cudadrv import driver as drv
            attr = drv.binding.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            for k in kern.overloads.values():
                f = k._codelibrary.get_cufunc()
                drv.driver.cuKernelSetAttribute(attr, int(nbytes), f.handle, f.device.id)
        except Exception as exc:                        # noqa: BLE001 - private API
            warnings.warn(f"fast: cannot raise the shared-memory limit ({exc}); using 48 KB",
                          RuntimeWarning, stacklevel=3)
            return False
        _SHARED[key] = (kern, int(nbytes))
        return True


#: allow_shared's limits: id of the dispatcher -> (the dispatcher, bytes); the dispatcher
#: is held so that its id cannot pass to another kernel, and checked by identity
_SHARED: dict = {}
_SHARED_LOCK = threading.Lock()
