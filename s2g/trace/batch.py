"""Traceback of a batch: :func:`traceback_batch` traces every aligned read, in chunks of
parallel Numba calls: most reads in lanes (:mod:`s2g.trace.lanes`), long windows in
lanes with row bands (:mod:`s2g.trace.bands`), the rest one read per thread
(:func:`s2g.trace.scalar.traceback_read`); with a GPU, :func:`traceback_gpu_part` first
(:mod:`s2g.trace.gpu`). The results stay arrays (:class:`FlatTracebacks`).
"""
from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from .._numba import NJIT
from ..config import settings
from ..dp import LOCAL
from ..lanes import NEG16, NEG32, graph_codes, lane_type
from ..result import Traceback
from .bands import run_bands
from .common import OP_D, OP_EQ, OP_I, OP_X, OPCH, raise_status, summary_arrays
from .lanes import ST_BAND, ST_DEFER, run_lanes
from .scalar import MAX_CELLS, graph_tuple, traceback_many

_LANE_TYPES = (np.int16, np.int32, np.int64)
#: lanes per group by lane type (two 512-bit registers per row step, as the simd variant)
LANES_TB = {np.int16: 64, np.int32: 32}
#: a read is traced in plain lanes when its window has at most LANE_CELLS cells (else
#: in row bands); a group of more than one register of lanes keeps its direction bytes
#: under GROUP_BYTES. A worker's direction bytes: at most max(GROUP_BYTES, 32 x
#: LANE_CELLS) = 64 MB (int16; 1 kbp reads), a few MB for 150 bp reads
LANE_CELLS = 1 << 21
GROUP_BYTES = 1 << 25
#: a worker builds the programs of SUPER x lanes reads at once and groups them by width
SUPER = 4
#: windows over LANE_CELLS cells run in lanes with row bands (:mod:`s2g.trace.bands`): a
#: group's buffers (checkpoints, one band's direction bytes, slots, walks;
#: :func:`s2g.trace.lanes.band_plan`) stay under BAND_GROUP_BYTES, so a worker holds at
#: most about twice this for them (its buffers grow by doubling; n threads: n x 512 MB
#: at worst, ~110 MB a worker for 10 kbp reads). A window whose group of one lane would
#: not fit, or that traceback_read would refuse (--max-traceback-cells), goes to
#: traceback_read; 0 sends every long window there
BAND_GROUP_BYTES = 1 << 28


class LaneLimits(NamedTuple):
    """The lane traceback's limits for one :func:`traceback_batch` call; a field left
    None takes the module constant (read at call time). Tests shrink them so that tiny
    windows take every path: plain lanes, row bands of a few rows, traceback_read."""
    #: plain lanes up to this many window cells (LANE_CELLS; 0: no lanes at all)
    cells: int | None = None
    #: direction bytes of a plain group of more than one register (GROUP_BYTES)
    group_bytes: int | None = None
    #: bytes of a banded group (BAND_GROUP_BYTES; 0: long windows to traceback_read)
    band_bytes: int | None = None
    #: band height of the row bands; 0: the one that minimises a group's memory
    band: int = 0

    def resolved(self) -> "LaneLimits":
        return LaneLimits(LANE_CELLS if self.cells is None else self.cells,
                          GROUP_BYTES if self.group_bytes is None else self.group_bytes,
                          BAND_GROUP_BYTES if self.band_bytes is None else self.band_bytes,
                          self.band)


@numba.njit(**NJIT)
def _add_rows(idx, ei, start, oo, co, summary, rows, base_r, base_p):
    """:meth:`FlatTracebacks.add`'s work without the GIL: the chunk's CIGAR runs and path
    nodes packed (its walks' buffers hold each read's longest possible walk) and its rows
    written at reads ``idx``. Returns the packed (run_op, run_len, path)."""
    run_op, run_len, n_runs, path, n_path, geo, counts = summary
    has, qstart, qend, run_at, n_runs_o, path_at, n_path_o, geo_o, counts_o = rows
    n = len(idx)
    tr = 0
    tp = 0
    for k in range(n):
        tr += n_runs[k]
        tp += n_path[k]
    op2 = np.empty(tr, run_op.dtype)
    len2 = np.empty(tr, run_len.dtype)
    path2 = np.empty(tp, path.dtype)
    a = 0
    b = 0
    for k in range(n):
        r = idx[k]
        m = n_runs[k]
        for t in range(m):
            op2[a + t] = run_op[oo[k] + t]
            len2[a + t] = run_len[oo[k] + t]
        q = n_path[k]
        for t in range(q):
            path2[b + t] = path[co[k] + t]
        has[r] = True
        qstart[r] = start[k]
        qend[r] = ei[r]
        run_at[r] = base_r + a
        n_runs_o[r] = m
        path_at[r] = base_p + b
        n_path_o[r] = q
        for t in range(3):
            geo_o[r, t] = geo[k, t]
        for t in range(4):
            counts_o[r, t] = counts[k, t]
        a += m
        b += q
    return op2, len2, path2


@numba.njit(**NJIT)
def _set_rows(idx, ei, start, run_at, path_at, meta, rows, base_r, base_p):
    """:meth:`FlatTracebacks.add_packed`'s rows without the GIL: walk ``k``'s runs at
    ``base_r + run_at[k]``, its path at ``base_p + path_at[k]``, its counts ``meta[k]``
    (:data:`s2g.trace.gpu_summary.META`: runs, path nodes, geo, op counts)."""
    has, qstart, qend, run_at_o, n_runs_o, path_at_o, n_path_o, geo_o, counts_o = rows
    for k in range(len(idx)):
        r = idx[k]
        has[r] = True
        qstart[r] = start[k]
        qend[r] = ei[r]
        run_at_o[r] = base_r + run_at[k]
        n_runs_o[r] = meta[k, 0]
        path_at_o[r] = base_p + path_at[k]
        n_path_o[r] = meta[k, 1]
        for t in range(3):
            geo_o[r, t] = meta[k, 2 + t]
        for t in range(4):
            counts_o[r, t] = meta[k, 5 + t]


class FlatTracebacks:
    """The tracebacks of one batch as arrays, as the walks leave them (CPU or GPU chunks,
    :func:`s2g.trace.common.summarize`'s outputs); :class:`Traceback` objects only on demand.

    Per read ``r``: ``has[r]`` (traced), ``qstart``/``qend``, CIGAR runs
    ``run_op/run_len[run_at[r]:run_at[r] + n_runs[r]]``, path nodes
    ``path[path_at[r]:path_at[r] + n_path[r]]``, ``geo[r]`` = (path length, path start,
    path end), ``counts[r]`` = ops per kind (=, X, I, D). The GAF writer
    (:func:`s2g.gaf.gaf_text`) reads these directly: building one Python object per read
    cost ~23 us, more than the GPU's traceback itself.
    """

    def __init__(self, n):
        self.n = n
        self.has = np.zeros(n, np.bool_)
        self.qstart = np.zeros(n, np.int64)
        self.qend = np.zeros(n, np.int64)
        self.run_at = np.zeros(n, np.int64)
        self.n_runs = np.zeros(n, np.int64)
        self.path_at = np.zeros(n, np.int64)
        self.n_path = np.zeros(n, np.int64)
        self.geo = np.zeros((n, 3), np.int64)
        self.counts = np.zeros((n, 4), np.int64)
        self._parts = ([], [], [])
        self._bases = [0, 0]
        self._deferred = []
        self.run_op = np.zeros(0, np.uint8)
        self.run_len = np.zeros(0, np.int32)
        self.path = np.zeros(0, np.int32)

    def add(self, idx, ei, oo, co, start, summary):
        """One chunk: reads ``idx``, flat outputs with per-read offsets ``oo``/``co``. Kept
        packed: the walks' buffers hold each read's longest possible walk (rows +
        columns + 2 entries) where a short read's CIGAR has a few runs and its path a few
        nodes (copying the padded buffers in :meth:`finish` was 0.78 s of the traceback
        thread for 1,000,000 150 bp reads on MHC, H200, session 31). In one Numba call
        (:func:`_add_rows`): numpy's fancy indexing held the GIL ~0.38 s a 1,000,000 reads
        in the GAF-text thread, the GPU path's busiest (H100, session 60)."""
        rows = (self.has, self.qstart, self.qend, self.run_at, self.n_runs, self.path_at,
                self.n_path, self.geo, self.counts)
        packed = _add_rows(np.asarray(idx, np.int64), np.asarray(ei, np.int64),
                           np.asarray(start, np.int64), np.asarray(oo, np.int64),
                           np.asarray(co, np.int64), tuple(summary), rows,
                           self._bases[0], self._bases[1])
        run_op, run_len, path = packed
        for part, x in zip(self._parts, (run_op, run_len, path)):
            part.append(x)
        self._bases[0] += len(run_op)
        self._bases[1] += len(path)

    def add_packed(self, idx, ei, start, run_at, path_at, meta, run_op, run_len, path):
        """One chunk summarised on the GPU (:mod:`s2g.trace.gpu_summary`): reads ``idx``,
        their runs and paths already packed (walk ``k``'s from ``run_at[k]`` and
        ``path_at[k]``), ``meta`` their counts (a row a walk)."""
        rows = (self.has, self.qstart, self.qend, self.run_at, self.n_runs, self.path_at,
                self.n_path, self.geo, self.counts)
        _set_rows(np.asarray(idx, np.int64), np.asarray(ei, np.int64),
                  np.asarray(start, np.int64), np.asarray(run_at, np.int64),
                  np.asarray(path_at, np.int64), meta, rows, self._bases[0], self._bases[1])
        for part, x in zip(self._parts, (run_op, run_len, path)):
            part.append(x)
        self._bases[0] += len(run_op)
        self._bases[1] += len(path)

    def defer(self, fn):
        """Run ``fn()`` (which adds a chunk) in :meth:`finish`, possibly in another thread."""
        self._deferred.append(fn)

    def finish(self):
        while self._deferred:
            self._deferred.pop(0)()
        if self._parts[0]:
            self.run_op, self.run_len, self.path = (np.concatenate(p) for p in self._parts)
        self._parts = ([], [], [])
        return self

    def _take(self, src, off):
        """Append ``src``'s traced rows (finished) as this one's rows ``off`` + theirs."""
        idx = np.nonzero(src.has)[0]
        if len(idx) == 0:
            return
        dst = idx + off
        self.has[dst] = True
        for name in ("qstart", "qend", "n_runs", "n_path", "geo", "counts"):
            getattr(self, name)[dst] = getattr(src, name)[idx]
        self.run_at[dst] = self._bases[0] + src.run_at[idx]
        self.path_at[dst] = self._bases[1] + src.path_at[idx]
        for part, x in zip(self._parts, (src.run_op, src.run_len, src.path)):
            part.append(x)
        self._bases[0] += len(src.run_op)
        self._bases[1] += len(src.path)

    def merged(self, other):
        """A finished FlatTracebacks holding this one's reads and ``other``'s (both
        finished; a read traced in at most one of them)."""
        out = FlatTracebacks(self.n)
        out._take(self, 0)
        out._take(other, 0)
        return out.finish()

    def stacked(self, other, order):
        """A finished FlatTracebacks of this one's rows then ``other``'s (both finished),
        rows taken in ``order`` (a permutation of the ``n + other.n`` rows)."""
        out = FlatTracebacks(self.n + other.n)
        out._take(self, 0)
        out._take(other, self.n)
        out.finish()
        for name in ("has", "qstart", "qend", "run_at", "n_runs", "path_at", "n_path", "geo",
                     "counts"):
            setattr(out, name, getattr(out, name)[order])
        return out

    def objects(self) -> list:
        """One :class:`Traceback` (or None: not traced) per read."""
        out = [None] * self.n
        ops_l, lens_l, path_l = self.run_op.tolist(), self.run_len.tolist(), self.path.tolist()
        geo_l, cnt_l = self.geo.tolist(), self.counts.tolist()
        ra, nr, pa, npth = (x.tolist() for x in (self.run_at, self.n_runs, self.path_at,
                                                 self.n_path))
        qs, qe = self.qstart.tolist(), self.qend.tolist()
        for r in np.nonzero(self.has)[0].tolist():
            x0 = ra[r]
            cig = "".join([f"{lens_l[x]}{OPCH[ops_l[x]]}" for x in range(x0, x0 + nr[r])])
            c = cnt_l[r]
            g3 = geo_l[r]
            out[r] = Traceback(qstart=qs[r], qend=qe[r], path=tuple(path_l[pa[r]:pa[r] + npth[r]]),
                               path_len=g3[0], path_start=g3[1], path_end=g3[2], cigar=cig,
                               matches=c[OP_EQ], block_len=c[0] + c[1] + c[2] + c[3],
                               edits=c[OP_X] + c[OP_I] + c[OP_D])
        return out


#: traceback outputs of one parallel call: at most this many ops (bounds), ~5 bytes each
CHUNK_OPS = 1 << 24


def _lane_types(scoring, mode, rows, n_bases):
    """Per read: 0 (int16 lanes), 1 (int32) or 2 (neither) by the simd variant's score
    bound switch for its rows (:func:`s2g.lanes.lane_type`)."""
    ur = np.unique(rows)
    code = np.array([_LANE_TYPES.index(lane_type(scoring, mode, int(m), n_bases))
                     for m in ur], np.int64)
    return code[np.searchsorted(ur, rows)]


def _traceback_chunk(graph, reads, idx, n_ops, L, score, ei, ej, mode, scoring, max_cells,
                     flat, col_lo, lim, pb):
    """Trace reads ``idx``: in lanes (:func:`s2g.trace.lanes.run_lanes`) where a lane
    type fits, the rest and whatever the lanes defer one read per thread
    (:func:`s2g.trace.scalar.traceback_many`). ``lim``: resolved :class:`LaneLimits`."""
    a, b, o, e = scoring.as_tuple()
    n = len(idx)
    oo = np.zeros(n + 1, np.int64)
    co = np.zeros(n + 1, np.int64)
    np.cumsum(n_ops, out=oo[1:])
    np.cumsum(L + 1, out=co[1:])
    summary = summary_arrays(n, oo, co)
    st = np.full(n, ST_DEFER, np.int64)
    start = np.zeros(n, np.int64)
    cells = np.zeros(n, np.int64)
    codes = reads.codes_flat
    offs = np.asarray(reads.offsets, np.int64)
    rd = (codes, offs, idx, score, ei, ej, col_lo, pb)
    out = (oo, co, st, start, cells, summary)
    if lim.cells > 0:
        rows = ei[idx]
        tcode = _lane_types(scoring, mode, rows, graph.n_bases)
        gcode = graph_codes(graph)
        for c, T in enumerate(_LANE_TYPES[:2]):
            sel = np.nonzero(tcode == c)[0]
            if len(sel) == 0:
                continue
            # super-batches of similar column bound L (windows are about that wide); the
            # workers form the lane groups by actual width inside each
            order = sel[np.lexsort((rows[sel], L[sel]))]
            threads = numba.get_num_threads()
            neg = NEG16 if T is np.int16 else NEG32
            slim = 0 if mode == LOCAL else np.iinfo(T).min
            args = (rd, (graph.base, gcode, graph.node_start, graph.pred_ptr, graph.pred_idx),
                    mode, (T(a), T(-b), T(o), T(e), T(neg), T(slim)),
                    (int(max_cells), int(lim.cells), int(lim.group_bytes), int(lim.band_bytes),
                     int(lim.band)), out)
            lanes = LANES_TB[T]
            # up to SUPER groups per super-batch, fewer when that leaves threads idle
            per = -(-len(order) // (2 * threads))
            batch = max(lanes, min(SUPER * lanes, -(-per // lanes) * lanes))
            nt = max(1, min(threads, -(-len(order) // batch)))
            run_lanes(order, batch, lanes, nt, *args)
            # the long windows (status ST_BAND) in row bands (seconds per group): one group
            # per super-batch, their lanes spread evenly over the threads (a banded group's
            # time grows about with its lanes, in steps of one 16-byte register:
            # :func:`s2g.trace.lanes.padded`), so that the round-robin of super-batches
            # stays balanced
            part = order[st[order] == ST_BAND]
            if len(part):
                per = -(-len(part) // threads)
                v = 16 // np.dtype(T).itemsize
                lanes = batch = min(lanes, -(-per // v) * v)
                nt = max(1, min(threads, -(-len(part) // batch)))
                run_bands(part, batch, lanes, nt, *args, bool(settings().tb_band))
    rest = np.nonzero(st == ST_DEFER)[0]
    if len(rest):
        traceback_many(rest, rd, graph_tuple(graph), mode, (a, b, o, e), int(max_cells), out)
    raise_status(reads, idx, st, cells, score, ei, ej, max_cells)
    flat.add(idx, ei, oo, co, start, summary)


def traceback_gpu_part(graph, reads, scoring, mode, res, max_cells=MAX_CELLS):
    """The GPU half of ``traceback_batch(..., device=True)``: traces what fits on the GPU
    and returns ``(flat, left)`` for :func:`traceback_batch` (``flat=``, ``idx=``) to
    finish on the CPU, so the two halves can run in different threads.

    ``max_cells`` is bytes of direction data (``--max-traceback-cells``); the long-window
    kernel stores 4-bit codes, so it takes windows of up to twice as many cells (and one
    launch's device memory). With the cell count as the bound, a 50 kbp read's window
    (~3.1e9 cells, 1.6 GB of codes) went to the CPU: 81 s for 4 reads on 16 H200-host
    threads, against 13 s for 100 such windows on the GPU (seeded run, same session)."""
    from . import gpu
    flat = FlatTracebacks(len(res))
    idx = np.nonzero(res.aligned())[0].astype(np.int64)
    if len(idx):
        idx = gpu.run(graph, reads, scoring, mode, res, idx, flat,
                      max_cells=min(gpu.max_cells(), max_cells),
                      long_cells=2 * max_cells)   # bytes of 4-bit codes: 2 cells each
    return flat, idx


def traceback_batch(graph, reads, scoring, mode, res, max_cells=MAX_CELLS, threads=None,
                    device=False, flat=None, idx=None, col_lo=None, limits=None, bands=None):
    """Trace every aligned read: parallel Numba calls over chunks of the batch
    (:func:`traceback_many`), results kept as :class:`FlatTracebacks` in ``res`` (the
    ``res.tracebacks`` objects are built from them when first asked for).
    ``threads``: Numba threads for the calls (default: all).

    ``device``: walk on the GPU (:mod:`s2g.trace.gpu`; long windows one block each,
    :mod:`s2g.trace.long`) every read whose window fits ``max_cells`` and the device's
    memory; the rest here. Both give identical tracebacks.
    ``flat``/``idx``: the GPU half already done (:func:`traceback_gpu_part`): trace only
    reads ``idx`` here, into ``flat``. ``col_lo``: per read, the lowest column its
    alignment may use (seeded alignment's windows, :mod:`s2g.window`; CPU only).
    ``limits``: :class:`LaneLimits` for the CPU lanes (default: the module constants).
    ``bands``: per read, rows its optimal alignments keep to in each window column,
    ``(off, width, rows)``: read ``r``'s first rows at ``rows[off[r]:off[r] + width[r]]``
    (window column = column - ``col_lo[r]``), last rows right after (``off[r] < 0``:
    none); the long windows' row bands compute only inside them
    (:func:`s2g.variants.pruned.align_windows` makes them; CPU only).
    """
    lim = (limits or LaneLimits()).resolved()
    if flat is None:
        if device:
            flat, idx = traceback_gpu_part(graph, reads, scoring, mode, res, max_cells)
        else:
            flat = FlatTracebacks(len(res))
            idx = np.nonzero(res.aligned())[0].astype(np.int64)
    if len(idx) == 0:
        res.set_flat(flat.finish())
        return res
    a, b, o, e = scoring.as_tuple()
    score = np.asarray(res.score, np.int64)
    ei = np.asarray(res.end_i, np.int64)
    ej = np.asarray(res.end_j, np.int64)
    col_lo = np.zeros(len(res), np.int64) if col_lo is None else np.asarray(col_lo, np.int64)
    if bands is None:
        bands = (np.full(len(res), -1, np.int64), np.zeros(len(res), np.int64),
                 np.zeros(0, np.int32))
    # per-read bounds on ops (i + L + 2) and path nodes (L + 1); reads go in chunks of at
    # most CHUNK_OPS ops so the flat outputs stay bounded (5 bytes per op, 4 per node)
    L = ei[idx] + np.maximum(0, a * ei[idx] - score[idx]) // e
    n_ops = ei[idx] + L + 2
    ends = np.cumsum(n_ops)
    old = numba.get_num_threads()
    if threads:
        numba.set_num_threads(max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS)))
    try:
        c0 = 0
        while c0 < len(idx):
            base_ops = ends[c0 - 1] if c0 else 0
            c1 = max(c0 + 1, int(np.searchsorted(ends, base_ops + CHUNK_OPS, side="right")))
            _traceback_chunk(graph, reads, idx[c0:c1], n_ops[c0:c1], L[c0:c1], score, ei, ej,
                             int(mode), scoring, max_cells, flat, col_lo, lim, bands)
            c0 = c1
    finally:
        numba.set_num_threads(old)
    res.set_flat(flat.finish())
    return res
