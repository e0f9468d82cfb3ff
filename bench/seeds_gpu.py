"""Seeds and chains on the GPU (s2g/seeded/chains_gpu.py) against the CPU's batch_chains:
the same arrays, and each side's time per batch.

    python -m bench.seeds_gpu --graph MHC.gfa --reads reads.fq.gz [--batch 50000]
        [--batches 4] [--threads N]

The GPU's kernels are timed with CUDA events after a warm-up batch (count and chain
kernels, milliseconds a batch), the call as a whole by the wall clock (uploads, the
prefix sum, downloads); the CPU's batch_chains on --threads threads (default: all).
Prints one JSON line with the device's name.
"""
from __future__ import annotations

import argparse
import json
import time

import numba
import numpy as np


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graph", required=True)
    ap.add_argument("--reads", required=True)
    ap.add_argument("--batch", type=int, default=50_000)
    ap.add_argument("--batches", type=int, default=4)
    ap.add_argument("--threads", type=int, default=0)
    a = ap.parse_args(argv)
    import s2g
    from numba import cuda

    from s2g.index import get_index
    from s2g.seeded import SeededAligner, chains_gpu
    from s2g.seeded.chains import batch_chains
    if a.threads:
        numba.set_num_threads(a.threads)
    g = s2g.load_graph(a.graph)
    ix = get_index(g, a.graph)
    sa = SeededAligner(g, ix, s2g.Scoring(), s2g.Mode.LOCAL)
    dix = chains_gpu.DeviceIndex(ix)
    starts, shift = ix.buckets
    args = (sa.max_occ, 2 * sa.max_cand, sa.min_chain, sa.max_window)
    name = getattr(cuda.get_current_device(), "name", "CUDA simulator")
    out = {"device": name.decode() if isinstance(name, bytes) else str(name),
           "graph": a.graph, "batch": a.batch, "threads": numba.get_num_threads(),
           "gpu_s": [], "cpu_s": [], "count_ms": [], "chain_ms": [], "anchors": [],
           "equal": True}
    it = s2g.iter_read_batches(a.reads, a.batch)
    for t in range(a.batches + 1):
        reads = next(it, None)
        if reads is None:
            break
        offs = np.asarray(reads.offsets, np.int64)
        times = {}
        t0 = time.perf_counter()
        got = chains_gpu.batch_chains(dix, reads.codes_flat, offs, *args, times=times)
        t1 = time.perf_counter()
        want = batch_chains(reads.codes_flat, offs, ix.keys, ix.cols, starts, shift, ix.k,
                            ix.s, sa.max_occ, 2 * sa.max_cand, sa.min_chain, sa.max_window,
                            0, 0)
        t2 = time.perf_counter()
        out["equal"] &= all(np.array_equal(x, y) for x, y in zip(want, got))
        if t == 0:
            continue                       # warm-up (compiles, loads the cache)
        out["gpu_s"].append(round(t1 - t0, 4))
        out["cpu_s"].append(round(t2 - t1, 4))
        out["count_ms"].append(round(times["count"], 3))
        out["chain_ms"].append(round(times["chain"], 3))
        out["anchors"].append(times["anchors"])
    print(json.dumps(out))
    return 0 if out["equal"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
