"""PTX instructions that Numba CUDA does not expose, as inline-assembly intrinsics.

``vmax(a, b)`` and ``vadd(a, b)`` are PTX ``max.s16x2`` and ``add.s16x2`` (sm_90): two
signed 16-bit lanes per 32-bit word, wrapping (callers keep values in range). ptxas
fuses an ``add.s16x2`` feeding a ``max.s16x2`` into one DPX VIADDMNMX.S16x2, two DP
cells in one instruction.

``prmt(a, b, sel)`` is PTX ``prmt.b32`` (byte permute, default mode): byte ``k`` of the
result is byte ``sel[4k+2:4k]`` of the 8-byte value ``b:a`` (bytes 0-3 from ``a``, 4-7
from ``b``), or, when ``sel[4k+3]`` is set, that byte's sign bit replicated. One SASS
PRMT: the fast kernel uses it to look up a substitution score in a 4-byte table,
sign-extended to 32 bits, in one instruction instead of a compare and a select.

:func:`prmt_py`, :func:`vmax_py`, :func:`vadd_py` are the same operations in Python
(the CUDA simulator's form).
"""
from __future__ import annotations

import numpy as np

#: bumped whenever an intrinsic's assembly changes: the generated kernels' module text
#: includes it, so their on-disk cache keys change with it
VERSION = 3


def s32(x):
    """``x`` wrapped to a signed 32-bit value (numpy int32), as the GPU's registers do."""
    x = int(x) & 0xFFFFFFFF
    return np.int32(x - (1 << 32) if x >= 1 << 31 else x)


def prmt_py(a, b, sel):
    """``prmt.b32`` in Python; returns a signed 32-bit value (numpy int32)."""
    x = ((int(b) & 0xFFFFFFFF) << 32) | (int(a) & 0xFFFFFFFF)
    out = 0
    for k in range(4):
        n = (int(sel) >> (4 * k)) & 0xF
        byte = (x >> (8 * (n & 7))) & 0xFF
        if n & 8:
            byte = 0xFF if byte & 0x80 else 0
        out |= byte << (8 * k)
    return s32(out)


def _halves(x):
    x = int(x) & 0xFFFFFFFF
    lo, hi = x & 0xFFFF, x >> 16
    return (lo - 0x10000 if lo & 0x8000 else lo), (hi - 0x10000 if hi & 0x8000 else hi)


def _join(lo, hi):
    return s32((lo & 0xFFFF) | ((hi & 0xFFFF) << 16))


def vmax_py(a, b):
    """``max.s16x2`` in Python."""
    (a0, a1), (b0, b1) = _halves(a), _halves(b)
    return _join(max(a0, b0), max(a1, b1))


def vadd_py(a, b):
    """``add.s16x2`` in Python (each half wraps)."""
    (a0, a1), (b0, b1) = _halves(a), _halves(b)
    return _join(a0 + b0, a1 + b1)


def _asm(text: str, nargs: int):
    """A Numba intrinsic ``int32(int32 x nargs)`` that emits the PTX ``text`` inline."""
    from llvmlite import ir
    from numba import types
    from numba.core.extending import intrinsic

    sig = types.int32(*[types.int32] * nargs)

    def codegen(context, builder, signature, args):
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(i32, [i32] * nargs)
        return builder.call(ir.InlineAsm(fnty, text, "=r" + ",r" * nargs), args)

    if nargs == 1:
        def op(typingctx, a):
            return sig, codegen
    elif nargs == 2:
        def op(typingctx, a, b):
            return sig, codegen
    else:
        def op(typingctx, a, b, c):
            return sig, codegen
    return intrinsic(op)


prmt = _asm("prmt.b32 $0, $1, $2, $3;", 3)
vmax = _asm("max.s16x2 $0, $1, $2;", 2)
vadd = _asm("add.s16x2 $0, $1, $2;", 2)
#: ``x`` unchanged, but opaque to LLVM's and ptxas's value analysis (a ``mov``): keeps a
#: 0/1 multiplier a multiply, where the compilers would turn it back into selects
opaque = _asm("mov.b32 $0, $1;", 1)


def _select(cmp: str, nargs: int):
    """A Numba intrinsic ``int32(int32 x nargs)``: ``a if x <cmp> y else b`` for
    ``(x, y, a, b)``, or ``a if x <cmp> y else 0`` for ``(x, y, a)``, as one LLVM compare
    and select. A Python ``x if c else y`` in a kernel is a branch in Numba's IR: the
    traceback form (s2g/variants/fast/render_tb.py) had four a cell and took 72 s to
    compile for K = 19 rows, against 7 s for the score form."""
    from llvmlite import ir
    from numba import types
    from numba.core.extending import intrinsic

    sig = types.int32(*[types.int32] * nargs)

    def codegen(context, builder, signature, args):
        c = builder.icmp_signed(cmp, args[0], args[1])
        other = args[3] if nargs == 4 else ir.Constant(ir.IntType(32), 0)
        return builder.select(c, args[2], other)

    if nargs == 3:
        def op(typingctx, x, y, a):
            return sig, codegen
    else:
        def op(typingctx, x, y, a, b):
            return sig, codegen
    return intrinsic(op)


#: ``a if x > y else 0``; ``a if x > y else b``; ``a if x == y else b`` (int32)
gtv = _select(">", 3)
gts = _select(">", 4)
eqs = _select("==", 4)


def gtv_py(x, y, a):
    return a if x > y else 0


def gts_py(x, y, a, b):
    return a if x > y else b


def eqs_py(x, y, a, b):
    return a if x == y else b


def opaque_py(x):
    """``opaque`` in Python (the identity)."""
    return x

__all__ = ["opaque", "opaque_py", "prmt", "prmt_py", "vmax", "vmax_py", "vadd", "vadd_py", "s32",
           "gtv", "gtv_py", "gts", "gts_py", "eqs", "eqs_py", "VERSION"]
