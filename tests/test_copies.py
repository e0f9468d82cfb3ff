"""Other copies inside a read's own window count in MAPQ (s2g/seeded/copies.py): windows
of chains sharing a node merge, and MAPQ, which compares windows, used to see one
candidate where a read fits two nearby copies."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import s2g
from s2g import config
from s2g.index import build_index
from s2g.reads import ReadBatch
from s2g.scoring import Mode, Scoring
from s2g.seeded import SeededAligner
from s2g.seeded.copies import masked_pieces
from test_pairs import _rand, _unseedable, rc


def _align(g, ix, reads, **knobs):
    try:
        config.configure(**knobs)
        sa = SeededAligner(g, ix, Scoring(), Mode.LOCAL)
        res = sa.align_batch(reads)
        sa.traceback(reads, res)
    finally:
        config.reset()
    return res, sa.totals


def _tandem(tmp_path, rng, subs):
    """1.5 kbp, a 2 kbp element X, X again with ``subs`` substitutions (a tandem copy), 1.5 kbp:
    a linear genome in 500 bp segments."""
    def rnd(n):
        return "".join(rng.choice(list("ACGT"), n))
    x = rnd(2000)
    y = list(x)
    for i in rng.choice(2000, subs, replace=False):
        y[i] = "ACGT"[("ACGT".index(y[i]) + 1) % 4]
    genome = rnd(1500) + x + "".join(y) + rnd(1500)
    segs = [genome[i:i + 500] for i in range(0, len(genome), 500)]
    gfa = tmp_path / "tandem.gfa"
    gfa.write_text("".join(f"S\ts{i}\t{s}\n" for i, s in enumerate(segs))
                   + "".join(f"L\ts{i}\t+\ts{i + 1}\t+\t0M\n" for i in range(len(segs) - 1)))
    return s2g.load_graph(str(gfa)), x


def test_two_nearby_copies_share_mapq(tmp_path):
    """A 1.98 kbp read of X, where X has a tandem copy: both chains' corridors (their
    flanks reach ~40 bases past the read's ends) share a node, so they merge into one
    window. Identical copies: MAPQ 3 (was 60); copies two substitutions apart: MAPQ 40
    (20 a mismatch of difference); the score and end cell do not change."""
    rng = np.random.default_rng(7)
    for subs, want in ((0, 3), (2, 40)):
        g, x = _tandem(tmp_path, rng, subs)
        reads = ReadBatch.from_sequences(["r"], [x[10:1990]])
        ix = build_index(g)
        on, t_on = _align(g, ix, reads)
        off, _ = _align(g, ix, reads, copies_mapq=False)
        assert off.mapq[0] == 60            # one window: the other copy was never counted
        assert on.mapq[0] == want, (subs, on.mapq[0])
        assert t_on["windows realigned for copies"] == 1
        assert t_on["seconds copies"] > 0    # --timings' "copies" (the pass's seconds)
        a, b, _, _ = Scoring().as_tuple()
        assert on.score[0] == off.score[0] == 1980 * a and on.end_j[0] == off.end_j[0]
        assert on.copy_score[0] == 1980 * a - subs * (a + b)


def test_a_gpu_run_sends_few_copies_windows_to_the_cpu(tmp_path, monkeypatch):
    """``copies_gpu_min``: on a GPU run a batch's copies windows go to the GPU from that
    many on (0, the default: always), fewer run on the CPU's window kernel; the copy score
    and MAPQ are the same (a fake GPU that leaves every window to the CPU stands in)."""
    from s2g.seeded import copies
    from s2g.trace import gpu
    calls = []

    def fake(graph, reads, scoring, mode, t_read, *a, **k):
        calls.append(len(t_read))
        return gpu.WindowRun(len(t_read))          # nothing on the GPU: the CPU does all

    monkeypatch.setattr(gpu, "run_windows", fake)
    masked = []
    real = copies._align_masked

    def spy(sa, *a):
        was, sa.device = sa.device, "gpu"       # the copies pass as a GPU run takes it
        try:
            masked.append(real(sa, *a))
        finally:
            sa.device = was
        return masked[-1]

    monkeypatch.setattr(copies, "_align_masked", spy)
    g, x = _tandem(tmp_path, np.random.default_rng(7), 2)
    reads = ReadBatch.from_sequences(["r"], [x[10:1990]])
    ix = build_index(g)
    got = {}
    for least in (0, 1, 2):                 # one window: the GPU (from 1 on), then the CPU
        calls.clear()
        res, t = _align(g, ix, reads, copies_gpu_min=least)
        got[least] = (int(res.mapq[0]), int(res.copy_score[0]))
        assert t["windows realigned for copies"] == 1
        assert calls == ([1] if least <= 1 else [])
    assert got[0] == got[1] == got[2] and got[0][0] == 40


def test_c4_reads_fitting_two_copies_are_not_mapq_60(real_data):
    """C4 (three near-identical copies), 5 kbp reads at 10% errors (bench.seeded.sample,
    300 reads, seed 1): reads 9, 24 and 115 score on another copy exactly what they score
    on their true walk (checked by aligning them to it alone, 2026-12-05); their best
    window holds both copies, and MAPQ was 40-60 (8 of 281 reads with MAPQ >= 30 were off
    their walk); now it is at most 3."""
    from bench.seeded import sample
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = s2g.load_graph(str(real_data / "c4_gwfa" / "C4-90.gfa"), keep_paths=True)
    reads, _ = sample(g, 300, 5000, 0.10, 0.2, np.random.default_rng(1))
    reads = reads.subset(np.array([9, 24, 115]))
    ix = build_index(g)
    on, _ = _align(g, ix, reads)
    off, _ = _align(g, ix, reads, copies_mapq=False)
    assert (off.mapq >= 40).all()
    assert (on.mapq <= 3).all(), on.mapq
    np.testing.assert_array_equal(on.score, off.score)
    np.testing.assert_array_equal(on.copy_score, on.score)


def test_masked_pieces_keep_what_the_alignment_does_not_cover():
    """Window pieces less the bases a walk covers: the walk enters node 1 at offset 3 and
    leaves node 3 after offset 5 (path offsets 3..27 of nodes 1, 2, 3 of 10 bases)."""
    node_start = np.arange(0, 60, 10, dtype=np.int64)           # 5 nodes of 10 bases
    piece_at = np.array([0, 5], np.int64)
    p_node = np.array([0, 1, 2, 3, 4], np.int32)
    p_lo = np.array([2, 0, 0, 0, 0], np.int32)
    p_hi = np.array([9, 9, 9, 9, 4], np.int32)
    path = np.array([1, 2, 3], np.int32)
    geo = np.array([[30, 3, 26]], np.int64)                      # covered [3, 26) on the path
    at, node, lo, hi = masked_pieces(np.array([0]), np.array([0]), piece_at, p_node, p_lo,
                                     p_hi, np.array([0]), np.array([3]), path, geo, node_start)
    got = list(zip(node.tolist(), lo.tolist(), hi.tolist()))
    assert at.tolist() == [0, 4]
    assert got == [(0, 2, 9), (1, 0, 2), (3, 6, 9), (4, 0, 4)]


def _short_tandem_case(tmp_path):
    """A 2 kbp genome (50 bp segments) holding a 160 bp element twice in a row, and 150 bp
    reads of the element's first copy (error-free, so both copies score alike)."""
    rng = np.random.default_rng(11)

    def rnd(n):
        return "".join(rng.choice(list("ACGT"), n))
    x = rnd(160)
    genome = rnd(900) + x + x + rnd(880)
    segs = [genome[i:i + 50] for i in range(0, len(genome), 50)]
    gfa = tmp_path / "short_tandem.gfa"
    gfa.write_text("".join(f"S\ts{i}\t{s}\n" for i, s in enumerate(segs))
                   + "".join(f"L\ts{i}\t+\ts{i + 1}\t+\t0M\n" for i in range(len(segs) - 1)))
    seqs = [x[k:k + 150] for k in range(0, 10, 2)]
    return (s2g.load_graph(str(gfa)),
            ReadBatch.from_sequences([f"r{i}" for i in range(len(seqs))], seqs))


def _short(g, reads, device):
    sa = SeededAligner(g, build_index(g), Scoring(), Mode.LOCAL, device=device)
    res = sa.align_batch(reads)
    sa.traceback(reads, res)
    return res


def test_short_reads_in_a_tandem_copy_are_not_mapq_60(tmp_path):
    """150 bp reads of an element repeated twice in a row: one merged window per read, both
    copies equal, MAPQ <= 3."""
    g, reads = _short_tandem_case(tmp_path)
    res = _short(g, reads, "cpu")
    assert (res.copies >= 2).all() and (res.mapq <= 3).all(), (res.copies, res.mapq)


@pytest.mark.gpu
def test_gpu_copies_mapq_equals_cpu(tmp_path):
    """On a real GPU: the same reads, seeded on the GPU (windows on the `fast` kernel, the
    copies pass on the CPU): scores, end cells and MAPQ == the CPU path's."""
    g, reads = _short_tandem_case(tmp_path)
    cpu, gpu = _short(g, reads, "cpu"), _short(g, reads, "gpu")
    for f in ("score", "end_i", "end_j", "mapq"):
        np.testing.assert_array_equal(getattr(gpu, f), getattr(cpu, f), err_msg=f)


def test_the_other_copy_is_a_secondary_with_n(tmp_path):
    """With -N 1 the identical tandem copy is written as the read's secondary line (tp:A:S,
    MAPQ 0) on the segments the primary does not use, with the same score."""
    from s2g.gaf import gaf_bytes
    g, x = _tandem(tmp_path, np.random.default_rng(7), 0)
    reads = ReadBatch.from_sequences(["r"], [x[10:1990]])
    sa = SeededAligner(g, build_index(g), Scoring(), Mode.LOCAL, n_secondary=1)
    res = sa.align_batch(reads)
    assert res.secondary is None or len(res.secondary) == 0      # one window: no other
    sa.traceback(reads, res)
    assert len(res.secondary) == 1 and res.secondary.owner.tolist() == [0]
    assert res.secondary.score[0] == res.score[0] and res.mapq[0] <= 3
    lines = [ln.split("\t") for ln in gaf_bytes(g, res).decode().splitlines()]
    assert [ln[-1] for ln in lines] == ["tp:A:P", "tp:A:S"] and lines[1][11] == "0"
    segs = [set(ln[5].replace("<", ">").split(">")) - {""} for ln in lines]
    assert segs[0] and segs[1] and not segs[0] & segs[1], segs
    assert lines[0][13] == lines[1][13]                           # AS:i equal


def test_copy_secondaries_join_the_other_windows_secondaries(tmp_path):
    """X twice in a row and once more 3 kbp on: the far copy is another window's secondary,
    the tandem copy one from the merged window; with -N 2 the read gets both (MAPQ 0 each,
    distinct segments, the window's first), and MAPQ counts both copies."""
    from s2g.gaf import gaf_bytes
    rng = np.random.default_rng(9)

    def rnd(n):
        return "".join(rng.choice(list("ACGT"), n))
    x = rnd(2000)
    genome = rnd(1500) + x + x + rnd(3000) + x + rnd(1500)
    segs = [genome[i:i + 500] for i in range(0, len(genome), 500)]
    gfa = tmp_path / "three.gfa"
    gfa.write_text("".join(f"S\ts{i}\t{s}\n" for i, s in enumerate(segs))
                   + "".join(f"L\ts{i}\t+\ts{i + 1}\t+\t0M\n" for i in range(len(segs) - 1)))
    g = s2g.load_graph(str(gfa))
    reads = ReadBatch.from_sequences(["r0", "r1"], [x[10:1990], x[20:1980]])
    sa = SeededAligner(g, build_index(g), Scoring(), Mode.LOCAL, n_secondary=2)
    res = sa.align_batch(reads)
    # r0's tandem chains merged (one other window), r1's did not (its corridors' flanks
    # stop short of each other: two other windows)
    assert res.secondary.owner.tolist() == [0, 1, 1]
    sa.traceback(reads, res)
    assert sa.totals["secondaries of copies"] == 1
    sec = res.secondary
    assert sec.owner.tolist() == [0, 0, 1, 1] and (sec.score == np.repeat(res.score, 2)).all()
    assert (res.mapq == 2).all()          # three equal copies: -10 log10(2 / 3) = 1.8
    text = gaf_bytes(g, res).decode().splitlines()
    assert [ln.split("\t")[0] for ln in text] == ["r0"] * 3 + ["r1"] * 3
    for r in range(2):
        rows = [ln.split("\t") for ln in text[3 * r:3 * r + 3]]
        used = [set(ln[5].replace("<", ">").split(">")) - {""} for ln in rows]
        assert all(used) and not (used[0] & used[1] or used[0] & used[2] or used[1] & used[2])


def test_pairs_inside_a_tandem_copy_are_not_mapq_60(tmp_path):
    """Pairs whose fragment lies inside a 400 bp element repeated twice in a row, the
    second copy one substitution off where mate 2 lies (one 1 kbp segment holds both
    copies, so each mate's window holds both): the pair fits (copy 1, copy 1) and, one
    mismatch lower, (copy 2, copy 2). Pair MAPQ counts the mates' copies inside their
    windows, each paired with the mate's copy: ~20 a mismatch apart (60 with knob
    copies_mapq off, as before); placements, scores and fragments do not change."""
    from s2g.seeded.pairs import FragmentModel, PairedAligner
    rng = np.random.default_rng(13)

    def rnd(n):
        return "".join(rng.choice(list("ACGT"), n))
    comp = str.maketrans("ACGT", "TGCA")
    x = rnd(400)
    y = x[:270] + "ACGT"[("ACGT".index(x[270]) + 1) % 4] + x[271:]
    genome = rnd(1000) + x + y + rnd(1200)
    segs = [genome[i:i + 1000] for i in range(0, len(genome), 1000)]
    gfa = tmp_path / "tandem_pairs.gfa"
    gfa.write_text("".join(f"S\ts{i}\t{s}\n" for i, s in enumerate(segs))
                   + "".join(f"L\ts{i}\t+\ts{i + 1}\t+\t0M\n" for i in range(len(segs) - 1)))
    g = s2g.load_graph(str(gfa))
    ix = build_index(g)
    names, seqs = [], []
    for k in range(6):
        frag = x[10 + 15 * k:10 + 15 * k + 300]
        names += [f"p{k}/1", f"p{k}/2"]
        seqs += [frag[:150], frag[-150:].translate(comp)[::-1]]
    reads = ReadBatch.from_sequences(names, seqs)
    got = {}
    for on in (False, True):
        try:
            config.configure(copies_mapq=on)
            pa = PairedAligner(SeededAligner(g, ix, Scoring(), Mode.LOCAL),
                               FragmentModel(300, 30))
            res = pa.align_batch(reads)
            pa.traceback(reads, res)
        finally:
            config.reset()
        got[on] = res
        assert res.pair_proper.all() and (res.copies >= 2).all()
    assert (got[False].mapq == 60).all(), got[False].mapq
    assert (got[True].mapq >= 15).all() and (got[True].mapq <= 25).all(), got[True].mapq
    for f in ("score", "end_i", "end_j"):
        np.testing.assert_array_equal(getattr(got[True], f), getattr(got[False], f))
    np.testing.assert_array_equal(got[True].pair_frag, got[False].pair_frag)


def _pairs_on_and_off(tmp_path, genome, names, seqs, model):
    """Pairs ``names``/``seqs`` on a linear graph of ``genome`` in 60 bp segments, aligned
    and traced with knob copies_mapq off and on: {on: result}, and the rescued mates of
    each run."""
    from s2g.seeded.pairs import FragmentModel, PairedAligner
    gfa = tmp_path / "pairs.gfa"
    gfa.write_text("".join(f"S\ts{i}\t{genome[i:i + 60]}\n" for i in range(0, len(genome), 60))
                   + "".join(f"L\ts{i}\t+\ts{i + 60}\t+\t0M\n"
                             for i in range(0, len(genome) - 60, 60)))
    g = s2g.load_graph(str(gfa))
    ix = build_index(g)
    reads = ReadBatch.from_sequences(names, seqs)
    got, rescued = {}, {}
    for on in (False, True):
        try:
            config.configure(copies_mapq=on)
            pa = PairedAligner(SeededAligner(g, ix, Scoring(), Mode.LOCAL), FragmentModel(*model))
            res = pa.align_batch(reads)
            pa.traceback(reads, res)
        finally:
            config.reset()
        got[on], rescued[on] = res, pa.totals["rescued mates"]
    return got, rescued


def test_a_copy_beside_a_rescued_mate_lowers_the_pair_mapq_not_to_0(tmp_path):
    """Mate 1 lies on X, which a near copy X' (one substitution) follows in the same
    window; mate 2 has no seeds where it belongs (every 8th base substituted), a decoy
    sharing its first 80 bases places it poorly, so it is rescued beside mate 1. The pair
    MAPQ of mate 1 counts X' (about 2.4 mismatches lower with the fragment's penalty):
    below 60, not 0; the rescued mate keeps its 40. (The rescued mates' scores were hidden
    as NEG_INF from the seeded traceback, which runs the copies pass: the pair's score
    then fell to ~-5e8 against the mate's own windows, and both mates got 0.)"""
    rng = np.random.default_rng(4)
    names, seqs, parts = [], [], []
    for k in range(10):
        x, true = _rand(rng, 150), _rand(rng, 150)
        x2 = x[:75] + "ACGT"[("ACGT".index(x[75]) + 1) % 4] + x[76:]
        mt = _unseedable(true)
        decoy = mt[:80] + _rand(rng, 70)
        parts.append(_rand(rng, 300) + x + x2 + _rand(rng, 20) + decoy + _rand(rng, 50) + true
                     + _rand(rng, 300))
        names += [f"p{k}/1", f"p{k}/2"]
        seqs += [x, rc(mt)]
    got, rescued = _pairs_on_and_off(tmp_path, "".join(parts), names, seqs, (670, 60))
    for on in (False, True):
        assert rescued[on] == 10 and got[on].pair_proper.all()
    tandem = np.nonzero(got[True].copies[0::2] >= 2)[0]
    assert len(tandem) >= 2                      # mate 1's window merged X and X'
    off, on_ = got[False].mapq, got[True].mapq
    assert (off[0::2] == 60).all() and (off[1::2] > 0).all()
    np.testing.assert_array_equal(on_[1::2], off[1::2])          # the rescued mates
    assert (on_[2 * tandem] > 30).all() and (on_[2 * tandem] < 60).all(), on_
    np.testing.assert_array_equal(got[True].score, got[False].score)


def test_a_rescued_mate_between_two_equal_copies_is_a_tie(tmp_path):
    """Mate 2 (no seeds: every 8th base substituted) lies on Y, repeated twice in a row
    where the fragments to both copies are as far from the mean (500 and 650 of 575): its
    rescue window holds both copies and the rescue picks one. Its pair MAPQ counts the
    other copy inside the rescue window, a tie (was the rescue's 40); mate 1 keeps 60."""
    rng = np.random.default_rng(5)
    names, seqs, parts = [], [], []
    for k in range(4):
        m1, y = _rand(rng, 150), _rand(rng, 150)
        parts.append(_rand(rng, 300) + m1 + _rand(rng, 200) + y + y + _rand(rng, 300))
        names += [f"p{k}/1", f"p{k}/2"]
        seqs += [m1, rc(_unseedable(y))]
    got, rescued = _pairs_on_and_off(tmp_path, "".join(parts), names, seqs, (575, 100))
    for on in (False, True):
        assert rescued[on] == 4 and got[on].pair_proper.all()
    assert (got[False].mapq[1::2] == 40).all(), got[False].mapq
    assert (got[True].mapq[1::2] <= 3).all(), got[True].mapq
    assert (got[True].mapq[0::2] == 60).all()
    assert (got[True].copy_score[1::2] == got[True].score[1::2]).all()
    for f in ("score", "end_i", "end_j"):
        np.testing.assert_array_equal(getattr(got[True], f), getattr(got[False], f))
