"""Paired-end alignment with the GPU's windows (``SeededAligner(device="gpu")`` under a
``PairedAligner``) under the CUDA simulator against the CPU path, field for field.

Invoked by tests/test_pairs.py in a subprocess with NUMBA_ENABLE_CUDASIM=1. A graph with
two copies of a 60 bp repeat between unique sequence: mate 1 inside the second copy
(k = 11 seeds find one window, on the first copy: the pair rescues mate 1 on the second
from its mate 2, downstream in unique sequence, and merges that CPU traceback with the
GPU's walks); every third mate 2 mutated beyond seeding (its pair stays improper: mate 1's
only window is on the wrong copy). Scores, end cells, MAPQ,
proper flags and tracebacks must equal ``device="cpu"``'s.
Usage: python tests/pairs_cudasim_check.py -> prints "OK <pairs> <moved> <rescued>".
"""
import os
import sys
import tempfile

import numpy as np

assert os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", "set NUMBA_ENABLE_CUDASIM=1"

import sim_poison  # noqa: E402  (tests/: shared memory poisoned as a GPU's may be)

sim_poison.install()

from s2g.graph import load_graph  # noqa: E402
from s2g.index import build_index  # noqa: E402
from s2g.reads import ReadBatch  # noqa: E402
from s2g.scoring import Mode, Scoring  # noqa: E402
from s2g.seeded import SeededAligner  # noqa: E402
from s2g.seeded.pairs import FragmentModel, PairedAligner  # noqa: E402

COMP = str.maketrans("ACGT", "TGCA")


def main():
    rng = np.random.default_rng(3)

    def rand(n):
        return "".join(rng.choice(list("ACGT"), n))
    rep = rand(60)
    a, b, c = rand(100), rand(200), rand(100)
    genome = a + rep + b + rep + c
    names, seqs = [], []
    for k in range(8):
        x = 360 + 5 + 2 * k                        # fragments starting in copy 2
        frag = genome[x:x + 120]
        m2 = frag[-40:].translate(COMP)[::-1]
        if k % 3 == 2:                             # no 11-mer left: rescue
            m2 = "".join(("ACGT"[("ACGT".index(ch) + 1) % 4] if i % 6 == 0 else ch)
                         for i, ch in enumerate(m2))
        names += [f"p{k}/1", f"p{k}/2"]
        seqs += [frag[:40], m2]
    reads = ReadBatch.from_sequences(names, seqs)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "rep.gfa")
        with open(path, "w") as fh:
            fh.write(f"S\ta\t{a}\nS\tr1\t{rep}\nS\tb\t{b}\nS\tr2\t{rep}\nS\tc\t{c}\n"
                     "L\ta\t+\tr1\t+\t0M\nL\tr1\t+\tb\t+\t0M\nL\tb\t+\tr2\t+\t0M\n"
                     "L\tr2\t+\tc\t+\t0M\n")
        g = load_graph(path)
    ix = build_index(g, k=11, s=5)
    out = {}
    for device in ("cpu", "gpu"):
        pa = PairedAligner(SeededAligner(g, ix, Scoring(), Mode.LOCAL, min_chain=11,
                                         unseeded="unmapped", device=device),
                           FragmentModel(120, 10))
        single = pa.seeded.align_batch(reads)
        res = pa.align_batch(reads)
        moved = int(np.count_nonzero((res.best_task >= 0) & (res.best_task != single.best_task)))
        pa.traceback(reads, res)
        out[device] = (res, moved, pa.totals["rescued mates"])
    (want, mv, rs), (got, _, _) = out["cpu"], out["gpu"]
    for f in ("score", "end_i", "end_j", "mapq", "pair_proper", "pair_frag"):
        x, y = getattr(want, f), getattr(got, f)
        if not np.array_equal(x, y):
            raise AssertionError(f"{f}: gpu {y} != cpu {x}")
    for r, (x, y) in enumerate(zip(want.tracebacks, got.tracebacks)):
        if x != y:
            raise AssertionError(f"read {r}: gpu {y} != cpu {x}")
    assert want.pair_proper.sum() >= 5 and rs >= 5, (want.pair_proper, rs)
    print("OK", len(names) // 2, mv, rs)


if __name__ == "__main__":
    sys.exit(main())
