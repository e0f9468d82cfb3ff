"""Random inputs and the exactness check shared by the GPU variant tests.

Used by tests/cudasim_check.py (CUDA simulator, run in a subprocess by
test_gpu_variants.py) and test_gpu_real.py (``-m gpu`` on the device machine).
"""
from __future__ import annotations

import os
import tempfile
import warnings

import numpy as np

from s2g.graph import load_graph
from s2g.reads import ReadBatch
from s2g.scoring import Scoring

GPU_VARIANTS = ("v1_antidiag", "v2_rolling", "v3_coop", "v4_interread")


def random_gfa_text(rng, n_seg=None, max_seg_len=4, p_link=0.45):
    """A random GFA1 DAG over segments s0..s{n-1}: links only forward in index order,
    some with a reverse orientation (inversions; cycles of the doubled graph are broken
    when loading)."""
    n_seg = n_seg or int(rng.integers(1, 6))
    alphabet = list("ACGTN") if rng.random() < 0.2 else list("ACGT")
    lines = ["H\tVN:Z:1.0"]
    for s in range(n_seg):
        ln = int(rng.integers(1, max_seg_len + 1))
        lines.append(f"S\ts{s}\t{''.join(rng.choice(alphabet, ln))}")
    for a in range(n_seg):
        for b in range(a + 1, n_seg):
            if rng.random() < p_link:
                oa = "-" if rng.random() < 0.2 else "+"
                ob = "-" if rng.random() < 0.2 else "+"
                lines.append(f"L\ts{a}\t{oa}\ts{b}\t{ob}\t0M")
    return "\n".join(lines) + "\n"


def load_text(text):
    fd, path = tempfile.mkstemp(suffix=".gfa")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return load_graph(path, break_cycles=True)
    finally:
        os.unlink(path)


def random_graph(rng, **kw):
    return load_text(random_gfa_text(rng, **kw))


def random_reads(rng, n, max_len, min_len=0):
    codes = []
    for _ in range(n):
        ln = int(rng.integers(min_len, max_len + 1))
        codes.append(rng.integers(0, 5 if rng.random() < 0.2 else 4, ln).astype(np.uint8))
    return ReadBatch.from_codes([f"r{k}" for k in range(n)], codes)


def random_scoring(rng):
    return Scoring(int(rng.integers(1, 4)), int(rng.integers(0, 5)), int(rng.integers(0, 5)),
                   int(rng.integers(1, 3)))


def mismatches(ref, res):
    """Indices of reads whose score or end cell differ between two BatchResults."""
    bad = (np.asarray(ref.score) != np.asarray(res.score)) | \
          (np.asarray(ref.end_i) != np.asarray(res.end_i)) | \
          (np.asarray(ref.end_j) != np.asarray(res.end_j))
    return np.nonzero(bad)[0].tolist()


def describe(ref, res, idx, limit=3):
    return "; ".join(f"read {r}: v0 {int(ref.score[r])}@({int(ref.end_i[r])},{int(ref.end_j[r])}) "
                     f"got {int(res.score[r])}@({int(res.end_i[r])},{int(res.end_j[r])})"
                     for r in idx[:limit])
