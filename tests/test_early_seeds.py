"""The first batch seeded on the CPU while CUDA starts (s2g/seeded/early.py, knob
``early_cpu_seeds``): the candidates handed over are those the aligner makes itself, the
batch's output is the same, and it starts only where it may (an index file, single reads,
the first batch whole, warm caches, a seeded run)."""
from __future__ import annotations

import numpy as np
import pytest

import s2g
from s2g import plan as P
from s2g.config import configure, settings
from s2g.graph import open_graph
from s2g.index import get_index, index_path, preload_index
from s2g.reads import iter_read_batches
from s2g.seeded import SeededAligner, early
from s2g.simulate import simulate


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    d = tmp_path_factory.mktemp("early")
    gfa, fq, _ = simulate(str(d / "snp"), total_bases=40_000, n_reads=300, seed=7)
    g = open_graph(gfa)
    get_index(g, gfa)                           # the index file beside the graph
    return gfa, fq, g


def _windows_equal(a, b):
    for f in ("ncand", "cut", "t_chain", "t_strong", "weak", "t_read", "anchors_best"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f
    assert np.array_equal(a.stats, b.stats)
    for f in ("piece_at", "p_node", "p_lo", "p_hi", "ws"):
        assert np.array_equal(getattr(a.wg, f), getattr(b.wg, f)), f


def _aligner(g, gfa):
    return SeededAligner(g, get_index(g, gfa), s2g.Scoring(), s2g.Mode.LOCAL)


def test_early_candidates_are_the_aligners_own_and_go_to_their_batch_only(sim):
    gfa, fq, g = sim
    first, second = list(iter_read_batches(fq, 150))[:2]
    opts = P.RunOptions(method="auto", graph_path=gfa)
    es = early.EarlySeeds(g, opts, preload_index(index_path(gfa)), first)
    assert es.take(second) is None              # another batch: nothing, no wait
    got = es.take(first)
    assert got is not None and es.error is None
    _windows_equal(got, _aligner(g, gfa).candidates(first))
    assert es.ended["chains"] <= es.ended["windows_of"]


def test_seed_batches_takes_the_early_batch_and_aligns_it_the_same(sim):
    gfa, fq, g = sim
    batches = list(iter_read_batches(fq, 100))
    opts = P.RunOptions(method="auto", graph_path=gfa)
    sa = _aligner(g, gfa)
    es = sa.early = early.EarlySeeds(g, opts, preload_index(index_path(gfa)), batches[0])
    es._thread.join()
    want = es.windows
    out = list(sa.seed_batches(iter(batches)))
    assert sa.early is None and all(b is a for a, b in zip(batches, out))
    assert len(out) == len(batches) > 1
    assert want is not None and out[0]._seeds is want     # taken, not made again
    assert all(b._seeds is not want for b in out[1:])
    assert es.windows is None and es.reads is None        # not held once taken
    assert sa.totals["reads seeded on the CPU at the start"] == batches[0].n_reads
    assert {"chains", "windows_of"} <= set(sa.first_at)
    plain = _aligner(g, gfa)
    for b in out:
        _windows_equal(b._seeds, plain.candidates(b))
        got, ref = sa.align_batch(b, b._seeds), plain.align_batch(b)
        assert np.array_equal(got.score, ref.score) and np.array_equal(got.end_j, ref.end_j)
        assert np.array_equal(got.mapq, ref.mapq)


def test_a_failed_early_seeding_leaves_the_batch_to_the_aligner(sim):
    gfa, fq, g = sim
    batches = list(iter_read_batches(fq, 100))[:2]

    class Broken:
        def result(self):
            raise OSError("index unreadable")
    opts = P.RunOptions(method="auto", graph_path=gfa)
    sa = _aligner(g, gfa)
    sa.early = early.EarlySeeds(g, opts, Broken(), batches[0])
    out = list(sa.seed_batches(iter(batches)))
    assert sa.early is None and sa.totals["reads seeded on the CPU at the start"] == 0
    _windows_equal(out[0]._seeds, _aligner(g, gfa).candidates(batches[0]))


def test_it_starts_only_where_it_may(sim, monkeypatch):
    gfa, fq, g = sim
    opts = P.RunOptions(method="seeded", graph_path=gfa)
    pre = preload_index(index_path(gfa))
    old = (settings().early_cpu_seeds, settings().batch_ramp)
    monkeypatch.setattr(early, "warm", lambda: True)

    def started(options=opts, index=pre, dask=None):
        it = iter_read_batches(fq, 100)
        out, es = P.early_seeds(True, g, options, index, it, None, dask)
        first = next(out)
        assert first.n_reads == 100                 # the first batch put back, whole
        if es is not None:
            assert es.take(first) is not None
        return es is not None
    try:
        configure(early_cpu_seeds=False)
        assert not started()
        configure(early_cpu_seeds=True)
        assert started()
        it = iter_read_batches(fq, 100)
        assert P.early_seeds(False, g, opts, pre, it)[1] is None   # the GPU not clear
        assert not started(index=None)              # the plan builds a missing index
        assert not started(dask="tcp://x:1")
        assert not started(P.RunOptions(method="exact", graph_path=gfa))
        configure(batch_ramp=2)                     # the first batch is cut: not the same object
        assert not started()
        configure(batch_ramp_ends="last")
        assert started()
        configure(batch_ramp=0, batch_ramp_ends="both")
        monkeypatch.setattr(early, "warm", lambda: False)   # it would compile: never
        assert not started()
    finally:
        configure(early_cpu_seeds=old[0], batch_ramp=old[1], batch_ramp_ends="both")


def test_warm_is_false_where_a_seeding_function_has_no_cache_entry(monkeypatch):
    from s2g import warmup
    from s2g.seeded import chains
    monkeypatch.setattr(warmup, "_has_entry", lambda d: d is not chains.batch_chains)
    assert not early.warm()
    monkeypatch.setattr(warmup, "_has_entry", lambda d: True)
    assert early.warm()


def test_a_gpu_aligner_seeds_on_the_cpu_while_its_kernels_and_index_load(sim, monkeypatch):
    """While chains_gpu.preload's thread still loads the kernels and uploads the index, the
    GPU aligner's chains and window searches run on the CPU (counted; the same candidates);
    with the knob off it never does."""
    from s2g.seeded import chains_gpu
    gfa, fq, g = sim
    reads = next(iter(iter_read_batches(fq, 120)))
    monkeypatch.setattr(chains_gpu, "preloading", lambda: True)
    gpu = SeededAligner(g, get_index(g, gfa), s2g.Scoring(), s2g.Mode.LOCAL, device="gpu")
    old = settings().early_cpu_seeds
    try:
        configure(early_cpu_seeds=True)
        assert gpu._gpu_loading()
        _windows_equal(gpu.candidates(reads), _aligner(g, gfa).candidates(reads))
        assert gpu.totals["reads seeded on the CPU at the start"] == reads.n_reads
        configure(early_cpu_seeds=False)
        assert not gpu._gpu_loading()
        monkeypatch.setattr(chains_gpu, "preloading", lambda: False)
        configure(early_cpu_seeds=True)
        assert not gpu._gpu_loading()
    finally:
        configure(early_cpu_seeds=old)


def test_preloading_follows_the_preload_threads(monkeypatch):
    import threading

    from s2g.seeded import chains_gpu
    monkeypatch.setattr(chains_gpu, "_PRELOADS", [])
    assert not chains_gpu.preloading()
    go = threading.Event()
    t = threading.Thread(target=go.wait)
    t.start()
    chains_gpu._PRELOADS.append(t)
    assert chains_gpu.preloading()
    go.set()
    t.join()
    assert not chains_gpu.preloading()
