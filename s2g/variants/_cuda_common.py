"""What the CUDA variants V1-V4 share: launch configuration, column tables, the
device-side cell, the packed best-cell key, and host checks (STYLE.md habits 5, 6).

Imported only by the GPU variant modules, so ``import s2g`` never touches CUDA.

Column tables (built once per graph on the host, uploaded once, cached on the graph):

* ``colw[j]`` int32: ``base | kind << 3 | sink_last << 5 | (write_slot + 1) << 6``,
  one load per cell. ``kind`` says where column ``j`` takes its predecessor vectors
  from (:mod:`s2g.dp`): ``K_PREV`` the previous column (inside a node, or the first
  column of a simple node), ``K_VIRT`` the virtual column (a source node),
  ``K_MERGE`` the predecessors' last columns (CSR). ``sink_last``: the last column
  of a sink node (global mode ends there). ``write_slot``: the node_bound slot
  this column (a node's last) is stored to, -1 for none.
* ``col_node[j]`` the node of column ``j`` (read only at merge columns);
  ``pred_last[k]``/``pred_slot[k]``: for CSR edge ``k`` the predecessor's last
  column and its node_bound slot.
* ``row0h[j]``/``diag0[j]``: row 0 of the DP (``H[0][j]``) and ``PH[0]`` of
  column ``j``. Both are 0 in local and semiglobal mode; in global mode they are the
  cost of deleting the graph prefix, which depends on the graph alone, so row 0 is
  never computed on the device (kernels compute rows 1..m).

node_bound slots on the GPU (:func:`gpu_slots`): FlatGraph's ``slot`` lets node
``x`` reuse a slot once the last reader's *node index* has passed, which is right
for a column-major kernel. On an anti-diagonal wavefront, row ``i-1`` of a writer's
last column ``cx`` is written on the same anti-diagonal as the reader's first column
``cv = cx - 1`` reads it as its diagonal (``(i-1) + cx == i + cv``): a race. The
GPU slots therefore reuse a slot only when ``cx >= cv + 2`` (every write lands at a
strictly later anti-diagonal than every read of the slot's previous owner).

Best cell: ``key = (score + 2**28) << 34 | (2**34 - 1 - (j * (m + 1) + i))``; the
largest key is the best score, then the smallest column, then the smallest row —
the end-cell tie rule of ARCHITECTURE.md — so one ``atomic.max`` on int64 decides
it. It needs ``|score| < 2**28`` (``fits_int32``) and ``N * (m + 1) < 2**34``.
"""
from __future__ import annotations

import heapq
import threading

import numpy as np
from numba import cuda, int32, int64

from .._numba import loaded
from ..errors import S2GError
from . import _devpool
from ..result import BatchResult
from ..scoring import NEG_INF, Mode, fits_int32, score_bound

# ----------------------------------------------------------------------- configuration
#: threads per block of the per-anti-diagonal kernels (V1, V2) and of V3's persistent
#: grid: 256 = 8 warps, enough to hide global-memory latency with few registers.
BLOCK = 256
#: largest V4 block (one block per read, one thread per read row per pass). Reads
#: longer than this are done in passes of this many rows.
V4_MAX_BLOCK = 256
#: dynamic shared memory a block may use without an opt-in attribute (48 KiB on every
#: architecture since Kepler; Hopper allows 227 KiB only after cudaFuncSetAttribute).
SHMEM_LIMIT = 48 * 1024
#: V4's carried boundary rows (4 int32 per column per multi-pass read) per launch.
V4_GBUF_BYTES = 1 << 30
#: rows (read bases) per V2/V3 launch; bounds their rolling buffers.
ROWS_PER_LAUNCH = 1 << 22

K_PREV, K_VIRT, K_MERGE = 0, 1, 2
LOCAL, SEMIGLOBAL, GLOBAL = int(Mode.LOCAL), int(Mode.SEMIGLOBAL), int(Mode.GLOBAL)
NEG = NEG_INF
#: "no candidate yet" for per-row best scores; below every reachable int32 score.
BH_NONE = -(1 << 30)
KEY_BIAS = 1 << 28
KEY_LIN_BITS = 34
KEY_LIN_MASK = (1 << KEY_LIN_BITS) - 1

# status codes written by kernels, turned into messages by :func:`raise_status`
ST_OK = 0

#: kernel time of the last align_batch of any CUDA variant (ms, CUDA events), for bench
last_kernel_ms = 0.0


def simulator() -> bool:
    from numba import config
    return bool(config.ENABLE_CUDASIM)


# ----------------------------------------------------------------------- device code
@cuda.jit(device=True, inline=True)
def sub_score32(qb, gb, a, nb):
    """+a on equal ACGT, ``nb`` (= -mismatch) otherwise; N (code 4) never matches."""
    return a if (qb == gb and qb < 4) else nb


@cuda.jit(device=True, inline=True)
def virt_h(i, local, o, e):
    """H of the virtual column at row i (s2g.dp table): 0 in local mode and at row 0."""
    if local or i == 0:
        return int32(0)
    return int32(-(o + int32(e * i)))


@cuda.jit(device=True, inline=True)
def finish_cell(hdiag, pe, uph, upf, s, oe, e, local):
    """H and F of a cell from PH(i-1), PE(i), H(i-1,j), F(i-1,j) (s2g.dp.column).

    Tie order does not matter for scores; every max is int32.
    """
    f = max(int32(uph - oe), int32(upf - e))
    h = max(int32(hdiag + s), pe)
    h = max(h, f)
    if local and h < 0:
        h = int32(0)
    return h, f


@cuda.jit(device=True, inline=True)
def is_candidate(h, i, m, w, mode):
    """May cell (i, j) end an alignment in this mode? (local: h > 0 suffices)."""
    if mode == LOCAL:
        return h > 0
    if mode == SEMIGLOBAL:
        return i == m
    return i == m and ((w >> 5) & 1) == 1


@cuda.jit(device=True, inline=True)
def better(h, j, i, bh, bj, bi):
    """Tie rule: higher score, then smaller column, then smaller row."""
    if h != bh:
        return h > bh
    if j != bj:
        return j < bj
    return i < bi


@cuda.jit(device=True, inline=True)
def pack_key(h, j, i, m):
    lin = int64(j) * int64(m + 1) + int64(i)
    return (int64(h + KEY_BIAS) << KEY_LIN_BITS) | (int64(KEY_LIN_MASK) - lin)


# ----------------------------------------------------------------------- host side
def decode_keys(keys, lengths):
    """(score, end_i, end_j) int64 arrays from packed keys (-1 = no candidate)."""
    keys = np.asarray(keys, np.int64)
    m1 = np.asarray(lengths, np.int64) + 1
    ok = keys >= 0
    score = np.where(ok, (keys >> KEY_LIN_BITS) - KEY_BIAS, NEG_INF).astype(np.int64)
    lin = KEY_LIN_MASK - (keys & KEY_LIN_MASK)
    end_j = np.where(ok, lin // m1, -1).astype(np.int64)
    end_i = np.where(ok, lin % m1, -1).astype(np.int64)
    return score, end_i, end_j


def reduce_rows(bh, bj, row_read, row_i, n_reads):
    """Per-row bests (V1, V2) -> per-read (score, end_i, end_j) by the tie rule."""
    score = np.full(n_reads, NEG_INF, np.int64)
    end_i = np.full(n_reads, -1, np.int64)
    end_j = np.full(n_reads, -1, np.int64)
    ok = np.nonzero(np.asarray(bj) >= 0)[0]
    if len(ok) == 0:
        return score, end_i, end_j
    h = np.asarray(bh, np.int64)[ok]
    j = np.asarray(bj, np.int64)[ok]
    i = np.asarray(row_i, np.int64)[ok]
    r = np.asarray(row_read, np.int64)[ok]
    order = np.lexsort((i, j, -h, r))
    first = order[np.r_[True, r[order][1:] != r[order][:-1]]]
    score[r[first]] = h[first]
    end_i[r[first]] = i[first]
    end_j[r[first]] = j[first]
    return score, end_i, end_j


def check_problem(graph, reads, scoring, mode, variant):
    """int32 and key-packing limits, checked once per batch (raises S2GError)."""
    mode = Mode.parse(mode)
    lens = reads.lengths()
    m = int(lens.max(initial=0))
    n = graph.n_bases
    if m and not fits_int32(scoring, mode, m, n):
        r = int(np.argmax(lens))
        raise S2GError(
            f"{variant}: read {reads.names[r]!r} ({m} bp) on a graph of {n} bases in "
            f"{mode.name.lower()} mode can reach |score| {score_bound(scoring, mode, m, n)} "
            f">= 2**28, beyond the GPU's int32 scores; use variant v0 or cpu")
    if m and n * (m + 1) >= (1 << KEY_LIN_BITS):
        raise S2GError(
            f"{variant}: graph columns x (read length + 1) = {n} x {m + 1} does not fit the "
            f"{KEY_LIN_BITS}-bit end-cell key; split the reads or use variant v0 or cpu")
    return mode


def gpu_slots(graph):
    """node_bound slots safe for anti-diagonal kernels (see module doc): (slot, n_slots)."""
    n = graph.n_nodes
    ns = graph.node_start.astype(np.int64)
    pp = graph.pred_ptr.astype(np.int64)
    pi = graph.pred_idx.astype(np.int64)
    deg = np.diff(pp)
    first_pred = np.where(deg > 0, pi[np.minimum(pp[:-1], max(len(pi) - 1, 0))] if len(pi) else -1, -1)
    simple = (deg == 1) & (first_pred == np.arange(n) - 1)
    release = np.full(n, -1, np.int64)
    merge_nodes = np.nonzero((deg > 0) & ~simple)[0]
    if len(merge_nodes):
        dst = np.repeat(merge_nodes, deg[merge_nodes])
        src = np.concatenate([pi[pp[v]:pp[v + 1]] for v in merge_nodes])
        np.maximum.at(release, src, ns[dst] + 2)
    slot = np.full(n, -1, np.int32)
    free, busy, n_slots = [], [], 0
    for x in np.nonzero(release >= 0)[0].tolist():
        cx = ns[x + 1] - 1
        while busy and busy[0][0] <= cx:
            heapq.heappush(free, heapq.heappop(busy)[1])
        s = heapq.heappop(free) if free else n_slots
        if s == n_slots:
            n_slots += 1
        slot[x] = s
        heapq.heappush(busy, (int(release[x]), s))
    return slot, n_slots, simple, deg


class GraphTables:
    """Host column tables of a graph (module doc) and their device copies."""

    def __init__(self, graph):
        n = graph.n_nodes
        N = graph.n_bases
        ns = graph.node_start.astype(np.int64)
        slot, n_slots, simple, deg = gpu_slots(graph)
        node_kind = np.where(deg == 0, K_VIRT, np.where(simple, K_PREV, K_MERGE)).astype(np.int32)
        lens = np.diff(ns)
        col_node = np.repeat(np.arange(n, dtype=np.int32), lens)
        kind = np.zeros(N, np.int32)
        firsts = ns[:-1][lens > 0]
        kind[firsts] = node_kind[lens > 0]
        lasts = ns[1:][lens > 0] - 1
        sink_last = np.zeros(N, np.int32)
        sink_last[lasts] = graph.is_sink[lens > 0].astype(np.int32)
        wslot = np.full(N, -1, np.int64)
        wslot[lasts] = slot[lens > 0]
        self.colw = (graph.base.astype(np.int32) | (kind << 3) | (sink_last << 5)
                     | ((wslot + 1).astype(np.int32) << 6)).astype(np.int32)
        self.col_node = col_node
        self.pred_ptr = graph.pred_ptr.astype(np.int32)
        pidx = graph.pred_idx.astype(np.int64)
        self.pred_last = (ns[pidx + 1] - 1).astype(np.int32) if len(pidx) else np.zeros(1, np.int32)
        self.pred_slot = slot[pidx].astype(np.int32) if len(pidx) else np.zeros(1, np.int32)
        self.n_slots = int(n_slots)
        self.node_kind = node_kind
        self.N = N
        self._graph = graph
        self._dev = None
        self._row0 = {}

    def row0(self, mode, o, e):
        """(row0h, diag0) int32 host arrays of ``mode`` (module doc)."""
        key = (int(mode), o, e)
        if key not in self._row0:
            N = self.N
            h0 = np.zeros(N, np.int64)
            d0 = np.zeros(N, np.int64)
            if int(mode) == GLOBAL:
                g = self._graph
                ns = g.node_start
                pp, pi = g.pred_ptr, g.pred_idx
                for v in range(g.n_nodes):
                    s0, s1 = int(ns[v]), int(ns[v + 1])
                    if s1 == s0:
                        continue
                    k = self.node_kind[v]
                    if k == K_VIRT:
                        d0[s0], first = 0, -(o + e)
                    elif k == K_PREV:
                        d0[s0] = h0[s0 - 1]
                        first = h0[s0 - 1] - e
                    else:
                        d0[s0] = max(h0[int(ns[u + 1]) - 1] for u in pi[pp[v]:pp[v + 1]])
                        first = d0[s0] - e
                    h0[s0:s1] = first - e * np.arange(s1 - s0)
                    d0[s0 + 1:s1] = h0[s0:s1 - 1]
            self._row0[key] = (h0.astype(np.int32), d0.astype(np.int32))
        return self._row0[key]

    def device(self):
        """Device copies of the graph tables (uploaded once)."""
        if self._dev is None:
            self._dev = dict(colw=cuda.to_device(self.colw), col_node=cuda.to_device(self.col_node),
                             pred_ptr=cuda.to_device(self.pred_ptr),
                             pred_last=cuda.to_device(self.pred_last),
                             pred_slot=cuda.to_device(self.pred_slot))
            _devpool.shared(*self._dev.values())
        return self._dev

    def device_row0(self, mode, o, e):
        key = ("dev", int(mode), o, e)
        if key not in self._row0:
            h0, d0 = self.row0(mode, o, e)
            self._row0[key] = _devpool.shared(cuda.to_device(h0), cuda.to_device(d0))
        return self._row0[key]


def tables(graph) -> GraphTables:
    """The graph's GraphTables, built once and kept on the graph object."""
    t = graph.__dict__.get("_s2g_cuda_tables")
    if t is None:
        t = GraphTables(graph)
        graph.__dict__["_s2g_cuda_tables"] = t
    return t


def launch(kernel, griddim, blockdim, args, sharedmem=0, stream=0):
    """Launch a kernel compiled for one explicit signature, skipping the dispatcher's
    per-call type resolution (V1/V2 launch once per anti-diagonal, where that
    resolution costs more than the kernel). Falls back to the ordinary launch in the
    simulator."""
    global _FAST
    if simulator() or not _FAST:
        kernel[griddim, blockdim, stream, sharedmem](*args)
        return
    k = next(iter(kernel.overloads.values()))
    try:
        k.launch(args, (int(griddim), 1, 1), (int(blockdim), 1, 1), _core_stream(stream), sharedmem)
    except TypeError:   # a numba-cuda whose _Kernel.launch wants something else: be ordinary
        _FAST = False
        kernel[griddim, blockdim, stream, sharedmem](*args)


_FAST = True
_STREAMS = {}


def _core_stream(stream):
    """The stream object numba-cuda's _Kernel.launch expects (its dispatcher converts
    ``0`` with ``driver._to_core_stream`` before launching; numba-cuda 0.30)."""
    if stream not in _STREAMS:
        from numba.cuda.cudadrv import driver
        conv = getattr(driver, "_to_core_stream", None)
        _STREAMS[stream] = conv(stream) if conv is not None else stream
    return _STREAMS[stream]


def lazy_kernels(kernels):
    """A getter that ``cuda.jit``-compiles ``kernels[name] = (fn, signature)`` on first use."""
    compiled = {}
    lock = threading.Lock()

    def get(name):
        with lock:
            if name not in compiled:
                fn, sig = kernels[name]
                compiled[name] = loaded(cuda.jit(sig)(fn))
        return compiled[name]
    return get


def empty_results(n):
    """Score, end row and end column arrays of a batch, all "no alignment" (V0's values)."""
    return (np.full(n, NEG_INF, np.int64), np.full(n, -1, np.int64), np.full(n, -1, np.int64))


def scoring32(scoring):
    a, b, o, e = scoring.as_tuple()
    return np.int32(a), np.int32(-b), np.int32(o), np.int32(e), np.int32(o + e)


def start_batch(graph, reads, scoring, mode, variant):
    """The common start of V2-V4's ``align_batch``: problem checks, "no alignment"
    results, the kernel timer reset and, when there is anything to align (``empty``
    false), the graph's device tables, int32 scoring and the mode's row 0."""
    global last_kernel_ms
    from types import SimpleNamespace
    mode = check_problem(graph, reads, scoring, mode, variant)
    lens = reads.lengths()
    score, end_i, end_j = empty_results(reads.n_reads)
    last_kernel_ms = 0.0
    b = SimpleNamespace(mode=mode, lens=lens, score=score, end_i=end_i, end_j=end_j,
                        N=graph.n_bases, maxm=int(lens.max(initial=0)))
    b.empty = b.maxm == 0 or b.N == 0
    if not b.empty:
        t = tables(graph)
        b.dev = t.device()
        b.a, b.nb, b.o, b.e, _ = scoring32(scoring)
        b.row0h, b.diag0 = t.device_row0(mode, int(b.o), int(b.e))
        b.S = max(t.n_slots, 1)
    return b


def finish(reads, score, end_i, end_j):
    """The batch's :class:`BatchResult` (scores and end cells; the driver traces)."""
    return BatchResult(reads.names, reads.lengths(), score, end_i, end_j)


def ceil_div(a, b):
    return -(-int(a) // int(b))


def free_device_memory():
    """Free bytes on the current device (None in the simulator)."""
    if simulator():
        return None
    free, _total = cuda.current_context().get_memory_info()
    return int(free)



def elapsed_ms(start, stop):
    """Milliseconds between two recorded CUDA events (0 in the simulator)."""
    stop.synchronize()
    if simulator():
        return 0.0
    return float(cuda.event_elapsed_time(start, stop))
