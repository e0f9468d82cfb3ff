"""GAF writer: one line per read, in order, no-hit lines, column conventions."""
from __future__ import annotations

import io

import pytest

import naive
import s2g
from s2g.gaf import gaf_line, write_gaf
from s2g.reads import ReadBatch

GFA = "S\t1\tACGTAC\nS\t2\tG\nS\t3\tTTGCA\nL\t1\t+\t2\t+\t0M\nL\t2\t+\t3\t+\t0M\n"
NO_HIT = ["0", "0", "*", "*", "0", "0", "0", "0", "0", "255"]


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
