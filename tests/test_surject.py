"""Surjection onto a reference path and SAM/BAM output (s2g/sam/).

Every mapped record is checked by invariants against the path sequence (its CIGAR
re-scores to AS with the scoring, re-spelled NM and MD agree), positions against the
simulator's truth on both strands, scores against parasail and the graph alignment on
linear graphs, and the BAM with pysam (quickcheck, counts, sort order, index).
"""
from __future__ import annotations

import os
import re

import numpy as np
import pytest

import s2g
from s2g.errors import S2GError
from test_v0 import NO_PARASAIL, parasail  # None only where S2G_NO_PARASAIL=1 (GPU machine)
from s2g.reads import ReadBatch
from s2g.simulate import sample_reads, snp_graph
from s2g.sam import RefPath, SamWriter, choose_path, write_sam

SC = s2g.Scoring()
_COMP = str.maketrans("ACGTN", "TGCAN")


def rc(s):
    return s.translate(_COMP)[::-1]


def write_text(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def batch(names, seqs):
    return ReadBatch.from_sequences(names, seqs)


def records(text):
    return [line.split("\t") for line in text.splitlines() if line and not line.startswith("@")]


def tags(rec):
    return {f[:2]: f[5:] for f in rec[11:]}


def check_record(rec, refseq, sc=SC):
    """Re-score the record's CIGAR against the path at POS (== AS); re-spell the read
    from CIGAR + path: NM and MD as written. Returns (score, left clip)."""
    a, b, o, e = sc.as_tuple()
    flag, pos, cigar, seq = int(rec[1]), int(rec[3]), rec[5], rec[9]
    assert not flag & 4
    t = tags(rec)
    ops = re.findall(r"(\d+)([MIDS=X])", cigar)
    assert "".join(n + op for n, op in ops) == cigar
    assert sum(int(n) for n, op in ops if op in "MIS=X") == len(seq), "CIGAR does not consume the read"
    assert all(op != "S" for _, op in ops[1:-1]), "soft clips only at the ends"
    i, j = 0, pos - 1
    score = nm = 0
    md, run = [], 0
    for n, op in ops:
        n = int(n)
        if op == "S":
            i += n
        elif op == "M":
            for _ in range(n):
                x, y = seq[i], refseq[j]
                if x == y and x != "N":
                    score += a
                    run += 1
                else:
                    score -= b
                    nm += 1
                    md.append(f"{run}{y}")
                    run = 0
                i += 1
                j += 1
        elif op == "I":
            score -= o + e * n
            nm += n
            i += n
        elif op == "D":
            score -= o + e * n
            nm += n
            md.append(f"{run}^{refseq[j:j + n]}")
            run = 0
            j += n
    assert j <= len(refseq)
    md.append(str(run))
    assert score == int(t["AS"]), f"{rec[0]}: CIGAR {cigar} re-scores to {score}, AS {t['AS']}"
    assert nm == int(t["NM"]), f"{rec[0]}: NM {t['NM']} but {nm} edits"
    assert "".join(md) == t["MD"], f"{rec[0]}: MD {t['MD']} but {''.join(md)}"
    left = int(ops[0][0]) if ops[0][1] == "S" else 0
    return score, left


def sam_text(graph, reads, res, ref=None, pairs=None, **kw):
    import io
    fh = io.StringIO()
    write_sam(fh, graph, reads, res, ref, pairs=pairs, **kw)
    return fh.getvalue()


# ------------------------------------------------------------- simulated SNP graphs

def _truth_offsets(g, ref):
    """The reference offset of every segment (an off-path allele: its site's offset)."""
    lens = [len(s) for s in g.seqs]
    off = {}
    at = 0
    for v in ref:
        off[v] = at
        at += lens[v]
    for u, vs in enumerate(g.succ):
        for v in vs:
            if v not in off:                 # an alternative allele: after its backbone node
                off[v] = off[u] + lens[u]
    return off, "".join(g.seqs[v] for v in ref)


@pytest.mark.parametrize("mode", ["local", "semiglobal"])
def test_simulated_reads_land_at_their_true_position(tmp_path, mode):
    g, ref = snp_graph(20_000, node_len=40, branching=3, seed=5)
    path = str(tmp_path / "sim.gfa")
    g.write_gfa(path, ref)
    sim = sample_reads(g, 300, 150, error_rate=0.01, reverse_fraction=0.5, seed=9)
    graph = s2g.load_graph(path, keep_paths=True)
    reads = batch([n for n, _, _ in sim], [s for _, s, _ in sim])
    res = s2g.align(graph, reads, mode=mode, method="exact")
    text = sam_text(graph, reads, res)
    recs = records(text)
    assert [r[0] for r in recs] == reads.names
    off, refseq = _truth_offsets(g, ref)
    rp = RefPath(graph)
    assert rp.sequence() == refseq
    names = {str(v + 1): v for v in range(len(g.names))}
    on_ref = set(ref)
    n_rev = 0
    for rec, (name, seq, truth), r in zip(recs, sim, res):
        first = names[re.match(r">(\d+)", truth["walk"]).group(1)]
        true_pos = off[first] + truth["offset"]
        score, left = check_record(rec, refseq)
        flag = int(rec[1])
        assert bool(flag & 16) == (truth["strand"] == "-"), name
        n_rev += truth["strand"] == "-"
        # substitutions only: the read's first base (clipped or not) is at the true offset
        assert int(rec[3]) - 1 - left == true_pos, f"{name}: POS {rec[3]} clip {left}, truth {true_pos}"
        assert rec[9] == (rc(seq) if flag & 16 else seq)
        # each off-path allele the read crosses costs at most one mismatch for a match
        alts = sum(names[x] not in on_ref for x in re.findall(r"\d+", truth["walk"]))
        assert r.score - alts * (SC.match + SC.mismatch) <= score <= r.score
        t = tags(rec)
        assert t["XG"] == "".join(graph.node_name(v) for v in r.traceback.path)
        assert int(t["XP"]) == r.traceback.path_start
    assert 50 < n_rev < 250


def test_snp_bubble_gives_a_mismatch_not_an_indel(tmp_path):
    rng = np.random.default_rng(3)
    A = "".join(rng.choice(list("ACGT"), 60))
    B = "".join(rng.choice(list("ACGT"), 60))
    gfa = (f"S\tA\t{A}\nS\tr\tC\nS\tt\tT\nS\tB\t{B}\n"
           "L\tA\t+\tr\t+\t0M\nL\tA\t+\tt\t+\t0M\nL\tr\t+\tB\t+\t0M\nL\tt\t+\tB\t+\t0M\n"
           "P\tchr1\tA+,r+,B+\t*\n")
    graph = s2g.load_graph(write_text(tmp_path, "snp.gfa", gfa), keep_paths=True)
    alt = A[-30:] + "T" + B[:30]
    reads = batch(["fwd", "rev"], [alt, rc(alt)])
    res = s2g.align(graph, reads, method="exact")
    assert all(r.score == 61 * SC.match for r in res)      # the graph has the allele
    recs = records(sam_text(graph, reads, res))
    refseq = A + "C" + B
    for rec in recs:
        check_record(rec, refseq)
        assert rec[2] == "chr1" and rec[3] == str(31) and rec[5] == "61M", rec[:6]
        t = tags(rec)
        assert t["NM"] == "1" and t["MD"] == "30C30" and int(t["AS"]) == 60 * SC.match - SC.mismatch
        assert ">t>" in t["XG"] or "<t<" in t["XG"]
    assert int(recs[0][1]) == 0 and int(recs[1][1]) == 16
    assert recs[1][9] == alt


def test_indel_bubble_and_off_path_and_unaligned_reads(tmp_path):
    rng = np.random.default_rng(4)
    A, B, X = ("".join(rng.choice(list("ACGT"), k)) for k in (80, 80, 120))
    # ref: A C G B; alt: A (skip "CG") B; an off-path 120 bp segment X between A and B
    gfa = (f"S\tA\t{A}\nS\tc\tCGCG\nS\tB\t{B}\nS\tX\t{X}\n"
           "L\tA\t+\tc\t+\t0M\nL\tc\t+\tB\t+\t0M\nL\tA\t+\tB\t+\t0M\n"
           "L\tA\t+\tX\t+\t0M\nL\tX\t+\tB\t+\t0M\nP\tref\tA+,c+,B+\t*\n")
    graph = s2g.load_graph(write_text(tmp_path, "indel.gfa", gfa), keep_paths=True)
    refseq = A + "CGCG" + B
    dele = A[-40:] + B[:40]
    reads = batch(["del", "delrev", "offpath", "nothing", "empty"],
                  [dele, rc(dele), rc(X[10:110]), "N" * 30, ""])
    res = s2g.align(graph, reads, method="exact")
    recs = records(sam_text(graph, reads, res))
    assert [r[0] for r in recs] == reads.names
    for rec in recs[:2]:
        check_record(rec, refseq)
        assert rec[5] in ("40M4D40M", "38M4D42M", "39M4D41M", "37M4D43M", "36M4D44M")  # some CG placement
        assert tags(rec)["NM"] == "4"
    # off the path: unmapped, graph placement kept in tags
    off = recs[2]
    assert int(off[1]) & 4 and off[2] == "*" and off[3] == "0" and off[5] == "*"
    assert tags(off)["XG"] == "<X" and int(tags(off)["XP"]) == res[2].traceback.path_start
    assert off[9] == rc(X[10:110])                # unmapped: SEQ as given
    for rec in recs[3:]:
        assert int(rec[1]) == 4 and "XG" not in tags(rec)
    assert recs[4][9] == "*" and recs[4][10] == "*"


def test_deletion_alleles_and_read_ends_off_the_path(tmp_path):
    """A read through a 54-74 bp deletion allele (an edge over path segments: no D in its
    graph CIGAR, so its on-path nodes vote for shifts that far apart) is one window and a
    CIGAR with the deletion at its true place (it split into two garbage candidates at MAPQ
    60 past ~len/4 + 16 bp); one through a 120 bp deletion, which costs more as a gap than
    its shorter half, is clipped there. Read ends on sequence the path does not spell (before
    and after it, a 300 bp insertion allele) are soft-clipped, not inserted or scattered
    over the path as edits."""
    rng = np.random.default_rng(7)

    def rnd(n):
        return "".join(rng.choice(list("ACGT"), n))
    lens = [54, 74, 120]
    A = [rnd(400) for _ in lens]
    D = [rnd(n) for n in lens]
    Z, pre, ins = rnd(400), rnd(300), rnd(300)
    gfa, ref = f"S\tpre\t{pre}\nL\tpre\t+\tA0\t+\t0M\n", ""
    steps = []
    for k in range(len(lens)):
        nxt = f"A{k + 1}" if k + 1 < len(lens) else "Z"
        gfa += (f"S\tA{k}\t{A[k]}\nS\tD{k}\t{D[k]}\nL\tA{k}\t+\tD{k}\t+\t0M\n"
                f"L\tD{k}\t+\t{nxt}\t+\t0M\nL\tA{k}\t+\t{nxt}\t+\t0M\n")
        steps += [f"A{k}+", f"D{k}+"]
        ref += A[k] + D[k]
    gfa += f"S\tZ\t{Z}\nS\tI\t{ins}\nL\tA0\t+\tI\t+\t0M\nL\tI\t+\tD0\t+\t0M\n"
    gfa += "P\tref\t" + ",".join(steps + ["Z+"]) + "\t*\n"
    ref += Z
    graph = s2g.load_graph(write_text(tmp_path, "dels.gfa", gfa), keep_paths=True)
    names, seqs, want = [], [], []
    for k, n in enumerate(lens):
        nxt = A[k + 1] if k + 1 < len(lens) else Z
        seq = A[k][-75:] + nxt[:75]
        pos = ref.index(A[k]) + 325
        names += [f"del{n}", f"del{n}rev"]
        seqs += [seq, rc(seq)]
        # past ~78 bp the gap costs more than the 75 bases on one side: either half, clipped
        want += [{(pos, f"75M{n}D75M")} if n <= 74 else
                 {(pos, "75M75S"), (pos + 75 + n, "75S75M")}] * 2
    names += ["before_path", "into_insertion"]
    seqs += [pre[-50:] + A[0][:100], A[0][-100:] + ins[:50]]
    want += [{(0, "50S100M")}, {(300, "100M50S")}]
    reads = batch(names, seqs)
    res = s2g.align(graph, reads, method="exact")
    recs = records(sam_text(graph, reads, res, ref="ref"))
    for rec, ok in zip(recs, want):
        check_record(rec, ref)
        assert (int(rec[3]) - 1, rec[5]) in ok, (rec[:6], ok)


# ----------------------------------------------------------------- linear graphs

def _linear_case(tmp_path, seed, rev_step=False):
    rng = np.random.default_rng(seed)
    segs = ["".join(rng.choice(list("ACGT"), int(k))) for k in rng.integers(20, 90, 12)]
    gfa = "".join(f"S\ts{k}\t{s}\n" for k, s in enumerate(segs))
    orient = ["+"] * len(segs)
    if rev_step:
        orient[4] = orient[7] = "-"
    gfa += "".join(f"L\ts{k}\t{orient[k]}\ts{k + 1}\t{orient[k + 1]}\t0M\n" for k in range(len(segs) - 1))
    gfa += "P\tref\t" + ",".join(f"s{k}{orient[k]}" for k in range(len(segs))) + "\t*\n"
    refseq = "".join(s if o == "+" else rc(s) for s, o in zip(segs, orient))
    reads, names, truth = [], [], []
    for r in range(40):
        ln = int(rng.integers(60, 160))
        p = int(rng.integers(0, len(refseq) - ln))
        s = list(refseq[p:p + ln])
        for _ in range(int(rng.integers(0, 4))):          # substitutions, insertions, deletions
            k = int(rng.integers(5, len(s) - 5))
            kind = rng.integers(3)
            if kind == 0:
                s[k] = "ACGT"[("ACGT".index(s[k]) + 1) % 4]
            elif kind == 1:
                s.insert(k, "".join(rng.choice(list("ACGT"), int(rng.integers(1, 4)))))
            else:
                del s[k:k + int(rng.integers(1, 4))]
        s = "".join(s)
        strand = "-" if r % 2 else "+"
        reads.append(rc(s) if strand == "-" else s)
        names.append(f"r{r}")
        truth.append((p, strand))
    return write_text(tmp_path, f"lin{seed}.gfa", gfa), refseq, names, reads, truth


@NO_PARASAIL
@pytest.mark.parametrize("mode,seed,rev_step", [("local", 1, False), ("semiglobal", 2, False),
                                                ("local", 3, True)])
def test_linear_graph_scores_equal_parasail_and_the_graph(tmp_path, mode, seed, rev_step):
    path, refseq, names, seqs, truth = _linear_case(tmp_path, seed, rev_step)
    graph = s2g.load_graph(path, keep_paths=True)
    reads = batch(names, seqs)
    res = s2g.align(graph, reads, mode=mode, method="exact")
    recs = records(sam_text(graph, reads, res))
    a, b, o, e = SC.as_tuple()
    matrix = parasail.matrix_create("ACGT", a, -b)
    fn = parasail.sw if mode == "local" else parasail.sg_dx
    for rec, seq, r, (p, strand) in zip(recs, seqs, res, truth):
        score, left = check_record(rec, refseq)
        best = max(fn(seq, refseq, o + e, e, matrix).score, fn(rc(seq), refseq, o + e, e, matrix).score)
        assert score == r.score == best, f"{rec[0]}: AS {score}, graph {r.score}, parasail {best}"
        assert bool(int(rec[1]) & 16) == (strand == "-")
        assert abs(int(rec[3]) - 1 - left - p) <= 4        # indels near an end may shift it


def test_a_band_beside_the_paths_copy_is_widened(tmp_path):
    """A tandem repeat T = U U on the path, a third copy I = U an insertion allele the path
    lacks: a read of T[30:180] aligned in the graph across T's end into I votes (through
    T, the only on-path node it touches) for a band 100 bases right of its place on the
    path, where it fits only half. The realignment there scores far below the graph
    alignment, so it runs again over a wider window and finds the path's own place:
    150M at T[30:180], AS 300 (it was a clipped or scattered CIGAR at the wrong place)."""
    from s2g.result import AlignResult, Traceback
    rng = np.random.default_rng(5)

    def rnd(n):
        return "".join(rng.choice(list("ACGT"), n))
    A, U, D = rnd(300), rnd(100), rnd(300)
    T = U + U
    gfa = (f"S\tA\t{A}\nS\tT\t{T}\nS\tI\t{U}\nS\tD\t{D}\nL\tA\t+\tT\t+\t0M\n"
           "L\tT\t+\tI\t+\t0M\nL\tI\t+\tD\t+\t0M\nL\tT\t+\tD\t+\t0M\nP\tref\tA+,T+,D+\t*\n")
    graph = s2g.load_graph(write_text(tmp_path, "tandem.gfa", gfa), keep_paths=True)
    node = {(graph.seg_names[graph.node_seg[v]], int(graph.node_rev[v])): v
            for v in range(len(graph.node_start) - 1)}
    seq = T[30:180]
    assert seq == (T + U)[130:280]
    tb = Traceback(qstart=0, qend=150, path=(node["T", 0], node["I", 0]), path_len=300,
                   path_start=130, path_end=280, cigar="150=", matches=150, block_len=150,
                   edits=0)
    res = [AlignResult("r", 150, 300, 150, 0, tb, 60)]
    recs = records(sam_text(graph, batch(["r"], [seq]), res))
    assert [r[3:6] for r in recs] == [["331", "60", "150M"]]
    assert tags(recs[0])["AS"] == "300"



def _pairs_sam(tmp_path, gfa, pairs, sd="50"):
    from s2g.cli import main
    tmp_path.mkdir()
    g = write_text(tmp_path, "g.gfa", gfa)
    for k in (1, 2):
        (tmp_path / f"p_{k}.fq").write_text("".join(
            f"@{p[0]}/{k}\n{p[k]}\n+\n{'I' * len(p[k])}\n" for p in pairs))
    assert main(["align", g, str(tmp_path / "p_1.fq"), str(tmp_path / "p_2.fq"), "--seeded",
                 "--fragment-mean", "400", "--fragment-sd", sd, "-o", str(tmp_path / "p.sam"),
                 "-q", "--no-progress"]) == 0
    return [(r[0], int(r[1]), int(r[3]), int(r[4])) for r in
            records((tmp_path / "p.sam").read_text())]


def test_the_pair_choice_claims_no_more_than_the_partner_knows(tmp_path):
    """(Review of the joint choice, session 49.) A X B X C with B and C both starting with
    R: mate 1 inside X (two copies on the path), mate 2 = R (two copies in the graph,
    MAPQ ~3 there): the pair fits both X copies alike, and mate 2's other place is no
    candidate on the path (it comes from one graph walk): mate 1's MAPQ is at most its
    partner's (it was 60). A X^20 C with mate 1 at copy 18: the candidates stop at 16
    windows, the leftmost, so the true copy may be missing: that pair is not chosen
    together (it was written proper at copy 16, 200 bp off, MAPQ 20 at sd 100)."""
    rng = np.random.default_rng(3)

    def rnd(n):
        return "".join(rng.choice(list("ACGT"), n))
    A, X, R = rnd(600), rnd(400), rnd(150)
    B, C = R + rnd(450), R + rnd(450)
    gfa = (f"S\tA\t{A}\nS\tX\t{X}\nS\tB\t{B}\nS\tC\t{C}\nL\tA\t+\tX\t+\t0M\n"
           "L\tX\t+\tB\t+\t0M\nL\tB\t+\tX\t+\t0M\nL\tX\t+\tC\t+\t0M\n"
           "P\tref\tA+,X+,B+,X+,C+\t*\n")
    got = _pairs_sam(tmp_path / "r", gfa, [("c0", X[200:350], rc(R))])
    assert len(got) == 2 and got[1][3] <= 3 and got[0][3] <= got[1][3], got
    A, X, C = rnd(600), rnd(100), rnd(600)
    gfa = (f"S\tA\t{A}\nS\tX\t{X}\nS\tC\t{C}\nL\tA\t+\tX\t+\t0M\nL\tX\t+\tX\t+\t0M\n"
           "L\tX\t+\tC\t+\t0M\nP\tref\tA+," + ",".join(["X+"] * 20) + ",C+\t*\n")
    P = A + X * 20 + C
    sb = 600 + 100 * 20 - 50                     # mate 2: the tandem's end into C
    for sd in ("50", "100"):
        got = _pairs_sam(tmp_path / f"t{sd}", gfa,
                         [("m", P[2300:2450], rc(P[sb:sb + 150]))], sd)
        m1 = got[0]                              # (truly at copy 18, POS 2301)
        assert m1[2] == 2301 or (m1[3] == 0 and not m1[1] & 2), got


def test_a_read_across_an_sv_gets_a_supplementary_record(tmp_path):
    """A read across a 500 bp deletion allele against the path (A Z in the graph, A D Z on
    the path) aligns in two parts: a primary record for the larger and, as bwa mem writes
    them, a supplementary one (FLAG 2048, +16 on the reverse strand) for the other, each
    with the other's SA:Z, soft-clipped with the whole SEQ; both re-score to their AS on
    the path; the other part does not cap the primary's MAPQ as a copy elsewhere would
    (255 from full-graph DP). A read inside A gets none; the records read back through
    pysam."""
    rng = np.random.default_rng(7)

    def rnd(n):
        return "".join(rng.choice(list("ACGT"), n))
    A, D, Z = rnd(400), rnd(500), rnd(400)
    gfa = (f"S\tA\t{A}\nS\tD\t{D}\nS\tZ\t{Z}\nL\tA\t+\tD\t+\t0M\nL\tD\t+\tZ\t+\t0M\n"
           "L\tA\t+\tZ\t+\t0M\nP\tref\tA+,D+,Z+\t*\n")
    graph = s2g.load_graph(write_text(tmp_path, "sv.gfa", gfa), keep_paths=True)
    ref = A + D + Z
    seq = A[-80:] + Z[:70]
    reads = batch(["sv", "svrev", "inA"], [seq, rc(seq), A[100:250]])
    res = s2g.align(graph, reads, method="exact")
    text = sam_text(graph, reads, res, ref="ref")
    recs = records(text)
    assert [(r[0], int(r[1]), int(r[3]), r[5]) for r in recs] == [
        ("sv", 0, 321, "80M70S"), ("sv", 2048, 901, "80S70M"),
        ("svrev", 16, 321, "80M70S"), ("svrev", 2064, 901, "80S70M"),
        ("inA", 0, 101, "150M")]
    for k in (0, 2):
        p, sp = recs[k], recs[k + 1]
        strand = "-" if int(p[1]) & 16 else "+"
        assert tags(p)["SA"] == f"ref,901,{strand},80S70M,{sp[4]},0;"
        assert tags(sp)["SA"] == f"ref,321,{strand},80M70S,{p[4]},0;"
        assert sp[9] == p[9] and sp[10] == p[10]
        assert check_record(p, ref)[0] == 160 and check_record(sp, ref)[0] == 140
    assert "SA" not in tags(recs[4])
    # two parts scoring alike: the other does not cap the primary's MAPQ (it gave 0)
    tie = batch(["tie"], [A[-75:] + Z[:75]])
    got = records(sam_text(graph, tie, s2g.align(graph, tie, method="exact"), ref="ref"))
    assert [(int(r[1]), r[4], r[5]) for r in got] == [(0, "255", "75M75S"),
                                                      (2048, "255", "75S75M")]
    pysam = pytest.importorskip("pysam")
    out = tmp_path / "sv.bam"
    write_sam(str(out), graph, reads, res, "ref", fmt="bam")
    got = [(x.query_name, x.flag, x.is_supplementary) for x in pysam.AlignmentFile(str(out))]
    assert got == [("sv", 0, False), ("sv", 2048, True), ("svrev", 16, False),
                   ("svrev", 2064, True), ("inA", 0, False)]


def test_a_batch_with_no_read_on_the_path(tmp_path):
    """(Review, session 49.) A batch in which no read reaches the path (here one read, on
    a segment no path walks; the ramp's small first and last batches, or secondaries off
    the path): every read an unmapped record, no error (it raised IndexError)."""
    rng = np.random.default_rng(1)
    P, O = ("".join(rng.choice(list("ACGT"), n)) for n in (1000, 300))
    graph = s2g.load_graph(write_text(tmp_path, "g.gfa", f"S\t1\t{P}\nS\t2\t{O}\n"
                                      "P\tref\t1+\t*\n"), keep_paths=True)
    reads = batch(["off"], [O[50:200]])
    recs = records(sam_text(graph, reads, s2g.align(graph, reads, method="exact"), ref="ref"))
    assert [(r[0], r[1], r[5]) for r in recs] == [("off", "4", "*")]
    assert tags(recs[0])["XG"] == ">2"


def test_per_read_results_give_the_same_records(tmp_path):
    path, refseq, names, seqs, _ = _linear_case(tmp_path, 7)
    graph = s2g.load_graph(path, keep_paths=True)
    reads = batch(names, seqs)
    res = s2g.align(graph, reads, method="exact")
    assert res.flat is not None
    assert sam_text(graph, reads, list(res)) == sam_text(graph, reads, res)


# ------------------------------------------------------------------------- pairs

def test_pair_fields(tmp_path):
    rng = np.random.default_rng(8)
    refseq = "".join(rng.choice(list("ACGT"), 1000))
    other = "".join(rng.choice(list("ACGT"), 200))
    gfa = (f"S\t1\t{refseq}\nS\t2\t{other}\nP\tref\t1+\t*\n")
    graph = s2g.load_graph(write_text(tmp_path, "pair.gfa", gfa), keep_paths=True)
    f1, r2 = refseq[100:200], rc(refseq[350:450])           # pair 0: FR, proper, TLEN 350
    f3, r4 = refseq[600:700], rc(refseq[500:560])           # pair 1: mate 2 left of mate 1
    u5 = other[20:120]                                      # pair 2: mate 1 off the path
    n7, n8 = "N" * 50, "N" * 40                             # pair 3: neither aligns
    names = ["p0/1", "p0/2", "p1/1", "p1/2", "p2/1", "p2/2", "p3/1", "p3/2"]
    reads = batch(names, [f1, r2, f3, r4, u5, rc(refseq[800:900]), n7, n8])
    res = s2g.align(graph, reads, method="exact")
    proper = np.array([True, False, True, True])
    recs = records(sam_text(graph, reads, res, pairs=proper))
    assert [r[0] for r in recs] == ["p0", "p0", "p1", "p1", "p2", "p2", "p3", "p3"]
    fl = [int(r[1]) for r in recs]
    pos = [int(r[3]) for r in recs]
    # pair 0
    assert fl[0] == 1 | 2 | 32 | 64 and fl[1] == 1 | 2 | 16 | 128
    assert pos[:2] == [101, 351]
    assert recs[0][6:9] == ["=", "351", "350"] and recs[1][6:9] == ["=", "101", "-350"]
    # pair 1: not proper; mate 2 (reverse) is the leftmost
    assert fl[2] == 1 | 32 | 64 and fl[3] == 1 | 16 | 128
    assert recs[2][6:9] == ["=", "501", "-200"] and recs[3][6:9] == ["=", "601", "200"]
    # pair 2: mate 1 unmapped, placed at its mate's position; proper never set
    assert fl[4] == 1 | 4 | 32 | 64 and fl[5] == 1 | 8 | 16 | 128
    assert recs[4][2:4] == ["ref", "801"] and recs[4][5] == "*"
    assert recs[4][6:9] == ["=", "801", "0"] and recs[5][6:9] == ["=", "801", "0"]
    assert tags(recs[4])["XG"] == ">2"
    # pair 3: both unmapped
    assert fl[6] == 1 | 4 | 8 | 64 and fl[7] == 1 | 4 | 8 | 128
    assert all(r[2:4] == ["*", "0"] and r[6:9] == ["*", "0", "0"] for r in recs[6:])
    for r in recs:
        if not int(r[1]) & 4:
            check_record(r, refseq)
    with pytest.raises(S2GError, match="2 reads per pair"):
        sam_text(graph, reads, res, pairs=np.ones(3, bool))


# ------------------------------------------------------------------------ BAM

def _sim_case(tmp_path, n=200):
    g, ref = snp_graph(30_000, node_len=50, branching=2, seed=11)
    path = str(tmp_path / "bam.gfa")
    g.write_gfa(path, ref)
    sim = sample_reads(g, n, 150, error_rate=0.01, seed=12)
    graph = s2g.load_graph(path, keep_paths=True)
    reads = batch([x for x, _, _ in sim] + ["junk"], [s for _, s, _ in sim] + ["N" * 20])
    return graph, reads, s2g.align(graph, reads, method="exact")


def test_bam_unsorted_sorted_and_indexed(tmp_path):
    pysam = pytest.importorskip("pysam")
    graph, reads, res = _sim_case(tmp_path)
    n = reads.n_reads
    out = str(tmp_path / "a.bam")
    with SamWriter(out, graph, fmt="bam", argv=["s2g", "align", "g.gfa", "r.fq"]) as w:
        w.write_batch(reads.subset(range(0, 120)), res_subset(res, 0, 120))
        w.write_batch(reads.subset(range(120, n)), res_subset(res, 120, n))
    pysam.quickcheck(out)
    assert int(pysam.view("-c", out)) == n
    assert int(pysam.view("-c", "-F", "4", out)) == n - 1
    with pysam.AlignmentFile(out) as f:
        hdr = f.header.to_dict()
        assert hdr["SQ"] == [{"SN": "ref", "LN": RefPath(graph).length}]
        assert hdr["PG"][0]["CL"] == "s2g align g.gfa r.fq"
        assert [a.query_name for a in f] == reads.names
    # the BAM holds the same records as the SAM text
    sam = records(sam_text(graph, reads, res))
    with pysam.AlignmentFile(out) as f:
        for a, rec in zip(f, sam):
            assert a.to_string().split("\t")[:11] == rec[:11]
    srt = str(tmp_path / "s.bam")
    with SamWriter(srt, graph, fmt="bam", sort=True, index=True) as w:
        w.write_batch(reads, res)
    pysam.quickcheck(srt)
    assert os.path.exists(srt + ".bai")
    assert int(pysam.view("-c", srt)) == n
    with pysam.AlignmentFile(srt) as f:
        assert f.header.to_dict()["HD"]["SO"] == "coordinate"
        mapped = [a.reference_start for a in f if not a.is_unmapped]
        assert mapped == sorted(mapped) and len(mapped) == n - 1
        assert f.mapped == n - 1                         # from the index
        assert len(list(f.fetch("ref", 1000, 2000))) > 0
    assert not [x for x in os.listdir(tmp_path) if x.startswith(".s2g-sam-")]


def res_subset(res, a, b):
    return list(res)[a:b]


def test_index_needs_a_sorted_bam(tmp_path):
    graph, reads, res = _sim_case(tmp_path, 5)
    with pytest.raises(S2GError, match="coordinate-sorted"):
        SamWriter(str(tmp_path / "x.bam"), graph, fmt="bam", index=True)


def test_qualities_are_reversed_with_the_read(tmp_path):
    path, refseq, names, seqs, _ = _linear_case(tmp_path, 5)
    graph = s2g.load_graph(path, keep_paths=True)
    reads = batch(names[:4], seqs[:4])
    reads.quals = ["".join(chr(33 + (k % 40)) for k in range(len(s))) for s in seqs[:4]]
    res = s2g.align(graph, reads, method="exact")
    recs = records(sam_text(graph, reads, res))
    for rec, q in zip(recs, reads.quals):
        assert rec[10] == (q[::-1] if int(rec[1]) & 16 else q)
    del reads.quals
    assert all(r[10] == "*" for r in records(sam_text(graph, reads, res)))


# ------------------------------------------------------------ choosing the path

def test_path_choice_and_errors(tmp_path):
    walks = {"HG002#1#chr6:0-100": [], "CHM13#0#chr6:0-5000": [], "CHM13#0#chr7:0-10": []}
    assert choose_path(walks, "CHM13#0#chr6") == "CHM13#0#chr6:0-5000"
    assert choose_path(walks, "HG002#1#chr6:0-100") == "HG002#1#chr6:0-100"
    with pytest.raises(S2GError, match="ambiguous"):
        choose_path(walks, "CHM13#0")
    assert choose_path({"x": [], "GRCh38.chr6": [], "y": []}, None) == "GRCh38.chr6"
    # a sample named HG00733 or HG002 is not hg19/hg38
    assert choose_path({"HG00733#1#chr6:0-100": [], "GRCh38#0#chr6:0-100": []},
                       None) == "GRCh38#0#chr6:0-100"
    assert choose_path({"HG002#1#chr6": [], "hg38#chr6": []}, None) == "hg38#chr6"
    assert choose_path({"x": [], "y": []}, None) == "x"
    assert choose_path({"only": []}, None) == "only"
    many = {f"p{k}": [] for k in range(15)}
    with pytest.raises(S2GError) as exc:
        choose_path(many, "nope", "g.gfa: ")
    msg = str(exc.value)
    assert "\n" not in msg and "'nope'" in msg and "p0, p1" in msg and "p9" in msg
    assert "p10" not in msg and "15 in all" in msg
    gfa = "S\t1\tACGT\nS\t2\tGG\nL\t1\t+\t2\t+\t0M\n"
    g0 = s2g.load_graph(write_text(tmp_path, "nopath.gfa", gfa), keep_paths=True)
    with pytest.raises(S2GError, match="no paths"):
        RefPath(g0)
    g1 = s2g.load_graph(write_text(tmp_path, "p.gfa", gfa + "P\tA\t1+,2+\t*\nP\tB\t2-,1-\t*\n"),
                        keep_paths=True)
    assert RefPath(g1, "B").sequence() == "CCACGT"
    with pytest.raises(S2GError, match=r"no path named 'C'; the graph's paths: A, B"):
        RefPath(g1, "C")


def test_bundled_graphs_invariants():
    """The bundled BRCA2 graph (three P lines): every mapped record re-scores to AS."""
    graph = s2g.load_graph("graphs/cactus-BRCA2.gfa", keep_paths=True)
    reads = s2g.read_reads("graphs/cactus-BRCA2.100.fq")
    res = s2g.align(graph, reads, method="exact")
    rp = RefPath(graph)
    refseq = rp.sequence()
    recs = records(sam_text(graph, reads, res, rp))
    assert len(recs) == reads.n_reads
    mapped = [r for r in recs if not int(r[1]) & 4]
    assert len(mapped) >= 0.9 * len(recs)
    for r, g in zip(recs, res):
        if not int(r[1]) & 4:
            score, _ = check_record(r, refseq)


def test_bam_to_a_file_object_and_sorted_sam(tmp_path):
    import io
    pysam = pytest.importorskip("pysam")
    graph, reads, res = _sim_case(tmp_path, 40)
    b = io.BytesIO()
    with SamWriter(b, graph, fmt="bam") as w:
        w.write_batch(reads, res)
    out = tmp_path / "fh.bam"
    out.write_bytes(b.getvalue())
    pysam.quickcheck(str(out))
    assert int(pysam.view("-c", str(out))) == reads.n_reads
    t = io.StringIO()
    with SamWriter(t, graph, fmt="sam", sort=True) as w:
        w.write_batch(reads, res)
    assert t.getvalue().startswith("@HD\tVN:1.6\tSO:coordinate")
    recs = records(t.getvalue())
    assert sorted(r[0] for r in recs) == sorted(reads.names)
    pos = [int(r[3]) for r in recs if not int(r[1]) & 4]
    assert pos == sorted(pos) and len(pos) == reads.n_reads - 1


# ------------------------------------------------------------------ the CLI

@pytest.fixture(scope="module")
def cli_pairs(tmp_path_factory):
    from s2g.simulate import simulate_pairs
    d = tmp_path_factory.mktemp("surject_cli")
    return simulate_pairs(str(d / "p"), total_bases=60_000, n_pairs=200, frag_mean=350,
                          frag_sd=30, seed=9)


def test_cli_pairs_to_sorted_bam_and_sam(tmp_path, cli_pairs):
    """s2g align G R1 R2 -o x.bam --sort: a valid, sorted, indexed BAM holding every read
    once, mates pointing at each other; -o x.sam picks SAM by the suffix, same records."""
    import pysam

    from s2g.cli import main
    gfa, fq1, fq2, _ = cli_pairs
    bam = tmp_path / "x.bam"
    assert main(["align", gfa, fq1, fq2, "-o", str(bam), "--sort"]) == 0
    assert pysam.quickcheck(str(bam)) == "" and (tmp_path / "x.bam.bai").exists()
    assert int(pysam.view("-c", str(bam))) == 400
    assert int(pysam.view("-c", "-f", "2", str(bam))) >= 396          # properly paired
    with pysam.AlignmentFile(str(bam)) as f:
        assert f.header.to_dict()["HD"]["SO"] == "coordinate"
        recs = list(f.fetch("ref"))
        pos = [r.reference_start for r in recs]
        assert pos == sorted(pos) and len(recs) == 400
        by = {(r.query_name, r.is_read1): r for r in recs}
        for (name, r1), r in by.items():
            m = by[(name, not r1)]
            assert r.next_reference_start == m.reference_start
            assert r.template_length == -m.template_length
    sam = tmp_path / "x.sam"
    assert main(["align", gfa, fq1, fq2, "-o", str(sam)]) == 0
    lines = [x for x in sam.read_text().splitlines() if not x.startswith("@")]
    assert len(lines) == 400 and sam.read_text().startswith("@HD\tVN:1.6\tSO:unsorted")
    assert sorted(x.split("\t")[3] for x in lines) == sorted(
        str(r.reference_start + 1) for r in recs)


def test_cli_sam_option_errors(tmp_path, cli_pairs, capsys):
    from cli_helpers import main as run
    from cli_helpers import one_error
    gfa, fq1, fq2, _ = cli_pairs
    code, _, err = run(capsys, "align", gfa, fq1, "-o", tmp_path / "a.sam", "--ref-path", "nope",
                      "-q")
    one_error(code, err, "nope", "ref")
    code, _, err = run(capsys, "align", gfa, fq1, "-o", tmp_path / "a.gaf", "--sort")
    one_error(code, err, "--sort")
    code, _, err = run(capsys, "align", gfa, fq1, "-f", "sam", "--no-traceback")
    one_error(code, err, "--no-traceback")
    assert not (tmp_path / "a.sam").exists()
    # a graph without paths: one line before any index is built (auto seeds for SAM)
    nop = write_text(tmp_path, "nop.gfa", "S\t1\tACGTACGTAAACCCGGGTTTAGCATCGA\n")
    code, _, err = run(capsys, "align", nop, fq1, "-o", tmp_path / "b.sam")
    one_error(code, err, "has no paths")
    assert not os.path.exists(nop + ".s2gi") and not (tmp_path / "b.sam").exists()


def test_a_read_name_sam_cannot_hold_is_one_error(tmp_path, cli_pairs, capsys):
    """QNAME holds 254 bytes: a longer name made invalid SAM silently and stopped BAM with
    "internal error"; now one line naming the read, and no partial output file."""
    from cli_helpers import main as run
    from cli_helpers import one_error
    gfa, fq1, _, _ = cli_pairs
    lines = open(fq1).read().splitlines()[:8]
    lines[4] = "@" + "x" * 300
    (tmp_path / "long.fq").write_text("\n".join(lines) + "\n")
    for out in ("a.sam", "a.bam"):
        code, _, err = run(capsys, "align", gfa, tmp_path / "long.fq", "-o", tmp_path / out,
                           "-q")
        one_error(code, err, "254")
        assert "xxxxxxxx" in err[0] and not (tmp_path / out).exists()


def test_cli_bam_error_rate_is_the_simulated_one(tmp_path):
    """samtools stats (pysam.stats) of the BAM of pairs simulated with 1% substitutions on
    a graph without variants (one allele per site: the reads differ from the reference path
    only by their errors): error rate ~1%, every read mapped, insert size ~ the model."""
    import pysam

    from s2g.cli import main
    from s2g.simulate import simulate_pairs
    gfa, fq1, fq2, _ = simulate_pairs(str(tmp_path / "e"), total_bases=80_000, branching=1,
                                      n_pairs=500, frag_mean=380, frag_sd=25, error_rate=0.01,
                                      seed=21)
    bam = tmp_path / "e.bam"
    assert main(["align", gfa, fq1, fq2, "-o", str(bam), "--sort", "-q"]) == 0
    sn = {}
    for line in pysam.stats(str(bam)).splitlines():
        if line.startswith("SN\t"):
            k, v = line.split("\t")[1:3]
            sn[k.rstrip(":")] = float(v)
    assert sn["reads mapped"] == 1000 and sn["reads properly paired"] >= 990
    assert 0.007 < sn["error rate"] < 0.013, sn["error rate"]
    assert abs(sn["insert size average"] - 380) < 10


def test_cli_bam_keeps_base_qualities_and_the_read_group(tmp_path, cli_pairs):
    """FASTQ qualities reach the BAM (reversed with the read on the reverse strand), and
    -R puts an @RG line in the header and its ID on every record (GATK needs both)."""
    import pysam

    from s2g.cli import main
    gfa, fq1, fq2, _ = cli_pairs
    lines1, lines2 = open(fq1).read().splitlines(), open(fq2).read().splitlines()
    # distinct qualities per base, so a reversal shows
    qual = "".join(chr(33 + 2 + (i % 40)) for i in range(150))
    for lines in (lines1, lines2):
        for k in range(3, len(lines), 4):
            lines[k] = qual[:len(lines[k - 2])]
    a, b = tmp_path / "a.fq", tmp_path / "b.fq"
    a.write_text("\n".join(lines1) + "\n")
    b.write_text("\n".join(lines2) + "\n")
    bam = tmp_path / "q.bam"
    assert main(["align", gfa, str(a), str(b), "-o", str(bam), "-q",
                 "--read-group", r"@RG\tID:lane1\tSM:NA12878\tPL:ILLUMINA"]) == 0
    want = [ord(c) - 33 for c in qual]
    with pysam.AlignmentFile(str(bam)) as f:
        assert f.header.to_dict()["RG"] == [{"ID": "lane1", "SM": "NA12878", "PL": "ILLUMINA"}]
        n = 0
        for r in f.fetch(until_eof=True):
            n += 1
            assert r.get_tag("RG") == "lane1"
            q = list(r.query_qualities)
            assert q == (want[::-1] if r.is_reverse else want)
    assert n == 400


@pytest.mark.parametrize("rg,msg", [(r"RG\tID:x", "header line"), (r"@RG\tSM:x", "ID:"),
                                    (r"@RG\tID:x\tbad", "TAG:value")])
def test_cli_read_group_errors(tmp_path, cli_pairs, capsys, rg, msg):
    from cli_helpers import main as run
    from cli_helpers import one_error
    gfa, fq1, fq2, _ = cli_pairs
    code, _, err = run(capsys, "align", gfa, fq1, fq2, "-o", tmp_path / "x.bam", "-R", rg)
    one_error(code, err, msg)


def test_paired_records_carry_the_mate_cigar(tmp_path, cli_pairs):
    """MC:Z on each record of a pair whose mate is mapped, equal to the mate's CIGAR."""
    import pysam

    from s2g.cli import main
    gfa, fq1, fq2, _ = cli_pairs
    sam = tmp_path / "m.sam"
    assert main(["align", gfa, fq1, fq2, "-o", str(sam), "-q"]) == 0
    with pysam.AlignmentFile(str(sam)) as f:
        recs = list(f.fetch(until_eof=True))
    assert len(recs) == 400
    for k in range(0, 400, 2):
        a, b = recs[k], recs[k + 1]
        assert a.query_name == b.query_name and a.is_read1 and b.is_read2
        for x, y in ((a, b), (b, a)):
            if y.is_unmapped:
                assert not x.has_tag("MC")
            else:
                assert x.get_tag("MC") == y.cigarstring


@pytest.mark.parametrize("sort", [False, True])
def test_samtools_failing_is_one_error(tmp_path, sort):
    """BAM (and sorted output) streams into samtools in a process of its own: a record it
    refuses, or the process gone, is an S2GError naming what samtools said, and abort()
    leaves no temporary folder."""
    pytest.importorskip("pysam")
    path, *_ = _linear_case(tmp_path, 3)
    graph = s2g.load_graph(path, keep_paths=True)
    w = SamWriter(str(tmp_path / "x.bam"), graph, None, "bam", sort=sort)
    w.write_records(b"r\t0\tnochrom\tnotanumber\n", 1)
    with pytest.raises(S2GError, match="writing BAM failed") as exc:
        w.close()
    assert "\n" not in str(exc.value)
    w = SamWriter(str(tmp_path / "y.bam"), graph, None, "bam", sort=sort)
    w._bam.kill()
    w._bam.wait()
    with pytest.raises(S2GError, match="writing BAM failed"):
        for _ in range(100):                      # (until the pipe's buffer is refused)
            w.write_records(b"r\t4\t*\t0\t0\t*\t*\t0\t0\tACGT\t*\n" * 1000, 1000)
    w.abort()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".s2g")) == []


def test_a_failed_sorted_bam_run_leaves_nothing_behind(tmp_path, cli_pairs, capsys):
    """A run that fails mid-way (an unknown base in a late read) with -o x.bam --sort:
    one error line, no x.bam, no .bai, no temporary folder beside it."""
    from cli_helpers import main as run
    from cli_helpers import one_error
    gfa, fq1, fq2, _ = cli_pairs
    lines1, lines2 = open(fq1).read().splitlines(), open(fq2).read().splitlines()
    lines2[-3] = "A" * 10 + "!" + lines2[-3][11:]
    a, b = tmp_path / "a.fq", tmp_path / "b.fq"
    a.write_text("\n".join(lines1) + "\n")
    b.write_text("\n".join(lines2) + "\n")
    out = tmp_path / "o" / "x.bam"
    out.parent.mkdir()
    code, _, err = run(capsys, "align", gfa, a, b, "-o", out, "--sort", "--batch-size", "100",
                       "-q")
    one_error(code, err, "invalid character")
    assert list(out.parent.iterdir()) == []


def test_sorted_bam_to_a_special_file_is_not_indexed(cli_pairs, tmp_path):
    """-o /dev/null --sort (a BAM written in place, not a regular file): exit 0, no .bai
    attempted."""
    from s2g.cli import main
    gfa, fq1, fq2, _ = cli_pairs
    assert main(["align", gfa, fq1, fq2, "-o", "/dev/null", "-f", "bam", "--sort", "-q"]) == 0


def test_a_region_graph_bam_lies_on_chromosome_coordinates(tmp_path):
    """A W line GRCh38#0#chr6 from 1000 to 1400: @SQ chr6, POS counted from 1000 (a read
    at path offset 100 gets POS 1101); a P line chr2[500-900] alike; --ref-name and
    --ref-length override; a length shorter than the path: one error line."""
    import pysam

    from s2g.cli import main
    rng = np.random.default_rng(3)
    segs = ["".join(rng.choice(list("ACGT"), 100)) for _ in range(4)]
    lines = [f"S\ts{i}\t{x}" for i, x in enumerate(segs)]
    lines += [f"L\ts{i}\t+\ts{i + 1}\t+\t0M" for i in range(3)]
    hap = "".join(segs)
    reads = tmp_path / "r.fa"
    reads.write_text(f">a\n{hap[100:220]}\n>b\n{hap[250:370]}\n")
    for path_line, name, first in (
            ("W\tGRCh38\t0\tchr6\t1000\t1400\t>s0>s1>s2>s3", "chr6", 1000),
            ("P\tchr2[500-900]\ts0+,s1+,s2+,s3+\t*", "chr2", 500)):
        gfa = tmp_path / f"{name}.gfa"
        gfa.write_text("\n".join(lines + [path_line]) + "\n")
        sam = tmp_path / f"{name}.sam"
        assert main(["align", str(gfa), str(reads), "-o", str(sam), "-q", "--exact"]) == 0
        with pysam.AlignmentFile(str(sam)) as f:
            assert f.header.to_dict()["SQ"] == [{"SN": name, "LN": first + 400}]
            pos = [r.reference_start for r in f.fetch(until_eof=True)]
        assert pos == [first + 100, first + 250]
    sam = tmp_path / "o.sam"
    assert main(["align", str(tmp_path / "chr6.gfa"), str(reads), "-o", str(sam), "-q",
                 "--exact", "--ref-name", "6", "--ref-length", "170805979"]) == 0
    assert "@SQ\tSN:6\tLN:170805979" in sam.read_text()
    assert main(["align", str(tmp_path / "chr6.gfa"), str(reads), "-o", str(sam), "-q",
                 "--exact", "--ref-length", "1200"]) == 1


# ------------------------------------------------------- secondary alignments (-N)

def _repeat_case(tmp_path):
    """A linear path a, d, b, d', c with d' a copy of d (one substitution): reads from
    the copies have a secondary alignment on the other copy (reads crossing into a unique
    flank a shorter one); unique reads and an N read have none."""
    rng = np.random.default_rng(4)
    a, d, b, c = ("".join(rng.choice(list("ACGT"), k)) for k in (600, 400, 600, 600))
    d2 = d[:50] + ("A" if d[50] != "A" else "C") + d[51:]
    segs = [a, d, b, d2, c]
    gfa = "".join(f"S\t{i + 1}\t{s}\n" for i, s in enumerate(segs))
    gfa += "".join(f"L\t{i + 1}\t+\t{i + 2}\t+\t0M\n" for i in range(4))
    gfa += "P\tref\t1+,2+,3+,4+,5+\t*\n"
    graph = s2g.load_graph(write_text(tmp_path, "rep.gfa", gfa), keep_paths=True)
    refseq = "".join(segs)
    reads = {"d0": d[20:170], "d1": rc(d[200:350]), "e0": d2[10:160], "e1": rc(d2[30:180]),
             "x0": refseq[900:1050], "x1": rc(refseq[550:700]), "u0": a[100:250],
             "u1": rc(c[300:450]), "n": "N" * 60}
    return graph, refseq, batch(list(reads), list(reads.values()))


def _seeded(graph, reads, n_secondary, pairs=None):
    from s2g.aligner import Aligner
    from s2g.plan import RunOptions, SeededOptions, plan
    opts = RunOptions(SC, "local", "auto", "seeded", pairs=pairs,
                      seeded=SeededOptions(secondary=n_secondary, secondary_ratio=0.5))
    return Aligner.from_plan(plan(graph, opts, run_cells=10 ** 6)).align(reads)


def _check_secondaries(recs, reads, refseq):
    """Secondary records (FLAG 256) come right after their read's primary, MAPQ 0, SEQ and
    QUAL '*', and re-spell the read (from its primary: the input sequence) against the path
    to their AS, NM and MD; none repeats its primary's place. Returns them."""
    seqs = {n: "".join("ACGTN"[c] for c in reads.codes(k)) for k, n in enumerate(reads.names)}
    prim, sec = None, []
    for r in recs:
        flag = int(r[1])
        if not flag & 256:
            prim = r
            continue
        sec.append(r)
        assert prim is not None and r[0] == prim[0], "a secondary follows its primary"
        assert flag & ~(1 | 8 | 16 | 32 | 64 | 128) == 256 and not flag & 2
        assert r[4] == "0" and r[9] == r[10] == "*" and r[2] == "ref"
        full = seqs.get(r[0]) or seqs[r[0] + ("/1" if flag & 64 else "/2")]
        check_record(r[:9] + [rc(full) if flag & 16 else full, "*"] + r[11:], refseq)
        assert (r[3], r[5], flag & 16) != (prim[3], prim[5], int(prim[1]) & 16)
        assert tags(r)["XG"] and int(tags(r)["XP"]) >= 0
    return sec


def test_secondaries_follow_their_primary_and_realign_on_the_path(tmp_path):
    """-N: every secondary (all on the path here) is written after its read's primary,
    re-scores to its AS, which on this linear path is the graph score; the primaries are
    the records of a run without -N."""
    graph, refseq, reads = _repeat_case(tmp_path)
    res = _seeded(graph, reads, 3)
    plain = records(sam_text(graph, reads, _seeded(graph, reads, 0)))
    recs = records(sam_text(graph, reads, res))
    assert [r for r in recs if not int(r[1]) & 256] == plain
    assert [r[0] for r in plain] == reads.names
    sec = _check_secondaries(recs, reads, refseq)
    assert len(sec) == len(res.secondary) > 0
    assert [r[0] for r in sec] == [reads.names[k] for k in res.secondary.owner]
    assert [int(tags(r)["AS"]) for r in sec] == list(res.secondary.score)
    assert {"d0", "d1", "e0", "e1", "x0", "x1"} <= {r[0] for r in sec}
    assert not {"u0", "u1", "n"} & {r[0] for r in sec}
    by = {r[0]: r for r in sec}
    assert by["d0"][3] == str(1600 + 21) and by["d0"][5] == "150M"        # on the copy
    assert tags(by["d0"])["MD"] == "30" + refseq[1650] + "119"          # its substitution
    assert int(by["d1"][1]) == 256 | 16 and int(by["e0"][1]) == 256
    # per-read results carry no secondaries: primaries only
    assert records(sam_text(graph, reads, list(res))) == plain


def test_secondary_off_the_path_and_at_the_primarys_place_are_left_out(tmp_path):
    """A secondary whose walk misses the path is not written (no unmapped secondaries), nor
    one that the path places where its primary already is."""
    graph, refseq, reads = _repeat_case(tmp_path)
    res = _seeded(graph, reads, 3)
    n = len(res.secondary)
    # the same graph with the path on a d, b only: the second copy's secondaries miss it
    gfa2 = tmp_path / "rep2.gfa"
    gfa2.write_text("".join(x for x in (tmp_path / "rep.gfa").read_text().splitlines(True)
                            if not x.startswith("P")) + "P\tref\t1+,2+,3+\t*\n")
    g2 = s2g.load_graph(str(gfa2), keep_paths=True)
    recs = records(sam_text(g2, reads, res))
    sec = _check_secondaries(recs, reads, refseq[:1600])
    assert 0 < len(sec) < n
    assert all(int(r[3]) <= 1600 for r in sec)
    assert len([r for r in recs if not int(r[1]) & 256]) == reads.n_reads
    # a secondary that repeats the primary (the same graph alignment twice): left out
    res0 = _seeded(graph, reads, 0)
    assert records(sam_text(graph, reads, res_twice(res0))) == records(
        sam_text(graph, reads, res0))


def res_twice(res):
    """``res`` with every read's primary given again as its secondary."""
    import copy
    out, sec = copy.copy(res), copy.copy(res)
    sec.owner = np.arange(len(res))
    out.secondary = sec
    return out


def test_secondaries_in_a_sorted_indexed_bam(tmp_path):
    """pysam reads the BAM: secondaries flagged, no SEQ; the sorted BAM orders them by
    their own position and its index finds them."""
    pysam = pytest.importorskip("pysam")
    graph, refseq, reads = _repeat_case(tmp_path)
    res = _seeded(graph, reads, 3)
    n, ns = reads.n_reads, len(res.secondary)
    text = records(sam_text(graph, reads, res))
    out = str(tmp_path / "u.bam")
    with SamWriter(out, graph, fmt="bam") as w:
        w.write_batch(reads, res)
    with pysam.AlignmentFile(out) as f:
        got = list(f)
    assert [a.to_string().split("\t")[:11] for a in got] == [r[:11] for r in text]
    assert sum(a.is_secondary for a in got) == ns
    assert all(a.query_sequence is None and a.mapping_quality == 0
               for a in got if a.is_secondary)
    srt = str(tmp_path / "s.bam")
    with SamWriter(srt, graph, fmt="bam", sort=True, index=True) as w:
        w.write_batch(reads, res)
    pysam.quickcheck(srt)
    assert os.path.exists(srt + ".bai")
    with pysam.AlignmentFile(srt) as f:
        allr = list(f.fetch(until_eof=True))
        assert len(allr) == n + ns
        pos = [a.reference_start for a in allr if not a.is_unmapped]
        assert pos == sorted(pos)
        assert f.mapped == n - 1 + ns                         # from the index
        on_copy2 = list(f.fetch("ref", 1700, 1800))
        assert any(a.is_secondary for a in on_copy2)
        assert any(not a.is_secondary for a in on_copy2)


def _repeat_pairs(refseq):
    """Pairs (FR, fragment 350, mates of 120) whose mate 1 lies in a copy and mate 2 in it
    too or across into the unique sequence after it, plus pairs in unique sequence."""
    names, seqs = [], []
    for k, s in enumerate([620, 700, 780, 1620, 1700, 1780, 100, 2100]):
        names += [f"p{k}/1", f"p{k}/2"]
        seqs += [refseq[s:s + 120], rc(refseq[s + 230:s + 350])]
    return names, seqs


def test_paired_secondaries_point_at_the_mates_primary(tmp_path):
    """Pairs with -N: still one primary per read, mates adjacent, the same primaries as
    without -N; a secondary carries FLAG 1 and its read's 64/128, its mate's primary as
    RNEXT/PNEXT (and 8/32, MC), TLEN 0, never 2."""
    from s2g.plan import PairOptions
    graph, refseq, _ = _repeat_case(tmp_path)
    names, seqs = _repeat_pairs(refseq)
    reads = batch(names, seqs)
    po = PairOptions(fragment_mean=350, fragment_sd=30)
    res = _seeded(graph, reads, 3, pairs=po)
    res0 = _seeded(graph, reads, 0, pairs=po)
    plain = records(sam_text(graph, reads, res0, pairs=res0.pair_proper))
    recs = records(sam_text(graph, reads, res, pairs=res.pair_proper))
    prim = [r for r in recs if not int(r[1]) & 256]
    assert prim == plain
    assert [r[0] for r in prim] == [x[:-2] for x in names]
    assert [int(r[1]) & 192 for r in prim] == [64, 128] * (len(names) // 2)
    sec = _check_secondaries(recs, reads, refseq)
    assert len(sec) > 0
    mate_of = {(r[0], int(r[1]) & 192): r for r in prim}
    for r in sec:
        flag = int(r[1])
        assert flag & 1 and flag & 192 in (64, 128)
        m = mate_of[(r[0], 192 ^ (flag & 192))]
        mflag = int(m[1])
        assert r[6:9] == ["=", m[3], "0"]
        assert bool(flag & 8) == bool(mflag & 4) and bool(flag & 32) == bool(mflag & 16)
        assert tags(r).get("MC") == (m[5] if m[5] != "*" else None)
    # p0 (both mates in the copies): the copy without the substitution is primary
    p0 = [r for r in recs if r[0] == "p0"]
    assert p0[0][3] == "621" and int(p0[1][1]) & 256 and p0[1][3] == "1621"


def test_cli_paired_secondaries_to_a_sorted_bam(tmp_path, capsys):
    """s2g align G R1 R2 -N 2 -o x.bam --sort: no warning, one primary record per read,
    secondaries beside them, sorted and indexed."""
    import pysam

    from s2g.cli import main
    graph, refseq, _ = _repeat_case(tmp_path)
    names, seqs = _repeat_pairs(refseq)
    r1, r2 = tmp_path / "r_1.fa", tmp_path / "r_2.fa"
    r1.write_text("".join(f">{n[:-2]}\n{s}\n" for n, s in zip(names[0::2], seqs[0::2])))
    r2.write_text("".join(f">{n[:-2]}\n{s}\n" for n, s in zip(names[1::2], seqs[1::2])))
    bam = tmp_path / "x.bam"
    assert main(["align", str(tmp_path / "rep.gfa"), str(r1), str(r2), "-o", str(bam),
                 "--sort", "--seeded", "-N", "2", "--secondary-ratio", "0.5",
                 "--fragment-mean", "350", "--fragment-sd", "30"]) == 0
    assert "primary alignments only" not in capsys.readouterr().err
    assert pysam.quickcheck(str(bam)) == "" and (tmp_path / "x.bam.bai").exists()
    with pysam.AlignmentFile(str(bam)) as f:
        recs = list(f.fetch("ref"))
    prim = [(a.query_name, a.is_read1) for a in recs if not a.is_secondary]
    assert sorted(prim) == sorted((n[:-2], n.endswith("/1")) for n in names)
    sec = [a for a in recs if a.is_secondary]
    assert sec and all(a.is_paired and a.mapping_quality == 0 for a in sec)
    pos = [a.reference_start for a in recs]
    assert pos == sorted(pos)


def test_a_repeat_the_path_holds_twice(tmp_path):
    """The path walks segment X twice (A X B X C): a read inside X is unique in the graph
    (MAPQ 60 there) but lies at two places of the path equally well: MAPQ 0 on the path
    (it was 60 at one copy); reads spanning into X from A or B keep 60. Pairs: the mates'
    path candidates are chosen together, so a mate inside X whose mate spans into A, B or
    C is placed at the copy the fragment (400 +- 50) puts it at, proper, MAPQ 60 (it was
    improper at the first copy, MAPQ 0); two mates inside X tie between the copies (MAPQ
    0); a pair whose mates lie on two copies (1,150 bp apart) or on one strand is not
    flagged proper on the path."""
    rng = np.random.default_rng(3)

    def rnd(n):
        return "".join(rng.choice(list("ACGT"), n))
    A, X, B, C = rnd(600), rnd(400), rnd(600), rnd(600)
    gfa = (f"S\tA\t{A}\nS\tX\t{X}\nS\tB\t{B}\nS\tC\t{C}\nL\tA\t+\tX\t+\t0M\n"
           "L\tX\t+\tB\t+\t0M\nL\tB\t+\tX\t+\t0M\nL\tX\t+\tC\t+\t0M\nP\tref\tA+,X+,B+,X+,C+\t*\n")
    g = write_text(tmp_path, "rep.gfa", gfa)
    fq = "".join(f"@{n}\n{s}\n+\n{'I' * len(s)}\n" for n, s in
                 [("inX", X[100:250]), ("spanAX", A[-60:] + X[:90]), ("spanBX", B[-60:] + X[:90]),
                  ("inC", C[200:350])])
    from s2g.cli import main
    (tmp_path / "r.fq").write_text(fq)
    assert main(["align", g, str(tmp_path / "r.fq"), "--seeded", "-o", str(tmp_path / "r.sam"),
                 "-q", "--no-progress"]) == 0
    recs = records((tmp_path / "r.sam").read_text())
    assert [(r[0], int(r[4])) for r in recs] == [("inX", 0), ("spanAX", 60), ("spanBX", 60),
                                                 ("inC", 60)]   # (no runner-up at all)
    pairs = [("p0", B[-50:] + X[:100], rc(X[250:400])), ("p1", A[-50:] + X[:100], rc(X[250:400])),
             ("p2", X[50:200], rc(X[-100:] + C[:50])), ("p3", X[:150], rc(X[250:400])),
             ("p4", A[-50:] + X[:100], rc(B[-50:] + X[:100])), ("p5", X[50:200], X[250:400])]
    for k in (1, 2):
        (tmp_path / f"p_{k}.fq").write_text("".join(
            f"@{p[0]}/{k}\n{p[k]}\n+\n{'I' * 150}\n" for p in pairs))
    assert main(["align", g, str(tmp_path / "p_1.fq"), str(tmp_path / "p_2.fq"), "--seeded",
                 "--fragment-mean", "400", "--fragment-sd", "50", "-o", str(tmp_path / "p.sam"),
                 "-q", "--no-progress"]) == 0
    recs = records((tmp_path / "p.sam").read_text())
    for r in recs:
        flag, tlen = int(r[1]), int(r[8])
        fwd = not flag & 16
        fr = (tlen > 0) == fwd and abs(tlen) <= 600 and bool(flag & 16) != bool(flag & 32)
        assert bool(flag & 2) == fr, r[:9]
    # (1-based: A 1-600, X 601-1000, B 1001-1600, X 1601-2000, C 2001-2600)
    got = [(r[0], int(r[1]) & 0x12, int(r[3]), int(r[4])) for r in recs]
    assert got == [("p0", 2, 1551, 60), ("p0", 18, 1851, 60),
                   ("p1", 2, 551, 60), ("p1", 18, 851, 60),
                   ("p2", 2, 1651, 60), ("p2", 18, 1901, 60),
                   ("p3", 2, 601, 0), ("p3", 18, 851, 0),
                   ("p4", 0, 551, 60), ("p4", 16, 1551, 60),
                   ("p5", 0, 651, 0), ("p5", 0, 851, 0)]
