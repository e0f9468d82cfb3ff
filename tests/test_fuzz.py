"""Fuzzing the command line with mutated GFA and FASTQ bytes (issue 21).

Every run of ``s2g align`` (``s2g.cli.main`` in this process, so the kernels compile
once) must end in one of two ways: exit 0 with exactly one GAF line per read (counted
by dnaio, independently), or exit 1 with exactly one ``s2g: error:`` line and no output
file. Never exit 3 (an internal error), never a changed input, never a temporary file
left behind. ``S2G_FUZZ_EXAMPLES=2000 pytest tests/test_fuzz.py`` searches longer.
"""
from __future__ import annotations

import bz2
import gzip
import os
import tempfile
from pathlib import Path

import dnaio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from s2g import cli

EXAMPLES = int(os.environ.get("S2G_FUZZ_EXAMPLES", "60"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

GFA = (b"H\tVN:Z:1.0\nS\t1\tACGTACGGA\nS\t2\tG\nS\t3\tC\nS\ts4\tTTGCAATn\n"
       b"L\t1\t+\t2\t+\t0M\nL\t1\t+\t3\t+\t0M\nL\t2\t+\ts4\t+\t0M\nL\t3\t+\ts4\t-\t0M\n"
       b"P\tp\t1+,2+,s4+\t*\n")
FQ = (b"@a first\nACGTACGGAGTTGC\n+\nIIIIIIIIIIIIII\n@b\nGGATTTGCA\n+\nIIIIIIIII\n"
      b"@c\n\n+\n\n@d\nNNNNacgtRY\n+\nIIIIIIIIII\n")

#: bytes that mean something to a GFA or FASTQ parser, or to a decoder
TOKENS = [b"\x00", b"\xff", b"\xef\xbb\xbf", b"\xc3\xa9", b"\r", b"\n", b"\t", b" ", b">", b"<",
          b"*", b"X", b"@", b"+", b"-", b"S\t", b"L\t", b"P\t", b"W\t", b"H\t", b"0M", b"5M",
          b"\tz\t", b"N", b"U", b"#", b"\n\n", b"\t\t"]

mutation = st.one_of(
    st.tuples(st.just("flip"), st.floats(0, 1), st.integers(0, 255)),
    st.tuples(st.just("insert"), st.floats(0, 1), st.sampled_from(TOKENS)),
    st.tuples(st.just("delete"), st.floats(0, 1), st.integers(1, 12)),
    st.tuples(st.just("truncate"), st.floats(0, 1), st.none()),
    st.tuples(st.just("repeat-line"), st.floats(0, 1), st.none()),
)
packing = st.sampled_from(["plain", "plain", "plain", "gzip", "gzip-truncated", "bzip2"])


def mutate(data: bytes, ops) -> bytes:
    for op, where, arg in ops:
        p = int(where * len(data))
        if op == "flip" and data:
            p = min(p, len(data) - 1)
            data = data[:p] + bytes([arg]) + data[p + 1:]
        elif op == "insert":
            data = data[:p] + arg + data[p:]
        elif op == "delete":
            data = data[:p] + data[p + arg:]
        elif op == "truncate":
            data = data[:p]
        elif op == "repeat-line":
            a = data.rfind(b"\n", 0, p) + 1
            b = data.find(b"\n", p)
            b = len(data) if b < 0 else b + 1
            data = data[:b] + data[a:b] + data[b:]
    return data


def pack(data: bytes, how: str) -> bytes:
    if how == "gzip":
        return gzip.compress(data, mtime=0)
    if how == "gzip-truncated":
        z = gzip.compress(data, mtime=0)
        return z[:max(1, len(z) // 2)]
    if how == "bzip2":
        return bz2.compress(data)
    return data


def n_records(path) -> int | None:
    """Reads in ``path`` by dnaio alone, or None when dnaio cannot read it."""
    try:
        with dnaio.open(str(path)) as fh:
            return sum(1 for _ in fh)
    except Exception:
        return None


def check_run(capsys, gfa: bytes, fq: bytes, *opts):
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        g, r, out = d / "g.gfa", d / "r.fq", d / "out.gaf"
        g.write_bytes(gfa)
        r.write_bytes(fq)
        capsys.readouterr()
        try:
            code = cli.main(["align", str(g), str(r), "-o", str(out), "--variant", "v0", "-q",
                             *opts])
        except SystemExit as exc:
            code = exc.code
        err = capsys.readouterr().err.splitlines()
        assert g.read_bytes() == gfa and r.read_bytes() == fq, "an input was modified"
        assert sorted(p.name for p in d.iterdir() if p.name not in ("g.gfa", "r.fq", "out.gaf")) == []
        if code == 0:
            n = n_records(r)
            lines = out.read_bytes().split(b"\n")
            assert lines[-1] == b"" and n is not None and len(lines) - 1 == n, (n, len(lines), err)
            for ln in lines[:-1]:
                f = ln.split(b"\t")
                assert len(f) >= 12 and f[0] and f[1].isdigit(), ln
        else:
            assert code == 1, (code, err)
            errs = [ln for ln in err if not ln.startswith("s2g: warning:")]
            assert len(errs) == 1 and errs[0].startswith("s2g: error: "), err
            assert not out.exists()
        return code


@FUZZ
@given(ops=st.lists(mutation, max_size=4), how=packing)
def test_mutated_gfa(capsys, ops, how):
    check_run(capsys, pack(mutate(GFA, ops), how), FQ)


@FUZZ
@given(ops=st.lists(mutation, max_size=4), how=packing, batch=st.sampled_from(["1", "3", "100"]))
def test_mutated_fastq(capsys, ops, how, batch):
    check_run(capsys, GFA, pack(mutate(FQ, ops), how), "--batch-size", batch)


def test_the_unmutated_inputs_align(capsys):
    """The fuzzed inputs start from files that align (so the tests above reach the DP)."""
    assert check_run(capsys, GFA, FQ) == 0
    assert check_run(capsys, gzip.compress(GFA), bz2.compress(FQ)) == 0


@pytest.mark.parametrize("gfa,fq", [
    (b"S\tz\t\n", FQ),                                    # zero-length segment
    (b"\xef\xbb\xbfS\t1\tACGT\n", b"@r\nAC\xffGT\n+\nIIIII\n"),
    (GFA.replace(b"S\t2\tG", b"S\t2\tX"), FQ),
    (gzip.compress(GFA)[:30], FQ),
    (GFA, gzip.compress(FQ * 50)[:100]),
    (GFA, FQ.replace(b"+\nIIIIIIIII\n", b"+\nIIII\n")),
], ids=["zero-length", "bad-byte-in-read", "X-in-graph", "truncated-gfa-gz", "truncated-fq-gz",
        "quality-length"])
def test_known_hostile_inputs_are_one_error_line(capsys, gfa, fq):
    assert check_run(capsys, gfa, fq) == 1
