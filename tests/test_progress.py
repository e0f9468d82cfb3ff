"""What a long ``s2g align`` says while it runs (issue #40, item 6).

The progress bar has a total where the input's size is known (a regular reads file:
its bytes, compressed ones counted compressed), so it shows a percentage and an ETA;
standard input and pipes have none (reads counted). A first run on cold caches says
once that it compiles (``warmup.cold`` decides), never with ``--quiet``.
"""
from __future__ import annotations

import gzip
import io
import os
import threading

import numpy as np
import pytest

from s2g import cli, pipeline, warmup
from s2g.reads import input_position, input_size, iter_read_batches


def _fastq(path, n, length=100, seed=0):
    rng = np.random.default_rng(seed)
    with open(path, "w") as fh:
        for i in range(n):
            s = "".join(rng.choice(list("ACGT"), length))
            fh.write(f"@r{i}\n{s}\n+\n{'I' * length}\n")
    return str(path)


@pytest.fixture(scope="module")
def big_fq(tmp_path_factory):
    """~1.3 MB of FASTQ (dnaio reads 128 KiB at a time: several positions) and its .gz."""
    d = tmp_path_factory.mktemp("reads")
    fq = _fastq(d / "r.fq", 6000)
    with open(fq, "rb") as src, gzip.open(d / "r.fq.gz", "wb") as dst:
        dst.write(src.read())
    return fq, str(d / "r.fq.gz")


@pytest.mark.parametrize("gz", [False, True])
def test_batches_carry_their_input_position(big_fq, gz):
    """Each batch's ``input_pos``: bytes of the file read so far (compressed bytes of a
    .gz), never decreasing, the last one the file's size, the bar's total."""
    path = big_fq[gz]
    size = os.path.getsize(path)
    assert input_size(path) == size
    pos = [b.input_pos for b in iter_read_batches(path, 500)]
    assert len(pos) == 12 and None not in pos
    assert pos == sorted(pos) and pos[-1] == size
    if not gz:
        assert len(set(pos)) >= 5 and pos[0] < size / 2      # it moves with the reading


def _fifo(tmp_path, data: bytes):
    """A FIFO with ``data`` written into it by a thread (a pipe with a path)."""
    p = str(tmp_path / "pipe.fq")
    os.mkfifo(p)

    def feed():
        with open(p, "wb") as fh:
            fh.write(data)
    t = threading.Thread(target=feed, daemon=True)
    t.start()
    return p, t


def test_pipe_has_no_total(tmp_path, big_fq):
    data = open(big_fq[0], "rb").read()
    p, t = _fifo(tmp_path, data)
    assert input_size(p) is None and input_size("-") is None
    assert input_size(str(tmp_path / "missing.fq")) is None
    batches = list(iter_read_batches(p, 2000))
    t.join(10)
    assert [b.input_pos for b in batches] == [None, None, None]
    assert input_position(object()) is None                # a reader that does not tell


def test_bar_total_is_the_file_size(big_fq, monkeypatch):
    """input_progress: bytes with a total for a file; the bar follows the batches'
    positions as they are written and ends at the total, the reads beside it."""
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    path = big_fq[0]
    bar = pipeline.input_progress(True, path)
    assert bar is not None and bar.total == os.path.getsize(path)
    assert bar.bar.total == bar.total and bar.bar.unit == "B"
    seen = []
    for b in bar.track(iter_read_batches(path, 1000)):   # read ...
        bar.update(b.n_reads)                           # ... and written
        seen.append(bar.bar.n)
    assert seen == sorted(seen) and seen[0] < bar.total and seen[-1] == bar.total
    assert bar.reads == 6000
    bar.close()
    text = err.getvalue()
    assert "100%" in text and "6,000 reads" in text
    assert pipeline.input_progress(False, path) is None


def test_bar_over_a_pipe_counts_reads(tmp_path, big_fq, monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    p, t = _fifo(tmp_path, open(big_fq[0], "rb").read())
    bar = pipeline.input_progress(True, p)
    assert bar.total is None and bar.bar.total is None and bar.bar.unit == "read"
    for b in bar.track(iter_read_batches(p, 2500)):
        bar.update(b.n_reads)
    t.join(10)
    assert bar.bar.n == 6000
    bar.close()
    assert "%" not in err.getvalue()                    # no total: no percentage


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    from s2g.simulate import simulate
    d = tmp_path_factory.mktemp("ex")
    gfa, fq, _ = simulate(str(d / "s"), total_bases=600, n_reads=30, seed=4, read_len=60)
    return gfa, fq


def _align(example, tmp_path, capsys, *extra):
    gfa, fq = example
    argv = ["align", gfa, fq, "--exact", "-v", "v0", "--no-traceback", "--batch-size", "10",
            "-o", str(tmp_path / "o.gaf"), *extra]
    assert cli.main(argv) == 0
    return capsys.readouterr().err


def test_compile_note_once_when_cold(example, tmp_path, capsys, monkeypatch):
    """Cold caches (warmup.cold says so): the note once, before the run's summary line;
    warm: none; --quiet: none."""
    _align(example, tmp_path, capsys)                   # compiled here if need be
    probed = []
    monkeypatch.setattr(warmup, "cold", lambda t: probed.append(t) or True)
    err = _align(example, tmp_path, capsys)
    assert err.count(warmup.COMPILE_NOTE) == 1, err
    assert err.index(warmup.COMPILE_NOTE) < err.index("30 reads")
    assert probed and all(t["kind"] in warmup.KINDS for t in probed)
    assert warmup.COMPILE_NOTE not in _align(example, tmp_path, capsys, "-q")
    monkeypatch.setattr(warmup, "cold", lambda t: False)
    assert warmup.COMPILE_NOTE not in _align(example, tmp_path, capsys)


def test_compile_note_probes_the_seeded_plan(monkeypatch, capsys):
    """A seeded run's note looks at the seeded tasks (its kernels are not the full-graph
    DP's)."""
    from s2g.scoring import Mode, Scoring

    class Al:
        variant, mode, scoring, traceback, tb_gpu, seeded = ("simd", Mode.LOCAL, Scoring(),
                                                             True, False, object())
    probed = []
    monkeypatch.setattr(warmup, "cold", lambda t: probed.append(t["kind"]) or t["kind"] == "seeded")
    assert warmup.compile_note(Al())
    assert "seeded" in probed and "align" not in probed
    Al.seeded = None
    probed.clear()
    assert not warmup.compile_note(Al())
    assert "align" in probed and "seeded" not in probed
    assert capsys.readouterr().err.count(warmup.COMPILE_NOTE) == 1


def test_compile_note_leaves_out_the_window_kernels_shape(monkeypatch, capsys):
    """A seeded GPU run's note does not probe the window kernel's task (its shape is the
    first batch's longest read's, which the first read does not tell: a cold probe of a
    shape the run never compiles would say "compiling" on every warm run)."""
    from s2g.scoring import Mode, Scoring

    class Al:
        variant, mode, scoring, traceback, tb_gpu, seeded = ("fast", Mode.LOCAL, Scoring(),
                                                             True, True, object())
    probed = []
    monkeypatch.setattr(warmup, "cold", lambda t: probed.append(t) or t["kind"] == "fast_kernel")
    assert not warmup.compile_note(Al())
    assert [t["kind"] for t in probed] == ["seeded"]
    assert capsys.readouterr().err.count(warmup.COMPILE_NOTE) == 0


def test_compile_note_probes_the_first_reads_length(monkeypatch, capsys, tmp_path):
    """The note's probes take the longest of the reads file's first NOTE_READS records
    (every warm 10 kbp run said it compiled: the 150-base probes were cold; a short first
    read among longer ones probed a `fast` kernel shape no run compiles); stdin, a missing
    file or an empty one: 150."""
    from s2g.scoring import Mode, Scoring

    class Al:
        variant, mode, scoring, traceback, tb_gpu, seeded = ("fast", Mode.LOCAL, Scoring(),
                                                             True, True, object())
    lens = []
    monkeypatch.setattr(warmup, "run_plan",
                        lambda al, read_len: lens.append(read_len) or [])
    fq = tmp_path / "r.fq"
    fq.write_text("@a\n" + "A" * 9000 + "\n+\n" + "I" * 9000 + "\n@b\nAC\n+\nII\n")
    mixed = tmp_path / "m.fq"            # trimmed reads: the first one is not the longest
    mixed.write_text("".join(f"@r{k}\n{'C' * n}\n+\n{'I' * n}\n"
                             for k, n in enumerate((90, 150, 120, 151))))
    empty = tmp_path / "e.fq"
    empty.write_text("")
    for reads in (str(fq), str(mixed), "-", str(tmp_path / "none.fq"), str(empty), None):
        assert not warmup.compile_note(Al(), reads=reads)
    assert lens == [9000, 151, 150, 150, 150, 150]
    monkeypatch.setattr(warmup, "NOTE_READS", 2)       # the longest of the first ones only
    lens.clear()
    assert not warmup.compile_note(Al(), reads=str(mixed))
    assert lens == [150]


def test_index_says_it_compiles_when_cold(example, tmp_path, capsys, monkeypatch):
    """``s2g index``'s first run compiles the index build: the note once when its
    functions are cold (warmup.index_build_cold), none when warm."""
    gfa, _ = example
    out = str(tmp_path / "g.s2gi")
    monkeypatch.setattr(warmup, "index_build_cold", lambda: True)
    assert cli.main(["index", gfa, "-o", out]) == 0
    assert capsys.readouterr().err.count(warmup.COMPILE_NOTE) == 1
    monkeypatch.setattr(warmup, "index_build_cold", lambda: False)
    assert cli.main(["index", gfa, "-o", out]) == 0
    assert warmup.COMPILE_NOTE not in capsys.readouterr().err
