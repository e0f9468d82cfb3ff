"""GPU variants V1-V4 on a real CUDA GPU, exact against V0 (``pytest -m gpu``).

Random graphs and reads in every mode (the simulator cannot see races, warp
scheduling or int32 overflow), V4 forced into multi-pass strips, and the five real
graphs of tests/data/real (break_cycles=True; conftest's real_graph loads each once)
with reads cut from their haplotypes. V1 and V2 launch once per anti-diagonal (~90 us
each), so they run on the smaller inputs: random graphs, V2 on DRB1 in local mode, and
V1/V2 in every mode on a region of DRB1 (test_real_graph_excerpt). Real-graph
references use the ``cpu`` variant (V0's kernel on every core; identical results to V0
by construction and by tests/test_v0.py).
"""
from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pytest

from gpu_cases import GPU_VARIANTS, describe, mismatches, random_graph, random_reads, random_scoring

pytestmark = pytest.mark.gpu


def _cuda_or_skip():
    try:
        from numba import cuda
    except Exception as exc:  # pragma: no cover
        pytest.skip(f"numba-cuda unavailable: {exc}")
    if not cuda.is_available():
        pytest.skip("no CUDA GPU or driver found")
    return cuda


@pytest.fixture(scope="module")
def cuda():
    return _cuda_or_skip()


@pytest.fixture(scope="module")
def real_dir(real_data):
    """The real graphs carried by the repository (tests/data/real; conftest's real_data)."""
    return real_data


def _mod(name):
    return importlib.import_module(f"s2g.variants.{name}")


def _check(name, g, reads, sc, mode, ref=None):
    from s2g.variants import v0_cpu
    ref = ref if ref is not None else v0_cpu.align_batch(g, reads, sc, mode)
    res = _mod(name).align_batch(g, reads, sc, mode)
    bad = mismatches(ref, res)
    assert not bad, f"{name} {mode.name} {sc}: {describe(ref, res, bad)}"
    return ref


@pytest.mark.parametrize("seed", range(4))
def test_random_graphs_every_variant_and_mode(cuda, seed):
    from s2g.scoring import Mode
    rng = np.random.default_rng(100 + seed)
    g = random_graph(rng, n_seg=int(rng.integers(5, 40)), max_seg_len=25, p_link=0.15)
    reads = random_reads(rng, 24, 300)
    sc = random_scoring(rng)
    for mode in Mode:
        ref = _check("v4_interread", g, reads, sc, mode)
        _check("v3_coop", g, reads, sc, mode, ref)
        _check("v2_rolling", g, reads, sc, mode, ref)
        _check("v1_antidiag", g, reads.subset([0, 1, 2]), sc, mode,
               type(ref)(ref.names[:3], ref.lengths[:3], ref.score[:3], ref.end_i[:3], ref.end_j[:3]))


def test_v4_passes_and_small_blocks(cuda, monkeypatch):
    """Reads 1-5x the block: boundary rows carried between strips in global memory."""
    from s2g.scoring import Mode
    from s2g.variants import _cuda_common as cc
    monkeypatch.setattr(cc, "V4_MAX_BLOCK", 32)
    monkeypatch.setattr(cc, "BLOCK", 64)
    rng = np.random.default_rng(7)
    g = random_graph(rng, n_seg=30, max_seg_len=12, p_link=0.2)
    reads = random_reads(rng, 40, 160)
    sc = random_scoring(rng)
    for mode in Mode:
        ref = _check("v4_interread", g, reads, sc, mode)
        _check("v3_coop", g, reads, sc, mode, ref)


def _fasta(path):
    seqs, cur = [], []
    with open(path) as fh:
        lines = fh.read().splitlines()
    if lines and lines[0].startswith("@"):          # FASTQ, 4 lines per record
        return [lines[k + 1] for k in range(0, len(lines) - 3, 4)]
    for line in lines:
        if line.startswith(">"):
            if cur:
                seqs.append("".join(cur))
            cur = []
        elif line:
            cur.append(line.strip())
    if cur:
        seqs.append("".join(cur))
    return seqs


def _pieces(seqs, n, rng, lo=150, hi=1000):
    out = []
    for k in range(n):
        s = seqs[k % len(seqs)]
        ln = int(rng.integers(lo, min(hi, len(s)) + 1))
        st = int(rng.integers(0, len(s) - ln + 1))
        out.append(s[st:st + ln])
    return out


REAL = [  # directory, graph, reads, pieces (None: use the reads as they are), modes, V2's modes
    ("mt_minigraph", "MT.gfa", "MT-human.fa", (6, 150, 1000), "lsg", ""),
    ("drb1_odgi", "DRB1-3123.gfa", "DRB1-3123.fa", (6, 150, 1000), "lsg", "l"),
    ("cactus_brca2_vg", "cactus-BRCA2.gfa", "cactus-BRCA2.fastq", None, "ls", ""),
    ("c4_gwfa", "C4-90.gfa", "C4-NA19240.1.fa", (4, 150, 600), "ls", ""),
    ("lpa_odgi", "LPA.gfa", "LPA.fa", (4, 150, 400), "l", ""),
]


def _real_reads(real_dir, d, fa, cut, rng, hi=None):
    """Reads of a real graph's test: pieces of its haplotypes (``cut``: n, shortest,
    longest; ``hi``: from their first ``hi`` bases only) or a sample of its reads, plus
    the first reverse-complemented (the doubled graph must find it on the - strand)."""
    from s2g.reads import ReadBatch
    seqs = _fasta(Path(real_dir) / d / fa)
    if cut is None:
        seqs = [seqs[k] for k in rng.choice(len(seqs), 24, replace=False)]
    else:
        seqs = _pieces([q[:hi] for q in seqs] if hi else seqs, cut[0], rng, cut[1], cut[2])
    comp = str.maketrans("ACGTacgtNn", "TGCAtgcaNn")
    seqs.append(seqs[0].translate(comp)[::-1])
    return ReadBatch.from_sequences([f"q{k}" for k in range(len(seqs))], seqs)


@pytest.mark.parametrize("case", REAL, ids=[r[0] for r in REAL])
def test_real_graphs(cuda, real_dir, real_graph, case):
    """V4 and V3 on the five real graphs (all reads, every listed mode), V2 on DRB1 (local).
    V1 and V2 are launch-bound (~90 us per launch, one per anti-diagonal: a whole graph
    costs 4-40 s per mode), so their every-mode check on real structure is
    test_real_graph_excerpt; references: the ``cpu`` variant (V0's kernel on every core)."""
    from s2g.scoring import Mode, Scoring
    from s2g.variants import cpu_parallel
    d, gfa, fa, cut, modes, v2_modes = case
    g = real_graph(f"{d}/{gfa}", True)
    reads = _real_reads(real_dir, d, fa, cut, np.random.default_rng(5))
    sc = Scoring()
    for ch in modes:
        mode = {"l": Mode.LOCAL, "s": Mode.SEMIGLOBAL, "g": Mode.GLOBAL}[ch]
        ref = cpu_parallel.align_batch(g, reads, sc, mode)
        _check("v4_interread", g, reads, sc, mode, ref)
        _check("v3_coop", g, reads, sc, mode, ref)
        if ch in v2_modes:
            _check("v2_rolling", g, reads, sc, mode, ref)


def test_real_graph_excerpt(cuda, real_dir):
    """V1-V4 in every mode on a region of DRB1 (its first 400 segments: 4,562 columns,
    281 merges, 6 slots against the whole graph's 7), reads cut from the first 2 kbp of
    its haplotypes; V1 on two of them (one on each strand)."""
    from gpu_cases import gfa_excerpt, load_text
    from s2g.scoring import Mode, Scoring
    from s2g.variants import cpu_parallel
    g = load_text(gfa_excerpt(Path(real_dir) / "drb1_odgi" / "DRB1-3123.gfa", 400))
    reads = _real_reads(real_dir, "drb1_odgi", "DRB1-3123.fa", (8, 100, 400),
                        np.random.default_rng(6), hi=2000)
    sc = Scoring()
    for mode in Mode:
        ref = cpu_parallel.align_batch(g, reads, sc, mode)
        for name in ("v4_interread", "v3_coop", "v2_rolling"):
            _check(name, g, reads, sc, mode, ref)
        two = [0, reads.n_reads - 1]              # a piece and its reverse complement
        _check("v1_antidiag", g, reads.subset(two), sc, mode,
               type(ref)([ref.names[k] for k in two], ref.lengths[two], ref.score[two],
                         ref.end_i[two], ref.end_j[two]))
