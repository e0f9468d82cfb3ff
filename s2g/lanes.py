"""The CPU lane layout's shared pieces: what the simd variant (:mod:`s2g.variants.simd`)
and the lane traceback (:mod:`s2g.traceback`) both use. The lane types' bounds and
choice, padding and graph-N codes, the lane-type cast, the size-sorted dealing of work over threads, and the vector-instruction
count of a function's assembly. Both import it; neither imports the other for these.
"""
from __future__ import annotations

import numba
import numpy as np
from numba.extending import overload
from numba.np.numpy_support import as_dtype

from ._numba import NJIT
from .scoring import INT32_SAFE, NEG_INF, Mode, score_bound

#: largest score bound for int16 lanes; NEG16 < -2 * INT16_BOUND and
#: NEG16 - 2 * INT16_BOUND > -32768 (see :mod:`s2g.variants.simd`'s doc)
INT16_BOUND = 7000
NEG16 = -15000
#: int32 lanes: bound < INT32_SAFE = 2**28, NEG = -2**29
NEG32 = NEG_INF
#: query code of padding rows; graph N becomes GRAPH_N: neither equals any other code,
#: so N never matches, not even N (s2g.dp.sub_score)
PAD_CODE = 5
GRAPH_N = 7


def cast(x, like):
    """``x`` converted to the type of ``like`` (in compiled code: one truncation)."""
    return type(like)(x)


@overload(cast, inline="always")
def _cast_impl(x, like):
    ty = as_dtype(like).type

    def impl(x, like):
        return ty(x)
    return impl


@numba.njit(inline="always", **NJIT)
def snake(k, t, n):
    """Round ``k``'s item for thread ``t`` of ``n``: ``k * n + t`` in even rounds,
    ``k * n + n - 1 - t`` in odd ones. Work sorted by size dealt back and forth: with
    costs rising along the items each thread gets about the same total (dealt in one
    direction, thread ``n - 1`` would get the largest item of every round)."""
    return k * n + (t if k % 2 == 0 else n - 1 - t)


@numba.njit(inline="always", **NJIT)
def dealt(t, n_items, n):
    """The items of thread ``t`` of ``n`` among ``n_items`` size-sorted ones, in
    :func:`snake` order (int64: a prange's index is uint64 inside the loop, and each
    index type compiled the callee once more, cold start, issue 16)."""
    out = np.empty((n_items + n - 1) // n, np.int64)
    c = 0
    for k in range(len(out)):
        x = snake(k, np.int64(t), n)
        if x < n_items:
            out[c] = x
            c += 1
    return out[:c]



def vector_op_counts(asm, mnemonics):
    """Counter of (mnemonic, widest register) over the lines of ``asm`` whose instruction
    matches the regex ``mnemonics`` and names an x/y/zmm register."""
    import re
    from collections import Counter
    pat = re.compile(rf"^\s*({mnemonics})\s")
    out = Counter()
    for line in asm.splitlines():
        m = pat.match(line)
        widths = re.findall(r"%([xyz])mm\d", line)
        if m and widths:
            out[(m.group(1), max(widths, key="xyz".index) + "mm")] += 1
    return out


def lane_type(scoring, mode, read_len: int, graph_bases: int):
    """The narrowest lane type that is exact for reads of ``read_len`` (abPOA's switch);
    ``np.int64`` means no lane type fits: V0's int64 kernel runs those tasks."""
    bound = score_bound(scoring, Mode(int(mode)), read_len, graph_bases)
    if bound <= INT16_BOUND:
        return np.int16
    if bound < INT32_SAFE:
        return np.int32
    return np.int64


def graph_codes(graph):
    gc = graph.__dict__.get("_simd_gcode")
    if gc is None:
        gc = np.where(graph.base < 4, graph.base, GRAPH_N).astype(np.uint8)
        graph.__dict__["_simd_gcode"] = gc
    return gc
