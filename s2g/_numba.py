"""Numba options in one place (STYLE.md habit 5).

``cache=True`` keeps compiled CPU kernels on disk between runs, so the CLI pays the
JIT once per machine. ``fastmath`` stays off: every kernel is integer DP, where it
buys nothing and could reorder comparisons that decide ties.
"""
import os

NJIT = dict(cache=os.environ.get("S2G_NO_CACHE", "") == "", nogil=True)
PARALLEL = dict(NJIT, parallel=True)
