"""Long windows on the GPU: rows split into strips, a block per round of strips (issue 15).

:mod:`s2g.trace.gpu_kernel` runs one thread per window: right for the millions of small
windows of short reads, hopeless for a 10 kbp read's window of ~10^8 cells (one thread
at a few MCUPS). This kernel keeps that kernel's column program, cell, tie order,
direction codes, merge choices and walk (:func:`s2g.trace.gpu_walk.walk`), and splits
the window's rows ``0..R`` into *strips* of :data:`~s2g.trace.long.plan.S` rows:

* a *round* is ``T`` strips, ``g*T .. g*T + T - 1`` for round ``g``, and a *job* (one
  window's round) is one block of ``T`` threads: thread ``t`` computes column
  ``w = step - t`` of its strip at each step (a wavefront), then the block meets at one
  barrier. Strip ``k``'s top row needs the row above at column ``w`` and at ``w``'s
  predecessors: strip ``k - 1`` passes, per window column, its bottom row's H, F and the
  diagonal (the best predecessor H, as the one-thread kernel's ``diag``) down. Inside a
  block through a ring of two steps (``[step % 2][thread]``, coalesced) read one step
  later; from a round's last strip to the next round's first through a *hand-off* (three
  words per window column), which that round's block reads line by line (32 columns)
  once the block before it has said, with an atomic maximum behind a fence, that the
  line is written: no line is read before it is whole, so no cache holds it stale. A
  window's rounds run at once, each a step behind the one above: every strip of a window
  is in flight (a 50 kbp window's 7 rounds of 224 strips on 7 SMs, not one after the
  other on one). Blocks take their jobs from an atomic counter, rounds first, so a block
  waits only on a job taken before its own, by a block already running or done (no
  deadlock, whatever order the GPU starts blocks in). Each job keeps the best cell of
  its rows; a second kernel, one thread a window, takes the best of its rounds (V0's
  rule) and walks back (its own launch: every round's codes, written on other SMs, are
  then visible to it);
* the strip's own rows of the current column (H and E) and its read's substitution
  tables are registers: the kernel is Python source generated per strip height
  (:func:`_render`; ``S`` scalars each, the cell written out ``S`` times, as the ``fast``
  kernels do), cached as a module file under :func:`s2g.variants.codegen._cache_dir` for
  Numba's disk cache. The substitution score is one PRMT from the row's 4-byte table (a
  at the read base's byte, -b elsewhere; compare + select where the scores do not fit
  signed bytes). The window slots (the liveness slots of
  :func:`s2g.trace.gpu_program._program`) hold the strip's rows, ``[thread][row]`` with an
  odd stride ``S + 1`` in shared memory (no bank conflicts whether 32 threads read one
  row each or one thread's 32 rows are read by 32 lanes) up to
  :func:`~s2g.trace.long.plan.shared_block` bytes per block, further slots in global
  memory (``[slot][thread][row]``); a shared *column* of the same layout is where
  registers meet the warp's merges and stores;
* a warp's 32 lanes sit on 32 consecutive columns, so a merge column (a bubble's first
  or closing column) would make the whole warp wait while one lane folds 32 rows. The
  warp does it together instead: a vote finds the lanes on merge columns (each has
  already read its first two predecessors' slot numbers), then for each of them lane
  ``v`` folds row ``v`` of that lane's strip (two predecessors at a time, their loads in
  flight together; the tie order of the one-thread kernel, merge choices written
  coalesced) into the shared column, and the merging lane loads it into its registers
  (E as E + e, so that the cell's ``max(H - o - e, E - e)`` is the merged E, and "E
  extended" is that comparison or the merge's bit: equal where the merged E exceeds
  H - o - e, since then it came from an extension). After the cell loop the lanes whose
  column is kept in a slot leave their registers in the shared column and the warp
  stores them. The cell loop is then the same for every lane;
* direction codes (4 bits per cell) and merge choices go to the same layout as the
  one-thread kernel's, a column's codes padded to whole 32-bit words so each thread
  stores 8 rows' codes at once (a strip starts at a multiple of 8 rows); with ``find``
  every thread keeps its best cell (V0's rule: the highest score, then the lowest
  column, then the lowest row; local mode: the column maximum first, the rows only when
  it improves) and thread 0 reduces them into the job's; the walk kernel takes the best
  of the window's jobs. A merge column's rows past the window's last row (in the last
  strip) are set unreachable in the shared column: a block finds shared memory as the
  SM's previous block left it, and those rows count in the column maximum (session 20:
  giant scores in 20-45% of seeded 10 kbp windows on the H100 until then; the simulator
  checks now poison shared memory before every block).

Scores only (seeded windows with ``long_score_first``, :func:`s2g.trace.gpu.run_windows`):
the launch sets bit 16 of ``dbg`` and no code words or merge choices are stored (the cells
still compute them: one kernel for both), the walk kernel only takes each window's best
cell, and the device holds no codes (1,000 x 10 kbp seeded windows on MHC, H200: 263
GCUPS against 128 with codes, 15 GB against 56 GB, session 30).

Pruned (seeded windows scored first, local mode; :mod:`s2g.trace.long.prune`): the kernel's
``prune=True`` form takes each strip's threshold (``pth``), computes no direction codes,
sets a cell below the threshold unreachable (H, E and F) and skips the cells of a lane
whose registers and inputs are all unreachable where its strip keeps no fresh start (a
merging lane learns from a vote in the warp's fold whether any merged row is reachable).

Bands (traceback windows, not seeded ones): every cell of an optimal alignment ending at
the window's end cell lies in rows ``blo[w]..bhi[w]`` of its column
(:func:`s2g.trace.gpu_program.band_rows`), so each round of strips first finds, with the
block, the columns whose band meets its rows (a contiguous range ``clo..chi``) and steps
over those only; the cells it skips are unreachable to the rest: the first strip of a
round takes the hand-off as unreachable outside the previous round's range (which its
block finds the same way: the hand-off holds those columns only), a merge skips
predecessors before ``clo``, and the registers start unreachable each round. Every value
the walk compares (and so every choice) is that of the whole window, as the window's own
bound makes it so for the graph. 1,000 x 10 kbp windows (SNP 100 kbp graph, H100,
2026-11-26): 0.528 -> 0.327 s, identical tracebacks.

Every hot index is unsigned and every row counter int32: Numba gives a signed index
its negative-index wraparound (~6 instructions an access) and counts ``range()`` in
int64 (64-bit compares per cell), both seen in this kernel's SASS. The simulator has
no warp votes: there a vote is an atomic OR into a shared word between block barriers,
and a block is one warp of 1-2 threads (tests: several rounds on tiny windows); it runs
a launch's blocks one after another, so a round never waits there.

Measured (``python3 -m bench.long_kernel --reads 300``, 10 kbp reads, 5% substitutions,
100 kbp SNP graph, 50 bp nodes; logs in bench/results/nvidia-h100/long/ and
bench/results/nvidia-h200/long/): the first version (H100, 2026-11-23, a lane folding
its own merges, the strip in shared memory) 19.5 GCUPS; the warp's merges (2026-11-24)
91.7 GCUPS, ~100 instructions a cell, 1.4 warps per scheduler. Registers (2026-11-26,
H200, same commands; the shared-memory kernel 137.7 GCUPS with 300 reads, 163.5 with
1,000): the cell is ~22 SASS instructions a row (20.5 without spills), but ptxas took
241 registers (one block of 160 threads an SM): 117.5; capped at 168: 158.0 (1,000
reads 223.4), at 128 (a few spills, three blocks an SM): 178.8; then the ring's word
modulo hoisted out of the step (it was a 64-bit division call per step) and the merge's
two predecessors loaded together: **204.6 GCUPS (300 reads), 238.4 (1,000)**, 1.49x and
1.46x the shared-memory kernel; at 96 registers (spills in the cells) 151.7 / 147.0.
ncu of the 241-register build (132 windows): 56 warp instructions a cell in all (the
cells ~21: merges, slot stores, the step's loads and votes are the rest), 25% issue
slots busy, stalls on the barrier (28%) and fixed-latency dependencies (29%). The
ceiling is far: ~2 warp instructions a cell would allow ~500 GCUPS at full issue.
(SASS counts from ptxas 13.0 on the development VM, ``-maxrregcount 128``.) 50 kbp
windows (3 x 10^9 cells, 1.6 GB of codes each) fit ~8 to a launch on an H100 and ~33 on
an H200 (shared-memory kernel: 6.1 / 24 GCUPS, 2026-11-26): the GPU mostly idle, which
rounds as jobs (below) answer in part: ~17 windows of 7 rounds now fill 119 blocks, still
about one an SM; codes for the band's rows only, or checkpoints instead of stored codes,
would let more windows into a launch (the band's codes do now, below).

Rounds as jobs (session 20, H100, ``python3 -m bench.long_kernel --reads R --len L
--configs 32``, same machine, tracebacks identical): 1,000 x 10 kbp 357.2 -> 386.4 GCUPS
(3 -> 2 launches: the ring by diagonal took 37 MB a window), 100 x 50 kbp 64.4 -> 125.9.
End to end 100 x 50 kbp seeded (``bench.long_reads``): 14.57 -> 4.23 s.

The plan of a launch (strips, rounds, threads, shared memory, band-only layout, device
bytes) is :mod:`s2g.trace.long.plan`; the launch, :mod:`s2g.trace.long.launch`.
"""
from __future__ import annotations

import inspect

from numba import int64, types, uint32

from ...dp import E_EXT, F_EXT, GLOBAL, H_DEL, H_DIAG, H_INS, H_START, LOCAL
from ...scoring import NEG_INF
from ..common import ST_MISMATCH, ST_OK
from ...variants.codegen import emit_rows
from ..gpu_walk import K_CONT, K_VIRT
from . import plan
from .plan import SHARED_T, SHARED_WARPS
from .plan import SIM as _SIM

cuda = None


def _cuda():
    global cuda
    if cuda is None:
        from numba import cuda as _c
        cuda = _c
    return cuda


def _vote(bits, wm, wid, lane):
    """OR of the warp's lanes' ``bits``, where lane ``v`` sets at most bit ``v`` on a GPU (a
    vote). The simulator has no warp votes, and its blocks are one warp of fewer lanes
    than rows (:func:`launch`): there a lane sets bits ``v``, ``v + lanes``, ..., ORed into a
    shared word between block barriers."""
    if _SIM:
        if lane == 0:
            wm[wid] = 0
        cuda.syncthreads()
        if bits != 0:
            cuda.atomic.or_(wm, wid, bits)
        cuda.syncthreads()
        m = int64(wm[wid])
        cuda.syncthreads()
        return m
    return int64(cuda.ballot_sync(0xFFFFFFFF, bits != 0)) & 0xFFFFFFFF


def _wsync():
    """Orders a warp's shared-memory writes before its lanes read them."""
    if _SIM:
        cuda.syncthreads()
    else:
        cuda.syncwarp()


def _spread(x):
    """Bits 0-7 of ``x`` (a merge's "E extended" bits of 8 rows) at bit 2 of nibbles 0-7
    (E_EXT in each row's 4-bit direction code)."""
    x = uint32((x | (x << uint32(12))) & uint32(0x000F000F))
    x = uint32((x | (x << uint32(6))) & uint32(0x03030303))
    x = uint32((x | (x << uint32(3))) & uint32(0x11111111))
    return uint32(x << uint32(2))


def _ptx_version():
    from ...variants import _ptx
    return _ptx.VERSION


def _render(S: int, local: bool, prmt_sub: bool, sim: bool, prune: bool = False) -> str:
    """Source of the kernel for strips of ``S`` rows (module doc): the strip's H, E and read
    codes are ``S`` scalars each (registers), the cell loop written out ``S`` times.
    ``local``: local mode (the H_START clamp and the column maximum); otherwise global or
    semiglobal (the mode is an argument). ``prmt_sub``: the substitution score is one PRMT
    from a 4-byte table per row (scores that fit signed bytes), else compare + select.
    ``prune`` (local mode, scores only): cells below their strip's threshold are dropped
    and a lane whose strip and inputs are all dropped skips its cells (module doc)."""
    assert local or not prune, "pruning: local mode only"
    R_ = lambda text, ind, **kw: emit_rows(S, text, ind, **kw)  # noqa: E731
    NW = S // 8
    # the read tables, the best-cell search and the end check have no Python branch per
    # row (Numba's liveness analysis is quadratic in basic blocks: with them S = 32 took
    # ~60 s to compile, ~35 s without): flags as int32(bool), selects as arithmetic
    qtab = ("tq = int32(r0 + {r})\n"
            "okq = int32((tq >= 1) & (tq <= R))\n"
            "c = int32(codes[uint64(q0 + max(min(tq - 1, R - 1), 0))])\n"
            "c = int32(c * okq + 7 * (1 - okq))            # rows off the read: code 7\n")
    if prmt_sub:
        qtab += "Q{r} = int32(MISW ^ ((DIFF * int32(c < 4)) << uint32((c & 3) * 8)))"
        sub = "prmt(Q{r}, MISW, gsel)"
        colsel = ("gg = min(gb, int32(4))\n"
                  "gsel = int32(gg | ((gg | 8) * 0x1110))")
    else:
        qtab += "Q{r} = c"
        sub = "(a32 if Q{r} == gm else nb)"
        colsel = "gm = gb if gb < 4 else int32(-1)    # a graph N matches nothing"
    # tb_cell in int32: H from the diagonal, then E (ties: diagonal), then F (ties: E); its
    # three branches per row become selects in ptxas (20.5 SASS instructions a row at S = 32,
    # against 26.7 for a form with flags as int32(bool) and max)
    cell = ("ho = int32(H{r} - oe)\n"
            "ex = int32(E{r} - e32)\n"
            "ev = max(ho, ex)\n"
            "fo = int32(hup - oe)\n"
            "fx = int32(f - e32)\n"
            "f = max(fo, fx)\n"
            f"h = int32(diag + {sub})\n"
            "d = int32(int32(E_EXT if ex > ho else 0) | int32(F_EXT if fx > fo else 0))\n"
            "if ev > h:\n"
            "    h = ev\n"
            "    d = int32(d | H_DEL)\n"
            "if f > h:\n"
            "    h = f\n"
            "    d = int32((d & 12) | H_INS)\n")
    if local:
        cell += ("if h <= zero:\n"
                 "    h = zero\n"
                 "    d = int32(d | H_START)\n")
    top = ("if top:\n"
           "    if glob:\n"
           "        h = ev\n"
           "        d = int32((d & E_EXT) | H_DEL)\n"
           "    else:\n"
           "        h = zero\n"
           "        ev = neg\n"
           "        d = int32(H_START)\n"
           "    f = neg\n")
    # pruned (module doc): a cell below the strip's threshold is dropped, H, E and F alike;
    # scores only, so no direction codes (the cell as maxima, local mode)
    kill = ("if h < th:\n"
            "    h = neg\n"
            "    ev = neg\n"
            "    f = neg\n") if prune else ""
    if prune:
        cell = ("ev = max(int32(H{r} - oe), int32(E{r} - e32))\n"
                "f = max(int32(hup - oe), int32(f - e32))\n"
                f"h = max(max(int32(diag + {sub}), ev), max(f, zero))\n")
        top = ("if top:\n"
               "    h = zero\n"
               "    ev = neg\n"
               "    f = neg\n")
    tail = ("diag = H{r}\n"
            "H{r} = h\n"
            "hup = h\n"
            "E{r} = ev\n"
            + ("cm = max(cm, h)\n" if local else "")
            + ("" if prune else "wd{k} = uint32(wd{k} | (uint32(d) << uint32({sh})))\n"))
    cells = "\n".join(" " * (20 if prune else 16) + ln.format(r=r, k=r // 8, sh=4 * (r % 8))
                      for r in range(S)
                      for ln in (cell + (top if r == 0 else "") + kill + tail
                                 ).strip("\n").splitlines())
    if prune:       # a lane whose registers and inputs are all dropped computes nothing
        cells = ("                regs_dead = (not mlv) if mc else (dead != 0)\n"
                 "                if not (regs_dead and th > 0 and max(diag, max(hup, f)) <= neg):\n"
                 + cells + "\n"
                 "                    dead = int32(cm <= neg)\n"
                 # the strip's first and last column with a kept cell (plive, its rows'
                 # band for the traceback: s2g.trace.long.prune)
                 "                    if dead == 0:\n"
                 "                        if llo < 0:\n"
                 "                            llo = w\n"
                 "                        lhi = w")
    if local:
        find = ("if find and cm > best:\n"
                "    cmv = neg\n"
                + R_("cmv = max(cmv, int32(H{r} + int32({r} >= nr) * neg))", 4) + "\n"
                "    if cmv > best:\n"
                "        best = cmv\n"
                "        bw = w\n"
                + R_("mq = int32((H{r} == cmv) & ({r} < nr))\n"
                     "bi = int32(bi + mq * (r0 + {r} - bi))", 8, reverse=True))
        cm_init = "cm = neg"
    else:
        find = ("if find and own:\n"
                "    vm = neg\n"
                + R_("vm = int32(vm + int32(rm == {r}) * (H{r} - vm))", 4) + "\n"
                "    if vm > best:\n"
                "        best = vm\n"
                "        bw = w\n"
                "        bi = R")
        cm_init = ""
    find = "\n".join(" " * 16 + ln for ln in find.splitlines())
    # the last strip's last column: H at row R for the host's score check
    hend = ("hv = hup\nif own and w == W - 1:\n"
            + R_("hv = int32(hv + int32(rm == {r}) * (H{r} - hv))", 4))
    hend = "\n".join(" " * 16 + ln for ln in hend.splitlines())
    words = "\n".join(
        " " * 20 + ln for kk in range(NW) for ln in (
            f"if {kk} < nw and {kk} >= wlo and {kk} < whi:\n"
            f"    if pxw != 0:\n"
            f"        wd{kk} = uint32(wd{kk} | _spread((pxw >> uint32({8 * kk})) & uint32(255)))\n"
            f"    dirs32[uint64(dab + {kk})] = wd{kk}").splitlines())
    text = _KERNEL_TEXT
    from .prune import KERNEL_LINES
    for key, val in KERNEL_LINES.items():     # lines of the pruned kernel only
        text = text.replace(key + ("" if key == "@PRUNEARGS@" else "\n"), val if prune else "")
    qinit = R_("Q{r} = MISW" if prmt_sub else "Q{r} = int32(7)", 8)
    for key, val in (("@QTAB@", qinit + "\n        if R >= 1:\n" + R_(qtab, 12)),
                     ("@COLSEL@", "\n".join(" " * 16 + ln for ln in colsel.splitlines())),
                     ("@CMINIT@", " " * 16 + cm_init if cm_init else ""),
                     ("@WDINIT@", "" if prune else
                      "\n".join(" " * 16 + f"wd{kk} = uint32(0)" for kk in range(NW))),
                     ("@CELLS@", cells), ("@WORDS@", "                    pass" if prune else words),
                     ("@FIND@", find), ("@HEND@", hend),
                     ("@LOADREGS@", R_("H{r} = col[uint64(myc + {r})]\n"
                                       "E{r} = col[uint64(myc + TSP + {r})]", 16)),
                     ("@DUMPREGS@", R_("col[uint64(myc + {r})] = H{r}\n"
                                       "col[uint64(myc + TSP + {r})] = E{r}", 16)),
                     ("@REGINIT@", R_("H{r} = neg\nE{r} = neg", 8)),
                     ("@PREDLOAD@", _ind(_PRED_LOAD.format(s=""), 28)),
                     ("@PREDLOAD2@", _ind(_PRED_LOAD.format(s="2"), 28)),
                     ("@PREDFOLD@", _ind(_PRED_FOLD.format(s="", p=""), 28)),
                     ("@PREDFOLD2@", _ind(_PRED_FOLD.format(s="2", p=" + 1"), 32))):
        text = text.replace(key, val)
    head = [f"# generated by s2g.trace.long.source (S={S}, local={local}, prmt={prmt_sub}, "
            f"sim={sim}, _ptx v{_ptx_version()}); do not edit"
            + (" (pruned)" if prune else ""),
            "from numba import cuda, int32, int64, uint32, uint64",
            "from s2g.trace.gpu_walk import walk_dev",
            ("from s2g.variants._ptx import prmt_py as prmt" if sim else
             "from s2g.variants._ptx import prmt"), ""]
    # the helpers in this module: the simulator swaps ``cuda`` in the kernel's module only
    dec = "" if sim else "@cuda.jit(device=True)\n"
    for fn in (_vote, _wsync, _spread):
        head.append(dec + inspect.getsource(fn).replace("_SIM", str(bool(sim))))
    head.append("_vote_dev, _wsync_dev = _vote, _wsync\n")
    consts = {"S": S, "SP": S + 1, "SHARED_T": SHARED_T, "SHARED_WARPS": SHARED_WARPS,
              "K_CONT": K_CONT, "K_VIRT": K_VIRT, "GLOBAL": int(GLOBAL), "LOCAL": int(LOCAL),
              "H_DIAG": H_DIAG, "H_DEL": H_DEL, "H_INS": H_INS, "H_START": H_START,
              "E_EXT": E_EXT, "F_EXT": F_EXT, "NEG": int(NEG_INF), "ST_OK": ST_OK,
              "ST_MISMATCH": ST_MISMATCH, "IS_LOCAL": int(local)}
    head += [f"{k} = {v}" for k, v in consts.items()]
    return "\n".join(head) + "\n" + text


# a merge's predecessors, two at a time (suffix "" and "2"): a slot's H and E from shared
# or global memory, then the fold into the merged H and E with the tie rules (diagonal
# first, then the first predecessor in list order)
_PRED_LOAD = """\
if sl{s} < 0:                   # a predecessor the round skipped (band)
    hp{s} = neg
    ep{s} = neg
elif sl{s} < n_sh:
    sa = uint64((2 + 2 * sl{s}) * TSP + tl * SP + v)
    hp{s} = col[sa]
    ep{s} = col[sa + uint64(TSP)]
else:
    ga = uint64(s0 + ((sl{s} - n_sh) * T + tl) * S + v)
    hp{s} = SH[ga]
    ep{s} = SE[ga]"""
_PRED_FOLD = """\
ho = int32(hp{s} - oe)
ex = int32(ep{s} - e32)
ce = max(ho, ex)
if hp{s} > ph or (hp{s} == ph and not dch):
    ph = hp{s}
    dch = True
    dsel = int32(x{p})
if ce > pe or (ce == pe and not ech and ce > neg):
    pe = ce
    ech = True
    ex_win = ex > ho
    esel = int32(x{p})"""


def _ind(text, n):
    return "\n".join(" " * n + ln for ln in text.splitlines())


_KERNEL_TEXT = '''

def long_kernel(n, mode, a, b, o, e, n_sh, dbg, codes, qoff, rows_a, coff, poff, doff, xoff,
                p_base, p_col, p_kind, p_store, p_mrank, p_mpa, p_mpn, mp_slot, mp_wcol, SH, SE,
                BH, BF, BD, HH, HF, HD, dirs32, dpred, epred, find, out_best, band, blo, bhi,
                bcw, bxc, jobs, jsoff, jhoff, jctr, jdone, rbest@PRUNEARGS@):
    tid = cuda.threadIdx.x
    T = cuda.blockDim.x
    lane = tid & 31
    wb = tid - lane
    wid = tid >> 5
    i_a = cuda.shared.array(SHARED_T, int32)     # merge: list start; slots: slot
    i_n = cuda.shared.array(SHARED_T, int32)     # merge: list length | kind << 24
    i_r = cuda.shared.array(SHARED_T, int32)     # merge: merge rank
    i_s0 = cuda.shared.array(SHARED_T, int32)    # merge: first predecessor's slot
    i_s1 = cuda.shared.array(SHARED_T, int32)    # merge: second predecessor's slot
    wm = cuda.shared.array(SHARED_WARPS, int64)
    bnd = cuda.shared.array(5, int32)            # the round's and the previous round's
    col = cuda.shared.array(0, int32)            # column ranges (band), the job
    neg = int32(NEG)
    zero = int32(0)
    # the job, in the order blocks start (a block waits only on jobs taken before its own:
    # no deadlock whatever the order the GPU starts blocks in): window r, round g
    if tid == 0:
        bnd[4] = cuda.atomic.add(jctr, 0, 1)
    cuda.syncthreads()
    job = int32(bnd[4])
    r = int32(jobs[3 * job])
    g = int32(jobs[3 * job + 1])
    jp = int32(jobs[3 * job + 2])               # the window's previous round (-1: none)
    hout = jhoff[job]                           # this round's hand-off to the next (-1: none)
    hin = jhoff[jp] if jp >= 0 else int64(-1)   # the previous round's hand-off
    jr = uint64(job) * uint64(2 * T)            # this block's ring: two steps of T words
    seen = int32(0)                             # the previous round's columns seen done
    R = int32(rows_a[r])
    R1 = int32(R + 1)
    stride = ((R + 2) // 2 + 3) // 4 * 4
    c0 = coff[r]
    W = int32(coff[r + 1] - c0)
    p0 = poff[r]
    s0 = jsoff[job]
    d0 = doff[r]
    x0 = xoff[r]
    q0 = qoff[r]
    dw0 = d0 >> 2
    sw = stride >> 2
    oe = int32(o + e)
    e32 = int32(e)
    a32 = int32(a)
    nb = int32(-b)
    mw = int64(nb & 255) * int64(0x01010101)
    MISW = int32(mw - 4294967296 if mw >= 2147483648 else mw)   # the substitution table:
    DIFF = int32((a32 ^ nb) & 255)              # -b in every byte, a at the read base's
    glob = mode == GLOBAL
    TSP = T * SP
    best = zero if IS_LOCAL else neg
    bw = int32(-1)
    bi = int32(-1)
    NS = (R1 + S - 1) // S
    pxm = int64(0)
    one = int64(1)
    zero64 = int64(0)
    nl = min(32, T)                             # lanes of a warp (fewer in the simulator)
    g0 = int32(g * T)
    # the round's columns: those whose band (rows a cell of an optimal path may take there,
    # :func:`s2g.trace.gpu_program.band_rows`) meets the round's rows; the rest of the window
    # is skipped (its cells hold no optimal path). The previous round's the same way: its
    # hand-off holds those columns only
    clo = int32(0)
    chi = int32(W - 1)
    plo = int32(0)
    phi = int32(W - 1)
    if band != 0:
        if tid == 0:
            bnd[0] = W
            bnd[1] = -1
            bnd[2] = W
            bnd[3] = -1
        cuda.syncthreads()
        ylo = int32(g0 * S)
        yhi = int32(min(R, (g0 + T) * S - 1))
        plo_ = int32(ylo - T * S)
        lo_ = W
        hi_ = int32(-1)
        lo2 = W
        hi2 = int32(-1)
        x = int32(tid)
        while x < W:
            bl = blo[uint64(c0 + x)]
            bh = bhi[uint64(c0 + x)]
            if bl <= yhi and bh >= ylo:
                lo_ = min(lo_, x)
                hi_ = max(hi_, x)
            if g0 > 0 and bl <= ylo - 1 and bh >= plo_:
                lo2 = min(lo2, x)
                hi2 = max(hi2, x)
            x += T
        if hi_ >= 0:
            cuda.atomic.min(bnd, 0, lo_)
            cuda.atomic.max(bnd, 1, hi_)
        if hi2 >= 0:
            cuda.atomic.min(bnd, 2, lo2)
            cuda.atomic.max(bnd, 3, hi2)
        cuda.syncthreads()
        clo = int32(bnd[0])
        chi = int32(bnd[1])
        plo = int32(bnd[2])
        phi = int32(bnd[3])
@PRUNEBAND@
    if g0 < NS:                                 # one round: this job's
@REGINIT@
        k = g0 + tid
        active = k < NS
        r0 = int32(k * S)
        nr = int32(min(S, R1 - r0))             # rows of the strip in the window
        nw = (nr + 7) >> 3                      # words of direction codes a column
        myc = tid * SP                          # this thread's rows of a shared column
        top = r0 == 0
        rm = int32(R - r0)                      # row R in the strip (own: it is there)
        own = rm >= 0 and rm < S
@PRUNEINIT@
@QTAB@
        for stp in range(chi - clo + min(T, NS - g0)):
            w = int32(clo + stp - tid)
            act = active and w >= clo and w <= chi
            kind = int32(K_CONT)
            st = int32(-1)
            gb = int32(0)
            diag = neg
            hup = neg
            f = neg
            if act:
                gw = uint64(c0 + w)
                kind = int32(p_kind[gw])
                gb = int32(p_base[gw])
                st = int32(p_store[gw])
                if tid > 0:                     # the strip above, a step ago
                    ra = uint64(jr + uint64(((stp - 1) & 1) * T + tid - 1))
                    diag = BD[ra]
                    hup = BH[ra]
                    f = BF[ra]
                elif r0 > 0 and w >= plo and w <= phi:
                    # the previous round's last strip, through its hand-off: once the
                    # block running it has said the 32 columns of w's word line are done
                    # (none of this line was read before, so no cache holds it stale)
                    need = min(((w >> 5) + 1) << 5, phi + 1)
                    if seen < need:
                        while seen < need:
                            seen = cuda.atomic.add(jdone, jp, 0)
                        cuda.threadfence()
                    ha = uint64(hin + (w - plo))   # from the producer's first column
                    diag = HD[ha]
                    hup = HH[ha]
                    f = HF[ha]
            # merge columns, by the warp: lane v folds row v of each merging lane's strip
            # into that lane's shared column, which then loads it into its registers
            mc = act and kind != K_CONT
@MLV0@
            mm = _vote_dev(one << lane if mc else zero64, wm, wid, lane)
            if mm != 0:
                if mc:
                    ma = int32(p0 + p_mpa[gw])
                    mn = int32(p_mpn[gw])
                    i_a[tid] = ma
                    i_n[tid] = mn | (kind << 24)
                    i_r[tid] = int32(p_mrank[gw])
                    s_0 = mp_slot[uint64(ma)] if mn > 0 else int32(0)
                    if clo > 0 and mn > 0 and mp_wcol[uint64(ma)] < clo:
                        s_0 = int32(-1)             # before the round's columns: none
                    i_s0[tid] = s_0
                    s_1 = mp_slot[uint64(ma + 1)] if mn > 1 else s_0
                    if clo > 0 and mn > 1 and mp_wcol[uint64(ma + 1)] < clo:
                        s_1 = int32(-1)
                    i_s1[tid] = s_1
                _wsync_dev()
                while mm != 0:
                    L = int32(cuda.popc((mm & -mm) - 1))
                    mm &= mm - 1
                    tl = wb + L
                    kl = i_n[tl]
                    mn = kl & 0xFFFFFF
                    ma = i_a[tl]
                    mr = i_r[tl]
                    rl = int32((g0 + tl) * S)
                    nrl = min(S, R1 - rl)
                    pxb = zero64
                    # where the merge's choices go: every row (mr * R1 + row), or with a
                    # band only rows xlo..xhi - 1 of the column (band_layout)
                    xcl = int64(mr) * R1
                    xlo = int32(0)
                    xhi = R1
                    if band != 0 and mr >= 0:
                        gwl = uint64(c0 + clo + stp - tl)
                        xcl = int64(bxc[gwl])
                        cbl = blo[gwl]
                        cbh = bhi[gwl]
                        xlo = int32(max(0, 8 * (cbl >> 3) - 8))
                        xhi = int32(min(R1, 8 * ((cbh >> 3) + 1)) if cbh >= cbl else 0)
                    v = int32(lane)
@MLV1@
                    while v < nrl:
                        t = rl + v
                        if (kl >> 24) & K_VIRT:
                            ph = zero if (mode == LOCAL or t == 0) else int32(-(o + e * t))
                            pe = int32(ph - oe)
                        else:
                            ph = neg
                            pe = neg
                        dch = False
                        ech = False
                        dsel = int32(-1)
                        esel = int32(-1)
                        ex_win = False
                        # predecessors two at a time: both pairs of loads in flight together (the
                        # first two slots were read by the merging lane before the vote)
                        x = int32(0)
                        while x < mn:
                            if x == 0:
                                sl = i_s0[tl]
                                sl2 = i_s1[tl]
                            else:
                                sl = mp_slot[uint64(ma + x)]
                                if clo > 0 and mp_wcol[uint64(ma + x)] < clo:
                                    sl = int32(-1)
                                sl2 = mp_slot[uint64(ma + x + 1)] if x + 1 < mn else sl
                                if clo > 0 and x + 1 < mn and mp_wcol[uint64(ma + x + 1)] < clo:
                                    sl2 = int32(-1)
@PREDLOAD@
@PREDLOAD2@
@PREDFOLD@
                            if x + 1 < mn:
@PREDFOLD2@
                            x += 2
                        ca = uint64(tl * SP + v)
                        col[ca] = ph
                        col[ca + uint64(TSP)] = int32(pe + e32)     # the lane's E register
@MLV2@
                        if mr >= 0 and t >= xlo and t < xhi and dbg & 16 == 0:
                            xa = uint64(x0 + xcl + t)
                            dpred[xa] = dsel
                            epred[xa] = esel
                        if ex_win:
                            pxb |= one << v
                        v += nl
                    # rows past the window's last (the last strip): unreachable, not what the
                    # shared column held before (another block's data: their H would count
                    # in the column maximum that local mode's best cell starts from)
                    while v < S:
                        ca = uint64(tl * SP + v)
                        col[ca] = neg
                        col[ca + uint64(TSP)] = neg
                        v += nl
                    got = _vote_dev(pxb, wm, wid, lane)
                    if lane == L:
                        pxm = got
@MLV3@
                _wsync_dev()
            pxw = uint32(0)
            if mc:
                # the merged column: H, and E + e (so the cell's max(H - o - e, E - e) is the
                # merged E; its "E extended" bit is (E - e > H - o - e) or the merge's bit)
                pxw = uint32(pxm)
@LOADREGS@
            if act:
@COLSEL@
@CMINIT@
@WDINIT@
@CELLS@
                if dbg & 17 == 0:
                    # the strip's code words: every one (at column w's stride), or with a
                    # band only the words its rows blo..bhi meet (band_layout)
                    wlo = int32(0)
                    whi = int32(64)
                    if band != 0:
                        qr = int32(r0 >> 3)
                        cbl = blo[gw]
                        cbh = bhi[gw]
                        wlo = int32((cbl >> 3) - qr)
                        whi = int32((cbh >> 3) + 1 - qr if cbh >= cbl else wlo)
                        dab = int64(dw0 + int64(bcw[gw]) + qr)
                    else:
                        dab = int64(dw0 + w * sw + (r0 >> 3))
@WORDS@
@FIND@
@HEND@
                wa = uint64(jr + uint64((stp & 1) * T + tid))
                BD[wa] = diag
                BH[wa] = hv
                BF[wa] = f
                if own and w == W - 1 and find == 0:
                    out_best[3 * r] = hv        # H at the end cell: the walk's score check
                if hout >= 0 and tid == T - 1:
                    ha = uint64(hout + (w - clo))  # from this round's first column
                    HD[ha] = diag
                    HH[ha] = hv
                    HF[ha] = f
                    if (w & 31) == 31 or w == chi:
                        cuda.threadfence()      # the line's values, then "done"
                        cuda.atomic.max(jdone, job, int32(w + 1))
            # slot stores, by the warp: the storing lane leaves its rows in its shared
            # column, lane v stores row v of each storing lane's strip
            sc = act and st >= 0
            if sc:
@DUMPREGS@
            mm = _vote_dev(one << lane if sc else zero64, wm, wid, lane)
            if mm != 0:
                if sc:
                    i_a[tid] = st
                _wsync_dev()
                while mm != 0:
                    L = int32(cuda.popc((mm & -mm) - 1))
                    mm &= mm - 1
                    tl = wb + L
                    sl = i_a[tl]
                    rl = int32((g0 + tl) * S)
                    nrl = min(S, R1 - rl)
                    v = int32(lane)
                    while v < nrl:
                        ca = uint64(tl * SP + v)
                        h = col[ca]
                        ev = col[ca + uint64(TSP)]
                        if sl < n_sh:
                            sa = uint64((2 + 2 * sl) * TSP + tl * SP + v)
                            col[sa] = h
                            col[sa + uint64(TSP)] = ev
                        else:
                            ga = uint64(s0 + ((sl - n_sh) * T + tl) * S + v)
                            SH[ga] = h
                            SE[ga] = ev
                        v += nl
            if dbg & 4 == 0:
                cuda.syncthreads()
@PRUNEEND@
    cuda.syncthreads()
    i_a[tid] = best
    i_n[tid] = bw
    i_r[tid] = bi
    cuda.syncthreads()
    if tid != 0 or not find:
        return
    for x in range(1, T):
        h = i_a[x]
        xw = i_n[x]
        if xw >= 0 and (h > best or (h == best and (
                bw < 0 or xw < bw or (xw == bw and i_r[x] < bi)))):
            best = h
            bw = xw
            bi = i_r[x]
    rbest[3 * job] = best
    rbest[3 * job + 1] = bw
    rbest[3 * job + 2] = bi
'''


def kernel_signature(prune: bool = False):
    """Argument types of the kernel (``cuda.compile_ptx``, eager compilation); ``prune``:
    the pruned kernel's eight more (:data:`s2g.trace.long.prune.KERNEL_LINES`)."""
    i32, i64 = types.int32, types.int64
    a = types.Array
    extra = ((a(i32, 1, "C"), a(i64, 1, "C")) + (a(i32, 1, "C"),) * 3
             + (a(i64, 1, "C"), a(i32, 1, "C"), a(i32, 1, "C"))) if prune else ()
    return ((i32,) * 8 + (a(types.uint8, 1, "C"), a(i64, 1, "C"), a(i32, 1, "C"))
            + (a(i64, 1, "C"),) * 4
            + (a(types.uint8, 1, "C"), a(i32, 1, "C"), a(types.int8, 1, "C"))
            + (a(i32, 1, "C"),) * 6
            + (a(i32, 1, "C"),) * 8
            + (a(types.uint32, 1, "C"), a(types.int16, 1, "C"), a(types.int16, 1, "C"),
               i32, a(i32, 1, "C"), i32, a(i32, 1, "C"), a(i32, 1, "C"))
            + (a(i32, 1, "C"),) * 2
            + (a(i32, 1, "C"), a(i64, 1, "C"), a(i64, 1, "C"), a(i32, 1, "C"),
               a(i32, 1, "C"), a(i32, 1, "C")) + extra)


def prmt_fits(a: int, b: int) -> bool:
    """Whether the substitution scores fit the kernel's PRMT byte tables (signed bytes)."""
    return -128 <= -b <= 127 and -128 <= a <= 127


def kernel_source(S: int, local: bool, prmt_sub: bool = True, sim: bool = None,
                  note: str = "", prune: bool = False):
    """The Python function of the kernel for strips of ``S`` rows (undecorated: tests
    ``compile_ptx`` it), from a module file named by its text's hash under
    :func:`s2g.variants.codegen._cache_dir` so that Numba's on-disk cache can key on it (as
    the ``fast`` kernels); executed in memory where no writable folder exists."""
    from ...variants.codegen import load_source
    _cuda()
    sim = _SIM if sim is None else sim
    assert 8 <= S <= 32 and S % 8 == 0, "strips of 8, 16, 24 or 32 rows"
    text = _render(int(S), bool(local), bool(prmt_sub), bool(sim), bool(prune))
    if note:          # compile options: part of the file's hash, so of the cache's key
        text = f"# {note}\n" + text
    return load_source(text, "s2g_long_", "long_kernel",
                       f"<s2g.trace.long kernel S={S} local={local}>")


def compile_ptx(cc=(9, 0), S: int = None, local: bool = True, prmt_sub: bool = True,
                prune: bool = False):
    """PTX of the kernel for compute capability ``cc`` (tests; no GPU needed)."""
    _cuda()
    S = plan.S if S is None else int(S)
    return cuda.compile_ptx(kernel_source(S, local, prmt_sub, sim=False, prune=prune),
                            kernel_signature(prune), cc=cc)[0]
