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
import io
import lzma
import os
import re
import warnings
import zlib

import numba
import numpy as np

from ._numba import NJIT
from .errors import GraphError
from .graph_core import FlatGraph, GfaRecords, _small, csr, flatten, kahn_lifo, warn_broken

#: the letters graph and reads accept (upper case; lower case is upper-cased first):
#: IUPAC nucleotide codes, U read as T; anything else is an error naming line and letter
IUPAC = b"ACGTUNRYSWKMBDHV"
#: characters a segment name cannot hold: they would make a GAF path (">a>b") ambiguous
_BAD_NAME = re.compile(r"[\s<>]")


# --------------------------------------------------------------------------- parsing

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
try:                    # xopen reads gzip with ISA-L where installed: its own error type
    from isal.isal_zlib import error as _IsalError
    _STREAM_ERRORS += (_IsalError,)
except ImportError:  # pragma: no cover - isal comes with xopen
    pass


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


def _from_records(path, rec, strands, break_cycles, cyclic):
    """:func:`open_graph` once the file is parsed."""
    n_seg = len(rec.seg_names)
    seg_len = np.fromiter((len(s) for s in rec.seg_seqs), np.int64, n_seg)
    src, dst, n, alive = _doubled_edges(rec, strands)
    broken = 0
    while True:
        succ_ptr, succ_idx = csr(n, src, dst)
        indeg = np.bincount(dst, minlength=n).astype(np.int64)
        # nodes of the other strand (forward mode) are skipped by giving them a fake in-degree
        indeg_eff = np.where(alive, indeg, 1)
        order, cnt = _small(kahn_lifo, n)(n, succ_ptr, succ_idx, indeg_eff)
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
        warn_broken(path, broken)
    return flatten(rec, seg_len, order, src, dst, n, strands, broken, path)


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
