"""Probe (issue #45): a bounded window DP for long reads, computing only the cells that an
alignment scoring at least ``T`` can pass through, proven by an upper bound on the rest of
the read. Exact, but not yet faster than the striped kernel on real long reads (findings
at the end of this docstring), so the aligner does not use it; kept here, tested
(tests/test_bounded_probe.py), for the next attempt.

    python -m bench.bounded_probe --graph .devdata/MHC.gfa --read-len 10000 --reads 10

For read row ``i`` let ``U(i)`` bound the score of any alignment of read bases ``[i, t)``
inside the window, for every ``t >= i`` (the q-gram lemma of
:func:`s2g.seeded.windows.qgram_bounds`, per suffix: :func:`suffix_bounds`). Any state
(H, E or F) of cell ``(i, v)`` with value ``X`` can only lie on an alignment scoring at
most ``X + U(i)``. So, for a threshold ``T``:

- a state with ``X + U(i) < T`` is *dead*: set to minus infinity and never extended;
- every state on an alignment scoring ``>= T`` is alive, and (by induction along the
  alignment) computed exactly, since its predecessor on the alignment is alive too;
- so when the best cell found scores ``S' >= T``, it is the window's optimum, and every
  cell scoring ``S'`` is found: the same score and end cell (ties: smallest column, then
  smallest row) as the full DP (:func:`s2g.window.align_window`). When ``S' < T`` the
  optimum is below ``T`` (:func:`bounded_windows` retries with a lower ``T``).

This is A* with an admissible heuristic (AStarix's seed heuristic, Ivanov et al. 2022,
in DP form) over the window's rows: a row's live cells are the successors of the row
above's live cells (a range of columns), plus whole rows near the top where a fresh start
(local) or the virtual column (semiglobal) can still reach ``T``. With ``T`` near the
optimum a 10 kbp read computes a band of tens to hundreds of columns a row, not the
window's ~10,000.

A traceback would rerun it with ``T = S`` (the score is known), storing the direction
bytes of the live cells only (and, at node-first columns that merge predecessors, which one
won), and walk back as :func:`s2g.trace.scalar.traceback_read`: every cell of an optimal
alignment is computed exactly, and so is every tied alternative at each of its cells (a tie
is another optimal alignment), so the walk would be the same. Neither is written (the
scores alone lost to the striped kernel, above).

Findings (2026-12-02, 2-core AMD EPYC VM, this module's ``main``):

- Exact: every window where the best found reached ``T`` had the full DP's score and end
  cell (DRB1 3 kbp and MHC 10 kbp reads, 5% errors; windows below the floor were truly
  below it).
- The q-gram suffix bound is loose at 5% errors: the optimum lies 800-1,400 below the
  window's bound on MHC 10 kbp reads (207-362 on DRB1 3 kbp reads), from errors closer
  together than q = 10 and from indels counted as one edit. With ``T`` that far below the
  bound, local fresh starts stay alive for the first ~600 rows (every column) and the
  band is hundreds of columns wide: ~1e7 cells a 10 kbp window, 10% of the full DP.
- The row-major scalar loop runs 70-100 M cells/s a thread (the striped kernel: 2.27 G
  on the full window), so the bounded DP is slower than striped on those reads, and the
  traceback at ``T = S`` (no rounds) would be, from its cell count (~1e7), about as fast
  as today's lane traceback (not measured: the walk is not written).
- What would make it pay: a tighter bound (A*PA's chaining seed heuristic, with seed
  positions and gap costs, or a distance-to-end term for the traceback, whose end cell is
  known: it would confine local fresh starts to a diagonal band), and a vectorised inner
  loop.
"""
from __future__ import annotations

import numba
import numpy as np

from s2g._numba import NJIT
from s2g.dp import LOCAL
from s2g.scoring import NEG_INF
from s2g.trace.common import tb_cell
from s2g.seeded.windows import QGRAM, _bit, _qgram_set, _roll

#: no bound (the window's q-gram set could not be made)
NO_BOUND = np.int64(1) << 62


@numba.njit(**NJIT)
def _suffix_one(t, r, piece_at, node_start, pred_ptr, pred_idx, base, codes, offs, a, delta,
                bits, out):
    """U(0..m) of task ``t`` into ``out`` (m + 1 values); False when the window has no
    q-gram set. Integer form of the lemma: ``q x U(i) = max(0, best prefix sum of
    (q a - delta [q-gram ending there missing]) over [i, t)) + (q - 1) delta``, rounded up."""
    q = QGRAM
    bits[:] = 0
    if not _qgram_set(piece_at[t], piece_at[t + 1], node_start, pred_ptr, pred_idx, base,
                      bits):
        return False
    s0, s1 = offs[r], offs[r + 1]
    m = s1 - s0
    mask = (np.int64(1) << (2 * q)) - 1
    w = np.empty(m, np.int64)
    key = np.int64(0)
    good = 0
    for k in range(m):
        key, good = _roll(key, good, codes[s0 + k], mask)
        miss = False
        if good >= q:
            miss = not _bit(bits, key)
        elif k >= q - 1:                          # a q-gram with an N: never spelled
            miss = True
        w[k] = q * a - (delta if miss else 0)
    grace = (q - 1) * delta
    best = np.int64(0)
    out[m] = (grace + q - 1) // q
    for k in range(m - 1, -1, -1):
        best = max(np.int64(0), w[k] + best)
        out[k] = (best + grace + q - 1) // q
    return True


@numba.njit(parallel=True, **NJIT)
def suffix_bounds(tasks, t_read, piece_at, node_start, pred_ptr, pred_idx, base, codes, offs,
                  a, delta):
    """Per task ``tasks[x]``: ``U(0..m)`` of its read in its window (flat, task ``x``'s at
    ``u_at[x]:u_at[x + 1]``) and ``top[x] = max U`` (the window's bound,
    :func:`s2g.seeded.windows.qgram_bounds`), NO_BOUND where there is no q-gram set."""
    n = len(tasks)
    u_at = np.zeros(n + 1, np.int64)
    for x in range(n):
        r = t_read[tasks[x]]
        u_at[x + 1] = u_at[x] + offs[r + 1] - offs[r] + 1
    U = np.empty(u_at[n], np.int64)
    top = np.full(n, NO_BOUND)
    for x in numba.prange(n):
        t = tasks[x]
        bits = np.zeros(1 << (2 * QGRAM - 6), np.uint64)
        u = U[u_at[x]:u_at[x + 1]]
        if _suffix_one(t, t_read[t], piece_at, node_start, pred_ptr, pred_idx, base, codes,
                       offs, a, delta, bits, u):
            top[x] = u.max()
        else:
            u[:] = NO_BOUND
    return u_at, U, top


@numba.njit(**NJIT)
def _layout(v0, v1, node_start, pred_ptr, pred_idx, lo, W):
    """Per window column ``x`` (graph column ``lo + x``): its node, its kind (0 inside a
    node or a first column fed by the previous column only, 2 a first column that merges
    its predecessors with the virtual column) and its furthest successor column (-1)."""
    nodeof = np.empty(W, np.int32)
    kind = np.zeros(W, np.uint8)
    msucc = np.full(W, -1, np.int64)
    for v in range(v0, v1):
        s0, s1 = node_start[v] - lo, node_start[v + 1] - lo
        pa, pb = pred_ptr[v], pred_ptr[v + 1]
        for x in range(s0, s1):
            nodeof[x] = v
            msucc[x] = x + 1 if x + 1 < s1 else -1
        simple = pb - pa == 1 and pred_idx[pa] == v - 1 and s0 > 0
        if s1 > s0 and not simple:
            kind[s0] = 2
    for v in range(v0, v1):
        s0 = node_start[v] - lo
        for k in range(pred_ptr[v], pred_ptr[v + 1]):
            lp = node_start[pred_idx[k] + 1] - 1 - lo
            if s0 > msucc[lp]:
                msucc[lp] = s0
    return nodeof, kind, msucc


@numba.njit(**NJIT)
def bounded_window(q, U, T, rows, v0, v1, graph, mode, sc):
    """The bounded DP (module doc) of read ``q``'s rows ``0..rows`` in the window of
    window-graph nodes ``v0..v1-1``, threshold ``T``. Returns (best, end_i, end_j, cells):
    best over live cells as :func:`s2g.window.align_window` (NEG_INF, -1, -1: none), and
    the cells computed."""
    base, node_start, pred_ptr, pred_idx = graph
    a, b, o, e = sc
    lo = node_start[v0]
    W = node_start[v1] - lo
    nodeof, kind, msucc = _layout(v0, v1, node_start, pred_ptr, pred_idx, lo, W)
    NEG = np.int64(NEG_INF)
    Hp = np.zeros(W, np.int64)
    Fp = np.full(W, NEG, np.int64)
    Hc = np.empty(W, np.int64)
    Ec = np.empty(W, np.int64)
    Fc = np.empty(W, np.int64)
    local = mode == LOCAL
    # row 0: H = 0, no E or F
    if U[0] >= T:
        plo, phi, preach = 0, W - 1, W - 1
    else:
        plo, phi, preach = W, -1, -1
    best, bi, bx = NEG, -1, -1
    cells = np.int64(W)
    for i in range(1, rows + 1):
        thr = T - U[i]
        vh1 = np.int64(0) if (local or i == 1) else -(o + e * (i - 1))
        vh = np.int64(0) if local else -(o + e * i)
        ve = vh - o - e
        if local:
            open_ = a >= thr
        else:
            open_ = vh1 + a >= thr or ve >= thr
        if open_:
            xs, reach = 0, W - 1
        elif phi < plo:
            plo, phi, preach = W, -1, -1
            continue
        else:
            xs, reach = plo, preach
        clo, chi, nreach = W, -1, -1
        qb = q[i - 1]
        x = xs
        while x <= reach:
            if kind[x] != 2:
                diag = Hp[x - 1] if (x >= 1 and plo <= x - 1 <= phi) else NEG
                if x - 1 >= xs:
                    ho = Hc[x - 1] - o - e
                    ex = Ec[x - 1] - e
                else:
                    ho = NEG - o - e
                    ex = NEG - e
                ev = max(ho, ex)
            else:
                v = nodeof[x]
                diag = vh1
                dp = np.int32(-1)
                ev = ve
                ep = np.int32(-1)
                for k in range(pred_ptr[v], pred_ptr[v + 1]):
                    p = pred_idx[k]
                    lp = node_start[p + 1] - 1 - lo
                    hp = Hp[lp] if plo <= lp <= phi else NEG
                    if hp > diag or (hp == diag and dp == -1):
                        diag = hp
                        dp = np.int32(p)
                    if lp >= xs:
                        ho = Hc[lp] - o - e
                        ex = Ec[lp] - e
                    else:
                        ho = NEG - o - e
                        ex = NEG - e
                    ce = max(ho, ex)
                    if ce > ev or (ce == ev and ep == -1 and ce > NEG):
                        ev = ce
                        ep = np.int32(p)
            inside = plo <= x <= phi
            hup = Hp[x] if inside else NEG
            fup = Fp[x] if inside else NEG
            h, f, _ = tb_cell(diag, ev, hup, fup, qb, base[lo + x], mode, a, b, o, e)
            live = False
            if h >= thr:
                live = True
                if (not local and i == rows) or (local and h > 0):
                    if h > best or (h == best and x < bx):
                        best, bi, bx = h, i, x
            else:
                h = NEG
            if f >= thr:
                live = True
            else:
                f = NEG
            if ev >= thr:
                live = True
            else:
                ev = NEG
            Hc[x] = h
            Ec[x] = ev
            Fc[x] = f
            if live:
                if clo == W:
                    clo = x
                chi = x
                ms = msucc[x]
                if ms > reach:
                    reach = ms
                if ms > nreach:
                    nreach = ms
            x += 1
        cells += x - xs
        Hp, Hc = Hc, Hp
        Fp, Fc = Fc, Fp
        plo, phi = clo, chi
        preach = max(chi, nreach)
    if local and best <= 0:
        best, bi, bx = NEG, -1, -1
    ej = lo + bx if bx >= 0 else -1
    return best, bi, ej, cells


@numba.njit(parallel=True, **NJIT)
def bounded_windows(tasks, thr, t_read, codes, offs, piece_at, graph, mode, sc, u_at, U,
                    score, end_i, end_j, cells):
    """:func:`bounded_window` of tasks ``tasks[x]`` (U at ``u_at[x]``) at thresholds
    ``thr[x]``, into ``score``/``end_i``/``end_j``/``cells`` at ``x``, in parallel."""
    for x in numba.prange(len(tasks)):
        t = tasks[x]
        r = t_read[t]
        q = codes[offs[r]:offs[r + 1]]
        s, i, j, c = bounded_window(q, U[u_at[x]:u_at[x + 1]], thr[x], len(q),
                                    piece_at[t], piece_at[t + 1], graph, mode, sc)
        score[x], end_i[x], end_j[x], cells[x] = s, i, j, c


def align_bounded(tasks, floor, bnd, cand_args, mode, sc, first_margin=None):
    """Scores and end cells of windows ``tasks`` by the bounded DP, in rounds: threshold
    ``T = top - margin``, the margin doubling from ``first_margin`` (default: 1/64 of
    ``top``, at least 16 mismatches' worth) until the best found reaches ``T`` (the
    optimum) or ``T`` is below ``floor[x]`` (then the optimum is below ``floor``: the
    window is reported as NEG_INF / -1 / -1 and ``dropped[x]``). ``bnd = (u_at, U, top)``
    of :func:`suffix_bounds` for exactly these tasks; ``cand_args = (t_read, codes, offs,
    piece_at, graph)`` with ``graph = (base, node_start, pred_ptr, pred_idx)``. Returns
    (score, end_i, end_j, cells, dropped)."""
    u_at, U, top = bnd
    t_read, codes, offs, piece_at, graph = cand_args
    a, b, o, e = sc
    n = len(tasks)
    score = np.full(n, NEG_INF, np.int64)
    end_i = np.full(n, -1, np.int64)
    end_j = np.full(n, -1, np.int64)
    cells = np.zeros(n, np.int64)
    dropped = top < floor
    left = np.nonzero(~dropped)[0]
    margin = np.maximum(16 * (a + b), top // 64) if first_margin is None else \
        np.full(n, int(first_margin), np.int64)
    while len(left):
        thr = np.maximum(top[left] - margin[left], floor[left])
        s, i, j, c = (np.zeros(len(left), np.int64) for _ in range(4))
        sub_at = np.zeros(len(left) + 1, np.int64)
        np.cumsum(u_at[left + 1] - u_at[left], out=sub_at[1:])
        Us = np.concatenate([U[u_at[x]:u_at[x + 1]] for x in left.tolist()])
        bounded_windows(tasks[left], thr, t_read, codes, offs, piece_at, graph, int(mode),
                        (a, b, o, e), sub_at, Us, s, i, j, c)
        cells[left] += c
        done = s >= thr
        at_floor = ~done & (thr <= floor[left])
        fin = left[done]
        score[fin], end_i[fin], end_j[fin] = s[done], i[done], j[done]
        dropped[left[at_floor]] = True
        margin[left] *= 4
        left = left[~done & ~at_floor]
    return score, end_i, end_j, cells, dropped


def main(argv=None):
    import argparse
    import time
    import warnings

    import s2g
    from s2g.index import build_index
    from s2g.scoring import Mode, Scoring
    from s2g.seeded import SeededAligner
    from s2g.variants import striped
    from s2g.window import align_windows_ref

    from bench.seeded import sample
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--graph", required=True)
    ap.add_argument("--read-len", type=int, default=10_000)
    ap.add_argument("--reads", type=int, default=10)
    ap.add_argument("--error", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=5)
    a_ = ap.parse_args(argv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = s2g.load_graph(a_.graph, keep_paths=True, break_cycles=True)
    reads, _ = sample(g, a_.reads, a_.read_len, a_.error, 0.2, np.random.default_rng(a_.seed))
    sc = Scoring()
    mode = Mode.LOCAL
    cand = SeededAligner(g, build_index(g), sc, mode).candidates(reads)
    wg, G = cand.wg, cand.wg.graph
    a, b, o, e = sc.as_tuple()
    offs = np.asarray(reads.offsets, np.int64)
    bargs = (cand.t_read, wg.piece_at, G.node_start, G.pred_ptr, G.pred_idx, G.base,
             reads.codes_flat, offs, a, min(a + b, o + e, QGRAM * (a + e)))
    top = suffix_bounds(np.arange(wg.n_tasks), *bargs)[2]
    tasks = np.nonzero(top < NO_BOUND)[0]
    bnd = suffix_bounds(tasks, *bargs)
    want = align_windows_ref(G, reads.codes_flat, reads.offsets, cand.t_read[tasks],
                             wg.t_lo[tasks], wg.t_hi[tasks], sc, mode)
    win = (G, reads.codes_flat, reads.offsets, cand.t_read[tasks], wg.t_lo[tasks],
           wg.t_hi[tasks], sc, mode)
    striped.align_windows(*win)
    t0 = time.perf_counter()
    striped.align_windows(*win)
    t_str = time.perf_counter() - t0
    full = int(((wg.t_hi - wg.t_lo)[tasks] * (reads.lengths()[cand.t_read[tasks]] + 1)).sum())
    args = (cand.t_read, reads.codes_flat, offs, wg.piece_at,
            (G.base, G.node_start, G.pred_ptr, G.pred_idx))
    floor = np.full(len(tasks), -(1 << 40), np.int64)
    align_bounded(tasks, floor, bnd, args, mode, (a, b, o, e))
    t0 = time.perf_counter()
    s, i, j, c, _ = align_bounded(tasks, floor, bnd, args, mode, (a, b, o, e))
    t_b = time.perf_counter() - t0
    same = int(((s == want[0]) & (i == want[1]) & (j == want[2])).sum())
    print(f"{len(tasks)} windows with a bound ({wg.n_tasks} in all); striped {t_str:.2f} s, "
          f"{full:.3g} cells; bounded {t_b:.2f} s, {c.sum():.3g} cells; identical "
          f"{same}/{len(tasks)}; slack (bound - score) p50 "
          f"{np.median(bnd[2] - want[0]):.0f}")


if __name__ == "__main__":
    main()
