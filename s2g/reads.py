"""FASTA/FASTQ(.gz) -> ReadBatch (uint8 base codes, offsets, names).

Parsing is dnaio's (the reader behind cutadapt): FASTA and FASTQ detected from the
content, gzip/bzip2/xz through xopen, multi-line FASTA, and it is several times faster
than a Python loop. One exception: plain four-line FASTQ in a regular file is parsed by
s2g's own Numba pass (:mod:`s2g.fastq_blocks`, knob ``fast_fastq``), which hands over to
dnaio at the first record that is not plain, so that the reads and the errors are dnaio's;
the first batch's records are dnaio's too (they wait for no Numba start).

Bases: ACGT (either case; U reads as T) keep their codes; the other IUPAC codes
(N R Y S W K M B D H V) become N, which scores as a mismatch against everything.
Any other character stops the run with the read name and position. Empty reads are
kept (they get a GAF no-hit line); duplicate names are kept as they are; a read with
an empty name is named ``read<record number>`` (1-based), with a warning.

Paired-end reads (:func:`iter_pair_batches`, :func:`read_pairs`): two files or one
interleaved file, read into batches that hold both mates of each pair side by side
(mate 1 at an even index, its mate 2 next); mates are checked to match by
:func:`pair_base_name` and the two files to end together, with one-line errors.
"""
from __future__ import annotations

import os
import stat
import warnings
from dataclasses import dataclass

import numpy as np

from .config import settings
from .errors import ReadError
from .fastq_blocks import Block, Pieces, assemble, open_raw, plain_fastq, position
from .graph import _STREAM_ERRORS, IUPAC  # (what a damaged compressed input raises)
from .graph_core import BASE_CODE


_VALID = np.zeros(256, bool)
for _c in IUPAC.decode():           # the graph's alphabet too (graph.py)
    _VALID[ord(_c)] = _VALID[ord(_c.lower())] = True
#: byte -> its base code (BASE_CODE), or _BAD where the byte is not IUPAC: one look-up
#: both encodes a batch and finds its bad characters
_BAD = 255
_CODE_OR_BAD = np.where(_VALID, BASE_CODE, _BAD).astype(np.uint8)
_CODE_TABLE = _CODE_OR_BAD.tobytes()       # (for bytes.translate)
_BAD_BYTE = bytes([_BAD])


@dataclass
class ReadBatch:
    """Reads as one flat code array: read r is ``codes_flat[offsets[r]:offsets[r+1]]``."""

    names: list
    codes_flat: np.ndarray   # uint8
    offsets: np.ndarray      # int64[n+1]
    first_index: int = 0     # position of read 0 in the whole input (streaming)
    #: FASTQ base qualities as ASCII bytes aligned with ``codes_flat``, when the reader
    #: was asked for them (SAM/BAM output) and every read has them; else None
    quals: np.ndarray | None = None

    @property
    def n_reads(self) -> int:
        return len(self.names)

    def codes(self, r: int) -> np.ndarray:
        return self.codes_flat[self.offsets[r]:self.offsets[r + 1]]

    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    @property
    def max_len(self) -> int:
        return int(self.lengths().max(initial=0))

    @property
    def total_bases(self) -> int:
        return int(self.offsets[-1])

    def subset(self, idx) -> "ReadBatch":
        idx = np.asarray(idx, np.int64)
        out = ReadBatch.from_codes([self.names[i] for i in idx], [self.codes(i) for i in idx])
        if self.quals is not None:
            q = [self.quals[self.offsets[i]:self.offsets[i + 1]] for i in idx]
            out.quals = np.concatenate(q).astype(np.uint8) if q else np.zeros(0, np.uint8)
        return out

    def part(self, a: int, b: int) -> "ReadBatch":
        """Reads ``a:b`` as a batch of their own (views of this one's arrays; its
        ``input_pos`` this one's where ``b`` is its end, else None)."""
        o = self.offsets
        out = ReadBatch(self.names[a:b], self.codes_flat[o[a]:o[b]], o[a:b + 1] - o[a],
                        self.first_index + a,
                        None if self.quals is None else self.quals[o[a]:o[b]])
        out.input_pos = getattr(self, "input_pos", None) if b == self.n_reads else None
        return out

    def with_qualities(self, quals) -> "ReadBatch":
        """This batch with ``quals`` (one str/bytes/None per read: FASTQ's quality lines)
        as :attr:`quals` when every read has them (FASTA: none, left None)."""
        if len(quals) and all(q is not None for q in quals):
            raw = b"".join(q.encode("ascii", "replace") if isinstance(q, str) else bytes(q)
                           for q in quals)
            if len(raw) == len(self.codes_flat):
                self.quals = np.frombuffer(raw, np.uint8)
        return self

    @classmethod
    def from_codes(cls, names, code_arrays, first_index=0) -> "ReadBatch":
        lens = np.fromiter((len(c) for c in code_arrays), np.int64, len(code_arrays))
        offsets = np.zeros(len(lens) + 1, np.int64)
        np.cumsum(lens, out=offsets[1:])
        flat = np.concatenate(code_arrays).astype(np.uint8) if len(code_arrays) else np.zeros(0, np.uint8)
        return cls(list(names), flat, offsets, first_index)

    @classmethod
    def from_sequences(cls, names, seqs, first_index=0, source="<input>") -> "ReadBatch":
        """Encode sequences (str or bytes), checking every character (see module doc).
        ASCII str (what dnaio gives) is joined and encoded once, not read by read: the
        reader thread holds the GIL for it (~1 us a read, 0.9 s of a 1,000,000-read GPU
        run's parse thread on the GPU machine's host, session 52's py-spy)."""
        if not isinstance(seqs, (list, tuple)):
            seqs = list(seqs)           # a generator: joined below and maybe read again
        buf = _joined_ascii(seqs)
        if buf is not None:
            lens = np.fromiter(map(len, seqs), np.int64, len(seqs))
        else:
            raw = [s.encode() if isinstance(s, str) else bytes(s) for s in seqs]
            lens = np.fromiter((len(s) for s in raw), np.int64, len(raw))
            buf = b"".join(raw)
        offsets = np.zeros(len(lens) + 1, np.int64)
        np.cumsum(lens, out=offsets[1:])
        coded = bytearray(buf).translate(_CODE_TABLE)  # translate and find: C loops, ~3x
        p = coded.find(_BAD_BYTE)               # numpy's table look-up and max
        codes = np.frombuffer(coded, np.uint8)  # (writable: a bytearray's)
        if p >= 0:
            r = int(np.searchsorted(offsets, p, side="right") - 1)
            ch = chr(buf[p])
            err = ReadError(f"{source}: read {names[r]!r} (record {first_index + r + 1}) has "
                            f"invalid character {ch!r} at position {p - offsets[r] + 1}; reads "
                            "must be IUPAC nucleotides")
            err.s2g_read = r                    # (the batch's reads before it are good)
            raise err
        return cls(list(names), codes, offsets, first_index)


def _joined_ascii(seqs):
    """``seqs`` (a list of str) joined into one bytes object, one byte a character, when
    every one is an ASCII str; else None (bytes among them, or a non-ASCII character,
    whose UTF-8 bytes the caller counts read by read)."""
    try:
        joined = "".join(seqs)
    except TypeError:                   # bytes (or other objects) among them
        return None
    return joined.encode("ascii") if joined.isascii() else None


def _label(path) -> str:
    return "<stdin>" if path == "-" else path


#: how a read without a name is named inside a part of the input (the client, which
#: knows the part's first record number, replaces the whole mark by ``read<number>``)
_MARK_HEAD = "s2g-unnamed-"
UNNAMED_MARK = "\x00" + _MARK_HEAD + "{}:{}\x00"


def unnamed_mark(k: int, token: str = "") -> str:
    """The stand-in name of record ``k`` (1-based, in its part of the input); ``token``:
    the cut's random token (:class:`~s2g.read_ranges.InputRange`), so that no real name
    (dnaio keeps NUL bytes in names) can be taken for one."""
    return UNNAMED_MARK.format(token, k)


def unnamed_marks(token: str, binary: bool = False):
    """The compiled pattern of :func:`unnamed_mark` with ``token`` (group 1: the record
    number), matching the mark as it is or as ``repr`` writes it; of bytes if ``binary``."""
    import re
    nul = r"(?:\x00|\\x00)"
    pattern = nul + re.escape(_MARK_HEAD + token + ":") + r"(\d+)" + nul
    return re.compile(pattern.encode() if binary else pattern)


def name_unnamed(text: bytes, first: int, token: str, seen: set | None = None) -> bytes:
    """``text`` with each unnamed read's mark (:func:`unnamed_mark`, the cut's ``token``)
    replaced by ``read<record number>`` (the part's records numbered from ``first`` + 1),
    as one process names it (``--dask``'s client, ``processes``' parent); ``seen`` (a
    set): gains the record numbers met (a read's secondary lines carry its mark too)."""
    if _MARK_HEAD.encode() not in text:
        return text

    def name(m):
        if seen is not None:
            seen.add(m.group(1))
        return b"read%d" % (first + int(m.group(1)))
    return unnamed_marks(token, binary=True).sub(name, text)


def _open(path, part=None):
    """dnaio reader for ``path`` (``-`` = standard input; pipes, FIFOs and process
    substitution work: nothing here looks at the file size, and xopen sniffs the
    compression from the first bytes, not from the name); ``part``: of its
    :class:`~s2g.read_ranges.InputRange` ``part`` only."""
    import dnaio

    if path != "-":
        if not os.path.exists(path):
            raise ReadError(f"{path}: no such file")
        if os.path.isdir(path):
            raise ReadError(f"{path}: is a directory, expected FASTA or FASTQ")
    label = _label(path) if part is None else part.label()
    try:
        if part is not None:
            from .read_ranges import open_range
            raw = open_range(part)
            try:
                return dnaio.open(raw)
            except BaseException:
                raw.close()
                raise
        return dnaio.open(path)
    except dnaio.exceptions.UnknownFileFormat as exc:
        raise ReadError(f"{label}: not a FASTA/FASTQ file ({_one_line(exc)})") from None
    except dnaio.exceptions.FileFormatError as exc:
        _raise_non_ascii(path, exc, 0)
        raise ReadError(f"{label}: malformed first record ({_one_line(exc)})") from None
    except _STREAM_ERRORS as exc:
        raise ReadError(f"{label}: cannot read: {_stream_error(exc)}") from None


def _raise_non_ascii(path, exc, n_read: int):
    """dnaio refuses a non-ASCII byte without saying where ("at unknown line"; FASTQ
    checks a whole buffer at once, so not even the record is known): find the first one
    and raise a ReadError naming its line, record and character. ``n_read``: records
    read so far (all that can be said about standard input, which cannot be re-read)."""
    if not isinstance(exc, UnicodeDecodeError) and "ASCII" not in str(exc):
        return
    if path == "-" or not os.path.isfile(path):
        raise ReadError(f"{_label(path)}: a non-ASCII character in record {n_read + 1} or a "
                        f"later one ({'standard input' if path == '-' else 'a pipe'} cannot "
                        "be read again to say which line); "
                        "FASTA/FASTQ input must be ASCII (read names, bases and qualities)"
                        ) from None
    where = _find_non_ascii(path)
    if where is None:           # not found after all: dnaio's own message, as it is
        return
    lineno, record, part, what, col = where
    raise ReadError(f"{_label(path)}: line {lineno} (the {part} of record {record}) has "
                    f"{what} at column {col}; FASTA/FASTQ input must be ASCII (read names, "
                    "bases and qualities)") from None


def _find_non_ascii(path):
    """(line, record, part, what, column) of the first non-ASCII byte of a
    FASTA/FASTQ file (decompressed as dnaio reads it), or None."""
    from xopen import xopen

    fastq = None
    headers = 0                 # FASTA: '>' lines so far
    try:
        with xopen(path, "rb") as fh:
            for lineno, line in enumerate(fh, 1):
                if fastq is None and line.strip():
                    fastq = line.startswith(b"@")
                if not fastq and line.startswith(b">"):
                    headers += 1
                if line.isascii():
                    continue
                col = next(k for k, b in enumerate(line) if b >= 0x80)
                ch = line[col:col + 4].decode("utf-8", "replace")[0]
                what = (f"the non-ASCII character {ch!r} (U+{ord(ch):04X})" if ch != "\ufffd"
                        else f"the byte 0x{line[col]:02x} (not ASCII, not UTF-8)")
                if fastq:
                    part = ("header line", "sequence", "'+' line",
                            "quality line")[(lineno - 1) % 4]
                    return lineno, (lineno - 1) // 4 + 1, part, what, col + 1
                part = "header line" if line.startswith(b">") else "sequence"
                return lineno, max(headers, 1), part, what, col + 1
    except (*_STREAM_ERRORS, ValueError):
        return None
    return None


def _after(n: int) -> str:
    return f"after record {n}" if n else "in the first record"


def _stream_error(exc) -> str:
    if isinstance(exc, EOFError):
        return "truncated compressed file (" + _one_line(exc) + ")"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return _one_line(exc)


def _one_line(exc) -> str:
    s = str(exc).strip().splitlines()
    return s[0] if s else type(exc).__name__


def iter_read_batches(path: str, batch_size: int = 65536, qualities: bool = False,
                      max_bases: int = 0, part=None, grow_to: int = 0):
    """Yield :class:`ReadBatch` chunks of at most ``batch_size`` reads, in input order
    (``qualities``: keep FASTQ base qualities, :attr:`ReadBatch.quals`). ``max_bases``
    (0: no bound): a batch also ends once its reads reach that many bases (always at least
    one read), so batches of long reads stay small enough for the pipeline's stages to
    overlap. The last batch has ``is_last`` set (True: the input ended inside it); each
    batch's ``unnamed`` counts its reads that had no name.
    ``part``: an :class:`~s2g.read_ranges.InputRange` of ``path``, whose records are read
    instead of the whole file's; its batches count ``first_index`` from its first record,
    and a read without a name is named :func:`unnamed_mark` of its record number in the
    part (the client, which knows where the part starts, writes the name), unwarned.
    ``grow_to`` > ``batch_size``: each batch after the first may hold twice the reads of the
    one before, up to ``grow_to`` (a small first batch starts the pipeline soon, larger
    ones cost less a read: knob ``batch_grow``)."""
    import dnaio

    if batch_size < 1:
        raise ReadError("batch size must be >= 1")
    fh = _open(path, part)
    label = _label(path) if part is None else part.label()
    got = [0]                   # records read so far (error messages)
    unnamed = 0
    fast = None
    try:
        with fh:
            if part is None and _regular(path) and settings().fast_fastq and plain_fastq(fh):
                fh.close()                      # (dnaio said FASTQ; the bytes are read here)
                fast = Pieces(open_raw(path), _CODE_OR_BAD, _BAD, qualities,
                              head=(batch_size, max_bases))
            batches = assemble(_read_blocks(fh, fast, qualities, max_bases, part, label, got),
                               batch_size, max_bases, qualities, ReadBatch, grow_to)
            for batch in batches:
                if getattr(batch, "is_last", False):
                    batch.input_pos = input_size(path) if part is None else None
                elif part is None and batch.span_end is not None:
                    batch.input_pos = fast.position(batch.span_end)
                    batch.input_pos_exact = True    # (no read-ahead in it: s2g.plan)
                elif part is None:      # dnaio's reader (of the rest, after a hand-over)
                    batch.input_pos = input_position(
                        fh if fast is None or fast.rest_reader is None else fast.rest_reader)
                unnamed += batch.unnamed
                yield batch
    except (dnaio.exceptions.FileFormatError, UnicodeDecodeError) as exc:
        # (UnicodeDecodeError: FASTA is read as text, and a byte that is not UTF-8...)
        _raise_non_ascii(path, exc, got[0])
        raise ReadError(f"{label}: malformed input {_after(got[0])} "
                        f"({_one_line(exc)})") from None
    except _STREAM_ERRORS as exc:
        raise ReadError(f"{label}: cannot read {_after(got[0])}: "
                        f"{_stream_error(exc)}") from None
    finally:
        if fast is not None:            # (also where the batches were left unread)
            fast.raw.close()
            if fast.rest_reader is not None:
                fast.rest_reader.close()
    if unnamed and part is None:
        warnings.warn(f"{_label(path)}: {unnamed} read(s) without a name, written as "
                      "read<record number>", stacklevel=2)


def _regular(path) -> bool:
    """Whether ``path`` is a regular file (opened a second time, it reads the same)."""
    try:
        return path != "-" and stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


#: records of a block read by dnaio (a batch is made of blocks)
_DNAIO_BLOCK = 1024


def _read_blocks(fh, fast, qualities, max_bases, part, label, got):
    """:class:`~s2g.fastq_blocks.Block` objects of the reads, in order: of the binary file
    ``fast`` (:class:`s2g.fastq_blocks.Pieces`) while its records are plain FASTQ, of the
    dnaio reader ``fh`` (or of dnaio on the rest of ``fast``) otherwise. ``got[0]``
    counts the records read (what an error message says)."""
    import dnaio
    line0 = 0
    if fast is not None:
        rest = None
        for item in fast:
            if isinstance(item, Block):
                got[0] += len(item.names)
                yield item
            elif item[0] == "head":         # the first batch's records, by dnaio
                yield from _head_blocks(item[1], qualities, max_bases, label, got)
            else:                           # a record that is not plain: dnaio reads on
                rest = item[1]
                line0 = 4 * got[0]          # (four lines a record before it)
        if rest is None:
            return
    try:
        if fast is not None:
            fh = fast.rest_reader = dnaio.FastqReader(rest)
        with fh:
            yield from _dnaio_blocks(fh, qualities, max_bases, part, label, got)
    except dnaio.exceptions.FileFormatError as exc:
        if exc.line is not None:            # lines of the whole file, not of the rest
            exc.line += line0
        raise


def _head_blocks(head, qualities, max_bases, label, got):
    """Blocks of the bytes ``head`` (the file's first records) read by dnaio, each with
    its share of the bytes as its ``span`` (progress)."""
    import io
    import dnaio
    nl = head.count(b"\n")                    # (4 a record: the head's records, about)
    total = max(1, (nl + 3) // 4)
    done = 0
    with dnaio.FastqReader(io.BytesIO(head)) as fh:
        for b in _dnaio_blocks(fh, qualities, max_bases, None, label, got):
            end = min(total, done + len(b.names))
            b.span = (len(head) * done // total, len(head) * end // total)
            done = end
            yield b


def _dnaio_blocks(fh, qualities, max_bases, part, label, got):
    """Blocks of at most :data:`_DNAIO_BLOCK` records of the dnaio reader ``fh`` (and at
    most about ``max_bases`` bases), read record by record: FASTA, and FASTQ that is not
    plain."""
    names, seqs, unnamed_at, bases = [], [], [], 0
    quals = [] if qualities else None
    first = got[0]
    recs = iter(fh)
    while True:
        try:
            rec = next(recs, None)
        except Exception:
            if names:           # the records before the bad one first (batches, and an
                yield from _block(names, seqs, quals, first, label, unnamed_at)  # earlier
            raise                                                  # bad base's error)
        if rec is None:
            break
        name = rec.name.split(None, 1)
        if not name:            # GAF needs a name: the 1-based record number stands in
            k = got[0] + 1
            unnamed_at.append(len(names))
            name = [f"read{k}" if part is None else unnamed_mark(k, part.token)]
        names.append(name[0])
        seqs.append(rec.sequence)
        bases += len(rec.sequence)
        got[0] += 1
        if quals is not None:
            quals.append(rec.qualities)
        if len(names) == _DNAIO_BLOCK or 0 < max_bases <= bases:
            yield from _block(names, seqs, quals, first, label, unnamed_at)
            names, seqs, unnamed_at, bases = [], [], [], 0
            quals = [] if qualities else None
            first = got[0]
    if names:
        yield from _block(names, seqs, quals, first, label, unnamed_at)


def _block(names, seqs, quals, first, label, unnamed_at):
    """The block of these records; where one has a character that is not a base, the
    block of those before it, then the error (so the earliest bad record's error is the
    one raised, wherever blocks begin)."""
    try:
        b = ReadBatch.from_sequences(names, seqs, first, label)
    except ReadError as exc:
        r = getattr(exc, "s2g_read", 0)
        if r:
            yield from _block(names[:r], seqs[:r], None if quals is None else quals[:r],
                              first, label, [i for i in unnamed_at if i < r])
        raise
    if quals is not None:
        b.with_qualities(quals)
    out = Block(b.names, b.codes_flat, np.diff(b.offsets), b.quals)
    out.unnamed_at = unnamed_at
    yield out


def ramp_batches(batches, steps: int, ends: str = "both"):
    """``batches`` (:func:`iter_read_batches`': all of one size but the last) with the first
    cut into pieces of 1/2^steps, 1/2^steps, 1/2^(steps-1), ..., 1/2 of it, and the last
    into halves (1/2, 1/4, ...) down to the same smallest piece; where the last batch is
    smaller than two such pieces, the one before it is cut so instead (sizes even: pairs
    stay whole). The overlapped stages (:mod:`s2g.pipeline`) start on a small piece
    rather than wait for a whole batch to be seeded, and the stages after alignment end
    soon after the last piece is aligned: the pipeline's fill and drain shrink, its
    steady state is the same. Every read's alignment is its own, so the output is the
    same (tested). Each batch is held until the next one is read (a batch smaller than
    the first is the last; the reader is ahead of the stages). ``ends``: "both", "first"
    or "last" (which of the two are cut)."""
    steps = max(0, int(steps))
    it = iter(batches)
    cur = next(it, None)
    if cur is None:
        return
    if not steps:
        yield cur
        yield from it
        return
    size = cur.n_reads
    smallest = max(2, size >> steps)
    # the first batch's pieces at once (not held for the next batch's reading)
    if ends in ("both", "first"):
        yield from _cut(cur, [size >> (steps - k) for k in range(steps)], first=True)
    else:
        yield cur
    cur = next(it, None)
    if ends == "first":
        while cur is not None:
            yield cur
            cur = next(it, None)
    while cur is not None:
        nxt = next(it, None)
        if nxt is None or (nxt.n_reads < 2 * smallest and nxt.n_reads < size):
            yield from _cut(cur, _halves(cur.n_reads, smallest))   # the tail's first part
            if nxt is not None:
                yield nxt
                nxt = next(it, None)         # (None: a batch smaller than the first ends it)
        else:
            yield cur
        cur = nxt


def _halves(n, smallest):
    """Sizes 1/2, 1/4, ... of ``n`` while each is at least ``smallest``."""
    sizes, left = [], n
    while left // 2 >= smallest:
        sizes.append(left // 2)
        left -= left // 2
    return sizes


def _cut(batch, sizes, first=False):
    """``batch`` in pieces of ``sizes`` (each made even; ``first``: the ramp's first
    piece twice, the rest doubling), the remainder last; as it is when a piece would be
    empty."""
    sizes = [s & ~1 for s in sizes]
    if first and sizes:
        sizes = [sizes[0]] + sizes[:-1] if len(sizes) > 1 else sizes
    if not sizes or min(sizes) < 2 or sum(sizes) >= batch.n_reads:
        yield batch
        return
    a = 0
    for b in [*sizes, batch.n_reads - sum(sizes)]:
        piece = batch.part(a, a + b)
        if first:                   # (the stages' buffers sized for the whole batches)
            piece.ramp_scale = batch.n_reads / b
        yield piece
        a += b


def input_size(path):
    """Bytes of the reads file ``path`` when it is a regular file (of a compressed one,
    the compressed bytes, as :func:`input_position` counts them), else None (standard
    input, a pipe, a FIFO): the total of the progress bar."""
    if path == "-":
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) and st.st_size > 0 else None


def input_position(reader):
    """Bytes of its file the dnaio ``reader`` has read so far (of a compressed file, the
    compressed bytes; a little ahead of the records parsed: its buffers), or None where
    the file is not a regular one (a pipe) or the reader does not tell. Set on each batch
    :func:`iter_read_batches` yields as ``input_pos``."""
    return position(getattr(reader, "_file", None))    # (a compressed one's: the raw's)


def read_reads(path: str) -> ReadBatch:
    """All reads of a FASTA/FASTQ(.gz) file in one batch."""
    batches = list(iter_read_batches(path, batch_size=1 << 62))
    if not batches:
        return ReadBatch.from_codes([], [])
    return batches[0]


# ------------------------------------------------------------------ paired-end reads

def pair_base_name(name: str) -> str:
    """The name two mates share: the first word of ``name`` without a trailing ``/1`` or
    ``/2`` (``pair7/1 1:N:0`` -> ``pair7``). Unlike dnaio's ``is_mate``, a trailing digit
    alone is kept: ``read1`` and ``read2`` are two reads, not mates."""
    w = _first_word(name)
    return w[:-2] if w.endswith(("/1", "/2")) else w


def _records(path, fh, counter):
    """The records of the dnaio reader ``fh`` (closed at the end), a parse or stream
    error raised as a one-line ReadError naming ``path`` and the record;
    ``counter[0]``: the records yielded so far."""
    import dnaio

    try:
        with fh:
            for rec in fh:
                yield rec
                counter[0] += 1
    except (dnaio.exceptions.FileFormatError, UnicodeDecodeError) as exc:
        _raise_non_ascii(path, exc, counter[0])
        raise ReadError(f"{_label(path)}: malformed input {_after(counter[0])} "
                        f"({_one_line(exc)})") from None
    except _STREAM_ERRORS as exc:
        raise ReadError(f"{_label(path)}: cannot read {_after(counter[0])}: "
                        f"{_stream_error(exc)}") from None


def _first_word(name: str) -> str:
    w = name.split(None, 1)
    return w[0] if w else ""


def _mate_names(rec1, rec2, pair: int, where1: str, where2: str):
    """The two mates' names (first words), or a ReadError where they do not belong
    together. ``pair``: 1-based pair number; ``where1``/``where2``: 'record N of FILE'."""
    n1, n2 = _first_word(rec1.name), _first_word(rec2.name)
    if pair_base_name(n1) != pair_base_name(n2):
        raise ReadError(f"mate names of pair {pair} do not match: {n1!r} ({where1}) and "
                        f"{n2!r} ({where2}); mates must have the same name up to a "
                        "trailing /1 and /2")
    if n1.endswith("/2") and n2.endswith("/1"):
        raise ReadError(f"pair {pair}: mate 1 is named {n1!r} ({where1}) and mate 2 {n2!r} "
                        f"({where2}): the mates are swapped (give file 1 first)")
    if not n1:                  # GAF needs a name: the pair number stands in
        return f"read{pair}/1", f"read{pair}/2", True
    return n1, n2, False


def _interleave(b1: ReadBatch, b2: ReadBatch, first_index: int) -> ReadBatch:
    """One batch of ``b1``'s and ``b2``'s reads, alternating (b1[0], b2[0], b1[1], ...)."""
    n = b1.n_reads
    lens = np.empty(2 * n, np.int64)
    lens[0::2], lens[1::2] = b1.lengths(), b2.lengths()
    offsets = np.zeros(2 * n + 1, np.int64)
    np.cumsum(lens, out=offsets[1:])
    src = np.empty(2 * n, np.int64)            # where each output read starts in `both`
    src[0::2], src[1::2] = b1.offsets[:-1], b2.offsets[:-1] + b1.total_bases
    both = np.concatenate([b1.codes_flat, b2.codes_flat])
    idx = np.repeat(src - offsets[:-1], lens) + np.arange(offsets[-1])
    names = [None] * (2 * n)
    names[0::2], names[1::2] = b1.names, b2.names
    out = ReadBatch(names, both[idx], offsets, first_index)
    if b1.quals is not None and b2.quals is not None:
        out.quals = np.concatenate([b1.quals, b2.quals])[idx]
    return out


def _pair_records(path1, path2, interleaved):
    """(record 1, record 2, where 1, where 2) per pair, checked for count (never a read
    dropped); and the dnaio reader whose position tracks progress (file 1's)."""
    if interleaved:
        n = [0]
        fh = _open(path1)
        recs = _records(path1, fh, n)

        def gen():
            try:
                for a in recs:
                    b = next(recs, None)
                    if b is None:
                        raise ReadError(
                            f"{_label(path1)}: interleaved paired input has an odd number of "
                            f"records ({n[0]}): the last read {_first_word(a.name)!r} "
                            f"(record {n[0]}) has no mate")
                    yield (a, b, f"record {n[0]} of {_label(path1)}",
                           f"record {n[0] + 1} of {_label(path1)}")
            finally:
                recs.close()
                fh.close()
        return gen(), fh

    n1, n2 = [0], [0]
    fh1 = _open(path1)
    try:
        fh2 = _open(path2)
    except ReadError:
        fh1.close()
        raise
    recs1, recs2 = _records(path1, fh1, n1), _records(path2, fh2, n2)
    l1, l2 = _label(path1), _label(path2)

    def ended(short, n, long, rec):
        return ReadError(f"paired files differ in length: {short} ended after {n} records, "
                         f"{long} goes on (record {n + 1}: {_first_word(rec.name)!r}); "
                         "both files must hold the same number of reads")

    def gen():
        try:
            for a in recs1:
                b = next(recs2, None)
                if b is None:
                    raise ended(l2, n2[0], l1, a)
                yield a, b, f"record {n1[0] + 1} of {l1}", f"record {n2[0] + 1} of {l2}"
            b = next(recs2, None)
            if b is not None:
                raise ended(l1, n1[0], l2, b)
        finally:
            recs1.close()
            recs2.close()
            fh1.close()
            fh2.close()
    return gen(), fh1


def _same_file(a, b) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def iter_pair_batches(path1: str, path2: str | None = None, interleaved: bool = False,
                      batch_size: int = 65536, qualities: bool = False):
    """Paired-end reads as :class:`ReadBatch` chunks, mates interleaved: mate 1 of pair k
    at index 2k, mate 2 at 2k+1 (``first_index`` counts reads, so it is even).

    Input: two files (``path1`` mate 1s, ``path2`` mate 2s, in the same order), or one
    ``interleaved`` file (mate 1, mate 2, mate 1, ...); FASTA or FASTQ, compressed or
    not, ``-`` for standard input (one of the files at most), as :func:`iter_read_batches`
    reads them. ``batch_size`` counts reads: at most ``batch_size`` (rounded down to
    even, at least 2) per batch. Names are kept as written (first word): ``x/1`` stays
    ``x/1``; two mates must have the same :func:`pair_base_name`, else a ReadError naming
    the pair, the records and both names; so does a file that ends before the other (or
    an interleaved one with an odd number of records): no read is dropped silently.
    Empty input yields nothing. Pairs whose mates both have no name are named
    ``read<pair number>/1`` and ``/2``, with a warning. Each batch's ``input_pos`` is the
    position in file 1 (the progress total: ``input_size(path1)``). ``qualities``: keep
    FASTQ base qualities (:attr:`ReadBatch.quals`)."""
    if batch_size < 2:
        raise ReadError("batch size must be >= 2 for paired reads (a batch holds both "
                        "mates of each pair)")
    if interleaved and path2 is not None:
        raise ReadError("give two paired files or one interleaved file, not both")
    if not interleaved:
        if path2 is None:
            raise ReadError("paired reads need a second file (mate 2s), or an interleaved file")
        if path1 == "-" and path2 == "-":
            raise ReadError("only one of the paired files can be standard input (-)")
        if path1 == path2 or (path1 != "-" and path2 != "-" and _same_file(path1, path2)):
            raise ReadError(f"{path1} and {path2} are the same file: give the mate 1 and "
                            "mate 2 files (or --interleaved for one file holding both)")
    per = batch_size // 2
    pairs, fh1 = _pair_records(path1, path2, interleaved)
    src1 = _label(path1)
    src2 = src1 if interleaved else _label(path2)
    names1, names2, seqs1, seqs2, q1, q2 = [], [], [], [], [], []
    done, unnamed = 0, 0                 # pairs yielded before this batch

    def make():
        if interleaved:                  # record numbers of the one file are exact
            names = [n for ab in zip(names1, names2) for n in ab]
            seqs = [s for ab in zip(seqs1, seqs2) for s in ab]
            out = ReadBatch.from_sequences(names, seqs, 2 * done, src1)
            return out.with_qualities([q for ab in zip(q1, q2) for q in ab]) if qualities \
                else out
        b1 = ReadBatch.from_sequences(names1, seqs1, done, src1)
        b2 = ReadBatch.from_sequences(names2, seqs2, done, src2)
        if qualities:
            b1.with_qualities(q1)
            b2.with_qualities(q2)
        return _interleave(b1, b2, 2 * done)

    try:
        for a, b, w1, w2 in pairs:
            n1, n2, anon = _mate_names(a, b, done + len(names1) + 1, w1, w2)
            unnamed += anon
            names1.append(n1)
            names2.append(n2)
            seqs1.append(a.sequence)
            seqs2.append(b.sequence)
            if qualities:
                q1.append(a.qualities)
                q2.append(b.qualities)
            if len(names1) == per:
                batch = make()
                batch.input_pos = input_position(fh1)
                yield batch
                done += per
                names1, names2, seqs1, seqs2, q1, q2 = [], [], [], [], [], []
    finally:
        pairs.close()
    if names1:
        batch = make()
        batch.input_pos = input_size(path1)
        yield batch
    if unnamed:
        warnings.warn(f"{src1}: {unnamed} pair(s) without a name, written as "
                      "read<pair number>/1 and /2", stacklevel=2)


def read_pairs(path1: str, path2: str | None = None, interleaved: bool = False) -> ReadBatch:
    """All pairs of :func:`iter_pair_batches`' input in one batch (mates interleaved)."""
    batches = list(iter_pair_batches(path1, path2, interleaved, batch_size=1 << 62))
    if not batches:
        return ReadBatch.from_codes([], [])
    return batches[0]
