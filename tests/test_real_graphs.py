"""The five real graphs of ../shared/data/real: load, align with 'cpu', valid tracebacks.

Queries are subsampled to keep this file well under a minute: 20 cactus reads and
300-bp pieces of the DRB1/LPA/C4/MT haplotypes. DRB1 haplotypes equal graph paths
exactly (data README), so an N-free piece must score a*300 with CIGAR 300=.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import naive
import s2g
from s2g.gaf import gaf_line
from s2g.reads import ReadBatch

PIECE = 300


def fasta(path):
    recs, name = {}, None
    for line in open(path):
        line = line.strip()
        if line.startswith(">"):
            name = line[1:].split()[0]
            recs[name] = []
        elif line:
            recs[name].append(line)
    return {k: "".join(v).upper() for k, v in recs.items()}


def pieces(seqs, n_per, seed):
    rng = np.random.default_rng(seed)
    out = []
    for name, s in seqs.items():
        for k in range(n_per):
            p = int(rng.integers(0, len(s) - PIECE))
            out.append((f"{name}:{p}", s[p:p + PIECE]))
    return out


def load(path, break_cycles=False):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return s2g.load_graph(str(path), break_cycles=break_cycles)


def count_records(path):
    s = l = 0
    for line in open(path):
        s += line.startswith("S\t")
        l += line.startswith("L\t")
    return s, l


def align_and_check(gfa, graph, reads, mode="local"):
    segs, links = naive.read_gfa(gfa)
    batch = ReadBatch.from_sequences([n for n, _ in reads], [s for _, s in reads])
    res = s2g.align(graph, batch, mode=mode, variant="cpu")
    out = []
    for k, (name, seq) in enumerate(reads):
        assert res[k].aligned, f"{name} did not align"
        got = naive.check_gaf_line(gaf_line(graph, res[k]), segs, links, seq, mode, 2, 4, 4, 2)
        out.append((res[k], got))
    return out


GRAPHS = [
    ("cactus_brca2_vg/cactus-BRCA2.gfa", False),
    ("c4_gwfa/C4-90.gfa", False),
    ("drb1_odgi/DRB1-3123.gfa", False),
    ("lpa_odgi/LPA.gfa", True),
    ("mt_minigraph/MT.gfa", True),
]


@pytest.mark.parametrize("gfa,cyclic", GRAPHS, ids=[g.split("/")[0] for g, _ in GRAPHS])
def test_real_graph_loads(real_data, gfa, cyclic):
    path = real_data / gfa
    if cyclic:
        with pytest.raises(s2g.GraphError, match="cyclic"):
            s2g.load_graph(str(path))
        with pytest.warns(UserWarning, match="removed"):
            g = s2g.load_graph(str(path), break_cycles=True)
        assert g.broken_edges > 0
    else:
        g = s2g.load_graph(str(path))
    n_s, n_l = count_records(path)
    assert g.n_segments == n_s and g.n_links == n_l and g.n_nodes == 2 * n_s
    assert all(np.all(g.pred_idx[g.pred_ptr[v]:g.pred_ptr[v + 1]] < v) for v in range(g.n_nodes))


def test_cactus_reads_align_with_high_identity(real_data):
    d = real_data / "cactus_brca2_vg"
    lines = open(d / "cactus-BRCA2.fastq").read().split("\n")
    reads = [(lines[4 * k][1:].split()[0], lines[4 * k + 1]) for k in range(20)]
    graph = load(d / "cactus-BRCA2.gfa")
    out = align_and_check(str(d / "cactus-BRCA2.gfa"), graph, reads)
    ident = [got["cigar"].count("=") and r.traceback.matches / r.traceback.block_len for r, got in out]
    span = [r.traceback.qend - r.traceback.qstart for r, _ in out]
    good = sum(i >= 0.9 and s >= 80 for i, s in zip(ident, span))
    assert good >= 16, f"only {good}/20 cactus reads align >= 80 bp at >= 90% identity: {ident}"


def test_drb1_haplotype_pieces_align_exactly(real_data):
    d = real_data / "drb1_odgi"
    haps = fasta(d / "DRB1-3123.fa")
    reads = [(n, s) for n, s in pieces(haps, 2, seed=1) if "N" not in s][:10]
    assert len(reads) >= 6
    graph = load(d / "DRB1-3123.gfa")
    for mode in ("local", "semiglobal"):
        for r, got in align_and_check(str(d / "DRB1-3123.gfa"), graph, reads, mode):
            assert r.score == 2 * PIECE and got["cigar"] == f"{PIECE}=", (r.name, r.score, got["cigar"])


def test_drb1_haplotypes_equal_their_paths(real_data):
    # the data README: every FASTA record equals a path's spelled sequence exactly
    d = real_data / "drb1_odgi"
    g = s2g.load_graph(str(d / "DRB1-3123.gfa"), keep_paths=True)
    segs, _ = naive.read_gfa(d / "DRB1-3123.gfa")
    spelled = {naive.spell(segs, [(g.seg_names[s], "-" if r else "+") for s, r in steps])
               for steps in g.paths.values()}
    assert len(g.paths) == 12
    for name, seq in fasta(d / "DRB1-3123.fa").items():
        assert "".join(c if c in "ACGT" else "N" for c in seq) in spelled, name


# identity floor: C4 and LPA queries are (nearly) in the graph; the chimp and orangutan
# mitochondria are only similar to MT.gfa's (about 85-97% on 300-bp pieces)
@pytest.mark.parametrize("sub,gfa,fas,n_per,cyclic,floor", [
    ("c4_gwfa", "C4-90.gfa", ["C4-NA19240.1.fa", "C4-NA19240.2.fa"], 2, False, 0.9),
    ("lpa_odgi", "LPA.gfa", ["LPA.fa"], 0, True, 0.9),
    ("mt_minigraph", "MT.gfa", ["MT-human.fa", "MT-chimp.fa", "MT-orangA.fa"], 2, True, 0.8),
], ids=["c4", "lpa", "mt"])
def test_haplotype_pieces_align_with_valid_tracebacks(real_data, sub, gfa, fas, n_per, cyclic, floor):
    d = real_data / sub
    seqs = {}
    for fa in fas:
        seqs.update(fasta(d / fa))
    if n_per == 0:  # LPA: 14 contigs of ~300 kb; 4 of them, one piece each
        seqs = dict(sorted(seqs.items())[:4])
        n_per = 1
    reads = pieces(seqs, n_per, seed=2)
    graph = load(d / gfa, break_cycles=cyclic)
    out = align_and_check(str(d / gfa), graph, reads)
    high = sum(r.traceback.matches >= floor * PIECE for r, _ in out)
    assert high >= len(out) - 1, [(r.name, r.score, r.traceback.matches) for r, _ in out]
