"""``auto`` on a CPU picks ``simd`` or ``cpu`` for each batch by its shape (issue #40).

The rule (s2g/variants/registry.py, ``pick_auto`` and ``cpu_costs``): ``simd`` runs a
lane group (128 int16 / 32 int32 reads) for the time of its longest read however few
lanes are busy, one group a thread; ``cpu`` runs each read alone on its own thread. With
``SIMD_LANE_SPEEDUP`` (one simd lane-cell against one cpu cell, measured on the dev VM,
2026-11-28) the estimated times on 2 threads give, local mode, default scoring:

============  =====================================  ==================================
read length   lane type, speedup a lane-cell          ``simd`` from (reads in the batch)
============  =====================================  ==================================
150 bp        int16, 16.3                            16
1-2 kbp       int16, 14.4-16.0                       17-18
3 kbp         int16, 10.7                            24
5 kbp         int32, 11.7                            6
10 kbp        int32, 7.7                             9
20 kbp        int32, 2.7                             24
30 kbp        int32, 1.5 (extrapolated)              44
>= ~40 kbp    int32, 1 (extrapolated, floored)       never
============  =====================================  ==================================

On one thread the thresholds halve. A GPU's choice (``fast``) is kept for every shape.
Every variant is exact, so an ``auto`` run's GAF is the same whichever ran.
"""
from __future__ import annotations

import numpy as np
import pytest

import s2g
import s2g.simulate
from s2g.aligner import Aligner
from s2g.gaf import gaf_bytes
from s2g.reads import ReadBatch
from s2g.variants import registry

CPU_ONLY = not registry.cuda_available()[0]
needs_cpu_auto = pytest.mark.skipif(not CPU_ONLY, reason="a GPU here: auto is its variant")


def pick(n, length, threads=2, mode="local"):
    from s2g.scoring import Mode
    return registry.pick_auto(n_reads=n, max_len=length, n_cols=20_000,
                              mode=Mode.parse(mode), threads=threads)


@needs_cpu_auto
@pytest.mark.parametrize("n, length, want", [
    (1, 150, "cpu"), (4, 150, "cpu"), (15, 150, "cpu"), (16, 150, "simd"), (1000, 150, "simd"),
    (1, 1000, "cpu"), (17, 1000, "cpu"), (64, 1000, "simd"), (1, 2000, "cpu"),
    (32, 2000, "simd"), (1, 5000, "cpu"), (5, 5000, "cpu"), (6, 5000, "simd"), (1, 10000, "cpu"), (16, 10000, "simd"),
    (1, 20000, "cpu"), (16, 20000, "cpu"), (32, 20000, "simd"),
    (1, 100_000, "cpu"), (1000, 100_000, "cpu"),
])
def test_rule_table(n, length, want):
    assert pick(n, length) == want


@needs_cpu_auto
def test_threads_and_mode_move_the_threshold():
    assert pick(8, 150, threads=1) == "simd" and pick(8, 150, threads=2) == "cpu"
    # 16 threads: one group of 128 lanes on one thread against 8 reads a thread
    assert pick(100, 150, threads=16) == "cpu" and pick(4096, 150, threads=16) == "simd"
    # semiglobal: int32 lanes from ~1.2 kbp (a bound of 6 m), int16 in local mode
    from s2g.scoring import Mode, Scoring
    from s2g.variants import simd
    assert simd.lane_type(Scoring(), Mode.SEMIGLOBAL, 2000, 0) is np.int32
    assert pick(4, 2000, threads=1, mode="semiglobal") == "simd"
    assert pick(4, 2000, threads=1, mode="local") == "cpu"


def test_mixed_lengths_are_costed_by_group():
    c = registry.cpu_costs([150] * 128 + [20_000], threads=1)
    assert c["cpu"] == 128 * 150 + 20_000
    sp = dict(registry.SIMD_LANE_SPEEDUP["int32"])[20000]
    assert c["simd"] == pytest.approx(128 * 150 / 16.3 + 32 * 20_000 / sp)
    assert registry.cpu_costs([], threads=2) == {"cpu": 0.0, "simd": 0.0}


def test_machine_default_marks_auto():
    name = registry.pick_auto()
    assert isinstance(name, str) and getattr(name, "auto", False)
    assert name in registry.REGISTRY
    if CPU_ONLY:
        assert name == "simd"                    # what `s2g variants` marks [auto]
    shaped = registry.pick_auto(n_reads=1, max_len=150)
    assert not getattr(shaped, "auto", False)


def test_gpu_choice_kept(monkeypatch):
    monkeypatch.setattr(registry, "can_run", lambda info: (True, "pretend"))
    best = max((v for v in registry.REGISTRY.values() if v.auto), key=lambda v: v.rank)
    assert registry.REGISTRY[best.name].device == "cuda"
    for n, length in ((1, 20_000), (1, 150), (10_000, 150)):
        assert registry.pick_auto(n_reads=n, max_len=length, n_cols=20_000) == best.name


# ------------------------------------------------------------------ the Aligner


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A 3 kbp SNP graph (both strands: 6,000 columns), a long-read batch (2 x 2.5 kbp,
    int16 lanes) and a short-read batch (300 x 100 bp)."""
    d = tmp_path_factory.mktemp("auto")
    sg, ref = s2g.simulate.snp_graph(3000, 40, 2, seed=3)
    gfa = str(d / "g.gfa")
    sg.write_gfa(gfa, ref)
    g = s2g.load_graph(gfa)

    def batch(n, length, seed, first):
        rs = s2g.simulate.sample_reads(sg, n, length, 0.02, 0.5, seed)
        return ReadBatch.from_sequences([f"r{first + k}" for k in range(n)],
                                        [s for _, s, _ in rs], first_index=first)
    return g, batch(2, 2500, 5, 0), batch(300, 100, 6, 2)


def triple(res):
    return np.stack([res.score, res.end_i, res.end_j])


@needs_cpu_auto
@pytest.mark.parametrize("mode", ["local", "semiglobal"])
def test_auto_picks_by_batch_and_matches_both(small, mode):
    g, long_b, short_b = small
    al = Aligner(g, mode=mode, variant="auto")
    assert al.variant_for(long_b) == "cpu" and al.variant_for(short_b) == "simd"
    got = [al.align(b) for b in (long_b, short_b)]
    assert set(al.ran) == {"cpu", "simd"}
    assert al.ran["cpu"] == [1, 2] and al.ran["simd"] == [1, 300]
    d = al.describe()
    assert "cpu 1 batch (2 reads)" in d and "simd 1 batch (300 reads)" in d
    for v in ("cpu", "simd"):
        ref = Aligner(g, mode=mode, variant=v)
        for b, res in zip((long_b, short_b), got):
            want = ref.align(b)
            assert np.array_equal(triple(res), triple(want))
            assert gaf_bytes(g, res) == gaf_bytes(g, want)       # byte-identical GAF
        assert ref.describe() == f"variant {v}"


@needs_cpu_auto
def test_cli_name_is_auto_named_variant_is_not(small):
    """``s2g align`` resolves ``auto`` to ``pick_auto()`` before building its Aligner: that
    name still picks per batch; ``--variant simd`` runs simd for every batch."""
    g, long_b, _ = small
    al = Aligner(g, variant=registry.pick_auto(), traceback=False)
    al.align(long_b)
    assert al.auto and list(al.ran) == ["cpu"] and al.describe() == "variant cpu"
    fixed = Aligner(g, variant="simd", traceback=False)
    fixed.align(long_b)
    assert not fixed.auto and list(fixed.ran) == ["simd"] and fixed.describe() == "variant simd"


def test_no_driver_skips_importing_numba_cuda(monkeypatch):
    """registry._no_driver: where the CUDA driver library cannot be loaded, there is no GPU
    (cuda_available says so without importing numba.cuda, 0.35-0.5 s); never where the
    simulator is asked for or NUMBA_CUDA_DRIVER names a driver."""
    import ctypes

    def missing(name):
        raise OSError(f"{name}: cannot open shared object file")
    monkeypatch.setattr(ctypes, "CDLL", missing)
    monkeypatch.delenv("NUMBA_CUDA_DRIVER", raising=False)
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "0")
    assert registry._no_driver()
    monkeypatch.setattr(registry, "_CUDA_STATE", None)
    assert registry.cuda_available() == (False, "no CUDA GPU or driver found")
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    assert not registry._no_driver()
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "0")
    monkeypatch.setenv("NUMBA_CUDA_DRIVER", "/opt/cuda/libcuda.so")
    assert not registry._no_driver()
    monkeypatch.delenv("NUMBA_CUDA_DRIVER")
    monkeypatch.setattr(ctypes, "CDLL", lambda name: object())
    assert not registry._no_driver()
