"""The align driver (s2g/aligner.py): the CLI, the Python API and Dask workers go through
one Aligner; its one-batch path and its overlapped pipeline give the same GAF."""
import os
import pickle
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
    starts, in a thread, Numba's CPU target (first launch only) and s2g.trace.gpu.prepare
    (the kernels load while the full-graph kernel runs), and joins it before the
    traceback; once per read length. Without the traceback only the CPU target starts."""
    import threading

    import s2g.trace
    import s2g.trace.batch
    from s2g import _numba
    from s2g.trace import gpu
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

    monkeypatch.setattr(gpu, "prepare", prepare)
    monkeypatch.setattr(_numba, "start_cpu_target",
                        lambda: events.append(("cpu", threading.current_thread().name)))
    # the aligner imports it from s2g.trace at call time; both names, wherever it reads it
    monkeypatch.setattr(s2g.trace, "traceback_gpu_part", gpu_part)
    monkeypatch.setattr(s2g.trace.batch, "traceback_gpu_part", gpu_part)
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


def test_plan_decides_seeded_or_exact_in_one_place(tmp_path, monkeypatch):
    """s2g.plan: the CLI's notes (verbatim, without 's2g: '), the API's method, the Dask
    workers' options; s2g.align(method=...) aligns as the plan says."""
    from s2g import plan as P
    from s2g.gaf import gaf_bytes
    from s2g.index import build_index
    from s2g.seeded import SeededAligner
    from s2g.simulate import simulate
    prefix = str(tmp_path / "sim")
    simulate(prefix, total_bases=30_000, n_reads=40, seed=5)
    g = s2g.load_graph(prefix + ".gfa")
    reads = read_reads(prefix + ".fq")
    cells = g.n_bases * int(reads.lengths().sum())
    opts = P.RunOptions(variant="simd", method="auto", graph_path=prefix + ".gfa")
    notes = []
    p = P.plan(g, opts, cells, notes.append)
    assert (p.method, p.seeded, notes) == ("exact", None, [])    # 60,000 columns: full DP
    assert p.variant == "simd" and p.kernel.device == "cpu" and not p.kernel.tb_gpu
    monkeypatch.setitem(P.AUTO_SEEDED_COLUMNS, "cpu", 1000)
    assert P.plan(g, opts, cells, notes.append).method == "exact"
    assert notes == [f"{g.n_bases:,} graph columns, a small input ({cells:,} cells): "
                     "full-graph DP (--seeded to seed)"]
    notes.clear()
    glob = P.RunOptions(variant="simd", method="auto", mode="global")
    assert P.plan(g, glob, None, notes.append).method == "exact"
    assert notes == [f"{g.n_bases:,} graph columns: full-graph DP (seeded alignment does "
                     "not run with global mode)"]
    notes.clear()
    ix = build_index(g)
    p = P.plan(g, opts, None, notes.append, index=ix)
    assert p.method == "seeded" and p.seeded.index is ix
    assert notes == [f"{g.n_bases:,} graph columns: seeded alignment (--exact for "
                     "full-graph DP)"]
    wo = p.worker_options()             # what a Dask client sends: decided, absolute path
    assert wo.method == "seeded" and wo.seeded.index == os.path.abspath(prefix + ".gfa.s2gi")
    assert pickle.loads(pickle.dumps(wo)) == wo and hash(wo) == hash(pickle.loads(pickle.dumps(wo)))
    # the API: auto keeps full-graph DP for a small input; seeded as SeededAligner does
    assert s2g.align(g, reads, variant="simd").score.tolist() == \
        s2g.align(g, reads, variant="simd", method="exact").score.tolist()
    got = s2g.align(g, reads, variant="simd", method="seeded", index=ix)
    sa = SeededAligner(g, ix, s2g.Scoring(), s2g.Mode.LOCAL)
    want = sa.align_batch(reads)
    sa.traceback(reads, want)
    assert gaf_bytes(g, got) == gaf_bytes(g, want)
    path = str(tmp_path / "ix.s2gi")
    ix.save(path)
    again = s2g.align(g, reads, variant="simd", method="seeded", index=path)
    assert gaf_bytes(g, again) == gaf_bytes(g, want)
    with pytest.raises(s2g.S2GError, match="unknown method 'fast'"):
        s2g.align(g, reads, method="fast")


def test_stats_record_what_the_run_measured():
    g = s2g.load_graph(EX_GFA)
    al = Aligner(g, variant="v0")
    st = al.stats()
    assert st.seconds == {} and st.first_batch_s is None and st.seeded is None
    _run_text(al, EX_FQ, 100)
    st = al.stats()
    assert set(st.seconds) == {"align", "traceback", "GAF text", "write"}
    assert all(v >= 0 for v in st.seconds.values()) and st.first_batch_s is not None
    assert 0 <= st.span["align"][0] <= st.span["align"][1]
    assert st.ran == {"v0": [2, 200]} and st.too_long == 0
    assert "fast" not in st.profiles or st.profiles["fast"]["launches"] == 0
