"""What seeded alignment's candidate windows cost, read by read (issue #45: long reads).

    python -m bench.candidates --graph MHC.gfa --reads long.fq [--index MHC.gfa.s2gi]
        [--show 12]

Seeds, chains and windows only (``SeededAligner.candidates``, no DP): windows a read, each
window's width in columns over the read's length, each candidate chain's score over the
read's best chain's, and the DP cells (rows x window columns) of all windows against
those of each read's best-chain window. These are the candidates before the aligner's
bound (the longest walk, then a q-gram count: windows that cannot come within a few
mismatches of the best one's score are not aligned, ``--timings``' "windows dropped by
bound"), so the cells are an upper limit on what the other candidates cost. One JSON
line at the end; ``--show`` reads' details before it.
"""
from __future__ import annotations

import argparse
import json

import numpy as np


def summary(cand, lengths) -> dict:
    """Windows a read, width / read length (median, p90) of best-chain and other windows,
    other candidates' chain score / best chain's (median, p90), and cells all / best."""
    wg = cand.wg
    width = (wg.t_hi - wg.t_lo).astype(np.int64)
    rows = lengths[cand.t_read]
    first = np.zeros(len(width), np.bool_)
    first[cand.first[cand.ncand > 0]] = True         # a read's windows: best chain first
    best_chain = cand.t_chain[cand.first[cand.t_read]]
    ratio = cand.t_chain[~first] / np.maximum(best_chain[~first], 1e-9)
    cells = width * rows
    q = (lambda x, p: float(np.percentile(x, p)) if len(x) else None)
    return {"reads": int(len(lengths)), "windows_per_read": float(cand.n_tasks / max(len(lengths), 1)),
            "best_width_over_len_median": q(width[first] / rows[first], 50),
            "best_width_over_len_p90": q(width[first] / rows[first], 90),
            "other_width_over_len_median": q(width[~first] / rows[~first], 50),
            "other_chain_over_best_median": q(ratio, 50),
            "other_chain_over_best_p90": q(ratio, 90),
            "cells_all_over_best": float(cells.sum() / max(cells[first].sum(), 1))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("--graph", required=True)
    ap.add_argument("--reads", required=True)
    ap.add_argument("--index", help="the seed index (default: GRAPH.s2gi, built if absent)")
    ap.add_argument("--show", type=int, default=0, help="print this many reads' windows")
    args = ap.parse_args(argv)
    from s2g.graph import load_graph
    from s2g.index import get_index
    from s2g.reads import read_reads
    from s2g.scoring import Mode, Scoring
    from s2g.seeded import SeededAligner
    g = load_graph(args.graph)
    ix = get_index(g, args.graph, index=args.index)
    reads = read_reads(args.reads)
    cand = SeededAligner(g, ix, Scoring(), Mode.LOCAL).candidates(reads)
    lengths = np.diff(np.asarray(reads.offsets, np.int64))
    wg = cand.wg
    for r in range(min(args.show, reads.n_reads)):
        f, k = int(cand.first[r]), int(cand.ncand[r])
        w = (wg.t_hi[f:f + k] - wg.t_lo[f:f + k]) / max(lengths[r], 1)
        c = cand.t_chain[f:f + k] / max(cand.t_chain[f], 1e-9) if k else []
        print(f"read {r}: {k} windows, width/len {np.round(w, 2).tolist()}, chain/best "
              f"{np.round(c, 2).tolist()}")
    print(json.dumps({"graph": args.graph, "reads_file": args.reads, **summary(cand, lengths)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
