"""FASTA/FASTQ(.gz) -> ReadBatch, scoring/mode validation, and bad input."""
from __future__ import annotations

import bz2
import gzip

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import s2g
from s2g.errors import ReadError
from s2g.reads import ReadBatch, iter_read_batches

CODE = {"A": 0, "C": 1, "G": 2, "T": 3}


def expect_codes(seq):
    return [CODE.get(c.upper(), 3 if c in "Uu" else 4) for c in seq]


def test_fasta_and_fastq_give_the_same_batch(reads_file):
    reads = [("r1", "ACGT"), ("r2", "acgtn"), ("r3", "RYKMSWBDHVU")]
    fa = s2g.read_reads(reads_file(reads, "fasta"))
    fq = s2g.read_reads(reads_file(reads, "fastq"))
    for b in (fa, fq):
        assert b.names == ["r1", "r2", "r3"]
        assert b.lengths().tolist() == [4, 5, 11]
        for k, (_, s) in enumerate(reads):
            assert b.codes(k).tolist() == expect_codes(s), s
    np.testing.assert_array_equal(fa.codes_flat, fq.codes_flat)


def test_multiline_fasta_and_name_comments(tmp_path):
    p = tmp_path / "m.fa"
    p.write_text(">a some description\nACG\nTT\n>b\nG\n")
    b = s2g.read_reads(str(p))
    assert b.names == ["a", "b"]
    assert b.codes(0).tolist() == expect_codes("ACGTT")


@pytest.mark.parametrize("opener,suffix", [(gzip.open, ".gz"), (bz2.open, ".bz2")])
@pytest.mark.parametrize("fmt", ["fa", "fq"])
def test_compressed_input(tmp_path, opener, suffix, fmt):
    text = ">x\nACGT\n>y\nGG\n" if fmt == "fa" else "@x\nACGT\n+\nIIII\n@y\nGG\n+\nII\n"
    p = tmp_path / f"r.{fmt}{suffix}"
    with opener(p, "wt") as fh:
        fh.write(text)
    b = s2g.read_reads(str(p))
    assert b.names == ["x", "y"] and b.lengths().tolist() == [4, 2]


def test_empty_read_and_duplicate_names_are_kept(reads_file):
    b = s2g.read_reads(reads_file([("dup", "ACGT"), ("e", ""), ("dup", "GG")], "fastq"))
    assert b.names == ["dup", "e", "dup"] and b.lengths().tolist() == [4, 0, 2]


def test_empty_file_gives_no_reads(tmp_path):
    p = tmp_path / "empty.fq"
    p.write_text("")
    b = s2g.read_reads(str(p))
    assert b.n_reads == 0 and b.total_bases == 0
    assert list(iter_read_batches(str(p))) == []


@settings(max_examples=20, deadline=None)
@given(seqs=st.lists(st.text("ACGTN", max_size=30), min_size=1, max_size=30),
       size=st.integers(1, 7))
def test_batches_stream_in_order(tmp_path_factory, seqs, size):
    p = tmp_path_factory.mktemp("b") / "r.fa"
    p.write_text("".join(f">r{k}\n{s}\n" for k, s in enumerate(seqs)))
    batches = list(iter_read_batches(str(p), size))
    assert all(0 < b.n_reads <= size for b in batches)
    assert [b.first_index for b in batches] == list(range(0, len(seqs), size))
    names = [n for b in batches for n in b.names]
    got = [b.codes(k).tolist() for b in batches for k in range(b.n_reads)]
    assert names == [f"r{k}" for k in range(len(seqs))]
    assert got == [expect_codes(s) for s in seqs]


@settings(max_examples=30, deadline=None)
@given(seqs=st.lists(st.text("ACGT", max_size=30), min_size=1, max_size=30),
       size=st.integers(1, 9), cap=st.integers(0, 60))
def test_batches_end_at_a_read_count_or_a_base_count(tmp_path_factory, seqs, size, cap):
    """``max_bases``: a batch ends at ``size`` reads or once it holds ``cap`` bases (at
    least one read each); every read once, in order; only the input's last batch, when the
    input ends inside it, says ``is_last``."""
    p = tmp_path_factory.mktemp("b") / "r.fa"
    p.write_text("".join(f">r{k}\n{s}\n" for k, s in enumerate(seqs)))
    batches = list(iter_read_batches(str(p), size, max_bases=cap))
    names = [n for b in batches for n in b.names]
    assert names == [f"r{k}" for k in range(len(seqs))]
    for k, b in enumerate(batches):
        n_bases = b.total_bases
        assert 0 < b.n_reads <= size
        if cap:       # the batch reached the cap only with its last read
            assert n_bases - int(b.lengths()[-1]) < cap
        if k < len(batches) - 1:
            assert b.n_reads == size or n_bases >= cap > 0
            assert not getattr(b, "is_last", False)
    last = batches[-1]
    assert getattr(last, "is_last", False) == (
        last.n_reads < size and not (0 < cap <= last.total_bases))


@settings(max_examples=20, deadline=None)
@given(n=st.integers(1, 60), size=st.integers(1, 5), grow=st.integers(0, 20),
       fastq=st.booleans())
def test_batches_grow_to_twice_the_last_up_to_grow_to(tmp_path_factory, n, size, grow, fastq):
    """``grow_to`` (knob batch_grow): the first batch holds ``size`` reads, each next one
    twice the one before up to ``grow_to`` (no growth where it is not above ``size``);
    every read once, in order, through s2g's FASTQ pass and dnaio's FASTA reader alike."""
    p = tmp_path_factory.mktemp("g") / ("r.fq" if fastq else "r.fa")
    p.write_text("".join(f"@r{k}\nACGT\n+\nIIII\n" if fastq else f">r{k}\nACGT\n"
                         for k in range(n)))
    batches = list(iter_read_batches(str(p), size, grow_to=grow))
    assert [nm for b in batches for nm in b.names] == [f"r{k}" for k in range(n)]
    want, left = [], n
    while left:
        want.append(min(left, size))
        left -= want[-1]
        size = max(size, min(grow, 2 * size))
    assert [b.n_reads for b in batches] == want


# ----------------------------------------------------------------- bad input

def test_non_iupac_character_names_read_and_position(reads_file):
    with pytest.raises(ReadError) as exc:
        s2g.read_reads(reads_file([("ok", "ACGT"), ("bad_read", "ACGT*A")]))
    msg = str(exc.value)
    assert "'bad_read'" in msg and "position 5" in msg and "'*'" in msg and "\n" not in msg
    with pytest.raises(ReadError, match=r"'r'.*position 3"):
        ReadBatch.from_sequences(["r"], ["AC1"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="ACGTNacgtnRYKMSWBDHVU", max_size=40), max_size=12),
       st.data())
def test_sequences_as_str_bytes_or_mixed_encode_alike(seqs, data):
    """from_sequences joins ASCII str in one piece (reads.py's fast path); bytes, or str and
    bytes mixed, take the read-by-read path: codes and offsets the same every way."""
    names = [f"r{i}" for i in range(len(seqs))]
    as_str = ReadBatch.from_sequences(names, seqs)
    as_bytes = ReadBatch.from_sequences(names, [s.encode() for s in seqs])
    mixed = ReadBatch.from_sequences(names, [s.encode() if data.draw(st.booleans()) else s
                                             for s in seqs])
    for b in (as_bytes, mixed):
        assert np.array_equal(b.codes_flat, as_str.codes_flat)
        assert np.array_equal(b.offsets, as_str.offsets)
    assert as_str.codes_flat.tolist() == [c for s in seqs for c in expect_codes(s)]
    # a one-shot iterable (a generator) of str, or of str and bytes, is read once
    mixed_gen = ReadBatch.from_sequences(names, (s if i % 2 else s.encode()
                                                 for i, s in enumerate(seqs)))
    assert np.array_equal(mixed_gen.codes_flat, as_str.codes_flat)
    assert np.array_equal(mixed_gen.offsets, as_str.offsets)


def test_non_ascii_character_is_refused_in_its_read():
    """A non-ASCII character sends the batch down the read-by-read path: the error names
    its read and its position there (the first of its UTF-8 bytes)."""
    with pytest.raises(ReadError, match=r"'r2' \(record 2\).*position 3"):
        ReadBatch.from_sequences(["r1", "r2"], ["ACGT", "ACé"])


def test_missing_file_directory_and_non_fasta(tmp_path):
    with pytest.raises(ReadError, match="no such file"):
        s2g.read_reads(str(tmp_path / "nope.fq"))
    with pytest.raises(ReadError, match="is a directory"):
        s2g.read_reads(str(tmp_path))
    p = tmp_path / "notes.txt"
    p.write_text("this is not a sequence file\nat all\n")
    with pytest.raises(ReadError) as exc:
        s2g.read_reads(str(p))
    assert str(p) in str(exc.value) and "\n" not in str(exc.value)


def test_truncated_fastq(tmp_path):
    p = tmp_path / "t.fq"
    p.write_text("@a\nACGT\n+\nIIII\n@b\nAC\n+\n")
    with pytest.raises(ReadError) as exc:
        s2g.read_reads(str(p))
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize("kw,pattern", [
    (dict(match=0), "--match must be >= 1"),
    (dict(mismatch=-1), "--mismatch must be >= 0"),
    (dict(gap_open=-2), "--gap-open must be >= 0"),
    (dict(gap_extend=0), "--gap-extend must be >= 1"),
    (dict(match=2.5), "--match must be an integer"),
    (dict(gap_extend=10 ** 6), "out of range"),
])
def test_bad_scoring_is_a_clear_error(kw, pattern):
    with pytest.raises(s2g.S2GError, match=pattern) as exc:
        s2g.Scoring(**kw)
    assert "\n" not in str(exc.value)


def test_unknown_mode_and_variant(gfa_file):
    g = s2g.load_graph(gfa_file("S\t1\tACGT\n"))
    reads = ReadBatch.from_sequences(["r"], ["ACGT"])
    with pytest.raises(s2g.S2GError, match="unknown mode 'glocal'.*local, semiglobal, global"):
        s2g.align(g, reads, mode="glocal")
    with pytest.raises(s2g.S2GError, match="unknown variant 'v9'.*v0.*cpu"):
        s2g.align(g, reads, variant="v9")


def _numbered(sizes):
    out, first = [], 0
    for n in sizes:
        b = ReadBatch.from_sequences([f"r{first + i}" for i in range(n)],
                                     ["ACGT"[: 1 + i % 4] for i in range(n)], first)
        b.input_pos = first + n
        out.append(b)
        first += n
    return out


@pytest.mark.parametrize("sizes,want", [
    ([800, 800, 800, 15], [100, 100, 200, 400, 800, 400, 200, 100, 100, 15]),
    ([800, 800, 800, 500], [100, 100, 200, 400, 800, 800, 250, 124, 126]),
    ([800, 800], [100, 100, 200, 400, 400, 200, 100, 100]),
    ([800], [100, 100, 200, 400]),
    ([10], [10]),
    ([], []),
])
def test_ramp_batches_cuts_the_first_and_last_batches_and_keeps_every_read(sizes, want):
    """s2g.reads.ramp_batches (knob batch_ramp): the first batch in pieces 1/8, 1/8, 1/4,
    1/2, the last in halves down to 1/8 (the one before it where the last is small),
    every read once, in order, with its record number; a piece's input position only
    where its batch ends."""
    from s2g.reads import ramp_batches
    bs = _numbered(sizes)
    out = list(ramp_batches(iter(bs), 3))
    assert [b.n_reads for b in out] == want
    assert [n for b in out for n in b.names] == [n for b in bs for n in b.names]
    for b in out:
        assert b.first_index == int(b.names[0][1:])
        assert [b.codes(i).tolist() for i in range(b.n_reads)] == \
            [list(range(1 + int(n[1:]) % 4)) for n in b.names]
    ends = {b.input_pos for b in bs}
    assert all(b.input_pos is None or b.input_pos in ends for b in out)
    assert [b.input_pos for b in out if b.input_pos is not None] == [b.input_pos for b in bs]
    assert [b.n_reads for b in ramp_batches(iter(_numbered(sizes)), 0)] == sizes
    # the first batch's pieces say how much smaller than it they are (device buffers grow
    # for the whole batch at once: _devpool.expect)
    scales = [getattr(b, "ramp_scale", None) for b in out]
    if len(want) > len(sizes):
        assert scales[:4] == [8.0, 8.0, 4.0, 2.0] and set(scales[4:]) <= {None}
    if len(sizes) > 1:
        first = [b.n_reads for b in ramp_batches(iter(_numbered(sizes)), 3, "first")]
        last = [b.n_reads for b in ramp_batches(iter(_numbered(sizes)), 3, "last")]
        assert first == want[:4] + sizes[1:]
        assert last == sizes[:1] + want[4:]


def test_device_buffers_grow_for_the_batches_to_come():
    """_devpool.expect(scale): a buffer that must grow grows to ``scale`` times the size
    asked (a ramp's first piece sizes it for the whole batches); 1: by a quarter, or to
    the size asked."""
    import threading

    from s2g.variants import _devpool

    class Buf:
        size = 1000
    got = {}

    def grow():
        got["other"] = _devpool._grown(Buf, 1100)   # another thread: its own scale, 1
    try:
        _devpool.expect(8.0)
        assert _devpool._grown(None, 100) == 800 and _devpool._grown(Buf, 1100) == 8800
        t = threading.Thread(target=grow)
        t.start()
        t.join()
        _devpool.expect(1.0)
        assert _devpool._grown(None, 100) == 100 and _devpool._grown(Buf, 1100) == 1250
        assert _devpool._grown(Buf, 2000) == 2000 and got["other"] == 1250
        _devpool.expect(0.25)                       # never below the size asked
        assert _devpool._grown(None, 100) == 100
    finally:
        _devpool.expect(1.0)
