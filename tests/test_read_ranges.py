"""Reads files cut into parts (s2g/read_ranges.py, issue 44): whatever the file and the
number of parts, reading the parts one after another gives every record of the file
once, in order, as reading it whole does; files that cannot be cut say so (None)."""
from __future__ import annotations

import gzip
import struct
import zlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from s2g.errors import ReadError
from s2g.read_ranges import file_kind, split_input
from s2g.reads import iter_read_batches, unnamed_mark


def bgzf(data: bytes, block: int = 65280) -> bytes:
    """``data`` as BGZF (bgzip's format) in blocks of ``block`` bytes, EOF block last."""
    out = bytearray()
    for i in range(0, len(data), block):
        chunk = data[i:i + block]
        c = zlib.compressobj(6, zlib.DEFLATED, -15)
        body = c.compress(chunk) + c.flush()
        out += (b"\x1f\x8b\x08\x04\x00\x00\x00\x00\x00\xff\x06\x00BC\x02\x00"
                + struct.pack("<H", 18 + len(body) + 8 - 1) + body
                + struct.pack("<II", zlib.crc32(chunk), len(chunk)))
    return bytes(out + bytes.fromhex("1f8b08040000000000ff0600424302001b0003000000000000000000"))


# records whose quality lines often start with '@' (the case the FASTQ rule must tell
# from a header) and whose lengths run from empty to longer than a probe window
_seq = st.text("ACGTN", max_size=300)


@st.composite
def fastq_text(draw):
    recs = draw(st.lists(st.tuples(st.text("ab1_", max_size=6), _seq), min_size=1,
                         max_size=60))
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    out = []
    for k, (name, seq) in enumerate(recs):
        qual = "".join(draw(st.sampled_from("@+I#")) for _ in seq)
        out.append(f"@{name}{k}{eol}{seq}{eol}+{eol}{qual}{eol}")
    return "".join(out)


@st.composite
def fasta_text(draw):
    recs = draw(st.lists(st.tuples(st.text("ab1", max_size=6), _seq), min_size=1,
                         max_size=60))
    width = draw(st.integers(5, 80))
    out = []
    for k, (name, seq) in enumerate(recs):
        lines = [seq[i:i + width] for i in range(0, len(seq), width)] or [""]
        out.append(f">{name}{k}\n" + "\n".join(lines) + "\n")
    return "".join(out)


def _records(path, parts):
    got = []
    for p in parts:
        for b in iter_read_batches(path, 7, part=p):
            got += [(n, bytes(b.codes(r))) for r, n in enumerate(b.names)]
    return got


def _whole(path):
    got = []
    for b in iter_read_batches(path, 7):
        got += [(n, bytes(b.codes(r))) for r, n in enumerate(b.names)]
    return got


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.one_of(fastq_text(), fasta_text()), n_parts=st.integers(1, 40),
       packed=st.sampled_from([None, 64, 977, 65280]))
def test_parts_hold_every_record_once_in_order(tmp_path, text, n_parts, packed):
    fa = text.startswith(">")
    path = tmp_path / (("r.fa" if fa else "r.fq") + (".gz" if packed else ""))
    data = text.encode()
    path.write_bytes(bgzf(data, packed) if packed else data)
    parts = split_input(str(path), n_parts, min_bytes=1)
    assert parts is not None and 1 <= len(parts) <= n_parts
    assert parts[0].start == 0 and all(a.end == b.start for a, b in zip(parts, parts[1:]))
    assert [p.part for p in parts] == list(range(len(parts)))
    assert _records(str(path), parts) == _whole(str(path))


def test_a_big_file_is_cut_where_asked(tmp_path):
    recs = "".join(f"@r{k}\n{'ACGT' * 40}\n+\n{'@' * 160}\n" for k in range(3000))
    path = tmp_path / "r.fq"
    path.write_text(recs)
    parts = split_input(str(path), 8, min_bytes=1)
    assert len(parts) == 8
    sizes = [p.end - p.start for p in parts]
    assert max(sizes) - min(sizes) < 2 * 340              # each cut moves < a record
    assert _records(str(path), parts) == _whole(str(path))
    assert len(split_input(str(path), 8, min_bytes=1 << 20)) == 1   # parts of >= 1 MiB


def test_files_that_cannot_be_cut(tmp_path):
    fq = "@a\nACGT\n+\nIIII\n"
    gz = tmp_path / "r.fq.gz"
    gz.write_bytes(gzip.compress(fq.encode()))           # gzip, not BGZF
    empty = tmp_path / "e.fq"
    empty.write_text("")
    other = tmp_path / "x.txt"
    other.write_text("hello\n")
    for p in (gz, empty, other):
        assert file_kind(str(p)) is None and split_input(str(p), 4) is None
    assert split_input("-", 4) is None
    named = tmp_path / "r.fa"                   # FASTQ named FASTA: dnaio refuses it whole
    named.write_text(fq)
    assert file_kind(str(named)) == "plain" and split_input(str(named), 4) is None
    assert split_input(str(tmp_path / "missing.fq"), 4) is None
    bg = tmp_path / "r.bgz"
    bg.write_bytes(bgzf(fq.encode()))
    assert file_kind(str(bg)) == "bgzf"


def test_unnamed_reads_in_a_part_are_marked(tmp_path):
    path = tmp_path / "r.fa"
    path.write_text(">a\nACGT\n>\nGG\n> \nTT\n")
    part = split_input(str(path), 1, min_bytes=1)[0]
    names = next(iter_read_batches(str(path), 10, part=part)).names
    assert names == ["a", unnamed_mark(2, part.token), unnamed_mark(3, part.token)]
    assert len(part.token) == 16 and split_input(str(path), 1, min_bytes=1)[0].token != part.token


def test_a_damaged_part_names_the_part(tmp_path):
    good = "".join(f"@r{k}\nACGT\n+\nIIII\n" for k in range(200))
    path = tmp_path / "r.fq"
    path.write_text(good + "@bad\nACGT\n+\nII\n" + good.replace("@r", "@s"))
    parts = split_input(str(path), 4, min_bytes=1)
    with pytest.raises(ReadError, match=r"part \d of 4, from byte"):
        _records(str(path), parts)
    # the same file whole: the usual message
    with pytest.raises(ReadError, match=r"r\.fq: malformed input"):
        _whole(str(path))


def test_a_part_of_a_changed_or_missing_file_is_refused(tmp_path):
    from s2g.read_ranges import check
    path = tmp_path / "r.fq"
    path.write_text("".join(f"@r{k}\nACGT\n+\nIIII\n" for k in range(100)))
    parts = split_input(str(path), 3, min_bytes=1)
    check(parts[1])
    path.write_text("".join(f"@s{k}\nACGTT\n+\nIIIII\n" for k in range(100)))
    with pytest.raises(ReadError, match="not the one that was cut"):
        check(parts[1], "on worker w")
    path.unlink()
    with pytest.raises(ReadError, match="no such file on worker w"):
        check(parts[1], "on worker w")


def test_a_damaged_bgzf_file_is_left_to_the_whole_file_reader(tmp_path):
    """A damaged block: cutting never fails on it (a cut moves past it, or there are no
    parts and the whole file's reader reports it); the part holding it says so, naming
    the file, as the whole file's reader does."""
    text = "".join(f"@r{k}\n{'ACGT' * 30}\n+\n{'I' * 120}\n" for k in range(400)).encode()
    data = bytearray(bgzf(text, 4000))
    blocks, off = [], 0
    while off < len(data) - 28:
        blocks.append(off)
        off += struct.unpack_from("<H", data, off + 16)[0] + 1
    mid = blocks[len(blocks) // 2]
    data[mid + 30] ^= 0xFF                      # inside the deflate payload: CRC fails
    path = tmp_path / "bad.fq.gz"
    path.write_bytes(bytes(data))
    for n in (2, 3, 8):
        parts = split_input(str(path), n, min_bytes=1)
        if parts is not None:
            with pytest.raises(ReadError, match="bad.fq.gz"):
                _records(str(path), parts)
    with pytest.raises(ReadError, match="bad.fq.gz"):
        _whole(str(path))


def test_bgzf_followed_by_plain_gzip_is_not_cut(tmp_path):
    """`cat x.bgz y.gz`: BGZF at the start but not throughout (no EOF block at the end):
    not cut (a part's reader could not step through the gzip member); read whole, it is
    every record of both."""
    a = "".join(f"@a{k}\nACGT\n+\nIIII\n" for k in range(300)).encode()
    b = "".join(f"@b{k}\nACGT\n+\nIIII\n" for k in range(300)).encode()
    path = tmp_path / "cat.fq.gz"
    path.write_bytes(bgzf(a, 500) + gzip.compress(b))
    assert file_kind(str(path)) is None and split_input(str(path), 4, min_bytes=1) is None
    assert len(_whole(str(path))) == 600


def test_leading_blank_lines_are_not_cut(tmp_path):
    """dnaio reads a whole .fa with leading blank lines (by its name) but sniffs a part's
    format from its first byte: such a file is not cut (read whole, it reads)."""
    for text in ("\n" + "".join(f">r{k}\nACGT\n" for k in range(40)),
                 "  " + "".join(f">r{k}\nACGT\n" for k in range(40))):
        path = tmp_path / "lead.fa"
        path.write_text(text)
        assert split_input(str(path), 2, min_bytes=1) is None
        assert len(_whole(str(path))) == 40
        packed = tmp_path / "lead.fa.gz"
        packed.write_bytes(bgzf(text.encode(), 100))
        assert split_input(str(packed), 2, min_bytes=1) is None


def test_no_record_start_within_the_scan_limit_is_no_cut(tmp_path, monkeypatch):
    """A cut looks through at most _MAX_SCAN bytes for a record start (a longer record, or
    a file that is not FASTQ after all): no cut there, never the rest of the file in
    memory."""
    from s2g import read_ranges
    monkeypatch.setattr(read_ranges, "_MAX_SCAN", 5000)
    monkeypatch.setattr(read_ranges, "_PROBE", 1000)
    long = "ACGT" * 5000
    small = "".join(f"@r{k}\nACGT\n+\nIIII\n" for k in range(300))
    head = small.replace("@r", "@h")
    text = head + f"@a\n{long}\n+\n{'I' * len(long)}\n" + small
    path = tmp_path / "r.fq"
    path.write_text(text)
    parts = split_input(str(path), 16, min_bytes=1)
    assert parts is not None and _records(str(path), parts) == _whole(str(path))
    starts = [p.start for p in parts]
    a = len(head)
    assert not any(a < x < a + 2 * len(long) + 7 for x in starts)   # none inside the long one
    assert len(parts) < 16                            # cuts that found no start are dropped


def test_a_file_that_grows_while_it_is_cut_is_not_cut(tmp_path, monkeypatch):
    """Records appended while the client cuts the file (a writer still finishing) would
    fall past the last range's end, which the first size fixed, and the stamp taken after
    the cuts would match the grown file: 50 of 150 reads lost without a word. The file is
    stat'ed once for both, and again after the cuts: changed, it is not cut (read whole)."""
    import s2g.read_ranges as rr
    p = tmp_path / "grow.fq"
    p.write_bytes(b"".join(b"@a%d\nACGT\n+\nIIII\n" % k for k in range(100)))
    orig = rr._plain_cut
    grew = []

    def grow(fh, pos, size, fastq):
        if not grew:
            grew.append(1)
            with open(p, "ab") as g:
                g.write(b"".join(b"@late%d\nACGT\n+\nIIII\n" % k for k in range(50)))
        return orig(fh, pos, size, fastq)

    monkeypatch.setattr(rr, "_plain_cut", grow)
    assert split_input(str(p), 4, min_bytes=1) is None and grew
    monkeypatch.setattr(rr, "_plain_cut", orig)
    parts = split_input(str(p), 4, min_bytes=1)      # settled: cut, every record once
    assert parts is not None and len(parts) > 1
