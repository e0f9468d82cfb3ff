"""Plain FASTQ parsed in blocks by one Numba pass, everything else left to dnaio.

Why: dnaio makes a Python record (three str objects) a read, and s2g's reader loop then
encodes them; that held the GIL for ~2 us a read on the GPU machine's host, beside the
GPU pipeline's threads (py-spy, session 57: the reader thread the busiest holder of the
GIL). Most FASTQ is the plain four-line form: ``@name[ comment]``, the bases, a lone
``+``, the qualities, each line ended by ``\\n``. :class:`Pieces` reads such a file in
8 MiB pieces and :func:`_parse` turns each piece's records into base codes, lengths,
names and qualities without a Python object a read (the GIL released). The first batch's
records (the head) are dnaio's, so that the first batch waits for no Numba start.

Exactly dnaio's reading, or dnaio itself: the pass stops at the first record that is not
plain (a ``\\r``, a control or non-ASCII byte, an empty name, text after the ``+``,
qualities of another length or outside ``!``..``~``, a byte of the bases that is not
IUPAC, a blank line) and dnaio reads the file on from that record (:class:`_Chained`:
the unread bytes, then the rest of the file), so what dnaio accepts, s2g accepts as
before, and its errors are the same, record numbers and line numbers included. The
tests compare both ways on random and damaged files (tests/test_fastq_blocks.py).

:func:`assemble` cuts the blocks (these, or dnaio's, :func:`s2g.reads._dnaio_blocks`)
into the batches :func:`s2g.reads.iter_read_batches` yields.
"""
from __future__ import annotations

import io
import os
import stat
from bisect import bisect_left
from operator import itemgetter

import numba
import numpy as np

from ._numba import NJIT
from .graph import _STREAM_ERRORS

#: bytes read from the file at once
PIECE = 8 << 20
#: most bytes of the first records read by dnaio (:class:`Pieces`' head)
HEAD_BYTES = 64 << 20
#: bytes asked of the (decompressing) file a call, as dnaio's buffer: a stream error (a cut
#: gzip) loses what the failing call decoded, so the records before it are counted as dnaio
#: counts them, nearly
READ_STEP = 128 << 10
_AT, _PLUS, _NL, _TAB, _SPACE = 64, 43, 10, 9, 32


def read_step(raw, piece):
    """Bytes to ask of ``raw`` a call: a whole piece from a plain regular file (no stream
    errors to lose decoded bytes to; each call releases the GIL, and taking it back waits
    up to the switch interval while another thread runs Python: beside a busy Python
    thread the first 50,000 reads took 1.1 s in :data:`READ_STEP` calls and 0.8 s in
    pieces, 0.07 s alone, 2-core VM), else :data:`READ_STEP`."""
    if type(raw) is io.BufferedReader and type(raw.raw) is io.FileIO and \
            position(raw) is not None:
        return max(piece, READ_STEP)
    return READ_STEP


@numba.njit(**NJIT)
def _parse(buf, n, at_eof, table, bad, codes, lens, names, quals):
    """The plain FASTQ records at the start of ``buf[:n]`` (``at_eof``: the file ends at
    ``n``): their bases' codes (``table``; ``bad``: not a base) into ``codes``, lengths
    into ``lens``, names (the header's first word) into ``names`` each ended by ``\\n``,
    qualities into ``quals`` (where it has room: an empty one keeps none). Returns (records, bytes of ``buf`` they take, bytes of
    ``names``, plain): ``plain`` False where a record that is whole but not plain stops
    the pass (it starts at the bytes returned); True where the records ran to a record
    cut by the piece's end (or to ``n``)."""
    i = 0
    r = 0
    c = 0
    m = 0
    keep_q = len(quals) > 0
    while i < n:
        if buf[i] != _AT:
            return r, i, m, False
        j = i + 1
        name_end = -1
        while j < n and buf[j] != _NL:
            b = buf[j]
            if (b < _SPACE and b != _TAB) or b >= 127:
                return r, i, m, False
            if name_end < 0 and (b == _SPACE or b == _TAB):
                name_end = j
            j += 1
        if j >= n:
            return r, i, m, not at_eof
        if name_end < 0:
            name_end = j
        if name_end == i + 1:
            return r, i, m, False               # no name: dnaio's reader names it
        s0 = j + 1
        k = s0
        while k < n and buf[k] != _NL:
            k += 1
        if k >= n:
            return r, i, m, not at_eof
        p0 = k + 1
        if p0 + 1 >= n:
            return r, i, m, not at_eof
        if buf[p0] != _PLUS or buf[p0 + 1] != _NL:
            return r, i, m, False
        q0 = p0 + 2
        q1 = q0 + (k - s0)
        if q1 > n or (q1 == n and not at_eof):
            return r, i, m, not at_eof
        if q1 == n and q1 == q0:                # no quality line at all: dnaio's error
            return r, i, m, False
        if q1 < n and buf[q1] != _NL:
            return r, i, m, False
        for t in range(k - s0):                 # (a record cut short leaves what it
            x = table[buf[s0 + t]]              # wrote past c: the next one writes over)
            q = buf[q0 + t]
            if x == bad or q < 33 or q > 126:
                return r, i, m, False
            codes[c + t] = x
            if keep_q:
                quals[c + t] = q
        c += k - s0
        lens[r] = k - s0
        for t in range(i + 1, name_end):
            names[m] = buf[t]
            m += 1
        names[m] = _NL
        m += 1
        r += 1
        i = q1 + 1 if q1 < n else n
    return r, i, m, True


class Block:
    """Consecutive reads: ``names`` (list of str), ``codes`` (uint8, all bases),
    ``lens`` (int64 a read), ``quals`` (uint8 aligned with ``codes``, or None)."""

    __slots__ = ("names", "codes", "lens", "quals", "unnamed_at", "span")

    def __init__(self, names, codes, lens, quals):
        self.names, self.codes, self.lens, self.quals = names, codes, lens, quals
        self.unnamed_at = ()                # reads named by their record number (dnaio's)
        self.span = None                    # (Pieces) its records' decompressed bytes


class _Chained(io.RawIOBase):
    """``head`` (bytes), then the binary file ``tail``: where dnaio reads on from the
    first record that is not plain. ``fileno`` is the file's (progress)."""

    def __init__(self, head, tail, error=None):
        super().__init__()
        self._head = memoryview(bytes(head))
        self._tail = tail
        self._error = error             # the tail's stream error, met before the hand-over

    def readable(self):
        return True

    def readinto(self, b):
        if len(self._head):
            k = min(len(b), len(self._head))
            b[:k] = self._head[:k]
            self._head = self._head[k:]
            return k
        if self._error is not None:
            raise self._error
        return self._tail.readinto(b)

    def fileno(self):
        return self._tail.fileno()

    def close(self):
        try:
            self._tail.close()
        finally:
            super().close()


def plain_fastq(reader) -> bool:
    """Whether the dnaio ``reader`` (just opened) reads FASTQ: :class:`Pieces` may read
    its file instead (knob ``fast_fastq``)."""
    import dnaio
    return isinstance(reader, dnaio.FastqReader)


def open_raw(path):
    """The decompressed bytes of ``path`` as dnaio.open reads them (xopen, no threads)."""
    from xopen import xopen
    return xopen(path, "rb", threads=0)


def position(raw):
    """Bytes of ``raw``'s file read so far (of a compressed one, the compressed bytes), or
    None where it is not a regular file or ``raw`` has no file (a pipe, None)."""
    try:
        fd = raw.fileno()
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.lseek(fd, 0, os.SEEK_CUR)
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return None


class Pieces:
    """Blocks of plain FASTQ records of the binary file ``raw``, in order (iterate); where
    a record is not plain, the last item is ``("rest", a binary file of the rest)``: the
    caller reads that with dnaio (and the first, with ``head``, is ``("head", bytes)``).
    ``table``/``bad``: s2g.reads' byte -> base code table and its not-a-base code;
    ``piece``: bytes read at once (0: :data:`PIECE`).
    Each block's ``span``: where its records lie in the decompressed bytes
    (:meth:`position` turns an offset there into bytes of the file, for progress)."""

    def __init__(self, raw, table, bad, want_quals: bool, piece: int = 0, head=(0, 0)):
        self.raw, self.table, self.bad, self.want_quals = raw, table, bad, want_quals
        self.piece = piece or PIECE
        self.step = read_step(raw, self.piece)     # bytes a read call
        self.read = 0                   # decompressed bytes read from raw
        #: (decompressed bytes, bytes of the file) after each read: progress interpolates
        self.marks = [(0, 0)]
        #: a stream error met while reading, raised once the records before it are out
        self.error = None
        #: dnaio's reader of the rest of the file, after the hand-over (its progress)
        self.rest_reader = None
        #: (records, bases): the first item is ``("head", bytes)``, the file's first
        #: records up to that many (or as many as first reach that many bases), for dnaio
        #: to read: the first batch then waits for no Numba (whose start, 0.3-0.7 s on the
        #: GPU machine, the graph's load would otherwise wait behind: s2g align reads the
        #: first batch first)
        self.head = head

    def _read_head(self):
        """(the head's bytes, the bytes read after them, end of file reached). FASTQ that
        dnaio reads has four lines a record, so the head ends after the 4k-th newline; at
        most :data:`HEAD_BYTES` (whole records: a larger first batch is read on by the
        pass)."""
        recs, bases = self.head
        data = bytearray()
        nls = []                                # newline offsets, piece by piece
        eof = False
        while True:
            nl = np.concatenate(nls) if nls else np.zeros(0, np.int64)
            k = min(recs, len(nl) // 4)
            if bases > 0 and k:
                seq = nl[1:4 * k:4] - nl[0:4 * k:4] - 1
                j = int(np.searchsorted(np.cumsum(seq), bases))
                if j < k:
                    k = recs = j + 1
            if k and (k >= recs or len(data) >= HEAD_BYTES):
                cut = int(nl[4 * k - 1]) + 1
                break
            if eof:                             # (a last record may lack its newline;
                cut = len(data) if self.error is None else (   # a stream error: whole
                    int(nl[4 * k - 1]) + 1 if k else 0)        # records only)
                break
            more = self._more()
            if more:
                nls.append(np.flatnonzero(np.frombuffer(more, np.uint8) == _NL) + len(data))
                data += more
            else:
                eof = True
        return bytes(data[:cut]), bytes(data[cut:]), eof

    def _more(self, into=None):
        """Read a piece (into the buffer ``into``: at most :attr:`step` bytes; else up
        to ``piece`` bytes, returned), noting the file's position (:meth:`position`); a
        stream error is kept (:attr:`error`) and ends the reading as the file's end would,
        so the records before it come out first."""
        if into is not None:
            try:
                k = self.raw.readinto(into[:self.step])
            except _STREAM_ERRORS as exc:
                self.error = exc
                return 0
            self._mark(k)
            return k
        got = bytearray()
        while len(got) < self.piece and self.error is None:
            try:
                more = self.raw.read(min(self.step, self.piece - len(got)))
            except _STREAM_ERRORS as exc:
                self.error = exc
                break
            if not more:
                break
            got += more
            self._mark(len(more))
        return bytes(got)

    def _mark(self, k):
        if k:
            self.read += k
            p = position(self.raw)
            if p is not None:
                self.marks.append((self.read, p))

    def position(self, offset):
        """Bytes of the file read to reach decompressed ``offset``: interpolated between
        the positions after the reads around it (never decreasing), or None (not a
        regular file)."""
        if position(self.raw) is None:
            return None
        marks = self.marks
        lo = min(bisect_left(marks, offset, key=itemgetter(0)), len(marks) - 1)
        d1, p1 = marks[lo]                      # (the first mark at or past offset)
        if lo == 0 or d1 <= offset:
            return p1
        d0, p0 = marks[lo - 1]
        return p0 + (p1 - p0) * (offset - d0) // max(d1 - d0, 1)

    def __iter__(self):
        buf = np.empty(self.piece, np.uint8)
        have = 0
        eof = False
        at = 0                          # decompressed offset of buf[0]
        if self.head[0] > 0:
            head, rest, eof = self._read_head()
            if head:
                yield "head", head
            at = len(head)
            if len(rest) > len(buf):
                buf = np.empty(len(rest) + self.piece, np.uint8)
            buf[:len(rest)] = np.frombuffer(rest, np.uint8)
            have = len(rest)
        while True:
            if not eof and have < len(buf) and self.error is None:
                got = self._more(memoryview(buf)[have:])
                if not got:
                    eof = True
                else:
                    have += got
                    if have < len(buf):
                        continue                # fill the piece before parsing
            if have == 0 and eof:
                if self.error is not None:
                    raise self.error
                return
            cap = have // 4 + 1                 # a record is at least 4 bytes
            codes = np.empty(have, np.uint8)
            quals = np.empty(have if self.want_quals else 0, np.uint8)
            lens = np.empty(cap, np.int64)
            names = np.empty(have, np.uint8)
            r, used, m, plain = _parse(buf, have, eof and self.error is None, self.table,
                                       self.bad, codes, lens, names, quals)
            if r:
                c = int(lens[:r].sum())
                blk = Block(names[:m - 1].tobytes().decode("ascii").split("\n"),
                            codes[:c].copy(), lens[:r].copy(),
                            quals[:c].copy() if self.want_quals else None)
                blk.span = (at, at + used)
                yield blk
            if self.error is not None and (plain or used == have):
                raise self.error                # (after the whole records before it)
            if not plain:
                yield "rest", _Chained(buf[used:have].tobytes(), self.raw, self.error)
                return
            if used == 0 and not eof:           # one record longer than the piece
                buf = np.concatenate([buf[:have], np.empty(len(buf), np.uint8)])
                continue
            buf[:have - used] = buf[used:have]
            have -= used
            at += used
            if eof and have == 0:
                return


def assemble(src, batch_size, max_bases, qualities, make, grow_to=0):
    """Batches (``make(names, codes, offsets, first)``: s2g.reads.ReadBatch) of the blocks
    ``src``: ``batch_size`` reads each, or (``max_bases`` > 0) as many as first reach that
    many bases (at least one); the last, shorter one has ``is_last`` set. ``grow_to`` >
    ``batch_size``: each batch after the first may hold twice the reads of the one before,
    up to ``grow_to``."""
    pending, n, first = [], 0, 0
    for blk in src:
        if not len(blk.names):
            continue
        pending.append(blk)
        n += len(blk.names)
        while True:
            k = _batch_end(pending, n, batch_size, max_bases)
            if k is None:
                break
            yield _take(pending, k, first, qualities, make)
            n -= k
            first += k
            batch_size = max(batch_size, min(grow_to, 2 * batch_size))
    while n:
        k = _batch_end(pending, n, batch_size, max_bases) or n
        batch = _take(pending, k, first, qualities, make)
        n -= k
        first += k
        if n == 0:
            batch.is_last = True
        yield batch
        batch_size = max(batch_size, min(grow_to, 2 * batch_size))


def _batch_end(pending, n, batch_size, max_bases):
    """Reads of the next batch among the ``n`` of ``pending``, or None while they are
    too few to tell."""
    if n == 0:
        return None
    if max_bases > 0:
        lens = np.concatenate([b.lens for b in pending])[:batch_size]
        k = int(np.searchsorted(np.cumsum(lens), max_bases))  # the first reaching it
        if k < len(lens):
            return k + 1
    return batch_size if n >= batch_size else None


def _take(pending, k, first, qualities, make):
    """The first ``k`` reads of the blocks ``pending`` as a batch (taken off)."""
    names, codes, lens, quals, unnamed, end = [], [], [], [], 0, None
    while k:
        b = pending[0]
        m = len(b.names)
        cut = min(k, m)
        c = int(b.lens[:cut].sum())
        names.extend(b.names[:cut] if cut < m else b.names)
        codes.append(b.codes[:c])
        lens.append(b.lens[:cut])
        quals.append(None if b.quals is None else b.quals[:c])
        at = getattr(b, "unnamed_at", ())
        unnamed += sum(1 for i in at if i < cut)
        end = None
        if cut == m:
            pending.pop(0)
            if b.span is not None:
                end = b.span[1]
        else:
            rest = Block(b.names[cut:], b.codes[c:], b.lens[cut:],
                         None if b.quals is None else b.quals[c:])
            rest.unnamed_at = [i - cut for i in at if i >= cut]
            if b.span is not None:          # (its records' bytes taken as even)
                end = b.span[0] + (b.span[1] - b.span[0]) * cut // m
                rest.span = (end, b.span[1])
            pending[0] = rest
        k -= cut
    lens = np.concatenate(lens)
    offsets = np.zeros(len(lens) + 1, np.int64)
    np.cumsum(lens, out=offsets[1:])
    codes = codes[0] if len(codes) == 1 else np.concatenate(codes)
    batch = make(names, codes, offsets, first)
    if qualities and all(q is not None for q in quals):
        batch.quals = quals[0] if len(quals) == 1 else np.concatenate(quals)
    batch.unnamed = unnamed
    batch.span_end = end            # decompressed bytes to its end (plain FASTQ) or None
    return batch
