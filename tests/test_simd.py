"""The simd variant against V0 (score AND end cell) and its windows against s2g.window.

Random DAGs and reads (hypothesis, tests/naive.py's graph strategy), every mode, the
int16 and int32 lane types (int32 forced, and reached by a scoring whose bound does
not fit int16), the int64 fallback, partial groups (few lanes per group, idle lanes,
reads of mixed lengths in one group), the real graphs, and the kernel's assembly.
"""
from __future__ import annotations

import os
import platform
import tempfile
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import naive
import s2g
import s2g.simulate
from s2g.errors import S2GError
from s2g.reads import ReadBatch
from s2g.scoring import Mode
from s2g.variants import registry, simd, v0_cpu

window_ref = pytest.importorskip("s2g.window").align_windows_ref

MODES = [Mode.LOCAL, Mode.SEMIGLOBAL, Mode.GLOBAL]
SETTINGS = settings(max_examples=int(os.environ.get("S2G_EXAMPLES", 40)), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
_TMP = tempfile.mkdtemp(prefix="s2g-test-simd-")
scorings = st.builds(s2g.Scoring, st.integers(1, 5), st.integers(0, 6), st.integers(0, 6),
                     st.integers(1, 4))
TYPES = st.sampled_from([None, None, np.int32, np.int64])
LANES = st.sampled_from([None, 1, 2, 3])


def write_tmp(text: str) -> str:
    fd, path = tempfile.mkstemp(suffix=".gfa", dir=_TMP)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    return path


def batch_of(reads):
    return ReadBatch.from_sequences([f"r{k}" for k in range(len(reads))], reads)


@st.composite
def cases(draw, max_segs=5, max_len=5, max_reads=7):
    """A random DAG (both strands), reads of mixed lengths: random strings (some empty)
    and mutated pieces of walks."""
    text = naive.random_dag_gfa(draw, st, max_segs=max_segs, max_len=max_len)
    segs, links = naive.parse_gfa_text(text)
    paths = naive.enumerate_paths(segs, links)
    reads = []
    for _ in range(draw(st.integers(1, max_reads))):
        if draw(st.booleans()):
            reads.append("".join(draw(st.lists(st.sampled_from("ACGTN"), max_size=14))))
        else:
            ref = naive.spell(segs, draw(st.sampled_from(paths)))
            i = draw(st.integers(0, len(ref) - 1))
            r = list(ref[i:i + draw(st.integers(1, 16))])
            for _ in range(draw(st.integers(0, 2))):
                r[draw(st.integers(0, len(r) - 1))] = draw(st.sampled_from("ACGTN"))
            reads.append("".join(c if c in "ACGTN" else "N" for c in r))
    return text, reads


def assert_same(expect, got, what):
    for name, x, y in zip(("score", "end_i", "end_j"), expect, got):
        np.testing.assert_array_equal(x, y, err_msg=f"{what}: {name} differs")


def triple(res):
    return res.score, res.end_i, res.end_j


# --------------------------------------------------------------------- whole graph

@SETTINGS
@given(case=cases(), mode=st.sampled_from(MODES), sc=scorings, force=TYPES, lanes=LANES,
       strands=st.sampled_from(["both", "forward"]))
def test_simd_equals_v0_on_random_graphs(case, mode, sc, force, lanes, strands):
    text, reads = case
    graph = s2g.load_graph(write_tmp(text), strands=strands)
    batch = batch_of(reads)
    expect = v0_cpu.align_batch(graph, batch, sc, mode)
    got = simd.align_batch(graph, batch, sc, mode, force_type=force, lanes=lanes)
    assert_same(triple(expect), triple(got), f"{mode.name} {sc} type={force} lanes={lanes}")


def test_lane_type_switch():
    sc = s2g.Scoring()
    assert simd.lane_type(sc, Mode.LOCAL, 150, 10**6) is np.int16
    assert simd.lane_type(sc, Mode.SEMIGLOBAL, 150, 10**6) is np.int16
    # global: the bound grows with the graph (deleting all of it)
    assert simd.lane_type(sc, Mode.GLOBAL, 150, 10**6) is np.int32
    assert simd.lane_type(s2g.Scoring(100, 4, 4, 2), Mode.LOCAL, 100, 10) is np.int32
    assert simd.lane_type(s2g.Scoring(10_000, 4, 4, 2), Mode.LOCAL, 30_000, 10) is np.int64


def test_int32_by_the_score_bound_not_forced():
    """match 60 x 150 bp = 9,000 > INT16_BOUND: these reads run in int32 lanes unforced,
    beside 40 bp reads (2,400) that stay in int16."""
    sim, ref = s2g.simulate.snp_graph(3000, 20, 3, seed=7)
    path = os.path.join(_TMP, "snp3k.gfa")
    sim.write_gfa(path, ref)
    graph = s2g.load_graph(path)
    recs = s2g.simulate.sample_reads(sim, 24, 150, 0.03, 0.5, seed=8)
    seqs = [s if k % 2 else s[:40] for k, (_, s, _) in enumerate(recs)]
    sc = s2g.Scoring(60, 40, 30, 20)
    assert simd.lane_type(sc, Mode.LOCAL, 150, graph.n_bases) is np.int32
    assert simd.lane_type(sc, Mode.LOCAL, 40, graph.n_bases) is np.int16
    batch = batch_of(seqs)
    for mode in (Mode.LOCAL, Mode.SEMIGLOBAL):
        assert_same(triple(v0_cpu.align_batch(graph, batch, sc, mode)),
                    triple(simd.align_batch(graph, batch, sc, mode)), mode.name)


def test_registered_between_cpu_and_fast():
    info = registry.REGISTRY["simd"]
    assert info.device == "cpu" and info.auto
    assert registry.REGISTRY["cpu"].rank < info.rank < registry.REGISTRY["fast"].rank
    if not registry.cuda_available()[0]:
        assert registry.pick_auto() == "simd"


# --------------------------------------------------------------------- windows

@st.composite
def window_cases(draw):
    text, reads = draw(cases(max_segs=6, max_len=6))
    return text, reads, draw(st.lists(st.tuples(st.integers(0, 40), st.integers(-2, 40),
                                                st.integers(0, 40)), min_size=1, max_size=12))


@SETTINGS
@given(case=window_cases(), mode=st.sampled_from(MODES[:2]), sc=scorings, force=TYPES,
       lanes=LANES, ratio=st.sampled_from([0.0, simd.UNION_RATIO, 1e9]))
def test_windows_equal_the_reference(case, mode, sc, force, lanes, ratio):
    """ratio 0: every group in lockstep; 1e9: every group on its union range."""
    saved, simd.UNION_RATIO = simd.UNION_RATIO, ratio
    try:
        check_windows(case, mode, sc, force, lanes)
    finally:
        simd.UNION_RATIO = saved


def check_windows(case, mode, sc, force, lanes):
    text, reads, raw = case
    graph = s2g.load_graph(write_tmp(text))
    batch = batch_of(reads)
    nb = graph.n_bases
    # windows anywhere (empty, past the end, the whole graph), reads drawn per task
    task_read = np.array([r % len(reads) for r, _, _ in raw], np.int64)
    task_lo = np.array([lo % (nb + 1) for _, lo, _ in raw], np.int64)
    task_hi = np.minimum(task_lo + np.array([w for _, _, w in raw], np.int64), nb)
    task_lo[0], task_hi[0] = 0, nb
    args = (graph, batch.codes_flat, batch.offsets, task_read, task_lo, task_hi, sc, mode)
    assert_same(window_ref(*args), simd.align_windows(*args, force_type=force, lanes=lanes),
                f"{mode.name} {sc} type={force} lanes={lanes}")
    # the whole graph as a window is V0
    full = simd.align_windows(graph, batch.codes_flat, batch.offsets,
                              np.arange(len(reads)), np.zeros(len(reads), np.int64),
                              np.full(len(reads), nb, np.int64), sc, mode, lanes=lanes)
    assert_same(triple(v0_cpu.align_batch(graph, batch, sc, mode)), full, "whole-graph windows")


def test_windows_refuse_global():
    graph = s2g.load_graph(write_tmp("S\t1\tACGT\n"))
    with pytest.raises(S2GError, match="local or semiglobal"):
        simd.align_windows(graph, np.zeros(4, np.uint8), np.array([0, 4]), np.array([0]),
                           np.array([0]), np.array([4]), s2g.Scoring(), Mode.GLOBAL)


# --------------------------------------------------------------------- real graphs

REAL = [("cactus_brca2_vg/cactus-BRCA2.gfa", False), ("drb1_odgi/DRB1-3123.gfa", False),
        ("mt_minigraph/MT.gfa", True), ("c4_gwfa/C4-90.gfa", False)]


def real_reads(graph, n, length, seed):
    """Pieces of the graph's own sequence (random columns, both strands), 5% substituted."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        v = int(rng.integers(0, graph.n_nodes))
        j = int(graph.node_start[v])
        seq = graph.base[j:j + length].copy()
        mut = rng.random(len(seq)) < 0.05
        seq[mut] = rng.integers(0, 4, int(mut.sum()))
        out.append(seq)
    return ReadBatch.from_codes([f"q{k}" for k in range(n)], out)


@pytest.mark.parametrize("gfa,cyclic", REAL, ids=[g.split("/")[0] for g, _ in REAL])
def test_real_graphs(real_data, gfa, cyclic, monkeypatch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graph = s2g.load_graph(str(real_data / gfa), break_cycles=cyclic)
    small = graph.n_bases < 100_000
    batch = real_reads(graph, 6 if small else 3, 150, seed=len(gfa))
    sc = s2g.Scoring()
    for mode in (MODES if small else MODES[:2]):
        assert_same(triple(v0_cpu.align_batch(graph, batch, sc, mode)),
                    triple(simd.align_batch(graph, batch, sc, mode)), f"{gfa} {mode.name}")
    # seeded-style windows: 3 per read, 200-600 columns, one around the read's origin
    rng = np.random.default_rng(3)
    nt = 3 * batch.n_reads
    task_read = np.repeat(np.arange(batch.n_reads), 3)
    task_lo = rng.integers(0, graph.n_bases, nt)
    task_hi = np.minimum(task_lo + rng.integers(200, 600, nt), graph.n_bases)
    for mode in MODES[:2]:
        args = (graph, batch.codes_flat, batch.offsets, task_read, task_lo, task_hi, sc, mode)
        expect = window_ref(*args)
        for ratio in (0.0, 1e9):             # lockstep, union range
            monkeypatch.setattr(simd, "UNION_RATIO", ratio)
            assert_same(expect, simd.align_windows(*args), f"{gfa} windows {mode.name} {ratio}")


# --------------------------------------------------------------------- assembly

@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86 mnemonics")
def test_int16_kernel_keeps_16_bit_arithmetic():
    """The column loop must stay in 16-bit lanes (vpmaxsw/vpaddw), never widen to 64-bit
    (vpmaxsq needs AVX-512; without it a widened loop shows no vpmaxsw in any width)."""
    graph = s2g.load_graph(write_tmp("S\t1\tACGTACGT\n"))
    simd.align_batch(graph, batch_of(["ACGT"]), s2g.Scoring(), Mode.LOCAL)
    counts = simd.asm_report(np.int16)
    by = {}
    for (op, reg), c in counts.items():
        by[op] = by.get(op, 0) + c
    assert by.get("vpmaxsw", 0) >= 6, counts
    assert by.get("vpaddw", 0) + by.get("vpsubw", 0) >= 4, counts
    assert by.get("vpmaxsq", 0) == 0 and by.get("vpminsq", 0) == 0, counts


@pytest.mark.parametrize("width", ["512", "256"])
def test_intel_tuning_gets_512_bit_vectors(width):
    """LLVM tunes Intel Xeons to prefer 256-bit vectors (the GPU machine's Emerald Rapids
    compiled the int16 lanes to ymm); s2g turns that off where AVX-512BW is there
    (s2g/_numba.py), and the knob vector_width=256 keeps it. Compiled here tuned for an Intel
    CPU (NUMBA_CPU_NAME) with this host's features, in a fresh process, uncached."""
    import subprocess
    import sys
    from numba.core.codegen import get_host_cpu_features
    if "+avx512bw" not in get_host_cpu_features().split(","):
        pytest.skip("no AVX-512BW on this CPU")
    env = dict(os.environ, NUMBA_CPU_NAME="emeraldrapids", S2G_CONFIG=f"vector_width={width}",
               S2G_NO_CACHE="1")
    code = ("import numpy as np, s2g\nfrom s2g.variants import simd\n"
            "c = simd.asm_report(np.int16)\n"
            "print(sum(n for (op, reg), n in c.items() if reg == 'zmm' and op == 'vpmaxsw'))")
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    zmm = int(p.stdout.split()[-1])
    assert (zmm >= 6) if width == "512" else (zmm == 0), p.stdout


# --------------------------------------------------------------------- GAF

@pytest.mark.parametrize("mode", ["local", "semiglobal", "global"])
def test_gaf_byte_identical_to_v0(mode):
    """The bundled example (10 kbp SNP graph, both strands; 40 of its 200 reads), traceback on."""
    import io

    from s2g.gaf import write_gaf
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    graph = s2g.load_graph(os.path.join(root, "graphs", "example.gfa"))
    reads = s2g.read_reads(os.path.join(root, "graphs", "example.fq")).subset(range(40))
    text = {}
    for variant in ("v0", "simd"):
        buf = io.StringIO()
        write_gaf(buf, graph, s2g.align(graph, reads, s2g.Scoring(), mode, variant=variant))
        text[variant] = buf.getvalue()
    assert text["simd"] == text["v0"]
    assert text["v0"].count("\n") == 40 and "cg:Z:" in text["v0"]


def test_more_lanes_than_the_type_has_is_an_error():
    """Groups are LANES wide (the column loop's trip count is that constant): a wider
    override is refused with a clear error, not run out of bounds."""
    graph = s2g.load_graph(write_tmp("S\t1\tACGTACGT\n"))
    n = simd.LANES[np.int16]
    with pytest.raises(s2g.S2GError, match=f"at most {n} int16 lanes"):
        simd.align_batch(graph, batch_of(["ACGT"]), s2g.Scoring(), Mode.LOCAL, lanes=n + 1)
