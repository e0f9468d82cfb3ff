"""Scaling of ``s2g align --dask local`` from 1 to N workers (issue 6).

    python bench/dask_scaling.py --device gpu --workers 1,2 --out bench/results/DEV
    python bench/dask_scaling.py --device cpu --workers 1,2 --threads 1 --out bench/results/DEV

Workload: a simulated SNP graph (``--total-bases``, node length 50, branching 2, both
strands, seed 0) and 150 bp reads simulated from it (2,000 distinct reads, repeated
with new names up to ``--reads``; ``--seconds`` instead sizes the input so that one
worker needs about that long, from a warm single-process measurement).

For each worker count: a fresh local cluster (GPU: one worker per GPU, each with its
own CUDA_VISIBLE_DEVICES; CPU: worker processes with ``--threads`` Numba threads
each), a warm-up chunk pinned to every worker (graph load and JIT excluded, as a
long run amortises them), then the timed run of the whole file through
:func:`s2g.distributed.align_file` (client reads, workers align, client writes the
GAF in input order). Every output is compared byte for byte with the single-process
output (``s2g.align`` + ``write_gaf`` over the same batches). Efficiency =
rate(N) / (N x rate(1)). Writes OUT/dask_scaling_<device>.json and .md.
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def sha(path):
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for b in iter(lambda: fh.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def make_reads(src, dst, n):
    """``n`` FASTQ records: the records of ``src`` repeated, renamed ``<name>_<copy>``."""
    recs = []
    with open(src) as fh:
        lines = fh.read().splitlines()
    for i in range(0, len(lines), 4):
        recs.append(lines[i:i + 4])
    with open(dst, "w") as out:
        for k in range(n):
            r = recs[k % len(recs)]
            out.write(f"{r[0].split()[0]}_{k // len(recs)}\n{r[1]}\n+\n{r[3]}\n")


def single_process(graph, reads, variant, chunk, out_path):
    import s2g
    from s2g.gaf import write_gaf
    t = time.perf_counter()
    n = 0
    with open(out_path, "w") as fh:
        for b in s2g.iter_read_batches(reads, chunk):
            write_gaf(fh, graph, s2g.align(graph, b, variant=variant, method="exact"))
            n += b.n_reads
    return n, time.perf_counter() - t


def pick_variant(graph, reads, candidates):
    """First candidate that runs here and agrees with the CPU variant on ``reads``."""
    import s2g
    from s2g.gaf import gaf_line
    batch = next(s2g.iter_read_batches(reads, 64))
    want = [gaf_line(graph, r) for r in s2g.align(graph, batch, variant="cpu", method="exact")]
    tried = {}
    for v in candidates:
        try:
            got = [gaf_line(graph, r) for r in s2g.align(graph, batch, variant=v, method="exact")]
        except Exception as exc:  # noqa: BLE001 - an unfinished variant: try the next one
            tried[v] = f"{type(exc).__name__}: {str(exc)[:200]}"
            continue
        if got == want:
            return v, tried
        tried[v] = "output differs from the cpu variant"
    raise SystemExit(f"no usable variant among {candidates}: {tried}")


def warm_up(client, spec, batch, opts):
    from s2g import distributed as sd
    futs = [client.submit(sd.align_chunk, spec, batch, opts, workers=[w], allow_other_workers=False,
                          pure=False) for w in client.scheduler_info(n_workers=-1)["workers"]]
    for f in futs:
        r = f.result()
        if r[0] != "ok":
            raise SystemExit(f"warm-up failed: {r}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", choices=["gpu", "cpu"], required=True)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--variant", default=None,
                    help="variant, or a comma list tried in order (default: fast,v4,v3,v2 on GPU, cpu)")
    ap.add_argument("--threads", type=int, default=None, help="Numba threads per CPU worker")
    ap.add_argument("--total-bases", type=int, default=100_000)
    ap.add_argument("--reads", type=int, default=None)
    ap.add_argument("--seconds", type=float, default=15.0, help="target time of the 1-worker run")
    ap.add_argument("--max-reads", type=int, default=2_000_000)
    ap.add_argument("--chunk", type=int, default=None, help="reads per chunk (default: reads / 16)")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    import distributed

    import s2g
    from s2g import distributed as sd
    from s2g.scoring import Mode, Scoring

    if args.device == "cpu":
        os.environ["CUDA_VISIBLE_DEVICES"] = ""      # CPU workers even on a GPU machine
    counts = [int(x) for x in args.workers.split(",")]
    load_start = os.getloadavg()
    tmp = tempfile.mkdtemp(prefix="s2g-dask-")
    prefix = os.path.join(tmp, "sim")
    subprocess.run([sys.executable, "-m", "s2g", "simulate", prefix, "--total-bases",
                    str(args.total_bases), "--reads", "2000", "--seed", "0"], check=True,
                   stdout=subprocess.DEVNULL)
    gfa = prefix + ".gfa"
    graph = s2g.load_graph(gfa)
    cands = (args.variant or ("fast,v4,v3,v2" if args.device == "gpu" else "cpu")).split(",")
    variant, tried = pick_variant(graph, prefix + ".fq", cands)
    print(f"variant {variant} (skipped: {tried})", flush=True)

    # size the input from a warm single-process rate
    warm = os.path.join(tmp, "warm.fq")
    make_reads(prefix + ".fq", warm, 2000 if args.device == "gpu" else 64)
    if args.threads and args.device == "cpu":
        import numba
        numba.set_num_threads(args.threads)
    single_process(graph, warm, variant, 2000, os.devnull)       # JIT
    n_cal, t_cal = single_process(graph, warm, variant, 2000, os.devnull)
    rate_cal = n_cal / t_cal
    n = args.reads or int(min(args.max_reads, max(256, rate_cal * args.seconds)))
    chunk = args.chunk or max(1, n // 16)
    n = (n // chunk) * chunk or chunk
    reads = os.path.join(tmp, "reads.fq")
    make_reads(prefix + ".fq", reads, n)
    print(f"calibration {rate_cal:,.0f} reads/s single-process; {n} reads, chunk {chunk}", flush=True)

    ref = os.path.join(tmp, "single.gaf")
    n_ref, t_ref = single_process(graph, reads, variant, chunk, ref)
    ref_sha = sha(ref)
    runs = [{"mode": "single-process (no dask)", "workers": 1, "reads": n_ref, "seconds": t_ref,
             "reads_per_s": n_ref / t_ref, "identical": True}]
    print(f"single process: {n_ref / t_ref:,.0f} reads/s ({t_ref:.2f} s)", flush=True)

    from s2g.plan import RunOptions
    opts = RunOptions(scoring=Scoring(), mode=Mode.parse("local"), variant=variant,
                      threads=args.threads)
    spec = sd.GraphSpec(os.path.abspath(gfa), "both", False,
                        (os.stat(gfa).st_size, os.stat(gfa).st_mtime_ns), sd.fingerprint(graph))
    warm_batch = next(s2g.iter_read_batches(warm, 256))
    for k in counts:
        with sd.local_cluster(k, silence_logs=40) as cluster, distributed.Client(cluster) as client:
            client.wait_for_workers(k, timeout=120)
            t = time.perf_counter()
            warm_up(client, spec, warm_batch, opts)
            t_warm = time.perf_counter() - t
            out = os.path.join(tmp, f"dask{k}.gaf")
            t = time.perf_counter()
            st = sd.align_file(client, gfa, reads, out, opts, sd.DaskSettings(chunk_size=chunk),
                               client_graph=graph)
            dt = time.perf_counter() - t
            same = sha(out) == ref_sha
            runs.append({"mode": f"dask local, {k} {args.device.upper()} worker(s)", "workers": k,
                         "reads": st["reads"], "seconds": dt, "reads_per_s": st["reads"] / dt,
                         "identical": same, "warmup_s": t_warm,
                         "graph_loads": sum(w["graph_loads"] for w in client.run(sd.worker_stats).values())})
            print(f"{k} worker(s): {st['reads'] / dt:,.0f} reads/s ({dt:.2f} s), identical={same}, "
                  f"warm-up {t_warm:.1f} s", flush=True)
    base = next((r["reads_per_s"] for r in runs if r["workers"] == 1 and r["mode"].startswith("dask")), None)
    for r in runs:
        if r["mode"].startswith("dask") and base:
            r["efficiency"] = r["reads_per_s"] / (r["workers"] * base)
    dev = _device_name(args.device)
    res = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "device": dev, "host": platform.node(), "cores": sd._cores(),
           "loadavg_start": load_start, "loadavg_end": os.getloadavg(), "command": " ".join([os.path.basename(sys.executable)] + sys.argv),
           "variant": variant, "variants_skipped": tried, "graph": f"simulated SNP, {args.total_bases} bp, both strands",
           "reads": n, "read_len": 150, "chunk": chunk, "threads_per_worker": args.threads, "runs": runs}
    os.makedirs(args.out, exist_ok=True)
    stem = os.path.join(args.out, f"dask_scaling_{args.device}")
    with open(stem + ".json", "w") as fh:
        json.dump(res, fh, indent=2)
    lines = [f"# s2g --dask local scaling ({args.device.upper()} workers)", "",
             f"{res['date']}, {dev}, {res['cores']} cores, load average {load_start[0]:.1f} at the start, "
             f"{res['loadavg_end'][0]:.1f} at the end; "
             f"variant `{variant}`; {res['graph']}; {n} reads of 150 bp in chunks of {chunk}.", "",
             f"`{res['command']}`", "",
             "| run | reads/s | seconds | efficiency | same GAF as single process |",
             "| --- | ---: | ---: | ---: | --- |"]
    for r in runs:
        eff = f"{r['efficiency']:.2f}" if "efficiency" in r else ""
        lines.append(f"| {r['mode']} | {r['reads_per_s']:,.0f} | {r['seconds']:.2f} | {eff} | "
                     f"{'yes' if r['identical'] else 'NO'} |")
    with open(stem + ".md", "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def _device_name(kind):
    if kind == "gpu":
        try:
            out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                                 capture_output=True, text=True, check=True).stdout.split("\n")
            names = [x for x in out if x.strip()]
            return f"{len(names)} x {names[0]}"
        except Exception:  # noqa: BLE001
            return "GPU (nvidia-smi unavailable)"
    from bench.harness import cpu_name
    return cpu_name()


if __name__ == "__main__":
    main()
