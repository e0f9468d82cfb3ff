"""Long-read workloads (issue 15): ``s2g align`` end to end on 10-50 kbp reads.

    python -m bench.long_reads --out DIR [--workloads sim100k_10k,C4_10k] [--variant fast]
    python -m bench.long_reads --report-only DIR        # long_reads.md + .png from DIR/*.json
    bash bench/device_long.sh OUT [options...]          # the same on the GPU machine

Every workload is a graph and a FASTQ written to a work folder (``--work``; reused
by a later call with the same parameters). For each one, the real CLI runs as a
separate process (``python -m s2g``, so the times include interpreter start, parsing
and loading as a user sees them), with ``--timings``, once per mode:

* ``full``:    ``s2g align G R --variant V --exact --no-traceback`` (full-graph DP, score only);
* ``full-tb``: ``s2g align G R --variant V --exact`` (full-graph DP and traceback);
* ``seeded``:  ``s2g align G R --variant V --seeded --index G.s2gi`` (traceback), after
  ``s2g index G`` (its time is recorded apart, under ``index``).

``--exact`` is passed because ``s2g align`` picks seeded alignment by itself on graphs
of 1M columns (GPU) / 100k columns (CPU) and more. Before each timed run, an untimed
run of the same mode on the first ``--warm-reads`` reads fills the compile caches
(its time is kept as ``warmup``). ``s2g align`` (and ``s2g index -o``) write the graph
cache (GRAPH.s2gg) beside a GFA file of 1 MiB or more (the 1 Mbp graphs), so their
timed runs load the graph from it as a user's second run does (each record's
``graph_cache_hit`` says so); ``--no-graph-cache`` times GFA parsing in every run.

Parsed from the ``--timings`` lines on stderr: wall seconds (the closing line; reads/s
= reads / those seconds), seconds per stage, the seeded stages and, when present, the GPU long-window
kernel line (windows, launches, cells, seconds, GCUPS). **cells** of full-graph DP
follow :mod:`bench.harness`: DP bases (both strands, ``FlatGraph.n_bases``) x read
bases, summed over the reads; ``align_gcups`` = cells / the ``align`` stage's seconds
(host clock: launches, transfers and DP together; the CLI prints no kernel time for
full-graph DP), ``wall_gcups`` = cells / the CLI's wall seconds. Kernel GCUPS is
reported only where the CLI prints it: the GPU long-window kernel line (seeded windows,
and full-DP traceback windows). GAF checks: one
line per read in every mode, and per read whether ``full-tb`` and ``seeded`` agree
(whole line identical; identical but for the MAPQ column, which differs by design:
255 for full DP; same AS:i score).

Errors: substitutions only, each base replaced with probability ``--error`` by one of
the other three (the model of :mod:`s2g.simulate`; no indels). Simulated workloads use
:func:`s2g.simulate.snp_graph` / :func:`~s2g.simulate.sample_reads` as
:func:`bench.harness.sim_workload` does (node length 50, 2 alleles per site, graph
seed ``--seed``, reads seed ``--seed`` + 1; harness's own function fixes 1% error).
Real workloads are :func:`bench.harness.real_workload`'s substrings of the graph's
query haplotypes (random strand), with the same substitutions added; the read length
is capped at the shortest haplotype (C4: 119,120 bp; DRB1: 11,065 bp).

Output: ``OUT/<workload>.json`` (device, commit, date, command lines, results; written
after every run, ``complete: true`` once the workload is done), then ``OUT/long_reads.md``
and ``OUT/long_reads.png`` over every workload JSON in OUT (so several calls can fill
one folder). A run past ``--timeout`` is killed and recorded as ``timeout``; a run that
exits non-zero as ``error`` with its last stderr line.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

from . import harness

REPO = harness.REPO

#: the issue's workloads: name -> (kind, graph, reads, read length)
#: kind "sim": graph = total bases of the simulated SNP graph; "real": harness._REAL key
DEFAULT_WORKLOADS = {
    "sim100k_10k": ("sim", 100_000, 1000, 10_000),
    "sim1M_10k": ("sim", 1_000_000, 1000, 10_000),
    "sim100k_50k": ("sim", 100_000, 100, 50_000),
    "sim1M_50k": ("sim", 1_000_000, 100, 50_000),
    "C4_10k": ("real", "c4_gwfa", 1000, 10_000),
    "DRB1_10k": ("real", "drb1_odgi", 1000, 10_000),
}
#: short names of the real graphs for NAME_LEN workloads (e.g. C4_50k, LPA_10k)
REAL_NAMES = {"C4": "c4_gwfa", "DRB1": "drb1_odgi"}   # acyclic, with query haplotypes
MODES = ("full", "full-tb", "seeded")
MODE_TITLES = {"full": "full DP, score only", "full-tb": "full DP + traceback",
               "seeded": "seeded + traceback"}
LONG_LINE = "s2g: long-window kernel:"


def _size(text: str) -> int:
    """'100k' -> 100000, '1M' -> 1000000, '2500' -> 2500."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kKmMgG]?)", text)
    if not m:
        raise ValueError(text)
    mult = {"": 1, "k": 1000, "m": 1_000_000, "g": 1_000_000_000}[m.group(2).lower()]
    return int(round(float(m.group(1)) * mult))


def workload_spec(name: str) -> dict:
    """(kind, graph, n_reads, read_len) of a workload name: one of DEFAULT_WORKLOADS, or
    ``sim<BASES>_<LEN>`` (e.g. sim10M_10k) / ``<C4|DRB1>_<LEN>`` (e.g. C4_50k),
    with 1,000 reads up to 10 kbp and 100 reads above."""
    if name in DEFAULT_WORKLOADS:
        kind, graph, n, length = DEFAULT_WORKLOADS[name]
        return dict(name=name, kind=kind, graph=graph, n_reads=n, read_len=length)
    m = re.fullmatch(r"sim(\d+(?:\.\d+)?[kKmMgG]?)_(\d+(?:\.\d+)?[kK]?)", name)
    r = re.fullmatch(r"([A-Za-z0-9]+)_(\d+(?:\.\d+)?[kK]?)", name)
    if m:
        kind, graph, length = "sim", _size(m.group(1)), _size(m.group(2))
    elif r and r.group(1).upper() in REAL_NAMES:
        kind, graph, length = "real", REAL_NAMES[r.group(1).upper()], _size(r.group(2))
    else:
        raise ValueError(f"unknown workload {name!r}: use one of {', '.join(DEFAULT_WORKLOADS)}, "
                         f"sim<BASES>_<LEN> (e.g. sim10M_10k) or "
                         f"<{'|'.join(REAL_NAMES)}>_<LEN> (e.g. C4_50k)")
    return dict(name=name, kind=kind, graph=graph, n_reads=1000 if length <= 10_000 else 100,
                read_len=length)


# --------------------------------------------------------------------------- parsing

_SUMMARY = re.compile(r"^s2g: (\d+) reads, (\d+) aligned, (\d+) without alignment; (.*); "
                      r"([0-9.]+) s \(([0-9,.]+) reads/s\)\s*$")
_LONG = re.compile(r"^s2g: long-window kernel: ([0-9,]+) windows in ([0-9,]+) launches, "
                   r"([0-9,]+) cells, ([0-9.]+) s, ([0-9.]+) GCUPS(?:; .*)?\s*$")
_FAST = re.compile(r"^s2g: fast kernel: ([0-9,]+) launch(?:es)?, ([0-9,]+) cells, ([0-9.]+) s, "
                   r"([0-9.]+) GCUPS \(launch calls ([0-9.]+) s(?:, setup ([0-9.]+) s)?\)\s*$")
_MEM = re.compile(r"^s2g: memory: peak RSS ([0-9,]+) MB(?:; GPU buffers peak ([0-9,]+) MB, "
                  r"pinned host ([0-9,]+) MB)?(?:; GPU memory in use peak ([0-9,]+) MB "
                  r"\(whole device\))?\s*$")
_INDEX = re.compile(r"^s2g: (.*): ([0-9,]+) seeds \(([0-9,]+) distinct\) over ([0-9,]+) columns, "
                    r"([0-9.,]+) MB, ([0-9.]+) s")
_ITEM = re.compile(r"^(.*?) (-?[0-9.]+)$")


def _num(s: str) -> float:
    return float(s.replace(",", ""))


def _items(text: str) -> dict:
    """'load graph (from GRAPH.s2gg) 0.02, align 0.48' -> {'load graph (from GRAPH.s2gg)': 0.02, ...}"""
    out = {}
    for part in text.split(", "):
        m = _ITEM.match(part.strip())
        if m:
            out[m.group(1)] = float(m.group(2))
    return out


def parse_timings(text: str) -> dict:
    """What ``s2g align --timings`` printed on stderr (s2g/cli.py ``_align``), as a dict:

    * ``n_reads``, ``aligned``, ``unaligned``, ``how``, ``wall_s``, ``reads_per_s``: the
      closing line ``s2g: N reads, H aligned, U without alignment; HOW; D s (R reads/s)``;
    * ``stages`` {stage: seconds} (labels dropped: ``load graph``, ``index``, ``align``,
      ``traceback``, ``GAF text``, ``write``), ``traceback_on`` ('GPU'/'CPU'),
      ``graph_cache_hit``, ``stage_wall_s``, ``align_span_s`` [from, to]: the line
      ``s2g: seconds per stage: ...; wall W (aligning from A s to B s)``;
    * ``seeded_stages`` and ``first_batch_s``: ``s2g: seeded align stage, seconds: ...``;
    * ``long_window`` {windows, launches, cells, kernel_s, gcups}: ``s2g: long-window
      kernel: N windows in K launches, C cells, T s, G GCUPS`` (GPU seeded runs);
    * ``fast_kernel`` {launches, cells, kernel_s, gcups, calls_s, setup_s}: ``s2g: fast
      kernel: N launches, C cells, T s, G GCUPS (launch calls W s, setup S s)`` (full-graph
      DP with ``fast``: its kernels' CUDA-event seconds, run_kernel's wall seconds and its
      part before the launch);
    * ``gpu_traceback`` {part: seconds}: ``s2g: GPU traceback, seconds: ...`` (full DP);
    * ``peak_rss_mb``, ``gpu_peak_mb``, ``pinned_peak_mb``, ``gpu_used_mb``: ``s2g: memory:
      peak RSS N MB; GPU buffers peak G MB, pinned host P MB; GPU memory in use peak U MB
      (whole device)`` (the GPU parts with a GPU variant; the last since session 40);
    * ``warnings``: the ``s2g: warning:`` lines.

    Keys whose line is missing are absent (``long_window`` and ``fast_kernel`` are None)."""
    out: dict = {"warnings": [], "long_window": None, "fast_kernel": None}
    for line in text.splitlines():
        line = line.rstrip()
        m = _SUMMARY.match(line)
        if m:
            out.update(n_reads=int(m.group(1)), aligned=int(m.group(2)), unaligned=int(m.group(3)),
                       how=m.group(4), wall_s=float(m.group(5)), reads_per_s=_num(m.group(6)))
            continue
        if line.startswith("s2g: seconds per stage: "):
            body = line[len("s2g: seconds per stage: "):]
            stages_txt, _, tail = body.partition("; wall ")
            stages = {}
            for k, v in _items(stages_txt).items():
                base = re.sub(r" \(.*\)$", "", k)
                label = re.search(r"\((.*)\)$", k)
                if base == "traceback" and label:
                    out["traceback_on"] = label.group(1)
                if base == "load graph":
                    out["graph_cache_hit"] = bool(label and "s2gg" in label.group(1))
                stages[base] = v
            out["stages"] = stages
            w = re.match(r"([0-9.]+)(?: \(aligning from ([0-9.]+) s to ([0-9.]+) s\))?", tail)
            if w:
                out["stage_wall_s"] = float(w.group(1))
                if w.group(2):
                    out["align_span_s"] = [float(w.group(2)), float(w.group(3))]
            continue
        if line.startswith("s2g: seeded align stage, seconds: "):
            body = line[len("s2g: seeded align stage, seconds: "):]
            parts, _, tail = body.partition("; first batch ")
            out["seeded_stages"] = _items(parts)
            if tail:
                out["first_batch_s"] = float(tail.split()[0])
            continue
        m = _LONG.match(line)
        if m:
            out["long_window"] = {"windows": int(_num(m.group(1))), "launches": int(_num(m.group(2))),
                                  "cells": int(_num(m.group(3))), "kernel_s": float(m.group(4)),
                                  "gcups": float(m.group(5))}
            continue
        m = _FAST.match(line)
        if m:
            out["fast_kernel"] = {"launches": int(_num(m.group(1))), "cells": int(_num(m.group(2))),
                                  "kernel_s": float(m.group(3)), "gcups": float(m.group(4)),
                                  "calls_s": float(m.group(5)),
                                  "setup_s": float(m.group(6)) if m.group(6) else None}
            continue
        if line.startswith("s2g: GPU traceback, seconds: "):
            out["gpu_traceback"] = _items(line[len("s2g: GPU traceback, seconds: "):])
            continue
        m = _MEM.match(line)
        if m:
            out["peak_rss_mb"] = _num(m.group(1))
            if m.group(2):
                out["gpu_peak_mb"], out["pinned_peak_mb"] = _num(m.group(2)), _num(m.group(3))
            if m.group(4):
                out["gpu_used_mb"] = _num(m.group(4))
            continue
        if line.startswith("s2g: warning:"):
            out["warnings"].append(line[len("s2g: warning:"):].strip())
    return out


def parse_index(text: str) -> dict:
    """``s2g index`` stderr: ``s2g: PATH: E seeds (D distinct) over C columns, M MB, S s``."""
    for line in text.splitlines():
        m = _INDEX.match(line.strip())
        if m:
            return {"path": m.group(1), "seeds": int(_num(m.group(2))), "distinct": int(_num(m.group(3))),
                    "columns": int(_num(m.group(4))), "mb": _num(m.group(5)),
                    "build_s": float(m.group(6))}
    return {}


def gaf_records(path: str) -> list:
    """GAF lines without the newline ('' lines kept: they count)."""
    with open(path) as fh:
        return [line.rstrip("\n") for line in fh]


def compare_gaf(a: list, b: list) -> dict:
    """Per-read agreement of two GAFs of the same reads, in input order (one line per
    read; -N 0): identical lines, identical but for column 12 (MAPQ: 255 for full-graph
    DP, a real MAPQ for seeded), same AS:i, same read name."""
    n = min(len(a), len(b))
    same_line = same_aln = same_score = same_name = 0
    first_diff = None
    for x, y in zip(a, b):
        if x == y:
            same_line += 1
        fx, fy = x.split("\t"), y.split("\t")
        same_name += fx[0] == fy[0]
        if fx[:11] + fx[12:] == fy[:11] + fy[12:]:
            same_aln += 1
        elif first_diff is None:
            first_diff = fx[0]
        sx = next((t for t in fx[12:] if t.startswith("AS:i:")), None)
        sy = next((t for t in fy[12:] if t.startswith("AS:i:")), None)
        same_score += sx is not None and sx == sy
    frac = (lambda k: round(k / n, 6) if n else None)
    return {"lines_a": len(a), "lines_b": len(b), "compared": n,
            "identical_lines": same_line, "identical_lines_frac": frac(same_line),
            "same_alignment": same_aln, "same_alignment_frac": frac(same_aln),
            "same_score": same_score, "same_score_frac": frac(same_score),
            "same_name_frac": frac(same_name), "first_different_read": first_diff}


# --------------------------------------------------------------------------- workloads

def add_substitutions(seq: str, rate: float, rng) -> tuple:
    """``seq`` with each A/C/G/T base replaced with probability ``rate`` by one of the other
    three (as s2g.simulate.sample_reads does); N and other letters stay. -> (seq, count)."""
    import numpy as np
    if rate <= 0:
        return seq, 0
    a = np.frombuffer(seq.upper().encode(), np.uint8).copy()
    lut = np.full(256, 255, np.uint8)
    for i, c in enumerate(b"ACGT"):
        lut[c] = i
    code = lut[a]
    hit = (rng.random(len(a)) < rate) & (code < 4)
    new = (code[hit] + rng.integers(1, 4, int(hit.sum()))) % 4
    a[hit] = np.frombuffer(b"ACGT", np.uint8)[new]
    return a.tobytes().decode(), int(hit.sum())


def _real_cap(graph_key, data_dir) -> int:
    sub, gfa, queries, _brk = harness._REAL[graph_key]
    need = [os.path.join(data_dir, sub, f) for f in [gfa] + queries]
    missing = [p for p in need if not os.path.exists(p)]
    if missing:
        raise FileNotFoundError(f"real graph data not found: {', '.join(missing)} (--real-dir "
                                f"{data_dir}: the ../shared/data/real layout)")
    lens = [len(s) for q in queries for _, s in harness._fq_records(os.path.join(data_dir, sub, q))]
    return min(lens)


def make_workload(spec: dict, args, log) -> dict:
    """Write (or reuse) the workload's graph and reads under ``args.work``; returns
    {gfa, fq, n_reads, read_len, read_bases, graph_bases, params, ...}."""
    n = max(1, int(round(spec["n_reads"] * args.scale)))
    length = max(1, int(round(spec["read_len"] * args.read_len_scale)))
    note = None
    if spec["kind"] == "real":
        cap = _real_cap(spec["graph"], args.real_dir)
        if length > cap:
            note = f"read length {length:,} capped at {cap:,} bp, the shortest haplotype"
            length = cap
    tag = f"{spec['name']}_n{n}_L{length}_e{args.error:g}_s{args.seed}"
    d = os.path.join(args.work, tag)
    made = os.path.join(d, "made.json")
    if os.path.exists(made):
        with open(made) as fh:
            wl = json.load(fh)
        log(f"{spec['name']}: reusing {d}")
        return wl
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(d)
    t = time.perf_counter()
    gfa, fq = os.path.join(d, "graph.gfa"), os.path.join(d, "reads.fq")
    if spec["kind"] == "sim":
        from s2g.simulate import sample_reads, snp_graph, write_reads
        g, ref = snp_graph(spec["graph"], 50, 2, args.seed)
        g.write_gfa(gfa, ref)
        reads = sample_reads(g, n, length, args.error, 0.5, args.seed + 1)
        write_reads(reads, fq, os.path.join(d, "truth.tsv"))
        params = dict(source="s2g.simulate.snp_graph + sample_reads", total_bases=spec["graph"],
                      node_len=50, branching=2, graph_seed=args.seed, reads_seed=args.seed + 1,
                      reverse_fraction=0.5)
        lens = [len(s) for _, s, _ in reads]
        subs = sum(t_["substitutions"] for _, _, t_ in reads)
    else:
        import numpy as np
        sub, gfa_name, _q, brk = harness._REAL[spec["graph"]]
        if brk:
            raise ValueError(f"{spec['graph']} is cyclic; this benchmark runs acyclic graphs only")
        shutil.copyfile(os.path.join(args.real_dir, sub, gfa_name), gfa)  # index/cache beside it
        wl = harness.real_workload(d, spec["graph"], args.real_dir, n, length, args.seed + 7)
        rng = np.random.default_rng(args.seed + 8)
        recs, lens, subs = [], [], 0
        for name, seq in harness._fq_records(wl.fq):
            s, k = add_substitutions(seq, args.error, rng)
            recs.append((name, s))
            lens.append(len(s))
            subs += k
        harness._write_fq(fq, recs)
        os.unlink(wl.fq)
        params = dict(wl.params, source=os.path.join(args.real_dir, sub, gfa_name),
                      reads_seed=args.seed + 7, errors_seed=args.seed + 8)
    from s2g import load_graph
    graph_bases = int(load_graph(gfa).n_bases)     # DP columns, both strands (harness's cells)
    wl = {"name": spec["name"], "kind": spec["kind"], "gfa": gfa, "fq": fq, "n_reads": n,
          "read_len": length, "read_len_min": min(lens), "read_len_max": max(lens),
          "read_bases": int(sum(lens)), "graph_bases": graph_bases,
          "error": {"rate": args.error, "model": "substitutions only (s2g.simulate's model)",
                    "substitutions": int(subs)},
          "params": params, "note": note, "seconds_to_make": round(time.perf_counter() - t, 2)}
    with open(made, "w") as fh:
        json.dump(wl, fh, indent=1)
    log(f"{spec['name']}: wrote {n:,} reads of {length:,} bp and a graph of {graph_bases:,} DP "
        f"columns in {wl['seconds_to_make']} s ({d})")
    return wl


# --------------------------------------------------------------------------- running


def _env():
    return dict(os.environ, PYTHONUNBUFFERED="1",
                PYTHONPATH=os.pathsep.join([REPO] + [p for p in sys.path if p]))


def run_cli(argv: list, timeout: float, log_path: str | None = None) -> dict:
    """Run one command in its own process group; {status: ok|error|timeout, rc,
    process_s, stderr, stdout}. A run past ``timeout`` gets SIGTERM (the CLI cleans up),
    then SIGKILL after 10 s, and is recorded as ``timeout`` with what it printed."""
    t = time.perf_counter()
    try:
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             cwd=REPO, env=_env(), start_new_session=True)
    except OSError as exc:
        return {"status": "error", "rc": None, "process_s": 0.0, "stderr": str(exc), "stdout": "",
                "reason": f"could not start: {exc}"}
    status = "ok"
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        status = "timeout"
        for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 30)):
            try:
                os.killpg(p.pid, sig)
            except ProcessLookupError:
                break
            try:
                out, err = p.communicate(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                out, err = "", ""
    dt = time.perf_counter() - t
    if log_path:
        with open(log_path, "a") as fh:
            fh.write(f"$ {shlex.join(argv)}\n{err}")
            fh.write(f"# {status}, exit {p.returncode}, {dt:.2f} s\n")
    rec = {"status": status, "rc": p.returncode, "process_s": round(dt, 3), "stderr": err or "",
           "stdout": out or ""}
    if status == "ok" and p.returncode != 0:
        rec["status"] = "error"
        lines = [x for x in (err or "").strip().splitlines() if x.strip()]
        rec["reason"] = f"exit {p.returncode}: {lines[-1] if lines else '(no stderr)'}"
    elif status == "timeout":
        rec["reason"] = f"killed after the {timeout:g} s timeout"
    return rec


def _prefix_fq(fq: str, k: int) -> str:
    path = f"{fq[:-3]}.first{k}.fq"
    if not os.path.exists(path):
        with open(fq) as src, open(path + ".tmp", "w") as dst:
            for i, line in enumerate(src):
                if i >= 4 * k:
                    break
                dst.write(line)
        os.replace(path + ".tmp", path)
    return path


def align_argv(wl, mode, args, fq, gaf, index=None) -> list:
    a = [sys.executable, "-m", "s2g", "align", wl["gfa"], fq, "-o", gaf, "--variant", args.variant,
         "--timings", "--no-progress"]
    if mode == "full":
        a += ["--exact", "--no-traceback"]
    elif mode == "full-tb":
        a += ["--exact"]
    elif mode == "seeded":
        a += ["--seeded", "--index", index]
    else:
        raise ValueError(mode)
    if args.no_graph_cache:
        a.append("--no-graph-cache")
    return a + shlex.split(args.align_args or "")


def _short(argv) -> str:
    """The command as a user would type it (``s2g ...``), for records and tables."""
    i = argv.index("s2g") if "s2g" in argv else 0
    return "s2g " + shlex.join(argv[i + 1:]) if i else shlex.join(argv)


class Clock:
    def __init__(self, limit):
        self.t0 = time.monotonic()
        self.limit = limit

    def left(self):
        return None if self.limit is None else self.limit - (time.monotonic() - self.t0)

    def timeout(self, per_run):
        """Seconds the next run may take: ``per_run``, cut to what --time-limit leaves;
        None when that is under 5 s (the run is skipped)."""
        left = self.left()
        if left is None:
            return per_run
        return None if left < 5 else min(per_run, left)


def _mode_record(wl, mode, run, args):
    rec = {"mode": mode, "title": MODE_TITLES[mode], "status": run["status"], "rc": run["rc"],
           "process_s": run["process_s"], "command": run.get("command")}
    if run.get("reason"):
        rec["reason"] = run["reason"]
    t = parse_timings(run["stderr"])
    rec["timings"] = t
    rec["stderr_tail"] = run["stderr"].strip().splitlines()[-12:]
    if run["status"] != "ok":
        return rec
    rec["wall_s"] = t.get("wall_s", t.get("stage_wall_s"))
    # n / the CLI's wall (its printed reads/s has 0-1 decimals: 0.04 reads/s reads "0.0")
    rec["reads_per_s"] = round(wl["n_reads"] / rec["wall_s"], 4) if rec["wall_s"] else None
    rec["cli_reads_per_s"] = t.get("reads_per_s")
    rec["process_reads_per_s"] = round(wl["n_reads"] / max(run["process_s"], 1e-9), 3)
    st = t.get("stages", {})
    rec["stages"] = st
    rec["graph_cache_hit"] = t.get("graph_cache_hit")
    if mode in ("full", "full-tb"):
        cells = wl["graph_bases"] * wl["read_bases"]
        rec["cells"] = cells
        if st.get("align"):
            rec["align_gcups"] = round(cells / st["align"] / 1e9, 4)
        if rec["wall_s"]:
            rec["wall_gcups"] = round(cells / rec["wall_s"] / 1e9, 4)
    lw = t.get("long_window")
    rec["kernel_gcups"] = lw["gcups"] if lw else None
    fk = t.get("fast_kernel")
    rec["fwd_kernel_gcups"] = fk["gcups"] if fk else None
    if fk and rec.get("wall_gcups"):     # #15's measure: end to end / kernel-only, same run
        rec["wall_per_kernel"] = round(rec["wall_gcups"] / fk["gcups"], 4)
    for k in ("peak_rss_mb", "gpu_peak_mb", "pinned_peak_mb"):
        rec[k] = t.get(k)
    if not t.get("stages"):
        rec["status"] = "error"
        rec["reason"] = "no '--timings' lines on stderr"
    return rec


def _gaf_check(rec, gaf, n):
    try:
        lines = gaf_records(gaf)
    except OSError as exc:
        rec["gaf"] = {"lines": None, "expected": n, "ok": False, "reason": str(exc)}
        return None
    names_ok = all(x.split("\t", 1)[0] for x in lines)
    rec["gaf"] = {"path": gaf, "lines": len(lines), "expected": n, "ok": len(lines) == n and names_ok}
    if not rec["gaf"]["ok"] and rec["status"] == "ok":
        rec["status"] = "bad-output"
        rec["reason"] = f"GAF has {len(lines)} lines for {n} reads"
    return lines


def _meta(args):
    gpu = None
    try:
        p = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=30)
        if p.returncode == 0 and p.stdout.strip():
            gpu = p.stdout.strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError):
        pass
    return {"device": gpu.split(",")[0].strip() if gpu else "cpu", "nvidia_smi": gpu,
            "cpu": f"{harness.cpu_name()} ({os.cpu_count()} threads)",
            "commit": args.commit or harness.git_commit(),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "command": "python -m bench.long_reads " + shlex.join(args.argv)}


def _write_json(out, name, doc):
    tmp = os.path.join(out, f".{name}.json.tmp")
    with open(tmp, "w") as fh:
        json.dump(doc, fh, indent=1, default=harness._json_default)
    os.replace(tmp, os.path.join(out, f"{name}.json"))


def run_workload(name, args, meta, clock, log) -> dict:
    spec = workload_spec(name)
    doc = dict(meta, benchmark="long_reads", workload=name, variant=args.variant,
               modes=list(args.modes), scale=args.scale, read_len_scale=args.read_len_scale,
               timeout_s=args.timeout, warm_reads=args.warm_reads, complete=False, results={})
    out = args.out
    rlog = os.path.join(out, f"{name}.log")
    try:
        wl = make_workload(spec, args, log)
    except Exception as exc:       # data missing, a bad name: recorded, the others go on
        doc.update(status="error", reason=f"workload not made: {type(exc).__name__}: {exc}",
                   complete=True)
        log(f"{name}: {doc['reason']}")
        _write_json(out, name, doc)
        return doc
    doc["workload_info"] = {k: v for k, v in wl.items() if k not in ("gfa", "fq")}
    doc["files"] = {"gfa": wl["gfa"], "fq": wl["fq"]}
    _write_json(out, name, doc)
    index = os.path.splitext(wl["gfa"])[0] + ".s2gi"
    if "seeded" in args.modes:
        argv = [sys.executable, "-m", "s2g", "index", wl["gfa"], "-o", index]
        if args.no_graph_cache:
            argv.append("--no-graph-cache")
        to = clock.timeout(args.timeout)
        if to is None:
            doc["index"] = {"status": "skipped", "reason": "--time-limit reached", "command": _short(argv)}
        else:
            log(f"{name}: s2g index")
            r = run_cli(argv, to, rlog)
            doc["index"] = {"status": r["status"], "command": _short(argv), "process_s": r["process_s"],
                            **parse_index(r["stderr"]), "reason": r.get("reason"),
                            "stderr_tail": r["stderr"].strip().splitlines()[-5:]}
            log(f"{name}: index {r['status']}, {r['process_s']:.2f} s"
                + (f": {r['reason']}" if r.get("reason") else ""))
        _write_json(out, name, doc)
    gafs = {}
    for mode in args.modes:
        gaf = os.path.join(os.path.dirname(wl["gfa"]), f"{mode}.gaf")
        if os.path.exists(gaf):
            os.unlink(gaf)
        if mode == "seeded" and doc["index"]["status"] != "ok":
            doc["results"][mode] = {"mode": mode, "title": MODE_TITLES[mode], "status": "skipped",
                                    "reason": f"index {doc['index']['status']}"}
            log(f"{name} {mode}: skipped (no index)")
            _write_json(out, name, doc)
            continue
        warm = None
        if args.warm_reads > 0:
            to = clock.timeout(args.timeout)
            if to is not None:
                k = min(args.warm_reads, wl["n_reads"])
                wargv = align_argv(wl, mode, args, _prefix_fq(wl["fq"], k),
                                   os.path.join(os.path.dirname(wl["gfa"]), "warm.gaf"), index)
                log(f"{name} {mode}: warm-up on {k} read(s)")
                w = run_cli(wargv, to, rlog)
                warm = {"reads": k, "status": w["status"], "process_s": w["process_s"],
                        "command": _short(wargv), "reason": w.get("reason")}
                if w["status"] != "ok":
                    log(f"{name} {mode}: warm-up {w['status']}: {w.get('reason')}")
        argv = align_argv(wl, mode, args, wl["fq"], gaf, index)
        to = clock.timeout(args.timeout)
        if to is None:
            rec = {"mode": mode, "title": MODE_TITLES[mode], "status": "skipped",
                   "reason": "--time-limit reached", "command": _short(argv)}
        elif warm and warm["status"] == "timeout":     # the whole run would time out too
            rec = {"mode": mode, "title": MODE_TITLES[mode], "status": "skipped",
                   "reason": f"its warm-up on {warm['reads']} read(s) timed out", "command": _short(argv)}
        else:
            log(f"{name} {mode}: {_short(argv)}")
            run = run_cli(argv, to, rlog)
            run["command"] = _short(argv)
            rec = _mode_record(wl, mode, run, args)
            if run["status"] == "timeout":
                rec["timeout_s"] = round(to, 1)
            if run["status"] == "ok":
                gafs[mode] = _gaf_check(rec, gaf, wl["n_reads"])
        rec["warmup"] = warm
        doc["results"][mode] = rec
        log(f"{name} {mode}: " + _summary(rec))
        _write_json(out, name, doc)
    if gafs.get("full-tb") is not None and gafs.get("seeded") is not None:
        doc["agreement"] = dict(compare_gaf(gafs["full-tb"], gafs["seeded"]),
                                a="full-tb", b="seeded")
        ag = doc["agreement"]
        log(f"{name}: seeded vs full-tb: {ag['same_alignment_frac']:.4f} same alignment, "
            f"{ag['same_score_frac']:.4f} same score, {ag['identical_lines_frac']:.4f} identical lines")
    doc["complete"] = True
    doc["status"] = "ok" if all(r.get("status") == "ok" for r in doc["results"].values()) else "partial"
    _write_json(out, name, doc)
    return doc


def _summary(rec) -> str:
    if rec.get("status") != "ok":
        return f"{rec.get('status')}: {rec.get('reason', '')}"
    st = rec.get("stages", {})
    s = (f"ok, wall {rec['wall_s']:.2f} s ({rec['process_s']:.2f} s process), "
         f"{rec['reads_per_s']:,.2f} reads/s; align {st.get('align', 0):.2f} s")
    if "traceback" in st:
        s += f", traceback {st['traceback']:.2f} s"
    if rec.get("align_gcups"):
        s += f"; {rec['align_gcups']:,.2f} GCUPS (align stage)"
    if rec.get("kernel_gcups") is not None:
        s += f"; long-window kernel {rec['kernel_gcups']:,.1f} GCUPS"
    if rec.get("peak_rss_mb") is not None:
        s += f"; peak RSS {rec['peak_rss_mb']:,.0f} MB"
    if rec.get("gpu_peak_mb") is not None:
        s += f", GPU buffers {rec['gpu_peak_mb']:,.0f} MB"
    return s


# --------------------------------------------------------------------------- report


def load_docs(folder) -> list:
    docs = []
    for f in sorted(os.listdir(folder)):
        if not f.endswith(".json") or f.startswith("."):
            continue
        try:
            with open(os.path.join(folder, f)) as fh:
                d = json.load(fh)
        except (OSError, json.JSONDecodeError):
            continue
        if isinstance(d, dict) and d.get("benchmark") == "long_reads":
            docs.append(d)
    order = list(DEFAULT_WORKLOADS)
    return sorted(docs, key=lambda d: (order.index(d["workload"]) if d["workload"] in order
                                       else len(order), d["workload"]))


def _f(x, nd=2):
    if x is None:
        return "–"
    if isinstance(x, float):
        if 0 < abs(x) < 0.1:
            return f"{x:.3g}"
        return f"{x:,.{nd}f}"
    if isinstance(x, int):
        return f"{x:,}"
    return str(x)


def markdown(docs) -> str:
    lines = ["# Long-read workloads (`python -m bench.long_reads`)", "",
             "Each mode is one `s2g align --timings` process (`python -m s2g`): *wall* and "
             "*reads/s* are what the CLI prints (from its start of work to the GAF written); "
             "*process s* adds interpreter start and imports. *cells* = DP columns (both strands) "
             "x read bases (bench/harness.py); *align GCUPS* = cells / the `align` stage's "
             "seconds (host clock: launches, transfers and DP); *fwd kernel GCUPS*: the full-graph "
             "DP kernel's own rate (the CLI's `fast kernel` line: CUDA events around its "
             "launches), *wall / kernel* = cells / wall over that rate (#15's end-to-end "
             "measure); *tb kernel GCUPS* only where the "
             "CLI prints it (the GPU long-window kernel line: seeded windows, and the traceback "
             "windows of full-tb); *peak RSS* and *GPU buffers* (the most the reused device "
             "buffers held at once) as the CLI's `s2g: memory:` line prints them. Errors: "
             "substitutions only. *seeded = full-tb*: share of reads whose GAF lines are equal "
             "but for MAPQ (and whose AS:i is equal).", ""]
    hdr = ("| workload | device | DP columns | reads x bp | mode | status | wall s | reads/s | "
           "process s | align s | traceback s | align GCUPS | fwd kernel GCUPS | wall / kernel | "
           "tb kernel GCUPS | peak RSS MB | GPU buffers MB | GAF lines |")
    lines += [hdr, "|---|---|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
              "---:|---:|---|"]
    notes = []
    for d in docs:
        wi = d.get("workload_info") or {}
        rb = f"{wi.get('n_reads', 0):,} x {wi.get('read_len', 0):,}" if wi else "–"
        if not d.get("results"):
            lines.append(f"| {d['workload']} | {d.get('device', '–')} | – | – | – | "
                         f"{d.get('status', '–')}: {str(d.get('reason', '')).replace('|', '/')} "
                         "| – | – | – | – | – | – | – | – | – | – | – | – |")
        for mode in [m for m in MODES if m in d.get("results", {})]:
            r = d["results"][mode]
            st = r.get("stages", {})
            status = r.get("status")
            if status != "ok":
                status = f"{status}: {str(r.get('reason', '')).replace('|', '/')}"
            g = r.get("gaf") or {}
            gl = f"{g['lines']:,}/{g['expected']:,}" if g.get("lines") is not None else "–"
            lines.append(
                f"| {d['workload']} | {d.get('device', '–')} | {_f(wi.get('graph_bases'))} | {rb} | "
                f"{mode} | {status} | {_f(r.get('wall_s'))} | {_f(r.get('reads_per_s'))} | "
                f"{_f(r.get('process_s'))} | {_f(st.get('align'))} | {_f(st.get('traceback'))} | "
                f"{_f(r.get('align_gcups'))} | {_f(r.get('fwd_kernel_gcups'), 1)} | "
                f"{_f(r.get('wall_per_kernel'), 3)} | {_f(r.get('kernel_gcups'), 1)} | "
                f"{_f(r.get('peak_rss_mb'), 0)} | {_f(r.get('gpu_peak_mb'), 0)} | {gl} |")
        if wi.get("note"):
            notes.append(f"{d['workload']}: {wi['note']}")
    lines += ["", "| workload | index s (build) | seeds | seeded = full-tb (alignment) | "
              "same AS:i | identical lines | commit | date | scale |",
              "|---|---:|---:|---:|---:|---:|---|---|---|"]
    for d in docs:
        ix = d.get("index") or {}
        ag = d.get("agreement") or {}
        ixs = (f"{_f(ix.get('process_s'))} ({_f(ix.get('build_s'))})" if ix.get("status") == "ok"
               else (ix.get("status") or "–"))
        lines.append(f"| {d['workload']} | {ixs} | {_f(ix.get('seeds'))} | "
                     f"{_f(ag.get('same_alignment_frac'), 4)} | {_f(ag.get('same_score_frac'), 4)} | "
                     f"{_f(ag.get('identical_lines_frac'), 4)} | `{d.get('commit')}` | {d.get('date')} | "
                     f"{d.get('scale')} x reads, {d.get('read_len_scale')} x length |")
    cmds = sorted({d.get("command", "") for d in docs})
    lines += ["", "Commands: " + "; ".join(f"`{c}`" for c in cmds)]
    if notes:
        lines += ["", "Notes: " + "; ".join(notes) + "."]
    return "\n".join(lines) + "\n"


def plot(docs, path) -> bool:
    """reads/s and GCUPS per workload and mode (grouped bars, log scale). Raises
    ImportError without matplotlib; False when nothing ran."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [d["workload"] for d in docs]
    ok = {(d["workload"], m): r for d in docs for m, r in d.get("results", {}).items()
          if r.get("status") == "ok"}
    if not ok:
        return False
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.4))
    series = [
        (axes[0], [(m, "reads_per_s", m) for m in MODES], "reads/s (CLI wall clock)"),
        (axes[1], [("full", "align_gcups", "full: align stage"),
                   ("full-tb", "align_gcups", "full-tb: align stage"),
                   ("full-tb", "kernel_gcups", "full-tb: long-window kernel (traceback)"),
                   ("seeded", "kernel_gcups", "seeded: long-window kernel")], "GCUPS"),
    ]
    for ax, ss, ylabel in series:
        w = 0.8 / len(ss)
        for i, (mode, key, label) in enumerate(ss):
            ys = [(ok.get((n, mode)) or {}).get(key) or 0 for n in names]
            bars = ax.bar([j + i * w for j in range(len(names))], ys, w, label=label, color=f"C{i}")
            for b, y in zip(bars, ys):
                if y:
                    ax.annotate(f"{y:,.3g}", (b.get_x() + b.get_width() / 2, y), ha="center",
                                va="bottom", fontsize=6)
        for j, n in enumerate(names):      # runs that did not finish: say so on the axis
            for i, (mode, _k, _l) in enumerate(ss):
                if any(m == mode for m, _, _ in ss[:i]):
                    continue                       # one mark per mode
                d = next(x for x in docs if x["workload"] == n)
                r = d.get("results", {}).get(mode)
                if r and r.get("status") != "ok":
                    ax.annotate(r.get("status"), (j + i * w, 0), xycoords=("data", "axes fraction"),
                                ha="center", va="bottom", fontsize=6, rotation=90, color="red")
        ax.set_xticks([j + 0.4 - w / 2 for j in range(len(names))])
        ax.set_xticklabels(names, rotation=20, fontsize=8)
        hs = [b_.get_height() for b_ in ax.patches if b_.get_height() > 0]
        if hs and max(hs) / min(hs) > 20:         # log only where the bars span decades
            ax.set_yscale("log")
        ax.set_ylabel(ylabel)
        ax.grid(True, axis="y", which="both", alpha=0.3)
        ax.legend(fontsize=7)
    axes[0].set_title("End to end (s2g align --timings)", fontsize=10)
    axes[1].set_title("GCUPS (full DP: cells / align stage; kernel: the CLI's line)", fontsize=10)
    devs = sorted({d.get("device", "?") for d in docs})
    commits = sorted({str(d.get("commit")) for d in docs})
    fig.suptitle(f"{', '.join(devs)} — variant {', '.join(sorted({d.get('variant', '?') for d in docs}))}"
                 f" — commit {', '.join(commits)}", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write_report(folder, log, plots=True) -> int:
    docs = load_docs(folder)
    if not docs:
        log(f"no long_reads JSON in {folder}: nothing to report")
        return 1
    md = os.path.join(folder, "long_reads.md")
    with open(md, "w") as fh:
        fh.write(markdown(docs))
    log(f"wrote {md}")
    if not plots:
        return 0
    png = os.path.join(folder, "long_reads.png")
    try:
        if plot(docs, png):
            log(f"wrote {png}")
        else:
            log("no run finished: no long_reads.png")
    except ImportError:
        log("matplotlib is not installed (pip install 'matplotlib>=3.6', or the project's "
            "[bench] extra): skipped long_reads.png; the table is in long_reads.md")
    return 0


# --------------------------------------------------------------------------- driver


def _default_real_dir():
    """../shared/data/real, else the copies in tests/data/real (C4 and DRB1 are there,
    uncompressed), .realdata or .benchdata/real (carried to the GPU machine)."""
    for d in (os.path.join(REPO, "..", "shared", "data", "real"), os.path.join(REPO, "tests", "data", "real"),
              os.path.join(REPO, ".realdata"), os.path.join(REPO, ".benchdata", "real")):
        if os.path.isdir(d):
            return os.path.normpath(d)
    return os.path.normpath(os.path.join(REPO, "..", "shared", "data", "real"))


def build_parser():
    epilog = ("workloads (default: all of these):\n" + "\n".join(
        f"  {n:<12} {('simulated SNP graph of ' + f'{g:,}' + ' bp') if k == 'sim' else 'real graph ' + g}"
        f", {r:,} reads x {length:,} bp" for n, (k, g, r, length) in DEFAULT_WORKLOADS.items())
        + "\n  also sim<BASES>_<LEN> (e.g. sim10M_10k) and <C4|DRB1>_<LEN> (e.g. C4_50k)"
        "\n\nexample (CPU, tiny): python -m bench.long_reads --variant simd --scale 0.01 "
        "--read-len-scale 0.1 --workloads sim100k_10k,C4_10k --out /tmp/lr")
    ap = argparse.ArgumentParser(
        description="\n\n".join(__doc__.split("\n\n")[:4]),
        epilog=epilog, formatter_class=type("F", (argparse.ArgumentDefaultsHelpFormatter,
                                                  argparse.RawDescriptionHelpFormatter), {}))
    ap.add_argument("--workloads", default=",".join(DEFAULT_WORKLOADS),
                    help="comma-separated workload names (see below)")
    ap.add_argument("--modes", default=",".join(MODES),
                    help="comma-separated subset of: full (--exact --no-traceback), full-tb "
                         "(--exact), seeded (--seeded, after 's2g index')")
    ap.add_argument("--variant", default="fast",
                    help="s2g align --variant (fast on a GPU; simd or cpu on a CPU machine)")
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every workload's read count")
    ap.add_argument("--read-len-scale", type=float, default=1.0,
                    help="multiply every workload's read length (e.g. 0.1 for a CPU test)")
    ap.add_argument("--error", type=float, default=0.05, help="substitution rate per base")
    ap.add_argument("--seed", type=int, default=0,
                    help="graph seed (reads: +1; real reads: +7, their errors: +8)")
    ap.add_argument("--timeout", type=float, default=300,
                    help="seconds per s2g process; a run over it is killed and recorded as timeout")
    ap.add_argument("--time-limit", type=float, default=None,
                    help="seconds for this whole call: runs are cut to what is left, and none "
                         "starts with less than 5 s left (recorded as skipped)")
    ap.add_argument("--warm-reads", type=int, default=4,
                    help="untimed run of each mode on this many reads first (compile caches); 0: none")
    ap.add_argument("--no-graph-cache", action="store_true",
                    help="pass --no-graph-cache to s2g (time GFA parsing in every run)")
    ap.add_argument("--align-args", default="",
                    help="more s2g align options for every run, one string (e.g. '--threads 16')")
    ap.add_argument("--out", default="long_reads_out", help="folder for <workload>.json, logs, "
                                                           "long_reads.md and long_reads.png")
    ap.add_argument("--work", default=os.path.join("/tmp", "s2g-long-reads"),
                    help="folder for graphs, reads, indexes and GAF (reused when the parameters match)")
    ap.add_argument("--real-dir", default=_default_real_dir(),
                    help="the real graphs (../shared/data/real layout; default: the first of "
                         "../shared/data/real, tests/data/real, .realdata, .benchdata/real)")
    ap.add_argument("--commit", default=None, help="commit to record (None: git rev-parse HEAD)")
    ap.add_argument("--no-plot", action="store_true", help="long_reads.md only")
    ap.add_argument("--report-only", metavar="DIR", default=None,
                    help="only redraw long_reads.md and long_reads.png from DIR/*.json")
    return ap


def main(argv=None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)

    def log(msg):
        print(f"[{time.strftime('%H:%M:%S')}] long_reads: {msg}", file=sys.stderr, flush=True)

    if args.report_only:
        return write_report(args.report_only, log, plots=not args.no_plot)
    args.modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    bad = [m for m in args.modes if m not in MODES]
    names = [w.strip() for w in args.workloads.split(",") if w.strip()]
    try:
        for n in names:
            workload_spec(n)
    except ValueError as exc:
        ap.error(str(exc))
    if bad or not args.modes:
        ap.error(f"unknown mode(s) {', '.join(bad) or '(none)'}; choose from {', '.join(MODES)}")
    if args.scale <= 0 or args.read_len_scale <= 0 or args.timeout <= 0:
        ap.error("--scale, --read-len-scale and --timeout must be > 0")
    os.makedirs(args.out, exist_ok=True)
    os.makedirs(args.work, exist_ok=True)
    args.out, args.work = os.path.abspath(args.out), os.path.abspath(args.work)
    args.real_dir = os.path.abspath(args.real_dir)
    meta = _meta(args)
    log(f"device {meta['device']}; cpu {meta['cpu']}; commit {meta['commit']}; variant {args.variant}; "
        f"modes {', '.join(args.modes)}; out {args.out}")
    clock = Clock(args.time_limit)
    failed = 0
    for name in names:
        doc = run_workload(name, args, meta, clock, log)
        failed += doc.get("status") != "ok"
    write_report(args.out, log, plots=not args.no_plot)
    log(f"done in {time.monotonic() - clock.t0:.0f} s; {len(names) - failed} of {len(names)} "
        f"workload(s) with every run ok")
    return 0 if not failed else 3


if __name__ == "__main__":
    sys.exit(main())
