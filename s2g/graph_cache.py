"""On-disk cache of a loaded graph (``GRAPH.gfa.s2gg``): later loads skip parsing.

Why
    Parsing is most of a large graph's load: on a 100 Mbp graph (100k segments of
    1 kbp) ``open_graph`` takes seconds (the ``str.split`` loop over the lines, the
    reverse complements, ``np.unique`` of the edges), longer than seeded alignment of a
    million reads on a GPU. What :func:`~s2g.graph.open_graph` returns is a handful of
    numpy arrays, which read back at disk (page cache) speed.

What is cached
    * an acyclic graph (or one made acyclic by ``break_cycles``): the whole
      :class:`~s2g.graph.FlatGraph`, every field (arrays with their dtypes, segment
      names, ``paths`` when ``keep_paths``, counts) and its checksum (what the seed
      index records, :func:`~s2g.graph_core.graph_checksum`: a 1 Gbp graph's 2.2 GB
      are not hashed again at each run); ``source`` is the path it is opened by now.
    * a cyclic graph: what :class:`~s2g.cyclic.CyclicGraph` is built from (the parsed
      records: names, sequences, links, paths; the doubled graph's edges), so the parse
      is skipped; and its seeded DAG (``CyclicGraph.for_seeded()``, the default read
      length's, with its checksum), so that a seeded run neither unrolls the graph nor
      analyses its cycles (M. bovis: 0.18 s of a run's start-up on the 2-core VM); the
      components and back edges are recomputed when a run needs them (full-graph DP's
      unrolling per batch) and those DAGs are not cached.
    * the parser's warnings (ignored C/J lines), shown again on a cached load; the
      ``break_cycles`` warning is rebuilt from the graph's ``broken_edges``.

The key (all must match, else the GFA is parsed as usual)
    cache format version; a digest of the s2g code that builds the graph (graph.py,
    graph_core.py, cyclic.py, this module: a changed loader never serves an old flattening); the GFA
    file's size and SHA-256 of its raw bytes (compressed bytes for .gz/.bz2/.xz; one per
    64 MiB and one over those, :class:`FileDigest`, hashed in threads at a load); the
    options that change the result: ``strands``, ``break_cycles``, ``keep_paths``. When
    the graph is parsed, the digest is taken from the very bytes the parser read (the
    GFA is read once), so a file that changes during the parse cannot be cached under
    the digest of another version. SHA-256 rather than CRC-32 because a 32-bit check
    lets one edit in 4 billion through, and hashlib's SHA-256 (SHA extensions) costs
    0.07 s per 113 MB here, against 0.04 s for zlib.crc32 and 0.14 s for BLAKE2b
    (README.md, "Graph loading").

On disk
    numpy ``.npz``, uncompressed: one member per array plus ``meta`` (JSON bytes: key,
    kind, scalars, warnings); no pickles. Every zip member carries a CRC-32 that
    zipfile checks on reading, so a damaged file is detected, not served. Written to a
    temporary name in the same directory, then renamed (``os.replace``): readers see
    the old file or the new one, never half of one. A cache that is missing, stale,
    foreign, truncated or unreadable means "parse the GFA": never an error. A failed
    write (read-only directory, full disk) only means the next load parses too.

Who writes it (modes of ``open_graph(cache=...)``)
    ``off`` (the library default): neither read nor written. ``read``: used when
    current, never written. ``auto`` (``s2g align``): read; written after a parse when
    the GFA file has at least :data:`AUTO_MIN_BYTES` (small graphs parse in well under
    a second and should not leave files beside them). ``write`` (``s2g index`` when its
    index goes beside the graph): read; written after every parse.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import threading
import time
import warnings

import numpy as np

#: bump when the layout below changes
FORMAT_VERSION = 1
SUFFIX = ".s2gg"
MODES = ("off", "read", "auto", "write")
#: ``auto``: cache GFA files of at least this many bytes (a 3.4 MB GFA of 50 bp segments
#: parses in 1.0 s, its cache loads in 0.05 s; the in-repo graphs are all smaller)
AUTO_MIN_BYTES = 1 << 20
#: read size for the checksum: 1-8 MiB all cost the same (README.md, "Graph loading")
CHUNK = 4 << 20
#: the GFA's digest is a SHA-256 per this many bytes (FileDigest), hashed in this many threads
PIECE, DIGEST_THREADS = 64 << 20, 4
#: the modules whose code decides what a loaded graph is
_LOADER_MODULES = ("graph.py", "graph_core.py", "cyclic.py", "graph_cache.py")
_code_digest = None


def cache_path(graph_path: str) -> str:
    """Where the cache of ``graph_path`` lives: beside it, like the seed index."""
    return graph_path + SUFFIX


def code_digest() -> str:
    """Digest of the loader's source (graph.py, graph_core.py, cyclic.py, this file),
    computed once."""
    global _code_digest
    if _code_digest is None:
        h = hashlib.sha256()
        here = os.path.dirname(os.path.abspath(__file__))
        for name in _LOADER_MODULES:
            with open(os.path.join(here, name), "rb") as fh:
                h.update(fh.read())
        _code_digest = h.hexdigest()[:32]
    return _code_digest


class FileDigest:
    """Byte count and digest of what goes through :meth:`update` (the parser feeds it the
    raw bytes it reads, s2g/graph.py ``_Prefixed``): the SHA-256 of each :data:`PIECE`
    bytes, then the SHA-256 of those digests and the size (a hash tree of one level), so
    that :func:`file_digest` hashes a file's pieces in threads: one SHA-256 stream took
    1.5 s of a 1 Gbp graph's start-up (1.1 GB GFA, the GPU machine's vCPUs, py-spy)."""

    def __init__(self):
        self._h = hashlib.sha256()
        self._in = 0                 # bytes in the current piece
        self._pieces = []
        self.size = 0

    def update(self, data):
        view = memoryview(data).cast("B")
        while len(view):
            take = min(len(view), PIECE - self._in)
            self._h.update(view[:take])
            self._in += take
            self.size += take
            view = view[take:]
            if self._in == PIECE:
                self._pieces.append(self._h.digest())
                self._h, self._in = hashlib.sha256(), 0

    def hexdigest(self) -> str:
        last = [self._h.digest()] if self._in or not self._pieces else []
        return _tree(self._pieces + last, self.size)


def _tree(pieces, size) -> str:
    h = hashlib.sha256(b"s2g piece tree")
    for d in pieces:
        h.update(d)
    h.update(int(size).to_bytes(8, "little"))
    return h.hexdigest()


def file_digest(path: str) -> FileDigest:
    """:class:`FileDigest` of the whole file, its pieces read (``os.preadv``, :data:`CHUNK`
    at a time) and hashed in :data:`DIGEST_THREADS` threads (hashlib and reads release the
    GIL, so this also overlaps reading the cache)."""
    with open(path, "rb", buffering=0) as fh:
        fd, size = fh.fileno(), os.fstat(fh.fileno()).st_size

        def piece(i):
            h, buf = hashlib.sha256(), bytearray(min(CHUNK, PIECE))
            view, at, end = memoryview(buf), i * PIECE, min(size, (i + 1) * PIECE)
            while at < end:
                n = os.preadv(fd, [view[:min(len(buf), end - at)]], at)
                if n <= 0:
                    raise OSError(f"{path}: file shorter than it was")
                h.update(view[:n])
                at += n
            return h.digest()
        n_pieces = max(1, -(-size // PIECE))
        if n_pieces == 1 or DIGEST_THREADS < 2:
            pieces = [piece(i) for i in range(n_pieces)]
        else:
            from concurrent.futures import ThreadPoolExecutor
            with ThreadPoolExecutor(min(DIGEST_THREADS, n_pieces),
                                    thread_name_prefix="s2g-digest") as ex:
                pieces = list(ex.map(piece, range(n_pieces)))
    d = FileDigest()
    d._pieces, d.size = pieces, size
    return d


def _pack_strings(names) -> np.ndarray:
    # names hold no newline (segment names no white space; P/W names come from one line)
    return np.frombuffer("\n".join(names).encode("utf-8", "surrogateescape"), np.uint8)


def _unpack_strings(arr, n) -> list:
    if n == 0:
        return []
    out = arr.tobytes().decode("utf-8", "surrogateescape").split("\n")
    if len(out) != n:
        raise ValueError(f"{len(out)} names, expected {n}")
    return out


def _pack_paths(paths: dict, arrays: dict, meta: dict):
    names = list(paths)
    lens = np.fromiter((len(paths[k]) for k in names), np.int64, len(names))
    steps = [s for k in names for s in paths[k]]
    arrays["paths.names"] = _pack_strings(names)
    arrays["paths.len"] = lens
    arrays["paths.seg"] = np.fromiter((s for s, _ in steps), np.int64, len(steps))
    arrays["paths.rev"] = np.fromiter((r for _, r in steps), np.int64, len(steps))
    meta["n_path_names"] = len(names)


def _unpack_paths(z, meta) -> dict:
    names = _unpack_strings(z["paths.names"], meta["n_path_names"])
    lens = z["paths.len"]
    seg, rev = z["paths.seg"].tolist(), z["paths.rev"].tolist()
    out, at = {}, 0
    for name, ln in zip(names, lens.tolist()):
        out[name] = list(zip(seg[at:at + ln], rev[at:at + ln]))
        at += ln
    if at != len(seg):
        raise ValueError("path steps do not add up")
    return out


class GraphCache:
    """The cache of one GFA file for one set of load options (module doc)."""

    def __init__(self, gfa_path: str, mode: str, options: dict, note=None):
        if mode not in MODES:
            raise ValueError(f"graph cache mode must be one of {', '.join(MODES)}, not {mode!r}")
        self.gfa_path, self.mode, self.options = gfa_path, mode, dict(options)
        self.path = cache_path(gfa_path)
        #: ``note(event, message)``, event "hit", "written" or "problem"
        self.note = note if note is not None else (lambda event, msg: None)
        #: filled by parse_gfa with the bytes it reads
        self.digest = FileDigest()

    def key(self, digest: FileDigest) -> dict:
        return {"format": FORMAT_VERSION, "code": code_digest(), "gfa_bytes": digest.size,
                "gfa_sha256_pieces": digest.hexdigest(), **self.options}

    # -- reading
    def load(self, cyclic: bool = True):
        """The cached graph when the cache is current, else None (never raises for the
        cache's sake). ``cyclic=False``: a cached cyclic graph is not returned (the parse
        then refuses the graph with its message)."""
        if not os.path.isfile(self.path):
            return None
        t0 = time.perf_counter()
        # checksum the GFA in a thread while the cache is read (both release the GIL)
        box = {}

        def digest():
            try:
                box["d"] = file_digest(self.gfa_path)
            except OSError as exc:
                box["e"] = exc
        th = threading.Thread(target=digest, name="s2g-gfa-digest", daemon=True)
        th.start()
        try:
            meta, graph = self._read(cyclic)
        except Exception as exc:   # noqa: BLE001 - any damage: parse the GFA instead
            th.join()
            self.note("problem", self._damaged(exc))
            return None
        th.join()
        if "d" not in box or meta is None or meta.get("key") != self.key(box["d"]):
            return None             # stale, foreign, other options or a cyclic graph
        for msg in meta.get("warnings", []):     # as parse_gfa: at open_graph's caller
            warnings.warn(msg, stacklevel=3)
        broken = getattr(graph, "broken_edges", 0)
        if broken:
            from .graph_core import warn_broken
            warn_broken(self.gfa_path, broken)
        self.note("hit", f"graph read from {self.path} ({time.perf_counter() - t0:.2f} s)")
        return graph

    def _damaged(self, exc) -> str:
        """The note for a cache that cannot be read: what is wrong and what happens now,
        in s2g's words (numpy's messages give advice about its own options)."""
        if isinstance(exc, OSError) and exc.strerror:
            what = f"cannot read the graph cache ({exc.strerror})"
        else:
            what = "damaged graph cache (not a complete s2g graph cache file)"
        if self.wants_write():
            then = "parsing the GFA; the cache is rebuilt from it"
        else:
            then = ("parsing the GFA (the cache is not rewritten by this run: delete it, or "
                    f"rebuild it with 's2g index {self.gfa_path}')")
        return f"{self.path}: {what}; {then}"

    def _read(self, cyclic):
        """(meta, graph), or (None, None) when the cache is of the wrong kind."""
        from .fileio import NpzReader
        with NpzReader(self.path) as z:
            meta = json.loads(z["meta"].tobytes().decode())
            if not isinstance(meta, dict) or meta.get("key", {}).get("format") != FORMAT_VERSION:
                return None, None
            if meta["kind"] == "cyclic":
                return (meta, self._read_cyclic(z, meta)) if cyclic else (None, None)
            return meta, self._read_flat(z, meta)

    def _read_flat(self, z, meta, prefix="", shared=None):
        """The FlatGraph of ``meta``'s fields (:meth:`_pack_flat`), its arrays named
        ``prefix + field``; ``shared``: fields given (a cyclic graph's seeded DAG takes
        its segment names and paths from the cyclic graph's records)."""
        from .graph_core import FlatGraph
        kw = {}
        for f in dataclasses.fields(FlatGraph):
            name = f.name
            if shared and name in shared:
                kw[name] = shared[name]
            elif name == "source":
                kw[name] = self.gfa_path
            elif name == "seg_names":
                kw[name] = _unpack_strings(z["seg_names"], meta["n_segments"])
            elif name == "paths":
                kw[name] = _unpack_paths(z, meta)
            elif name in meta["none"]:
                kw[name] = None
            elif name in meta["scalars"]:
                kw[name] = meta["scalars"][name]
            else:
                kw[name] = z[prefix + name]
        g = FlatGraph(**kw)
        if len(g.seg_len) != g.n_segments or len(g.node_start) != len(g.node_seg) + 1:
            raise ValueError("inconsistent array sizes")
        if isinstance(meta.get("checksum"), str):
            # the arrays passed their CRC-32s: they are those the checksum was taken of
            # (graph_core.py, which computes it, is in the key's code digest)
            g.__dict__["_s2g_checksum"] = meta["checksum"]
        return g

    def _read_cyclic(self, z, meta):
        from .cyclic import CyclicGraph
        from .graph_core import GfaRecords
        seg_len = z["seg_len"]
        blob = z["seqs"].tobytes()
        ends = np.cumsum(seg_len).tolist()
        if (ends[-1] if ends else 0) != len(blob):
            raise ValueError("sequence bytes do not add up")
        seqs = [blob[a:b] for a, b in zip([0] + ends[:-1], ends)]
        rec = GfaRecords(_unpack_strings(z["seg_names"], meta["n_segments"]), seqs,
                         z["link_a"], z["link_ar"], z["link_b"], z["link_br"],
                         meta["version"], _unpack_paths(z, meta), meta["n_paths"],
                         meta["n_walks"])
        g = CyclicGraph(rec, seg_len, z["src"], z["dst"], z["alive"],
                        self.options["strands"], self.gfa_path)
        from .config import settings
        sd = meta.get("seeded")     # the seeded DAG, as for_seeded() made it at the write
        if sd is not None and settings().cached_seeded_dag:
            g.keep_seeded(self._read_flat(z, sd, "sd.", {
                "source": self.gfa_path, "seg_names": rec.seg_names, "paths": rec.paths,
                "seg_len": seg_len}))
        return g

    # -- writing
    def wants_write(self) -> bool:
        if self.mode == "write":
            return True
        if self.mode != "auto":
            return False
        try:
            return os.path.getsize(self.gfa_path) >= AUTO_MIN_BYTES
        except OSError:
            return False

    def save(self, graph, rec, digest: FileDigest | None = None):
        """Write the cache of ``graph`` (parsed from ``rec``) when the mode asks for it;
        ``digest``: of the bytes parsed (default: what parse_gfa fed :attr:`digest`).
        A failure is a note, never an error. Returns the path written, or None."""
        if not self.wants_write():
            return None
        digest = digest or self.digest
        try:
            if os.path.getsize(self.gfa_path) != digest.size:
                return None         # changed since it was read, or not read to the end
        except OSError:
            return None
        t0 = time.perf_counter()
        meta = {"key": self.key(digest), "warnings": list(getattr(rec, "notes", ())),
                "n_segments": len(rec.seg_names)}
        arrays = {}
        from .graph_core import FlatGraph
        if isinstance(graph, FlatGraph):
            meta["kind"] = "flat"
            self._pack_flat(graph, arrays, meta)
        else:
            self._pack_cyclic(graph, rec, arrays, meta)
        arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
        tmp = f"{self.path}.{os.getpid()}.{threading.get_ident()}.tmp"
        try:
            with open(tmp, "wb") as fh:
                np.savez(fh, **arrays)
            os.replace(tmp, self.path)
        except OSError as exc:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            self.note("problem", f"{self.path}: graph cache not written ({exc.strerror or exc}); "
                      "the next run parses the GFA again")
            return None
        self.note("written", f"wrote the graph cache {self.path} ("
                  f"{os.path.getsize(self.path) / 1e6:,.1f} MB, {time.perf_counter() - t0:.2f} s)")
        return self.path

    @staticmethod
    def _pack_flat(g, arrays, meta, prefix="", shared=()):
        """``g``'s fields into ``arrays`` (named ``prefix + field``) and ``meta``;
        ``shared``: fields not stored (the reader is given them)."""
        from .graph_core import graph_checksum
        # the seed index's check of the graph, stored: no run hashes the graph again
        meta.update(none=[], scalars={}, checksum=graph_checksum(g))
        for f in dataclasses.fields(g):
            name, v = f.name, getattr(g, f.name)
            if name == "source" or name in shared:
                continue
            if name == "seg_names":
                arrays[name] = _pack_strings(v)
            elif name == "paths":
                _pack_paths(v, arrays, meta)
            elif isinstance(v, np.ndarray):
                arrays[prefix + name] = v
            elif v is None:
                meta["none"].append(name)
            elif isinstance(v, (int, str)) and not isinstance(v, bool):
                meta["scalars"][name] = v
            else:           # a new FlatGraph field: teach this function to store it
                raise TypeError(f"graph cache: cannot store FlatGraph.{name} ({type(v).__name__})")

    @staticmethod
    def _pack_cyclic(g, rec, arrays, meta):
        meta.update(kind="cyclic", version=rec.version, n_paths=rec.n_paths,
                    n_walks=rec.n_walks)
        arrays["seg_names"] = _pack_strings(rec.seg_names)
        arrays["seqs"] = np.frombuffer(b"".join(rec.seg_seqs), np.uint8)
        arrays["seg_len"] = g.seg_len
        for name in ("link_a", "link_ar", "link_b", "link_br"):
            arrays[name] = getattr(rec, name)
        arrays["src"], arrays["dst"], arrays["alive"] = g.src, g.dst, g.alive
        _pack_paths(rec.paths, arrays, meta)
        # the seeded DAG of the default read length (what s2g align --seeded and s2g index
        # unroll): a cached load skips the unrolling and the cycles' analysis
        from .errors import GraphError
        try:
            dag = g.for_seeded()
        except GraphError:          # too large to unroll: the run that needs it says so
            return
        meta["seeded"] = sd = {}
        GraphCache._pack_flat(dag, arrays, sd, "sd.", ("seg_names", "paths", "seg_len"))
