"""Paired-end input: simulated pairs (fragment model, FR orientation, truth) and the
paired reader (two files or one interleaved file -> interleaved ReadBatches, bad input)."""
from __future__ import annotations

import gzip
import re

import numpy as np
import pytest

import naive
import s2g
from s2g import simulate
from s2g.errors import ReadError, S2GError
from s2g.reads import iter_pair_batches, pair_base_name, read_pairs

CODE = {"A": 0, "C": 1, "G": 2, "T": 3}


def rc(s: str) -> str:
    return naive.revcomp(s)


def spell_walk(g, walk: str) -> str:
    """A truth walk (``>n1>n2...``) of the in-memory SimGraph ``g``, spelled."""
    index = {n: k for k, n in enumerate(g.names)}
    return "".join(g.seqs[index[n]] for n in walk.split(">")[1:])


def is_walk(g, walk: str) -> bool:
    index = {n: k for k, n in enumerate(g.names)}
    steps = [index[n] for n in walk.split(">")[1:]]
    return bool(steps) and all(v in g.succ[u] for u, v in zip(steps, steps[1:]))


def fwd(seq: str, strand: str) -> str:
    return rc(seq) if strand == "-" else seq


def batch_seqs(b):
    return ["".join("ACGTN"[c] for c in b.codes(k)) for k in range(b.n_reads)]


@pytest.fixture(scope="module")
def graph():
    g, _ = simulate.snp_graph(40_000, node_len=50, branching=2, seed=5)
    return g


@pytest.fixture(scope="module")
def many_pairs(graph):
    return simulate.sample_pairs(graph, 3000, 100, 300, 30, 0.0, 0.5, seed=7)


# ------------------------------------------------------------------ simulation

@pytest.mark.parametrize("mean,sd", [(300, 30), (500, 12)])
def test_fragment_lengths_follow_the_model(graph, mean, sd):
    pairs = simulate.sample_pairs(graph, 3000, 100, mean, sd, 0.0, 0.5, seed=8)
    lens = np.array([m1[2]["frag_len"] for m1, _ in pairs])
    assert all(m1[2]["frag_len"] == m2[2]["frag_len"] for m1, m2 in pairs)
    # standard errors: sd/sqrt(3000) for the mean, ~sd/sqrt(6000) for the sd
    assert abs(lens.mean() - mean) < 5 * sd / np.sqrt(3000), lens.mean()
    assert abs(lens.std() - sd) < 0.1 * sd, lens.std()


def test_fragments_shorter_than_a_read_are_clamped(graph):
    pairs = simulate.sample_pairs(graph, 1000, 100, 90, 20, 0.0, 0.5, seed=9)
    lens = np.array([m1[2]["frag_len"] for m1, _ in pairs])
    assert lens.min() == 100
    # P(round(N(90, 20)) <= 100) = P(N < 100.5) ~ 0.70: those are all clamped to 100
    assert 0.62 < np.mean(lens == 100) < 0.78
    assert all(len(m1[1]) == len(m2[1]) == 100 for m1, m2 in pairs)
    # a fragment of exactly read_len: both mates cover it all, from opposite strands
    for m1, m2 in pairs:
        if m1[2]["frag_len"] == 100:
            assert m1[1] == rc(m2[1])


def test_mates_are_the_ends_of_their_fragment_in_fr_orientation(graph, many_pairs):
    n_rev = 0
    for k, (m1, m2) in enumerate(many_pairs):
        (n1, s1, t1), (n2, s2, t2) = m1, m2
        assert (n1, n2) == (f"pair{k + 1}/1", f"pair{k + 1}/2")
        assert t1["pair"] == t2["pair"] == f"pair{k + 1}" == pair_base_name(n1) == pair_base_name(n2)
        assert (t1["mate"], t2["mate"]) == (1, 2)
        assert t1["frag_walk"] == t2["frag_walk"] and t1["frag_offset"] == t2["frag_offset"]
        assert is_walk(graph, t1["frag_walk"]), f"{n1}: the fragment's walk does not follow edges"
        L = t1["frag_len"]
        frag = spell_walk(graph, t1["frag_walk"])[t1["frag_offset"]:t1["frag_offset"] + L]
        assert len(frag) == L
        assert len(s1) == len(s2) == 100
        if t1["frag_strand"] == "+":
            assert s1 == frag[:100] and s2 == rc(frag[-100:]), n1
            assert (t1["strand"], t2["strand"], t1["frag_start"], t2["frag_start"]) == ("+", "-", 0, L - 100)
        else:
            n_rev += 1
            # the fragment read from the reverse strand: mate 1 starts at its right end
            assert s1 == rc(frag)[:100] and s2 == rc(rc(frag)[-100:]), n1
            assert (t1["strand"], t2["strand"], t1["frag_start"], t2["frag_start"]) == ("-", "+", L - 100, 0)
        for name, s, t in (m1, m2):
            # each mate's own truth (sample_reads' columns) spells it, on a true walk that
            # lies inside the fragment's walk
            assert is_walk(graph, t["walk"]), name
            assert spell_walk(graph, t["walk"])[t["offset"]:t["offset"] + 100] == fwd(s, t["strand"]), name
            assert t["walk"] in t["frag_walk"]
            assert frag[t["frag_start"]:t["frag_start"] + 100] == fwd(s, t["strand"]), name
            assert t["substitutions"] == 0
    # reverse_fraction 0.5 of 3000 fragments: sd ~27
    assert 1350 < n_rev < 1650, n_rev


@pytest.mark.parametrize("reverse_fraction,expect", [(0.0, "+"), (1.0, "-")])
def test_reverse_fraction_picks_the_fragment_strand(graph, reverse_fraction, expect):
    pairs = simulate.sample_pairs(graph, 200, 80, 250, 20, 0.0, reverse_fraction, seed=2)
    assert {m1[2]["frag_strand"] for m1, _ in pairs} == {expect}
    assert {m1[2]["strand"] for m1, _ in pairs} == {expect}
    assert {m2[2]["strand"] for _, m2 in pairs} == {"-" if expect == "+" else "+"}


def test_substitutions_are_per_mate_and_counted(graph):
    pairs = simulate.sample_pairs(graph, 1500, 100, 180, 30, 0.02, 0.5, seed=4)
    subs, differ = [], 0
    for m1, m2 in pairs:
        for name, s, t in (m1, m2):
            ref = spell_walk(graph, t["walk"])[t["offset"]:t["offset"] + len(s)]
            assert sum(a != b for a, b in zip(fwd(s, t["strand"]), ref)) == t["substitutions"], name
            subs.append(t["substitutions"])
        # where the mates overlap (fragment < 200) each carries its own errors
        L = m1[2]["frag_len"]
        if L < 200:
            f1, f2 = fwd(m1[1], m1[2]["strand"]), fwd(m2[1], m2[2]["strand"])
            a, b = (f1, f2) if m1[2]["frag_start"] == 0 else (f2, f1)
            differ += a[L - 100:] != b[:200 - L]
    rate = np.sum(subs) / (len(subs) * 100)
    assert 0.017 < rate < 0.023, rate
    assert differ > 0


def test_short_graph_warns_and_mates_stay_consistent():
    g, _ = simulate.snp_graph(150, node_len=20, branching=2, seed=1)
    with pytest.warns(UserWarning, match="fragments are shorter than the read length 200"):
        pairs = simulate.sample_pairs(g, 20, 200, 400, 10, 0.0, 0.5, seed=3)
    for (n1, s1, t1), (n2, s2, t2) in pairs:
        assert len(s1) == len(s2) == t1["frag_len"] < 200
        assert s1 == rc(s2)


def test_bad_pair_arguments(graph):
    for kw in (dict(read_len=0), dict(frag_mean=0), dict(frag_sd=-1), dict(n_pairs=-1)):
        args = dict(n_pairs=3, read_len=50, frag_mean=200, frag_sd=10) | kw
        with pytest.raises(ValueError):
            simulate.sample_pairs(graph, **args)


def test_simulate_pairs_files_truth_and_determinism(tmp_path):
    a = simulate.simulate_pairs(str(tmp_path / "a"), 6000, 30, 3, 40, 70, 220, 25, 0.03, 0.5, seed=5)
    b = simulate.simulate_pairs(str(tmp_path / "b"), 6000, 30, 3, 40, 70, 220, 25, 0.03, 0.5, seed=5)
    c = simulate.simulate_pairs(str(tmp_path / "c"), 6000, 30, 3, 40, 70, 220, 25, 0.03, 0.5, seed=6)
    assert [p[len(str(tmp_path)) + 2:] for p in a] == [".gfa", "_1.fq", "_2.fq", ".truth.tsv"]
    for x, y, z in zip(a, b, c):
        assert open(x).read() == open(y).read()
        assert open(x).read() != open(z).read()
    # the graph is simulate()'s for the same seed
    single = simulate.simulate(str(tmp_path / "s"), 6000, 30, 3, 5, 70, 0.03, 0.5, seed=5)
    assert open(single[0]).read() == open(a[0]).read()

    gfa, fq1, fq2, truth_path = a
    segs, links = naive.read_gfa(gfa)
    edges = naive.oriented_edges(links, "forward")
    truth = simulate.read_truth(truth_path)
    batch = read_pairs(fq1, fq2)
    assert batch.n_reads == 80 == len(truth)
    assert list(truth) == batch.names       # one row per mate, pair by pair
    for k, (name, seq) in enumerate(zip(batch.names, batch_seqs(batch))):
        t = truth[name]
        assert name.endswith(f"/{t['mate']}") and t["mate"] == 1 + k % 2
        assert t["pair"] == pair_base_name(name) == pair_base_name(batch.names[k ^ 1])
        steps = naive.parse_gaf_path(t["walk"])
        assert all((u, v) in edges for u, v in zip(steps, steps[1:]))
        ref = naive.spell(segs, steps)[t["offset"]:t["offset"] + len(seq)]
        assert sum(x != y for x, y in zip(fwd(seq, t["strand"]), ref)) == t["substitutions"], name
        frag = naive.spell(segs, naive.parse_gaf_path(t["frag_walk"]))
        frag = frag[t["frag_offset"]:t["frag_offset"] + t["frag_len"]]
        assert len(frag) == t["frag_len"] and 0 <= t["frag_start"] <= t["frag_len"] - len(seq)
        assert frag[t["frag_start"]:t["frag_start"] + len(seq)] == ref
    # the truth TSV keeps the single-end columns first, so single-end tooling reads it
    header = open(truth_path).readline().rstrip("\n").split("\t")
    assert header[:5] == ["read", "strand", "walk", "offset", "substitutions"]
    assert open(single[2]).readline().rstrip("\n").split("\t") == header[:5]


def test_simulate_pairs_interleaved_is_the_same_reads(tmp_path):
    two = simulate.simulate_pairs(str(tmp_path / "t"), 5000, 30, 2, 25, 60, 200, 20, 0.02, 0.5, seed=3)
    one = simulate.simulate_pairs(str(tmp_path / "i"), 5000, 30, 2, 25, 60, 200, 20, 0.02, 0.5, seed=3,
                                  interleaved=True)
    assert one[1].endswith("i.fq") and one[2] is None
    assert open(one[3]).read() == open(two[3]).read()
    a, b = read_pairs(two[1], two[2]), read_pairs(one[1], interleaved=True)
    assert a.names == b.names and batch_seqs(a) == batch_seqs(b)
    # the interleaved file is mate 1, mate 2, ... of the two files
    r1, r2 = s2g.read_reads(two[1]), s2g.read_reads(two[2])
    assert b.names[0::2] == r1.names and b.names[1::2] == r2.names
    assert batch_seqs(b)[0::2] == batch_seqs(r1) and batch_seqs(b)[1::2] == batch_seqs(r2)


# ------------------------------------------------------------------ paired reader

def fastq(reads):
    return "".join(f"@{n}\n{s}\n+\n{'I' * len(s)}\n" for n, s in reads)


def write(path, text, gz=False):
    if gz:
        with gzip.open(path, "wt") as fh:
            fh.write(text)
    else:
        path.write_text(text)
    return str(path)


def random_pairs(n, seed, max_len=30):
    rng = np.random.default_rng(seed)
    seq = lambda: "".join(rng.choice(list("ACGT"), int(rng.integers(0, max_len))))  # noqa: E731
    return [((f"q{k}/1", seq()), (f"q{k}/2", seq())) for k in range(n)]


@pytest.mark.parametrize("n_pairs,batch_size,sizes", [
    (7, 6, [6, 6, 2]), (7, 7, [6, 6, 2]), (7, 2, [2] * 7), (7, 14, [14]), (7, 1000, [14]),
    (6, 4, [4, 4, 4]), (1, 2, [2]),
])
@pytest.mark.parametrize("layout", ["two", "interleaved"])
def test_batches_hold_whole_pairs_in_order(tmp_path, n_pairs, batch_size, sizes, layout):
    pairs = random_pairs(n_pairs, seed=n_pairs * 100 + batch_size)
    if layout == "two":
        args = (write(tmp_path / "r_1.fq", fastq(p[0] for p in pairs)),
                write(tmp_path / "r_2.fq", fastq(p[1] for p in pairs)))
        kw = {}
    else:
        args = (write(tmp_path / "r.fq", fastq(m for p in pairs for m in p)),)
        kw = dict(interleaved=True)
    batches = list(iter_pair_batches(*args, batch_size=batch_size, **kw))
    assert [b.n_reads for b in batches] == sizes
    assert [b.first_index for b in batches] == list(np.cumsum([0] + sizes[:-1]))
    names = [n for b in batches for n in b.names]
    seqs = [s for b in batches for s in batch_seqs(b)]
    assert names == [m[0] for p in pairs for m in p]
    assert seqs == [m[1] for p in pairs for m in p]
    for b in batches:
        assert b.codes_flat.dtype == np.uint8 and b.offsets[-1] == len(b.codes_flat)
        assert [b.codes(k).tolist() for k in range(b.n_reads)] == \
            [[CODE[c] for c in s] for s in batch_seqs(b)]
    whole = read_pairs(*args, **kw)
    assert whole.names == names and batch_seqs(whole) == seqs


@pytest.mark.parametrize("gz", [False, True])
def test_gzip_and_fasta_input(tmp_path, gz):
    pairs = random_pairs(5, seed=1)
    ext = ".gz" if gz else ""
    f1 = write(tmp_path / f"a_1.fa{ext}", "".join(f">{n}\n{s}\n" for (n, s), _ in pairs), gz)
    f2 = write(tmp_path / f"a_2.fq{ext}", fastq(m2 for _, m2 in pairs), gz)
    fi = write(tmp_path / f"a.fq{ext}", fastq(m for p in pairs for m in p), gz)
    for b in (read_pairs(f1, f2), read_pairs(fi, interleaved=True)):
        assert b.names == [m[0] for p in pairs for m in p]
        assert batch_seqs(b) == [m[1] for p in pairs for m in p]


def test_mate_names_compare_without_suffix_and_comment(tmp_path):
    f1 = write(tmp_path / "1.fq", fastq([("x/1 1:N:0:ACGT", "AC"), ("y 1:N:0", "G"), ("z", "T")]))
    f2 = write(tmp_path / "2.fq", fastq([("x/2 2:N:0:ACGT", "GT"), ("y 2:N:0", "C"), ("z/2", "A")]))
    b = read_pairs(f1, f2)
    assert b.names == ["x/1", "x/2", "y", "y", "z", "z/2"]      # first words, as written
    assert batch_seqs(b) == ["AC", "GT", "G", "C", "T", "A"]


@pytest.mark.parametrize("name,base", [
    ("pair7/1", "pair7"), ("pair7/2 1:N:0", "pair7"), ("pair7", "pair7"), ("read1", "read1"),
    ("a/3", "a/3"), ("x/1/2", "x/1"), ("", ""), ("  ", ""),
])
def test_pair_base_name(name, base):
    assert pair_base_name(name) == base


def test_empty_input_gives_no_pairs(tmp_path):
    e1, e2 = write(tmp_path / "e1.fq", ""), write(tmp_path / "e2.fq", "")
    assert list(iter_pair_batches(e1, e2)) == []
    assert list(iter_pair_batches(e1, interleaved=True)) == []
    for b in (read_pairs(e1, e2), read_pairs(e1, interleaved=True)):
        assert b.n_reads == 0 and b.total_bases == 0
    # as single-end reading of an empty file
    assert s2g.read_reads(e1).n_reads == 0


def test_pairs_without_names_are_numbered(tmp_path):
    f1 = write(tmp_path / "1.fa", ">a/1\nAC\n>\nGG\n")
    f2 = write(tmp_path / "2.fa", ">a/2\nTT\n>\nCC\n")
    with pytest.warns(UserWarning, match="1 pair.* without a name"):
        b = read_pairs(f1, f2)
    assert b.names == ["a/1", "a/2", "read2/1", "read2/2"]


# ------------------------------------------------------------------ bad paired input

def one_line_error(fn, *args, **kw):
    with pytest.raises(ReadError) as exc:
        fn(*args, **kw)
    msg = str(exc.value)
    assert "\n" not in msg and isinstance(exc.value, S2GError)
    return msg


def drain(*args, **kw):
    return [b.n_reads for b in iter_pair_batches(*args, **kw)]


@pytest.mark.parametrize("batch_size", [2, 4, 1000])
def test_file_2_shorter_or_longer(tmp_path, batch_size):
    pairs = random_pairs(5, seed=2)
    f1 = write(tmp_path / "r_1.fq", fastq(p[0] for p in pairs))
    f2_short = write(tmp_path / "short_2.fq", fastq(p[1] for p in pairs[:3]))
    f1_short = write(tmp_path / "short_1.fq", fastq(p[0] for p in pairs[:4]))
    f2 = write(tmp_path / "r_2.fq", fastq(p[1] for p in pairs))
    msg = one_line_error(drain, f1, f2_short, batch_size=batch_size)
    assert msg == (f"paired files differ in length: {f2_short} ended after 3 records, {f1} goes on "
                   "(record 4: 'q3/1'); both files must hold the same number of reads")
    msg = one_line_error(drain, f1_short, f2, batch_size=batch_size)
    assert msg == (f"paired files differ in length: {f1_short} ended after 4 records, {f2} goes on "
                   "(record 5: 'q4/2'); both files must hold the same number of reads")
    empty = write(tmp_path / "empty.fq", "")
    assert re.fullmatch(rf"paired files differ in length: {re.escape(empty)} ended after 0 records, "
                        rf"{re.escape(f2)} goes on \(record 1: 'q0/2'\).*",
                        one_line_error(drain, empty, f2, batch_size=batch_size))


def test_interleaved_odd_number_of_records(tmp_path):
    recs = [m for p in random_pairs(3, seed=3) for m in p][:5]
    p = write(tmp_path / "odd.fq", fastq(recs))
    msg = one_line_error(drain, p, interleaved=True, batch_size=2)
    assert msg == (f"{p}: interleaved paired input has an odd number of records (5): the last read "
                   "'q2/1' (record 5) has no mate")
    one = write(tmp_path / "one.fq", fastq(recs[:1]))
    assert "odd number of records (1)" in one_line_error(read_pairs, one, interleaved=True)


def test_mate_names_that_do_not_match(tmp_path):
    f1 = write(tmp_path / "1.fq", fastq([("a/1", "A"), ("b/1", "C"), ("c/1", "G")]))
    f2 = write(tmp_path / "2.fq", fastq([("a/2", "A"), ("b/2", "C"), ("d/2 2:N", "G")]))
    msg = one_line_error(drain, f1, f2, batch_size=2)
    assert msg == (f"mate names of pair 3 do not match: 'c/1' (record 3 of {f1}) and 'd/2' "
                   f"(record 3 of {f2}); mates must have the same name up to a trailing /1 and /2")
    il = write(tmp_path / "i.fq", fastq([("a/1", "A"), ("a/2", "A"), ("b/1", "C"), ("x/2", "C")]))
    msg = one_line_error(read_pairs, il, interleaved=True)
    assert msg.startswith(f"mate names of pair 2 do not match: 'b/1' (record 3 of {il}) and 'x/2' "
                          f"(record 4 of {il})")
    # dnaio's is_mate takes read1 and read2 for mates; they are two reads
    g1 = write(tmp_path / "g1.fq", fastq([("read1", "A")]))
    g2 = write(tmp_path / "g2.fq", fastq([("read2", "A")]))
    assert "'read1'" in one_line_error(read_pairs, g1, g2)


def test_swapped_mate_files(tmp_path):
    pairs = random_pairs(2, seed=4)
    f1 = write(tmp_path / "1.fq", fastq(p[0] for p in pairs))
    f2 = write(tmp_path / "2.fq", fastq(p[1] for p in pairs))
    msg = one_line_error(read_pairs, f2, f1)
    assert msg == (f"pair 1: mate 1 is named 'q0/2' (record 1 of {f2}) and mate 2 'q0/1' "
                   f"(record 1 of {f1}): the mates are swapped (give file 1 first)")


def test_missing_files_and_bad_arguments(tmp_path):
    ok = write(tmp_path / "ok.fq", fastq([("a/1", "A")]))
    ok2 = write(tmp_path / "ok2.fq", fastq([("a/2", "A")]))
    missing = str(tmp_path / "nope_2.fq")
    assert one_line_error(read_pairs, ok, missing) == f"{missing}: no such file"
    assert one_line_error(read_pairs, missing, ok2) == f"{missing}: no such file"
    assert one_line_error(read_pairs, missing, interleaved=True) == f"{missing}: no such file"
    assert "is a directory" in one_line_error(read_pairs, ok, str(tmp_path))
    assert "same file" in one_line_error(read_pairs, ok, ok)
    assert "second file" in one_line_error(read_pairs, ok)
    assert "not both" in one_line_error(read_pairs, ok, ok2, interleaved=True)
    assert "standard input" in one_line_error(read_pairs, "-", "-")
    assert ">= 2" in one_line_error(drain, ok, ok2, batch_size=1)


def test_bad_records_name_their_file_and_record(tmp_path):
    f1 = write(tmp_path / "1.fq", fastq([("a/1", "AC"), ("b/1", "GG"), ("c/1", "TT")]))
    f2 = write(tmp_path / "2.fq", fastq([("a/2", "AC"), ("b/2", "GG"), ("c/2", "T*")]))
    msg = one_line_error(read_pairs, f1, f2)
    assert msg.startswith(f"{f2}: read 'c/2' (record 3) has invalid character '*' at position 2")
    trunc = write(tmp_path / "t_2.fq", "@a/2\nAC\n+\nII\n@b/2\nGG\n+\n")
    msg = one_line_error(read_pairs, f1, trunc)
    assert msg.startswith(f"{trunc}: ")
    gz = tmp_path / "cut_2.fq.gz"
    data = gzip.compress(fastq([(f"a{k}/2", "ACGT" * 20) for k in range(200)]).encode())
    gz.write_bytes(data[:len(data) // 2])
    f1_200 = write(tmp_path / "200_1.fq", fastq([(f"a{k}/1", "ACGT") for k in range(200)]))
    assert one_line_error(read_pairs, f1_200, str(gz)).startswith(f"{gz}: ")


def test_standard_input(tmp_path):
    import subprocess
    import sys

    pairs = random_pairs(4, seed=6)
    f1 = write(tmp_path / "1.fq", fastq(p[0] for p in pairs))
    code = ("import sys; from s2g.reads import read_pairs; a = sys.argv[1:]; "
            "b = read_pairs(a[0], a[1] or None, interleaved=a[2] == 'i'); print(' '.join(b.names))")
    expect = " ".join(m[0] for p in pairs for m in p)
    for args, text in ((["-", "", "i"], fastq(m for p in pairs for m in p)),
                       ([f1, "-", ""], fastq(p[1] for p in pairs))):
        out = subprocess.run([sys.executable, "-c", code, *args], input=text,
                             capture_output=True, text=True, check=True)
        assert out.stdout.strip() == expect


def test_qualities_kept_on_request_through_pairs_and_subsets(tmp_path):
    """qualities=True: FASTQ quality bytes aligned with the bases, mates interleaved,
    carried by subset(); FASTA (no qualities): None; by default: None."""
    from s2g.reads import iter_pair_batches, iter_read_batches
    f1, f2 = tmp_path / "a.fq", tmp_path / "b.fq"
    f1.write_text("@p1/1\nACGT\n+\nABCD\n@p2/1\nGG\n+\nEF\n")
    f2.write_text("@p1/2\nTTA\n+\nGHI\n@p2/2\nC\n+\nJ\n")
    (b,) = list(iter_pair_batches(str(f1), str(f2), qualities=True))
    assert bytes(b.quals) == b"ABCDGHIEFJ"
    assert bytes(b.subset([3, 0]).quals) == b"JABCD"
    (b,) = list(iter_pair_batches(str(f1), str(f2)))
    assert b.quals is None
    (b,) = list(iter_read_batches(str(f1), qualities=True))
    assert bytes(b.quals) == b"ABCDEF"
    fa = tmp_path / "a.fa"
    fa.write_text(">x\nACGT\n")
    (b,) = list(iter_read_batches(str(fa), qualities=True))
    assert b.quals is None
