"""Byte-identical outputs across a refactoring: run a fixed set of CPU alignments through
the CLI and print one SHA-1 per output GAF (of the error line where a run fails).

    python -m bench.golden --save /tmp/golden.txt     # before the change
    python -m bench.golden --check /tmp/golden.txt    # after: exit 1 on any difference
    python -m bench.golden --gpu --check bench/results/golden_cpu.txt
                                                       # on the GPU machine: the same cases
                                                       # on the GPU (-v fast; seeded and
                                                       # auto pick the GPU) == the CPU's

The cases cover every CPU path a restructuring can move: v0/cpu/simd exact DP with
traceback in all three modes, --no-traceback, the seeded path (default and --max-windows
cuts, unseeded fallbacks), a cyclic graph (unrolled and --break-cycles), and real graphs
from ../shared/data/real when present. bench/results/golden_cpu.txt: the hashes of
64ce69c (2-core VM, 2026-11-28), unchanged by the #41 restructuring; three seeded cases
saved again in session 60 (2026-12-06), changed on purpose by two later commits and by
nothing else (a bisect; at 1b8af67 the old hashes come back with the old settings):
a863c6b (seedless reads' full-DP budget 5e8 -> 5e7 cells: "sim seeded", 4 reads' MAPQ 255
-> 3; `--unseeded full` gives the old hash) and d48b52a (`--unseeded-min-score` 60: "brca2
seeded forward" 39 and "cyclic seeded" 1 chance full-DP hits become no-hit lines;
`--unseeded-min-score 0` gives the old hashes). About 1.5-3.5 minutes on a 2-core
machine, warm.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
REAL = os.path.join(ROOT, "..", "shared", "data", "real")


def _cases(tmp):
    ex, fq = f"{ROOT}/graphs/example.gfa", f"{ROOT}/graphs/example.fq"
    brca, bfq = f"{ROOT}/graphs/cactus-BRCA2.gfa", f"{ROOT}/graphs/cactus-BRCA2.100.fq"
    sim = os.path.join(tmp, "sim")
    subprocess.run([sys.executable, "-m", "s2g", "simulate", sim, "--total-bases", "200000",
                    "--reads", "400", "--seed", "7", "--error-rate", "0.03"],
                   check=True, capture_output=True)
    cyc = os.path.join(tmp, "cyc.gfa")
    with open(cyc, "w") as f:
        f.write("H\tVN:Z:1.0\nS\t1\tACGTACGTAC\nS\t2\tGGTTCCAAGG\nS\t3\tTTAGC\n"
                "L\t1\t+\t2\t+\t0M\nL\t2\t+\t3\t+\t0M\nL\t3\t+\t1\t+\t0M\n")
    cfq = os.path.join(tmp, "cyc.fq")
    with open(cfq, "w") as f:
        for i, s in enumerate(["ACGTACGTACGGTTCCAAGGTTAGCACGTACGTACGGTTCC",
                               "GGTTCCAAGGTTAGCACGTACGTACGGTTCCAAGGTTAGCACG", "TTAGCACGTA"]):
            f.write(f"@c{i}\n{s}\n+\n{'I' * len(s)}\n")
    out = []
    for v in ("v0", "cpu", "simd"):
        for mode in ("local", "semiglobal", "global"):
            out.append((f"example {v} {mode}", [ex, fq, "--exact", "-v", v, "-m", mode]))
    out += [
        ("example simd no-traceback", [ex, fq, "--exact", "-v", "simd", "--no-traceback"]),
        ("example auto", [ex, fq]),
        ("example seeded", [ex, fq, "--seeded"]),
        ("brca2 exact simd", [brca, bfq, "--exact", "-v", "simd"]),
        ("brca2 seeded", [brca, bfq, "--seeded"]),
        ("brca2 seeded -N 3", [brca, bfq, "--seeded", "-N", "3", "--max-windows", "2"]),
        ("brca2 seeded forward", [brca, bfq, "--seeded", "--strands", "forward"]),
        ("sim exact simd", [f"{sim}.gfa", f"{sim}.fq", "--exact", "-v", "simd"]),
        ("sim exact cpu semiglobal", [f"{sim}.gfa", f"{sim}.fq", "--exact", "-v", "cpu",
                                      "-m", "semiglobal"]),
        ("sim seeded", [f"{sim}.gfa", f"{sim}.fq", "--seeded"]),
        ("sim seeded unseeded=unmapped", [f"{sim}.gfa", f"{sim}.fq", "--seeded",
                                          "--unseeded", "unmapped", "--max-occ", "2"]),
        ("cyclic exact", [cyc, cfq, "--exact", "-v", "cpu"]),
        ("cyclic break", [cyc, cfq, "--exact", "-v", "simd", "--break-cycles"]),
        ("cyclic seeded", [cyc, cfq, "--seeded"]),
    ]
    drb = os.path.join(REAL, "drb1_odgi")
    if os.path.isdir(drb):
        rfa = os.path.join(tmp, "drb1.fa")
        with open(os.path.join(drb, "DRB1-3123.fa")) as f, open(rfa, "w") as g:
            # the first three haplotypes, cut into 300 bp pieces: reads with a known origin
            n, name, seq = 0, None, []
            recs = []
            for line in f:
                if line.startswith(">"):
                    if name:
                        recs.append((name, "".join(seq)))
                    name, seq = line[1:].split()[0], []
                else:
                    seq.append(line.strip())
            recs.append((name, "".join(seq)))
            for name, s in recs[:3]:
                for i in range(0, len(s) - 300, 700):
                    g.write(f">{name}_{i}\n{s[i:i + 300]}\n")
                    n += 1
        out.append(("drb1 seeded", [os.path.join(drb, "DRB1-3123.gfa"), rfa, "--seeded"]))
        out.append(("drb1 exact simd", [os.path.join(drb, "DRB1-3123.gfa"), rfa, "--exact",
                                         "-v", "simd", "-m", "semiglobal"]))
    return out


def run(threads: int, gpu: bool = False):
    res = []
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, S2G_PREWARM="0")
        for name, args in _cases(tmp):
            if gpu:     # the GPU's exact variant for every CPU one: GPU GAF == CPU GAF
                args = ["fast" if a in ("v0", "cpu", "simd") else a for a in args]
            gaf = os.path.join(tmp, "out.gaf")
            p = subprocess.run([sys.executable, "-m", "s2g", "align", *args, "-o", gaf,
                                "-t", str(threads), "--no-graph-cache", "--no-progress"],
                               capture_output=True, text=True, env=env)
            h = hashlib.sha1()
            if p.returncode != 0:
                h.update(f"rc={p.returncode} {p.stderr.strip().splitlines()[-1:]}".encode())
            else:
                with open(gaf, "rb") as f:
                    h.update(f.read())
            res.append((name, h.hexdigest()[:16]))
            print(f"{h.hexdigest()[:16]}  {name}" + ("" if p.returncode == 0 else
                  f"  (rc {p.returncode})"), flush=True)
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--save", metavar="FILE")
    g.add_argument("--check", metavar="FILE")
    ap.add_argument("-t", "--threads", type=int, default=2)
    ap.add_argument("--gpu", action="store_true",
                    help="run the cases on the GPU (needs one); compare with CPU hashes")
    a = ap.parse_args(argv)
    res = run(a.threads, a.gpu)
    if a.save:
        with open(a.save, "w") as f:
            f.writelines(f"{h}  {n}\n" for n, h in res)
    if a.check:
        want = {}
        with open(a.check) as f:
            for line in f:
                h, n = line.rstrip("\n").split("  ", 1)
                want[n] = h
        bad = [n for n, h in res if want.get(n) != h]
        print("identical" if not bad else f"DIFFERENT: {', '.join(bad)}")
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
