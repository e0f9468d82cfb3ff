"""Paired SAM records against the truth on the reference path: placement and MAPQ.

    python3 -m bench.sam_pairs --graph MHC.gfa --ref-path CHM13 --pairs 20000 --out DIR \
        [--s2g-dir WORKTREE]

Fragments of Normal(``--frag-mean``, ``--frag-sd``) bases are cut from the reference path
itself (so each mate's true place on it is known to the base), in either orientation;
mate 1 is the fragment's first ``--read-len`` bases, mate 2 the reverse complement of its
last; ``--error`` per base, ``--indel-share`` of them 1-3 bp indels (as
:func:`bench.seeded.sample`). ``s2g align GRAPH r1.fq r2.fq -o out.sam --ref-path REF``
runs as a command (from ``--s2g-dir``: another checkout, for an A/B on the same reads),
and each primary record is compared with its mate's truth: *right* when its POS, less a
left soft clip, is within ``--slack`` bases of the true start on the true strand.
Written to ``DIR/sam_pairs.json``: per MAPQ threshold (0, 1, 10, 20, 30, 60) the records
at or above it and the share right (MAPQ calibration: >= 99% at 30), the proper-pair
share, records with MAPQ 0, unmapped records, and the command's wall time; the records
of MAPQ >= 30 that are not right to ``DIR/wrong.txt``.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time

import numpy as np

from bench.seeded import mutate

_COMP = np.array([3, 2, 1, 0, 4], np.uint8)
_LET = np.frombuffer(b"ACGTN", np.uint8)


def sample_pairs(seq, n, args, rng):
    """(mate 1 codes, mate 2 codes, truths): truth = (start, reverse) per mate, 0-based on
    the path, the start of the mate's bases' span."""
    L = args.read_len
    m1, m2, truth = [], [], []
    while len(m1) < n:
        f = max(L, int(round(rng.normal(args.frag_mean, args.frag_sd))))
        f0 = int(rng.integers(0, len(seq) - f))
        frag = seq[f0:f0 + f]
        if (frag > 3).mean() > 0.05:
            continue
        left, right = frag[:L], _COMP[frag[-L:]][::-1]     # forward at f0; reverse at f0+f-L
        if rng.random() < 0.5:
            m1.append(left)
            m2.append(right)
            truth.append(((f0, False), (f0 + f - L, True)))
        else:                                              # the other strand's fragment
            m1.append(right)
            m2.append(left)
            truth.append(((f0 + f - L, True), (f0, False)))
    m1 = [mutate(x, args.error, args.indel_share, rng) for x in m1]
    m2 = [mutate(x, args.error, args.indel_share, rng) for x in m2]
    return m1, m2, truth


def _write_fastq(path, mates, k):
    with open(path, "w") as fh:
        for i, s in enumerate(mates):
            fh.write(f"@p{i}/{k}\n{_LET[s].tobytes().decode()}\n+\n{'I' * len(s)}\n")


def score_sam(path, truth, offset, slack):
    """Per primary record: (MAPQ, right, proper, mapped)."""
    rows = []
    seen = 0
    with open(path) as fh:
        for line in fh:
            if line.startswith("@"):
                continue
            f = line.split("\t", 6)
            flag = int(f[1])
            if flag & 0x900:
                continue
            seen += 1
            i = int(f[0][1:])
            mate = 0 if flag & 64 else 1
            start, rev = truth[i][mate]
            mapped = not flag & 4
            right = False
            if mapped:
                m = re.match(r"(\d+)S", f[5])
                pos = int(f[3]) - 1 - offset - (int(m.group(1)) if m else 0)
                right = bool(flag & 16) == rev and abs(pos - start) <= slack
            rows.append((int(f[4]) if mapped else -1, right, bool(flag & 2), mapped,
                         f"{line.split(chr(9), 9)[:9]} truth {start} {'-' if rev else '+'}"))
    if seen != 2 * len(truth):
        raise SystemExit(f"{path}: {seen} primary records for {2 * len(truth)} reads")
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graph", required=True)
    ap.add_argument("--ref-path", required=True)
    ap.add_argument("--pairs", type=int, default=20_000)
    ap.add_argument("--read-len", type=int, default=150)
    ap.add_argument("--frag-mean", type=float, default=400)
    ap.add_argument("--frag-sd", type=float, default=50)
    ap.add_argument("--error", type=float, default=0.01)
    ap.add_argument("--indel-share", type=float, default=0.2)
    ap.add_argument("--slack", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--s2g-dir", default=None, help="run s2g from this checkout (A/B)")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    from s2g.graph import load_graph
    from s2g.sam import RefPath
    args.out = os.path.abspath(args.out)
    os.makedirs(args.out, exist_ok=True)
    g = load_graph(args.graph, keep_paths=True, cache="read")
    ref = RefPath(g, args.ref_path)
    rng = np.random.default_rng(args.seed)
    m1, m2, truth = sample_pairs(np.asarray(ref.seq), args.pairs, args, rng)
    r1, r2 = (os.path.join(args.out, f"r{k}.fq") for k in (1, 2))
    _write_fastq(r1, m1, 1)
    _write_fastq(r2, m2, 2)
    sam = os.path.join(args.out, "out.sam")
    cmd = [sys.executable, "-m", "s2g", "align", os.path.abspath(args.graph), r1, r2,
           "-o", sam, "--ref-path", args.ref_path, "--no-progress"]
    if args.threads:
        cmd += ["-t", str(args.threads)]
    env = dict(os.environ)
    if args.s2g_dir:
        env["PYTHONPATH"] = os.path.abspath(args.s2g_dir)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, env=env, cwd=args.s2g_dir or None)
    wall = time.perf_counter() - t0
    rows = score_sam(sam, truth, ref.offset, args.slack)
    q = np.array([r[0] for r in rows])
    ok = np.array([r[1] for r in rows])
    out = {"graph": args.graph, "ref_path": args.ref_path, "pairs": args.pairs,
           "s2g_dir": args.s2g_dir, "wall_s": round(wall, 2),
           "proper": float(np.mean([r[2] for r in rows])),
           "unmapped": int((q < 0).sum()), "mapq0": int((q == 0).sum()),
           "right_all": float(ok.mean()), "mapq": {}}
    for t in (0, 1, 10, 20, 30, 60):
        sel = q >= t
        out["mapq"][t] = {"records": int(sel.sum()), "right": float(ok[sel].mean()) if sel.any()
                          else None, "wrong": int((sel & ~ok).sum())}
    with open(os.path.join(args.out, "wrong.txt"), "w") as fh:
        fh.writelines(r[4] + "\n" for r in rows if r[0] >= 30 and not r[1])
    with open(os.path.join(args.out, "sam_pairs.json"), "w") as fh:
        json.dump(out, fh, indent=1)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
