"""The overlapped read/align/finish/write pipeline keeps input order and surfaces errors."""
import random
import threading
import time

import pytest

from s2g import pipeline


def test_order_kept_under_random_delays():
    rng = random.Random(3)
    delays = [rng.random() * 0.004 for _ in range(60)]
    out, threads = [], set()

    def align_one(k):
        time.sleep(delays[k] / 2)
        return k * 10

    def finish_one(k, r):
        threads.add(threading.current_thread().name)
        time.sleep(delays[-k - 1])
        return (k, r)

    n = pipeline.run(iter(range(60)), align_one, finish_one, out.append, depth=3)
    assert n == 60
    assert out == [(k, 10 * k) for k in range(60)]
    assert all(t.startswith("s2g-finish") for t in threads)   # finishing ran off the main thread


def test_reader_error_is_raised_in_caller():
    def batches():
        yield 1
        raise ValueError("bad read 'x'")

    out = []
    with pytest.raises(ValueError, match="bad read"):
        pipeline.run(batches(), lambda b: b, lambda b, r: r, out.append)
    assert out == [1]          # what came before the error was written, nothing after


def test_finisher_error_is_raised_in_caller():
    def finish_one(b, r):
        if b == 2:
            raise RuntimeError("traceback window too large")
        return b

    out = []
    with pytest.raises(RuntimeError, match="window"):
        pipeline.run(iter(range(5)), lambda b: b, finish_one, out.append, depth=1)
    assert out == [0, 1]


def test_empty_input():
    out = []
    assert pipeline.run(iter(()), lambda b: b, lambda b, r: r, out.append) == 0
    assert out == []


def test_format_stage_keeps_order_and_runs_in_its_own_thread():
    rng = random.Random(5)
    d1 = [rng.random() * 0.003 for _ in range(40)]
    d2 = [rng.random() * 0.003 for _ in range(40)]
    out, fin, fmt = [], set(), set()

    def finish_one(k, r):
        fin.add(threading.current_thread().name)
        time.sleep(d1[k])
        return r + 1

    def format_one(k, r):
        fmt.add(threading.current_thread().name)
        time.sleep(d2[-k - 1])
        return (k, r)

    n = pipeline.run(iter(range(40)), lambda k: 10 * k, finish_one, out.append, depth=2,
                     format_one=format_one)
    assert n == 40 and out == [(k, 10 * k + 1) for k in range(40)]
    assert all(t.startswith("s2g-finish") for t in fin)
    assert all(t.startswith("s2g-format") for t in fmt)


def test_several_finish_workers_trace_at_once_and_keep_the_order():
    """finish_workers=3: batches traced in three threads at once (later ones may end
    first), formatted and written in input order, none lost."""
    rng = random.Random(7)
    out = []
    finish_one, names, most = _overlap_counted(lambda k, r: r + 1,
                                               [rng.random() * 0.01 for _ in range(50)])
    n = pipeline.run(iter(range(50)), lambda k: 10 * k, finish_one, out.append, depth=2,
                     format_one=lambda k, r: (k, r), finish_workers=3)
    assert n == 50 and out == [(k, 10 * k + 1) for k in range(50)]
    assert most[0] >= 2 and len(names) >= 2


def test_several_format_workers_format_at_once_and_keep_the_order():
    """format_workers=2: batches formatted in two threads at once (the GAF-text stage, which
    completes late_packing's tracebacks), written in input order, none lost."""
    rng = random.Random(5)
    out = []
    format_one, names, most = _overlap_counted(lambda k, r: (k, r),
                                               [rng.random() * 0.01 for _ in range(50)])
    n = pipeline.run(iter(range(50)), lambda k: 10 * k, lambda k, r: r + 1, out.append,
                     depth=2, format_one=format_one, finish_workers=2, format_workers=2)
    assert n == 50 and out == [(k, 10 * k + 1) for k in range(50)]
    assert most[0] == 2 and len(names) == 2
    assert all(t.startswith("s2g-format") for t in names)


def _overlap_counted(fn, delay):
    """``fn`` wrapped to sleep ``delay[k]`` (``k`` its first argument) and count the
    threads it ran in and the most calls at once: (wrapped, names, [most])."""
    names, busy, most = set(), [0], [0]
    lock = threading.Lock()

    def run(k, *rest):
        with lock:
            names.add(threading.current_thread().name)
            busy[0] += 1
            most[0] = max(most[0], busy[0])
        time.sleep(delay[k])
        with lock:
            busy[0] -= 1
        return fn(k, *rest)
    return run, names, most


def test_several_align_workers_align_at_once_keep_the_order_and_stay_bounded():
    """align_workers=2: two batches aligned at once (never three), in two threads; every
    batch traced with its own alignment, written in input order, none lost."""
    rng = random.Random(11)
    out = []
    align_one, names, most = _overlap_counted(lambda k: 10 * k,
                                              [rng.random() * 0.01 for _ in range(40)])
    n = pipeline.run(iter(range(40)), align_one, lambda k, r: r + 1, out.append, depth=2,
                     format_one=lambda k, r: (k, r), finish_workers=2, align_workers=2)
    assert n == 40 and out == [(k, 10 * k + 1) for k in range(40)]
    assert most[0] == 2 and len(names) == 2


def test_align_error_with_several_align_workers_is_raised_in_order():
    def align_one(b):
        time.sleep(0.02 if b == 2 else 0)
        if b == 2:
            raise RuntimeError("kernel failed")
        return b

    out = []
    with pytest.raises(RuntimeError, match="kernel"):
        pipeline.run(iter(range(8)), align_one, lambda b, r: r, out.append, depth=1,
                     align_workers=2)
    assert out == [0, 1][:len(out)] and 2 not in out


def test_finisher_error_passes_through_the_format_stage():
    def finish_one(b, r):
        if b == 3:
            raise RuntimeError("traceback window too large")
        return b

    out = []
    with pytest.raises(RuntimeError, match="window"):
        pipeline.run(iter(range(6)), lambda b: b, finish_one, out.append, depth=1,
                     format_one=lambda b, r: -r)
    assert out == [0, -1, -2]


def test_device_pool_released_with_its_thread():
    """Each `s2g.align` runs its stages in new threads, whose device pools (buffers per
    thread) go with them: the bytes the pools hold (``_devpool.HELD``, the --timings
    memory line) must fall back to 0, not add up run after run (CUDA simulator)."""
    import os
    import subprocess
    import sys
    code = (
        "import gc, threading\n"
        "import numpy as np\n"
        "from s2g.variants import _devpool\n"
        "def work():\n"
        "    p = _devpool.pool()\n"
        "    p.empty('a', 1000, np.int32)\n"
        "    p.put('b', np.arange(10, dtype=np.int64))\n"
        "for _ in range(3):\n"
        "    t = threading.Thread(target=work)\n"
        "    t.start()\n"
        "    t.join()\n"
        "gc.collect()\n"
        "print(_devpool.HELD['device'], _devpool.PEAK['device'])\n")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env).stdout.split()
    assert out == ["0", str(1000 * 4 + 10 * 8)]


def test_gil_probe_sees_a_thread_that_holds_the_gil():
    """GilProbe (knob gil_probe): while another thread holds the GIL in pure Python for
    tens of milliseconds at a time, the probe's 1 ms sleeps run again late, by up to the
    switch interval; its numbers are what it measured (samples, mean, 95th percentile)."""
    probe = pipeline.GilProbe()
    t = time.perf_counter()
    while time.perf_counter() - t < 0.3:      # busy in the bytecode loop: holds the GIL
        sum(range(1000))
    n, mean, p95 = probe.stop()
    assert n > 10 and mean > 0.5e-3 and p95 > 0.5e-3   # switch interval 5 ms: it waited
    late = sorted(probe.late)
    assert len(late) == n and late[0] <= mean <= late[-1] and late[0] <= p95 <= late[-1]
    assert not probe._t.is_alive()


def test_serial_stages_run_every_stage_in_the_calling_thread():
    """Knob serial_stages: align, finish, format and write of each batch one after another
    in the calling thread, in input order, none lost."""
    from s2g.config import configure
    where, out = set(), []

    def mark(fn):
        def run(*a):
            where.add(threading.current_thread().name)
            return fn(*a)
        return run
    configure(serial_stages=True)
    try:
        n = pipeline.run(iter(range(20)), mark(lambda k: 10 * k), mark(lambda k, r: r + 1),
                         out.append, format_one=mark(lambda k, r: (k, r)), finish_workers=3,
                         format_workers=2)
    finally:
        configure(serial_stages=False)
    assert n == 20 and out == [(k, 10 * k + 1) for k in range(20)]
    assert where == {threading.current_thread().name}


def test_startup_switch_interval_holds_until_the_pipeline_starts(tmp_path, capsys, monkeypatch):
    """Knob startup_switch_us: s2g align's start-up runs with that GIL switch interval, its
    pipeline with Python's own (knob switch_us unset), and the interval is as it was after."""
    import sys

    from cli_helpers import main
    from s2g import aligner, config
    from s2g.simulate import sample_reads, snp_graph

    sg, ref = snp_graph(600, 20, 2, 1)
    sg.write_gfa(str(tmp_path / "g.gfa"), ref)
    with open(tmp_path / "r.fa", "w") as fh:
        for k, (_, s, _) in enumerate(sample_reads(sg, 5, 80, 0.02, 0.5, 2)):
            fh.write(f">r{k}\n{s}\n")
    seen = {}
    run = aligner.Aligner.run

    def spy(self, *a, **kw):
        seen["start-up"] = sys.getswitchinterval()
        out = run(self, *a, **kw)
        seen["after run"] = sys.getswitchinterval()
        return out
    monkeypatch.setattr(aligner.Aligner, "run", spy)
    stages = pipeline.run

    def spy_stages(*a, **kw):
        seen["stages"] = sys.getswitchinterval()
        return stages(*a, **kw)
    monkeypatch.setattr(pipeline, "run", spy_stages)
    monkeypatch.setattr(aligner, "PY_SWITCH", 0.004)
    before = sys.getswitchinterval()
    config.configure(startup_switch_us=300)
    code, _, err = main(capsys, "align", tmp_path / "g.gfa", tmp_path / "r.fa",
                        "-o", tmp_path / "o.gaf", "--variant", "cpu")
    assert code == 0, err
    assert seen["start-up"] == pytest.approx(300e-6)
    assert seen["stages"] == pytest.approx(0.004)       # the interpreter's own
    assert seen["after run"] == pytest.approx(300e-6)   # (Aligner.run puts its own back)
    assert sys.getswitchinterval() == before
