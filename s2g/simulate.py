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

Paired-end reads (:func:`sample_pairs`, :func:`simulate_pairs`): a fragment of
``round(Normal(frag_mean, frag_sd))`` bases (at least ``read_len``) drawn as a read is,
read in Illumina FR orientation (mate 1 = the fragment's first ``read_len`` bases,
mate 2 = the reverse complement of its last ``read_len``), from the reverse strand with
probability ``reverse_fraction``. Mates are named ``pairN/1`` and ``pairN/2``; the truth
TSV has a row per mate (the single-end columns for that mate, then the pair's).

Everything is drawn from ``numpy.random.default_rng(seed)``: same seed, same files.
"""
from __future__ import annotations

import warnings

import numpy as np

_BASES = "ACGT"
_BASE_BYTES = np.frombuffer(_BASES.encode(), np.uint8)
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
            # (= "".join(rng.choice(list(_BASES), ln)), the same draws, without a numpy
            # string a base: 1 Gbp was ~90 s of `s2g simulate`)
            seqs.append(_BASE_BYTES[rng.integers(0, 4, ln)].tobytes().decode())
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


def _sample_walk(g: SimGraph, rng, cum, length: int):
    """A random forward walk spelling ``length`` bases from a uniformly random start base
    (a start whose walk runs off the graph end is redrawn, up to 100 times; on a graph
    with no walk that long the last, shorter one is kept): (walk node list, offset of
    the first base in the first node, spelled sequence)."""
    for _attempt in range(100):   # redraw starts whose walk runs off the graph end
        pos = int(rng.integers(0, cum[-1]))
        v = int(np.searchsorted(cum, pos, side="right") - 1)
        off = pos - int(cum[v])
        walk, seq, start_off = [v], [], off
        while True:
            seq.append(g.seqs[v][off:off + length - sum(map(len, seq))])
            if sum(map(len, seq)) >= length or not g.succ[v]:
                break
            v = int(g.succ[v][rng.integers(len(g.succ[v]))])
            off = 0
            walk.append(v)
        if sum(map(len, seq)) >= length:
            break
    return walk, start_off, "".join(seq)


def _substitute(seq: str, rng, error_rate: float):
    """``seq`` with each base substituted (by one of the 3 others) with probability
    ``error_rate``: (new sequence, number of substitutions)."""
    mut = np.flatnonzero(rng.random(len(seq)) < error_rate)
    if len(mut) == 0:
        return seq, 0
    s = list(seq)           # (a numpy array of 1-character strings and "".join over it
    for i in mut:           # took 30 us a 150 bp read: 1M reads ~30 s of `s2g simulate`)
        s[i] = _BASES[(_BASES.index(s[i]) + int(rng.integers(1, 4))) % 4]
    return "".join(s), len(mut)


def _walk_str(g: SimGraph, walk) -> str:
    return "".join(">" + g.names[w] for w in walk)


def sample_reads(g: SimGraph, n_reads: int, read_len: int, error_rate: float = 0.01,
                 reverse_fraction: float = 0.5, seed: int = 1, prefix: str = "read"):
    """Reads from random forward walks; returns a list of (name, seq, truth dict)."""
    rng = np.random.default_rng(seed)
    lens = np.array([len(s) for s in g.seqs])
    cum = np.concatenate([[0], np.cumsum(lens)])
    out = []
    for r in range(n_reads):
        walk, start_off, seq = _sample_walk(g, rng, cum, read_len)
        s, n_sub = _substitute(seq, rng, error_rate)
        strand = "-" if rng.random() < reverse_fraction else "+"
        if strand == "-":
            s = s.translate(_COMP)[::-1]
        name = f"{prefix}{r + 1}"
        out.append((name, s, {"strand": strand, "walk": _walk_str(g, walk),
                              "offset": start_off, "substitutions": n_sub}))
    short = [len(s) for _, s, _ in out if len(s) < read_len]
    if short:
        warnings.warn(f"{len(short)} of {n_reads} reads are shorter than the read length "
                      f"{read_len} (the graph has no walk that long; longest read "
                      f"{max(len(s) for _, s, _ in out)} bases): use more --total-bases",
                      stacklevel=2)
    return out


def _sub_walk(g: SimGraph, walk, offset: int, start: int, length: int):
    """The part of the spelled walk (``walk`` from ``offset`` in its first node) that
    covers bases ``[start, start + length)``: (node list, offset in its first node)."""
    at, sub, sub_off = 0, [], 0
    for k, v in enumerate(walk):
        n = len(g.seqs[v]) - (offset if k == 0 else 0)     # bases this node adds
        if at + n > start and at < start + length:
            if not sub:
                sub_off = (offset if k == 0 else 0) + start - at
            sub.append(v)
        at += n
    return sub, sub_off


def sample_pairs(g: SimGraph, n_pairs: int, read_len: int, frag_mean: float = 300,
                 frag_sd: float = 30, error_rate: float = 0.01, reverse_fraction: float = 0.5,
                 seed: int = 1, prefix: str = "pair"):
    """Paired-end reads (Illumina FR) from random forward walks; returns a list of
    ``((name1, seq1, truth1), (name2, seq2, truth2))``, one item per pair.

    Fragment: length ``round(Normal(frag_mean, frag_sd))`` clamped to at least
    ``read_len``, spelled by a random forward walk exactly as :func:`sample_reads` draws
    one (so at most as long as the longest walk: on a graph shorter than the fragment,
    the fragment and, below ``read_len``, its mates are shorter, with a warning). With
    probability ``reverse_fraction`` the fragment is read from the reverse strand.
    Mate 1 is the first ``read_len`` bases of the fragment as sequenced (its strand),
    mate 2 the reverse complement of its last ``read_len`` bases; so on the forward
    strand mate 1 is ``+`` at the fragment's left end and mate 2 ``-`` at its right end,
    and for a reverse fragment mate 1 is ``-`` at the right end and mate 2 ``+`` at the
    left. Each mate gets its own substitutions (probability ``error_rate`` per base).

    Names: ``<prefix><k>/1`` and ``<prefix><k>/2`` (k = 1, 2, ...): the base name
    ``<prefix><k>`` is shared by both mates (:func:`s2g.reads.pair_base_name` strips the
    ``/1`` ``/2``; the readers keep the names as written, so a GAF line names its mate).
    Each mate's truth dict holds :func:`sample_reads`' keys, for that mate alone
    (``strand``, ``walk``: the nodes it covers, forward orientation, ``offset`` of its
    first forward base in the first of them, ``substitutions``), plus ``pair`` (the base
    name), ``mate`` (1 or 2), ``frag_len`` (bases actually spelled), ``frag_strand``,
    ``frag_start`` (where the mate's forward-strand first base lies in the fragment,
    0-based, forward orientation: 0 at the left end, ``frag_len - len`` at the right
    end), and ``frag_walk`` / ``frag_offset`` (the whole fragment, as ``walk`` /
    ``offset``). :func:`write_reads` writes them as columns of the truth TSV, keyed by
    the mate's full name; :func:`read_truth` reads it back.
    """
    if n_pairs < 0 or read_len < 1:
        raise ValueError("n_pairs must be >= 0 and read_len >= 1")
    if not frag_mean > 0 or not frag_sd >= 0:
        raise ValueError("frag_mean must be > 0 and frag_sd >= 0")
    rng = np.random.default_rng(seed)
    lens = np.array([len(s) for s in g.seqs])
    cum = np.concatenate([[0], np.cumsum(lens)])
    out = []
    for k in range(n_pairs):
        frag_len = max(read_len, int(round(rng.normal(frag_mean, frag_sd))))
        walk, frag_off, frag = _sample_walk(g, rng, cum, frag_len)
        frag_len = len(frag)
        m = min(read_len, frag_len)
        frag_strand = "-" if rng.random() < reverse_fraction else "+"
        base = f"{prefix}{k + 1}"
        left, right = (1, 2) if frag_strand == "+" else (2, 1)     # mate at each end
        mates = {}
        for mate, start in ((left, 0), (right, frag_len - m)):
            s, n_sub = _substitute(frag[start:start + m], rng, error_rate)
            strand = "+" if mate == left else "-"
            if strand == "-":
                s = s.translate(_COMP)[::-1]
            sub, sub_off = _sub_walk(g, walk, frag_off, start, m)
            mates[mate] = (f"{base}/{mate}", s, {
                "strand": strand, "walk": _walk_str(g, sub), "offset": sub_off,
                "substitutions": n_sub, "pair": base, "mate": mate, "frag_len": frag_len,
                "frag_strand": frag_strand, "frag_start": start,
                "frag_walk": _walk_str(g, walk), "frag_offset": frag_off})
        out.append((mates[1], mates[2]))
    short = [t["frag_len"] for (_, _, t), _ in out if t["frag_len"] < read_len]
    if short:
        warnings.warn(f"{len(short)} of {n_pairs} fragments are shorter than the read length "
                      f"{read_len}, and so are their mates (the graph has no walk that long; "
                      f"longest fragment {max(t['frag_len'] for (_, _, t), _ in out)} bases): "
                      "use more --total-bases", stacklevel=2)
    return out


#: the truth TSV's columns: every read's, then (paired reads only) its pair's
TRUTH_COLUMNS = ("strand", "walk", "offset", "substitutions")
PAIR_TRUTH_COLUMNS = ("pair", "mate", "frag_len", "frag_strand", "frag_start",
                      "frag_walk", "frag_offset")
_INT_COLUMNS = {"offset", "substitutions", "mate", "frag_len", "frag_start", "frag_offset"}


def write_reads(reads, fastq_path, truth_path=None):
    """Write ``(name, seq, truth)`` items as FASTQ, and their truth as a TSV (columns
    ``read`` and :data:`TRUTH_COLUMNS`, then :data:`PAIR_TRUTH_COLUMNS` when the first
    read's truth has them: paired reads)."""
    reads = list(reads)
    with open(fastq_path, "w") as fh:
        for name, seq, _ in reads:
            fh.write(f"@{name}\n{seq}\n+\n{'I' * len(seq)}\n")
    if truth_path:
        _write_truth(reads, truth_path)


def _write_truth(reads, truth_path):
    cols = TRUTH_COLUMNS + (PAIR_TRUTH_COLUMNS if reads and "pair" in reads[0][2] else ())
    with open(truth_path, "w") as fh:
        fh.write("\t".join(("read",) + cols) + "\n")
        for name, _, t in reads:
            fh.write("\t".join([name] + [str(t[c]) for c in cols]) + "\n")


def write_pairs(pairs, fastq1, fastq2=None, truth_path=None):
    """Write :func:`sample_pairs`' pairs as two FASTQ files (mate 1s to ``fastq1``,
    mate 2s to ``fastq2``, in the same order), or as one interleaved FASTQ when
    ``fastq2`` is None (mate 1, mate 2, mate 1, ...); the truth TSV holds both mates,
    pair by pair."""
    mates = [m for pair in pairs for m in pair]
    if fastq2 is None:
        write_reads(mates, fastq1)
    else:
        write_reads([p[0] for p in pairs], fastq1)
        write_reads([p[1] for p in pairs], fastq2)
    if truth_path:
        _write_truth(mates, truth_path)


def read_truth(truth_path) -> dict:
    """A truth TSV of :func:`write_reads` / :func:`write_pairs` as ``{read name: truth
    dict}`` (the dicts :func:`sample_reads` / :func:`sample_pairs` return, integers as
    integers)."""
    with open(truth_path) as fh:
        header = fh.readline().rstrip("\n").split("\t")
        if header[:1] != ["read"]:
            raise ValueError(f"{truth_path}: not a truth TSV (header {header!r})")
        out = {}
        for line in fh:
            row = line.rstrip("\n").split("\t")
            out[row[0]] = {c: int(x) if c in _INT_COLUMNS else x
                           for c, x in zip(header[1:], row[1:])}
    return out


def simulate(prefix: str, total_bases: int = 20_000, node_len: float = 50, branching: int = 2,
             n_reads: int = 1000, read_len: int = 150, error_rate: float = 0.01,
             reverse_fraction: float = 0.5, seed: int = 0):
    """Write ``prefix.gfa``, ``prefix.fq`` and ``prefix.truth.tsv``; returns their paths."""
    g, ref = snp_graph(total_bases, node_len, branching, seed)
    g.write_gfa(prefix + ".gfa", ref)
    reads = sample_reads(g, n_reads, read_len, error_rate, reverse_fraction, seed + 1)
    write_reads(reads, prefix + ".fq", prefix + ".truth.tsv")
    return prefix + ".gfa", prefix + ".fq", prefix + ".truth.tsv"


def simulate_pairs(prefix: str, total_bases: int = 20_000, node_len: float = 50,
                   branching: int = 2, n_pairs: int = 1000, read_len: int = 150,
                   frag_mean: float = 300, frag_sd: float = 30, error_rate: float = 0.01,
                   reverse_fraction: float = 0.5, seed: int = 0, interleaved: bool = False):
    """Paired-end :func:`simulate`: write ``prefix.gfa``, ``prefix_1.fq``, ``prefix_2.fq``
    (or one interleaved ``prefix.fq`` with ``interleaved``) and ``prefix.truth.tsv``
    (both mates; see :func:`sample_pairs`); returns ``(gfa, fq1, fq2, truth)`` (``fq2``
    None when interleaved). The graph is :func:`simulate`'s for the same seed."""
    g, ref = snp_graph(total_bases, node_len, branching, seed)
    g.write_gfa(prefix + ".gfa", ref)
    pairs = sample_pairs(g, n_pairs, read_len, frag_mean, frag_sd, error_rate,
                         reverse_fraction, seed + 1)
    truth = prefix + ".truth.tsv"
    if interleaved:
        write_pairs(pairs, prefix + ".fq", None, truth)
        return prefix + ".gfa", prefix + ".fq", None, truth
    write_pairs(pairs, prefix + "_1.fq", prefix + "_2.fq", truth)
    return prefix + ".gfa", prefix + "_1.fq", prefix + "_2.fq", truth
