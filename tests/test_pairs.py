"""Paired-end alignment (s2g/seeded/pairs.py): the forward axis, the fragment model, the
joint choice and its MAPQ, mate rescue, the CLI and its GAF tags.

The promises tested: a mate's alignment is still the exact optimum of the window it names
(rescue windows included: re-derived by full DP on the window's subgraph and by
re-scoring the CIGAR against the walk), pairing only moves a mate to another window of
its own or a rescue, a pair resolves a repeat its unique mate pins down, every read keeps
exactly one primary GAF line in input order.
"""
from __future__ import annotations

import numpy as np
import pytest

import s2g
from s2g.cli import main
from s2g.index import build_index
from s2g.reads import ReadBatch
from s2g.scoring import Mode, Scoring
from s2g.seeded import SeededAligner
from s2g.seeded.pairs import (LEARN_MIN, FragmentModel, PairedAligner, choose_pairs,
                              end_columns, learn_model, pair_fragment, strand_maps,
                              walk_steps)
from s2g.simulate import simulate_pairs

COMP = str.maketrans("ACGT", "TGCA")


def rc(s):
    return s.translate(COMP)[::-1]


def _rand(rng, n):
    return "".join(rng.choice(list("ACGT"), n))


@pytest.fixture(scope="module")
def sim_pairs(tmp_path_factory):
    d = tmp_path_factory.mktemp("pairs")
    return simulate_pairs(str(d / "p"), total_bases=120_000, n_pairs=400, frag_mean=400,
                          frag_sd=40, seed=5)


def _truth(path):
    from s2g.simulate import read_truth
    return read_truth(path)


def _gaf(path):
    return [ln.split("\t") for ln in open(path).read().splitlines()]


def _segs(path_field):
    return {x for x in path_field.replace("<", ">").split(">") if x}


# ------------------------------------------------------------------ units

def test_end_columns_and_walk_distances(tmp_path):
    """A reverse-strand end base lands on the same forward column as its forward copy;
    walk_steps counts the shortest walk: a 1 bp SNP allele and a 40 bp insertion between
    the mates count their shorter branch only (the topological columns count both)."""
    gfa = tmp_path / "b.gfa"
    rng = np.random.default_rng(2)
    a, c = _rand(rng, 100), _rand(rng, 100)
    gfa.write_text(f"S\ta\t{a}\nS\tx\tA\nS\ty\t{_rand(rng, 40)}\nS\tc\t{c}\n"
                   "L\ta\t+\tx\t+\t0M\nL\ta\t+\ty\t+\t0M\nL\tx\t+\tc\t+\t0M\n"
                   "L\ty\t+\tc\t+\t0M\n")
    g = s2g.load_graph(str(gfa))
    seg_node, mirror, copies = strand_maps(g)
    ia, ic = g.seg_names.index("a"), g.seg_names.index("c")
    fa, fc = int(g.node_start[seg_node[ia, 0]]), int(g.node_start[seg_node[ic, 0]])
    rc_ = int(g.node_start[seg_node[ic, 1]])
    assert mirror[seg_node[ic, 1]] == seg_node[ic, 0]
    # base 30 of c: forward column fc + 30; on the reverse copy offset 100 - 1 - 30
    st, fcol = end_columns(np.array([fc + 30, rc_ + 69, -1]), g.node_start, g.node_seg,
                           g.node_rev, seg_node)
    assert st.tolist() == [1 - 1, 1, -1] and fcol.tolist() == [fc + 30, fc + 30, -1]
    gr = (g.node_start, g.pred_ptr, g.pred_idx)
    # from base 90 of a to base 10 of c: 10 bases of a, the 1 bp allele, 10 of c
    assert walk_steps(fa + 90, fc + 10, *gr, 1000, 100) == 10 + 1 + 10
    assert fc - fa > 140                                       # columns count both alleles
    assert walk_steps(fa + 90, fc + 10, *gr, 20, 100) == -1    # beyond the limit
    assert walk_steps(fc + 10, fa + 90, *gr, 1000, 100) == -1  # backwards
    g4 = (g.node_start, g.pred_ptr, g.pred_idx, g.node_seg)
    # a pair: forward mate ending at a[90] (60 rows), reverse mate whose leftmost base is
    # c[10] (50 rows): fragment 60 + 50 + 21 - 1
    assert pair_fragment(0, fa + 90, 60, 1, fc + 10, 50, g4, copies, 1000, 100, 12) == 130
    assert pair_fragment(1, fc + 10, 50, 0, fa + 90, 60, g4, copies, 1000, 100, 12) == 130
    assert pair_fragment(0, fa + 90, 60, 0, fc + 10, 50, g4, copies, 1000, 100, 12) == -1
    # overlapping mates: the reverse mate's leftmost base 20 bases before the forward
    # mate's end: 60 + 50 - 20 - 1
    assert pair_fragment(0, fa + 90, 60, 1, fa + 70, 50, g4, copies, 1000, 100, 12) == 89


def test_fragment_model_is_robust_and_needs_enough_pairs():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal(400, 30, 2000), [50_000] * 50])   # 2.4% chimeras
    m = learn_model(x)
    assert abs(m.mean - 400) < 3 and 25 < m.sd < 35 and "2,050" in m.source
    assert learn_model(x[:LEARN_MIN - 1]) is None
    with pytest.raises(s2g.S2GError, match="mean > 0 and sd > 0"):
        FragmentModel(400, 0)


def test_joint_choice_prefers_the_consistent_pair_and_scores_its_mapq(tmp_path):
    """Mate 1 has two equal windows on the two copies of a repeat; mate 2 one window
    after copy 1. The pair takes copy 1, proper, both MAPQs high; the same with the
    windows listed the other way round; both mates forward: not proper."""
    rng = np.random.default_rng(5)
    gfa = tmp_path / "l.gfa"
    gfa.write_text(f"S\ta\t{_rand(rng, 3000)}\n")
    g = s2g.load_graph(str(gfa))
    seg_node = strand_maps(g)[0]
    f0 = int(g.node_start[seg_node[0, 0]])
    gr = (g.node_start, g.pred_ptr, g.pred_idx, g.node_seg, strand_maps(g)[2])
    unit = 6.0
    cap = 3.5 * unit

    def run(cols, strands):
        cand = (np.array([0, 2]), np.array([2, 1]), np.array([290.0, 290.0, 280.0]),
                np.array(strands), np.array(cols), np.array([150, 150, 150]))
        return choose_pairs(1, cand, gr, 600, 400.0, 40.0, cap, unit, 20.0)

    # mate 2's leftmost base 100 after the end of mate 1's copy-1 placement: 401 bp
    chosen, q, proper, frag = run([f0 + 500, f0 + 2000, f0 + 600], [0, 0, 1])
    assert chosen.tolist() == [0, 2] and proper[0] and frag[0] == 150 + 150 + 100 - 1
    assert q[0] > 30 and q[1] > 60
    chosen, q2, proper, _ = run([f0 + 2000, f0 + 500, f0 + 600], [0, 0, 1])
    assert chosen.tolist() == [1, 2] and proper[0] and q2[0] == q[0]
    _, _, proper, frag = run([f0 + 500, f0 + 2000, f0 + 600], [0, 0, 0])
    assert not proper[0] and frag[0] == 0
    _, _, proper, _ = run([f0 + 500, f0 + 2000, f0 + 1400], [0, 0, 1])   # 1.3 kbp apart
    assert not proper[0]


# ------------------------------------------------------------------ aligner

def _pair_batch(pairs):
    names, seqs = [], []
    for (n1, s1), (n2, s2) in pairs:
        names += [n1, n2]
        seqs += [s1, s2]
    return ReadBatch.from_sequences(names, seqs)


def test_a_unique_mate_resolves_a_repeat(tmp_path):
    """Two copies of one 300 bp element; mate 1 inside copy 1 (equal windows on both
    copies: single-end MAPQ <= 3), mate 2 in unique sequence 250 bp downstream of it: the
    pair puts mate 1 on copy 1, proper, MAPQ >= 30; single-end placement was a coin toss."""
    rng = np.random.default_rng(3)
    rep = _rand(rng, 300)
    a, b, c = _rand(rng, 500), _rand(rng, 1500), _rand(rng, 500)
    gfa = tmp_path / "rep.gfa"
    gfa.write_text(f"S\ta\t{a}\nS\tr1\t{rep}\nS\tb\t{b}\nS\tr2\t{rep}\nS\tc\t{c}\n"
                   "L\ta\t+\tr1\t+\t0M\nL\tr1\t+\tb\t+\t0M\nL\tb\t+\tr2\t+\t0M\n"
                   "L\tr2\t+\tc\t+\t0M\n")
    g = s2g.load_graph(str(gfa))
    ix = build_index(g, k=15, s=7)
    genome = a + rep + b + rep + c
    pairs = []
    for k in range(60):            # fragments starting inside copy 1, 400 bp long
        x = 500 + 20 + k * 2
        frag = genome[x:x + 400]
        pairs.append(((f"p{k}/1", frag[:150]), (f"p{k}/2", rc(frag[-150:]))))
    reads = _pair_batch(pairs)
    se = SeededAligner(g, ix, Scoring(), Mode.LOCAL)
    r0 = se.align_batch(reads)
    se.traceback(reads, r0)
    assert (r0.mapq[0::2] <= 3).all()
    pa = PairedAligner(SeededAligner(g, ix, Scoring(), Mode.LOCAL),
                       FragmentModel(400, 30))
    r1 = pa.align_batch(reads)
    pa.traceback(reads, r1)
    assert r1.pair_proper.all() and (r1.pair_frag > 350).all() and (r1.pair_frag < 450).all()
    names = g.oriented_names()
    for k in range(60):
        tb = r1.tracebacks[2 * k]
        assert ">r1" in [names[v] for v in tb.path], k
        assert r1.mapq[2 * k] >= 30 and r1.mapq[2 * k + 1] >= 30
        assert r1.score[2 * k] == r0.score[2 * k] and r1.score[2 * k + 1] == r0.score[2 * k + 1]


def _unseedable(s):
    m = list(s)
    for i in range(0, len(m), 8):              # every 8th base substituted: no 19-mer left
        m[i] = "ACGT"[("ACGT".index(m[i]) + 1) % 4]
    return "".join(m)


def _seedless_mates(tmp_path, both=0):
    """A 6 kbp linear graph of 60 bp segments; 40 pairs (fragment 420) whose mate 2 has
    no usable seed chain, then ``both`` pairs with neither mate seedable."""
    rng = np.random.default_rng(8)
    genome = _rand(rng, 6000)
    segs = [genome[i:i + 60] for i in range(0, 6000, 60)]
    lines = [f"S\ts{i}\t{s}" for i, s in enumerate(segs)]
    lines += [f"L\ts{i}\t+\ts{i + 1}\t+\t0M" for i in range(len(segs) - 1)]
    gfa = tmp_path / "lin.gfa"
    gfa.write_text("\n".join(lines) + "\n")
    g = s2g.load_graph(str(gfa))
    pairs = []
    for k in range(40 + both):
        x = 100 + k * 130
        frag = genome[x:x + 420]
        m1 = _unseedable(frag[:150]) if k >= 40 else frag[:150]
        pairs.append(((f"q{k}/1", m1), (f"q{k}/2", _unseedable(rc(frag[-150:])))))
    return g, build_index(g), _pair_batch(pairs)


def test_unseeded_mates_are_rescued_before_full_graph_dp(tmp_path):
    """--unseeded auto: a seedless mate of a well-placed read is rescued beside it (exact
    DP in the fragment's region, proper pair) instead of aligned by full-graph DP; pairs
    with neither mate seedable still get full-graph DP first (MAPQ 255, the graph's
    optimum) and are paired from it."""
    from s2g.variants import v0_cpu
    g, ix, reads = _seedless_mates(tmp_path, both=2)
    pa = PairedAligner(SeededAligner(g, ix, Scoring(), Mode.LOCAL, full_module=v0_cpu),
                       FragmentModel(420, 20))
    r = pa.align_batch(reads)
    pa.traceback(reads, r)
    t = pa.totals
    assert t["unseeded"] == 44 and t["unseeded rescued"] == 40
    assert t["unseeded full DP"] == 4 and t["rescued mates"] == 40
    assert r.pair_proper.all()         # full-DP pairs are aligned before pairing, and pair
    full = v0_cpu.align_batch(g, reads, Scoring(), Mode.LOCAL)
    np.testing.assert_array_equal(r.score[1:80:2], full.score[1:80:2])  # window = region
    assert (r.mapq[80:] == 255).all() and (r.score[80:] == full.score[80:]).all()
    assert all(tb is not None for tb in r.tracebacks)
    # without rescue every seedless read goes to full-graph DP, as single-end
    pn = PairedAligner(SeededAligner(g, ix, Scoring(), Mode.LOCAL, full_module=v0_cpu),
                       FragmentModel(420, 20), rescue=False)
    pn.align_batch(reads)
    assert pn.totals["unseeded full DP"] == 44 and pn.totals["unseeded rescued"] == 0


def test_a_poor_mate_in_a_proper_pair_is_rescued_where_it_scores_better(tmp_path):
    """Mate 2's true place has no seeds (every 8th base substituted); a decoy 200 bp
    before it shares its first 80 bases, so single-end alignment puts it there (score
    ~160, a proper pair still: fragment 350 of 520 +- 60). Its score is under
    RESCUE_POOR x perfect, so it is rescued beside mate 1 anyway and the pair takes the
    better place: the read's full-graph optimum."""
    from s2g.variants import v0_cpu
    rng = np.random.default_rng(4)
    pairs, parts = [], []
    for k in range(20):
        m1, true = _rand(rng, 150), _rand(rng, 150)
        mt = _unseedable(true)
        decoy = mt[:80] + _rand(rng, 70)
        parts.append(_rand(rng, 300) + m1 + _rand(rng, 20) + decoy + _rand(rng, 50) + true
                     + _rand(rng, 300))
        pairs.append(((f"p{k}/1", m1), (f"p{k}/2", rc(mt))))
    genome = "".join(parts)
    lines = [f"S\ts{i}\t{genome[i:i + 60]}" for i in range(0, len(genome), 60)]
    lines += [f"L\ts{i}\t+\ts{i + 60}\t+\t0M" for i in range(0, len(genome) - 60, 60)]
    (tmp_path / "d.gfa").write_text("\n".join(lines) + "\n")
    g = s2g.load_graph(str(tmp_path / "d.gfa"))
    ix = build_index(g)
    reads = _pair_batch(pairs)
    r0 = SeededAligner(g, ix, Scoring(), Mode.LOCAL).align_batch(reads)
    pa = PairedAligner(SeededAligner(g, ix, Scoring(), Mode.LOCAL), FragmentModel(520, 60))
    r1 = pa.align_batch(reads)
    pa.traceback(reads, r1)
    full = v0_cpu.align_batch(g, reads, Scoring(), Mode.LOCAL)
    assert (r0.score[1::2] < full.score[1::2]).all()          # the decoy, alone
    assert pa.totals["rescued mates"] == 20 and r1.pair_proper.all()
    np.testing.assert_array_equal(r1.score[1::2], full.score[1::2])
    assert (r1.mapq[1::2] > 0).all()


def test_rescue_aligns_a_mate_without_seeds_exactly(tmp_path):
    """Mate 2 with 12% substitutions has no usable seed chain (--unseeded unmapped: the
    single-end run leaves it unaligned); the paired run rescues it by exact DP in the
    region its mate implies: on its true segments, and its score is the full-graph DP
    optimum of the read restricted to the rescue window (re-derived here by full DP on
    the window's nodes) and re-scores from its CIGAR."""
    from s2g.variants import v0_cpu
    g, ix, reads = _seedless_mates(tmp_path)
    se = SeededAligner(g, ix, Scoring(), Mode.LOCAL, unseeded="unmapped")
    r0 = se.align_batch(reads)
    assert not r0.aligned()[1::2].any() and r0.aligned()[0::2].all()
    pa = PairedAligner(SeededAligner(g, ix, Scoring(), Mode.LOCAL, unseeded="unmapped"),
                       FragmentModel(420, 20))
    r1 = pa.align_batch(reads)
    pa.traceback(reads, r1)
    assert pa.totals["rescued mates"] == 40 and r1.pair_proper.all()
    full = v0_cpu.align_batch(g, reads, Scoring(), Mode.LOCAL)
    a, b, o, e = Scoring().as_tuple()
    names = g.oriented_names()
    for k in range(40):
        r = 2 * k + 1
        tb = r1.tracebacks[r]
        assert tb is not None and r1.score[r] > 0
        # on the true segments (reverse strand: the mate is the fragment's reverse end)
        x = 100 + k * 130 + 420 - 150
        want = {f"s{i}" for i in range(x // 60, (x + 149) // 60 + 1)}
        got = {names[v][1:] for v in tb.path}
        assert got <= want and all(names[v][0] == "<" for v in tb.path)
        # the rescue window holds the whole true region: its optimum is the graph's
        assert r1.score[r] == full.score[r]
        # CIGAR re-scored
        sc = 0
        for n_, op in __import__("re").findall(r"(\d+)([=XID])", tb.cigar):
            n_ = int(n_)
            sc += {"=": a * n_, "X": -b * n_}.get(op, -(o + e * n_))
        assert sc == r1.score[r]


def test_rescue_in_a_long_node_finds_the_copy_the_fragment_puts_the_mate_at(tmp_path):
    """One 20 kbp segment holding a 700 bp stretch twice, 14 kbp apart; mate 2 (no seeds)
    lies in the first copy, its mate 1 just before it on unique sequence. On mate 2's
    strand the far copy comes first, and scores the same: a rescue over the whole node
    returned it (tie: the smallest column), out of the fragment's reach, and left the pair
    improper. The rescue window holds only the columns within reach (rescue_pieces): the
    near copy, a proper pair of the true fragment length."""
    rng = np.random.default_rng(11)
    genome = list(_rand(rng, 20_000))
    genome[15_000:15_700] = genome[1_000:1_700]
    genome = "".join(genome)
    gfa = tmp_path / "long.gfa"
    gfa.write_text(f"S\tlong\t{genome}\n")
    g = s2g.load_graph(str(gfa))
    ix = build_index(g)
    pairs = []
    for k in range(20):
        x = 700 + 10 * k                       # mate 1 unique, mate 2 inside copy one
        frag = genome[x:x + 420]
        m2 = list(rc(frag[-150:]))
        for i in range(0, 150, 8):             # no seed left
            m2[i] = "ACGT"[("ACGT".index(m2[i]) + 1) % 4]
        pairs.append(((f"q{k}/1", frag[:150]), (f"q{k}/2", "".join(m2))))
    reads = _pair_batch(pairs)
    pa = PairedAligner(SeededAligner(g, ix, Scoring(), Mode.LOCAL, unseeded="unmapped"),
                       FragmentModel(420, 20))
    r1 = pa.align_batch(reads)
    pa.traceback(reads, r1)
    assert pa.totals["rescued mates"] == 20 and r1.pair_proper.all()
    np.testing.assert_array_equal(r1.pair_frag, 420)
    st, fcol = end_columns(np.asarray(r1.end_j, np.int64), g.node_start, g.node_seg,
                           g.node_rev, strand_maps(g)[0])
    fwd = int(strand_maps(g)[0][0, 0])
    for k in range(20):
        r = 2 * k + 1
        assert st[r] == 1 and fcol[r] == g.node_start[fwd] + 700 + 10 * k + 270, k
        assert r1.tracebacks[r] is not None and r1.score[r] > 0


def test_improper_pairs_keep_their_single_end_results(tmp_path, sim_pairs):
    """Mates of different pairs (shuffled): almost none proper, every mate's score, end
    cell and MAPQ equal to the single-end run's."""
    gfa, fq1, fq2, _ = sim_pairs
    g = s2g.load_graph(gfa)
    ix = build_index(g)
    from s2g.reads import read_pairs
    reads = read_pairs(fq1, fq2)
    n = reads.n_reads // 2
    perm = np.arange(reads.n_reads)
    perm[1::2] = perm[1::2][np.roll(np.arange(n), 7)]       # mate 2 of another pair
    shuffled = reads.subset(perm)
    se = SeededAligner(g, ix, Scoring(), Mode.LOCAL)
    r0 = se.align_batch(shuffled)
    pa = PairedAligner(SeededAligner(g, ix, Scoring(), Mode.LOCAL), FragmentModel(400, 40),
                       rescue=False)
    r1 = pa.align_batch(shuffled)
    assert r1.pair_proper.mean() < 0.05
    bad = np.repeat(~r1.pair_proper, 2)
    for f in ("score", "end_i", "end_j", "mapq"):
        np.testing.assert_array_equal(np.asarray(getattr(r1, f))[bad],
                                      np.asarray(getattr(r0, f))[bad], err_msg=f)


def test_too_few_pairs_to_learn_leaves_them_unpaired(sim_pairs):
    gfa, fq1, fq2, _ = sim_pairs
    g = s2g.load_graph(gfa)
    from s2g.reads import read_pairs
    reads = read_pairs(fq1, fq2).subset(np.arange(20))
    pa = PairedAligner(SeededAligner(g, build_index(g), Scoring(), Mode.LOCAL))
    with pytest.warns(UserWarning, match="fewer than"):
        res = pa.align_batch(reads)
    assert pa.model is None and not res.pair_proper.any()


# ------------------------------------------------------------------ CLI

def test_cli_pairs_two_files_and_interleaved(tmp_path, sim_pairs, capsys):
    """One line per mate in input order, fn:Z/fp:Z naming the mate, pd:b:1 on >= 99% of
    simulated pairs, mates on their true walk; the interleaved file gives the same GAF."""
    gfa, fq1, fq2, truth = sim_pairs
    out = tmp_path / "p.gaf"
    assert main(["align", gfa, fq1, fq2, "-o", str(out), "--batch-size", "300"]) == 0
    err = capsys.readouterr().err
    lines = _gaf(out)
    t = _truth(truth)
    names = list(t)
    assert [x[0] for x in lines] == names and len(lines) == 800
    for r, x in enumerate(lines):
        mate = names[r ^ 1]
        assert x[-2] == (f"fn:Z:{mate}" if r % 2 == 0 else f"fp:Z:{mate}")
    proper = [x[-1] == "pd:b:1" for x in lines]
    assert np.mean(proper) >= 0.99
    on = [bool(_segs(x[5]) & _segs(t[x[0]]["walk"])) for x in lines]
    assert np.mean(on) >= 0.99
    assert "pairs" in err or "reads" in err
    inter = tmp_path / "i.fq"
    with open(fq1) as f1, open(fq2) as f2, open(inter, "w") as o:
        a, b = f1.read().splitlines(), f2.read().splitlines()
        for k in range(0, len(a), 4):
            o.write("\n".join(a[k:k + 4] + b[k:k + 4]) + "\n")
    out2 = tmp_path / "i.gaf"
    assert main(["align", gfa, str(inter), "--interleaved", "-o", str(out2),
                 "--batch-size", "300"]) == 0
    assert out2.read_text() == out.read_text()


def test_cli_pairs_with_secondaries_and_a_given_model(tmp_path, sim_pairs):
    gfa, fq1, fq2, _ = sim_pairs
    out = tmp_path / "p.gaf"
    assert main(["align", gfa, fq1, fq2, "-o", str(out), "-N", "1", "--fragment-mean", "400",
                 "--fragment-sd", "40"]) == 0
    lines = _gaf(out)
    prim = [x for x in lines if "tp:A:S" not in x]
    assert len(prim) == 800
    assert all(any(t.startswith(("fn:Z:", "fp:Z:")) for t in x) for x in prim)


@pytest.mark.parametrize("args,msg", [
    (["--exact"], "seeded alignment"),
    (["-m", "global"], "no global mode"),
    (["--fragment-mean", "300"], "both --fragment-mean and --fragment-sd"),
    (["--strands", "forward"], "both strands"),
])
def test_cli_pair_errors(tmp_path, sim_pairs, capsys, args, msg):
    from cli_helpers import main as run
    from cli_helpers import one_error
    gfa, fq1, fq2, _ = sim_pairs
    code, _, err = run(capsys, "align", gfa, fq1, fq2, "-o", tmp_path / "x.gaf", *args)
    one_error(code, err, msg)
    assert not (tmp_path / "x.gaf").exists()


def test_cli_pair_input_errors(tmp_path, sim_pairs, capsys):
    from cli_helpers import main as run
    from cli_helpers import one_error
    gfa, fq1, fq2, _ = sim_pairs
    code, _, err = run(capsys, "align", gfa, fq1, tmp_path / "missing.fq")
    one_error(code, err, "missing.fq", "no such file")
    code, _, err = run(capsys, "align", gfa, fq1, fq2, "--interleaved")
    one_error(code, err, "not both")
    code, _, err = run(capsys, "align", gfa, fq1, "--fragment-mean", "300", "--fragment-sd", "9")
    one_error(code, err, "paired-end")
    short = tmp_path / "short.fq"
    short.write_text("".join(open(fq2).readlines()[:8]))
    code, _, err = run(capsys, "align", gfa, fq1, short, "-o", tmp_path / "y.gaf", "-q")
    one_error(code, err)


def test_cli_simulate_pairs_then_align(tmp_path, capsys):
    pre = tmp_path / "s"
    assert main(["simulate", str(pre), "--pairs", "--reads", "300", "--total-bases", "60000",
                 "--fragment-mean", "350", "--fragment-sd", "20", "--seed", "4"]) == 0
    files = capsys.readouterr().out.split()
    assert [f.rsplit("/", 1)[1] for f in files] == ["s.gfa", "s_1.fq", "s_2.fq", "s.truth.tsv"]
    out = tmp_path / "o.gaf"
    assert main(["align", files[0], files[1], files[2], "-o", str(out)]) == 0
    lines = _gaf(out)
    assert len(lines) == 600 and np.mean([x[-1] == "pd:b:1" for x in lines]) >= 0.99
    assert main(["simulate", str(pre), "--pairs", "--interleaved", "--reads", "3"]) == 0
    assert capsys.readouterr().out.split()[1].endswith("s.fq")


def test_gpu_windows_in_pairs_under_the_cuda_simulator_match_the_cpu():
    """PairedAligner over SeededAligner(device="gpu") == over device="cpu", field for
    field, rescued mates included (tests/pairs_cudasim_check.py, in a subprocess)."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    repo = Path(__file__).resolve().parents[1]
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=str(repo))
    p = subprocess.run([sys.executable, str(repo / "tests" / "pairs_cudasim_check.py")],
                       env=env, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.startswith("OK 8"), p.stdout


@pytest.mark.gpu
def test_gpu_pairs_equal_cpu_pairs(sim_pairs):
    """On a real GPU: the paired run with the GPU's windows == the CPU's, field for field,
    tracebacks included (rescues run on the CPU window kernel on both)."""
    gfa, fq1, fq2, _ = sim_pairs
    g = s2g.load_graph(gfa)
    ix = build_index(g)
    from s2g.reads import read_pairs
    reads = read_pairs(fq1, fq2)
    out = []
    for device in ("cpu", "gpu"):
        pa = PairedAligner(SeededAligner(g, ix, Scoring(), Mode.LOCAL, device=device))
        res = pa.align_batch(reads)
        pa.traceback(reads, res)
        out.append(res)
    for f in ("score", "end_i", "end_j", "mapq", "pair_proper"):
        np.testing.assert_array_equal(getattr(out[0], f), getattr(out[1], f), err_msg=f)
    assert list(out[0].tracebacks) == list(out[1].tracebacks)


def test_an_empty_or_unalignable_mate_keeps_its_line(tmp_path, sim_pairs):
    """Pairs whose mate 2 is empty or all N: every read keeps its line in order, the
    mate without alignment a no-hit line (pd:b:0), its mate still aligned."""
    gfa, fq1, fq2, _ = sim_pairs
    r1 = open(fq1).read().splitlines()[:8]
    r2 = open(fq2).read().splitlines()[:8]
    r2[1], r2[3] = "", ""
    r2[5], r2[7] = "N" * 150, "I" * 150
    a, b = tmp_path / "a.fq", tmp_path / "b.fq"
    a.write_text("\n".join(r1) + "\n")
    b.write_text("\n".join(r2) + "\n")
    out = tmp_path / "o.gaf"
    assert main(["align", gfa, str(a), str(b), "-o", str(out), "--fragment-mean", "400",
                 "--fragment-sd", "40", "-q"]) == 0
    lines = _gaf(out)
    assert [x[0] for x in lines] == [r1[0][1:], r2[0][1:], r1[4][1:], r2[4][1:]]
    assert lines[1][5] == "*" and lines[3][5] == "*"
    assert lines[0][5] != "*" and lines[2][5] != "*"
    assert lines[0][-1] == lines[1][-1] == "pd:b:0"


def test_python_api_pairs(sim_pairs):
    """s2g.align(..., pairs=True) == the CLI's paired run: the same placements."""
    gfa, fq1, fq2, _ = sim_pairs
    g = s2g.load_graph(gfa)
    reads = s2g.read_pairs(fq1, fq2)
    res = s2g.align(g, reads, pairs=True)
    assert len(res) == reads.n_reads and res.pair_proper.mean() >= 0.99
    pa = PairedAligner(SeededAligner(g, build_index(g), Scoring(), Mode.LOCAL))
    want = pa.align_batch(reads)
    np.testing.assert_array_equal(res.score, want.score)
    np.testing.assert_array_equal(res.mapq, want.mapq)
    with pytest.raises(s2g.S2GError, match="seeded alignment"):
        s2g.align(g, reads, pairs=True, method="exact")


def test_pairs_across_a_cycle_on_its_unrolled_graph(tmp_path):
    """A tandem repeat drawn as a cycle (r -> r), read three times by the haplotype: pairs
    whose mates lie in different turns of the cycle are proper on the unrolled graph (a
    reverse mate is tried on every copy of its segment, not only the first)."""
    rng = np.random.default_rng(12)
    a, r, b = _rand(rng, 300), _rand(rng, 200), _rand(rng, 300)
    gfa = tmp_path / "cyc.gfa"
    gfa.write_text(f"S\ta\t{a}\nS\tr\t{r}\nS\tb\t{b}\n"
                   "L\ta\t+\tr\t+\t0M\nL\tr\t+\tr\t+\t0M\nL\tr\t+\tb\t+\t0M\n")
    hap = a + r + r + r + b
    f1, f2 = tmp_path / "c_1.fa", tmp_path / "c_2.fa"
    with open(f1, "w") as o1, open(f2, "w") as o2:
        for k, x in enumerate(range(0, len(hap) - 400, 20)):
            frag = hap[x:x + 400]
            o1.write(f">c{k}/1\n{frag[:120]}\n")
            o2.write(f">c{k}/2\n{rc(frag[-120:])}\n")
    out = tmp_path / "c.gaf"
    assert main(["align", str(gfa), str(f1), str(f2), "-o", str(out), "--fragment-mean",
                 "400", "--fragment-sd", "20", "-q"]) == 0
    lines = _gaf(out)
    assert len(lines) == 2 * len(range(0, len(hap) - 400, 20))
    assert all(x[-1] == "pd:b:1" for x in lines), [x[0] for x in lines if x[-1] != "pd:b:1"]
