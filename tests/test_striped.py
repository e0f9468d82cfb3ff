"""The striped window kernel (s2g/variants/striped.py) against the scalar window
reference (s2g.window.align_windows_ref): score and end cell, field for field.

Random DAGs and reads (hypothesis, tests/test_v0.py's generators) with random column
ranges, both modes, random scorings; then reads long enough for several rows a lane and
the lane carries of F (a long deletion path), on a simulated SNP graph and on node-set
windows of seeded long reads."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import s2g
from s2g.reads import ReadBatch
from s2g.scoring import Mode, Scoring
from s2g.variants import striped
from s2g.window import align_windows_ref
from test_v0 import SETTINGS, batch_of, dag_cases, scorings, write_tmp
from test_window import random_windows


def _same(graph, batch, tr, lo, hi, sc, mode):
    want = align_windows_ref(graph, batch.codes_flat, batch.offsets, tr, lo, hi, sc, mode)
    got = striped.align_windows(graph, batch.codes_flat, batch.offsets, tr, lo, hi, sc, mode)
    for name, w, g in zip(("score", "end_i", "end_j"), want, got):
        np.testing.assert_array_equal(g, w, err_msg=name)


@SETTINGS
@given(case=dag_cases(allow_empty=False), mode=st.sampled_from(["local", "semiglobal"]),
       sc=scorings, data=st.data())
def test_striped_windows_equal_the_reference(case, mode, sc, data):
    text, reads = case
    graph = s2g.load_graph(write_tmp(text))
    batch = batch_of(reads)
    lo, hi = random_windows(data, graph.n_bases, len(reads))
    _same(graph, batch, np.arange(len(reads), dtype=np.int64), lo, hi, sc, Mode.parse(mode))


@pytest.mark.parametrize("mode", ["local", "semiglobal"])
def test_striped_long_reads_with_gaps_equal_the_reference(tmp_path, mode):
    """Reads of 300-2,000 bases (B = 19-126 rows a lane) with long insertions and
    deletions (F crossing lanes), whole-graph and partial windows, two scorings."""
    from s2g.simulate import sample_reads, snp_graph
    sg, ref = snp_graph(6000, 40, 2, 3)
    sg.write_gfa(str(tmp_path / "s.gfa"), ref)
    g = s2g.load_graph(str(tmp_path / "s.gfa"))
    rng = np.random.default_rng(5)
    seqs = []
    for n, (_, s, _) in enumerate(sample_reads(sg, 12, 2000, 0.03, 0.0, 2)):
        s = s[:300 + 150 * n]
        x = int(rng.integers(50, len(s) - 60))
        s = s[:x] + s[x + 40:] if n % 2 else s[:x] + "".join(rng.choice(list("ACGT"), 40)) + s[x:]
        seqs.append(s)
    batch = ReadBatch.from_sequences([f"r{i}" for i in range(len(seqs))], seqs)
    tr = np.arange(len(seqs), dtype=np.int64)
    nb = g.n_bases
    lo = rng.integers(0, nb // 2, len(seqs))
    hi = np.minimum(lo + rng.integers(500, nb, len(seqs)), nb)
    for sc in (Scoring(), Scoring(1, 4, 6, 1)):
        _same(g, batch, tr, np.zeros(len(seqs), np.int64), np.full(len(seqs), nb), sc,
              Mode.parse(mode))
        _same(g, batch, tr, lo, hi, sc, Mode.parse(mode))


def mixed_length_windows(tmp_path):
    """Eight reads of a 4 kbp SNP graph, 150 and 1,200 bases in turn, each in two windows
    (columns 0-2,500 and 1,000 to the end): (graph, batch, seqs, tasks' reads, lo, hi)."""
    from s2g.simulate import sample_reads, snp_graph
    sg, ref = snp_graph(4000, 40, 2, 4)
    sg.write_gfa(str(tmp_path / "s.gfa"), ref)
    g = s2g.load_graph(str(tmp_path / "s.gfa"))
    seqs = [s[:1200 if n % 2 else 150] for n, (_, s, _) in
            enumerate(sample_reads(sg, 8, 1500, 0.03, 0.0, 6))]
    batch = ReadBatch.from_sequences([f"r{i}" for i in range(len(seqs))], seqs)
    tr = np.repeat(np.arange(len(seqs), dtype=np.int64), 2)
    lo = np.tile(np.array([0, 1000], np.int64), len(seqs))
    hi = np.tile(np.array([2500, g.n_bases], np.int64), len(seqs))
    return g, batch, seqs, tr, lo, hi


def test_simd_windows_send_a_few_long_reads_striped(tmp_path, monkeypatch):
    """simd.align_windows runs the windows of reads >= striped_min_len bases striped when
    there are few of them, the rest in lanes across reads, and returns the reference's
    arrays either way (striped_min_len 0: never striped)."""
    from s2g.config import configure
    from s2g.variants import simd
    g, batch, seqs, tr, lo, hi = mixed_length_windows(tmp_path)
    calls = []
    real = striped.align_windows
    monkeypatch.setattr(striped, "align_windows",
                        lambda *a: calls.append(len(a[3])) or real(*a))
    want = align_windows_ref(g, batch.codes_flat, batch.offsets, tr, lo, hi, Scoring(),
                             Mode.LOCAL)
    for min_len, n_striped in ((1000, [8]), (0, [])):
        calls.clear()
        configure(striped_min_len=min_len, prune_min_len=0)
        got = simd.align_windows(g, batch.codes_flat, batch.offsets, tr, lo, hi, Scoring(),
                                 Mode.LOCAL)
        assert calls == n_striped
        for w, x in zip(want, got):
            np.testing.assert_array_equal(x, w)
