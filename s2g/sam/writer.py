"""SAM/BAM output of surjected alignments (see :mod:`s2g.sam`): the Numba SAM formatter
(:func:`_format_sam`; its byte helpers are :mod:`s2g.gaf`'s), :class:`SamWriter` (SAM
text, or BAM through pysam: sorted, indexed), :func:`write_sam`, :func:`index_bam` and
the reads' qualities (:func:`_qualities`).
"""
from __future__ import annotations

import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

import numba
import numpy as np

from .._numba import NJIT
from ..errors import S2GError
from ..gaf import _oriented_blob, _put, _put_int, _put_tag
from ..scoring import Scoring
from .project import OP_DEL, OP_INS, OP_MATCH, OP_MISMATCH, REVERSE, surject_batch
from .refpath import RefPath


# ----------------------------------------------------------------------- formatting

@numba.njit(**NJIT)
def _put_run(buf, p, ln, op):
    p = _put_int(buf, p, ln)
    buf[p] = op
    return p + 1


@numba.njit(**NJIT)
def _format_sam(names, rows, seqs, aln, graph_tags, lits):
    """The batch's SAM lines as bytes (sequential: see s2g.gaf.format_gaf on why).

    ``names``: (newline-separated name bytes, each name's newline index); ``rows``:
    int64[n, 10] (flag, 1-based pos, mapq, rname set, rnext: 0 '*' 1 '=', pnext, tlen,
    mapped, AS, NM); ``seqs``: (read codes, offsets, quality bytes, has quality);
    ``aln``: (ops, ops_at, realign out, reference codes); ``graph_tags``: (has a graph
    placement, path_at, n_path, path, path start, node step bytes, offsets);
    ``lits``: (reference name bytes, letters ACGTN, complement letters TGCAN)."""
    nblob, nend = names
    rflat, roff, qual, has_q = seqs
    ops, ops_at, rea, ref = aln
    g_has, path_at, n_path, path, gps, vblob, voff = graph_tags
    rname, letters, cletters = lits
    n = len(nend)
    cap = 1 << 16
    buf = np.empty(cap, np.uint8)
    p = 0
    for r in range(n):
        qlen = roff[r + 1] - roff[r]
        na = nend[r - 1] + 1 if r else 0
        ncol = rea[r, 0] if rows[r, 7] else 0
        bound = (nend[r] - na) + 2 * qlen + 20 * ncol + len(rname) + 16 * 24 + 64
        if g_has[r]:
            for t in range(path_at[r], path_at[r] + n_path[r]):
                bound += voff[path[t] + 1] - voff[path[t]]
        if p + bound > len(buf):
            nb = np.empty(max(2 * len(buf), p + bound), np.uint8)
            nb[:p] = buf[:p]
            buf = nb
        flag = rows[r, 0]
        rev = (flag & 16) != 0
        p = _put(buf, p, nblob, na, nend[r])
        buf[p] = 9
        p = _put_int(buf, p + 1, flag)
        buf[p] = 9
        p += 1
        if rows[r, 3]:
            p = _put(buf, p, rname, 0, len(rname))
        else:
            buf[p] = 42
            p += 1
        buf[p] = 9
        p = _put_int(buf, p + 1, rows[r, 1])
        buf[p] = 9
        p = _put_int(buf, p + 1, rows[r, 2])
        buf[p] = 9
        p += 1
        if rows[r, 7]:
            # CIGAR: S, runs of M (match + mismatch) / I / D, S
            at = ops_at[r]
            if rea[r, 4] > 0:
                p = _put_run(buf, p, rea[r, 4], 83)
            k = 0
            while k < ncol:
                op = ops[at + k]
                cls = 0 if op <= OP_MISMATCH else op
                t = k + 1
                while t < ncol and (0 if ops[at + t] <= OP_MISMATCH else ops[at + t]) == cls:
                    t += 1
                p = _put_run(buf, p, t - k, 77 if cls == 0 else (73 if cls == OP_INS else 68))
                k = t
            if rea[r, 5] > 0:
                p = _put_run(buf, p, rea[r, 5], 83)
        else:
            buf[p] = 42
            p += 1
        buf[p] = 9
        p += 1
        if rows[r, 4] == 1:
            buf[p] = 61
            p += 1
        else:
            buf[p] = 42
            p += 1
        buf[p] = 9
        p = _put_int(buf, p + 1, rows[r, 5])
        buf[p] = 9
        p = _put_int(buf, p + 1, rows[r, 6])
        buf[p] = 9
        p += 1
        # SEQ / QUAL: as given, or reverse-complemented on the reverse strand
        s0 = roff[r]
        if qlen == 0:
            buf[p] = 42
            buf[p + 1] = 9
            buf[p + 2] = 42
            p += 3
        else:
            if rev:
                for k in range(qlen):
                    buf[p + k] = cletters[rflat[s0 + qlen - 1 - k]]
            else:
                for k in range(qlen):
                    buf[p + k] = letters[rflat[s0 + k]]
            p += qlen
            buf[p] = 9
            p += 1
            if has_q:
                if rev:
                    for k in range(qlen):
                        buf[p + k] = qual[s0 + qlen - 1 - k]
                else:
                    for k in range(qlen):
                        buf[p + k] = qual[s0 + k]
                p += qlen
            else:
                buf[p] = 42
                p += 1
        if rows[r, 7]:
            p = _put_tag(buf, p, 78, 77, 105)            # NM:i:
            p = _put_int(buf, p, rows[r, 9])
            p = _put_tag(buf, p, 77, 68, 90)             # MD:Z:
            at = ops_at[r]
            rp = rea[r, 1]
            cnt = 0
            k = 0
            while k < ncol:
                op = ops[at + k]
                if op == OP_MATCH:
                    cnt += 1
                    rp += 1
                    k += 1
                elif op == OP_MISMATCH:
                    p = _put_int(buf, p, cnt)
                    cnt = 0
                    buf[p] = letters[ref[rp]]
                    p += 1
                    rp += 1
                    k += 1
                elif op == OP_INS:
                    k += 1
                else:
                    p = _put_int(buf, p, cnt)
                    cnt = 0
                    buf[p] = 94                          # '^'
                    p += 1
                    while k < ncol and ops[at + k] == OP_DEL:
                        buf[p] = letters[ref[rp]]
                        p += 1
                        rp += 1
                        k += 1
            p = _put_int(buf, p, cnt)
            p = _put_tag(buf, p, 65, 83, 105)            # AS:i:
            p = _put_int(buf, p, rows[r, 8])
        if g_has[r]:
            p = _put_tag(buf, p, 88, 71, 90)             # XG:Z: the graph path
            for t in range(path_at[r], path_at[r] + n_path[r]):
                v = path[t]
                p = _put(buf, p, vblob, voff[v], voff[v + 1])
            p = _put_tag(buf, p, 88, 80, 105)            # XP:i: its path start
            p = _put_int(buf, p, gps[r])
        buf[p] = 10
        p += 1
    return buf[:p]


_LETTERS = np.frombuffer(b"ACGTN", np.uint8)
_CLETTERS = np.frombuffer(b"TGCAN", np.uint8)


# ------------------------------------------------------------------------- writer

_MATE = re.compile(r"/[12]$")
#: the longest read name SAM's QNAME (and BAM's l_read_name, with its NUL) holds
MAX_QNAME = 254


#: the samtools command a BAM or sorted output streams into (its own process)
_SAMTOOLS = "import sys, pysam; getattr(pysam, sys.argv[1])(*sys.argv[2:], catch_stdout=False)"


def _pysam():
    try:
        import pysam
    except ImportError:
        raise S2GError("BAM output needs pysam: pip install 's2g[bam]'") from None
    return pysam


def _with_mate_cigars(data: bytes) -> bytes:
    """Paired records (mates adjacent, mate 1 first): each whose mate is mapped gets the
    mate's CIGAR as ``MC:Z`` (what samtools markdup and fixmate read), as bwa mem writes."""
    lines = data.split(b"\n")[:-1]
    cig = [ln.split(b"\t", 6)[5] for ln in lines]
    out = [ln + b"\tMC:Z:" + cig[r ^ 1] if cig[r ^ 1] != b"*" else ln
           for r, ln in enumerate(lines)]
    return b"\n".join(out) + b"\n" if out else b""


def parse_read_group(text):
    """``(@RG header line, its ID)`` of a ``-R``-style read group (``\\t`` escapes or tabs
    between fields; ``ID:`` required), or ``(None, None)``; a malformed one: S2GError."""
    if text is None:
        return None, None
    line = text.replace("\\t", "\t")
    fields = line.split("\t")
    if fields[0] != "@RG" or any(c in line for c in "\n\r"):
        raise S2GError(f"read group {text!r}: must be one '@RG\\tID:...' header line "
                       "(fields separated by \\t)")
    ids = [f[3:] for f in fields[1:] if f.startswith("ID:")]
    if len(ids) != 1 or not ids[0] or any(c.isspace() for c in ids[0]):
        raise S2GError(f"read group {text!r}: needs exactly one ID:<id> field (no spaces)")
    if any(len(f) < 4 or f[2] != ":" for f in fields[1:]):
        raise S2GError(f"read group {text!r}: fields must be TAG:value")
    return line, ids[0]


def _path_mapq(sj, scoring):
    """The graph alignment's MAPQ, capped where the path holds the read's place twice (a
    collapsed repeat: the graph keeps one copy, the path two): 20 a mismatch between the
    chosen realignment and the best elsewhere on the path (:mod:`s2g.seeded.mapq`'s
    scale; 0 on a tie, as minimap2). 255 (not computed) stays unless a copy ties. A mate
    whose place the pair chose (``sj.pair_margin``) gets the larger of its own cap and its
    pair margin's, the latter at most its partner's MAPQ (:mod:`s2g.sam.pairing`)."""
    from ..seeded.mapq import MAPQ_MAX
    q = np.asarray(sj.tbs.mapq, np.int64)
    cap = _margin_cap(sj.margin, scoring)
    joint = np.asarray(sj.pair_margin, np.int64) >= 0
    if joint.any():
        mate = np.minimum(np.arange(len(q)) ^ 1, len(q) - 1)
        partner = np.minimum(np.where(q == 255, MAPQ_MAX, q), cap)[mate]
        cap = np.where(joint, np.maximum(cap, np.minimum(_margin_cap(sj.pair_margin, scoring),
                                                         partner)), cap)
    return _capped(q, cap)


def _margin_cap(d, scoring):
    """The MAPQ a score margin ``d`` allows: 20 a mismatch's worth (:mod:`s2g.seeded.mapq`'s
    scale), 0 on a tie; 255 (no cap) where there is no runner-up (int64 max)."""
    from ..seeded.mapq import MAPQ_PER_MISMATCH
    a, b, _, _ = scoring.as_tuple()
    d = np.asarray(d, np.int64)
    return np.where(d < np.iinfo(np.int64).max,
                    np.floor(np.maximum(d, 0) * MAPQ_PER_MISMATCH / (a + b)), 255).astype(np.int64)


def _capped(q, cap):
    """MAPQ ``q`` under ``cap``; 255 (not computed) stays unless the cap is a tie (0)."""
    return np.where((q == 255) & (cap > 0), q, np.minimum(q, cap))


def _proper_on_path(sj, pairs):
    """Pairs whose mates lie on the path as a proper pair does: opposite strands, the
    forward mate starting before the reverse mate ends, and, with the pair's fragment model
    (``pairs.pair_model``), the span within mean + 4 sd. A pair proper in the graph can
    be placed otherwise on the path (mates on two copies of a repeat the path holds twice)."""
    n = len(sj.mapped)
    mate = np.arange(n) ^ 1
    rev = sj.reverse
    ok = sj.mapped & sj.mapped[mate] & (rev != rev[mate])
    fwd_pos = np.where(rev, sj.pos[mate], sj.pos)
    rev_end = np.where(rev, sj.end, sj.end[mate])
    ok &= fwd_pos < rev_end
    model = getattr(pairs, "pair_model", None)
    if model is not None:
        span = np.maximum(sj.end, sj.end[mate]) - np.minimum(sj.pos, sj.pos[mate])
        ok &= span <= np.ceil(model.mean + 4.0 * model.sd)
    return ok


class SamWriter:
    """SAM or BAM records of graph alignments surjected onto ``ref`` (a :class:`RefPath`
    or a path name for :class:`RefPath`).

    ``path_or_fh``: a file name, or a text file object (SAM) / binary or text file object
    (BAM: written whole at :meth:`close`); ``fmt``: ``"sam"`` or ``"bam"``; ``argv``: the
    command line for ``@PG CL``; ``sort``: coordinate-sorted output (``pysam.sort``: BAM,
    or SAM when ``fmt="sam"``); ``index``: also ``PATH.bai`` (sorted BAM written to a
    file name only); ``scoring``: the alignment's :class:`~s2g.scoring.Scoring` (the
    realignment's, reported as AS); ``threads``: pysam's compression/sort threads;
    ``ref_name``/``ref_length``: the ``@SQ`` name and length (default: the path's SAM
    coordinates, :func:`~s2g.sam.refpath.sam_coordinates`; POS counts from its offset);
    ``read_group``: an ``@RG`` header line (``\\t`` or a tab between fields, ``ID:`` required,
    as ``bwa mem -R``) whose ID every record gets as ``RG:Z`` (GATK requires one).
    Use as a context manager or call :meth:`close`.
    """

    def __init__(self, path_or_fh, graph, ref=None, fmt="sam", argv=None, sort=False,
                 index=False, scoring: Scoring | None = None, threads: int = 1,
                 read_group: str | None = None, ref_name: str | None = None,
                 ref_length: int | None = None):
        from .. import __version__
        if fmt not in ("sam", "bam"):
            raise S2GError(f"unknown output format {fmt!r}; choose sam or bam")
        if index and not (sort and fmt == "bam"):
            raise S2GError("an index (.bai) needs a coordinate-sorted BAM (sort the output)")
        self.graph = graph
        self.ref = ref if isinstance(ref, RefPath) else RefPath(graph, ref)
        self.sq_name = ref_name or self.ref.sam_name
        if any(c.isspace() for c in self.sq_name) or not self.sq_name:
            raise S2GError(f"reference name {self.sq_name!r}: SAM needs one without spaces "
                           "(give --ref-name)")
        self.sq_length = int(ref_length) if ref_length else self.ref.sam_length
        if self.sq_length < self.ref.offset + self.ref.length:
            raise S2GError(f"reference length {self.sq_length} is shorter than the path "
                           f"({self.ref.length:,} bases from {self.ref.offset:,})")
        self.fmt, self.sort, self.index = fmt, sort, index
        self.scoring = scoring or Scoring()
        self.threads = max(1, int(threads))
        self.n_written = 0
        is_name = isinstance(path_or_fh, (str, os.PathLike))
        if index and not is_name:
            raise S2GError("an index (.bai) needs the BAM written to a file name")
        self._target = os.fspath(path_or_fh) if is_name else path_or_fh
        cl = " ".join(shlex.quote(x) for x in argv) if argv else None
        self.rg_line, rg_id = parse_read_group(read_group)
        self._rg_tag = (b"\tRG:Z:" + rg_id.encode("utf-8", "surrogateescape") + b"\n"
                        if rg_id else None)
        self.header_text = self._header(cl, __version__)
        self._rname = self.sq_name.encode("utf-8", "surrogateescape")
        self._tmpdir = None
        self._bam = None
        self._fh = None
        self._own_fh = False
        if self.fmt == "bam" or sort:
            pysam = _pysam()
            self._pysam = pysam
        if self.fmt == "sam" and not sort:
            if is_name:
                self._fh = open(self._target, "w", encoding="utf-8", errors="surrogateescape")
                self._own_fh = True
            else:
                self._fh = self._target
            self._fh.write(self.header_text)
        else:
            # SAM text streams into samtools (pysam's, in a process of its own: htslib
            # parses and compresses there, in parallel, not record by record in Python):
            # `view -b` into the output, or `sort` into it; into a temporary file to copy
            # to a file object at the end
            direct = self.fmt == "bam" and not sort and is_name
            if not direct:
                base = os.path.dirname(os.path.abspath(self._target)) if is_name else None
                self._tmpdir = tempfile.mkdtemp(prefix=".s2g-sam-", dir=base)
            self._out = self._target if is_name else os.path.join(self._tmpdir, "out")
            threads = ["-@", str(self.threads)] if self.threads > 1 else []
            if sort:
                args = ["sort", "-o", self._out, "-O", self.fmt, "-T",
                        os.path.join(self._tmpdir, "sort"), *threads, "-"]
            else:
                args = ["view", "-b", "--no-PG", "-o", self._out, *threads, "-"]
            self._err = tempfile.TemporaryFile()
            self._bam = subprocess.Popen([sys.executable, "-c", _SAMTOOLS, *args],
                                         stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                         stderr=self._err)
            self._send(self.header_text.encode("utf-8", "surrogateescape"))

    def _header(self, cl, version):
        lines = ["@HD\tVN:1.6\tSO:" + ("coordinate" if self.sort else "unsorted"),
                 f"@SQ\tSN:{self.sq_name}\tLN:{self.sq_length}"]
        if self.rg_line:
            lines.append(self.rg_line)
        pg = f"@PG\tID:s2g\tPN:s2g\tVN:{version}"
        if cl:
            pg += "\tCL:" + re.sub(r"[\t\n\r]", " ", cl)
        lines.append(pg)
        return "\n".join(lines) + "\n"

    # ---------------------------------------------------------------- records
    def sam_bytes(self, reads, res, pairs=None, graph=None) -> bytes:
        """The SAM records (no header) of one batch, as :meth:`write_batch` writes them."""
        n = reads.n_reads
        graph = self.graph if graph is None else graph
        model = getattr(pairs, "pair_model", None) if pairs is not None else None
        sj = surject_batch(graph, self.ref, reads, res, self.scoring, model)
        names = list(reads.names)
        long = [x for x in names if len(x.encode("utf-8", "surrogateescape")) > MAX_QNAME]
        if long:
            raise S2GError(f"read {long[0][:40]}...: a name of "
                           f"{len(long[0].encode('utf-8', 'surrogateescape'))} bytes; SAM/BAM "
                           f"hold at most {MAX_QNAME} (write GAF, or shorten the names)")
        rows = np.zeros((n, 10), np.int64)
        flag = np.where(sj.mapped, 0, 4) | np.where(sj.reverse, 16, 0)
        pos1 = np.where(sj.mapped, sj.pos + 1 + self.ref.offset, 0)
        rname = sj.mapped.copy()
        rnext = np.zeros(n, np.int64)
        pnext = np.zeros(n, np.int64)
        tlen = np.zeros(n, np.int64)
        if pairs is not None:
            proper = np.asarray(getattr(pairs, "pair_proper", getattr(pairs, "proper", pairs)),
                                np.bool_).reshape(-1)
            if n != 2 * len(proper):
                raise S2GError(f"SAM writer: a paired batch holds 2 reads per pair; got {n} "
                               f"reads for {len(proper)} pairs")
            names = [_MATE.sub("", x) for x in names]
            me = np.arange(n)
            mate = me ^ 1
            m_me, m_mate = sj.mapped, sj.mapped[mate]
            flag = flag | 1 | np.where(me % 2 == 0, 64, 128)
            flag |= np.where(~m_mate, 8, 0)
            flag |= np.where(m_mate & sj.reverse[mate], 32, 0)
            flag |= np.where(np.repeat(proper, 2) & m_me & m_mate
                             & _proper_on_path(sj, pairs), 2, 0)
            # an unmapped read whose mate is mapped sits at its mate's position
            placed = ~m_me & m_mate
            pos1 = np.where(placed, pos1[mate], pos1)
            rname = m_me | m_mate
            rnext = rname.astype(np.int64)
            pnext = np.where(rname, pos1[mate], 0)
            both = m_me & m_mate
            left = np.minimum(sj.pos, sj.pos[mate])
            right = np.maximum(sj.end, sj.end[mate])
            first = (sj.pos < sj.pos[mate]) | ((sj.pos == sj.pos[mate]) & (me % 2 == 0))
            tlen = np.where(both, np.where(first, 1, -1) * (right - left), 0)
        rows[:, 0] = flag
        rows[:, 1] = pos1
        rows[:, 2] = np.where(sj.mapped, np.clip(_path_mapq(sj, self.scoring), 0, 255), 0)
        rows[:, 3] = rname
        rows[:, 4] = rnext
        rows[:, 5] = pnext
        rows[:, 6] = tlen
        rows[:, 7] = sj.mapped
        rows[:, 8] = sj.score
        rows[:, 9] = sj.nm
        if n == 0:
            return b""
        nblob = np.frombuffer(("\n".join(names) + "\n").encode("utf-8", "surrogateescape"),
                              np.uint8)
        nend = np.flatnonzero(nblob == 10).astype(np.int64)
        qual, has_q = _qualities(reads)
        vblob, voff = _oriented_blob(graph)
        out = _format_sam((nblob, nend), rows,
                          (np.asarray(reads.codes_flat, np.uint8),
                           np.asarray(reads.offsets, np.int64), qual, has_q),
                          (sj.ops, sj.ops_at, sj.rea, self.ref.seq),
                          (sj.tbs.has, sj.tbs.path_at, sj.tbs.n_path, sj.tbs.path, sj.tbs.ps,
                           vblob, voff),
                          (np.frombuffer(self._rname, np.uint8), _LETTERS, _CLETTERS))
        data = out.tobytes()
        if pairs is not None:
            data = _with_mate_cigars(data)
        mates = (rows[:, 3], rows[:, 1], sj.mapped, sj.reverse) if pairs is not None else None
        sec = getattr(res, "secondary", None)
        if sec is not None and len(sec):
            data = self._with_secondaries(data, reads, sec, graph, sj, mates, (vblob, voff))
        if len(sj.supp.reads):
            data = self._with_supplementary(data, reads, sj, rows, mates, (vblob, voff))
        return data.replace(b"\n", self._rg_tag) if self._rg_tag else data

    def _with_secondaries(self, primary: bytes, reads, sec, graph, sj, mates, blob) -> bytes:
        """Each read's primary record followed by its secondary alignments (``sec``: a
        BatchResult whose ``owner`` gives each row's read, ascending) surjected as the
        primaries are: FLAG 256 (+16 reverse), MAPQ 0, SEQ and QUAL ``*`` (minimap2's
        default: the primary holds them), the same CIGAR/NM/MD/AS/XG/XP. Not written: a
        secondary that does not reach the path (no unmapped secondaries), or one that
        lands where its primary or an earlier secondary of the read already does (same
        strand and span). ``mates`` (pairs): the primaries' (rname set, POS, mapped,
        reverse): FLAG 1/64/128/8/32, RNEXT/PNEXT and ``MC:Z`` from the mate's primary
        record, TLEN 0, never 2 (proper pair)."""
        owner = np.asarray(sec.owner, np.int64)
        ssj = surject_batch(graph, self.ref, reads.subset(owner), sec, self.scoring)
        keep = ssj.mapped & ~(sj.mapped[owner] & (ssj.pos == sj.pos[owner]) &
                              (ssj.end == sj.end[owner]) & (ssj.reverse == sj.reverse[owner]))
        kk = np.flatnonzero(keep)
        if len(kk):
            key = np.stack([owner[kk], ssj.pos[kk], ssj.end[kk], ssj.reverse[kk]], axis=1)
            kk = kk[np.sort(np.unique(key, axis=0, return_index=True)[1])]
        if not len(kk):
            return primary
        own = owner[kk]
        m = len(kk)
        rows = np.zeros((m, 10), np.int64)
        flag = 256 | np.where(ssj.reverse[kk], 16, 0)
        names = [reads.names[r] for r in own.tolist()]
        if mates is not None:
            names = [_MATE.sub("", x) for x in names]
            m_rname, m_pos1, m_mapped, m_rev = (x[own ^ 1] for x in mates)
            flag = flag | 1 | np.where(own % 2 == 0, 64, 128)
            flag |= np.where(~m_mapped, 8, 0)
            flag |= np.where(m_mapped & m_rev, 32, 0)
            rows[:, 4] = m_rname
            rows[:, 5] = np.where(m_rname != 0, m_pos1, 0)
        rows[:, 0] = flag
        rows[:, 1] = ssj.pos[kk] + 1 + self.ref.offset
        rows[:, 3] = 1
        rows[:, 7] = 1
        rows[:, 8] = ssj.score[kk]
        rows[:, 9] = ssj.nm[kk]
        nblob = np.frombuffer(("\n".join(names) + "\n").encode("utf-8", "surrogateescape"),
                              np.uint8)
        nend = np.flatnonzero(nblob == 10).astype(np.int64)
        t = ssj.tbs
        out = _format_sam((nblob, nend), rows,
                          (np.zeros(0, np.uint8), np.zeros(m + 1, np.int64),   # SEQ/QUAL *
                           np.zeros(0, np.uint8), False),
                          (ssj.ops, np.ascontiguousarray(ssj.ops_at[kk]),
                           np.ascontiguousarray(ssj.rea[kk]), self.ref.seq),
                          (np.ascontiguousarray(t.has[kk]), np.ascontiguousarray(t.path_at[kk]),
                           np.ascontiguousarray(t.n_path[kk]), t.path,
                           np.ascontiguousarray(t.ps[kk]), *blob),
                          (np.frombuffer(self._rname, np.uint8), _LETTERS, _CLETTERS))
        secl = out.tobytes().split(b"\n")[:-1]
        prim = primary.split(b"\n")[:-1]
        if mates is not None:
            cig = [ln.split(b"\t", 6)[5] for ln in prim]
            secl = [ln + b"\tMC:Z:" + cig[r ^ 1] if cig[r ^ 1] != b"*" else ln
                    for ln, r in zip(secl, own.tolist())]
        starts = np.searchsorted(own, np.arange(len(prim) + 1)).tolist()
        parts = []
        for r, line in enumerate(prim):
            parts.append(line)
            parts.extend(secl[starts[r]:starts[r + 1]])
        return b"\n".join(parts) + b"\n"

    def _with_supplementary(self, data: bytes, reads, sj, prows, mates, blob) -> bytes:
        """``data`` with a supplementary record after each read's records where its
        surjection found one (:func:`~s2g.sam.project._supplementary`: the read's other
        part, beyond an SV against the path), and ``SA:Z`` on both records, as bwa mem
        writes them: FLAG 2048 (+16 reverse; pairs: the primary's pair flags and mate
        fields, TLEN 0, ``MC:Z``), soft clips and the whole SEQ/QUAL (bwa's and minimap2's
        ``-Y``), MAPQ at most the primary's, capped by the best other candidate for the same
        bases (20 a mismatch), NM/MD/AS of its realignment, the read's XG/XP."""
        sp = sj.supp
        own = sp.reads
        t = sp.row[own]
        m = len(own)
        rows = np.zeros((m, 10), np.int64)
        rev = sp.status[t] == REVERSE
        flag = 2048 | np.where(rev, 16, 0) | (prows[own, 0] & (1 | 2 | 8 | 32 | 64 | 128))
        rows[:, 0] = flag
        rows[:, 1] = sp.rea[t, 1] + 1 + self.ref.offset
        rows[:, 2] = _capped(prows[own, 2], _margin_cap(sp.margin[own], self.scoring))
        rows[:, 3] = 1
        if mates is not None:
            rows[:, 4] = prows[own, 4]
            rows[:, 5] = prows[own, 5]
        rows[:, 7] = 1
        rows[:, 8] = sp.rea[t, 2]
        rows[:, 9] = sp.rea[t, 3]
        sub = reads.subset(own)
        names = [reads.names[r] for r in own.tolist()]
        if mates is not None:
            names = [_MATE.sub("", x) for x in names]
        nblob = np.frombuffer(("\n".join(names) + "\n").encode("utf-8", "surrogateescape"),
                              np.uint8)
        nend = np.flatnonzero(nblob == 10).astype(np.int64)
        qual, has_q = _qualities(sub)
        tb = sj.tbs
        out = _format_sam((nblob, nend), rows,
                          (np.asarray(sub.codes_flat, np.uint8),
                           np.asarray(sub.offsets, np.int64), qual, has_q),
                          (sj.ops, np.ascontiguousarray(sp.ops_at[t]),
                           np.ascontiguousarray(sp.rea[t]), self.ref.seq),
                          (np.ascontiguousarray(tb.has[own]),
                           np.ascontiguousarray(tb.path_at[own]),
                           np.ascontiguousarray(tb.n_path[own]), tb.path,
                           np.ascontiguousarray(tb.ps[own]), *blob),
                          (np.frombuffer(self._rname, np.uint8), _LETTERS, _CLETTERS))
        supl = out.tobytes().split(b"\n")[:-1]
        lines = data.split(b"\n")[:-1]
        at = {}                                   # read -> index of its primary line
        r = -1
        for k, ln in enumerate(lines):
            if not int(ln.split(b"\t", 2)[1]) & 2304:
                r += 1
                at[r] = k

        def sa(f):                                # SA:Z entry of a record's fields
            return b",".join([f[2], f[3], b"-" if int(f[1]) & 16 else b"+", f[5], f[4],
                              next(x[5:] for x in f[11:] if x.startswith(b"NM:i:"))]) + b";"
        extra = {}
        for x, r in enumerate(own.tolist()):
            pf = lines[at[r]].split(b"\t")
            sf = supl[x].split(b"\t")
            lines[at[r]] += b"\tSA:Z:" + sa(sf)
            line = supl[x] + b"\tSA:Z:" + sa(pf)
            if mates is not None:
                mate_cigar = lines[at[r ^ 1]].split(b"\t", 6)[5]
                if mate_cigar != b"*":
                    line += b"\tMC:Z:" + mate_cigar
            extra[r] = line
        out_lines = []
        for r in range(len(at)):
            end = at[r + 1] if r + 1 < len(at) else len(lines)
            out_lines.extend(lines[at[r]:end])
            if r in extra:
                out_lines.append(extra[r])
        return b"\n".join(out_lines) + b"\n"

    def batch_text(self, batch, res) -> bytes:
        """:meth:`sam_bytes` of a batch as the pipeline's text stage makes it: a paired
        result (``res.pair_proper``) is its own ``pairs`` (and its fragment model)."""
        paired = getattr(res, "pair_proper", None) is not None
        return self.sam_bytes(batch, res, res if paired else None)

    def write_batch(self, reads, res, pairs=None, graph=None) -> int:
        """Write one primary record per read of ``reads`` (a :class:`~s2g.reads.ReadBatch`),
        in order, from ``res`` (its BatchResult, or per-read AlignResults), each followed
        by its secondary records when ``res.secondary`` holds any. ``pairs``: None
        (single-end), or for a batch of 2n reads interleaved (mate 1 of pair k at 2k, mate 2
        at 2k+1) n booleans, or an object with ``.pair_proper`` or ``.proper`` (the batch's
        result: its ``.pair_model`` then also bounds the span a pair proper in the graph
        keeps on the path, :func:`_proper_on_path`): which pairs are proper.
        ``graph``: the FlatGraph this batch was aligned to when it is not the writer's (a
        cyclic graph unrolled per batch: node ids differ, segments and paths do not).
        Returns the number of reads."""
        return self.write_records(self.sam_bytes(reads, res, pairs, graph), reads.n_reads)

    def write_records(self, data: bytes, n: int) -> int:
        """Write :meth:`sam_bytes`' records of ``n`` reads (made in another thread)."""
        if self._fh is not None:
            self._fh.write(data.decode("utf-8", "surrogateescape"))
        elif data:
            self._send(data)
        self.n_written += n
        return n

    def _send(self, data: bytes):
        try:
            self._bam.stdin.write(data)
        except BrokenPipeError:
            self._bam.wait()
            raise S2GError(f"writing {self.fmt.upper()} failed: {self._samtools_error()}") \
                from None

    def _samtools_error(self) -> str:
        self._err.seek(0)
        lines = [x for x in self._err.read().decode("utf-8", "replace").splitlines()
                 if x.strip()]
        return lines[-1] if lines else f"samtools exited with {self._bam.returncode}"

    def close(self):
        """Finish the output: close the file, sort and index when asked."""
        try:
            if self._fh is not None:
                if self._own_fh:
                    self._fh.close()
                else:
                    self._fh.flush()
                self._fh = None
            if self._bam is not None:
                proc, self._bam = self._bam, None
                try:
                    proc.stdin.close()
                except BrokenPipeError:
                    pass
                if proc.wait() != 0:
                    self._bam = proc
                    msg = self._samtools_error()
                    self._bam = None
                    raise S2GError(f"writing {self.fmt.upper()} failed: {msg}")
                self._finish()
        finally:
            if self._tmpdir is not None:
                shutil.rmtree(self._tmpdir, ignore_errors=True)
                self._tmpdir = None

    def abort(self):
        """Stop without finishing (a failed or interrupted run): close what is open, sort
        and index nothing, remove the temporary folder; the caller removes the output."""
        import contextlib
        with contextlib.suppress(Exception):
            if self._fh is not None and self._own_fh:
                self._fh.close()
        self._fh = None
        with contextlib.suppress(Exception):
            if self._bam is not None:
                self._bam.kill()
                self._bam.wait()
        self._bam = None
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None

    def _finish(self):
        pysam = self._pysam
        if self._tmpdir is None:
            return                                        # unsorted BAM written in place
        is_name = isinstance(self._target, str)
        out = self._out
        if self.index:
            pysam.index(out)
        if not is_name:
            fh = self._target
            raw = getattr(fh, "buffer", None)        # a text stream over bytes (stdout)
            with open(out, "rb") as f:
                if raw is not None:
                    fh.flush()
                    shutil.copyfileobj(f, raw)
                    raw.flush()
                elif isinstance(fh, io.TextIOBase):   # StringIO: SAM text only
                    fh.write(f.read().decode("utf-8", "surrogateescape"))
                else:
                    shutil.copyfileobj(f, fh)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def run_writer(target, graph, sam, fmt, sort=False, scoring=None, threads=1, argv=None):
    """The :class:`SamWriter` of an ``s2g align`` run (the CLI's, one process or a Dask
    client) on ``graph`` (a FlatGraph with its paths) for ``sam`` (a
    :class:`~s2g.plan.SamOptions`)."""
    from ..plan import is_cyclic
    from .refpath import _source
    if is_cyclic(graph):
        raise S2GError(f"{_source(graph)}SAM/BAM output from full-graph DP on a cyclic graph "
                       "is not supported (each batch unrolls it anew); use --seeded or "
                       "--break-cycles")
    return SamWriter(target, graph, RefPath(graph, sam.ref_path), fmt, argv=argv, sort=sort,
                     scoring=scoring, threads=threads, read_group=sam.read_group,
                     ref_name=sam.ref_name, ref_length=sam.ref_length)


def records_text(graph, sam, scoring):
    """``text(batch, res)`` -> SAM records (no header) on ``graph`` for ``sam`` (a
    :class:`~s2g.plan.SamOptions`): what a Dask worker sends its client, which writes the
    header, the records and BAM, sorted or not."""
    return run_writer(io.StringIO(), graph, sam, "sam", scoring=scoring).batch_text


def index_bam(path):
    """Write ``path.bai`` for a coordinate-sorted BAM (``pysam.index``)."""
    _pysam().index(os.fspath(path))


def _qualities(reads):
    """``(flat ASCII qualities aligned with the codes, True)`` when the batch carries
    qualities (attribute ``quals`` or ``qualities``: a uint8 array as long as the codes, or
    one str/bytes per read), else ``(empty, False)``: QUAL is then ``*``."""
    q = getattr(reads, "quals", None)
    if q is None:
        q = getattr(reads, "qualities", None)
    if q is None:
        return np.zeros(0, np.uint8), False
    if isinstance(q, np.ndarray):
        if len(q) != len(reads.codes_flat):
            raise S2GError("read qualities do not match the bases")
        return np.ascontiguousarray(q, np.uint8), True
    parts = [x.encode() if isinstance(x, str) else bytes(x) for x in q]
    flat = np.frombuffer(b"".join(parts), np.uint8)
    if len(flat) != len(reads.codes_flat):
        raise S2GError("read qualities do not match the bases")
    return flat, True


def write_sam(path_or_fh, graph, reads, res, ref=None, fmt="sam", pairs=None, **kw) -> int:
    """One batch in one call: :class:`SamWriter` + :meth:`~SamWriter.write_batch`."""
    with SamWriter(path_or_fh, graph, ref, fmt=fmt, **kw) as w:
        return w.write_batch(reads, res, pairs)
