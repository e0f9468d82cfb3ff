"""GAF writer: one line per read, in order, no-hit lines, column conventions."""
from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import naive
import s2g
from s2g.gaf import gaf_line, oriented_blob, write_gaf
from s2g.reads import ReadBatch

GFA = "S\t1\tACGTAC\nS\t2\tG\nS\t3\tTTGCA\nL\t1\t+\t2\t+\t0M\nL\t2\t+\t3\t+\t0M\n"
NO_HIT = ["0", "0", "*", "*", "0", "0", "0", "0", "0", "0"]  # MAPQ 0 on no-hit lines (minimap2, minigraph)


def run(gfa_file, reads, **kw):
    g = s2g.load_graph(gfa_file(GFA))
    batch = ReadBatch.from_sequences([n for n, _ in reads], [s for _, s in reads])
    res = s2g.align(g, batch, variant="v0", **kw)
    fh = io.StringIO()
    n = write_gaf(fh, g, res)
    lines = fh.getvalue().splitlines()
    assert n == len(lines) == len(reads), "exactly one GAF line per read"
    return g, res, lines


def test_one_line_per_read_in_input_order_with_no_hits(gfa_file):
    reads = [("hit", "ACGTACG"), ("empty", ""), ("allN", "NNNN"), ("dup", "TTGCA"), ("dup", "GTACGTT"),
             ("rev", naive.revcomp("CGTTTG"))]
    _, res, lines = run(gfa_file, reads)
    f = [ln.split("\t") for ln in lines]
    assert [x[0] for x in f] == [n for n, _ in reads]
    assert [int(x[1]) for x in f] == [len(s) for _, s in reads]
    # empty read and a read of Ns (no positive local score) get the exact no-hit line
    assert lines[1] == "empty\t0\t" + "\t".join(NO_HIT)
    assert lines[2] == "allN\t4\t" + "\t".join(NO_HIT)
    assert not res[1].aligned and not res[2].aligned
    segs, links = naive.parse_gfa_text(GFA)
    for k in (0, 3, 4):
        naive.check_gaf_line(lines[k], segs, links, reads[k][1], "local", 2, 4, 4, 2,
                             expected_score=naive.align_gfa_text(GFA, reads[k][1])[0])
    assert f[0][5] == ">1>2" and f[4][5] == ">1>2>3"
    # the reverse-complement read walks the '-' copies, written with '<'
    assert f[5][5] == "<3<2<1" and f[5][4] == "+"


def test_no_traceback_lines_keep_the_score(gfa_file):
    reads = [("a", "ACGTACG"), ("b", ""), ("c", "NN")]
    _, _, lines = run(gfa_file, reads, traceback=False)
    assert lines[0] == "a\t7\t" + "\t".join(NO_HIT) + "\tAS:i:14"
    assert lines[1] == "b\t0\t" + "\t".join(NO_HIT)
    assert lines[2] == "c\t2\t" + "\t".join(NO_HIT)


@pytest.mark.parametrize("mode", ["semiglobal", "global"])
def test_end_to_end_modes_always_align_nonempty_reads(gfa_file, mode):
    reads = [("n", "NNN"), ("x", "TTTTTTTTTTTT")]
    _, res, lines = run(gfa_file, reads, mode=mode)
    segs, links = naive.parse_gfa_text(GFA)
    for (_, s), ln, r in zip(reads, lines, res):
        expect = naive.align_gfa_text(GFA, s, mode)[0]
        naive.check_gaf_line(ln, segs, links, s, mode, 2, 4, 4, 2, expected_score=expect)


def test_gaf_line_of_a_hand_checked_alignment(gfa_file):
    # CGTACGTTG: 9 matches along >1>2>3 starting at offset 1 of segment 1
    g, res, lines = run(gfa_file, [("q", "CGTACGTTG")])
    assert lines[0] == "q\t9\t0\t9\t+\t>1>2>3\t12\t1\t10\t9\t9\t255\tAS:i:18\tNM:i:0\tcg:Z:9="
    assert gaf_line(g, res[0]) == lines[0]


@pytest.mark.parametrize("mode", ["local", "semiglobal", "global"])
def test_batch_writer_equals_line_writer(tmp_path, mode):
    """gaf_text (Numba, from the flat tracebacks) writes exactly what gaf_line writes, for
    hits, no-hits, empty and N reads, insertion-only walks, odd names, both strands."""
    import numpy as np

    from s2g.gaf import gaf_text
    from s2g.scoring import Mode, Scoring
    from s2g.simulate import sample_reads, snp_graph
    from s2g.trace import traceback_batch
    from s2g.variants import cpu_parallel
    sg, ref = snp_graph(300, 7, 3, 4)
    p = str(tmp_path / "g.gfa")
    sg.write_gfa(p, ref)
    g = s2g.load_graph(p, strands="both")
    rng = np.random.default_rng(5)
    seqs = [s for _, s, _ in sample_reads(sg, 60, 40, 0.15, 0.5, 6)]
    seqs += ["", "NNNN", "A", "".join(rng.choice(list("ACGT"), 30)), "TTTTTTTTTTTTTTTTT"]
    names = [f"read_{k}" for k in range(len(seqs))]
    names[0], names[1] = "ünïcode_näme", "with space"
    batch = ReadBatch.from_sequences(names, seqs)
    sc = Scoring(2, 4, 4, 2) if mode != "global" else Scoring(1, 1, 1, 1)
    m = Mode.parse(mode)
    res = cpu_parallel.align_batch(g, batch, sc, m)
    # no tracebacks (score only)
    assert gaf_text(g, res) == "".join(gaf_line(g, r) + "\n" for r in res)
    traceback_batch(g, batch, sc, m, res)
    fast = gaf_text(g, res)                         # from the flat arrays
    assert res._tracebacks is None
    slow = "".join(gaf_line(g, r) + "\n" for r in res)    # builds Traceback objects
    assert fast == slow
    assert fast.count("\n") == len(seqs)
    assert sum("cg:Z:" in ln for ln in fast.splitlines()) >= 50


@settings(max_examples=60, deadline=None)
@example(names=["a\nb", "", "\u00e9"], steps=[(0, True), (1, False), (2, True)])
@example(names=["x", "\r"], steps=[(1, True), (0, False)])
@given(names=st.lists(st.text(st.characters(blacklist_categories=("Cs",)), max_size=6)
                      | st.just("x\udcff"), min_size=0, max_size=8),
       steps=st.lists(st.tuples(st.integers(0, 7), st.booleans()), max_size=20))
def test_oriented_blob_is_each_step_encoded(names, steps):
    """The GAF path steps in one blob (names joined and encoded once, a Numba fill) ==
    each ``>name``/``<name`` encoded on its own: non-ASCII and surrogate-escaped bytes,
    empty names, a name with a newline (encoded one by one), no nodes."""
    steps = [(s, r) for s, r in steps if s < len(names)]
    seg = np.array([s for s, _ in steps], np.int64)
    rev = np.array([r for _, r in steps], np.uint8)
    blob, off = oriented_blob(names, seg, rev)
    b32, o32 = oriented_blob(names, seg.astype(np.int32), rev.astype(bool))
    assert np.array_equal(o32, off) and b32.tobytes() == blob.tobytes()
    want = [(("<" if r else ">") + names[s]).encode("utf-8", "surrogateescape")
            for s, r in steps]
    assert off.tolist() == np.cumsum([0] + [len(w) for w in want]).tolist()
    assert [blob[off[v]:off[v + 1]].tobytes() for v in range(len(steps))] == want
    assert len(blob) >= 1
