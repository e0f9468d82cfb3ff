"""Every CUDA kernel compiled to sm_90 PTX with its real signature (the simulator
checks no types, STYLE.md habit 10), and the score arithmetic is 32-bit.

Numba types integer arithmetic as int64 unless every intermediate is cast back to
int32 (../shared/notes/gpu-facts.md: 4.5x slower). The cheap check: the DP's maxima
are ``max.s32``, and 64-bit ``max``/``min`` appear only in loop bounds (at most 3).
Needs numba-cuda and NVVM (``cuda-toolkit[nvvm]``), not a GPU.
"""
from __future__ import annotations

import importlib
import re
import types

import pytest

cuda = pytest.importorskip("numba.cuda", reason="numba-cuda is not installed")

VARIANTS = ["v1_antidiag", "v2_rolling", "v3_coop", "v4_interread"]


def _nvvm_available():
    try:
        from numba.cuda.cudadrv import nvvm
        nvvm.NVVM()
        return True, ""
    except Exception as exc:  # pragma: no cover - depends on the install
        return False, f"NVVM unavailable ({type(exc).__name__}: {exc}); pip install 'cuda-toolkit[nvvm]==13.0.*'"


def _kernels():
    for name in VARIANTS:
        mod = importlib.import_module(f"s2g.variants.{name}")
        for kname, (fn, sig) in mod.KERNELS.items():
            yield pytest.param(name, kname, fn, sig, id=f"{name}.{kname}")


def _ops(ptx):
    ops = {}
    for op in re.findall(r"^\s*(?:@!?%p\d+\s+)?([a-z]+(?:\.[a-z0-9]+)*)", ptx, re.M):
        ops[op] = ops.get(op, 0) + 1
    return ops


@pytest.mark.parametrize("name,kname,fn,sig", list(_kernels()))
def test_kernel_compiles_to_sm90_with_int32_scores(name, kname, fn, sig, monkeypatch):
    ok, why = _nvvm_available()
    if not ok:
        pytest.skip(why)
    # numba-cuda compiles some of its own device helpers (cg.this_grid) for "the current
    # device" even inside compile_ptx; without a GPU there is none, so name sm_90.
    import numba.cuda.dispatcher as disp
    monkeypatch.setattr(disp, "get_current_device",
                        lambda: types.SimpleNamespace(compute_capability=(9, 0)))
    ptx, _ = cuda.compile_ptx(fn, sig, cc=(9, 0))
    assert ".target sm_90" in ptx
    ops = _ops(ptx)
    if kname == "init_row0":
        return
    assert ops.get("max.s32", 0) >= 10, f"{name}.{kname}: scores are not int32: {ops}"
    wide = ops.get("max.s64", 0) + ops.get("min.s64", 0)
    assert wide <= 3, f"{name}.{kname}: {wide} 64-bit max/min (int64 score arithmetic?)"
    if name == "v4_interread":
        assert "ld.local" not in ptx and "st.local" not in ptx, "v4 spills to local memory"
