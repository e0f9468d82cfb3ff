import numpy as np, numba, time
from s2g._numba import NJIT
from s2g.variants.pruned_rows import _run
N = 512
rng = np.random.default_rng(1)
H0 = rng.integers(-2000, 1000, N + 1).astype(np.int32)
H0[100:200] = -(1 << 29)

@numba.njit(**NJIT)
def run32(Hc, Ec, H0, c0, c1, oe, e, M):
    oe32 = np.int32(oe); e32 = np.int32(e); m = np.int32(M)
    for c in range(c0, c1):
        u = np.uintp(c)
        ec = e32 * np.int32(c)
        m = max(m, H0[np.uintp(c - 1)] - oe32 + ec)
        ev = m - ec
        Hc[u] = max(H0[u], ev)
        Ec[u] = ev
    return np.int64(m)

@numba.njit(**NJIT)
def run3(Hc, Ec, H0, c0, c1, oe, e, M):
    # X in Ec; 4 interleaved chains; fix-up; final
    n = c1 - c0
    oe32 = np.int32(oe); e32 = np.int32(e)
    for c in range(c0, c1):
        Ec[np.uintp(c)] = H0[np.uintp(c - 1)] - oe32 + e32 * np.int32(c)
    q = n >> 2
    s1 = c0 + q; s2 = s1 + q; s3 = s2 + q
    m0 = np.int32(M); m1 = np.int32(-(1 << 30)); m2 = m1; m3 = m1
    for k in range(q):
        m0 = max(m0, Ec[np.uintp(c0 + k)]); Ec[np.uintp(c0 + k)] = m0
        m1 = max(m1, Ec[np.uintp(s1 + k)]); Ec[np.uintp(s1 + k)] = m1
        m2 = max(m2, Ec[np.uintp(s2 + k)]); Ec[np.uintp(s2 + k)] = m2
        m3 = max(m3, Ec[np.uintp(s3 + k)]); Ec[np.uintp(s3 + k)] = m3
    for c in range(s3 + q, c1):
        m3 = max(m3, Ec[np.uintp(c)]); Ec[np.uintp(c)] = m3
    # carries
    k1 = m0; k2 = max(k1, m1); k3 = max(k2, m2)
    for c in range(s1, s2):
        Ec[np.uintp(c)] = max(Ec[np.uintp(c)], k1)
    for c in range(s2, s3):
        Ec[np.uintp(c)] = max(Ec[np.uintp(c)], k2)
    for c in range(s3, c1):
        Ec[np.uintp(c)] = max(Ec[np.uintp(c)], k3)
    for c in range(c0, c1):
        u = np.uintp(c)
        ev = Ec[u] - e32 * np.int32(c)
        Hc[u] = max(H0[u], ev)
        Ec[u] = ev
    return np.int64(max(k3, m3))

def bench(f):
    @numba.njit
    def b(reps, Hc, Ec, H0):
        M = np.int64(0)
        for r in range(reps):
            M += f(Hc, Ec, H0, 1, N, 6, 2, np.int64(-1 << 29) + r)
        return M
    return b
outs = {}
for f in (_run, run32, run3):
    Hc = np.zeros(N + 1, np.int32); Ec = np.zeros(N + 1, np.int32)
    b = bench(f)
    b(10, Hc, Ec, H0)
    t = time.perf_counter(); M = b(200000, Hc, Ec, H0); dt = time.perf_counter() - t
    outs[f.__name__] = (Hc.copy(), Ec.copy(), M)
    print(f.__name__, f"{dt / (200000 * (N - 1)) * 1e9:.3f} ns/cell", M)
for k in outs: print(k, all((outs[k][i] == outs['_run'][i]).all() for i in range(2)))
