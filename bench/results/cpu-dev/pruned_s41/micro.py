import numpy as np, numba, time
from s2g.variants.pruned_rows import _row_direct, _run, _row_keep, BIG_ROW
from s2g.variants.pruned_walk import _run_rec
N = 512
rng = np.random.default_rng(1)
base = rng.integers(0, 4, N + 1).astype(np.uint8)
Hp = rng.integers(0, 1000, N + 1).astype(np.int32); Fp = Hp - 5
H0 = np.zeros(N + 1, np.int32); Fc = np.zeros(N + 1, np.int32); Hc = np.zeros(N + 1, np.int32); Ec = np.zeros(N + 1, np.int32)
reach = np.arange(N + 1).astype(np.int64); walk = np.full(N + 1, 100000, np.int64)
rlo = np.full(N + 1, BIG_ROW, np.int32); rhi = np.full(N + 1, -1, np.int32)
D = np.zeros(N + 1, np.uint8)

@numba.njit
def bd(reps, base, Hp, Fp, H0, Fc):
    for r in range(reps):
        _row_direct(r & 3, base, Hp, Fp, H0, Fc, 1, N, 2, 4, 6, 2, -1 << 29)
@numba.njit
def br(reps, Hc, Ec, H0):
    M = np.int64(0)
    for r in range(reps):
        M = _run(Hc, Ec, H0, 1, N, 6, 2, np.int64(-1 << 29))
    return M
@numba.njit
def brr(reps, Hc, Ec, H0, D):
    M = np.int64(0)
    for r in range(reps):
        M = _run_rec(Hc, Ec, H0, 1, N, 6, 2, np.int64(-1 << 29), D, 0, True)
    return M
@numba.njit
def bk(reps, reach, walk, Hc, Ec, Fc, rlo, rhi):
    kept = (np.int64(-1), np.int64(-1), np.int64(-1), np.int64(-1 << 29), np.int64(-1), np.int64(-1))
    for r in range(reps):
        kept = _row_keep(reach, walk, Hc, Ec, Fc, 1, N, (np.int64(500), np.int64(100000), np.int64(2)), True, r, 0, kept, rlo, rhi)
    return kept
args = {bd: (base, Hp, Fp, H0, Fc), br: (Hc, Ec, H0), brr: (Hc, Ec, H0, D), bk: (reach, walk, Hc, Ec, Fc, rlo, rhi)}
for f in (bd, br, brr, bk):
    f(10, *args[f])
    t = time.perf_counter(); f(200000, *args[f]); dt = time.perf_counter() - t
    print(f.__name__, f"{dt / (200000 * (N - 1)) * 1e9:.3f} ns/cell")
from s2g.variants.pruned_walk import _row_direct_rec
@numba.njit
def bdr(reps, base, Hp, Fp, H0, Fc, D):
    for r in range(reps):
        _row_direct_rec(np.int32(r & 3), base, Hp, Fp, H0, Fc, 1, N, np.int32(2), np.int32(4), np.int32(6), np.int32(2), np.int32(-1 << 29), D, 0)
@numba.njit
def bd2(reps, base, Hp, Fp, H0, Fc):
    for r in range(reps):
        _row_direct(np.int32(r & 3), base, Hp, Fp, H0, Fc, 1, N, np.int32(2), np.int32(4), np.int32(6), np.int32(2), np.int32(-1 << 29))
for f, a in ((bdr, (base, Hp, Fp, H0, Fc, D)), (bd2, (base, Hp, Fp, H0, Fc))):
    f(10, *a)
    t = time.perf_counter(); f(200000, *a); dt = time.perf_counter() - t
    print(f.__name__, f"{dt / (200000 * (N - 1)) * 1e9:.3f} ns/cell")
