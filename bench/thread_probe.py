"""Do small Numba parallel regions slow each other down when several Python threads call
them at once (issue #42: each stage of the GPU pipeline took 2-4x its serial seconds when
the stages ran in threads, session 57's device_contention.sh)? Prints Numba's threading
layer, then the time a call of three kinds of work, called by 1 thread and by 2 and 4
threads at once (each thread its own arrays):

* ``prange``: a parallel region over 100,000 items (like ``window_merge_counts`` on a
  batch's window nodes), all of Numba's threads;
* ``prange/T``: the same with ``numba.set_num_threads(16 // T)`` in each of T threads;
* ``nogil``: a serial nogil Numba function of the same work (GIL released, no pool);
* ``numpy``: a few numpy calls on 100,000 items (the GIL held, mostly).

    python -m bench.thread_probe [calls]
"""
import sys
import threading
import time

import numba
import numpy as np

N = 100_000


@numba.njit(parallel=True, nogil=True, cache=True)
def par(a, out):
    for i in numba.prange(len(a)):
        s = 0
        for k in range(8):
            s += (a[i] >> k) & 1
        out[i] = s


@numba.njit(nogil=True, cache=True)
def ser(a, out):
    for i in range(len(a)):
        s = 0
        for k in range(8):
            s += (a[i] >> k) & 1
        out[i] = s


def nump(a, out):
    b = np.argsort(a[:20000], kind="stable")
    out[:] = np.where(a > 3, a, 0)
    out[b] += 1


def bench(fn, threads, calls, share=False):
    times = []

    def work():
        if share:
            numba.set_num_threads(max(1, numba.config.NUMBA_NUM_THREADS // threads))
        a = np.random.default_rng(0).integers(0, 255, N).astype(np.int32)
        out = np.empty(N, np.int32)
        fn(a, out)
        t0 = time.perf_counter()
        for _ in range(calls):
            fn(a, out)
        times.append((time.perf_counter() - t0) / calls)

    th = [threading.Thread(target=work) for _ in range(threads)]
    t0 = time.perf_counter()
    for t in th:
        t.start()
    for t in th:
        t.join()
    wall = time.perf_counter() - t0
    return 1e6 * float(np.mean(times)), wall


def main():
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    a = np.zeros(N, np.int32)
    out = np.empty(N, np.int32)
    par(a, out)
    print(f"numba {numba.__version__}, threading layer {numba.threading_layer()}, "
          f"{numba.config.NUMBA_NUM_THREADS} threads", flush=True)
    for name, fn, share in (("prange", par, False), ("prange/T", par, True),
                            ("nogil", ser, False), ("numpy", nump, False)):
        row = []
        for T in (1, 2, 4):
            us, wall = bench(fn, T, calls, share)
            row.append(f"{T} thread(s): {us:8.1f} us a call")
        print(f"{name:9s} " + "; ".join(row), flush=True)


if __name__ == "__main__":
    main()
