"""Launch geometry and choices of the ``fast`` kernel: lanes and rows (G, K), the pair
kernel, column ranges, node_bound slots in shared memory, the pipeline's stages, the
grid.

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

Knobs (s2g/config.py): ``fast_block`` threads a block and ``fast_pipe`` (fixed at
import); ``fast_pair``, ``fast_pipe_p``, ``fast_nsh`` and ``fast_ranges`` (read at each
launch).
"""
from __future__ import annotations

from ...config import compile_time, settings
from ...scoring import Mode
from .. import _devpool, _lean
from ..codegen import allow_shared
from .constants import NEG_INF16, PIPE_MAX_GROUPS, WARP
from .kernel import shared_exchange, sim
from .tables import column_cuts

#: threads a block (the ``fast_block`` knob; 128 = 4 warps: enough blocks per SM for
#: latency hiding, small tail)
BLOCK = compile_time("fast_block")
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
BLOCKS_PER_SM = 16           # persistent grid: at most this many blocks per SM
BND_MEM_FRACTION = 0.25      # long-read strip buffers use at most this of free memory
#: long reads: the groups of a block share one read (pair), a strip each in flight
#: (``fast_pipe`` off: one group per read, its strips in sequence)
PIPE = compile_time("fast_pipe")
PIPE_MAX_P = 8               # groups (warps) a read: 8 x 32 threads x 255 registers = an SM
#: the pipelined kernel runs (automatically) for batches of fewer reads (pairs) than this
#: many per SM: at 500 pairs (3.8 an SM) one warp per pair ran 1,273 GCUPS against 984
#: for 2 warps a pair and 1,199 for 8 x 38 stages of 4 pairs (H100, 10 kbp reads)
PIPE_UNITS_PER_SM = 2
SMEM_PER_SM = 233472          # H100/H200: 228 KB per SM, 227 KB per block (opt-in)
SMEM_BLOCK_RESERVED = 1024    # the driver's per-block reserve
#: warps a batch should give the GPU an SM: batches of fewer (few long reads) split the DP's
#: columns into independent ranges (:func:`choose_ranges`)
FILL_WARPS_PER_SM = 8
MAX_RANGES = 16


def prmt_scores(a: int, b: int, o: int, e: int) -> bool:
    """Whether the substitution scores (+ o + e) fit the PRMT byte tables (signed bytes)."""
    return all(-128 <= v <= 127 for v in (a + o + e, o + e - b))


def pair_fits(scoring, mode, max_len: int) -> bool:
    """Whether the 16-bit pair kernel is exact for this batch (else 32 bits, one read).
    The driver also asks the ``fast_pair`` knob (off: 32 bits everywhere).

    Local mode only. Every value it holds is H - o - e, E, E - e or F of a cell, a
    substitution byte, or the sentinel: H lies in [0, a * m], the others in
    [-(o + e) - e, a * m], so ``a * m + o + 2e`` must stay below the sentinel's distance
    from the 16-bit limits (with room for one more ``- e`` on the sentinel itself).
    """
    a, b, o, e = scoring.as_tuple()
    if Mode(int(mode)) != Mode.LOCAL or not prmt_scores(a, b, o, e):
        return False
    return a * (max_len + 1) + o + 2 * e < 32000 and o + 3 * e < -NEG_INF16 // 2


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


def _resident_groups(G):
    cuda = _lean.api()
    if sim():
        return 2 * (WARP // G)
    dev = cuda.get_current_device()
    return dev.MULTIPROCESSOR_COUNT * BLOCKS_PER_SM * BLOCK // G


def _static_shared(kern) -> int:
    """The kernel's static shared memory per block as compiled (0 for the warp-shuffle
    kernels, whose exchange buffers are optimised away); where the dispatcher cannot say,
    the shared-exchange form's 3 words a lane of a warp."""
    if not sim():
        try:
            return int(kern.get_shared_mem_per_block())
        except Exception:                               # noqa: BLE001 - API varies by version
            pass
    return 3 * 4 * WARP


def shared_slots(kern, G, K, n_slots, block):
    """(slots in shared memory, dynamic shared bytes per block) for a launch.

    ``n_slots``: the kernel's slots (:func:`kernel_slots`); the last, the virtual slot,
    always stays in global memory (it is read at source columns only).
    """
    words = -(-block // WARP) * (2 * K + 1) * WARP     # one slot, every warp of a block
    n_slots = max(n_slots - 1, 0)                       # candidates for shared memory
    static = _static_shared(kern)
    nsh = settings().fast_nsh     # slots kept in shared memory: "auto" = as many as fit
    if nsh != "auto":              # without lowering the occupancy the registers allow
        n_sh = min(n_slots, int(nsh))
    elif sim():
        n_sh = min(n_slots, 1)                          # exercise both paths
    else:
        cuda = _lean.api()
        dev = cuda.get_current_device()
        try:
            per_sm = int(dev.MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)
            per_block = int(dev.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
        except Exception:                               # noqa: BLE001 - attribute names
            per_sm, per_block = SMEM_PER_SM, 48 * 1024
        regs = max(1, kern.get_regs_per_thread())
        warps = 65536 // (-(-regs // 8) * 8 * WARP)
        blocks = max(1, min(32, warps // (block // WARP)))
        # a block's static and dynamic shared memory together stay within the opt-in
        budget = min(per_block - static, per_sm // blocks - SMEM_BLOCK_RESERVED - static)
        n_sh = max(0, min(n_slots, budget // (4 * words)))
    nbytes = 4 * words * n_sh
    if nbytes + static > 48 * 1024 and not sim() and not allow_shared(kern, nbytes):
        n_sh = min(n_sh, (48 * 1024 - static) // (4 * words))
        nbytes = 4 * words * n_sh
    return n_sh, nbytes


def pipe_groups(G, npass, n_units, pipe=None):
    """(P, SG) of the pipelined kernel: P stages a block, SG groups (reads or pairs) a
    stage; (0, 0) where the kernel runs one group per read in sequence: reads of one
    strip, the ``fast_pipe`` knob off, ``pipe=False``.

    On a GPU a stage is a warp (SG = 32 / G); automatically only for batches of fewer
    blocks (SG reads or pairs each) than ``PIPE_UNITS_PER_SM`` an SM, with 8 stages a
    block where every block has an SM to itself, else 4 (at most a read's strips, a
    power of two); ``pipe=True``: 8 stages whatever the batch. Under the simulator: 2-3
    stages of SG groups of a few threads (``pipe`` an int: that SG).
    """
    if pipe is False or (pipe is None and not PIPE) or npass < 2:
        return 0, 0
    if sim() or shared_exchange():
        if not sim():
            return 0, 0                    # the shared-memory exchange is one warp a block
        SG = 2 if G <= 8 else 1
        if pipe is not None and not isinstance(pipe, bool):
            SG = int(pipe)
        P = min(3, npass, WARP // (G * SG))
        return (P, SG) if P >= 2 else (0, 0)
    SG = WARP // G
    blocks = -(-n_units // SG)
    sms = sm_count()
    if pipe is None and blocks >= PIPE_UNITS_PER_SM * sms:
        return 0, 0                        # one warp a read (pair) fills the GPU better
    P = settings().fast_pipe_p or (8 if pipe is True or blocks <= sms else 4)
    P = min(P, PIPE_MAX_P, npass, PIPE_MAX_GROUPS // SG)    # shared words: P x SG
    P = 1 << (P.bit_length() - 1)          # 2, 4, 8: whole blocks an SM
    return (P, SG) if P >= 2 else (0, 0)


def plan(graph, reads_max_len, n_reads, G=None, K=None, pair=False, pipe=None):
    """Launch plan: (G, K, blocks, block, n_groups, P, SG) for a batch (also used by
    bench); ``n_reads``: the kernel's work units (read pairs for the pair kernel); P, SG:
    stages a block and groups a stage of the pipelined kernel (:func:`pipe_groups`; 0:
    not pipelined)."""
    cuda = _lean.api()
    if G is None:
        G, K = choose_config(reads_max_len, pair, n_reads, None if sim() else sm_count())
    npass = -(-reads_max_len // (G * K))
    P, SG = pipe_groups(G, npass, n_reads, pipe)
    if P:
        # SG reads (pairs) a block, each with P + 1 column buffers (H and F: 8 bytes)
        blocks = max(1, -(-n_reads // SG))
        if not sim():
            free, _ = cuda.current_context().get_memory_info()
            free += _devpool.pool().held("fast.bndH", "fast.bndF")
            cap = int(free * BND_MEM_FRACTION) // max(1, 8 * SG * (P + 1) * graph.n_bases)
            blocks = max(1, min(blocks, cap))
        assert P * SG <= PIPE_MAX_GROUPS, (P, SG)
        return G, K, blocks, P * SG * G, blocks * P * SG, P, SG
    block = WARP if shared_exchange() else BLOCK
    groups = min(-(-n_reads // (block // G)) * (block // G), _resident_groups(G))
    if npass > 1 and not sim():
        free, _ = cuda.current_context().get_memory_info()
        free += _devpool.pool().held("fast.bndH", "fast.bndF")   # reused, not new
        cap = int(free * BND_MEM_FRACTION) // max(1, 8 * graph.n_bases)
        cap = max(block // G, cap // (block // G) * (block // G))
        groups = min(groups, cap)
    groups = max(groups, block // G)
    return G, K, groups * G // block, block, groups, 0, 0


def choose_ranges(graph, G, n_units, ranges=None) -> int:
    """Column ranges a read (pair) is split into: enough for :data:`FILL_WARPS_PER_SM` warps
    an SM where the batch gives fewer (``n_units`` reads or pairs, ``WARP // G`` a warp), at
    most the graph's pieces (:func:`column_cuts`); ``ranges`` (or the ``fast_ranges`` knob) a
    number forces it. 1 under the simulator unless forced."""
    want = _forced_ranges(ranges)
    if want is None:
        if sim():
            return 1
        sms = sm_count()
        warps = max(1, -(-n_units // (WARP // G)))
        want = FILL_WARPS_PER_SM * sms // warps
    return max(1, min(int(want), MAX_RANGES, len(column_cuts(graph)) + 1))


def _forced_ranges(ranges):
    """``ranges``, else the ``fast_ranges`` knob as a number; None where the choice is automatic."""
    if ranges is not None:
        return int(ranges)
    knob = settings().fast_ranges     # column ranges a unit: "auto" or a number (1: no split)
    return None if knob == "auto" else int(knob)


def launch_shape(graph, max_len, pair, n_units, G=None, K=None, ranges=None):
    """(G, K, ranges) of a batch of ``n_units`` reads (pairs): :func:`choose_config` and
    :func:`choose_ranges`, where choose_config counts every range a unit, and the BIG_G x
    BIG_K groups take every range the graph has (H100, 10 kbp reads, SNP 100 kbp graph:
    4,000 reads as 4,000 8-lane units of a strand each 2,256 GCUPS, against 1,873 for 2,000
    warps of both strands; 8,000 reads split 2,484, whole 2,288)."""
    if G is not None:
        return G, K, choose_ranges(graph, G, n_units, ranges)
    sms = None if sim() else sm_count()
    want = _forced_ranges(ranges)
    room = max(1, min(MAX_RANGES, len(column_cuts(graph)) + 1,
                      MAX_RANGES if want is None else want))
    G, K = choose_config(max_len, pair, n_units * room, sms)
    if (G, K) == (BIG_G, BIG_K):
        return G, K, room
    return G, K, choose_ranges(graph, G, n_units, ranges)


def sm_count() -> int:
    """The GPU's streaming multiprocessors."""
    cuda = _lean.api()
    return int(cuda.get_current_device().MULTIPROCESSOR_COUNT)
