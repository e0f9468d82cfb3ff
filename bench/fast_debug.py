"""Device debugging of `fast` on tiny cases (kept for the record; see bench/NOTES.md)."""
import os, sys, tempfile
sys.path.insert(0, "tests")
from s2g.graph import load_graph
from s2g.reads import ReadBatch
from s2g.scoring import Mode, Scoring
from s2g.simulate import sample_reads, snp_graph
from s2g.variants import fast, v0_cpu

tmp = tempfile.mkdtemp()


def one(total, node, br, L, G, K, mode=Mode.LOCAL, n=4):
    sg, ref = snp_graph(total, node, br, 1)
    p = tmp + "/g.gfa"
    sg.write_gfa(p, ref)
    g = load_graph(p)
    seqs = [s for _, s, _ in sample_reads(sg, n, L, 0.01, 0.5, 2)]
    reads = ReadBatch.from_sequences([f"r{k}" for k in range(len(seqs))], seqs)
    r = v0_cpu.align_batch(g, reads, Scoring(), mode)
    lens = reads.lengths()
    s, i, j = fast.run_kernel(g, reads.codes_flat, reads.offsets, lens, Scoring(), mode, G=G, K=K)
    bad = int(((s != r.score) | (i != r.end_i) | (j != r.end_j)).sum())
    print(f"total={total} node={node} br={br} L={L} G={G} K={K} {mode.name} block={fast.BLOCK} "
          f"zero={bool(os.environ.get('S2G_FAST_ZERO'))}: bad {bad}/{n}  first fast "
          f"{(int(s[0]), int(i[0]), int(j[0]))} v0 {(int(r.score[0]), int(r.end_i[0]), int(r.end_j[0]))}",
          flush=True)


for args in [(40, 1000, 1, 20, 8, 4), (300, 50, 2, 30, 8, 4), (300, 50, 1, 30, 8, 4),
             (2000, 50, 2, 150, 8, 19), (2000, 50, 2, 30, 32, 1), (2000, 1000, 1, 30, 8, 4)]:
    one(*args)
