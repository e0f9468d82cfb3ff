"""Source text of the ``fast`` kernel, generated per (G, K, mode, pair, pipe): the
pieces it is made of (:func:`exchange`, the mode's ends, the cell, the unit fetch, the
lanes' reduction, the pipeline's hand-over) and the kernel's body around them
(:func:`render`), in a self-contained module (:func:`module_text`).

Recurrence (s2g.dp, in the ``H - o - e`` domain to save one subtraction per cell; F is
carried one row ahead, so rows depend on each other through one max only)::

    ev = max(HO[r], E[r] - e)                      E[i][j]
    dg = max(dd + S[r](g), ev)                     S: a+o+e on a match, o+e-b otherwise
    u  = max(dg - o - e [, -o-e local])
    dd = HO[r]; HO[r] = max(u, f - o - e)          H[i][j] - o - e
    f  = max(u, f - e)                             F[i+1][j] (o >= 0: f - o - e <= f - e)
    E[r] = ev

``S[r](g)`` is one PRMT (byte permute, inline PTX ``prmt.b32``, s2g.variants._ptx): row
r keeps a 4-byte table of its scores against A, C, G, T and the column's base selects
a byte, sign-extended (graph N selects a mismatch byte); scores that do not fit a
signed byte fall back to compare + select. Per cell (local): 12 32-bit PTX
instructions; ptxas fuses each add+max pair into Hopper's DPX VIADDMNMX: 5 VIADDMNMX +
PRMT + half a VIMNMX3 (the column maximum) = 6.5 SASS instructions per cell (7.5 in
kernel v2). No 64-bit arithmetic in the cell loop and no local memory (the PTX tests
fail otherwise). Merging costs (2K+1) loads + maxima per predecessor, a slot store
2K+1 stores, each one instruction (uint64 offsets: no wraparound code). Column
counters are int32 and indices unsigned (numba's int64 loop index and negative-index
wraparound cost ~20 instructions per column in kernel v2). The first column of a
source node is a merge from the last global slot, a *virtual* column each lane writes
at the start of a strip: a separate branch for it made ptxas copy all 2K row
registers on every column (~4 instructions per cell; seen in the SASS, run 4).

Integer width and the pair kernel
    The Hopper ALU pipe issues an integer instruction for 16 lanes per cycle per
    scheduler, half the issue rate: ncu on the 32-bit kernel (linear graph, 1,475 GCUPS)
    showed the ALU pipe 71% busy and every other pipe idle, so 32-bit cells cannot go
    much faster (bench/NOTES.md run 4). In **local mode** (the default) reads go in
    pairs: each register holds read A's value in its low half and read B's in its high
    half; the cell is the same recurrence in PTX ``add.s16x2``/``max.s16x2``, which ptxas
    fuses into VIADDMNMX.S16x2 (s2g.variants._ptx) — two cells per instruction,
    ~3.2 SASS per cell; the substitution is one PRMT for both reads (the column's
    4-byte score table, selected by the row's two read bases). Both reads stream the
    same columns, so merges, slots (one word holds both), shuffles and the column
    words are shared. :func:`.geometry.pair_fits` decides per batch: local mode, byte-sized
    substitution scores, ``a * (m + 1) + o + 2e < 32000`` (every value then fits 16
    bits beside the sentinel -16384); otherwise the 32-bit kernel (the ``fast_pair``
    knob off forces it). The 32-bit kernel runs when :func:`s2g.scoring.fits_int32` holds
    (every realistic read), else the exact int64 CPU path (``cpu`` variant) with a
    warning — never a silent overflow.

Ends and ties
    Local: each lane keeps its first strictly better column maximum (columns arrive in
    ascending order) and, on improvement, the smallest row holding it; lanes and strips
    are combined lexicographically (score desc, j asc, i asc): the V0 rule.
    Semiglobal: row m, smallest j; global: row m at sinks' last columns. Global row 0
    (``H[0][j] = E[0][j]``, deletion of a graph prefix) depends on the graph only and
    is computed on the host.
"""
from __future__ import annotations

from types import SimpleNamespace

from ...dp import LOCAL, SEMIGLOBAL
from ...scoring import NEG_INF
from ..codegen import emit_rows
from . import render_tb
from .constants import (CI_BASE, CI_KEEP, CI_MERGE, CI_SINK, CI_SLOT_SHIFT, CI_VIRT, NEG_INF16,
                        PIPE_MAX_GROUPS, PUBLISH_EVERY, READ_PAD, SLOT_BITS, SLOT_MASK, ST_OK,
                        WARP, pack16)

# ---------------------------------------------------------------- kernel factory
#
# The kernel is generated as Python source with its K rows written out as scalars
# (H0..H{K-1}, E0.., Q0..): numba-cuda 0.30.4 / LLVM stopped fully unrolling
# ``for r in range(K)`` over ``cuda.local.array(K)`` at K = 12 and 19, and the arrays
# went to local memory (152 bytes per thread for K = 19: ld.local/st.local in the cell
# loop; bench/NOTES.md run 3). Scalars cannot be demoted to memory, and every index in
# the slot store and merge becomes a base register plus an immediate.


def _rows(K):
    """:func:`~s2g.variants.codegen.emit_rows` for ``K`` rows: ``R(text, indent,
    reverse=False)``."""
    return lambda text, ind, **kw: emit_rows(K, text, ind, **kw)  # noqa: E731


def _fmt(s, ind):
    """``s`` with its ``{i}`` line indents filled in."""
    return s.format(i=" " * ind)


def _ind(text, n):
    """``text`` indented by ``n`` spaces."""
    return "\n".join(" " * n + ln for ln in text.splitlines())


def _ops(pair):
    """(MX, AD): the cell's max and add as source text, PTX ``.s16x2`` (pair) or int32."""
    if pair:
        MX = lambda x, y: f"vmax({x}, {y})"  # noqa: E731
        AD = lambda x, y: f"vadd({x}, {y})"  # noqa: E731
    else:
        MX = lambda x, y: f"max({x}, {y})"  # noqa: E731
        AD = lambda x, y: f"int32({x} + {y})"  # noqa: E731
    return MX, AD


def exchange(sim, pipe, ST):
    """(xchg_wp, xchg_step, xchg_red, sync): the exchanges of a group's lanes (the longest
    read's strips, the step's bottom row down one lane, the end cells' reduction) and the
    barrier after a strip: warp shuffles on a GPU, shared memory and barriers in the
    simulator (per group with the pipeline, ``ST`` threads a stage)."""
    if sim:
        xchg_wp = ("cuda.syncthreads()\n{i}buf[lane] = wp\n{i}cuda.syncthreads()\n"
                   "{i}ow = buf[lane ^ sh]")
        xchg_step = ("cuda.syncthreads()\n{i}buf[lane] = bh\n{i}buf2[lane] = bf\n"
                     "{i}cuda.syncthreads()\n{i}nh = buf[lane - 1] if lane > 0 else bh\n"
                     "{i}nf = buf2[lane - 1] if lane > 0 else bf")
        xchg_red = ("cuda.syncthreads()\n{i}buf[lane] = best\n{i}buf2[lane] = bj\n"
                    "{i}buf3[lane] = bi\n{i}cuda.syncthreads()\n{i}ob = buf[lane ^ msk]\n"
                    "{i}oj = buf2[lane ^ msk]\n{i}oi = buf3[lane ^ msk]")
        sync = "cuda.syncthreads()"
        if pipe:      # per-group barriers: stages of a block run different strips
            xchg_wp = (f"gsync({ST})\n{{i}}buf[tid] = wp\n{{i}}gsync({ST})\n"
                       f"{{i}}ow = buf[tid ^ sh] if sh < {ST} else wp")
            xchg_step = ("gsync(G)\n{i}buf[tid] = bh\n{i}buf2[tid] = bf\n{i}gsync(G)\n"
                         "{i}nh = buf[tid - 1] if t > 0 else bh\n"
                         "{i}nf = buf2[tid - 1] if t > 0 else bf")
            xchg_red = ("gsync(G)\n{i}buf[tid] = best\n{i}buf2[tid] = bj\n"
                        "{i}buf3[tid] = bi\n{i}gsync(G)\n{i}ob = buf[tid ^ msk]\n"
                        "{i}oj = buf2[tid ^ msk]\n{i}oi = buf3[tid ^ msk]")
            sync = f"gsync({ST})"
    else:
        assert not pipe or ST == WARP, "pipe: a stage is a warp on the GPU"
        xchg_wp = "cuda.syncwarp(FULL)\n{i}ow = cuda.shfl_xor_sync(FULL, wp, sh)"
        # Reconverge first: lanes that took a merge branch must meet the others at one
        # shuffle (without it the H200 gave wrong scores on graphs with bubbles).
        xchg_step = ("cuda.syncwarp(FULL)\n{i}nh = cuda.shfl_up_sync(FULL, bh, 1)\n"
                     "{i}nf = cuda.shfl_up_sync(FULL, bf, 1)")
        xchg_red = ("cuda.syncwarp(FULL)\n{i}ob = cuda.shfl_xor_sync(FULL, best, msk)\n"
                    "{i}oj = cuda.shfl_xor_sync(FULL, int32(bj), msk)\n"
                    "{i}oi = cuda.shfl_xor_sync(FULL, int32(bi), msk)")
        sync = "cuda.syncwarp(FULL)"
    return xchg_wp, xchg_step, xchg_red, sync


def _ends(K, mode, pair, MX):
    """(vslot, track, track_init, best_col) of ``mode``: the virtual column's words, the
    column's tracking in the cell, and the end-cell update after each column."""
    R = _rows(K)
    IS_LOCAL = mode == LOCAL
    IS_SEMI = mode == SEMIGLOBAL
    if IS_LOCAL:
        # the virtual column before a source: H - o - e = -o-e, and E = -o-e (so that the
        # source's first cell's max(H - o - e, E - e) is -o-e)
        vslot = ("vw0 = NOE\n" + R("vw{r1} = NOE", 0))
        track = f"cm = {MX('cm', 'u')}"   # max H-o-e of the column (F never holds it first)
        track_init = "cm = NIV"
        if pair:
            # one packed compare per column; per half only when a half improved
            best_col = "nb = vmax(cm, pb_)\nif nb != pb_:\n"
            for h, get in (("A", "int32({} << 16) >> 16"), ("B", "{} >> 16")):
                best_col += (f"    c{h} = {get.format('cm')}\n"
                             f"    if c{h} > {get.format('pb_')}:\n"
                             f"        pj{h} = int32(j + cb)\n"
                             + R(f"if {get.format('H{r}')} == c{h}:\n"
                                 f"    pi{h} = int32(row_base + {{r1}})", 8, reverse=True) + "\n")
            best_col += "    pb_ = nb"
        else:
            best_col = ("if cm > pb_:\n    pb_ = cm\n    pj_ = int32(j + cb)\n"
                        + R("if H{r} == cm:\n    pi_ = int32(row_base + {r1})", 4, reverse=True))
        best_col = "\n".join(" " * 20 + ln for ln in best_col.splitlines())
    else:
        # H[i][-1] = -(o + e i) (0 at i = 0): H - o - e = that - o - e, and E the same
        # (max(H - o - e, E - e) is then H - o - e, the value the first cell needs)
        vslot = ("vw0 = NOE if row_base == 0 else int32(-(o + e * row_base) - oe)\n"
                 + R("vw{r1} = int32(-(o + e * (row_base + {r1})) - oe)", 0))
        track = "vm = H{r} if rm == {r} else vm"
        cond = "own_m" if IS_SEMI else "own_m and (info & CI_SINK) != 0"
        best_col = (" " * 20 + f"if {cond} and vm > pb_:\n" + " " * 24 + "pb_ = vm\n"
                    + " " * 24 + "pj_ = int32(j + cb)\n" + " " * 24 + "pi_ = int32(m)")
        track_init = "vm = NI"
    return vslot, track, track_init, best_col


def _subst(pair, prmt_sub):
    """Row ``{r}``'s substitution score + o + e against the column's base, as text: the
    pair kernel's column table (byte c = score against base c) selected by the rows' bases,
    the row's PRMT table selected by the column's base, or compare + select."""
    if pair:
        return "prmt(gt, MISW, Q{r})"
    return "prmt(Q{r}, MISW, gsel)" if prmt_sub else "(sa if Q{r} == gb else sb)"


def _cell(mode, pair, prmt_sub, MX, AD, track):
    """(cell, qload, col_sub): one row's cell, a row's read word, the column's
    substitution word."""
    IS_LOCAL = mode == LOCAL
    # F is carried one row ahead: with dg = max(diagonal + s, E), u = max(dg - o - e
    # [, -o-e local]) and o >= 0,
    #   H-o-e = max(u, F - o - e)   and   F(next row) = max(H-o-e, F - e) = max(u, F - e)
    # so the only dependency between rows is one max(F - e, u) (one DPX VIADDMNMX).
    subst = _subst(pair, prmt_sub)
    cell = (f"ev = {MX('H{r}', AD('E{r}', 'NEGE'))}\n"
            f"dg = {MX(AD('dd', subst), 'ev')}\n"
            + (f"u = {MX(AD('dg', 'NOE'), 'NOE')}\n" if IS_LOCAL else "u = int32(dg - oe)\n") +
            "dd = H{r}\n"
            f"H{{r}} = {MX('u', AD('f', 'NOE'))}\n"
            f"f = {MX('u', AD('f', 'NEGE'))}\n"
            "E{r} = ev\n" + track)
    if pair:          # row r's selector: bytes of read A's and B's bases, sign-extended
        qload = ("cA = int32(codes[offA + row_base + {r}]) if row_base + {r} < mA else int32(READ_PAD)\n"
                 "cB = int32(codes[offB + row_base + {r}]) if row_base + {r} < mB else int32(READ_PAD)\n"
                 "Q{r} = int32(cA | ((cA | 8) << 4) | (cB << 8) | ((cB | 8) << 12))")
    elif prmt_sub:    # row r's table: byte c = score(read base, graph base c) + o + e
        qload = ("c = int32(codes[off + row_base + {r}]) if row_base + {r} < m else int32(READ_PAD)\n"
                 "Q{r} = int32(MISW ^ (DIFF << ((c & 3) * 8))) if c < 4 else MISW")
    else:
        qload = "Q{r} = int32(codes[off + row_base + {r}]) if row_base + {r} < m else int32(READ_PAD)"
    # the column's substitution word, precomputed on the host (column_sub): 16 ALU
    # instructions per column fewer than deriving it from the base here (SASS, run 7)
    col_sub = "gt = sub" if pair else "gsel = sub" if prmt_sub else "gb = sub"
    return cell, qload, col_sub


def _unit(pair, win=False):
    """(consts, fetch, best_init, pass_init, combine, row0_load): a unit's read (pair) and
    column range, its best so far, a strip's, and the strip's best folded into the unit's.
    ``win``: units are seeded windows (:mod:`.windows`): unit ``rd`` aligns its own codes
    (``roff[rd]``, ``rlen[rd]``) in its own columns ``[rlo[2 rd], rlo[2 rd + 1])``."""
    if win:
        assert not pair
        fetch = ("rr = Z\n        m = 0\n        off = 0\n        rd = 0\n        cb = Z\n"
                 "        NC = Z\n        if ridx < n_units:\n"
                 "            rd = order[ridx]\n            m = rlen[rd]\n            off = roff[rd]\n"
                 "            cb = int32(rlo[2 * rd])\n            NC = int32(rlo[2 * rd + 1] - cb)\n"
                 "        NC32 = uint32(NC)\n        cb64 = uint64(cb)\n"
                 "        npass = int32((m + GK - 1) // GK)")
        consts, _, best_init, pass_init, combine, _ = _unit(False)    # the 32-bit kernel's
        # local and semiglobal row 0 (the only modes of a window): -o-e, no table
        return consts, fetch, best_init, pass_init, combine, "NOE"
    # the unit (run_kernel's (read or pair, column range), whole warps a range) of ridx
    unit_map = ("ck = ridx // GPW                 # a warp's groups: one column range\n"
                "        rr = ck % n_rng\n"
                "        ridx = (ck // n_rng) * GPW + ridx % GPW\n"
                "        cb = int32(rlo[rr])              # the range's first column\n"
                "        NC = int32(rlo[rr + 1] - cb)\n"
                "        NC32 = uint32(NC)\n"
                "        cb64 = uint64(cb)\n        ")
    if pair:
        consts = "NIV = NI2"
        fetch = unit_map + ("rdA = 0\n        rdB = 0\n        mA = 0\n        mB = 0\n        offA = 0\n"
                            "        offB = 0\n        if ridx < n_units:\n"
                            "            rdA = order[2 * ridx]\n            mA = rlen[rdA]\n"
                            "            offA = roff[rdA]\n            if 2 * ridx + 1 < n_reads:\n"
                            "                rdB = order[2 * ridx + 1]\n                mB = rlen[rdB]\n"
                            "                offB = roff[rdB]\n"
                            "        npassA = int32((mA + GK - 1) // GK)\n"
                            "        npassB = int32((mB + GK - 1) // GK)\n"
                            "        npass = max(npassA, npassB)")
        best_init = ("bestA = int32(-oe)\n        bestB = int32(-oe)\n        biA = M1\n"
                     "        biB = M1\n        bjA = M1\n        bjB = M1")
        pass_init = ("pb_ = NOE\n            piA = M1\n            piB = M1\n"
                     "            pjA = M1\n            pjB = M1")
        combine = ""
        for h, get in (("A", "int32(pb_ << 16) >> 16"), ("B", "pb_ >> 16")):
            combine += (f"            pb{h} = {get}\n"
                        f"            if p < npass{h} and pj{h} >= 0 and (pb{h} > best{h} or "
                        f"(pb{h} == best{h} and (bj{h} < 0 or pj{h} < bj{h}))):\n"
                        f"                best{h} = pb{h}\n                bj{h} = pj{h}\n"
                        f"                bi{h} = pi{h}\n")
        row0_load = "NOE"              # local row 0: H - o - e = -o-e everywhere
    else:
        consts = "NIV = NI"
        fetch = unit_map + ("m = 0\n        off = 0\n        rd = 0\n        if ridx < n_units:\n"
                            "            rd = order[ridx]\n            m = rlen[rd]\n            off = roff[rd]\n"
                            "        npass = int32((m + GK - 1) // GK)")
        best_init = "best = floor\n        bi = M1\n        bj = M1"
        pass_init = "pb_ = floor\n            pi_ = M1\n            pj_ = M1"
        combine = ("            if live and pj_ >= 0 and (pb_ > best or (pb_ == best and "
                   "(bj < 0 or pj_ < bj))):\n                best = pb_\n                bj = pj_\n"
                   "                bi = pi_\n")
        row0_load = None
    return consts, fetch, best_init, pass_init, combine, row0_load


def _reduce(pair, pipe, halves, xchg_red):
    """The lanes' end cells reduced to the group's (V0's order) and written out; with the
    pipeline, the stages' through shared memory first."""
    X, ind = _fmt, _ind
    reduce_out = ""
    # the V0 order of end cells: score desc, then j asc, then i asc
    better = ("oj >= 0 and (ob > best{h} or (ob == best{h} and (bj{h} < 0 or oj < bj{h} "
              "or (oj == bj{h} and oi < bi{h}))))")
    pipe_out = ""
    for h in halves:
        red = X(xchg_red, 12).replace("best", f"best{h}").replace("bj", f"bj{h}").replace(
            "bi", f"bi{h}")
        rd = f"rd{h}" if pair else "rd"
        guard = "ridx < n_units" + (" and 2 * ridx + 1 < n_reads" if h == "B" else "")
        ox = f"{rd} * n_rng + rr"                   # (read, column range)
        write = f'''if {guard}:
    if bj{h} >= 0:
        out_s[{ox}] = int32(best{h} + oe)
        out_i[{ox}] = bi{h}
        out_j[{ox}] = bj{h}
    else:
        out_s[{ox}] = NI
        out_i[{ox}] = -1
        out_j[{ox}] = -1
    status[{ox}] = ST_OK'''
        reduce_out += f'''
        msk = 1
        while msk < G:
            {red}
            if {better.format(h=h)}:
                best{h} = ob
                bj{h} = oj
                bi{h} = oi
            msk *= 2'''
        if not pipe:
            reduce_out += "\n        if lead:\n" + ind(write, 12)
            continue
        # pipe: every group's lead leaves its best in shared memory; stage 0's combine
        reduce_out += (f"\n        if lead:\n            xs{h}[q * SG + g] = best{h}\n"
                       f"            xj{h}[q * SG + g] = bj{h}\n            xi{h}[q * SG + g] = bi{h}")
        pipe_out += f'''
            for qq in range(1, P):
                ob = xs{h}[qq * SG + g]
                oj = xj{h}[qq * SG + g]
                oi = xi{h}[qq * SG + g]
                if {better.format(h=h)}:
                    best{h} = ob
                    bj{h} = oj
                    bi{h} = oi
''' + ind(write, 12)
    if pipe:
        reduce_out += ("\n        cuda.syncthreads()\n        if lead and q == Z:" + pipe_out
                       + "\n        cuda.syncthreads()      # the shared words are reused")
    return reduce_out


def _pipeline(pipe, sim, ST, halves, xchg_wp):
    """The pieces that differ with the pipeline (``pipe`` groups a stage; 0: off): the
    exchange buffers, the stage's declarations, the unit loop, the strips a group runs,
    the strip buffers, the wait for the feeding stage and the publication of progress."""
    X = _fmt
    if pipe:
        nbuf = "1024" if sim else "WARP"      # the simulator's exchange is by thread
        pipe_decl = (f"q = int32(tid // {ST})                        # stage in the block\n"
                     f"g = int32((tid % {ST}) // G)                  # group in the stage\n"
                     f"P = int32(cuda.blockDim.x // {ST})            # stages in the block\n"
                     "R = int32(P + 1)                              # column buffers a read\n"
                     "qp = int32((q + P - 1) % P)                   # the stage feeding this one\n"
                     f"pubr = (tid % {ST}) == {ST - 1}               # publishes the stage's progress\n"
                     "pst = cuda.shared.array(PMAX, int32)          # strip a stage produces\n"
                     "pcol = cuda.shared.array(PMAX, int32)         # its columns published\n"
                     + "".join(f"x{w}{h} = cuda.shared.array(PMAX, int32)\n"
                               for h in halves for w in "sji"))
        unit_loop = ("n_iter = (NU + cuda.gridDim.x * SG - 1) // (cuda.gridDim.x * SG)\n"
                     "    for it in range(n_iter):\n"
                     "        ridx = (it * cuda.gridDim.x + cuda.blockIdx.x) * SG + g")
        unit_start = ("if tid % ST == Z:\n            pst[q] = M1\n            pcol[q] = Z\n"
                      "        cuda.syncthreads()\n        wp = npass\n"
                      "        for sh in (16, 8, 4, 2, 1):    # the stage's longest read\n"
                      f"            {X(xchg_wp, 12)}\n            wp = max(wp, int32(ow))")
        strips = "range(q, wp, P)"
        # strip p reads buffer p % R (written by strip p - 1) and writes (p + 1) % R: a
        # buffer is rewritten only after its reader, P strips back on the same stage, ended
        bases = ("rbase = uint64(((cuda.blockIdx.x * SG + g) * R + p % R) * N)\n"
                 "            wbase = uint64(((cuda.blockIdx.x * SG + g) * R + (p + 1) % R) * N)\n"
                 "            avail = Z                   # columns of strip p - 1 seen published\n"
                 "            pub = p + 1 < wp            # the stage publishes (uniform)\n"
                 "            if pub and pubr:            # strip p, no column yet\n"
                 "                cuda.atomic.exch(pcol, q, Z)\n"
                 "                cuda.threadfence_block()\n"
                 "                cuda.atomic.exch(pst, q, int32(p))")
        # a group's lane 0 waits until strip p - 1 (stage qp) has published column
        # ``need`` - 1: its strip counter past p - 1, or at p - 1 with ``need`` columns
        wait = ("if from_bnd and {need} > avail:\n"
                "    while True:\n"
                "        ps = cuda.atomic.add(pst, qp, Z)\n"
                "        if ps >= p:\n"
                "            avail = int32(N32)\n"
                "            break\n"
                "        if ps == p - 1:\n"
                "            pc = cuda.atomic.add(pcol, qp, Z)\n"
                "            if pc >= {need}:\n"
                "                avail = pc\n"
                "                break\n"
                + ("        pause()\n" if sim else "")
                + "    cuda.threadfence_block()")
        # every writer fences its column; after the step's exchange (a warp barrier: the
        # stage's writes are ordered before it) the stage's last thread publishes
        publish = ("if (j & PUB_MASK) == PUB_MASK:\n"
                   "    cuda.threadfence_block()")
        publish_step = ("jw = int32(s - (G - 1))          # the writers' column this step\n"
                        "if pub and (jw & PUB_MASK) == PUB_MASK and uint32(jw) < NC32:\n"
                        + (f"    gsync({ST})\n" if sim else "")
                        + "    if pubr:\n        cuda.threadfence_block()\n"
                        "        cuda.atomic.exch(pcol, q, int32(jw + 1))")
        publish_end = ("if wr_bnd:\n    cuda.threadfence_block()")
        publish_after = ("if pub and pubr:\n    cuda.threadfence_block()\n"
                         "    cuda.atomic.exch(pcol, q, int32(N32))")
    else:
        nbuf = "WARP"
        pipe_decl = ""
        unit_loop = ("n_iter = (NU + ngroups - 1) // ngroups\n"
                     "    for it in range(n_iter):\n        ridx = it * ngroups + gid")
        unit_start = ("wp = npass\n        for sh in (16, 8, 4, 2, 1):\n"
                      f"            {X(xchg_wp, 12)}\n            wp = max(wp, int32(ow))")
        strips = "range(wp)"
        bases = "rbase = bbase\n            wbase = bbase"
        wait = publish = publish_end = publish_step = publish_after = ""
    return dict(nbuf=nbuf, pipe_decl=pipe_decl, unit_loop=unit_loop, unit_start=unit_start,
                strips=strips, bases=bases, wait=wait, publish=publish, publish_end=publish_end,
                publish_step=publish_step, publish_after=publish_after)


def _head(p) -> str:
    """The kernel's signature and set-up, through a unit's start (its read or pair, its
    column range and best)."""
    nbuf, pipe_decl, consts, pair, IS_LOCAL = p.nbuf, p.pipe_decl, p.consts, p.pair, p.IS_LOCAL
    unit_loop, fetch, unit_start, best_init = p.unit_loop, p.fetch, p.unit_start, p.best_init
    tb_params = p.tb_params
    ind = _ind
    return f'''
def fast_kernel(colinfo, colsub, mword, mptr, mslot, row0, codes, roff, rlen, order, rlo,
                n_reads, n_rng, n_slots, n_sh, a, b, o, e, kNEGE, kNOE, kMISW, store, bndH, bndF, out_s, out_i,
                out_j, status{tb_params}):
    N = colinfo.shape[0]
    N32 = uint32(N)
    tid = cuda.threadIdx.x
    lane = tid % WARP
    t = int32(lane % G)
    lead = t == Z                                 # lane 0 of its group
    gid = (cuda.blockIdx.x * cuda.blockDim.x + tid) // G
    ngroups = (cuda.gridDim.x * cuda.blockDim.x) // G
    buf = cuda.shared.array({nbuf}, int32)
    buf2 = cuda.shared.array({nbuf}, int32)
    buf3 = cuda.shared.array({nbuf}, int32)
{ind(pipe_decl, 4)}
    shm = cuda.shared.array(0, int32)             # node_bound slots 0 .. n_sh-1
    shb = (tid // WARP) * n_sh * SWW + lane       # word 0 of slot 0, this lane
    n_sh32 = int32(n_sh)
    oe = int32(o + e)
    sa = int32(a + o + e)
    sb = int32(o + e - b)
    # -e, -o-e (in both 16-bit halves in the pair kernel) and the PRMT mismatch word (the
    # mismatch score in every byte), from the host (kernel_constants): parameters live
    # in the constant bank, operands of the cell's instructions, where values computed
    # here were recomputed on every column to spare registers (SASS, run 7)
    NEGE = kNEGE
    NOE = kNOE
    MISW = kMISW
    {consts}
    DIFF = int32((sa ^ sb) & 0xFF)
    sbase = (gid * G + t) * n_slots * SW          # global slots n_sh .. n_sh+n_slots-1
    bbase = uint64(gid * N)
    n_units = {"(n_reads + 1) // 2" if pair else "n_reads"}     # reads or read pairs
    # units: (read or pair, column range) in whole warps of one range (run_kernel)
    NU = (n_units + GPW - 1) // GPW * GPW * n_rng
    {unit_loop}
        {fetch}
        {unit_start}
        floor = {"int32(-oe)" if IS_LOCAL else "NI"}
        {best_init}
        {"" if pair else "pm = (m - 1) // GK"}
        {"" if pair else "tm = ((m - 1) % GK) // K"}
        {"" if pair else "rm = (m - 1) % K"}
'''


def _strip(p) -> str:
    """A strip's start: its rows' read words, the virtual slot, the lane-0 column words."""
    R, qload, vslot, strips, pass_init, bases = p.R, p.qload, p.vslot, p.strips, p.pass_init, p.bases
    pair, wait, lane0_row0 = p.pair, p.wait, p.lane0_row0
    ind = _ind
    return f'''\
        for p in {strips}:
            row_base = int32(p * GK + t * K)
{R(qload + chr(10) + "H{r} = NIV" + chr(10) + "E{r} = NIV", 12)}
            # the last global slot: the virtual column before every source (this lane's rows)
{ind(vslot, 12)}
            sp = uint64(sbase + (n_slots - 1) * SW)
            store[sp] = vw0
{R("store[sp + U{r1}] = vw{r1}", 12)}
{R("store[sp + U{rk}] = vw{r1}", 12)}
            live = p < npass
            from_bnd = p > 0 and live
            {pass_init}
            hu = NIV
            fu = NIV
            dgo = NIV
            wr_bnd = t == G - 1 and p + 1 < npass
            {bases}
            {"" if pair else "own_m = p == pm and t == tm"}
            ninfo = Z                         # int32 (a literal 0 would make them int64)
            nsub = Z
            nmw = Z
            nhu = NIV
            nfu = NIV
            if lead and NC > 0:               # lane 0 starts on the range's column 0 at step 0
                ninfo = colinfo[cb64]
                nsub = colsub[cb64]
                nmw = mword[cb64]
{ind(wait.format(need="1"), 16)}
                if from_bnd:
                    nhu = bndH[rbase]
                    nfu = bndF[rbase]
                else:
                    {lane0_row0}
                    nfu = nhu
'''


def _columns(p) -> str:
    """The strip's column loop: merges, the cells, slot stores, ends, the step's exchange."""
    K, KA, MX, R, best_col, cell, col_sub = p.K, p.KA, p.MX, p.R, p.best_col, p.cell, p.col_sub
    lane0_row0_n, publish, publish_step, track_init = (p.lane0_row0_n, p.publish,
                                                       p.publish_step, p.track_init)
    wait, xchg_step, ncl = p.wait, p.xchg_step, p.ncl
    X, ind = _fmt, _ind
    tb = p.tb
    if tb is None:
        fold = f'''                            if sl < n_sh32:
                                sp = uint64(shb + sl * SWW)
                                dgo = {MX("dgo", "shm[sp]")}
{R("H{r} = " + MX("H{r}", "shm[sp + W{r1}]"), 32)}
{R("E{r} = " + MX("E{r}", "shm[sp + W{rk}]"), 32)}
                            else:
                                sp = uint64(sbase + (sl - n_sh) * SW)
                                dgo = {MX("dgo", "store[sp]")}
{R("H{r} = " + MX("H{r}", "store[sp + U{r1}]"), 32)}
{R("E{r} = " + MX("E{r}", "store[sp + U{rk}]"), 32)}
'''.rstrip("\n")
        cells = R(cell, 20)
        tb_col = tb_merge = tb_merge_end = tb_stores = ""
    else:
        fold, cells = tb.fold, tb.cells
        tb_col, tb_merge, tb_merge_end, tb_stores = tb.col, tb.merge, tb.merge_end, tb.stores
    return f'''\
            # int32 column counters and unsigned indices: numba's int64 loop index and
            # its negative-index wraparound cost ~20 instructions per column otherwise
            for s in range(int32({ncl} + G - 1)):
                j = int32(s - t)
                info = ninfo
                sub = nsub
                mw = nmw
                if lead:
                    hu = nhu
                    fu = nfu
                jn = int32(j + 1)
                if uint32(jn) < NC32:                 # prefetch the next column's words
                    ninfo = colinfo[cb64 + uint64(jn)]
                    nsub = colsub[cb64 + uint64(jn)]
                    nmw = mword[cb64 + uint64(jn)]
                    if lead:
{ind(wait.format(need="int32(jn + 1)"), 24)}
                        if from_bnd:
                            nhu = bndH[rbase + uint64(jn)]
                            nfu = bndF[rbase + uint64(jn)]
                        else:
                            {lane0_row0_n}
                            nfu = nhu
                bh = NIV
                bf = NIV
                if uint32(j) < NC32:
                    {col_sub}
{tb_col}                    if info & CI_MERGE:
                        # keep: the previous column stays (x 1 + 0); else reset (x 0 + NIV).
                        # Multiply-adds run on the FMA pipe: selects would take 2K + 1
                        # instructions of the ALU pipe, the kernel's bottleneck (ncu)
                        km = opaque(int32((info >> CI_KEEP_BIT) & 1))
                        ka = int32(NIV & (km - 1))
                        dgo = {KA("dgo")}
{R("H{r} = " + KA("H{r}") + chr(10) + "E{r} = " + KA("E{r}"), 24)}
{tb_merge}                        pw = mw                       # up to 3 slots + 1, packed ...
                        k = Z
                        kend = Z
                        if mw < 0:                    # ... or the CSR
                            pw = Z
                            k = mptr[cb64 + uint64(j)]
                            kend = mptr[cb64 + uint64(j) + U1]
                        while pw != 0 or k < kend:
                            if pw != 0:
                                sl = int32((pw & SLOT_MASK) - 1)
                                pw = int32(pw >> SLOT_BITS)
                            else:
                                sl = mslot[uint64(k)]
                                k = int32(k + 1)
{fold}
{tb_merge_end}                    f = fu                            # F of the first row (carried down)
                    dd = dgo
                    {track_init}
{cells}
{tb_stores}                    sl = int32(info >> CI_SLOT_SHIFT)
                    if sl != 0:
                        sl = int32(sl - 1)
                        if sl < n_sh32:
                            sp = uint64(shb + sl * SWW)
                            shm[sp] = hu
{R("shm[sp + W{r1}] = H{r}", 28)}
{R("shm[sp + W{rk}] = E{r}", 28)}
                        else:
                            sp = uint64(sbase + (sl - n_sh) * SW)
                            store[sp] = hu
{R("store[sp + U{r1}] = H{r}", 28)}
{R("store[sp + U{rk}] = E{r}", 28)}
{best_col}
                    if wr_bnd:
                        bndH[wbase + uint64(j)] = H{K - 1}
                        bndF[wbase + uint64(j)] = f
{ind(publish, 24)}
                    bh = H{K - 1}
                    bf = f
                    dgo = hu
                {X(xchg_step, 16)}
                if not lead:
                    hu = nh
                    fu = nf
{ind(publish_step, 16)}
'''


def _tail(p) -> str:
    """A strip's end (barrier, publication), the strips' and the lanes' end cells."""
    publish_end, sync, publish_after, combine, reduce_out = (p.publish_end, p.sync,
                                                             p.publish_after, p.combine,
                                                             p.reduce_out)
    ind = _ind
    return f'''\
{ind(publish_end, 12)}
            {sync}
{ind(publish_after, 12)}
{combine}{reduce_out}
'''


def render(G: int, K: int, mode: int, sim: bool, prmt_sub: bool, pair: bool = False,
           pipe: int = 0, win: bool = False, tb: bool = False) -> str:
    """Source text of the kernel (see the module docstring).

    ``pair``: two reads per group, their scores packed in the halves of 32-bit words
    and computed with PTX ``.s16x2`` DPX arithmetic (local mode only; the host checks
    that every value fits 16 bits). Otherwise 32-bit scores, one read per group.

    ``pipe`` (SG, 0: off): the pipelined kernel for long reads. A *stage* is SG groups
    (on a GPU a warp: SG = 32 / G), each group on its own read (pair); the P stages of a
    block work on the same SG reads, stage q on strips q, q + P, ..., each strip's bottom
    row handed to the next stage through a ring of P + 1 column buffers per read, with
    progress counters in shared memory (see "Long reads" in :mod:`.geometry`). A
    stage moves in lockstep (a warp), so it waits and publishes as one. The simulator
    form synchronises each group and stage by itself (:mod:`s2g.variants._simsync`).

    ``win``: the seeded-window form (:mod:`.windows`; 32-bit, one strip, no pipeline):
    every unit its own read and column range, so the groups of a warp run on different
    columns; their column loop runs to the warp's longest range (``NCW32``: the step's
    shuffle needs every lane), each group computing only its own columns.

    ``tb``: the window form that also stores each cell's direction code and each merge
    row's predecessor choices, for the walk back (:mod:`.render_tb`).
    """
    ST = G * pipe                         # threads a stage
    IS_LOCAL = mode == LOCAL
    assert not pair or (IS_LOCAL and prmt_sub)
    MX, AD = _ops(pair)
    xchg_wp, xchg_step, xchg_red, sync = exchange(sim, pipe, ST)
    # x * km + ka: x where km = 1, ka = 0; the sentinel where km = 0, ka = NIV (one IMAD)
    KA = (lambda x: f"s32(int({x}) * int(km) + int(ka))") if sim else (
        lambda x: f"int32({x} * km + ka)")
    halves = ("A", "B") if pair else ("",)
    vslot, track, track_init, best_col = _ends(K, mode, pair, MX)
    cell, qload, col_sub = _cell(mode, pair, prmt_sub, MX, AD, track)
    consts, fetch, best_init, pass_init, combine, row0_load = _unit(pair, win)
    assert not win or not pipe
    assert not tb or (win and not pair)
    pl = _pipeline(pipe, sim, ST, halves, xchg_wp)
    if win:           # the warp's longest column range bounds every group's column loop
        pl["unit_start"] += ("\n        ncw = NC\n        for sh in (16, 8, 4, 2, 1):\n"
                             f"            {_fmt(xchg_wp.replace('wp', 'ncw'), 12)}\n"
                             "            ncw = max(ncw, int32(ow))\n        NCW32 = uint32(ncw)")
    p = SimpleNamespace(
        K=K, pair=pair, IS_LOCAL=IS_LOCAL, R=_rows(K), MX=MX, KA=KA, xchg_step=xchg_step,
        sync=sync, vslot=vslot, track_init=track_init, best_col=best_col, cell=cell,
        qload=qload, col_sub=col_sub, consts=consts, fetch=fetch, best_init=best_init,
        pass_init=pass_init, combine=combine,
        reduce_out=_reduce(pair, pipe, halves, xchg_red),
        lane0_row0=(f"nhu = {row0_load}" if row0_load else "nhu = row0[cb64]"),
        lane0_row0_n=(f"nhu = {row0_load}" if row0_load else "nhu = row0[cb64 + uint64(jn)]"),
        ncl="NCW32" if win else "NC32", tb=_tb_parts(K, mode, prmt_sub, track) if tb else None,
        tb_params=render_tb.PARAMS if tb else "", **pl)
    if tb:
        p.fetch += render_tb.fetch()
    return _head(p) + _strip(p) + _columns(p) + _tail(p)


def _tb_parts(K, mode, prmt_sub, track):
    """The traceback form's pieces (:mod:`.render_tb`)."""
    subst = _subst(False, prmt_sub)
    return SimpleNamespace(col=render_tb.col_start(K), merge=render_tb.merge_start(K),
                           fold=render_tb.fold(K), merge_end=render_tb.merge_end(),
                           cells=render_tb.cells(K, mode, subst, track),
                           stores=render_tb.stores(K))


def module_text(G: int, K: int, mode: int, sim: bool, prmt_sub: bool = True,
                pair: bool = False, pipe: int = 0, win: bool = False, tb: bool = False) -> str:
    """A self-contained module: the kernel's constants, then the kernel."""
    SW = 2 * K + 1                       # words per lane per slot: hu, K x HO, K x E
    ints = {"WARP": WARP, "FULL": 0xFFFFFFFF, "G": G, "K": K, "GK": G * K, "SW": SW,
            "SWW": SW * WARP, "CI_BASE": CI_BASE, "CI_MERGE": CI_MERGE, "CI_VIRT": CI_VIRT,
            "CI_SINK": CI_SINK, "CI_KEEP": CI_KEEP, "CI_KEEP_BIT": CI_KEEP.bit_length() - 1,
            "CI_SLOT_SHIFT": CI_SLOT_SHIFT, "READ_PAD": READ_PAD,
            "SLOT_BITS": SLOT_BITS, "SLOT_MASK": SLOT_MASK, "ST_OK": ST_OK,
            "PMAX": PIPE_MAX_GROUPS, "PUB_MASK": PUBLISH_EVERY - 1,
            "SG": max(int(pipe), 1), "ST": G * max(int(pipe), 1),
            "GPW": int(pipe) if pipe else WARP // G}   # groups a warp (a stage: a warp)
    from .. import _ptx
    head = [f"# generated by s2g.variants.fast (G={G}, K={K}, mode={mode}, sim={sim}, "
            f"prmt={prmt_sub}, pair={pair}, pipe={pipe}{', win=True' if win else ''}"
            f"{', tb=True' if tb else ''}, "
            f"_ptx v{_ptx.VERSION}); do not edit",
            "import numpy as np", "from numba import cuda, int32, uint32, uint64",
            "from s2g.variants._ptx import " + (
                "prmt_py as prmt, vmax_py as vmax, vadd_py as vadd, opaque_py as opaque, s32"
                if sim else "prmt, vmax, vadd, opaque")]
    if sim and pipe:
        head.append("from s2g.variants._simsync import gsync, pause")
    head.append("")
    head += [f"{k} = {v}" for k, v in ints.items()]
    head += [f"NI = int32({int(NEG_INF)})", "Z = int32(0)", "M1 = int32(-1)",
             f"NI2 = int32({pack16(NEG_INF16)})       # NEG_INF16 in both halves"]
    # unsigned offsets: a signed index costs a negative-index wraparound (setp + selp +
    # 64-bit adds) per access in numba; uint64 base + uint64 constant costs none
    head += [f"U{w} = np.uint64({w})\nW{w} = np.uint64({w * WARP})" for w in range(SW + 1)]
    if tb:
        head += render_tb.constants(G, K, sim)
    return "\n".join(head) + "\n" + render(G, K, int(mode), bool(sim), bool(prmt_sub),
                                           bool(pair), int(pipe), bool(win), bool(tb))
