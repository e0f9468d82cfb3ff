"""Why is the traceback slow on DRB1 end to end? (session 5 probe)

    python3 bench/drb1_traceback_probe.py [n_reads]

Window sizes of 150 bp pieces of DRB1's haplotypes (the GPU traceback's window pass),
then the CPU traceback's time per read at several read counts and thread counts.
"""
import sys
import numpy as np
from s2g.graph import load_graph
from s2g.reads import ReadBatch
from s2g.scoring import Scoring, Mode
from s2g.variants import cpu_parallel
from s2g.trace import gpu_program
from bench.fast import fasta, pieces
sc = Scoring(); a,b,o,e = sc.as_tuple()
hs = fasta("../shared/data/real/drb1_odgi/DRB1-3123.fa")
g = load_graph("../shared/data/real/drb1_odgi/DRB1-3123.gfa")
N = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
seqs = pieces(hs, N, 150, np.random.default_rng(11))
rb = ReadBatch.from_sequences([f"r{k}" for k in range(len(seqs))], seqs)
res = cpu_parallel.align_batch(g, rb, sc, Mode.LOCAL)
idx = np.nonzero(res.end_j >= 0)[0]
sz = gpu_program.sizes(idx, res.score, res.end_i, res.end_j, int(Mode.LOCAL), a, e, g.base, g.node_start, g.pred_ptr, g.pred_idx)
cells = sz[:,0] * (res.end_i[idx] + 1)
o_ = np.argsort(-cells)
print("cells total", cells.sum(), "top 10", cells[o_[:10]].tolist())
print("share of top 1%:", cells[o_[:len(o_)//100]].sum() / cells.sum())
print("scores of top:", res.score[idx[o_[:5]]].tolist(), "end_i", res.end_i[idx[o_[:5]]].tolist())
print("N per read top:", [seqs[i].count('N') for i in idx[o_[:5]]])
print("reads with N:", sum(1 for s in seqs if 'N' in s))
import time
from s2g.trace import traceback_batch
import numba
for n in (2000, N):
    sub = rb.subset(list(range(n)))
    r = cpu_parallel.align_batch(g, sub, sc, Mode.LOCAL)
    for th in sorted({1, 2, numba.config.NUMBA_NUM_THREADS}):
        numba.set_num_threads(th)
        t = time.time(); traceback_batch(g, sub, sc, Mode.LOCAL, r); dt = time.time() - t
        print(f"DRB1 {n} reads, {th} threads: CPU traceback {dt:.2f} s = {dt / n * 1e6:.0f} us/read",
              flush=True)
