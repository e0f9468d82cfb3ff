"""s2g's own pass over plain FASTQ (s2g/fastq_blocks.py) reads what dnaio reads.

Every file is read twice by ``iter_read_batches``: with the ``fast_fastq`` knob on (the
pass, dnaio from the first record that is not plain) and off (dnaio alone); the batches
(names, codes, qualities, first record, last-batch mark, unnamed count) or the error
message must be the same. Pieces of a few bytes put records across piece ends.
"""
import gzip
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from s2g import config, fastq_blocks
from s2g.errors import ReadError
from s2g.reads import iter_read_batches


def _read(path, knob, batch_size=3, max_bases=0, qualities=True):
    config.reset()
    config.configure(fast_fastq=knob)
    out = []
    try:
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            for b in iter_read_batches(str(path), batch_size, qualities=qualities,
                                       max_bases=max_bases):
                out.append((list(b.names), b.codes_flat.tolist(), b.offsets.tolist(),
                            None if b.quals is None else b.quals.tolist(), b.first_index,
                            getattr(b, "is_last", False), b.unnamed))
        return out + [str(w.message) for w in said]
    except ReadError as exc:            # the batches before the error, then the error
        return out + [str(exc)]
    finally:
        config.reset()


def _same(path, **kw):
    fast, slow = _read(path, True, **kw), _read(path, False, **kw)
    assert fast == slow
    return fast


def _record(draw_name, seq, qual, plus="+"):
    return f"@{draw_name}\n{seq}\n{plus}\n{qual}\n"


PLAIN = "".join(_record(f"r{k} comment", "ACGTNacgtnRYU"[: 3 + k % 9], "I" * (3 + k % 9))
                for k in range(40))


@pytest.fixture(params=[7, 64, 1 << 20])
def small_pieces(request, monkeypatch):
    monkeypatch.setattr(fastq_blocks, "PIECE", request.param)
    return request.param


@pytest.fixture
def parsed(monkeypatch):
    """The records each call of the pass parsed (a list, filled as it runs)."""
    calls = []
    real = fastq_blocks._parse

    def spy(*args):
        got = real(*args)
        calls.append(got[0])
        return got
    monkeypatch.setattr(fastq_blocks, "_parse", spy)
    return calls


def test_plain_fastq_is_read_by_the_pass(tmp_path, parsed, small_pieces):
    """The pass reads every record of a plain file but the first batch's (dnaio reads
    those: the first batch waits for no Numba), and the batches are dnaio's."""
    p = tmp_path / "r.fq"
    p.write_text(PLAIN)
    out = _same(p, batch_size=7)
    assert sum(parsed) == 40 - 7 and len(out) == 6 and out[-1][5]    # (no warning)
    assert out[0][0][:2] == ["r0", "r1"]


@pytest.mark.parametrize("max_bases", [1, 10, 50])
def test_batches_bounded_by_bases(tmp_path, max_bases, small_pieces):
    p = tmp_path / "r.fq"
    p.write_text(PLAIN)
    _same(p, batch_size=5, max_bases=max_bases)


def test_gzip_and_no_final_newline(tmp_path, small_pieces):
    p = tmp_path / "r.fq.gz"
    p.write_bytes(gzip.compress(PLAIN[:-1].encode()))
    out = _same(p)
    assert sum(len(b[0]) for b in out) == 40


# each damages one record (the 13th of 30) so that the pass must hand over to dnaio there
DAMAGE = {
    "crlf": lambda r: r.replace("\n", "\r\n"),
    "plus name": lambda r: r.replace("\n+\n", "\n+" + r[1:r.index("\n")] + "\n"),
    "plus other name": lambda r: r.replace("\n+\n", "\n+zz\n"),
    "no name": lambda r: "@" + r[r.index("\n"):],
    "blank name, comment": lambda r: "@ c" + r[r.index("\n"):],
    "tab": lambda r: r.replace(" ", "\t", 1),
    "vertical tab": lambda r: r.replace(" ", "\x0b", 1),
    "short qualities": lambda r: r[:-2] + "\n",
    "long qualities": lambda r: r[:-1] + "I\n",
    "space quality": lambda r: r[:-2] + " \n",
    "bad base": lambda r: r.replace("\nA", "\nX", 1),
    "empty read": lambda r: r[:r.index("\n") + 1] + "\n+\n\n",
    "non-ASCII name": lambda r: r.replace("r12", "r\u00e912", 1),
    "no @": lambda r: r[1:],
    "blank line": lambda r: "\n" + r,
    "cut": lambda r: r[: len(r) // 2],
}


@pytest.mark.parametrize("batch", [4, 20])        # the 13th record after the head, in it
@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_a_record_that_is_not_plain_reads_as_with_dnaio(tmp_path, kind, batch, small_pieces):
    recs = [_record(f"r{k} c", "ACGTACGTAC"[: 2 + k % 8], "IIIIIIIIII"[: 2 + k % 8])
            for k in range(30)]
    recs[12] = DAMAGE[kind](recs[12])
    if kind == "cut":
        recs = recs[:13]
    p = tmp_path / "r.fq"
    p.write_bytes("".join(recs).encode())
    out = _same(p, batch_size=batch)
    last = out[-1]
    if isinstance(last, str) and ("must be" in last or "malformed" in last):
        assert "record" in last or "line" in last
    elif kind == "no name":
        names = [n for b in out[:-1] for n in b[0]]
        assert names[12] == "read13" and "1 read(s) without a name" in out[-1]


@hsettings(max_examples=60, deadline=None,
           suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(recs=st.lists(st.tuples(
    st.text("ACGTNacgu", max_size=12),
    st.text("ab1 \t", min_size=0, max_size=5),
    st.sampled_from(["", "\r", "x"]),
    st.booleans()), min_size=0, max_size=25),
    piece=st.integers(4, 80), batch=st.integers(1, 6), bases=st.sampled_from([0, 5, 17]))
def test_random_files_read_as_with_dnaio(tmp_path_factory, recs, piece, batch, bases):
    """Random names (spaces, tabs, empty), bases, now and then a carriage return or a
    stray byte: the same batches or the same error either way."""
    text = ""
    for seq, name, odd, plus in recs:
        qual = "F" * len(seq)
        text += f"@{name}\n{seq}{odd if odd == 'x' else ''}\n{'+' if plus else '+' + name}\n{qual}{odd if odd == chr(13) else ''}\n"
    p = tmp_path_factory.mktemp("fq") / "r.fq"
    p.write_bytes(text.encode())
    old = fastq_blocks.PIECE
    fastq_blocks.PIECE = piece
    try:
        _same(p, batch_size=batch, max_bases=bases)
    finally:
        fastq_blocks.PIECE = old


def test_the_pass_leaves_fasta_and_pipes_to_dnaio(tmp_path, monkeypatch):
    p = tmp_path / "r.fa"
    p.write_text(">a x\nACGT\nAC\n>b\nGG\n")
    monkeypatch.setattr(fastq_blocks, "_parse", None)      # would fail if called
    out = _same(p)
    assert out[0][0] == ["a", "b"]


def test_long_record_grows_the_piece(tmp_path, monkeypatch):
    monkeypatch.setattr(fastq_blocks, "PIECE", 16)
    p = tmp_path / "r.fq"
    seq = "ACGT" * 50
    p.write_text(_record("long", seq, "I" * len(seq)) + _record("s", "A", "I"))
    out = _same(p)
    assert out[0][0] == ["long", "s"] and len(out[0][1]) == 201
    assert np.all(np.asarray(out[0][1][:4]) == [0, 1, 2, 3])


def test_a_head_capped_by_bytes_reads_the_same(tmp_path, monkeypatch, parsed):
    """A first batch larger than HEAD_BYTES: dnaio reads whole records up to the cap, the
    pass the rest of the batch."""
    monkeypatch.setattr(fastq_blocks, "HEAD_BYTES", 100)
    monkeypatch.setattr(fastq_blocks, "PIECE", 64)
    p = tmp_path / "r.fq"
    p.write_text(PLAIN)
    out = _same(p, batch_size=30)
    assert 0 < sum(parsed) < 40 and [len(b[0]) for b in out] == [30, 10]


def test_last_record_without_its_quality_line(tmp_path):
    """dnaio takes a last record without its final newline only where the quality line
    has something: ``+\n`` then the file's end is its error (review, session 57)."""
    p = tmp_path / "r.fq"
    p.write_text(PLAIN + "@last\n\n+\n")
    out = _same(p, batch_size=10)
    assert "Premature end of file" in out[-1] and len(out) == 5


@pytest.mark.parametrize("n, bad, cut, batch", [(30, 1, 9, 5), (1100, 1019, 1029, 4)])
def test_the_earliest_bad_record_wins(tmp_path, n, bad, cut, batch):
    """A bad base and a later format error: the bad base's error, and the same batches
    before it, wherever dnaio's blocks of 1,024 records begin."""
    recs = [_record(f"r{k}", "ACGT", "IIII") for k in range(n)]
    recs[bad] = _record(f"r{bad}", "ACXT", "IIII")
    recs[cut] = _record(f"r{cut}", "ACGT", "III")
    p = tmp_path / "r.fq"
    p.write_text("".join(recs))
    out = _same(p, batch_size=batch)
    assert "invalid character 'X'" in out[-1] and len(out) == 1 + bad // batch


def test_batches_before_a_format_error_come_out(tmp_path):
    recs = [_record(f"r{k}", "ACGT", "IIII") for k in range(10)]
    recs[6] = _record("r6", "ACGT", "III")
    p = tmp_path / "r.fq"
    p.write_text("".join(recs))
    out = _same(p, batch_size=2)
    assert len(out) == 4 and "after record 6" in out[-1]


def test_a_cut_gzip_counts_the_records_before_the_cut(tmp_path):
    """A truncated .gz: both ways 'cannot read after record N', N within 1% (each counts
    what its reads decoded before the error: dnaio's buffer and the pass's 128 KiB reads)."""
    z = gzip.compress("".join(_record(f"r{k}", "ACGT" * 20, "I" * 80)
                              for k in range(200000)).encode())
    p = tmp_path / "r.fq.gz"
    p.write_bytes(z[: len(z) * 3 // 10])
    got = []
    for knob in (True, False):
        out = _read(p, knob, batch_size=65536)
        assert "cannot read after record" in out[-1]
        got.append(int(out[-1].split("after record ")[1].split(":")[0]))
    assert abs(got[0] - got[1]) <= 0.01 * got[1]


def test_progress_never_goes_back_and_ends_at_the_size(tmp_path):
    """input_pos rises and reaches the file's size: a .gz whose compression ratio changes
    along it, and a CRLF file (dnaio reads it on after the pass)."""
    rng = np.random.default_rng(1)
    a = "".join(_record(f"r{k}", "".join(rng.choice(list("ACGT"), 80)), "I" * 80)
                for k in range(20000))
    b = "".join(_record(f"r{k}", "ACGT" * 20, "I" * 80) for k in range(100000))
    gz = tmp_path / "r.fq.gz"
    gz.write_bytes(gzip.compress((a + b).encode()))
    crlf = tmp_path / "c.fq"
    crlf.write_bytes("".join(f"@r{k}\r\nACGTACGT\r\n+\r\nIIIIIIII\r\n"
                             for k in range(40000)).encode())
    for path, bs in ((gz, 7000), (crlf, 5000)):
        pos = [b.input_pos for b in iter_read_batches(str(path), bs)]
        assert None not in pos and pos == sorted(pos), pos
        assert pos[-1] == path.stat().st_size


def test_an_abandoned_reader_closes_its_file(tmp_path):
    import gc
    p = tmp_path / "r.fq"
    p.write_text(PLAIN * 50)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", ResourceWarning)
        g = iter_read_batches(str(p), 10)
        next(g)
        g.close()
        del g
        gc.collect()
    assert not [w for w in said if issubclass(w.category, ResourceWarning)]
