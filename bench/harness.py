"""Benchmark harness: workloads, measurement protocol, JSON records.

Usage (from the repository root)::

    python -m bench                       # full suite, every variant this machine can run
    python -m bench --quick               # tiny sizes, CPU variants (what CI runs)
    python -m bench --experiments n_reads,real --variants v0,cpu,fast
    python -m bench --report-only bench/results/<device>   # tables + plots from JSON
    s2g bench ...                         # the same options

Measurement protocol (STYLE.md habit 11, ARCHITECTURE.md "Measuring")
--------------------------------------------------------------------
* Workloads come from :mod:`s2g.simulate` with fixed seeds (graph seed 0 + the
  point's index, reads seed + 1), written as GFA + FASTQ, so the end-to-end time
  includes parsing exactly as ``s2g align`` does.
* **cells** = (bases in the DP, both strands) x (read length), summed over the reads
  timed. **GCUPS** = cells / kernel_s / 1e9.
* **Sizing**: one call on 1 read compiles (JIT) and warms up; the read count then
  grows until one call takes about ``--budget`` seconds or the workload is used up.
  A variant that would take too long on the whole workload (V0 above all) is timed
  on that prefix of the reads (``subsampled: true``; ``n_reads`` is what was timed,
  ``n_reads_workload`` what the point asked for). Its GCUPS is still cells / time.
* **kernel_s** (``timing: "cuda-events"``): CUDA events around the kernel launches
  only, transfers excluded. Two hooks, read from the variant modules: ``fast``'s
  ``run_kernel(graph, codes, offsets, lengths, scoring, mode, events=(start, stop))``;
  V1-V4 publish the kernel time of their last ``align_batch`` as ``last_kernel_ms``
  (module or ``s2g.variants._cuda_common``), which the harness resets to -1 before
  each call. A variant without a hook, and every CPU variant, is timed with a host
  clock around ``align_batch`` (scores and end cells) after a device synchronize
  (``timing: "host"``). ``host_call_s`` (whole call, transfers included) is kept too.
* **e2e_s**: ``load_graph`` + ``read_reads`` + ``s2g.align(traceback=True)`` +
  ``write_gaf`` to a file, after one warm-up, on the first ``e2e_n_reads`` reads
  (scaled down like the kernel subsample when the traceback is slow).
* Median of ``--reps`` (>= 5) repetitions, with min and max, for both.
* **Correctness first**: each variant's scores on the first ``check.n_reads`` reads
  are compared with V0's on the same reads; any difference makes the record
  ``status: "failed"`` with no timing.
* The peer (abPOA, :mod:`bench.peer`) runs on the same reads, in a subprocess.

Records are written per experiment to ``<out>/<experiment>.json`` as soon as the
experiment finishes; :mod:`bench.report` draws RESULTS.md, HEADLINE.md and PNGs.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPERIMENTS = ("n_reads", "read_length", "real", "branching", "node_length")
_COMP = str.maketrans("ACGTacgtN", "TGCAtgcaN")

# --------------------------------------------------------------------------- plans


def plan(quick: bool) -> dict:
    """Points of every experiment. Full sizes fit ~7 minutes on an H100 (all variants)."""
    if quick:
        return {
            "graph": dict(total_bases=600, node_len=50, branching=2),
            "n_reads": dict(read_len=48, counts=[4, 16]),
            "read_length": dict(n_reads=8, lengths=[32, 96]),
            "branching": dict(total_bases=600, n_reads=8, read_len=48, values=[2, 6]),
            "node_length": dict(total_bases=600, n_reads=8, read_len=48, values=[20, 100]),
            "real": dict(n_reads=4, read_len=64, graphs=["cactus_brca2_repo"]),
        }
    return {
        # the HGA methodology's 20 kbp SNP graph (40 kbp in the DP: both strands)
        "graph": dict(total_bases=20_000, node_len=50, branching=2),
        "n_reads": dict(read_len=150, counts=[64, 128, 256, 1024, 4096, 16384]),
        "read_length": dict(n_reads=256, lengths=[64, 128, 256, 512, 1024, 2048, 4096, 8192]),
        "branching": dict(total_bases=20_000, n_reads=256, read_len=150,
                          values=[2, 4, 8, 16, 25]),
        "node_length": dict(total_bases=20_000, n_reads=256, read_len=150,
                            values=[57, 250, 1069]),
        "real": dict(n_reads=256, read_len=250,
                     graphs=["cactus_brca2_vg", "drb1_odgi", "mt_minigraph", "c4_gwfa", "lpa_odgi"]),
    }


# --------------------------------------------------------------------------- workloads


@dataclass
class Workload:
    experiment: str
    name: str                 # graph label in the records
    gfa: str
    fq: str
    n_reads: int
    read_len: int
    params: dict
    break_cycles: bool = False
    peer_gfa: str | None = None
    peer_reads: list | None = None
    peer_bases: int = 0
    peer_note: str = ""
    graph: object = None
    reads: object = None
    v0: dict = field(default_factory=dict)    # V0 reference: scores, per-read time, record
    peer: dict | None = None


def _fq_records(path):
    import dnaio
    with dnaio.open(path) as fh:
        return [(r.name, r.sequence) for r in fh]


def _write_fq(path, recs):
    with open(path, "w") as fh:
        for name, seq in recs:
            fh.write(f"@{name}\n{seq}\n+\n{'I' * len(seq)}\n")


def _peer_paths(g, branching):
    """One walk per allele index: allele t at every site (covers all nodes and edges)."""
    paths = []
    for t in range(max(1, branching)):
        v, p = 0, [0]
        while g.succ[v]:
            s = g.succ[v]
            v = s[t] if len(s) > t else s[0]
            p.append(v)
        paths.append(p)
    return paths


_GRAPH_CACHE: dict = {}


def sim_workload(experiment, wdir, tag, total_bases, node_len, branching, n_reads, read_len,
                 seed, params) -> Workload:
    from s2g.simulate import sample_reads, snp_graph, write_reads

    key = (total_bases, node_len, branching, seed)
    gname = f"snp{total_bases}_L{node_len:g}_b{branching}_s{seed}"
    if key not in _GRAPH_CACHE:
        g, ref = snp_graph(total_bases, node_len, branching, seed)
        gfa = os.path.join(wdir, gname + ".gfa")
        g.write_gfa(gfa, ref)
        pgfa = os.path.join(wdir, gname + ".peer.gfa")
        g.write_gfa(pgfa, paths={f"hap{t}": p for t, p in enumerate(_peer_paths(g, branching))})
        _GRAPH_CACHE[key] = (g, gfa, pgfa)
    g, gfa, pgfa = _GRAPH_CACHE[key]
    reads = sample_reads(g, n_reads, read_len, 0.01, 0.5, seed + 1)
    fq = os.path.join(wdir, f"{experiment}_{tag}.fq")
    write_reads(reads, fq)
    fwd = [s.translate(_COMP)[::-1] if t["strand"] == "-" else s for _, s, t in reads]
    n_nodes = len(g.seqs)
    params = dict(params, total_bases=total_bases, node_len=node_len, branching=branching,
                  seed=seed, segments=n_nodes, avg_node_len=round(g.total_bases / n_nodes, 2),
                  error_rate=0.01, reverse_fraction=0.5)
    return Workload(experiment, gname, gfa, fq, n_reads, read_len, params, peer_gfa=pgfa,
                    peer_reads=fwd, peer_bases=g.total_bases,
                    peer_note="abPOA graph restored from one path per allele index (all nodes "
                              "and edges, forward strand); reads in graph orientation")


_REAL = {
    # name: (directory, gfa, query files, break_cycles)
    "cactus_brca2_vg": ("cactus_brca2_vg", "cactus-BRCA2.gfa", ["cactus-BRCA2.fastq"], False),
    "drb1_odgi": ("drb1_odgi", "DRB1-3123.gfa", ["DRB1-3123.fa"], False),
    "mt_minigraph": ("mt_minigraph", "MT.gfa", ["MT-human.fa", "MT-chimp.fa", "MT-orangA.fa"], True),
    "c4_gwfa": ("c4_gwfa", "C4-90.gfa", ["C4-NA19240.1.fa", "C4-NA19240.2.fa"], False),
    "lpa_odgi": ("lpa_odgi", "LPA.gfa", ["LPA.fa"], True),
}


def _gfa_path_bases(path):
    """Bases of the distinct segments on P lines (what abPOA's restored graph holds)."""
    seglen, on_path = {}, set()
    with open(path) as fh:
        for line in fh:
            if line.startswith("S\t"):
                f = line.split("\t", 3)
                seglen[f[1]] = len(f[2].rstrip("\n"))
            elif line.startswith("P\t"):
                for s in line.split("\t")[2].split(","):
                    on_path.add(s[:-1])
    return sum(seglen.get(s, 0) for s in on_path), len(on_path), len(seglen)


def real_workload(wdir, name, data_dir, n_reads, read_len, seed) -> Workload:
    import numpy as np

    rng = np.random.default_rng(seed)
    if name == "cactus_brca2_repo":   # quick mode: the copy bundled in graphs/
        d, gfa_name, queries, brk = os.path.join(REPO, "graphs"), "cactus-BRCA2.gfa", \
            ["cactus-BRCA2.100.fq"], False
    else:
        sub, gfa_name, queries, brk = _REAL[name]
        d = os.path.join(data_dir, sub)
    gfa = os.path.join(d, gfa_name)
    if not os.path.exists(gfa):
        raise FileNotFoundError(f"{gfa} not found (--real-dir)")
    recs = [r for q in queries for r in _fq_records(os.path.join(d, q))]
    if queries[0].endswith(("fastq", "fq")):
        # real reads: a sample of them, as they are
        idx = rng.choice(len(recs), min(n_reads, len(recs)), replace=False)
        reads = [(f"{recs[i][0].split()[0]}", recs[i][1]) for i in sorted(idx)]
        fwd = [s for _, s in reads]
        how = f"{len(reads)} of the {len(recs)} reads shipped with the graph"
        rl = int(np.mean([len(s) for _, s in reads]))
    else:
        # substrings of the graph's own haplotypes, random strand, no added errors
        reads, fwd = [], []
        for r in range(n_reads):
            k = int(rng.integers(len(recs)))
            s = recs[k][1]
            p = int(rng.integers(0, max(1, len(s) - read_len)))
            sub_s = s[p:p + read_len].upper()
            fwd.append(sub_s)
            rev = rng.random() < 0.5
            reads.append((f"{name}_{r + 1}", sub_s.translate(_COMP)[::-1] if rev else sub_s))
        how = f"{n_reads} substrings of {read_len} bp of the {len(recs)} query sequences, random strand"
        rl = read_len
    fq = os.path.join(wdir, f"real_{name}.fq")
    _write_fq(fq, reads)
    pbases, pseg, nseg = _gfa_path_bases(gfa)
    has_paths = pseg > 0
    wl = Workload("real", name.replace("_repo", ""), gfa, fq, len(reads), rl,
                  dict(source=os.path.relpath(gfa, REPO) if gfa.startswith(REPO) else gfa,
                       reads=how, seed=seed, break_cycles=brk, segments=nseg),
                  break_cycles=brk)
    if has_paths:
        wl.peer_gfa, wl.peer_reads, wl.peer_bases = gfa, fwd, pbases
        wl.peer_note = (f"abPOA graph restored from the file's P lines ({pseg} of {nseg} segments, "
                        f"{pbases} bases, forward strand)")
    else:
        wl.peer_note = "graph has no P lines: abPOA cannot take it without an MSA of the haplotypes"
    return wl


def load(wl: Workload):
    from s2g import load_graph, read_reads
    wl.graph = load_graph(wl.gfa, break_cycles=wl.break_cycles)
    wl.reads = read_reads(wl.fq)
    return wl


def build_workloads(experiment, cfg, wdir):
    """Yield workloads of one experiment (lazily: each is generated when reached)."""
    p, g = cfg.plan[experiment], cfg.plan["graph"]
    if experiment == "n_reads":
        for n in p["counts"]:
            yield lambda n=n: sim_workload("n_reads", wdir, f"n{n}", g["total_bases"], g["node_len"],
                                           g["branching"], n, p["read_len"], 0, {"point": n})
    elif experiment == "read_length":
        for m in p["lengths"]:
            yield lambda m=m: sim_workload("read_length", wdir, f"m{m}", g["total_bases"], g["node_len"],
                                           g["branching"], p["n_reads"], m, 0, {"point": m})
    elif experiment == "branching":
        for i, b in enumerate(p["values"]):
            yield lambda b=b: sim_workload("branching", wdir, f"b{b}", p["total_bases"], 50, b,
                                           p["n_reads"], p["read_len"], 0, {"point": b})
    elif experiment == "node_length":
        for L in p["values"]:
            yield lambda L=L: sim_workload("node_length", wdir, f"L{L}", p["total_bases"], L, 2,
                                           p["n_reads"], p["read_len"], 0, {"point": L})
    elif experiment == "real":
        for name in p["graphs"]:
            yield lambda name=name: real_workload(wdir, name, cfg.real_dir, p["n_reads"],
                                                  p["read_len"], 7)
    else:
        raise ValueError(f"unknown experiment {experiment!r}; choose from {', '.join(EXPERIMENTS)}")


# --------------------------------------------------------------------------- environment


def _slug(s):
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")


def cpu_name():
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def git_commit():
    env = os.environ.get("S2G_COMMIT")
    if env:
        return env
    try:
        c = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=REPO, capture_output=True,
                           text=True, timeout=10)
        if c.returncode == 0:
            dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "s2g"],
                                   cwd=REPO, capture_output=True, text=True, timeout=10).stdout.strip()
            return c.stdout.strip() + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        pass
    return "unknown"


def versions():
    import numba
    import numpy
    import s2g
    out = {"python": platform.python_version(), "numpy": numpy.__version__, "numba": numba.__version__,
           "s2g": s2g.__version__}
    from importlib.metadata import PackageNotFoundError, version
    for pkg in ("numba-cuda", "pyabpoa", "dnaio"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = None
    return out


def host_info():
    from s2g.variants import registry
    ok, gpu = registry.cuda_available()
    cpu = f"{cpu_name()} ({os.cpu_count()} threads)"
    import numba
    return {"gpu": gpu if ok else None, "cpu": cpu, "numba_threads": numba.get_num_threads(),
            "platform": platform.platform(), "results_dir": _slug(gpu) if ok else "cpu-" + _slug(cpu_name())}


# --------------------------------------------------------------------------- measuring


def _cuda_sync(is_cuda):
    if is_cuda:
        from numba import cuda
        cuda.synchronize()


def _hooks(module):
    return [m for m in (module, sys.modules.get("s2g.variants._cuda_common"))
            if m is not None and hasattr(m, "last_kernel_ms")]


def _events_hook(module):
    """A variant's ``run_kernel(graph, codes, offsets, lengths, scoring, mode, events=...)``
    (fast exposes one): CUDA events recorded around its launch alone."""
    fn = getattr(module, "run_kernel", None)
    if fn is None:
        return None
    import inspect
    try:
        return fn if "events" in inspect.signature(fn).parameters else None
    except (TypeError, ValueError):
        return None


def _call(module, wl, reads, cfg, is_cuda):
    """One kernel run (score only): (host seconds, kernel seconds or None).

    Hooks, in order: the variant's ``run_kernel(..., events=(start, stop))``; else
    ``align_batch`` followed by ``last_kernel_ms`` (module or _cuda_common); else
    None (the caller uses the host time)."""
    fn = _events_hook(module) if is_cuda else None
    if fn is not None:
        from numba import cuda
        ev = (cuda.event(), cuda.event())
        cuda.synchronize()
        t0 = time.perf_counter()
        fn(wl.graph, reads.codes_flat, reads.offsets, reads.lengths(), cfg.scoring, cfg.mode, events=ev)
        cuda.synchronize()
        return time.perf_counter() - t0, cuda.event_elapsed_time(*ev) / 1e3
    hooks = _hooks(module)
    for h in hooks:
        h.last_kernel_ms = -1.0
    _cuda_sync(is_cuda)
    t0 = time.perf_counter()
    res = module.align_batch(wl.graph, reads, cfg.scoring, cfg.mode)
    _cuda_sync(is_cuda)
    t = time.perf_counter() - t0
    kern = None
    for h in _hooks(module) or hooks:
        v = getattr(h, "last_kernel_ms", -1.0)
        if isinstance(v, (int, float)) and v >= 0:
            kern = v / 1e3
            break
    return t, kern


_SUBSETS: dict = {}


def _subset(wl, k):
    key = (id(wl), k)
    if key not in _SUBSETS:
        _SUBSETS[key] = wl.reads if k == wl.reads.n_reads else wl.reads.subset(range(k))
    return _SUBSETS[key]


def _cells(wl, k):
    return int(wl.graph.n_bases) * int(wl.reads.lengths()[:k].sum())


def _threads():
    import numba
    return numba.get_num_threads()


def _stats(xs):
    return statistics.median(xs), min(xs), max(xs)


def _e2e_once(name, wl, fq, cfg, is_cuda, out_path):
    import s2g
    from s2g.gaf import write_gaf
    _cuda_sync(is_cuda)
    t0 = time.perf_counter()
    g = s2g.load_graph(wl.gfa, break_cycles=wl.break_cycles)
    rb = s2g.read_reads(fq)
    res = s2g.align(g, rb, cfg.scoring, cfg.mode, variant=name, traceback=True, method="exact")
    with open(out_path, "w") as fh:
        write_gaf(fh, g, res)
    _cuda_sync(is_cuda)
    return time.perf_counter() - t0


def _prefix_fq(wl, k, wdir):
    path = os.path.join(wdir, f"{os.path.basename(wl.fq)[:-3]}.first{k}.fq")
    if not os.path.exists(path):
        with open(wl.fq) as src, open(path, "w") as dst:
            for i, line in enumerate(src):
                if i >= 4 * k:
                    break
                dst.write(line)
    return path


def measure_e2e(name, wl, k, cfg, is_cuda):
    """Median/min/max end-to-end seconds and the read count they were taken on."""
    out = os.path.join(cfg.workdir, "e2e.gaf")
    _e2e_once(name, wl, _prefix_fq(wl, 1, cfg.workdir), cfg, is_cuda, out)   # warm-up (traceback JIT)
    ke = k
    if k > 1:
        fixed = _e2e_once(name, wl, _prefix_fq(wl, 1, cfg.workdir), cfg, is_cuda, out)
        t = _e2e_once(name, wl, _prefix_fq(wl, k, cfg.workdir), cfg, is_cuda, out)
    if k > 1 and t - fixed > cfg.budget:
        ke = max(1, int(k * cfg.budget / max(t - fixed, 1e-9)))
        _e2e_once(name, wl, _prefix_fq(wl, ke, cfg.workdir), cfg, is_cuda, out)
    ts = [_e2e_once(name, wl, _prefix_fq(wl, ke, cfg.workdir), cfg, is_cuda, out) for _ in range(cfg.reps)]
    return ts, ke


def v0_reference(wl, c, cfg):
    """V0 scores of the first c reads (computed once per workload, extended on demand)."""
    from s2g.variants import registry
    have = wl.v0.get("scores")
    if have is None or len(have) < c:
        mod = registry.get_variant("v0")
        res = mod.align_batch(wl.graph, _subset(wl, c), cfg.scoring, cfg.mode)
        wl.v0["scores"] = res.score.copy()
    return wl.v0["scores"][:c]


def base_record(wl, cfg, variant, device, mode_name="local"):
    return {
        "experiment": wl.experiment, "variant": variant, "mode": mode_name, "graph": wl.name,
        "graph_bases": int(wl.graph.n_bases), "graph_nodes": int(wl.graph.n_nodes),
        "n_reads_workload": wl.n_reads, "read_len": wl.read_len, "params": wl.params,
        "device": device, "commit": cfg.commit, "date": cfg.date, "versions": cfg.versions,
        "host": cfg.host, "command": cfg.command, "scoring": dict(vars(cfg.scoring)),
        "budget_s": cfg.budget,
    }


def measure_variant(name, wl, cfg) -> dict:
    from s2g.variants import registry

    info = registry.REGISTRY[name]
    is_cuda = info.device == "cuda"
    dev = cfg.host["gpu"] if is_cuda else cfg.host["cpu"]
    rec = base_record(wl, cfg, name, dev)
    if cfg.past_deadline():
        rec.update(status="skipped", reason="--time-limit reached")
        return rec
    try:
        module = registry.get_variant(name)
        n = wl.reads.n_reads
        # sizing; the first call compiles and warms up
        k = 1
        _call(module, wl, _subset(wl, k), cfg, is_cuda)
        t, _ = _call(module, wl, _subset(wl, k), cfg, is_cuda)
        prev = float("inf")
        # the CPU-parallel variant splits reads over threads: give every thread a read
        min_k = min(n, _threads()) if (not is_cuda and name != "v0") else 1
        while k < n and not cfg.past_deadline():
            # grow to the budget; past it only while time per read still falls by 30%
            # (parallel variants need reads to fill the cores / SMs), up to 4 budgets
            gaining = t / k < 0.7 * prev and t < 4 * cfg.budget
            if t >= cfg.budget / 2 and not gaining and not (k < min_k and t < 20 * cfg.budget):
                break
            prev = t / k
            k = min(n, max(2 * k, int(k * 0.7 * cfg.budget / max(t, 1e-6))))
            t, _ = _call(module, wl, _subset(wl, k), cfg, is_cuda)
        if name == "v0":
            wl.v0["per_read_s"] = t / k
        # correctness against V0 on the first c reads (c <= k: fits the budget)
        # V0's time per read (measured, or a 0.2 GCUPS prior when V0 is not timed here)
        per_read = wl.v0.get("per_read_s") or _cells(wl, 1) / 2e8
        c = min(k, cfg.check_reads if per_read * cfg.check_reads < cfg.check_budget
                else max(1, int(cfg.check_budget / max(per_read, 1e-9))))
        got = module.align_batch(wl.graph, _subset(wl, c), cfg.scoring, cfg.mode).score
        ref = v0_reference(wl, c, cfg) if name != "v0" else got
        if name == "v0":
            wl.v0["scores"] = got.copy()
        bad = [int(i) for i in (got != ref).nonzero()[0]]
        rec["check"] = {"against": "v0", "n_reads": int(c), "score_mismatches": len(bad),
                        "status": "ok" if not bad else "failed"}
        if bad:
            i = bad[0]
            rec.update(status="failed", n_reads=k,
                       reason=f"scores differ from V0 on {len(bad)} of {c} reads "
                              f"(first: read {wl.reads.names[i]}: {int(got[i])} vs V0 {int(ref[i])})")
            return rec
        reads = _subset(wl, k)
        runs = [_call(module, wl, reads, cfg, is_cuda) for _ in range(cfg.reps)]
        host = [r[0] for r in runs]
        kern = [r[1] for r in runs]
        timing = "cuda-events" if all(x is not None for x in kern) else "host"
        ks = kern if timing == "cuda-events" else host
        cells = _cells(wl, k)
        med, lo, hi = _stats(ks)
        rec.update(status="ok", n_reads=k, subsampled=k < n, cells=cells,
                   read_bases=int(reads.lengths().sum()), kernel_s=med,
                   kernel_min_s=lo, kernel_max_s=hi, reps=cfg.reps, timing=timing,
                   gcups=cells / med / 1e9, gcups_min=cells / hi / 1e9, gcups_max=cells / lo / 1e9,
                   host_call_s=statistics.median(host))
        if cfg.e2e:
            ts, ke = measure_e2e(name, wl, k, cfg, is_cuda)
            med, lo, hi = _stats(ts)
            rec.update(e2e_s=med, e2e_min_s=lo, e2e_max_s=hi, e2e_n_reads=ke,
                       e2e_reads_per_s=ke / med, e2e_gcups=_cells(wl, ke) / med / 1e9)
        else:
            rec.update(e2e_s=None)
        if name == "v0":
            wl.v0["record"] = rec
        return rec
    except Exception as exc:  # a variant's limit (memory, shared memory) must not stop the suite
        rec.update(status="error", reason=f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
        return rec


def measure_peer(wl, cfg) -> dict:
    from . import peer as peer_mod
    rec = base_record(wl, cfg, "abpoa", cfg.host["cpu"])
    rec.update(graph_bases=wl.peer_bases, graph_nodes=None, peer_graph=wl.peer_note,
               caveats=["abPOA aligns to one strand (s2g: both); compare GCUPS, not time per read",
                        "abPOA adds each read to its graph (no align-only call); cells counted on "
                        "the restored graph",
                        "abPOA also computes a CIGAR per read; its scores are not checked",
                        "single CPU thread, SIMD; adaptive band disabled (extra_b=-1)"],
               settings="pyabpoa msa_aligner(aln_mode='l', match=2, mismatch=4, gap_open1=4, "
                        "gap_ext1=2, gap_open2=0, gap_ext2=0, extra_b=-1); msa(reads, incr_fn=gfa)")
    ok, why = peer_mod.available()
    if not cfg.peer or not ok:
        rec.update(status="skipped", reason="--no-peer" if not cfg.peer else why)
        return rec
    if wl.peer_gfa is None:
        rec.update(status="skipped", reason=wl.peer_note)
        return rec
    if cfg.past_deadline():
        rec.update(status="skipped", reason="--time-limit reached")
        return rec
    job = {"gfa": wl.peer_gfa, "reads": wl.peer_reads, "reps": cfg.reps, "budget": cfg.budget,
           "scoring": dict(vars(cfg.scoring))}
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO] + [p for p in sys.path if p]))
    try:
        p = subprocess.run([sys.executable, "-m", "bench.peer"], input=json.dumps(job), text=True,
                           capture_output=True, cwd=REPO, env=env, timeout=max(60, 40 * cfg.budget))
    except subprocess.TimeoutExpired:
        rec.update(status="error", reason="abPOA timed out")
        return rec
    if p.returncode != 0 or not p.stdout.strip():
        msg = (p.stderr or p.stdout).strip().splitlines()
        rec.update(status="error", reason=f"abPOA exited with {p.returncode}: {msg[-1] if msg else ''}")
        return rec
    out = json.loads(p.stdout)
    k = out["n_reads"]
    lens = [len(s) for s in wl.peer_reads[:k]]
    cells = wl.peer_bases * sum(lens)
    med, lo, hi = _stats(out["kernel"])
    emed, elo, ehi = _stats(out["e2e"])
    rec.update(status="ok", n_reads=k, subsampled=k < len(wl.peer_reads), cells=cells,
               read_bases=sum(lens), kernel_s=med,
               kernel_min_s=lo, kernel_max_s=hi, reps=cfg.reps, timing="host",
               gcups=cells / med / 1e9, gcups_min=cells / hi / 1e9, gcups_max=cells / lo / 1e9,
               e2e_s=emed, e2e_min_s=elo, e2e_max_s=ehi, e2e_n_reads=k, e2e_reads_per_s=k / emed,
               restore_s=out["restore_s"])
    rec["versions"] = dict(cfg.versions, pyabpoa=out.get("version"))
    return rec


def add_ratios(recs):
    """speedup_vs_v0 and speedup_vs_peer (GCUPS ratios) on each workload."""
    by_graph = {}
    for r in recs:
        by_graph.setdefault((r["experiment"], r["graph"], json.dumps(r["params"], sort_keys=True)), []).append(r)
    for group in by_graph.values():
        base = {r["variant"]: r.get("gcups") for r in group if r.get("status") == "ok"}
        for r in group:
            if r.get("status") != "ok":
                continue
            r["speedup_vs_v0"] = r["gcups"] / base["v0"] if base.get("v0") else None
            r["speedup_vs_peer"] = r["gcups"] / base["abpoa"] if base.get("abpoa") else None


# --------------------------------------------------------------------------- driver


class Config:
    def __init__(self, args):
        from s2g.scoring import Mode, Scoring
        self.quick = args.quick
        self.plan = plan(args.quick)
        self.reps = max(5, args.reps)
        self.budget = args.budget if args.budget is not None else (0.02 if args.quick else 0.1)
        self.check_reads = args.check_reads
        self.check_budget = 0.5 if args.quick else 3.0
        self.peer = not args.no_peer
        self.e2e = not args.no_e2e
        self.scoring = Scoring()
        self.mode = Mode.LOCAL
        self.real_dir = args.real_dir
        self.t0 = time.monotonic()
        self.deadline = self.t0 + args.time_limit if args.time_limit else None
        self.commit = args.commit or git_commit()
        self.date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        self.versions = versions()
        self.host = host_info()
        self.command = args.command_line
        self.workdir = tempfile.mkdtemp(prefix="s2g-bench-")

    def past_deadline(self):
        return self.deadline is not None and time.monotonic() > self.deadline


def pick_variants(spec, quick, child=False):
    from s2g.variants import registry
    names = list(registry.REGISTRY) if spec in (None, "all") else [s.strip() for s in spec.split(",") if s.strip()]
    unknown = [n for n in names if n not in registry.REGISTRY]
    if unknown:
        from s2g.errors import S2GError
        raise S2GError(f"unknown variant(s) {', '.join(unknown)}; registered: {', '.join(registry.REGISTRY)}")
    runnable, skipped = [], {}
    for n in names:
        ok, why = registry.can_run(registry.REGISTRY[n])
        if quick and spec in (None, "all") and registry.REGISTRY[n].device != "cpu":
            ok, why = False, "--quick runs the CPU variants unless --variants names others"
        (runnable.append(n) if ok else skipped.__setitem__(n, why))
    if child:
        return runnable, skipped        # V0 only as the reference (v0_reference), not timed
    if "v0" in runnable:
        runnable.remove("v0")
    return ["v0"] + runnable, skipped   # V0 first: it is every other variant's check


def _write_doc(out, exp, cfg, skipped, recs, extra=None):
    doc = {"experiment": exp, "host": cfg.host, "command": cfg.command, "date": cfg.date,
           "commit": cfg.commit, "variants_not_runnable": skipped, "records": recs}
    doc.update(extra or {})
    tmp = os.path.join(out, f".{exp}.json.tmp")
    with open(tmp, "w") as fh:
        json.dump(doc, fh, indent=1, default=_json_default)
    os.replace(tmp, os.path.join(out, f"{exp}.json"))


def _child_args(args, cfg, variant, exps, out, limit):
    a = [sys.executable, "-m", "bench", "--child", "--variants", variant, "--no-peer", "--no-report",
         "--out", out, "--experiments", ",".join(exps), "--budget", repr(cfg.budget), "--reps",
         str(cfg.reps), "--check-reads", str(cfg.check_reads), "--real-dir", cfg.real_dir,
         "--commit", cfg.commit]
    if limit is not None:
        a += ["--time-limit", f"{max(limit, 1.0):.1f}"]
    if args.quick:
        a.append("--quick")
    if not cfg.e2e:
        a.append("--no-e2e")
    return a


def run_isolated(args, cfg, gpu_variants, exps, log, share=0.7):
    """Each CUDA variant in its own process: a kernel fault (illegal address) poisons
    the CUDA context of the process it happens in, not the other variants' runs.
    Returns {experiment: [records]}."""
    import shutil
    got = {e: [] for e in exps}
    gpu_share = None if cfg.deadline is None else share * (cfg.deadline - time.monotonic())
    t_start = time.monotonic()
    for i, v in enumerate(gpu_variants):
        limit = None
        if gpu_share is not None:
            left = gpu_share - (time.monotonic() - t_start)
            limit = left / (len(gpu_variants) - i)
            if limit < 5:
                log(f"bench: {v}: skipped, --time-limit reached", file=sys.stderr)
                continue
        d = os.path.join(cfg.workdir, "child-" + v)
        os.makedirs(d, exist_ok=True)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO] + [p for p in sys.path if p]))
        try:
            rc = subprocess.run(_child_args(args, cfg, v, exps, d, limit), cwd=REPO, env=env,
                                timeout=None if limit is None else limit + 30).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
        if rc != 0:
            log(f"bench: {v}: process exited with {rc}; keeping what it wrote", file=sys.stderr)
        for e in exps:
            path = os.path.join(d, f"{e}.json")
            if os.path.exists(path):
                with open(path) as fh:
                    got[e] += [r for r in json.load(fh)["records"] if r["variant"] == v]
        shutil.rmtree(d, ignore_errors=True)
    return got


def run_suite(args) -> int:
    import warnings
    warnings.filterwarnings("ignore", message=".*--break-cycles removed")  # recorded in params
    cfg = Config(args)
    variants, skipped = pick_variants(args.variants, args.quick, child=args.child)
    exps = EXPERIMENTS if args.experiments in (None, "all") else tuple(
        e.strip() for e in args.experiments.split(",") if e.strip())
    for e in exps:
        if e not in EXPERIMENTS:
            from s2g.errors import S2GError
            raise S2GError(f"unknown experiment {e!r}; choose from {', '.join(EXPERIMENTS)}")
    out = args.out or os.path.join(REPO, "bench", "results", cfg.host["results_dir"])
    os.makedirs(out, exist_ok=True)
    log = print if not args.quiet else (lambda *a, **k: None)
    if not args.child:
        log(f"bench: variants {', '.join(variants)}; not runnable here: "
            + (", ".join(f"{k} ({v})" for k, v in skipped.items()) or "none"), file=sys.stderr)
        log(f"bench: device {cfg.host['gpu'] or '-'}; cpu {cfg.host['cpu']}; out {out}", file=sys.stderr)
    from s2g.variants import registry
    gpu = [v for v in variants if registry.REGISTRY[v].device == "cuda"]
    isolate = args.isolate if args.isolate is not None else (not args.child and len(gpu) > 0)
    child_recs = {}
    if args.skip_v0 and not args.child:
        variants = [v for v in variants if v != "v0"]
    in_process = [v for v in variants if not (isolate and v in gpu)]
    if isolate and gpu:
        order = sorted(gpu, key=lambda v: -registry.REGISTRY[v].rank)   # fast, v4, v3, ... first
        share = 0.7 if (in_process or cfg.peer) else 1.0
        child_recs = run_isolated(args, cfg, order, exps, log, share)
    variants = in_process
    for exp in exps:
        recs = []
        for make in build_workloads(exp, cfg, cfg.workdir):
            if cfg.past_deadline() or not (variants or (cfg.peer and not args.child)):
                break
            try:
                wl = load(make())
            except Exception as exc:
                log(f"bench: {exp}: workload failed: {type(exc).__name__}: {exc}", file=sys.stderr)
                continue
            wrecs = [measure_variant(v, wl, cfg) for v in variants]
            if not args.child:
                wrecs.append(measure_peer(wl, cfg))
            add_ratios(wrecs)
            for r in wrecs:
                log(_line(r), file=sys.stderr)
            recs.extend(wrecs)
            _SUBSETS.clear()
            _write_doc(out, exp, cfg, skipped, recs)   # after every workload: a crash keeps the rest
        recs += child_recs.get(exp, [])
        add_ratios(recs)
        for r in child_recs.get(exp, []):
            log(_line(r), file=sys.stderr)
        if recs:
            _write_doc(out, exp, cfg, skipped, recs)
    if not args.no_report and not args.child:
        from . import report
        report.write_report(out, plots=not args.no_plots)
    log(f"bench: done in {time.monotonic() - cfg.t0:.0f} s; results in {out}", file=sys.stderr)
    return 0


def merge(dirs, out, log=print, drop=()) -> int:
    """Records of several runs (same machine kind) in one folder; a later run's record
    replaces an earlier one for the same (experiment, workload, variant). Ratios are
    recomputed; every record keeps its own date, commit and command. ``drop``: records
    left out, as ``VARIANT`` (every run) or ``RUN:VARIANT`` (the run folder's name), e.g.
    an earlier run's errors from code since fixed; the merged document lists them under
    ``dropped_variants``."""
    docs = {}
    for d in dirs:
        for exp in EXPERIMENTS:
            path = os.path.join(d, f"{exp}.json")
            if not os.path.exists(path):
                continue
            with open(path) as fh:
                doc = json.load(fh)
            cur = docs.setdefault(exp, dict(doc, records={}, runs=[]))
            cur["runs"].append({"dir": os.path.basename(os.path.normpath(d)), "date": doc["date"],
                                "commit": doc["commit"], "command": doc["command"]})
            for k in ("host", "date", "commit", "command"):
                cur[k] = doc[k]
            cur["dropped_variants"] = sorted(drop)
            cur["variants_not_runnable"] = {k: v for k, v in (doc.get("variants_not_runnable") or {}).items()
                                            if k not in drop and f"{os.path.basename(os.path.normpath(d))}:{k}" not in drop} if isinstance(doc.get("variants_not_runnable"), dict) \
                else doc.get("variants_not_runnable")
            run = os.path.basename(os.path.normpath(d))
            for r in doc["records"]:
                if r["variant"] in drop or f"{run}:{r['variant']}" in drop:
                    continue
                key = (r["graph"], json.dumps(r["params"], sort_keys=True), r["variant"])
                if r.get("status") == "ok" or key not in cur["records"] or \
                        cur["records"][key].get("status") != "ok":
                    cur["records"][key] = r
    os.makedirs(out, exist_ok=True)
    for exp, doc in docs.items():
        recs = list(doc["records"].values())
        for r in recs:
            r.pop("speedup_vs_v0", None)
            r.pop("speedup_vs_peer", None)
        add_ratios(recs)
        doc["records"] = recs
        with open(os.path.join(out, f"{exp}.json"), "w") as fh:
            json.dump(doc, fh, indent=1, default=_json_default)
    log(f"bench: merged {len(dirs)} run(s) into {out}", file=sys.stderr)
    return 0


def _json_default(o):
    import numpy as np
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    return str(o)


def _line(r):
    p = r["params"].get("point", r["graph"])
    if r.get("status") != "ok":
        return f"  {r['experiment']:<11} {str(p):>8} {r['variant']:<6} {r.get('status')}: {r.get('reason', '')}"
    sv = r.get("speedup_vs_v0")
    sp = r.get("speedup_vs_peer")
    return (f"  {r['experiment']:<11} {str(p):>8} {r['variant']:<6} {r['gcups']:9.3f} GCUPS "
            f"({r['timing']}, {r['n_reads']} reads, {r['kernel_s'] * 1e3:.2f} ms)"
            + (f"  x{sv:.1f} v0" if sv else "") + (f"  x{sp:.2f} abPOA" if sp else ""))


def add_arguments(p):
    p.add_argument("--quick", action="store_true",
                   help="tiny sizes and CPU variants only (runs anywhere in well under a minute)")
    p.add_argument("--experiments", default="all",
                   help=f"comma-separated subset of: {', '.join(EXPERIMENTS)}")
    p.add_argument("--variants", default="all",
                   help="comma-separated variant names; all = every registered variant this machine "
                        "can run (V0 always runs: it is the check and the speedup baseline)")
    p.add_argument("--out", default=None,
                   help="results folder (default bench/results/<device>/)")
    p.add_argument("--reps", type=int, default=5, help="timed repetitions per measurement (>= 5)")
    p.add_argument("--budget", type=float, default=None,
                   help="seconds one timed call may take; larger workloads are subsampled "
                        "(default 0.1, --quick 0.02)")
    p.add_argument("--time-limit", type=float, default=None,
                   help="stop starting new measurements after this many seconds (records say skipped)")
    p.add_argument("--check-reads", type=int, default=16, help="reads checked against V0 per variant")
    p.add_argument("--real-dir", default=os.path.join(REPO, "..", "shared", "data", "real"),
                   help="folder of the real graphs (../shared/data/real layout)")
    p.add_argument("--no-peer", action="store_true", help="do not run abPOA")
    p.add_argument("--no-e2e", action="store_true", help="kernel time only")
    p.add_argument("--no-report", action="store_true", help="JSON only (no RESULTS.md, HEADLINE.md, PNGs)")
    p.add_argument("--no-plots", action="store_true", help="tables but no PNGs")
    p.add_argument("--commit", default=None, help="commit to record (default: git rev-parse HEAD)")
    p.add_argument("--report-only", metavar="DIR", default=None,
                   help="only redraw RESULTS.md, HEADLINE.md and PNGs from DIR/*.json")
    p.add_argument("--isolate", dest="isolate", action="store_true", default=None,
                   help="run each CUDA variant in its own process (default when CUDA variants run)")
    p.add_argument("--no-isolate", dest="isolate", action="store_false")
    p.add_argument("--merge", nargs="+", metavar="DIR", default=None,
                   help="merge the JSON of earlier runs (later DIRs win) into --out, then report")
    p.add_argument("--drop-variants", default="", metavar="V1,V2",
                   help="with --merge: leave these records out: VARIANT or RUN:VARIANT (RUN = a merged "
                        "folder's name); say why in the folder's NOTES.md")
    p.add_argument("--skip-v0", action="store_true",
                   help="do not time V0 (it still checks every variant); merge V0 records from "
                        "another run with --merge")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--quiet", "-q", action="store_true", help="no progress lines on stderr")


def run(args) -> int:
    if getattr(args, "command_line", None) is None:
        args.command_line = "s2g bench " + " ".join(sys.argv[2:])
    if args.merge:
        if not args.out:
            from s2g.errors import S2GError
            raise S2GError("--merge needs --out")
        merge(args.merge, args.out, drop=tuple(v for v in (args.drop_variants or "").split(",") if v))
        if not args.no_report:
            from . import report
            report.write_report(args.out, plots=not args.no_plots)
        return 0
    if args.report_only:
        from . import report
        report.write_report(args.report_only, plots=not args.no_plots)
        return 0
    return run_suite(args)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    add_arguments(ap)
    args = ap.parse_args(argv)
    args.command_line = "python -m bench " + " ".join(sys.argv[1:] if argv is None else argv)
    from s2g.errors import S2GError
    try:
        return run(args)
    except S2GError as exc:
        print(f"bench: error: {exc}", file=sys.stderr)
        return 1
