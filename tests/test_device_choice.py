"""``auto``'s device (issue #42: auto never picks the slower device): on a machine with a
GPU, ``s2g align`` estimates the whole input from its first batch and aligns on the CPU
when the CPU path would finish before the GPU path with its start-up
(:func:`s2g.plan.choose_device`; constants measured on an H200 host,
``bench/device_choice.py``). Also the GPU's full-graph DP budget for small inputs, which
now counts how full a few reads leave the GPU (:func:`s2g.plan.small_exact`).

No GPU here: the rule is a pure function of the estimate, the graph and the options, and
the command line runs under Numba's CUDA simulator, where ``auto`` is the GPU's ``fast``.
"""
from __future__ import annotations

import os
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

import s2g.plan as P
from conftest import REPO
from s2g.reads import ReadBatch
from s2g.variants import registry

GRAPH = SimpleNamespace(n_bases=10_677_144)      # the MHC graph's columns (both strands)


def estimate(reads, length, counted=True):
    cpu, gpu = P.seeded_costs(np.full(reads, length))
    return P.InputEstimate(reads, reads * length, cpu, gpu, counted)


def options(**kw):
    return P.RunOptions(method="auto", threads=16, **kw)


def test_seeded_costs_meet_the_measured_points_and_grow_with_length():
    for length, cpu, gpu in P.SEEDED_COSTS:
        c, g = P.seeded_costs([length])
        assert c == pytest.approx(cpu) and g == pytest.approx(gpu)
    lens = [50, 150, 1000, 5000, 10_000, 30_000]
    costs = [P.seeded_costs([x]) for x in lens]
    assert all(a[0] < b[0] and a[1] < b[1] for a, b in zip(costs, costs[1:]))
    c2, g2 = P.seeded_costs([150, 150])
    assert c2 == pytest.approx(2 * P.SEEDED_COSTS[0][1])


def test_few_reads_go_to_the_cpu_with_a_note_and_a_cpu_auto_name():
    said = []
    k = P.choose_device(GRAPH, options(), estimate(3000, 150), said.append)
    assert k.device == "cpu" and not k.tb_gpu
    assert getattr(k.variant, "auto", False) and k.variant.cpu_only
    assert registry.REGISTRY[str(k.variant)].device == "cpu"
    assert len(said) == 1 and "aligning on the CPU" in said[0] and "3,000 reads" in said[0]
    assert not P.gpu_clearly(estimate(3000, 150), options())


def test_many_reads_are_the_gpus():
    said = []
    for n, length in ((1_000_000, 150), (1000, 10_000)):
        run = estimate(n, length, False)
        assert not P.cpu_faster(GRAPH, options(), run, said.append)
        assert P.gpu_clearly(run, options())      # CUDA starts before the graph loads
    assert said == []
    assert P.gpu_clearly(None, options())         # size unknown (standard input): the GPU


def test_long_reads_at_high_error_rates_are_not_the_cpus():
    """30 x 10 kbp at 10% errors on MHC took 2.64-2.86 s on the CPU path (16 vCPUs) and
    1.01 s on the GPU path (H200, warm, 2026-12-05); ``auto`` chose the CPU from 5%
    errors' cost. Now the GPU; 3 such reads stay on the CPU (1.48 s against 2.32 at 5%,
    bench/results/nvidia-h200/device_choice)."""
    assert not P.cpu_faster(GRAPH, options(), estimate(30, 10_000))
    assert P.cpu_faster(GRAPH, options(), estimate(3, 10_000))


def test_the_break_even_moves_with_the_cpu_threads():
    """The CPU path's estimate is per thread: 60,000 short reads are the CPU's on 16
    threads, the GPU's on 2."""
    run = estimate(60_000, 150)
    assert P.cpu_faster(GRAPH, options(), run)
    two = P.RunOptions(method="auto", threads=2)
    assert not P.cpu_faster(GRAPH, two, run)


def test_only_auto_with_a_gpu_driver_single_reads_one_process_waits_for_the_input(monkeypatch):
    monkeypatch.setattr(registry, "_no_driver", lambda: False)
    assert P.input_decides(options())
    assert P.input_decides(options(traceback_on="cpu"))
    assert not P.input_decides(options(variant="fast"))
    assert not P.input_decides(options(variant="simd"))
    assert not P.input_decides(options(traceback_on="gpu"))
    assert not P.input_decides(options(), dask="local")
    assert not P.input_decides(options(pairs=P.PairOptions()))
    monkeypatch.setattr(registry, "_no_driver", lambda: True)
    assert not P.input_decides(options())


def test_a_small_graph_counts_full_graph_dp_on_both_devices():
    """20 kbp graph (full-graph DP on both): 2,000 reads are the CPU's (0.1 s on 16
    threads), 20,000 the GPU's (the CPU would take ~2 s); H200 host, 2026-12-04: 1.58 s
    against 2.42, and 3.96 against 2.67 (bench/results/nvidia-h200/device_choice)."""
    small = SimpleNamespace(n_bases=20_000)
    assert P.cpu_faster(small, options(), estimate(2000, 150))
    assert not P.cpu_faster(small, options(), estimate(20_000, 150))


def test_the_gpu_exact_budget_counts_how_full_the_reads_leave_it():
    """3 reads of 10 kbp on the 5.3 Mbp MHC graph: full-graph DP took 13.9 s on an H200
    (the old rule, 1e12 cells at a full GPU's rate, chose it); 20,000 reads of 150 bp on
    a 20 kbp graph fill the GPU and take ~0.03 s: full-graph DP."""
    opts = options()
    assert not P.small_exact(GRAPH.n_bases * 30_000, 3, "cuda", opts)
    assert not P.small_exact(GRAPH.n_bases * 300 * 150, 300, "cuda", opts)
    assert P.small_exact(20_000 * 20_000 * 150, 20_000, "cuda", opts)
    assert P.small_exact(5_000_000_000 * 16, 1, "cpu", opts)
    assert not P.small_exact(5_000_000_000 * 16 + 1, 1, "cpu", opts)


def test_estimate_from_the_first_batch():
    b = ReadBatch.from_sequences(["r1", "r2"], ["ACGT" * 30, "ACGT" * 40])
    b.is_last = True
    e = P.estimate_input(b, size=10 ** 9)
    assert e.counted and e.reads == 2 and e.bases == 280
    b.is_last = False
    ra = P.READ_AHEAD                  # the reader's buffers: scaled by the bytes less them
    b.input_pos = 3 * ra
    e = P.estimate_input(b, size=8 * ra)
    assert not e.counted and e.reads == 8 and e.bases == 1120
    assert e.seeded_cpu == pytest.approx(4 * P.seeded_costs(b.lengths())[0])
    b.input_pos_exact = True            # s2g's FASTQ pass: where the records end
    e = P.estimate_input(b, size=9 * ra)
    assert e.reads == 6 and e.bases == 840
    b.input_pos_exact = False
    b.input_pos = 2 * ra - 1            # within the read-ahead: too little to scale from
    assert P.estimate_input(b, size=8 * ra) is None
    b.input_pos = None                  # a pipe
    assert P.estimate_input(b, size=8 * ra) is None


def test_an_empty_input_never_starts_cuda_and_says_nothing():
    batches, run = P.peek_input(iter(()), "-")
    assert list(batches) == [] and run.counted and run.reads == 0
    said = []
    assert not P.gpu_clearly(run, options())
    assert P.choose_device(GRAPH, options(), run, said.append).device == "cpu"
    assert said == []


def test_threads_are_numbas_within_the_cores(monkeypatch):
    from numba import config
    monkeypatch.setattr(config, "NUMBA_NUM_THREADS", 1)
    assert P.threads_of(P.RunOptions()) == 1
    assert P.threads_of(P.RunOptions(threads=3)) == 3


def test_cpu_only_auto_never_names_a_gpu_variant(monkeypatch):
    """A machine where ``fast`` can run: ``auto`` names it, ``auto`` among the CPU
    variants names ``simd`` or ``cpu``, for no shape and for every shape."""
    real = registry.can_run
    monkeypatch.setattr(registry, "can_run",
                        lambda v: (True, "GPU") if v.device == "cuda" else real(v))
    assert registry.pick_auto() == "fast"
    name = registry.pick_auto(cpu_only=True)
    assert name.cpu_only and registry.REGISTRY[str(name)].device == "cpu"
    for n, length in ((1, 150), (5000, 150), (3, 20_000)):
        got = registry.pick_auto(lengths=[length] * n, n_cols=20_000, cpu_only=True)
        assert registry.REGISTRY[got].device == "cpu"


def _sim_cli(*args):
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1",
               PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "s2g", *map(str, args)], capture_output=True,
                          text=True, env=env, timeout=600, cwd=REPO)


def test_cli_on_a_gpu_aligns_a_small_input_on_the_cpu(tmp_path):
    """Under the CUDA simulator ``auto`` is the GPU's ``fast``; the bundled example's 200
    reads are the CPU's: one note, and the GAF of ``--variant simd``."""
    g, fq = REPO / "graphs" / "example.gfa", REPO / "graphs" / "example.fq"
    p = _sim_cli("align", g, fq, "-o", tmp_path / "auto.gaf")
    assert p.returncode == 0, p.stderr
    notes = [ln for ln in p.stderr.splitlines() if "aligning on the CPU" in ln]
    assert len(notes) == 1 and "200 reads" in notes[0], p.stderr
    q = _sim_cli("align", g, fq, "-o", tmp_path / "simd.gaf", "--variant", "simd")
    assert q.returncode == 0, q.stderr
    assert (tmp_path / "auto.gaf").read_bytes() == (tmp_path / "simd.gaf").read_bytes()
    assert "aligning on the CPU" not in q.stderr


def test_a_small_gfa_waits_for_its_graph(tmp_path):
    """A GFA file too small for 1,000,000 columns: the GPU would run full-graph DP there,
    so the device is decided once the graph is loaded (cpu_faster weighs both methods);
    a larger file with many reads starts the GPU at once."""
    run = estimate(1_000_000, 150, False)
    small = P.RunOptions(method="auto", threads=16, graph_path=str(REPO / "graphs" / "example.gfa"))
    assert not P.gpu_clearly(run, small)
    big = tmp_path / "big.gfa"
    big.write_bytes(b"#" * 600_000)
    assert P.gpu_clearly(run, P.RunOptions(method="auto", threads=16, graph_path=str(big)))
    assert P.gpu_clearly(None, small)           # size unknown: the GPU, as before


def test_cuda_starts_in_one_background_thread_and_callers_wait_for_its_answer(monkeypatch):
    """start_cuda: CUDA's start (numba.cuda's import, the driver's) in a thread of its own,
    so that s2g align reads its first reads and loads its graph meanwhile; a
    cuda_available call during it waits for that thread's answer (one start, not two);
    ``then`` runs once, after a start that found a GPU, and never where none was found."""
    import threading
    import time
    calls, then = [], []
    gate = threading.Event()

    def slow_probe():                   # stands in for numba.cuda's import and start
        calls.append(threading.current_thread().name)
        gate.wait(5)
        return True, "Fake GPU"
    for found in (True, False):
        calls.clear(), then.clear(), gate.clear()
        monkeypatch.setattr(registry, "_CUDA_STATE", None)
        monkeypatch.setattr(registry, "CUDA_AT", None)
        t_start = time.perf_counter()
        monkeypatch.setattr(registry, "_probe", slow_probe if found else
                            lambda: (calls.append(1), gate.wait(5), (False, "none"))[2])
        t = registry.start_cuda(lambda: then.append(threading.current_thread().name))
        assert t is not None and t.name == "s2g-cuda-start"
        got = []
        waiter = threading.Thread(target=lambda: got.append(registry.cuda_available()))
        waiter.start()
        time.sleep(0.05)
        assert not got                               # waiting for the starting thread
        gate.set()
        t.join(5)
        waiter.join(5)
        assert len(calls) == 1                       # one start, not two
        assert got == [(True, "Fake GPU") if found else (False, "none")]
        assert then == (["s2g-cuda-start"] if found else [])
        registry.start_cuda(lambda: then.append(2)).join(5)     # known: answered at once
        assert len(calls) == 1 and then == (["s2g-cuda-start", 2] if found else [])
        assert t_start < registry.CUDA_AT < time.perf_counter()   # when the answer came


def test_a_large_reads_file_starts_cuda_before_its_first_batch(monkeypatch, tmp_path):
    """peek_start_cuda: a reads file of at least cuda_early_bytes starts CUDA before its
    first batch is read (the seeding kernels loaded only once that batch says the GPU is
    clearly worth it); a smaller one once the batch says so, and never where it does not
    (few reads)."""
    from s2g.config import configure, settings
    IX = object()                       # the seed index's future: uploaded with the kernels
    events = []
    monkeypatch.setattr(P, "start_cuda_soon", lambda seeds, upload=True:
                        events.append(("cuda", seeds) if upload else ("cuda", seeds, "no upload"))
                        or True)
    monkeypatch.setattr(P, "gpu_clearly", lambda run, opts: run.reads > 100)

    def batches(n, quads=40):
        events.append("read")
        b = ReadBatch.from_sequences([f"r{k}" for k in range(n)], ["ACGT" * quads] * n)
        b.is_last = True                # the input ends here: counted (estimate_input)
        yield b
    old = settings().cuda_early_bytes
    small, big = tmp_path / "small.fq", tmp_path / "big.fq"
    small.write_bytes(b"x" * 1000)
    big.write_bytes(b"x" * 5000)
    try:
        configure(cuda_early_bytes=4000)
        # early: CUDA alone; its seeding kernels only once the batch says the GPU is clear
        for path, n, want in ((big, 1000, [("cuda", None), "read", ("cuda", IX)]),
                              (small, 1000, ["read", ("cuda", IX)]),
                              (small, 10, ["read"]),
                              (big, 10, [("cuda", None), "read"])):
            events.clear()
            got, run, clear = P.peek_start_cuda(batches(n), str(path), options(), IX)
            assert events == want and clear == (n > 100)
            assert sum(b.n_reads for b in got) == n
        configure(cuda_early_bytes=0)
        events.clear()
        P.peek_start_cuda(batches(1000), str(big), options(), None)
        assert events == ["read", ("cuda", None)]
        configure(cuda_early_bytes=-1)          # as before: CUDA started in this thread
        monkeypatch.setattr(registry, "cuda_available", lambda: events.append("sync"))
        events.clear()
        P.peek_start_cuda(batches(1000), str(big), options(), IX)
        assert events == ["read", "sync", ("cuda", IX)]
        events.clear()          # long reads chain on the CPU: the index stays on the host
        P.peek_start_cuda(batches(200, 300), str(big), options(), IX)
        assert events == ["read", "sync", ("cuda", IX, "no upload")]
    finally:
        configure(cuda_early_bytes=old)


def test_gpu_run_modules_imported_while_cuda_starts(monkeypatch):
    """plan.preimport_gpu: where the GPU is clear, s2g align imports the GPU run's modules
    while CUDA starts (knob gpu_preimport); none without the GPU or with the knob off; a
    failing import is left for the run to meet (no error here)."""
    import importlib

    from s2g import config, plan
    names = []

    def imp(name):
        names.append(name)
        if name == "s2g.gaf":
            raise ImportError("broken")
    monkeypatch.setattr(importlib, "import_module", imp)
    plan.preimport_gpu(False)
    assert names == []
    plan.preimport_gpu(True)
    assert names == list(plan.GPU_RUN_MODULES[:plan.GPU_RUN_MODULES.index("s2g.gaf") + 1])
    names.clear()
    config.configure(gpu_preimport=False)
    plan.preimport_gpu(True)
    assert names == []
    monkeypatch.undo()
    for name in plan.GPU_RUN_MODULES:          # each module is there to import
        importlib.import_module(name)


def test_early_context_starts_the_driver_and_retains_device_0s_context_once(monkeypatch):
    """registry.early_context (knob cuda_context_early): cuInit, device 0, its primary
    context retained, through ctypes (calls that leave the GIL free) while numba.cuda is
    imported in another thread; once a process; nothing under the simulator or with
    NUMBA_CUDA_DRIVER, and False (Numba's own start then does it) where a call fails or
    there is no driver."""
    import ctypes
    calls = []

    class FakeLib:
        def __init__(self, fail=None):
            self.fail = fail

        def _call(self, name, *args):
            calls.append(name)
            return 100 if name == self.fail else 0

        def cuInit(self, flags):
            return self._call("cuInit", flags)

        def cuDeviceGet(self, dev, ordinal):
            assert ordinal == 0
            return self._call("cuDeviceGet")

        def cuDevicePrimaryCtxRetain(self, ctx, dev):
            ctx._obj.value = 1234
            return self._call("cuDevicePrimaryCtxRetain")

    monkeypatch.delenv("NUMBA_CUDA_DRIVER", raising=False)
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "0")
    monkeypatch.setattr(registry, "_EARLY", [])
    monkeypatch.setattr(ctypes, "CDLL", lambda name: FakeLib())
    assert registry.early_context()
    assert calls == ["cuInit", "cuDeviceGet", "cuDevicePrimaryCtxRetain"]
    assert registry._EARLY[0][1] == 1234
    assert registry.early_context() and len(calls) == 3          # once a process
    for fail in ("cuInit", "cuDevicePrimaryCtxRetain"):
        calls.clear()
        monkeypatch.setattr(registry, "_EARLY", [])
        monkeypatch.setattr(ctypes, "CDLL", lambda name, f=fail: FakeLib(f))
        assert not registry.early_context() and calls[-1] == fail
        assert not registry.early_context()                    # not tried again

    def missing(name):
        raise OSError(f"{name}: cannot open shared object file")
    monkeypatch.setattr(registry, "_EARLY", [])
    monkeypatch.setattr(ctypes, "CDLL", missing)
    assert not registry.early_context()
    for env, value in (("NUMBA_ENABLE_CUDASIM", "1"), ("NUMBA_CUDA_DRIVER", "/x/libcuda.so")):
        calls.clear()
        monkeypatch.setattr(registry, "_EARLY", [])
        monkeypatch.setattr(ctypes, "CDLL", lambda name: FakeLib())
        monkeypatch.setenv(env, value)
        assert not registry.early_context() and not calls
        monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "0")
        monkeypatch.delenv("NUMBA_CUDA_DRIVER", raising=False)


def test_a_gpu_run_reads_a_small_first_batch_and_larger_ones_after_it(monkeypatch, tmp_path):
    """With a GPU (``auto`` waiting for the input) and no --batch-size, the reader gets
    batch_first reads for the first batch and grows to batch_grow; a --batch-size stays,
    and so does a CPU variant's default."""
    from s2g import cli, reads
    from s2g.config import configure, settings
    from s2g.errors import S2GError
    seen = []

    def reader(path, batch_size, **kw):
        seen.append((batch_size, kw.get("grow_to", 0)))
        raise S2GError("stop here")     # (a one-line error, exit status 1)
    monkeypatch.setattr(reads, "iter_read_batches", reader)
    g, fq = REPO / "graphs" / "example.gfa", REPO / "graphs" / "example.fq"
    old = (settings().batch_first, settings().batch_grow)
    try:
        configure(batch_first=50, batch_grow=100)
        monkeypatch.setattr(P, "input_decides", lambda *a: True)      # a GPU machine
        for more in ([], ["--batch-size", "70"]):
            assert cli.main(["align", str(g), str(fq), "-o", str(tmp_path / "o.gaf"),
                             "--quiet", *more]) == 1
        monkeypatch.setattr(P, "input_decides", lambda *a: False)
        assert cli.main(["align", str(g), str(fq), "-o", str(tmp_path / "o.gaf"), "--quiet",
                         "--variant", "simd"]) == 1
    finally:
        configure(batch_first=old[0], batch_grow=old[1])
    assert seen == [(50, 100), (70, 0), (cli.BATCH, 0)]
