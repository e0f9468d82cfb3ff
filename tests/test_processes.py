"""``s2g align`` in several processes (knob ``processes``, s2g/processes.py): the same GAF
as one process, byte for byte; a failing part stops the run with its message and writes
nothing; inputs that cannot be cut stay in one process."""
import gzip
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
GRAPH = REPO / "graphs" / "example.gfa"
READS = REPO / "graphs" / "example.fq"


def _align(args, knobs="", cwd=None):
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("S2G_DEBUG", None)
    if knobs:
        env["S2G_CONFIG"] = knobs
    return subprocess.run([sys.executable, "-m", "s2g", "align", *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=600, cwd=cwd)


@pytest.fixture(scope="module")
def reads(tmp_path_factory):
    """The example's reads with two unnamed reads, one in the first part and one later."""
    d = tmp_path_factory.mktemp("proc")
    text = READS.read_text().splitlines(keepends=True)
    recs = ["".join(text[i:i + 4]) for i in range(0, len(text), 4)]
    nameless = "@\n" + recs[3].split("\n", 1)[1]
    recs = recs[:5] + [nameless] + recs[5:150] + [nameless] + recs[150:]
    path = d / "reads.fq"
    path.write_text("".join(recs))
    return path


@pytest.mark.parametrize("extra", [[], ["--seeded", "-N", "1"]])
def test_parts_write_what_one_process_writes(reads, tmp_path, extra):
    one, three = tmp_path / "one.gaf", tmp_path / "three.gaf"
    p = _align([GRAPH, reads, "-o", one, *extra])
    assert p.returncode == 0, p.stderr
    q = _align([GRAPH, reads, "-o", three, *extra],
               "processes=3,processes_min_bytes=10000")
    assert q.returncode == 0, q.stderr
    assert three.read_bytes() == one.read_bytes()
    assert "[part 3/3]" in q.stderr and "3 processes: 202 reads" in q.stderr, q.stderr
    assert "2 read(s) without a name" in q.stderr
    assert b"read6\t" in three.read_bytes() and b"read152\t" in three.read_bytes()
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".s2g-parts-")]


def test_a_failing_part_stops_the_run_and_writes_nothing(reads, tmp_path):
    bad = tmp_path / "bad.fq"
    text = reads.read_text()
    cut = len(text) * 2 // 3
    cut = text.index("\n@", cut) + 1
    bad.write_text(text[:cut] + "@broken\nACGT\nXX\nIIII\n" + text[cut:])
    out = tmp_path / "out.gaf"
    p = _align([GRAPH, bad, "-o", out], "processes=3,processes_min_bytes=10000")
    assert p.returncode == 1
    lines = p.stderr.strip().splitlines()
    assert re.match(r"s2g: \[part [23]/3\] error: .*malformed input", lines[0]), p.stderr
    assert re.match(r"s2g: error: part [23] of 3 of .* failed", lines[-1]), p.stderr
    assert len(lines) == 2 and "Traceback" not in p.stderr
    assert not out.exists()
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".s2g-parts-")]


def test_inputs_that_cannot_be_cut_stay_in_one_process(reads, tmp_path):
    gz = tmp_path / "reads.fq.gz"                     # gzip, not BGZF
    gz.write_bytes(gzip.compress(reads.read_bytes()))
    want = _align([GRAPH, reads, "-o", tmp_path / "w.gaf"])
    knobs = "processes=3,processes_min_bytes=10000"
    for args in ([GRAPH, gz, "-o", tmp_path / "gz.gaf"],                   # not cut
                 [GRAPH, reads, "-o", tmp_path / "big.gaf"]):               # parts too small
        p = _align(args, knobs if args[1] == gz else "processes=3")
        assert p.returncode == 0, p.stderr
        assert "[part" not in p.stderr and "processes:" not in p.stderr, p.stderr
        assert Path(args[-1]).read_bytes() == (tmp_path / "w.gaf").read_bytes()
    assert want.returncode == 0
    p = _align([GRAPH, reads, "-o", tmp_path / "o.sam"], knobs)          # SAM: one process
    assert "[part" not in p.stderr


def test_no_split_while_threads_run(monkeypatch):
    """Forking a process that runs threads can leave a child holding a lock forever: the
    run stays in one process then."""
    import threading
    from types import SimpleNamespace

    from s2g import processes
    from s2g.config import configure, settings
    old = settings().processes, settings().processes_min_bytes
    args = SimpleNamespace(reads=str(READS), dask=None, reads2=None, interleaved=False,
                           output="x.gaf", output_format=None)
    try:
        configure(processes=2, processes_min_bytes=10000)
        monkeypatch.setattr(threading, "active_count", lambda: 1)
        assert len(processes.parts_of(args)) == 2
        monkeypatch.setattr(threading, "active_count", lambda: 2)
        assert processes.parts_of(args) is None
    finally:
        configure(processes=old[0], processes_min_bytes=old[1])


def test_part_copy_names_unnamed_reads_across_chunk_ends(tmp_path, monkeypatch):
    """A part's GAF is copied in chunks of whole lines; a stand-in name (its secondary
    lines carry it too) is numbered wherever the chunks end."""
    from s2g import processes
    from s2g.reads import unnamed_mark
    lines = [f"r{k}\t150\tx\n" for k in range(5)]
    lines[2] = unnamed_mark(3, "tok") + "\t150\tx\n"
    lines.insert(3, unnamed_mark(3, "tok") + "\t150\tsecondary\n")
    path = tmp_path / "0.gaf"
    path.write_bytes("".join(lines).encode())

    class Out:
        def __init__(self):
            self.got = []

        def write(self, data):
            self.got.append(data)
    for step in (1, 7, 40, 1 << 20):
        monkeypatch.setattr(processes, "COPY_STEP", step)
        out = Out()
        assert processes._copy(str(path), out, 100, "tok") == 1
        assert b"".join(out.got) == "".join(lines).replace(
            unnamed_mark(3, "tok"), "read103").encode()


@pytest.mark.parametrize("variant, knob, imported, lean", [
    ("auto", "1", True, False), ("simd", "1", False, False), ("auto", "0", False, False),
    ("auto", "1", False, True)])
def test_cuda_modules_imported_before_the_fork_only_where_a_gpu_may_run(variant, knob,
                                                                         imported, lean):
    """Knob ``processes_import_cuda``: numba.cuda's import (~1 s of each child's start-up
    on the GPU machine, holding its GIL) done once before the fork where a GPU variant may
    run and a driver is there (the simulator counts as one); not for a CPU variant, nor on
    the lean path (its children launch without numba.cuda)."""
    code = ("import sys, types; from s2g import processes; "
            + ("from s2g.variants import _lean; _lean._STATE.append(True); " if lean else "")
            + f"processes._import_cuda(types.SimpleNamespace(variant={variant!r})); "
            "print('numba.cuda' in sys.modules)")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", S2G_CONFIG=f"processes_import_cuda={knob}",
               PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == str(imported)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_child_that_ignores_sigterm_is_killed_not_waited_for():
    """processes._stop: SIGTERM, then SIGKILL after the grace; the child is reaped either
    way (a failed run hung in CI when one of its other parts did not end on SIGTERM)."""
    import signal
    import time

    from s2g import processes

    def child(ignore):
        pid = os.fork()
        if pid == 0:
            try:
                if ignore:
                    signal.signal(signal.SIGTERM, signal.SIG_IGN)
                time.sleep(60)
            finally:
                os._exit(0)
        time.sleep(0.2)                 # (its handler set)
        return pid

    for ignore in (False, True):
        pid = child(ignore)
        t = time.monotonic()
        processes._stop(pid, grace=0.5)
        took = time.monotonic() - t
        assert took < (2.0 if ignore else 0.45), (ignore, took)
        with pytest.raises(ChildProcessError):      # reaped
            os.waitpid(pid, os.WNOHANG)
