"""How wide seeded windows are, in read lengths, and why (issue #45): per read's lead
window (its best chain's) and the other windows, the width in columns over the read's
length and the window's longest walk (:func:`s2g.seeded.windows.longest_walks`) over it;
a window much wider than its longest walk holds parallel branches, not length. Candidates
only (seeds, chains, windows; no DP).

    python -m bench.window_widths --graph MHC.gfa --reads long.fq [--n 1000] [--top 8]

Session 30 (MHC, the 1,000 x 10 kbp 5% reads of docs/performance.md): lead windows median
1.00, p90 3.72, max 16.30, mean 1.82 read lengths; longest walk median 1.00, p90 1.36; with
merged chains' corridors built without their flank searches (``corridor_merge_flanks``
off, the default since): p90 3.04, max 14.54, mean 1.58.
"""
from __future__ import annotations

import argparse

import numpy as np


def main(argv=None):
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--graph", required=True)
    ap.add_argument("--reads", required=True, help="FASTA/FASTQ (gzip too)")
    ap.add_argument("--n", type=int, default=1000, help="reads (the first N)")
    ap.add_argument("--top", type=int, default=8, help="widest lead windows listed")
    args = ap.parse_args(argv)
    from s2g.graph import open_graph
    from s2g.index import index_path, load_index
    from s2g.reads import iter_read_batches
    from s2g.scoring import Mode, Scoring
    from s2g.seeded import SeededAligner
    from s2g.seeded.windows import longest_walks
    g = open_graph(args.graph)
    ix = load_index(index_path(args.graph), g)
    reads = next(iter(iter_read_batches(args.reads, args.n)))
    cand = SeededAligner(g, ix, Scoring(), Mode.LOCAL).candidates(reads)
    wg = cand.wg
    gg = wg.graph
    lens = reads.lengths()
    lw = longest_walks(wg.piece_at, gg.node_start, gg.pred_ptr, gg.pred_idx)
    width = wg.t_hi - wg.t_lo
    lead = cand.first[cand.ncand > 0]
    R = lens[cand.t_read[lead]]
    wr, lr = width[lead] / R, lw[lead] / R

    def dist(x):
        return (f"median {np.median(x):.2f}, p90 {np.percentile(x, 90):.2f}, "
                f"max {x.max():.2f}, mean {x.mean():.2f}")

    print(f"{len(lead)} lead windows, width / read length: {dist(wr)}")
    print(f"  longest walk / read length: {dist(lr)}")
    pieces = np.diff(wg.piece_at)[lead]
    for k in np.argsort(-wr)[:args.top]:
        print(f"  width {wr[k]:.2f}, longest walk {lr[k]:.2f}, {pieces[k]} pieces, "
              f"{cand.ncand[cand.t_read[lead[k]]]} windows for the read")
    other = np.setdiff1d(np.arange(len(cand.t_read)), lead)
    if len(other):
        wo = width[other] / lens[cand.t_read[other]]
        print(f"{len(other)} other windows, width / read length: {dist(wo)}")


if __name__ == "__main__":
    main()
