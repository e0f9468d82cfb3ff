"""Two GAF files of the same reads, read by read: how many have the same score (``AS:i``),
the same path, and MAPQ >= 30 in the first; the reads whose scores differ. For seeded
against full-graph DP on graphs where ``bench.seeded`` cannot run (cyclic graphs as
``s2g align`` unrolls them, no simulated truth needed):

    s2g align G.gfa reads.fq --seeded -o seeded.gaf
    s2g align G.gfa reads.fq --exact -o exact.gaf
    python -m bench.gaf_compare seeded.gaf exact.gaf

Secondary lines (``tp:A:S``) are left out. Exit status 1 where a read is in one file only.
"""
from __future__ import annotations

import argparse
import json
import sys


def load(path):
    """read name -> (score or None, path, MAPQ) of its primary line."""
    out = {}
    with open(path) as fh:
        for line in fh:
            f = line.rstrip("\n").split("\t")
            tags = {t[:2]: t[5:] for t in f[12:]}
            if tags.get("tp") == "S":
                continue
            out[f[0]] = (int(tags["AS"]) if "AS" in tags else None, f[5], int(f[11]))
    return out


def compare(a, b):
    common = a.keys() & b.keys()
    diff = sorted((k, a[k][0], b[k][0]) for k in common if a[k][0] != b[k][0])
    return {"reads": len(common), "only_first": len(a.keys() - b.keys()),
            "only_second": len(b.keys() - a.keys()),
            "same_score": len(common) - len(diff),
            "same_path": sum(1 for k in common if a[k][1] == b[k][1]),
            "mapq30_first": sum(1 for k in common if a[k][2] >= 30 and a[k][2] != 255),
            "first_lower": sum(1 for _, x, y in diff if (x is None) or (y is not None and x < y)),
            "differ": diff[:20]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("first")
    ap.add_argument("second")
    args = ap.parse_args(argv)
    r = compare(load(args.first), load(args.second))
    print(json.dumps(r, indent=1))
    return 1 if r["only_first"] or r["only_second"] else 0


if __name__ == "__main__":
    sys.exit(main())
