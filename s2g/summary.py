"""What ``s2g align`` prints when a run ends: its warnings (reads longer than a cyclic
graph's unrolling, reads without a seed hit or aligned by full-graph DP instead), the
closing line, and with ``--timings`` the
seconds per stage, seeded alignment's parts, memory peaks and the GPU kernels' counters
(:class:`s2g.aligner.AlignStats`)."""
from __future__ import annotations

import sys
import warnings

from .plan import short_e


def report(args, aligner, counts, dt, spent, marks=(), t0=None):
    """The run's warnings, its closing line and, with --timings, its seconds per stage
    (``marks``: the CLI's start-up milestones, (name, seconds from ``t0``), a
    ``time.perf_counter()``)."""
    n, n_hit = counts
    seeded = aligner.seeded
    if aligner.too_long:
        warnings.warn(f"{aligner.too_long} read(s) longer than --max-read-len "
                      f"{aligner.seeded_read_len}: seeded "
                      "alignment used the cyclic graph unrolled for that length, which may lack "
                      "walks round a cycle that such a read needs; rerun with a larger one")
    t = seeded.totals if seeded is not None else {}
    if t.get("unseeded unaligned"):
        why = ("--unseeded unmapped" if seeded.unseeded == "unmapped" else
               f"full-graph DP costs more than --unseeded auto allows, {short_e(seeded.full_cells)} "
               "cells a read")
        warnings.warn(f"{t['unseeded unaligned']} read(s) had no seed hit ({why}): written as "
                      "no-hit lines; '--unseeded full' or '--exact' aligns them")
    if t.get("unseeded below min score"):
        warnings.warn(f"{t['unseeded below min score']} read(s) without a seed chain scored under "
                      f"--unseeded-min-score {seeded.unseeded_min_score} by full-graph DP (a "
                      "chance match, as a read from outside the graph gets): written as no-hit "
                      "lines")
    if t.get("unseeded full DP"):
        warnings.warn(f"{t['unseeded full DP']} read(s) without a seed chain were aligned by "
                      "full-graph DP: MAPQ 255 (not computed; 'samtools view -q' keeps it), each "
                      f"scoring at least --unseeded-min-score {seeded.unseeded_min_score}; "
                      "'--unseeded unmapped' writes such reads as no-hit lines")
    if n == 0:
        print(f"s2g: warning: {args.reads} contains no reads; the GAF output is empty", file=sys.stderr)
    elif not args.quiet:
        how = aligner.describe()
        print(f"s2g: {n} reads, {n_hit} aligned, {n - n_hit} without alignment; {how}; "
              f"{dt:.2f} s ({n / dt:,.{0 if n / dt >= 10 else 1}f} reads/s)", file=sys.stderr)
    if args.timings:
        _timings(args, aligner, aligner.stats(), dt, spent)
        line = startup_line(marks, aligner, t0)
        if line:
            print(line, file=sys.stderr)
        stage_log(t0)


def stage_log(t0):
    """--timings with knob ``stage_log``: every stage call (:data:`s2g.pipeline.STAGE_LOG`),
    in start order, seconds from ``t0``, one line each."""
    from .pipeline import STAGE_LOG
    if t0 is None or not STAGE_LOG:
        return
    for name, thread, a, b in sorted(STAGE_LOG, key=lambda x: x[2]):
        print(f"s2g: stage {name:<12} {thread:<16} {a - t0:8.3f} {b - t0:8.3f} "
              f"{b - a:7.3f}", file=sys.stderr)


#: SeededAligner's count of reads seeded on the CPU until the GPU's seeding could run
_EARLY = "reads seeded on the CPU at the start"
#: seed_batches' first calls, as the start-up line names them
_FIRST = {"chains": "first chains", "candidates": "first batch seeded",
          "windows_of": "first batch seeded"}


def startup_line(marks, aligner, t0):
    """--timings: when the run's start-up milestones were reached, seconds from ``t0``
    (the CLI's own ``marks``, then the seeding's first batch (``chains``: a seeding
    thread's first chains), the align stage's first call and the first output written),
    in time order; None without ``t0``."""
    if t0 is None:
        return None
    got = list(marks)
    seeded = aligner.seeded
    for name, at in (getattr(seeded, "first_at", None) or {}).items():
        got.append((_FIRST.get(name, name), at - t0))
    for stage, what in (("align", "aligning"), ("write", "first output")):
        sp = aligner.span.get(stage)
        if sp:
            got.append((what, sp[0]))
    got.sort(key=lambda m: m[1])
    return "s2g: start-up, seconds from the start: " + ", ".join(
        f"{name} {at:.2f}" for name, at in got)


def _timings(args, aligner, st, dt, spent):
    """--timings: stage seconds (``spent``: the CLI's own, then the aligner's), seeded
    alignment's parts, memory, the warm-up, the GPU kernels' own counters
    (:class:`s2g.aligner.AlignStats`)."""
    label = {"traceback": f" ({'GPU' if aligner.tb_gpu else 'CPU'})",
             "load graph": " (from GRAPH.s2gg)" if args.graph_cache_hit else ""}
    spent, span = {**spent, **st.seconds}, st.span
    print("s2g: seconds per stage: " + ", ".join(
        f"{k}{label.get(k, '')} {v:.2f}" for k, v in spent.items())
        + f"; wall {dt:.2f} (aligning from {span.get('align', [0])[0]:.2f} s to "
        f"{span.get('align', [0, 0])[1]:.2f} s)", file=sys.stderr)
    gt = st.profiles.get("gpu_traceback")
    if st.seeded is not None:
        parts = {k.replace("seconds ", ""): v for k, v in st.seeded.items()
                 if k.startswith("seconds") and (v or k not in ("seconds CPU windows",
                                                                 "seconds copies"))}
        if aligner.seeded.device == "gpu":
            parts.update({f"GPU {k}": v for k, v in (gt or {}).items()
                          if v and not k.startswith("long")})
            tw = st.profiles.get("gpu_tb_warp") or {}
            parts.update({f"GPU tb form {k}": v for k, v in tw.items()
                          if v and k in ("kernel", "walk", "host", "wall")})
        print("s2g: seeded align stage, seconds: " + ", ".join(
            f"{k} {v:.2f}" for k, v in parts.items())
            + f"; first batch {st.first_batch_s or 0:.2f}"
            + (f" ({st.seeded[_EARLY]:,} reads seeded on the CPU while the GPU's seeding "
               "started)" if st.seeded.get(_EARLY) else ""),
            file=sys.stderr)
    print("s2g: memory: " + memory_report(st.profiles.get("devpool")), file=sys.stderr)
    if st.cpu is not None and st.cpu[0] > 0:
        print("s2g: " + cpu_report(*st.cpu[:3]), file=sys.stderr)
    if st.cpu is not None and len(st.cpu) > 3 and st.cpu[3]:
        print(f"s2g: GIL probe: a 1 ms sleep ran again {1e3 * st.cpu[4]:.2f} ms late on "
              f"average, {1e3 * st.cpu[5]:.2f} ms at the 95th percentile ({st.cpu[3]:,} "
              "samples while the pipeline ran)", file=sys.stderr)
    names = _pool_names()
    if names:
        print("s2g: GPU buffers by name, largest (MB): " + names, file=sys.stderr)
    busy = gpu_busy(st.profiles, span)
    if busy is not None:
        stages = "align and traceback stages'" if busy[2] else "align stage's"
        print(f"s2g: GPU busy {busy[0]:.2f} s of the {stages} {busy[1]:.2f} s "
              f"({100 * busy[0] / max(busy[1], 1e-9):.0f}%; kernels timed with CUDA events)",
              file=sys.stderr)
        from .variants import _lean
        print("s2g: kernels launched through " + (
            "the CUDA driver (lean_cuda; numba.cuda "
            + ("imported: a kernel was compiled or stored)" if "numba.cuda" in sys.modules
               else "not imported)") if _lean.active() else "numba.cuda"), file=sys.stderr)
    if aligner.prewarm is not None:      # first use on cold caches (s2g/warmup.py)
        print("s2g: " + aligner.prewarm.report(), file=sys.stderr)
    p = st.profiles.get("fast")
    if p is not None and p["launches"]:
        print(f"s2g: fast kernel: {p['launches']:,} launch{'es' if p['launches'] > 1 else ''}, "
              f"{p['cells']:,} cells, {p['kernel']:.2f} s, {_rate(p)} (launch calls "
              f"{p['wall']:.2f} s, setup {p['setup']:.2f} s)", file=sys.stderr)
    fw = st.profiles.get("fast_windows")
    if fw is not None and fw["launches"]:
        print(fast_windows_line(fw), file=sys.stderr)
    tw = st.profiles.get("gpu_tb_warp")
    if tw is not None and tw["launches"]:
        print(f"s2g: traceback form (gpu_tb_warp): {tw['windows']:,} windows in "
              f"{tw['launches']} launches, {tw['cells']:,} cells, kernel {tw['kernel']:.2f} s "
              f"({tw['cells'] / max(tw['kernel'], 1e-9) / 1e9:.1f} GCUPS), walk "
              f"{tw['walk']:.2f} s, host {tw['host']:.2f} s, wall {tw['wall']:.2f} s"
              + (f"; {tw['summaries']:,} walks summarised on the GPU (in the walk's time)"
                 if tw.get("summaries") else ""), file=sys.stderr)
    ws = st.profiles.get("window_search")
    if ws is not None and ws["launches"]:
        print(f"s2g: window searches on the GPU: {ws['chains']:,} chains in {ws['launches']} "
              f"launches, {ws['host']:,} left to the host, kernel {ws['kernel']:.2f} s, "
              f"wall {ws['wall']:.2f} s", file=sys.stderr)
    if gt is not None and st.seeded is None and any(
            v for k, v in gt.items() if not k.startswith("long")):
        print("s2g: GPU traceback, seconds: " + ", ".join(
            f"{k} {v:.2f}" for k, v in gt.items() if not k.startswith("long")),
            file=sys.stderr)
    if gt is not None and gt["long_launches"]:
        print(f"s2g: long-window kernel: {gt['long_windows']:,} windows in "
              f"{gt['long_launches']} launches, {gt['long_cells']:,} cells, "
              f"{gt['long_kernel']:.2f} s, {gt['long_cells'] / max(gt['long_kernel'], 1e-9) / 1e9:.1f}"
              " GCUPS" + (f"; of which scores only (seeded windows): "
                          f"{gt['long_score_windows']:,} windows, "
                          f"{gt['long_score_cells']:,} cells, {gt['long_score_kernel']:.2f} s"
                          if gt["long_score_windows"] else "")
              + (f" (pruned: {gt['long_pruned_launches']} launches, "
                 f"{gt['long_pruned_reruns']:,} windows run again)"
                 if gt.get("long_pruned_launches") else "")
              + (f"; {gt['long_live_windows']:,} traced in their pruned pass's kept rows "
                 f"({gt['long_live_cells']:,} band cells, "
                 f"{gt['long_live_cells'] / max(gt['long_live_cells_slack'], 1):.0%} of "
                 "their slack bands')" if gt.get("long_live_windows") else ""),
              file=sys.stderr)


def fast_windows_line(fw) -> str:
    """``--timings``' line of the fast window kernel's counters
    (:data:`s2g.variants.fast.windows.PROFILE`; the copies pass's launches included)."""
    up, sync = fw.get("upload", 0.0), fw.get("sync", 0.0)
    return (f"s2g: fast window kernel: {fw['windows']:,} windows, {fw['cells']:,} cells, "
            f"{fw['kernel']:.2f} s, {_rate(fw)} (tables {fw['tables']:.2f} s, uploads "
            f"{up:.2f} s, waiting for the kernels {sync:.2f} s, launch calls "
            f"{fw['wall']:.2f} s; the copies pass's included)")


def _rate(p) -> str:
    """A kernel's GCUPS from its counters (``cells``, ``kernel`` seconds)."""
    return (f"{p['cells'] / p['kernel'] / 1e9:.1f} GCUPS" if p["kernel"] > 0
            else "no GPU timing (CUDA simulator)")


def gpu_busy(profiles, span):
    """(seconds the GPU ran kernels, seconds from the align stage's start to its end or the
    traceback stage's, whichever is later, and whether the traceback's) from
    the kernels' own counters (``fast``, ``fast_windows``, ``gpu_traceback``,
    ``window_search``: CUDA events
    around each launch), or None where no kernel was timed (no GPU, or the simulator)."""
    k = (profiles.get("fast", {}).get("kernel", 0.0)
         + profiles.get("fast_windows", {}).get("kernel", 0.0)
         + profiles.get("gpu_traceback", {}).get("kernel", 0.0)    # long launches too
         + profiles.get("gpu_tb_warp", {}).get("kernel", 0.0)
         + profiles.get("gpu_tb_warp", {}).get("walk", 0.0)
         + profiles.get("window_search", {}).get("kernel", 0.0))
    a = span.get("align")
    if k <= 0 or not a or a[1] <= a[0]:
        return None
    t = span.get("traceback")       # the traceback stage's kernels (seeded long windows'
    end = max(a[1], t[1]) if t else a[1]    # chosen ones, traced in their bands) count too
    return k, end - a[0], bool(t and t[1] > a[1])


def _pool_names(top: int = 16) -> str:
    """The knob ``devpool_names``: the ``top`` largest device buffer names (the largest
    one pool's buffer of each grew to), or '' (knob off, or no GPU buffers)."""
    from .config import settings
    mod = sys.modules.get("s2g.variants._devpool")
    if not settings().devpool_names or mod is None or not mod.NAMES:
        return ""
    big = sorted(mod.NAMES.items(), key=lambda kv: -kv[1])[:top]
    return ", ".join(f"{k} {v / 2**20:,.0f}" for k, v in big)


def cpu_report(wall, user, system) -> str:
    """The process's CPU use over the ``wall`` seconds the pipeline ran (``user`` and
    ``system`` seconds, every thread's): how many cores it kept busy on average, of how
    many this process may use — near that many, the stages wait for cores, not the GPU."""
    import os
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return (f"CPU: {(user + system) / wall:.1f} of {n} cores busy on average while the "
            f"pipeline ran ({wall:.2f} s: user {user:.2f} s, system {system:.2f} s)")


def memory_report(devpool=None) -> str:
    """``peak RSS N MB`` (this process, getrusage) and, where a GPU variant ran, the most
    its reused device buffers held at once (``devpool``: a copy of
    ``s2g.variants._devpool.PEAK``, :attr:`s2g.aligner.AlignStats.profiles`), pinned
    host buffers, and the whole device's memory in use (sampled at the pools'
    allocations)."""
    import resource
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024     # KB on Linux
    if sys.platform == "darwin":
        rss /= 1024                                                       # bytes there
    out = f"peak RSS {rss:,.0f} MB"
    dp = devpool
    if dp is not None and (dp["device"] or dp["pinned"]):
        out += (f"; GPU buffers peak {dp['device'] / 2**20:,.0f} MB, pinned host "
                f"{dp['pinned'] / 2**20:,.0f} MB")
        if dp.get("used"):
            out += f"; GPU memory in use peak {dp['used'] / 2**20:,.0f} MB (whole device)"
    return out
