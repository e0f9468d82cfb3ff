"""Issue 21: hostile input, safe output files, and the CLI conventions users expect.

Most checks call ``s2g.cli.main`` in the test process (the kernels are compiled once);
the signal, stdin and simulator checks need a real process.
"""
from __future__ import annotations

import bz2
import gzip
import lzma
import os
import random
import signal
import subprocess
import sys
import threading
import time

import pytest

from conftest import REPO
from cli_helpers import main, one_error

GFA = ("H\tVN:Z:1.0\nS\t1\tACGTACGGA\nS\t2\tG\nS\t3\tC\nS\t4\tTTGCAAT\n"
       "L\t1\t+\t2\t+\t0M\nL\t1\t+\t3\t+\t0M\nL\t2\t+\t4\t+\t0M\nL\t3\t+\t4\t+\t0M\n")
FQ = "@a\nACGTACGGAGTTGC\n+\nIIIIIIIIIIIIII\n@b\nGGATTTGCA\n+\nIIIIIIIII\n"


@pytest.fixture
def inputs(tmp_path):
    g, r = tmp_path / "g.gfa", tmp_path / "r.fq"
    g.write_text(GFA)
    r.write_text(FQ)
    return g, r


def leftovers(d):
    return sorted(p.name for p in d.iterdir() if "s2g-tmp" in p.name)


# ------------------------------------------------------------------------ output safety

def test_output_that_is_an_input_is_refused(inputs, tmp_path, capsys):
    g, r = inputs
    (tmp_path / "link.fq").symlink_to(r)
    os.mkdir(tmp_path / "sub")
    for out in (g, r, tmp_path / "link.fq", tmp_path / "sub" / ".." / "r.fq"):
        code, _, err = main(capsys, "align", g, r, "-o", out, "--variant", "v0")
        one_error(code, err, "is the input file")
    assert g.read_text() == GFA and r.read_text() == FQ


def test_index_output_that_is_the_graph_is_refused(inputs, capsys):
    g, _ = inputs
    code, _, err = main(capsys, "index", g, "-o", g)
    one_error(code, err, "is the input file")
    assert g.read_text() == GFA


def test_failed_run_keeps_the_old_output_and_leaves_nothing(inputs, tmp_path, capsys):
    g, _ = inputs
    bad = tmp_path / "bad.fq"          # the bad read is in the second batch
    bad.write_text(FQ + "@c\nAC!GT\n+\nIIIII\n")
    prev = tmp_path / "prev.gaf"
    prev.write_text("old\n")
    code, _, err = main(capsys, "align", g, bad, "-o", prev, "--variant", "v0", "--batch-size", 2)
    one_error(code, err, "'c'", "'!'")
    assert prev.read_text() == "old\n"
    new = tmp_path / "new.gaf"
    code, _, err = main(capsys, "align", g, bad, "-o", new, "--variant", "v0", "--batch-size", 2)
    assert code == 1 and not new.exists() and leftovers(tmp_path) == []


def test_finished_run_replaces_the_output_through_a_symlink(inputs, tmp_path, capsys):
    g, r = inputs
    real = tmp_path / "real.gaf"
    real.write_text("old\n")
    os.chmod(real, 0o640)
    (tmp_path / "out.gaf").symlink_to(real)
    code, _, err = main(capsys, "align", g, r, "-o", tmp_path / "out.gaf", "--variant", "v0", "-q")
    assert code == 0, err
    assert (tmp_path / "out.gaf").is_symlink()
    assert [ln.split("\t")[0] for ln in real.read_text().splitlines()] == ["a", "b"]
    assert oct(os.stat(real).st_mode & 0o777) == oct(0o640) and leftovers(tmp_path) == []


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_disk_full_is_one_error_line(inputs, capsys):
    g, r = inputs
    code, _, err = main(capsys, "align", g, r, "-o", "/dev/full", "--variant", "v0")
    one_error(code, err, "/dev/full", "No space left")


def test_closed_stdout_is_one_error_line(inputs, capsys, monkeypatch):
    g, r = inputs
    monkeypatch.setattr(sys, "stdout", None)
    code, _, err = main(capsys, "align", g, r, "--variant", "v0")
    one_error(code, err, "standard output is closed")


def _cli_env():
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("S2G_DEBUG", None)
    return env


def test_stdin_reads_and_broken_pipe(inputs, tmp_path):
    """``-`` reads standard input; a reader that goes away (``| head -1``) ends the run
    quietly."""
    g, r = inputs
    many = tmp_path / "many.fq"
    many.write_text(FQ * 5000)
    sh = (f"{sys.executable} -m s2g align {g} - --variant cpu -q < {many} | head -n 1; "
          "echo \"status ${PIPESTATUS[0]}\"")
    p = subprocess.run(["bash", "-c", sh], capture_output=True, text=True, env=_cli_env(), timeout=300)
    lines = p.stdout.splitlines()
    assert lines[0].startswith("a\t14\t") and lines[-1] == "status 0", (p.stdout, p.stderr)
    assert p.stderr == "", p.stderr


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)],
                         ids=["SIGINT", "SIGTERM"])
def test_signal_mid_run_exits_at_once_and_leaves_no_file(tmp_path, sig, code):
    """A run whose one batch takes minutes (20,000 reads, 20 kbp graph, one core): the
    signal arrives while the kernel runs and is honoured within seconds."""
    from s2g import simulate
    g, r, _ = simulate.simulate(str(tmp_path / "sim"), 20_000, n_reads=20_000, seed=5)
    out = tmp_path / "out.gaf"
    # SIGINT as at a terminal: a pytest-xdist worker ignores it, and an ignored SIGINT is
    # inherited (so Python installs no KeyboardInterrupt handler: a background job's rule)
    p = subprocess.Popen([sys.executable, "-m", "s2g", "align", g, r, "-o", out, "--threads", "1",
                          "--variant", "cpu"], stderr=subprocess.PIPE, text=True, env=_cli_env(),
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        t0 = time.time()                   # wait until the graph is loaded and the kernel runs
        while not (leftovers(tmp_path) or out.exists()) and time.time() - t0 < 120 \
                and p.poll() is None:
            time.sleep(0.2)
        time.sleep(4)
        assert p.poll() is None, p.stderr.read()
        p.send_signal(sig)
        t1 = time.time()
        _, err = p.communicate(timeout=30)
        took = time.time() - t1
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == code, err
    assert took < 5, f"{took:.1f} s after the signal"
    assert not out.exists() and leftovers(tmp_path) == []
    assert err.strip().splitlines()[-1] in ("s2g: interrupted", "s2g: terminated")


# --------------------------------------------------------------------------- inputs

def test_zero_length_segment_is_a_clear_error(tmp_path, inputs, capsys):
    g = tmp_path / "z.gfa"
    g.write_text("S\t1\tACGT\nS\tz\t\nL\t1\t+\tz\t+\t0M\n")
    code, _, err = main(capsys, "align", g, inputs[1], "--variant", "v0")
    one_error(code, err, "z.gfa:2", "'z'", "empty sequence")


def test_byte_order_mark_before_the_first_segment_is_skipped(tmp_path, capsys):
    g = tmp_path / "bom.gfa"
    g.write_bytes(b"\xef\xbb\xbf" + GFA.replace("H\tVN:Z:1.0\n", "").encode())
    code, out, err = main(capsys, "info", g, "--json")
    assert code == 0, err
    assert '"segments": 4' in out


def test_graph_letters_outside_iupac_are_an_error_like_in_reads(tmp_path, inputs, capsys):
    g = tmp_path / "x.gfa"
    g.write_text("S\t1\tACGT\nS\t2\tACXGT\n")
    code, _, err = main(capsys, "align", g, inputs[1], "--variant", "v0")
    one_error(code, err, "x.gfa:2", "'X'", "position 3")
    g.write_text("S\t1\tacgtRYU\n")        # lower case and IUPAC codes are accepted
    code, _, err = main(capsys, "info", g)
    assert code == 0, err


def _pipe_path(data: bytes):
    """A path that reads ``data`` from a pipe (as ``<(...)`` gives), written by a thread."""
    rfd, wfd = os.pipe()

    def feed():
        with os.fdopen(wfd, "wb") as fh:
            fh.write(data)
    threading.Thread(target=feed, daemon=True).start()
    return rfd, f"/dev/fd/{rfd}"


@pytest.mark.skipif(not os.path.isdir("/dev/fd"), reason="no /dev/fd")
def test_graph_and_reads_from_pipes(tmp_path, capsys):
    """Emptiness is decided by reading, not by st_size (0 for a pipe); the GFA is read in
    one pass; compression is sniffed from the bytes."""
    gfd, gpath = _pipe_path(gzip.compress(GFA.encode()))
    rfd, rpath = _pipe_path(FQ.encode())
    try:
        code, out, err = main(capsys, "align", gpath, rpath, "--variant", "v0", "-q")
    finally:
        os.close(gfd)
        os.close(rfd)
    assert code == 0, err
    assert [ln.split("\t")[:2] for ln in out.splitlines()] == [["a", "14"], ["b", "9"]]
    gfd, gpath = _pipe_path(GFA.encode())
    try:
        code, out, err = main(capsys, "info", gpath)
    finally:
        os.close(gfd)
    assert code == 0 and "segments" in out, err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes")
def test_named_fifos_and_validate_on_a_pipe(tmp_path, capsys):
    """A FIFO is opened once (opening it twice hung); --validate, which needs a second
    pass, refuses a pipe with a message instead of hanging or reading nothing."""
    gf, rf = tmp_path / "g.fifo", tmp_path / "r.fifo"
    os.mkfifo(gf)
    os.mkfifo(rf)

    def feed(path, data):
        with open(path, "wb") as fh:
            fh.write(data)
    for path, data in ((gf, GFA.encode()), (rf, gzip.compress(FQ.encode()))):
        threading.Thread(target=feed, args=(path, data), daemon=True).start()
    got = []
    t = threading.Thread(target=lambda: got.append(main(capsys, "align", gf, rf, "--variant",
                                                        "v0", "-q")), daemon=True)
    t.start()
    t.join(60)
    if t.is_alive():                   # a second open of the FIFO waits for a writer forever
        for f in (gf, rf):
            os.close(os.open(f, os.O_RDWR))
        pytest.fail("s2g align hung on a FIFO")
    code, out, err = got[0]
    assert code == 0 and len(out.splitlines()) == 2, err
    threading.Thread(target=feed, args=(gf, GFA.encode()), daemon=True).start()
    rfd, rpath = _pipe_path(FQ.encode())
    try:
        code, _, err = main(capsys, "align", gf, rpath, "--validate", "--variant", "v0")
    finally:
        os.close(rfd)
        with open(gf, "rb") as fh:      # let the writer thread finish
            fh.read()
    one_error(code, err, "--validate", "regular file")


@pytest.mark.parametrize("pack", [bz2.compress, lzma.compress], ids=["bzip2", "xz"])
def test_compressed_gfa_sniffed_from_the_bytes(tmp_path, inputs, capsys, pack):
    g = tmp_path / "g.gfa"             # no telling extension
    g.write_bytes(pack(GFA.encode()))
    code, out, err = main(capsys, "align", g, inputs[1], "--variant", "v0", "-q")
    assert code == 0 and len(out.splitlines()) == 2, err


def test_truncated_gzip_is_one_error_line(tmp_path, inputs, capsys):
    g, r = inputs
    big_gfa = "".join(f"S\t{k}\tACGTACGTAC\n" for k in range(3000)).encode()
    tg = tmp_path / "t.gfa.gz"
    tg.write_bytes(gzip.compress(big_gfa)[:2000])
    code, _, err = main(capsys, "align", tg, r, "--variant", "v0")
    one_error(code, err, "t.gfa.gz", "truncated")
    rng = random.Random(2)
    fq = "".join(f"@r{k}\n{''.join(rng.choices('ACGT', k=50))}\n+\n{'I' * 50}\n" for k in range(400))
    for cut in (20, 4000):             # in the first block, and after some records
        tr = tmp_path / f"t{cut}.fq.gz"
        tr.write_bytes(gzip.compress(fq.encode())[:cut])
        code, _, err = main(capsys, "align", g, tr, "--variant", "v0")
        one_error(code, err, str(tr), "truncated")


def test_corrupt_gzip_reads_is_one_error_line(tmp_path, inputs, capsys):
    """A damaged deflate stream in a gzip reads file (xopen reads it with ISA-L, whose
    error is not zlib's): one line naming the file, not an internal error."""
    g, _ = inputs
    rng = random.Random(3)
    fq = "".join(f"@r{k}\n{''.join(rng.choices('ACGT', k=50))}\n+\n{'I' * 50}\n"
                 for k in range(400))
    data = bytearray(gzip.compress(fq.encode()))
    data[len(data) // 2] ^= 0xFF
    bad = tmp_path / "c.fq.gz"
    bad.write_bytes(bytes(data))
    code, _, err = main(capsys, "align", g, bad, "--variant", "v0")
    one_error(code, err, str(bad), "cannot read")
    assert "internal error" not in err


def test_quality_length_mismatch_is_named(tmp_path, inputs, capsys):
    for text in ("@a\nACGT\n+\nIII\n", FQ + "@c\nACGT\n+\nIII\n"):
        r = tmp_path / "q.fq"
        r.write_text(text)
        code, _, err = main(capsys, "align", inputs[0], r, "--variant", "v0")
        msg = one_error(code, err, "qualities differ")
        assert "not a FASTA" not in msg


# --------------------------------------------------------------------------- GAF names

def test_segment_names_are_written_byte_for_byte(tmp_path, inputs, capsys):
    names = {"1": "s\u00e9g1".encode(), "2": "\u6f22".encode(), "4": b"raw\xff"}
    text = GFA.encode()
    for old, new in names.items():
        text = text.replace(f"\t{old}\t".encode(), b"\t" + new + b"\t")
    g = tmp_path / "u.gfa"
    g.write_bytes(text)
    out = tmp_path / "u.gaf"
    code, _, err = main(capsys, "align", g, inputs[1], "-o", out, "--variant", "v0", "-q")
    assert code == 0, err
    first = out.read_bytes().split(b"\n")[0].split(b"\t")
    assert first[5] == b">" + names["1"] + b">" + names["2"] + b">" + names["4"]


@pytest.mark.parametrize("name", ["a>b", "<a", "a b"])
def test_names_that_make_gaf_paths_ambiguous_are_refused(tmp_path, inputs, capsys, name):
    g = tmp_path / "n.gfa"
    g.write_text(f"S\t{name}\tACGT\nS\t2\tACGT\n")
    code, _, err = main(capsys, "align", g, inputs[1], "--variant", "v0")
    one_error(code, err, repr(name), "GAF")


def test_empty_read_name_gets_its_record_number(inputs, tmp_path, capsys):
    r = tmp_path / "e.fa"
    r.write_text(">x\nACGTAC\n>\nGGATTTGCA\n> \nACGT\n")
    code, out, err = main(capsys, "align", inputs[0], r, "--variant", "v0")
    assert code == 0, err
    assert [ln.split("\t")[0] for ln in out.splitlines()] == ["x", "read2", "read3"]
    assert any("2 read(s) without a name" in ln for ln in err), err


def test_no_hit_lines_have_mapq_0(inputs, tmp_path, capsys):
    r = tmp_path / "n.fa"
    r.write_text(">n\nNNNN\n>e\n\n")
    code, out, err = main(capsys, "align", inputs[0], r, "--variant", "v0", "-q")
    assert code == 0, err
    assert [ln.split("\t")[11] for ln in out.splitlines()] == ["0", "0"]


# ------------------------------------------------------------------------ conventions

def test_threads_short_option_and_bound(inputs, capsys):
    g, r = inputs
    code, out, err = main(capsys, "align", g, r, "-t", 1, "--variant", "cpu", "-q")
    assert code == 0 and len(out.splitlines()) == 2, err
    code, out, err = main(capsys, "align", g, r, "--threads", 100_000, "--variant", "cpu", "-q")
    assert code == 0 and len(out.splitlines()) == 2, err
    assert [ln for ln in err if ln.startswith("s2g: warning: --threads 100000 is more than")], err


@pytest.mark.parametrize("args", [
    ("align", "g.gfa"), ("align", "g.gfa", "r.fq", "--mode", "glocal"), ("frobnicate",),
    ("align", "g.gfa", "r.fq", "--match", "two")])
def test_usage_errors_are_one_prefixed_line_exit_2(capsys, args):
    code, _, err = main(capsys, *args)
    assert code == 2 and len(err) == 1 and err[0].startswith("s2g: error: "), (code, err)


def test_negative_gap_open_message(inputs, capsys):
    code, _, err = main(capsys, "align", *inputs, "--gap-open", "-1")
    msg = one_error(code, err, "--gap-open")
    assert "mismatch" not in msg


def test_simulate_warns_when_reads_come_out_short(tmp_path, capsys):
    code, _, err = main(capsys, "simulate", tmp_path / "s", "--read-len", 100_000,
                        "--total-bases", 1000, "--reads", 3)
    assert code == 0
    assert [ln for ln in err if ln.startswith("s2g: warning:") and "shorter" in ln], err


def test_gpu_variants_run_from_the_cli_under_the_simulator(inputs):
    """numba-cuda 0.30's simulated device has no name: the registry must not need one."""
    g, r = inputs
    env = dict(_cli_env(), NUMBA_ENABLE_CUDASIM="1")
    got = {}
    for v in ("v0", "v4"):
        p = subprocess.run([sys.executable, "-m", "s2g", "align", g, r, "--variant", v, "-q"],
                           capture_output=True, text=True, env=env, timeout=300)
        assert p.returncode == 0, p.stderr
        got[v] = p.stdout
    assert got["v4"] == got["v0"] and len(got["v0"].splitlines()) == 2


# ------------------------------------------------------------------------ test data

def test_real_graphs_are_carried_by_the_repository(tmp_path):
    """A plain clone runs the real-graph tests: the data lives in tests/data/real (with its
    provenance), and the fixture gives every file under the name the tests open."""
    from conftest import REAL_DATA, plain_real_data
    carried = REPO / "tests" / "data" / "real"
    assert REAL_DATA == carried
    real_data = plain_real_data(tmp_path)
    assert (carried / "README.md").read_text().count("MIT") >= 5
    expect = {"c4_gwfa": ["C4-90.gfa", "C4-NA19240.1.fa", "C4-NA19240.2.fa"],
              "cactus_brca2_vg": ["cactus-BRCA2.fastq", "cactus-BRCA2.gfa"],
              "drb1_odgi": ["DRB1-3123.fa", "DRB1-3123.gfa"],
              "lpa_odgi": ["LPA.fa", "LPA.gfa"],
              "mt_minigraph": ["MT-chimp.fa", "MT-human.fa", "MT-orangA.fa", "MT.gfa"]}
    for d, names in expect.items():
        assert (carried / d).is_dir(), d
        for n in names:
            assert (real_data / d / n).read_bytes()[:1] in (b">", b"@", b"S", b"H"), (d, n)
    size = sum(p.stat().st_size for p in carried.rglob("*") if p.is_file())
    assert size < 4_000_000, size


def test_gpu_out_of_memory_is_one_error_line(inputs, capsys, monkeypatch):
    """The CUDA driver's out-of-memory (the lean path's DriverError, numba.cuda's
    CudaAPIError name it alike): one line with what to try, not an internal error; any
    other driver error stays an internal error (exit 3)."""
    from s2g import cli
    from s2g.variants._driver import DriverError

    def oom(args):
        raise DriverError("cuMemAlloc failed: CUresult 2 (CUDA_ERROR_OUT_OF_MEMORY)")

    monkeypatch.setattr(cli, "cmd_align", oom)
    code, _, err = main(capsys, "align", *inputs)
    one_error(code, err, "out of GPU memory", "--batch-size")

    def other(args):
        raise DriverError("cuLaunchKernel failed: CUresult 700 (CUDA_ERROR_ILLEGAL_ADDRESS)")

    monkeypatch.setattr(cli, "cmd_align", other)
    code, _, err = main(capsys, "align", *inputs)
    assert code == 3 and "internal error" in err[-1] and "ILLEGAL_ADDRESS" in err[-1]
    # where it was raised: the innermost frame in s2g's code (here the CLI's call of the
    # command; this test's own frame is not s2g's)
    assert f"(at s2g{os.sep}cli.py:" in err[-1] and " in _run; set S2G_DEBUG=1" in err[-1]
    from s2g.errors import where
    from s2g import config
    with pytest.raises(ValueError) as got:
        config.configure(no_such_knob=1)
    assert where(got.value).startswith(f"s2g{os.sep}config.py:")
    assert where(got.value).endswith(" in configure")
    assert where(ValueError("no traceback")) == ""
