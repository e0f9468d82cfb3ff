"""fast — the production GPU path: a warp-cooperative affine POA wavefront (issue 5).

Mapping
    A *group* of ``G`` lanes (G = 4, 8, 16 or 32; several groups share a warp) aligns one
    read — in local mode two reads, one per 16-bit half of every register (the *pair
    kernel*, below). Lane ``t`` owns ``K`` consecutive read rows of the current *strip*
    of ``G*K`` rows in registers (scalars of the generated source, below). Graph
    columns stream through the group in topological order as a wavefront: at step
    ``s`` lane ``t`` computes column ``j = s - t``, then passes its
    bottom row's ``H - o - e`` and ``F`` one lane down with ``shfl_up_sync``; lane 0
    takes the row above the strip (row 0 of the mode, or the strip above). No block or
    grid barrier anywhere; groups are persistent and stride over reads sorted by
    length, so a warp's groups have equal strip counts.

    All groups of a warp sit on the same columns (lane t of every group is on column
    s - t), so a warp diverges only as much as one group: with G = 8 on a SNP graph
    (~4% node-boundary columns) about 28% of steps have a boundary lane, against
    ~73% for a 32-lane group; and 8 lanes x K = 19 rows covers a 150 bp read with
    two shuffles per 19 cells. The pair kernel uses 4 lanes x 38 rows for 150 bp
    (:func:`choose_config`): 255 registers and 8 warps per SM instead of 12, but the
    column's work is shared by 76 cells per lane and a merge column meets 4 lanes of
    a warp's steps instead of 8: 7-27% faster on every graph measured (run 7).

node_bound store
    A column whose node is not simple (pred != [v-1]) merges its predecessors' last
    columns from FlatGraph's liveness slots. Each lane keeps its *own* rows of a slot
    (``H-o-e`` and ``E`` of each row as the registers hold them, and the H of the row
    above its top row, which is the diagonal of its first row), so the store is
    lane-private:
    no barrier and no cross-lane hazard. The first ``n_sh`` slots live in shared
    memory (word ``w`` of slot ``s`` of a lane at ``(s*(2K+1) + w)*32 + lane`` of its
    warp's region: one bank per lane), as many as fit without lowering the occupancy
    that the registers allow (3 of 3 on the SNP graph at K = 19); the rest in global
    memory, each lane's slots contiguous. A merge column's predecessor slots come
    packed in one prefetched word (``mword``, up to 3) or from the CSR (``mptr``/
    ``mslot``). Shared slots: 995 GCUPS against 779 all-global (bench/NOTES.md run 3).

Keep merges
    A merge column one of whose predecessors is the previous column (v-1: the last
    node of a bubble's branch, the closing node's usual case) keeps that column in
    registers and loads only its other predecessors (``CI_KEEP``); the kernel's own
    liveness slots (:func:`fast_slots`) drop v-1's slot where nothing else reads it.
    A merge folds ``H = max(H, H')`` and ``E = max(E, E')`` per predecessor, so a keep
    merge needs no conversion of the registers it keeps (the next cell's
    ``max(H, E - e)`` distributes over the predecessors). DRB1 (4.4 bp nodes): slot
    loads 10,237 -> 6,758, 1,425 -> 1,826 GCUPS; SNP 100 kbp 2,364 -> 2,594 (run 6).
    Slots hold E itself, not the outgoing ``max(H-o-e, E-e)`` (run 7): a store is
    2K + 1 stores and no arithmetic (19 ALU instructions fewer per store at K = 19; the
    ALU pipe is the kernel's bottleneck, ncu). 64-bit slot words (one LDS.64 per row's
    two values) were measured and dropped: no faster (the load/store pipe is not the
    limit, and pairing a row's values for STS.64 costs a move per row).

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

Generated source
    The kernel is Python source generated per (G, K, mode) with the K rows as scalars
    (``cuda.local.array(K)`` went to local memory at K >= 12), written to
    ``~/.cache/s2g/kernels`` and compiled with ``cuda.jit(cache=True)``: the first run
    compiles (13.6 s for K = 19), later runs load the cached cubin.

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
    words are shared. :func:`pair_fits` decides per batch: local mode, byte-sized
    substitution scores, ``a * (m + 1) + o + 2e < 32000`` (every value then fits 16
    bits beside the sentinel -16384); otherwise the 32-bit kernel (``S2G_FAST_PAIR=0``
    forces it). The 32-bit kernel runs when :func:`s2g.scoring.fits_int32` holds
    (every realistic read), else the exact int64 CPU path (``cpu`` variant) with a
    warning — never a silent overflow.

Long reads
    Strips of ``G*K`` rows (a warp: 32 x 38 rows in the pair kernel, 32 x 24 in the
    32-bit one), one pass each over all columns; the strip's bottom row (``H-o-e`` and F
    per column) is written to a global buffer (``8 x columns`` bytes) and read by lane 0
    of the next strip. A warp a strip: the 8 lanes x 24 rows of earlier kernels left
    1,000 reads of 10 kbp (500 pairs, 125 warps) on a quarter of the H100: 396 GCUPS,
    1,273 with warps (H100, 2026-11-24). Batches big enough to fill the GPU with 8-lane
    groups keep them (``BIG_UNITS_PER_SM``: they diverge less; 2,532 GCUPS on the H200
    with 12,672 reads).

    *Pipelined* (``pipe``, :func:`pipe_groups`): with few reads, one warp a read (pair)
    leaves the GPU empty (100 reads: 127 GCUPS), so the P stages (warps) of a block
    work on the same reads, stage q on strips q, q + P, ...; strip p reads ring buffer
    p % (P + 1) and writes (p + 1) % (P + 1) (a buffer is rewritten only after its
    reader, P strips earlier on the same stage, ended). Each stage publishes its strip
    and columns done in shared memory (the writers fence every 32 columns; the stage's
    last lane, after the step's warp barrier, fences and stores the count; the readers
    poll with atomics and fence): no grid barrier, and every wait is for a warp of the
    same block, which is resident. 100 reads: 326 GCUPS, 200: 652 (P = 8). It runs by
    itself only below ``PIPE_UNITS_PER_SM`` blocks an SM: at 500 pairs, 2 warps a pair
    (984) and 8-warp blocks of 4 pairs at 8 lanes a group (1,199) lost to one warp a
    pair (1,273): the stages poll more than they compute (ncu: 12 of 32 threads active,
    twice the instructions of the warp-a-pair kernel for the same cells; bench/NOTES.md
    run 8). Any read length works; the buffers in flight are capped to a quarter of
    free device memory.

    *Column ranges* (:func:`column_cuts`, :func:`choose_ranges`): where no edge crosses
    a column ``c`` (the two strands of a graph without inversions: Kahn's LIFO order
    finishes one strand's component before the other's), the columns before and after
    ``c`` are two independent DPs. A batch that gives the GPU fewer than
    ``FILL_WARPS_PER_SM`` warps an SM splits every read (pair) into such ranges, each a
    unit of its own (a warp's groups share one range: the same columns), and the host
    combines the ranges' end cells in V0's order. Unlike pipelined stages, the units
    never wait for each other: 1,000 reads of 10 kbp run as 1,000 warps of half the
    columns (one strand each) instead of 500 of all of them.

Ends and ties
    Local: each lane keeps its first strictly better column maximum (columns arrive in
    ascending order) and, on improvement, the smallest row holding it; lanes and strips
    are combined lexicographically (score desc, j asc, i asc): the V0 rule.
    Semiglobal: row m, smallest j; global: row m at sinks' last columns. Global row 0
    (``H[0][j] = E[0][j]``, deletion of a graph prefix) depends on the graph only and
    is computed on the host.

Traceback
    Not in this kernel (it keeps no direction data): ``traceback=True`` runs
    :func:`s2g.traceback.traceback_batch` from the end cells it returns; with a GPU
    that is :mod:`s2g.gpu_traceback` (each read's window, 4-bit directions, walked on
    the device), and ``s2g align`` runs it right after each batch's kernel.

Simulator
    Under ``NUMBA_ENABLE_CUDASIM=1`` the same kernel is built with a shared-memory
    exchange and ``syncthreads`` in place of the shuffles, one warp per block
    (tests/fast_cudasim_check.py).

Diagnostics (environment, read at import; bench/fast_profile.py uses them)
    ``S2G_FAST_NSH`` slots kept in shared memory (``auto``), ``S2G_FAST_MAXREG`` a
    register cap for ptxas, ``S2G_FAST_BLOCK`` threads per block (128),
    ``S2G_FAST_EXCHANGE=shared`` the simulator's exchange on a real GPU,
    ``S2G_FAST_PAIR=0`` the 32-bit kernel in local mode too.

Status
    Every read's status starts at ST_NOT_RUN; the kernel writes ST_OK. The host raises
    :class:`s2g.errors.S2GError` if any read was not processed.
"""
from __future__ import annotations

import os
import time
import warnings

import numba
import numpy as np

from .._numba import NJIT
from ..dp import GLOBAL, LOCAL, SEMIGLOBAL
from ..errors import S2GError
from ..result import BatchResult
from ..scoring import NEG_INF, Mode, fits_int32
from . import _devpool
from .codegen import allow_shared, emit_rows, load_source

# ---------------------------------------------------------------- limits and config
WARP = 32
BLOCK = int(os.environ.get("S2G_FAST_BLOCK", 128))  # 4 warps: enough blocks per SM for latency hiding, small tail
SHORT_G = 8                  # lanes per read for reads up to SHORT_G * MAX_K bases
MAX_K = 24                   # rows per lane (registers: 2 x K scores + K read codes)
# long reads: a warp per strip (one group per warp: the pipeline's unit; 32 x 38 pair rows
# ran 1,273 GCUPS on 1,000 x 10 kbp reads against 396 at 8 x 24, H100, before pipelining)
LONG_G, LONG_K = 32, 24      # 32-bit kernel: strips of 768 rows
PAIR_LONG_K = 38             # pair kernel: strips of 1,216 rows
# big batches of long reads: 8-lane groups (the long-read kernel before session 12) diverge
# less than warps, and a batch that fills the GPU with them ran 2,532 GCUPS (H200, 12,672
# x 10 kbp reads, one full wave; 8,192 reads: 2,170) against 1,273 for warps at 1,000
# reads (H100, where 8 x 24 ran 396). From BIG_UNITS_PER_SM reads (pairs) an SM (~6,300
# reads on 132 SMs, where 8 x 24 reaches ~1,270 in proportion to that full wave's rate)
BIG_G, BIG_K = 8, 24
BIG_UNITS_PER_SM = 24

K_CHOICES = (4, 8, 13, 19, 24)   # 8 x 13 = 104 rows: 100 bp reads; 8 x 19 = 152: 150 bp
# The pair kernel: 4 lanes x 38 rows for 150 bp reads (255 registers, no spills; 8 warps
# per SM against 12 at 8 x 19, but the column's work is shared by twice the cells and a
# merge column meets 4 consecutive lanes, not 8): DRB1 2,004 -> 2,186, SNP node 10
# 1,868 -> 2,379, node 50 2,716 -> 3,039, no edges 3,134 -> 3,286 (bench/NOTES.md run 7)
PAIR_G = 4
PAIR_K_CHOICES = (8, 13, 19, 26, 38)   # 4 x 26 = 104 rows: 100 bp; 4 x 38 = 152: 150 bp
# Reads of 153-304 bp (Illumina 2 x 250 / 2 x 300) in one strip of 8 lanes x 26 or 38 rows
# instead of several 8 x 24 strips (a 300 bp read: 384 rows, 2 strips, their boundary
# rows through global memory) or, in small batches, one 1,216-row warp strip (25% of it
# used). H100, SNP 100 kbp graph, 32,768 x 300 bp: 2,286 GCUPS in 8 x 24 strips, 2,967 in
# one 8 x 38 strip (bench/NOTES.md run 14)
PAIR_WIDE_G = 8
#: register cap per thread (0 = ptxas's choice; it took 168 for K = 19: 3 blocks per SM)
MAX_REGISTERS = int(os.environ.get("S2G_FAST_MAXREG", 0))
BLOCKS_PER_SM = 16           # persistent grid: at most this many blocks per SM
BND_MEM_FRACTION = 0.25      # long-read strip buffers use at most this of free memory
#: long reads: the groups of a block share one read (pair), a strip each in flight
#: (``S2G_FAST_PIPE=0``: one group per read, its strips in sequence)
PIPE = os.environ.get("S2G_FAST_PIPE", "1") != "0"
PIPE_MAX_GROUPS = 32         # shared words per block for the pipeline's counters
#: stages a block of the pipelined kernel on a GPU (``S2G_FAST_PIPE_P``: a bench knob;
#: 0: :func:`pipe_groups`'s choice)
PIPE_P = int(os.environ.get("S2G_FAST_PIPE_P", "0"))
PIPE_MAX_P = 8               # groups (warps) a read: 8 x 32 threads x 255 registers = an SM
PUBLISH_EVERY = 32           # a producing group publishes its progress every 32 columns
#: the pipelined kernel runs (automatically) for batches of fewer reads (pairs) than this
#: many per SM: at 500 pairs (3.8 an SM) one warp per pair ran 1,273 GCUPS against 984
#: for 2 warps a pair and 1,199 for 8 x 38 stages of 4 pairs (H100, 10 kbp reads)
PIPE_UNITS_PER_SM = 2

# column info word: bits 0-2 graph base (N -> 5, never equal to a read code),
# bit 3 merge (first column of a non-simple node), bit 4 virtual (first column of a
# source node), bit 5 sink (last column of a sink node), bit 6 keep (a merge column one
# of whose predecessors is the previous column: its rows stay in registers and only the
# other predecessors come from slots), bits 8.. slot + 1 to store
CI_BASE = 7
CI_MERGE = 1 << 3
CI_VIRT = 1 << 4
CI_SINK = 1 << 5
CI_KEEP = 1 << 6
CI_SLOT_SHIFT = 8
GRAPH_N = 5
READ_PAD = 6                 # code of rows past the read's end (never matches)
# mword of a merge column: up to PACKED_PREDS predecessor slots + 1, SLOT_BITS each
# (one load, prefetched with colinfo); -1: read them from the CSR (mptr, mslot)
SLOT_BITS = 10
SLOT_MASK = (1 << SLOT_BITS) - 1
PACKED_PREDS = 3

ST_OK, ST_NOT_RUN = 0, 1


# ---------------------------------------------------------------- host-side tables

def _column_tables(base, node_start, pred_ptr, pred_idx, slot, is_sink, mode, o, e, vslot):
    """colinfo, mword, merge CSR over columns (mptr, mslot), row 0 of the mode (H0 - o - e).

    Kernel slots are the graph's slots + 1: slot ``vslot`` (= the graph's n_slots, the
    last, always in global memory) is the *virtual* column before every source node
    (each lane writes it at the start of a strip), so that a source's first column is an
    ordinary merge column with one predecessor (no third code path, whose register
    copies cost ~4 instructions per cell on every column; bench/NOTES.md run 4).

    numpy, no Numba: the tables are built before the first launch, and a first compiled
    call would start Numba's CPU target there (0.4-0.6 s on the GPU machine's host)
    instead of while the kernel runs (:func:`s2g._numba.start_cpu_target`); global
    mode's row 0 (a pass in topological order) is the one compiled part.
    """
    node_start = np.asarray(node_start, np.int64)
    ptr = np.asarray(pred_ptr, np.int64)
    n = len(node_start) - 1
    N = int(node_start[n])
    lens = np.diff(node_start)
    indeg = np.diff(ptr)
    v_all = np.arange(n, dtype=np.int64)
    tgt = np.repeat(v_all, indeg)                    # each edge's node, in CSR order
    src = np.asarray(pred_idx[:ptr[n]], np.int64)
    first = np.full(n, -2, np.int64)
    has = indeg > 0
    first[has] = src[ptr[:-1][has]]
    simple = (indeg == 1) & (first == v_all - 1)
    source = indeg == 0
    merge = ~simple & ~source                        # a merge column with predecessors
    prev = src == tgt - 1                            # edges from the previous column
    keep = merge & (np.bincount(tgt[prev], minlength=n) > 0)
    live = lens > 0                                  # (a node without columns adds nothing)
    # colinfo: the base; flags on a node's first and last column
    colinfo = np.where(base >= 4, GRAPH_N, base).astype(np.int32)
    s0 = node_start[:-1][live]
    f0 = np.where(source, CI_VIRT | CI_MERGE, 0) | np.where(merge, CI_MERGE, 0) \
        | np.where(keep, CI_KEEP, 0)
    slot64 = np.asarray(slot, np.int64)
    f1 = np.where(np.asarray(is_sink) != 0, CI_SINK, 0) \
        | np.where(slot64 >= 0, (slot64 + 1) << CI_SLOT_SHIFT, 0)
    colinfo[s0] |= f0[live].astype(np.int32)
    colinfo[node_start[1:][live] - 1] |= f1[live].astype(np.int32)
    # merge lists: a source's the virtual slot; a merge's predecessors but v - 1 (keep)
    cnt = np.where(live & source, 1, 0) + np.where(live & merge, indeg - keep, 0)
    off = np.zeros(n + 1, np.int64)
    np.cumsum(cnt, out=off[1:])
    n_m = int(np.where(simple, 0, np.maximum(indeg, 1)).sum())
    mslot = np.zeros(max(n_m, 1), np.int32)
    sel = np.nonzero((live & merge)[tgt] & ~prev)[0]
    st = tgt[sel]
    rank = np.arange(len(sel), dtype=np.int64) - np.searchsorted(st, st)
    sq = slot64[src[sel]]
    mslot[off[st] + rank] = sq
    vs = np.nonzero(live & source)[0]
    mslot[off[vs]] = vslot
    mptr = np.empty(N + 1, np.int32)
    mptr[:N] = np.repeat(off[1:], lens)              # past the node's own entries ...
    mptr[s0] = off[:-1][live]                        # ... but at its first column
    mptr[N] = off[n]
    # mword: up to PACKED_PREDS slots + 1 of SLOT_BITS each, else -1 (read the CSR)
    mword = np.zeros(N, np.int32)
    mword[node_start[vs]] = vslot + 1 if vslot + 1 < SLOT_MASK else -1
    ok = (sq + 1 < SLOT_MASK) & (rank < PACKED_PREDS)
    field = np.where(ok, (sq + 1) << (SLOT_BITS * np.minimum(rank, PACKED_PREDS)), 0)
    word = np.bincount(st, weights=field, minlength=n).astype(np.int64)   # < 2**30: exact
    bad = np.bincount(st, weights=~ok, minlength=n) > 0
    mv = np.nonzero(live & merge)[0]
    mword[node_start[mv]] = np.where(bad[mv], -1, word[mv])
    # row 0 (s2g.dp.column: global H[0] = E[0] = PE[0]; else 0)
    if mode == GLOBAL:
        h0 = _row0_global(node_start, ptr, np.asarray(pred_idx, np.int64), o, e)
        row0 = np.maximum(h0 - o - e, NEG_INF).astype(np.int32)
    else:
        row0 = np.full(N, max(-(o + e), NEG_INF), np.int32)
    return colinfo, mword, mptr, mslot, row0


@numba.njit(**NJIT)
def _row0_global(node_start, pred_ptr, pred_idx, o, e):
    """Global mode's ``H[0][j]`` per column (= E[0][j]): a gap from the virtual column
    before every source, along the best walk, in topological order."""
    n_nodes = len(node_start) - 1
    h0 = np.empty(node_start[n_nodes], np.int64)
    for v in range(n_nodes):
        pa, pb = pred_ptr[v], pred_ptr[v + 1]
        simple = pb - pa == 1 and pred_idx[pa] == v - 1
        for j in range(node_start[v], node_start[v + 1]):
            if j > node_start[v] or simple:
                pe = max(h0[j - 1] - o - e, h0[j - 1] - e)
            elif pb == pa:
                pe = -(o + e)
            else:
                pe = NEG_INF
                for q in range(pa, pb):
                    lp = node_start[pred_idx[q] + 1] - 1
                    pe = max(pe, max(h0[lp] - o - e, h0[lp] - e))
            h0[j] = pe
    return h0


# ---------------------------------------------------------------- kernel factory
#
# The kernel is generated as Python source with its K rows written out as scalars
# (H0..H{K-1}, E0.., Q0..): numba-cuda 0.30.4 / LLVM stopped fully unrolling
# ``for r in range(K)`` over ``cuda.local.array(K)`` at K = 12 and 19, and the arrays
# went to local memory (152 bytes per thread for K = 19: ld.local/st.local in the cell
# loop; bench/NOTES.md run 3). Scalars cannot be demoted to memory, and every index in
# the slot store and merge becomes a base register plus an immediate.

def _render(G: int, K: int, mode: int, sim: bool, prmt_sub: bool, pair: bool = False,
            pipe: int = 0) -> str:
    """Source text of the kernel (see the module docstring).

    ``pair``: two reads per group, their scores packed in the halves of 32-bit words
    and computed with PTX ``.s16x2`` DPX arithmetic (local mode only; the host checks
    that every value fits 16 bits). Otherwise 32-bit scores, one read per group.

    ``pipe`` (SG, 0: off): the pipelined kernel for long reads. A *stage* is SG groups
    (on a GPU a warp: SG = 32 / G), each group on its own read (pair); the P stages of a
    block work on the same SG reads, stage q on strips q, q + P, ..., each strip's bottom
    row handed to the next stage through a ring of P + 1 column buffers per read, with
    progress counters in shared memory (see "Long reads" in the module docstring). A
    stage moves in lockstep (a warp), so it waits and publishes as one. The simulator
    form synchronises each group and stage by itself (:mod:`s2g.variants._simsync`).
    """
    ST = G * pipe                         # threads a stage
    IS_LOCAL = mode == LOCAL
    IS_SEMI = mode == SEMIGLOBAL
    assert not pair or (IS_LOCAL and prmt_sub)
    R = lambda text, ind, **kw: emit_rows(K, text, ind, **kw)  # noqa: E731
    if pair:
        MX = lambda x, y: f"vmax({x}, {y})"  # noqa: E731
        AD = lambda x, y: f"vadd({x}, {y})"  # noqa: E731
    else:
        MX = lambda x, y: f"max({x}, {y})"  # noqa: E731
        AD = lambda x, y: f"int32({x} + {y})"  # noqa: E731
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
    X = lambda s, ind: s.format(i=" " * ind)  # noqa: E731
    # x * km + ka: x where km = 1, ka = 0; the sentinel where km = 0, ka = NIV (one IMAD)
    KA = (lambda x: f"s32(int({x}) * int(km) + int(ka))") if sim else (
        lambda x: f"int32({x} * km + ka)")
    ind = lambda text, n: "\n".join(" " * n + ln for ln in text.splitlines())  # noqa: E731
    halves = ("A", "B") if pair else ("",)

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
    # F is carried one row ahead: with dg = max(diagonal + s, E), u = max(dg - o - e
    # [, -o-e local]) and o >= 0,
    #   H-o-e = max(u, F - o - e)   and   F(next row) = max(H-o-e, F - e) = max(u, F - e)
    # so the only dependency between rows is one max(F - e, u) (one DPX VIADDMNMX).
    if pair:          # column table (byte c = score against base c), rows select a byte
        subst = "prmt(gt, MISW, Q{r})"
    else:
        subst = "prmt(Q{r}, MISW, gsel)" if prmt_sub else "(sa if Q{r} == gb else sb)"
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
    lane0_row0 = (f"nhu = {row0_load}" if row0_load else "nhu = row0[cb64]")
    lane0_row0_n = (f"nhu = {row0_load}" if row0_load else "nhu = row0[cb64 + uint64(jn)]")
    src = f'''
def fast_kernel(colinfo, colsub, mword, mptr, mslot, row0, codes, roff, rlen, order, rlo,
                n_reads, n_rng, n_slots, n_sh, a, b, o, e, kNEGE, kNOE, kMISW, store, bndH, bndF, out_s, out_i,
                out_j, status):
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
            # int32 column counters and unsigned indices: numba's int64 loop index and
            # its negative-index wraparound cost ~20 instructions per column otherwise
            for s in range(int32(NC32 + G - 1)):
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
                    if info & CI_MERGE:
                        # keep: the previous column stays (x 1 + 0); else reset (x 0 + NIV).
                        # Multiply-adds run on the FMA pipe: selects would take 2K + 1
                        # instructions of the ALU pipe, the kernel's bottleneck (ncu)
                        km = opaque(int32((info >> CI_KEEP_BIT) & 1))
                        ka = int32(NIV & (km - 1))
                        dgo = {KA("dgo")}
{R("H{r} = " + KA("H{r}") + chr(10) + "E{r} = " + KA("E{r}"), 24)}
                        pw = mw                       # up to 3 slots + 1, packed ...
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
                            if sl < n_sh32:
                                sp = uint64(shb + sl * SWW)
                                dgo = {MX("dgo", "shm[sp]")}
{R("H{r} = " + MX("H{r}", "shm[sp + W{r1}]"), 32)}
{R("E{r} = " + MX("E{r}", "shm[sp + W{rk}]"), 32)}
                            else:
                                sp = uint64(sbase + (sl - n_sh) * SW)
                                dgo = {MX("dgo", "store[sp]")}
{R("H{r} = " + MX("H{r}", "store[sp + U{r1}]"), 32)}
{R("E{r} = " + MX("E{r}", "store[sp + U{rk}]"), 32)}
                    f = fu                            # F of the first row (carried down)
                    dd = dgo
                    {track_init}
{R(cell, 20)}
                    sl = int32(info >> CI_SLOT_SHIFT)
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
{ind(publish_end, 12)}
            {sync}
{ind(publish_after, 12)}
{combine}{reduce_out}
'''
    return src


def prmt_scores(a: int, b: int, o: int, e: int) -> bool:
    """Whether the substitution scores (+ o + e) fit the PRMT byte tables (signed bytes)."""
    return all(-128 <= v <= 127 for v in (a + o + e, o + e - b))


#: the 16-bit sentinel of the pair kernel (every real value of local mode is >= -o-e-e)
NEG_INF16 = -16384
#: S2G_FAST_PAIR=0 turns the 16-bit pair kernel off (a diagnostic: 32-bit everywhere)
PAIR = os.environ.get("S2G_FAST_PAIR", "1") != "0"

#: What this process's launches of :func:`run_kernel` cost (``s2g align --timings`` prints
#: it): launches, DP cells (read bases x graph columns), the kernels' seconds (CUDA events
#: around each launch), run_kernel's wall seconds (the kernel, its buffers, transfers) and
#: its setup before the launch (graph tables, loading the kernel, buffers)
PROFILE = {"launches": 0, "cells": 0, "kernel": 0.0, "wall": 0.0, "setup": 0.0}


def _pack16(v: int) -> int:
    """``v`` in both 16-bit halves of a signed 32-bit word."""
    w = (v & 0xFFFF) * 0x10001
    return w - (1 << 32) if w >= 1 << 31 else w


def pair_fits(scoring, mode, max_len: int) -> bool:
    """Whether the 16-bit pair kernel is exact for this batch (else 32 bits, one read).

    Local mode only. Every value it holds is H - o - e, E, E - e or F of a cell, a
    substitution byte, or the sentinel: H lies in [0, a * m], the others in
    [-(o + e) - e, a * m], so ``a * m + o + 2e`` must stay below the sentinel's distance
    from the 16-bit limits (with room for one more ``- e`` on the sentinel itself).
    """
    a, b, o, e = scoring.as_tuple()
    if Mode(int(mode)) != Mode.LOCAL or not prmt_scores(a, b, o, e):
        return False
    return a * (max_len + 1) + o + 2 * e < 32000 and o + 3 * e < -NEG_INF16 // 2


def _module_text(G: int, K: int, mode: int, sim: bool, prmt_sub: bool = True,
                 pair: bool = False, pipe: int = 0) -> str:
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
    from . import _ptx
    head = [f"# generated by s2g.variants.fast (G={G}, K={K}, mode={mode}, sim={sim}, "
            f"prmt={prmt_sub}, pair={pair}, pipe={pipe}, _ptx v{_ptx.VERSION}); do not edit",
            "import numpy as np", "from numba import cuda, int32, uint32, uint64",
            "from s2g.variants._ptx import " + (
                "prmt_py as prmt, vmax_py as vmax, vadd_py as vadd, opaque_py as opaque, s32"
                if sim else "prmt, vmax, vadd, opaque")]
    if sim and pipe:
        head.append("from s2g.variants._simsync import gsync, pause")
    head.append("")
    head += [f"{k} = {v}" for k, v in ints.items()]
    head += [f"NI = int32({int(NEG_INF)})", "Z = int32(0)", "M1 = int32(-1)",
             f"NI2 = int32({_pack16(NEG_INF16)})       # NEG_INF16 in both halves"]
    # unsigned offsets: a signed index costs a negative-index wraparound (setp + selp +
    # 64-bit adds) per access in numba; uint64 base + uint64 constant costs none
    head += [f"U{w} = np.uint64({w})\nW{w} = np.uint64({w * WARP})" for w in range(SW + 1)]
    return "\n".join(head) + "\n" + _render(G, K, int(mode), bool(sim), bool(prmt_sub),
                                            bool(pair), int(pipe))


def kernel_source(G: int, K: int, mode: int, sim: bool = False, cache: bool = True,
                  prmt_sub: bool = True, pair: bool = False, note: str = "", pipe: int = 0):
    """The Python function of the kernel for ``G`` lanes x ``K`` rows in ``mode``.

    ``sim``: build the CUDA-simulator form (shared-memory exchange + syncthreads in
    place of shuffles; launch one warp per block). Returned undecorated so that tests
    can ``compile_ptx`` it; its text is ``fast_kernel.__s2g_source__``.

    The module is written to a file named by its hash under ``$S2G_CACHE_DIR`` (default
    ``~/.cache/s2g/kernels``) and imported from there, so that Numba's on-disk cache
    (``cuda.jit(cache=True)``) can key on a source file: the first run compiles
    (about 14 s for K = 19 on the H200 host), later runs load the cubin. Where no
    writable folder exists the text is executed in memory (no cache).
    """
    assert WARP % G == 0 and K >= 1
    text = _module_text(G, K, int(mode), bool(sim), bool(prmt_sub), bool(pair), int(pipe))
    if note:          # compile options: part of the file's hash, so of the cache's key
        text = f"# {note}\n" + text
    fn = load_source(text, "s2g_fast_", "fast_kernel",
                     f"<s2g.fast kernel G={G} K={K} mode={int(mode)} sim={sim}>", cache)
    return fn


def kernel_signature():
    """Explicit argument types of :func:`kernel_source`'s kernel (for compile_ptx)."""
    from numba import types as T
    i32a = T.int32[::1]
    return (i32a, i32a, i32a, i32a, i32a, i32a, T.uint8[::1], T.int64[::1], T.int32[::1], i32a,
            i32a, T.int64, T.int64, T.int64, T.int64, T.int32, T.int32, T.int32, T.int32,
            T.int32, T.int32,
            T.int32, i32a, i32a, i32a, i32a, i32a, i32a, i32a)


_KERNELS: dict = {}

#: "shfl" (warp shuffles) or "shared" (the simulator's shared-memory exchange with
#: syncthreads, one warp per block, also on a real GPU: a diagnostic and fallback)
EXCHANGE = os.environ.get("S2G_FAST_EXCHANGE", "shfl")


def _shared_exchange() -> bool:
    return _sim() or EXCHANGE == "shared"


def _sim() -> bool:
    from numba import config
    return bool(config.ENABLE_CUDASIM)


def get_kernel(G, K, mode, prmt_sub=True, pair=False, pipe=0):
    """The compiled kernel; ``pipe``: groups a stage of the pipelined kernel (0: off)."""
    key = (G, K, int(mode), _shared_exchange(), MAX_REGISTERS, _sim(), bool(prmt_sub),
           bool(pair), int(pipe))
    if key not in _KERNELS:
        from numba import cuda
        opts = {"max_registers": MAX_REGISTERS} if MAX_REGISTERS and not key[3] else {}
        # numba's on-disk cache keys on the source, not on max_registers: a cap goes in
        # the source's text (a cached cubin of another cap was loaded silently before)
        fn = kernel_source(G, K, int(mode), sim=key[3], prmt_sub=bool(prmt_sub),
                           pair=bool(pair), note=f"max_registers={MAX_REGISTERS}" if opts else "",
                           pipe=int(pipe))
        if _sim():
            _KERNELS[key] = cuda.jit(fn)
        else:
            if fn.__s2g_cached__ and os.environ.get("S2G_NO_CACHE", "") == "":
                opts["cache"] = True
            _KERNELS[key] = cuda.jit(kernel_signature(), **opts)(fn)
    return _KERNELS[key]


def choose_config(max_len: int, pair: bool = False, n_units=None, sms=None):
    """(G, K) for a batch: one strip when it covers the reads — of PAIR_G lanes for the
    pair kernel (up to PAIR_G x 38 = 152 rows), then PAIR_WIDE_G lanes (up to 304 rows),
    else of SHORT_G lanes — or the long-read
    kernel's strips of LONG_G x PAIR_LONG_K (pair) or LONG_G x LONG_K rows; BIG_G x BIG_K
    for a batch of ``n_units`` reads (pairs) of at least BIG_UNITS_PER_SM an SM (``sms``
    SMs)."""
    if pair:
        for G in (PAIR_G, PAIR_WIDE_G):
            need = max(1, -(-max_len // G))
            for K in PAIR_K_CHOICES:
                if need <= K:
                    return G, K
    else:
        need = max(1, -(-max_len // SHORT_G))
        for K in K_CHOICES:           # few distinct kernels to compile (JIT costs seconds each)
            if need <= K:
                return SHORT_G, K
    if n_units is not None and sms and n_units >= BIG_UNITS_PER_SM * sms:
        return BIG_G, BIG_K
    return LONG_G, PAIR_LONG_K if pair else LONG_K

# ---------------------------------------------------------------- host pipeline

class _GraphOnDevice:
    """Column tables of one (graph, mode, scoring) on the device, built once."""

    def __init__(self, graph, mode, scoring):
        from numba import cuda
        a, b, o, e = scoring.as_tuple()
        slot, n_slots = fast_slots(graph)
        ci, mw, mp, ms, r0 = _column_tables(graph.base, graph.node_start, graph.pred_ptr,
                                            graph.pred_idx, slot, graph.is_sink, int(mode),
                                            o, e, n_slots)
        self.n_cols = len(ci)
        self.n_merge_cols = int(((ci & CI_MERGE) != 0).sum())
        self.n_keep_cols = int(((ci & CI_KEEP) != 0).sum())
        self.colinfo, self.mword = cuda.to_device(ci), cuda.to_device(mw)
        self.mptr = cuda.to_device(mp)
        self.mslot, self.row0 = cuda.to_device(ms), cuda.to_device(r0)
        self._ci, self._sc, self._sub = ci, scoring, {}

    def colsub(self, pair: bool, prmt_sub: bool):
        """The kernel's per-column substitution words (:func:`column_sub`), on the device."""
        key = (bool(pair), bool(prmt_sub))
        if key not in self._sub:
            from numba import cuda
            self._sub[key] = cuda.to_device(column_sub(self._ci, self._sc, *key))
        return self._sub[key]


def kernel_constants(scoring, pair: bool):
    """(-e, -o-e, PRMT mismatch word) as the kernel takes them: in both 16-bit halves for
    the pair kernel; the mismatch score ``o + e - b`` in every byte."""
    a, b, o, e = scoring.as_tuple()
    w = (lambda v: np.int32(_pack16(v))) if pair else np.int32
    mis = _mismatch_word(scoring)
    return w(-e), w(-(o + e)), np.int32(mis - (1 << 32) if mis >= 1 << 31 else mis)


def _mismatch_word(scoring) -> int:
    """The PRMT tables' mismatch byte ``o + e - b`` in all four bytes (unsigned 32 bits)."""
    a, b, o, e = scoring.as_tuple()
    return ((o + e - b) & 0xFF) * 0x01010101


def column_sub(colinfo, scoring, pair: bool, prmt_sub: bool) -> np.ndarray:
    """Per column, what the kernel's substitution needs of the graph base ``g``
    (``colinfo & CI_BASE``; N is GRAPH_N): the pair kernel's 4-byte score table (byte
    ``c`` = score(c, g) + o + e, PRMT-selected by the read base), the 32-bit kernel's
    PRMT selector of ``g``'s byte, or ``g`` itself (compare-and-select fallback)."""
    a, b, o, e = scoring.as_tuple()
    g = (np.asarray(colinfo) & CI_BASE).astype(np.int64)
    if pair:
        sa, sb = a + o + e, o + e - b
        mis = _mismatch_word(scoring)
        w = np.where(g < 4, mis ^ (((sa ^ sb) & 0xFF) << ((g & 3) * 8)), mis)
        return (w & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
    if prmt_sub:
        return (g * 0x1111 + 0x8880).astype(np.int32)
    return g.astype(np.int32)


_GCACHE: dict = {}


def _graph_tables(graph, mode, scoring):
    key = (id(graph), int(mode), scoring.as_tuple())
    hit = _GCACHE.get(key)
    if hit is None or hit[0] is not graph:
        _GCACHE.clear()           # one graph at a time keeps device memory bounded
        hit = (graph, _GraphOnDevice(graph, mode, scoring))
        _GCACHE[key] = hit
    return hit[1]


def _resident_groups(G):
    from numba import cuda
    if _sim():
        return 2 * (WARP // G)
    dev = cuda.get_current_device()
    return dev.MULTIPROCESSOR_COUNT * BLOCKS_PER_SM * BLOCK // G


#: node_bound slots kept in shared memory (the rest in global memory); "auto" = as many
#: as fit without lowering the occupancy that the kernel's registers allow
SHARED_SLOTS = os.environ.get("S2G_FAST_NSH", "auto")
SMEM_PER_SM = 233472          # H100/H200: 228 KB per SM, 227 KB per block (opt-in)
SMEM_BLOCK_RESERVED = 1024    # the driver's per-block reserve


_SLOTS: dict = {}


def fast_slots(graph):
    """(slot, n_slots) of the kernel: FlatGraph's liveness slots, except that a merge
    column reads its predecessor v-1 from the registers (the previous column), so a node
    needs a slot only for its other non-simple successors (``keep_prev``)."""
    hit = _SLOTS.get(id(graph))
    if hit is None or hit[0] is not graph:
        from ..graph_core import _liveness_slots, _small
        slot, n = _small(_liveness_slots, graph.n_nodes)(graph.n_nodes, graph.pred_ptr,
                                                         graph.pred_idx, True)
        _SLOTS.clear()
        hit = _SLOTS[id(graph)] = (graph, slot, int(n))
    return hit[1], hit[2]


def kernel_slots(graph) -> int:
    """node_bound slots per lane in the kernel: :func:`fast_slots`' + the virtual slot (last)."""
    return fast_slots(graph)[1] + 1


def shared_slots(kern, G, K, n_slots, block):
    """(slots in shared memory, dynamic shared bytes per block) for a launch.

    ``n_slots``: the kernel's slots (:func:`kernel_slots`); the last, the virtual slot,
    always stays in global memory (it is read at source columns only).
    """
    words = -(-block // WARP) * (2 * K + 1) * WARP     # one slot, every warp of a block
    n_slots = max(n_slots - 1, 0)                       # candidates for shared memory
    if SHARED_SLOTS != "auto":
        n_sh = min(n_slots, int(SHARED_SLOTS))
    elif _sim():
        n_sh = min(n_slots, 1)                          # exercise both paths
    else:
        from numba import cuda
        dev = cuda.get_current_device()
        try:
            per_sm = int(dev.MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)
            per_block = int(dev.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
        except Exception:                               # noqa: BLE001 - attribute names
            per_sm, per_block = SMEM_PER_SM, 48 * 1024
        regs = max(1, kern.get_regs_per_thread())
        warps = 65536 // (-(-regs // 8) * 8 * WARP)
        blocks = max(1, min(32, warps // (block // WARP)))
        budget = min(per_block, per_sm // blocks - SMEM_BLOCK_RESERVED)
        n_sh = max(0, min(n_slots, budget // (4 * words)))
    nbytes = 4 * words * n_sh
    static = 3 * 4 * WARP                               # the kernel's exchange buffers
    if nbytes + static > 48 * 1024 and not _sim() and not allow_shared(kern, nbytes):
        n_sh = min(n_sh, (48 * 1024 - static) // (4 * words))
        nbytes = 4 * words * n_sh
    return n_sh, nbytes


def pipe_groups(G, npass, n_units, pipe=None):
    """(P, SG) of the pipelined kernel: P stages a block, SG groups (reads or pairs) a
    stage; (0, 0) where the kernel runs one group per read in sequence: reads of one
    strip, ``S2G_FAST_PIPE=0``, ``pipe=False``.

    On a GPU a stage is a warp (SG = 32 / G); automatically only for batches of fewer
    blocks (SG reads or pairs each) than ``PIPE_UNITS_PER_SM`` an SM, with 8 stages a
    block where every block has an SM to itself, else 4 (at most a read's strips, a
    power of two); ``pipe=True``: 8 stages whatever the batch. Under the simulator: 2-3
    stages of SG groups of a few threads (``pipe`` an int: that SG).
    """
    if pipe is False or (pipe is None and not PIPE) or npass < 2:
        return 0, 0
    if _sim() or _shared_exchange():
        if not _sim():
            return 0, 0                    # the shared-memory exchange is one warp a block
        SG = 2 if G <= 8 else 1
        if pipe is not None and not isinstance(pipe, bool):
            SG = int(pipe)
        P = min(3, npass, WARP // (G * SG))
        return (P, SG) if P >= 2 else (0, 0)
    SG = WARP // G
    blocks = -(-n_units // SG)
    sms = _sm_count()
    if pipe is None and blocks >= PIPE_UNITS_PER_SM * sms:
        return 0, 0                        # one warp a read (pair) fills the GPU better
    P = PIPE_P or (8 if pipe is True or blocks <= sms else 4)
    P = min(P, PIPE_MAX_P, npass, PIPE_MAX_GROUPS // SG)    # shared words: P x SG
    P = 1 << (P.bit_length() - 1)          # 2, 4, 8: whole blocks an SM
    return (P, SG) if P >= 2 else (0, 0)


def plan(graph, reads_max_len, n_reads, G=None, K=None, pair=False, pipe=None):
    """Launch plan: (G, K, blocks, block, n_groups, P, SG) for a batch (also used by
    bench); ``n_reads``: the kernel's work units (read pairs for the pair kernel); P, SG:
    stages a block and groups a stage of the pipelined kernel (:func:`pipe_groups`; 0:
    not pipelined)."""
    from numba import cuda
    if G is None:
        G, K = choose_config(reads_max_len, pair, n_reads, None if _sim() else _sm_count())
    npass = -(-reads_max_len // (G * K))
    P, SG = pipe_groups(G, npass, n_reads, pipe)
    if P:
        # SG reads (pairs) a block, each with P + 1 column buffers (H and F: 8 bytes)
        blocks = max(1, -(-n_reads // SG))
        if not _sim():
            free, _ = cuda.current_context().get_memory_info()
            free += _devpool.pool().held("fast.bndH", "fast.bndF")
            cap = int(free * BND_MEM_FRACTION) // max(1, 8 * SG * (P + 1) * graph.n_bases)
            blocks = max(1, min(blocks, cap))
        assert P * SG <= PIPE_MAX_GROUPS, (P, SG)
        return G, K, blocks, P * SG * G, blocks * P * SG, P, SG
    block = WARP if _shared_exchange() else BLOCK
    groups = min(-(-n_reads // (block // G)) * (block // G), _resident_groups(G))
    if npass > 1 and not _sim():
        free, _ = cuda.current_context().get_memory_info()
        free += _devpool.pool().held("fast.bndH", "fast.bndF")   # reused, not new
        cap = int(free * BND_MEM_FRACTION) // max(1, 8 * graph.n_bases)
        cap = max(block // G, cap // (block // G) * (block // G))
        groups = min(groups, cap)
    groups = max(groups, block // G)
    return G, K, groups * G // block, block, groups, 0, 0


#: warps a batch should give the GPU an SM: batches of fewer (few long reads) split the DP's
#: columns into independent ranges (:func:`choose_ranges`)
FILL_WARPS_PER_SM = 8
#: column ranges a unit: "auto" (:func:`choose_ranges`) or a number (1: no split)
RANGES = os.environ.get("S2G_FAST_RANGES", "auto")
MAX_RANGES = 16

_CUTS: dict = {}


def column_cuts(graph) -> np.ndarray:
    """Columns ``c`` (node starts, ascending) where the DP falls apart: no edge goes from a
    node before ``c`` to one at or after it, so columns ``[.., c)`` and ``[c, ..)`` never meet
    (a read's H, E and F on one side do not depend on the other). The two strands of a
    graph without inversions are such halves: the topological order (Kahn, LIFO) finishes
    one strand's component before it starts the other."""
    hit = _CUTS.get(id(graph))
    if hit is not None and hit[0] is graph:
        return hit[1]
    n = int(graph.n_nodes)
    ptr = np.asarray(graph.pred_ptr, np.int64)
    minpred = np.arange(n, dtype=np.int64)
    has = ptr[1:] > ptr[:-1]
    if n and has.any():
        # consecutive non-empty predecessor lists tile pred_idx: one reduceat
        minpred[has] = np.minimum.reduceat(np.asarray(graph.pred_idx, np.int64), ptr[:-1][has])
    suf = np.minimum.accumulate(minpred[::-1])[::-1] if n else minpred
    k = np.arange(1, n)
    cuts = np.asarray(graph.node_start, np.int64)[k[suf[1:] >= k]]
    cuts = cuts[(cuts > 0) & (cuts < int(graph.n_bases))]
    _CUTS.clear()
    _CUTS[id(graph)] = (graph, cuts)
    return cuts


def column_ranges(graph, n_rng: int) -> np.ndarray:
    """Starts of ``n_rng`` column ranges (at :func:`column_cuts`, as even as they allow) and
    the column count: int32 ``[0, c1, .., N]``; fewer where the graph has fewer cuts."""
    N = int(graph.n_bases)
    cuts = column_cuts(graph)
    n_rng = max(1, min(int(n_rng), len(cuts) + 1))
    lo, k = [0], 0                      # cuts[k:] are still free
    for q in range(1, n_rng):
        # the cut nearest q / n_rng of the columns, leaving one for each later range
        cand = cuts[k:len(cuts) - (n_rng - 1 - q)]
        x = int(np.argmin(np.abs(cand - q * N / n_rng)))
        lo.append(int(cand[x]))
        k += x + 1
    return np.asarray(lo + [N], np.int32)


def choose_ranges(graph, G, n_units, ranges=None) -> int:
    """Column ranges a read (pair) is split into: enough for :data:`FILL_WARPS_PER_SM` warps
    an SM where the batch gives fewer (``n_units`` reads or pairs, ``WARP // G`` a warp), at
    most the graph's pieces (:func:`column_cuts`); ``ranges`` (or ``S2G_FAST_RANGES``) a
    number forces it. 1 under the simulator unless forced."""
    want = _forced_ranges(ranges)
    if want is None:
        if _sim():
            return 1
        sms = _sm_count()
        warps = max(1, -(-n_units // (WARP // G)))
        want = FILL_WARPS_PER_SM * sms // warps
    return max(1, min(int(want), MAX_RANGES, len(column_cuts(graph)) + 1))


def _forced_ranges(ranges):
    """``ranges``, else ``S2G_FAST_RANGES`` as a number; None where the choice is automatic."""
    if ranges is not None:
        return int(ranges)
    return None if RANGES == "auto" else int(RANGES)


def launch_shape(graph, max_len, pair, n_units, G=None, K=None, ranges=None):
    """(G, K, ranges) of a batch of ``n_units`` reads (pairs): :func:`choose_config` and
    :func:`choose_ranges`, where choose_config counts every range a unit, and the BIG_G x
    BIG_K groups take every range the graph has (H100, 10 kbp reads, SNP 100 kbp graph:
    4,000 reads as 4,000 8-lane units of a strand each 2,256 GCUPS, against 1,873 for 2,000
    warps of both strands; 8,000 reads split 2,484, whole 2,288)."""
    if G is not None:
        return G, K, choose_ranges(graph, G, n_units, ranges)
    sms = None if _sim() else _sm_count()
    want = _forced_ranges(ranges)
    room = max(1, min(MAX_RANGES, len(column_cuts(graph)) + 1,
                      MAX_RANGES if want is None else want))
    G, K = choose_config(max_len, pair, n_units * room, sms)
    if (G, K) == (BIG_G, BIG_K):
        return G, K, room
    return G, K, choose_ranges(graph, G, n_units, ranges)


def _sm_count() -> int:
    from numba import cuda
    return int(cuda.get_current_device().MULTIPROCESSOR_COUNT)


def run_kernel(graph, codes, offsets, lengths, scoring, mode, G=None, K=None,
               events=None, pair=None, pipe=None, on_launch=None, ranges=None):
    """Launch the kernel on arrays (host numpy); returns (score, end_i, end_j) int32 arrays.

    ``pair``: the 16-bit two-reads-per-group kernel (default: where :func:`pair_fits`
    and ``S2G_FAST_PAIR`` allow it); ``False`` forces 32 bits; ``True`` where it fits.
    ``pipe``: the pipelined kernel for reads of several strips (:func:`pipe_groups`).
    ``ranges``: column ranges a read (:func:`choose_ranges`; each a unit of the kernel,
    their end cells combined here in V0's order).

    ``events``: optional (start, stop) CUDA events recorded around the launch only.
    ``on_launch``: called once the kernel is queued, before this thread waits for it (the
    aligner starts host work there that would otherwise follow the kernel).
    """
    from numba import cuda
    t_start = time.perf_counter()
    n = len(lengths)
    tab = _graph_tables(graph, mode, scoring)
    max_len = int(lengths.max(initial=0))
    fits = pair_fits(scoring, mode, max_len)
    pair = fits and (PAIR if pair is None else bool(pair))
    n_units = -(-n // 2) if pair else n
    G, K, NR = launch_shape(graph, max_len, pair, n_units, G, K, ranges)
    rlo = column_ranges(graph, NR)
    G, K, blocks, block, groups, P, SG = plan(graph, max_len, n_units * NR, G, K, pair, pipe)
    a, b, o, e = scoring.as_tuple()
    order = np.argsort(-lengths, kind="stable").astype(np.int32)
    dp = _devpool.pool()                                # buffers allocated once, reused
    d_codes = dp.put("fast.codes", codes if len(codes) else np.zeros(1, np.uint8))
    d_off = dp.put("fast.off", offsets[:-1].astype(np.int64))
    d_len = dp.put("fast.len", lengths.astype(np.int32))
    d_ord = dp.put("fast.order", order)
    d_rlo = dp.put("fast.rlo", rlo)
    prmt_sub = prmt_scores(a, b, o, e)
    kern = get_kernel(G, K, mode, prmt_sub, pair, SG)
    n_sh, sh_bytes = shared_slots(kern, G, K, kernel_slots(graph), block)
    n_gl = kernel_slots(graph) - n_sh                   # slots in global memory (>= 1)
    store = dp.empty("fast.store", groups * n_gl * (2 * K + 1) * G, np.int32)
    npass = -(-max_len // (G * K))
    bn = (blocks * SG * (P + 1) if P else groups) * graph.n_bases if npass > 1 else 1
    bndH = dp.empty("fast.bndH", bn, np.int32)
    bndF = dp.empty("fast.bndF", bn, np.int32)
    out_s = dp.empty("fast.out_s", n * NR, np.int32)      # [read][range]
    out_i = dp.empty("fast.out_i", n * NR, np.int32)
    out_j = dp.empty("fast.out_j", n * NR, np.int32)
    status = dp.put("fast.status", np.full(n * NR, ST_NOT_RUN, np.int32))
    PROFILE["setup"] += time.perf_counter() - t_start
    mine = cuda.event(), cuda.event()
    mine[0].record()
    if events:
        events[0].record()
    # The default stream, synchronised (numba-cuda 0.30 rejects a literal stream 0 with
    # a shared-memory size; its default_stream() object is the same stream).
    kern[blocks, block, cuda.default_stream(), sh_bytes](
        tab.colinfo, tab.colsub(pair, prmt_sub), tab.mword, tab.mptr, tab.mslot, tab.row0,
        d_codes, d_off, d_len, d_ord, d_rlo,
        n, NR, n_gl, n_sh, np.int32(a), np.int32(b), np.int32(o), np.int32(e),
        *kernel_constants(scoring, pair), store, bndH, bndF,
        out_s, out_i, out_j, status)
    if events:
        events[1].record()
    mine[1].record()
    if on_launch is not None:
        on_launch()
    cuda.synchronize()
    st = status.copy_to_host()
    res = (out_s.copy_to_host(), out_i.copy_to_host(), out_j.copy_to_host())
    PROFILE["launches"] += 1
    PROFILE["cells"] += int(lengths.sum(dtype=np.int64)) * int(graph.n_bases)
    PROFILE["kernel"] += max(0.0, mine[0].elapsed_time(mine[1]) / 1e3)   # simulator: -1
    PROFILE["wall"] += time.perf_counter() - t_start
    bad = np.nonzero((st != ST_OK).reshape(n, NR).any(axis=1))[0]
    if len(bad):
        raise S2GError(f"fast: GPU kernel left {len(bad)} read(s) unprocessed (first: read index "
                       f"{int(bad[0])}, status {st.reshape(n, NR)[bad[0]].tolist()}); please "
                       "report this")
    return combine_ranges(*res, NR)


def combine_ranges(s, i, j, NR):
    """Each read's end cell over its ``NR`` ranges (arrays ``[read][range]``) in V0's order:
    the highest score, then the smallest column, then the smallest row (j < 0: none)."""
    if NR == 1:
        return s, i, j
    s, i, j = (x.reshape(-1, NR) for x in (s, i, j))
    bs, bi, bj = s[:, 0].copy(), i[:, 0].copy(), j[:, 0].copy()
    for r in range(1, NR):
        x, xi, xj = s[:, r], i[:, r], j[:, r]
        better = (xj >= 0) & ((bj < 0) | (x > bs) | ((x == bs) & (
            (xj < bj) | ((xj == bj) & (xi < bi)))))
        bs = np.where(better, x, bs)
        bi = np.where(better, xi, bi)
        bj = np.where(better, xj, bj)
    return bs, bi, bj


#: reads per kernel launch (bounds host and device buffers; stream over larger inputs)
BATCH_READS = 1 << 18


def align_batch(graph, reads, scoring, mode, traceback=False, on_launch=None) -> BatchResult:
    """The variant contract; exact int32 on the GPU, or the int64 CPU path if the bound fails.
    ``on_launch``: :func:`run_kernel`'s, at the first launch (never on the CPU path)."""
    mode = Mode(int(mode))
    n = reads.n_reads
    lens = reads.lengths()
    score = np.full(n, NEG_INF, np.int64)
    end_i = np.full(n, -1, np.int64)
    end_j = np.full(n, -1, np.int64)
    if not fits_int32(scoring, mode, reads.max_len, graph.n_bases):
        warnings.warn("fast: scores may exceed int32 for this input; using the exact int64 "
                      "CPU variant 'cpu' instead", RuntimeWarning, stacklevel=2)
        from . import cpu_parallel
        return cpu_parallel.align_batch(graph, reads, scoring, mode, traceback)
    idx_all = np.nonzero(lens > 0)[0]
    for c in range(0, len(idx_all), BATCH_READS):
        idx = idx_all[c:c + BATCH_READS]
        sub_lens = lens[idx]
        offs = np.zeros(len(idx) + 1, np.int64)
        np.cumsum(sub_lens, out=offs[1:])
        # empty reads own no codes: the non-empty reads' codes are one slice of codes_flat
        ro = reads.offsets
        codes = reads.codes_flat[ro[idx[0]]:ro[idx[-1] + 1]] if len(idx) else np.zeros(0, np.uint8)
        s, i, j = run_kernel(graph, np.ascontiguousarray(codes, np.uint8), offs, sub_lens,
                             scoring, mode, on_launch=on_launch if c == 0 else None)
        ok = j >= 0
        score[idx] = np.where(ok, s, NEG_INF)
        end_i[idx] = np.where(ok, i, -1)
        end_j[idx] = np.where(ok, j, -1)
    res = BatchResult(reads.names, lens, score, end_i, end_j)
    if traceback:
        from ..traceback import traceback_batch
        traceback_batch(graph, reads, scoring, mode, res)
    return res


__all__ = ["align_batch", "kernel_source", "kernel_signature", "get_kernel", "run_kernel",
           "choose_config", "plan"]
