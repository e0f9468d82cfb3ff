"""The long-window kernel's plan: strips, rounds and jobs, threads and shared memory a
block, the band-only layout of codes and choices, and device bytes a window and a launch
(host code; the kernel is :mod:`s2g.trace.long.source`, its launch
:mod:`s2g.trace.long.launch`).

Device memory per window: ``W * stride`` bytes of codes (stride ``(R + 2) / 2`` rounded
up to 4: 58 MB for a 10 kbp read's 11,700-column window), 4 bytes x rows per merge
column; per round ``8 x S x T`` per global slot and the ring's ``24 x T``; between rounds
12 bytes a column of hand-off (banded windows: the round's own columns, :func:`round_columns`;
:func:`device_bytes`).
Windows are chunked to :func:`chunk_budget`; a window over it stays on the CPU (its
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

One-warp rounds (session 22, :func:`round_t`). The widths above (as many strips a round
as 48 KB of shared memory allow: 160, rounds of 5,120 rows) date from before bands: a
round steps over every column its band meets, so tall rounds compute far outside it (a
10 kbp SNP window's two rounds computed 81% of its cells, its band is 19%). Rounds of 32
strips (1,024 rows) follow the band closely, a one-warp block meets its barrier at no
cost, and with every window slot in global memory (:func:`round_shared`) 15 blocks share
an SM, the same warps as three blocks of 160; the many jobs stream through the launch, so
launches are cut by bytes alone. H100, same machine, tracebacks identical: 1,000 x 10 kbp
traceback windows 0.301 -> 0.145 s (388.8 -> 804.1 GCUPS on the windows' cells); without
bands (seeded windows) 0.563 -> 0.514 s.
"""
from __future__ import annotations

import contextlib
import threading

import numba
import numpy as np
from numba import config as _nb_config

from ..._numba import NJIT
from ...config import compile_time, settings
from ..gpu_walk import cum

#: rows per strip (one thread's rows of a column; a multiple of 8, so a strip owns whole
#: 32-bit words of direction codes; at most 32, a warp's lanes cover a strip's rows in the
#: warp's merges); a kernel argument, read at each launch (``long_strip``)
S = compile_time("long_strip")
assert 8 <= S <= 32 and S % 8 == 0, "long_strip must be 8, 16, 24 or 32"
#: under Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM)
SIM = bool(_nb_config.ENABLE_CUDASIM)
#: most threads per block (strips in flight per window; the shared arrays' size)
SHARED_T = 256
SHARED_WARPS = SHARED_T // 32
#: (``long_max_t``; below 32 for tests: several rounds on tiny windows)
MAX_T = min(SHARED_T, compile_time("long_max_t"))
#: shared memory a block may use without opting in: the column (8 x S x T bytes) and the
#: best-cell reduction (12 x SHARED_T)
SHARED_BYTES = 48 * 1024
#: static shared memory of the kernel: five words per thread (the warp's merge and slot
#: lists, then the best-cell reduction), a word per warp, the column ranges and the job
STATIC_SHARED = 20 * 256 + 8 * 8 + 20
#: timing experiments only (bench/long_kernel.py), results wrong: 1 no direction stores,
#: 4 no barrier, 8 no walk (``long_debug``)
DEBUG = compile_time("long_debug")
#: register cap per thread for ptxas (0: its choice, 241 at S = 32: one block of 160
#: threads an SM, 117.5 GCUPS; 168 spills nothing, two blocks: 158.0; 128 spills a little,
#: three blocks: 178.8; 96 spills in the cells: 151.7 (H200, 300 x 10 kbp, 2026-11-26)).
#: One-warp rounds (session 22) hold 15 blocks an SM by shared memory, 16 by registers at
#: 128, where the spills (3.1e9 local-memory requests in one pruned launch of 1,000 seeded
#: 10 kbp windows, 47% of warps' stalls on long scoreboards, ncu, session 37) cost more than
#: the blocks: at 168 (12 blocks) 3,000 MHC reads' long-kernel launches took 1.33-1.38 s
#: against 1.88 s, 152: 1.38-1.42, 192: 1.50 (H200, 2026-12-03) (``long_maxreg``)
MAXREG = compile_time("long_maxreg")


def shared_block() -> int:
    """Shared memory per block (the column, then window slots; above 48 KB an opt-in;
    ``long_shared``): 48 KB keeps the column alone there (slots in global memory,
    coalesced) and lets three blocks share an SM instead of two: with half of free memory a
    launch 1,000 x 10 kbp seeded windows ran at 154.5 GCUPS against 96.6 with 100 KB and a
    quarter (H100, 2026-11-24)."""
    return settings().long_shared


def few_block() -> int:
    """Shared memory a block may use in a launch of fewer windows than SMs
    (``long_few_shared``): a block then has its SM to itself, so it takes as many strips
    in flight as MAX_T allows (the column's 8 x (S + 1) bytes a thread; above 48 KB by
    opt-in): a 50 kbp window's 1,563 strips of 32 rows in 7 rounds of 224 threads instead
    of 10 of 160."""
    return settings().long_few_shared


def round_t() -> int:
    """Threads per block of every launch (``long_round_t``; 0: the widths above, sessions
    16-21): one warp a round, so a round is 32 strips (1,024 rows at S = 32). Banded
    windows: a round steps over the columns its band meets (``clo..chi``), so the shorter
    the round the fewer cells outside the band it computes (a 10 kbp SNP window: 2 rounds
    of 5,120 rows computed 81% of the window, its band is 19%); a one-warp block meets its
    barrier at no cost, and the rounds of many windows (jobs from the counter) keep the SMs
    full. H100, 1,000 x 10 kbp traceback windows (``bench.long_kernel``, tracebacks
    identical): 160 threads 0.301 s, 128 0.246, 64 0.233, 64 with 24 KB 0.181, **32 with
    12 KB 0.145** (2026-11-27); without bands 0.563 -> 0.514 s. Seeded windows (no band)
    end to end, long kernel seconds 160 -> 32: DRB1 4.80 -> 4.07, SNP 0.60 -> 0.61, C4
    2.41 -> 2.49, 50 kbp reads 2.47 -> 2.71 (5 -> 6 launches: every column handed on, 49
    rounds a window)."""
    return settings().long_round_t


def round_shared() -> int:
    """Shared memory per block with :func:`round_t` (``long_round_shared``): 12 KB holds the
    column alone (every window slot in global memory), so 15 one-warp blocks share an SM
    (16 by registers); a slot in shared memory (24 KB) leaves 10."""
    return settings().long_round_shared

cuda = None


def _cuda():
    """numba.cuda, or the lean path's stand-in (:func:`s2g.variants._lean.api`): the device
    attributes and memory asked here."""
    global cuda
    if cuda is None:
        from ...variants import _lean
        cuda = _lean.api()
    return cuda


def threads_for(n_strips_max: int, budget: int = SHARED_BYTES) -> int:
    """Threads per block for windows of at most ``n_strips_max`` strips: as few rounds
    as MAX_T threads and ``budget`` bytes of shared memory a block allow, then as few
    threads as those rounds need (multiples of 32; long_max_t below 32 is for tests:
    several rounds on tiny windows)."""
    most = min(MAX_T, max(32, (budget - STATIC_SHARED) // (8 * (S + 1)) // 32 * 32))
    rounds = max(1, -(-n_strips_max // most))
    per = -(-n_strips_max // rounds)
    return int(min(most, max(32, -(-per // 32) * 32)))


def launch_threads(n_strips_max: int, n_blocks: int) -> int:
    """Threads per block for a launch of windows of at most ``n_strips_max`` strips, in
    ``n_blocks`` blocks at that width: :func:`round_t` (within MAX_T); with ``round_t() =
    0`` :func:`threads_for` within 48 KB, or within :func:`few_block` where those are
    fewer than the GPU's SMs (one block an SM: more strips in flight)."""
    round_threads = round_t()
    if round_threads:
        return min(MAX_T, round_threads)
    T = threads_for(n_strips_max)
    if n_blocks < _sm_count():
        T = max(T, threads_for(n_strips_max, few_block()))
    return T


def memory_threads(n_strips_max: int) -> int:
    """The most threads :func:`launch_threads` may pick (device memory is sized for it)."""
    round_threads = round_t()
    if round_threads:
        return min(MAX_T, round_threads)
    return max(threads_for(n_strips_max), threads_for(n_strips_max, few_block()))


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
    dyn = shared_plan(T, n_slots, shared_block())[1]
    by_smem = per_sm // (dyn + STATIC_SHARED + 1024)
    return sms * max(0, min(by_regs, by_smem, 2048 // max(T, 1), 32))


def _sm_count() -> int:
    """SMs of the current GPU; 0 under the simulator (launches keep the 48 KB choice)."""
    if SIM:
        return 0
    _cuda()
    try:
        return int(cuda.get_current_device().MULTIPROCESSOR_COUNT)
    except Exception:                   # noqa: BLE001 - no device: the 48 KB choice
        return 0


def n_strips(rows):
    """Strips of a window over rows ``0..rows``."""
    return (np.asarray(rows, np.int64) + S) // S


def device_bytes(sz, rows, L, T, layout=None, store=True):
    """Device bytes per window, ``T`` threads a block (program, codes, choices, outputs;
    per round its slots, ring and best cell; between rounds the hand-off). ``layout``
    (:func:`band_layout`'s per-window code words and choice rows): the band's codes and
    choices, and its four words a column, instead of every row's. ``store=False``: no
    codes, choices or walks (a launch of best cells only)."""
    W, nm, nmp, nsl = sz[:, 0], sz[:, 1], sz[:, 2], sz[:, 3]
    R1 = rows + 1
    G = -(-n_strips(rows) // int(T))
    hand = 12 * (G - 1) * ((W + 31) // 32 * 32)
    if not store:
        kept = walks = 0
    else:
        walks = (rows + L + 2) + 4 * (L + 1)
        if layout is None:
            kept = W * code_stride(rows) + nm * R1 * 4
        else:
            kept = 4 * layout[0] + 4 * layout[1] + 16 * W
            if round_t() and int(T) == memory_threads(1):
                hand = 12 * layout[2]           # the rounds' own ranges (handoff_columns)
    return (W * 20 + nmp * 8 + kept
            + G * (nsl * (S * T * 8) + 24 * T + 40) + hand
            + walks + 64)


def window_bytes(sz, rows, L, layout=None, store=True):
    """Device bytes per window whichever width :func:`launch_threads` picks."""
    ns = int(n_strips(rows).max(initial=1))
    if round_t():
        return device_bytes(sz, rows, L, memory_threads(ns), layout, store)
    return np.maximum(device_bytes(sz, rows, L, threads_for(ns), layout, store),
                      device_bytes(sz, rows, L, memory_threads(ns), layout, store))


@numba.njit(parallel=True, **NJIT)
def band_layout(coff, rows, p_mrank, blo, bhi, bcw, bxc, nwd, nxr):
    """Where a traceback window's direction codes and merge choices go when only its band's
    are kept (the walk reads no others: every cell it visits lies on the optimal
    alignment, so in the band, :func:`s2g.trace.gpu_program.band_rows`). Column ``w`` keeps
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
    """Device bytes one launch of long windows may use: ``long_chunk_bytes`` (default 6 GB:
    seeded long windows scored without codes fill the GPU within it, issue 45), this
    thread's share of ``long_device_bytes`` (:func:`thread_share`) or half of free memory,
    whichever is least (``long_chunk_bytes`` 0: half of free memory)."""
    chunk_bytes = settings().long_chunk_bytes
    _cuda()
    try:
        free = float(cuda.current_context().get_memory_info()[0])
    except Exception:
        free = float("inf")
    if not np.isfinite(free):          # the simulator reports no memory
        free = 4 << 30
    half = max(1 << 28, int(free) // 2)
    out = min(chunk_bytes, half) if chunk_bytes > 0 else half
    share = thread_share()
    return out if share is None else min(out, share)


#: the device pool buffers a long launch allocates (gpu_chunk's ``long.*``, the programs
#: made on the GPU ``longprog.*``): what :func:`thread_share` bounds
LONG_BUFFERS = ("long.", "longprog.")


#: ``long_device_bytes`` 0: a quarter of the GPU's memory, at most this (issue 45: 8 GB)
DEVICE_BYTES_MAX = 7_000_000_000


def thread_share():
    """Device bytes one thread's long launches may hold (its pool's :data:`LONG_BUFFERS`,
    kept between launches): ``long_device_bytes`` (0: a quarter of the GPU's memory, at
    most :data:`DEVICE_BYTES_MAX`) over the aligning threads (scores first,
    ``align_workers``) and one more for the traceback threads, which take turns at their
    long launches (:func:`trace_turn`). Each thread keeps its own buffers
    (:mod:`s2g.variants._devpool`), so this bounds the process's. None where the device
    reports no memory (the simulator) and the knob is 0."""
    s = settings()
    total = s.long_device_bytes
    if total <= 0:
        _cuda()
        try:
            total = min(int(cuda.current_context().get_memory_info()[1]) // 4,
                        DEVICE_BYTES_MAX)
        except Exception:             # noqa: BLE001 - the simulator: infinite memory
            return None
    return max(1 << 16, total // (max(1, s.align_workers) + 1))


_TURN = threading.Lock()


@contextlib.contextmanager
def trace_turn():
    """One thread's long traceback launches at a time (the traceback stage's threads take
    turns; while one launches, the others' batches wait or do their host work), its long
    buffers dropped at the end of its turn: so they share one :func:`thread_share`.
    (Two threads' launches at once split the GPU between smaller launches, each waiting
    for its slowest window: ~400 GCUPS against ~690 for one thread's, session 49.)"""
    from ...variants import _devpool
    with _TURN:
        try:
            yield
        finally:
            _devpool.pool().drop(LONG_BUFFERS)


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
