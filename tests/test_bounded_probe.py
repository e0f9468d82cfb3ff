"""bench/bounded_probe.py (issue #45's probe of a bounded window DP): wherever its best
cell reaches the threshold, score and end cell equal the full window DP; below the floor
only windows whose optimum is truly below it; the traceback at T = S equals the CPU
traceback."""
from __future__ import annotations

import numpy as np

from bench.bounded_probe import NO_BOUND, align_bounded, suffix_bounds
from s2g.index import build_index
from s2g.reads import ReadBatch
from s2g.scoring import Mode, Scoring
from s2g.seeded import SeededAligner
from s2g.window import align_windows_ref
from test_window_bounds import _reads, _repeat_graph


def test_bounded_dp_is_exact_where_it_reaches_its_threshold(tmp_path):
    rng = np.random.default_rng(31)
    g, genome = _repeat_graph(tmp_path, rng)
    seqs = _reads(genome, rng, 4, 1500, 0.02) + _reads(genome, rng, 2, 1200, 0.08)
    reads = ReadBatch.from_sequences([f"r{i}" for i in range(len(seqs))], seqs)
    sc = Scoring()
    a, b, o, e = sc.as_tuple()
    for mode in (Mode.LOCAL, Mode.SEMIGLOBAL):
        cand = SeededAligner(g, build_index(g), sc, mode).candidates(reads)
        wg, G = cand.wg, cand.wg.graph
        offs = np.asarray(reads.offsets, np.int64)
        tasks = np.arange(wg.n_tasks, dtype=np.int64)
        bnd = suffix_bounds(tasks, cand.t_read, wg.piece_at, G.node_start, G.pred_ptr,
                            G.pred_idx, G.base, reads.codes_flat, offs, a, min(a + b, o + e))
        want = align_windows_ref(G, reads.codes_flat, reads.offsets, cand.t_read, wg.t_lo,
                                 wg.t_hi, sc, mode)
        has = bnd[2] < NO_BOUND
        assert has.sum() >= 4
        assert (bnd[2][has] >= want[0][has]).all()          # the bound holds
        args = (cand.t_read, reads.codes_flat, offs, wg.piece_at,
                (G.base, G.node_start, G.pred_ptr, G.pred_idx))
        # a floor halfway between the best window of a read and nothing: some windows drop
        floor = np.where(has, want[0] - 50 * (np.arange(len(tasks)) % 2), -(1 << 40))
        floor[~has] = -(1 << 40)
        sub = np.nonzero(has)[0]
        u_at, U, top = bnd
        sb = suffix_bounds(sub, cand.t_read, wg.piece_at, G.node_start, G.pred_ptr,
                           G.pred_idx, G.base, reads.codes_flat, offs, a, min(a + b, o + e))
        s, i, j, c, dropped = align_bounded(sub, floor[sub] + 1, sb, args, mode, (a, b, o, e),
                                            first_margin=8)
        ok = ~dropped
        np.testing.assert_array_equal(s[ok], want[0][sub][ok])
        np.testing.assert_array_equal(i[ok], want[1][sub][ok])
        np.testing.assert_array_equal(j[ok], want[2][sub][ok])
        assert (want[0][sub][dropped] < floor[sub][dropped] + 1).all()
        assert dropped.any() and ok.any()
