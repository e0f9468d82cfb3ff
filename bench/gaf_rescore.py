"""Per read, the best alignment of two GAF files rescored under s2g's affine scoring.

    python -m bench.gaf_rescore S2G.gaf OTHER.gaf [--scoring 2,4,4,2]

Each line's ``cg:Z`` CIGAR (``=``/``X``/``I``/``D``) is scored as match ``+a``, mismatch
``-b``, a gap of ``k`` ``-(o + k e)``, and each read keeps its best line. Prints how many
reads score higher, equal and lower in the first file than in the second (a read absent
from a file counts as lowest), and the first few lower ones: issue #45's "never a lower
score" beside GraphAligner (which aligns by edit distance and writes ``AS:f``).
"""
from __future__ import annotations

import argparse
import re
from collections import defaultdict

_OPS = re.compile(r"(\d+)([=XIDM])")


def score(cg: str, a=2, b=4, o=4, e=2) -> int:
    s = 0
    for n, op in _OPS.findall(cg):
        n = int(n)
        if op == "=":
            s += a * n
        elif op == "X":
            s -= b * n
        elif op in "ID":
            s -= o + e * n
        else:
            raise ValueError(f"CIGAR op {op!r}: only =/X/I/D can be scored")
    return s


def best_scores(path: str, sc) -> dict:
    out = defaultdict(lambda: None)
    with open(path) as fh:
        for line in fh:
            f = line.rstrip("\n").split("\t")
            cg = next((x[5:] for x in f[12:] if x.startswith("cg:Z:")), None)
            if cg is None:
                continue
            s = score(cg, *sc)
            if out[f[0]] is None or s > out[f[0]]:
                out[f[0]] = s
    return dict(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("first")
    ap.add_argument("second")
    ap.add_argument("--scoring", default="2,4,4,2", help="a,b,o,e")
    args = ap.parse_args(argv)
    sc = tuple(int(x) for x in args.scoring.split(","))
    one, two = best_scores(args.first, sc), best_scores(args.second, sc)
    low = -(1 << 62)
    names = sorted(set(one) | set(two))
    hi = sum(one.get(n, low) > two.get(n, low) for n in names)
    eq = sum(one.get(n, low) == two.get(n, low) for n in names)
    lo = [n for n in names if one.get(n, low) < two.get(n, low)]
    print(f"{len(names)} reads: higher {hi}, equal {eq}, lower {len(lo)}")
    for n in lo[:10]:
        print(f"  {n}: {one.get(n)} < {two.get(n)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
