"""Which device a run of N reads should use: ``s2g align`` with ``--variant fast`` (the GPU
path), ``--variant simd`` (every CPU thread) and the default (``auto``) on the first N
reads of a file, N over a range, each run a fresh process as a user runs it. The
measurements behind ``auto``'s device choice (issue #42: "auto never picks the slower
device"; :data:`s2g.plan.GPU_START_S`, ``SEEDED_COSTS``, ``EXACT_*``).

    python -m bench.device_choice --case mhc:MHC.gfa:mhc200k.fq.gz:100,1000,10000,50000 \
        --case long:MHC.gfa:long10k.fq:3,10,30,100 [--runs 3] [--out DIR] [-- ALIGN OPTIONS]

Per case and count: one untimed run of each row (kernels compiled, caches and index
built), then ``--runs`` rounds of gpu, cpu, auto in turn (alternating, so that a drifting
host moves every row alike); the median process wall (``process_s``: start to exit, what
the user waits) and s2g's own closing wall (``wall_s``: from the CLI's start). The auto
row records which path it took (its stderr note). GAF of the three compared byte for byte.
Writes ``OUT/device_choice.json`` and ``.md`` (default OUT:
bench/results/<device>/device_choice/).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile

from . import harness
from .devices import _gpu_available, _opener, _same, run_meta, split_extra
from .long_reads import parse_timings, run_cli

ROWS = {"gpu": ["--variant", "fast"], "cpu": ["--variant", "simd"], "auto": []}


def head_reads(src: str, n: int, dst: str) -> int:
    """The first ``n`` records of ``src`` (FASTQ: four lines each; FASTA: from ``>`` to
    ``>``) written to ``dst``; returns how many there were."""
    got = 0
    with _opener(src)(src, "rt") as fh, open(dst, "w") as out:
        first = fh.read(1)
        fh.seek(0)
        if first == "@":
            for i, line in enumerate(fh):
                if i // 4 >= n:
                    break
                out.write(line)
                got = i // 4 + 1
        else:
            for line in fh:
                if line.startswith(">"):
                    if got == n:
                        break
                    got += 1
                out.write(line)
    return got


def auto_choice(timings: dict, stderr: str = "") -> str:
    """Which path a run took: ``cpu`` where s2g said it aligns on the CPU
    (:func:`s2g.plan.cpu_faster`'s note), else ``gpu`` where its ``--timings`` memory line
    (:func:`parse_timings`) reports GPU buffers, else ``cpu``."""
    if "aligning on the CPU" in stderr:
        return "cpu"
    return "gpu" if timings.get("gpu_peak_mb") else "cpu"


def run_case(name, graph, reads, counts, runs, timeout, extra, work, log):
    rows = []
    gpu = _gpu_available()
    for n in counts:
        sub = os.path.join(work, f"{name}_{n}.fq")
        got = head_reads(reads, n, sub)
        recs = {k: [] for k in ROWS}
        gafs = {k: os.path.join(work, f"{name}_{n}_{k}.gaf") for k in ROWS}
        which = [k for k in ROWS if gpu or k != "gpu"]
        order = [("warm", k) for k in which] + [(r, k) for r in range(runs) for k in which]
        status = "ok"
        for r, k in order:
            argv = [sys.executable, "-m", "s2g", "align", graph, sub, "-o", gafs[k],
                    "--timings"] + ROWS[k] + extra
            res = run_cli(argv, timeout, log)
            if res["status"] != "ok":
                status = f"{k}: {res['status']}: {res.get('reason')}"
                break
            if r == "warm":
                continue
            t = parse_timings(res["stderr"])
            recs[k].append({"process_s": res["process_s"], "wall_s": t.get("wall_s"),
                            "choice": auto_choice(t, res["stderr"])})
        row = {"case": name, "count": got, "status": status}
        for k in which:
            if recs[k]:
                row[k] = {"process_s": statistics.median(x["process_s"] for x in recs[k]),
                          "wall_s": statistics.median(x["wall_s"] or 0 for x in recs[k]),
                          "runs": recs[k]}
        if "auto" in row:
            row["auto"]["choice"] = sorted({x["choice"] for x in recs["auto"]})
        if status == "ok":
            row["gaf_identical"] = all(_same(gafs[k], gafs["cpu"]) for k in which)
        rows.append(row)
        print(markdown_row(row), flush=True)
    return rows


def markdown_row(r) -> str:
    def cell(k):
        x = r.get(k)
        return "-" if not x else f"{x['process_s']:.2f} ({x['wall_s']:.2f})"
    best = "-"
    if r.get("gpu") and r.get("cpu"):
        best = "gpu" if r["gpu"]["process_s"] < r["cpu"]["process_s"] else "cpu"
    auto = ",".join(r["auto"]["choice"]) if r.get("auto") else "-"
    return (f"| {r['case']} | {r['count']:,} | {cell('gpu')} | {cell('cpu')} | {cell('auto')} "
            f"| {best} | {auto} | {r.get('gaf_identical', r['status'])} |")


HEADER = ("| case | reads | gpu process s (s2g wall) | cpu | auto | faster | auto took | "
          "GAF identical |\n|---|---:|---:|---:|---:|---|---|---|")


def main(argv=None) -> int:
    argv, extra = split_extra(argv)
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()),
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--case", action="append", required=True,
                    help="NAME:GRAPH:READS:N1,N2,... (the first N reads of READS)")
    ap.add_argument("--runs", type=int, default=3, help="timed runs per row and count")
    ap.add_argument("--timeout", type=float, default=600, help="seconds a run")
    ap.add_argument("--out", default=None, help="output folder")
    ap.add_argument("--work", default=None, help="work folder (default: a temporary one)")
    args = ap.parse_args(argv)
    cases = []
    for spec in args.case:
        parts = spec.split(":")
        if len(parts) != 4:
            ap.error(f"--case {spec}: NAME:GRAPH:READS:COUNTS")
        name, graph, reads, counts = parts
        for p in (graph, reads):
            if not os.path.isfile(p):
                ap.error(f"{p}: no such file")
        cases.append((name, graph, reads, [int(c) for c in counts.split(",")]))
    meta, slug = run_meta("device_choice", argv, extra)
    out = args.out or os.path.join(harness.REPO, "bench", "results", slug, "device_choice")
    os.makedirs(out, exist_ok=True)
    work = args.work or tempfile.mkdtemp(prefix="s2g-choice-")
    log = os.path.join(out, "device_choice.log")
    print(HEADER, flush=True)
    rows = []
    for name, graph, reads, counts in cases:
        g = os.path.join(work, name + "_" + os.path.basename(graph))
        if not os.path.exists(g):
            shutil.copy(graph, g)        # its cache and index built there
        rows += run_case(name, g, reads, counts, args.runs, args.timeout, extra, work, log)
    doc = {"meta": meta, "rows": rows}
    with open(os.path.join(out, "device_choice.json"), "w") as fh:
        json.dump(doc, fh, indent=1)
    text = (f"# s2g align: GPU path, CPU path and auto by read count\n\n{meta['nvidia_smi'] or 'no GPU'}, "
            f"{meta['cpu']}, {meta['date']}, commit {meta['commit']}; `{meta['command']}`\n\n"
            "Median process wall in seconds (s2g's own closing wall in brackets).\n\n"
            + HEADER + "\n" + "\n".join(markdown_row(r) for r in rows) + "\n")
    with open(os.path.join(out, "device_choice.md"), "w") as fh:
        fh.write(text)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if all(r["status"] == "ok" and r.get("gaf_identical") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
