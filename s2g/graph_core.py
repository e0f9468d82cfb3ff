"""The graph's data types and the step from a topological order to a FlatGraph: what
:mod:`s2g.graph` (GFA loading), :mod:`s2g.cyclic` (unrolling cycles) and
:mod:`s2g.graph_cache` (the on-disk cache) all build on. It imports none of them.

* :class:`FlatGraph`: the oriented, topologically sorted graph as flat arrays.
* :class:`GfaRecords`: what the parser read (:func:`s2g.graph.parse_gfa`).
* :func:`flatten`: nodes in topological order and edges -> FlatGraph (bases, CSR
  predecessors, node_bound slots), with the graph kernels it runs (:func:`kahn_lifo`,
  :func:`csr`, ``_liveness_slots``).
"""
from __future__ import annotations

import hashlib
import heapq
import os
import warnings
from dataclasses import dataclass, field

import numba
import numpy as np

from ._numba import NJIT
from .config import settings
from .errors import GraphError

# base codes shared by graph and reads: A=0 C=1 G=2 T=3, anything else N=4
BASE_CODE = np.full(256, 4, dtype=np.uint8)
for _i, _c in enumerate("ACGT"):
    BASE_CODE[ord(_c)] = _i
    BASE_CODE[ord(_c.lower())] = _i
BASE_CODE[ord("U")] = BASE_CODE[ord("u")] = 3
CODE_BASE = np.frombuffer(b"ACGTN", dtype=np.uint8)
COMPLEMENT_CODE = np.array([3, 2, 1, 0, 4], dtype=np.uint8)


@dataclass
class FlatGraph:
    """The oriented, topologically sorted graph as flat arrays (see ARCHITECTURE.md).

    Node ``v`` (0..n_nodes-1, in topological order) owns bases
    ``base[node_start[v]:node_start[v+1]]``; its predecessors are
    ``pred_idx[pred_ptr[v]:pred_ptr[v+1]]`` (ascending). A node is *simple* when its
    only predecessor is ``v-1``: its first column reads the previous column. Every
    other predecessor relation goes through the node_bound store: ``slot[u] >= 0``
    is the slot holding ``u``'s last column until its last non-simple successor has
    been computed; ``n_slots`` slots suffice (liveness, like register allocation).
    """

    base: np.ndarray          # uint8[n_bases]
    node_start: np.ndarray    # int32[n_nodes+1]
    pred_ptr: np.ndarray      # int32[n_nodes+1]
    pred_idx: np.ndarray      # int32[n_edges]
    slot: np.ndarray          # int32[n_nodes], -1 = no slot needed
    n_slots: int
    node_seg: np.ndarray      # int32[n_nodes]: segment index
    node_rev: np.ndarray      # uint8[n_nodes]: 1 for the reverse-complement copy
    is_sink: np.ndarray       # uint8[n_nodes]: no successor
    seg_names: list
    seg_len: np.ndarray       # int64[n_segments]
    n_links: int = 0
    n_paths: int = 0
    n_walks: int = 0
    strands: str = "both"
    broken_edges: int = 0
    source: str = ""
    paths: dict = field(default_factory=dict)  # name -> list of (segment index, is_rev)
    #: unrolled cyclic graph (s2g/cyclic.py): int32[n_nodes], which copy of its oriented
    #: segment a node is (0 = the first; None on a graph that was not unrolled)
    node_copy: np.ndarray | None = None
    #: unrolled cyclic graph: it holds every walk of up to this many bases (0: not unrolled)
    walk_bound: int = 0
    #: unrolled cyclic graph: its cyclic components (a cycle and its mirror count once)
    cyclic_components: int = 0

    @property
    def n_nodes(self) -> int:
        return len(self.node_start) - 1

    @property
    def n_bases(self) -> int:
        return int(self.node_start[-1])

    @property
    def n_segments(self) -> int:
        return len(self.seg_names)

    def node_name(self, v: int) -> str:
        """``>name`` or ``<name``: node ``v`` as a GAF path step."""
        return self.oriented_names()[v]

    def oriented_names(self) -> list:
        """Every node's GAF path step, built once (GAF writing looks one up per path node;
        numpy scalar indexing and string concatenation per lookup cost microseconds)."""
        names = self.__dict__.get("_oriented_names")
        if names is None:
            names = [("<" if r else ">") + self.seg_names[s]
                     for r, s in zip(self.node_rev.tolist(), self.node_seg.tolist())]
            self.__dict__["_oriented_names"] = names
        return names

    def node_of_column(self, j: int) -> int:
        return int(np.searchsorted(self.node_start, j, side="right") - 1)

    def sequence(self, v: int) -> str:
        s, t = self.node_start[v], self.node_start[v + 1]
        return CODE_BASE[self.base[s:t]].tobytes().decode()

    def max_in_degree(self) -> int:
        return int(np.diff(self.pred_ptr).max(initial=0))

    def kernel_arrays(self):
        """The arrays every kernel takes, in one fixed order."""
        return (self.base, self.node_start, self.pred_ptr, self.pred_idx, self.slot,
                self.is_sink)


@dataclass
class GfaRecords:
    seg_names: list
    seg_seqs: list            # bytes, upper case, before N-masking
    link_a: np.ndarray        # int64 segment index
    link_ar: np.ndarray       # 0 '+', 1 '-'
    link_b: np.ndarray
    link_br: np.ndarray
    version: str
    paths: dict
    n_paths: int
    n_walks: int
    #: the parser's warnings (ignored lines), kept so a cached load can repeat them
    notes: list = field(default_factory=list)


#: graphs of at most ``py_nodes`` nodes (the knob, s2g/config.py; read at each load:
#: :func:`py_nodes`) run the loops below as Python (``fn.py_func``: the
#: same code, the same result) instead of compiled: a first compiled call starts
#: Numba's CPU target (0.4-0.6 s on the GPU machine's host, ~0.35 s here), which
#: ``s2g align`` on a GPU would pay before its first launch; with the graph loaded and
#: fast's tables built without Numba (numpy), that start runs while the first kernel
#: runs (:func:`s2g._numba.start_cpu_target`). The loops of a 100 kbp SNP graph (11,500
#: nodes) take ~0.05 s as Python here; at ~30,000 nodes they would cost the GPU
#: machine's host about what the start does. Larger graphs, and cyclic ones
#: (s2g/cyclic.py), stay compiled.
def py_nodes() -> int:
    """The ``py_nodes`` knob: graphs of at most this many nodes load without Numba."""
    return settings().py_nodes


#: ... and bases in numpy (:func:`_node_bases`) up to this many
PY_BASES = 1 << 24


def _small(fn, n_nodes):
    """``fn`` (a Numba dispatcher), or for a graph of at most :func:`py_nodes` nodes its
    Python original, given its 1-D array arguments as lists (which Python indexes ~2x
    faster; ``fn`` only reads them)."""
    if n_nodes > py_nodes():
        return fn

    def py(*args):
        return fn.py_func(*(a.tolist() if isinstance(a, np.ndarray) and a.ndim == 1 else a
                            for a in args))
    return py


@numba.njit(**NJIT)
def kahn_lifo(n, succ_ptr, succ_idx, indeg):
    """Topological order by Kahn's algorithm with a LIFO stack; returns (order, count)."""
    deg = indeg.copy()
    stack = np.empty(n, np.int64)
    top = 0
    for v in range(n - 1, -1, -1):      # so the smallest source is popped first
        if deg[v] == 0:
            stack[top] = v
            top += 1
    order = np.empty(n, np.int64)
    cnt = 0
    while top > 0:
        top -= 1
        u = stack[top]
        order[cnt] = u
        cnt += 1
        for k in range(succ_ptr[u + 1] - 1, succ_ptr[u] - 1, -1):
            w = succ_idx[k]
            deg[w] -= 1
            if deg[w] == 0:
                stack[top] = w
                top += 1
    return order, cnt


@numba.njit(**NJIT)
def _liveness_slots(n, pred_ptr, pred_idx, keep_prev=False):
    """node_bound slots: node u needs one while any non-simple successor is pending.

    A successor v is simple when pred(v) == [v-1] (it reads the previous column).
    u's slot is live from u to last_use[u] = its last non-simple successor and may be
    given to a node x only when x > last_use[u] (strictly after, so a kernel never
    overwrites a column another thread may still read). Smallest free slot first.
    ``keep_prev``: a non-simple v reads its predecessor v-1 from the previous column
    (still in registers), not from a slot (the ``fast`` kernel's *keep* merges).
    """
    last_use = np.full(n, -1, np.int64)
    for v in range(n):
        a, b = pred_ptr[v], pred_ptr[v + 1]
        if b - a == 1 and pred_idx[a] == v - 1:
            continue
        for k in range(a, b):
            u = pred_idx[k]
            if keep_prev and u == v - 1:
                continue
            if v > last_use[u]:
                last_use[u] = v
    slot = np.full(n, -1, np.int32)
    free = [np.int64(0)]          # min-heap of free slot ids (seeded for typing)
    free.pop()
    busy = [(np.int64(0), np.int64(0))]  # min-heap of (last_use, slot)
    busy.pop()
    n_slots = 0
    for x in range(n):
        while len(busy) > 0 and busy[0][0] < x:
            _, s = heapq.heappop(busy)
            heapq.heappush(free, s)
        if last_use[x] >= 0:
            if len(free) > 0:
                s = heapq.heappop(free)
            else:
                s = np.int64(n_slots)
                n_slots += 1
            slot[x] = s
            heapq.heappush(busy, (last_use[x], s))
    return slot, n_slots


def csr(n, src, dst):
    """CSR of dst grouped by src, each group sorted ascending."""
    order = np.lexsort((dst, src))
    ptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=ptr[1:])
    return ptr, dst[order]


def warn_broken(path, broken, stacklevel=5):
    # 5: from _from_records or GraphCache.load, the caller of load_graph (as before)
    warnings.warn(f"{os.path.basename(path)}: --break-cycles removed {broken} edge(s) "
                  "(DFS back edges, counted on both strands) to make the graph acyclic",
                  stacklevel=stacklevel)


def flatten(rec, seg_len, order, src, dst, n, strands, broken, path, orig=None,
             copy=None, walk_bound=0, cyclic_components=0) -> FlatGraph:
    """The FlatGraph of nodes ``order`` (ids < n, topological) and edges src -> dst.
    Node id ``x`` is the oriented segment ``orig[x]`` (``2s + r``; default ``x`` itself),
    ``copy[x]`` the copy of it that an unrolled cyclic graph made (s2g/cyclic.py)."""
    n_nodes = len(order)
    rank = np.full(n, -1, np.int64)
    rank[order] = np.arange(n_nodes)
    oriented = order if orig is None else orig[order]
    node_seg = (oriented >> 1).astype(np.int32)
    node_rev = (oriented & 1).astype(np.uint8)
    lens = seg_len[node_seg]
    node_start = np.zeros(n_nodes + 1, np.int64)
    np.cumsum(lens, out=node_start[1:])
    if node_start[-1] >= 2**31 - 1:
        raise GraphError(f"{path}: {node_start[-1]} bases in the DP exceed the int32 limit of this version")
    # bases in topological order; reverse nodes get the reverse complement
    fwd_codes = BASE_CODE[np.frombuffer(b"".join(rec.seg_seqs), np.uint8)]
    seg_off = np.zeros(len(seg_len) + 1, np.int64)
    np.cumsum(seg_len, out=seg_off[1:])
    base = np.empty(int(node_start[-1]), np.uint8)
    if n_nodes <= py_nodes() and len(base) <= PY_BASES:
        base[:] = _node_bases(node_start, node_seg, node_rev, seg_off, fwd_codes, COMPLEMENT_CODE)
    else:
        _fill_bases(base, node_start, node_seg, node_rev, seg_off, fwd_codes, COMPLEMENT_CODE)
    rs, rd = rank[src], rank[dst]
    pred_ptr, pred_idx = csr(n_nodes, rd, rs)
    has_succ = np.zeros(n_nodes, np.uint8)
    has_succ[rs] = 1
    pred_ptr = pred_ptr.astype(np.int32)
    pred_idx = pred_idx.astype(np.int32)
    slot, n_slots = _small(_liveness_slots, n_nodes)(n_nodes, pred_ptr, pred_idx)
    return FlatGraph(
        base=base, node_start=node_start.astype(np.int32), pred_ptr=pred_ptr,
        pred_idx=pred_idx, slot=slot, n_slots=int(n_slots), node_seg=node_seg,
        node_rev=node_rev, is_sink=(1 - has_succ).astype(np.uint8),
        seg_names=rec.seg_names, seg_len=seg_len, n_links=len(rec.link_a),
        n_paths=rec.n_paths, n_walks=rec.n_walks, strands=strands, broken_edges=broken,
        source=path, paths=rec.paths,
        node_copy=None if copy is None else copy[order].astype(np.int32),
        walk_bound=int(walk_bound), cyclic_components=int(cyclic_components))


@numba.njit(**NJIT)
def _fill_bases(base, node_start, node_seg, node_rev, seg_off, codes, comp):
    for v in range(len(node_seg)):
        s = seg_off[node_seg[v]]
        ln = seg_off[node_seg[v] + 1] - s
        o = node_start[v]
        if node_rev[v]:
            for k in range(ln):
                base[o + k] = comp[codes[s + ln - 1 - k]]
        else:
            for k in range(ln):
                base[o + k] = codes[s + k]


def _node_bases(node_start, node_seg, node_rev, seg_off, codes, comp):
    """:func:`_fill_bases` in numpy (for graphs of :func:`py_nodes` nodes and
    :data:`PY_BASES` bases at most: its index arrays take ~24 bytes a base)."""
    lens = np.diff(node_start)
    v = np.repeat(np.arange(len(node_seg)), lens)
    k = np.arange(int(node_start[-1]), dtype=np.int64) - node_start[v]   # column in its node
    rev = node_rev[v] != 0
    fwd = codes[seg_off[node_seg[v]] + np.where(rev, lens[v] - 1 - k, k)]
    return np.where(rev, comp[fwd], fwd)


def column_nodes(node_start) -> np.ndarray:
    """int32 column -> node of a graph whose node ``v`` holds columns
    ``node_start[v]:node_start[v + 1]``, filled by a Numba loop without the GIL (a seeded
    batch's window graph has ~9 M columns a 20,000-read batch on MHC; ``np.repeat`` held
    the GIL ~20 ms for it: 0.2 s of 100,000 reads' align thread, 2-core VM, py-spy --gil)."""
    ns = np.asarray(node_start, np.int64)
    out = np.empty(int(ns[-1]) if len(ns) else 0, np.int32)
    _fill_column_nodes(ns, out)
    return out


@numba.njit(**NJIT)
def _fill_column_nodes(node_start, out):
    for v in range(len(node_start) - 1):
        for j in range(node_start[v], node_start[v + 1]):
            out[j] = v


def graph_checksum(graph) -> str:
    """Digest of what the DP sees: bases, node starts, edges, strands (the seed index
    records it; computed once per graph object). A graph read from its on-disk cache
    (:mod:`s2g.graph_cache`) has it from there: 2.8 s of a 1 Gbp graph's start-up
    (BLAKE2b over 2.2 GB, 2-core VM) at every run otherwise."""
    got = graph.__dict__.get("_s2g_checksum")
    if got is None:
        h = hashlib.blake2b(digest_size=16)
        for arr in (graph.base, graph.node_start, graph.pred_ptr, graph.pred_idx):
            h.update(np.ascontiguousarray(arr).view(np.uint8).data)
        h.update(graph.strands.encode())
        got = graph.__dict__["_s2g_checksum"] = h.hexdigest()
    return got


def successors(graph):
    """(succ_ptr int64[n_nodes + 1], succ_idx int32[n_edges]): node ``u``'s successors
    ``succ_idx[succ_ptr[u]:succ_ptr[u + 1]]``, ascending (the order a stable argsort of
    ``pred_idx`` gives), made once per graph object by a counting pass without the GIL
    (the argsort took 0.8 s of a 1 Gbp graph's first seeded batch, 6 M nodes, 2-core VM)."""
    got = graph.__dict__.get("_s2g_successors")
    if got is None:
        n = int(graph.n_nodes)
        ptr = np.zeros(n + 1, np.int64)
        idx = np.empty(len(graph.pred_idx), np.int32)
        _fill_successors(np.asarray(graph.pred_ptr), np.asarray(graph.pred_idx), ptr, idx)
        got = graph.__dict__["_s2g_successors"] = (ptr, idx)
    return got


@numba.njit(**NJIT)
def _fill_successors(pred_ptr, pred_idx, ptr, idx):
    n = len(ptr) - 1
    for e in range(len(pred_idx)):
        ptr[pred_idx[e] + 1] += 1
    for u in range(n):
        ptr[u + 1] += ptr[u]
    at = ptr[:n].copy()
    for v in range(n):                   # destinations ascending: each list sorted
        for e in range(pred_ptr[v], pred_ptr[v + 1]):
            u = pred_idx[e]
            idx[at[u]] = v
            at[u] += 1
