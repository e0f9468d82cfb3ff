"""Where does `fast` spend its time? One GPU process per kernel build (knobs pick it:
``S2G_CONFIG=fast_block=256,fast_nsh=0 ...``, s2g/config.py).

    python3 bench/fast_profile.py [--graphs snp50,linear,snp200,snp10] [--configs 8x19,...]
                                  [--reads 16384] [--sass DIR] [--ncu]

For each graph x (G x K): kernel ms (CUDA events, median of 5 after a warm-up), GCUPS,
registers, local memory and static shared memory per thread/block of the compiled
kernel; a check of the first 256 reads against the CPU oracle. ``--ncu``: one warm-up
and one timed launch of the first graph/config only (run it under ncu -c 1 -s 1).
Graphs: simulated 100 kbp (both strands in the DP); "linear" has branching 1 (no merges,
no slots: the kernel's cost without the graph's edges); "drb1": the real DRB1 graph
(4.4 bp nodes), 150 bp pieces of its haplotypes.
"""
import argparse
import os
import sys
import tempfile



sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.fast import batch, check, time_kernel  # noqa: E402
from s2g.config import describe, settings  # noqa: E402
from s2g.graph import load_graph  # noqa: E402
from s2g.scoring import Mode, Scoring  # noqa: E402
from s2g.simulate import sample_reads, snp_graph  # noqa: E402
from s2g.variants import fast  # noqa: E402

GRAPHS = {"snp50": (50, 2), "linear": (50, 1), "snp200": (200, 2), "snp10": (10, 2),
          "snp50b4": (50, 4)}
#: real graphs (../shared/data/real): 150 bp pieces of their haplotypes, 1% substitutions
REAL_GRAPHS = {"drb1": ("drb1_odgi/DRB1-3123.gfa", "drb1_odgi/DRB1-3123.fa")}


def workload(gname, args, tmp):
    """(FlatGraph, read sequences) of a graph name of GRAPHS or REAL_GRAPHS."""
    if gname in REAL_GRAPHS:
        import numpy as np
        from bench.fast import REAL, fasta, pieces
        gfa, fa = REAL_GRAPHS[gname]
        g = load_graph(os.path.join(REAL, gfa))
        return g, pieces(fasta(os.path.join(REAL, fa)), args.reads, args.len,
                         np.random.default_rng(3))
    nl, br = GRAPHS[gname]
    sg, ref = snp_graph(args.bases, nl, br, 1)
    p = os.path.join(tmp, gname + ".gfa")
    sg.write_gfa(p, ref)
    return load_graph(p), [s for _, s, _ in sample_reads(sg, args.reads, args.len, 0.01, 0.5, 2)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--graphs", default="snp50")
    ap.add_argument("--configs", default="8x19")
    ap.add_argument("--reads", type=int, default=16384)
    ap.add_argument("--len", type=int, default=150)
    ap.add_argument("--bases", type=int, default=100000)
    ap.add_argument("--sass", default="")
    ap.add_argument("--ncu", action="store_true")
    ap.add_argument("--no-check", action="store_true")
    args = ap.parse_args()
    from numba import cuda
    dev = cuda.get_current_device()
    tag = " ".join(f"{name}={value}" for name, value, source, _, _ in describe()
                   if name.startswith("fast_") and source != "default")
    sc = Scoring()
    tmp = tempfile.mkdtemp()
    for gname in args.graphs.split(","):
        g, seqs = workload(gname, args, tmp)
        rb = batch(seqs)
        for cfg in args.configs.split(","):
            G, K = map(int, cfg.split("x"))
            if args.ncu:
                codes, offs = rb.codes_flat, rb.offsets
                lens = rb.lengths()
                fast.run_kernel(g, codes, offs, lens, sc, Mode.LOCAL, G=G, K=K)
                fast.run_kernel(g, codes, offs, lens, sc, Mode.LOCAL, G=G, K=K)
                return
            nb = -1 if args.no_check else check(g, batch(seqs[:256]), sc, Mode.LOCAL, G, K, gname)
            r, _ = time_kernel(g, rb, sc, Mode.LOCAL, G, K, 5)
            pair = settings().fast_pair and fast.pair_fits(sc, Mode.LOCAL, args.len)
            kern = fast.get_kernel(G, K, Mode.LOCAL, True, pair)
            regs = kern.get_regs_per_thread()
            n_sh, _ = fast.shared_slots(kern, G, K, fast.kernel_slots(g), fast.BLOCK)
            lmem = kern.get_local_mem_per_thread()
            smem = kern.get_shared_mem_per_block()
            print(f"{dev.name} {tag or 'default'} graph={gname} slots={fast.kernel_slots(g)} G={G} K={K} "
                  f"len={args.len} pair={int(pair)} ms={r['median_ms']:.1f} GCUPS={r['gcups']:.0f} regs={regs} "
                  f"local={lmem} shared={smem} n_sh={n_sh} mismatches={nb}", flush=True)
            if args.sass:
                sass = kern.inspect_sass()
                with open(os.path.join(args.sass, f"sass_{G}x{K}.txt"), "w") as fh:
                    fh.write("\n".join(sass.values()) if isinstance(sass, dict) else str(sass))


if __name__ == "__main__":
    main()
