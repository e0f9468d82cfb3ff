"""The pruned long-window kernel (s2g/trace/long/prune.py, ``_render(prune=True)``) under
the CUDA simulator against the window reference (s2g.window.align_windows_ref).

Invoked by tests/test_gpu_traceback.py in a subprocess with NUMBA_ENABLE_CUDASIM=1 and
S2G_CONFIG=long_strip=8,long_max_t=2 (several strips and rounds a window). Random SNP
graphs (one or both strands), reads with 3-15% errors, a 20-base insertion or deletion,
a random read, random scorings; each read in the whole graph (whole nodes: the q-gram
bound is made) and in a random column range (the plain bound); floors at, above and
below the optimum; margins of 100% and 5% of the CPU's (the small one makes passes
fall short and run again). Every window runs on the long kernel, scores first, pruned: its
(score, end_i, end_j) must be the reference's where that scores at least max(floor, 1),
else (NEG_INF, -1, -1), as the CPU's pruned kernel gives. The check fails unless some
windows ran again. The windows' programs and walk bounds made on the GPU
(s2g/trace/long/programs_gpu.py) are compared word for word with the host's, on the
graph and on a window graph (bases gathered from the parent graph's); margin 5 also sizes
each round's hand-off to its own columns (gpu_prune_handoff). The whole-graph windows
are then traced from their end cells on the long kernel twice, in the rows their pruned
pass kept (gpu_prune_band) and in their slack bands alone: the tracebacks must be the same,
and the kept rows narrower over all windows (traced_in_kept_rows); then windows whose threshold
is their optimum (tight_cases). With ``narrow`` the kept
rows are halved before the traceback, which must make the check fail (a band that misses
cells of an optimal alignment shows).
Usage: python tests/pruned_gpu_cudasim_check.py [n_cases] [narrow] -> prints "OK <cases>
<windows> <passes again>".
"""
import os
import sys
import tempfile

import numpy as np

assert os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", "set NUMBA_ENABLE_CUDASIM=1"

import sim_poison  # noqa: E402  (tests/: shared memory poisoned as a GPU's may be)

sim_poison.install()

from s2g.config import configure  # noqa: E402
from s2g.graph import load_graph  # noqa: E402
from s2g.reads import ReadBatch  # noqa: E402
from s2g.scoring import NEG_INF, Mode, Scoring  # noqa: E402
from s2g.simulate import sample_reads, snp_graph  # noqa: E402
from s2g.trace import gpu  # noqa: E402
from s2g.trace.gpu_chunk import PROFILE  # noqa: E402
from s2g.trace.gpu_program import PROG_NAMES, fill, sizes  # noqa: E402
from s2g.trace.gpu_walk import cum  # noqa: E402
from s2g.trace.long.programs_gpu import device_programs  # noqa: E402
from s2g.trace.long.prune import walk_bounds  # noqa: E402
from s2g.variants import _devpool  # noqa: E402
from s2g.trace.long.plan import window_bytes  # noqa: E402
from s2g.window import WindowGraph, align_windows_ref  # noqa: E402


def programs_equal(g, tr, t_lo, t_hi, sz, seed):
    """The programs and walk bounds made on the GPU (programs_gpu.device_programs) == the
    host's (gpu_program.fill, prune.walk_bounds), word for word."""
    coff, poff = cum(sz[:, 0]), cum(sz[:, 2])
    z = np.zeros(len(tr), np.int64)
    host = fill(np.arange(len(tr)), z, z, z, int(Mode.LOCAL), 1, 1, g.base, g.node_start,
                g.pred_ptr, g.pred_idx, coff, poff, t_lo, t_hi)
    pl, pr = np.zeros(int(coff[-1]), np.int32), np.zeros(int(coff[-1]), np.int32)
    walk_bounds(coff, poff, *(host[PROG_NAMES.index(k)]
                              for k in ("p_kind", "p_mpa", "p_mpn", "mp_wcol")), pl, pr)
    dev = device_programs(_devpool.pool(), g, t_lo, t_hi, int(Mode.LOCAL), coff, poff)
    for name, h, d in zip(PROG_NAMES + ["pl", "pr"], host + [pl, pr],
                          dev.arrays + [dev.pl, dev.pr]):
        m = int(poff[-1] if name.startswith("mp_") else coff[-1])
        h, d = h[:m], d.copy_to_host()[:m]
        if not np.array_equal(h, d):
            bad = np.nonzero(h != d)[0]
            raise AssertionError(f"seed {seed} {name}: GPU-made programs differ at {bad[:5]}: "
                                 f"{d[bad[:5]]} != host {h[bad[:5]]}")


def window_graph_programs_equal(g, rng, seed):
    """The same on a window graph (s2g.window.WindowGraph, as a seeded batch's): its bases
    gathered on the device from the parent graph's (parent_cols), pieces starting and
    ending inside nodes."""
    tasks = []
    for _ in range(3):
        v0 = int(rng.integers(0, g.n_nodes - 1))
        v1 = int(rng.integers(v0, min(g.n_nodes, v0 + 12)))
        pieces = []
        for v in range(v0, v1 + 1):
            ln = int(g.node_start[v + 1] - g.node_start[v])
            lo = int(rng.integers(0, ln)) if v == v0 else 0
            hi = int(rng.integers(lo, ln)) if v == v1 else ln - 1
            pieces.append((v, lo, hi))
        tasks.append(pieces)
    piece_at = np.cumsum([0] + [len(p) for p in tasks])
    flat = [x for p in tasks for x in p]
    wg = WindowGraph(g, piece_at, *(np.array([x[f] for x in flat], np.int64) for f in range(3)))
    assert wg.graph.parent_cols is not None
    tr = np.zeros(len(tasks), np.int64)
    z = np.zeros(len(tasks), np.int64)
    w = wg.graph
    sz = sizes(np.arange(len(tasks)), z, z, z, int(Mode.LOCAL), 1, 1, w.base, w.node_start,
               w.pred_ptr, w.pred_idx, wg.t_lo, wg.t_hi)
    programs_equal(w, tr, wg.t_lo, wg.t_hi, sz, seed)


def traced_in_kept_rows(g, reads, sc, got, tr, nr, seed):
    """Tracebacks of the whole-graph windows (tasks ``0..nr-1``) that found a cell, from
    their end cells on the long kernel (s2g.trace.gpu.run), in their pruned pass's kept
    rows and in their slack bands alone: the same start, CIGAR runs and columns."""
    from s2g.result import BatchResult
    from s2g.trace import FlatTracebacks
    t = np.nonzero(got.score[:nr] > NEG_INF)[0]
    if not len(t):
        return
    sub = reads.subset(tr[t])
    res = BatchResult(sub.names, np.diff(sub.offsets), got.score[t], got.end_i[t],
                      got.end_j[t])
    idx = np.arange(len(t), dtype=np.int64)
    outs, lefts = [], []
    for live in (got.live_of(t, idx, len(t)), None):
        flat = FlatTracebacks(len(t))
        lefts.append(list(gpu.run(g, sub, sc, Mode.LOCAL, res, idx, flat, max_cells=0,
                                  long_cells=1 << 40, live=live)))
        flat.finish()
        outs.append(flat.objects())
    assert lefts[0] == lefts[1], lefts        # (left to the CPU: a predecessor list too long)
    for k, (x, y) in enumerate(zip(*outs)):
        if k in lefts[0]:
            continue
        if x != y:
            raise AssertionError(f"seed {seed} window {t[k]}: traced in kept rows {x} != in "
                                 f"the slack band {y}")


def tight_cases():
    """Windows whose threshold is their optimum (floor at it), on a linear graph, scoring
    (1, 4, 4, 4) (review, session 50; both failed before): a perfect read ending at the
    window's last column (the previous round's hand-off must hold that column: it carries
    the diagonal of the column before), and reads with a substitution in the last row of
    a round, so that their path crosses into the next round where the strip above keeps
    nothing further right (the kept rows widened by a row, as the slack band is). Scores
    == the reference; traced in kept rows == in the slack band."""
    rng = np.random.default_rng(5)
    sc = Scoring(1, 4, 4, 4)
    with tempfile.TemporaryDirectory() as tmp:
        for k, ylo in enumerate((0, 32, 48, 64)):
            gseq = "".join(rng.choice(list("ACGT"), 100))
            read = list(gseq[20:])
            if ylo:                         # row ylo - 1 is read base ylo - 2
                read[ylo - 2] = [c for c in "ACGT"
                                 if c not in gseq[18 + ylo:20 + ylo]][0]
            path = os.path.join(tmp, f"t{k}.gfa")
            with open(path, "w") as fh:
                fh.write(f"H\tVN:Z:1.0\nS\ts1\t{gseq}\n")
            g = load_graph(path, strands="forward")
            reads = ReadBatch.from_sequences(["t"], ["".join(read)])
            tr = np.zeros(1, np.int64)
            t_lo, t_hi = np.zeros(1, np.int64), np.full(1, g.n_bases, np.int64)
            want = align_windows_ref(g, reads.codes_flat, reads.offsets, tr, t_lo, t_hi, sc,
                                     Mode.LOCAL)
            configure(gpu_long=True, gpu_prune=True, gpu_prune_margin=100,
                      gpu_prune_handoff=True, long_score_first=True, gpu_window_fast=False,
                      long_chunk_bytes=6_000_000_000)
            got = gpu.run_windows(g, reads, sc, Mode.LOCAL, tr, t_lo, t_hi, max_cells=0,
                                  floor=want[0].copy())
            if (got.score[0], got.end_i[0], got.end_j[0]) != tuple(int(w[0]) for w in want):
                raise AssertionError(f"tight case {ylo}: gpu {got.score}, {got.end_i}, "
                                     f"{got.end_j} != expected {want}")
            traced_in_kept_rows(g, reads, sc, got, tr, 1, f"tight {ylo}")


def halve_kept_rows():
    """The kept rows' bands halved (``narrow``: the check must then fail)."""
    from s2g.trace.long import prune
    live_bands = prune.live_bands

    def halved(idx, coff, p_col, S, live, blo, bhi, rows_in):
        live_bands(idx, coff, p_col, S, live, blo, bhi, rows_in)
        for k, r in enumerate(idx):
            if live[0][r] >= 0:
                w = slice(coff[k], coff[k + 1])
                bhi[w] = np.minimum(bhi[w], (blo[w] + bhi[w]) // 2)
    prune.live_bands = halved


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    if sys.argv[2:3] == ["narrow"]:
        halve_kept_rows()
    windows = 0
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(n):
            rng = np.random.default_rng(100 + seed)
            sg, ref = snp_graph(int(rng.integers(120, 220)), int(rng.integers(4, 20)),
                                int(rng.integers(1, 3)), seed)
            path = os.path.join(tmp, f"g{seed}.gfa")
            sg.write_gfa(path, ref)
            g = load_graph(path, strands="both" if seed % 2 else "forward")
            seqs = []
            for k, (_, s, _) in enumerate(sample_reads(sg, 3, int(rng.integers(60, 90)),
                                                       0.03 + 0.06 * seed % 0.12, 0.3, seed)):
                x = int(rng.integers(10, len(s) - 10))
                seqs.append(s[:x] + s[x + 20:] if k % 2 else
                            s[:x] + "".join(rng.choice(list("ACGT"), 20)) + s[x:])
            seqs.append("".join(rng.choice(list("ACGT"), int(rng.integers(30, 60)))))
            reads = ReadBatch.from_sequences([f"r{k}" for k in range(len(seqs))], seqs)
            nr = len(seqs)
            sc = Scoring(*[int(x) for x in rng.integers(1, 5, 4)])
            nb = g.n_bases
            lo = rng.integers(0, nb // 3, nr)
            hi = np.minimum(lo + rng.integers(nb // 3, nb, nr), nb)
            tr = np.concatenate([np.arange(nr), np.arange(nr)]).astype(np.int64)
            t_lo = np.concatenate([np.zeros(nr, np.int64), lo])
            t_hi = np.concatenate([np.full(nr, nb, np.int64), hi])
            want = align_windows_ref(g, reads.codes_flat, reads.offsets, tr, t_lo, t_hi, sc,
                                     Mode.LOCAL)
            shift = rng.integers(-3, 4, len(tr)) * (seed % 2)
            floor = np.where(rng.random(len(tr)) < 0.5, NEG_INF, want[0] + shift)
            z = np.zeros(len(tr), np.int64)
            sz = sizes(np.arange(len(tr)), z, z, z, int(Mode.LOCAL), sc.match, sc.gap_extend,
                       g.base, g.node_start, g.pred_ptr, g.pred_idx, t_lo, t_hi)
            rows = np.diff(reads.offsets)[tr]
            programs_equal(g, tr, t_lo, t_hi, sz, seed)
            window_graph_programs_equal(g, rng, seed)
            one = int(window_bytes(sz, rows, sz[:, 0] - 1, store=False).max())
            for margin in (100, 5):
                # margin 5: launches of one or two windows (the pass's launches sliced)
                # margin 5 also allocates each round's hand-off for its own columns (the
                # ranges kernel, gpu_prune_handoff): one too small reads or writes out of
                # bounds (the simulator raises) or over the next round's
                configure(gpu_long=True, gpu_prune=True, gpu_prune_margin=margin,
                          gpu_prune_handoff=margin == 5,
                          long_score_first=True, gpu_window_fast=False,
                          long_chunk_bytes=6_000_000_000 if margin == 100 else one)
                got = gpu.run_windows(g, reads, sc, Mode.LOCAL, tr, t_lo, t_hi, max_cells=0,
                                      floor=floor)
                assert got.on_gpu.all(), "every window on the long kernel"
                keep = want[0] >= np.maximum(floor, 1)
                for name, w, x in zip(("score", "end_i", "end_j"), want,
                                      (got.score, got.end_i, got.end_j)):
                    exp = np.where(keep, w, NEG_INF if name == "score" else -1)
                    if not np.array_equal(x, exp):
                        raise AssertionError(f"seed {seed} margin {margin} {name}: gpu {x} "
                                             f"!= expected {exp} (floor {floor})")
                traced_in_kept_rows(g, reads, sc, got, tr, nr, seed)
                windows += len(tr)
    again = PROFILE["long_pruned_reruns"]
    assert again > 0 and PROFILE["long_pruned_launches"] > 0, PROFILE
    assert PROFILE["long_pruned_launches"] >= windows // 4, PROFILE     # margin 5: 1-2 each
    assert 0 < PROFILE["long_live_cells"] < PROFILE["long_live_cells_slack"], PROFILE
    tight_cases()
    print("OK", n, windows, again)


if __name__ == "__main__":
    main()
