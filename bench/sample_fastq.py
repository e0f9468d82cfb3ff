"""Reads with a known origin from a graph's P/W paths as FASTQ (the long-read benches'
inputs; :func:`bench.seeded.sample`: ``--error`` errors a base, ``--indel-share`` of them
1-3 bp indels, half the reads reverse strand; read names carry the origin).

    python -m bench.sample_fastq --graph MHC.gfa --reads 1000 --read-len 10000 \
        --error 0.05 --seed 11 --out long1000.fq
"""
from __future__ import annotations

import argparse
import warnings

import numpy as np

from bench.seeded import sample


def main(argv=None):
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--graph", required=True)
    ap.add_argument("--reads", type=int, default=1000)
    ap.add_argument("--read-len", type=int, default=10_000)
    ap.add_argument("--error", type=float, default=0.05)
    ap.add_argument("--indel-share", type=float, default=0.2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True, help="FASTQ to write (plain text)")
    a = ap.parse_args(argv)
    import s2g
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = s2g.load_graph(a.graph, keep_paths=True, break_cycles=True)
    rb, _ = sample(g, a.reads, a.read_len, a.error, a.indel_share,
                   np.random.default_rng(a.seed))
    with open(a.out, "w") as fh:
        for i in range(rb.n_reads):
            s = rb.codes_flat[rb.offsets[i]:rb.offsets[i + 1]]
            fh.write(f"@{rb.names[i]}\n{''.join('ACGTN'[c] for c in s)}\n+\n{'I' * len(s)}\n")


if __name__ == "__main__":
    main()
