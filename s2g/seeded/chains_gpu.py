"""Seeds and chains of short reads on the GPU (issue #42): :func:`batch_chains`'s output,
made by one GPU thread a read, or one block for a read of many anchors.

On the GPU machine the seeding thread (:func:`s2g.seeded.chains.batch_chains`: closed
syncmers, index look-ups, anchors sorted, chained, chains taken) cost ~25 us a 150 bp read
on one CPU thread, 5.4-5.8 s of a 1,000,000-read MHC run on the host's busy 16 vCPUs,
the pace of the whole pipeline (session 31). Every read's seeds and chains are its own, so
here each read is done the way :func:`~s2g.seeded.chains.read_chains` does it:

1. :func:`count_body` (a thread a read): the read's closed syncmers (a ring of the last
   ``k - s + 1`` s-mer hashes), each looked up in the index (bucket table, then a binary
   search: the first entry :func:`s2g.index.lookup` finds), counting anchors and repeats
   skipped;
2. the host turns the counts into offsets (one prefix sum), and :func:`chain_body` (a
   thread a read of at most :data:`HEAVY` anchors) looks the syncmers up again, writes
   the read's anchors as packed (column, read position) keys, merge-sorts them
   (bottom-up, in a scratch buffer), chains them (:func:`s2g.seeded.chains.chain`, the
   same float64 operations in the same order), orders them by score (a stable merge
   sort: ties by column, as the CPU's ``np.argsort(-f, kind="mergesort")``) and takes
   chains best first (:func:`~s2g.seeded.chains.take_chains`), weak ones where no chain
   reaches ``min_chain``;
3. :func:`heavy_body` does the same for each read of more anchors with a block of
   :data:`WARP` threads (anchor counts are heavy-tailed: one thread a read waited on the
   slowest reads).

The outputs are the CPU's bit for bit (tests: the CUDA simulator against
:func:`batch_chains` on real and random graphs; ``pytest -m gpu`` on the device). The
chaining penalty's two terms come from host-made tables (``0.5 log2(d + 1)`` up to the
widest skip, ``0.01 k d`` up to the widest insertion), so neither the device's ``log2``
nor a fused multiply-add can change a bit of a score. Reads whose chains need waypoints
(long reads, ``corridor_waypoints``) stay on the CPU.
"""
from __future__ import annotations

import threading

import numba
import numpy as np

from .._numba import loaded
from ..variants import _devpool, _lean
from ..variants._lean import device
from .chains import CHAIN_LOOKBACK, penalty_tables

cuda = None     # numba.cuda once the kernels compile (_lean.compile_module; lean: never)

#: threads a block
BLOCK = 128
#: the ring of s-mer hashes holds the last RING (a power of two) of them: k - s + 1 <= RING
RING = 32
#: anchors a read may have here (the CPU sorts packed keys below this; beyond: argsort)
MAX_READ_ANCHORS = 1 << 20
#: anchors a batch may have here (~53 bytes each on the device: 7 GB); above, the CPU's
MAX_BATCH_ANCHORS = 1 << 27
#: read positions are packed into the low bits of an anchor's key
POS_BITS = 24


@device
def _hash64(key, mask):
    key = (~key + (key << numba.uint64(21))) & mask
    key = key ^ (key >> numba.uint64(24))
    key = ((key + (key << numba.uint64(3))) + (key << numba.uint64(8))) & mask
    key = key ^ (key >> numba.uint64(14))
    key = ((key + (key << numba.uint64(2))) + (key << numba.uint64(4))) & mask
    key = key ^ (key >> numba.uint64(28))
    key = (key + (key << numba.uint64(31))) & mask
    return key


@device
def _lookup(keys, starts, shift, h):
    """:func:`s2g.index.lookup`: the entries ``[lo, hi)`` whose hash is ``h`` (a binary
    search of its bucket where the CPU scans small ones: the same first entry)."""
    bk = numba.int64(h >> numba.uint64(shift))
    x = starts[bk]
    y = starts[bk + 1]
    end = y
    while x < y:
        mid = (x + y) >> 1
        if keys[mid] < h:
            x = mid + 1
        else:
            y = mid
    z = x
    while z < end and keys[z] == h:
        z += 1
    return x, z


@device
def _syncmer_step(b, i, x, ln, ring, k, s, kmask, smask):
    """The rolling k-mer ``x`` (``ln`` bases since the last N) advanced by base ``b`` at
    read position ``i``, the s-mer hash ring updated: (x, ln, whether the k-mer ending at
    ``i`` is a closed syncmer, as :func:`s2g.seeded.seeds.read_syncmers` tests it)."""
    if b > 3:
        return numba.uint64(0), 0, False
    x = ((x << numba.uint64(2)) | numba.uint64(b)) & kmask
    ln += 1
    if ln >= s:
        ring[i & (RING - 1)] = _hash64(x & smask, smask)
    if ln < k:
        return x, ln, False
    f = i - (k - s)
    best = ring[f & (RING - 1)]
    at = 0
    for t in range(1, k - s + 1):
        h = ring[(f + t) & (RING - 1)]
        if h < best:
            best = h
            at = t
    return x, ln, at == 0 or at == k - s


def count_body(codes, offs, keys, starts, shift, k, s, max_occ, n_anc, skipped, n_reads):
    """Thread ``r``: anchors of read ``r`` (``n_anc``) and seeds skipped as repeats."""
    r = cuda.grid(1)
    if r >= n_reads:
        return
    ring = cuda.local.array(RING, numba.uint64)
    q0 = offs[r]
    m = offs[r + 1] - q0
    kmask = (numba.uint64(1) << numba.uint64(2 * k)) - numba.uint64(1)
    smask = (numba.uint64(1) << numba.uint64(2 * s)) - numba.uint64(1)
    x = numba.uint64(0)
    ln = 0
    n = numba.int64(0)
    sk = numba.int64(0)
    for i in range(m):
        x, ln, hit = _syncmer_step(codes[q0 + i], i, x, ln, ring, k, s, kmask, smask)
        if hit:
            lo, hi = _lookup(keys, starts, shift, _hash64(x, kmask))
            if hi > lo:
                if hi - lo > max_occ:
                    sk += 1
                else:
                    n += hi - lo
    n_anc[r] = n
    skipped[r] = sk


@device
def _merge_keys(src, dst, n):
    """Bottom-up merge sort of ``src[:n]`` (int64), ``dst`` scratch; True when the
    sorted keys ended in ``dst``."""
    w = 1
    flip = False
    while w < n:
        lo = 0
        while lo < n:
            mid = min(lo + w, n)
            hi = min(lo + 2 * w, n)
            i, j, o = lo, mid, lo
            while i < mid or j < hi:
                if j >= hi or (i < mid and src[i] <= src[j]):
                    dst[o] = src[i]
                    i += 1
                else:
                    dst[o] = src[j]
                    j += 1
                o += 1
            lo += 2 * w
        src, dst = dst, src
        flip = not flip
        w *= 2
    return flip


@device
def _order_by_score(f, a, b, n):
    """Indices ``0 .. n-1`` by descending ``f``, ties ascending (a stable merge sort of
    ``-f``), into ``a`` or ``b`` (scratch); True when they ended in ``b``."""
    for i in range(n):
        a[i] = i
    w = 1
    flip = False
    while w < n:
        lo = 0
        while lo < n:
            mid = min(lo + w, n)
            hi = min(lo + 2 * w, n)
            i, j, o = lo, mid, lo
            while i < mid or j < hi:
                if j >= hi or (i < mid and f[a[i]] >= f[a[j]]):
                    b[o] = a[i]
                    i += 1
                else:
                    b[o] = a[j]
                    j += 1
                o += 1
            lo += 2 * w
        a, b = b, a
        flip = not flip
        w *= 2
    return flip


@device
def _chain(ac, aq, f, pred, n, k, max_skip, max_ins, half_log2, lin):
    """:func:`s2g.seeded.chains.chain` (the penalty from the tables)."""
    fk = numba.float64(k)
    for i in range(n):
        best = fk
        bp = -1
        j = i - 1
        stop = max(-1, i - 1 - CHAIN_LOOKBACK)
        while j > stop:
            dc = ac[i] - ac[j]
            if dc - aq[i] > max_skip:
                break
            if f[j] + fk <= best:
                j -= 1
                continue
            dq = aq[i] - aq[j]
            if dq <= 0 or dc <= 0:
                j -= 1
                continue
            d = dc - dq
            if d > max_skip or -d > max_ins:
                j -= 1
                continue
            gain = min(dq, dc, numba.int64(k))
            if f[j] + gain <= best:
                j -= 1
                continue
            ad = abs(d)
            pen = 0.0
            if ad > 0:
                pen = half_log2[ad]
                if d < 0:
                    pen = pen + lin[ad]
            sc = f[j] + gain - pen
            if sc > best:
                best = sc
                bp = j
            j -= 1
        f[i] = best
        pred[i] = bp


@device
def _take(f, pred, ac, aq, order, used, n, thr, max_chains, jump, fk, out):
    """:func:`s2g.seeded.chains.take_chains` without waypoints."""
    for i in range(n):
        used[i] = 0
    nc = 0
    for t in range(n):
        i = order[t]
        if used[i] != 0:
            continue
        if f[i] < thr or nc == max_chains:
            break
        j = i
        cnt = 1
        used[i] = 1
        while pred[j] >= 0 and used[pred[j]] == 0:
            j = pred[j]
            used[j] = 1
            cnt += 1
        sc = f[i] - (f[pred[j]] if pred[j] >= 0 else 0.0)
        i0 = i
        j0 = j
        while cnt > 1 and (ac[i] - ac[pred[i]]) - (aq[i] - aq[pred[i]]) > jump:
            i = pred[i]
            cnt -= 1
        while cnt > 1:
            nx = i
            while pred[nx] != j:
                nx = pred[nx]
            if (ac[nx] - ac[j]) - (aq[nx] - aq[j]) <= jump:
                break
            j = nx
            cnt -= 1
        if i != i0 or j != j0:
            sc = f[i] - f[j] + fk
        if sc < thr:
            continue
        out[nc, 0] = aq[j]
        out[nc, 1] = ac[j]
        out[nc, 2] = aq[i]
        out[nc, 3] = ac[i]
        out[nc, 4] = sc
        out[nc, 5] = cnt
        nc += 1
    return nc


def chain_body(codes, offs, keys, kcols, starts, shift, k, s, max_occ, max_chains, min_chain,
               max_window, aoff, kb, kt, ac, aq, f, pred, o1, o2, used, half_log2, lin,
               ch, nch, stats, skipped, heavy, n_reads):
    """Thread ``r``: read ``r``'s chains (:func:`s2g.seeded.chains.read_chains`) into
    ``ch[r]`` (zeros after the last), ``nch[r]``, ``stats[r]`` (seeds skipped, anchors,
    weak; its anchors at ``aoff[r]`` of the scratch arrays). Reads of more than ``heavy``
    anchors are left to :func:`heavy_body`."""
    r = cuda.grid(1)
    if r >= n_reads:
        return
    a0 = aoff[r]
    n = aoff[r + 1] - a0
    if n > heavy:                       # a block of its own (heavy_body)
        return
    for c in range(ch.shape[1]):
        for y in range(6):
            ch[r, c, y] = 0.0
    nch[r] = 0
    stats[r, 0] = skipped[r]
    stats[r, 1] = n
    stats[r, 2] = 0
    if n == 0:
        return
    ring = cuda.local.array(RING, numba.uint64)
    q0 = offs[r]
    m = offs[r + 1] - q0
    kmask = (numba.uint64(1) << numba.uint64(2 * k)) - numba.uint64(1)
    smask = (numba.uint64(1) << numba.uint64(2 * s)) - numba.uint64(1)
    x = numba.uint64(0)
    ln = 0
    p = a0
    for i in range(m):
        x, ln, hit = _syncmer_step(codes[q0 + i], i, x, ln, ring, k, s, kmask, smask)
        if hit:
            lo, hi = _lookup(keys, starts, shift, _hash64(x, kmask))
            if hi > lo and hi - lo <= max_occ:
                for u in range(lo, hi):
                    kb[p] = (numba.int64(kcols[u]) << POS_BITS) + i
                    p += 1
    a1 = a0 + n
    if _merge_keys(kb[a0:a1], kt[a0:a1], n):
        for u in range(a0, a1):
            kb[u] = kt[u]
    pmask = numba.int64((1 << POS_BITS) - 1)
    for u in range(a0, a1):
        ac[u] = kb[u] >> POS_BITS
        aq[u] = kb[u] & pmask
    fr = f[a0:a1]
    pr = pred[a0:a1]
    acr = ac[a0:a1]
    aqr = aq[a0:a1]
    _chain(acr, aqr, fr, pr, n, k, max(max_window, 8 * m), m // 4 + 16, half_log2, lin)
    order = o1[a0:a1]
    if _order_by_score(fr, o1[a0:a1], o2[a0:a1], n):
        order = o2[a0:a1]
    jump = 16 + m // 8
    fk = numba.float64(k)
    out = ch[r]
    ur = used[a0:a1]
    nc = _take(fr, pr, acr, aqr, order, ur, n, min_chain, max_chains, jump, fk, out)
    if nc == 0 and fk < min_chain:
        nc = _take(fr, pr, acr, aqr, order, ur, n, fk, max_chains, jump, fk, out)
        stats[r, 2] = 1
    nch[r] = nc


#: threads of a heavy read's block (:func:`heavy_body`)
WARP = 32
#: reads of more anchors than this are chained by a block each (:func:`heavy_body`): on
#: MHC 150 bp reads have 29 anchors at the median but 1,154 at the 99th percentile, and
#: one thread a read left the kernel waiting ~50 ms on its slowest read (H200, session 32)
HEAVY = 64
_NEG = -1e300


@device
def _rank_pass(src, dst, n, w, t, by_f, f):
    """One pass of a merge sort by ranks: runs of ``w`` merged pairwise into runs of ``2w``,
    each of this thread's elements (``t``, ``t + WARP``, ...) put at its rank (its index in
    its run plus the elements of the other run before it: equal ones of the left run
    first, so the sort is stable). ``by_f``: ``src`` holds indices ordered by descending
    ``f``; else int64 keys ascending."""
    e = t
    while e < n:
        lo = (e // (2 * w)) * (2 * w)
        mid = min(lo + w, n)
        hi = min(lo + 2 * w, n)
        x = src[e]
        if e < mid:              # left run: the right run's elements strictly before x
            a, b = mid, hi
            while a < b:
                c = (a + b) >> 1
                if (f[src[c]] > f[x]) if by_f else (src[c] < x):
                    a = c + 1
                else:
                    b = c
            dst[lo + (e - lo) + (a - mid)] = x
        else:                    # right run: the left run's elements before or equal to x
            a, b = lo, mid
            while a < b:
                c = (a + b) >> 1
                if (f[src[c]] >= f[x]) if by_f else (src[c] <= x):
                    a = c + 1
                else:
                    b = c
            dst[lo + (e - mid) + (a - lo)] = x
        e += WARP


def heavy_body(codes, offs, keys, kcols, starts, shift, k, s, max_occ, max_chains,
               min_chain, max_window, aoff, rows, cursor, kb, kt, ac, aq, f, pred, o1, o2,
               used, half_log2, lin, ch, nch, stats, skipped, n_rows):
    """Block ``b`` (:data:`WARP` threads): read ``rows[b]``'s chains, as :func:`chain_body`
    makes them, with the work shared: the read's positions split among the threads
    (each tests its k-mers for closed syncmers from the bases, looks them up and appends
    the anchors at an atomic cursor, in any order), the anchor keys and then the score
    order sorted by ranks (:func:`_rank_pass`), each anchor's ``CHAIN_LOOKBACK``
    predecessors scored by the threads at once and the best taken by a reduction in
    shared memory (ties: the nearest predecessor, as the CPU's loop keeps the first it
    meets); thread 0 takes the chains."""
    b = cuda.blockIdx.x
    if b >= n_rows:
        return
    t = cuda.threadIdx.x
    r = rows[b]
    a0 = aoff[r]
    n = aoff[r + 1] - a0
    q0 = offs[r]
    m = offs[r + 1] - q0
    sc_sh = cuda.shared.array(WARP, numba.float64)
    j_sh = cuda.shared.array(WARP, numba.int64)
    if t == 0:
        for c in range(ch.shape[1]):
            for y in range(6):
                ch[r, c, y] = 0.0
        nch[r] = 0
        stats[r, 0] = skipped[r]
        stats[r, 1] = n
        stats[r, 2] = 0
    kmask = (numba.uint64(1) << numba.uint64(2 * k)) - numba.uint64(1)
    smask = (numba.uint64(1) << numba.uint64(2 * s)) - numba.uint64(1)
    i = k - 1 + t
    while i < m:
        x = numba.uint64(0)
        ok = True
        for z in range(i - k + 1, i + 1):
            c = codes[q0 + z]
            if c > 3:
                ok = False
                break
            x = (x << numba.uint64(2)) | numba.uint64(c)
        if ok:
            best = numba.uint64(0)
            at = 0
            for u in range(k - s + 1):
                h = _hash64((x >> numba.uint64(2 * (k - s - u))) & smask, smask)
                if u == 0 or h < best:
                    best = h
                    at = u
            if at == 0 or at == k - s:
                lo, hi = _lookup(keys, starts, shift, _hash64(x, kmask))
                if hi > lo and hi - lo <= max_occ:
                    p = a0 + cuda.atomic.add(cursor, b, hi - lo)
                    for u in range(lo, hi):
                        kb[p + u - lo] = (numba.int64(kcols[u]) << POS_BITS) + i
        i += WARP
    cuda.syncthreads()
    a1 = a0 + n
    src = kb[a0:a1]
    dst = kt[a0:a1]
    w = 1
    while w < n:
        _rank_pass(src, dst, n, w, t, False, f)
        cuda.syncthreads()
        src, dst = dst, src
        w *= 2
    pmask = numba.int64((1 << POS_BITS) - 1)
    e = t
    while e < n:
        ac[a0 + e] = src[e] >> POS_BITS
        aq[a0 + e] = src[e] & pmask
        e += WARP
    cuda.syncthreads()
    fr = f[a0:a1]
    pr = pred[a0:a1]
    acr = ac[a0:a1]
    aqr = aq[a0:a1]
    fk = numba.float64(k)
    max_skip = max(max_window, 8 * m)
    max_ins = m // 4 + 16
    for i in range(n):
        bs = _NEG
        bj = numba.int64(-1)
        for y in range(2):
            j = i - 1 - t - WARP * y
            if j < 0 or j < i - CHAIN_LOOKBACK:
                continue
            dc = acr[i] - acr[j]
            if dc - aqr[i] > max_skip:
                continue
            dq = aqr[i] - aqr[j]
            if dq <= 0 or dc <= 0:
                continue
            d = dc - dq
            if d > max_skip or -d > max_ins:
                continue
            gain = min(dq, dc, numba.int64(k))
            ad = abs(d)
            pen = 0.0
            if ad > 0:
                pen = half_log2[ad]
                if d < 0:
                    pen = pen + lin[ad]
            sc = fr[j] + gain - pen
            if sc > bs:                     # y = 0 first: the nearer on ties
                bs = sc
                bj = j
        sc_sh[t] = bs
        j_sh[t] = bj
        cuda.syncthreads()
        st = WARP // 2
        while st > 0:
            if t < st:
                so = sc_sh[t + st]
                jo = j_sh[t + st]
                if so > sc_sh[t] or (so == sc_sh[t] and jo > j_sh[t]):
                    sc_sh[t] = so
                    j_sh[t] = jo
            cuda.syncthreads()
            st //= 2
        if t == 0:
            if sc_sh[0] > fk:
                fr[i] = sc_sh[0]
                pr[i] = j_sh[0]
            else:
                fr[i] = fk
                pr[i] = -1
        cuda.syncthreads()
    src = o1[a0:a1]
    dst = o2[a0:a1]
    e = t
    while e < n:
        src[e] = e
        e += WARP
    cuda.syncthreads()
    w = 1
    while w < n:
        _rank_pass(src, dst, n, w, t, True, fr)
        cuda.syncthreads()
        src, dst = dst, src
        w *= 2
    if t == 0:
        jump = 16 + m // 8
        out = ch[r]
        ur = used[a0:a1]
        nc = _take(fr, pr, acr, aqr, src, ur, n, min_chain, max_chains, jump, fk, out)
        if nc == 0 and fk < min_chain:
            nc = _take(fr, pr, acr, aqr, src, ur, n, fk, max_chains, jump, fk, out)
            stats[r, 2] = 1
        nch[r] = nc


def widen_body(src, dst):
    """``dst[i] = src[i]``, int32 to int64, grid-stride: :func:`device_int64`."""
    i = cuda.grid(1)
    step = cuda.gridsize(1)
    while i < len(src):
        dst[i] = src[i]
        i += step


_I64 = numba.int64[::1]
_I32 = numba.int32[::1]
_U8 = numba.uint8[::1]
_U64 = numba.uint64[::1]
_F64 = numba.float64[::1]
#: the kernels' signatures (tests compile them to PTX with these)
COUNT_SIGNATURE = (_U8, _I64, _U64, _I64, numba.int64, numba.int64, numba.int64, numba.int64,
                   _I64, _I64, numba.int64)
CHAIN_SIGNATURE = (_U8, _I64, _U64, _I64, _I64, numba.int64, numba.int64, numba.int64,
                   numba.int64, numba.int64, numba.float64, numba.int64, _I64, _I64, _I64,
                   _I64, _I64, _F64, _I32, _I32, _I32, _U8, _F64, _F64,
                   numba.float64[:, :, ::1], _I64, numba.int64[:, ::1], _I64, numba.int64,
                   numba.int64)
HEAVY_SIGNATURE = (_U8, _I64, _U64, _I64, _I64, numba.int64, numba.int64, numba.int64,
                   numba.int64, numba.int64, numba.float64, numba.int64, _I64, _I64, _I64,
                   _I64, _I64, _I64, _I64, _F64, _I32, _I32, _I32, _U8, _F64, _F64,
                   numba.float64[:, :, ::1], _I64, numba.int64[:, ::1], _I64, numba.int64)
WIDEN_SIGNATURE = (_I32, _I64)
_KERNELS = {}
_KERNELS_LOCK = threading.Lock()


def kernels():
    """(count, chain, heavy) kernels, compiled once (disk cache; ``widen`` beside them);
    on the lean path their stored cubins (:func:`s2g.variants._lean.kernel`)."""
    with _KERNELS_LOCK:
        if not _KERNELS:
            for name, sig, body in (("count", COUNT_SIGNATURE, count_body),
                                    ("chain", CHAIN_SIGNATURE, chain_body),
                                    ("heavy", HEAVY_SIGNATURE, heavy_body),
                                    ("widen", WIDEN_SIGNATURE, widen_body)):
                _KERNELS[name] = _lean.kernel(f"chains_gpu.{name}", lambda sig=sig, body=body:
                                              loaded(compile_module()(sig, cache=True)(body)))
    return _KERNELS["count"], _KERNELS["chain"], _KERNELS["heavy"]


def compile_module():
    """``cuda.jit``, the device functions made (_lean.compile_module; tests: before PTX)."""
    return _lean.compile_module(globals())


def preload(index=None):
    """Load the kernels (from Numba's disk cache, then into the context: module and
    function handles) in a background thread, while ``s2g align`` reads the index and the
    first reads: the first batch's seeding otherwise waits for it (0.4-0.5 s on the GPU
    machine's host, py-spy); nothing with the ``gpu_seeds`` knob off. ``index``: a future
    of the seed index (:func:`s2g.index.preload_index`), uploaded then (:func:`device_index`)
    while the graph loads (a 1 Gbp graph's 9 GB went up in the first batch's seeding). Errors
    are left for the run itself to raise."""
    from ..config import settings
    if not settings().gpu_seeds:
        return None

    def run():
        try:
            kernels()               # compiled or loaded from disk, and into the context
            if settings().gpu_window_search:
                from . import windows_gpu
                windows_gpu.kernel()        # the windows' searches (knob gpu_window_search)
            ix = index.result() if index is not None else None
            if ix is not None and usable(ix):
                device_index(ix)
        except Exception:                   # noqa: BLE001 - an optimisation only
            pass
    t = threading.Thread(target=run, name="s2g-seed-kernels", daemon=True)
    t.start()
    _PRELOADS.append(t)
    return t


_PRELOADS = []       # preload's threads


def preloading() -> bool:
    """Whether a :func:`preload` thread is still loading the kernels or uploading the index
    (those that ended are forgotten)."""
    _PRELOADS[:] = [t for t in _PRELOADS if t.is_alive()]
    return bool(_PRELOADS)


def device_int64(a):
    """``a`` on the GPU as int64. An int32 array goes up as it is and is widened there
    (:func:`widen_body`): half the bytes over PCIe and no host copy (a 1 Gbp graph's
    columns and bucket starts, 465 M + 268 M entries: widening them on the host took
    1.9 s and uploading them 1.4 s of the first batch, H100 host, py-spy)."""
    gpu = _lean.api()
    a = np.ascontiguousarray(a)
    if a.dtype != np.int32:
        return gpu.to_device(np.ascontiguousarray(a, np.int64))
    out = gpu.device_array(len(a), np.int64)
    if len(a):
        src = gpu.to_device(a)
        kernels()
        _KERNELS["widen"][min(-(-len(a) // BLOCK), 4096), BLOCK](src, out)
        gpu.synchronize()                   # done before src is freed and out is used
    return out


class DeviceIndex:
    """An index's arrays on the GPU (once per index object: :func:`device_index`), with
    the penalty tables for the widest reads seen so far."""

    def __init__(self, index):
        starts, shift = index.buckets
        self.k, self.s, self.shift = int(index.k), int(index.s), int(shift)
        self.keys = _lean.api().to_device(np.ascontiguousarray(index.keys, np.uint64))
        self.cols = device_int64(index.cols)
        self.starts = device_int64(starts)
        _devpool.shared(self.keys, self.cols, self.starts)    # seeding threads share it
        self._tables = (-1, -1, None, None)

    def tables(self, max_skip, max_ins):
        s0, i0, half, lin = self._tables
        if max_skip > s0 or max_ins > i0:
            s0, i0 = max(max_skip, s0), max(max_ins, i0)
            h, li = penalty_tables(self.k, s0, i0)
            gpu = _lean.api()
            half, lin = _devpool.shared(gpu.to_device(h), gpu.to_device(li))
            self._tables = (s0, i0, half, lin)
        return half, lin


_UPLOAD_LOCK = threading.Lock()


def device_index(index) -> DeviceIndex:
    """``index``'s :class:`DeviceIndex`, uploaded once per index object (a call while
    :func:`preload`'s thread uploads it waits for that upload)."""
    with _UPLOAD_LOCK:
        dix = index.__dict__.get("_s2g_device")
        if dix is None:
            dix = index.__dict__["_s2g_device"] = DeviceIndex(index)
    return dix


def usable(index) -> bool:
    """Whether the kernels take this index (the syncmer ring holds k - s + 1 hashes)."""
    return 0 < int(index.k) - int(index.s) + 1 <= RING and int(index.k) <= 32


def batch_chains(dix, codes, offs, max_occ, max_chains, min_chain, max_window, dp=None,
                 times=None, heavy=HEAVY, dev=None):
    """:func:`s2g.seeded.chains.batch_chains` (``n_way`` 0) on the GPU for the reads
    ``codes[offs[r]:offs[r + 1]]``, with the index ``dix`` (:class:`DeviceIndex`); ``dp``:
    the :class:`~s2g.variants._devpool.DevicePool` (default: this thread's). None when a
    read has :data:`MAX_READ_ANCHORS` anchors or more, or the batch more than
    :data:`MAX_BATCH_ANCHORS` (the caller runs the CPU's).
    ``times``: a dict that gets each kernel's milliseconds added (CUDA events;
    "count", "chain": both chaining kernels) and the anchors ("anchors"). Reads of more
    than ``heavy`` anchors are chained by a block each (:func:`heavy_body`). ``dev``: a dict
    that gets the chains and counts as device arrays ("ch", "nch": this thread's pool's,
    valid until its next call)."""
    dp = _devpool.pool() if dp is None else dp
    offs = np.ascontiguousarray(offs, np.int64)
    n = len(offs) - 1
    ch = np.zeros((n, max_chains, 6), np.float64)
    nch = np.zeros(n, np.int64)
    stats = np.zeros((n, 3), np.int64)
    way = np.zeros((n, max_chains, 0, 2), np.int64)
    nway = np.zeros((n, max_chains), np.int64)
    if n == 0:
        return ch, nch, stats, way, nway
    lens = np.diff(offs)
    m = int(lens.max())
    if m >= (1 << POS_BITS):
        return None
    count, chain, heavy_k = kernels()
    d_codes = dp.put("seed.codes", np.ascontiguousarray(codes, np.uint8))
    d_offs = dp.put("seed.offs", offs)
    d_nanc = dp.empty("seed.nanc", n, np.int64)
    d_skip = dp.empty("seed.skip", n, np.int64)
    blocks = -(-n // BLOCK)
    k, s = dix.k, dix.s
    ev = _devpool.events("chains", 4) if times is not None else None
    if ev:
        ev[0].record()
    count[blocks, BLOCK](d_codes, d_offs, dix.keys, dix.starts, dix.shift, k, s,
                         int(max_occ), d_nanc, d_skip, n)
    if ev:
        ev[1].record()
    _devpool.sync_first()
    nanc = d_nanc.copy_to_host()
    if nanc.max() >= MAX_READ_ANCHORS or nanc.sum() > MAX_BATCH_ANCHORS:
        return None
    aoff = np.zeros(n + 1, np.int64)
    np.cumsum(nanc, out=aoff[1:])
    A = max(int(aoff[-1]), 1)
    half, lin = dix.tables(max(int(max_window), 8 * m), m // 4 + 16)
    d_ch = dp.empty("seed.ch", ch.size, np.float64).reshape(ch.shape)
    d_nch = dp.empty("seed.nch", n, np.int64)
    d_stats = dp.empty("seed.stats", 3 * n, np.int64).reshape((n, 3))
    d_aoff = dp.put("seed.aoff", aoff)
    kb, kt, ac, aq = (dp.empty(f"seed.{x}", A, np.int64) for x in ("kb", "kt", "ac", "aq"))
    f = dp.empty("seed.f", A, np.float64)
    pred, o1, o2 = (dp.empty(f"seed.{x}", A, np.int32) for x in ("pred", "o1", "o2"))
    used = dp.empty("seed.used", A, np.uint8)
    if ev:
        ev[2].record()
    chain[blocks, BLOCK](d_codes, d_offs, dix.keys, dix.cols, dix.starts, dix.shift, k, s,
                         int(max_occ), int(max_chains), float(min_chain), int(max_window),
                         d_aoff, kb, kt, ac, aq, f, pred, o1, o2, used, half, lin, d_ch,
                         d_nch, d_stats, d_skip, int(heavy), n)
    rows = np.nonzero(nanc > heavy)[0].astype(np.int64)
    if len(rows):
        heavy_k[len(rows), WARP](
            d_codes, d_offs, dix.keys, dix.cols, dix.starts, dix.shift, k, s, int(max_occ),
            int(max_chains), float(min_chain), int(max_window), d_aoff,
            dp.put("seed.rows", rows), dp.put("seed.cursor", np.zeros(len(rows), np.int64)),
            kb, kt, ac, aq, f, pred, o1, o2, used, half, lin, d_ch, d_nch, d_stats, d_skip,
            len(rows))
    if ev:
        ev[3].record()
        ev[3].synchronize()
        for name, a, b in (("count", 0, 1), ("chain", 2, 3)):
            times[name] = times.get(name, 0.0) + max(ev[a].elapsed_time(ev[b]), 0.0)
        times["anchors"] = times.get("anchors", 0) + int(aoff[-1])
    else:
        _devpool.sync_first()
    d_ch.copy_to_host(ch)
    d_nch.copy_to_host(nch)
    if dev is not None:
        dev["ch"], dev["nch"] = d_ch, d_nch
    d_stats.copy_to_host(stats)
    return ch, nch, stats, way, nway


assert CHAIN_LOOKBACK <= 2 * WARP          # heavy_body: two predecessors a thread

__all__ = ["BLOCK", "DeviceIndex", "batch_chains", "count_body", "chain_body", "heavy_body",
           "usable", "penalty_tables", "preload", "COUNT_SIGNATURE", "CHAIN_SIGNATURE",
           "HEAVY_SIGNATURE", "kernels"]
