"""What a GPU run's first kernel costs without numba.cuda (issue #42, start-up plan candidate 3).

A warm seeded GPU run spends ~1.3-2 s of its ~3 s wall before its first batch aligns, most
of it Python holding the GIL in several threads at once (docs/plans/startup.md): numba.cuda's
import, the CUDA target's first refresh, Numba's cache loads. Launching cached cubins through
the driver API (ctypes: cuModuleLoadData, cuLaunchKernel) would need none of them. This probe
measures that in a fresh process, both ways, on one real s2g kernel (the seeding's
``widen_body``, int32 -> int64, two array arguments in Numba's kernel ABI):

    python -m bench.driver_launch_probe dump DIR         # numba: compile/load, write the cubin
    python -m bench.driver_launch_probe time DIR --way driver|lean|numba [--busy S] [--n N]

``dump`` writes DIR/widen.cubin and DIR/widen.json (the entry's mangled name). ``time``
starts a thread that brings CUDA up and runs the kernel once on ``--n`` values (checked
against numpy), printing each step's seconds from the probe's start; ``--busy S``: the main
thread meanwhile holds the GIL for S seconds in pure Python (what s2g align's reader, graph
load and plan do then), in 1 ms slices, as a thread of the real run would. Both ways have numba
and numpy imported before the clock starts (as s2g align has); the driver way never imports
numba.cuda. ``--way lean``: the driver way through s2g's own module
(s2g/variants/_driver.py), which the probe so also checks on the GPU.

Numba's kernel ABI (numba-cuda 0.30, ``_Kernel._prepare_args``): each C-contiguous array is
``meminfo, parent`` (null pointers), ``nitems, itemsize`` (int64), ``data`` (pointer), then
its shape and its strides in bytes (int64 each); scalars as their own types.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import sys
import threading
import time

import numba  # noqa: F401  (s2g align has numba and numpy imported before its clock starts)
import numpy as np

T0 = time.perf_counter()

MARKS = []


def mark(what):
    MARKS.append((time.perf_counter() - T0, threading.current_thread().name, what))


def dump(out):
    from numba import cuda

    from s2g.seeded import chains_gpu
    os.makedirs(out, exist_ok=True)
    chains_gpu.kernels()
    kern = chains_gpu._KERNELS["widen"]
    (ovl,) = kern.overloads.values()
    from s2g.variants._lean import cubin_bytes
    cubin = cubin_bytes(ovl._codelibrary.get_cubin())
    with open(os.path.join(out, "widen.cubin"), "wb") as fh:
        fh.write(bytes(cubin))
    with open(os.path.join(out, "widen.json"), "w") as fh:
        json.dump({"entry": ovl.entry_name, "block": chains_gpu.BLOCK,
                   "device": str(cuda.get_current_device().name)}, fh)
    src = np.arange(1000, dtype=np.int32)
    print("dumped", ovl.entry_name, len(cubin), "bytes; numba check:",
          bool((chains_gpu.device_int64(src).copy_to_host() == src).all()))


def _check(lib, rc, what):
    if rc != 0:
        raise RuntimeError(f"{what} failed: CUresult {rc}")


def driver_way(d, n):
    c = ctypes
    lib = c.CDLL("libcuda.so.1")
    mark("libcuda loaded")
    _check(lib, lib.cuInit(0), "cuInit")
    dev, ctx = c.c_int(), c.c_void_p()
    _check(lib, lib.cuDeviceGet(c.byref(dev), 0), "cuDeviceGet")
    _check(lib, lib.cuDevicePrimaryCtxRetain(c.byref(ctx), dev), "retain")
    _check(lib, lib.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    mark("context current")
    with open(os.path.join(d, "widen.cubin"), "rb") as fh:
        image = fh.read()
    meta = json.load(open(os.path.join(d, "widen.json")))
    mod, fn = c.c_void_p(), c.c_void_p()
    _check(lib, lib.cuModuleLoadData(c.byref(mod), c.c_char_p(image)), "cuModuleLoadData")
    _check(lib, lib.cuModuleGetFunction(c.byref(fn), mod, meta["entry"].encode()),
           "cuModuleGetFunction")
    mark("module loaded")
    src = np.arange(n, dtype=np.int32) * 3 - 7
    d_src, d_dst = c.c_uint64(), c.c_uint64()
    _check(lib, lib.cuMemAlloc_v2(c.byref(d_src), c.c_size_t(src.nbytes)), "alloc")
    _check(lib, lib.cuMemAlloc_v2(c.byref(d_dst), c.c_size_t(8 * n)), "alloc")
    _check(lib, lib.cuMemcpyHtoD_v2(d_src, src.ctypes.data_as(c.c_void_p),
                                    c.c_size_t(src.nbytes)), "HtoD")
    vals = []
    for ptr, itemsize in ((d_src, 4), (d_dst, 8)):
        vals += [c.c_void_p(0), c.c_void_p(0), c.c_int64(n), c.c_int64(itemsize),
                 c.c_void_p(ptr.value), c.c_int64(n), c.c_int64(itemsize)]
    params = (c.c_void_p * len(vals))(*[c.addressof(v) for v in vals])
    block = int(meta["block"])
    grid = min(-(-n // block), 4096)
    _check(lib, lib.cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, None, params, None),
           "cuLaunchKernel")
    _check(lib, lib.cuCtxSynchronize(), "sync")
    out = np.empty(n, np.int64)
    _check(lib, lib.cuMemcpyDtoH_v2(out.ctypes.data_as(c.c_void_p), d_dst,
                                    c.c_size_t(out.nbytes)), "DtoH")
    mark(f"first result ({'equal' if (out == src).all() else 'WRONG'})")


def lean_way(d, n):
    """The same through s2g's lean launch core (s2g/variants/_driver.py)."""
    from s2g.variants import _driver
    _driver.ensure()
    mark("context current (s2g.variants._driver)")
    with open(os.path.join(d, "widen.cubin"), "rb") as fh:
        image = fh.read()
    meta = json.load(open(os.path.join(d, "widen.json")))
    kern = _driver.Kernel(image, meta["entry"], [["a", 1], ["a", 1]])
    mark("module loaded")
    src = np.arange(n, dtype=np.int32) * 3 - 7
    d_src, d_dst = _driver.to_device(src), _driver.device_array(n, np.int64)
    block = int(meta["block"])
    kern[min(-(-n // block), 4096), block](d_src, d_dst)
    out = d_dst.copy_to_host()
    mark(f"first result ({'equal' if (out == src).all() else 'WRONG'}; "
         f"{kern.get_regs_per_thread()} registers, {_driver.device_name()})")


def numba_way(n):
    from numba import cuda
    mark("numba.cuda imported")
    cuda.current_context()
    mark("context current")
    from s2g._numba import loaded
    from s2g.seeded import chains_gpu
    jit = chains_gpu.compile_module()      # (its globals readied for Numba, as s2g does)
    kern = loaded(jit(chains_gpu.WIDEN_SIGNATURE, cache=True)(chains_gpu.widen_body))
    mark("kernel loaded from Numba's cache")
    src = np.arange(n, dtype=np.int32) * 3 - 7
    d_src, d_dst = cuda.to_device(src), cuda.device_array(n, np.int64)
    kern[min(-(-n // chains_gpu.BLOCK), 4096), chains_gpu.BLOCK](d_src, d_dst)
    out = d_dst.copy_to_host()
    mark(f"first result ({'equal' if (out == src).all() else 'WRONG'})")


def busy(seconds):
    """Hold the GIL in pure Python for ``seconds`` (1 ms slices: the interpreter may switch
    between them, as it does between a real thread's bytecodes)."""
    end = time.perf_counter() + seconds
    x = 0
    while time.perf_counter() < end:
        s = time.perf_counter() + 0.001
        while time.perf_counter() < s:
            x += 1
    mark(f"main thread's {seconds:.2f} s of Python done")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=("dump", "time"))
    ap.add_argument("dir")
    ap.add_argument("--way", choices=("driver", "lean", "numba"), default="driver")
    ap.add_argument("--busy", type=float, default=0.0)
    ap.add_argument("--n", type=int, default=1 << 20)
    a = ap.parse_args(argv)
    if a.what == "dump":
        dump(a.dir)
        return 0
    errors = []

    def run():
        try:
            if a.way == "numba":
                numba_way(a.n)
            else:
                (driver_way if a.way == "driver" else lean_way)(a.dir, a.n)
        except Exception as exc:              # noqa: BLE001 - said below
            errors.append(exc)
    th = threading.Thread(target=run, name="cuda")
    th.start()
    if a.busy:
        busy(a.busy)
    th.join()
    mark("done")
    print(f"# way {a.way}, busy {a.busy} s, n {a.n}; numba imported: "
          f"{'numba' in sys.modules}, numba.cuda: {'numba.cuda' in sys.modules}")
    for at, thread, what in MARKS:
        print(f"{at:7.3f} s  {thread:<10} {what}")
    if errors:
        print("error:", errors[0])
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
