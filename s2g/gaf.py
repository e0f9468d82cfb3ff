"""GAF writer (lh3/gfatools rGFA.md): exactly one line per read, in input order.

Columns: query name, query length, query start, query end (0-based, end-exclusive),
strand (always ``+``: the path carries the orientation), path (``>s1>s2<s3``), path
length, path start, path end, residue matches, alignment block length, mapping
quality (255 = not computed; 0 on no-hit lines, as minimap2 and minigraph write for
unmapped reads); tags ``AS:i`` (score), ``NM:i`` (mismatches + inserted
+ deleted bases), ``cg:Z`` (CIGAR with ``=``/``X``/``I``/``D``). A read without an
alignment (or without a traceback) is written as a no-hit line, never dropped:
``name qlen 0 0 * * 0 0 0 0 0 0`` plus ``AS:i`` when a score exists. Names (read and
segment) are written byte for byte: UTF-8, and bytes that are not UTF-8 as they came
(decoded with surrogate escapes, encoded back the same way).
"""
from __future__ import annotations

import numba
import numpy as np

from ._numba import NJIT


def gaf_line(graph, res) -> str:
    """The GAF line of one :class:`~s2g.result.AlignResult`."""
    tb = res.traceback
    if not res.aligned or tb is None:
        line = f"{res.name}\t{res.qlen}\t0\t0\t*\t*\t0\t0\t0\t0\t0\t0"
        if res.aligned:
            line += f"\tAS:i:{res.score}"
        return line
    names = graph.oriented_names()
    path = "".join([names[v] for v in tb.path])
    return (f"{res.name}\t{res.qlen}\t{tb.qstart}\t{tb.qend}\t+\t{path}\t{tb.path_len}\t"
            f"{tb.path_start}\t{tb.path_end}\t{tb.matches}\t{tb.block_len}\t{res.mapq}\t"
            f"AS:i:{res.score}\tNM:i:{tb.edits}\tcg:Z:{tb.cigar}")


def write_gaf(fh, graph, batch) -> int:
    """Write every result of ``batch`` to ``fh``; returns the number of lines."""
    from .result import BatchResult
    if isinstance(batch, BatchResult):
        fh.write(gaf_text(graph, batch))
        return len(batch)
    n = 0
    for res in batch:
        fh.write(gaf_line(graph, res))
        fh.write("\n")
        n += 1
    return n


# ---------------------------------------------------------------- batch writer (Numba)

_OPS = np.frombuffer(b"=XID", np.uint8)
_NOHIT = np.frombuffer(b"\t0\t0\t*\t*\t0\t0\t0\t0\t0\t0", np.uint8)  # MAPQ 0: unmapped


@numba.njit(inline="always", **NJIT)
def _put(buf, p, src, a, b):
    for k in range(a, b):
        buf[p] = src[k]
        p += 1
    return p


@numba.njit(inline="always", **NJIT)
def _put_ch(buf, p, c):
    buf[p] = c
    return p + 1


@numba.njit(**NJIT)
def _put_int(buf, p, x):
    if x < 0:
        buf[p] = 45
        p += 1
        x = -x
    n = 1
    y = x
    while y >= 10:
        y //= 10
        n += 1
    for k in range(n):
        buf[p + n - 1 - k] = 48 + x % 10
        x //= 10
    return p + n


@numba.njit(**NJIT)
def _put_tag(buf, p, t0, t1, ty):      # "\t" t0 t1 ":" ty ":"
    p = _put_ch(buf, p, 9)
    p = _put_ch(buf, p, t0)
    p = _put_ch(buf, p, t1)
    p = _put_ch(buf, p, 58)
    p = _put_ch(buf, p, ty)
    return _put_ch(buf, p, 58)


@numba.njit(**NJIT)
def format_gaf(names, per_read, tb, segs, lits):
    """The batch's GAF lines as bytes. Sequential on purpose: ~0.5 us per line, and it runs
    in the formatter thread while the finisher thread's parallel Numba traceback uses the
    cores (two parallel regions from two threads oversubscribe them: measured 7 us per
    read and seconds of system time on a 16-core host).

    ``names``: (read names, newline-separated bytes; index of each name's newline);
    ``per_read``: (query length, score, aligned, MAPQ); ``tb``: the
    :class:`~s2g.traceback.FlatTracebacks` arrays (has a path, qstart, qend, run_at, n_runs,
    run_op, run_len, path_at, n_path, path, geo, counts); ``segs``: (every node's GAF path
    step as bytes, offsets); ``lits``: (the CIGAR operation letters, the no-hit columns)."""
    nblob, nend = names
    qlen, score, aligned, mapq = per_read
    has, qstart, qend, run_at, n_runs, run_op, run_len, path_at, n_path, path, geo, counts = tb
    vblob, voff = segs
    ops, nohit = lits
    n = len(qlen)
    bound = 0
    for r in range(n):                       # the text's size, generously: 21 bytes per int
        x = nend[r] - (nend[r - 1] + 1 if r else 0) + 16 * 21 + 64
        if has[r]:
            for t in range(path_at[r], path_at[r] + n_path[r]):
                v = path[t]
                x += voff[v + 1] - voff[v]
            x += 12 * n_runs[r]
        bound += x
    buf = np.empty(bound, np.uint8)
    p = 0
    for r in range(n):
        p = _put(buf, p, nblob, nend[r - 1] + 1 if r else 0, nend[r])
        p = _put_ch(buf, p, 9)
        p = _put_int(buf, p, qlen[r])
        if not has[r]:
            p = _put(buf, p, nohit, 0, len(nohit))
            if aligned[r]:
                p = _put_tag(buf, p, 65, 83, 105)
                p = _put_int(buf, p, score[r])
        else:
            p = _put_ch(buf, p, 9)
            p = _put_int(buf, p, qstart[r])
            p = _put_ch(buf, p, 9)
            p = _put_int(buf, p, qend[r])
            p = _put_ch(buf, p, 9)
            p = _put_ch(buf, p, 43)
            p = _put_ch(buf, p, 9)
            for t in range(path_at[r], path_at[r] + n_path[r]):
                v = path[t]
                p = _put(buf, p, vblob, voff[v], voff[v + 1])
            for x in (geo[r, 0], geo[r, 1], geo[r, 2], counts[r, 0],
                      counts[r, 0] + counts[r, 1] + counts[r, 2] + counts[r, 3]):
                p = _put_ch(buf, p, 9)
                p = _put_int(buf, p, x)
            p = _put_ch(buf, p, 9)
            p = _put_int(buf, p, mapq[r])
            p = _put_tag(buf, p, 65, 83, 105)              # AS:i:
            p = _put_int(buf, p, score[r])
            p = _put_tag(buf, p, 78, 77, 105)              # NM:i:
            p = _put_int(buf, p, counts[r, 1] + counts[r, 2] + counts[r, 3])
            p = _put_tag(buf, p, 99, 103, 90)              # cg:Z:
            for t in range(run_at[r], run_at[r] + n_runs[r]):
                p = _put_int(buf, p, run_len[t])
                p = _put_ch(buf, p, ops[run_op[t]])
        p = _put_ch(buf, p, 10)
    return buf[:p]



def _oriented_blob(graph):
    """Every node's GAF path step as one UTF-8 byte string with offsets, built once."""
    hit = graph.__dict__.get("_oriented_blob")
    if hit is None:
        hit = oriented_blob(graph.seg_names, graph.node_seg, graph.node_rev)
        graph.__dict__["_oriented_blob"] = hit
    return hit


def oriented_blob(seg_names, node_seg, node_rev):
    """(bytes as uint8, int64 offsets): node ``v``'s ``>name`` or ``<name`` at
    ``[off[v], off[v + 1])``. The names are joined and encoded once and the steps filled
    by a Numba loop; a str and its encoding a node took 2.3 s of the first batch's GAF
    text on a 1 Gbp graph (2,000,000 nodes, 2-core VM). A name holding a newline (a
    graph built in code: GFA fields hold no white space) is encoded name by name."""
    joined = "\n".join(seg_names)
    if joined.count("\n") != max(len(seg_names) - 1, 0):
        enc = [(b"<" if r else b">") + seg_names[s].encode("utf-8", "surrogateescape")
               for r, s in zip(np.asarray(node_rev).tolist(), np.asarray(node_seg).tolist())]
        off = np.zeros(len(enc) + 1, np.int64)
        np.cumsum([len(x) for x in enc], out=off[1:])
        return np.frombuffer(b"".join(enc) or b"\0", np.uint8), off
    sb = np.frombuffer((joined + "\n").encode("utf-8", "surrogateescape"), np.uint8)
    ends = np.flatnonzero(sb == 10)              # UTF-8 has byte 10 for a newline only
    starts = np.zeros(len(ends), np.int64)
    starts[1:] = ends[:-1] + 1
    seg = np.asarray(node_seg, np.int64)
    off = np.zeros(len(seg) + 1, np.int64)
    if len(seg):
        np.cumsum(1 + (ends - starts)[seg], out=off[1:])
    out = np.empty(max(int(off[-1]), 1), np.uint8)
    out[0] = 0
    _fill_oriented(sb, starts, seg, (np.asarray(node_rev) != 0).view(np.uint8), off, out)
    return out, off


@numba.njit(**NJIT)
def _fill_oriented(sb, starts, seg, rev, off, out):
    for v in range(len(seg)):
        o = off[v]
        out[o] = 60 if rev[v] else 62               # '<' or '>'
        a = starts[seg[v]]
        for k in range(off[v + 1] - o - 1):
            out[o + 1 + k] = sb[a + k]


def gaf_text(graph, batch) -> str:
    """:func:`gaf_bytes` as text (non-UTF-8 name bytes as surrogate escapes)."""
    return gaf_bytes(graph, batch).decode("utf-8", "surrogateescape")


def gaf_bytes(graph, batch) -> bytes:
    """The GAF lines of a whole :class:`~s2g.result.BatchResult`, newline-terminated.

    From the batch's :class:`~s2g.traceback.FlatTracebacks` (or none: score-only), one
    Numba pass writes the bytes, the same text :func:`gaf_line` gives line by line
    (tests compare them): bench/host_profile.py on a 2-CPU VM, 0.8 us per read against 32
    (Traceback objects 26 + gaf_line 6). With Traceback objects set by hand it falls back
    to :func:`gaf_line`.
    """
    from .scoring import NEG_INF
    from .trace import FlatTracebacks
    n = len(batch)
    if n == 0:
        return b""
    if batch.flat is None and batch._tracebacks is not None:
        return "".join(gaf_line(graph, r) + "\n" for r in batch).encode("utf-8", "surrogateescape")
    flat = batch.flat if batch.flat is not None else FlatTracebacks(n).finish()
    nblob = np.frombuffer(("\n".join(batch.names) + "\n").encode("utf-8", "surrogateescape"),
                          np.uint8)
    nend = np.flatnonzero(nblob == 10).astype(np.int64)
    score = np.asarray(batch.score, np.int64)
    aligned = (score > NEG_INF) & (np.asarray(batch.end_j) >= 0)
    vblob, voff = _oriented_blob(graph)
    mapq = np.full(n, 255, np.int64) if batch.mapq is None else np.asarray(batch.mapq, np.int64)
    out = format_gaf((nblob, nend), (np.asarray(batch.lengths, np.int64), score, aligned, mapq),
                     (flat.has & aligned, flat.qstart, flat.qend, flat.run_at, flat.n_runs,
                      flat.run_op, flat.run_len, flat.path_at, flat.n_path, flat.path, flat.geo,
                      flat.counts), (vblob, voff), (_OPS, _NOHIT))
    text = out.tobytes()
    proper = getattr(batch, "pair_proper", None)
    if proper is not None:
        text = _with_mates(text, batch.names, proper)
    sec = getattr(batch, "secondary", None)
    if sec is None:
        return text
    return _with_secondaries(text, gaf_bytes(graph, sec), sec.owner)


def _with_mates(text: bytes, names, proper) -> bytes:
    """Paired-end reads (a batch of interleaved mates): each line gets its mate's name,
    ``fn:Z:`` on mate 1 (the next read of the fragment) and ``fp:Z:`` on mate 2 (the
    previous), and ``pd:b:1`` or ``pd:b:0`` (properly paired or not), as vg giraffe
    tags paired GAF."""
    lines = text.split(b"\n")[:-1]
    enc = [x.encode("utf-8", "surrogateescape") for x in names]
    pd = [b"\tpd:b:1" if p else b"\tpd:b:0" for p in np.asarray(proper).tolist()]
    out = []
    for r, line in enumerate(lines):
        tag = b"\tfn:Z:" if r % 2 == 0 else b"\tfp:Z:"
        out.append(line + tag + enc[r ^ 1] + pd[r >> 1])
    return b"\n".join(out) + b"\n"


def _with_secondaries(primary: bytes, secondary: bytes, owner) -> bytes:
    """Each read's primary line (tagged ``tp:A:P`` when it has a path) followed by its
    secondary alignments (``tp:A:S``, rows of ``secondary`` owned by that read, ``owner``
    ascending), as minimap2 writes them."""
    prim = primary.split(b"\n")[:-1]
    secl = secondary.split(b"\n")[:-1] if secondary else []
    starts = np.searchsorted(np.asarray(owner), np.arange(len(prim) + 1))
    parts = []
    for r, line in enumerate(prim):
        mapped = line.split(b"\t", 6)[5] != b"*"
        parts.append(line + b"\ttp:A:P" if mapped else line)
        for k in range(starts[r], starts[r + 1]):
            parts.append(secl[k] + b"\ttp:A:S")
    return b"\n".join(parts) + b"\n"

