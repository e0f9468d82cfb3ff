"""The align driver (s2g/aligner.py): the CLI, the Python API and Dask workers go through
one Aligner; its one-batch path and its overlapped pipeline give the same GAF."""
import subprocess
import sys

import numpy as np
import pytest

import s2g
from s2g.aligner import Aligner
from s2g.graph import open_graph
from s2g.reads import iter_read_batches, read_reads

REPO = __import__("pathlib").Path(__file__).resolve().parents[1]
EX_GFA, EX_FQ = str(REPO / "graphs" / "example.gfa"), str(REPO / "graphs" / "example.fq")


def _run_text(al, path, batch_size):
    chunks = []
    n = al.run(iter_read_batches(path, batch_size), lambda item: chunks.append(item[2]))
    return n, b"".join(chunks)


@pytest.mark.parametrize("variant", ["v0", "simd"])
def test_run_equals_align_per_batch_and_cli(tmp_path, variant):
    g = s2g.load_graph(EX_GFA)
    al = Aligner(g, variant=variant)
    n, text = _run_text(al, EX_FQ, 37)            # several batches through the pipeline
    assert n == -(-200 // 37)
    one = b"".join(al.gaf_text(b, al.align(b)) for b in iter_read_batches(EX_FQ, 37))
    assert text == one
    out = tmp_path / "o.gaf"
    subprocess.run([sys.executable, "-m", "s2g", "align", EX_GFA, EX_FQ, "-o", str(out),
                    "--variant", variant, "--quiet"], check=True)
    assert out.read_bytes() == text


def test_api_is_the_driver_and_takes_a_cyclic_graph(tmp_path):
    # a 2-segment loop: 1 -> 2 -> 1; the read goes round it once (1,2,1,2 spelled)
    gfa = tmp_path / "loop.gfa"
    gfa.write_text("S\t1\tACGTAC\nS\t2\tGGTTCA\nL\t1\t+\t2\t+\t0M\nL\t2\t+\t1\t+\t0M\n")
    fq = tmp_path / "r.fq"
    seq = "ACGTACGGTTCAACGTACGGTTCA"
    fq.write_text(f"@r\n{seq}\n+\n{'I' * len(seq)}\n")
    cyc = open_graph(str(gfa))
    reads = read_reads(str(fq))
    res = s2g.align(cyc, reads, variant="v0")
    assert res.score[0] == 2 * len(seq)                  # every base matched: round the loop
    al = Aligner(cyc, variant="v0")
    text = al.gaf_text(reads, al.align(reads)).decode()
    assert "\t>1>2>1>2\t" in text
    out = tmp_path / "o.gaf"
    subprocess.run([sys.executable, "-m", "s2g", "align", str(gfa), str(fq), "-o", str(out),
                    "--variant", "v0", "--quiet"], check=True)
    assert out.read_text() == text


def test_seeded_driver_equals_seeded_aligner(tmp_path):
    from s2g.index import build_index
    from s2g.seeded import SeededAligner
    from s2g.simulate import simulate
    prefix = str(tmp_path / "sim")
    simulate(prefix, total_bases=30_000, n_reads=120, seed=5)
    g = s2g.load_graph(prefix + ".gfa")
    ix = build_index(g)
    sc = s2g.Scoring()
    al = Aligner(g, sc, "local", "simd", seeded=SeededAligner(g, ix, sc, s2g.Mode.LOCAL))
    n, text = _run_text(al, prefix + ".fq", 50)
    sa = SeededAligner(g, ix, sc, s2g.Mode.LOCAL)
    direct = []
    for b in iter_read_batches(prefix + ".fq", 50):
        res = sa.align_batch(b)
        sa.traceback(b, res)
        direct.append(s2g.gaf.gaf_bytes(g, res))
    assert text == b"".join(direct)
    assert text.count(b"\n") == 120
    assert np.all([line.split(b"\t")[11] != b"255" for line in text.splitlines()])


def test_threads_hold_in_the_pipeline_threads(monkeypatch):
    """numba.set_num_threads is per calling thread: the Aligner sets it in each stage's
    thread (``s2g align -t 1`` once used every core for the kernel)."""
    import numba
    from s2g.variants import v0_cpu
    seen = []
    orig = v0_cpu.align_batch

    def spy(*a, **k):
        seen.append(numba.get_num_threads())
        return orig(*a, **k)
    monkeypatch.setattr(v0_cpu, "align_batch", spy)
    g = s2g.load_graph(EX_GFA)
    al = Aligner(g, variant="v0", threads=1)
    assert al.module is v0_cpu
    n, _ = _run_text(al, EX_FQ, 100)
    assert n == 2 and seen == [1, 1]
    if numba.config.NUMBA_NUM_THREADS > 1:      # the pipeline thread's default is all
        seen.clear()
        _run_text(Aligner(g, variant="v0"), EX_FQ, 100)
        assert seen == [numba.config.NUMBA_NUM_THREADS] * 2


def test_traceback_kernels_load_while_the_kernel_runs(monkeypatch):
    """With the GPU traceback inline, the aligner hands the variant an ``on_launch`` that
    starts, in a thread, Numba's CPU target (first launch only) and gpu_traceback.prepare
    (the kernels load while the full-graph kernel runs), and joins it before the
    traceback; once per read length. Without the traceback only the CPU target starts."""
    import threading

    from s2g import _numba, gpu_traceback, traceback
    from s2g.variants import v0_cpu
    g = s2g.load_graph(EX_GFA)
    batch = next(iter_read_batches(EX_FQ, 50))
    al = Aligner(g, variant="v0", traceback_on=True)
    assert al._inline
    events = []

    class Variant:                  # v0 with the fast variant's on_launch keyword
        @staticmethod
        def align_batch(graph, reads, scoring, mode, traceback=False, on_launch=None):
            res = v0_cpu.align_batch(graph, reads, scoring, mode)
            if on_launch is not None:
                on_launch()
                events.append("launched")
            return res

    def prepare(mode, scoring, read_len):
        events.append(("prepare", read_len, threading.current_thread().name))

    def gpu_part(graph, reads, scoring, mode, res, max_cells):
        events.append("gpu part")
        return None, None

    monkeypatch.setattr(gpu_traceback, "prepare", prepare)
    monkeypatch.setattr(_numba, "start_cpu_target",
                        lambda: events.append(("cpu", threading.current_thread().name)))
    monkeypatch.setattr(traceback, "traceback_gpu_part", gpu_part)
    al.module = Variant
    al.align_scores(batch)
    assert events[-1] == "gpu part"        # joined before the traceback
    assert ("prepare", batch.max_len, "s2g-tb-prepare") in events and "launched" in events
    assert ("cpu", "s2g-tb-prepare") in events
    events.clear()
    al.align_scores(batch)                 # same length: nothing new to load
    assert events == ["gpu part"]
    al._prepared_len = 0                   # longer reads: their kernels, not the CPU target
    al.align_scores(batch)
    assert ("prepare", batch.max_len, "s2g-tb-prepare") in events
    assert not any(x[0] == "cpu" for x in events if isinstance(x, tuple))
    al.module = v0_cpu                     # a variant without on_launch: no thread
    al._prepared_len = 0
    events.clear()
    al.align_scores(batch)
    assert events == ["gpu part"]
    plain = Aligner(g, variant="v0", traceback=False)     # no traceback: the CPU target
    plain.module = Variant
    events.clear()
    plain.align_scores(batch)
    assert ("cpu", "s2g-tb-prepare") in events and "launched" in events
    assert not any(x[0] == "prepare" for x in events if isinstance(x, tuple))
