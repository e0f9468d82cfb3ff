"""Where CUDA's start goes on this machine (issue #42, s2g align's start-up): the driver's
cuInit and the primary context's retain called through ctypes (both release the GIL), then
numba.cuda's import and its own start, each timed; ``--numba-first``: numba alone.

    python -m bench.cuda_start_probe [--numba-first]
"""
import ctypes
import sys
import time

t0 = time.perf_counter()


def mark(what):
    print(f"{time.perf_counter() - t0:7.3f} s  {what}", flush=True)


if "--numba-first" not in sys.argv:
    lib = ctypes.CDLL("libcuda.so.1")
    mark("libcuda loaded")
    assert lib.cuInit(0) == 0
    mark("cuInit")
    dev = ctypes.c_int()
    assert lib.cuDeviceGet(ctypes.byref(dev), 0) == 0
    ctx = ctypes.c_void_p()
    assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
    mark("primary context retained")
    assert lib.cuCtxSetCurrent(ctx) == 0
    mark("context current")
from numba import cuda  # noqa: E402
mark("numba.cuda imported")
print(cuda.is_available())
mark("cuda.is_available()")
d = cuda.get_current_device()
mark(f"get_current_device: {d.name}")
a = cuda.device_array(10)
mark("first device array")
