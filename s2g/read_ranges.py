"""A reads file cut into byte ranges of whole records, each read by its own worker.

``s2g align --dask`` (issue 44) sends workers ranges of the input instead of the reads
themselves where the file allows it: the client reads a few kilobytes around each cut,
never the records, and each worker parses its own range with the same reader as one
process (dnaio), so reading scales with the workers and nothing crosses the network but
the GAF text coming back.

Where a file can be cut:

* **plain FASTA/FASTQ** (a regular file): a cut moves forward to the next record start.
  FASTA: a line starting with ``>``. FASTQ (four lines a record, as dnaio reads it): a
  line starting with ``@`` whose next-but-one line starts with ``+``; a quality line
  may start with ``@`` too, but two lines after it comes a sequence line, which never
  starts with ``+``, so the rule has no exception.
* **BGZF** (``bgzip``'s blocked gzip, what samtools and htslib write; a file that starts
  with a BGZF block and ends with bgzip's empty EOF block): a cut moves to the next block
  start (the BGZF magic, checked by decompressing the block and its CRC), then to the
  next record start in the decompressed stream; a range is a pair of virtual offsets
  (block offset << 16 | offset in the block), as in BAM indexes.

Anything else (gzip that is not BGZF, bzip2, xz, standard input, a pipe, paired files)
cannot be cut without reading it all: :func:`split_input` returns None and the client
reads and sends the reads in chunks, as before.

A range owns the records that start inside it; ranges are contiguous and cover the
file, so every record is in exactly one range, in input order.
"""
from __future__ import annotations

import io
import os
import stat
import struct
import zlib
from dataclasses import dataclass

try:                                    # ISA-L's inflate (xopen's dependency): ~2x zlib's
    from isal import isal_zlib as _inflate_lib
except ImportError:  # pragma: no cover - isal comes with xopen
    _inflate_lib = zlib

#: the fixed bytes of a BGZF block header (gzip, deflate, FEXTRA, XLEN 6, subfield BC, 2)
_BGZF_MAGIC = b"\x1f\x8b\x08\x04"
_BGZF_SUB = b"BC\x02\x00"
#: the empty block bgzip writes last (the SAM/BAM specification's EOF marker)
_BGZF_EOF = bytes.fromhex("1f8b08040000000000ff0600424302001b0003000000000000000000")
#: bytes read at a time while looking for a record start, and the most looked through
#: for one (a record longer than that, or a file that is not FASTA/FASTQ: no cut there)
_PROBE, _MAX_SCAN = 1 << 16, 64 << 20


@dataclass(frozen=True)
class InputRange:
    """Records ``[start, end)`` of reads file ``path``: byte offsets of a plain file, BGZF
    virtual offsets where ``bgzf``. ``part``/``parts``: its place among the file's ranges;
    ``byte``: where it starts in the file as stored (for messages and progress)."""

    path: str
    start: int
    end: int
    bgzf: bool
    part: int = 0
    parts: int = 1
    byte: int = 0
    #: (size, mtime_ns) of the file when it was cut (a reader checks it: :func:`check`)
    stamp: tuple = ()
    #: random, one per cut: in the stand-in names of unnamed reads
    #: (:func:`s2g.reads.unnamed_mark`)
    token: str = ""

    def label(self) -> str:
        """How messages name the range: the file, and where the range starts in it (a
        reader's record and line numbers count from there, not from the file's start)."""
        if self.parts == 1:
            return self.path
        return (f"{self.path} (part {self.part + 1} of {self.parts}, from byte {self.byte:,}; "
                "records and lines counted from there)")


def file_kind(path) -> str | None:
    """``"plain"`` or ``"bgzf"`` for a regular reads file that can be cut, else None."""
    if path is None or path == "-":
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_size == 0:
        return None
    with open(path, "rb") as fh:
        head = fh.read(18)
    if head[:4] == _BGZF_MAGIC and head[12:16] == _BGZF_SUB:
        # bgzip ends its files with an empty block; without it the file may go on in plain
        # gzip members (`cat x.bgz y.gz`), which a part's reader cannot step through
        with open(path, "rb") as fh:
            fh.seek(max(0, st.st_size - len(_BGZF_EOF)))
            return "bgzf" if fh.read() == _BGZF_EOF else None
    if head[:2] in (b"\x1f\x8b", b"BZ", b"\xfd7") or head[:4] == b"\x28\xb5\x2f\xfd":
        return None                     # gzip (not BGZF), bzip2, xz, zstd: not cut
    # a first record at the first byte: dnaio sniffs a part's format from its first byte
    # (a whole file's from its name first), so leading blank lines are read whole
    return "plain" if head[:1] in (b"@", b">") else None


def split_input(path, parts: int, min_bytes: int = 1 << 20):
    """``path`` cut into at most ``parts`` :class:`InputRange` of whole records (at least
    ``min_bytes`` of the file each, so a small file is one range), or None where the file
    cannot be cut (see the module's docstring)."""
    kind = file_kind(path)
    if kind is None:
        return None
    st = os.stat(path)                  # one stat: the last range's end and the stamp
    size = st.st_size
    parts = max(1, min(int(parts), size // max(1, int(min_bytes))))
    with open(path, "rb") as fh:
        fastq = _is_fastq(fh, kind == "bgzf")
        named = _format_by_name(path)
        if fastq is None or (named is not None and named != ("fastq" if fastq else "fasta")):
            return None         # (the whole file's reader refuses it: let it say why)
        cuts = [0]
        for k in range(1, parts):
            pos = (size * k) // parts
            try:
                at = (_bgzf_cut(fh, pos, size, fastq) if kind == "bgzf"
                      else _plain_cut(fh, pos, size, fastq))
            except (OSError, zlib.error, ValueError):
                return None     # a damaged block: the whole file's reader says where
            if at is not None and at > cuts[-1]:
                cuts.append(at)
    end = (size << 16) if kind == "bgzf" else size
    cuts.append(end)
    cuts = [c for i, c in enumerate(cuts) if i == 0 or c > cuts[i - 1]]
    n = len(cuts) - 1
    now = os.stat(path)
    if (now.st_size, now.st_mtime_ns) != (st.st_size, st.st_mtime_ns):
        return None             # it changed while being cut: read it whole, in chunks
    token = os.urandom(8).hex()
    return [InputRange(os.path.abspath(path), a, b, kind == "bgzf", i, n,
                       (a >> 16) if kind == "bgzf" else a, (st.st_size, st.st_mtime_ns),
                       token)
            for i, (a, b) in enumerate(zip(cuts, cuts[1:]))]


def check(rng: InputRange, where: str = "here") -> None:
    """Raise :class:`~s2g.errors.ReadError` unless ``rng``'s file is here and is the file
    that was cut (same size and modification time, to the second: copies and network file
    systems may keep no finer): a range of another file would be parts of other
    records."""
    from .errors import ReadError

    try:
        st = os.stat(rng.path)
    except OSError:
        raise ReadError(f"{rng.path}: no such file {where} (the reads file must be seen under "
                        "the same path where it was cut; S2G_CONFIG=dask_parts=0 sends the "
                        "reads from the client instead)") from None
    if rng.stamp and (st.st_size, st.st_mtime_ns // 10**9) != (rng.stamp[0],
                                                               rng.stamp[1] // 10**9):
        raise ReadError(f"{rng.path}: the file {where} is not the one that was cut into "
                        "parts (its size or modification time differs)")


def open_range(rng: InputRange):
    """A binary file object of the records of ``rng`` (decompressed where BGZF)."""
    raw = open(rng.path, "rb")
    if rng.bgzf:
        return io.BufferedReader(_BgzfRange(raw, rng.start, rng.end), 1 << 20)
    return io.BufferedReader(_PlainRange(raw, rng.start, rng.end), 1 << 20)


# --------------------------------------------------------------------------- readers

class _PlainRange(io.RawIOBase):
    """Bytes ``[start, end)`` of an open file."""

    def __init__(self, raw, start, end):
        self.raw, self.left = raw, end - start
        raw.seek(start)

    def readable(self):
        return True

    def readinto(self, b):
        n = min(len(b), self.left)
        if n <= 0:
            return 0
        got = self.raw.readinto(memoryview(b)[:n])
        self.left -= got
        return got

    def close(self):
        self.raw.close()
        super().close()


class _BgzfRange(io.RawIOBase):
    """The decompressed bytes of a BGZF file from virtual offset ``start`` to ``end``."""

    def __init__(self, raw, start, end):
        self.raw = raw
        self.block, self.skip = start >> 16, start & 0xFFFF
        self.end_block, self.end_off = end >> 16, end & 0xFFFF
        self.buf, self.pos = b"", 0

    def readable(self):
        return True

    def _next(self) -> bool:
        """Load the next block's data; False at the range's end."""
        while True:
            if self.block > self.end_block or (self.block == self.end_block
                                               and self.end_off == 0):
                return False
            data, size = _read_block(self.raw, self.block)
            if size == 0:
                return False
            stop = self.end_off if self.block == self.end_block else len(data)
            self.buf, self.pos = data[:stop], self.skip
            self.skip = 0
            self.block += size
            if self.pos < len(self.buf):
                return True

    def readinto(self, b):
        if self.pos >= len(self.buf) and not self._next():
            return 0
        n = min(len(b), len(self.buf) - self.pos)
        b[:n] = self.buf[self.pos:self.pos + n]
        self.pos += n
        return n

    def close(self):
        self.raw.close()
        super().close()


def _read_block(fh, offset):
    """(decompressed data, compressed size) of the BGZF block at ``offset``; (b"", 0) at the
    end of the file. Raises OSError for a damaged block."""
    fh.seek(offset)
    head = fh.read(18)
    if not head:
        return b"", 0
    if len(head) < 18 or head[:4] != _BGZF_MAGIC or head[12:16] != _BGZF_SUB:
        raise OSError(f"not a BGZF block at byte {offset:,} (damaged, or not BGZF throughout: "
                      "compress it with bgzip alone, or set S2G_CONFIG=dask_parts=0)")
    size = struct.unpack_from("<H", head, 16)[0] + 1
    body = fh.read(size - 18)
    if len(body) < size - 18:
        raise OSError(f"truncated BGZF block at byte {offset:,}")
    try:
        data = _inflate_lib.decompress(body[:-8], -15)
    except Exception as exc:    # noqa: BLE001 - zlib.error, isal's IsalError
        raise OSError(f"damaged BGZF block at byte {offset:,} ({exc})") from None
    crc, isize = struct.unpack_from("<II", body, len(body) - 8)
    if len(data) != isize or zlib.crc32(data) != crc:
        raise OSError(f"damaged BGZF block at byte {offset:,} (CRC or size mismatch)")
    return data, size


# --------------------------------------------------------------------------- cuts

def _is_fastq(fh, bgzf: bool):
    """True for FASTQ, False for FASTA, None if the first record says neither (or the first
    block is damaged)."""
    try:
        head = _read_block(fh, 0)[0][:1024] if bgzf else (fh.seek(0), fh.read(1024))[1]
    except (OSError, zlib.error, ValueError):
        return None
    return {b"@": True, b">": False}.get(head[:1])


def _format_by_name(path):
    """The format dnaio takes from a file name before it looks at the content ("fasta",
    "fastq" or None: by content), by its rules (dnaio 1.2, ``_detect_format_from_name``):
    a part, read from a file object, is always sniffed by content."""
    name = os.path.basename(path).lower()
    for ext in (".gz", ".xz", ".bz2", ".zst"):
        if name.endswith(ext):
            name = name[:-len(ext)]
            break
    name, ext = os.path.splitext(name)
    if ext in (".fasta", ".fa", ".fna", ".csfasta", ".csfa"):
        return "fasta"
    if ext in (".fastq", ".fq") or (ext == ".txt" and name.endswith("_sequence")):
        return "fastq"
    return None


def _record_start(buf, fastq: bool, start: int = 0):
    """(offset in ``buf`` of the first record start after a newline at or after ``start``,
    confirmed by the lines after it, or None; where to look again from once ``buf`` has
    grown). The byte before ``buf[0]`` is not known to end a line. None where ``buf`` does
    not hold enough: read more; at the end of the file, no cut (a last quality line, or a
    broken record the reader reports)."""
    if not fastq:
        i = buf.find(b"\n>", start)
        return (None, max(start, len(buf) - 1)) if i < 0 else (i + 1, i)
    i = buf.find(b"\n@", start)
    while i >= 0:
        p = i + 1
        e1 = buf.find(b"\n", p)
        e2 = buf.find(b"\n", e1 + 1) if e1 >= 0 else -1
        if e2 < 0 or e2 + 1 >= len(buf):
            return None, i                  # its lines are not all here yet
        if buf[e2 + 1] == 0x2B:             # '+'
            return p, i
        i = buf.find(b"\n@", p)
    return None, max(start, len(buf) - 1)


def _plain_cut(fh, pos, size, fastq):
    """The first record start at or after byte ``pos`` (None: none before the end, or none
    within :data:`_MAX_SCAN` bytes)."""
    start = pos - 1                 # one byte back: a record may start at pos itself
    fh.seek(start)
    buf, look = bytearray(), 0
    while len(buf) < _MAX_SCAN:
        chunk = fh.read(_PROBE)
        buf += chunk
        at, look = _record_start(buf, fastq, look)
        if at is not None:
            return start + at
        if not chunk or start + len(buf) >= size:
            return None
    return None


def _bgzf_cut(fh, pos, size, fastq):
    """The virtual offset of the first record start after a newline in the data of the
    blocks from the first BGZF block at or after byte ``pos`` (None: none before the
    end, or none within :data:`_MAX_SCAN` bytes of data). (A record starting at the
    block's very first byte is passed over for the next one: whether the data before the
    block ends a line is not known here, and any record start will do for a cut.)"""
    off = _next_block(fh, pos, size)
    if off is None:
        return None
    data, starts, look = bytearray(), [], 0     # (block offset, where its data starts)
    while len(data) < _MAX_SCAN:
        chunk, csize = _read_block(fh, off) if off < size else (b"", 0)
        if chunk:
            starts.append((off, len(data)))
            data += chunk
        off += csize
        at, look = _record_start(data, fastq, look)
        if at is not None:
            b_off, u = next((b, u) for b, u in reversed(starts) if u <= at)
            return (b_off << 16) | (at - u)
        if csize == 0:
            return None
    return None


def _next_block(fh, pos, size):
    """Offset of the first BGZF block starting at or after ``pos``: the magic bytes, a block
    that decompresses with its CRC, and another block or the end of the file after it
    (None: none within :data:`_MAX_SCAN` bytes)."""
    at = pos
    while at < min(size, pos + _MAX_SCAN):
        fh.seek(at)
        window = fh.read(_PROBE + 18)
        i = window.find(_BGZF_MAGIC)
        while i >= 0:
            off = at + i
            if window[i + 12:i + 16] == _BGZF_SUB or len(window) < i + 16:
                try:
                    _, csize = _read_block(fh, off)
                except (OSError, zlib.error, ValueError):
                    csize = 0
                if csize and (off + csize >= size or _is_block(fh, off + csize)):
                    return off
            i = window.find(_BGZF_MAGIC, i + 1)
        at += _PROBE
    return None


def _is_block(fh, off) -> bool:
    fh.seek(off)
    head = fh.read(16)
    return head[:4] == _BGZF_MAGIC and head[12:16] == _BGZF_SUB
