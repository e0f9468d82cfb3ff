"""Benchmark and on-device check of the `fast` variant (one call of the GPU machine).

    python -m bench.fast --out DIR [--quick]

1. correctness: scores and end cells equal to the CPU oracle (cpu = V0's kernel on all
   cores) on random small graphs in every mode, on reads of the benchmark graph and of
   the real graphs, and on long reads (several strips);
2. kernel GCUPS (CUDA events around the launch, after a warm-up, median of >= 5 or 3
   for long reads) for several (G lanes, K rows) configurations: simulated SNP graph
   100 kbp, node length 50, branching 2, both strands, 150 bp reads; long reads; real
   graphs (150 bp pieces of their haplotypes).
Writes DIR/fast.json and prints a short table last.
"""
import argparse
import json
import os
import platform
import sys
import tempfile
import time
import warnings

import numpy as np

from s2g.config import settings
from s2g.graph import load_graph
from s2g.reads import ReadBatch
from s2g.scoring import Mode, Scoring
from s2g.simulate import sample_reads, snp_graph
from s2g.variants import cpu_parallel, fast

from .long_reads import _default_real_dir

REAL = "../shared/data/real"


def real_file(real, name):
    """``real/name``, or its gzipped copy where only that exists (tests/data/real/lpa_odgi)."""
    p = os.path.join(real, name)
    return p + ".gz" if not os.path.exists(p) and os.path.exists(p + ".gz") else p


def fasta(path):
    import gzip
    seqs, cur = [], []
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as fh:
        for line in fh:
            if line.startswith(">"):
                if cur:
                    seqs.append("".join(cur))
                cur = []
            elif line.strip():
                cur.append(line.strip().upper())
    if cur:
        seqs.append("".join(cur))
    return seqs


def pieces(seqs, n, length, rng, err=0.01):
    out = []
    comp = str.maketrans("ACGT", "TGCA")
    seqs = [s for s in seqs if len(s) >= length]
    for _ in range(n):
        s = seqs[int(rng.integers(len(seqs)))]
        p = int(rng.integers(0, len(s) - length + 1))
        r = np.array(list(s[p:p + length]))
        mut = rng.random(length) < err
        r[mut] = rng.choice(list("ACGT"), int(mut.sum()))
        r = "".join(r)
        out.append(r.translate(comp)[::-1] if rng.random() < 0.5 else r)
    return out


def batch(seqs):
    return ReadBatch.from_sequences([f"r{k}" for k in range(len(seqs))], seqs)


def arrays(reads):
    lens = reads.lengths()
    return reads.codes_flat, reads.offsets, lens


def time_kernel(g, reads, sc, mode, G, K, reps, pipe=None):
    from numba import cuda
    codes, offs, lens = arrays(reads)
    fast.run_kernel(g, codes, offs, lens, sc, mode, G=G, K=K, pipe=pipe)   # warm-up / JIT
    ms = []
    for _ in range(reps):
        ev = (cuda.event(), cuda.event())
        res = fast.run_kernel(g, codes, offs, lens, sc, mode, G=G, K=K, events=ev, pipe=pipe)
        ev[1].synchronize()
        ms.append(cuda.event_elapsed_time(*ev))
    cells = float(g.n_bases) * float(lens.sum())
    med = float(np.median(ms))
    return {"G": G, "K": K, "reads": int(len(lens)), "read_len_mean": float(lens.mean()),
            "graph_bases": g.n_bases, "cells": cells, "ms": ms, "median_ms": med,
            "gcups": cells / (med * 1e-3) / 1e9}, res


def check(g, reads, sc, mode, G=None, K=None, label=""):
    ref = cpu_parallel.align_batch(g, reads, sc, mode)
    codes, offs, lens = arrays(reads)
    s, i, j = fast.run_kernel(g, codes, offs, lens, sc, mode, G=G, K=K)
    ok = j >= 0
    got = np.stack([np.where(ok, s, ref.score * 0 - (1 << 29)), np.where(ok, i, -1), j])
    want = np.stack([ref.score, ref.end_i, ref.end_j])
    bad = np.nonzero((got != want).any(axis=0))[0]
    if len(bad):
        r = int(bad[0])
        print(f"MISMATCH {label} mode={mode.name} G={G} K={K}: {len(bad)}/{len(lens)} reads; "
              f"read {r}: fast {got[:, r].tolist()} cpu {want[:, r].tolist()}", flush=True)
    return len(bad)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=".")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reads", type=int, default=65536)
    ap.add_argument("--configs", default="8x19,4x38,16x10")
    ap.add_argument("--long", default="10000:1000:auto,10000:100:auto,50000:100:auto",
                    help="long-read workloads LEN:N_READS:GxK|auto[:GRAPH_BASES[:pipe|nopipe]] "
                         "(auto: the variant's own choice)")
    ap.add_argument("--skip-check", action="store_true")
    ap.add_argument("--skip-random", action="store_true",
                    help="skip the random-graph checks (pytest -m gpu tests/test_fast.py has them)")
    ap.add_argument("--no-real", action="store_true", help="skip the real-graph section")
    ap.add_argument("--real-long", default="",
                    help="LEN:N_READS[,...]: also time N pieces of LEN bp on each real graph "
                         "whose haplotypes are that long (the variant's own config), beside "
                         "its 150 bp row (e.g. 10000:1000)")
    args = ap.parse_args()
    from numba import cuda
    dev = cuda.get_current_device()
    name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
    out = {"device": name, "date": time.strftime("%Y-%m-%d %H:%M:%S"), "command": " ".join(sys.argv),
           "python": platform.python_version(), "sms": dev.MULTIPROCESSOR_COUNT, "runs": [],
           "checks": {}}
    print("device:", name, flush=True)
    sc = Scoring()
    rng = np.random.default_rng(5)
    tmp = tempfile.mkdtemp()
    real = _default_real_dir()      # the shared data, else the bundled copies

    def dump():          # after every section: a later failure keeps what was measured
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "fast.json"), "w") as fh:
            json.dump(out, fh, indent=1)
    bad_total = 0
    # ---- 1. correctness on small random graphs, every mode and several configs
    if not args.skip_check and not args.skip_random:
        t0 = time.time()
        nb = 0
        for c in range(12):
            sg, ref = snp_graph(int(rng.integers(20, 3000)), int(rng.integers(1, 60)),
                                int(rng.integers(1, 5)), c)
            p = os.path.join(tmp, f"s{c}.gfa")
            sg.write_gfa(p, ref)
            g = load_graph(p)
            L = int(rng.integers(1, 400))
            seqs = [s for _, s, _ in sample_reads(sg, 40, L, 0.05, 0.5, c + 100)]
            seqs += ["".join(rng.choice(list("ACGTN"), int(rng.integers(1, 300)))) for _ in range(8)]
            s2 = Scoring(*[int(x) for x in rng.integers(1, 7, 4)])
            for mode in Mode:
                for G, K in [(None, None), (32, 2)]:
                    nb += check(g, batch(seqs), s2, mode, G, K, f"rand{c}")
        out["checks"]["random"] = {"mismatched_reads": nb, "seconds": time.time() - t0}
        bad_total += nb
        print(f"check random graphs: {nb} mismatches ({time.time() - t0:.0f} s)", flush=True)
    # ---- 2. benchmark graph, 150 bp
    sg, ref = snp_graph(100000, 50, 2, 1)
    p = os.path.join(tmp, "snp100k.gfa")
    sg.write_gfa(p, ref)
    g = load_graph(p)
    seqs = [s for _, s, _ in sample_reads(sg, args.reads, 150, 0.01, 0.5, 2)]
    rb = batch(seqs)
    if not args.skip_check:
        nb = check(g, batch(seqs[:384]), sc, Mode.LOCAL, label="snp100k")
        nb += check(g, batch(seqs[:64]), sc, Mode.SEMIGLOBAL, label="snp100k")
        out["checks"]["snp100k_150"] = nb
        bad_total += nb
        print(f"check snp100k 150bp: {nb} mismatches", flush=True)
    for cfg in filter(None, args.configs.split(",")):
        G, K = map(int, cfg.split("x"))
        r, _ = time_kernel(g, rb, sc, Mode.LOCAL, G, K, 5 if not args.quick else 3)
        r.update(workload="snp100k_n50_b2 both strands, 150 bp, local")
        out["runs"].append(r)
        print(f"  150bp G={G} K={K}: {r['median_ms']:.1f} ms {r['gcups']:.0f} GCUPS", flush=True)
        dump()
    # ---- 3. long reads: "LEN:N_READS:GxK[:GRAPH_BASES]" (a smaller graph keeps enough
    # reads in flight for the whole GPU within a short run); 150 bp on the same graph
    # beside each, for the "within 20%" comparison
    graphs = {100000: (sg, g)}
    for spec in args.long.split(","):
        if not spec:
            continue
        f = spec.split(":")
        L, n = int(f[0]), int(f[1])
        G, K = (None, None) if f[2] == "auto" else map(int, f[2].split("x"))
        nb_ = int(f[3]) if len(f) > 3 and f[3] else 100000
        pipe = {"pipe": True, "nopipe": False}.get(f[4]) if len(f) > 4 else None
        if nb_ not in graphs:
            sg2, ref2 = snp_graph(nb_, 50, 2, 1)
            p2 = os.path.join(tmp, f"snp{nb_}.gfa")
            sg2.write_gfa(p2, ref2)
            graphs[nb_] = (sg2, load_graph(p2))
            s150 = [s for _, s, _ in sample_reads(sg2, args.reads, 150, 0.01, 0.5, 2)]
            r, _ = time_kernel(graphs[nb_][1], batch(s150), sc, Mode.LOCAL, 8, 19, 5)
            r.update(workload=f"snp{nb_ // 1000}k_n50_b2 both strands, 150 bp, local")
            out["runs"].append(r)
            print(f"  150bp on snp{nb_ // 1000}k: {r['gcups']:.0f} GCUPS", flush=True)
        sgl, gl = graphs[nb_]
        seqs_l = [s for _, s, _ in sample_reads(sgl, n, L, 0.01, 0.5, 3)]
        rl = batch(seqs_l)
        if not args.skip_check and (L == 10000 or L <= 1000):
            nb = check(gl, batch(seqs_l[:8 if L > 1000 else 64]), sc, Mode.LOCAL, G, K,
                       label=f"long{L}")
            out["checks"][f"long{L}_{G}x{K}_{nb_}"] = nb
            bad_total += nb
            print(f"check {L} bp: {nb} mismatches", flush=True)
        r, _ = time_kernel(gl, rl, sc, Mode.LOCAL, G, K, 3, pipe)
        pair = settings().fast_pair and fast.pair_fits(sc, Mode.LOCAL, L)
        units = -(-n // 2) if pair else n
        G, K, NR = fast.launch_shape(gl, L, pair, units, G, K)
        G, K, blocks, block, _, P, SG = fast.plan(gl, L, units * NR, G, K, pair, pipe)
        r.update(G=G, K=K, blocks=blocks, block=block, P=P, SG=SG, ranges=NR,
                 workload=f"snp{nb_ // 1000}k_n50_b2 both strands, {L} bp, local")
        out["runs"].append(r)
        print(f"  {L}bp x {n} G={G} K={K} P={P} SG={SG} ranges={NR} blocks={blocks} graph {nb_}: "
              f"{r['median_ms']:.1f} ms {r['gcups']:.0f} GCUPS",
              flush=True)
        dump()
    # ---- 4. real graphs
    specs = [("c4_gwfa/C4-90.gfa", ["c4_gwfa/C4-NA19240.1.fa", "c4_gwfa/C4-NA19240.2.fa"], False),
             ("drb1_odgi/DRB1-3123.gfa", ["drb1_odgi/DRB1-3123.fa"], False),
             ("lpa_odgi/LPA.gfa", ["lpa_odgi/LPA.fa"], True),
             ("mt_minigraph/MT.gfa", ["mt_minigraph/MT-human.fa", "mt_minigraph/MT-chimp.fa"], True),
             ("cactus_brca2_vg/cactus-BRCA2.gfa", None, False)]
    for gp, fas, brk in ([] if args.no_real else specs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            g = load_graph(real_file(real, gp), break_cycles=brk)
        if fas:
            hs = sum((fasta(real_file(real, f)) for f in fas), [])
        else:
            with open(real_file(real, "cactus_brca2_vg/cactus-BRCA2.fastq")) as fh:
                hs = [ln.strip().upper() for k, ln in enumerate(fh) if k % 4 == 1]
            hs = ["".join(c if c in "ACGT" else "N" for c in s) for s in hs]
        plen = 150 if max(map(len, hs)) >= 150 else max(map(len, hs))   # cactus: 100 bp reads
        seqs = pieces(hs, 32768 if not args.quick else 1024, plen, rng)
        if not args.skip_check:
            nb = check(g, batch(seqs[:48]), sc, Mode.LOCAL, label=gp)
            nb += check(g, batch(seqs[:16]), sc, Mode.GLOBAL, label=gp)
            if fas and gp.startswith("c4"):
                long_s = pieces(hs, 3, 10000, rng)
                nb += check(g, batch(long_s), sc, Mode.LOCAL, label=gp + " long")
            out["checks"][gp] = nb
            bad_total += nb
            print(f"check {gp}: {nb} mismatches", flush=True)
        G, K = fast.choose_config(plen, settings().fast_pair and fast.pair_fits(sc, Mode.LOCAL, plen))
        # (what `s2g align` would use)
        r, _ = time_kernel(g, batch(seqs), sc, Mode.LOCAL, G, K, 5 if not args.quick else 3)
        r.update(workload=f"{gp} (slots {fast.kernel_slots(g)}), {plen} bp pieces, local")
        out["runs"].append(r)
        print(f"  {gp} ({plen} bp): {r['gcups']:.0f} GCUPS", flush=True)
        dump()
        for spec in filter(None, args.real_long.split(",")):
            L, n = map(int, spec.split(":"))
            if max(map(len, hs)) < L:
                continue
            rl = batch(pieces(hs, n, L, rng))
            r, _ = time_kernel(g, rl, sc, Mode.LOCAL, None, None, 3)
            pair = settings().fast_pair and fast.pair_fits(sc, Mode.LOCAL, L)
            units = -(-n // 2) if pair else n
            G, K, NR = fast.launch_shape(g, L, pair, units)
            r.update(G=G, K=K, ranges=NR, workload=f"{gp}, {n} x {L} bp pieces, local")
            out["runs"].append(r)
            print(f"  {gp} {L}bp x {n} G={G} K={K} ranges={NR}: {r['median_ms']:.1f} ms "
                  f"{r['gcups']:.0f} GCUPS", flush=True)
            dump()
    out["mismatches_total"] = bad_total
    dump()
    print(f"\n{name}  mismatches={bad_total}")
    print(f"{'workload':58s} {'G':>3s} {'K':>3s} {'ms':>9s} {'GCUPS':>7s}")
    for r in out["runs"]:
        print(f"{r['workload'][:58]:58s} {r['G']:3d} {r['K']:3d} {r['median_ms']:9.1f} {r['gcups']:7.0f}")


if __name__ == "__main__":
    main()
