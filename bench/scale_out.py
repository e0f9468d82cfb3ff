"""Scale-out of ``s2g align --dask``: one process against Dask clusters of 1, 2, 4 ... workers,
same reads, same run, one table (issue 44).

    s2g bench scale_out --graph MHC.gfa --reads reads.fq [--repeat 5] [--workers 1,2]
        [--runs 2] [--device gpu|cpu] [--out DIR] [-- s2g align options, e.g. --exact]

For each row the command is ``s2g align GRAPH READS --timings [options]`` (a subprocess,
as a user runs it): first one process (once cold, then ``--runs`` times), then for each
cluster size k a Dask scheduler and k workers started apart (GPU: one GPU each,
``CUDA_VISIBLE_DEVICES``; CPU: ``--device cpu``, the cores split), as a cluster a user keeps
running, warmed by one run (graph, index, kernels), then ``--runs`` runs with ``--dask
SCHEDULER_FILE``. Every GAF is compared with the one process's. Rates are s2g's own (its
closing line: from after the client's graph load to the last line written); the process
wall is beside them. Speed-up: a row's median rate over the one process's median rate.
Writes ``DIR/scale_out.json`` and ``DIR/scale_out.md``; each run's stderr (``--timings``) and
the cluster's logs under ``DIR/logs/``.

``--repeat N`` writes the reads N times over (names suffixed ``_1.._N``) into a plain
FASTQ (which the workers read in parts: ``s2g/read_ranges.py``).
"""
from __future__ import annotations

import argparse
import datetime
import gzip
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from bench.dask_scaling import _device_name, sha as _sha   # (the older experiment's)

_CLOSING = re.compile(r"s2g: (\d+) reads, .*?; ([\d.]+) s \(([\d,]+) reads/s\)")


def _reads(src, dst, repeat):
    """``src`` (FASTQ, maybe gzip) ``repeat`` times over into plain ``dst``."""
    opener = gzip.open if open(src, "rb").read(2) == b"\x1f\x8b" else open
    with open(dst, "w") as out:
        for k in range(1, repeat + 1):
            with opener(src, "rt") as fh:
                for i, line in enumerate(fh):
                    if i % 4 == 0 and repeat > 1:
                        name, _, rest = line.rstrip("\n").partition(" ")
                        line = f"{name}_{k}{' ' + rest if rest else ''}\n"
                    out.write(line)


def _align(graph, reads, gaf, args, env=None, timeout=600):
    """One ``s2g align`` (a subprocess): (reads, seconds, reads/s, process wall, stderr)."""
    cmd = [sys.executable, "-m", "s2g", "align", graph, reads, "-o", gaf, "--timings",
           "--no-progress", *args]
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **(env or {})},
                       timeout=timeout)
    wall = time.perf_counter() - t
    m = _CLOSING.search(p.stderr)
    if p.returncode != 0 or m is None:
        raise SystemExit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr[-2000:]}")
    return int(m.group(1)), float(m.group(2)), int(m.group(3).replace(",", "")), wall, p.stderr


class Cluster:
    """A scheduler and ``k`` workers started apart (subprocesses), stopped on exit."""

    def __init__(self, k, device, tmp, cores, log_dir):
        self.k, self.device, self.tmp, self.cores, self.log_dir = k, device, tmp, cores, log_dir
        self.procs = []
        self.file = os.path.join(tmp, f"scheduler_{k}.json")

    def __enter__(self):
        if os.path.exists(self.file):
            os.unlink(self.file)
        log = open(os.path.join(self.log_dir, f"scheduler_{self.k}.log"), "w")
        self.procs.append(subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_scheduler", "--scheduler-file",
             self.file, "--no-dashboard", "--port", "0"], stdout=log, stderr=log))
        for _ in range(120):
            if os.path.exists(self.file) and os.path.getsize(self.file):
                break
            time.sleep(0.5)
        for i in range(self.k):
            env = {**os.environ, "NUMBA_NUM_THREADS": str(max(1, self.cores // self.k)),
                   "CUDA_VISIBLE_DEVICES": str(i) if self.device == "gpu" else ""}
            log = open(os.path.join(self.log_dir, f"worker_{self.k}_{i}.log"), "w")
            self.procs.append(subprocess.Popen(
                [sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file",
                 self.file, "--nthreads", "1", "--nworkers", "1", "--no-dashboard",
                 "--memory-limit", "0"], stdout=log, stderr=log, env=env))
        import distributed
        with distributed.Client(scheduler_file=self.file, timeout=120) as c:
            c.wait_for_workers(self.k, timeout=180)
        return self.file

    def __exit__(self, *exc):
        for p in reversed(self.procs):
            p.terminate()
        for p in self.procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
        return False


def _gpus():
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout
    except OSError:
        return 0
    return sum(1 for x in out.splitlines() if x.startswith("GPU"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--graph", required=True)
    ap.add_argument("--reads", required=True, help="FASTQ (plain or gzip)")
    ap.add_argument("--repeat", type=int, default=1, help="the reads this many times over")
    ap.add_argument("--workers", default=None,
                    help="cluster sizes, e.g. 1,2,4 (default: 1 up to the GPUs here)")
    ap.add_argument("--runs", type=int, default=2, help="timed runs of each row")
    ap.add_argument("--device", choices=["gpu", "cpu"], default=None,
                    help="workers on GPUs or CPU cores (default: gpu where there is one)")
    ap.add_argument("--out", default="bench/results/scale_out")
    ap.add_argument("--timeout", type=int, default=600, help="seconds a run, at most")
    ap.add_argument("align_args", nargs=argparse.REMAINDER,
                    help="after --: more s2g align options (e.g. --exact)")
    a = ap.parse_args(argv)
    extra = [x for x in a.align_args if x != "--"]
    ngpu = _gpus()
    device = a.device or ("gpu" if ngpu else "cpu")
    if device == "cpu":
        extra += ["-v", "simd"]
    sizes = [int(x) for x in a.workers.split(",")] if a.workers else list(range(1, max(1, ngpu) + 1))
    if device == "gpu" and max(sizes) > ngpu:
        raise SystemExit(f"--workers {a.workers}: only {ngpu} GPU(s) here")
    cores = len(os.sched_getaffinity(0))
    logs = os.path.join(a.out, "logs")          # each run's stderr, the cluster's logs
    os.makedirs(logs, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="s2g-scale-")
    try:
        graph = os.path.join(tmp, "g.gfa")
        shutil.copy(a.graph, graph)
        subprocess.run([sys.executable, "-m", "s2g", "index", graph], check=True,
                       capture_output=True)
        reads = os.path.join(tmp, "reads.fq")
        _reads(a.reads, reads, a.repeat)
        ref = os.path.join(tmp, "one.gaf")
        rows = []

        def row(name, workers, runs, env=None):
            out = []
            for r in range(runs):
                gaf = os.path.join(tmp, "run.gaf")
                n, s, rate, wall, err = _align(graph, reads, gaf, runs_args(workers), env,
                                               a.timeout)
                same = _sha(gaf) == ref_sha[0] if ref_sha else None
                out.append({"reads": n, "seconds": s, "reads_per_s": rate, "wall": wall,
                            "identical": same})
                slug = re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_").lower()
                with open(os.path.join(logs, f"{slug}_{r + 1}.log"), "w") as fh:
                    fh.write(err)
                print(f"{name} run {r + 1}: {n:,} reads, {s:.2f} s ({rate:,} reads/s), wall "
                      f"{wall:.2f} s{'' if same is None else ', GAF identical' if same else ', GAF DIFFERS'}",
                      flush=True)
            rows.append({"run": name, "workers": workers, "runs": out})

        def runs_args(workers):
            return extra + (["--dask", sched[0]] if workers else [])

        ref_sha, sched = [], [None]
        n, s, rate, wall, err = _align(graph, reads, ref, extra, None, a.timeout)   # cold
        ref_sha.append(_sha(ref))
        print(f"one process, cold: {n:,} reads, {s:.2f} s", flush=True)
        row("one process", 0, a.runs)
        for k in sizes:
            with Cluster(k, device, tmp, cores, logs) as f:
                sched[0] = f
                _align(graph, reads, os.path.join(tmp, "warm.gaf"), runs_args(k), None,
                       a.timeout)                    # warm the workers: graph, index, kernels
                row(f"Dask, {k} {device.upper()} worker{'s' if k > 1 else ''}", k, a.runs)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    base = statistics.median(r["reads_per_s"] for r in rows[0]["runs"])
    for r in rows:
        r["median_reads_per_s"] = statistics.median(x["reads_per_s"] for x in r["runs"])
        r["speedup"] = r["median_reads_per_s"] / base
        r["identical"] = all(x["identical"] for x in r["runs"])
    res = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "device": _device_name(device), "cores": cores, "graph": os.path.basename(a.graph),
           "reads": rows[0]["runs"][0]["reads"], "repeat": a.repeat, "align_args": extra,
           "command": "s2g bench scale_out " + " ".join(argv if argv is not None else sys.argv[1:]),
           "rows": rows}
    with open(os.path.join(a.out, "scale_out.json"), "w") as fh:
        json.dump(res, fh, indent=2)
    lines = [f"# s2g align --dask scale-out ({res['device']}, {cores} cores)", "",
             f"{res['date']}; {res['graph']}, {res['reads']:,} reads; `s2g align ... "
             f"{' '.join(extra)}`; s2g's own rate (closing line), runs of each row: {a.runs}", "",
             f"`{res['command']}`", "",
             "| run | reads/s (median) | seconds | process wall | speed-up | GAF as one process |",
             "|---|---:|---:|---:|---:|---|"]
    for r in rows:
        secs = [x["seconds"] for x in r["runs"]]
        walls = [x["wall"] for x in r["runs"]]
        lines.append(f"| {r['run']} | {r['median_reads_per_s']:,.0f} | {min(secs):.2f}-"
                     f"{max(secs):.2f} | {min(walls):.2f}-{max(walls):.2f} | "
                     f"{r['speedup']:.2f}x | {'identical' if r['identical'] else 'DIFFERS'} |")
    with open(os.path.join(a.out, "scale_out.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if all(r["identical"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
