"""How often a band that follows a long read's anchors holds its window's optimum, and
its cells (issue #45: "windows that fit the read", piecewise between anchors).

    python -m bench.anchor_band --graph MHC.gfa --reads r50l30.fq [--slack 16] [--n 20]

For each read: its best chain's waypoints ``(q, c)`` (the corridor's, ``s2g.seeded
.chains``), its lead window (``SeededAligner.windows_of``, task ``first[r]``) and that
window's exact score (``s2g.variants.pruned.align_windows``, its cells). The band: between
consecutive waypoints ``(qa, ca)``, ``(qb, cb)`` (read gap ``g``), a window column ``c``
with shortest walks ``df`` from ``ca`` and ``db`` to ``cb`` takes rows ``qa + df - s .. qb
- db + s`` (``s = slack + g / 8``: the indels an alignment through both anchors may have
there), before the first waypoint rows ``q0 - db - s .. q0 - db + s`` (``db`` to ``c0``),
after the last likewise; a column's rows are the hull over the gaps that reach it. The
local affine DP restricted to those cells (:func:`banded_dp`, checked against the exact
score with ``--slack 100000``) gives the band's optimum. Prints, per read and in all:
band score == window score, cells in the band against the exact pruned pass's.
Not a product path: an experiment on what a band would change (docs/variants.md).
"""
from __future__ import annotations

import argparse
import sys
import time

import numba
import numpy as np

NEG = -(1 << 40)


@numba.njit(cache=True)
def _col_preds(lo, hi, node_start, pred_ptr, pred_idx):
    """Per window column (``lo..hi-1``): its predecessor columns inside the window."""
    W = hi - lo
    ptr = np.zeros(W + 1, np.int64)
    idx = np.empty(4 * W + 16, np.int64)
    v = np.searchsorted(node_start, lo, side="right") - 1
    k = 0
    for c in range(lo, hi):
        while node_start[v + 1] <= c:
            v += 1
        if k + (pred_ptr[v + 1] - pred_ptr[v]) + 1 > len(idx):
            idx = np.concatenate((idx, np.empty(len(idx), np.int64)))
        if c > node_start[v]:
            idx[k] = c - 1 - lo
            k += 1
        else:
            for x in range(pred_ptr[v], pred_ptr[v + 1]):
                p = node_start[pred_idx[x] + 1] - 1
                if lo <= p < hi:
                    idx[k] = p - lo
                    k += 1
        ptr[c - lo + 1] = k
    return ptr, idx[:k]


@numba.njit(cache=True)
def _dist_fwd(src, lim, ptr, idx, W):
    d = np.full(W, 1 << 40, np.int64)
    d[src] = 0
    for c in range(src + 1, W):
        best = 1 << 40
        for x in range(ptr[c], ptr[c + 1]):
            best = min(best, d[idx[x]] + 1)
        d[c] = best if best <= lim else (1 << 40)
    return d


@numba.njit(cache=True)
def _dist_bwd(dst, lim, ptr, idx, W):
    d = np.full(W, 1 << 40, np.int64)
    d[dst] = 0
    for c in range(dst, -1, -1):
        if d[c] >= lim:
            continue
        for x in range(ptr[c], ptr[c + 1]):
            p = idx[x]
            d[p] = min(d[p], d[c] + 1)
    return d


@numba.njit(cache=True)
def banded_dp(q, base, lo, rlo, rhi, ptr, idx, a, b, o, e):
    """Best local affine score of read ``q`` over window columns whose row range
    ``rlo[c]..rhi[c]`` holds the row (other cells -inf), and the cells computed."""
    m = len(q)
    W = len(rlo)
    Hp = np.full(W, NEG, np.int64)
    Fp = np.full(W, NEG, np.int64)
    Hc = np.full(W, NEG, np.int64)
    Fc = np.full(W, NEG, np.int64)
    Ec = np.full(W, NEG, np.int64)
    # each row's column span
    cmin = np.full(m, W, np.int64)
    cmax = np.full(m, -1, np.int64)
    for c in range(W):
        for i in range(max(rlo[c], 0), min(rhi[c], m - 1) + 1):
            if c < cmin[i]:
                cmin[i] = c
            if c > cmax[i]:
                cmax[i] = c
    best = 0
    cells = 0
    for i in range(m):
        if i >= 2:                            # Hc holds row i - 2: clear its span
            for c in range(cmin[i - 2], cmax[i - 2] + 1):
                Hc[c] = NEG
                Fc[c] = NEG
        if i >= 1:
            for c in range(cmin[i - 1], cmax[i - 1] + 1):
                Ec[c] = NEG
        for c in range(cmin[i], cmax[i] + 1):
            if rlo[c] > i or rhi[c] < i:
                continue
            cells += 1
            s = a if (q[i] == base[lo + c] and q[i] < 4) else -b
            f = max(Hp[c] - o - e, Fp[c] - e)
            h = max(0, f)
            ev = NEG
            if ptr[c + 1] == ptr[c]:
                h = max(h, s)                      # a fresh diagonal start
            for x in range(ptr[c], ptr[c + 1]):
                p = idx[x]
                h = max(h, max(Hp[p], 0) + s)
                ev = max(ev, max(Hc[p] - o - e, Ec[p] - e))
            h = max(h, ev)
            Hc[c] = h
            Fc[c] = f
            Ec[c] = ev
            if h > best:
                best = h
        Hp, Hc = Hc, Hp
        Fp, Fc = Fc, Fp
    return best, cells


def _points(way, nw, gcol):
    """The chain's waypoints inside the window: (read base, window column, graph column)."""
    pts = []
    for w in range(nw):
        qc, cc = int(way[w, 0]), int(way[w, 1])
        k = np.searchsorted(gcol, cc)
        if k < len(gcol) and gcol[k] == cc:
            pts.append((qc, int(k), cc))
    return pts


def rect_of(way, nw, m, lo, hi, gcol, ptr, idx, slack):
    """(rlo, rhi) per window column, the corridor's pieces each with its own rows: between
    waypoints ``(qa, ca)``, ``(qb, cb)`` the columns within ``d = g + 1 + 16 + g / 8``
    downstream of ``ca`` or upstream of ``cb`` (the corridor's reach, less its deletion
    allowance) take rows ``qa - s .. qb + s``; the flanks (upstream of the first waypoint
    within ``q0 + 1 + 16 + (q0 + 1) / 8``, downstream of the last likewise) rows ``0 .. q0
    + s`` and ``q1 - s .. m - 1``; a first (last) waypoint a jump away from the next
    (previous) gives that one the flank too, as the corridor does."""
    W = hi - lo
    rlo = np.full(W, 1 << 40, np.int64)
    rhi = np.full(W, -1, np.int64)
    pts = _points(way, nw, gcol)
    if not pts:
        return None

    def put(d, lim, r0, r1):
        ok = d <= lim
        rlo[ok] = np.minimum(rlo[ok], max(r0, 0))
        rhi[ok] = np.maximum(rhi[ok], min(r1, m - 1))

    def up(k, q0):
        put(_dist_bwd(pts[k][1], q0 + 2 + 16 + (q0 + 1) // 8, ptr, idx, W),
            q0 + 1 + 16 + (q0 + 1) // 8, 0, q0 + slack)

    def down(k, q1):
        f = m - q1
        put(_dist_fwd(pts[k][1], f + 17 + f // 8, ptr, idx, W), f + 16 + f // 8,
            q1 - slack, m - 1)
    up(0, pts[0][0])
    down(len(pts) - 1, pts[-1][0])
    if len(pts) > 2 and pts[1][2] - pts[0][2] > 2 * (pts[1][0] - pts[0][0]) + 64:
        up(1, pts[1][0])
    z = len(pts) - 2
    if len(pts) > 2 and pts[z + 1][2] - pts[z][2] > 2 * (pts[z + 1][0] - pts[z][0]) + 64:
        down(z, pts[z][0])
    for (qa, ca, _), (qb, cb, _) in zip(pts[:-1], pts[1:]):
        g = qb - qa
        d = g + 1 + 16 + g // 8
        s = slack + g // 8
        put(_dist_fwd(ca, d + 1, ptr, idx, W), d, qa - s, qb + s)
        put(_dist_bwd(cb, d + 1, ptr, idx, W), d, qa - s, qb + s)
    return rlo, rhi


def band_of(way, nw, m, lo, hi, gcol, ptr, idx, slack):
    """(rlo, rhi) per window column: module doc."""
    W = hi - lo
    rlo = np.full(W, 1 << 40, np.int64)
    rhi = np.full(W, -1, np.int64)
    pts = [(qc, k) for qc, k, _ in _points(way, nw, gcol)]
    if not pts:
        return None
    q0, c0 = pts[0]
    s = slack + q0 // 8
    db = _dist_bwd(c0, q0 + 1 + s, ptr, idx, W)
    ok = db < (1 << 40)
    rlo[ok] = np.minimum(rlo[ok], q0 - db[ok] - s)
    rhi[ok] = np.maximum(rhi[ok], q0 - db[ok] + s)
    q1, c1 = pts[-1]
    f = m - q1
    s = slack + f // 8
    df = _dist_fwd(c1, f + s, ptr, idx, W)
    ok = df < (1 << 40)
    rlo[ok] = np.minimum(rlo[ok], q1 + df[ok] - s)
    rhi[ok] = np.maximum(rhi[ok], q1 + df[ok] + s)
    for (qa, ca), (qb, cb) in zip(pts[:-1], pts[1:]):
        g = qb - qa
        if cb <= ca or g <= 0:
            continue
        s = slack + g // 8
        lim = g + 2 * s + 1
        df = _dist_fwd(ca, lim, ptr, idx, W)
        db = _dist_bwd(cb, lim, ptr, idx, W)
        ok = (df < (1 << 40)) & (db < (1 << 40))
        lo_r, hi_r = qa + df - s, qb - db + s
        ok &= lo_r <= hi_r
        rlo[ok] = np.minimum(rlo[ok], lo_r[ok])
        rhi[ok] = np.maximum(rhi[ok], hi_r[ok])
    return rlo, rhi


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--graph", required=True)
    ap.add_argument("--reads", required=True)
    ap.add_argument("--slack", type=int, default=16)
    ap.add_argument("--n", type=int, default=0, help="the first N reads (0: all)")
    ap.add_argument("--shape", choices=["diag", "rect"], default="rect",
                    help="diag: rows along the anchors' diagonals; rect: each corridor "
                         "piece with its gap's rows (rect_of)")
    args = ap.parse_args(argv)
    import s2g
    from s2g.index import load_index
    from s2g.reads import iter_read_batches
    from s2g.scoring import Mode, Scoring
    from s2g.seeded import SeededAligner
    from s2g.variants import pruned
    g = s2g.load_graph(args.graph)
    ix = load_index(args.graph + ".s2gi", g)
    reads = next(iter(iter_read_batches(args.reads, 1 << 30)))
    if args.n:
        reads = reads.subset(np.arange(min(args.n, len(reads.names))))
    sc = Scoring()
    a, b, o, e = sc.as_tuple()
    sa = SeededAligner(g, ix, sc, Mode.LOCAL)
    got = sa.chains(reads)
    cand = sa.windows_of(reads, got)
    _, _, _, way, nway = got[:5]
    wg = cand.wg
    offs = np.asarray(reads.offsets, np.int64)
    codes = np.asarray(reads.codes_flat, np.uint8)
    wgg = wg.graph
    n_eq = n = 0
    bc = ec = 0
    for r in range(len(reads.names)):
        if cand.ncand[r] == 0 or nway[r, 0] < 2:
            continue
        t = int(cand.first[r])
        lo, hi = int(wg.t_lo[t]), int(wg.t_hi[t])
        q = codes[offs[r]:offs[r + 1]]
        s_ex, _, _ = pruned.align_windows(wgg, codes, offs, np.array([r]), np.array([lo]),
                                          np.array([hi]), sc, Mode.LOCAL)
        cells_ex = int(pruned.LAST_STATS[0])
        gcol = wg.columns(np.arange(lo, hi))
        ptr, idx = _col_preds(lo, hi, np.asarray(wgg.node_start, np.int64),
                              np.asarray(wgg.pred_ptr, np.int64),
                              np.asarray(wgg.pred_idx, np.int64))
        band = (rect_of if args.shape == "rect" else band_of)(
            way[r, 0], int(nway[r, 0]), len(q), lo, hi, gcol, ptr, idx, args.slack)
        if band is None:
            continue
        t0 = time.perf_counter()
        s_b, cells_b = banded_dp(q, np.asarray(wgg.base), lo, band[0], band[1], ptr, idx,
                                 a, b, o, e)
        n += 1
        n_eq += int(s_b == s_ex[0])
        bc += cells_b
        ec += cells_ex
        print(f"read {r}: {len(q)} bases, {hi - lo} columns, {int(nway[r, 0])} waypoints; "
              f"window {s_ex[0]} band {s_b}; cells band {cells_b:.3e} exact pass "
              f"{cells_ex:.3e} ({time.perf_counter() - t0:.2f} s)", flush=True)
    print(f"{n} reads: band score == window score on {n_eq}; cells band {bc:.3e}, exact "
          f"passes {ec:.3e} ({ec / max(bc, 1):.1f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
