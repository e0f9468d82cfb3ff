"""Synthetic SNP graphs and reads (the HGA methodology the design's benchmarks use).

Graph: a backbone of nodes whose lengths are uniform in [L/2, 3L/2] (mean ``L``),
separated by variant sites; each site has ``branching`` alternative single-base
allele nodes (distinct bases while ``branching <= 4``; beyond that bases repeat),
each linked from the previous backbone node and to the next, so the in-degree of the
next backbone node is ``branching``. Building stops once ``total_bases`` are placed.
A ``P`` line ``ref`` follows the first allele of each site.

Reads: a random walk through the forward graph from a uniformly random start base,
``read_len`` bases long (a start whose walk runs off the graph end is redrawn, up to
100 times; only a graph shorter than the read gives shorter reads), each base substituted with
probability ``error_rate``; a fraction ``reverse_fraction`` is reverse-complemented.
The truth TSV gives read name, strand, walk (``>s1>s2...``, forward orientation),
offset of the first base in the first segment, and the number of substitutions.

Everything is drawn from ``numpy.random.default_rng(seed)``: same seed, same files.
"""
from __future__ import annotations

import warnings

import numpy as np

_BASES = "ACGT"
_COMP = str.maketrans("ACGT", "TGCA")


class SimGraph:
    """A simulated SNP graph in memory: segment sequences and forward successor lists."""

    def __init__(self, names, seqs, succ):
        self.names, self.seqs, self.succ = names, seqs, succ

    @property
    def total_bases(self) -> int:
        return sum(len(s) for s in self.seqs)

    def write_gfa(self, path, ref_path=None, paths=None):
        """GFA 1.0 with S and L lines, a ``ref`` P line for ``ref_path`` and one P line per
        ``paths`` item (name -> node list)."""
        paths = dict(paths or {})
        if ref_path:
            paths = {"ref": ref_path, **paths}
        with open(path, "w") as fh:
            fh.write("H\tVN:Z:1.0\n")
            for n, s in zip(self.names, self.seqs):
                fh.write(f"S\t{n}\t{s}\n")
            for u, vs in enumerate(self.succ):
                for v in vs:
                    fh.write(f"L\t{self.names[u]}\t+\t{self.names[v]}\t+\t0M\n")
            for name, nodes in paths.items():
                fh.write(f"P\t{name}\t" + ",".join(self.names[v] + "+" for v in nodes) + "\t*\n")


def repeat_backbone(total_bases: int, copies: int = 50, repeat_len: int = 300,
                    divergence=(0.02, 0.15), seed: int = 0) -> str:
    """A random sequence of ``total_bases`` holding ``copies`` Alu-like copies of one random
    ``repeat_len`` bp element, each with its own share of substitutions drawn uniformly from
    ``divergence`` (a repeat family's members differ from their consensus by a few to 15%),
    at random non-overlapping places: the backbone of :func:`snp_graph` for MAPQ tests."""
    rng = np.random.default_rng(seed)
    if copies * repeat_len > total_bases:
        raise ValueError("the copies do not fit in total_bases")
    seq = rng.integers(0, 4, total_bases)
    elem = rng.integers(0, 4, repeat_len)
    gaps = rng.multinomial(total_bases - copies * repeat_len, np.ones(copies + 1) / (copies + 1))
    at = 0
    for c in range(copies):
        at += int(gaps[c])
        cp = elem.copy()
        mut = rng.random(repeat_len) < rng.uniform(*divergence)
        cp[mut] = (cp[mut] + rng.integers(1, 4, int(mut.sum()))) % 4
        seq[at:at + repeat_len] = cp
        at += repeat_len
    return "".join(np.array(list(_BASES))[seq])


def snp_graph(total_bases: int, node_len: float = 50, branching: int = 2, seed: int = 0,
              backbone: str | None = None):
    """Build a :class:`SimGraph` (see module doc); returns (graph, reference node list).
    ``backbone``: the backbone nodes' bases, in order (random when None; at least
    ``total_bases`` long)."""
    if total_bases < 1 or node_len < 1 or branching < 1:
        raise ValueError("total_bases, node_len and branching must be >= 1")
    rng = np.random.default_rng(seed)
    at = 0
    names, seqs, succ, ref = [], [], [], []
    placed = 0
    prev_layer = []
    while placed < total_bases:
        lo, hi = max(1, int(node_len * 0.5)), max(1, int(node_len * 1.5))
        ln = int(min(rng.integers(lo, hi + 1), total_bases - placed))
        v = len(names)
        names.append(str(v + 1))
        if backbone is None:
            seqs.append("".join(rng.choice(list(_BASES), ln)))
        else:
            seqs.append(backbone[at:at + ln])
            at += ln
        succ.append([])
        for u in prev_layer:
            succ[u].append(v)
        ref.append(v)
        placed += ln
        if placed >= total_bases:
            break
        k = min(branching, total_bases - placed)
        perm = rng.permutation(4)
        layer = []
        for t in range(k):
            w = len(names)
            names.append(str(w + 1))
            seqs.append(_BASES[perm[t % 4]] if t < 4 else _BASES[rng.integers(4)])
            succ.append([])
            succ[v].append(w)
            layer.append(w)
        ref.append(layer[0])
        placed += k
        prev_layer = layer
    return SimGraph(names, seqs, succ), ref


def sample_reads(g: SimGraph, n_reads: int, read_len: int, error_rate: float = 0.01,
                 reverse_fraction: float = 0.5, seed: int = 1, prefix: str = "read"):
    """Reads from random forward walks; returns a list of (name, seq, truth dict)."""
    rng = np.random.default_rng(seed)
    lens = np.array([len(s) for s in g.seqs])
    cum = np.concatenate([[0], np.cumsum(lens)])
    out = []
    for r in range(n_reads):
        for _attempt in range(100):   # redraw starts whose walk runs off the graph end
            pos = int(rng.integers(0, cum[-1]))
            v = int(np.searchsorted(cum, pos, side="right") - 1)
            off = pos - int(cum[v])
            walk, seq, start_off = [v], [], off
            while True:
                seq.append(g.seqs[v][off:off + read_len - sum(map(len, seq))])
                if sum(map(len, seq)) >= read_len or not g.succ[v]:
                    break
                v = int(g.succ[v][rng.integers(len(g.succ[v]))])
                off = 0
                walk.append(v)
            if sum(map(len, seq)) >= read_len:
                break
        s = np.array(list("".join(seq)))
        mut = rng.random(len(s)) < error_rate
        n_sub = int(mut.sum())
        for i in np.nonzero(mut)[0]:
            s[i] = _BASES[(_BASES.index(s[i]) + int(rng.integers(1, 4))) % 4]
        s = "".join(s)
        strand = "-" if rng.random() < reverse_fraction else "+"
        if strand == "-":
            s = s.translate(_COMP)[::-1]
        name = f"{prefix}{r + 1}"
        out.append((name, s, {"strand": strand, "walk": "".join(">" + g.names[w] for w in walk),
                              "offset": start_off, "substitutions": n_sub}))
    short = [len(s) for _, s, _ in out if len(s) < read_len]
    if short:
        warnings.warn(f"{len(short)} of {n_reads} reads are shorter than the read length "
                      f"{read_len} (the graph has no walk that long; longest read "
                      f"{max(len(s) for _, s, _ in out)} bases): use more --total-bases",
                      stacklevel=2)
    return out


def write_reads(reads, fastq_path, truth_path=None):
    with open(fastq_path, "w") as fh:
        for name, seq, _ in reads:
            fh.write(f"@{name}\n{seq}\n+\n{'I' * len(seq)}\n")
    if truth_path:
        with open(truth_path, "w") as fh:
            fh.write("read\tstrand\twalk\toffset\tsubstitutions\n")
            for name, _, t in reads:
                fh.write(f"{name}\t{t['strand']}\t{t['walk']}\t{t['offset']}\t{t['substitutions']}\n")


def simulate(prefix: str, total_bases: int = 20_000, node_len: float = 50, branching: int = 2,
             n_reads: int = 1000, read_len: int = 150, error_rate: float = 0.01,
             reverse_fraction: float = 0.5, seed: int = 0):
    """Write ``prefix.gfa``, ``prefix.fq`` and ``prefix.truth.tsv``; returns their paths."""
    g, ref = snp_graph(total_bases, node_len, branching, seed)
    g.write_gfa(prefix + ".gfa", ref)
    reads = sample_reads(g, n_reads, read_len, error_rate, reverse_fraction, seed + 1)
    write_reads(reads, prefix + ".fq", prefix + ".truth.tsv")
    return prefix + ".gfa", prefix + ".fq", prefix + ".truth.tsv"
