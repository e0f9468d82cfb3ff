"""simd against cpu by batch shape: the measurements behind ``auto``'s CPU rule
(``s2g.variants.registry.SIMD_LANE_SPEEDUP``, README "Variants").

    python -m bench.auto_pick --graph graphs/example.gfa --lens 150,1000,2000 \
        --ns 1,4,16,32,64,128,256,1000 [--mode local] [--out rows.jsonl]
    NUMBA_NUM_THREADS=1 python -m bench.auto_pick ...        # the per-thread speedups

Each point: ``align_batch(...)`` (scores and end cells) of each variant on ``n`` reads of
length ``L`` (graph substrings, 1% substitutions), warm, median of ``--reps`` runs (one
run past ``--long-run`` s), with the scores and end cells compared. A variant is skipped
at a point when the rate it showed at that length predicts over ``--skip-ratio`` x the
other's measured time there and over ``--min-skip`` s (the trend is clear).
"""
import json, time, argparse
import numpy as np
import numba
import s2g
from s2g.reads import ReadBatch
from s2g.scoring import Scoring, Mode
from s2g.variants import registry, simd

ap = argparse.ArgumentParser()
ap.add_argument("--graph"); ap.add_argument("--lens"); ap.add_argument("--ns")
ap.add_argument("--variants", default="simd,cpu"); ap.add_argument("--mode", default="local")
ap.add_argument("--skip-ratio", type=float, default=4.0); ap.add_argument("--min-skip", type=float, default=3.0)
ap.add_argument("--long-run", type=float, default=12.0, help="a run longer than this: 1 rep")
ap.add_argument("--reps", type=int, default=3); ap.add_argument("--out")
a = ap.parse_args()
g = s2g.load_graph(a.graph)
nb = g.n_bases
rng = np.random.default_rng(1)
sc = Scoring(); mode = Mode.parse(a.mode)
TH = numba.get_num_threads()
def reads(n, L):
    out = []
    for r in range(n):
        s = rng.integers(0, nb)
        q = g.base[(s + np.arange(L)) % nb].astype(np.uint8).copy()
        q[q > 3] = 0
        mut = rng.random(L) < 0.01
        q[mut] = (q[mut] + rng.integers(1, 4, mut.sum())) % 4
        out.append(q)
    return ReadBatch.from_codes([f"r{i}" for i in range(n)], out)
def units(v, n, L):
    """work units: rounds x lanes (simd) or rounds of reads per thread (cpu)"""
    if v == "simd":
        T = simd.lane_type(sc, mode, L, nb); lanes = simd.LANES.get(T, 1)
        groups = -(-n // lanes)
        return -(-groups // TH) * lanes
    return -(-n // TH)
mods = {v: registry.get_variant(v) for v in a.variants.split(",")}
for v, m in mods.items():
    for L in (100, 5000):
        m.align_batch(g, reads(2, L), sc, mode)
unit_t = {}
out = open(a.out, "a") if a.out else None
for L in map(int, a.lens.split(",")):
    for n in map(int, a.ns.split(",")):
        b = reads(n, L)
        row = dict(graph=a.graph.split("/")[-1], mode=a.mode, len=L, n=n, cols=nb, threads=TH,
                   lane=np.dtype(simd.lane_type(sc, mode, L, nb)).name)
        est = {v: unit_t[(v, L)] * units(v, n, L) if (v, L) in unit_t else None for v in mods}
        order = sorted(mods, key=lambda v: est[v] if est[v] is not None else 0)
        outs = {}
        for v in order:
            done = [row[w] for w in mods if isinstance(row.get(w), float)]
            if est[v] is not None and done and est[v] > a.skip_ratio * min(done) and est[v] > a.min_skip:
                row[v] = f"skipped (est {est[v]:.1f} s)"; continue
            ts = []
            for k in range(a.reps):
                t = time.perf_counter(); r = mods[v].align_batch(g, b, sc, mode); ts.append(time.perf_counter() - t)
                if ts[-1] > a.long_run: break
            outs[v] = r
            row[v] = float(np.median(ts)); row[v + "_runs"] = [round(x, 3) for x in ts]
            unit_t[(v, L)] = row[v] / units(v, n, L)
        if len(outs) > 1:
            vs = list(outs.values())
            row["same"] = all(np.array_equal(vs[0].score, x.score) and np.array_equal(vs[0].end_i, x.end_i)
                              and np.array_equal(vs[0].end_j, x.end_j) for x in vs[1:])
        print(json.dumps(row), flush=True)
        if out: out.write(json.dumps(row) + "\n"); out.flush()
