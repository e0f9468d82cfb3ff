"""Run the `fast` kernel under the CUDA simulator against V0 (exact scores and end cells).

Invoked by tests/test_fast.py in a subprocess with NUMBA_ENABLE_CUDASIM=1 (numba must
see the variable before it is imported). The simulator has no warp shuffles, so the
kernel is built in its simulator form: the same code with a shared-memory exchange and
syncthreads in place of shfl_up_sync / shfl_xor_sync / syncwarp, one warp per block.
Usage: python tests/fast_cudasim_check.py [n_cases]   -> prints "OK <cases>" or fails.
"""
import os
import sys
import tempfile

import numpy as np

assert os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", "set NUMBA_ENABLE_CUDASIM=1"

import sim_poison  # noqa: E402  (tests/: shared memory poisoned as a GPU's may be)

sim_poison.install()

from s2g.graph import load_graph  # noqa: E402
from s2g.reads import ReadBatch  # noqa: E402
from s2g.scoring import Mode, Scoring  # noqa: E402
from s2g.simulate import sample_reads, snp_graph  # noqa: E402
from s2g.variants import _devpool, fast, v0_cpu  # noqa: E402


def case(seed, tmp):
    rng = np.random.default_rng(seed)
    sg, ref = snp_graph(int(rng.integers(8, 40)), int(rng.integers(2, 8)), int(rng.integers(1, 6)),
                        seed)
    path = os.path.join(tmp, f"g{seed}.gfa")
    sg.write_gfa(path, ref)
    g = load_graph(path, strands="both" if seed % 2 else "forward")
    sims = sample_reads(sg, 3, int(rng.integers(3, 30)), 0.1, 0.5, seed + 7)
    seqs = [s for _, s, _ in sims]
    seqs.append("".join(rng.choice(list("ACGTN"), int(rng.integers(1, 25)))))
    seqs.append("")
    reads = ReadBatch.from_sequences([f"r{k}" for k in range(len(seqs))], seqs)
    sc = Scoring(*[int(x) for x in rng.integers(1, 6, 4)])
    return g, reads, sc


def check(g, reads, sc, mode, G, K, pair=None, pipe=None, ranges=None):
    ref = v0_cpu.align_batch(g, reads, sc, mode)
    lens = reads.lengths()
    idx = np.nonzero(lens > 0)[0]
    offs = np.zeros(len(idx) + 1, np.int64)
    np.cumsum(lens[idx], out=offs[1:])
    codes = np.concatenate([reads.codes(int(r)) for r in idx])
    s, i, j = fast.run_kernel(g, codes, offs, lens[idx], sc, mode, G=G, K=K, pair=pair, pipe=pipe,
                              ranges=ranges)
    for n, r in enumerate(idx):
        want = (int(ref.score[r]), int(ref.end_i[r]), int(ref.end_j[r]))
        got = (int(s[n]), int(i[n]), int(j[n])) if j[n] >= 0 else (int(ref.score[r]) if ref.end_j[r] < 0 else None, -1, -1)
        if want != got:
            raise AssertionError(f"mode={mode.name} G={G} K={K} pair={pair} pipe={pipe} "
                                 f"ranges={ranges} read {r} "
                                 f"len {lens[r]}: "
                                 f"fast {got} != v0 {want}")


# (G, K, SG): strips of 6-8 rows (3-5 strips a read), stages of 1-4 groups (reads or pairs)
PIPE_CONFIGS = [(4, 2, 2), (2, 3, 1), (8, 1, 2), (2, 4, 4)]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    configs = [(8, 4), (4, 2), (16, 1), (8, 2)]   # small strips force several passes
    keep = split = 0
    with tempfile.TemporaryDirectory() as tmp:
        for c in range(n):
            g, reads, sc = case(c, tmp)
            keep += int((fast.graph_tables(g, Mode.LOCAL, sc).n_keep_cols))
            # both strands: two column ranges (one a strand), each read's halves as units
            assert len(fast.column_ranges(g, 2)) == (3 if g.strands == "both" else 2)
            split += g.strands == "both"
            for mode in Mode:
                G, K = configs[(c + int(mode)) % len(configs)]
                check(g, reads, sc, mode, G, K, pipe=False, ranges=2)
                # the pipelined kernel: 2-3 stages of a block on the same reads' strips
                G2, K2, SG = PIPE_CONFIGS[(c + int(mode)) % len(PIPE_CONFIGS)]
                check(g, reads, sc, mode, G2, K2, pipe=SG, ranges=2)
                if mode == Mode.LOCAL:        # default: the 16-bit pair kernel; also 32-bit
                    assert fast.pair_fits(sc, mode, int(reads.lengths().max()))
                    check(g, reads, sc, mode, G, K, pair=False, ranges=1)
            # the variant's batch entry point: empty reads in the middle and at the ends
            # (their codes are skipped by slicing codes_flat)
            order = [len(reads.names) - 1] + list(range(len(reads.names))) + [len(reads.names) - 1]
            sub = reads.subset(order)
            got = fast.align_batch(g, sub, sc, Mode.LOCAL)
            ref = v0_cpu.align_batch(g, sub, sc, Mode.LOCAL)
            for x, y in ((got.score, ref.score), (got.end_i, ref.end_i), (got.end_j, ref.end_j)):
                assert np.array_equal(x, y), (c, x, y)
            # device buffers are allocated once: the same batch again allocates nothing
            before = _devpool.pool().allocations
            n0, c0 = fast.PROFILE["launches"], fast.PROFILE["cells"]
            again = fast.align_batch(g, sub, sc, Mode.LOCAL)
            # the CLI's "fast kernel" line: one launch, every read base x every column
            assert fast.PROFILE["launches"] == n0 + 1
            assert fast.PROFILE["cells"] - c0 == int(sub.lengths().sum()) * g.n_bases
            assert _devpool.pool().allocations == before, "fast: device buffers reallocated"
            assert np.array_equal(again.score, ref.score) and np.array_equal(again.end_j, ref.end_j)
    assert keep > 0, "no keep merge column (previous column + slots) in the cases"
    assert split > 0 or n < 2, "no case split into column ranges"
    print("OK", n)


if __name__ == "__main__":
    main()
