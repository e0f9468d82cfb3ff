import numpy as np, types, s2g, time, sys, numba
from s2g.config import configure
from s2g.variants import pruned as P
configure(tb_prune_walk=(sys.argv[1] == "1"))
z = np.load("/tmp/lr/cap.npz")
g = types.SimpleNamespace(base=z["base"], node_start=z["node_start"], pred_ptr=z["pred_ptr"], pred_idx=z["pred_idx"], n_bases=int(z["node_start"][-1]))
sc = s2g.Scoring(); m = s2g.Mode.parse("local")
n = 30
tr, lo, hi = z["tr"][:n], z["lo"][:n], z["hi"][:n]
numba.set_num_threads(1)
ts = []
for rep in range(5):
    t = time.perf_counter()
    P.align_windows(g, z["codes"], z["offs"], tr, lo, hi, sc, m, bands={})
    ts.append(time.perf_counter() - t)
dt = min(ts[1:])
print(f"rec={sys.argv[1]} cells {P.LAST_STATS[0]:.3e} passes+ {P.LAST_STATS[1]} {dt:.3f} s  {dt / P.LAST_STATS[0] * 1e9:.2f} ns/cell")
