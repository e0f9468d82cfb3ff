"""The lean launch path's core (s2g/variants/_driver.py) without a GPU: the parameter
layout it passes equals the PTX entry's parameters of real s2g kernels (compiled to sm_90
PTX, as tests/test_ptx.py does), and the device arrays' views and the arguments' values
are laid out as Numba lays them out."""
from __future__ import annotations

import ctypes
import re

import numpy as np
import pytest

from s2g.variants import _driver


def _ptx_param_bytes(ptx: str) -> list:
    m = re.search(r"\.entry\s+\S+\s*\((.*?)\)", ptx, re.S)
    assert m, "no .entry in the PTX"
    return [int(bits) // 8 for bits in re.findall(r"\.param\s+\.[bsuf](\d+)\s", m.group(1))]


def _kernels():
    from s2g.seeded import chains_gpu
    from s2g.trace import warp_walk
    yield "widen", chains_gpu.widen_body, chains_gpu.WIDEN_SIGNATURE
    yield "chain", chains_gpu.chain_body, chains_gpu.CHAIN_SIGNATURE
    yield "walk", warp_walk.walk_body, warp_walk.signature()


@pytest.mark.parametrize("name", ["widen", "chain", "walk"])
def test_param_layout_is_the_ptx_entrys(name):
    cuda = pytest.importorskip("numba.cuda", reason="numba-cuda is not installed")
    try:
        from numba.cuda.cudadrv import nvvm
        nvvm.NVVM()
    except Exception as exc:  # pragma: no cover - depends on the install (as test_ptx.py)
        pytest.skip(f"NVVM unavailable ({type(exc).__name__}: {exc})")
    from s2g.seeded import chains_gpu
    from s2g.trace import warp_walk
    chains_gpu.compile_module()         # (device functions made, as its kernels' build does)
    warp_walk.cuda = cuda               # (its bodies name the module it imports lazily)
    (fn, sig), = [(f, s) for n, f, s in _kernels() if n == name]
    ptx, _ = cuda.compile_ptx(fn, sig, cc=(9, 0))
    spec = _driver.param_spec(sig)
    assert _driver.param_bytes(spec) == _ptx_param_bytes(ptx)
    # and the values marshal packs are those sizes, in that order
    k = object.__new__(_driver.Kernel)
    k.entry, k.spec = name, [tuple(p) for p in spec]
    args = [_driver.DArray(0x1000, (3,) * p[1], np.int32, None) if p[0] == "a" else
            np.dtype(p[1]).type(1) for p in spec]
    vals, params = k.marshal(args)
    assert [ctypes.sizeof(v) for v in vals] == _ptx_param_bytes(ptx)
    assert len(params) == len(vals)


def test_param_spec_of_numba_types():
    numba = pytest.importorskip("numba")
    sig = (numba.int32[::1], numba.float64[:, :, ::1], numba.int64, numba.int32,
           numba.uint8, numba.float64, numba.boolean)
    assert _driver.param_spec(sig) == [["a", 1], ["a", 3], ["s", "i8"], ["s", "i4"],
                                       ["s", "u1"], ["s", "f8"], ["s", "b1"]]
    assert _driver.param_bytes(_driver.param_spec(sig)) == \
        [8] * 7 + [8] * 11 + [8, 4, 1, 8, 1]
    with pytest.raises(ValueError, match="C-contiguous"):
        _driver.param_spec((numba.int32[:],))


def test_array_arguments_are_numbas_layout():
    """meminfo, parent, nitems, itemsize, data, shape..., strides... (bytes, outer first)."""
    k = object.__new__(_driver.Kernel)
    k.entry, k.spec = "k", [("a", 2), ("s", "i4"), ("a", 1)]
    a = _driver.DArray(0x2000, (3, 5), np.int64, None)
    b = _driver.DArray(0x9000, (7,), np.uint8, None)
    vals, _ = k.marshal([a, np.int32(-4), b])
    got = [v.value for v in vals]
    assert got == [None, None, 15, 8, 0x2000, 3, 5, 40, 8, -4,
                   None, None, 7, 1, 0x9000, 7, 1]
    with pytest.raises(TypeError, match="3 arguments"):
        k.marshal([a])
    with pytest.raises(TypeError, match="2 dimensions"):
        k.marshal([b, 1, b])
    with pytest.raises(TypeError, match="host array"):
        k.marshal([np.zeros((3, 5)), 1, b])


def test_device_array_views():
    mem = object()
    d = _driver.DArray(0x1000, (100,), np.int32, mem)
    s = d[10:30]
    assert (s.ptr, s.shape, s._mem) == (0x1000 + 40, (20,), mem)
    assert d[90:200].shape == (10,) and d[50:40].shape == (0,)
    v = d[4:12].view(np.uint8)
    assert (v.ptr, v.shape, v.dtype) == (0x1010, (32,), np.dtype(np.uint8))
    r = d.reshape(25, 4)
    assert (r.shape, r.strides, r.size, r.nbytes) == ((25, 4), (16, 4), 100, 400)
    assert d.reshape(-1, 10).shape == (10, 10)
    with pytest.raises(TypeError):
        d[::2]
    with pytest.raises(ValueError):
        d[0:3].view(np.int64)
    with pytest.raises(ValueError):
        d.reshape(7, 7)
