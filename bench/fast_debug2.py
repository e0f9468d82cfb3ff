import sys, tempfile
from s2g.graph import load_graph
from s2g.reads import ReadBatch
from s2g.scoring import Mode, Scoring
from s2g.simulate import sample_reads, snp_graph
from s2g.variants import fast, v0_cpu
tmp = tempfile.mkdtemp()
def one(total, node, br, L, G, K, n=4, strands="both"):
    sg, ref = snp_graph(total, node, br, 1)
    p = tmp + "/g.gfa"; sg.write_gfa(p, ref)
    g = load_graph(p, strands=strands)
    seqs = [s for _, s, _ in sample_reads(sg, n, L, 0.01, 0.5, 2)]
    reads = ReadBatch.from_sequences([f"r{k}" for k in range(len(seqs))], seqs)
    r = v0_cpu.align_batch(g, reads, Scoring(), Mode.LOCAL)
    s, i, j = fast.run_kernel(g, reads.codes_flat, reads.offsets, reads.lengths(), Scoring(), Mode.LOCAL, G=G, K=K)
    bad = int(((s != r.score) | (i != r.end_i) | (j != r.end_j)).sum())
    print(f"{total} {node} {br} L={L} G={G} K={K} {strands} block={fast.BLOCK}: bad {bad}/{n} fast {s.tolist()} v0 {r.score.tolist()}", flush=True)
for a in sys.argv[1:]:
    t = a.split(",")
    one(*map(int, t[:6]), strands=t[6] if len(t) > 6 else "both")
