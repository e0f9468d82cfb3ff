"""The recurrence, written once (STYLE.md habit 5), for every CPU kernel.

Columns are graph bases in topological order; rows are read positions (ARCHITECTURE.md)::

    E[i][j] = max_{p in pred(j)} max(H[i][p] - o - e, E[i][p] - e)     deletion
    F[i][j] = max(H[i-1][j] - o - e, F[i-1][j] - e)                     insertion
    H[i][j] = max(max_{p in pred(j)} H[i-1][p] + s(q_i, g_j), E, F [, 0 if local])

A column is computed from two vectors over rows, ``PH[i] = max_p H[i][p]`` and
``PE[i] = max_p max(H[i][p] - o - e, E[i][p] - e)``. Inside a node they come from the
previous column; at a node's first column they are the maxima over its predecessors'
stored last columns (the node_bound store); a node without predecessors reads the
*virtual* column below, which also stands for any column outside a traceback window.

Virtual column (the boundary that makes every mode one recurrence):

=========== =====================
mode        H[0], H[i>0]
=========== =====================
local       0, 0
semiglobal  0, -(o + e*i)
global      0, -(o + e*i)
=========== =====================

and ``E = -inf``, so ``PH = H`` and ``PE = H - o - e`` (a global alignment may
delete the first graph base right after the virtual start).

Row 0 of a real column: local and semiglobal ``H = 0`` (free start), ``E = -inf``;
global ``H = E = PE[0]`` (the graph prefix is deleted). ``F[0] = -inf`` always.
These small functions are ``@njit`` so both the CPU kernels and the CUDA kernels of
later variants can call them.
"""
import numba

from ._numba import NJIT
from .scoring import NEG_INF

LOCAL, SEMIGLOBAL, GLOBAL = 0, 1, 2

# traceback direction byte: bits 0-1 the source of H, bit 2 E extends, bit 3 F extends
H_DIAG, H_DEL, H_INS, H_START = 0, 1, 2, 3
E_EXT = 4
F_EXT = 8


@numba.njit(inline="always", **NJIT)
def sub_score(qb, gb, match, mismatch):
    """+match on equal ACGT, -mismatch otherwise (N, code 4, never matches)."""
    return match if (qb == gb and qb < 4) else -mismatch


@numba.njit(**NJIT)
def virtual_column(PH, PE, rows, mode, o, e):
    """Fill PH/PE[0..rows] with the virtual column of ``mode`` (table above)."""
    PH[0] = 0
    PE[0] = -(o + e)
    for i in range(1, rows + 1):
        PH[i] = 0 if mode == LOCAL else -(o + e * i)
        PE[i] = PH[i] - o - e


@numba.njit(**NJIT)
def column(q, rows, gb, PH, PE, H, E, mode, a, b, o, e):
    """One DP column (rows 0..rows) from the predecessor vectors; returns nothing.

    Writes H and E of the column; F lives in a scalar because it only runs down.
    """
    if mode == GLOBAL:
        H[0] = PE[0]
        E[0] = PE[0]
    else:
        H[0] = 0
        E[0] = NEG_INF
    f = NEG_INF
    hup = H[0]
    for i in range(1, rows + 1):
        ev = PE[i]
        f = max(hup - o - e, f - e)
        h = max(PH[i - 1] + sub_score(q[i - 1], gb, a, b), ev, f)
        if mode == LOCAL and h < 0:
            h = 0
        H[i] = h
        E[i] = ev
        hup = h
