"""GFA -> oriented DAG -> FlatGraph (CSR arrays in topological order).

Who does what (measured numbers in README.md, "Graph loading"):

* **Parsing** is a streaming reader written here: one ``str.split`` per line. gfapy
  1.2.3 takes 12 s for the 5k-segment DRB1 graph, refuses ``VN:Z:1.1`` headers and
  ``W`` lines (../shared/notes/gfa-facts.md), so it cannot be the loader of
  million-segment pangenomes. ``load_graph(..., validate=True)`` (CLI ``--validate``)
  additionally runs gfapy's full GFA 1.0 validation where gfapy can read the file.
* **Orientation**: segment ``s`` gives nodes ``2s`` (``s+``) and ``2s+1`` (``s-``); a
  link and its mirror become two edges (ARCHITECTURE.md, "Both strands").
* **Topological order**: Kahn's algorithm with a LIFO stack (it follows chains, so a
  node's predecessor is usually the previous node and fewer columns need the
  node_bound store), compiled with Numba because it runs over millions of nodes;
  deterministic for a given file. networkx is used where a graph algorithm is
  needed on the part that did *not* sort: strongly connected components and one
  explicit cycle for the error message, and the depth-first search whose back edges
  ``break_cycles`` removes. The tests check the order against networkx.
* **Cycles**: :func:`open_graph` hands a cyclic graph over as a
  :class:`~s2g.cyclic.CyclicGraph`, which unrolls its strongly connected components
  into a DAG for a given read length (exact local/semiglobal alignment; s2g/cyclic.py);
  :func:`load_graph` does so when given ``max_read_len``.
* **FlatGraph**: numpy arrays, ready to copy to a device, plus names for output.
* **Cache**: ``open_graph(..., cache=...)`` keeps what it built in ``GRAPH.s2gg`` beside
  the GFA, keyed on the file's SHA-256 and the load options, so later loads skip the
  parse (s2g/graph_cache.py; ``s2g align`` and ``s2g index`` use it).
"""
from __future__ import annotations

import bz2
import contextlib
import gzip
import heapq
import io
import lzma
import os
import re
import warnings
import zlib
from dataclasses import dataclass, field

import numba
import numpy as np

from ._numba import NJIT
from .errors import GraphError

# base codes shared by graph and reads: A=0 C=1 G=2 T=3, anything else N=4
BASE_CODE = np.full(256, 4, dtype=np.uint8)
for _i, _c in enumerate("ACGT"):
    BASE_CODE[ord(_c)] = _i
    BASE_CODE[ord(_c.lower())] = _i
BASE_CODE[ord("U")] = BASE_CODE[ord("u")] = 3
CODE_BASE = np.frombuffer(b"ACGTN", dtype=np.uint8)
COMPLEMENT_CODE = np.array([3, 2, 1, 0, 4], dtype=np.uint8)
#: the letters graph and reads accept (upper case; lower case is upper-cased first):
#: IUPAC nucleotide codes, U read as T; anything else is an error naming line and letter
IUPAC = b"ACGTUNRYSWKMBDHV"
#: characters a segment name cannot hold: they would make a GAF path (">a>b") ambiguous
_BAD_NAME = re.compile(r"[\s<>]")


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


# --------------------------------------------------------------------------- parsing

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


class _Prefixed(io.RawIOBase):
    """``head`` (bytes already read to sniff the format) followed by the rest of ``raw``:
    the file is opened and read once, so pipes, FIFOs and process substitution work.
    ``digest`` (``update(bytes)``) sees every raw byte: the graph cache's key is taken
    from the bytes parsed (s2g/graph_cache.py)."""

    def __init__(self, head, raw, digest=None):
        self._head, self._raw, self._digest = head, raw, digest
        if digest is not None:
            digest.update(head)

    def readable(self):
        return True

    def readinto(self, b):
        if self._head:
            n = min(len(b), len(self._head))
            b[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        n = self._raw.readinto(b)
        if self._digest is not None and n:
            self._digest.update(b[:n])
        return n


#: what a damaged or truncated (compressed) file raises while it is read
_STREAM_ERRORS = (OSError, EOFError, zlib.error, lzma.LZMAError)


@contextlib.contextmanager
def _open_text(path, digest=None):
    """The GFA as text lines, opened once; gzip, bzip2 and xz recognised from the first
    bytes (not the name); a UTF-8 byte-order mark skipped; names kept byte for byte
    (UTF-8, other bytes as surrogate escapes that encode back to themselves);
    ``digest``: as :class:`_Prefixed`'s."""
    if path == "-":
        raise GraphError("the graph cannot come from standard input ('-'): s2g opens it by "
                         "name (its graph cache and seed index are found beside it, and it "
                         "may be read more than once); give the GFA file's path")
    if not os.path.exists(path):
        raise GraphError(f"{path}: no such file")
    if os.path.isdir(path):
        raise GraphError(f"{path}: is a directory, expected a GFA file")
    try:
        raw = open(path, "rb")
    except OSError as exc:
        raise GraphError(f"{path}: cannot read: {exc.strerror}") from None
    with raw:
        try:
            head = raw.read(6)
        except OSError as exc:
            raise GraphError(f"{path}: cannot read: {exc.strerror}") from None
        data = io.BufferedReader(_Prefixed(head, raw, digest), 1 << 16)
        if head[:2] == b"\x1f\x8b":
            data = gzip.GzipFile(fileobj=data)
        elif head[:3] == b"BZh":
            data = bz2.BZ2File(data)
        elif head == b"\xfd7zXZ\x00":
            data = lzma.LZMAFile(data)
        with io.TextIOWrapper(data, encoding="utf-8-sig", errors="surrogateescape",
                              newline=None) as text:
            yield text


def _lines(fh, path):
    """The lines of ``fh``; a truncated or corrupt (compressed) file is a GraphError."""
    n = 0
    try:
        for line in fh:
            n += 1
            yield line
    except _STREAM_ERRORS as exc:
        why = (f"truncated compressed file ({exc})" if isinstance(exc, EOFError)
               else exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc))
        raise GraphError(f"{path}: cannot read after line {n}: {why}") from None


def _check_names(fname, seg_names):
    """Refuse segment names that GAF cannot write unambiguously (one regex over all names;
    the slow search for the culprit runs only when there is one)."""
    if not _BAD_NAME.search("".join(seg_names)):
        return
    k, name = next((k, x) for k, x in enumerate(seg_names) if _BAD_NAME.search(x))
    raise GraphError(f"{fname}: segment name {name!r} (segment {k + 1} of the file) contains "
                     f"{_BAD_NAME.search(name).group()!r}; GAF paths ('>a>b<c') cannot hold "
                     "names with '>', '<' or white space")


_ORIENT = {"+": 0, "-": 1}


def _check_overlap(ov: str, where: str):
    # '*' (unknown) and any all-zero CIGAR are blunt; anything else overlaps.
    if ov in ("*", "0M", "0", ""):
        return
    digits = "".join(ch if ch.isdigit() else " " for ch in ov).split()
    if digits and all(int(d) == 0 for d in digits):
        return
    raise GraphError(f"{where}: overlap {ov!r} is not supported (only blunt 0M links)")


def _looks_like_record(line: str) -> bool:
    """A GFA line: a one-letter record type, then a tab (or the end of the line), and
    text (no NUL byte)."""
    return (line[0].isascii() and line[0].isalpha() and line[1:2] in ("", "\t", "\r", "\n")
            and "\x00" not in line)


def parse_gfa(path: str, keep_paths: bool = False, digest=None) -> GfaRecords:
    """Stream a GFA1 file into segment and link records (no gfapy; see module doc).
    ``digest``: fed the file's raw bytes as they are read (the graph cache's key)."""
    seg_index: dict = {}
    seg_names: list = []
    seg_seqs: list = []
    raw_links: list = []
    path_steps: list = []   # (where, name, [segment tokens]) checked after all S lines
    version = "1.0"
    n_paths = n_walks = 0
    skipped: dict = {}
    fname = os.path.basename(path)
    started = False         # a GFA record seen: until then, check that this is GFA at all
    with _open_text(path, digest) as fh:
        for lineno, line in enumerate(_lines(fh, path), 1):
            if not line or line[0] in "#\n\r":
                continue
            rec = line[0]
            where = f"{fname}:{lineno}"
            if not started:
                if not line.strip():
                    continue
                if not _looks_like_record(line):
                    raise GraphError(f"{path}: not a GFA file (line {lineno} starts with "
                                     f"{line[:12].encode('utf-8', 'surrogateescape')!r}; GFA "
                                     "lines are records of tab-separated fields that start "
                                     "with a letter: H, S, L, P, W)")
                started = True
            if rec == "S":
                f = line.rstrip("\r\n").split("\t")
                if len(f) < 3 or not f[1]:
                    raise GraphError(f"{where}: malformed S line (expected 'S<TAB>name<TAB>sequence')")
                name, seq = f[1], f[2]
                if seq == "*":
                    raise GraphError(f"{where}: segment {name!r} has no sequence ('*'); s2g needs sequences")
                if seq.isdigit() and len(f) > 3:
                    raise GraphError(f"{where}: S line with a length column: this looks like GFA2; "
                                     "s2g reads GFA 1.0 and 1.1")
                if not seq:
                    raise GraphError(f"{where}: segment {name!r} has an empty sequence "
                                     "(zero-length segments are not supported)")
                # the reads' alphabet (reads.py): IUPAC codes, any case, U as T
                bad = None
                if not seq.isascii():
                    bad = next(k for k, c in enumerate(seq) if not c.isascii())
                else:
                    code = seq.encode("ascii").upper()
                    rest = code.translate(None, IUPAC)
                    if rest:
                        bad = code.index(rest[:1])
                if bad is not None:
                    raise GraphError(f"{where}: segment {name!r} has invalid character "
                                     f"{seq[bad]!r} at position {bad + 1}; sequences must be "
                                     "IUPAC nucleotides")
                if name in seg_index:
                    raise GraphError(f"{where}: duplicate segment name {name!r}")
                seg_index[name] = len(seg_names)
                seg_names.append(name)
                seg_seqs.append(code)
            elif rec == "L":
                f = line.rstrip("\r\n").split("\t")
                if len(f) < 5 or f[2] not in _ORIENT or f[4] not in _ORIENT:
                    raise GraphError(f"{where}: malformed L line (expected 'L<TAB>from<TAB>+/-<TAB>to<TAB>+/-<TAB>overlap')")
                _check_overlap(f[5] if len(f) > 5 else "*", f"{where}: link {f[1]}{f[2]} -> {f[3]}{f[4]}")
                raw_links.append((f[1], f[2], f[3], f[4], lineno))
            elif rec == "P":
                f = line.rstrip("\r\n").split("\t")
                if len(f) < 3:
                    raise GraphError(f"{where}: malformed P line")
                steps = f[2].split(",") if f[2] not in ("", "*") else []
                if "" in steps:
                    raise GraphError(f"{where}: malformed P line (empty step in {f[2][:40]!r})")
                # P overlaps are not checked: paths are not aligned to, and vg writes
                # segment lengths there (cactus-BRCA2.gfa) although its links are blunt.
                path_steps.append((where, f[1], [(s[:-1], s[-1]) for s in steps]))
                n_paths += 1
            elif rec == "W":
                f = line.rstrip("\r\n").split("\t")
                if len(f) < 7:
                    raise GraphError(f"{where}: malformed W line (expected 7 columns)")
                walk, toks, k = f[6], [], 0
                while k < len(walk):
                    o = walk[k]
                    if o not in "<>":
                        raise GraphError(f"{where}: malformed walk {walk[:40]!r} (steps start with '>' or '<')")
                    e = k + 1
                    while e < len(walk) and walk[e] not in "<>":
                        e += 1
                    toks.append((walk[k + 1:e], "+" if o == ">" else "-"))
                    k = e
                path_steps.append((where, f"{f[1]}#{f[2]}#{f[3]}:{f[4]}-{f[5]}", toks))
                n_walks += 1
            elif rec == "H":
                for tag in line.rstrip("\r\n").split("\t")[1:]:
                    if tag.startswith("VN:Z:"):
                        version = tag[5:]
                        if version.startswith("2"):
                            raise GraphError(f"{where}: GFA {version} is not supported (GFA 1.0 and 1.1 only)")
            elif rec in "EFGOU":
                if not _looks_like_record(line):
                    raise GraphError(f"{where}: malformed line (not a GFA record: "
                                     f"{line[:12].encode('utf-8', 'surrogateescape')!r})")
                raise GraphError(f"{where}: '{rec}' is a GFA2 record; s2g reads GFA 1.0 and 1.1")
            elif rec in "CJ":
                # containments and GFA 1.2 jumps (links across a gap of unknown sequence)
                # are not edges s2g can align through: counted, and reported below
                skipped[rec] = skipped.get(rec, 0) + 1
            # other (custom) record types carry nothing for alignment
    notes = []
    if skipped:
        what = {"C": "C (containment)", "J": "J (jump)"}
        notes.append(f"{fname}: ignored " + ", ".join(f"{n} {what[r]} line(s)" for r, n in
                                                      sorted(skipped.items())))
        warnings.warn(notes[-1], stacklevel=3)
    if not seg_names:
        raise GraphError(f"{path}: empty graph (no S lines)")
    _check_names(fname, seg_names)
    n = len(raw_links)
    la = np.empty(n, np.int64); lar = np.empty(n, np.uint8)
    lb = np.empty(n, np.int64); lbr = np.empty(n, np.uint8)
    for k, (a, oa, b, ob, lineno) in enumerate(raw_links):
        ia = seg_index.get(a)
        ib = seg_index.get(b)
        if ia is None or ib is None:
            missing = a if ia is None else b
            raise GraphError(f"{fname}:{lineno}: link refers to unknown segment {missing!r}")
        la[k], lar[k], lb[k], lbr[k] = ia, _ORIENT[oa], ib, _ORIENT[ob]
    paths = {}
    for where, name, toks in path_steps:
        idx = []
        for s, o in toks:
            i = seg_index.get(s)
            if i is None or o not in _ORIENT:
                raise GraphError(f"{where}: path/walk {name!r} refers to unknown segment or orientation {s + o!r}")
            idx.append((i, _ORIENT[o]))
        if keep_paths:
            paths[name] = idx
    return GfaRecords(seg_names, seg_seqs, la, lar, lb, lbr, version, paths, n_paths, n_walks,
                      notes)


# --------------------------------------------------------------------- graph kernels

#: graphs of at most this many nodes run the loops below as Python (``fn.py_func``: the
#: same code, the same result) instead of compiled: a first compiled call starts
#: Numba's CPU target (0.4-0.6 s on the GPU machine's host, ~0.35 s here), which
#: ``s2g align`` on a GPU would pay before its first launch; with the graph loaded and
#: fast's tables built without Numba (numpy), that start runs while the first kernel
#: runs (:func:`s2g._numba.start_cpu_target`). The loops of a 100 kbp SNP graph (11,500
#: nodes) take ~0.05 s as Python here; at ~30,000 nodes they would cost the GPU
#: machine's host about what the start does. Larger graphs, and cyclic ones
#: (s2g/cyclic.py), stay compiled.
PY_NODES = int(os.environ.get("S2G_PY_NODES", 30_000))
#: ... and bases in numpy (:func:`_node_bases`) up to this many
PY_BASES = 1 << 24


def _small(fn, n_nodes):
    """``fn`` (a Numba dispatcher), or for a graph of at most :data:`PY_NODES` nodes its
    Python original, given its 1-D array arguments as lists (which Python indexes ~2x
    faster; ``fn`` only reads them)."""
    if n_nodes > PY_NODES:
        return fn

    def py(*args):
        return fn.py_func(*(a.tolist() if isinstance(a, np.ndarray) and a.ndim == 1 else a
                            for a in args))
    return py


@numba.njit(**NJIT)
def _kahn_lifo(n, succ_ptr, succ_idx, indeg):
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


def _csr(n, src, dst):
    """CSR of dst grouped by src, each group sorted ascending."""
    order = np.lexsort((dst, src))
    ptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=ptr[1:])
    return ptr, dst[order]


def _cycle_report(n, src, dst, remaining, seg_names):
    """networkx on the part Kahn could not sort: cyclic components and one cycle."""
    import networkx as nx

    rem = np.zeros(n, bool)
    rem[remaining] = True
    keep = rem[src] & rem[dst]
    g = nx.DiGraph()
    g.add_edges_from(zip(src[keep].tolist(), dst[keep].tolist()))
    comps = [c for c in nx.strongly_connected_components(g)
             if len(c) > 1 or any(g.has_edge(v, v) for v in c)]
    # a cycle and its mirror on the other strand are one cycle of the GFA
    seg_sets = {frozenset(v >> 1 for v in c) for c in comps}
    first = min(comps, key=lambda c: min(c))
    cyc = nx.find_cycle(g.subgraph(first), source=min(first))
    names = [seg_names[u >> 1] + ("-" if u & 1 else "+") for u, _ in cyc]
    shown = " -> ".join(names[:6] + (["..."] if len(names) > 6 else []) + [names[0]])
    return len(seg_sets), seg_names[cyc[0][0] >> 1], shown


def _back_edges(n, src, dst, remaining):
    """Edges to drop so the unsorted remainder becomes acyclic: DFS back edges (networkx)."""
    import networkx as nx

    rem = np.zeros(n, bool)
    rem[remaining] = True
    keep = np.nonzero(rem[src] & rem[dst])[0]
    g = nx.DiGraph()
    g.add_nodes_from(sorted(remaining.tolist()))
    g.add_edges_from(sorted(zip(src[keep].tolist(), dst[keep].tolist())))
    on_stack, back = set(), set()
    # one traversal over all roots (ascending), so every node is visited once
    for u, v, kind in nx.dfs_labeled_edges(g):
        if kind == "forward":
            on_stack.add(v)
        elif kind == "reverse":
            on_stack.discard(v)
        elif kind == "nontree" and v in on_stack:
            back.add((u, v))
    return back


def load_graph(path: str, strands: str = "both", break_cycles: bool = False,
               validate: bool = False, keep_paths: bool = False, records=None,
               max_read_len: int | None = None, scoring=None, mode="local",
               cache: str = "off", note=None) -> FlatGraph:
    """Read a GFA 1.0/1.1 file into a :class:`FlatGraph`.

    ``strands``: ``"both"`` (default; every segment in both orientations) or
    ``"forward"`` (``+`` nodes and ``+ +`` links only). ``break_cycles`` drops
    depth-first back edges instead of refusing a cyclic graph (with a warning that
    counts them). ``max_read_len``: a cyclic graph is unrolled (s2g/cyclic.py) into a
    DAG holding every walk an optimal alignment (``scoring``, default
    :class:`~s2g.scoring.Scoring`; ``mode`` local or semiglobal) of a read of up to
    that length can use; an acyclic graph is returned as it is. Without either a cyclic
    graph is refused. ``validate`` also runs gfapy's GFA 1.0 validation (slow).
    ``records``: the file's :func:`parse_gfa` result, when the caller has it (one pass
    over the file: a pipe can be read only once). ``cache``: the on-disk cache of the
    loaded graph, ``GRAPH.s2gg`` (s2g/graph_cache.py): ``"off"`` (default), ``"read"``
    (used when current), ``"auto"`` (also written after parsing a GFA of 1 MiB or more)
    or ``"write"`` (written after every parse); a missing, stale or damaged cache means
    the GFA is parsed. ``note(event, message)``: told what the cache did (event
    ``"hit"``, ``"written"`` or ``"problem"``).
    """
    g = open_graph(path, strands, break_cycles, validate, keep_paths, records,
                   cyclic=max_read_len is not None, cache=cache, note=note)
    if isinstance(g, FlatGraph):
        return g
    return g.unroll(max_read_len, scoring, mode)


def open_graph(path: str, strands: str = "both", break_cycles: bool = False,
               validate: bool = False, keep_paths: bool = False, records=None,
               cyclic: bool = True, cache: str = "off", note=None):
    """The graph as ``s2g align`` needs it: a :class:`FlatGraph` when the graph is acyclic
    (or ``break_cycles``), else a :class:`~s2g.cyclic.CyclicGraph` (``cyclic``; refused
    without it), which unrolls itself for the reads at hand. Arguments as
    :func:`load_graph`; the cache is consulted only for a regular file without
    ``records``, and read only without ``validate`` (which must read the GFA)."""
    if strands not in ("both", "forward"):
        raise GraphError(f"unknown strands {strands!r}; choose 'both' or 'forward'")
    if validate and os.path.exists(path) and not os.path.isfile(path):
        raise GraphError(f"{path}: --validate reads the GFA a second time (gfapy), so it needs a "
                         "regular file, not a pipe")
    store = None
    if cache != "off" and records is None and os.path.isfile(path):
        from .graph_cache import GraphCache
        store = GraphCache(path, cache, {"strands": strands, "break_cycles": bool(break_cycles),
                                         "keep_paths": bool(keep_paths)}, note)
        if not validate:
            g = store.load(cyclic)
            if g is not None:
                return g
    rec = records if records is not None else parse_gfa(
        path, keep_paths=keep_paths, digest=store.digest if store is not None else None)
    if validate:
        _gfapy_validate(path, rec)
    g = _from_records(path, rec, strands, break_cycles, cyclic)
    if store is not None:
        store.save(g, rec)
    return g


def _warn_broken(path, broken, stacklevel=5):
    # 5: from _from_records or GraphCache.load, the caller of load_graph (as before)
    warnings.warn(f"{os.path.basename(path)}: --break-cycles removed {broken} edge(s) "
                  "(DFS back edges, counted on both strands) to make the graph acyclic",
                  stacklevel=stacklevel)


def _from_records(path, rec, strands, break_cycles, cyclic):
    """:func:`open_graph` once the file is parsed."""
    n_seg = len(rec.seg_names)
    seg_len = np.fromiter((len(s) for s in rec.seg_seqs), np.int64, n_seg)
    src, dst, n, alive = _doubled_edges(rec, strands)
    broken = 0
    while True:
        succ_ptr, succ_idx = _csr(n, src, dst)
        indeg = np.bincount(dst, minlength=n).astype(np.int64)
        # nodes of the other strand (forward mode) are skipped by giving them a fake in-degree
        indeg_eff = np.where(alive, indeg, 1)
        order, cnt = _small(_kahn_lifo, n)(n, succ_ptr, succ_idx, indeg_eff)
        if cnt == int(alive.sum()):
            order = order[:cnt]
            break
        if not break_cycles:
            if cyclic:
                from .cyclic import CyclicGraph
                return CyclicGraph(rec, seg_len, src, dst, alive, strands, path)
            sorted_mask = np.zeros(n, bool)
            sorted_mask[order[:cnt]] = True
            remaining = np.nonzero(alive & ~sorted_mask)[0]
            n_cyc, seg, shown = _cycle_report(n, src, dst, remaining, rec.seg_names)
            raise GraphError(
                f"{os.path.basename(path)}: graph is cyclic ({n_cyc} cyclic component(s); "
                f"segment {seg!r} is on the cycle {shown}); give max_read_len to unroll its "
                "cycles for reads up to that length (s2g align does so for every batch), or "
                "use --break-cycles (break_cycles=True) to drop back edges")
        sorted_mask = np.zeros(n, bool)
        sorted_mask[order[:cnt]] = True
        remaining = np.nonzero(alive & ~sorted_mask)[0]
        back = _back_edges(n, src, dst, remaining)
        drop = np.isin(src * n + dst, np.fromiter((u * n + v for u, v in back), np.int64, len(back)))
        broken += int(drop.sum())
        src, dst = src[~drop], dst[~drop]
    if broken:
        _warn_broken(path, broken)
    return _flatten(rec, seg_len, order, src, dst, n, strands, broken, path)


def _doubled_edges(rec, strands):
    """Edges (src, dst; unique, sorted) of the doubled graph, node ``2s + r``; its node
    count; which nodes are in the DP (``forward``: the ``+`` nodes only)."""
    n_seg = len(rec.seg_names)
    src = np.concatenate([2 * rec.link_a + rec.link_ar, 2 * rec.link_b + (1 - rec.link_br)])
    dst = np.concatenate([2 * rec.link_b + rec.link_br, 2 * rec.link_a + (1 - rec.link_ar)])
    n = 2 * n_seg
    if strands == "forward":
        fwd = ((src & 1) == 0) & ((dst & 1) == 0)
        src, dst = src[fwd], dst[fwd]
    if len(src):
        code = np.unique(src * n + dst)
        src, dst = code // n, code % n
    alive = np.ones(n, bool)
    if strands == "forward":
        alive[1::2] = False
    return src, dst, n, alive


def _flatten(rec, seg_len, order, src, dst, n, strands, broken, path, orig=None,
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
    if n_nodes <= PY_NODES and len(base) <= PY_BASES:
        base[:] = _node_bases(node_start, node_seg, node_rev, seg_off, fwd_codes, COMPLEMENT_CODE)
    else:
        _fill_bases(base, node_start, node_seg, node_rev, seg_off, fwd_codes, COMPLEMENT_CODE)
    rs, rd = rank[src], rank[dst]
    pred_ptr, pred_idx = _csr(n_nodes, rd, rs)
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
    """:func:`_fill_bases` in numpy (for graphs of :data:`PY_NODES` nodes and
    :data:`PY_BASES` bases at most: its index arrays take ~24 bytes a base)."""
    lens = np.diff(node_start)
    v = np.repeat(np.arange(len(node_seg)), lens)
    k = np.arange(int(node_start[-1]), dtype=np.int64) - node_start[v]   # column in its node
    rev = node_rev[v] != 0
    fwd = codes[seg_off[node_seg[v]] + np.where(rev, lens[v] - 1 - k, k)]
    return np.where(rev, comp[fwd], fwd)


def _gfapy_validate(path, rec):
    try:
        import gfapy
    except ImportError:  # pragma: no cover - gfapy is a core dependency
        raise GraphError("--validate needs gfapy (pip install gfapy)") from None
    if rec.version.startswith("1.1") or rec.n_walks:
        raise GraphError(f"{path}: --validate uses gfapy, which reads GFA 1.0 only "
                         f"(this file is GFA {rec.version}{' with W lines' if rec.n_walks else ''})")
    try:
        gfapy.Gfa.from_file(path, vlevel=1)
    except gfapy.Error as exc:
        msg = str(exc).strip().splitlines()
        raise GraphError(f"{path}: gfapy validation failed: {msg[0] if msg else type(exc).__name__}") from None


@numba.njit(**NJIT)
def _components(n, a, b):
    parent = np.arange(n)
    for k in range(len(a)):
        x, y = a[k], b[k]
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        while parent[y] != y:
            parent[y] = parent[parent[y]]
            y = parent[y]
        if x != y:
            parent[max(x, y)] = min(x, y)
    c = 0
    for v in range(n):
        r = v
        while parent[r] != r:
            r = parent[r]
        if r == v:
            c += 1
    return c


#: read lengths whose unrolling cost ``s2g info`` reports for a cyclic graph
UNROLL_REPORT_LENGTHS = (150, 1000, 10000)


def graph_info(path: str, strands: str = "both") -> dict:
    """Facts for ``s2g info``: sizes, components, cycles (and what unrolling them for
    exact alignment costs), in-degree, node_bound slots."""
    rec = parse_gfa(path)
    info = {
        "file": path, "gfa_version": rec.version, "segments": len(rec.seg_names),
        "links": int(len(rec.link_a)), "paths": rec.n_paths, "walks": rec.n_walks,
        "bases": int(sum(len(s) for s in rec.seg_seqs)),
        "components": int(_components(len(rec.seg_names), rec.link_a, rec.link_b)),
    }
    g = open_graph(path, strands=strands, records=rec)
    if isinstance(g, FlatGraph):
        info["cyclic_components"] = 0
        info["back_edges"] = 0
    else:
        cyc = g
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            g = load_graph(path, strands=strands, break_cycles=True, records=rec)
        info["cyclic_components"] = cyc.cyclic_components
        info["back_edges"] = g.broken_edges
        # what exact alignment costs: the DAG unrolled for reads of these lengths (local
        # mode, default scoring; s2g/cyclic.py)
        info["bases_in_cycles"] = cyc.scc_bases
        for m in UNROLL_REPORT_LENGTHS:
            info[f"unrolled_dp_bases_{m}bp"] = cyc.cost(m)["columns_after"]
    info.update({
        "strands": strands, "dp_nodes": g.n_nodes, "dp_bases": g.n_bases,
        "max_in_degree": g.max_in_degree(), "node_bound_slots": g.n_slots,
        "nodes_needing_slot": int((g.slot >= 0).sum()),
    })
    return info
