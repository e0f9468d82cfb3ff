"""The same reads through `s2g align` on the GPU path and the CPU path (and GraphAligner,
where installed), one table: issue #42's "GPU path against CPU-only on the same host, in
the same run" and issue #45's GraphAligner row, with one command.

    python -m bench.devices --graph MHC.gfa --reads reads.fq.gz [--repeat 5] [--runs 3]
    s2g bench devices --graph ... --reads ...   # the same
    s2g bench devices --graph A.gfa --reads a.fq --graph B.gfa --reads b.fq   # one table

``--graph`` and ``--reads`` may be given several times, in pairs (the k-th reads on the
k-th graph): each graph runs every row in turn, and the table has a row per graph and run.

What runs (each a fresh process, as a user runs it; the graph is copied into a work folder
so that its cache and index are built there, timed, by `s2g index`):

* ``gpu``: ``s2g align GRAPH READS --timings`` (the machine's default: the GPU path where
  there is a GPU; skipped without one), once untimed (kernels compiled, caches loaded),
  then ``--runs`` times;
* ``cpu``: the same with ``--variant simd`` (every thread of the host);
* ``graphaligner``: ``GraphAligner -g GRAPH -f READS -a OUT.gaf -x vg -t THREADS`` where
  ``--graphaligner`` (default: ``GraphAligner`` on PATH) exists, ``--runs`` times.

Per row: the median wall of its runs (s2g's own closing line, in process; GraphAligner:
the process), reads/s, and s2g's stage seconds of the median run; s2g's GAFs are compared
byte for byte (``gaf identical``), and each row's time is set against the CPU row's
(``x CPU``: the CPU row's median wall over the row's). ``--repeat N`` aligns the reads N
times over (one FASTQ, names suffixed ``_1``..``_N``; 200,000 reads make a 1,000,000-read
run). Writes ``OUT/devices.json`` (``meta`` and one entry a graph in ``graphs``) and
``OUT/devices.md`` (default OUT: bench/results/<device>/devices/) and prints the table.
Extra ``s2g align`` options after ``--``.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile

from . import harness
from .long_reads import parse_index, parse_timings, run_cli


def _fastq_repeat(src: str, n: int, dst: str) -> int:
    """``src`` (FASTQ, four lines a record, plain or gzipped) written ``n`` times into
    ``dst``, the k-th copy's names suffixed ``_k``; returns the number of reads written."""
    opener = _opener(src)
    with opener(src, "rt") as fh:
        if fh.read(1) != "@":
            raise SystemExit(f"bench.devices: --repeat needs FASTQ; {src} is not")
    reads = 0
    with open(dst, "w") as out:
        for k in range(1, n + 1):
            with opener(src, "rt") as fh:
                for i, line in enumerate(fh):
                    if i % 4 == 0:
                        name, _, rest = line.rstrip("\n").partition(" ")
                        line = f"{name}_{k}" + (f" {rest}" if rest else "") + "\n"
                        reads += 1
                    out.write(line)
    return reads


def _opener(path: str):
    import gzip
    with open(path, "rb") as fh:
        return gzip.open if fh.read(2) == b"\x1f\x8b" else open


def _count_reads(path: str) -> int:
    """Records of a FASTQ (four lines each) or FASTA file."""
    with _opener(path)(path, "rt") as fh:
        first = fh.read(1)
        fh.seek(0)
        if first == "@":
            return sum(1 for _ in fh) // 4
        return sum(1 for line in fh if line.startswith(">"))


def run_meta(name, argv, extra):
    """(meta, slug) of a run of ``python -m bench.NAME ARGV [-- EXTRA]``: the GPU's name
    (nvidia-smi; None without one), the CPU, commit, date and command; the results
    folder's device slug."""
    meta = {"nvidia_smi": None, "cpu": f"{harness.cpu_name()} ({os.cpu_count()} threads)",
            "commit": harness.git_commit(),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "command": f"python -m bench.{name} "
                       + shlex.join(argv + (["--"] + extra if extra else []))}
    try:
        p = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=30)
        if p.returncode == 0 and p.stdout.strip():
            meta["nvidia_smi"] = p.stdout.strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError):
        pass
    meta["device"] = meta["nvidia_smi"] or "cpu"
    slug = (harness._slug(meta["nvidia_smi"]) if meta["nvidia_smi"]
            else "cpu-" + harness._slug(harness.cpu_name()))
    return meta, slug


def split_extra(argv):
    """(own options, the ``s2g align`` options after ``--``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--" in argv:
        k = argv.index("--")
        return argv[:k], argv[k + 1:]
    return argv, []


def _gpu_available() -> bool:
    try:
        from s2g.variants.registry import cuda_available
        return bool(cuda_available()[0])
    except Exception:                     # noqa: BLE001 - no numba-cuda: no GPU row
        return False


def _s2g_row(name, argv_base, extra, runs, timeout, log, work):
    """Warm-up, then ``runs`` timed runs of one s2g configuration."""
    gaf = os.path.join(work, f"{name}.gaf")
    argv = argv_base + ["-o", gaf, "--timings"] + extra
    warm = run_cli(argv, timeout, log)
    if warm["status"] != "ok":
        return {"name": name, "status": warm["status"], "reason": warm.get("reason")}
    recs = []
    for _ in range(runs):
        r = run_cli(argv, timeout, log)
        if r["status"] != "ok":
            return {"name": name, "status": r["status"], "reason": r.get("reason")}
        t = parse_timings(r["stderr"])
        t["process_s"] = r["process_s"]
        recs.append(t)
    # the median run (of an even number of runs, the slower of the middle two: its stages
    # are one run's, so no average is taken)
    med = sorted(recs, key=lambda t: t.get("wall_s", 1e18))[len(recs) // 2]
    return {"name": name, "status": "ok", "argv": shlex.join(argv), "gaf": gaf,
            "walls_s": [t.get("wall_s") for t in recs],
            "wall_s": med.get("wall_s"), "reads_per_s": med.get("reads_per_s"),
            "n_reads": med.get("n_reads"), "aligned": med.get("aligned"),
            "stages": med.get("stages"), "seeded_stages": med.get("seeded_stages"),
            "align_span_s": med.get("align_span_s"), "peak_rss_mb": med.get("peak_rss_mb"),
            "gpu_peak_mb": med.get("gpu_peak_mb")}


def _ga_row(exe, graph, reads, n_reads, threads, runs, timeout, log, work):
    gaf = os.path.join(work, "graphaligner.gaf")
    argv = [exe, "-g", graph, "-f", reads, "-a", gaf, "-x", "vg", "-t", str(threads)]
    walls = []
    for _ in range(runs):
        r = run_cli(argv, timeout, log)
        if r["status"] != "ok":
            return {"name": "graphaligner", "status": r["status"], "reason": r.get("reason")}
        walls.append(r["process_s"])
    wall = statistics.median(walls)
    return {"name": "graphaligner", "status": "ok", "argv": shlex.join(argv), "walls_s": walls,
            "wall_s": wall, "reads_per_s": n_reads / wall if wall else None, "n_reads": n_reads}


def _same(a: str, b: str) -> bool:
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            x, y = fa.read(1 << 20), fb.read(1 << 20)
            if x != y:
                return False
            if not x:
                return True


def _cpu_row(rows):
    """The CPU row of a graph's ``rows`` when it ran, else None."""
    return next((r for r in rows if r["name"] == "cpu" and r["status"] == "ok"), None)


def markdown(doc) -> str:
    m = doc["meta"]
    gs = doc["graphs"]
    lines = ["# s2g align on the GPU and CPU paths: "
             + ", ".join(f"{os.path.basename(g['graph'])} ({g['n_reads']:,} reads)" for g in gs),
             "", f"{m['device']} ({m['nvidia_smi'] or 'no GPU'}), {m['cpu']}, {m['date']}, "
             f"commit {m['commit']}; `{m['command']}`; index built in "
             + ", ".join(f"{g['index'].get('build_s', '?')} s" for g in gs) + ".", "",
             "| graph | run | wall (median run" + (", the slower middle one" if
                                                 m.get("runs", 1) % 2 == 0 else "")
             + ") | reads/s | x CPU | align stage | traceback | runs "
             "| notes |", "|---|---|---:|---:|---:|---:|---:|---|---|"]
    for g in gs:
        cpu = _cpu_row(g["rows"])
        name, cpu_wall = os.path.basename(g["graph"]), cpu["wall_s"] if cpu else None
        for r in g["rows"]:
            if r["status"] != "ok":
                lines.append(f"| {name} | {r['name']} | - | - | - | - | - | - | "
                             f"{r['status']}: {r.get('reason')} |")
                continue
            st = r.get("stages") or {}
            walls = ", ".join(f"{w:.2f}" for w in r["walls_s"])
            note = []
            if r.get("gpu_peak_mb"):
                note.append(f"GPU buffers {r['gpu_peak_mb']:,.0f} MB")
            if r["name"] in g.get("gaf_identical_to_cpu", {}):
                note.append("GAF identical to cpu" if g["gaf_identical_to_cpu"][r["name"]]
                            else "GAF DIFFERS from cpu")
            tb = st.get("traceback")
            x = f"{cpu_wall / r['wall_s']:.2f}" if cpu_wall and r["wall_s"] else "-"
            lines.append(f"| {name} | {r['name']} | {r['wall_s']:.2f} s | "
                         f"{r['reads_per_s']:,.0f} | {x} | "
                         f"{st.get('align', float('nan')):.2f} | "
                         f"{'-' if tb is None else f'{tb:.2f}'} | {walls} | {'; '.join(note)} |")
    return "\n".join(lines) + "\n"


def run_graph(k, graph_path, reads_path, args, rows, extra, log, work) -> dict:
    """Every row of ``rows`` on the ``k``-th graph and its reads (in ``work``'s folder
    ``graph<k>``, where a graph copied by an earlier run with the same ``--work`` keeps its
    cache and index): the graph's entry of ``devices.json``."""
    work = os.path.join(work, f"graph{k}")
    os.makedirs(work, exist_ok=True)
    graph = os.path.join(work, os.path.basename(graph_path))
    if not os.path.exists(graph):
        shutil.copy(graph_path, graph)
    reads = reads_path
    if args.repeat > 1:
        reads = os.path.join(work, "reads.fq")
        n_reads = _fastq_repeat(reads_path, args.repeat, reads)
    else:
        n_reads = _count_reads(reads)
    py = [sys.executable, "-m", "s2g"]
    ix = run_cli(py + ["index", graph], args.timeout, log)
    doc = {"graph": graph_path, "reads": reads_path, "repeat": args.repeat,
           "n_reads": n_reads, "index": parse_index(ix["stderr"]), "rows": [],
           "gaf_identical_to_cpu": {}}
    base = py + ["align", graph, reads]
    if "gpu" in rows:
        if _gpu_available():
            doc["rows"].append(_s2g_row("gpu", base, extra, args.runs, args.timeout, log, work))
        else:
            doc["rows"].append({"name": "gpu", "status": "skipped", "reason": "no GPU"})
    if "cpu" in rows:
        doc["rows"].append(_s2g_row("cpu", base + ["--variant", "simd"], extra, args.runs,
                                    args.timeout, log, work))
    if "graphaligner" in rows:
        if args.graphaligner and os.path.exists(args.graphaligner):
            doc["rows"].append(_ga_row(args.graphaligner, graph, reads, n_reads, args.threads,
                                       args.runs, args.timeout, log, work))
        else:
            doc["rows"].append({"name": "graphaligner", "status": "skipped",
                                "reason": "not installed (--graphaligner PATH)"})
    cpu = _cpu_row(doc["rows"])
    for r in doc["rows"]:
        if cpu is not None and r is not cpu and r["status"] == "ok" and r.get("gaf") \
                and r["name"] != "graphaligner":
            doc["gaf_identical_to_cpu"][r["name"]] = _same(r["gaf"], cpu["gaf"])
    return doc


def main(argv=None) -> int:
    argv, extra = split_extra(argv)
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()),
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--graph", required=True, action="append",
                    help="GFA (several: one table; each with its --reads, in order)")
    ap.add_argument("--reads", required=True, action="append",
                    help="FASTQ/FASTA (plain or gzipped), one a --graph")
    ap.add_argument("--repeat", type=int, default=1, help="align the reads this many times over")
    ap.add_argument("--runs", type=int, default=3, help="timed runs per row (median reported)")
    ap.add_argument("--rows", default="gpu,cpu,graphaligner",
                    help="which rows (gpu is skipped without a GPU, graphaligner without it)")
    ap.add_argument("--graphaligner", default=shutil.which("GraphAligner") or "",
                    help="GraphAligner executable")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                    help="GraphAligner's threads (s2g uses every thread)")
    ap.add_argument("--timeout", type=float, default=900, help="seconds a run")
    ap.add_argument("--out", default=None, help="output folder (default "
                    "bench/results/<device>/devices/)")
    ap.add_argument("--work", default=None, help="work folder (default: a temporary one)")
    args = ap.parse_args(argv)
    if args.repeat < 1 or args.runs < 1:
        ap.error("--repeat and --runs must be >= 1")
    if len(args.graph) != len(args.reads):
        ap.error(f"{len(args.graph)} --graph but {len(args.reads)} --reads: give one a graph")
    for p in args.graph + args.reads:
        if not os.path.isfile(p):
            ap.error(f"{p}: no such file")
    rows = [r.strip() for r in args.rows.split(",") if r.strip()]
    meta, slug = run_meta("devices", argv, extra)
    meta["runs"] = args.runs
    out = args.out or os.path.join(harness.REPO, "bench", "results", slug, "devices")
    os.makedirs(out, exist_ok=True)
    work = args.work or tempfile.mkdtemp(prefix="s2g-devices-")
    os.makedirs(work, exist_ok=True)
    log = os.path.join(out, "devices.log")
    doc = {"meta": meta, "graphs": []}
    for k, (graph, reads) in enumerate(zip(args.graph, args.reads)):
        doc["graphs"].append(run_graph(k, graph, reads, args, rows, extra, log, work))
        with open(os.path.join(out, "devices.json"), "w") as fh:   # each graph as it ends
            json.dump(doc, fh, indent=1, default=str)
    text = markdown(doc)
    with open(os.path.join(out, "devices.md"), "w") as fh:
        fh.write(text)
    print(text)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    bad = [r for g in doc["graphs"] for r in g["rows"] if r["status"] not in ("ok", "skipped")]
    differs = [k for g in doc["graphs"] for k, v in g["gaf_identical_to_cpu"].items() if not v]
    return 1 if bad or differs else 0


if __name__ == "__main__":
    sys.exit(main())
