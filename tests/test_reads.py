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


# ----------------------------------------------------------------- bad input

def test_non_iupac_character_names_read_and_position(reads_file):
    with pytest.raises(ReadError) as exc:
        s2g.read_reads(reads_file([("ok", "ACGT"), ("bad_read", "ACGT*A")]))
    msg = str(exc.value)
    assert "'bad_read'" in msg and "position 5" in msg and "'*'" in msg and "\n" not in msg
    with pytest.raises(ReadError, match=r"'r'.*position 3"):
        ReadBatch.from_sequences(["r"], ["AC1"])


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
