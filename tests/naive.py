"""Slow, obvious reference aligner (STYLE.md habit 9; stumpy's ``tests/naive.py``).

Independent of s2g's graph and DP code on purpose: it has its own tiny GFA parser,
builds a networkx DiGraph with **one node per base** of both strands, orders it with
``nx.topological_sort`` and runs the recurrence of ARCHITECTURE.md in plain Python
with dicts. If s2g's flattening (orientation, mirror links, topological order,
node_bound slots) or its kernels go wrong, the two disagree.

Semantics (ARCHITECTURE.md, "Alignment semantics"): match +a, mismatch -b, a gap of
length k costs o + k*e, N mismatches everything. A base node with no predecessor reads
a *virtual* column: H[0] = 0, H[i] = 0 (local) or -(o + e*i) (semiglobal, global),
E = -inf. Row 0 of a real column: H = 0 (local, semiglobal) or, in global mode, the
cost of deleting the graph prefix from a source through this base.

Also here: :func:`linear_align`, a textbook Gotoh DP of one read against one string
(checked against parasail in test_v0.py), and :func:`enumerate_paths`, every
source-to-sink walk of the doubled graph, for the path-enumeration oracle.
"""
from __future__ import annotations

import gzip

import networkx as nx

NEG = float("-inf")
COMP = {"A": "T", "C": "G", "G": "C", "T": "A", "N": "N"}


# ------------------------------------------------------------------ tiny GFA parser

def parse_gfa_text(text: str):
    """(segments {name: seq}, links [(a, oa, b, ob)]) from GFA1 text; S and L lines only."""
    segs, links = {}, []
    for line in text.splitlines():
        f = line.split("\t")
        if f[0] == "S":
            segs[f[1]] = "".join(c if c in "ACGT" else "N" for c in f[2].upper())
        elif f[0] == "L":
            links.append((f[1], f[2], f[3], f[4]))
    return segs, links


def read_gfa(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as fh:
        return parse_gfa_text(fh.read())


def revcomp(s: str) -> str:
    return "".join(COMP.get(c, "N") for c in reversed(s))


def flip(o: str) -> str:
    return "-" if o == "+" else "+"


def oriented_seq(segs, name, strand):
    return segs[name] if strand == "+" else revcomp(segs[name])


def oriented_edges(links, strands="both"):
    """Segment-level edges of the doubled graph: each link and its mirror."""
    edges = set()
    for a, oa, b, ob in links:
        edges.add(((a, oa), (b, ob)))
        edges.add(((b, flip(ob)), (a, flip(oa))))
    if strands == "forward":
        edges = {(u, v) for u, v in edges if u[1] == "+" and v[1] == "+"}
    return edges


# ------------------------------------------------------------------ base-level graph

def base_graph(segs, links, strands="both"):
    """networkx DiGraph of single bases; node = (segment, strand, offset), attr 'base'."""
    g = nx.DiGraph()
    for name, seq in segs.items():
        for strand in ("+", "-") if strands == "both" else ("+",):
            s = oriented_seq(segs, name, strand)
            for k, c in enumerate(s):
                g.add_node((name, strand, k), base=c)
                if k:
                    g.add_edge((name, strand, k - 1), (name, strand, k))
    for (a, oa), (b, ob) in oriented_edges(links, strands):
        g.add_edge((a, oa, len(segs[a]) - 1), (b, ob, 0))
    return g


def sub(x: str, y: str, a: int, b: int) -> int:
    return a if (x == y and x != "N") else -b


def graph_align(g: nx.DiGraph, read: str, mode: str, a: int, b: int, o: int, e: int):
    """Optimal score and the set of optimal end cells ``(segment, strand, offset, row)``.

    Returns ``(None, set())`` when there is no alignment: local with best <= 0.
    """
    m = len(read)
    H, E = {}, {}
    best, ends = NEG, set()

    def virtual():
        vh = [0] + [0 if mode == "local" else -(o + e * i) for i in range(1, m + 1)]
        return vh, [NEG] * (m + 1)

    for v in nx.topological_sort(g):
        preds = list(g.predecessors(v))
        cols = [(H[p], E[p]) for p in preds] if preds else [virtual()]
        h = [NEG] * (m + 1)
        ee = [NEG] * (m + 1)
        # E: a gap in the read (graph base v deleted)
        for i in range(m + 1):
            ee[i] = max(max(ph[i] - o - e, pe[i] - e) for ph, pe in cols)
        if mode == "global":
            h[0] = ee[0]
        else:
            h[0] = 0
            ee[0] = NEG
        f = NEG
        for i in range(1, m + 1):
            f = max(h[i - 1] - o - e, f - e)
            diag = max(ph[i - 1] for ph, _ in cols) + sub(read[i - 1], g.nodes[v]["base"], a, b)
            h[i] = max(diag, ee[i], f)
            if mode == "local":
                h[i] = max(h[i], 0)
        H[v], E[v] = h, ee
        if mode == "local":
            cand = [(h[i], i) for i in range(1, m + 1)]
        elif mode == "semiglobal" or g.out_degree(v) == 0:
            cand = [(h[m], m)]
        else:
            cand = []
        for s, i in cand:
            if s > best:
                best, ends = s, {v + (i,)}
            elif s == best:
                ends.add(v + (i,))
    if mode == "local" and best <= 0:
        return None, set()
    return best, ends


def align_gfa(path, read, mode="local", a=2, b=4, o=4, e=2, strands="both"):
    segs, links = read_gfa(path)
    return graph_align(base_graph(segs, links, strands), read, mode, a, b, o, e)


# ------------------------------------------------------------------ linear Gotoh DP

def linear_align(read: str, ref: str, mode: str, a: int, b: int, o: int, e: int):
    """Textbook affine DP of ``read`` against the whole string ``ref``.

    local: Smith-Waterman (None when best <= 0); semiglobal: the whole read, free
    ends on ``ref``; global: Needleman-Wunsch. Gap of length k costs o + k*e.
    """
    m, n = len(read), len(ref)
    H = [[NEG] * (n + 1) for _ in range(m + 1)]
    E = [[NEG] * (n + 1) for _ in range(m + 1)]  # deletion of ref bases (moves along j)
    F = [[NEG] * (n + 1) for _ in range(m + 1)]  # insertion of read bases (moves along i)
    H[0][0] = 0
    for j in range(1, n + 1):
        H[0][j] = -(o + e * j) if mode == "global" else 0
        E[0][j] = H[0][j] if mode == "global" else NEG
    for i in range(1, m + 1):
        H[i][0] = 0 if mode == "local" else -(o + e * i)
        F[i][0] = H[i][0]
    best = 0 if mode == "local" else NEG
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            E[i][j] = max(H[i][j - 1] - o - e, E[i][j - 1] - e)
            F[i][j] = max(H[i - 1][j] - o - e, F[i - 1][j] - e)
            H[i][j] = max(H[i - 1][j - 1] + sub(read[i - 1], ref[j - 1], a, b), E[i][j], F[i][j])
            if mode == "local":
                H[i][j] = max(H[i][j], 0)
                best = max(best, H[i][j])
    if mode == "local":
        return best if best > 0 else None
    if mode == "semiglobal":
        return max(H[m][j] for j in range(n + 1))
    return H[m][n]


# ------------------------------------------------------------------ path enumeration

def enumerate_paths(segs, links, strands="both"):
    """Every source-to-sink walk of the doubled segment graph, as [(name, strand), ...]."""
    nodes = [(s, "+") for s in segs] + ([(s, "-") for s in segs] if strands == "both" else [])
    g = nx.DiGraph()
    g.add_nodes_from(nodes)
    g.add_edges_from(oriented_edges(links, strands))
    out = []
    for src in (v for v in g if g.in_degree(v) == 0):
        stack = [[src]]
        while stack:
            p = stack.pop()
            succ = list(g.successors(p[-1]))
            if not succ:
                out.append(p)
            for w in succ:
                stack.append(p + [w])
    return out


def spell(segs, walk) -> str:
    return "".join(oriented_seq(segs, n, s) for n, s in walk)


def best_over_paths(segs, links, read, mode, a, b, o, e, strands="both"):
    """max over enumerated full walks of :func:`linear_align` (None if no local hit)."""
    scores = [linear_align(read, spell(segs, p), mode, a, b, o, e)
              for p in enumerate_paths(segs, links, strands)]
    scores = [s for s in scores if s is not None]
    return max(scores) if scores else None


# ------------------------------------------------------------------ GAF checker

def _cigar_ops(cigar: str):
    ops, num = [], ""
    for ch in cigar:
        if ch.isdigit():
            num += ch
        else:
            assert num and ch in "=XID", f"bad CIGAR {cigar!r}"
            ops.append((int(num), ch))
            num = ""
    assert not num, f"bad CIGAR {cigar!r}"
    return ops


def parse_gaf_path(path: str):
    steps, k = [], 0
    while k < len(path):
        assert path[k] in "<>", f"bad GAF path {path!r}"
        e = k + 1
        while e < len(path) and path[e] not in "<>":
            e += 1
        steps.append((path[k + 1:e], "+" if path[k] == ">" else "-"))
        k = e
    return steps


def rescore(cigar: str, a: int, b: int, o: int, e: int) -> int:
    s = 0
    for n, op in _cigar_ops(cigar):
        s += {"=": a * n, "X": -b * n}.get(op, -(o + e * n))
    return s


def check_gaf_line(line: str, segs, links, read: str, mode: str, a, b, o, e,
                   strands="both", expected_score=None):
    """Check every invariant of one aligned GAF line against the GFA text and the read.

    Returns the parsed fields. Independent of s2g: walks, CIGAR and score are
    recomputed here from the GFA segments and links.
    """
    f = line.rstrip("\n").split("\t")
    assert len(f) >= 12, f"GAF line has {len(f)} columns: {line!r}"
    qlen, qs, qe = int(f[1]), int(f[2]), int(f[3])
    assert qlen == len(read)
    assert f[4] == "+" and f[5] != "*", f"not an aligned line: {line!r}"
    tags = dict((t[:2], t[5:]) for t in f[12:])
    assert {"AS", "NM", "cg"} <= set(tags), f"missing tags in {line!r}"
    score, cigar = int(tags["AS"]), tags["cg"]
    if expected_score is not None:
        assert score == expected_score, f"AS {score} != optimal {expected_score}"
    walk = parse_gaf_path(f[5])
    edges = oriented_edges(links, strands)
    for s, st in walk:
        assert s in segs, f"unknown segment {s!r} in path"
        assert strands == "both" or st == "+", "reverse step with strands='forward'"
    for u, v in zip(walk, walk[1:]):
        assert (u, v) in edges, f"{u}->{v} is not a link of the GFA (path {f[5]})"
    ref = spell(segs, walk)
    plen, ps, pe = int(f[6]), int(f[7]), int(f[8])
    assert plen == len(ref)
    assert 0 <= qs <= qe <= qlen and 0 <= ps <= pe <= plen
    first_len, last_len = len(segs[walk[0][0]]), len(segs[walk[-1][0]])
    if pe > ps:  # the path has no unused first or last step
        assert ps < first_len and pe > plen - last_len, f"unused end steps in {line!r}"
    ops = _cigar_ops(cigar)
    assert sum(n for n, op in ops if op in "=XI") == qe - qs, "CIGAR does not consume qend-qstart"
    assert sum(n for n, op in ops if op in "=XD") == pe - ps, "CIGAR does not consume the path span"
    qi, pj, nx_, neq = qs, ps, 0, 0
    for n, op in ops:
        for _ in range(n):
            if op in "=X":
                same = read[qi] == ref[pj] and read[qi] in "ACGT"
                assert same == (op == "="), f"{op} at read {qi} / path {pj}: {read[qi]} vs {ref[pj]}"
                qi += 1
                pj += 1
            elif op == "I":
                qi += 1
            else:
                pj += 1
        nx_ += n if op in "XID" else 0
        neq += n if op == "=" else 0
    assert rescore(cigar, a, b, o, e) == score, f"CIGAR {cigar} rescores to {rescore(cigar, a, b, o, e)}, AS {score}"
    assert int(f[9]) == neq and int(f[10]) == sum(n for n, _ in ops) and int(tags["NM"]) == nx_
    assert f[11] == "255"
    if mode == "local":
        assert ops[0][1] == "=" and ops[-1][1] == "=", f"local CIGAR {cigar} must start and end with '='"
    else:
        assert qs == 0 and qe == qlen, "semiglobal/global must consume the whole read"
    if mode == "global":
        assert ps == 0 and pe == plen, "global must span the whole walk"
        preds = {v for _, v in edges}
        succs = {u for u, _ in edges}
        assert walk[0] not in preds and walk[-1] not in succs, "global walk is not source-to-sink"
    return dict(score=score, walk=walk, cigar=cigar, qstart=qs, qend=qe, ps=ps, pe=pe)


# ------------------------------------------------------------------ random inputs

def random_dag_gfa(draw, st, max_segs=5, max_len=5, with_n=True):
    """Draw a small GFA (text) whose doubled graph is acyclic: links are drawn at
    random (all four orientations, incl. inversions) and kept only while the doubled
    graph stays a DAG. Call from a hypothesis ``@composite``."""
    n = draw(st.integers(1, max_segs))
    # mostly ACGT; N, a lower-case base and another IUPAC code (R -> N) now and then
    alphabet = st.sampled_from("ACGTACGTACGTNaR" if with_n else "ACGT")
    segs = {}
    for k in range(n):
        segs[str(k + 1)] = "".join(draw(st.lists(alphabet, min_size=1, max_size=max_len)))
    names = list(segs)
    cand = draw(st.lists(st.tuples(st.sampled_from(names), st.sampled_from("+-"),
                                   st.sampled_from(names), st.sampled_from("+-")),
                         max_size=2 * n))
    links = []
    g = nx.DiGraph()
    g.add_nodes_from((s, o) for s in names for o in "+-")
    for lk in cand:
        new = oriented_edges([lk])
        g.add_edges_from(new)
        if nx.is_directed_acyclic_graph(g):
            links.append(lk)
        else:
            g.remove_edges_from(new - oriented_edges(links))
    text = "H\tVN:Z:1.0\n" + "".join(f"S\t{k}\t{v}\n" for k, v in segs.items())
    text += "".join(f"L\t{a}\t{oa}\t{b}\t{ob}\t0M\n" for a, oa, b, ob in links)
    return text


def align_gfa_text(text, read, mode="local", a=2, b=4, o=4, e=2, strands="both"):
    segs, links = parse_gfa_text(text)
    return graph_align(base_graph(segs, links, strands), read, mode, a, b, o, e)
