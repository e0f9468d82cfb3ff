"""Seeded alignment (s2g/index.py, s2g/seeded/): index, seeds, windows, MAPQ, CLI.

The promise tested: the reported alignment is the exact optimum inside the window it
names (window DP has its own oracle tests in test_window.py), it equals full-graph DP
wherever the read's true walk lies inside a window (simulated reads), and every read
gets one GAF line.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

import s2g
from s2g.cli import main
from s2g.errors import S2GError
from s2g.index import (build_index, graph_checksum, hash64, index_path, is_closed_syncmer,
                       load_index)
from s2g.reads import ReadBatch
from s2g.scoring import NEG_INF, Mode, Scoring
from s2g.seeded import MAPQ_MAX, SeededAligner, pick, read_syncmers
from s2g.simulate import simulate
from s2g.variants import cpu_parallel, v0_cpu


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    d = tmp_path_factory.mktemp("seeded")
    gfa, fq, truth = simulate(str(d / "snp"), total_bases=30_000, n_reads=120, seed=11)
    return gfa, fq


def _kmer(seq):
    x = 0
    for c in seq:
        x = (x << 2) | "ACGT".index(c)
    return np.uint64(x)


def test_syncmers_of_a_read_are_the_closed_syncmers_of_its_kmers():
    rng = np.random.default_rng(0)
    seq = "".join(rng.choice(list("ACGT"), 200))
    k, s = 15, 7
    q = np.frombuffer(seq.translate(str.maketrans("ACGT", "\0\1\2\3")).encode(), np.uint8)
    hs, ps = read_syncmers(q, k, s)
    kmask = np.uint64((1 << (2 * k)) - 1)
    want = []
    for i in range(k - 1, len(seq)):
        x = _kmer(seq[i - k + 1:i + 1])
        smask = np.uint64((1 << (2 * s)) - 1)
        sh = [hash64((x >> np.uint64(2 * (k - s - t))) & smask, smask) for t in range(k - s + 1)]
        if int(np.argmin(sh)) in (0, k - s):
            want.append((int(hash64(x, kmask)), i))
        assert bool(is_closed_syncmer(x, k, s)) == (int(np.argmin(sh)) in (0, k - s))
    assert [(int(h), int(p)) for h, p in zip(hs, ps)] == want
    assert 0.1 < len(want) / (len(seq) - k + 1) < 0.4      # density ~ 2 / (k - s + 1)


@hsettings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), ks=st.sampled_from([(5, 2), (7, 3), (9, 5), (19, 11)]),
       cap=st.sampled_from([1, 2, 16]), parts=st.sampled_from([None, 1, 3, 50]))
def test_parallel_index_build_equals_the_single_pass(data, ks, cap, parts, tmp_path_factory):
    """build_index's parallel parts (the boundary pass in segments, interior_syncmers over
    nodes, the merge by column, sort_by_hash) give the single pass's arrays
    (collect_syncmers over every column, then a stable argsort) entry for entry: random
    DAGs with Ns and nodes shorter and longer than k, both strands, capped bubbles."""
    import naive
    from s2g.index import all_syncmers, sort_by_hash
    k, s = ks
    text = naive.random_dag_gfa(data.draw, st, with_n=True)
    if data.draw(st.booleans()):         # a few long nodes (most of their columns interior)
        extra = "".join(data.draw(st.lists(st.sampled_from("ACGTTGCAN"), min_size=40,
                                           max_size=120)))
        text += f"S\tlong\t{extra}\n"
    path = tmp_path_factory.mktemp("ix") / "g.gfa"
    path.write_text(text)
    g = s2g.load_graph(str(path), strands=data.draw(st.sampled_from(["both", "forward"])))
    h0, c0, n0 = all_syncmers(g, k, s, cap, parallel=False)
    h1, c1, n1 = all_syncmers(g, k, s, cap, parallel=True, parts=parts)
    assert n0 == n1
    np.testing.assert_array_equal(h1, h0)
    np.testing.assert_array_equal(c1, c0)
    o = np.argsort(h0, kind="stable")
    for parts in (1, 3):
        sh, sc = sort_by_hash(h0, c0, 2 * k, parts)
        np.testing.assert_array_equal(sh, h0[o])
        np.testing.assert_array_equal(sc, c0[o])


def test_parallel_index_build_cuts_only_after_nodes_of_k_bases(gfa_file):
    """A node of k - 1 bases reached by two suffixes leaves two at its last column: no
    segment may start after it (a cut there would read one suffix from the column order);
    with one segment per node where allowed the arrays still equal the single pass's."""
    from s2g.index import all_syncmers, segment_cuts
    k = 5
    gfa = gfa_file("S\ta\tACGTACGTTA\nS\tb\tTTGCAGGCAC\nS\tc\tGATC\nS\td\tCCATGGTACA\n"
                   "L\ta\t+\tc\t+\t0M\nL\tb\t+\tc\t+\t0M\nL\tc\t+\td\t+\t0M\n")
    g = s2g.load_graph(gfa, strands="forward")
    cuts = segment_cuts(np.asarray(g.node_start, np.int64), g.pred_ptr, g.pred_idx, k, 1000)
    c_node = int(np.nonzero(np.diff(g.node_start) == 4)[0][0])
    assert c_node + 1 not in cuts.tolist()
    h0, c0, n0 = all_syncmers(g, k, 2, 16, parallel=False)
    h1, c1, n1 = all_syncmers(g, k, 2, 16, parallel=True, parts=1000)
    assert n0 == n1
    np.testing.assert_array_equal(h1, h0)
    np.testing.assert_array_equal(c1, c0)


def test_parallel_index_build_on_real_graphs(real_data):
    """The same on the bundled real graphs (long nodes, tiny nodes, bubbles, repeats)."""
    from s2g.index import all_syncmers, sort_by_hash
    for gfa in ("drb1_odgi/DRB1-3123.gfa", "mt_minigraph/MT.gfa"):
        p = real_data / gfa
        if not p.exists():
            continue
        g = s2g.load_graph(str(p), break_cycles=True)
        h0, c0, n0 = all_syncmers(g, 19, 11, 16, parallel=False)
        for parts in (None, 7, 1000):
            h1, c1, n1 = all_syncmers(g, 19, 11, 16, parallel=True, parts=parts)
            assert n0 == n1 and len(h0) > 1000
            np.testing.assert_array_equal(h1, h0)
            np.testing.assert_array_equal(c1, c0)
        o = np.argsort(h0, kind="stable")
        sh, sc = sort_by_hash(h0, c0, 38, 4)
        np.testing.assert_array_equal(sh, h0[o])
        np.testing.assert_array_equal(sc, c0[o])


def test_graph_index_holds_every_read_syncmer_of_a_walk_across_nodes(gfa_file):
    """k-mers that cross node boundaries (and both strands) are indexed at the column of
    their last base."""
    gfa = gfa_file("S\ta\tACGTTGCAAGGCT\nS\tb\tC\nS\tc\tG\nS\td\tTTAGCCATGGACCATG\n"
                   "L\ta\t+\tb\t+\t0M\nL\ta\t+\tc\t+\t0M\nL\tb\t+\td\t+\t0M\nL\tc\t+\td\t+\t0M\n")
    g = s2g.load_graph(gfa)
    ix = build_index(g, k=9, s=5)
    for walk in ("ACGTTGCAAGGCTCTTAGCCATGGACCATG", "ACGTTGCAAGGCTGTTAGCCATGGACCATG"):
        for seq in (walk, walk[::-1].translate(str.maketrans("ACGT", "TGCA"))):
            q = np.frombuffer(seq.translate(str.maketrans("ACGT", "\0\1\2\3")).encode(), np.uint8)
            hs, _ = read_syncmers(q, 9, 5)
            assert len(hs) > 2
            for h in hs:
                x = np.searchsorted(ix.keys, h)
                assert x < len(ix.keys) and ix.keys[x] == h, f"{seq}: a syncmer is not indexed"


def test_index_round_trip_and_stale_index_refused(tmp_path, sim, gfa_file):
    gfa, _ = sim
    g = s2g.load_graph(gfa)
    ix = build_index(g)
    path = ix.save(str(tmp_path / "i.s2gi"))
    back = load_index(path, g)
    for name in ("keys", "cols"):
        np.testing.assert_array_equal(getattr(back, name), getattr(ix, name))
    assert (back.k, back.s, back.checksum) == (ix.k, ix.s, graph_checksum(g))
    other = s2g.load_graph(gfa_file("S\tx\tACGTACGTACGTACGTACGTACGT\n"))
    with pytest.raises(S2GError, match="another graph"):
        load_index(path, other)
    old = tmp_path / "old.s2gi"
    with open(old, "wb") as fh:                  # an index written by another format version
        np.savez(fh, version=np.int64(1), k=np.int64(19), s=np.int64(11),
                 checksum=np.array(ix.checksum), keys=ix.keys, cols=ix.cols)
    with pytest.raises(S2GError, match="index format 1.*rebuild it"):
        load_index(str(old), g)
    raw = open(path, "rb").read()                # format 3: a header, then raw arrays
    for name, data in (("short", raw[:-4]), ("long", raw + b"\0"), ("head", raw[:20])):
        (tmp_path / f"{name}.s2gi").write_bytes(data)
        with pytest.raises(S2GError, match="not an s2g index"):
            load_index(str(tmp_path / f"{name}.s2gi"), g)
    (tmp_path / "junk.s2gi").write_bytes(b"not an index")
    with pytest.raises(S2GError, match="not an s2g index"):
        load_index(str(tmp_path / "junk.s2gi"), g)
    with pytest.raises(S2GError, match="no such file"):
        load_index(str(tmp_path / "missing.s2gi"), g)


@pytest.mark.parametrize("mode", ["local", "semiglobal"])
def test_seeded_equals_full_dp_on_simulated_reads(sim, mode):
    gfa, fq = sim
    g = s2g.load_graph(gfa)
    reads = s2g.read_reads(fq)
    sc = Scoring()
    m = Mode.parse(mode)
    sa = SeededAligner(g, build_index(g), sc, m)
    res = sa.align_batch(reads)
    full = cpu_parallel.align_batch(g, reads, sc, m)
    assert (res.score == full.score).mean() >= 0.99
    same = res.score == full.score
    # where the score agrees, the end cell must too unless an equal-score tie lies
    # outside the chosen window; with random SNP graphs that does not happen here
    np.testing.assert_array_equal(res.end_j[same], full.end_j[same])
    assert (res.mapq[res.score > NEG_INF] >= 0).all()
    sa.traceback(reads, res)
    for r in res:
        if r.aligned:
            assert r.traceback is not None


def test_pick_mapq_is_monotone_in_the_score_gap():
    """One read, two windows: MAPQ never falls as the runner-up's score falls."""
    prev = -1
    for s2 in range(300, -1, -6):
        got = pick(np.array([2]), np.array([300, s2]), np.array([150, 150]),
                   np.array([10, 500]), np.array([0, 400]), np.array([0]), 6.0, 20.0,
                   np.array([0]), np.array([5]), 3, NO_CUT, NO_WEAK, CHAIN, 30)
        score, mapq = got[0], got[4]
        assert score[0] == 300
        assert mapq[0] >= prev
        prev = mapq[0]
    assert prev == MAPQ_MAX
    # equal scores: no evidence at all
    got = pick(np.array([2]), np.array([300, 300]), np.array([150, 150]),
               np.array([900, 500]), np.array([0, 400]), np.array([0]), 6.0, 20.0,
               np.array([0]), np.array([5]), 3, NO_CUT, NO_WEAK, CHAIN, 30)
    ej, mapq = got[2], got[4]
    assert mapq[0] <= 3 and ej[0] == 500, "ties go to the smaller end column"
    # repeats skipped: capped
    mapq = pick(np.array([1]), np.array([300]), np.array([150]), np.array([9]),
                np.array([0]), np.array([0]), 6.0, 20.0, np.array([9]),
                np.array([4]), 3, NO_CUT, NO_WEAK, CHAIN, 30)[4]
    assert mapq[0] == 3


NO_CUT = np.zeros(1, np.float64)
NO_WEAK = np.zeros(1, np.bool_)
CHAIN = np.array([100.0, 90.0])


def test_pick_mapq_counts_chains_left_out_and_weak_reads():
    """A unique best window (MAPQ 60) is capped at 30 when a chain was left out by
    --max-windows (never aligned: it may hold the true copy), at 3 when that chain scored
    at least as well as the best window's own; a read seen only through weak
    (single-anchor) chains is capped like a repeat."""
    args = (np.array([1]), np.array([300]), np.array([150]), np.array([9]), np.array([0]),
            np.array([0]), 6.0, 20.0, np.array([0]), np.array([5]), 3)
    assert pick(*args, NO_CUT, NO_WEAK, CHAIN, 30)[4][0] == MAPQ_MAX
    assert pick(*args, np.array([60.0]), NO_WEAK, CHAIN, 30)[4][0] == 30
    assert pick(*args, np.array([100.0]), NO_WEAK, CHAIN, 30)[4][0] == 3
    assert pick(*args, NO_CUT, np.array([True]), CHAIN, 30)[4][0] == 3


def test_unseeded_reads_get_a_line_or_full_dp(sim):
    gfa, _ = sim
    g = s2g.load_graph(gfa)
    ix = build_index(g)
    rng = np.random.default_rng(3)
    junk = ["".join(rng.choice(list("ACGT"), 150)), "", "ACGT"]
    seq = g.sequence(0)[:60] + g.sequence(2)[:40] if g.n_nodes > 2 else junk[0]
    reads = ReadBatch.from_sequences(["j1", "e", "short", "hit"], junk + [seq])
    sa = SeededAligner(g, ix, Scoring(), Mode.LOCAL, unseeded="unmapped")
    res = sa.align_batch(reads)
    assert list(res.n_windows[:3]) == [0, 0, 0]
    assert res.score[0] == NEG_INF and res.score[1] == NEG_INF
    assert sa.totals["unseeded unaligned"] == 2     # j1, short; the empty read is not lost
    # the default (auto) aligns them by full-graph DP on a graph this small, and writes
    # those scoring under 30 matches' worth (chance matches) as no-hit lines ...
    auto = SeededAligner(g, ix, Scoring(), Mode.LOCAL, full_module=v0_cpu)
    assert auto.unseeded_min_score == 30 * Scoring().match
    ares = auto.align_batch(reads)
    exact0 = v0_cpu.align_batch(g, reads, Scoring(), Mode.LOCAL)
    low = (exact0.score[:3] > NEG_INF) & (exact0.score[:3] < auto.unseeded_min_score)
    assert low[0] and low[2], "a random 150 bp read and ACGT score like chance here"
    np.testing.assert_array_equal(ares.score[:3], np.where(low, NEG_INF, exact0.score[:3]))
    assert not ares.aligned()[:3].any() and (ares.mapq[:3][low] == 0).all()
    assert auto.totals["unseeded below min score"] == int(low.sum())
    assert auto.totals["unseeded full DP"] + int(low.sum()) == auto.totals["unseeded"] >= 2
    # ... and with no minimum, reports full-graph DP's best as it is (MAPQ 255)
    bare = SeededAligner(g, ix, Scoring(), Mode.LOCAL, full_module=v0_cpu, unseeded_min_score=0)
    bres = bare.align_batch(reads)
    np.testing.assert_array_equal(bres.score[:3], exact0.score[:3])
    assert bare.totals["unseeded full DP"] == bare.totals["unseeded"] >= 2
    assert bres.mapq[0] == 255
    # ... and counts them as left unaligned where full DP costs more than it allows
    tight = SeededAligner(g, ix, Scoring(), Mode.LOCAL, full_module=v0_cpu, full_cells=0)
    assert tight.align_batch(reads).score[0] == NEG_INF
    assert tight.totals["unseeded unaligned"] == 2
    full = SeededAligner(g, ix, Scoring(), Mode.LOCAL, unseeded="full", unseeded_min_score=0,
                         full_module=v0_cpu).align_batch(reads)
    exact = v0_cpu.align_batch(g, reads, Scoring(), Mode.LOCAL)
    np.testing.assert_array_equal(full.score[:3], exact.score[:3])
    assert full.mapq[0] == 255
    # the default full-graph kernel is the device's own (a GPU aligner once ran the CPU's
    # simd: ~80 s for 1,004 seedless MHC mates), the budget the same on both (same GAF)
    from s2g.seeded import FULL_FALLBACK_CELLS
    for device, name in (("cpu", "s2g.variants.simd"), ("gpu", "s2g.variants.fast")):
        sa = SeededAligner(g, ix, Scoring(), Mode.LOCAL, device=device)
        assert sa.full_module.__name__ == name
        assert sa.full_cells == FULL_FALLBACK_CELLS


def test_few_unseeded_reads_skip_the_simd_lane_group(sim, monkeypatch):
    """A seedless read or two (one or two a batch) take the ``cpu`` variant, not a simd
    lane group of 128 lanes' work (5.2 against 0.83 s for one 150 bp read on a 2.56 M-column
    graph); many take simd; both give V0's scores and ends; a GPU's kernel is kept."""
    from s2g.variants import cpu_parallel, simd
    gfa, _ = sim
    g = s2g.load_graph(gfa)
    ix = build_index(g)
    rng = np.random.default_rng(5)
    junk = ["".join(rng.choice(list("ACGT"), 150)) for _ in range(300)]
    reads = ReadBatch.from_sequences([f"j{k}" for k in range(300)], junk)
    sa = SeededAligner(g, ix, Scoring(), Mode.LOCAL, unseeded_min_score=0)
    assert sa.full_module is simd
    assert sa._full_module(reads, np.arange(2)) is cpu_parallel
    assert sa._full_module(reads, np.arange(300)) is simd
    ran = []
    for mod in (simd, cpu_parallel):
        monkeypatch.setattr(mod, "align_batch",
                            lambda *a, _f=mod.align_batch, _n=mod.__name__, **k:
                            ran.append(_n) or _f(*a, **k))
    few = reads.subset(np.arange(2))
    res = sa.align_batch(few)
    assert sa.totals["unseeded full DP"] == 2 and ran == ["s2g.variants.cpu_parallel"]
    exact = v0_cpu.align_batch(g, few, Scoring(), Mode.LOCAL)
    for k in ("score", "end_i", "end_j"):
        np.testing.assert_array_equal(getattr(res, k), getattr(exact, k))
    gpu = SeededAligner(g, ix, Scoring(), Mode.LOCAL, device="gpu")
    assert gpu._full_module(reads, np.arange(1)) is gpu.full_module


def test_chain_ends_joined_by_jumps_are_trimmed():
    """Read 7800 of ``bench.seeded --graph rep:400000:1000`` (1,000 Alu-like copies): 23
    anchors on its true copy (columns 264,400-264,503) and one stray anchor of another
    copy at each end, joined to them by jumps of 94k and 12.5k columns. The chain's window
    is built from its ends, so untrimmed it missed the true copy (score 48 of 288, MAPQ
    60); trimmed, the chain is the 23 anchors."""
    from s2g.seeded import chain, take_chains
    block = [(264400, 40), (264404, 44), (264408, 48), (264412, 52), (264421, 60),
             (264427, 66), (264435, 74), (264437, 76), (264445, 84), (264452, 90),
             (264455, 93), (264457, 95), (264465, 103), (264466, 104), (264468, 106),
             (264476, 114), (264477, 115), (264478, 116), (264480, 118), (264483, 121),
             (264492, 129), (264496, 133), (264503, 140)]
    stray = [(33815, 148), (154871, 148), (170565, 22), (179432, 148), (192240, 148),
             (217154, 148), (264096, 148), (277043, 148), (279108, 148), (321451, 148),
             (354404, 148), (386394, 148)]
    ac, aq = (np.array(x, np.int64) for x in zip(*sorted(block + stray)))
    f, pred = chain(ac, aq, 19, 100_000, 150 // 4 + 16)
    out = np.zeros((10, 6))
    nw0 = (np.zeros((10, 0, 2), np.int64), np.zeros(10, np.int64))
    n = take_chains(f, pred, ac, aq, 38.0, 10, 16 + 150 // 8, 19.0, out, *nw0)
    assert n >= 1
    assert tuple(out[0, :4]) == (40, 264400, 140, 264503) and out[0, 5] == 23
    # a chain without jumps is left as it is
    bc, bq = (np.array(x, np.int64) for x in zip(*block))
    f, pred = chain(bc, bq, 19, 100_000, 150 // 4 + 16)
    out2 = np.zeros((10, 6))
    assert take_chains(f, pred, bc, bq, 38.0, 10, 34, 19.0, out2, *nw0) == 1
    assert tuple(out2[0, :4]) == (40, 264400, 140, 264503) and out2[0, 4] == f[-1]


def test_mapq_60_reads_are_right_on_a_repeat_graph(tmp_path):
    """A 100 kbp SNP graph whose backbone holds 250 Alu-like 300 bp copies (2-15%
    diverged): every MAPQ-60 read of 1,500 lies on its true walk or scores at least the
    graph's optimum (full DP); bench.seeded --graph rep:N measures the same on 20,000."""
    from bench.seeded import on_walk, sample
    from s2g.simulate import repeat_backbone, snp_graph
    sg, ref = snp_graph(100_000, 50, 2, 3, backbone=repeat_backbone(100_000, 250, 300, seed=3))
    sg.write_gfa(str(tmp_path / "rep.gfa"), ref)
    g = s2g.load_graph(str(tmp_path / "rep.gfa"), keep_paths=True)
    reads, truths = sample(g, 1500, 150, 0.01, 0.2, np.random.default_rng(3))
    sa = SeededAligner(g, build_index(g), Scoring(), Mode.LOCAL)
    res = sa.align_batch(reads)
    sa.traceback(reads, res)
    top = res.mapq == MAPQ_MAX
    assert top.sum() > 0.5 * reads.n_reads
    off = np.nonzero(top & ~on_walk(res, truths))[0]
    if len(off):
        full = cpu_parallel.align_batch(g, reads.subset(off), Scoring(), Mode.LOCAL)
        np.testing.assert_array_less(full.score - 1, res.score[off])


def test_weak_hit_gets_a_window_not_a_no_hit_line(sim):
    """A read whose only link to the graph is one seed (a 30 bp graph stretch inside
    random bases) has no chain of two anchors' worth: it is aligned in the window of its
    single anchor (MAPQ <= 3) instead of being lost, and scores what full DP finds there."""
    gfa, _ = sim
    g = s2g.load_graph(gfa)
    ix = build_index(g)
    rng = np.random.default_rng(5)
    walk = "".join(g.sequence(v) for v in range(g.n_nodes))[:2000]
    for off in range(0, 1900, 37):
        junk = "".join(rng.choice(list("ACGT"), 120))
        seq = junk[:60] + walk[off:off + 30] + junk[60:]
        reads = ReadBatch.from_sequences(["weak"], [seq])
        sa = SeededAligner(g, ix, Scoring(), Mode.LOCAL, unseeded="unmapped")
        cand = sa.candidates(reads)
        if cand.weak[0]:
            break
    else:
        pytest.skip("no single-seed read found")     # pragma: no cover (seeded rng)
    res = sa.align_batch(reads, cand)
    assert res.n_windows[0] >= 1 and res.mapq[0] <= 3
    assert sa.totals["unseeded weak windows"] == 1
    exact = v0_cpu.align_batch(g, reads, Scoring(), Mode.LOCAL)
    assert res.score[0] == exact.score[0] >= 30 * 2 - 8


def test_global_mode_is_refused(sim):
    gfa, _ = sim
    g = s2g.load_graph(gfa)
    with pytest.raises(S2GError, match="local or semiglobal"):
        SeededAligner(g, build_index(g), Scoring(), Mode.GLOBAL)


def test_cli_index_then_seeded_align(tmp_path, sim, capsys):
    gfa, fq = sim
    idx = str(tmp_path / "g.s2gi")
    assert main(["index", gfa, "-o", idx]) == 0
    out = str(tmp_path / "o.gaf")
    assert main(["align", gfa, fq, "-o", out, "--seeded", "--index", idx]) == 0
    err = capsys.readouterr().err
    assert "seeded" in err
    lines = open(out).read().splitlines()
    assert len(lines) == 120
    mapq = [int(x.split("\t")[11]) for x in lines if x.split("\t")[5] != "*"]
    assert len(mapq) >= 118 and np.mean(np.array(mapq) >= 30) > 0.9
    exact = str(tmp_path / "e.gaf")
    assert main(["align", gfa, fq, "-o", exact, "--exact"]) == 0
    as_s = [x.split("AS:i:")[1].split("\t")[0] for x in lines if "AS:i:" in x]
    as_e = [x.split("AS:i:")[1].split("\t")[0] for x in open(exact).read().splitlines()]
    assert np.mean([a == b for a, b in zip(as_s, as_e)]) >= 0.99
    # an index of another graph is refused with one line
    other = tmp_path / "other.gfa"
    other.write_text("S\tx\tACGTACGTACGTACGTACGTACGTAAAAAAAAAA\n")
    assert main(["align", str(other), fq, "-o", str(tmp_path / "x.gaf"), "--seeded",
                 "--index", idx]) == 1
    assert "another graph" in capsys.readouterr().err
    assert main(["align", gfa, fq, "--seeded", "--mode", "global", "-o",
                 str(tmp_path / "y.gaf")]) == 1


def test_index_beside_the_graph_is_built_once(tmp_path, sim, capsys):
    gfa, fq = sim
    import shutil
    g2 = str(tmp_path / "copy.gfa")
    shutil.copy(gfa, g2)
    assert main(["align", g2, fq, "--seeded", "-o", str(tmp_path / "a.gaf")]) == 0
    assert "building the seed index" in capsys.readouterr().err
    assert open(index_path(g2), "rb").read(8) == b"S2GINDEX"
    assert main(["align", g2, fq, "--seeded", "-o", str(tmp_path / "b.gaf")]) == 0
    assert "building" not in capsys.readouterr().err
    assert open(tmp_path / "a.gaf").read() == open(tmp_path / "b.gaf").read()


def test_gpu_windows_under_the_cuda_simulator_match_the_cpu():
    """run_windows (the GPU traceback kernel in find mode) == the CPU path, field for field."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    repo = Path(__file__).resolve().parents[1]
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=str(repo))
    p = subprocess.run([sys.executable, str(repo / "tests" / "seeded_cudasim_check.py"), "6"],
                       env=env, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.startswith("OK 6"), p.stdout


def test_long_window_kernel_under_the_cuda_simulator_matches_the_cpu():
    """Every seeded window on the long-window kernel (s2g/trace/long/, find mode), 8-row
    strips and 2 threads per block (several rounds per window) == the CPU path."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    repo = Path(__file__).resolve().parents[1]
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=str(repo),
               S2G_CONFIG="long_strip=8,long_max_t=2")
    p = subprocess.run([sys.executable, str(repo / "tests" / "seeded_cudasim_check.py"), "2",
                        "long"], env=env, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.startswith("OK 2"), p.stdout


def test_gpu_seeds_under_the_cuda_simulator_match_the_cpu():
    """Seeds and chains made on the GPU (s2g.seeded.chains_gpu) == batch_chains, array for
    array, on SNP graphs and the bundled BRCA2 graph, with repeats skipped and weak chains."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    repo = Path(__file__).resolve().parents[1]
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=str(repo))
    p = subprocess.run([sys.executable, str(repo / "tests" / "seeds_gpu_cudasim_check.py"),
                        "6"], env=env, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.startswith("OK 6"), p.stdout


def test_seed_kernels_compile_to_sm90_without_fused_multiply_adds():
    """The three seeding kernels compile to sm_90 PTX with their real signatures (the
    simulator checks no types), and the chaining kernels hold no float64 fma (a contracted
    multiply-add would change scores' last bits against the CPU's)."""
    cuda = pytest.importorskip("numba.cuda", reason="numba-cuda is not installed")
    from s2g.seeded import chains_gpu
    chains_gpu.compile_module()          # (its device functions, as its kernels' build does)
    ptx = {}
    for name, fn, sig in (("count", chains_gpu.count_body, chains_gpu.COUNT_SIGNATURE),
                          ("chain", chains_gpu.chain_body, chains_gpu.CHAIN_SIGNATURE),
                          ("heavy", chains_gpu.heavy_body, chains_gpu.HEAVY_SIGNATURE),
                          ("widen", chains_gpu.widen_body, chains_gpu.WIDEN_SIGNATURE)):
        try:
            ptx[name] = cuda.compile_ptx(fn, sig, cc=(9, 0))[0]
        except Exception as exc:  # no NVVM: the toolchain is a test dependency (pyproject)
            pytest.skip(f"compile_ptx unavailable: {type(exc).__name__}: {exc}")
        assert ".target sm_90" in ptx[name]
    for name in ("chain", "heavy"):
        assert "fma.rn.f64" not in ptx[name], name
        assert "add.f64" in ptx[name] and "st.global.f64" in ptx[name], name
    assert "bar.sync" in ptx["heavy"] and "atom.global.add.u64" in ptx["heavy"]
    assert "cvt.s64.s32" in ptx["widen"] and "st.global.u64" in ptx["widen"]


@pytest.mark.gpu
def test_gpu_seeds_equal_cpu_seeds_on_real_graphs(real_data):
    """On a real GPU: chains_gpu.batch_chains == batch_chains on 3,000 reads sampled from
    each real graph (1% errors, both strands) and 300 random ones."""
    from s2g.seeded import chains_gpu
    from s2g.seeded.chains import batch_chains
    for gfa in ("drb1_odgi/DRB1-3123.gfa", "lpa_odgi/LPA.gfa", "mt_minigraph/MT.gfa"):
        path = real_data / gfa
        if not path.exists():
            continue
        g = s2g.load_graph(str(path), break_cycles=True)        # LPA and MT have cycles
        ix = build_index(g)
        rng = np.random.default_rng(3)
        seqs = []
        for r in range(3300):
            if r < 3000:
                v = int(rng.integers(max(g.n_bases - 150, 1)))
                c = g.base[v:v + 150].copy()
                err = rng.random(len(c)) < 0.01
                c[err] = rng.integers(0, 4, int(err.sum()))
            else:
                c = rng.integers(0, 5, 150)
            seqs.append("".join("ACGTN"[x] for x in c.tolist()))
        reads = ReadBatch.from_sequences([f"r{i}" for i in range(len(seqs))], seqs)
        offs = np.asarray(reads.offsets, np.int64)
        starts, shift = ix.buckets
        want = batch_chains(reads.codes_flat, offs, ix.keys, ix.cols, starts, shift, ix.k,
                            ix.s, 200, 10, 38.0, 100_000, 0, 0)
        got = chains_gpu.batch_chains(chains_gpu.DeviceIndex(ix), reads.codes_flat, offs, 200,
                                      10, 38.0, 100_000)
        for name, x, y in zip(("chains", "counts", "stats"), want, got):
            np.testing.assert_array_equal(x, y, err_msg=f"{gfa} {name}")


@pytest.mark.gpu
def test_gpu_long_reads_seeded_equal_cpu(tmp_path):
    """On a real GPU: 40 simulated 5 kbp reads (5% errors) on a 200 kbp SNP graph, seeded:
    windows over the one-thread bound run on the long-window kernel; scores, end cells,
    MAPQ and tracebacks == the CPU path."""
    from s2g.config import settings
    from s2g.simulate import sample_reads, snp_graph
    sg, ref = snp_graph(200_000, 50, 2, 8)
    sg.write_gfa(str(tmp_path / "h.gfa"), ref)
    g = s2g.load_graph(str(tmp_path / "h.gfa"))
    seqs = [s for _, s, _ in sample_reads(sg, 40, 5000, 0.05, 0.5, 9)]
    reads = ReadBatch.from_sequences([f"r{i}" for i in range(len(seqs))], seqs)
    ix = build_index(g)
    for mode in (Mode.LOCAL, Mode.SEMIGLOBAL):
        cpu = SeededAligner(g, ix, Scoring(), mode)
        want = cpu.align_batch(reads)
        cpu.traceback(reads, want)
        gpu = SeededAligner(g, ix, Scoring(), mode, device="gpu")
        got = gpu.align_batch(reads)
        assert gpu.totals["windows left to the CPU"] == 0
        for f in ("score", "end_i", "end_j", "mapq"):
            np.testing.assert_array_equal(getattr(got, f), getattr(want, f), err_msg=f)
        gpu.traceback(reads, got)
        assert list(got.tracebacks) == list(want.tracebacks)
    assert settings().gpu_long


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ["local", "semiglobal"])
def test_gpu_windows_equal_cpu_windows(mode, tmp_path):
    """On a real GPU: SeededAligner(device='gpu') == the CPU path (scores, end cells, MAPQ,
    every traceback field) on a simulated SNP graph with 1% errors and on DRB1 pieces."""
    from conftest import REAL_DATA
    gfa, fq, _ = simulate(str(tmp_path / "s"), total_bases=200_000, n_reads=3000, seed=5)
    cases = [(gfa, s2g.read_reads(fq))]
    drb1 = REAL_DATA / "drb1_odgi" / "DRB1-3123.gfa"
    if drb1.exists():
        g = s2g.load_graph(str(drb1))
        rng = np.random.default_rng(2)
        seqs = []
        for _ in range(2000):
            v = int(rng.integers(g.n_bases - 200))
            seqs.append("".join("ACGTN"[c] for c in g.base[v:v + 150].tolist()))
        cases.append((str(drb1), ReadBatch.from_sequences([f"d{i}" for i in range(2000)], seqs)))
    m = Mode.parse(mode)
    for path, reads in cases:
        g = s2g.load_graph(path)
        ix = build_index(g)
        cpu = SeededAligner(g, ix, Scoring(), m)
        want = cpu.align_batch(reads)
        cpu.traceback(reads, want)
        gpu = SeededAligner(g, ix, Scoring(), m, device="gpu")
        got = gpu.align_batch(reads)
        for f in ("score", "end_i", "end_j"):
            np.testing.assert_array_equal(getattr(got, f), getattr(want, f), err_msg=f"{path} {f}")
        gpu.traceback(reads, got)
        # MAPQ after the traceback: copies inside a read's window count there
        # (s2g.seeded.copies), from the walk
        np.testing.assert_array_equal(got.mapq, want.mapq, err_msg=f"{path} mapq")
        assert list(got.tracebacks) == list(want.tracebacks), path


def test_secondary_alignments_of_a_duplicated_region(tmp_path, capsys):
    """Two unlinked copies of one 400 bp sequence: a read from it has two equal windows:
    primary MAPQ <= 3 with tp:A:P, one secondary line with MAPQ 0 and tp:A:S right after,
    every tracebacks' path on its own copy; without -N one line per read, no tp tag."""
    rng = np.random.default_rng(4)
    dup = "".join(rng.choice(list("ACGT"), 400))
    uniq = "".join(rng.choice(list("ACGT"), 400))
    gfa = tmp_path / "dup.gfa"
    gfa.write_text(f"S\ta\t{dup}\nS\tb\t{uniq}\nS\tc\t{dup}\nL\ta\t+\tb\t+\t0M\n")
    fa = tmp_path / "r.fa"
    fa.write_text(f">d\n{dup[100:250]}\n>u\n{uniq[50:200]}\n>x\n{'ACGTTGCA' * 10}\n")
    out = tmp_path / "o.gaf"
    assert main(["align", str(gfa), str(fa), "--seeded", "-N", "2", "-o", str(out),
                 "--unseeded", "unmapped"]) == 0
    lines = [x.split("\t") for x in out.read_text().splitlines()]
    assert [x[0] for x in lines] == ["d", "d", "u", "x"]
    assert lines[0][-1] == "tp:A:P" and lines[1][-1] == "tp:A:S" and lines[2][-1] == "tp:A:P"
    assert lines[3][5] == "*" and not lines[3][-1].startswith("tp:"), "unmapped: no tp tag"
    assert int(lines[0][11]) <= 3 and int(lines[1][11]) == 0 and int(lines[2][11]) == 60
    assert {lines[0][5], lines[1][5]} == {">a", ">c"}
    assert lines[0][12] == lines[1][12] == "AS:i:300"
    assert main(["align", str(gfa), str(fa), "--seeded", "-o", str(out)]) == 0
    plain = [x.split("\t") for x in out.read_text().splitlines()]
    assert len(plain) == 3 and all(not x[-1].startswith("tp:") for x in plain)
    assert main(["align", str(gfa), str(fa), "--exact", "-N", "1", "-o", str(out)]) == 0
    assert "ignored" in capsys.readouterr().err


def test_auto_chooses_by_graph_size_and_stays_exact_where_seeded_cannot_run(
        tmp_path, sim, capsys, monkeypatch):
    import s2g.plan as plan         # choose_method reads these dicts at each call
    gfa, fq = sim
    out = str(tmp_path / "o.gaf")
    assert main(["align", gfa, fq, "-o", out, "--variant", "cpu"]) == 0
    assert "seeded" not in capsys.readouterr().err          # 60,000 columns: full DP
    sam = str(tmp_path / "o.sam")               # ... but SAM/BAM output seeds, for MAPQ
    assert main(["align", gfa, fq, "-o", sam, "--variant", "cpu"]) == 0
    assert "SAM/BAM output: seeded alignment" in capsys.readouterr().err
    mapq = [int(x.split("\t")[4]) for x in open(sam) if not x.startswith("@")]
    assert len(mapq) == 120 and sum(q == 255 for q in mapq) < 12
    assert main(["align", gfa, fq, "-o", sam, "--variant", "cpu", "--exact"]) == 0
    assert {int(x.split("\t")[4]) for x in open(sam) if not x.startswith("@")} <= {0, 255}
    monkeypatch.setitem(plan.AUTO_SEEDED_COLUMNS, "cpu", 1000)
    assert main(["align", gfa, fq, "-o", out, "--variant", "cpu"]) == 0
    err = capsys.readouterr().err       # 120 reads: full DP costs less than seeding's setup
    assert "a small input" in err and "full-graph DP (--seeded to seed)" in err
    monkeypatch.setitem(plan.AUTO_EXACT_CELLS, "cpu", 1000)
    assert main(["align", gfa, fq, "-o", out, "--variant", "cpu"]) == 0
    assert "seeded alignment (--exact" in capsys.readouterr().err
    assert main(["align", gfa, fq, "-o", out, "--variant", "cpu", "--mode", "global"]) == 0
    err = capsys.readouterr().err
    assert "full-graph DP (seeded alignment does not run with global mode)" in err
    assert len(open(out).read().splitlines()) == 120


@pytest.mark.parametrize("name, gfa, fa, brk", [
    ("cactus", "cactus_brca2_vg/cactus-BRCA2.gfa", None, False),
    ("drb1", "drb1_odgi/DRB1-3123.gfa", "drb1_odgi/DRB1-3123.fa", False),
    ("mt", "mt_minigraph/MT.gfa", "mt_minigraph/MT-human.fa", True),
])
def test_seeded_equals_full_dp_on_real_graphs(real_data, name, gfa, fa, brk):
    """150 bp pieces of the real queries (cactus: its own reads, 100 bp) with 1% substitutions:
    seeded scores equal full-graph DP on >= 97% (the bench measures 99.8-100% on 2,000)."""
    g = s2g.load_graph(str(real_data / gfa), break_cycles=brk)
    rng = np.random.default_rng(7)
    if fa is None:
        reads = s2g.read_reads(str(real_data / "cactus_brca2_vg/cactus-BRCA2.fastq"))
        reads = reads.subset(np.arange(60))
    else:
        seqs = []
        for line in open(real_data / fa).read().split(">")[1:]:
            seqs.append("".join(line.splitlines()[1:]).upper())
        pieces = []
        for _ in range(60):
            s = seqs[int(rng.integers(len(seqs)))]
            p = int(rng.integers(0, len(s) - 150))
            r = np.array(list(s[p:p + 150]))
            mut = rng.random(150) < 0.01
            r[mut] = rng.choice(list("ACGT"), int(mut.sum()))
            pieces.append("".join(r))
        reads = ReadBatch.from_sequences([f"p{i}" for i in range(60)], pieces)
    sa = SeededAligner(g, build_index(g), Scoring(), Mode.LOCAL)
    res = sa.align_batch(reads)
    full = cpu_parallel.align_batch(g, reads, Scoring(), Mode.LOCAL)
    assert (res.score <= full.score).all(), "a window cannot beat the whole graph"
    assert (res.score == full.score).mean() >= 0.97, name
    sa.traceback(reads, res)
    assert sum(t is not None for t in res.tracebacks) == int((res.score > NEG_INF).sum())


def test_a_deletion_between_anchors_stays_inside_the_window(tmp_path):
    """A read missing D bases of a linear graph (anchors on both sides): its window holds
    both halves and the walk between, for deletions past the indel slack (pad = 34 for
    150 bp) too; seeded == full DP. (Found in review: searching only from the chain's
    far ends lost the read's flanks once D exceeded the slack.)"""
    from s2g.reads import ReadBatch
    from s2g.scoring import Mode, Scoring
    rng = np.random.default_rng(1)
    ref = "".join(rng.choice(list("ACGT"), 3000))
    segs = [ref[i:i + 50] for i in range(0, len(ref), 50)]
    path = tmp_path / "lin.gfa"
    path.write_text("H\tVN:Z:1.0\n" + "".join(f"S\ts{i}\t{s}\n" for i, s in enumerate(segs))
                    + "".join(f"L\ts{i}\t+\ts{i + 1}\t+\t0M\n" for i in range(len(segs) - 1)))
    g = s2g.load_graph(str(path), strands="forward")
    ix = build_index(g)
    sc = Scoring()
    ds = (36, 40, 50, 80, 200)
    reads = ReadBatch.from_sequences([f"d{d}" for d in ds],
                                     [ref[1000:1075] + ref[1075 + d:1150 + d] for d in ds])
    full = s2g.align(g, reads, sc, "local", variant="cpu")
    sa = SeededAligner(g, ix, sc, Mode.LOCAL)
    res = sa.align_batch(reads)
    sa.traceback(reads, res)
    np.testing.assert_array_equal(res.score, full.score)
    assert [r.traceback.cigar for r in res] == [r.traceback.cigar for r in full]


def test_windows_that_a_merge_joins_become_one():
    """Chains merged into a window can make it share nodes with a later window: they
    become one window (two overlapping windows would report one alignment twice: MAPQ ~3
    and a secondary equal to the primary). Three chains on a linear graph of 10 bp nodes,
    the third bridging the first two's windows."""
    from s2g.seeded import read_windows
    n = 300
    node_start = np.arange(0, 10 * n + 1, 10, dtype=np.int32)
    pred_ptr = np.concatenate(([0], np.arange(0, n, dtype=np.int32))).astype(np.int32)
    pred_idx = np.arange(0, n - 1, dtype=np.int32)
    succ_ptr = np.concatenate((np.arange(0, n, dtype=np.int64), [n - 1]))
    succ_idx = np.arange(1, n, dtype=np.int32)
    ch = np.zeros((6, 6))
    for k, (c0, c1) in enumerate([(1020, 1140), (1420, 1540), (1220, 1240)]):
        ch[k] = (10, c0, 130, c1, 50 - k, 5)
    info = np.zeros((5, 4))
    e = np.zeros(0, np.int32)
    nw, _ = read_windows(150, ch, 3, 5, 150, node_start, pred_ptr, pred_idx, succ_ptr,
                         succ_idx, 0, 0, e, e, e, info)
    assert nw == 1 and info[0, 1] == 15 and info[0, 3] == 3   # three strong chains merged


def test_long_read_corridor_skips_the_branches_its_anchors_rule_out(tmp_path):
    """A 4.1 kbp read through the short alleles of two 3 kbp structural-variant bubbles:
    the chain's window as one span (corridor_min_len=0) takes both long alleles whole;
    the corridor between the chain's waypoints (the default for reads >= 1 kbp) does not,
    and every score is still the full-graph optimum."""
    from s2g.config import configure
    from s2g.variants import simd
    rng = np.random.default_rng(11)

    def rnd(n):
        return "".join(rng.choice(list("ACGT"), n))

    seg = {"a": rnd(2000), "b1": rnd(3000), "b2": rnd(50), "c": rnd(2000), "d1": rnd(3000),
           "d2": rnd(50), "e": rnd(2000)}
    edges = [("a", "b1"), ("a", "b2"), ("b1", "c"), ("b2", "c"), ("c", "d1"), ("c", "d2"),
             ("d1", "e"), ("d2", "e")]
    gfa = tmp_path / "sv.gfa"
    gfa.write_text("".join(f"S\t{k}\t{v}\n" for k, v in seg.items())
                   + "".join(f"L\t{u}\t+\t{v}\t+\t0M\n" for u, v in edges))
    g = s2g.load_graph(str(gfa))
    walk = seg["a"][1000:] + seg["b2"] + seg["c"] + seg["d2"] + seg["e"][:1000]
    seqs = []
    for _ in range(6):                       # 5% substitutions and a few 1-3 bp indels
        s = list(walk)
        for i in rng.choice(len(s), len(s) // 20, replace=False):
            s[i] = "ACGT"[("ACGT".index(s[i]) + int(rng.integers(1, 4))) % 4]
        for i in sorted(rng.choice(len(s) - 10, 8, replace=False), reverse=True):
            if rng.random() < 0.5:
                del s[i:i + int(rng.integers(1, 4))]
            else:
                s[i:i] = list(rnd(int(rng.integers(1, 4))))
        seqs.append("".join(s))
    reads = ReadBatch.from_sequences([f"r{i}" for i in range(len(seqs))], seqs)
    ix = build_index(g)
    width, score = {}, {}
    for c in (0, 1000):
        configure(corridor_min_len=c)
        sa = SeededAligner(g, ix, Scoring(), Mode.LOCAL)
        cand = sa.candidates(reads)
        first = cand.first
        width[c] = (cand.wg.t_hi - cand.wg.t_lo)[first]
        score[c] = sa.align_batch(reads, cand).score
    assert (width[0] > len(walk) + 6000).all()          # both long alleles whole
    assert (width[1000] < 1.3 * len(walk)).all()
    full = simd.align_batch(g, reads, Scoring(), Mode.LOCAL)
    np.testing.assert_array_equal(score[1000], full.score)
    np.testing.assert_array_equal(score[0], full.score)


def test_weak_chains_dropped_keeps_the_prefix_over_the_ratio():
    """cand_min_pct: each read keeps its chains (best first) scoring at least pct % of its
    best chain; 0 keeps all; more than 100 x CUT_RATIO is refused (such chains would count
    against MAPQ had max_cand cut them)."""
    from s2g.seeded.aligner import weak_chains_dropped
    ch = np.zeros((3, 4, 6))
    ch[0, :, 4] = [100, 30, 9, 0]       # 3 chains
    ch[1, :, 4] = [50, 49, 48, 47]      # 4 chains
    ch[2, :, 4] = 0                     # none
    nch = np.array([3, 4, 0])
    assert weak_chains_dropped(ch, nch, 0) is nch
    assert weak_chains_dropped(ch, nch, 10).tolist() == [2, 4, 0]
    assert weak_chains_dropped(ch, nch, 31).tolist() == [1, 4, 0]
    assert weak_chains_dropped(ch, nch, 50).tolist() == [1, 4, 0]
    with pytest.raises(ValueError):
        weak_chains_dropped(ch, nch, 51)


@pytest.mark.parametrize("err", [0.05, 0.10])
def test_seeded_long_reads_equal_full_dp_on_a_real_graph(real_data, err):
    """Issue #45's exactness target where full DP is affordable: 5 kbp reads walked from C4
    (a 330 kbp pangenome graph of three near-identical copies, both strands), 5% and 10%
    errors (a fifth indels): every seeded score equals full-graph DP (the ``simd``
    variant); measured also on LPA (412 kbp, cycles broken), 8 reads at each rate, and at
    8 reads on C4 (2026-12-05)."""
    import warnings
    from bench.seeded import sample
    from s2g.variants import simd
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = s2g.load_graph(str(real_data / "c4_gwfa" / "C4-90.gfa"), keep_paths=True)
    reads, _ = sample(g, 6, 5000, err, 0.2, np.random.default_rng(5))
    res = SeededAligner(g, build_index(g), Scoring(), Mode.LOCAL).align_batch(reads)
    full = simd.align_batch(g, reads, Scoring(), Mode.LOCAL)
    np.testing.assert_array_equal(res.score, full.score)
