"""Exact local and semiglobal alignment on cyclic graphs: every strongly connected
component (SCC) unrolled just far enough for the reads at hand, as a DAG the kernels
run unchanged.

The problem
    On a graph with cycles the recurrence of ARCHITECTURE.md still has one solution
    (the cycles' gap costs are negative, so the DP's fixed point is unique: the best
    alignment over every *walk*, which may pass a segment more than once), but the
    kernels compute it column by column in a topological order, which a cyclic graph
    lacks. ``--break-cycles`` drops DFS back edges and loses every alignment that uses
    one. Here the graph is unrolled instead: a DAG whose nodes are copies of the
    oriented segments and whose paths are exactly the walks an optimal alignment of a
    read of length <= m can use; each node maps back to its segment, so GAF paths name
    the original segments (``>a>b>a`` when a walk goes round a cycle).

Walk bound (how far to unroll)
    An alignment consumes graph bases only by aligning them (M match/mismatch columns,
    M <= m) or deleting them (D bases); insertions stay in a column, and an alignment
    that starts with insertions can start from any column before its first consumed
    base (every column's row i is >= -(o + e*i), as is the boundary column's). So the
    walk that must be present has L = M + D bases. Scoring: match +a, mismatch -b, a
    gap of k bases -(o + e*k), e >= 1 (scoring.py refuses e = 0).

    * local: an alignment with a positive score has a match (mismatches and gaps
      score <= 0), so the optimum is S >= a (that match alone), and
      S <= a*M - o*[D > 0] - e*D (matches score at most a each; the deletions cost at
      least one opening and e per base; mismatches and insertions only lower S). So
      D <= (a*m - o - a) / e when D > 0, and
      ``L <= m + max(0, floor((a*(m - 1) - o) / e))``.
    * semiglobal: the whole read is aligned and the optimum is at least
      S_lb = -min(o + e*m, b*m): insert the whole read at any column, or (the graph
      has a cycle, so walks of every length) align it base for base to any m-base walk.
      With I = m - M insertions, S <= a*M - e*(m - M) - o*[D > 0] - e*D; S >= S_lb and
      M <= m give D <= (a*m - o - S_lb) / e when D > 0 (M + D grows with M), so
      ``L <= m + max(0, floor((a*m - o + min(o + e*m, b*m)) / e))``.
    * global: a whole source-to-sink walk; not unrolled (refused: use --break-cycles).

    Defaults (a=2, b=4, o=4, e=2) give L = 297 (local) and 450 (semiglobal) for 150 bp,
    about 2 m and 3 m. Every optimal alignment (all of them, whatever the ties) of every
    read of length <= m uses a walk of at most L bases.

Unrolling (what is built; :meth:`CyclicGraph.unroll`)
    1. Tarjan's algorithm gives the SCCs of the doubled graph (both strands); one is
       *cyclic* when it has two nodes or more, or a self loop. Nodes outside cyclic SCCs
       stay single, with all their edges: acyclic parts are not copied.
    2. In each cyclic SCC a depth-first search from its first entry node (one with a
       predecessor outside the SCC, else its smallest node) labels back edges; the
       other edges of the SCC (*forward* edges) form a DAG.
    3. Copies count *down*: copy k of a node x holds the walks that still cross k back
       edges of its SCC after x; copy 0 of every node is the graph itself without its
       back edges. Copy k >= 1 is built only where such a walk can be part of a walk of
       <= L bases: post_k(x) < L, with post_k(x) the fewest bases after x's last base on
       a walk that leaves x and crosses k back edges (its last node counts one base: a
       walk may end at a node's first base). post_k is a shortest-path problem over
       (node, copy) with node lengths as weights, solved copy by copy in reverse
       topological order of the forward edges (``_copies`` on the reversed graph).
    4. Edges: forward edges inside each copy, back edges from copy k to copy k - 1,
       edges into an SCC from outside (copy 0 of another SCC, or a single node) to every
       copy, edges out of an SCC from copy 0 only.

    Counting down rather than up (copy i = back edges crossed so far) puts the fan at a
    component's entry (one predecessor column read by every copy: one node_bound slot)
    instead of its exit (a successor reading every copy's column: one slot per copy).
    MT unrolled for 10 kbp reads (41 laps of its loop) needed 43 slots counting up, 4
    counting down (3 without copies). Full-graph DP therefore counts down.

    Seeded alignment counts *up* (``count="up"``: the mirror image, copy i = back edges
    crossed so far, pre_i(x) < L with pre_i the fewest bases before x's first base;
    back edges from copy i to i + 1; entering into copy 0 only, leaving from every
    copy). Its index keeps a seed at copy 0 (:func:`dedup_seeds`), and a read across a
    back edge u -> v then chains on copy 0 up to u, whose window extends downstream over
    the back edge into copy 1 of v, which Kahn's LIFO order places right after u: one
    compact window. Counting down, the copy that crosses the back edge lies upstream of
    copy 0 of u in a separate chain of columns and the read's seeds split into two
    windows (on 20 LPA reads across back edges: 7 of 20 at the full-DP optimum, against
    19 counting up). Its windows are bounded, so the slots of a loop's copies stay local.

    Exact for every read of length <= m: (a) every walk of <= L bases is a path of the
    DAG, entering each SCC in the copy that counts the back edges it crosses there (each
    of its suffixes has <= L bases, so each (node, copy) it visits has post < L, and the
    edges between them exist); (b) every path of the DAG is a walk of the graph, and a
    node without predecessors in the DAG reads the boundary column, whose values (0, or
    -(o + e*i) in semiglobal mode) are those of a real alignment (insertions at a
    predecessor). So the DAG's optimum is the cyclic graph's: the tests check it against
    a fixed-point DP over the cyclic graph (tests/cyclic_ref.py). The end cell and
    traceback ties follow the unrolled DAG's column order (a cyclic graph has no
    topological order of its own).

Cost
    Copies exist only within L bases upstream of back edges: for 150 bp reads the DP
    of LPA (one 1,167-segment SCC per strand, 6 kbp) grows by 0.17% (local) and that of
    MT (a 501 bp self loop) by 2.85%; for 10 kbp reads by 10.6% and 114% (41 laps of the
    loop). README.md, "Cyclic graphs", and bench/cyclic.py. The worst case is a short
    loop: a 1-base self loop needs L copies of one base.

Methods considered
    (1) Iterating the DP over the cyclic graph to a fixed point (what tests/cyclic_ref.py
    does, and what GraphAligner's bit-parallel engine does by re-queuing nodes): every
    sweep covers every column, needs at least one more sweep than the back edges an
    alignment crosses, and every kernel (V0-V4, fast, simd, the window kernels, the
    tracebacks) would need its own cyclic version. (2) Copying a whole SCC k times
    costs k x |SCC| columns, where the pruned unrolling above adds only the bases from
    which a walk of <= L bases reaches a back edge (LPA: 6,002-base SCC, about +350 per
    strand at 150 bp). The unrolling keeps one DP per read in one pass, on every kernel.

Reads of unknown length (``s2g align``)
    The unrolled DAG depends on m; s2g align unrolls per batch, for the batch's longest
    read rounded up to a bucket of at most 12.5% (:func:`bucket`), and keeps the few
    DAGs it made (:meth:`CyclicGraph.for_reads`): streaming works, and every read is
    exact. Seeded alignment and ``s2g index`` need one DAG for the whole run (the index
    belongs to it): they unroll for walks of :func:`seeded_walk_bound` bases
    (``--max-read-len``, default 1000 bp; 3 x that with any scoring), counting up
    (:meth:`CyclicGraph.for_seeded`), and the index keeps each seed once per original
    graph position (:func:`dedup_seeds`).
"""
from __future__ import annotations

import heapq
import threading
from collections import OrderedDict
from types import SimpleNamespace

import numba
import numpy as np

from ._numba import NJIT
from .errors import GraphError
from .graph_core import csr, flatten, kahn_lifo
from .scoring import Mode, Scoring

#: seeded alignment and ``s2g index`` on a cyclic graph: reads up to this length unless
#: ``--max-read-len`` says otherwise
SEEDED_READ_LEN = 1000
#: unrolled DAGs kept by :meth:`CyclicGraph.for_reads` (one per read-length bucket)
KEEP_UNROLLED = 4


def walk_bound(m: int, scoring: Scoring | None = None, mode="local") -> int:
    """Most graph bases an optimal alignment of a read of <= ``m`` bases can consume
    (the module docstring derives it); at least 1."""
    a, b, o, e = (scoring or Scoring()).as_tuple()
    mode = Mode.parse(mode)
    m = max(int(m), 1)
    if mode == Mode.LOCAL:
        d = (a * (m - 1) - o) // e
    elif mode == Mode.SEMIGLOBAL:
        d = (a * m - o + min(o + e * m, b * m)) // e
    else:
        raise GraphError("global mode needs a whole source-to-sink walk, which a cyclic "
                         "graph does not bound: align in local or semiglobal mode, or use "
                         "--break-cycles")
    return m + max(0, d)


def seeded_walk_bound(max_read_len: int | None = None) -> int:
    """The walk bound of seeded alignment and ``s2g index`` on a cyclic graph: the
    semiglobal bound of ``max_read_len``-bp reads with the default scoring (3 x m),
    independent of the run's scoring so that index and aligner agree on the DAG."""
    return walk_bound(max_read_len or SEEDED_READ_LEN, Scoring(), Mode.SEMIGLOBAL)


def bucket(m: int) -> int:
    """``m`` rounded up to a multiple of 2^(floor(log2 m) - 3) (at most 12.5% more; 64 at
    least): the read lengths a streaming run unrolls for, so that batches of similar
    longest reads share one DAG."""
    m = max(int(m), 64)
    step = 1 << max(0, m.bit_length() - 4)
    return -(-m // step) * step


# ------------------------------------------------------------------ graph kernels

@numba.njit(**NJIT)
def _tarjan(n, succ_ptr, succ_idx, alive):
    """Strongly connected components (Tarjan, iterative): ``comp[v]`` for alive nodes,
    -1 for the others; returns (comp, count)."""
    index = np.full(n, -1, np.int64)
    low = np.zeros(n, np.int64)
    on = np.zeros(n, np.bool_)
    comp = np.full(n, -1, np.int64)
    stack = np.empty(n, np.int64)
    cs_v = np.empty(n, np.int64)          # call stack: node, next successor edge
    cs_e = np.empty(n, np.int64)
    sp = 0
    idx = 0
    nc = 0
    for r in range(n):
        if not alive[r] or index[r] >= 0:
            continue
        cs_v[0] = r
        cs_e[0] = succ_ptr[r]
        cp = 1
        index[r] = idx
        low[r] = idx
        idx += 1
        stack[sp] = r
        sp += 1
        on[r] = True
        while cp > 0:
            v = cs_v[cp - 1]
            k = cs_e[cp - 1]
            if k < succ_ptr[v + 1]:
                cs_e[cp - 1] = k + 1
                w = succ_idx[k]
                if index[w] < 0:
                    index[w] = idx
                    low[w] = idx
                    idx += 1
                    stack[sp] = w
                    sp += 1
                    on[w] = True
                    cs_v[cp] = w
                    cs_e[cp] = succ_ptr[w]
                    cp += 1
                elif on[w]:
                    low[v] = min(low[v], index[w])
            else:
                if low[v] == index[v]:
                    while True:
                        sp -= 1
                        w = stack[sp]
                        on[w] = False
                        comp[w] = nc
                        if w == v:
                            break
                    nc += 1
                cp -= 1
                if cp > 0:
                    u = cs_v[cp - 1]
                    low[u] = min(low[u], low[v])
    return comp, nc


@numba.njit(**NJIT)
def _dfs_back_edges(n, succ_ptr, succ_idx, comp, roots):
    """``back[k]``: CSR edge k (u -> succ_idx[k], inside u's component) closes a cycle in
    a depth-first search from ``roots`` (in that order) that stays inside components."""
    state = np.zeros(n, np.uint8)         # 0 new, 1 on the DFS stack, 2 done
    back = np.zeros(len(succ_idx), np.bool_)
    cs_v = np.empty(n, np.int64)
    cs_e = np.empty(n, np.int64)
    for r in roots:
        if state[r] != 0:
            continue
        cs_v[0] = r
        cs_e[0] = succ_ptr[r]
        cp = 1
        state[r] = 1
        while cp > 0:
            v = cs_v[cp - 1]
            k = cs_e[cp - 1]
            if k < succ_ptr[v + 1]:
                cs_e[cp - 1] = k + 1
                w = succ_idx[k]
                if comp[w] != comp[v]:
                    continue
                if state[w] == 0:
                    state[w] = 1
                    cs_v[cp] = w
                    cs_e[cp] = succ_ptr[w]
                    cp += 1
                elif state[w] == 1:
                    back[k] = True
            else:
                state[v] = 2
                cp -= 1
    return back


@numba.njit(**NJIT)
def _copies(n, node_len, cyc_nodes, fwd_ptr, fwd_idx, bk_ptr, bk_idx, rank, L):
    """The copies i >= 1 that a walk of <= L bases can use (module doc, step 3):
    (node, copy) pairs, copy by copy, each copy's nodes by ``rank``.

    Written for walks *entering* x after i back edges (``fwd``/``bk``: successor lists,
    ``rank``: a topological rank); the caller passes the reversed graph (predecessor
    lists, reversed rank), which gives the copies that count back edges still to cross.
    pre[x] is the fewest bases before x's first base on such a walk; a node enters the
    heap (keyed by rank, so it is final when popped: its predecessors rank lower) only
    with pre < L.
    """
    INF = np.int64(1) << 62
    pre = np.full(n, INF, np.int64)
    out_node = np.empty(16, np.int64)
    out_copy = np.empty(16, np.int64)
    n_out = 0
    prev_nodes = cyc_nodes.copy()
    prev_end = np.ones(len(cyc_nodes), np.int64)   # copy 0: a walk may start at a last base
    i = 0
    while len(prev_nodes) > 0:
        i += 1
        heap = [(np.int64(0), np.int64(0))]
        heap.pop()
        for t in range(len(prev_nodes)):
            y = prev_nodes[t]
            ey = prev_end[t]
            if ey >= L:
                continue
            for k in range(bk_ptr[y], bk_ptr[y + 1]):
                x = bk_idx[k]
                if ey < pre[x]:
                    if pre[x] == INF:
                        heapq.heappush(heap, (rank[x], x))
                    pre[x] = ey
        cur_nodes = np.empty(len(heap) + 16, np.int64)
        cur_end = np.empty(len(heap) + 16, np.int64)
        nc = 0
        while len(heap) > 0:
            _, x = heapq.heappop(heap)
            ex = pre[x] + node_len[x]
            pre[x] = INF
            if nc == len(cur_nodes):
                cur_nodes = np.concatenate((cur_nodes, np.empty(nc, np.int64)))
                cur_end = np.concatenate((cur_end, np.empty(nc, np.int64)))
            cur_nodes[nc] = x
            cur_end[nc] = ex
            nc += 1
            if ex < L:
                for k in range(fwd_ptr[x], fwd_ptr[x + 1]):
                    z = fwd_idx[k]
                    if ex < pre[z]:
                        if pre[z] == INF:
                            heapq.heappush(heap, (rank[z], z))
                        pre[z] = ex
        if n_out + nc > len(out_node):
            size = max(2 * len(out_node), n_out + nc)
            a = np.empty(size, np.int64)
            b = np.empty(size, np.int64)
            a[:n_out] = out_node[:n_out]
            b[:n_out] = out_copy[:n_out]
            out_node, out_copy = a, b
        out_node[n_out:n_out + nc] = cur_nodes[:nc]
        out_copy[n_out:n_out + nc] = i
        n_out += nc
        prev_nodes = cur_nodes[:nc]
        prev_end = cur_end[:nc]
    return out_node[:n_out], out_copy[:n_out]


@numba.njit(**NJIT)
def _uid(v, i, cptr, ccopy, cuid):
    """Id of copy ``i`` of node ``v`` in the unrolled graph, -1 if it was not built."""
    if i == 0:
        return v
    lo, hi = cptr[v], cptr[v + 1]
    while lo < hi:                          # copies of v, ascending
        mid = (lo + hi) >> 1
        if ccopy[mid] < i:
            lo = mid + 1
        else:
            hi = mid
    if lo < cptr[v + 1] and ccopy[lo] == i:
        return cuid[lo]
    return -1


@numba.njit(**NJIT)
def _push_edge(src, dst, ne, a, b):
    if ne == len(src):
        s2 = np.empty(2 * len(src), np.int64)
        d2 = np.empty(2 * len(src), np.int64)
        s2[:ne] = src[:ne]
        d2[:ne] = dst[:ne]
        src, dst = s2, d2
    src[ne] = a
    dst[ne] = b
    return src, dst, ne + 1


@numba.njit(**NJIT)
def _unrolled_edges(n, succ_ptr, succ_idx, back, comp, cyc, cptr, ccopy, cuid, up):
    """Edges of the unrolled graph (module doc, step 4) as (src, dst) uid arrays; copy k
    of node v is ``_uid(v, k)`` (copy 0: v itself). ``up``: copies count the back edges
    crossed (back edges to copy k + 1, leaving from every copy into copy 0), else those
    still to cross (back edges to copy k - 1, leaving from copy 0 into every copy)."""
    cap = len(succ_idx) + 4 * len(ccopy) + 16
    src = np.empty(cap, np.int64)
    dst = np.empty(cap, np.int64)
    ne = 0
    for u in range(n):
        nu = cptr[u + 1] - cptr[u] + 1     # copies of u, copy 0 included
        for t in range(nu):
            i = 0 if t == 0 else ccopy[cptr[u] + t - 1]
            su = u if t == 0 else cuid[cptr[u] + t - 1]
            for k in range(succ_ptr[u], succ_ptr[u + 1]):
                v = succ_idx[k]
                if cyc[u] and comp[v] == comp[u]:      # inside an SCC
                    if back[k]:
                        if i == 0 and not up:
                            continue                    # no back edge left to cross
                        dv = _uid(v, i + 1 if up else i - 1, cptr, ccopy, cuid)
                    else:
                        dv = _uid(v, i, cptr, ccopy, cuid)
                    if dv >= 0:
                        src, dst, ne = _push_edge(src, dst, ne, su, dv)
                elif up:                                # leaving from every copy, into copy 0
                    src, dst, ne = _push_edge(src, dst, ne, su, v)
                elif i == 0:                            # leaving from copy 0, into every copy
                    src, dst, ne = _push_edge(src, dst, ne, su, v)
                    for c in range(cptr[v], cptr[v + 1]):
                        src, dst, ne = _push_edge(src, dst, ne, su, cuid[c])
    return src[:ne], dst[:ne]


# ------------------------------------------------------------------ the cyclic graph

class CyclicGraph:
    """A cyclic graph, ready to be unrolled (module doc) for any read length.

    ``n_bases`` is the graph's own DP size (both strands, or ``+`` only), the number of
    columns before unrolling. :meth:`unroll` gives the DAG for reads of <= m bases;
    :meth:`for_reads` the (cached) DAG for a batch.
    """

    #: what :meth:`_analyse` computes, on first use: a seeded run whose DAG came from the
    #: graph cache (:meth:`keep_seeded`) never needs them
    _ANALYSED = frozenset((
        "comp", "cyc", "cyclic_components", "back", "n_back", "rank", "fwd_ptr", "fwd_idx",
        "rfwd_ptr", "rfwd_idx", "bk_ptr", "bk_idx", "rbk_ptr", "rbk_idx"))

    def __init__(self, rec, seg_len, src, dst, alive, strands, path):
        self.rec, self.seg_len, self.strands, self.source = rec, seg_len, strands, path
        n = len(alive)
        self.n, self.alive = n, alive
        self.src, self.dst = src, dst
        self.succ_ptr, self.succ_idx = csr(n, src, dst)
        self.node_len = np.where(alive, seg_len[np.arange(n) >> 1], 0).astype(np.int64)
        self._cache: OrderedDict = OrderedDict()
        self._lock = threading.Lock()
        self._analysis_lock = threading.Lock()
        #: walk bound -> the seeded DAG (:meth:`for_seeded`)
        self._seeded: dict = {}

    def __getattr__(self, name):
        # only for attributes not set yet: the analysis' results, computed once
        if name in CyclicGraph._ANALYSED:
            with self.__dict__["_analysis_lock"]:
                if "comp" not in self.__dict__:
                    self._analyse()
            return self.__dict__[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _analyse(self):
        """The SCCs, the DFS back edges and the forward graph's ranks (module doc)."""
        n, src, dst, alive = self.n, self.src, self.dst, self.alive
        a = SimpleNamespace()     # published whole at the end: no thread sees half of it
        comp, _ = _tarjan(n, self.succ_ptr, self.succ_idx, alive)
        size = np.bincount(comp[alive], minlength=int(comp.max()) + 1)
        loop = src[src == dst]
        cyc_comp = size > 1
        cyc_comp[comp[loop]] = True
        a.cyc = np.zeros(n, np.bool_)
        a.cyc[alive] = cyc_comp[comp[alive]]
        # a cycle and its mirror on the other strand are one cycle of the GFA
        cn = np.flatnonzero(a.cyc)
        cn = cn[np.argsort(comp[cn], kind="stable")]
        cuts = np.flatnonzero(np.diff(comp[cn])) + 1
        a.cyclic_components = len({frozenset((part >> 1).tolist())
                                   for part in np.split(cn, cuts)}) if len(cn) else 0
        # DFS roots: entry nodes (a predecessor outside the SCC) first, then the rest
        entry = np.zeros(n, np.bool_)
        cross = comp[src] != comp[dst]
        entry[dst[cross]] = True
        nodes = np.flatnonzero(a.cyc)
        roots = nodes[np.lexsort((nodes, ~entry[nodes]))]
        a.back = _dfs_back_edges(n, self.succ_ptr, self.succ_idx, comp, roots)
        esrc = np.repeat(np.arange(n), np.diff(self.succ_ptr))
        a.n_back = int(a.back.sum())
        keep = ~a.back
        fs, fd = esrc[keep], self.succ_idx[keep]
        # topological rank of the forward graph (every edge but the back edges)
        fptr, fidx = csr(n, fs, fd)
        order, cnt = kahn_lifo(n, fptr, fidx,
                                np.where(alive, np.bincount(fd, minlength=n), 1).astype(np.int64))
        if cnt != int(alive.sum()):      # pragma: no cover - DFS back edges break every cycle
            raise AssertionError("cyclic: the graph without its back edges is not a DAG")
        a.rank = np.full(n, n, np.int64)
        a.rank[order[:cnt]] = np.arange(cnt)
        # forward (inside an SCC) and back edges, and the reversed graph's, for ``_copies``
        inside = a.cyc[fs] & (comp[fs] == comp[fd])
        a.fwd_ptr, a.fwd_idx = csr(n, fs[inside], fd[inside])
        a.rfwd_ptr, a.rfwd_idx = csr(n, fd[inside], fs[inside])
        bs, bd = esrc[a.back], self.succ_idx[a.back]
        a.bk_ptr, a.bk_idx = csr(n, bs, bd)
        a.rbk_ptr, a.rbk_idx = csr(n, bd, bs)
        a.comp = comp
        self.__dict__.update(vars(a))

    # -- sizes
    @property
    def n_bases(self) -> int:
        """DP columns of the graph as it is (before unrolling)."""
        return int(self.node_len.sum())

    @property
    def n_segments(self) -> int:
        return len(self.rec.seg_names)

    @property
    def scc_bases(self) -> int:
        """Bases in cyclic SCCs (both strands: a cycle and its mirror)."""
        return int(self.node_len[self.cyc].sum())

    def _layout(self, L, count="down"):
        """(node, copy) of every copy k >= 1 for walks of <= L bases (module doc, step
        3): ``down``, on the reversed graph, copy k counts the back edges a walk still
        crosses; ``up``, on the graph, those it has crossed."""
        if count == "up":
            rank, ptrs = self.rank, (self.fwd_ptr, self.fwd_idx, self.bk_ptr, self.bk_idx)
        else:
            rank = self.n - self.rank
            ptrs = (self.rfwd_ptr, self.rfwd_idx, self.rbk_ptr, self.rbk_idx)
        cyc_nodes = np.flatnonzero(self.cyc).astype(np.int64)
        cyc_nodes = cyc_nodes[np.argsort(rank[cyc_nodes], kind="stable")]
        return _copies(self.n, self.node_len, cyc_nodes, *ptrs, rank, np.int64(L))

    def cost(self, m: int, scoring: Scoring | None = None, mode="local") -> dict:
        """What unrolling for reads of <= m bases costs, without building the DAG."""
        L = walk_bound(m, scoring, mode)
        node, copy = self._layout(L)
        return {"read_len": int(m), "walk_bound": L, "columns_before": self.n_bases,
                "columns_after": self.n_bases + int(self.node_len[node].sum()),
                "copies": int(copy.max(initial=0)) + 1, "copied_nodes": int(len(node))}

    def unroll(self, m: int, scoring: Scoring | None = None, mode="local"):
        """The DAG (:class:`~s2g.graph.FlatGraph`) holding every walk an optimal
        ``mode`` alignment of a read of <= m bases can use (module doc)."""
        return self.unroll_walks(walk_bound(m, scoring, mode))

    def unroll_walks(self, L: int, count: str = "down"):
        """The DAG holding every walk of <= L bases of this graph; its copies count the
        back edges still to cross (``down``, full-graph DP) or those crossed (``up``,
        seeded alignment; module doc)."""
        if count not in ("down", "up"):
            raise ValueError(f"count must be 'down' or 'up', not {count!r}")
        n = self.n
        node, copy = self._layout(max(int(L), 1), count)
        order = np.lexsort((copy, node))            # by node, then copy
        node, copy = node[order], copy[order]
        cuid = (n + np.arange(len(node))).astype(np.int64)
        cptr = np.zeros(n + 1, np.int64)
        np.cumsum(np.bincount(node, minlength=n), out=cptr[1:])
        src, dst = _unrolled_edges(n, self.succ_ptr, self.succ_idx, self.back, self.comp,
                                   self.cyc, cptr, copy, cuid, count == "up")
        N = n + len(node)
        orig = np.concatenate([np.arange(n, dtype=np.int64), node])
        cp = np.concatenate([np.zeros(n, np.int64), copy])
        alive = np.concatenate([self.alive, np.ones(len(node), np.bool_)])
        sptr, sidx = csr(N, src, dst)
        indeg = np.where(alive, np.bincount(dst, minlength=N), 1).astype(np.int64)
        topo, cnt = kahn_lifo(N, sptr, sidx, indeg)
        if cnt != int(alive.sum()):    # pragma: no cover - copies only go forward
            raise AssertionError("cyclic: the unrolled graph is not a DAG")
        return flatten(self.rec, self.seg_len, topo[:cnt], src, dst, N, self.strands, 0,
                        self.source, orig=orig, copy=cp, walk_bound=max(int(L), 1),
                        cyclic_components=self.cyclic_components)

    def for_seeded(self, max_read_len: int | None = None):
        """The one DAG of seeded alignment and its index: walks of
        :func:`seeded_walk_bound` bases, copies counting up (module doc). Made once per
        bound (the same object again), or taken from the graph cache (:meth:`keep_seeded`)."""
        L = seeded_walk_bound(max_read_len)
        with self._lock:
            g = self._seeded.get(L)
        if g is None:
            g = self.unroll_walks(L, count="up")
            with self._lock:
                g = self._seeded.setdefault(L, g)
        return g

    def keep_seeded(self, dag) -> None:
        """Keep ``dag`` as :meth:`for_seeded`'s DAG for its walk bound (the graph cache
        stores the default bound's: a seeded run on a cached cyclic graph neither unrolls
        it nor analyses its cycles)."""
        with self._lock:
            self._seeded[int(dag.walk_bound)] = dag

    def for_reads(self, max_len: int, scoring: Scoring | None = None, mode="local",
                  floor: int | None = None):
        """The unrolled DAG for a batch whose longest read has ``max_len`` bases (at least
        ``floor``), rounded up by :func:`bucket`; the last few are kept, and the same
        object is returned for the same bucket (the kernels cache per-graph tables on
        it). Thread-safe: the CLI's stages call it from their own threads."""
        L = walk_bound(bucket(max(int(max_len), int(floor or 0))), scoring, mode)
        with self._lock:
            g = self._cache.get(L)
            if g is None:
                g = self._cache[L] = self.unroll_walks(L)
                while len(self._cache) > KEEP_UNROLLED:
                    self._cache.popitem(last=False)
            else:
                self._cache.move_to_end(L)
            return g


def dedup_seeds(graph, hashes, cols):
    """One seed index entry per (hash, original graph position) of an unrolled graph:
    a k-mer that ends at the same base of the same oriented segment in several copies is
    the same seed hit of the cyclic graph, kept at its lowest copy (then lowest column),
    so that copies do not look like repeats to chaining and MAPQ. ``hashes`` and
    ``cols`` as :func:`s2g.index.collect_syncmers` gives them; returns them filtered."""
    if graph.node_copy is None or len(cols) == 0:
        return hashes, cols
    ns = graph.node_start.astype(np.int64)
    v = np.searchsorted(ns, cols, side="right") - 1
    seg = graph.node_seg[v].astype(np.int64)
    seg_off = np.zeros(len(graph.seg_len) + 1, np.int64)
    np.cumsum(graph.seg_len, out=seg_off[1:])
    # (oriented segment, offset) as one number: segment s's + block, then its - block
    pos = 2 * seg_off[seg] + graph.node_rev[v] * graph.seg_len[seg] + (cols - ns[v])
    order = np.lexsort((cols, graph.node_copy[v], pos, hashes))
    h, p = hashes[order], pos[order]
    first = np.ones(len(order), bool)
    first[1:] = (h[1:] != h[:-1]) | (p[1:] != p[:-1])
    keep = np.sort(order[first])
    return hashes[keep], cols[keep]
