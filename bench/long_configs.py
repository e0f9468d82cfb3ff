"""Long-read strip shapes: time 10 kbp reads at several G x K, each checked first.

    python3 bench/long_configs.py [--configs 8x24,16x24,8x19] [--reads 12672] [--len 10000]

A 20 kbp SNP graph (both strands), reads sampled from it with 1% substitutions; for each
config: 8 reads against the CPU oracle (local mode; score and end cell), then the
kernel's median time of 3 launches after a warm-up (CUDA events) over all reads.
"""
import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.fast import batch, check, time_kernel  # noqa: E402
from s2g.graph import load_graph  # noqa: E402
from s2g.scoring import Mode, Scoring  # noqa: E402
from s2g.simulate import sample_reads, snp_graph  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--configs", default="8x24,16x24,8x19")
    ap.add_argument("--reads", type=int, default=12672)
    ap.add_argument("--len", type=int, default=10000)
    ap.add_argument("--bases", type=int, default=20000)
    args = ap.parse_args()
    from numba import cuda
    sg, ref = snp_graph(args.bases, 50, 2, 1)
    p = os.path.join(tempfile.mkdtemp(), "g.gfa")
    sg.write_gfa(p, ref)
    g = load_graph(p)
    seqs = [s for _, s, _ in sample_reads(sg, args.reads, args.len, 0.01, 0.5, 2)]
    sc = Scoring()
    rb = batch(seqs)
    for cfg in args.configs.split(","):
        G, K = map(int, cfg.split("x"))
        nb = check(g, batch(seqs[:8]), sc, Mode.LOCAL, G, K, cfg)
        r, _ = time_kernel(g, rb, sc, Mode.LOCAL, G, K, 3)
        print(f"{cuda.get_current_device().name} {cfg} reads={args.reads} len={args.len} "
              f"graph={g.n_bases} ms={r['median_ms']:.1f} GCUPS={r['gcups']:.0f} "
              f"mismatches={nb}", flush=True)


if __name__ == "__main__":
    main()
