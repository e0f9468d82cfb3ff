"""The ``fast`` kernel's window form (s2g/variants/fast/windows.py) under the CUDA
simulator against the reference window DP (s2g.window.align_windows_ref), field for field.

Invoked by tests/test_window.py in a subprocess with NUMBA_ENABLE_CUDASIM=1. Small SNP
graphs (one or both strands, tiny or longer nodes), simulated reads with errors of
20-60 bases and one of 200-260 (the 32-lane launch), a read too long for one strip (not
run: NEG_INF, ``done`` False), a random read and an empty one, random scoring, local and
semiglobal. The tasks are the seeded windows of every read plus random (read, window)
pairs, so the groups of a warp hold windows of different widths and reads. The column
tables made on the GPU (wtables_gpu) are checked word for word against the host's.
Usage: python tests/fast_windows_cudasim_check.py [n_cases] -> prints "OK <cases> <windows>".
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
from s2g.scoring import NEG_INF, Mode, Scoring  # noqa: E402
from s2g.seeded import SeededAligner  # noqa: E402
from s2g.simulate import sample_reads, snp_graph  # noqa: E402
from s2g.variants import _devpool  # noqa: E402
from s2g.variants.fast import windows as fw  # noqa: E402
from s2g.variants.fast.wtables_gpu import device_tables  # noqa: E402
from s2g.window import align_windows_ref  # noqa: E402


def check_device_tables(wg, seed):
    """The tables made on the GPU (wtables_gpu.device_tables) == the host's, word for word,
    with the window graph's bases uploaded and gathered from the graph's (gpu_window_bases)."""
    from s2g import config
    for prmt, gather in ((False, False), (True, False), (False, True), (True, True)):
        config.configure(gpu_window_bases=gather)
        want = fw.window_tables(wg.graph, wg.piece_at, prmt)
        got = device_tables(_devpool.pool(), wg.graph, wg.piece_at, prmt, tag="check")
        assert want[5] == got[5], f"seed {seed}: slots {want[5]} != {got[5]}"
        for name, x, y in zip(("colinfo", "colsub", "mword", "mptr", "mslot"), want, got):
            y = y.copy_to_host()
            if not np.array_equal(x, y):
                bad = np.nonzero(x != y)[0] if len(x) == len(y) else [len(x), len(y)]
                raise AssertionError(f"seed {seed} prmt {prmt} gather {gather} {name}: first "
                                     f"differences at "
                                     f"{list(bad[:5])}")


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    total = 0
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(n):
            rng = np.random.default_rng(seed)
            sg, ref = snp_graph(int(rng.integers(300, 600)), int(rng.integers(5, 60)),
                                int(rng.integers(1, 4)), seed)
            path = os.path.join(tmp, f"g{seed}.gfa")
            sg.write_gfa(path, ref)
            g = load_graph(path, strands="both" if seed % 2 else "forward")
            ix = build_index(g, k=11, s=5)
            seqs = [s for _, s, _ in sample_reads(sg, 5, int(rng.integers(20, 60)), 0.05, 0.5,
                                                  seed + 7)]
            if seed % 2 == 0:     # the 32-lane launch (reads over SHORT_G x MAX_K bases)
                seqs += [s for _, s, _ in sample_reads(sg, 1, int(rng.integers(200, 260)),
                                                       0.03, 0.5, seed + 9)]
            seqs.append("".join(rng.choice(list("ACGTN"), int(rng.integers(1, 25)))))
            seqs.append("")
            seqs.append("A" * (fw.MAX_ROWS + 1))       # over one strip: left to the caller
            reads = ReadBatch.from_sequences([f"r{k}" for k in range(len(seqs))], seqs)
            sc = Scoring(*[int(x) for x in rng.integers(1, 6, 4)])
            for mode in (Mode.LOCAL, Mode.SEMIGLOBAL):
                wg = SeededAligner(g, ix, sc, mode, min_chain=11).candidates(reads).wg
                nt = wg.n_tasks
                if nt == 0:
                    continue
                check_device_tables(wg, seed)
                # every read in its windows, then random (read, window) pairs
                extra = int(rng.integers(nt, 3 * nt + 1))
                w = np.concatenate([np.arange(nt), rng.integers(0, nt, extra)])
                tr = np.concatenate([
                    np.asarray(SeededAligner(g, ix, sc, mode, min_chain=11)
                               .candidates(reads).t_read, np.int64),
                    rng.integers(0, reads.n_reads, extra)])
                lo, hi = wg.t_lo[w], wg.t_hi[w]
                want = align_windows_ref(wg.graph, reads.codes_flat, reads.offsets, tr, lo, hi,
                                         sc, mode)
                s, i, j, done = fw.run(wg.graph, wg.piece_at, reads.codes_flat, reads.offsets,
                                       tr, lo, hi, sc, mode)
                lens = np.diff(np.asarray(reads.offsets))[tr]
                assert np.array_equal(done, lens <= fw.MAX_ROWS), "done mask"
                assert (s[~done] == NEG_INF).all() and (j[~done] == -1).all()
                for f, x, y in zip(("score", "end_i", "end_j"), want, (s, i, j)):
                    x = np.asarray(x, np.int64)
                    bad = np.nonzero((x != y) & done)[0]
                    if len(bad):
                        raise AssertionError(
                            f"seed {seed} {mode.name} {f}: tasks {bad[:5]} want {x[bad[:5]]} "
                            f"got {y[bad[:5]]}")
                total += int(done.sum())
    assert total > 0
    print("OK", n, total)


if __name__ == "__main__":
    main()
