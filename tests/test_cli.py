"""The command line, as a user runs it: ``python -m s2g ...`` in a subprocess.

Contract (ARCHITECTURE.md, STYLE.md habit 12): results on stdout or ``-o``; errors as
one stderr line ``s2g: error: ...`` with exit status 1 (2 for usage errors), never a
Python traceback.
"""
from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys

import pytest

import naive
from conftest import REPO

GFA = ("H\tVN:Z:1.0\nS\t1\tACGTACGGA\nS\t2\tG\nS\t3\tC\nS\t4\tTTGCAAT\n"
       "L\t1\t+\t2\t+\t0M\nL\t1\t+\t3\t+\t0M\nL\t2\t+\t4\t+\t0M\nL\t3\t+\t4\t+\t0M\n")
READS = [("a", "ACGTACGGAGTTGC"), ("b", naive.revcomp("CGGACTTGCAA")), ("c", "GGATTTGCA"),
         ("empty", ""), ("ns", "NNNN"), ("a", "TACGGACTTG")]


def s2g_cli(*args, cwd=None):
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("S2G_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "s2g", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=300)


def assert_error(p, code=1, *, contains=()):
    err = p.stderr.strip().splitlines()
    assert p.returncode == code, f"exit {p.returncode}, stderr: {p.stderr!r}"
    assert "Traceback" not in p.stderr, p.stderr
    if code == 1:
        errs = [ln for ln in err if ln.startswith("s2g: error:")]
        assert len(errs) == 1 and len([ln for ln in err if not ln.startswith("s2g: warning:")]) == 1, \
            f"expected exactly one 's2g: error:' line, got {err!r}"
        for c in contains:
            assert c in errs[0], f"{c!r} not in {errs[0]!r}"
    else:
        assert err and "error:" in err[-1], err


@pytest.fixture
def files(gfa_file, reads_file):
    return gfa_file(GFA), reads_file(READS, "fastq")


def test_align_writes_one_checked_line_per_read(files, tmp_path):
    gfa, fq = files
    out = tmp_path / "out.gaf"
    p = s2g_cli("align", gfa, fq, "-o", out, "--variant", "v0")
    assert p.returncode == 0, p.stderr
    lines = out.read_text().splitlines()
    assert [ln.split("\t")[0] for ln in lines] == [n for n, _ in READS]
    segs, links = naive.parse_gfa_text(GFA)
    for (name, seq), line in zip(READS, lines):
        expect = naive.align_gfa_text(GFA, seq)[0] if seq else None
        if expect is None:
            assert line.split("\t")[4:6] == ["*", "*"], line
        else:
            naive.check_gaf_line(line, segs, links, seq, "local", 2, 4, 4, 2, expected_score=expect)
    # stdout when there is no -o, identical to the file
    q = s2g_cli("align", gfa, fq, "--variant", "v0", "--quiet")
    assert q.returncode == 0 and q.stdout.splitlines() == lines


def test_timings_and_traceback_on_cpu(files, tmp_path):
    """--timings prints one line of stage seconds; --traceback-on cpu and small batches
    give the same GAF as the defaults."""
    gfa, fq = files
    a, b = tmp_path / "a.gaf", tmp_path / "b.gaf"
    p = s2g_cli("align", gfa, fq, "-o", a, "--variant", "cpu", "--timings")
    assert p.returncode == 0, p.stderr
    line = [ln for ln in p.stderr.splitlines() if "seconds per stage" in ln]
    assert len(line) == 1 and "load graph" in line[0] and "traceback (CPU)" in line[0] \
        and "wall" in line[0], p.stderr
    mem = [ln for ln in p.stderr.splitlines() if ln.startswith("s2g: memory: peak RSS ")]
    assert len(mem) == 1 and int(mem[0].split()[4].replace(",", "")) > 10, p.stderr
    # the start-up's milestones, in time order, ending with the first output
    up = [ln for ln in p.stderr.splitlines() if ln.startswith("s2g: start-up, seconds ")]
    assert len(up) == 1, p.stderr
    names = [m.rsplit(" ", 1) for m in up[0].split(": ", 2)[2].split(", ")]
    at = [float(v) for _, v in names]
    assert at == sorted(at) and [n for n, _ in names][-3:] == [
        "pipeline starts", "aligning", "first output"], up
    q = s2g_cli("align", gfa, fq, "-o", b, "--variant", "cpu", "--traceback-on", "cpu",
                "--batch-size", "2")
    assert q.returncode == 0, q.stderr
    assert a.read_text() == b.read_text() and len(a.read_text().splitlines()) == len(READS)


@pytest.mark.parametrize("opts,mode,scoring,strands", [
    (["--mode", "global", "--match", "3", "--mismatch", "1", "--gap-open", "0", "--gap-extend", "1"],
     "global", (3, 1, 0, 1), "both"),
    (["--mode", "semiglobal", "-A", "1", "-B", "2", "-O", "5", "-E", "3"], "semiglobal", (1, 2, 5, 3), "both"),
    (["--strands", "forward"], "local", (2, 4, 4, 2), "forward"),
], ids=["global-scoring", "semiglobal-short-flags", "forward"])
def test_mode_scoring_and_strand_options(files, opts, mode, scoring, strands):
    gfa, fq = files
    p = s2g_cli("align", gfa, fq, "--variant", "cpu", *opts)
    assert p.returncode == 0, p.stderr
    segs, links = naive.parse_gfa_text(GFA)
    for (name, seq), line in zip(READS, p.stdout.splitlines()):
        expect = naive.align_gfa_text(GFA, seq, mode, *scoring, strands=strands)[0] if seq else None
        if expect is None:
            assert line.split("\t")[5] == "*"
        else:
            naive.check_gaf_line(line, segs, links, seq, mode, *scoring, strands=strands,
                                 expected_score=expect)


def test_variants_v0_cpu_auto_agree_and_no_traceback_keeps_scores(files):
    gfa, fq = files
    outs = {v: s2g_cli("align", gfa, fq, "--variant", v, "-q") for v in ("v0", "cpu", "auto")}
    assert all(p.returncode == 0 for p in outs.values()), {v: p.stderr for v, p in outs.items()}
    assert outs["v0"].stdout == outs["cpu"].stdout
    # auto may pick a GPU variant on a GPU machine: same scores and paths still
    assert outs["auto"].stdout == outs["v0"].stdout
    p = s2g_cli("align", gfa, fq, "--no-traceback", "-q")
    assert p.returncode == 0, p.stderr
    for full, short in zip(outs["v0"].stdout.splitlines(), p.stdout.splitlines()):
        f, s = full.split("\t"), short.split("\t")
        assert s[:2] == f[:2] and s[2:12] == ["0", "0", "*", "*", "0", "0", "0", "0", "0", "0"]
        assert [t for t in s[12:]] == [t for t in f[12:] if t.startswith("AS:i:")]


def test_gzip_input_and_empty_reads_file(gfa_file, tmp_path):
    gfa = gfa_file(GFA)
    gz = tmp_path / "r.fa.gz"
    with gzip.open(gz, "wt") as fh:
        fh.write(">x\nACGTACGGAG\n")
    p = s2g_cli("align", gfa, gz)
    assert p.returncode == 0 and p.stdout.startswith("x\t10\t0\t10\t+\t>1>2\t"), (p.stdout, p.stderr)
    empty = tmp_path / "empty.fq"
    empty.write_text("")
    p = s2g_cli("align", gfa, empty)
    assert p.returncode == 0 and p.stdout == ""
    assert "no reads" in p.stderr and "Traceback" not in p.stderr


def test_break_cycles(gfa_file, reads_file):
    gfa = gfa_file("S\t1\tACGT\nS\t2\tGGA\nL\t1\t+\t2\t+\t0M\nL\t2\t+\t1\t+\t0M\n")
    fa = reads_file([("r", "ACGTGGAACGT")])
    # default: exact on the cyclic graph (cycles unrolled; tests/test_cyclic.py)
    p = s2g_cli("align", gfa, fa)
    assert p.returncode == 0 and "\t>1>2>1\t" in p.stdout and "\tAS:i:22\t" in p.stdout, p
    assert_error(s2g_cli("align", gfa, fa, "--mode", "global"), contains=("cyclic", "--break-cycles"))
    p = s2g_cli("align", gfa, fa, "--break-cycles")
    assert p.returncode == 0, p.stderr
    assert "s2g: warning:" in p.stderr and "removed" in p.stderr
    assert p.stdout.count("\n") == 1 and "\tAS:i:" in p.stdout and "AS:i:22" not in p.stdout


BAD_GFA = [
    ("malformed-S", "S\t1\n", "malformed S line"),
    ("malformed-L", "S\t1\tA\nL\t1\t+\n", "malformed L line"),
    ("malformed-W", "S\t1\tA\nW\tx\t0\n", "malformed W line"),
    ("unknown-segment", "S\t1\tA\nL\t1\t+\t9\t+\t0M\n", "unknown segment '9'"),
    ("star", "S\t1\t*\n", "no sequence"),
    ("overlap", "S\t1\tA\nS\t2\tC\nL\t1\t+\t2\t+\t5M\n", "overlap"),
    ("empty", "H\tVN:Z:1.0\n", "empty graph"),
    ("gfa2", "S\t1\tACGT\nE\te\t1+\t1+\t0\t0\t0\t0\t*\n", "GFA2"),
    ("duplicate", "S\t1\tA\nS\t1\tA\n", "duplicate segment"),
]


@pytest.mark.parametrize("text,msg", [b[1:] for b in BAD_GFA], ids=[b[0] for b in BAD_GFA])
def test_bad_graph_is_one_error_line(gfa_file, reads_file, text, msg):
    assert_error(s2g_cli("align", gfa_file(text), reads_file([("r", "ACGT")])), contains=(msg,))


def test_bad_files_reads_and_options(files, tmp_path, reads_file):
    gfa, fq = files
    notfasta = tmp_path / "notes.txt"
    notfasta.write_text("hello\nworld\n")
    cases = [
        (("align", tmp_path / "nope.gfa", fq), ("no such file",)),
        (("align", gfa, tmp_path / "nope.fq"), ("no such file",)),
        (("align", tmp_path, fq), ("directory",)),
        (("align", gfa, reads_file([("r1", "ACGT"), ("bad", "AC!GT")])), ("'bad'", "position 3")),
        (("align", gfa, notfasta), ("not a FASTA/FASTQ",)),
        (("align", gfa, fq, "--gap-extend", "0"), ("--gap-extend",)),
        (("align", gfa, fq, "--mismatch", "-1"), ("--mismatch",)),
        (("align", gfa, fq, "--variant", "v9"), ("unknown variant 'v9'",)),
        (("align", gfa, fq, "-o", tmp_path / "no" / "dir" / "x.gaf"), ("cannot write",)),
    ]
    for args, contains in cases:
        assert_error(s2g_cli(*args), contains=contains)


@pytest.mark.parametrize("args", [
    ("align", "g.gfa"),                                   # missing READS
    ("align", "g.gfa", "r.fq", "--mode", "glocal"),       # unknown mode
    ("align", "g.gfa", "r.fq", "--strands", "reverse"),
    ("align", "g.gfa", "r.fq", "--match", "two"),
    ("frobnicate",),
], ids=["missing-arg", "bad-mode", "bad-strands", "non-integer", "unknown-command"])
def test_usage_errors_exit_2(args):
    assert_error(s2g_cli(*args), code=2)


def test_info_and_variants(gfa_file):
    gfa = gfa_file(GFA)
    p = s2g_cli("info", gfa, "--json")
    assert p.returncode == 0, p.stderr
    info = json.loads(p.stdout)
    assert (info["segments"], info["links"], info["bases"], info["components"]) == (4, 4, 18, 1)
    assert info["dp_nodes"] == 8 and info["max_in_degree"] == 2
    p = s2g_cli("info", gfa)
    assert p.returncode == 0 and "segments" in p.stdout
    p = s2g_cli("variants")
    assert p.returncode == 0
    names = [ln.split()[0] for ln in p.stdout.splitlines() if ln and not ln[0].isspace()]
    assert {"v0", "cpu"} <= set(names)


def test_simulate_matches_the_api(tmp_path):
    from s2g import simulate

    p = s2g_cli("simulate", tmp_path / "cli", "--total-bases", 800, "--node-len", 20, "--branching", 3,
                "--reads", 12, "--read-len", 40, "--error-rate", 0.05, "--reverse-fraction", 0.3,
                "--seed", 4)
    assert p.returncode == 0, p.stderr
    api = simulate.simulate(str(tmp_path / "api"), 800, 20, 3, 12, 40, 0.05, 0.3, seed=4)
    for ext, other in zip((".gfa", ".fq", ".truth.tsv"), api):
        assert (tmp_path / f"cli{ext}").read_text() == open(other).read()
    assert_error(s2g_cli("simulate", tmp_path / "x", "--reads", 0), contains=("--reads",))


def test_help_does_not_touch_cuda():
    code = ("import sys; from s2g import cli\n"
            "try:\n    cli.main(['--help'])\nexcept SystemExit as e:\n    assert e.code == 0\n"
            "try:\n    cli.main(['align', '--help'])\nexcept SystemExit as e:\n    assert e.code == 0\n"
            "bad = [m for m in sys.modules if m.startswith(('numba.cuda', 'cuda'))]\n"
            "assert not bad, bad\n")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "align" in p.stdout and "--break-cycles" in p.stdout


def test_warmup_subcommand_is_wired(capsys, monkeypatch):
    """`s2g warmup` reaches s2g.warmup (here with the disk cache off: nothing to compile)."""
    from s2g.cli import main
    from s2g import config
    monkeypatch.setenv("S2G_NO_CACHE", "1")
    config.reset()                         # the environment is read again
    assert main(["warmup", "-v", "cpu"]) == 0
    assert "nothing to do" in capsys.readouterr().err


def test_gpu_busy_share_from_the_kernels_counters():
    """--timings' GPU busy line: the kernels' CUDA-event seconds (full-graph, window and
    traceback kernels; long launches are inside the traceback's) over the align stage's
    span, to the traceback stage's end where that is later (its kernels count: seeded
    long windows are traced there); nothing where no kernel was timed."""
    from s2g.summary import gpu_busy
    prof = {"fast": {"kernel": 0.5}, "fast_windows": {"kernel": 0.25},
            "gpu_traceback": {"kernel": 0.25, "long_kernel": 0.1}}
    assert gpu_busy(prof, {"align": [1.0, 5.0]}) == (1.0, 4.0, False)
    assert gpu_busy(prof, {"align": [1.0, 5.0], "traceback": [5.0, 6.5]}) == (1.0, 5.5, True)
    assert gpu_busy(prof, {"align": [1.0, 5.0], "traceback": [2.0, 4.0]}) == (1.0, 4.0, False)
    assert gpu_busy({"fast": {"kernel": 0.0}}, {"align": [1.0, 5.0]}) is None
    assert gpu_busy(prof, {}) is None


def test_timings_fast_window_line():
    """--timings' fast window kernel line: counts, GCUPS, and where the launch calls'
    seconds go (tables, uploads, the wait at the stream's synchronize); counters of an
    older worker without the last two read as 0."""
    from s2g.summary import fast_windows_line
    fw = {"launches": 3, "windows": 1200, "cells": 4_000_000_000, "kernel": 0.02,
          "tables": 0.1, "upload": 0.05, "wall": 0.5, "sync": 0.25}
    line = fast_windows_line(fw)
    assert line == ("s2g: fast window kernel: 1,200 windows, 4,000,000,000 cells, 0.02 s, "
                    "200.0 GCUPS (tables 0.10 s, uploads 0.05 s, waiting for the kernels "
                    "0.25 s, launch calls 0.50 s; the copies pass's included)")
    old = {k: v for k, v in fw.items() if k not in ("upload", "sync")}
    assert "uploads 0.00 s, waiting for the kernels 0.00 s" in fast_windows_line(old)


def test_the_command_leaves_at_once_after_flushing(monkeypatch, capsys):
    """s2g.__main__._leave (knob fast_exit): os._exit with the command's status once
    stdout and stderr are flushed; the normal exit with the knob off, where a process of
    ours still runs, or for a non-integer status."""
    import multiprocessing

    from s2g import __main__ as entry
    from s2g import config
    left = []

    class Left(Exception):
        pass

    def fake_exit(code):
        left.append(code)
        raise Left

    monkeypatch.setattr(entry.os, "_exit", fake_exit)
    print("last line", end="")
    with pytest.raises(Left):
        entry._leave(0)
    assert left == [0] and capsys.readouterr().out == "last line"
    for code in (None, 3):
        with pytest.raises(Left):
            entry._leave(code)
    assert left == [0, 0, 3]
    with pytest.raises(SystemExit):
        entry._leave("s2g: error")
    monkeypatch.setattr(multiprocessing, "active_children", lambda: [object()])
    with pytest.raises(SystemExit) as exc:
        entry._leave(1)
    assert exc.value.code == 1 and left == [0, 0, 3]
    monkeypatch.setattr(multiprocessing, "active_children", lambda: [])
    config.configure(fast_exit=False)
    try:
        with pytest.raises(SystemExit):
            entry._leave(0)
    finally:
        config.reset()
    assert left == [0, 0, 3]


def test_the_command_writes_everything_before_it_leaves(tmp_path):
    """`python -m s2g` (fast_exit on): the GAF on stdout through a pipe is whole and the
    summary line is on stderr."""
    gfa, fq = REPO / "graphs" / "example.gfa", REPO / "graphs" / "example.fq"
    p = s2g_cli("align", gfa, fq)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert len(lines) == sum(1 for _ in open(fq)) // 4
    assert "reads/s" in p.stderr


def test_ramped_batches_and_two_align_threads_write_the_same_gaf(tmp_path):
    """Knobs batch_ramp (first and last batches in pieces), align_workers (two batches
    aligned at once) and batch_bases (batches cut at 1,500 bases: ~10 of these reads):
    `s2g align --seeded` writes the GAF of whole batches in one thread, byte for byte, and
    counts every read."""
    gfa, fq = REPO / "graphs" / "cactus-BRCA2.gfa", REPO / "graphs" / "cactus-BRCA2.100.fq"
    outs = []
    for k, cfg in enumerate(("batch_ramp=0,align_workers=1", "batch_ramp=2,align_workers=2",
                             "batch_bases=1500")):
        out = tmp_path / f"{k}.gaf"
        env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                   S2G_CONFIG=cfg)
        p = subprocess.run([sys.executable, "-m", "s2g", "align", str(gfa), str(fq), "--seeded",
                            "--batch-size", "24", "-o", str(out)], capture_output=True, text=True,
                           env=env, timeout=600)
        assert p.returncode == 0, p.stderr
        assert "s2g: 100 reads, 100 aligned" in p.stderr, p.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] == outs[2] and outs[0].count(b"\n") == 100
