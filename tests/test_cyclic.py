"""Exact alignment on cyclic graphs (s2g/cyclic.py) against a fixed-point DP on the
cyclic graph itself (tests/cyclic_ref.py): hand-drawn cycles, random cyclic graphs
(hypothesis), and the real cyclic graphs MT (a self loop) and LPA (a 1,167-segment
repeat component) with reads that cross their cycles."""
from __future__ import annotations

import functools
import os
import random
import subprocess
import sys
import tempfile

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cyclic_ref
import naive
import s2g
from s2g.cyclic import bucket, dedup_seeds, walk_bound
from s2g.gaf import gaf_text
from s2g.graph import open_graph
from s2g.graph_core import BASE_CODE
from s2g.reads import ReadBatch

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def batch_of(reads):
    return ReadBatch.from_codes([f"r{k}" for k in range(len(reads))],
                                [BASE_CODE[np.frombuffer(r.encode(), np.uint8)] for r in reads])


def s2g_scores(graph, reads, mode, sc, variant="v0"):
    """Scores (None: no hit) and GAF lines of ``reads`` on an (unrolled) graph."""
    res = s2g.align(graph, batch_of(reads), sc, mode=mode, variant=variant, traceback=True)
    scores = [r.score if r.aligned else None for r in res]
    return scores, gaf_text(graph, res).splitlines()


def reference_graph(path, strands="both"):
    """naive's segments and links and the reference's base graph (kept for the real
    graphs, which several tests read: keyed by the file's identity too)."""
    st = os.stat(path)
    return _reference_graph(path, st.st_ino, st.st_mtime_ns, st.st_size, strands)


@functools.lru_cache(maxsize=4)
def _reference_graph(path, ino, mtime, size, strands):
    segs, links = naive.read_gfa(path)
    return segs, links, cyclic_ref.base_arrays(segs, links, strands)


def check(path, reads, mode="local", sc=s2g.Scoring(), strands="both", max_len=None,
          variant="v0", up=False):
    """s2g on the graph unrolled for the longest read == the fixed-point reference, and
    every GAF line a valid walk of the GFA that rescores to the optimum. ``up``: also the
    DAG whose copies count up (seeded alignment's), for the same walk bound."""
    segs, links, arrays = reference_graph(path, strands)
    m = max_len or max(map(len, reads))
    g = s2g.load_graph(path, strands=strands, max_read_len=m, scoring=sc, mode=mode)
    got, lines = s2g_scores(g, reads, mode, sc, variant)
    a, b, o, e = sc.as_tuple()
    for read, score, line in zip(reads, got, lines):
        want = cyclic_ref.align_cyclic(arrays, read, mode, a, b, o, e, fast=len(arrays[0]) > 500)
        assert score == want, (read, mode, sc, score, want)
        if want is not None:
            naive.check_gaf_line(line, segs, links, read, mode, a, b, o, e, strands, want)
    if up and g.node_copy is not None:
        gu = open_graph(path, strands).unroll_walks(walk_bound(m, sc, mode), count="up")
        assert s2g_scores(gu, reads, mode, sc, variant)[0] == got
    return g, got, lines


# ------------------------------------------------------------------ walk bound

def test_walk_bound_values():
    # defaults a=2 b=4 o=4 e=2 (module doc): 150 bp -> 297 local, 450 semiglobal
    assert walk_bound(150) == 150 + (2 * 149 - 4) // 2 == 297
    assert walk_bound(150, mode="semiglobal") == 150 + (300 - 4 + 304) // 2 == 450
    # semiglobal: mismatching the whole read is the cheaper floor when b*m < o + e*m
    assert walk_bound(10, s2g.Scoring(1, 1, 9, 3), "semiglobal") == 10 + (10 - 9 + 10) // 3
    assert walk_bound(1, s2g.Scoring(1, 1, 4, 1)) == 1          # no room for a deletion
    assert walk_bound(3, s2g.Scoring(5, 4, 0, 1)) == 3 + 10
    with pytest.raises(s2g.GraphError, match="--break-cycles"):
        walk_bound(10, mode="global")
    assert [bucket(x) for x in (1, 64, 65, 150, 1000, 1025)] == [64, 64, 72, 160, 1024, 1152]
    assert all(x <= bucket(x) <= max(64, x * 1.125) for x in range(1, 5000))


def test_walk_bound_is_reached(gfa_file):
    """The optimum can need the laps the bound allows: the read GGG on G <-> AAAA (o=0, so
    deleting round the loop is cheap) scores 15 - 8 = 7 over the 11-base walk
    G AAAA G AAAA G (local bound 3 + 10 = 13); a DAG unrolled for walks of 6 bases has
    one lap only and finds GG (6)."""
    path = gfa_file("S\t1\tG\nS\t2\tAAAA\nL\t1\t+\t2\t+\t0M\nL\t2\t+\t1\t+\t0M\n")
    sc = s2g.Scoring(5, 4, 0, 1)
    segs, links = naive.read_gfa(path)
    assert cyclic_ref.align_cyclic(cyclic_ref.base_arrays(segs, links), "GGG", "local",
                                   5, 4, 0, 1) == 7
    cyc = open_graph(path)
    assert walk_bound(3, sc, "local") == 13
    got, lines = s2g_scores(cyc.unroll(3, sc, "local"), ["GGG"], "local", sc)
    assert got == [7] and lines[0].split("\t")[5] == ">1>2>1>2>1"
    assert s2g_scores(cyc.unroll_walks(6), ["GGG"], "local", sc)[0] == [6]


# ------------------------------------------------------------------ hand-drawn cycles

def test_self_loop_goes_round_three_times(gfa_file):
    #   +---+
    #   v   |
    #  [ACG]+ -> [TT]
    path = gfa_file("S\t1\tACG\nS\t2\tTT\nL\t1\t+\t1\t+\t0M\nL\t1\t+\t2\t+\t0M\n")
    g, got, lines = check(path, ["ACGACGACGTT", "CGTTAA"[:4]])
    assert got[0] == 22 and lines[0].split("\t")[5] == ">1>1>1>2"
    assert g.walk_bound == walk_bound(11) and g.node_copy.max() >= 2
    # the reverse strand goes round the mirror loop: <2<1<1<1
    _, got, lines = check(path, [naive.revcomp("ACGACGACGTT")])
    assert got == [22] and lines[0].split("\t")[5] == "<2<1<1<1"


def test_two_cycle_and_inversion_cycle(gfa_file):
    # 1 -> 2 -> 1: the back edge 2 -> 1 is used twice by ACGT GGA ACGT GGA
    path = gfa_file("S\t1\tACGT\nS\t2\tGGA\nL\t1\t+\t2\t+\t0M\nL\t2\t+\t1\t+\t0M\n")
    for mode in ("local", "semiglobal"):
        _, got, lines = check(path, ["ACGTGGAACGTGGA", "GGAACGTTGGA"], mode)
        assert got[0] == 28 and lines[0].split("\t")[5] == ">1>2>1>2"
    # inversion cycle: 1+ -> 2- -> 1+ (a cycle only of the doubled graph)
    path = gfa_file("S\t1\tAAC\nS\t2\tGT\nL\t1\t+\t2\t-\t0M\nL\t2\t-\t1\t+\t0M\n")
    read = "AAC" + "AC" + "AAC" + "AC"
    _, got, lines = check(path, [read, naive.revcomp(read)])
    assert got == [20, 20] and lines[0].split("\t")[5] == ">1<2>1<2"


def test_laps_cost_no_node_bound_slots(gfa_file):
    """Copies count the back edges still to cross, so a short loop's many copies fan out
    from the node before it (one slot) instead of fanning in to the node after it (one
    slot per copy): 200 laps of a 1-base loop, and still a handful of slots."""
    path = gfa_file("S\t1\tACGT\nS\t2\tA\nS\t3\tCCTG\nL\t1\t+\t2\t+\t0M\n"
                    "L\t2\t+\t2\t+\t0M\nL\t2\t+\t3\t+\t0M\n")
    g, got, _ = check(path, ["ACGT" + "A" * 200 + "CCTG"], max_len=208)
    assert got == [416] and g.node_copy.max() >= 200
    assert g.n_slots <= 4 and g.max_in_degree() <= 2


def test_acyclic_graph_is_not_unrolled(gfa_file):
    path = gfa_file("S\t1\tACGT\nS\t2\tGGA\nL\t1\t+\t2\t+\t0M\n")
    plain = s2g.load_graph(path)
    g = s2g.load_graph(path, max_read_len=1000)
    assert g.node_copy is None and g.walk_bound == 0
    for name in ("base", "node_start", "pred_ptr", "pred_idx", "slot", "node_seg", "node_rev"):
        assert np.array_equal(getattr(g, name), getattr(plain, name)), name


def test_forward_strand_only(gfa_file):
    # the loop exists on + only; the inversion link 1+ -> 1- is dropped with --strands forward
    path = gfa_file("S\t1\tACG\nS\t2\tTT\nL\t1\t+\t1\t+\t0M\nL\t1\t+\t2\t+\t0M\nL\t1\t+\t1\t-\t0M\n")
    g, got, lines = check(path, ["ACGACGTT"], strands="forward")
    assert got == [16] and set(g.node_rev.tolist()) == {0}


def test_longer_reads_than_unrolled_for_lose_score(gfa_file):
    """The check can fail: a DAG unrolled for short reads lacks the laps a long read needs."""
    path = gfa_file("S\t1\tACGT\nL\t1\t+\t1\t+\t0M\n")
    read = "ACGT" * 6
    short = s2g.load_graph(path, max_read_len=8)
    assert s2g_scores(short, [read], "local", s2g.Scoring())[0][0] < 48
    assert s2g_scores(s2g.load_graph(path, max_read_len=24), [read], "local",
                      s2g.Scoring())[0] == [48]


# ------------------------------------------------------------------ reference sanity

@st.composite
def dag_case(draw):
    text = naive.random_dag_gfa(draw, st, max_segs=4, max_len=4)
    read = "".join(draw(st.lists(st.sampled_from("ACGT"), min_size=1, max_size=8)))
    return text, read, draw(st.sampled_from(["local", "semiglobal"]))


@settings(max_examples=40, deadline=None)
@given(dag_case())
def test_reference_equals_naive_on_dags(case):
    """The fixed-point reference is the recurrence: on DAGs it equals tests/naive.py."""
    text, read, mode = case
    segs, links = naive.parse_gfa_text(text)
    want, _ = naive.graph_align(naive.base_graph(segs, links), read, mode, 2, 4, 4, 2)
    got = cyclic_ref.align_cyclic(cyclic_ref.base_arrays(segs, links), read, mode)
    assert got == want
    got_fast = cyclic_ref.align_cyclic(cyclic_ref.base_arrays(segs, links), read, mode, fast=True)
    assert got_fast == want


# ------------------------------------------------------------------ random cyclic graphs

@st.composite
def cyclic_case(draw):
    """A small GFA whose doubled graph has a cycle, reads spelled from random walks
    through it (with an edit now and then) or drawn at random, a scoring and a mode."""
    n = draw(st.integers(1, 4))
    segs = {str(k + 1): "".join(draw(st.lists(st.sampled_from("ACGTACGTN"), min_size=1,
                                              max_size=4))) for k in range(n)}
    names = list(segs)
    links = draw(st.lists(st.tuples(st.sampled_from(names), st.sampled_from("+-"),
                                    st.sampled_from(names), st.sampled_from("+-")),
                          min_size=1, max_size=2 * n + 1, unique=True))
    g = nx.DiGraph(list(naive.oriented_edges(links)))
    if nx.is_directed_acyclic_graph(g):
        s = draw(st.sampled_from(names))
        links.append((s, draw(st.sampled_from("+-")), s, draw(st.sampled_from("+-"))))
        g = nx.DiGraph(list(naive.oriented_edges(links)))
        if nx.is_directed_acyclic_graph(g):       # s+ -> s- is no cycle: a plain self loop
            links[-1] = (s, "+", s, "+")
    rnd = draw(st.randoms(use_true_random=False))
    edges = naive.oriented_edges(links)
    reads = []
    for _ in range(draw(st.integers(1, 3))):
        if rnd.random() < 0.75:                  # a walk round the graph, cycles included
            node = (rnd.choice(names), rnd.choice("+-"))
            seq = naive.oriented_seq(segs, *node)[rnd.randrange(len(segs[node[0]])):]
            while len(seq) < 16:
                nxt = [v for u, v in edges if u == node]
                if not nxt:
                    break
                node = rnd.choice(sorted(nxt))
                seq += naive.oriented_seq(segs, *node)
            seq = list(seq[:rnd.randint(1, 14)].replace("N", "A"))
            for _ in range(rnd.randint(0, 2)):   # substitutions, insertions, deletions
                k = rnd.randrange(len(seq))
                op = rnd.choice("sid")
                if op == "s":
                    seq[k] = rnd.choice("ACGT")
                elif op == "i":
                    seq.insert(k, rnd.choice("ACGT"))
                elif len(seq) > 1:
                    del seq[k]
            reads.append("".join(seq))
        else:
            reads.append("".join(rnd.choice("ACGT") for _ in range(rnd.randint(1, 10))))
    sc = s2g.Scoring(draw(st.integers(1, 3)), draw(st.integers(1, 5)), draw(st.integers(0, 4)),
                     draw(st.integers(1, 3)))
    text = "".join(f"S\t{k}\t{v}\n" for k, v in segs.items())
    text += "".join(f"L\t{a}\t{oa}\t{b}\t{ob}\t0M\n" for a, oa, b, ob in links)
    return text, reads, sc, draw(st.sampled_from(["local", "semiglobal"]))


@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(cyclic_case())
def test_random_cyclic_graphs_match_the_fixed_point(case):
    text, reads, sc, mode = case
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "g.gfa")
        with open(path, "w") as fh:
            fh.write(text)
        g, _, _ = check(path, reads, mode, sc, up=True)
    assert g.node_copy is not None          # the graph was cyclic and got unrolled


# ------------------------------------------------------------------ real cyclic graphs

def _crossing_reads(path, n, length, seed, pick):
    """Reads of ``length`` bp spelled by walks that cross a back edge u -> v that
    ``pick`` chooses from the unrolled graph's back edges: a random walk backwards from
    u's end, then forwards from v's start; 1-2 substitutions and a 2-base deletion in
    half of them."""
    segs, links = naive.read_gfa(path)
    edges = naive.oriented_edges(links)
    succ, pred = {}, {}
    for u, v in edges:
        succ.setdefault(u, []).append(v)
        pred.setdefault(v, []).append(u)
    cyc = open_graph(path)
    src = np.repeat(np.arange(cyc.n), np.diff(cyc.succ_ptr))
    back = [(int(u), int(v)) for u, v in zip(src[cyc.back], cyc.succ_idx[cyc.back])]
    key = lambda x: (cyc.rec.seg_names[x >> 1], "-" if x & 1 else "+")   # noqa: E731
    rnd = random.Random(seed)
    reads = []
    for k in range(n):
        u, v = pick(rnd, [(key(u), key(v)) for u, v in back])
        half = length // 2 + rnd.randint(-length // 4, length // 4)
        left, node = naive.oriented_seq(segs, *u), u
        while len(left) < half:
            node = rnd.choice(sorted(pred[node]))
            left = naive.oriented_seq(segs, *node) + left
        right, node = naive.oriented_seq(segs, *v), v
        while len(right) < length - half:
            node = rnd.choice(sorted(succ[node]))
            right += naive.oriented_seq(segs, *node)
        seq = list(left[len(left) - half:] + right[:length - half])
        for _ in range(rnd.randint(1, 2)):
            j = rnd.randrange(length)
            seq[j] = rnd.choice([c for c in "ACGT" if c != seq[j]])
        if k % 2:
            del seq[length // 3:length // 3 + 2]
        reads.append("".join(seq))
    return reads


def _broken_scores(path, reads, mode):
    with pytest.warns(UserWarning, match="removed"):
        g = s2g.load_graph(path, break_cycles=True)
    return s2g_scores(g, reads, mode, s2g.Scoring(), "cpu")[0]


def test_mt_reads_round_the_self_loop(real_data):
    """MT (minigraph): the 501 bp segment MTh4001 has a self loop; reads across it, on
    both strands, and a 600 bp read that passes MTh4001 three times."""
    path = str(real_data / "mt_minigraph" / "MT.gfa")
    segs, _ = naive.read_gfa(path)
    s = segs["MTh4001"]
    reads = _crossing_reads(path, 4, 150, 1, lambda rnd, b: rnd.choice(sorted(b)))
    reads += [s[-50:] + s + s[:49]]
    for mode in ("local", "semiglobal"):
        _, got, lines = check(path, reads, mode, variant="cpu")
        assert ">MTh4001>MTh4001>MTh4001" in lines[-1]
        assert any("MTh4001>MTh4001" in x or "MTh4001<MTh4001" in x for x in lines[:-1])
        broken = _broken_scores(path, reads, mode)
        assert all(x is None or x < y for x, y in zip(broken, got)), (broken, got)


def test_lpa_reads_across_the_repeat_cycle(real_data):
    """LPA (pggb): reads crossing a back edge of the kringle-repeat component."""
    path = str(real_data / "lpa_odgi" / "LPA.gfa")
    reads = _crossing_reads(path, 3, 120, 2, lambda rnd, b: b[rnd.randrange(len(b))])
    _, got, lines = check(path, reads, "local", variant="cpu")
    _, got_sg, _ = check(path, reads[:2], "semiglobal", variant="cpu")
    broken = _broken_scores(path, reads, "local")
    assert any(x is None or x < y for x, y in zip(broken, got)), (broken, got)


# ------------------------------------------------------------------ seeded, CLI

def test_seed_index_keeps_one_entry_per_original_position(real_data):
    from s2g.index import build_index, collect_syncmers
    path = str(real_data / "mt_minigraph" / "MT.gfa")
    g = open_graph(path).for_seeded(1000)
    h, c, n, _ = collect_syncmers(g.base, g.node_start, g.pred_ptr, g.pred_idx, g.slot,
                                  g.n_slots, 19, 11, 16)
    h, c = h[:n], c[:n]
    h2, c2 = dedup_seeds(g, h, c)
    assert 0 < len(c2) < len(c)

    def entries(hs, cols):          # (hash, oriented segment, offset) of each entry
        v = np.searchsorted(g.node_start, cols, side="right") - 1
        return list(zip(hs.tolist(), g.node_seg[v].tolist(), g.node_rev[v].tolist(),
                        (cols - g.node_start[v]).tolist())), v
    keys, _ = entries(h, c)
    keys2, v2 = entries(h2, c2)
    assert len(set(keys2)) == len(keys2) and set(keys2) == set(keys)
    assert (g.node_copy[v2] == 0).mean() > 0.99
    idx = build_index(g)
    assert idx.n_entries == len(c2)


def test_seeded_on_a_cyclic_graph(real_data):
    """Seeded alignment on MT, unrolled once for its index: the reads across the loop get
    the exact optimum and the path round the loop."""
    from s2g.index import build_index
    from s2g.seeded import SeededAligner
    path = str(real_data / "mt_minigraph" / "MT.gfa")
    reads = _crossing_reads(path, 4, 150, 3, lambda rnd, b: rnd.choice(sorted(b)))
    g = open_graph(path).for_seeded()
    sa = SeededAligner(g, build_index(g), s2g.Scoring(), s2g.Mode.LOCAL)
    batch = batch_of(reads)
    res = sa.align_batch(batch)
    sa.traceback(batch, res)
    exact = s2g.load_graph(path, max_read_len=150)
    want, _ = s2g_scores(exact, reads, "local", s2g.Scoring(), "cpu")
    assert list(res.score) == want
    assert all("MTh4001>MTh4001" in x or "MTh4001<MTh4001" in x
               for x in gaf_text(g, res).splitlines())


def test_seeded_on_lpa_follows_the_cycle(real_data):
    """Seeded alignment on LPA's unrolled DAG finds the full-DP optimum for reads across
    back edges (19 of 20 when written; 7 with copies counting down, whose windows split
    such reads in two; --break-cycles also 7)."""
    from s2g.index import build_index
    from s2g.seeded import SeededAligner
    path = str(real_data / "lpa_odgi" / "LPA.gfa")
    reads = _crossing_reads(path, 20, 150, 7, lambda rnd, b: b[rnd.randrange(len(b))])
    cyc = open_graph(path)
    g = cyc.for_seeded()
    res = SeededAligner(g, build_index(g), s2g.Scoring(), s2g.Mode.LOCAL).align_batch(
        batch_of(reads))
    want, _ = s2g_scores(cyc.unroll(150), reads, "local", s2g.Scoring(), "cpu")
    assert all(x <= y for x, y in zip(res.score, want))
    assert sum(x == y for x, y in zip(res.score, want)) >= 16, (list(res.score), want)


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "s2g", *map(str, args)], capture_output=True,
                          text=True, cwd=REPO, timeout=600)


def test_cli_cyclic(gfa_file, reads_file, tmp_path):
    """s2g align is exact on a cyclic graph by default, per batch (batches of other
    longest reads get other DAGs); info reports the unrolling; index works on it."""
    path = gfa_file("S\t1\tACGT\nS\t2\tGGA\nL\t1\t+\t2\t+\t0M\nL\t2\t+\t1\t+\t0M\n")
    reads = ["ACGTGGAACGT", "GGAACGTGGAACGTGGAACGTGGAACGTGGAACGTGGAACGTGGA" * 2, "TGGAAC"]
    fa = reads_file([(f"r{k}", r) for k, r in enumerate(reads)])
    p = _cli("align", path, fa, "--batch-size", "1", "--exact")
    assert p.returncode == 0, p.stderr
    segs, links = naive.read_gfa(path)
    arrays = cyclic_ref.base_arrays(segs, links)
    for read, line in zip(reads, p.stdout.splitlines()):
        naive.check_gaf_line(line, segs, links, read, "local", 2, 4, 4, 2,
                             expected_score=cyclic_ref.align_cyclic(arrays, read))
    info = s2g.graph_info(path)
    assert info["cyclic_components"] == 1 and info["bases_in_cycles"] == 14
    assert info["unrolled_dp_bases_150bp"] > info["dp_bases"] == 14
    p = _cli("index", path, "-o", tmp_path / "g.s2gi", "--max-read-len", "50")
    assert p.returncode == 0, p.stderr
    p = _cli("align", path, fa, "--seeded", "--index", tmp_path / "g.s2gi",
             "--max-read-len", "50")
    assert p.returncode == 0 and "longer than --max-read-len 50" in p.stderr, p.stderr
    assert p.stdout.count("\n") == 3
    from s2g.index import load_index
    with pytest.raises(s2g.S2GError, match="--max-read-len"):   # the default is 1000 bp
        load_index(str(tmp_path / "g.s2gi"), open_graph(path).for_seeded())
