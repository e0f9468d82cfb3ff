"""Seeds and chains on the GPU (s2g/seeded/chains_gpu.py) under the CUDA simulator against
the CPU's :func:`s2g.seeded.chains.batch_chains`, array for array (chains, counts, stats).

Invoked by tests/test_seeded.py in a subprocess with NUMBA_ENABLE_CUDASIM=1. Small SNP
graphs (one or both strands) and the bundled cactus BRCA2 graph; reads sampled from them
with errors, a random read with Ns, an empty read, a read of one base and a read of
repeats (many anchors of equal scores: the order of ties); max_occ 1 or 2 in some cases (seeds
skipped as repeats), min_chain high in some (weak chains). In even cases reads of more
than 4-11 anchors take the block-a-read kernel (heavy_body), the others one thread each; in
odd ones every read is on one thread; BRCA2 reads of more than 60 anchors in blocks.
Usage: python tests/seeds_gpu_cudasim_check.py [n_cases] -> prints "OK <cases> <chains>".
With ``--gpu`` (last argument) the same cases run on a real GPU (the device machine: the
compiled kernels, where the simulator cannot see races or integer widths).
"""
import os
import sys
import tempfile
import warnings

import numpy as np

if sys.argv[-1] == "--gpu":
    sys.argv.pop()
    assert os.environ.get("NUMBA_ENABLE_CUDASIM", "0") == "0", "--gpu: unset NUMBA_ENABLE_CUDASIM"
else:
    assert os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", "set NUMBA_ENABLE_CUDASIM=1"

from s2g.graph import load_graph  # noqa: E402
from s2g.index import build_index  # noqa: E402
from s2g.reads import ReadBatch  # noqa: E402
from s2g.seeded import chains_gpu  # noqa: E402
from s2g.seeded.chains import batch_chains  # noqa: E402
from s2g.simulate import sample_reads, snp_graph  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def uploaded(ix):
    """The index on the device as preload's thread leaves it (once per index object), its
    int32 columns and bucket starts widened there (chains_gpu.device_int64)."""
    from concurrent.futures import Future
    if "_s2g_device" not in ix.__dict__:
        fut = Future()
        fut.set_result(ix)
        chains_gpu.preload(fut).join()
        assert "_s2g_device" in ix.__dict__, "preload did not upload the index"
    dix = chains_gpu.device_index(ix)
    assert chains_gpu.device_index(ix) is dix
    starts, _ = ix.buckets
    for d, h in ((dix.cols, ix.cols), (dix.starts, starts), (dix.keys, ix.keys)):
        assert d.dtype == (np.uint64 if h is ix.keys else np.int64)
        assert np.array_equal(d.copy_to_host(), h), "index arrays differ on the device"
    return dix


def check(g, ix, seqs, max_occ, min_chain, max_chains, max_window, label, heavy=4):
    reads = ReadBatch.from_sequences([f"r{k}" for k in range(len(seqs))], seqs)
    offs = np.asarray(reads.offsets, np.int64)
    starts, shift = ix.buckets
    want = batch_chains(reads.codes_flat, offs, ix.keys, ix.cols, starts, shift, ix.k, ix.s,
                        max_occ, max_chains, min_chain, max_window, 0, 0)
    dix = uploaded(ix)
    got = chains_gpu.batch_chains(dix, reads.codes_flat, offs, max_occ,
                                  max_chains, min_chain, max_window, heavy=heavy)
    assert got is not None, label
    for name, x, y in zip(("chains", "counts", "stats", "way", "nway"), want, got):
        assert x.shape == y.shape and x.dtype == y.dtype, f"{label} {name}: {x.shape} {y.shape}"
        if not np.array_equal(x, y):
            bad = np.argwhere(x != y)[:5]
            raise AssertionError(f"{label} {name}: first differences at {bad.tolist()}: "
                                 f"{x[tuple(bad.T)]} != {y[tuple(bad.T)]}")
    return int(want[1].sum()), int(want[2][:, 0].sum()), int(want[2][:, 2].sum())


def main():
    warnings.filterwarnings("ignore", "overflow", RuntimeWarning)  # the simulator: numpy uint64
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    total = np.zeros(3, np.int64)       # chains, seeds skipped, reads with weak chains
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(n):
            rng = np.random.default_rng(seed)
            sg, ref = snp_graph(int(rng.integers(400, 900)), int(rng.integers(5, 60)),
                                int(rng.integers(1, 4)), seed)
            path = os.path.join(tmp, f"g{seed}.gfa")
            sg.write_gfa(path, ref)
            g = load_graph(path, strands="both" if seed % 2 else "forward")
            ix = build_index(g, k=11, s=5)
            seqs = [s for _, s, _ in sample_reads(sg, 6, int(rng.integers(30, 100)), 0.05, 0.5,
                                                  seed + 7)]
            seqs.append("".join(rng.choice(list("ACGTN"), int(rng.integers(20, 60)))))
            line = "".join(sg.seqs[v] for v in ref)
            seqs += ["", "A", line[40:100] * 3]
            max_occ = 2 if seed % 3 == 2 else 200
            min_chain = 60.0 if seed % 2 else 22.0
            total += check(g, ix, seqs, max_occ, min_chain, 2 * int(rng.integers(1, 5)),
                           int(rng.integers(50, 400)), f"seed {seed}",
                           heavy=1 << 30 if seed % 2 else int(rng.integers(4, 12)))
        g = load_graph(os.path.join(REPO, "graphs", "cactus-BRCA2.gfa"))
        ix = build_index(g)
        seqs = []
        with open(os.path.join(REPO, "graphs", "cactus-BRCA2.100.fq")) as fh:
            for t, line in enumerate(fh):
                if t % 4 == 1 and len(seqs) < 24:
                    seqs.append(line.strip())
        total += check(g, ix, seqs[:6], 200, 38.0, 10, 100_000, "BRCA2", heavy=60)
        total += check(g, ix, seqs[6:], 1, 38.0, 4, 2_000, "BRCA2 max_occ 1", heavy=60)
        total += check(g, ix, seqs, 200, 38.0, 10, 100_000, "BRCA2 one thread a read",
                       heavy=1 << 30)
        # a batch over the anchor budget is left to the CPU (None)
        reads = ReadBatch.from_sequences(["a", "b"], seqs[:2])
        cap = chains_gpu.MAX_BATCH_ANCHORS
        chains_gpu.MAX_BATCH_ANCHORS = 1
        try:
            assert chains_gpu.batch_chains(chains_gpu.DeviceIndex(ix), reads.codes_flat,
                                           np.asarray(reads.offsets, np.int64), 200, 10, 38.0,
                                           100_000) is None
        finally:
            chains_gpu.MAX_BATCH_ANCHORS = cap
    assert total.min() > 0, f"chains, skipped seeds, weak reads: {total}"
    print("OK", n, *total)


if __name__ == "__main__":
    main()
