"""The simd CPU kernel beside V0 and cpu: GCUPS per core at 1, 2, ... and all threads.

    python3 -m bench.simd --out bench/results/<machine> [--reads 512] [--threads 1,2,all]

Workload: a simulated SNP graph (s2g.simulate, --total-bases, node length 50, branching
2, both strands in the DP) and --reads reads of --read-len bp (1% substitutions, half
reverse strand), fixed seeds. Cells = graph bases in the DP x read length, summed over
reads; GCUPS = cells / kernel seconds / 1e9; GCUPS per core = GCUPS / threads.

Protocol: every kernel runs once untimed first (JIT compile and cache load); then
each (variant, mode, threads) point is timed --reps times and the best time is kept
(the 2-core dev VM is shared, so the best is the least disturbed). Before any timing
the simd results (score, end row, end column) are compared with V0 on a subsample
(--v0-reads) and with cpu (V0's kernel on every core) on every read; any difference
stops the run. V0 (sequential) and cpu are timed on the subsample, simd on all reads.

With --windows the seeded workload is timed too: per read 3 windows of 200-600
columns (one ending 100 columns past the read's own end cell, two at random), simd's
``align_windows`` against the scalar reference ``s2g.window.align_windows_ref`` (one
task per thread), results compared before timing.

Writes ``simd.json`` (or --name) under --out: meta (host, CPU, cores, versions, git
commit, date, command, load average) and one record per point.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numba
import numpy as np

import s2g
from s2g.reads import ReadBatch
from s2g.scoring import Mode
from s2g.simulate import sample_reads, snp_graph
from s2g.variants import cpu_parallel, simd, v0_cpu


def parse_args(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m bench.simd", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--out", required=True, help="directory for the JSON")
    ap.add_argument("--name", default="simd.json", help="file name under --out")
    ap.add_argument("--total-bases", type=int, default=100_000, help="simulated graph size (one strand)")
    ap.add_argument("--reads", type=int, default=512, help="reads (256-1024 fill 64-lane groups)")
    ap.add_argument("--read-len", type=int, default=150)
    ap.add_argument("--v0-reads", type=int, default=16, help="V0/cpu subsample (checked and timed)")
    ap.add_argument("--threads", default="1,2,all", help="comma list; 'all' = every core")
    ap.add_argument("--modes", default="local,semiglobal", help="comma list of modes")
    ap.add_argument("--reps", type=int, default=3, help="timed repetitions per point (best kept)")
    ap.add_argument("--lanes", type=int, default=None, help="override lanes per group (default: simd.LANES)")
    ap.add_argument("--windows", action="store_true", help="also time seeded-style windows")
    ap.add_argument("--seed", type=int, default=11)
    return ap.parse_args(argv)


def thread_counts(spec):
    out = []
    for t in spec.split(","):
        n = numba.config.NUMBA_NUM_THREADS if t.strip() == "all" else int(t)
        if 1 <= n <= numba.config.NUMBA_NUM_THREADS and n not in out:
            out.append(n)
    return out


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


def meta(args, argv):
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    cpu = platform.processor()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import llvmlite.binding as llvm
    return {"host": platform.node(), "cpu": cpu, "llvm_cpu": llvm.get_host_cpu_name(),
            "cores": os.cpu_count(), "numba_threads": numba.config.NUMBA_NUM_THREADS,
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
    recs = sample_reads(sim, args.reads, args.read_len, 0.01, 0.5, args.seed + 1)
    reads = ReadBatch.from_sequences([r[0] for r in recs], [r[1] for r in recs])
    sub = reads.subset(range(min(args.v0_reads, reads.n_reads)))
    sc = s2g.Scoring()
    threads = thread_counts(args.threads)
    out = []

    def record(**kw):
        kw.update(graph_bases=graph.n_bases, read_len=args.read_len)
        kw["gcups"] = kw["cells"] / kw["kernel_s"] / 1e9
        kw["gcups_per_core"] = kw["gcups"] / kw["threads"]
        out.append(kw)
        print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in kw.items()
                          if k != "times"}), flush=True)

    for mode in [Mode.parse(m) for m in args.modes.split(",")]:
        run_simd = lambda batch: simd.align_batch(graph, batch, sc, mode, lanes=args.lanes)  # noqa: E731
        # warm-up (compile or cache load) and the exactness checks, all before timing
        r_v0 = v0_cpu.align_batch(graph, sub, sc, mode)
        same(triple(r_v0), triple(run_simd(sub)), f"simd vs v0 ({mode.name}, {sub.n_reads} reads)")
        same(triple(cpu_parallel.align_batch(graph, reads, sc, mode)), triple(run_simd(reads)),
             f"simd vs cpu ({mode.name}, {reads.n_reads} reads)")
        cells_sub = graph.n_bases * sub.total_bases
        cells = graph.n_bases * reads.total_bases
        t, ts = best_time(lambda: v0_cpu.align_batch(graph, sub, sc, mode), args.reps)
        record(variant="v0", mode=mode.name.lower(), threads=1, n_reads=sub.n_reads,
               cells=cells_sub, kernel_s=t, times=ts)
        v0_gcups = out[-1]["gcups"]
        for th in threads:
            numba.set_num_threads(th)
            t, ts = best_time(lambda: cpu_parallel.align_batch(graph, sub, sc, mode), args.reps)
            record(variant="cpu", mode=mode.name.lower(), threads=th, n_reads=sub.n_reads,
                   cells=cells_sub, kernel_s=t, times=ts)
            t, ts = best_time(lambda: run_simd(reads), args.reps)
            record(variant="simd", mode=mode.name.lower(), threads=th, n_reads=reads.n_reads,
                   cells=cells, kernel_s=t, times=ts, lanes=args.lanes or simd.LANES[np.int16],
                   x_v0_per_core=cells / t / 1e9 / th / v0_gcups)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        if args.windows:
            out.extend(windows(graph, reads, sc, mode, threads, args, record))
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, args.name)
    with open(path, "w") as fh:
        json.dump({"meta": info, "records": out}, fh, indent=1)
    print(f"wrote {path}")
    return 0


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
    for th in threads:
        numba.set_num_threads(th)
        for name, fn in (("window_ref", align_windows_ref), ("simd_windows", simd.align_windows)):
            t, ts = best_time(lambda: fn(*wargs), args.reps)
            record(variant=name, mode=mode.name.lower(), threads=th, n_reads=n,
                   n_tasks=len(task_read), cells=cells, kernel_s=t, times=ts)
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    return []


if __name__ == "__main__":
    sys.exit(main())
