"""The host's part of seeded window building with and without the chains' lists made
already (knob gpu_window_search: the GPU makes them; here the host oracle
:func:`s2g.seeded.windows.batch_chain_pieces` stands in, its lists being the GPU's bit for
bit), and the count and fill passes with KEEP pieces a read kept (default KEEP_MADE); then
the batch's ``WindowGraph`` with and without its bases and slots made (knob lazy_window_bases).

    python -m bench.window_host_parts GRAPH.gfa READS.fq[.gz] [N_READS] [KEEP]

One Numba thread, best of three; chains by ``SeededAligner.chains`` on the CPU; checks
that the windows are identical either way."""
import sys
import time

import numba
import numpy as np

import s2g
from s2g.graph_core import successors
from s2g.index import build_index
from s2g.seeded import SeededAligner
from s2g.seeded.aligner import weak_chains_dropped
from s2g.seeded.search import scratch_pool
from s2g.seeded.windows import (KEEP_MADE, batch_chain_pieces, batch_windows,
                                window_pieces)


def main(argv):
    gfa, fq = argv[0], argv[1]
    n = int(argv[2]) if len(argv) > 2 else 50_000
    kp = int(argv[3]) if len(argv) > 3 else KEEP_MADE
    numba.set_num_threads(1)
    g = s2g.load_graph(gfa, break_cycles=True)
    sa = SeededAligner(g, build_index(g), s2g.Scoring(), s2g.Mode.LOCAL)
    reads = s2g.read_reads(fq)
    reads = reads.subset(np.arange(min(n, reads.n_reads)))
    ch, nch, _, way, nway = sa.chains(reads)[:5]
    nch = weak_chains_dropped(ch, nch, 0)
    offs = np.asarray(reads.offsets, np.int64)
    gr = (g.node_start, g.pred_ptr, g.pred_idx, *successors(g))
    pool = scratch_pool(1, g.n_nodes)
    wp = (way, nway, True)
    best = np.full(5, np.inf)
    for _ in range(3):
        t0 = time.perf_counter()
        a = window_pieces(offs, ch, nch, 5, 1.0, gr, pool, (*wp, None))
        t1 = time.perf_counter()
        made = batch_chain_pieces(offs, ch, nch, 1.0, gr)
        t2 = time.perf_counter()
        b = window_pieces(offs, ch, nch, 5, 1.0, gr, pool, (*wp, made))
        t3 = time.perf_counter()
        r = reads.n_reads
        e32 = np.zeros(0, np.int32)
        p_at, info = np.zeros(r + 1, np.int64), np.zeros((r, 5, 4))
        nwin, cut = np.zeros(r, np.int64), np.zeros(r)
        keep = np.empty((3, r, kp), np.int32)
        args = (offs, ch, nch, 5, 1.0, gr)
        t4 = time.perf_counter()
        batch_windows(*args, False, p_at, (e32, e32, e32), info, nwin, cut, keep, pool,
                      (*wp, made))
        t5 = time.perf_counter()
        np.cumsum(p_at, out=p_at)
        pieces = tuple(np.empty(int(p_at[-1]), np.int32) for _ in range(3))
        t6 = time.perf_counter()
        batch_windows(*args, True, p_at, pieces, info, nwin, cut, keep, pool, (*wp, made))
        t7 = time.perf_counter()
        best = np.minimum(best, (t1 - t0, t2 - t1, t3 - t2, t5 - t4, t7 - t6))
    for u, v in zip(a, b):
        assert np.array_equal(u, v), "windows differ"
    print(f"{reads.n_reads:,} reads, {int(nch.sum()):,} chains, one thread, best of 3: host "
          f"searches + assembly {best[0]:.3f} s; lists by the host oracle {best[1]:.3f} s; "
          f"assembly from lists {best[2]:.3f} s (count pass {best[3]:.3f} s, fill pass "
          f"{best[4]:.3f} s with {kp} pieces kept a read); windows identical")
    window_graph_times(g, b)


def window_graph_times(g, pieces):
    """The batch's ``WindowGraph`` with its columns' bases and node_bound slots made at once
    and left to first use (knob ``lazy_window_bases``: the GPU path never asks), best of 3
    each."""
    from s2g.config import configure, settings
    from s2g.window import WindowGraph
    p_node, p_lo, p_hi, info, nwin = pieces[:5]
    sel = np.arange(info.shape[1])[None, :] < nwin[:, None]      # as windows_of does
    piece_at = np.zeros(int(nwin.sum()) + 1, np.int64)
    np.cumsum(info[:, :, 2][sel].astype(np.int64), out=piece_at[1:])
    was = settings().lazy_window_bases
    out = {}
    for lazy in (False, True):
        configure(lazy_window_bases=lazy)
        best = np.inf
        for _ in range(3):
            t0 = time.perf_counter()
            wg = WindowGraph(g, piece_at, p_node, p_lo, p_hi)
            best = min(best, time.perf_counter() - t0)
        out[lazy] = (best, wg)
    configure(lazy_window_bases=was)
    assert np.array_equal(out[False][1].graph.base, out[True][1].graph.base)
    print(f"WindowGraph of {len(piece_at) - 1:,} windows ({int(out[False][1].ws[-1]):,} "
          f"columns): bases and slots made {out[False][0] * 1e3:.1f} ms, left to first use "
          f"{out[True][0] * 1e3:.1f} ms (lazy_window_bases); same bases")


if __name__ == "__main__":
    main(sys.argv[1:])
