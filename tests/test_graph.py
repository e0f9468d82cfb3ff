"""GFA -> FlatGraph: structure against networkx/naive and gfapy, slots, cycles, bad input."""
from __future__ import annotations

import gzip
import os
import warnings

import gfapy
import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_v0 import SETTINGS, write_tmp

import naive
import s2g
from s2g import simulate
from s2g.errors import GraphError

ARRAYS = ("base", "node_start", "pred_ptr", "pred_idx", "slot", "node_seg", "node_rev", "is_sink")


@st.composite
def gfa_texts(draw):
    return naive.random_dag_gfa(draw, st, max_segs=7, max_len=4)


def node_key(g, v):
    return g.seg_names[g.node_seg[v]], "-" if g.node_rev[v] else "+"


def flat_edges(g):
    return {(node_key(g, int(p)), node_key(g, v))
            for v in range(g.n_nodes) for p in g.pred_idx[g.pred_ptr[v]:g.pred_ptr[v + 1]]}


def check_structure(g, segs, links, strands):
    """FlatGraph == the naive doubled graph; order is topological; CSR well formed."""
    nodes = {(s, o) for s in segs for o in ("+-" if strands == "both" else "+")}
    keys = [node_key(g, v) for v in range(g.n_nodes)]
    assert len(keys) == len(set(keys)) and set(keys) == nodes
    for v, (s, o) in enumerate(keys):
        assert g.sequence(v) == naive.oriented_seq(segs, s, o), f"bases of {s}{o}"
    assert np.all(np.diff(g.node_start) > 0) and g.node_start[0] == 0
    edges = naive.oriented_edges(links, strands)
    assert flat_edges(g) == edges
    assert np.all(np.diff(g.pred_ptr) >= 0) and g.pred_ptr[-1] == len(g.pred_idx)
    for v in range(g.n_nodes):
        preds = g.pred_idx[g.pred_ptr[v]:g.pred_ptr[v + 1]]
        assert np.all(preds < v), f"edge into node {v} goes backwards in the order"
        assert np.all(np.diff(preds) > 0), "predecessors must be ascending and distinct"
    succ = {u for u, _ in edges}
    assert [bool(x) for x in g.is_sink] == [k not in succ for k in keys]
    # networkx agrees that the doubled graph is a DAG and that this order is topological
    ng = nx.DiGraph(list(edges))
    ng.add_nodes_from(nodes)
    assert nx.is_directed_acyclic_graph(ng)
    pos = {k: i for i, k in enumerate(keys)}
    assert all(pos[u] < pos[v] for u, v in ng.edges)


def check_slots(g):
    """Independent liveness: node u is live on [u, last non-simple successor]; also the
    fast kernel's slots, where a merge reads its predecessor v-1 from registers."""
    from s2g.variants import fast
    _check_slots(g, g.slot, g.n_slots, keep_prev=False)
    _check_slots(g, *fast.fast_slots(g), keep_prev=True)


def _check_slots(g, slot, n_slots, keep_prev):
    n = g.n_nodes
    last = np.full(n, -1)
    for v in range(n):
        preds = g.pred_idx[g.pred_ptr[v]:g.pred_ptr[v + 1]]
        if len(preds) == 1 and preds[0] == v - 1:
            continue  # simple: reads the previous column, needs no slot
        for u in preds:
            if not (keep_prev and u == v - 1):
                last[u] = max(last[u], v)
    need = last >= 0
    assert np.array_equal(slot >= 0, need), "a node has a slot iff a non-simple successor reads it"
    assert np.all(slot < n_slots)
    by_slot = {}
    for u in np.nonzero(need)[0]:
        by_slot.setdefault(int(slot[u]), []).append((u, last[u]))
    for s, ivs in by_slot.items():
        ivs.sort()
        for (u1, e1), (u2, _) in zip(ivs, ivs[1:]):
            assert u2 > e1, f"slot {s}: node {u2} reuses it while node {u1} is live until {e1}"
    live = np.zeros(n + 1, int)
    for u in np.nonzero(need)[0]:
        live[u:last[u] + 1] += 1
    assert n_slots == int(live.max(initial=0)), "n_slots must be the maximum live at once"


@SETTINGS
@given(text=gfa_texts(), strands=st.sampled_from(["both", "forward"]))
def test_flatgraph_equals_naive_graph(text, strands):
    g = s2g.load_graph(write_tmp(text), strands=strands)
    segs, links = naive.parse_gfa_text(text)
    check_structure(g, segs, links, strands)
    check_slots(g)
    assert g.n_links == len(links) and g.n_segments == len(segs)
    assert g.strands == strands


@SETTINGS
@given(text=gfa_texts(), strands=st.sampled_from(["both", "forward"]))
def test_successors_invert_the_predecessor_lists(text, strands):
    # each (u, v) edge once, u's successors ascending: what seeded window searches walk
    from s2g.graph_core import successors
    g = s2g.load_graph(write_tmp(text), strands=strands)
    ptr, idx = successors(g)
    assert ptr.dtype == np.int64 and idx.dtype == np.int32
    want = sorted((int(u), v) for v in range(g.n_nodes)
                  for u in g.pred_idx[g.pred_ptr[v]:g.pred_ptr[v + 1]])
    got = [(u, int(v)) for u in range(g.n_nodes) for v in idx[ptr[u]:ptr[u + 1]]]
    assert got == want and ptr[-1] == len(g.pred_idx)
    assert successors(g)[1] is idx                     # made once per graph object


@pytest.mark.parametrize("branching", [1, 2, 4, 7])
def test_slots_and_order_on_simulated_graphs(tmp_path, branching):
    sg, _ = simulate.snp_graph(3000, node_len=6, branching=branching, seed=branching)
    path = str(tmp_path / "g.gfa")
    sg.write_gfa(path)
    g = s2g.load_graph(path)
    segs, links = naive.read_gfa(path)
    check_structure(g, segs, links, "both")
    check_slots(g)
    g2 = s2g.load_graph(path)
    for name in ARRAYS:
        np.testing.assert_array_equal(getattr(g, name), getattr(g2, name), err_msg=f"{name} not deterministic")
    assert g.n_slots == g2.n_slots


@settings(max_examples=15, deadline=None)
@given(text=gfa_texts())
def test_segments_and_links_agree_with_gfapy(text):
    # gfapy refuses (or merges) a repeated or mirrored L line: keep one line per link
    segs, links = naive.parse_gfa_text(text)
    seen, uniq = set(), []
    for lk in links:
        key = frozenset(naive.oriented_edges([lk]))
        if key not in seen:
            seen.add(key)
            uniq.append(lk)
    text = "".join(ln + "\n" for ln in text.splitlines() if ln.startswith("S\t"))
    text += "".join(f"L\t{a}\t{oa}\t{b}\t{ob}\t0M\n" for a, oa, b, ob in uniq)
    gg = gfapy.Gfa(text.splitlines())
    g = s2g.load_graph(write_tmp(text))
    assert g.n_segments == len(gg.segments)
    assert g.n_links == len(gg.dovetails) == len(uniq)
    gl = [(d.from_segment.name, d.from_orient, d.to_segment.name, d.to_orient) for d in gg.dovetails]
    assert flat_edges(g) == naive.oriented_edges(gl)
    for seg in gg.segments:
        v = next(v for v in range(g.n_nodes) if node_key(g, v) == (seg.name, "+"))
        want = "".join(c if c in "ACGT" else "N" for c in str(seg.sequence).upper())
        assert g.sequence(v) == want


@pytest.mark.parametrize("name,gfa,break_cycles", [
    ("mt", "mt_minigraph/MT.gfa", True),
    ("c4", "c4_gwfa/C4-90.gfa", False),
])
def test_real_graphs_agree_with_gfapy(real_data, name, gfa, break_cycles):
    path = str(real_data / gfa)
    gg = gfapy.Gfa.from_file(path, vlevel=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = s2g.load_graph(path, break_cycles=break_cycles)
    assert g.n_segments == len(gg.segments)
    assert g.n_links == len(gg.dovetails)
    seqs = {node_key(g, v)[0]: g.sequence(v) for v in range(g.n_nodes) if not g.node_rev[v]}
    for seg in gg.segments:
        want = "".join(c if c in "ACGT" else "N" for c in str(seg.sequence).upper())
        assert seqs[seg.name] == want, f"segment {seg.name}"


def test_strands_forward_keeps_plus_nodes_and_plus_plus_links(gfa_file):
    text = ("S\t1\tAC\nS\t2\tG\nS\t3\tTT\n"
            "L\t1\t+\t2\t+\t0M\nL\t1\t+\t3\t-\t0M\nL\t3\t-\t2\t-\t0M\nL\t2\t+\t3\t+\t0M\n")
    g = s2g.load_graph(gfa_file(text), strands="forward")
    assert g.n_nodes == 3 and not g.node_rev.any()
    assert flat_edges(g) == {(("1", "+"), ("2", "+")), (("2", "+"), ("3", "+"))}
    both = s2g.load_graph(gfa_file(text))
    assert both.n_nodes == 6
    with pytest.raises(GraphError, match="strands"):
        s2g.load_graph(gfa_file(text), strands="reverse")


def test_gzip_and_crlf_gfa_load_identically(tmp_path):
    text = "H\tVN:Z:1.0\nS\t1\tACGT\nS\t2\tGA\nL\t1\t+\t2\t-\t0M\n"
    plain = tmp_path / "g.gfa"
    plain.write_text(text)
    gz = tmp_path / "g.gfa.gz"
    with gzip.open(gz, "wt") as fh:
        fh.write(text)
    crlf = tmp_path / "crlf.gfa"
    crlf.write_bytes(text.replace("\n", "\r\n").encode())
    ref = s2g.load_graph(str(plain))
    for other in (gz, crlf):
        g = s2g.load_graph(str(other))
        for name in ARRAYS:
            np.testing.assert_array_equal(getattr(ref, name), getattr(g, name), err_msg=f"{other.name}: {name}")
        assert g.seg_names == ref.seg_names


def test_gfa11_with_walks_and_paths(gfa_file):
    text = ("H\tVN:Z:1.1\nS\ts1\tACG\nS\ts2\tT\nS\ts3\tGG\n"
            "L\ts1\t+\ts2\t+\t0M\nL\ts2\t+\ts3\t+\t0M\nL\ts1\t+\ts3\t-\t0M\n"
            "P\tp1\ts1+,s2+,s3+\t*\n"
            "W\tHG002\t1\tchr1\t0\t6\t>s1>s2>s3\n"
            "W\tHG002\t2\tchr1\t0\t5\t>s1<s3\n")
    path = gfa_file(text)
    g = s2g.load_graph(path, keep_paths=True)
    assert (g.n_paths, g.n_walks, g.n_segments, g.n_links) == (1, 2, 3, 3)
    assert g.paths["p1"] == [(0, 0), (1, 0), (2, 0)]
    assert g.paths["HG002#2#chr1:0-5"] == [(0, 0), (2, 1)]
    check_structure(g, *naive.parse_gfa_text(text), "both")


def test_graph_info_counts(gfa_file):
    # two components: {1,2,3} and {4}; 3 has in-degree 2 on the + strand
    text = ("S\t1\tACGT\nS\t2\tG\nS\t3\tTTA\nS\t4\tC\n"
            "L\t1\t+\t2\t+\t0M\nL\t2\t+\t3\t+\t0M\nL\t1\t+\t3\t+\t0M\n")
    info = s2g.graph_info(gfa_file(text))
    assert info["segments"] == 4 and info["links"] == 3 and info["bases"] == 9
    assert info["components"] == 2 and info["cyclic_components"] == 0
    assert info["dp_nodes"] == 8 and info["dp_bases"] == 18 and info["max_in_degree"] == 2


# ----------------------------------------------------------------- cycles

CYCLES = {
    "self-loop": ("S\t1\tAC\nS\t2\tG\nL\t1\t+\t1\t+\t0M\nL\t1\t+\t2\t+\t0M\n", {"1"}),
    "two-cycle": ("S\t1\tAC\nS\t2\tG\nS\t3\tT\nL\t1\t+\t2\t+\t0M\nL\t2\t+\t1\t+\t0M\nL\t2\t+\t3\t+\t0M\n",
                  {"1", "2"}),
    # an inversion cycle: 1+ -> 2- and 2- -> 1+ (only visible on the doubled graph)
    "inversion-cycle": ("S\t1\tAC\nS\t2\tG\nL\t1\t+\t2\t-\t0M\nL\t2\t-\t1\t+\t0M\n", {"1", "2"}),
}


@pytest.mark.parametrize("case", sorted(CYCLES))
def test_cyclic_graph_is_refused_naming_a_segment(gfa_file, case):
    text, on_cycle = CYCLES[case]
    with pytest.raises(GraphError, match="cyclic") as exc:
        s2g.load_graph(gfa_file(text))
    msg = str(exc.value)
    assert "\n" not in msg and "--break-cycles" in msg
    assert any(f"segment '{s}'" in msg for s in on_cycle), msg


@pytest.mark.parametrize("case", sorted(CYCLES))
def test_break_cycles_warns_and_yields_a_dag(gfa_file, case):
    text, _ = CYCLES[case]
    with pytest.warns(UserWarning, match=r"removed \d+ edge"):
        g = s2g.load_graph(gfa_file(text), break_cycles=True)
    assert g.broken_edges > 0
    segs, links = naive.parse_gfa_text(text)
    edges = naive.oriented_edges(links)
    kept = flat_edges(g)
    assert kept < edges and len(edges - kept) == g.broken_edges
    for v in range(g.n_nodes):
        assert np.all(g.pred_idx[g.pred_ptr[v]:g.pred_ptr[v + 1]] < v)
    check_slots(g)
    assert {node_key(g, v) for v in range(g.n_nodes)} == {(s, o) for s in segs for o in "+-"}


# ----------------------------------------------------------------- bad input

BAD = [
    ("malformed-S", "S\t1\n", r"malformed S line"),
    ("malformed-L", "S\t1\tA\nL\t1\t+\t1\n", r"malformed L line"),
    ("bad-orientation", "S\t1\tA\nS\t2\tC\nL\t1\t*\t2\t+\t0M\n", r"malformed L line"),
    ("malformed-W", "S\t1\tA\nW\tx\t0\tc\t0\n", r"malformed W line"),
    ("W-bad-step", "S\t1\tA\nW\tx\t0\tc\t0\t1\t1>\n", r"malformed walk"),
    ("unknown-segment", "S\t1\tA\nL\t1\t+\tzz\t+\t0M\n", r"unknown segment 'zz'"),
    ("path-unknown-segment", "S\t1\tA\nP\tp\t1+,q+\t*\n", r"unknown segment"),
    ("star-sequence", "S\t1\t*\n", r"has no sequence"),
    ("overlap", "S\t1\tAC\nS\t2\tG\nL\t1\t+\t2\t+\t5M\n", r"overlap '5M' is not supported"),
    ("empty", "H\tVN:Z:1.0\n", r"empty graph"),
    ("gfa2-header", "H\tVN:Z:2.0\nS\t1\t4\tACGT\n", r"GFA 2.0 is not supported"),
    ("gfa2-edge", "S\t1\tACGT\nE\te\t1+\t1+\t0\t0\t0\t0\t*\n", r"GFA2 record"),
    ("duplicate-segment", "S\t1\tA\nS\t1\tC\n", r"duplicate segment name '1'"),
    ("bad-base", "S\t1\tAC-GT\n", r"invalid character '-'"),
]


@pytest.mark.parametrize("text,pattern", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_gfa_is_a_one_line_error(gfa_file, text, pattern):
    with pytest.raises(s2g.S2GError, match=pattern) as exc:
        s2g.load_graph(gfa_file(text))
    assert isinstance(exc.value, GraphError)
    assert "\n" not in str(exc.value)


def test_headerless_gfa2_file_is_named_gfa2(gfa_file):
    """A GFA2 file without a VN:Z:2.0 header starts with GFA2 S lines (name, length,
    sequence); the error should say GFA2 rather than blame a character of the length."""
    with pytest.raises(GraphError) as exc:
        s2g.load_graph(gfa_file("S\t1\t4\tACGT\nS\t2\t2\tGG\nE\te1\t1+\t2+\t4$\t4$\t0\t0\t*\n"))
    assert "GFA2" in str(exc.value) or "GFA 2" in str(exc.value), \
        f"a GFA2 file is reported as {str(exc.value)!r} (parse_gfa reads its length column as the sequence)"


def test_blunt_overlaps_are_accepted(gfa_file):
    for ov in ("0M", "*", "0M0I"):
        g = s2g.load_graph(gfa_file(f"S\t1\tAC\nS\t2\tG\nL\t1\t+\t2\t+\t{ov}\n"))
        assert g.n_links == 1


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(GraphError, match="no such file"):
        s2g.load_graph(str(tmp_path / "nope.gfa"))
    with pytest.raises(GraphError, match="is a directory"):
        s2g.load_graph(str(tmp_path))


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root can read any file")
def test_unreadable_file(gfa_file):
    path = gfa_file("S\t1\tA\n")
    os.chmod(path, 0)
    try:
        with pytest.raises(GraphError, match="cannot read"):
            s2g.load_graph(path)
    finally:
        os.chmod(path, 0o644)


def test_containment_and_jump_lines_are_reported_not_aligned(gfa_file):
    text = ("H\tVN:Z:1.2\nS\t1\tACGT\nS\t2\tGGA\nL\t1\t+\t2\t+\t0M\n"
            "J\t2\t+\t1\t+\t*\nC\t1\t+\t2\t+\t1\t0M\n")
    with pytest.warns(UserWarning, match=r"ignored 1 C \(containment\) line\(s\), 1 J \(jump\)"):
        g = s2g.load_graph(gfa_file(text))
    assert g.n_links == 1                     # the jump 2 -> 1 did not become an edge


def _both_ways(path, **kw):
    """The graph at ``path`` loaded as Python (small-graph path) and compiled."""
    from s2g import config
    keep = config.settings().py_nodes
    try:
        config.configure(py_nodes=1 << 40)
        py = s2g.load_graph(path, **kw)
        config.configure(py_nodes=-1)
        jit = s2g.load_graph(path, **kw)
    finally:
        config.configure(py_nodes=keep)
    for name in ARRAYS:
        a, b = getattr(py, name), getattr(jit, name)
        assert a.dtype == b.dtype, name
        np.testing.assert_array_equal(a, b, err_msg=name)
    assert py.n_slots == jit.n_slots and isinstance(py.n_slots, int)


@SETTINGS
@given(text=gfa_texts(), strands=st.sampled_from(["both", "forward"]))
def test_small_graphs_load_as_python_as_compiled(text, strands):
    """Graphs up to py_nodes nodes (the knob) are built by the loops' Python originals (no Numba
    before the first GPU launch): the same FlatGraph as the compiled loops."""
    _both_ways(write_tmp(text), strands=strands)


@pytest.mark.parametrize("gfa", ["mt_minigraph/MT.gfa", "drb1_odgi/DRB1-3123.gfa",
                                 "lpa_odgi/LPA.gfa"])
def test_real_graphs_load_as_python_as_compiled(real_data, gfa):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _both_ways(str(real_data / gfa), break_cycles=True)


def test_small_graph_and_fast_tables_need_no_numba():
    """Loading a small graph, reading reads and building the fast kernel's host tables
    compile (or load) no Numba function, so Numba's CPU target can start in the first
    kernel's shadow (s2g._numba.start_cpu_target); S2G_CONFIG=py_nodes=-1 (everything compiled)
    shows the check can fail."""
    import subprocess
    import sys
    code = (
        "import sys\n"
        "from numba.core.registry import CPUDispatcher\n"
        "from s2g.graph import load_graph\n"
        "from s2g.reads import iter_read_batches\n"
        "from s2g.scoring import Scoring\n"
        "from s2g.variants import fast\n"
        "g = load_graph(sys.argv[1])\n"
        "next(iter(iter_read_batches(sys.argv[2], 100)))\n"
        "slot, n = fast.fast_slots(g)\n"
        "a, b, o, e = Scoring().as_tuple()\n"
        "fast.column_tables(g.base, g.node_start, g.pred_ptr, g.pred_idx, slot, g.is_sink,"
        " 0, o, e, n)\n"
        "fast.column_cuts(g)\n"
        "print(sorted(f'{m}.{k}' for m, mod in list(sys.modules.items()) if m.startswith('s2g')"
        " for k, v in vars(mod).items() if isinstance(v, CPUDispatcher) and v.signatures))\n")
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    args = [sys.executable, "-c", code, os.path.join(repo, "graphs", "example.gfa"),
            os.path.join(repo, "graphs", "example.fq")]
    out = subprocess.run(args, capture_output=True, text=True, check=True, cwd=repo).stdout
    assert out.strip() == "[]"
    env = dict(os.environ, S2G_CONFIG="py_nodes=-1")
    out = subprocess.run(args, capture_output=True, text=True, check=True, cwd=repo, env=env).stdout
    assert "s2g.graph_core.kahn_lifo" in out
