"""The lean launch path (knob ``lean_cuda``, issue #42; docs/plans/driver_launch.md): a
warm GPU run launches its kernels' cubins through the driver (:mod:`._driver`) and never
imports numba.cuda, whose import, target refresh and cache loads were ~0.6-0.9 s of Python
holding the GIL in every run's start-up.

:func:`api` is what the GPU modules' host code calls where it used ``from numba import
cuda``: numba.cuda itself, or :data:`LEAN`, a namespace with the same names for the
calls s2g makes (``to_device``, ``device_array``, ``pinned_array``, ``synchronize``,
``event``, ``default_stream``, ``current_context``, ``get_current_device``).

:func:`kernel` is what the kernel factories call: with the lean path on, the stored cubin
of ``key`` loaded as a :class:`._driver.Kernel`; where the store has none (the first run
after an install or an edit), ``build()`` compiles or loads it with Numba as before (that
run imports numba.cuda), its cubin and entry name are stored, and the same lean kernel is
returned; a stored cubin the driver will not load is replaced the same way. Off:
``build()``'s dispatcher, as before. On by default (since 2026-12-08).

The store: ``<kernel cache>/cubins/<version>/<key digest>.{cubin,json}``, the version a
digest of s2g's sources (:data:`s2g._numba.SOURCES`, the stamp its stale-cache check
takes), Numba's and numba-cuda's versions, the device's compute capability and every
*compile* knob: an edit, an upgrade or another GPU reads another folder. Written to a
temporary name, then renamed. A store that cannot be written only means the next run
compiles (loads from Numba's cache) again. Making a new version folder removes all but the
:data:`KEEP_VERSIONS` newest (:func:`prune`).
"""
from __future__ import annotations

import hashlib
import json
import os
import threading
import types

from . import _driver

_STATE = []
_LOCK = threading.Lock()


def active() -> bool:
    """Whether this process launches through the driver (knob ``lean_cuda``; never under
    the CUDA simulator or a ``NUMBA_CUDA_DRIVER`` of the user's, nor where the driver
    library cannot be loaded: no GPU, nothing to launch). Decided once."""
    if not _STATE:
        with _LOCK:
            if not _STATE:
                from ..config import settings
                on = bool(settings().lean_cuda) and \
                    os.environ.get("NUMBA_ENABLE_CUDASIM", "0") in ("", "0") and \
                    not os.environ.get("NUMBA_CUDA_DRIVER") and _driver_loads()
                _STATE.append(on)
    return _STATE[0]


def _driver_loads() -> bool:
    try:
        _driver.lib()
        return True
    except OSError:
        return False


def api():
    """numba.cuda, or :data:`LEAN` where the lean path is on (see the module doc)."""
    if active():
        return LEAN
    from numba import cuda
    return cuda


# ---- kernel modules that import numba.cuda only to compile

def device(fn):
    """Marks ``fn`` a CUDA device function of its module (inlined), made one by
    :func:`compile_module` when the module's kernels are compiled: a module of kernels so
    imports without numba.cuda (the lean path launches their stored cubins)."""
    fn.__s2g_device__ = True
    return fn


_PREPARED = threading.Lock()


def compile_module(g: dict):
    """Readies the kernel module whose globals are ``g`` for Numba to compile its kernels
    (once): its global ``cuda`` becomes numba.cuda (the simulator's under it) and each
    :func:`device` function a ``cuda.jit(device=True, inline=True)`` one. Returns
    ``cuda.jit``."""
    from numba import cuda
    with _PREPARED:
        if not g.get("__s2g_compiled__"):
            g["cuda"] = cuda
            for name, v in list(g.items()):
                if callable(v) and getattr(v, "__s2g_device__", False) and \
                        getattr(v, "__module__", None) == g.get("__name__"):
                    g[name] = cuda.jit(device=True, inline=True)(v)
            g["__s2g_compiled__"] = True
    return cuda.jit


# ---- the cubin store

_VERSIONS: dict = {}


def version() -> str:
    """The store's folder name for this process (see the module doc; worked out once for
    its sources and device)."""
    from .. import _numba
    cc = (_driver.device_attribute("COMPUTE_CAPABILITY_MAJOR"),
          _driver.device_attribute("COMPUTE_CAPABILITY_MINOR"))
    got = _VERSIONS.get((_numba.SOURCES, cc))
    if got is None:
        import numba
        import numba_cuda

        from ..config import KNOBS, compile_time
        compiled = [(k.name, repr(compile_time(k.name))) for k in KNOBS if k.when == "compile"]
        text = json.dumps([_numba.SOURCES, numba.__version__, numba_cuda.__version__, cc,
                           compiled])
        got = _VERSIONS[(_numba.SOURCES, cc)] = hashlib.sha1(text.encode()).hexdigest()[:20]
    return got


def store_dir():
    """This process's store folder, or None (no writable cache folder, or no disk cache:
    knob ``no_cache``, which also leaves the sources unstamped)."""
    from .. import _numba
    from .codegen import _cache_dir
    if _numba.SOURCES is None:
        return None
    d = _cache_dir()
    return None if d is None else os.path.join(d, "cubins", version())


def _paths(key: str):
    d = store_dir()
    if d is None:
        return None
    name = hashlib.sha1(key.encode()).hexdigest()[:24]
    return os.path.join(d, name + ".cubin"), os.path.join(d, name + ".json")


def load(key: str):
    """The stored (cubin bytes, metadata) of ``key``, or None."""
    paths = _paths(key)
    if paths is None:
        return None
    try:
        with open(paths[1]) as fh:
            meta = json.load(fh)
        with open(paths[0], "rb") as fh:
            image = fh.read()
    except (OSError, ValueError):
        return None
    if meta.get("key") != key or len(image) != meta.get("bytes"):
        return None
    return image, meta


def cubin_bytes(obj) -> bytes:
    """A code library's cubin as bytes (numba-cuda 0.30 returns cuda.core's ``ObjectCode``,
    its bytes in ``code``)."""
    code = getattr(obj, "code", obj)
    if isinstance(code, str) and os.path.isfile(code):
        with open(code, "rb") as fh:
            return fh.read()
    return bytes(code)


def save(key: str, dispatcher) -> tuple | None:
    """Store the cubin of ``dispatcher``'s one compiled signature under ``key``; returns
    (cubin, metadata), or None where it has not exactly one."""
    ovls = list(getattr(dispatcher, "overloads", {}).values())
    if len(ovls) != 1:
        return None
    ov = ovls[0]
    image = cubin_bytes(ov._codelibrary.get_cubin())
    meta = {"key": key, "entry": ov.entry_name, "bytes": len(image),
            "spec": _driver.param_spec(ov.argument_types)}
    paths = _paths(key)
    if paths is not None:
        try:
            folder = os.path.dirname(paths[0])
            if not os.path.isdir(folder):
                os.makedirs(folder, exist_ok=True)
                prune(os.path.dirname(folder), folder)
            for path, data in ((paths[0], image), (paths[1], json.dumps(meta).encode())):
                tmp = f"{path}.{os.getpid()}.{threading.get_ident()}"
                with open(tmp, "wb") as fh:
                    fh.write(data)
                os.replace(tmp, path)
        except OSError:
            pass
    return image, meta


#: store folders kept (this one and the most recently made others: another install's or
#: GPU's s2g may use them; one of a source edit or an upgrade since is not used again)
KEEP_VERSIONS = 4


def prune(root: str, current: str) -> int:
    """Removes the store folders under ``root`` but ``current`` and the KEEP_VERSIONS - 1
    most recently modified others (a new folder is made at each edit or upgrade of s2g,
    Numba or the driver's GPU); returns how many. A process still reading a removed
    folder's entries finds none and stores them again: never an error."""
    import shutil
    try:
        others = [e for e in os.scandir(root) if e.is_dir() and e.path != current]
    except OSError:
        return 0
    others.sort(key=_mtime, reverse=True)
    gone = 0
    for e in others[KEEP_VERSIONS - 1:]:
        shutil.rmtree(e.path, ignore_errors=True)
        gone += 1
    return gone


def _mtime(entry) -> float:
    try:
        return entry.stat().st_mtime
    except OSError:                         # removed meanwhile (another process's prune)
        return 0.0


_KERNELS: dict = {}


def kernel(key: str, build):
    """The kernel of ``key`` (a string naming the factory, its form and its signature):
    off the lean path ``build()`` (a loaded Numba dispatcher); on it, the stored cubin's
    :class:`._driver.Kernel`, stored first from ``build()``'s where missing. Once a
    process a key."""
    if not active():
        return build()
    with _LOCK:
        hit = _KERNELS.get(key)
    if hit is not None:
        return hit
    got = load(key)
    k = None
    if got is not None:
        try:
            k = _driver.Kernel(got[0], got[1]["entry"], got[1]["spec"])
        except Exception:               # noqa: BLE001 - a stored entry the driver refuses
            k = None                    # (damaged, another driver's): stored again below
    if k is None:
        got = save(key, build())
        if got is None:
            raise RuntimeError(f"lean_cuda: no single compiled signature for {key}")
        image, meta = got
        k = _driver.Kernel(image, meta["entry"], meta["spec"])
    with _LOCK:
        return _KERNELS.setdefault(key, k)


# ---- numba.cuda's names, on the driver

class _Stream:
    """The calling thread's default stream (per-thread or legacy, as the process's)."""
    handle = 0

    def synchronize(self):
        _driver.stream_synchronize(0)


class _Context:
    class deallocations:                    # noqa: N801 - numba.cuda's attribute name
        @staticmethod
        def clear():                        # (frees are made at once here)
            return None

    @staticmethod
    def get_memory_info():
        return _driver.memory_info()


class _Device:
    def __getattr__(self, name):
        if name == "name":
            return _driver.device_name()
        if name == "compute_capability":
            return (_driver.device_attribute("COMPUTE_CAPABILITY_MAJOR"),
                    _driver.device_attribute("COMPUTE_CAPABILITY_MINOR"))
        if name in _driver.DEV_ATTR:
            return _driver.device_attribute(name)
        raise AttributeError(name)


LEAN = types.SimpleNamespace(
    to_device=_driver.to_device, device_array=_driver.device_array,
    pinned_array=_driver.pinned_array, synchronize=_driver.synchronize, event=_driver.Event,
    default_stream=lambda: _Stream(), current_context=lambda: _Context(),
    get_current_device=lambda: _Device(), is_available=lambda: True)
