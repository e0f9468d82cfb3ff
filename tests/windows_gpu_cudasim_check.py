"""The chains' window searches on the GPU (s2g/seeded/windows_gpu.py) under the CUDA
simulator against the host's (:func:`s2g.seeded.windows.batch_chain_pieces`), chain list
for chain list, and the windows made from either (:func:`s2g.seeded.windows.window_pieces`)
array for array.

Invoked by tests/test_seeded.py in a subprocess with NUMBA_ENABLE_CUDASIM=1. Small SNP
graphs (one or both strands; reads sampled with errors, chained by
:func:`s2g.seeded.chains.batch_chains`), random chains on them (an anchor before the other,
a gap with no walk, equal scores, up to 10 chains a read, empty reads, read lengths
1-300), the bundled cactus BRCA2 graph and the DRB1 graph of tests/data/real (4.4 bp
nodes: searches of tens of nodes); in case 0 also through ``SeededAligner(device="gpu")``
with the knob on (searches in its chains step, on the chains where the GPU made them). In odd cases the caps are tiny (2-6 nodes a search,
4-12 pieces a chain) so that chains go to the host, and in case 1 the first try's list
buffer is too small (the kernel runs again, sized). Usage:
python tests/windows_gpu_cudasim_check.py [n_cases] -> prints "OK <cases> <chains> <host>".
With ``--gpu`` (last argument) the same cases run on a real GPU.
"""
import os
import sys
import tempfile
import warnings

import numpy as np

if sys.argv[-1] == "--gpu":
    sys.argv.pop()
    assert os.environ.get("NUMBA_ENABLE_CUDASIM", "0") == "0", "--gpu: unset NUMBA_ENABLE_CUDASIM"
else:
    assert os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", "set NUMBA_ENABLE_CUDASIM=1"

from s2g.graph import load_graph  # noqa: E402
from s2g.graph_core import successors  # noqa: E402
from s2g.index import build_index  # noqa: E402
from s2g.reads import ReadBatch  # noqa: E402
from s2g.seeded import windows_gpu  # noqa: E402
from s2g.seeded.chains import batch_chains  # noqa: E402
from s2g.seeded.search import scratch_pool  # noqa: E402
from s2g.seeded.windows import batch_chain_pieces, window_pieces  # noqa: E402
from s2g.simulate import sample_reads, snp_graph  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def chained(g, seqs, max_chains=10):
    """``seqs``' chains on ``g`` as the host makes them: (offs, ch, nch)."""
    ix = build_index(g, k=11, s=5) if g.n_bases < 20_000 else build_index(g)
    reads = ReadBatch.from_sequences([f"r{k}" for k in range(len(seqs))], seqs)
    offs = np.asarray(reads.offsets, np.int64)
    starts, shift = ix.buckets
    ch, nch, _, _, _ = batch_chains(reads.codes_flat, offs, ix.keys, ix.cols, starts, shift,
                                    ix.k, ix.s, 200, max_chains, 22.0, 100_000, 0, 0)
    return offs, ch, nch


def random_chains(g, rng, n_reads):
    """Chains the chainer would rarely make: anchors anywhere (c1 before c0, far apart, no
    walk between), equal scores, up to 10 a read, read lengths 0-300."""
    offs = np.zeros(n_reads + 1, np.int64)
    np.cumsum(rng.integers(0, 301, n_reads), out=offs[1:])
    offs[1] = offs[0]                                   # an empty read
    ch = np.zeros((n_reads, 10, 6), np.float64)
    nch = rng.integers(0, 11, n_reads).astype(np.int64)
    nb = g.n_bases
    for r in range(n_reads):
        m = int(offs[r + 1] - offs[r])
        if m == 0:
            nch[r] = 0
            continue
        for c in range(int(nch[r])):
            q0 = int(rng.integers(0, m))
            q1 = int(rng.integers(q0, m))
            c0 = int(rng.integers(0, nb))
            near = c0 + (q1 - q0) + int(rng.integers(-3, 40))
            c1 = int(np.clip(near if rng.random() < 0.7 else rng.integers(0, nb), 0, nb - 1))
            ch[r, c] = (q0, c0, q1, c1, 40.0 - (c // 2), 3.0)
    return offs, ch, nch


def check(g, offs, ch, nch, del_per_base, label, caps=None, max_cand=5):
    """The GPU's lists == the host's; the windows made from them == the host's own."""
    gr = (g.node_start, g.pred_ptr, g.pred_idx, *successors(g))
    want = batch_chain_pieces(offs, ch, nch, del_per_base, gr)
    got = windows_gpu.chain_lists(g, ch, nch, offs, del_per_base, caps=caps)
    wc, wa, wn, wl, wh = want
    gc, ga, gn, gl, gh = got
    host = 0
    for r, c in zip(*np.nonzero(np.arange(ch.shape[1])[None, :] < nch[:, None])):
        if gc[r, c] < 0:
            assert caps is not None, f"{label}: chain {r},{c} left to the host at full caps"
            host += 1
            continue
        assert gc[r, c] == wc[r, c], f"{label}: chain {r},{c}: {gc[r, c]} != {wc[r, c]} pieces"
        x, y = slice(wa[r, c], wa[r, c] + wc[r, c]), slice(ga[r, c], ga[r, c] + gc[r, c])
        for name, u, v in (("nodes", wn, gn), ("lo", wl, gl), ("hi", wh, gh)):
            assert np.array_equal(u[x], v[y]), f"{label}: chain {r},{c} {name}: {u[x]} != {v[y]}"
    past = np.arange(ch.shape[1])[None, :] >= nch[:, None]
    assert (gc[past] == 0).all(), f"{label}: counts past nch"
    n = len(offs) - 1
    pool = scratch_pool(1, g.n_nodes)
    wp = (np.zeros((n, ch.shape[1], 0, 2), np.int64), np.zeros((n, ch.shape[1]), np.int64),
          True)
    a = window_pieces(offs, ch, nch, max_cand, del_per_base, gr, pool, (*wp, None))
    b = window_pieces(offs, ch, nch, max_cand, del_per_base, gr, pool, (*wp, got))
    for name, u, v in zip(("p_node", "p_lo", "p_hi", "info", "nwin", "cut"), a, b):
        assert u.dtype == v.dtype and np.array_equal(u.view(np.uint8), v.view(np.uint8)), \
            f"{label}: windows' {name} differ"
    return int(nch.sum()), host


def through_the_aligner(g, ix, seqs):
    """Knob gpu_window_search on: SeededAligner(device="gpu") searches in its chains step
    (the chains read on the device, a sixth element of :meth:`chains`); its windows ==
    the CPU aligner's."""
    from s2g.config import configure
    from s2g.scoring import Mode, Scoring
    from s2g.config import settings
    from s2g.seeded import SeededAligner
    was = settings().gpu_window_search
    configure(gpu_window_search=True)
    reads = ReadBatch.from_sequences([f"r{k}" for k in range(len(seqs))], seqs)
    cpu = SeededAligner(g, ix, Scoring(), Mode.LOCAL, min_chain=11)
    gpu = SeededAligner(g, ix, Scoring(), Mode.LOCAL, min_chain=11, device="gpu")
    before = windows_gpu.PROFILE["launches"]
    got = gpu.chains(reads)
    assert len(got) == 6 and windows_gpu.PROFILE["launches"] > before, "no search on the GPU"
    a, b = cpu.candidates(reads), gpu.windows_of(reads, got)
    for f in ("p_node", "p_lo", "p_hi", "piece_at"):
        assert np.array_equal(getattr(a.wg, f), getattr(b.wg, f)), f"aligner: {f} differ"
    for f in ("ncand", "cut", "t_chain", "t_strong"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f"aligner: {f} differ"
    configure(gpu_window_search=was)


def main():
    warnings.filterwarnings("ignore", "overflow", RuntimeWarning)
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    total = np.zeros(2, np.int64)
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(n):
            rng = np.random.default_rng(seed)
            sg, ref = snp_graph(int(rng.integers(300, 900)), int(rng.integers(5, 60)),
                                int(rng.integers(1, 4)), seed)
            path = os.path.join(tmp, f"g{seed}.gfa")
            sg.write_gfa(path, ref)
            g = load_graph(path, strands="both" if seed % 2 else "forward")
            seqs = [s for _, s, _ in sample_reads(sg, 8, int(rng.integers(30, 150)), 0.05,
                                                  0.5, seed + 7)]
            seqs += ["", "A"]
            caps = (int(rng.integers(2, 7)), int(rng.integers(4, 13))) if seed % 2 else None
            dpb = (1.0, 2.0, 0.5)[seed % 3]
            if seed == 1:                           # a list buffer too small at first
                windows_gpu._GUESS = 1
            total += check(g, *chained(g, seqs), dpb, f"seed {seed} sampled", caps,
                           max_cand=int(rng.integers(1, 6)))
            windows_gpu._GUESS = 8
            total += check(g, *random_chains(g, rng, 12), dpb, f"seed {seed} random", caps,
                           max_cand=int(rng.integers(1, 6)))
            if seed == 0:
                through_the_aligner(g, build_index(g, k=11, s=5), seqs)
        g = load_graph(os.path.join(REPO, "graphs", "cactus-BRCA2.gfa"))
        seqs = []
        with open(os.path.join(REPO, "graphs", "cactus-BRCA2.100.fq")) as fh:
            for t, line in enumerate(fh):
                if t % 4 == 1 and len(seqs) < 12:
                    seqs.append(line.strip())
        total += check(g, *chained(g, seqs), 1.0, "BRCA2")
        drb1 = os.path.join(REPO, "tests", "data", "real", "drb1_odgi", "DRB1-3123.gfa")
        if os.path.exists(drb1):
            g = load_graph(drb1, break_cycles=True)
            rng = np.random.default_rng(5)
            seqs = []
            for _ in range(10):
                v = int(rng.integers(max(g.n_bases - 150, 1)))
                c = g.base[v:v + 150].copy()
                err = rng.random(len(c)) < 0.02
                c[err] = rng.integers(0, 4, int(err.sum()))
                seqs.append("".join("ACGTN"[x] for x in c.tolist()))
            total += check(g, *chained(g, seqs), 1.0, "DRB1")
            total += check(g, *chained(g, seqs[:4]), 1.0, "DRB1 small caps", (8, 40))
    assert total[0] > 0 and (n < 2 or total[1] > 0), f"chains, to the host: {total}"
    print("OK", n, *total)


if __name__ == "__main__":
    main()
