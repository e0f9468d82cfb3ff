"""Issue #40: what a new user met on the landed CLI. Inputs, indexes and caches that an
``-o`` would have replaced; messages that pointed the wrong way; README claims checked
against what s2g does.

Most checks call ``s2g.cli.main`` in this process (kernels compiled once); standard input
and pipes need a real process.
"""
from __future__ import annotations

import argparse
import io
import os
import shutil
import subprocess
import sys

import pytest

from cli_helpers import main, one_error
from conftest import REPO
from s2g import cli
from s2g.output import reader_gone

EXAMPLE_GFA = REPO / "graphs" / "example.gfa"
EXAMPLE_FQ = REPO / "graphs" / "example.fq"


def _env():
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("S2G_DEBUG", None)
    return env


def fastq_records(n):
    lines = EXAMPLE_FQ.read_text().splitlines()
    return lines[:4 * n]


@pytest.fixture
def example(tmp_path):
    """A copy of graphs/example.gfa and its first 4 reads, in tmp_path."""
    g, r = tmp_path / "g.gfa", tmp_path / "r.fq"
    shutil.copy(EXAMPLE_GFA, g)
    r.write_text("\n".join(fastq_records(4)) + "\n")
    return g, r


def snapshot(*paths):
    return {p: (p.read_bytes() if p.exists() else None) for p in paths}


# ------------------------------------------------------------ item 2: -o never replaces an input

def test_output_that_is_the_standard_input_file_is_refused(example, tmp_path):
    g, r = example
    before = r.read_bytes()
    with open(r, "rb") as stdin:
        p = subprocess.run([sys.executable, "-m", "s2g", "align", g, "-", "-o", r,
                            "--variant", "v0"], stdin=stdin, capture_output=True, text=True,
                           env=_env(), timeout=300)
    assert p.returncode == 1, p.stderr
    assert p.stderr.startswith("s2g: error: -o ") and "standard input" in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr
    assert r.read_bytes() == before


def test_output_that_is_the_seed_index_or_graph_cache_is_refused(example, tmp_path, capsys,
                                                                  monkeypatch):
    g, r = example
    monkeypatch.chdir(tmp_path)
    idx, cache, other = tmp_path / "g.gfa.s2gi", tmp_path / "g.gfa.s2gg", tmp_path / "mine.s2gi"
    # not there yet: the path this run would build the index at / write the cache at
    for out, extra in (("g.gfa.s2gi", ("--seeded",)), ("./g.gfa.s2gi", ()),
                       (str(tmp_path / "sub" / ".." / "g.gfa.s2gg"), ()),
                       ("mine.s2gi", ("--index", other))):
        (tmp_path / "sub").mkdir(exist_ok=True)
        code, _, err = main(capsys, "align", "g.gfa", r, "-o", out, "--variant", "v0", *extra)
        one_error(code, err, f"-o {out} is the ", "choose another output")
        assert not idx.exists() and not cache.exists() and not other.exists()
    # there: the same file however it is named (relative, ./, symlink, hard link)
    idx.write_bytes(b"index bytes")
    cache.write_bytes(b"cache bytes")
    os.symlink(idx, tmp_path / "idx-link")
    os.link(cache, tmp_path / "cache-hardlink")
    before = snapshot(idx, cache)
    for out, what in (("./g.gfa.s2gi", "seed index"), ("idx-link", "seed index"),
                      ("g.gfa.s2gg", "graph cache"), ("cache-hardlink", "graph cache")):
        code, _, err = main(capsys, "align", g, r, "-o", out, "--variant", "v0", "--exact")
        one_error(code, err, what)
    assert snapshot(idx, cache) == before
    assert not [p for p in os.listdir(tmp_path) if "s2g-tmp" in p]


def test_index_output_that_is_the_graph_or_its_cache_is_refused(example, tmp_path, capsys,
                                                               monkeypatch):
    g, _ = example
    monkeypatch.chdir(tmp_path)
    cache = tmp_path / "g.gfa.s2gg"
    code, _, err = main(capsys, "index", "g.gfa", "-o", "./g.gfa.s2gg")
    one_error(code, err, "graph cache")
    assert not cache.exists()
    os.symlink(g, tmp_path / "g-link.gfa")
    before = snapshot(g)
    code, _, err = main(capsys, "index", "g.gfa", "-o", "g-link.gfa")
    one_error(code, err, "is the input file")
    assert snapshot(g) == before


# --------------------------------------------------------------- item 7: messages that mislead

def test_non_ascii_letter_names_its_line_and_record(tmp_path, capsys):
    lines = fastq_records(8)
    seq = lines[21]                     # record 6's sequence (line 22)
    lines[21] = seq[:10] + "\u00e9" + seq[11:]
    r = tmp_path / "r.fq"
    r.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, _, err = main(capsys, "align", EXAMPLE_GFA, r, "--variant", "v0")
    msg = one_error(code, err, "line 22", "record 6", "'\u00e9'", "column 11", "ASCII")
    assert "unknown line" not in msg and "first record" not in msg
    rfd, wfd = os.pipe()                # a pipe cannot be read twice: what is known
    try:
        os.write(wfd, r.read_bytes())
        os.close(wfd)
        code, _, err = main(capsys, "align", EXAMPLE_GFA, f"/dev/fd/{rfd}", "--variant", "v0")
    finally:
        os.close(rfd)
    one_error(code, err, "non-ASCII", "record 1 or a later one")
    fa = tmp_path / "r.fa"              # FASTA is read as text: a byte that is not UTF-8
    fa.write_bytes(b">r1\nACGT\n>r\xff2\nACGT\n")
    code, _, err = main(capsys, "align", EXAMPLE_GFA, fa, "--variant", "v0")
    one_error(code, err, "line 3", "record 2", "0xff")


def test_graph_from_standard_input_says_it_needs_a_file(tmp_path, capsys):
    r = tmp_path / "r.fq"
    r.write_text("\n".join(fastq_records(1)) + "\n")
    for args in (("align", "-", r), ("index", "-"), ("info", "-")):
        code, _, err = main(capsys, *args)
        msg = one_error(code, err, "standard input", "file")
        assert "no such file" not in msg


def test_index_of_a_pipe_suggests_output_option(capsys):
    """``s2g index <(cat g.gfa)``: the default index path /dev/fd/N.s2gi cannot exist."""
    rfd, wfd = os.pipe()
    try:
        os.write(wfd, EXAMPLE_GFA.read_bytes())     # 28 kB: fits in the pipe
        os.close(wfd)
        code, _, err = main(capsys, "index", f"/dev/fd/{rfd}")
    finally:
        os.close(rfd)
    msg = one_error(code, err, "-o FILE")
    assert "cannot write the index: No such file" not in msg


def test_random_bytes_are_not_a_gfa_file(tmp_path, capsys):
    import random
    rnd = random.Random(40)
    g = tmp_path / "noise.gfa"
    r = tmp_path / "r.fq"
    r.write_text("\n".join(fastq_records(1)) + "\n")
    # the case: the first line starts with 'O' (a GFA2 record letter)
    g.write_bytes(b"O\x93\x11k" + bytes(rnd.randrange(256) for _ in range(3000)))
    code, _, err = main(capsys, "align", g, r, "--variant", "v0")
    msg = one_error(code, err, "not a GFA file")
    assert "GFA2" not in msg
    for seed in range(5):
        rnd = random.Random(seed)
        g.write_bytes(bytes(rnd.randrange(256) for _ in range(3000)))
        code, _, err = main(capsys, "info", g)
        one_error(code, err, "not a GFA file")


def _subcommands():
    ap = cli.build_parser()
    sub = next(a for a in ap._actions if isinstance(a, argparse._SubParsersAction))
    return [("s2g", ap)] + sorted(sub.choices.items())


def test_help_gives_each_default_once():
    """ArgumentDefaultsHelpFormatter appended "(default: None)" and a second default to
    options whose help already said it."""
    bad = []
    for name, parser in _subcommands():
        fmt = parser._get_formatter()
        for action in parser._actions:
            if action.help in (None, argparse.SUPPRESS):
                continue
            text = fmt._expand_help(action)
            if text.lower().count("default") > 1 or "(default: None)" in text:
                bad.append(f"{name} {'/'.join(action.option_strings) or action.dest}: {text}")
        full = parser.format_help()
        assert "(default: None)" not in full, name
    assert not bad, "\n".join(bad)


def test_warnings_come_before_the_summary(tmp_path, capsys):
    g = tmp_path / "cj.gfa"             # a C line: "ignored 1 C (containment) line(s)"
    g.write_text(EXAMPLE_GFA.read_text() + "C\t1\t+\t2\t+\t0\t*\n")
    r = tmp_path / "r.fq"
    rec = fastq_records(2)
    rec[4] = "@"                        # record 2 without a name: a warning counts it
    r.write_text("\n".join(rec) + "\n")
    code, _, err = main(capsys, "align", g, r, "--variant", "v0", "-o", tmp_path / "o.gaf")
    assert code == 0, err
    warn = [k for k, ln in enumerate(err) if ln.startswith("s2g: warning:")]
    summary = [k for k, ln in enumerate(err) if " reads, " in ln and "aligned" in ln]
    assert len(warn) == 2 and len(summary) == 1, err
    assert max(warn) < summary[0], err


@pytest.mark.parametrize("args,prog", [
    (("align", "g.gfa", "r.fq", "--bogus"), "s2g align"),
    (("align", "g.gfa", "r1.fq", "r2.fq", "extra-arg"), "s2g align"),   # a third reads file
    (("index", "g.gfa", "--nope"), "s2g index"),
    (("align", "g.gfa"), "s2g align"),
])
def test_usage_errors_point_to_the_subcommands_help(capsys, args, prog):
    code, _, err = main(capsys, *args)
    assert code == 2, err
    assert len(err) == 1 and err[0].startswith("s2g: error: "), err
    assert err[0].endswith(f"(see '{prog} --help')"), err


@pytest.mark.parametrize("opt,value,flag", [
    ("-N", "-1", "-N/--secondary"),
    ("--max-traceback-cells", "0", "--max-traceback-cells"),
    ("--max-occ", "0", "--max-occ"),
    ("--max-windows", "0", "--max-windows"),
    ("--secondary-ratio", "1.5", "--secondary-ratio"),
    ("--secondary-ratio", "-0.1", "--secondary-ratio"),
    ("--max-read-len", "0", "--max-read-len"),
    ("--batch-size", "0", "--batch-size"),
])
def test_out_of_range_options_are_refused_before_reading(tmp_path, capsys, opt, value, flag):
    # neither file exists: the option is refused before anything is opened
    code, _, err = main(capsys, "align", tmp_path / "none.gfa", tmp_path / "none.fq", opt, value)
    one_error(code, err, flag, value)


def test_dask_counts_are_checked_too(tmp_path, capsys):
    opts = {o for a in cli.build_parser()._subparsers._group_actions[0].choices["align"]._actions
            for o in a.option_strings}
    if "--dask-workers" not in opts:
        pytest.skip("no --dask options here (dask not installed)")
    code, _, err = main(capsys, "align", tmp_path / "none.gfa", tmp_path / "none.fq",
                        "--dask-workers", "0")
    one_error(code, err, "--dask-workers")


def test_scoring_bounds_say_the_same_thing_whatever_the_sign(capsys, tmp_path):
    msgs = {}
    for v in ("0", "-2"):
        code, _, err = main(capsys, "align", tmp_path / "none.gfa", tmp_path / "none.fq",
                            "--match", v)
        msgs[v] = one_error(code, err, "--match must be >= 1", f"got {v}")
    code, _, err = main(capsys, "align", tmp_path / "none.gfa", tmp_path / "none.fq",
                        "--mismatch", "-1")
    one_error(code, err, "--mismatch must be >= 0", "--mismatch 1")
    code, _, err = main(capsys, "align", tmp_path / "none.gfa", tmp_path / "none.fq",
                        "--gap-extend", "-2")
    one_error(code, err, "--gap-extend must be >= 1")


def test_damaged_graph_cache_note_is_s2gs_own(example, capsys):
    g, r = example
    (g.parent / "g.gfa.s2gg").write_bytes(b"\x00not a cache\n" * 40)
    code, _, err = main(capsys, "align", g, r, "--variant", "v0", "-o", g.parent / "o.gaf")
    assert code == 0, err
    notes = [ln for ln in err if "g.gfa.s2gg" in ln]
    assert len(notes) == 1 and "damaged graph cache" in notes[0], err
    assert "allow_pickle" not in notes[0] and "numpy" not in notes[0].lower(), notes
    assert "pars" in notes[0]          # and says what happens instead


class _PipeThatCloses(io.RawIOBase):
    """stdout's buffer whose reader goes away after the first write (``| head``)."""

    def __init__(self):
        self.writes = 0

    def writable(self):
        return True

    def write(self, b):
        self.writes += 1
        if self.writes > 1:
            raise BrokenPipeError(32, "Broken pipe")
        return len(b)

    def flush(self):
        pass


def test_closed_pipe_says_where_the_output_was_cut(example, capsys, monkeypatch):
    g, r = example              # 4 reads, 2 per batch: the second batch's write fails
    pipe = _PipeThatCloses()
    capsys.readouterr()
    monkeypatch.setattr(sys, "stdout", argparse.Namespace(buffer=pipe))
    code = cli.main(["align", str(g), str(r), "--variant", "v0", "--batch-size", "2"])
    err = capsys.readouterr().err.splitlines()
    assert code == 0, err
    assert not any(" reads, " in ln and "aligned" in ln for ln in err), err
    cut = [ln for ln in err if "output cut" in ln]
    assert len(cut) == 1 and "2 GAF lines" in cut[0], err


def test_reader_gone_sees_a_closed_pipe():
    rfd, wfd = os.pipe()
    with open(wfd, "wb", buffering=0) as w:
        assert not reader_gone(w)
        os.close(rfd)
        assert reader_gone(w)
    with open(os.devnull, "wb") as fh:
        assert not reader_gone(fh)


def test_pipe_closed_before_the_first_line(example):
    g, r = example
    p = subprocess.Popen([sys.executable, "-m", "s2g", "align", g, r, "--variant", "v0"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
    p.stdout.close()                    # the reader is gone before s2g writes
    _, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    lines = err.strip().splitlines()
    assert lines and "output cut" in lines[-1] and "0 GAF lines" in lines[-1], err
    assert not any(" reads, " in ln and "aligned" in ln for ln in lines), err


# ------------------------------------------------------------------- item 8: README claims

def _readme():
    return " ".join((REPO / "README.md").read_text().split())

def test_names_segment_utf8_kept_read_non_ascii_refused(tmp_path, capsys):
    """README: segment names are written byte for byte; non-ASCII read names are refused."""
    g = tmp_path / "u.gfa"
    g.write_bytes(b"H\tVN:Z:1.0\nS\ts\xc3\xa91\tACGTACGTACGTAAACCCGGGTTT\n"   # UTF-8 'e-acute'
                  b"S\ts\xff2\tTTTGGGCCCAAACCCAAATTT\n"                           # not UTF-8
                  b"L\ts\xc3\xa91\t+\ts\xff2\t+\t0M\n")
    r = tmp_path / "r.fa"
    r.write_text(">r\nACGTACGTACGTAAACCCGGGTTTTTTGGGCCCAAACC\n")
    out = tmp_path / "o.gaf"
    code, _, err = main(capsys, "align", g, r, "--variant", "v0", "-o", out, "-q")
    assert code == 0, err
    assert out.read_bytes().split(b"\t")[5] == b">s\xc3\xa91>s\xff2"
    r.write_text(">r\u00e9\nACGT\n", encoding="utf-8")
    code, _, err = main(capsys, "align", g, r, "--variant", "v0")
    one_error(code, err, "line 1", "header")
    text = _readme()            # and the README says just that, in both places
    assert "Read and segment names are written byte for byte" not in text
    assert "read names are ASCII (non-ASCII ones are refused on input" in text


def test_bundled_size_graph_leaves_no_cache_behind(example, capsys):
    """README: ``s2g align`` writes no graph cache for graphs as small as the bundled ones
    (the cache that ``s2g index`` writes is what a later align loads)."""
    g, r = example
    code, _, err = main(capsys, "align", g, r, "--variant", "v0", "-o", g.parent / "o.gaf")
    assert code == 0, err
    assert sorted(p.name for p in g.parent.iterdir()) == ["g.gfa", "o.gaf", "r.fq"]
    text = _readme()
    assert "small graph's 0.4-0.5 s: `s2g align graphs/example.gfa` spends" not in text
    assert "(`s2g align` alone writes none for a graph this small)" in text
