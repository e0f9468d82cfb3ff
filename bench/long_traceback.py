"""Long-read traceback under a memory limit (row checkpoints), on a real graph.

    python bench/long_traceback.py [--length 20000] [--limit-mib 256]

Aligns a piece of the C4 NA19240.1 haplotype to C4-90.gfa (../shared/data/real) with
the `cpu` variant (local mode), then runs the windowed traceback with
--max-traceback-cells = the limit, and prints times and peak RSS.
"""
import argparse
import os
import resource
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import s2g  # noqa: E402
from s2g.trace import traceback_batch  # noqa: E402

REAL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data", "real")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--length", type=int, default=20000)
    ap.add_argument("--offset", type=int, default=30000)
    ap.add_argument("--limit-mib", type=int, default=256)
    args = ap.parse_args()
    g = s2g.load_graph(os.path.join(REAL, "c4_gwfa", "C4-90.gfa"))
    with open(os.path.join(REAL, "c4_gwfa", "C4-NA19240.1.fa")) as fh:
        seq = "".join(line.strip() for line in fh if not line.startswith(">"))
    reads = s2g.ReadBatch.from_sequences(["piece"], [seq[args.offset:args.offset + args.length]])
    t = time.perf_counter()
    res = s2g.align(g, reads, variant="cpu", traceback=False, method="exact")
    t_align = time.perf_counter() - t
    t = time.perf_counter()
    traceback_batch(g, reads, s2g.Scoring(), s2g.Mode.LOCAL, res, max_cells=args.limit_mib << 20)
    t_tb = time.perf_counter() - t
    r = res[0]
    print(f"read {args.length} bp; score {r.score}; read span {r.traceback.qstart}-{r.traceback.qend}; "
          f"align {t_align:.1f} s; traceback {t_tb:.1f} s under {args.limit_mib} MiB; "
          f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MB")


if __name__ == "__main__":
    main()
