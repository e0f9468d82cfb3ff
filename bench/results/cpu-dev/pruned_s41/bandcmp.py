import numpy as np, types, s2g, time, numba, sys
from s2g.config import configure
from s2g.variants import pruned as P
configure(tb_prune_walk=False)
z = np.load(sys.argv[1] if len(sys.argv) > 1 else "/tmp/lr/cap.npz")
g = types.SimpleNamespace(base=z["base"], node_start=z["node_start"], pred_ptr=z["pred_ptr"], pred_idx=z["pred_idx"], n_bases=int(z["node_start"][-1]))
sc = s2g.Scoring(); a, b, o, e = sc.as_tuple()
m = s2g.Mode.parse("local")
tr, lo, hi = z["tr"], z["lo"], z["hi"]
n = int(sys.argv[2]) if len(sys.argv) > 2 else len(tr)
tr, lo, hi = tr[:n], lo[:n], hi[:n]
d1 = {}
S, EI, EJ = P.align_windows(g, z["codes"], z["offs"], tr, lo, hi, sc, m, bands=d1)
c1 = P.LAST_STATS[0]
d2 = {}
S2, EI2, EJ2 = P.align_windows(g, z["codes"], z["offs"], tr, lo, hi, sc, m, bands=d2, floor=S, known=True)
c2 = P.LAST_STATS[0]
assert (S2 == S).all() and (EI2 == EI).all() and (EJ2 == EJ).all()

@numba.njit
def walks(node_start, pred_ptr, pred_idx, lo, ej):
    W = ej - lo + 1
    dmin = np.full(W, 1 << 30, np.int64); lmax = np.full(W, -1, np.int64)
    dmin[W - 1] = 0; lmax[W - 1] = 0
    for c in range(W - 1, -1, -1):
        if lmax[c] < 0: continue
        j = c + lo
        v = np.searchsorted(node_start, j, side="right") - 1
        if j > node_start[v]:
            ps = [j - 1]
        else:
            ps = [node_start[pred_idx[k] + 1] - 1 for k in range(pred_ptr[v], pred_ptr[v + 1])]
        for p in ps:
            if p < lo: continue
            q = p - lo
            dmin[q] = min(dmin[q], dmin[c] + 1); lmax[q] = max(lmax[q], lmax[c] + 1)
    return dmin, lmax

full = slack = k1 = k2 = both = 0
offs = z["offs"]
for t in range(n):
    if S[t] <= -2**28: continue
    R = int(EI[t]); W = int(hi[t] - lo[t])
    full += (R + 1) * W
    dmin, lmax = walks(g.node_start, g.pred_ptr, g.pred_idx, int(lo[t]), int(EJ[t]))
    sl = max(0, a * R - int(S[t]))
    D, I = sl // e, sl // (a + e)
    ok = lmax >= 0
    blo = np.clip(R - lmax - I - 1, 0, R); bhi = np.clip(R - dmin + D + 1, 0, R)
    wsl = np.where(ok, bhi - blo + 1, 0)
    slack += int(wsl.sum())
    for dd, acc in ((d1, 1), (d2, 2)):
        rlo, rhi = dd[t]
        rlo = rlo[:len(ok)].astype(np.int64); rhi = np.minimum(rhi[:len(ok)].astype(np.int64), R)
        w = np.where((rhi >= rlo) & ok, rhi - rlo + 1, 0)
        if acc == 1: k1 += int(w.sum())
        else:
            k2 += int(w.sum())
            lo2 = np.maximum(rlo, blo); hi2 = np.minimum(rhi, bhi)
            both += int(np.where((hi2 >= lo2) & ok, hi2 - lo2 + 1, 0).sum())
print(f"windows {n}: full {full:.3e}  slack band {slack:.3e}  kept(scoring pass) {k1:.3e}  kept(T=S) {k2:.3e}  kept(T=S)&slack {both:.3e}; computed {c1:.3e} / {c2:.3e}")
