"""fast — the production GPU path: a warp-cooperative affine POA wavefront (issue 5).

Mapping
    A *group* of ``G`` lanes (G = 8, 16 or 32; several groups share a warp) aligns one
    read. Lane ``t`` owns ``K`` consecutive read rows of the current *strip* of
    ``G*K`` rows, in registers (``cuda.local.array(K)`` indexed only by unrolled
    constants). Graph columns stream through the group in topological order as a
    wavefront: at step ``s`` lane ``t`` computes column ``j = s - t``, then passes its
    bottom row's ``H - o - e`` and ``F`` one lane down with ``shfl_up_sync``; lane 0
    takes the row above the strip (row 0 of the mode, or the strip above). No block or
    grid barrier anywhere; groups are persistent and stride over reads sorted by
    length, so a warp's groups have equal strip counts.

    All groups of a warp sit on the same columns (lane t of every group is on column
    s - t), so a warp diverges only as much as one group: with G = 8 on a SNP graph
    (~4% node-boundary columns) about 28% of steps have a boundary lane, against
    ~73% for a 32-lane group; and 8 lanes x K = 19 rows covers a 150 bp read with
    two shuffles per 19 cells.

node_bound store
    A column whose node is not simple (pred != [v-1]) merges its predecessors' last
    columns from FlatGraph's liveness slots. Each lane keeps its *own* rows of a slot
    (``H-o-e``, the outgoing ``max(H-o-e, E-e)``, and the H of the row above its top
    row, which is the diagonal of its first row), so the store is lane-private:
    no barrier and no cross-lane hazard. It lives in global memory (L1-resident:
    a slot is read a few columns after it is written), ``n_slots x (2K+1) x 4``
    bytes per lane, each lane's slots contiguous (one base register and immediate
    offsets; a group-interleaved layout cost 2K 64-bit address registers).

Recurrence (s2g.dp, in the ``H - o - e`` domain to save one subtraction per cell)::

    ev = max(HO[r], E[r] - e)                      E[i][j]
    f  = max(hoa, f - e)                           F[i][j]   (hoa = HO of the row above)
    h  = max(dd + (q == g ? a+o+e : o+e-b), ev, f [, 0 local])
    dd = HO[r]; hoa = h - o - e; HO[r] = hoa; E[r] = ev

Per cell (local, PTX, counted by tests/test_fast.py and bench/NOTES.md): about
12 32-bit integer instructions (2 for ev, 2 for f, 2 for the substitution select,
4 for h, 1 for HO, 1 for the running column maximum); no 64-bit arithmetic in the
cell loop (the PTX test fails if any appears). Merging at a non-simple column costs
about (2K+1) loads + maxima per predecessor, a slot store 2K+1 stores.

Integer width
    int32 when :func:`s2g.scoring.fits_int32` holds (every realistic read); otherwise
    the exact int64 CPU path (``cpu`` variant) is used, with a warning — never a
    silent overflow. Packed 16-bit pairs are not implemented.

Long reads
    Strips of ``G*K`` rows, one pass each over all columns; the strip's bottom row
    (``H-o-e`` and F per column) is written to a per-group global buffer
    (``8 x columns`` bytes) and read by lane 0 of the next strip. Any read length
    works; the number of groups in flight is capped so the buffers fit in a quarter
    of free device memory.

Ends and ties
    Local: each lane keeps its first strictly better column maximum (columns arrive in
    ascending order) and, on improvement, the smallest row holding it; lanes and strips
    are combined lexicographically (score desc, j asc, i asc): the V0 rule.
    Semiglobal: row m, smallest j; global: row m at sinks' last columns. Global row 0
    (``H[0][j] = E[0][j]``, deletion of a graph prefix) depends on the graph only and
    is computed on the host.

Traceback
    Not on the GPU (stretch goal not done): ``traceback=True`` runs
    :func:`s2g.traceback.traceback_batch` on the CPU from the GPU's end cells.

Simulator
    Under ``NUMBA_ENABLE_CUDASIM=1`` the same kernel is built with a shared-memory
    exchange and ``syncthreads`` in place of the shuffles, one warp per block
    (tests/fast_cudasim_check.py).

Status
    Every read's status starts at ST_NOT_RUN; the kernel writes ST_OK. The host raises
    :class:`s2g.errors.S2GError` if any read was not processed.
"""
from __future__ import annotations

import os
import warnings

import numba
import numpy as np
from numba import cuda, int32   # module level: the simulator swaps the kernel's globals

from .._numba import NJIT
from ..dp import GLOBAL, LOCAL, SEMIGLOBAL
from ..errors import S2GError
from ..result import BatchResult
from ..scoring import NEG_INF, Mode, fits_int32

# ---------------------------------------------------------------- limits and config
WARP = 32
BLOCK = int(os.environ.get("S2G_FAST_BLOCK", 128))  # 4 warps: enough blocks per SM for latency hiding, small tail
SHORT_G = 8                  # lanes per read for reads up to SHORT_G * MAX_K bases
MAX_K = 24                   # rows per lane (registers: 2 x K scores + K read codes)
LONG_G, LONG_K = 8, 24       # long reads: strips of 192 rows
K_CHOICES = (4, 8, 12, 19, 24)   # 19: 8 x 19 = 152 rows covers a 150 bp read in one strip
#: register cap per thread (0 = ptxas's choice; it took 168 for K = 19: 3 blocks per SM)
MAX_REGISTERS = int(os.environ.get("S2G_FAST_MAXREG", 0))
BLOCKS_PER_SM = 16           # persistent grid: at most this many blocks per SM
BND_MEM_FRACTION = 0.25      # long-read strip buffers use at most this of free memory

# column info word: bits 0-2 graph base (N -> 5, never equal to a read code),
# bit 3 merge (first column of a non-simple node), bit 4 virtual (first column of a
# source node), bit 5 sink (last column of a sink node), bits 8.. slot + 1 to store
CI_BASE = 7
CI_MERGE = 1 << 3
CI_VIRT = 1 << 4
CI_SINK = 1 << 5
CI_SLOT_SHIFT = 8
GRAPH_N = 5
READ_PAD = 6                 # code of rows past the read's end (never matches)

ST_OK, ST_NOT_RUN = 0, 1


# ---------------------------------------------------------------- host-side tables

@numba.njit(**NJIT)
def _column_tables(base, node_start, pred_ptr, pred_idx, slot, is_sink, mode, o, e):
    """colinfo, merge CSR over columns (mptr, mslot), and row 0 of the mode (H0 - o - e)."""
    n_nodes = len(node_start) - 1
    N = node_start[n_nodes]
    colinfo = np.empty(N, np.int32)
    mptr = np.zeros(N + 1, np.int32)
    n_m = 0
    for v in range(n_nodes):
        pa, pb = pred_ptr[v], pred_ptr[v + 1]
        if not (pb - pa == 1 and pred_idx[pa] == v - 1) and pb > pa:
            n_m += pb - pa
    mslot = np.zeros(max(n_m, 1), np.int32)
    row0 = np.empty(N, np.int32)      # H[0][j] - o - e
    h0 = np.empty(N, np.int64)        # H[0][j] (= E[0][j] in global mode)
    k = 0
    for v in range(n_nodes):
        pa, pb = pred_ptr[v], pred_ptr[v + 1]
        s0, s1 = node_start[v], node_start[v + 1]
        simple = pb - pa == 1 and pred_idx[pa] == v - 1
        for j in range(s0, s1):
            bc = base[j]
            w = GRAPH_N if bc >= 4 else bc
            if j == s0:
                if pb == pa:
                    w |= CI_VIRT
                elif not simple:
                    w |= CI_MERGE
            if j == s1 - 1:
                if is_sink[v]:
                    w |= CI_SINK
                if slot[v] >= 0:
                    w |= (slot[v] + 1) << CI_SLOT_SHIFT
            colinfo[j] = w
            mptr[j] = k
            if j == s0 and not simple and pb > pa:
                for q in range(pa, pb):
                    mslot[k] = slot[pred_idx[q]]
                    k += 1
            # row 0 (s2g.dp.column: global H[0] = E[0] = PE[0]; else 0)
            if mode == GLOBAL:
                if j > s0 or simple:
                    pe = max(h0[j - 1] - o - e, h0[j - 1] - e)
                elif pb == pa:
                    pe = -(o + e)
                else:
                    pe = NEG_INF
                    for q in range(pa, pb):
                        lp = node_start[pred_idx[q] + 1] - 1
                        pe = max(pe, max(h0[lp] - o - e, h0[lp] - e))
                h0[j] = pe
            else:
                h0[j] = 0
            row0[j] = max(h0[j] - o - e, NEG_INF)
    mptr[N] = k
    return colinfo, mptr, mslot, row0


# ---------------------------------------------------------------- kernel factory

def kernel_source(G: int, K: int, mode: int, sim: bool = False):
    """The Python function of the kernel for ``G`` lanes x ``K`` rows in ``mode``.

    ``sim``: build the CUDA-simulator form (shared-memory exchange + syncthreads in
    place of shuffles; launch one warp per block). Returned undecorated so that tests
    can ``compile_ptx`` it.
    """
    assert WARP % G == 0 and K >= 1
    FULL = 0xFFFFFFFF
    NI = int32(NEG_INF)
    GK = G * K
    SW = 2 * K + 1                       # words per lane per slot
    IS_LOCAL = mode == LOCAL
    IS_SEMI = mode == SEMIGLOBAL
    IS_GLOBAL = mode == GLOBAL
    Z = int32(0)

    SIM = bool(sim)      # compile-time constant: the exchange below is one of two forms
    ROWS_OUTER = MERGE_ROWS_OUTER

    def fast_kernel(colinfo, mptr, mslot, row0, codes, roff, rlen, order, n_reads,
                    n_slots, a, b, o, e, store, bndH, bndF, out_s, out_i, out_j, status):
        """One group of G lanes per read; see the module docstring for the recurrence."""
        N = colinfo.shape[0]
        tid = cuda.threadIdx.x
        lane = tid % WARP
        t = lane % G
        gid = (cuda.blockIdx.x * cuda.blockDim.x + tid) // G
        ngroups = (cuda.gridDim.x * cuda.blockDim.x) // G
        buf = cuda.shared.array(WARP, int32)    # exchange buffers of the simulator form only
        buf2 = cuda.shared.array(WARP, int32)
        buf3 = cuda.shared.array(WARP, int32)
        HO = cuda.local.array(K, int32)
        E = cuda.local.array(K, int32)
        Q = cuda.local.array(K, int32)
        oe = int32(o + e)
        e32 = int32(e)
        sa = int32(a + o + e)             # match, in the H - o - e domain of the diagonal
        sb = int32(o + e - b)             # mismatch
        sbase = (gid * G + t) * n_slots * SW   # lane-contiguous: one base register, immediate offsets
        bbase = gid * N
        n_iter = (n_reads + ngroups - 1) // ngroups
        for it in range(n_iter):
            ridx = it * ngroups + gid
            m = 0
            off = 0
            rd = 0
            if ridx < n_reads:
                rd = order[ridx]
                m = rlen[rd]
                off = roff[rd]
            npass = int32((m + GK - 1) // GK)
            wp = npass                    # warp-uniform strip count (all lanes shuffle)
            for sh in (16, 8, 4, 2, 1):
                if SIM:
                    cuda.syncthreads()
                    buf[lane] = wp
                    cuda.syncthreads()
                    ow = buf[lane ^ sh]
                else:
                    cuda.syncwarp(FULL)
                    ow = cuda.shfl_xor_sync(FULL, wp, sh)
                wp = max(wp, int32(ow))
            # scores below are in the H - o - e domain; local counts only H > 0
            floor = int32(-oe) if IS_LOCAL else NI
            best = floor
            bi = -1
            bj = -1
            pm = (m - 1) // GK            # strip, lane and row of row m (semi/global)
            tm = ((m - 1) % GK) // K
            rm = (m - 1) % K
            for p in range(wp):
                row_base = p * GK + t * K     # rows row_base+1 .. row_base+K
                for r in range(K):
                    i = row_base + r
                    Q[r] = int32(codes[off + i]) if i < m else int32(READ_PAD)
                    HO[r] = NI
                    E[r] = NI
                live = p < npass              # strips past this read's end compute garbage
                pb_ = floor                   # this strip's best for this lane
                pi_ = -1
                pj_ = -1
                hu = NI                       # HO of the row above, this column
                fu = NI                       # F of the row above, this column
                dgo = NI                      # HO of the row above, previous column
                wr_bnd = t == G - 1 and p + 1 < npass
                own_m = (not IS_LOCAL) and p == pm and t == tm
                for s in range(N + G - 1):
                    j = s - t
                    if t == 0 and j < N:
                        if p == 0 or not live:    # a dead strip reads no stale buffer
                            hu = row0[j]
                            fu = NI
                        else:
                            hu = bndH[bbase + j]
                            fu = bndF[bbase + j]
                    bh = NI
                    bf = NI
                    if j >= 0 and j < N:
                        info = colinfo[j]
                        gb = int32(info & CI_BASE)
                        if info & (CI_MERGE | CI_VIRT):
                            if info & CI_VIRT:
                                # virtual column of s2g.dp: PH = 0 (local) or -(o + e*i)
                                if IS_LOCAL or row_base == 0:
                                    dgo = int32(-oe)
                                else:
                                    dgo = int32(-(o + e * row_base) - oe)
                                for r in range(K):
                                    ph = Z if IS_LOCAL else int32(-(o + e * (row_base + r + 1)))
                                    HO[r] = int32(ph - oe)
                                    E[r] = int32(ph - o)        # PE + e, PE = PH - o - e
                            elif ROWS_OUTER:
                                # each register written once, after a scalar loop over preds
                                k0 = mptr[j]
                                k1 = mptr[j + 1]
                                acc = NI
                                for k in range(k0, k1):
                                    acc = max(acc, store[sbase + mslot[k] * SW])
                                dgo = acc
                                for r in range(K):
                                    ah = NI
                                    ae = NI
                                    for k in range(k0, k1):
                                        sp = sbase + mslot[k] * SW
                                        ah = max(ah, store[sp + 1 + r])
                                        ae = max(ae, store[sp + 1 + K + r])
                                    HO[r] = ah
                                    E[r] = int32(ae + e32)      # so max(HO, E - e) = PE
                            else:
                                dgo = NI
                                for r in range(K):
                                    HO[r] = NI
                                    E[r] = NI
                                for k in range(mptr[j], mptr[j + 1]):
                                    sp = sbase + mslot[k] * SW
                                    dgo = max(dgo, store[sp])
                                    for r in range(K):
                                        HO[r] = max(HO[r], store[sp + 1 + r])
                                        E[r] = max(E[r], store[sp + 1 + K + r])
                                for r in range(K):
                                    E[r] = int32(E[r] + e32)    # so max(HO, E - e) = PE
                        f = fu
                        hoa = hu
                        dd = dgo
                        cm = NI
                        vm = NI
                        for r in range(K):
                            ev = max(HO[r], int32(E[r] - e32))
                            f = max(hoa, int32(f - e32))
                            h = max(max(int32(dd + (sa if Q[r] == gb else sb)), ev), f)
                            if IS_LOCAL:
                                h = max(h, Z)
                            dd = HO[r]
                            hoa = int32(h - oe)
                            HO[r] = hoa
                            E[r] = ev
                            if IS_LOCAL:
                                cm = max(cm, hoa)
                            elif r == rm:       # row m (an SSA value: no dynamic register index)
                                vm = hoa
                        sl = info >> CI_SLOT_SHIFT
                        if sl != 0:
                            # Two fixed bases, then base + r. Written as
                            # store[sp + 1 + K + r], numba-cuda 0.30.4 generated PTX
                            # whose unrolled stores advanced the base by 1 + K + r each
                            # iteration (stores at sp+1, sp+6, sp+8, sp+13, ... for K = 5),
                            # scattering slot writes: wrong scores on the GPU only (the
                            # simulator and a CPU build were exact). tests/test_fast.py
                            # checks the store offsets in the PTX.
                            wh = sbase + (sl - 1) * SW
                            wo = wh + 1
                            we_ = wh + 1 + K
                            store[wh] = hu
                            for r in range(K):
                                store[wo + r] = HO[r]
                            for r in range(K):
                                store[we_ + r] = max(HO[r], int32(E[r] - e32))
                        if IS_LOCAL:
                            if cm > pb_:
                                pb_ = cm
                                pj_ = j
                                pi_ = -1
                                for r in range(K):
                                    if pi_ < 0 and HO[r] == cm:
                                        pi_ = row_base + r + 1
                        elif own_m and (IS_SEMI or (info & CI_SINK) != 0):
                            v = vm
                            if v > pb_:
                                pb_ = v
                                pj_ = j
                                pi_ = m
                        if wr_bnd:
                            bndH[bbase + j] = hoa
                            bndF[bbase + j] = f
                        bh = hoa
                        bf = f
                        dgo = hu
                    if SIM:
                        cuda.syncthreads()
                        buf[lane] = bh
                        buf2[lane] = bf
                        cuda.syncthreads()
                        nh = buf[lane - 1] if lane > 0 else bh
                        nf = buf2[lane - 1] if lane > 0 else bf
                    else:
                        # Reconverge first: lanes that took a merge branch must meet the
                        # others at one shuffle instruction. Without this the H200 gave
                        # wrong scores on graphs with bubbles (exact in the simulator,
                        # memcheck clean; bench/NOTES.md); the gpu-facts probe did the same.
                        cuda.syncwarp(FULL)
                        nh = cuda.shfl_up_sync(FULL, bh, 1)
                        nf = cuda.shfl_up_sync(FULL, bf, 1)
                    if t > 0:
                        hu = nh
                        fu = nf
                if SIM:                       # strip buffer writes before the next strip
                    cuda.syncthreads()
                else:
                    cuda.syncwarp(FULL)
                # combine this strip into the lane's best: (score desc, j asc, i asc)
                if live and pj_ >= 0 and (pb_ > best or (pb_ == best and (bj < 0 or pj_ < bj))):
                    best = pb_
                    bj = pj_
                    bi = pi_
            # group reduction (xor stays inside aligned power-of-two groups)
            msk = 1
            while msk < G:
                if SIM:
                    cuda.syncthreads()
                    buf[lane] = best
                    buf2[lane] = bj
                    buf3[lane] = bi
                    cuda.syncthreads()
                    ob = buf[lane ^ msk]
                    oj = buf2[lane ^ msk]
                    oi = buf3[lane ^ msk]
                else:
                    cuda.syncwarp(FULL)
                    ob = cuda.shfl_xor_sync(FULL, best, msk)
                    oj = cuda.shfl_xor_sync(FULL, int32(bj), msk)
                    oi = cuda.shfl_xor_sync(FULL, int32(bi), msk)
                if oj >= 0 and (ob > best or (ob == best and (bj < 0 or oj < bj
                                                              or (oj == bj and oi < bi)))):
                    best = ob
                    bj = oj
                    bi = oi
                msk *= 2
            if t == 0 and ridx < n_reads:
                if bj >= 0:
                    out_s[rd] = int32(best + oe)
                    out_i[rd] = bi
                    out_j[rd] = bj
                else:
                    out_s[rd] = NI
                    out_i[rd] = -1
                    out_j[rd] = -1
                status[rd] = ST_OK

    return fast_kernel


def kernel_signature():
    """Explicit argument types of :func:`kernel_source`'s kernel (for compile_ptx)."""
    from numba import types as T
    i32a = T.int32[::1]
    return (i32a, i32a, i32a, i32a, T.uint8[::1], T.int64[::1], T.int32[::1], i32a, T.int64,
            T.int64, T.int32, T.int32, T.int32, T.int32, i32a, i32a, i32a, i32a, i32a, i32a, i32a)


_KERNELS: dict = {}


#: merge loop order: rows outer (each register written once) or predecessors outer
MERGE_ROWS_OUTER = os.environ.get("S2G_FAST_MERGE", "rows") == "rows"
#: NVVM optimisation (S2G_FAST_OPT=0 compiles with opt=False: a diagnostic)
NVVM_OPT = os.environ.get("S2G_FAST_OPT", "1") != "0"
#: "shfl" (warp shuffles) or "shared" (the simulator's shared-memory exchange with
#: syncthreads, one warp per block, also on a real GPU: a diagnostic and fallback)
EXCHANGE = os.environ.get("S2G_FAST_EXCHANGE", "shfl")


def _shared_exchange() -> bool:
    return _sim() or EXCHANGE == "shared"


def _sim() -> bool:
    from numba import config
    return bool(config.ENABLE_CUDASIM)


def get_kernel(G, K, mode):
    key = (G, K, int(mode), _shared_exchange(), MAX_REGISTERS, _sim(), MERGE_ROWS_OUTER, NVVM_OPT)
    if key not in _KERNELS:
        from numba import cuda
        fn = kernel_source(G, K, int(mode), sim=key[3])
        opts = {"max_registers": MAX_REGISTERS} if MAX_REGISTERS and not key[3] else {}
        if not NVVM_OPT:
            opts["opt"] = False
        _KERNELS[key] = cuda.jit(fn) if _sim() else cuda.jit(kernel_signature(), **opts)(fn)
    return _KERNELS[key]


def choose_config(max_len: int):
    """(G, K) for a batch: one strip of SHORT_G lanes when it covers the reads."""
    need = max(1, -(-max_len // SHORT_G))
    for K in K_CHOICES:               # few distinct kernels to compile (JIT costs seconds each)
        if need <= K:
            return SHORT_G, K
    return LONG_G, LONG_K


# ---------------------------------------------------------------- host pipeline

class _GraphOnDevice:
    """Column tables of one (graph, mode, scoring) on the device, built once."""

    def __init__(self, graph, mode, scoring):
        from numba import cuda
        a, b, o, e = scoring.as_tuple()
        ci, mp, ms, r0 = _column_tables(graph.base, graph.node_start, graph.pred_ptr,
                                        graph.pred_idx, graph.slot, graph.is_sink, int(mode), o, e)
        self.n_cols = len(ci)
        self.n_merge_cols = int(((ci & CI_MERGE) != 0).sum())
        self.colinfo, self.mptr = cuda.to_device(ci), cuda.to_device(mp)
        self.mslot, self.row0 = cuda.to_device(ms), cuda.to_device(r0)


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


def plan(graph, reads_max_len, n_reads, G=None, K=None):
    """Launch plan: (G, K, blocks, block, n_groups) for a batch (also used by bench)."""
    from numba import cuda
    if G is None:
        G, K = choose_config(reads_max_len)
    block = WARP if _shared_exchange() else BLOCK
    groups = min(-(-n_reads // (block // G)) * (block // G), _resident_groups(G))
    npass = -(-reads_max_len // (G * K))
    if npass > 1 and not _sim():
        free, _ = cuda.current_context().get_memory_info()
        cap = int(free * BND_MEM_FRACTION) // max(1, 8 * graph.n_bases)
        cap = max(block // G, cap // (block // G) * (block // G))
        groups = min(groups, cap)
    groups = max(groups, block // G)
    return G, K, groups * G // block, block, groups


def run_kernel(graph, codes, offsets, lengths, scoring, mode, G=None, K=None,
               events=None):
    """Launch the kernel on arrays (host numpy); returns (score, end_i, end_j) int32 arrays.

    ``events``: optional (start, stop) CUDA events recorded around the launch only.
    """
    from numba import cuda
    n = len(lengths)
    tab = _graph_tables(graph, mode, scoring)
    max_len = int(lengths.max(initial=0))
    G, K, blocks, block, groups = plan(graph, max_len, n, G, K)
    a, b, o, e = scoring.as_tuple()
    order = np.argsort(-lengths, kind="stable").astype(np.int32)
    d_codes = cuda.to_device(codes if len(codes) else np.zeros(1, np.uint8))
    d_off = cuda.to_device(offsets[:-1].astype(np.int64))
    d_len = cuda.to_device(lengths.astype(np.int32))
    d_ord = cuda.to_device(order)
    n_slots = max(graph.n_slots, 1)
    if os.environ.get("S2G_FAST_ZERO"):
        store = cuda.to_device(np.zeros(groups * n_slots * (2 * K + 1) * G, np.int32))
    else:
        store = cuda.device_array(groups * n_slots * (2 * K + 1) * G, np.int32)
    npass = -(-max_len // (G * K))
    bn = groups * graph.n_bases if npass > 1 else 1
    bndH = cuda.device_array(bn, np.int32)
    bndF = cuda.device_array(bn, np.int32)
    out_s = cuda.device_array(n, np.int32)
    out_i = cuda.device_array(n, np.int32)
    out_j = cuda.device_array(n, np.int32)
    status = cuda.to_device(np.full(n, ST_NOT_RUN, np.int32))
    kern = get_kernel(G, K, mode)
    if events:
        events[0].record()
    # Default stream only, synchronised: on the device, numba-cuda 0.30 launches with an
    # explicit stream 0 misbehave (another engineer's V1-V4 raised; this kernel's run 1
    # read stale memory), so copies, launch and events all use the default stream.
    kern[blocks, block](tab.colinfo, tab.mptr, tab.mslot, tab.row0, d_codes, d_off, d_len,
                                d_ord, n, n_slots, np.int32(a), np.int32(b), np.int32(o),
                                np.int32(e), store, bndH, bndF, out_s, out_i,
                                out_j, status)
    if events:
        events[1].record()
    cuda.synchronize()
    st = status.copy_to_host()
    res = (out_s.copy_to_host(), out_i.copy_to_host(), out_j.copy_to_host())
    bad = np.nonzero(st != ST_OK)[0]
    if len(bad):
        raise S2GError(f"fast: GPU kernel left {len(bad)} read(s) unprocessed (first: read index "
                       f"{int(bad[0])}, status {int(st[bad[0]])}); please report this")
    return res


#: reads per kernel launch (bounds host and device buffers; stream over larger inputs)
BATCH_READS = 1 << 18


def align_batch(graph, reads, scoring, mode, traceback=False) -> BatchResult:
    """The variant contract; exact int32 on the GPU, or the int64 CPU path if the bound fails."""
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
        codes = np.concatenate([reads.codes(int(r)) for r in idx]) if len(idx) else np.zeros(0, np.uint8)
        s, i, j = run_kernel(graph, np.ascontiguousarray(codes, np.uint8), offs, sub_lens,
                             scoring, mode)
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
