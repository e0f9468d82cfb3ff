"""Seed index of a graph: closed syncmers of every graph walk, k-mers across node boundaries.

What is indexed
    Every k-mer spelled by a walk of the FlatGraph (both strands: the doubled graph's
    ``s-`` nodes are indexed as they are, so a reverse-strand read matches them in its
    own orientation and needs no reverse complement) that is a *closed syncmer*: among
    its ``k - s + 1`` s-mers, the smallest (by an invertible 64-bit hash) is the first
    or the last. The choice depends on the k-mer alone, not on its neighbours, so a
    graph k-mer and a read k-mer are picked alike whatever walk surrounds them — the
    property window minimizers lack on a graph (a minimizer is the smallest of ``w``
    consecutive k-mers, and a graph position has as many neighbourhoods as walks
    through it). Density ``2 / (k - s + 1)`` (k=19, s=11: 22%), and any ``k - s``
    consecutive k-mers of a walk contain one (Edgar 2021, "Syncmers are more sensitive
    than minimizers"). Each entry is (hash of the k-mer, graph column of its last base).

How
    One pass over the nodes in topological order (compiled, :func:`collect_syncmers`) carries
    the set of k-mer suffixes (up to k bases, 2 bits each) that end at each column:
    inside a node a column extends the previous column's set by its base; a node's first
    column extends the union of its predecessors' last-column sets, kept in the graph's
    own node_bound slots (liveness, as the DP keeps columns). An ``N`` clears the set.
    Where bubbles pile up, a column's set is capped at ``max_kmers`` suffixes (the
    smallest kept; the count of capped columns is reported): seeding there falls back
    to the k-mers that survive, the DP itself never depends on it. From a node's k-th
    column on, the set is one k-mer, the node's own bases: the single pass skips those
    columns and :func:`interior_syncmers` makes their entries, nodes in parallel. A node
    of at least k bases so ends with one suffix of its own, so the pass over the rest
    runs in segments of the node order cut where every edge into a segment leaves such a
    node (:func:`segment_cuts`), in threads. The entries are merged back in column order
    and sorted by hash in parallel (:func:`sort_by_hash`, a stable counting sort by the
    top bits): the same arrays as the single pass and a stable argsort (tests). On the
    2-core VM: MHC (5.4 kbp nodes) 0.92-0.98 -> 0.33-0.36 s, a 10 Mbp simulated SNP graph
    (17 bp nodes) 5.3-7.1 -> 2.6-2.7 s (session 31).

On disk (``GRAPH.s2gi``, format 4)
    the magic ``S2GINDEX``, a JSON header's length (uint64) and text (format version, k,
    s, the FlatGraph's checksum (bases, nodes, edges and strands), entry count, stats,
    the body's CRC-32s), the CRC-32 of those three (uint32), then at 64-byte aligned
    offsets the entries' hashes (uint64, sorted) and columns (int32, ascending within a
    hash), zero bytes between: 12 bytes per entry, read straight into arrays (format 2,
    an ``.npz``, spent most of its load in zipfile's CRC pass: 1.9 s for 140 MB on the
    2-core VM).

    Every load checks every byte: the header's CRC-32, the padding (zero), and one
    CRC-32 per :data:`CHUNK` (4 MiB) of each array, after the read, before anything
    compiled sees the arrays (format 3 had no checksum: 2,000 flipped bytes left 1,265
    of 2,000 reads unmapped with exit 0, a stretch of 0xff crashed the lookups, issue
    #40). The CRCs come from zlib-ng (25 GB/s on the 2-core VM; stdlib zlib, 3.9 GB/s,
    in two threads where it is missing; the same CRC-32 either way): for the index of
    a 20 Mbp simulated graph (147.5 MB, 12.3M entries) 0.009-0.014 s of a 0.13-0.18 s
    load (stdlib zlib: +0.04-0.09 s). CRC-32 rather than the SHA-256 of the graph
    cache's key: here it guards against damage, not against another version of the
    file (the graph checksum in the header does that); a CRC-32 per 4 MiB catches every
    burst of up to 32 bits in its chunk and lets other damage through with odds of one
    in 2^32 per chunk damaged, while hashlib's SHA-256 (1.8 GB/s here) and BLAKE2b
    (0.7 GB/s) are far from memory speed.

    What fails the check (:class:`IndexDamaged`, an :class:`S2GError` naming the file
    and why): not an index, truncated or extended, a checksum mismatch, another format
    version (stale), another graph (foreign: also other ``--strands`` /
    ``--break-cycles`` / ``--max-read-len``), unreadable. ``s2g align`` rebuilds such an
    index when it is the default one beside the graph, saving the new one over it; an
    index named with ``--index`` is refused (:func:`get_index`): never used
    (vg users' most common crash report is a mismatched index: shared/notes/seeding.md).
    Measured sizes in README.md.
"""
from __future__ import annotations

import json
import os
import threading
import time
import zlib

import numba
import numpy as np

from ._numba import NJIT, PARALLEL
from .errors import S2GError
from .fileio import pread_into
from .fileio import crc32 as _crc32
from .graph_core import graph_checksum

FORMAT_VERSION = 4
MAGIC = b"S2GINDEX"
K = 19
S = 11
MAX_KMERS = 16
SUFFIX = ".s2gi"
_BUCKETS_LOCK = threading.Lock()    # SeedIndex.buckets: made once
#: bytes per CRC-32 of the body (module doc)
CHUNK = 4 << 20
#: CRC-32s in threads (zlib-ng's and stdlib zlib's release the GIL): 800 MB in memory,
#: 2-core VM, zlib-ng 0.072 s in one thread, 0.044 s in two; the GPU machine's host did
#: 5 GB/s in one (a 1 Gbp graph's index: 1.13 s of its load, py-spy)
CRC_THREADS = max(1, min(4, os.cpu_count() or 1))


class IndexDamaged(S2GError):
    """An index that cannot be used (module doc, "On disk"): ``path``, ``why`` (what is
    wrong, without the file name) and the message, which ends with what to do."""

    def __init__(self, path: str, why: str, todo: str = "rebuild it with 's2g index'"):
        super().__init__(f"{path}: {why}; {todo}")
        self.path, self.why = path, why


@numba.njit(inline="always", **NJIT)
def hash64(key, mask):
    """Thomas Wang's invertible 64-bit integer hash (minimap2's ``hash64``)."""
    key = (~key + (key << np.uint64(21))) & mask
    key = key ^ (key >> np.uint64(24))
    key = ((key + (key << np.uint64(3))) + (key << np.uint64(8))) & mask
    key = key ^ (key >> np.uint64(14))
    key = ((key + (key << np.uint64(2))) + (key << np.uint64(4))) & mask
    key = key ^ (key >> np.uint64(28))
    key = (key + (key << np.uint64(31))) & mask
    return key


@numba.njit(inline="always", **NJIT)
def is_closed_syncmer(x, k, s):
    """True when the smallest s-mer hash of k-mer ``x`` (2 bits per base, first base in
    the high bits) is at its first or last position (first minimum on ties)."""
    smask = (np.uint64(1) << np.uint64(2 * s)) - np.uint64(1)
    best = np.uint64(0xFFFFFFFFFFFFFFFF)
    at = 0
    for t in range(k - s + 1):
        sm = (x >> np.uint64(2 * (k - s - t))) & smask
        h = hash64(sm, smask)
        if h < best:
            best = h
            at = t
    return at == 0 or at == k - s


@numba.njit(**NJIT)
def _push(out_h, out_c, n_out, h, c):
    """Append (h, c) at ``n_out`` to the pair of arrays, doubling both when full."""
    if n_out == len(out_h):
        nh = np.empty(2 * len(out_h), out_h.dtype)
        nc = np.empty(2 * len(out_c), out_c.dtype)
        nh[:n_out] = out_h[:n_out]
        nc[:n_out] = out_c[:n_out]
        out_h, out_c = nh, nc
    out_h[n_out] = h
    out_c[n_out] = c
    return out_h, out_c, n_out + 1


@numba.njit(**NJIT)
def _dedup_cap(vals, lens, n, cap):
    """Sort (value, length) pairs, drop repeats, keep at most ``cap``; returns the count
    and whether the cap cut something."""
    if n <= 1:
        return n, False
    key = vals[:n] * np.uint64(64) + lens[:n].astype(np.uint64)  # k <= 28: 62 bits
    order = np.argsort(key)
    tv = vals[:n][order].copy()
    tl = lens[:n][order].copy()
    m = 0
    for t in range(n):
        if m > 0 and tv[t] == vals[m - 1] and tl[t] == lens[m - 1]:
            continue
        if m == cap:
            return m, True
        vals[m] = tv[t]
        lens[m] = tl[t]
        m += 1
    return m, False


@numba.njit(inline="always", **NJIT)
def _end_state(base, node_start, u, k, kmask):
    """The one k-mer suffix at the last column of node ``u`` of at least k bases: its last
    bases since an ``N`` (at most k), as (value, length)."""
    x = np.uint64(0)
    ln = 0
    for j in range(node_start[u + 1] - k, node_start[u + 1]):
        b = base[j]
        if b > 3:
            x = np.uint64(0)
            ln = 0
        else:
            x = ((x << np.uint64(2)) | np.uint64(b)) & kmask
            ln = min(ln + 1, k)
    return x, ln


@numba.njit(**NJIT)
def collect_syncmers(base, node_start, pred_ptr, pred_idx, slot, n_slots, k, s, cap,
                     interior=True, v_lo=0, v_hi=-1):
    """(hashes, columns, n, capped columns): every closed-syncmer k-mer of every walk.
    ``interior`` False: not those of a node's columns from its k-th on (one k-mer each,
    the node's own bases: :func:`interior_syncmers` makes them in parallel); the node's
    last column then holds the one suffix those columns leave (its last bases since an
    ``N``, at most k), as the full pass would. ``v_lo``, ``v_hi``: only nodes
    ``v_lo..v_hi - 1`` (-1: to the last), whose predecessors before ``v_lo`` must have at
    least k bases (their last column's suffix is their own: :func:`segment_cuts`)."""
    n_nodes = len(node_start) - 1
    if v_hi < 0:
        v_hi = n_nodes
    kmask = (np.uint64(1) << np.uint64(2 * k)) - np.uint64(1)
    S_ = max(n_slots, 1)
    slot_v = np.zeros((S_, cap), np.uint64)
    slot_l = np.zeros((S_, cap), np.int64)
    slot_n = np.zeros(S_, np.int64)
    cur_v = np.zeros(cap * 8 + 8, np.uint64)   # room for a merge before dedup
    cur_l = np.zeros(cap * 8 + 8, np.int64)
    ncur = 0
    n_out = 0
    span = node_start[v_hi] - node_start[v_lo]
    out_h = np.empty(max(1024, span // (2 if interior else 8)), np.uint64)
    out_c = np.empty(max(1024, span // (2 if interior else 8)), np.int32)
    capped = 0
    for v in range(v_lo, v_hi):
        pa, pb = pred_ptr[v], pred_ptr[v + 1]
        if pb == pa:
            ncur = 1
            cur_v[0] = 0
            cur_l[0] = 0
        elif not (pb - pa == 1 and pred_idx[pa] == v - 1 and v > v_lo):
            ncur = 0
            for t in range(pa, pb):
                u = pred_idx[t]
                if u < v_lo:                  # before this segment: a node of >= k bases
                    x0, l0 = _end_state(base, node_start, u, k, kmask)
                    cur_v, cur_l, ncur = _push(cur_v, cur_l, ncur, x0, l0)
                    continue
                sp = slot[u]
                for x in range(slot_n[sp]):
                    cur_v, cur_l, ncur = _push(cur_v, cur_l, ncur, slot_v[sp, x], slot_l[sp, x])
            ncur, cut = _dedup_cap(cur_v, cur_l, ncur, cap)
            if cut:
                capped += 1
        c0, c1 = node_start[v], node_start[v + 1]
        cend = c1 if interior else min(c1, c0 + k - 1)
        for j in range(c0, cend):
            b = base[j]
            if b > 3:
                ncur = 1
                cur_v[0] = 0
                cur_l[0] = 0
                continue
            full = False
            for x in range(ncur):
                cur_v[x] = ((cur_v[x] << np.uint64(2)) | np.uint64(b)) & kmask
                if cur_l[x] < k:
                    cur_l[x] += 1
                if cur_l[x] == k:
                    full = True
            if full and ncur > 1:
                # suffixes that differed only in the base just dropped are now equal
                ncur, cut = _dedup_cap(cur_v, cur_l, ncur, cap)
            for x in range(ncur):
                if cur_l[x] == k and is_closed_syncmer(cur_v[x], k, s):
                    out_h, out_c, n_out = _push(out_h, out_c, n_out, hash64(cur_v[x], kmask), j)
        if cend < c1:         # from column c0 + k - 1 on every suffix is the node's own
            ncur = 1
            cur_v[0], cur_l[0] = _end_state(base, node_start, v, k, kmask)
        if slot[v] >= 0:
            sp = slot[v]
            nkeep = min(ncur, cap)
            slot_n[sp] = nkeep
            for x in range(nkeep):
                slot_v[sp, x] = cur_v[x]
                slot_l[sp, x] = cur_l[x]
    return out_h, out_c, n_out, capped


@numba.njit(**PARALLEL)
def interior_syncmers(base, node_start, k, s, at, out_h, out_c, fill):
    """The closed syncmers of every node's columns from its k-th on (what
    ``collect_syncmers(..., interior=False)`` leaves), nodes in parallel: their count
    into ``at[v + 1]`` (``fill`` False), or (``fill`` True, ``at`` their offsets) the
    hashes and columns from ``at[v]``, columns ascending. The s-mer hashes are rolled
    once per column (the smallest of a k-mer's k - s + 1, first on ties, as
    :func:`is_closed_syncmer` picks it)."""
    kmask = (np.uint64(1) << np.uint64(2 * k)) - np.uint64(1)
    smask = (np.uint64(1) << np.uint64(2 * s)) - np.uint64(1)
    W = k - s + 1
    for v in numba.prange(len(node_start) - 1):
        c0, c1 = node_start[v], node_start[v + 1]
        if c1 - c0 < k:
            continue
        ring = np.empty(W, np.uint64)          # s-mer hashes ending at the last W columns
        x = np.uint64(0)
        ln = 0
        n = 0
        for j in range(c0, c1):
            b = base[j]
            if b > 3:
                x = np.uint64(0)
                ln = 0
                continue
            x = ((x << np.uint64(2)) | np.uint64(b)) & kmask
            ln = min(ln + 1, k)
            if ln >= s:
                ring[j % W] = hash64(x & smask, smask)
            if ln == k and j >= c0 + k - 1:
                f = j - (k - s)                # the k-mer's first s-mer ends here
                best = ring[f % W]
                pos = 0
                for t in range(1, W):
                    h = ring[(f + t) % W]
                    if h < best:
                        best = h
                        pos = t
                if pos == 0 or pos == W - 1:
                    if fill:
                        out_h[at[v] + n] = hash64(x, kmask)
                        out_c[at[v] + n] = j
                    n += 1
        if not fill:
            at[v + 1] = n


@numba.njit(**NJIT)
def merge_by_column(h1, c1, h2, c2, out_h, out_c):
    """Two (hash, column) lists, each ascending by column (no column in both), merged
    ascending by column: the order the single pass over the nodes writes them in."""
    a = 0
    b = 0
    for t in range(len(h1) + len(h2)):
        if b == len(h2) or (a < len(h1) and c1[a] < c2[b]):
            out_h[t] = h1[a]
            out_c[t] = c1[a]
            a += 1
        else:
            out_h[t] = h2[b]
            out_c[t] = c2[b]
            b += 1


@numba.njit(**PARALLEL)
def sort_by_hash(h, c, bits, n_part):
    """``h[order], c[order]`` for ``order = np.argsort(h, kind="stable")`` (hashes of
    ``bits`` bits): a stable counting sort by the top 16 bits over ``n_part`` slices in
    parallel, then each bucket stable-sorted by hash, buckets in parallel."""
    n = len(h)
    B = min(16, bits)
    shift = np.uint64(bits - B)
    nb = 1 << B
    cnt = np.zeros((n_part, nb + 1), np.int64)
    for p in numba.prange(n_part):
        for t in range(p * n // n_part, (p + 1) * n // n_part):
            cnt[p, np.int64(h[t] >> shift) + 1] += 1
    start = np.zeros(nb + 1, np.int64)        # bucket starts
    for q in range(nb):
        tot = 0
        for p in range(n_part):
            tot += cnt[p, q + 1]
        start[q + 1] = start[q] + tot
    for q in numba.prange(nb):                 # slice p's first entry of bucket q
        x = start[q]
        for p in range(n_part):
            m = cnt[p, q + 1]
            cnt[p, q + 1] = x
            x += m
    th = np.empty_like(h)
    tc = np.empty_like(c)
    for p in numba.prange(n_part):
        for t in range(p * n // n_part, (p + 1) * n // n_part):
            q = np.int64(h[t] >> shift) + 1
            th[cnt[p, q]] = h[t]
            tc[cnt[p, q]] = c[t]
            cnt[p, q] += 1
    for q in numba.prange(nb):
        a, z = start[q], start[q + 1]
        if z - a > 1:
            o = np.argsort(th[a:z], kind="mergesort") + a
            sh = th[o]
            sc = tc[o]
            th[a:z] = sh
            tc[a:z] = sc
    return th, tc


@numba.njit(**PARALLEL)
def bucket_starts(keys, shift, nb, starts):
    """First entry of each bucket ``hash >> shift`` into ``starts`` (``nb + 1``, keys sorted):
    64 slices of buckets in parallel, each from a binary search for its first entry."""
    sh = np.uint64(shift)
    n_part = 64
    for c in numba.prange(n_part):
        t0 = c * (nb + 1) // n_part
        t1 = (c + 1) * (nb + 1) // n_part
        lo, hi = 0, len(keys)
        while lo < hi:
            mid = (lo + hi) // 2
            if (keys[mid] >> sh) < np.uint64(t0):
                lo = mid + 1
            else:
                hi = mid
        x = lo
        for t in range(t0, t1):
            while x < len(keys) and (keys[x] >> sh) < np.uint64(t):
                x += 1
            starts[t] = x



@numba.njit(inline="always", **NJIT)
def lookup(keys, starts, shift, h):
    """The entries ``[x, y)`` whose hash is ``h`` (empty: x == y): its bucket's range
    from ``starts``, then a scan (a bucket holds ~2 entries; binary search in a big one)."""
    bk = np.int64(h >> np.uint64(shift))
    x = np.int64(starts[bk])
    y = np.int64(starts[bk + 1])
    if y - x > 16:
        x = x + np.searchsorted(keys[x:y], h)
    else:
        while x < y and keys[x] < h:
            x += 1
    z = x
    while z < y and keys[z] == h:
        z += 1
    return x, z


class SeedIndex:
    """Sorted closed-syncmer hashes of a graph -> graph columns (see the module doc).

    Lookups go through a bucket table (:attr:`buckets`, built at load, 2-4 bytes per entry:
    the first entry of each value of the hash's top bits), one or two cache misses per
    seed instead of a binary search's ~25 over a table of 10^7-10^8 entries."""

    def __init__(self, k, s, checksum, keys, cols, stats=None):
        self.k, self.s, self.checksum = int(k), int(s), str(checksum)
        self.keys, self.cols = keys, cols          # one (hash, column) per entry, by hash
        self.stats = dict(stats or {})
        self._buckets = None

    @property
    def buckets(self):
        """(starts, shift): entries of hash ``h`` lie in ``starts[h >> shift]`` to
        ``starts[(h >> shift) + 1]``; about two entries per bucket."""
        if self._buckets is None:
            with _BUCKETS_LOCK:   # (the early CPU seeding and the GPU's upload ask at once)
                if self._buckets is None:
                    self._buckets = self._make_buckets()
        return self._buckets

    def _make_buckets(self):
        bits = 2 * self.k                         # hashes are 2k-bit (hash64 is masked)
        b = int(np.clip(int(np.ceil(np.log2(max(self.n_entries, 1)))) - 1, 4, min(bits, 28)))
        shift = bits - b
        starts = np.empty((1 << b) + 1, np.int32 if self.n_entries < 2**31 else np.int64)
        bucket_starts(self.keys, shift, 1 << b, starts)
        return starts, shift

    @property
    def n_entries(self) -> int:
        return len(self.cols)

    @property
    def nbytes(self) -> int:
        return self.keys.nbytes + self.cols.nbytes

    def save(self, path: str) -> str:
        """Write the index to ``path`` (format in the module doc): to a temporary name
        beside it, then renamed over it, so a reader sees the old file or the new one."""
        tmp = f"{path}.{os.getpid()}.tmp"     # unique: two runs may build the same index
        keys = np.ascontiguousarray(self.keys, np.uint64)
        cols = np.ascontiguousarray(self.cols, np.int32)
        head = json.dumps({"version": FORMAT_VERSION, "k": self.k, "s": self.s,
                           "checksum": self.checksum, "entries": self.n_entries,
                           "stats": self.stats, "chunk": CHUNK,
                           "crc32": _body_crcs((keys, cols), CHUNK)}).encode()
        top = MAGIC + np.uint64(len(head)).tobytes() + head
        try:
            with open(tmp, "wb") as fh:
                fh.write(top + np.uint32(zlib.crc32(top)).tobytes())
                for arr in (keys, cols):
                    fh.write(b"\0" * (-fh.tell() % 64))
                    fh.write(memoryview(arr).cast("B"))
            os.replace(tmp, path)
        except OSError as exc:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise S2GError(f"{path}: cannot write the index: {exc.strerror}") from None
        return path


def _body_crcs(arrays, chunk: int) -> list:
    """Per array, the CRC-32 of each ``chunk`` bytes (in :data:`CRC_THREADS` threads)."""
    views = [memoryview(a).cast("B") for a in arrays]
    parts = [(i, v[o:o + chunk]) for i, v in enumerate(views) for o in range(0, len(v), chunk)]
    if len(parts) > 1 and CRC_THREADS > 1:
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(CRC_THREADS, thread_name_prefix="s2g-crc") as ex:
            crcs = list(ex.map(_crc32, (p for _, p in parts)))
    else:
        crcs = [_crc32(p) for _, p in parts]
    out = [[] for _ in views]
    for (i, _), c in zip(parts, crcs):
        out[i].append(c)
    return out


def build_index(graph, k: int = K, s: int = S, max_kmers: int = MAX_KMERS) -> SeedIndex:
    """Index ``graph`` (a :class:`~s2g.graph.FlatGraph`): see the module doc."""
    if not (1 <= s < k <= 28):
        raise S2GError(f"index: need 1 <= s < k <= 28, got k={k}, s={s}")
    if max_kmers < 1:
        raise S2GError("index: --max-kmers must be >= 1")
    t0 = time.perf_counter()
    h, c, n = all_syncmers(graph, k, s, max_kmers)
    capped = n[1]
    n = n[0]
    if getattr(graph, "node_copy", None) is not None:   # cyclic, unrolled: copies are no repeats
        from .cyclic import dedup_seeds
        h, c = dedup_seeds(graph, h, c)
        n = len(h)
    # stable (columns ascending within a hash): np.argsort(h, kind="stable"), in parallel
    h, c = sort_by_hash(h, c, 2 * k, max(1, min(64, n // 65536)))
    distinct = int(np.count_nonzero(h[1:] != h[:-1])) + 1 if n else 0
    stats = {"columns": int(graph.n_bases), "entries": int(n), "distinct": distinct,
             "capped_columns": int(capped), "seconds": round(time.perf_counter() - t0, 3)}
    return SeedIndex(k, s, graph_checksum(graph), h, c.astype(np.int32), stats)


@numba.njit(**NJIT)
def segment_cuts(node_start, pred_ptr, pred_idx, k, parts):
    """Up to ``parts`` segments of the node order, about equal in columns, cut only where
    every edge into a segment from before it leaves a node of at least k bases (whose
    last suffix is its own, so a segment's pass needs nothing from the ones before):
    their first nodes, then the node count."""
    n = len(node_start) - 1
    bad = np.zeros(n + 2, np.int64)           # edges from short nodes spanning a cut
    for w in range(n):
        for t in range(pred_ptr[w], pred_ptr[w + 1]):
            u = pred_idx[t]
            if node_start[u + 1] - node_start[u] < k and u < w:
                bad[u + 1] += 1
                bad[w + 1] -= 1
    cuts = [0]
    run = 0
    total = node_start[n]
    q = 1
    for i in range(1, n):
        run += bad[i]
        if q < parts and run == 0 and node_start[i] >= q * total // parts:
            cuts.append(i)
            while q < parts and node_start[i] >= q * total // parts:
                q += 1
    cuts.append(n)
    return np.array(cuts, dtype=np.int64)


def all_syncmers(graph, k, s, cap, parallel=True, parts=None):
    """(hashes, columns, (n, capped columns)) of every walk's closed syncmers, in the
    order :func:`collect_syncmers`' single pass writes them (columns ascending). With
    ``parallel``, what lies inside a node past its first k - 1 columns (most columns of a
    graph of long nodes) comes from :func:`interior_syncmers`, nodes in parallel, and the
    single pass over the rest runs in ``parts`` segments (default 4 per Numba thread;
    :func:`segment_cuts`) in threads (Numba releases the GIL), concatenated in order (the
    same arrays: tests)."""
    args = (graph.base, graph.node_start, graph.pred_ptr, graph.pred_idx, graph.slot,
            graph.n_slots, k, s, cap)
    if not parallel:
        h, c, n, capped = collect_syncmers(*args, True)
        return h[:n], c[:n], (n, capped)
    threads = numba.get_num_threads()
    parts = 4 * threads if parts is None else int(parts)
    cuts = segment_cuts(np.asarray(graph.node_start, np.int64), graph.pred_ptr,
                        graph.pred_idx, k, max(1, parts)) if parts > 1 else \
        np.asarray([0, len(graph.node_start) - 1], np.int64)

    def seg(x):
        return collect_syncmers(*args, False, int(cuts[x]), int(cuts[x + 1]))
    if len(cuts) > 2 and threads > 1:
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(threads, thread_name_prefix="s2g-index") as ex:
            segs = list(ex.map(seg, range(len(cuts) - 1)))
    else:
        segs = [seg(x) for x in range(len(cuts) - 1)]
    h = np.concatenate([x[0][:x[2]] for x in segs])
    c = np.concatenate([x[1][:x[2]] for x in segs])
    n = len(h)
    capped = sum(int(x[3]) for x in segs)
    ns = np.asarray(graph.node_start, np.int64)
    at = np.zeros(len(ns), np.int64)
    e8, e4 = np.zeros(0, np.uint64), np.zeros(0, np.int32)
    interior_syncmers(graph.base, ns, k, s, at, e8, e4, False)
    np.cumsum(at, out=at)
    ih = np.empty(int(at[-1]), np.uint64)
    ic = np.empty(int(at[-1]), np.int32)
    interior_syncmers(graph.base, ns, k, s, at, ih, ic, True)
    out_h = np.empty(n + len(ih), np.uint64)
    out_c = np.empty(n + len(ih), np.int32)
    merge_by_column(h[:n], c[:n], ih, ic, out_h, out_c)
    return out_h, out_c, (len(out_h), capped)


def index_path(graph_path: str) -> str:
    return graph_path + SUFFIX


def preload_index(path: str):
    """Start reading the index at ``path`` in a background thread (file reads release the
    GIL, so it overlaps the parsing of the graph); returns a future for :func:`get_index`'s
    ``preloaded``, or None when there is no file there. The future's result is checked
    (:func:`load_index` without the graph); a damaged index is its exception."""
    if not os.path.isfile(path):
        return None
    from concurrent.futures import ThreadPoolExecutor
    ex = ThreadPoolExecutor(1, thread_name_prefix="s2g-index")
    fut = ex.submit(load_index, path)
    ex.shutdown(wait=False)
    return fut


def load_index(path: str, graph=None) -> SeedIndex:
    """Read an index written by :meth:`SeedIndex.save`, every byte checked; with
    ``graph``, refuse one that was built from another graph. Any problem (module doc,
    "On disk") raises :class:`IndexDamaged`."""
    idx = _read_index(path)
    _check_graph(idx, path, graph)
    return idx


def _check_graph(idx, path, graph):
    if graph is not None and idx.checksum != graph_checksum(graph):
        raise IndexDamaged(path, "index was built from another graph (or other --strands / "
                           "--break-cycles / --max-read-len)")


def _read_index(path: str) -> SeedIndex:
    try:
        fh = open(path, "rb", buffering=0)
    except FileNotFoundError:
        raise IndexDamaged(path, "no such file", "build it with 's2g index'") from None
    except OSError as exc:
        raise IndexDamaged(path, f"cannot read the index: {exc.strerror}") from None
    try:
        with fh:
            idx = _read_checked(fh, path, os.fstat(fh.fileno()).st_size)
    except OSError as exc:
        raise IndexDamaged(path, f"cannot read the index: {exc.strerror or exc}") from None
    idx.buckets                 # the lookup table too, while the graph is still parsing
    return idx


def _fill(fh, buf) -> None:
    """Fill ``buf`` from ``fh`` (a raw file) at its position, which moves past it; large
    buffers in threads (:func:`s2g.fileio.pread_into`)."""
    at = fh.tell()
    pread_into(fh.fileno(), buf, at)
    fh.seek(at + memoryview(buf).nbytes)


def _read_exact(fh, n: int) -> bytes:
    buf = bytearray(n)
    _fill(fh, buf)
    return bytes(buf)


def _read_checked(fh, path, size) -> SeedIndex:
    """The index in ``fh`` (``size`` bytes), once every byte has passed its check."""
    def bad(why):
        return IndexDamaged(path, why)
    magic = fh.read(len(MAGIC))
    if magic[:4] == b"PK\x03\x04":       # formats 1-2 were .npz files
        raise bad(f"index format {_npz_version(path)}, this s2g reads format {FORMAT_VERSION}")
    if magic != MAGIC:
        raise bad("not an s2g index (no s2g index header)")
    try:
        n_head = int.from_bytes(_read_exact(fh, 8), "little")
        if n_head > size - len(MAGIC) - 12:   # before it is allocated: a damaged length
            raise ValueError("the file is shorter than its header says")
        head_raw = _read_exact(fh, n_head)
        crc = int.from_bytes(_read_exact(fh, 4), "little")
    except ValueError as exc:
        raise bad(f"not an s2g index ({exc})") from None
    top = MAGIC + n_head.to_bytes(8, "little") + head_raw
    try:
        head = json.loads(head_raw.decode())
        version = int(head["version"])
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        head, version = None, None
    if version is not None and version != FORMAT_VERSION:   # format 3 had no header CRC
        raise bad(f"index format {version}, this s2g reads format {FORMAT_VERSION}")
    if zlib.crc32(top) != crc or head is None:
        raise bad("damaged index (its header fails its checksum)")
    try:
        k, s, n, chunk = int(head["k"]), int(head["s"]), int(head["entries"]), int(head["chunk"])
        checksum, stats, crcs = str(head["checksum"]), dict(head.get("stats") or {}), head["crc32"]
        if not (1 <= s < k <= 28) or n < 0 or chunk < 1:
            raise ValueError(f"k={k}, s={s}, {n} entries, chunk {chunk}")
        at = len(top) + 4
        want = []
        for dt in (np.uint64, np.int32):
            at += -at % 64
            want.append((at, dt))
            at += n * np.dtype(dt).itemsize
        if at != size:      # before anything is allocated for it
            raise ValueError(f"the file is {'shorter' if size < at else 'longer'} than its "
                             f"header says: {size:,} bytes, not {at:,}")
        arrays = []
        for at, dt in want:
            pad = at - fh.tell()
            if pad and _read_exact(fh, pad).strip(b"\0"):
                raise bad("damaged index (nonzero padding)")
            arr = np.empty(n, dt)
            _fill(fh, arr)
            arrays.append(arr)
        got = _body_crcs(arrays, chunk)
        if not isinstance(crcs, list) or len(crcs) != 2:
            raise ValueError("no body checksums")
        for name, (at, _), g, w in zip(("hashes", "columns"), want, got, crcs):
            if list(w) != g:
                if len(w) != len(g):
                    raise ValueError(f"{len(w)} checksums of the {name}, expected {len(g)}")
                first = next(i for i, (a, b) in enumerate(zip(g, w)) if a != b)
                raise bad(f"damaged index (the {name} fail their checksum from byte "
                          f"{at + first * chunk:,} on)")
    except (ValueError, KeyError, TypeError) as exc:
        raise bad(f"not an s2g index ({exc})") from None
    return SeedIndex(k, s, checksum, *arrays, stats=stats)


def _npz_version(path):
    try:
        with np.load(path, allow_pickle=False) as z:
            return int(z["version"])
    except Exception:           # noqa: BLE001 - only the message depends on it
        return "1-2"


def get_index(graph, graph_path: str, index: str | None = None, build: bool = True,
              save: bool = True, progress=None, preloaded=None, **params) -> SeedIndex:
    """The index beside ``graph_path`` (or at ``index``), built and saved when missing;
    ``preloaded``: :func:`preload_index`'s future for that path (checked against ``graph``
    here).

    An index that fails :func:`load_index` (damaged, truncated, stale, foreign,
    unreadable) is rebuilt and saved over the bad file when it is the default one beside
    the graph and ``build``: the run then aligns as with a good index. ``progress`` gets
    one line saying so (``PATH: why; rebuilding it``); ``s2g align --quiet`` passes
    None, which silences it as it silences the note of a missing index being built
    (the choice of a user who asked for no notes; the result is the same either way).
    An index named by ``index`` is the user's file: refused with :class:`IndexDamaged`
    (``rebuild it with 's2g index GRAPH -o PATH'``), never overwritten."""
    path = index or index_path(graph_path)
    why = None
    try:
        if preloaded is not None:
            idx = preloaded.result()
            _check_graph(idx, path, graph)
            return idx
        if os.path.exists(path):
            return load_index(path, graph)
    except IndexDamaged as exc:
        if index is not None or not build:
            how = f"s2g index {graph_path}" + (f" -o {path}" if index is not None else "")
            raise IndexDamaged(path, exc.why, f"rebuild it with '{how}'") from None
        why = exc.why
    if why is None and (index is not None or not build):
        raise S2GError(f"{path}: no such index; build it with 's2g index {graph_path}'")
    if progress:
        progress(f"{path}: {why}; rebuilding it" if why is not None else
                 f"building the seed index of {graph_path} ({graph.n_bases:,} columns)")
    idx = build_index(graph, **params)
    if save:
        try:
            idx.save(path)
        except S2GError as exc:
            if progress:
                progress(f"index not saved ({exc}); it is used for this run only")
    return idx
