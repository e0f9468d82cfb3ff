"""CUDA through the driver API (ctypes), without numba.cuda: the lean launch path's core
(issue #42, docs/plans/driver_launch.md).

Why: a warm seeded GPU run spends most of its ~1.3-2 s start-up in Python holding the GIL,
and numba.cuda's part of that (its import, the CUDA target's first refresh, a cache load a
kernel) is only needed to *compile* kernels. A kernel Numba compiled once is a cubin and a
mangled entry name; launching it takes ``cuModuleLoadData`` and ``cuLaunchKernel`` with the
arguments laid out as Numba lays them out, and every driver call made through ctypes
leaves the GIL free while it runs.

What is here, and nothing more: the driver loaded and its primary context made current in
each thread that calls (:func:`ensure`), device arrays (:class:`DArray`: C-contiguous, the
few methods s2g's GPU modules call on Numba's), :func:`to_device` / :func:`device_array`,
events, and :class:`Kernel` (a cubin's entry with its parameter layout, launched as
``kernel[grid, block, stream, shared](*args)``). The layout is numba-cuda's
(``_Kernel._prepare_args``, 0.30): an array is ``meminfo, parent`` (null pointers),
``nitems, itemsize`` (int64), ``data`` (a pointer), its shape then its strides in bytes
(int64 each); a scalar is its own type. :func:`param_spec` makes a kernel's layout from its
Numba signature (where Numba is imported: the run that compiled it), :func:`param_bytes`
says its bytes, which ``tests/test_driver.py`` checks against the PTX entry's parameters.
"""
from __future__ import annotations

import ctypes
import os
import threading

import numpy as np

#: scalar parameter kinds (:func:`param_spec`'s codes) and their ctypes types
SCALARS = {"i8": ctypes.c_int64, "i4": ctypes.c_int32, "i2": ctypes.c_int16,
           "i1": ctypes.c_int8, "u8": ctypes.c_uint64, "u4": ctypes.c_uint32,
           "u2": ctypes.c_uint16, "u1": ctypes.c_uint8, "f8": ctypes.c_double,
           "f4": ctypes.c_float, "b1": ctypes.c_bool}
#: CUdevice_attribute / CUfunction_attribute numbers used here (cuda.h)
DEV_ATTR = {"MULTIPROCESSOR_COUNT": 16, "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": 97,
            "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR": 81, "COMPUTE_CAPABILITY_MAJOR": 75,
            "COMPUTE_CAPABILITY_MINOR": 76}
FUNC_ATTR = {"MAX_THREADS_PER_BLOCK": 0, "SHARED_SIZE_BYTES": 1, "NUM_REGS": 4,
             "MAX_DYNAMIC_SHARED_SIZE_BYTES": 8}


class DriverError(RuntimeError):
    """A driver call that did not return CUDA_SUCCESS (its name and the CUresult's)."""


def param_spec(signature) -> list:
    """A kernel's parameter layout from its Numba signature (a tuple of Numba types):
    per argument ``["a", ndim]`` (an array) or ``["s", code]`` (a scalar, a
    :data:`SCALARS` code). Imports nothing of numba.cuda."""
    spec = []
    for t in signature:
        ndim = getattr(t, "ndim", None)
        if ndim is not None and hasattr(t, "dtype"):
            if getattr(t, "layout", "C") != "C":
                raise ValueError(f"{t}: only C-contiguous arrays are launched here")
            spec.append(["a", int(ndim)])
        else:
            code = np.dtype(str(t) if str(t) != "boolean" else "bool").str[1:]
            if code not in SCALARS:
                raise ValueError(f"{t}: no scalar parameter of this type")
            spec.append(["s", code])
    return spec


def param_bytes(spec) -> list:
    """The size in bytes of each parameter the layout ``spec`` passes (the PTX entry's
    ``.param`` list, in order)."""
    out = []
    for kind, x in spec:
        if kind == "a":
            out += [8, 8, 8, 8, 8] + [8] * (2 * int(x))
        else:
            out.append(ctypes.sizeof(SCALARS[x]))
    return out


#: CUDA per-thread default streams (s2g sets CUDA Python's variable for numba.cuda, knob
#: ``per_thread_streams``): the stream-ordered calls are then the driver's ``_ptds`` /
#: ``_ptsz`` entry points, on which the null stream is the calling thread's own, as
#: numba.cuda's are
_PT = {"cuMemcpyHtoD_v2": "_ptds", "cuMemcpyDtoH_v2": "_ptds", "cuLaunchKernel": "_ptsz",
       "cuEventRecord": "_ptsz", "cuStreamSynchronize": "_ptsz"}


def ptds() -> bool:
    """Whether the process uses per-thread default streams: CUDA Python's variable, read
    when the driver is loaded (:func:`lib`), as numba.cuda reads it at its first use."""
    lib()
    return _LIB[1]


def fn(name: str):
    """The driver function ``name`` (its per-thread-stream form where :func:`ptds`)."""
    return getattr(lib(), name + (_PT.get(name, "") if ptds() else ""))


_LIB = []
_LOCK = threading.RLock()          # (ensure calls lib under it)
_TLS = threading.local()
_CTX = []


def lib():
    """libcuda, its functions' results typed (CUresult: int)."""
    if not _LIB:
        with _LOCK:
            if not _LIB:
                _LIB.append(ctypes.CDLL("libcuda.so.1"))
                _LIB.append(os.environ.get("CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM",
                                           "0") == "1")
    return _LIB[0]


def check(rc, what):
    if rc != 0:
        name = ctypes.c_char_p()
        try:
            lib().cuGetErrorName(rc, ctypes.byref(name))
        except Exception:                   # noqa: BLE001 - the number says enough
            pass
        raise DriverError(f"{what} failed: CUresult {rc}"
                          + (f" ({name.value.decode()})" if name.value else ""))


def ensure():
    """The driver started and device 0's primary context current in this thread (the
    context numba.cuda would use: one a device). Returns the context handle."""
    if getattr(_TLS, "ctx", None) is not None:
        return _TLS.ctx
    with _LOCK:
        if not _CTX:
            L = lib()
            check(L.cuInit(0), "cuInit")
            dev, ctx = ctypes.c_int(), ctypes.c_void_p()
            check(L.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
            check(L.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
            _CTX.extend([ctx, dev])
    check(lib().cuCtxSetCurrent(_CTX[0]), "cuCtxSetCurrent")
    _TLS.ctx = _CTX[0]
    return _TLS.ctx


_ATTRS: dict = {}


def device_attribute(name: str) -> int:
    """A :data:`DEV_ATTR` attribute of the device (asked once)."""
    got = _ATTRS.get(name)
    if got is None:
        ensure()
        v = ctypes.c_int()
        check(lib().cuDeviceGetAttribute(ctypes.byref(v), DEV_ATTR[name], _CTX[1]),
              f"cuDeviceGetAttribute({name})")
        got = _ATTRS[name] = int(v.value)
    return got


def device_name() -> str:
    ensure()
    buf = ctypes.create_string_buffer(256)
    check(lib().cuDeviceGetName(buf, 256, _CTX[1]), "cuDeviceGetName")
    return buf.value.decode()


def memory_info():
    """(free, total) bytes of the device."""
    ensure()
    free, total = ctypes.c_size_t(), ctypes.c_size_t()
    check(lib().cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total)), "cuMemGetInfo")
    return int(free.value), int(total.value)


def synchronize():
    ensure()
    check(lib().cuCtxSynchronize(), "cuCtxSynchronize")


def stream_synchronize(stream=0):
    """Wait for ``stream`` (0: this thread's default stream)."""
    ensure()
    check(fn("cuStreamSynchronize")(_stream(stream)), "cuStreamSynchronize")


def _free(name: str, handle):
    """The driver's ``name`` (a free) of ``handle`` from a finalizer: errors ignored (at
    interpreter shutdown the driver may be gone)."""
    try:
        if _LIB and handle.value:
            ensure()
            getattr(lib(), name)(handle)
    except Exception:                       # noqa: BLE001 - see the docstring
        pass


class _Pinned:
    """A cuMemHostAlloc'd (page-locked) block, freed when the last array on it goes."""

    def __init__(self, nbytes: int):
        ensure()
        p = ctypes.c_void_p()
        check(lib().cuMemHostAlloc(ctypes.byref(p), ctypes.c_size_t(max(int(nbytes), 1)), 0),
              f"cuMemHostAlloc({nbytes} bytes)")
        self.ptr = p.value

    def __del__(self):
        _free("cuMemFreeHost", ctypes.c_void_p(self.ptr))


def pinned_array(shape, dtype=np.float64) -> np.ndarray:
    """A page-locked host array (numpy, over driver memory that lives as long as it)."""
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
    dtype = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    mem = _Pinned(n)
    raw = (ctypes.c_uint8 * max(n, 1)).from_address(mem.ptr)
    raw._s2g_mem = mem                      # (the buffer keeps the block alive)
    return np.frombuffer(raw, np.uint8, n).view(dtype).reshape(shape)


class _Memory:
    """One cuMemAlloc'd block, freed when the last array on it goes."""
    __slots__ = ("ptr", "nbytes", "__weakref__")

    def __init__(self, nbytes: int):
        ensure()
        p = ctypes.c_uint64()
        check(lib().cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(max(int(nbytes), 1))),
              f"cuMemAlloc({nbytes} bytes)")
        self.ptr, self.nbytes = int(p.value), int(nbytes)

    def __del__(self):
        _free("cuMemFree_v2", ctypes.c_uint64(self.ptr))


class DArray:
    """A C-contiguous device array: ``ptr``, ``shape``, ``dtype``; views share their
    memory (``_mem`` keeps it alive)."""
    __slots__ = ("ptr", "shape", "dtype", "_mem")

    def __init__(self, ptr, shape, dtype, mem):
        self.ptr, self.shape, self.dtype, self._mem = int(ptr), tuple(int(s) for s in shape), \
            np.dtype(dtype), mem

    @property
    def size(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def strides(self) -> tuple:
        out, step = [], self.dtype.itemsize
        for s in reversed(self.shape):
            out.append(step)
            step *= s
        return tuple(reversed(out))

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, key):
        if self.ndim != 1 or not isinstance(key, slice):
            raise TypeError("a device array takes 1-D slices only")
        a, b, step = key.indices(self.shape[0])
        if step != 1:
            raise TypeError("a device array takes contiguous slices only")
        b = max(a, b)
        return DArray(self.ptr + a * self.dtype.itemsize, (b - a,), self.dtype, self._mem)

    def view(self, dtype):
        dtype = np.dtype(dtype)
        if self.ndim != 1 or self.nbytes % dtype.itemsize:
            raise ValueError("view: a 1-D array whose bytes the new type divides")
        return DArray(self.ptr, (self.nbytes // dtype.itemsize,), dtype, self._mem)

    def reshape(self, *shape):
        shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], tuple) else shape
        if -1 in shape:
            k = shape.index(-1)
            rest = 1
            for i, s in enumerate(shape):
                if i != k:
                    rest *= s
            shape = shape[:k] + (self.size // max(rest, 1),) + shape[k + 1:]
        n = 1
        for s in shape:
            n *= s
        if n != self.size:
            raise ValueError(f"cannot reshape {self.size} elements to {shape}")
        return DArray(self.ptr, shape, self.dtype, self._mem)

    @property
    def __cuda_array_interface__(self):
        """(Numba's kernels, where an unconverted one takes a lean array, see it as theirs.)"""
        return {"shape": self.shape, "strides": None, "data": (self.ptr, False),
                "typestr": self.dtype.str, "version": 3, "stream": None}

    def copy_to_host(self, ary=None, stream=0):
        """The array's contents in ``ary`` (a C-contiguous host array of its bytes) or a
        new one; synchronous (as Numba's on the default stream)."""
        ensure()
        out = np.empty(self.shape, self.dtype) if ary is None else ary
        if out.nbytes != self.nbytes or not out.flags.c_contiguous:
            raise ValueError("copy_to_host: a C-contiguous array of the same bytes")
        if self.nbytes:
            check(fn("cuMemcpyDtoH_v2")(ctypes.c_void_p(out.ctypes.data),
                                        ctypes.c_uint64(self.ptr), ctypes.c_size_t(self.nbytes)),
                  "cuMemcpyDtoH")
        return out

    def copy_to_device(self, host, stream=0):
        """``host``'s bytes (as many as the array's) copied in; synchronous."""
        ensure()
        host = np.ascontiguousarray(host)
        if host.nbytes != self.nbytes:
            raise ValueError("copy_to_device: a host array of the same bytes")
        if self.nbytes:
            check(fn("cuMemcpyHtoD_v2")(ctypes.c_uint64(self.ptr),
                                        ctypes.c_void_p(host.ctypes.data),
                                        ctypes.c_size_t(self.nbytes)), "cuMemcpyHtoD")


def device_array(shape, dtype=np.float64) -> DArray:
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
    dtype = np.dtype(dtype)
    n = 1
    for s in shape:
        n *= s
    mem = _Memory(n * dtype.itemsize)
    return DArray(mem.ptr, shape, dtype, mem)


def to_device(host) -> DArray:
    host = np.ascontiguousarray(host)
    d = device_array(host.shape, host.dtype)
    d.copy_to_device(host)
    return d


class Event:
    """A CUDA event (``record``, ``synchronize``, ``elapsed_time`` in ms)."""

    def __init__(self):
        ensure()
        h = ctypes.c_void_p()
        check(lib().cuEventCreate(ctypes.byref(h), 0), "cuEventCreate")
        self.handle = h

    def record(self, stream=0):
        check(fn("cuEventRecord")(self.handle, _stream(stream)), "cuEventRecord")

    def synchronize(self):
        check(lib().cuEventSynchronize(self.handle), "cuEventSynchronize")

    def elapsed_time(self, other) -> float:
        other.synchronize()
        ms = ctypes.c_float()
        check(lib().cuEventElapsedTime(ctypes.byref(ms), self.handle, other.handle),
              "cuEventElapsedTime")
        return float(ms.value)


def _stream(stream):
    """A stream argument as the driver takes it: 0/None the legacy default stream, an
    object with ``handle`` its handle, an int a handle."""
    if stream is None or stream == 0:
        return None
    h = getattr(stream, "handle", stream)
    return ctypes.c_void_p(h.value if isinstance(h, ctypes.c_void_p) else int(h))


class Kernel:
    """One entry of a cubin, launched as Numba launches its kernels:
    ``kernel[grid, block]`` / ``[grid, block, stream]`` / ``[grid, block, stream, shared]``
    then ``(*args)``: device arrays (:class:`DArray`, or anything with ``ptr``, ``shape``,
    ``dtype``) and scalars, laid out by ``spec`` (:func:`param_spec`)."""

    def __init__(self, image: bytes, entry: str, spec):
        ensure()
        self.entry, self.spec = entry, [tuple(p) for p in spec]
        self._image = ctypes.create_string_buffer(bytes(image), len(image))
        mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
        check(lib().cuModuleLoadData(ctypes.byref(mod), self._image), f"cuModuleLoadData({entry})")
        check(lib().cuModuleGetFunction(ctypes.byref(fn), mod, entry.encode()),
              f"cuModuleGetFunction({entry})")
        self.module, self.function = mod, fn
        self._dyn = 48 * 1024
        self._dyn_lock = threading.Lock()

    def attribute(self, name: str) -> int:
        v = ctypes.c_int()
        check(lib().cuFuncGetAttribute(ctypes.byref(v), FUNC_ATTR[name], self.function),
              f"cuFuncGetAttribute({name})")
        return int(v.value)

    def get_regs_per_thread(self) -> int:
        return self.attribute("NUM_REGS")

    def get_shared_mem_per_block(self) -> int:
        return self.attribute("SHARED_SIZE_BYTES")

    def marshal(self, args):
        """(the ctypes values, kept alive, and the void* array of their addresses)."""
        if len(args) != len(self.spec):
            raise TypeError(f"{self.entry}: {len(self.spec)} arguments, {len(args)} given")
        vals = []
        for i, ((kind, x), a) in enumerate(zip(self.spec, args)):
            if kind == "a":
                if isinstance(a, np.ndarray):       # (Numba would copy it over and back)
                    raise TypeError(f"{self.entry}: argument {i} is a host array; a lean "
                                    "kernel takes device arrays")
                shape = tuple(a.shape)
                if len(shape) != x:
                    raise TypeError(f"{self.entry}: an array of {x} dimensions expected")
                item = np.dtype(a.dtype).itemsize
                n = 1
                for s in shape:
                    n *= s
                strides, step = [], item
                for s in reversed(shape):
                    strides.append(step)
                    step *= s
                ptr = a.ptr if isinstance(a, DArray) else \
                    a.__cuda_array_interface__["data"][0]      # (a Numba device array)
                vals += [ctypes.c_void_p(0), ctypes.c_void_p(0), ctypes.c_int64(n),
                         ctypes.c_int64(item), ctypes.c_void_p(int(ptr))]
                vals += [ctypes.c_int64(s) for s in shape]
                vals += [ctypes.c_int64(s) for s in reversed(strides)]
            else:
                vals.append(SCALARS[x](a.item() if hasattr(a, "item") else a))
        return vals, (ctypes.c_void_p * max(len(vals), 1))(*[ctypes.addressof(v) for v in vals])

    def launch(self, args, grid, block, stream=0, shared=0):
        grid = (grid,) if np.ndim(grid) == 0 else tuple(grid)
        block = (block,) if np.ndim(block) == 0 else tuple(block)
        grid, block = (grid + (1, 1))[:3], (block + (1, 1))[:3]
        ensure()
        shared = int(shared)
        if shared > self._dyn:              # above 48 KB a block: an opt-in, which only
            with self._dyn_lock:            # rises (a thread's smaller one would fail
                if shared > self._dyn:      # another's launch: codegen.allow_shared)
                    check(lib().cuFuncSetAttribute(
                        self.function, FUNC_ATTR["MAX_DYNAMIC_SHARED_SIZE_BYTES"], shared),
                        "cuFuncSetAttribute")
                    self._dyn = shared
        vals, params = self.marshal(args)
        check(fn("cuLaunchKernel")(self.function, *[ctypes.c_uint(int(g)) for g in grid],
                                   *[ctypes.c_uint(int(b)) for b in block],
                                   ctypes.c_uint(shared), _stream(stream), params, None),
              f"cuLaunchKernel({self.entry})")     # (vals kept alive until here)

    def __getitem__(self, cfg):
        cfg = tuple(cfg)
        grid, block = cfg[0], cfg[1]
        stream = cfg[2] if len(cfg) > 2 else 0
        shared = cfg[3] if len(cfg) > 3 else 0
        return lambda *args: self.launch(args, grid, block, stream, shared)
