"""Noisy reads (10-20% errors, as PaSGAL's BRCA1 test reads) on a graph large enough that
``s2g align`` seeds by default: no read may be lost to a missing seed hit (issue #40,
item 0). CLI level, in this process (``s2g.cli.main``)."""
from __future__ import annotations

import numpy as np
import pytest

from s2g.cli import main as cli

BASES = "ACGT"


def _noisy(rng, seq, rate):
    out = []
    for ch in seq:
        x = rng.random()
        if x < rate * 0.6:
            out.append(BASES[(BASES.index(ch) + int(rng.integers(1, 4))) % 4])
        elif x < rate * 0.8:
            out.append(ch + BASES[int(rng.integers(4))])
        elif x < rate:
            continue
        else:
            out.append(ch)
    return "".join(out)


@pytest.fixture(scope="module")
def noisy(tmp_path_factory):
    """A 52 kbp linear graph (104,000 columns with both strands: seeded by default on a
    CPU), 24 reads of 300 bp: 16 with 15-20% errors, 8 with 1%."""
    d = tmp_path_factory.mktemp("noisy")
    rng = np.random.default_rng(40)
    ref = "".join(rng.choice(list(BASES), 52_000))
    seg = [ref[i:i + 1000] for i in range(0, len(ref), 1000)]
    gfa = d / "lin.gfa"
    with open(gfa, "w") as fh:
        fh.write("H\tVN:Z:1.0\n")
        for i, s in enumerate(seg):
            fh.write(f"S\ts{i}\t{s}\n")
        for i in range(len(seg) - 1):
            fh.write(f"L\ts{i}\t+\ts{i + 1}\t+\t0M\n")
    fq = d / "reads.fq"
    with open(fq, "w") as fh:
        for r in range(24):
            at = int(rng.integers(0, len(ref) - 300))
            seq = _noisy(rng, ref[at:at + 300], 0.15 + 0.05 * rng.random() if r < 16 else 0.01)
            fh.write(f"@r{r}\n{seq}\n+\n{'I' * len(seq)}\n")
    return str(gfa), str(fq), d


def _gaf(path):
    rows = {}
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        tags = dict(t.split(":", 1) for t in f[12:])
        rows[f[0]] = (f[5], int(tags["AS"][2:]) if "AS" in tags else None, int(f[11]))
    return rows


def _run(capsys, *argv):
    code = cli(list(map(str, argv)))
    err = capsys.readouterr().err
    assert code == 0, err
    return err


def test_noisy_reads_are_aligned_by_default_seeded_or_not(noisy, capsys):
    gfa, fq, d = noisy
    _run(capsys, "align", gfa, fq, "--exact", "-o", d / "exact.gaf", "--no-graph-cache")
    exact = _gaf(d / "exact.gaf")
    assert all(v[0] != "*" for v in exact.values())
    # the default: a small input on a seeding-size graph -> full-graph DP, said on stderr
    err = _run(capsys, "align", gfa, fq, "-o", d / "auto.gaf", "--no-graph-cache")
    assert "full-graph DP" in err and "--seeded" in err
    assert _gaf(d / "auto.gaf") == exact
    # --seeded: reads without a usable chain fall back to full-graph DP (affordable here)
    err = _run(capsys, "align", gfa, fq, "--seeded", "-o", d / "seeded.gaf",
               "--no-graph-cache")
    seeded = _gaf(d / "seeded.gaf")
    assert [v[1] for v in seeded.values()] == [v[1] for v in exact.values()], err
    assert "by full-graph DP" in err        # the summary counts them
    n_full = sum(1 for r in range(16) if seeded[f"r{r}"][2] == 255)
    assert f"{n_full} read(s) without a seed chain were aligned by full-graph DP" in err
    noisy_mapq = [seeded[f"r{r}"][2] for r in range(16)]
    assert 255 in noisy_mapq


def test_unmapped_noisy_reads_are_counted_not_silent(noisy, capsys):
    gfa, fq, d = noisy
    err = _run(capsys, "align", gfa, fq, "--seeded", "--unseeded", "unmapped",
               "-o", d / "unm.gaf", "--no-graph-cache")
    rows = _gaf(d / "unm.gaf")
    assert len(rows) == 24
    lost = [k for k, v in rows.items() if v[0] == "*"]
    assert lost, "15-20% errors leave some reads without any seed hit"
    assert f"{len(lost)} read(s) had no seed hit" in err
    assert "left unaligned" in err
    assert "were aligned by full-graph DP" not in err


@pytest.mark.gpu
def test_noisy_reads_on_the_gpu_equal_the_cpu(noisy, capsys):
    """On a real GPU (``--variant fast``): the seeded run's fallback to full-graph DP uses
    the GPU kernel; its GAF equals the CPU's, line for line."""
    gfa, fq, d = noisy
    for dev, variant in (("cpu", "simd"), ("gpu", "fast")):
        _run(capsys, "align", gfa, fq, "--seeded", "--variant", variant,
             "-o", d / f"{dev}.gaf", "--no-graph-cache")
    assert (d / "gpu.gaf").read_text() == (d / "cpu.gaf").read_text()


def test_reads_from_outside_the_graph_get_no_hit_lines_not_chance_matches(noisy, capsys):
    """Random reads have no seed chain; full-graph DP (affordable on this graph) finds a
    chance match for each, which is written as a no-hit line unless it scores at least
    --unseeded-min-score (default 30 matches' worth); the noisy reads, aligned the same
    way, score far above it and stay aligned."""
    gfa, fq, d = noisy
    rng = np.random.default_rng(7)
    junk = d / "junk.fq"
    with open(junk, "w") as fh:
        fh.write(open(fq).read())
        for k in range(6):
            seq = "".join(rng.choice(list(BASES), 150))
            fh.write(f"@junk{k}\n{seq}\n+\n{'I' * 150}\n")
    err = _run(capsys, "align", gfa, junk, "--seeded", "-o", d / "junk.gaf", "--no-graph-cache")
    rows = _gaf(d / "junk.gaf")
    assert len(rows) == 30
    assert all(rows[f"junk{k}"][0] == "*" for k in range(6)), rows
    assert "6 read(s) without a seed chain scored under --unseeded-min-score 60" in err
    assert all(rows[f"r{r}"][0] != "*" for r in range(24))
    # with no minimum: full-graph DP's chance match, MAPQ 255, counted in the warning
    err = _run(capsys, "align", gfa, junk, "--seeded", "--unseeded-min-score", "0",
               "-o", d / "junk0.gaf", "--no-graph-cache")
    rows0 = _gaf(d / "junk0.gaf")
    chance = [rows0[f"junk{k}"] for k in range(6)]
    assert all(v[0] != "*" and v[2] == 255 and 0 < v[1] < 60 for v in chance), chance
    assert "scored under --unseeded-min-score" not in err
    assert {k: v for k, v in rows0.items() if not k.startswith("junk")} == \
        {k: v for k, v in rows.items() if not k.startswith("junk")}
