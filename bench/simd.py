"""The simd CPU kernel beside V0 and cpu: GCUPS per core at 1, 2, ... and all threads,
kernel only and end to end with traceback.

    python3 -m bench.simd --out bench/results/<machine> [--reads 512] [--threads 1,2,all]

Workload: a simulated SNP graph (s2g.simulate, --total-bases, node length 50, branching
2, both strands in the DP) and --reads reads of --read-len bp (or uniform in
[--read-len, --read-len-max]; 1% substitutions, half
reverse strand), fixed seeds. Cells = graph bases in the DP x read length, summed over
reads; GCUPS = cells / kernel seconds / 1e9; GCUPS per core = GCUPS / threads.

Protocol: every kernel runs once untimed first (JIT compile and cache load); then
each (variant, mode, threads) point is timed --reps times and the best time is kept
(the 2-core dev VM is shared, so the best is the least disturbed). Before any timing
the simd results (score, end row, end column) are compared with V0 on a subsample
(--v0-reads) and with cpu (V0's kernel on every core) on every read; any difference
stops the run. V0 (sequential) and cpu are timed on the subsample, simd on all reads.

End to end (``*_e2e`` records, GCUPS over the same cells): kernel, traceback and GAF
text in memory (no parsing, no writing). ``v0_e2e`` is V0 with the scalar traceback
(``s2g.trace.scalar.traceback_read`` per read: the CPU traceback before the lane kernel,
``LaneLimits(cells=0)``); ``cpu_e2e`` and ``simd_e2e`` use ``traceback_batch`` as ``s2g
align`` does (reads in lanes). The GAF text of simd_e2e must equal v0_e2e's on the
subsample. ``e2e_over_kernel``: simd_e2e GCUPS / simd GCUPS at the same thread count.

With --windows the seeded workload is timed too: per read 3 windows of 200-600
columns (one ending 100 columns past the read's own end cell, two at random), simd's
``align_windows`` against the scalar reference ``s2g.window.align_windows_ref`` (one
task per thread), results compared before timing. End to end (``window_ref_e2e``,
``simd_windows_e2e``): the windows, each read's best window traced from its start
(``col_lo``, as seeded alignment does), GAF text; the reference with the scalar
traceback, simd with the lanes; GAF text compared.

Writes ``simd.json`` (or --name) under --out: meta (host, CPU, cores, versions, git
commit, date, command, load average) and one record per point.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time

import numba
import numpy as np

import s2g
from s2g import trace as tb
from s2g.gaf import gaf_text
from s2g.reads import ReadBatch
from s2g.result import BatchResult
from s2g.scoring import Mode
from s2g.simulate import sample_reads, snp_graph
from s2g.variants import cpu_parallel, simd, v0_cpu


def parse_args(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m bench.simd", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--out", required=True, help="directory for the JSON")
    ap.add_argument("--name", default="simd.json", help="file name under --out")
    ap.add_argument("--total-bases", type=int, default=100_000, help="simulated graph size (one strand)")
    ap.add_argument("--reads", type=int, default=512,
                    help="reads (multiples of 128 fill the int16 lane groups)")
    ap.add_argument("--read-len", type=int, default=150)
    ap.add_argument("--read-len-max", type=int, default=None,
                    help="mixed lengths: each read's length uniform in [--read-len, this] "
                         "(the kernel's groups are length-sorted: a test of load balance)")
    ap.add_argument("--v0-reads", type=int, default=16, help="V0/cpu subsample (checked and timed)")
    ap.add_argument("--threads", default="1,2,all", help="comma list; 'all' = every core")
    ap.add_argument("--modes", default="local,semiglobal", help="comma list of modes")
    ap.add_argument("--reps", type=int, default=3, help="timed repetitions per point (best kept)")
    ap.add_argument("--lanes", type=int, default=None,
                    help="tasks per lane group, at most simd.LANES of the type (default: "
                         "simd.LANES; fewer leave lanes idle)")
    ap.add_argument("--windows", action="store_true", help="also time seeded-style windows")
    ap.add_argument("--host-scaling", action="store_true",
                    help="also time the host's own ceiling: a fixed int16 vector loop and a "
                         "scalar chain per thread (L1-resident, no shared data) at each "
                         "thread count; per-core efficiency below 1 there is the machine "
                         "(turbo, shared cores), not s2g")
    ap.add_argument("--seed", type=int, default=11)
    return ap.parse_args(argv)


def thread_counts(spec):
    out = []
    for t in spec.split(","):
        n = numba.config.NUMBA_NUM_THREADS if t.strip() == "all" else int(t)
        if 1 <= n <= numba.config.NUMBA_NUM_THREADS and n not in out:
            out.append(n)
    return out


@numba.njit(parallel=True, nogil=True, cache=True)
def _host_probe(n_threads, iters, vector, out):
    """Thread t does the same fixed work (``iters`` steps) on its own data: int16
    max/add over 128 lanes (the shape of simd's column loop, L1-resident), or a scalar
    xorshift chain. Weak scaling: the time at n threads over the time at 1 is the
    host's per-core slowdown under load."""
    for t in numba.prange(n_threads):
        if vector:
            a = np.zeros(128, np.int16)
            b = np.full(128, np.int16(t % 7 + 1))
            c = np.full(128, np.int16(-3))
            for _ in range(iters):
                for l in range(128):
                    a[l] = max(np.int16(a[l] + b[l]), np.int16(c[l] - a[l]))
            out[t] = a[t % 128]
        else:
            x = np.uint64(t + 1)                 # xorshift64: a serial chain LLVM
            for _ in range(iters):               # cannot fold (a multiply-add chain it can)
                x ^= x << np.uint64(13)
                x ^= x >> np.uint64(7)
                x ^= x << np.uint64(17)
            out[t] = np.int64(x >> np.uint64(40))


def host_scaling(threads, reps, record):
    """Weak-scaling records ``host_vector`` / ``host_scalar``: ``eff`` = time at the
    fewest threads (1 unless --threads leaves it out) / time at ``threads``, the same work
    per thread (1.0 = no slowdown)."""
    threads = sorted(threads)
    out = np.zeros(max(threads), np.int64)
    for vector, iters in ((True, 30_000_000), (False, 100_000_000)):
        name = "host_vector" if vector else "host_scalar"
        _host_probe(1, 10, vector, out)                 # compile / cache load
        base = None
        for th in threads:
            numba.set_num_threads(th)
            t, ts = best_time(lambda: _host_probe(th, iters, vector, out), reps)
            base = t if base is None else base
            # "cells": lane updates (vector) or chain steps (scalar), for the JSON only
            record(variant=name, mode="-", threads=th, n_reads=0,
                   cells=iters * th * (128 if vector else 1), kernel_s=t, times=ts,
                   eff=base / t)
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)


def best_time(fn, reps):
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times), times


def same(a, b, what):
    for k, (x, y) in enumerate(zip(a, b)):
        if not np.array_equal(x, y):
            bad = np.nonzero(x != y)[0][:5]
            raise SystemExit(f"bench.simd: {what}: {('score', 'end_i', 'end_j')[k]} differs at {bad}")


def triple(res):
    return res.score, res.end_i, res.end_j


def scalar_traceback(graph, reads, sc, mode, res, col_lo=None):
    """traceback_batch with every read in traceback_read (the pre-lane CPU traceback)."""
    return tb.traceback_batch(graph, reads, sc, mode, res, col_lo=col_lo,
                              limits=tb.LaneLimits(cells=0))


def physical_cores():
    """Distinct (package, core) pairs among this process's CPUs (Linux sysfs), or None:
    16 vCPUs may be 8 cores with two hardware threads each, which share the vector units."""
    seen = set()
    try:
        for c in os.sched_getaffinity(0):
            d = f"/sys/devices/system/cpu/cpu{c}/topology/"
            with open(d + "physical_package_id") as a, open(d + "core_id") as b:
                seen.add((a.read().strip(), b.read().strip()))
    except (OSError, AttributeError):
        return None
    return len(seen) or None


def meta(args, argv):
    from bench.harness import cpu_name, git_commit
    commit, cpu = git_commit(), cpu_name()
    import llvmlite.binding as llvm
    return {"host": platform.node(), "cpu": cpu, "llvm_cpu": llvm.get_host_cpu_name(),
            "cores": os.cpu_count(), "physical_cores": physical_cores(),
            "numba_threads": numba.config.NUMBA_NUM_THREADS,
            "python": platform.python_version(), "numba": numba.__version__,
            "numpy": np.__version__, "commit": commit, "date": time.strftime("%Y-%m-%d %H:%M"),
            "load_average_at_start": os.getloadavg()[0],
            "command": "python3 -m bench.simd " + " ".join(argv)}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    info = meta(args, argv)
    tmp = tempfile.mkdtemp(prefix="bench-simd-")
    sim, ref = snp_graph(args.total_bases, 50, 2, args.seed)
    sim.write_gfa(os.path.join(tmp, "g.gfa"), ref)
    graph = s2g.load_graph(os.path.join(tmp, "g.gfa"))
    if args.read_len_max and args.read_len_max > args.read_len:
        lens = np.random.default_rng(args.seed + 2).integers(args.read_len,
                                                              args.read_len_max + 1, args.reads)
        recs = [sample_reads(sim, 1, int(n), 0.01, 0.5, args.seed + 1 + k)[0]
                for k, n in enumerate(lens)]
        recs = [(f"read{k}",) + tuple(r[1:]) for k, r in enumerate(recs)]
    else:
        recs = sample_reads(sim, args.reads, args.read_len, 0.01, 0.5, args.seed + 1)
    reads = ReadBatch.from_sequences([r[0] for r in recs], [r[1] for r in recs])
    sub = reads.subset(range(min(args.v0_reads, reads.n_reads)))
    sc = s2g.Scoring()
    threads = thread_counts(args.threads)
    out = []

    def record(**kw):
        kw.update(graph_bases=graph.n_bases, read_len=args.read_len,
                  read_len_max=args.read_len_max)
        kw["gcups"] = kw["cells"] / kw["kernel_s"] / 1e9
        kw["gcups_per_core"] = kw["gcups"] / kw["threads"]
        out.append(kw)
        print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in kw.items()
                          if k != "times"}), flush=True)

    for mode in [Mode.parse(m) for m in args.modes.split(",")]:
        run_simd = lambda batch: simd.align_batch(graph, batch, sc, mode, lanes=args.lanes)  # noqa: E731

        def v0_e2e(batch):
            res = v0_cpu.align_batch(graph, batch, sc, mode)
            return gaf_text(graph, scalar_traceback(graph, batch, sc, mode, res))

        def cpu_e2e(batch):
            res = cpu_parallel.align_batch(graph, batch, sc, mode)
            return gaf_text(graph, tb.traceback_batch(graph, batch, sc, mode, res))

        def simd_e2e(batch):
            res = simd.align_batch(graph, batch, sc, mode, lanes=args.lanes)
            return gaf_text(graph, tb.traceback_batch(graph, batch, sc, mode, res))
        # warm-up (compile or cache load) and the exactness checks, all before timing
        r_v0 = v0_cpu.align_batch(graph, sub, sc, mode)
        same(triple(r_v0), triple(run_simd(sub)), f"simd vs v0 ({mode.name}, {sub.n_reads} reads)")
        same(triple(cpu_parallel.align_batch(graph, reads, sc, mode)), triple(run_simd(reads)),
             f"simd vs cpu ({mode.name}, {reads.n_reads} reads)")
        if v0_e2e(sub) != simd_e2e(sub) or cpu_e2e(sub) != simd_e2e(sub):
            raise SystemExit(f"bench.simd: GAF of simd/cpu differs from v0 ({mode.name})")
        simd_e2e(reads)
        cells_sub = graph.n_bases * sub.total_bases
        cells = graph.n_bases * reads.total_bases
        m = mode.name.lower()
        t, ts = best_time(lambda: v0_cpu.align_batch(graph, sub, sc, mode), args.reps)
        record(variant="v0", mode=m, threads=1, n_reads=sub.n_reads, cells=cells_sub, kernel_s=t,
               times=ts)
        v0_gcups = out[-1]["gcups"]
        t, ts = best_time(lambda: v0_e2e(sub), args.reps)
        record(variant="v0_e2e", mode=m, threads=1, n_reads=sub.n_reads, cells=cells_sub,
               kernel_s=t, times=ts)
        v0_e2e_gcups = out[-1]["gcups"]
        for th in threads:
            numba.set_num_threads(th)
            t, ts = best_time(lambda: cpu_parallel.align_batch(graph, sub, sc, mode), args.reps)
            record(variant="cpu", mode=m, threads=th, n_reads=sub.n_reads, cells=cells_sub,
                   kernel_s=t, times=ts)
            t, ts = best_time(lambda: cpu_e2e(sub), args.reps)
            record(variant="cpu_e2e", mode=m, threads=th, n_reads=sub.n_reads, cells=cells_sub,
                   kernel_s=t, times=ts)
            t, ts = best_time(lambda: run_simd(reads), args.reps)
            record(variant="simd", mode=m, threads=th, n_reads=reads.n_reads, cells=cells,
                   kernel_s=t, times=ts, lanes=args.lanes or simd.LANES[np.int16],
                   x_v0_per_core=cells / t / 1e9 / th / v0_gcups)
            kernel_gcups = out[-1]["gcups"]
            t, ts = best_time(lambda: simd_e2e(reads), args.reps)
            record(variant="simd_e2e", mode=m, threads=th, n_reads=reads.n_reads, cells=cells,
                   kernel_s=t, times=ts, x_v0_per_core=cells / t / 1e9 / th / v0_e2e_gcups,
                   e2e_over_kernel=cells / t / 1e9 / kernel_gcups)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        if args.windows:
            out.extend(windows(graph, reads, sc, mode, threads, args, record))
    if args.host_scaling:
        host_scaling(threads, args.reps, record)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, args.name)
    with open(path, "w") as fh:
        json.dump({"meta": info, "records": out}, fh, indent=1)
    print(table([r for r in out if not r["variant"].startswith("host_")]))
    for r in out:
        if r["variant"].startswith("host_"):
            print(f"{r['variant']:>12} t={r['threads']:<3} {r['kernel_s']:.3f} s, per-core "
                  f"efficiency {r['eff']:.2f} (same work per thread; 1.00 = none lost)")
    print(f"CPUs: {info['cores']} logical, {info['physical_cores'] or '?'} physical cores "
          f"(per-core rates are per thread)")
    print(f"wrote {path}")
    return 0


def table(records):
    """GCUPS per core, kernel and end to end, one row per (mode, threads)."""
    by = {(r["mode"], r["variant"], r["threads"]): r["gcups_per_core"] for r in records}
    cols = ["v0", "v0_e2e", "cpu", "cpu_e2e", "simd", "simd_e2e", "window_ref",
            "window_ref_e2e", "simd_windows", "simd_windows_e2e"]
    cols = [c for c in cols if any(k[1] == c for k in by)]
    rows = sorted({(k[0], k[2]) for k in by}, key=lambda x: (x[0], x[1]))
    lines = ["GCUPS per core  " + " ".join(f"{c:>16}" for c in cols)]
    for mode, th in rows:
        cells = [by.get((mode, c, th), by.get((mode, c, 1)) if c.startswith("v0") else None)
                 for c in cols]
        lines.append(f"{mode:>10} t={th:<3}" + " ".join(
            f"{'-':>16}" if v is None else f"{v:16.3f}" for v in cells))
    return "\n".join(lines)


def windows(graph, reads, sc, mode, threads, args, record):
    from s2g.window import align_windows_ref
    full = simd.align_batch(graph, reads, sc, mode)
    rng = np.random.default_rng(args.seed + 2)
    n = reads.n_reads
    task_read = np.repeat(np.arange(n), 3)
    width = rng.integers(200, 600, 3 * n)
    task_lo = rng.integers(0, graph.n_bases, 3 * n)
    own = np.arange(0, 3 * n, 3)
    task_lo[own] = np.maximum(full.end_j + 100 - width[own], 0)
    task_hi = np.minimum(task_lo + width, graph.n_bases)
    cells = int(((task_hi - task_lo) * reads.lengths()[task_read]).sum())
    wargs = (graph, reads.codes_flat, reads.offsets, task_read, task_lo, task_hi, sc, mode)
    same(align_windows_ref(*wargs), simd.align_windows(*wargs, lanes=args.lanes),
         f"windows vs reference ({mode.name})")

    def e2e(kernel, trace):
        """Windows, each read's best one (the first of equal scores) traced inside it."""
        s, i, j = (x.reshape(n, 3) for x in kernel(*wargs))
        best = s.argmax(axis=1)
        rows = np.arange(n)
        res = BatchResult(reads.names, reads.lengths(), s[rows, best], i[rows, best],
                          j[rows, best])
        col_lo = task_lo.reshape(n, 3)[rows, best]
        return gaf_text(graph, trace(graph, reads, sc, mode, res, col_lo=col_lo))

    runs = (("window_ref", align_windows_ref, None),
            ("simd_windows", simd.align_windows, None),
            ("window_ref_e2e", align_windows_ref, scalar_traceback),
            ("simd_windows_e2e", simd.align_windows, tb.traceback_batch))
    if e2e(align_windows_ref, scalar_traceback) != e2e(simd.align_windows, tb.traceback_batch):
        raise SystemExit(f"bench.simd: windows GAF differs from the reference ({mode.name})")
    for th in threads:
        numba.set_num_threads(th)
        for name, fn, trace in runs:
            call = (lambda: fn(*wargs)) if trace is None else (lambda: e2e(fn, trace))
            t, ts = best_time(call, args.reps)
            record(variant=name, mode=mode.name.lower(), threads=th, n_reads=n,
                   n_tasks=len(task_read), cells=cells, kernel_s=t, times=ts)
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    return []


if __name__ == "__main__":
    sys.exit(main())
