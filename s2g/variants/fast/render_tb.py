"""The window form's traceback variant (``render(..., win=True, tb=True)``): the same cells
as the score pass, plus each cell's 4-bit direction code and, at merge columns, which
predecessor gave each row's diagonal and deletion (issue #42; the plan and its proof:
``docs/plans/warp_traceback.md``). The walk back over them is :mod:`s2g.trace.warp_walk`.

Direction code of a cell (:func:`s2g.trace.common.tb_cell`'s bits and tie order, in the
kernel's ``H - o - e`` domain; ``dd + S`` is the diagonal + s, ``f`` this row's F)::

    ee = E - e ; EXT = ee > HO | px          E extends (px: the merge's chosen predecessor's)
    t1 = dd + S ; dg = max(t1, ev)           ev = max(HO, ee)
    INS  f > dg        DEL  ev > t1          (strict: diagonal, then E, then F)
    FEXT f > HO one row up                   (F = max(HO up, F up - e): ties are opened)
    START (local) H - o - e == -o-e          (max(diag + s, E, F) <= 0)

Merge fold: predecessors in slot order (ascending node order, the one kept in registers,
``v - 1``, last), each replacing the row's diagonal or deletion when strictly better or
when no slot predecessor was chosen yet (a slot one wins a tie with the kept one, the
first slot one a tie with a later one: the CPU traceback's first-argmax). E is folded as
``max(HO + e, E)`` (the candidate deletion + e), so ``ev`` is the score pass's. Choices: a
byte per row (``1 + k``: the ``k``-th slot predecessor) where a row's bit in the lane's
mask is set; unset: the kept predecessor (``CI_KEEP``) or the virtual column (a source).

Layouts (uint64 offsets; ``doffs``/``moffs`` per unit): codes ``dirs[doff + (s NW + w) G +
t]`` (step ``s`` = column + lane, word ``w`` of the lane's ``NW`` = ceil(K / 8): the 8
lanes of a group store 32 contiguous bytes); choices ``dch``/``ech[(moff + mi) G K + t K +
r]`` and masks ``mch[((moff + mi) G + t) 2 + {0, 1}]`` with ``mi`` = the merge list's
offset in the unit (``mptr[c] - mptr[cb]``, one per merge node).
"""
from __future__ import annotations

from ...dp import LOCAL

#: the kernel's extra parameters (after ``status``)
PARAMS = ", dirs, dch, ech, mch, doffs, moffs"


def constants(G: int, K: int, sim: bool) -> list:
    """Module constants the traceback form uses (none of the score form's change)."""
    nw = (K + 7) // 8
    out = ["from numba import uint8", f"NW = {nw}", f"NWGU = np.uint64({nw * G})", f"GU = np.uint64({G})",
           f"KU = np.uint64({K})", f"GKU = np.uint64({G * K})"]
    out += [f"DG{w} = np.uint64({w * G})" for w in range(nw)]
    # int32 shift counts and bits: a Python literal is int64 to Numba, and so is every
    # operation on it (the cell loop's PTX had K + 2 64-bit instructions)
    out += [f"C{k} = int32({k})" for k in range(32)]
    out.append("from s2g.variants._ptx import " + (
        "gtv_py as gtv, gts_py as gts, eqs_py as eqs" if sim else "gtv, gts, eqs"))
    return out


def fetch() -> str:
    """A unit's code and choice offsets, and its first column's merge-list offset."""
    return ("\n        doff = uint64(0)\n        moff = uint64(0)\n        mp0 = Z\n"
            "        if ridx < n_units:\n            doff = doffs[rd]\n"
            "            moff = moffs[rd]\n            mp0 = mptr[uint64(cb)]")


def col_start(K: int) -> str:
    """Column start (indent 20): the code words and the merge's E-extension bits."""
    return "".join(f"{' ' * 20}DW{w} = Z\n" for w in range((K + 7) // 8)) + " " * 20 + "pxm = Z\n"


def merge_start(K: int) -> str:
    """After the keep/reset of a merge's registers (indent 24): the merge's choice base,
    E into the fold's domain with the kept predecessor's extension bits."""
    lines = ["mi = uint64(mptr[cb64 + uint64(j)] - mp0)",
             "mb = (moff + mi) * GKU + uint64(t) * KU",
             "chd = Z", "che = Z", "kk = Z"]
    for r in range(K):
        lines.append(f"pxm = int32(pxm | (int32(E{r} > int32(H{r} - NEGE)) << C{r}))")
        lines.append(f"E{r} = max(int32(H{r} - NEGE), E{r})")
    return "".join(" " * 24 + ln + "\n" for ln in lines)


def fold(K: int) -> str:
    """One slot predecessor folded into the rows (indent 28), with its choices: a copy for a
    slot in shared memory and one for a slot in global memory (as the score form has),
    each straight-line but for the choice stores. A row takes the slot's H when it is
    larger, or equal where no slot predecessor gave the row yet (then ``max`` is the new
    value either way); likewise E in the fold's domain, with the slot's extension bit."""
    def rows(load):
        out = []
        for r in range(K):
            free = "eqs(int32({m} >> C%d) & C1, Z, C1, Z)" % r    # no slot gave row r yet
            out += [f"sh = {load(r + 1)}",
                    f"se = {load(1 + K + r)}",
                    f"dq = gts(sh, H{r}, C1, eqs(sh, H{r}, {free.format(m='chd')}, Z))",
                    f"H{r} = max(H{r}, sh)",
                    f"chd = int32(chd | (dq << C{r}))",
                    "if dq != Z:",
                    f"    dch[mb + U{r}] = code",
                    "c2 = max(int32(sh - NEGE), se)",
                    f"eq_ = gts(c2, E{r}, C1, eqs(c2, E{r}, {free.format(m='che')}, Z))",
                    f"E{r} = max(E{r}, c2)",
                    f"che = int32(che | (eq_ << C{r}))",
                    f"pxm = eqs(eq_, C1, int32((pxm & ~(C1 << C{r})) | "
                    f"(gtv(se, int32(sh - NEGE), C1) << C{r})), pxm)",
                    "if eq_ != Z:",
                    f"    ech[mb + U{r}] = code"]
        return ["    " + ln for ln in out]
    lines = ["kk = int32(kk + 1)", "code = uint8(kk)", "if sl < n_sh32:",
             "    sp = uint64(shb + sl * SWW)", "    dgo = max(dgo, shm[sp])"]
    lines += rows(lambda w: f"shm[sp + W{w}]")
    lines += ["else:", "    sp = uint64(sbase + (sl - n_sh) * SW)", "    dgo = max(dgo, store[sp])"]
    lines += rows(lambda w: f"store[sp + U{w}]")
    return "\n".join(" " * 28 + ln for ln in lines)


def merge_end() -> str:
    """After the fold (indent 24): the lane's choice masks."""
    return (" " * 24 + "mq = ((moff + mi) * GU + uint64(t)) * U2\n"
            + " " * 24 + "mch[mq] = chd\n" + " " * 24 + "mch[mq + U1] = che\n")


def cells(K: int, mode: int, subst: str, track: str) -> str:
    """The column's cells with their codes (indent 20); ``subst`` the substitution word's
    text (``{r}``: the row) and ``track`` the end-cell tracking line of the mode."""
    local = mode == LOCAL
    out = []
    for r in range(K):
        hab = "hu" if r == 0 else f"H{r - 1}"
        # The bits by compare-and-select intrinsics (s2g.variants._ptx.gtv, gts, eqs): a
        # Python ``x if c else y`` a bit made Numba's IR a branch each and the form took 72 s
        # to compile (K = 19, 2-core VM), the score form 7 s; sign masks (``(y - x) >> 31``)
        # compiled in 31 s but took 37 PTX a cell, not 29. The merge's extension bit r
        # moved to E_EXT's place (4).
        px = f"(pxm >> C{r - 2})" if r >= 2 else f"(pxm << C{2 - r})"
        lines = [f"ee = int32(E{r} + NEGE)",
                 f"xb = int32(gtv(ee, H{r}, C4) | ({px} & C4))",
                 f"ev = max(H{r}, ee)",
                 f"t1 = int32(dd + {subst.format(r=r)})",
                 "dg = max(t1, ev)",
                 "u = max(int32(dg + NOE), NOE)" if local else "u = int32(dg - oe)",
                 f"xb = int32(xb | gtv(f, {hab}, C8))",
                 "cd = gts(f, dg, C2, gtv(ev, t1, C1))",
                 f"dd = H{r}",
                 f"H{r} = max(u, int32(f + NOE))",
                 "f = max(u, int32(f + NEGE))",
                 f"E{r} = ev"]
        if local:   # START: H - o - e == -o-e (it is never below)
            lines.append(f"cd = eqs(H{r}, NOE, C3, cd)")
        lines.append(f"DW{r // 8} = int32(DW{r // 8} | ((cd | xb) << C{4 * (r % 8)}))")
        lines.append(track.format(r=r))
        out += lines
    return "\n".join(" " * 20 + ln for ln in out)


def stores(K: int) -> str:
    """After the cells (indent 20): the lane's code words of this step."""
    lines = ["dq = doff + uint64(s) * NWGU + uint64(t)"]
    lines += [f"dirs[dq + DG{w}] = DW{w}" for w in range((K + 7) // 8)]
    return "".join(" " * 20 + ln + "\n" for ln in lines)
