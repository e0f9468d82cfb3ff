"""Long windows on the GPU: rows split into strips, a block per round of strips (issue 15).

:mod:`s2g.gpu_traceback` runs one thread per window: right for the millions of small
windows of short reads, hopeless for a 10 kbp read's window of ~10^8 cells (one thread
at a few MCUPS). This kernel keeps that kernel's column program, cell, tie order,
direction codes, merge choices and walk (:func:`s2g.gpu_walk.walk`), and splits
the window's rows ``0..R`` into *strips* of :data:`S` rows:

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
  :func:`s2g.gpu_traceback._program`) hold the strip's rows, ``[thread][row]`` with an
  odd stride ``S + 1`` in shared memory (no bank conflicts whether 32 threads read one
  row each or one thread's 32 rows are read by 32 lanes) up to :data:`SHARED_BLOCK`
  bytes per block, further slots in global memory (``[slot][thread][row]``); a shared
  *column* of the same layout is where registers meet the warp's merges and stores;
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

Bands (traceback windows, not seeded ones): every cell of an optimal alignment ending at
the window's end cell lies in rows ``blo[w]..bhi[w]`` of its column
(:func:`s2g.gpu_traceback._band_rows`), so each round of strips first finds, with the
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

Device memory per window: ``W * stride`` bytes of codes (stride ``(R + 2) / 2`` rounded
up to 4: 58 MB for a 10 kbp read's 11,700-column window), 4 bytes x rows per merge
column; per round ``8 x S x T`` per global slot and the ring's ``24 x T``; between rounds
12 bytes a column of hand-off (banded windows: the round's own columns, :func:`round_columns`;
:func:`device_bytes`).
Windows are chunked to :data:`CHUNK_BYTES`; a window over it stays on the CPU (its
banded traceback keeps rows every ``Bh`` and needs no such memory).

Band-only codes (traceback windows, session 21). The walk reads codes and merge choices
only on the optimal alignment, which lies in the band, so a column keeps the code words
(8 rows each) its band's rows meet and a merge column its choices from one word above
them (:func:`band_layout`: per column a word offset and a choice offset; the kernel
derives the word range from the band rows it already reads, and stores only those
words; the walk reads at the column's offset). 10 kbp windows keep 15 MB of 77 on the
SNP graph (a fifth), about half on DRB1, so a launch holds 4-5 times as many windows,
and long traceback windows are bounded by their band's code bytes
(``--max-traceback-cells``), not the whole window's. H100, same machine, tracebacks
identical (``python3 -m bench.long_kernel``): 100 x 50 kbp 126.3 -> 547.7 GCUPS (6
launches -> 1), 1,000 x 10 kbp 387.8 -> 391.4 (2 -> 1); 10 x 100 kbp windows (1.1 x
10^10 cells, on the CPU until then) in one launch, 0.92 s. Seeded windows keep every
row (their end cell, and so their band, is what the kernel finds).

One-warp rounds (session 22, :data:`ROUND_T`). The widths above (as many strips a round
as 48 KB of shared memory allow: 160, rounds of 5,120 rows) date from before bands: a
round steps over every column its band meets, so tall rounds compute far outside it (a
10 kbp SNP window's two rounds computed 81% of its cells, its band is 19%). Rounds of 32
strips (1,024 rows) follow the band closely, a one-warp block meets its barrier at no
cost, and with every window slot in global memory (:data:`ROUND_SHARED`) 15 blocks share
an SM, the same warps as three blocks of 160; the many jobs stream through the launch, so
launches are cut by bytes alone. H100, same machine, tracebacks identical: 1,000 x 10 kbp
traceback windows 0.301 -> 0.145 s (388.8 -> 804.1 GCUPS on the windows' cells); without
bands (seeded windows) 0.563 -> 0.514 s.
"""
from __future__ import annotations

import inspect
import os
import threading
import warnings

import numba
import numpy as np
from numba import config as _nb_config
from numba import int32, int64, types, uint32, uint64

from ._numba import NJIT
from .dp import E_EXT, F_EXT, GLOBAL, H_DEL, H_DIAG, H_INS, H_START, LOCAL
from .gpu_walk import K_CONT, K_VIRT, cum, walk_dev
from .scoring import NEG_INF
from .tb_common import ST_MISMATCH, ST_OK
from .variants.codegen import emit_rows

#: rows per strip (one thread's rows of a column; a multiple of 8, so a strip owns whole
#: 32-bit words of direction codes; at most 32, a warp's lanes cover a strip's rows in the
#: warp's merges); a kernel argument, read at each launch
S = int(os.environ.get("S2G_LONG_STRIP", 32))
assert 8 <= S <= 32 and S % 8 == 0, "S2G_LONG_STRIP must be 8, 16, 24 or 32"
_SIM = bool(_nb_config.ENABLE_CUDASIM)
#: most threads per block (strips in flight per window; the shared arrays' size)
SHARED_T = 256
SHARED_WARPS = SHARED_T // 32
MAX_T = min(SHARED_T, int(os.environ.get("S2G_LONG_MAX_T", SHARED_T)))
#: shared memory a block may use without opting in: the column (8 x S x T bytes) and the
#: best-cell reduction (12 x SHARED_T)
SHARED_BYTES = 48 * 1024
#: static shared memory of the kernel: five words per thread (the warp's merge and slot
#: lists, then the best-cell reduction), a word per warp, the column ranges and the job
STATIC_SHARED = 20 * 256 + 8 * 8 + 20
#: shared memory per block (the column, then window slots; above 48 KB an opt-in): 48 KB
#: keeps the column alone there (slots in global memory, coalesced) and lets three blocks
#: share an SM instead of two: with half of free memory a launch 1,000 x 10 kbp seeded
#: windows ran at 154.5 GCUPS against 96.6 with 100 KB and a quarter (H100, 2026-11-24)
SHARED_BLOCK = int(os.environ.get("S2G_LONG_SHARED", 48 * 1024))
#: shared memory a block may use in a launch of fewer windows than SMs: a block then has
#: its SM to itself, so it takes as many strips in flight as MAX_T allows (the column's
#: 8 x (S + 1) bytes a thread; above 48 KB by opt-in): a 50 kbp window's 1,563 strips of
#: 32 rows in 7 rounds of 224 threads instead of 10 of 160
FEW_BLOCK = int(os.environ.get("S2G_LONG_FEW_SHARED", 96 * 1024))
#: threads per block of every launch (0: the widths above, sessions 16-21): one warp a
#: round, so a round is 32 strips (1,024 rows at S = 32). Banded windows: a round steps
#: over the columns its band meets (``clo..chi``), so the shorter the round the fewer
#: cells outside the band it computes (a 10 kbp SNP window: 2 rounds of 5,120 rows
#: computed 81% of the window, its band is 19%); a one-warp block meets its barrier at no
#: cost, and the rounds of many windows (jobs from the counter) keep the SMs full.
#: H100, 1,000 x 10 kbp traceback windows (``bench.long_kernel``, tracebacks identical):
#: 160 threads 0.301 s, 128 0.246, 64 0.233, 64 with 24 KB 0.181, **32 with 12 KB 0.145**
#: (2026-11-27); without bands 0.563 -> 0.514 s. Seeded windows (no band) end to end,
#: long kernel seconds 160 -> 32: DRB1 4.80 -> 4.07, SNP 0.60 -> 0.61, C4 2.41 -> 2.49,
#: 50 kbp reads 2.47 -> 2.71 (5 -> 6 launches: every column handed on, 49 rounds a window)
ROUND_T = int(os.environ.get("S2G_LONG_ROUND_T", 32))
#: shared memory per block with ROUND_T: 12 KB holds the column alone (every window slot
#: in global memory), so 15 one-warp blocks share an SM (16 by registers); a slot in
#: shared memory (24 KB) leaves 10
ROUND_SHARED = int(os.environ.get("S2G_LONG_ROUND_SHARED", 12 * 1024))
#: timing experiments only (bench/long_kernel.py), results wrong: 1 no direction stores,
#: 4 no barrier, 8 no walk
DEBUG = int(os.environ.get("S2G_LONG_DEBUG", 0))
#: register cap per thread for ptxas (0: its choice, 241 at S = 32: one block of 160
#: threads an SM, 117.5 GCUPS; 168 spills nothing, two blocks: 158.0; 128 spills a little,
#: three blocks: 178.8; 96 spills in the cells: 151.7 (H200, 300 x 10 kbp, 2026-11-26))
MAXREG = int(os.environ.get("S2G_LONG_MAXREG", 128))
#: device bytes for one launch of long windows (default: half of free memory)
CHUNK_BYTES = int(os.environ.get("S2G_LONG_CHUNK_BYTES", 0))

cuda = None


def _cuda():
    global cuda
    if cuda is None:
        from numba import cuda as _c
        cuda = _c
    return cuda


def threads_for(n_strips_max: int, budget: int = SHARED_BYTES) -> int:
    """Threads per block for windows of at most ``n_strips_max`` strips: as few rounds
    as MAX_T threads and ``budget`` bytes of shared memory a block allow, then as few
    threads as those rounds need (multiples of 32; S2G_LONG_MAX_T below 32 is for tests:
    several rounds on tiny windows)."""
    most = min(MAX_T, max(32, (budget - STATIC_SHARED) // (8 * (S + 1)) // 32 * 32))
    rounds = max(1, -(-n_strips_max // most))
    per = -(-n_strips_max // rounds)
    return int(min(most, max(32, -(-per // 32) * 32)))


def launch_threads(n_strips_max: int, n_blocks: int) -> int:
    """Threads per block for a launch of windows of at most ``n_strips_max`` strips, in
    ``n_blocks`` blocks at that width: :data:`ROUND_T` (within MAX_T); with ``ROUND_T =
    0`` :func:`threads_for` within 48 KB, or within :data:`FEW_BLOCK` where those are
    fewer than the GPU's SMs (one block an SM: more strips in flight)."""
    if ROUND_T:
        return min(MAX_T, ROUND_T)
    T = threads_for(n_strips_max)
    if n_blocks < _sm_count():
        T = max(T, threads_for(n_strips_max, FEW_BLOCK))
    return T


def memory_threads(n_strips_max: int) -> int:
    """The most threads :func:`launch_threads` may pick (device memory is sized for it)."""
    if ROUND_T:
        return min(MAX_T, ROUND_T)
    return max(threads_for(n_strips_max), threads_for(n_strips_max, FEW_BLOCK))


#: shared memory per SM on the H100 / H200 (228 KB) where the device does not say
SMEM_PER_SM = 233472


def resident_windows(T: int, n_slots: int) -> int:
    """Blocks of ``T`` threads (rounds of long windows: a window with one round is one
    block) the GPU runs at once: its SMs times the blocks an
    SM holds by registers (:data:`MAXREG`, allocated per warp in units of 256), shared
    memory (:func:`shared_plan`'s, the static arrays and the driver's 1 KB a block) and
    threads; 0 under the simulator or without a device."""
    sms = _sm_count()
    if not sms:
        return 0
    try:
        per_sm = int(cuda.get_current_device().MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)
    except Exception:                   # noqa: BLE001 - attribute names
        per_sm = SMEM_PER_SM
    per_warp = -(-(MAXREG or 255) * 32 // 256) * 256
    by_regs = 65536 // (per_warp * -(-T // 32))
    dyn = shared_plan(T, n_slots, SHARED_BLOCK)[1]
    by_smem = per_sm // (dyn + STATIC_SHARED + 1024)
    return sms * max(0, min(by_regs, by_smem, 2048 // max(T, 1), 32))


def _sm_count() -> int:
    """SMs of the current GPU; 0 under the simulator (launches keep the 48 KB choice)."""
    if _SIM:
        return 0
    _cuda()
    try:
        return int(cuda.get_current_device().MULTIPROCESSOR_COUNT)
    except Exception:                   # noqa: BLE001 - no device: the 48 KB choice
        return 0


def n_strips(rows):
    """Strips of a window over rows ``0..rows``."""
    return (np.asarray(rows, np.int64) + S) // S


def device_bytes(sz, rows, L, T, layout=None):
    """Device bytes per window, ``T`` threads a block (program, codes, choices, outputs;
    per round its slots, ring and best cell; between rounds the hand-off). ``layout``
    (:func:`band_layout`'s per-window code words and choice rows): the band's codes and
    choices, and its four words a column, instead of every row's."""
    W, nm, nmp, nsl = sz[:, 0], sz[:, 1], sz[:, 2], sz[:, 3]
    R1 = rows + 1
    G = -(-n_strips(rows) // int(T))
    hand = 12 * (G - 1) * ((W + 31) // 32 * 32)
    if layout is None:
        kept = W * code_stride(rows) + nm * R1 * 4
    else:
        kept = 4 * layout[0] + 4 * layout[1] + 16 * W
        if ROUND_T and int(T) == memory_threads(1):
            hand = 12 * layout[2]               # the rounds' own ranges (handoff_columns)
    return (W * 20 + nmp * 8 + kept
            + G * (nsl * (S * T * 8) + 24 * T + 40) + hand
            + (rows + L + 2) + 4 * (L + 1) + 64)


def window_bytes(sz, rows, L, layout=None):
    """Device bytes per window whichever width :func:`launch_threads` picks."""
    ns = int(n_strips(rows).max(initial=1))
    if ROUND_T:
        return device_bytes(sz, rows, L, memory_threads(ns), layout)
    return np.maximum(device_bytes(sz, rows, L, threads_for(ns), layout),
                      device_bytes(sz, rows, L, memory_threads(ns), layout))


@numba.njit(parallel=True, **NJIT)
def band_layout(coff, rows, p_mrank, blo, bhi, bcw, bxc, nwd, nxr):
    """Where a traceback window's direction codes and merge choices go when only its band's
    are kept (the walk reads no others: every cell it visits lies on the optimal
    alignment, so in the band, :func:`s2g.gpu_traceback._band_rows`). Column ``w`` keeps
    the code words (8 rows each) ``bql[w] <= q < bqh[w]`` that rows ``blo[w]..bhi[w]``
    meet (``bql = blo >> 3``, ``bqh = (bhi >> 3) + 1``; none where ``bhi < blo``), at word
    ``bcw[w] + q`` of its window's codes; a merge column's choices rows
    ``max(0, 8 bql - 8) <= i < min(R + 1, 8 bqh)`` (the walk reads a diagonal step's
    choice one row above the band's cell) at ``bxc[w] + i`` of its window's. Per window
    ``nwd`` code words and ``nxr`` choice rows. A 10 kbp read's window on the SNP graph
    keeps 15 MB of 77 (a fifth), on DRB1 about half."""
    for k in numba.prange(len(rows)):
        c0 = coff[k]
        R1 = rows[k] + 1
        cw = np.int64(0)
        cx = np.int64(0)
        for w in range(c0, coff[k + 1]):
            lo = blo[w]
            hi = bhi[w]
            ql = np.int64(0)
            qh = np.int64(0)
            if hi >= lo:
                ql = np.int64(lo >> 3)
                qh = np.int64((hi >> 3) + 1)
            bcw[w] = cw - ql
            cw += qh - ql
            bxc[w] = 0
            if p_mrank[w] >= 0 and qh > ql:
                xl = max(np.int64(0), 8 * ql - 8)
                bxc[w] = cx - xl
                cx += min(R1, 8 * qh) - xl
        nwd[k] = cw
        nxr[k] = cx


@numba.njit(parallel=True, **NJIT)
def round_columns(coff, rows, blo, bhi, T, S, roff, rlo, rhi):
    """The columns each round of a banded window steps over, as the kernel finds them:
    round ``g`` (strips ``g T .. g T + T - 1``, rows ``g T S .. min(R, (g + 1) T S - 1)``)
    of window ``r`` takes columns ``rlo[j] .. rhi[j]`` (``j = roff[r] + g``; ``W, -1``
    where no band meets its rows): those whose rows ``blo[w] .. bhi[w]`` meet its own. A
    round's hand-off to the next holds those columns only (from ``rlo``). ``S``: the strip
    height, an argument (a global would be frozen into Numba's disk cache)."""
    TS = np.int64(T) * np.int64(S)
    for r in numba.prange(len(rows)):
        R = np.int64(rows[r])
        c0 = coff[r]
        W = coff[r + 1] - c0
        j0 = roff[r]
        G = roff[r + 1] - j0
        for g in range(G):
            rlo[j0 + g] = W
            rhi[j0 + g] = -1
        for x in range(W):
            bl = np.int64(blo[c0 + x])
            bh = np.int64(bhi[c0 + x])
            for g in range(max(np.int64(0), bl // TS), min(G - 1, bh // TS) + 1):
                if bl <= min(R, (g + 1) * TS - 1) and bh >= g * TS:
                    rlo[j0 + g] = min(rlo[j0 + g], x)
                    rhi[j0 + g] = max(rhi[j0 + g], x)


def round_lines(coff, rows, blo, bhi, T):
    """(roff, lines): window ``r``'s rounds of ``T`` strips are ``roff[r] .. roff[r + 1] -
    1``, and round ``j`` steps over ``lines[j]`` columns in 32-column lines (its range from
    :func:`round_columns`; 0 where no band meets its rows)."""
    roff = cum(-(-n_strips(rows) // int(T)))
    rlo = np.empty(max(int(roff[-1]), 1), np.int64)
    rhi = np.empty_like(rlo)
    round_columns(coff, np.asarray(rows, np.int64), blo, bhi, int(T), S, roff, rlo, rhi)
    return roff, (np.maximum(rhi - rlo + 1, 0) + 31) // 32 * 32


def handoff_columns(coff, rows, blo, bhi, T):
    """Per window, the hand-off columns between its rounds of ``T`` strips (banded: each
    round's own range, in 32-column lines): what the launch allocates at that width."""
    roff, width = round_lines(coff, rows, blo, bhi, T)
    last = np.zeros(len(width), bool)
    last[roff[1:] - 1] = True                   # a window's last round hands nothing on
    width[last] = 0
    width = width[:int(roff[-1])]
    return np.add.reduceat(width, roff[:-1]) if len(width) else np.zeros(len(rows), np.int64)


def code_stride(rows):
    """Bytes of direction codes per window column: rows ``0..rows`` at 4 bits, padded to
    whole 32-bit words (a thread stores 8 rows' codes at once)."""
    return (np.asarray(rows, np.int64) + 2) // 2 + 3 & ~np.int64(3)


def chunk_budget() -> int:
    """Bytes one launch may use: S2G_LONG_CHUNK_BYTES, else half of free memory (more
    windows a launch: more blocks per SM, the kernel's limit)."""
    if CHUNK_BYTES > 0:
        return CHUNK_BYTES
    _cuda()
    try:
        free = float(cuda.current_context().get_memory_info()[0])
    except Exception:
        free = float("inf")
    if not np.isfinite(free):          # the simulator reports no memory
        free = 4 << 30
    return max(1 << 28, int(free) // 2)


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
    from .variants import _ptx
    return _ptx.VERSION


def _render(S: int, local: bool, prmt_sub: bool, sim: bool) -> str:
    """Source of the kernel for strips of ``S`` rows (module doc): the strip's H, E and read
    codes are ``S`` scalars each (registers), the cell loop written out ``S`` times.
    ``local``: local mode (the H_START clamp and the column maximum); otherwise global or
    semiglobal (the mode is an argument). ``prmt_sub``: the substitution score is one PRMT
    from a 4-byte table per row (scores that fit signed bytes), else compare + select."""
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
    tail = ("diag = H{r}\n"
            "H{r} = h\n"
            "hup = h\n"
            "E{r} = ev\n"
            + ("cm = max(cm, h)\n" if local else "")
            + "wd{k} = uint32(wd{k} | (uint32(d) << uint32({sh})))\n")
    cells = "\n".join(" " * 16 + ln.format(r=r, k=r // 8, sh=4 * (r % 8))
                      for r in range(S)
                      for ln in (cell + (top if r == 0 else "") + tail).strip("\n").splitlines())
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
    qinit = R_("Q{r} = MISW" if prmt_sub else "Q{r} = int32(7)", 8)
    for key, val in (("@QTAB@", qinit + "\n        if R >= 1:\n" + R_(qtab, 12)),
                     ("@COLSEL@", "\n".join(" " * 16 + ln for ln in colsel.splitlines())),
                     ("@CMINIT@", " " * 16 + cm_init if cm_init else ""),
                     ("@WDINIT@", "\n".join(" " * 16 + f"wd{kk} = uint32(0)" for kk in range(NW))),
                     ("@CELLS@", cells), ("@WORDS@", words), ("@FIND@", find), ("@HEND@", hend),
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
    head = [f"# generated by s2g.gpu_long (S={S}, local={local}, prmt={prmt_sub}, sim={sim}, "
            f"_ptx v{_ptx_version()}); do not edit",
            "from numba import cuda, int32, int64, uint32, uint64",
            "from s2g.gpu_walk import walk_dev",
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
                bcw, bxc, jobs, jsoff, jhoff, jctr, jdone, rbest):
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
    # :func:`s2g.gpu_traceback._band_rows`) meets the round's rows; the rest of the window
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
                        if mr >= 0 and t >= xlo and t < xhi:
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
                if dbg & 1 == 0:
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


def kernel_signature():
    """Argument types of the kernel (``cuda.compile_ptx``, eager compilation)."""
    i32, i64 = types.int32, types.int64
    a = types.Array
    return ((i32,) * 8 + (a(types.uint8, 1, "C"), a(i64, 1, "C"), a(i32, 1, "C"))
            + (a(i64, 1, "C"),) * 4
            + (a(types.uint8, 1, "C"), a(i32, 1, "C"), a(types.int8, 1, "C"))
            + (a(i32, 1, "C"),) * 6
            + (a(i32, 1, "C"),) * 8
            + (a(types.uint32, 1, "C"), a(types.int16, 1, "C"), a(types.int16, 1, "C"),
               i32, a(i32, 1, "C"), i32, a(i32, 1, "C"), a(i32, 1, "C"))
            + (a(i32, 1, "C"),) * 2
            + (a(i32, 1, "C"), a(i64, 1, "C"), a(i64, 1, "C"), a(i32, 1, "C"),
               a(i32, 1, "C"), a(i32, 1, "C")))


def _walk_body(n, mode, find, rows_a, score_a, coff, poff, doff, xoff, qoff, wjoff, wjobs,
               rbest, out_best, codes, p_base, p_col, p_kind, p_mrank, p_mpa, mp_wcol, dirs,
               dpred, epred, oo, co, out_ops, out_cols, out_n, out_start, out_st, band, bcw, bxc):
    """The second kernel of a launch: a window's end cell (``find``: the best of its rounds'
    best cells, V0's rule: the highest score, then the lowest column, then the lowest row;
    otherwise the host's end cell, whose H the long kernel left in ``out_best``) and the
    walk back from it (:func:`s2g.gpu_walk.walk`), thread 0 of block ``r``. A kernel
    of its own: every round's codes, written by blocks on other SMs, are then visible."""
    r = cuda.blockIdx.x
    if cuda.threadIdx.x != 0 or r >= n:
        return
    R = rows_a[r]
    R1 = R + 1
    stride = ((R + 2) // 2 + 3) // 4 * 4
    c0 = coff[r]
    W = coff[r + 1] - c0
    if find:
        k0 = wjoff[r]
        j = wjobs[k0]
        best = rbest[3 * j]
        bw = rbest[3 * j + 1]
        bi = rbest[3 * j + 2]
        for k in range(k0 + 1, wjoff[r + 1]):
            j = wjobs[k]
            h = rbest[3 * j]
            xw = rbest[3 * j + 1]
            xi = rbest[3 * j + 2]
            if xw >= 0 and (h > best or (h == best and (
                    bw < 0 or xw < bw or (xw == bw and xi < bi)))):
                best = h
                bw = xw
                bi = xi
        out_best[3 * r] = best if bw >= 0 else NEG_INF
        out_best[3 * r + 1] = bi
        out_best[3 * r + 2] = bw
        if bw < 0:
            out_n[2 * r] = 0
            out_n[2 * r + 1] = 0
            out_start[r] = 0
            out_st[r] = ST_OK
            return
        w = bw
        i = bi
    else:
        if W == 0 or out_best[3 * r] != score_a[r]:
            out_st[r] = ST_MISMATCH
            return
        w = W - 1
        i = R
    walk_dev(r, w, i, mode, R1, stride, c0, poff[r], doff[r], xoff[r], qoff[r], codes, p_base,
              p_col, p_kind, p_mrank, p_mpa, mp_wcol, dirs, dpred, epred, oo, co, out_ops,
              out_cols, out_n, out_start, out_st, band, bcw, bxc)


def walk_signature():
    """Argument types of :func:`_walk_body`."""
    i32, i64 = types.int32, types.int64
    a = types.Array
    return ((i32,) * 3 + (a(i32, 1, "C"),) * 2 + (a(i64, 1, "C"),) * 6
            + (a(i32, 1, "C"),) * 3 + (a(types.uint8, 1, "C"), a(types.uint8, 1, "C"),
                                       a(i32, 1, "C"), a(types.int8, 1, "C"))
            + (a(i32, 1, "C"),) * 3 + (a(types.uint8, 1, "C"), a(types.int16, 1, "C"),
                                       a(types.int16, 1, "C"), a(i64, 1, "C"),
                                       a(i64, 1, "C"), a(types.uint8, 1, "C"))
            + (a(i32, 1, "C"),) * 4 + (i32, a(i32, 1, "C"), a(i32, 1, "C")))


_WALK = None


def get_walk_kernel():
    """:func:`_walk_body` compiled once per process (on a GPU eagerly, disk-cached)."""
    global _WALK
    with _KERNELS_LOCK:
        if _WALK is None:
            _cuda()
            if _SIM:
                _WALK = cuda.jit(_walk_body)
            else:
                opts = {"cache": True} if os.environ.get("S2G_NO_CACHE", "") == "" else {}
                _WALK = cuda.jit(walk_signature(), **opts)(_walk_body)
    return _WALK


def prmt_fits(a: int, b: int) -> bool:
    """Whether the substitution scores fit the kernel's PRMT byte tables (signed bytes)."""
    return -128 <= -b <= 127 and -128 <= a <= 127


def kernel_source(S: int, local: bool, prmt_sub: bool = True, sim: bool = None,
                  note: str = ""):
    """The Python function of the kernel for strips of ``S`` rows (undecorated: tests
    ``compile_ptx`` it), from a module file named by its text's hash under
    :func:`s2g.variants.codegen._cache_dir` so that Numba's on-disk cache can key on it (as
    the ``fast`` kernels); executed in memory where no writable folder exists."""
    from .variants.codegen import load_source
    _cuda()
    sim = _SIM if sim is None else sim
    assert 8 <= S <= 32 and S % 8 == 0, "strips of 8, 16, 24 or 32 rows"
    text = _render(int(S), bool(local), bool(prmt_sub), bool(sim))
    if note:          # compile options: part of the file's hash, so of the cache's key
        text = f"# {note}\n" + text
    return load_source(text, "s2g_long_", "long_kernel",
                       f"<s2g.gpu_long kernel S={S} local={local}>")


_KERNELS: dict = {}
_KERNELS_LOCK = threading.Lock()


def get_kernel(S: int = None, local: bool = True, prmt_sub: bool = True):
    """The kernel for strips of ``S`` rows (default :data:`S`), local mode or not, compiled
    once per process (eagerly for its signature on a GPU, kept in Numba's disk cache)."""
    S = globals()["S"] if S is None else int(S)
    key = (S, bool(local), bool(prmt_sub))
    with _KERNELS_LOCK:           # gpu_traceback.prepare loads it from another thread
        return _KERNELS[key] if key in _KERNELS else _get_kernel(key)


def _get_kernel(key):
    if key not in _KERNELS:
        _cuda()
        if _SIM:
            _KERNELS[key] = cuda.jit(kernel_source(*key))
        else:
            opts = {"cache": True} if os.environ.get("S2G_NO_CACHE", "") == "" else {}
            if MAXREG:
                opts["max_registers"] = MAXREG
            # numba's on-disk cache keys on the source, not on max_registers
            fn = kernel_source(*key, note=f"max_registers={MAXREG}")
            _KERNELS[key] = cuda.jit(kernel_signature(), **opts)(fn)
    return _KERNELS[key]


def cache_probe(local: bool, prmt_sub: bool):
    """A lazy dispatcher over the kernel's source exactly as :func:`get_kernel` compiles it
    (default strip height, register cap), whose disk cache tells whether that kernel is
    compiled (:func:`s2g.warmup.cold`); compiles nothing."""
    _cuda()
    fn = kernel_source(S, bool(local), bool(prmt_sub), sim=False,
                       note=f"max_registers={MAXREG}")
    return cuda.jit(cache=True)(fn)


def compile_ptx(cc=(9, 0), S: int = None, local: bool = True, prmt_sub: bool = True):
    """PTX of the kernel for compute capability ``cc`` (tests; no GPU needed)."""
    _cuda()
    S = globals()["S"] if S is None else int(S)
    return cuda.compile_ptx(kernel_source(S, local, prmt_sub, sim=False), kernel_signature(),
                            cc=cc)[0]


def shared_plan(T: int, n_slots: int, budget: int):
    """Window slots kept in shared memory (the rest in global memory) and the block's
    dynamic shared bytes: the column (H and E of (S + 1) rows a thread, the odd stride
    that keeps both access patterns free of bank conflicts) and as many slots (the same
    size each) as ``budget`` holds beside the static arrays."""
    per = 8 * (S + 1) * T
    n_sh = int(max(0, min(n_slots, (budget - STATIC_SHARED - per) // per)))
    return n_sh, per * (1 + n_sh)


def jobs_for(rows, T: int):
    """The jobs of a launch of windows with ``rows`` rows, ``T`` threads a block: a job is one
    round (``T`` strips) of one window, run by one block. Returns (``jobs``: int32 triples
    (window, round, the job of the window's previous round or -1), rounds first, so a job
    comes after the one it waits on; rounds per window; per window its jobs, round by
    round: ``wjobs[wjoff[r]:wjoff[r + 1]]``)."""
    G = -(-n_strips(rows) // int(T))
    n = len(G)
    last = np.full(n, -1, np.int64)
    parts, base = [], 0
    for g in range(int(G.max(initial=0))):
        rs = np.nonzero(G > g)[0]
        parts.append(np.stack([rs, np.full(len(rs), g), last[rs]], axis=1))
        last[rs] = base + np.arange(len(rs))
        base += len(rs)
    jobs = np.concatenate(parts) if parts else np.zeros((0, 3), np.int64)
    wjobs = np.lexsort((jobs[:, 1], jobs[:, 0])).astype(np.int32)
    return np.ascontiguousarray(jobs, np.int32).ravel(), G, wjobs, cum(G)


def launch(dev, emp, n, mode, a, b, o, e, codes, qoff, rows, score, coff, poff, sz, oo, co,
           prog, find, band=None):
    """Upload one chunk's windows (``dev(x)`` uploads, ``emp(size, dtype)`` allocates) and
    launch the kernels (the rounds, then the walks); returns the device outputs (ops, cols,
    n, start, status, best) and the CUDA events around the launches. ``band``: (lo, hi)
    rows per window column (:func:`s2g.gpu_traceback._band_rows`), then
    :func:`band_layout`'s arrays (bcw, bxc per column, nwd, nxr per window):
    each round of strips computes only the columns whose band meets its rows, and only
    the band's direction codes and merge choices are kept."""
    R1 = rows + 1
    ns = n_strips(rows)
    T48 = threads_for(int(ns.max()))
    T = launch_threads(int(ns.max()), int((-(-ns // T48)).sum()))
    assert T <= 32 or not _SIM, "the simulator's warp votes need one-warp blocks"
    kern = get_kernel(S, mode == LOCAL, prmt_fits(a, b))
    walk = get_walk_kernel()
    n_sh, dyn = shared_plan(T, int(sz[:, 3].max()), ROUND_SHARED if ROUND_T else SHARED_BLOCK)
    if dyn + STATIC_SHARED > SHARED_BYTES and not _raise_shared(kern, dyn):
        n_sh, dyn = shared_plan(T, int(sz[:, 3].max()), SHARED_BYTES)
    W = sz[:, 0]
    if band is None:
        doff = cum(W * code_stride(rows))          # whole words per window
        xoff = cum(sz[:, 1] * R1)
    else:
        doff = cum(4 * band[4])                    # the band's words (band_layout)
        xoff = cum(band[5])
    d_codes, d_qoff, d_rows = (dev(np.ascontiguousarray(codes, np.uint8)), dev(qoff),
                               dev(rows.astype(np.int32)))
    d_coff, d_poff, d_doff, d_xoff = (dev(x) for x in (coff, poff, doff, xoff))
    d_prog = [dev(x) for x in prog]
    dirs32 = emp(max(int(doff[-1]) // 4, 1), np.uint32)
    dpred, epred = emp(xoff[-1], np.int16), emp(xoff[-1], np.int16)
    d_ops, d_cols = emp(oo[-1], np.uint8), emp(co[-1], np.int32)
    d_n, d_start = emp(2 * n, np.int32), emp(n, np.int32)
    d_st = dev(np.full(n, -1, np.int32))
    d_best = emp(3 * n, np.int32)
    if band is None:
        bargs = (np.int32(0),) + (d_st,) * 4
        wband = (np.int32(0), d_st, d_st)
    else:
        bargs = (np.int32(1),) + tuple(dev(x) for x in band[:4])
        wband = (np.int32(1), bargs[3], bargs[4])
    ev0, ev1 = cuda.event(), cuda.event()
    walk_args = [np.int32(n), np.int32(mode), np.int32(find), d_rows,
                 dev(score.astype(np.int32)), d_coff, d_poff, d_doff, d_xoff, d_qoff]
    tail = [d_best, d_codes] + [d_prog[k] for k in (0, 1, 2, 4, 5, 8)] + [
        dirs32.view(np.uint8), dpred, epred, dev(oo), dev(co), d_ops, d_cols, d_n, d_start, d_st,
        *wband]

    plans = {}

    def plan(T):
        """The jobs at width ``T`` (:func:`jobs_for`) and per job its hand-off's columns to
        the next round (32-column lines; banded: the round's own columns only,
        :func:`round_columns`); made once a width."""
        if T not in plans:
            jobs, G, wjobs, wjoff = jobs_for(rows, T)
            jw, jg = jobs[0::3], jobs[1::3]
            nxt = jg < G[jw] - 1
            if band is None:
                lines = (W[jw] + 31) // 32 * 32
            else:
                roff, lines = round_lines(coff, rows, band[0], band[1], T)
                lines = lines[roff[jw] + jg]
            plans[T] = (jobs, G, wjobs, wjoff, nxt, np.where(nxt, lines, 0))
        return plans[T]

    plan(T)                             # host work before the timed launch (as the band's)

    def go(T, n_sh, dyn):
        jobs, G, wjobs, wjoff, nxt, hsz = plan(T)
        nj = len(jobs) // 3
        jw = jobs[0::3]
        jsoff = cum(sz[jw, 3] * (S * T))           # room for every slot (none shared)
        jhoff = cum(hsz)[:-1]
        jhoff[~nxt] = -1
        ring = max(nj * 2 * T, 1)
        hand = max(int(hsz.sum()), 1)
        rbest = emp(3 * nj, np.int32)
        kern[nj, T, 0, dyn](np.int32(n), np.int32(mode), np.int32(a), np.int32(b), np.int32(o),
                            np.int32(e), np.int32(n_sh), np.int32(DEBUG), d_codes, d_qoff,
                            d_rows, d_coff, d_poff, d_doff, d_xoff, *d_prog,
                            emp(max(int(jsoff[-1]), 1), np.int32),
                            emp(max(int(jsoff[-1]), 1), np.int32),
                            emp(ring, np.int32), emp(ring, np.int32), emp(ring, np.int32),
                            emp(hand, np.int32), emp(hand, np.int32), emp(hand, np.int32),
                            dirs32, dpred, epred, np.int32(find), d_best, *bargs,
                            dev(jobs), dev(jsoff), dev(jhoff), dev(np.zeros(1, np.int32)),
                            dev(np.zeros(max(nj, 1), np.int32)), rbest)
        if not DEBUG & 8:
            walk[n, 1](*walk_args, dev(wjoff), dev(wjobs), rbest, *tail)

    ev0.record()
    try:
        go(T, n_sh, dyn)
    except Exception as exc:            # noqa: BLE001 - the driver refused the launch
        if dyn + STATIC_SHARED <= SHARED_BYTES:
            raise
        # seen on an H100 (S = 8, 96 KB) and an H200 (2026-11-26: the opt-in was then
        # remembered for one kernel and not set for the next; now per kernel): relaunch
        # within 48 KB, with fewer threads where needed (slot offsets laid out for T hold)
        T2 = threads_for(int(ns.max()), SHARED_BYTES)
        n_sh2, dyn2 = shared_plan(T2, int(sz[:, 3].max()), SHARED_BYTES)
        warnings.warn(f"long-window kernel: launch with {dyn} bytes of shared memory "
                      f"refused ({exc}); using {dyn2} and {T2} threads", RuntimeWarning,
                      stacklevel=2)
        go(T2, n_sh2, dyn2)
    ev1.record()
    return d_ops, d_cols, d_n, d_start, d_st, d_best, (ev0, ev1)


_RAISED: dict = {}          # per kernel: the dynamic shared bytes it was allowed


def _raise_shared(kern, nbytes) -> bool:
    """Allow ``nbytes`` of dynamic shared memory per block (above 48 KB: an opt-in)."""
    from numba import config
    if config.ENABLE_CUDASIM:
        return True
    if _RAISED.get(id(kern), 0) >= nbytes:
        return True
    from .variants.codegen import allow_shared
    ok = allow_shared(kern, nbytes)
    if ok:
        _RAISED[id(kern)] = nbytes
    return ok
