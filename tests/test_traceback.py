"""Traceback by invariants (STYLE.md habit 9) and tiny hand-drawn graphs.

For every aligned read the GAF line is checked against the GFA *text* and the read
(tests/naive.py ``check_gaf_line``): the path is a walk of the GFA in the right
orientations, the CIGAR consumes qend-qstart read bases and path_end-path_start path
bases, ``=``/``X`` agree with the bases, the CIGAR re-scores to AS, AS is the naive
optimum, local CIGARs start and end with ``=``, semiglobal/global consume the whole
read and global spans a whole source-to-sink walk.
"""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_v0 import MODES, SETTINGS, batch_of, dag_cases, scorings, write_tmp

import naive
import s2g
from s2g.gaf import gaf_line


def aligned_lines(graph, reads, sc, mode, variant="v0", **kw):
    res = s2g.align(graph, batch_of(reads), sc, mode=mode, variant=variant, **kw)
    return res, [gaf_line(graph, r) for r in res]


@SETTINGS
@given(case=dag_cases(), mode=st.sampled_from(MODES), sc=scorings,
       strands=st.sampled_from(["both", "both", "forward"]), variant=st.sampled_from(["v0", "cpu"]))
def test_traceback_invariants_on_random_dags(case, mode, sc, strands, variant):
    text, reads = case
    graph = s2g.load_graph(write_tmp(text), strands=strands)
    segs, links = naive.parse_gfa_text(text)
    bg = naive.base_graph(segs, links, strands)
    res, lines = aligned_lines(graph, reads, sc, mode, variant)
    for k, read in enumerate(reads):
        expect = naive.graph_align(bg, read, mode, *sc.as_tuple())[0] if read else None
        if expect is None:
            assert lines[k].split("\t")[2:12] == ["0", "0", "*", "*", "0", "0", "0", "0", "0", "0"]
            continue
        got = naive.check_gaf_line(lines[k], segs, links, read, mode, *sc.as_tuple(),
                                   strands=strands, expected_score=expect)
        tb = res[k].traceback
        assert tb.qend == res[k].end_i, "the traceback must end at the reported end row"
        assert graph.node_of_column(res[k].end_j) == tb.path[-1], "the path must end at the end column's node"
        assert (got["qstart"], got["qend"]) == (tb.qstart, tb.qend)


# ----------------------------------------------------------------- hand-drawn graphs
#
#   bubble:          G            (2)
#        ACGTAC --<     >-- TTGCA
#         (1)      C    (4)
#                 (3)
BUBBLE = ("S\t1\tACGTAC\nS\t2\tG\nS\t3\tC\nS\t4\tTTGCA\n"
          "L\t1\t+\t2\t+\t0M\nL\t1\t+\t3\t+\t0M\nL\t2\t+\t4\t+\t0M\nL\t3\t+\t4\t+\t0M\n")

#   inversion: 1+ then segment 2 read backwards, then 3+
#        AAACCC -->  <GGTTA  --> CATCAT
#         (1)          (2)        (3)
INVERSION = ("S\t1\tAAACCC\nS\t2\tGGTTA\nS\t3\tCATCAT\n"
             "L\t1\t+\t2\t-\t0M\nL\t2\t-\t3\t+\t0M\n")


def revcomp(s):
    return naive.revcomp(s)


@pytest.mark.parametrize("text,read,mode,path,cigar", [
    # allele G of the bubble, exact
    (BUBBLE, "ACGTACGTTGCA", "global", ">1>2>4", "12="),
    # allele C
    (BUBBLE, "GTACCTTG", "local", ">1>3>4", "8="),
    # the reverse complement walks the other strand: <4<3<1
    (BUBBLE, revcomp("GTACCTTG"), "local", "<4<3<1", "8="),
    # an inversion link: 1+ -> 2- (TAACC) -> 3+
    (INVERSION, "CCCTAACCCAT", "local", ">1<2>3", "11="),
    (INVERSION, revcomp("CCCTAACCCAT"), "semiglobal", "<3>2<1", "11="),
    # a read with one mismatch in the middle of the allele-G walk
    (BUBBLE, "GTACGATGCA", "local", ">1>2>4", "5=1X4="),
], ids=["bubble-G-global", "bubble-C-local", "bubble-reverse", "inversion", "inversion-reverse",
        "mismatch"])
def test_hand_drawn_paths(gfa_file, text, read, mode, path, cigar):
    graph = s2g.load_graph(gfa_file(text))
    _, lines = aligned_lines(graph, [read], s2g.Scoring(), mode)
    f = lines[0].split("\t")
    assert f[5] == path and f[-1] == f"cg:Z:{cigar}", lines[0]
    segs, links = naive.parse_gfa_text(text)
    naive.check_gaf_line(lines[0], segs, links, read, mode, *s2g.Scoring().as_tuple())


def test_deletion_across_a_bubble(gfa_file):
    # the read skips the 1-base allele and one base more: a 2-base deletion
    # ACGTAC [G T] TGCA -> ACGTAC TGCA ; score 10*2 - (4 + 2*2) = 12
    graph = s2g.load_graph(gfa_file(BUBBLE))
    res, lines = aligned_lines(graph, ["ACGTACTGCA"], s2g.Scoring(), "global")
    assert res[0].score == 12
    segs, links = naive.parse_gfa_text(BUBBLE)
    naive.check_gaf_line(lines[0], segs, links, "ACGTACTGCA", "global", 2, 4, 4, 2, expected_score=12)


def test_insertion_before_the_graph_in_semiglobal(gfa_file):
    # semiglobal must consume the whole read: 3 leading bases can only be inserted
    graph = s2g.load_graph(gfa_file("S\t1\tACGT\n"), strands="forward")
    res, lines = aligned_lines(graph, ["TTTACGT"], s2g.Scoring(), "semiglobal")
    assert res[0].score == 4 * 2 - (4 + 3 * 2)
    assert lines[0].split("\t")[-1] == "cg:Z:3I4="


def test_traceback_window_limit_is_a_clear_error(gfa_file):
    graph = s2g.load_graph(gfa_file(BUBBLE))
    with pytest.raises(s2g.S2GError, match="max-traceback-cells") as exc:
        s2g.align(graph, batch_of(["ACGTACGTTGCA"]), mode="local", variant="v0",
                  max_traceback_cells=10)
    assert "\n" not in str(exc.value)


# ---------------------------------------------------------------- batch traceback

@SETTINGS
@given(case=dag_cases(), mode=st.sampled_from(MODES), sc=scorings, chunk=st.integers(1, 60))
def test_batch_traceback_equals_per_read(case, mode, sc, chunk):
    """traceback_batch (parallel Numba call over chunks of reads) == traceback_one per read,
    with chunks small enough to split the batch (FlatTracebacks.add packs each chunk's
    runs and paths)."""
    from s2g.trace import batch as tb
    from s2g.trace import traceback_one
    gfa, reads = case
    graph = s2g.load_graph(write_tmp(gfa))
    batch = batch_of(reads)
    res = s2g.align(graph, batch, sc, mode, variant="v0", traceback=False)
    old = tb.CHUNK_OPS
    tb.CHUNK_OPS = chunk
    try:
        tb.traceback_batch(graph, batch, sc, s2g.Mode.parse(mode), res)
    finally:
        tb.CHUNK_OPS = old
    for r, one in enumerate(res):
        want = (traceback_one(graph, batch.codes(r), one.score, one.end_i, one.end_j, sc,
                              s2g.Mode.parse(mode)) if one.aligned else None)
        assert one.traceback == want


# ---------------------------------------------------------------- row checkpoints

@SETTINGS
@given(case=dag_cases(), mode=st.sampled_from(MODES), sc=scorings, band=st.integers(1, 4))
def test_banded_traceback_equals_one_pass(case, mode, sc, band):
    """Recomputing bands of `band` rows from checkpoints gives the same alignment."""
    gfa, reads = case
    graph = s2g.load_graph(write_tmp(gfa))
    batch = batch_of(reads)
    res = s2g.align(graph, batch, sc, mode, variant="v0", traceback=True)
    from s2g.trace import traceback_one
    for r, one in enumerate(res):
        if not one.aligned:
            continue
        banded = traceback_one(graph, batch.codes(r), one.score, one.end_i, one.end_j, sc,
                               s2g.Mode.parse(mode), band=band)
        assert banded == one.traceback


def test_long_read_traceback_under_a_small_limit(gfa_file):
    """A limit below the one-pass window (but above the checkpointed need) still gives
    the same traceback; far below it, a clear error."""
    import numpy as np

    from s2g.trace.scalar import graph_tuple, traceback_read
    rng = np.random.default_rng(7)
    seq = "".join(rng.choice(list("ACGT"), 1200))
    graph = s2g.load_graph(gfa_file(f"S\t1\t{seq[:700]}\nS\t2\t{seq[700:]}\nL\t1\t+\t2\t+\t0M\n"),
                           strands="forward")
    read = list(seq[100:1000])
    for k in range(50, 900, 97):
        read[k] = "A" if read[k] != "A" else "C"
    batch = batch_of(["".join(read)])
    full = s2g.align(graph, batch, mode="local", variant="v0")[0]
    st_, _, _, _, cells = traceback_read(
        batch.codes(0), full.end_i, full.end_j, full.score, graph_tuple(graph), 0,
        s2g.Scoring().as_tuple(), 1 << 40)
    assert st_ == 0 and cells > 800 * 900            # the one-pass window (bytes)
    small = s2g.align(graph, batch, mode="local", variant="v0", max_traceback_cells=cells // 2)[0]
    assert small.traceback == full.traceback          # done in bands from row checkpoints
    with pytest.raises(s2g.S2GError, match="max-traceback-cells"):
        s2g.align(graph, batch, mode="local", variant="v0", max_traceback_cells=cells // 40)


# ---------------------------------------------------------------- lanes across reads
#
# traceback_batch traces most reads in lanes (int16/int32 lanes across reads, windows as
# column programs run in lockstep); traceback_read, one read per thread, is the
# reference (LaneLimits(cells=0) sends every read there). Every GAF field must agree.

def _traced(graph, batch, sc, mode, res, col_lo=None, limits=None, **patch):
    """Tracebacks and GAF lines of ``res`` (scores and end cells only) under the lane
    ``limits`` (:class:`s2g.trace.LaneLimits`) and module patches of s2g.trace.batch
    (lane counts, lane types, hooks; restored after)."""
    import numpy as np

    from s2g.result import BatchResult
    from s2g.trace import batch as tb
    saved = {k: getattr(tb, k) for k in patch}
    try:
        for k, v in patch.items():
            setattr(tb, k, v)
        out = BatchResult(res.names, res.lengths, np.asarray(res.score), np.asarray(res.end_i),
                          np.asarray(res.end_j))
        tb.traceback_batch(graph, batch, sc, s2g.Mode.parse(mode), out, col_lo=col_lo,
                           limits=limits)
    finally:
        for k, v in saved.items():
            setattr(tb, k, v)
    return out.tracebacks, [gaf_line(graph, r) for r in out]


def _lane_patches(lanes, int32, defer):
    """lanes per group; int32 lanes for every read; plain lanes for windows of at most
    40 cells (the rest in row bands: mixed batches), or groups' direction bytes small
    enough that the groups shrink (one super-batch per group)."""
    import numpy as np

    from s2g.trace import LaneLimits
    p = {}
    if lanes:
        p["LANES_TB"] = {np.int16: lanes, np.int32: lanes}
    if int32:
        p["_lane_types"] = lambda sc, mode, rows, nb: np.ones(len(rows), np.int64)
    if defer == "cells":
        p["limits"] = LaneLimits(cells=40)
    elif defer == "group":
        p["limits"] = LaneLimits(group_bytes=200)
        p["SUPER"] = 1
    return p


def assert_lanes_equal_scalar(graph, batch, sc, mode, res, col_lo=None, limits=None, **patch):
    from s2g.trace import LaneLimits
    want = _traced(graph, batch, sc, mode, res, col_lo, LaneLimits(cells=0))
    got = _traced(graph, batch, sc, mode, res, col_lo, limits, **patch)
    assert got[1] == want[1]
    assert got[0] == want[0]


LANE_OPTS = dict(lanes=st.sampled_from([None, 1, 2, 3]), int32=st.booleans(),
                 defer=st.sampled_from([None, None, "cells", "group"]))


@SETTINGS
@given(case=dag_cases(), mode=st.sampled_from(MODES), sc=scorings, **LANE_OPTS)
def test_lane_traceback_equals_scalar(case, mode, sc, lanes, int32, defer):
    """Random DAGs (both strands), every mode, random scorings; partial groups, int32
    lanes, and batches split between the lanes and traceback_read."""
    text, reads = case
    graph = s2g.load_graph(write_tmp(text))
    batch = batch_of(reads)
    res = s2g.align(graph, batch, sc, mode, variant="v0", traceback=False)
    assert_lanes_equal_scalar(graph, batch, sc, mode, res, **_lane_patches(lanes, int32, defer))


def _window_results(graph, batch, sc, mode, lo, hi):
    """Scores and end cells of read k inside columns [lo[k], hi[k]) (seeded alignment's
    windows), as a BatchResult for traceback_batch(col_lo=lo)."""
    import numpy as np

    from s2g.result import BatchResult
    from s2g.variants import simd
    n = batch.n_reads
    s, i, j = simd.align_windows(graph, batch.codes_flat, batch.offsets, np.arange(n), lo, hi,
                                 sc, s2g.Mode.parse(mode))
    return BatchResult(batch.names, batch.lengths(), s, i, j)


@SETTINGS
@given(case=dag_cases(), mode=st.sampled_from(MODES[:2]), sc=scorings, data=st.data(),
       **LANE_OPTS)
def test_lane_traceback_in_windows(case, mode, sc, data, lanes, int32, defer):
    """Seeded alignment's col_lo windows: each read aligned inside a random column range,
    traced from columns >= its start."""
    import numpy as np
    text, reads = case
    graph = s2g.load_graph(write_tmp(text))
    batch = batch_of(reads)
    nb = graph.n_bases
    lo = np.array([data.draw(st.integers(0, nb - 1)) for _ in reads], np.int64)
    hi = np.minimum(lo + np.array([data.draw(st.integers(1, nb)) for _ in reads]), nb)
    res = _window_results(graph, batch, sc, mode, lo, hi)
    assert_lanes_equal_scalar(graph, batch, sc, mode, res, col_lo=lo,
                              **_lane_patches(lanes, int32, defer))


@pytest.mark.parametrize("gfa,cyclic", [("cactus_brca2_vg/cactus-BRCA2.gfa", False),
                                        ("drb1_odgi/DRB1-3123.gfa", False),
                                        ("mt_minigraph/MT.gfa", True),
                                        ("c4_gwfa/C4-90.gfa", False)],
                         ids=["cactus", "drb1", "mt", "c4"])
def test_lane_traceback_on_real_graphs(real_data, gfa, cyclic):
    """Reads from the graphs' own sequence (5% substituted), whole-graph DP in every mode
    where the graph is small, and seeded-style windows around each read's end cell."""
    import warnings

    import numpy as np
    from test_simd import real_reads

    from s2g.variants import simd
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graph = s2g.load_graph(str(real_data / gfa), break_cycles=cyclic)
    batch = real_reads(graph, 40, 150, seed=len(gfa))
    sc = s2g.Scoring()
    for mode in (MODES if graph.n_bases < 100_000 else MODES[:2]):
        res = simd.align_batch(graph, batch, sc, s2g.Mode.parse(mode))
        assert_lanes_equal_scalar(graph, batch, sc, mode, res)
        assert_lanes_equal_scalar(graph, batch, sc, mode, res, **_lane_patches(3, True, None))
        if mode == "global":
            continue
        rng = np.random.default_rng(5)
        ej = np.asarray(res.end_j)
        lo = np.maximum(0, ej - rng.integers(100, 600, len(ej)))
        hi = np.minimum(ej + rng.integers(1, 100, len(ej)), graph.n_bases)
        wres = _window_results(graph, batch, sc, mode, lo, hi)
        assert_lanes_equal_scalar(graph, batch, sc, mode, wres, col_lo=lo)


@pytest.mark.skipif(__import__("platform").machine() not in ("x86_64", "AMD64"),
                    reason="x86 mnemonics")
def test_lane_traceback_keeps_16_bit_arithmetic():
    """The int16 column loop and merge compile to 16-bit vector instructions (vpmaxsw,
    vpsubw, vpcmpgtw); nothing widens to 32 or 64 bits."""
    from s2g.trace import asm_report
    by = {}
    for (op, reg), c in asm_report().items():
        by[op] = by.get(op, 0) + c
    assert by.get("vpmaxsw", 0) >= 4 and by.get("vpsubw", 0) >= 4, by
    assert by.get("vpcmpgtw", 0) >= 5, by
    wide = [op for op in by if op[-1] in "dq" and op.startswith(("vpmax", "vpmin", "vpadd",
                                                                  "vpsub", "vpcmpgt"))]
    assert not wide, by


# ---------------------------------------------------------------- lanes with row bands
#
# Windows over LANE_CELLS cells run in lanes with row bands (a checkpoint pass keeping H
# and F of every Bh-th row, then bands recomputed bottom up while the walks climb). With
# LaneLimits(cells=1) every window takes that path; LaneLimits(band=...) forces tiny
# bands (1-3 rows: many bands, walks that pause and resume at every band edge).
# traceback_read is the reference, field by field.

def _no_scalar(*args):
    raise AssertionError("a window was left to traceback_read (a lane's walk did not end?)")


def _band_patches(band, int32=False, lanes=None, split=None):
    """Every window in row bands of ``band`` rows (0: the memory-minimising height);
    ``split``: "mixed" (plain lanes up to 40 cells, the rest banded), "cap" (banded
    groups of 6000 bytes at most: groups of one lane, larger windows left to
    traceback_read), "off" (no banded lanes: every long window to traceback_read)."""
    from s2g.trace import LaneLimits
    p = _lane_patches(lanes, int32, None)
    if split in (None, "mixed"):
        p["traceback_many"] = _no_scalar     # every window fits the lanes here
    p["limits"] = LaneLimits(cells=40 if split == "mixed" else 1, band=band,
                             band_bytes={"cap": 6000, "off": 0}.get(split))
    return p


BAND_OPTS = dict(band=st.sampled_from([1, 2, 3, 0]), int32=st.booleans(),
                 lanes=st.sampled_from([None, 1, 2, 3]),
                 split=st.sampled_from([None, None, "mixed", "cap", "off"]))


@SETTINGS
@given(case=dag_cases(), mode=st.sampled_from(MODES), sc=scorings, **BAND_OPTS)
def test_banded_lanes_equal_scalar(case, mode, sc, band, int32, lanes, split):
    """Random DAGs (both strands), every mode, random scorings, bands of 1-3 rows (or
    the memory-minimising height), int16 and int32 lanes, partial groups, batches split
    between plain lanes, banded lanes and traceback_read."""
    text, reads = case
    graph = s2g.load_graph(write_tmp(text))
    batch = batch_of(reads)
    res = s2g.align(graph, batch, sc, mode, variant="v0", traceback=False)
    assert_lanes_equal_scalar(graph, batch, sc, mode, res,
                              **_band_patches(band, int32, lanes, split))


@SETTINGS
@given(case=dag_cases(), mode=st.sampled_from(MODES[:2]), sc=scorings, data=st.data(),
       **BAND_OPTS)
def test_banded_lanes_in_windows(case, mode, sc, data, band, int32, lanes, split):
    """Seeded alignment's col_lo windows (traceback_batch's col_lo call pattern) in
    banded lanes."""
    import numpy as np
    text, reads = case
    graph = s2g.load_graph(write_tmp(text))
    batch = batch_of(reads)
    nb = graph.n_bases
    lo = np.array([data.draw(st.integers(0, nb - 1)) for _ in reads], np.int64)
    hi = np.minimum(lo + np.array([data.draw(st.integers(1, nb)) for _ in reads]), nb)
    res = _window_results(graph, batch, sc, mode, lo, hi)
    assert_lanes_equal_scalar(graph, batch, sc, mode, res, col_lo=lo,
                              **_band_patches(band, int32, lanes, split))


def _snp_case(seed, n_reads=12, length=120):
    """A 3 kbp SNP graph (8 bp nodes, 3 alleles: a merge every ~9 columns) and reads of
    20-120 bp from it with substitutions and 1 bp indels: windows of a few thousand
    cells, walks that cross many bands and merges."""
    import numpy as np

    from s2g.simulate import sample_reads, snp_graph
    rng = np.random.default_rng(seed)
    sg, ref = snp_graph(3000, 8, 3, seed)
    path = write_tmp("")
    sg.write_gfa(path, ref)
    graph = s2g.load_graph(path)
    seqs = []
    for _, s, _ in sample_reads(sg, n_reads, length, 0.08, 0.5, seed + 1):
        s = list(s)
        for _ in range(6):
            k = int(rng.integers(0, len(s)))
            if rng.random() < 0.5:
                del s[k]
            else:
                s.insert(k, "ACGT"[rng.integers(4)])
        seqs.append("".join(s[:int(rng.integers(20, len(s)))]))
    return graph, batch_of(seqs)


@pytest.mark.parametrize("mode", MODES)
def test_banded_lanes_on_a_snp_graph(mode):
    """Longer reads (several hundred rows of walk through 1-3 row bands), every mode,
    int16 and int32 lanes, the whole graph and seeded-style windows (col_lo)."""
    import numpy as np

    from s2g.variants import simd
    graph, batch = _snp_case(3)
    sc = s2g.Scoring()
    res = simd.align_batch(graph, batch, sc, s2g.Mode.parse(mode))
    for band, int32, split in ((1, False, None), (2, True, None), (3, False, "mixed"),
                               (0, True, None)):
        assert_lanes_equal_scalar(graph, batch, sc, mode, res,
                                  **_band_patches(band, int32, None, split))
    if mode == "global":
        return
    ej = np.asarray(res.end_j)
    lo = np.maximum(0, ej - 200)
    hi = np.minimum(ej + 20, graph.n_bases)
    wres = _window_results(graph, batch, sc, mode, lo, hi)
    assert_lanes_equal_scalar(graph, batch, sc, mode, wres, col_lo=lo, **_band_patches(2, False))


def test_band_groups_stay_under_the_cap():
    """_band_groups cuts groups whose planned bytes stay under the cap (a single lane
    may pass it: lane_programs leaves such a window to traceback_read), at most
    ``lanes`` each, multiples of ``vec`` except the last; every read once."""
    import numpy as np

    from s2g.trace.bands import _band_groups
    from s2g.trace.lanes import band_plan
    rng = np.random.default_rng(11)
    n = 300
    W = rng.integers(0, 4000, n) * (rng.random(n) < 0.8)
    M = rng.integers(1, 3000, n)
    S = rng.integers(1, 5, n)
    NM = rng.integers(0, 200, n)
    OB = M + W + 2
    for isz, vec in ((2, 32), (4, 16)):
        for cap in (1 << 24, 1 << 26, 1 << 28):
            order, starts, bh = _band_groups(W, M, S, NM, OB, 64 // isz * 2, vec, cap, isz, 0)
            assert sorted(order.tolist()) == np.nonzero(W > 0)[0].tolist()
            for g in range(len(starts) - 1):
                x = order[starts[g]:starts[g + 1]]
                c = len(x)
                assert 1 <= c <= 64 // isz * 2
                if g < len(starts) - 2 and c > vec:
                    assert c % vec == 0
                size, h = band_plan(W[x].max(), M[x].max(), S[x].max(), NM[x].sum(),
                                    OB[x].sum(), c, isz, 0)
                assert h == bh[g] and 1 <= h <= M[x].max()
                assert c == 1 or size <= cap


@pytest.mark.parametrize("mode", MODES)
def test_long_windows_take_banded_lanes_by_default(mode):
    """1.6 kbp reads on a 4 kbp SNP graph under the default limits: windows over
    LANE_CELLS cells, traced in banded lanes at the memory-minimising band height (int16
    lanes in local mode, int32 otherwise), identical to traceback_read."""
    import numpy as np

    from s2g.simulate import sample_reads, snp_graph
    from s2g.trace.batch import LANE_CELLS
    from s2g.trace.common import window
    from s2g.variants import simd
    sg, ref = snp_graph(4000, 50, 2, 5)
    path = write_tmp("")
    sg.write_gfa(path, ref)
    graph = s2g.load_graph(path)
    batch = batch_of([s for _, s, _ in sample_reads(sg, 5, 1600, 0.05, 0.5, 6)])
    sc = s2g.Scoring()
    res = simd.align_batch(graph, batch, sc, s2g.Mode.parse(mode))
    a, _, _, e = sc.as_tuple()
    for r in res:
        v = int(np.searchsorted(graph.node_start, r.end_j, side="right") - 1)
        L = r.end_i + max(0, a * r.end_i - r.score) // e
        wn, ws, we = window(v, r.end_j - graph.node_start[v], L, graph.node_start,
                            graph.pred_ptr, graph.pred_idx, 0)
        assert int((we - ws + 1).sum()) * (r.end_i + 1) > LANE_CELLS
    assert_lanes_equal_scalar(graph, batch, sc, mode, res, traceback_many=_no_scalar)


def test_gpu_part_bounds_long_windows_by_code_bytes(monkeypatch):
    """--max-traceback-cells counts bytes of direction data; the GPU's long-window kernel
    stores 4-bit codes, so it is offered windows of up to twice that many cells (a 50 kbp
    read's 3.1e9-cell window went to the CPU when the bound was read as cells)."""
    import numpy as np

    from s2g.result import BatchResult
    from s2g.trace import gpu, traceback_gpu_part
    seen = {}

    def fake_run(graph, reads, scoring, mode, res, idx, out, max_cells, long_cells):
        seen.update(max_cells=max_cells, long_cells=long_cells)
        return idx[:0]

    monkeypatch.setattr(gpu, "run", fake_run)
    res = BatchResult(["r"], [5], np.array([4]), np.array([4]), np.array([3]))
    traceback_gpu_part(None, None, s2g.Scoring(), 0, res, max_cells=1 << 31)
    assert seen == {"max_cells": min(gpu.max_cells(), 1 << 31), "long_cells": 1 << 32}


def test_window_band_rows():
    """common.window_band (the slack band of the GPU's long traceback and of the CPU's
    banded lanes): on a chain, column w lies W-1-w steps from the end, so its rows are
    R - (W-1-w) - I - 1 .. R - (W-1-w) + D + 1 clipped to 0..R; through a bubble the
    shortest and longest walks to the end bound it; a column no walk leaves gets none."""
    import numpy as np

    from s2g.trace.common import window_band
    R, D, I = 20, 3, 2

    def band(kind, mpa, mpn, wcol):
        lo = np.zeros(len(kind), np.int64)
        hi = np.zeros(len(kind), np.int64)
        window_band(np.array(kind, np.int8), np.array(mpa, np.int32), np.array(mpn, np.int32),
                    np.array(wcol, np.int32), R, D, I, lo, hi)
        return lo.tolist(), hi.tolist()

    W = 10
    lo, hi = band([1] + [0] * (W - 1), [0] * W, [0] * W, [0])
    assert lo == [max(0, R - (W - 1 - w) - I - 1) for w in range(W)]
    assert hi == [min(R, R - (W - 1 - w) + D + 1) for w in range(W)]
    # column 0 (node X: no walk to the end), 1-3 (A), 4-5 (B, after A), 6-10 (C, after A
    # and B; the end): walks to the end from column 3 take 5 steps (A->C) or 7 (A->B->C)
    kind = [1, 1, 0, 0, 1, 0, 1, 0, 0, 0, 0]
    mpa = [0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0]
    mpn = [0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0]
    wcol = [3, 3, 5]
    dmin = [None, 7, 6, 5, 6, 5, 4, 3, 2, 1, 0]
    lmax = [None, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0]
    lo, hi = band(kind, mpa, mpn, wcol)
    assert (lo[0], hi[0]) == (R + 1, -1)
    assert lo[1:] == [max(0, R - lmax[w] - I - 1) for w in range(1, 11)]
    assert hi[1:] == [min(R, R - dmin[w] + D + 1) for w in range(1, 11)]


def test_pending_tracebacks_complete_when_flat_is_first_read():
    """BatchResult.set_pending: the completion runs once, at the first read of ``flat``
    (or of ``tracebacks``), in the reader's thread; setting tracebacks drops it."""
    import threading

    import numpy as np

    from s2g.result import BatchResult
    from s2g.trace import FlatTracebacks
    res = BatchResult(["a", "b"], [3, 4], np.array([1, 2]), np.array([2, 3]), np.array([0, 1]))
    calls = []

    def complete():
        calls.append(threading.current_thread().name)
        res.set_flat(FlatTracebacks(2).finish())

    res.set_pending(complete)
    assert calls == []
    box = {}
    th = threading.Thread(target=lambda: box.setdefault("flat", res.flat), name="reader")
    th.start()
    th.join()
    assert calls == ["reader"] and box["flat"] is not None
    assert res.flat is box["flat"] and calls == ["reader"]
    assert res.tracebacks == [None, None]
    res.set_pending(complete)
    res.tracebacks = None
    assert res.flat is None and calls == ["reader"]
