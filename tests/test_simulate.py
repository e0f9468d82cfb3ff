"""Synthetic SNP graphs and reads: structure, determinism, truth, and alignability."""
from __future__ import annotations

import numpy as np
import pytest

import naive
import s2g
from s2g import simulate


@pytest.mark.parametrize("branching", [1, 2, 3, 4, 6])
def test_snp_graph_structure(branching):
    g, ref = simulate.snp_graph(2000, node_len=20, branching=branching, seed=3)
    assert g.total_bases == 2000
    # ref alternates backbone node, first allele of the next site, backbone node, ...
    backbone, first_alleles = ref[0::2], ref[1::2]
    assert all(b in g.succ[a] for a, b in zip(ref, ref[1:])), "the reference walk follows edges"
    for k, v in enumerate(backbone):
        lo_ok = len(g.seqs[v]) >= 10 or v == len(g.names) - 1  # the last node may be cut short
        assert lo_ok and len(g.seqs[v]) <= 30, f"backbone node {v}: length {len(g.seqs[v])}"
        if k + 1 < len(backbone):
            alleles = g.succ[v]
            assert len(alleles) == branching and alleles[0] == first_alleles[k]
            assert all(len(g.seqs[w]) == 1 and g.succ[w] == [backbone[k + 1]] for w in alleles)
            if branching <= 4:
                assert len({g.seqs[w] for w in alleles}) == branching, "alleles must be distinct"
            indeg = sum(backbone[k + 1] in s for s in g.succ)
            assert indeg == branching
    n_nodes = len(backbone) + sum(len(g.succ[v]) for v in backbone[:-1])
    assert n_nodes == len(g.names) or len(g.names) == n_nodes + len(g.succ[backbone[-1]])


def test_same_seed_same_files_other_seed_other_files(tmp_path):
    a = simulate.simulate(str(tmp_path / "a"), 3000, 30, 2, 50, 60, 0.02, 0.5, seed=5)
    b = simulate.simulate(str(tmp_path / "b"), 3000, 30, 2, 50, 60, 0.02, 0.5, seed=5)
    c = simulate.simulate(str(tmp_path / "c"), 3000, 30, 2, 50, 60, 0.02, 0.5, seed=6)
    for x, y, z in zip(a, b, c):
        assert open(x).read() == open(y).read()
        assert open(x).read() != open(z).read()


def test_reads_match_their_truth(tmp_path):
    gfa, fq, truth = simulate.simulate(str(tmp_path / "s"), 5000, 25, 3, 80, 70, 0.03, 0.5, seed=11)
    segs, links = naive.read_gfa(gfa)
    edges = naive.oriented_edges(links, "forward")
    reads = s2g.read_reads(fq)
    rows = [ln.rstrip("\n").split("\t") for ln in open(truth)][1:]
    assert len(rows) == reads.n_reads == 80
    n_rev = 0
    for k, (name, strand, walk, offset, subs) in enumerate(rows):
        assert reads.names[k] == name
        seq = "".join("ACGTN"[c] for c in reads.codes(k))
        steps = naive.parse_gaf_path(walk)
        assert all((u, v) in edges for u, v in zip(steps, steps[1:])), f"{name}: truth walk is not a walk"
        spelled = naive.spell(segs, steps)
        ref = spelled[int(offset):int(offset) + 70]
        # full length, or cut short only where the walk reaches the graph's end
        assert len(seq) == 70 or (len(seq) == len(ref) and not any(u == steps[-1] for u, _ in edges))
        fwd = naive.revcomp(seq) if strand == "-" else seq
        assert sum(x != y for x, y in zip(fwd, ref)) == int(subs), name
        n_rev += strand == "-"
    assert 20 <= n_rev <= 60  # reverse_fraction 0.5 of 80 reads


def test_simulated_reads_score_at_least_their_truth(tmp_path):
    # the true placement scores a*(len - subs) - b*subs; the optimum can only be higher
    gfa, fq, truth = simulate.simulate(str(tmp_path / "s"), 3000, 30, 2, 40, 80, 0.02, 0.5, seed=2)
    g = s2g.load_graph(gfa)
    reads = s2g.read_reads(fq)
    subs = np.array([int(ln.split("\t")[4]) for ln in list(open(truth))[1:]])
    sc = s2g.Scoring()
    res = s2g.align(g, reads, sc, mode="semiglobal", variant="cpu", traceback=False)
    floor = sc.match * (80 - subs) - sc.mismatch * subs
    assert np.all(res.score >= floor)


def test_bad_arguments():
    with pytest.raises(ValueError):
        simulate.snp_graph(0)
    with pytest.raises(ValueError):
        simulate.snp_graph(100, branching=0)


def test_reads_have_full_length_on_long_graphs():
    """simulate.py's docstring: reads are shorter than read_len "only if the walk hits
    the graph end, which the start draw avoids whenever the graph is long enough"."""
    g, _ = simulate.snp_graph(5000, node_len=25, branching=3, seed=11)
    reads = simulate.sample_reads(g, 300, 70, 0.0, 0.0, seed=12)
    short = [(n, len(s)) for n, s, _ in reads if len(s) < 70]
    assert not short, (f"{len(short)} of 300 reads are shorter than read_len=70 on a 5000-base graph "
                       f"(e.g. {short[:3]}): sample_reads draws the start uniformly over all bases, "
                       "so starts in the last 69 bases give short reads, contrary to its docstring")
