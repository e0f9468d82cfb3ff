"""Inside a warm-up worker process (:mod:`s2g.warmup`): run one task, a stage of the real
code on a tiny simulated input, so that its machine code lands in the on-disk caches.
:class:`s2g.warmup.Prewarm` starts ``python -c "... from s2g.warmup_worker import worker
..."`` per task; nothing in :mod:`s2g.warmup` imports this module (it runs the driver,
:class:`s2g.aligner.Aligner`, and the CLI, which import :mod:`s2g.warmup`).
"""
from __future__ import annotations

import json
import os
import tempfile
import time

from .warmup import (KINDS, LONG_LEN, LONG_READS, LONG_SLACK, TINY_BASES, TINY_READS,
                     fast_args, warm_len)


def tiny_size(read_len):
    """(reads, graph bases) of a task's input for reads of ``read_len`` (:func:`warm_len`
    caps it): 8 reads on 4 x their length up to LONG_LEN, then 2 on length + LONG_SLACK
    (5 kbp: ~1.4e8 cells of V0, under a second)."""
    L = warm_len(read_len)
    if L <= LONG_LEN:
        return TINY_READS, max(TINY_BASES, 4 * L)
    return LONG_READS, L + LONG_SLACK


def _tiny_files(read_len, d):
    """A small simulated SNP graph and reads of ``read_len`` (:func:`warm_len`) sampled
    from it (:func:`tiny_size`), written to ``d``: (GFA path, FASTQ path)."""
    from .simulate import sample_reads, snp_graph
    n, bases = tiny_size(read_len)
    read_len = warm_len(read_len)
    sg, ref = snp_graph(bases, 50, 2, 7)
    gfa, fq = os.path.join(d, "w.gfa"), os.path.join(d, "w.fq")
    sg.write_gfa(gfa, ref)
    with open(fq, "w") as fh:
        for k, (_, seq, _) in enumerate(sample_reads(sg, n, read_len, 0.02, 0.5, 11)):
            fh.write(f"@w{k}\n{seq}\n+\n{'I' * len(seq)}\n")
    return gfa, fq


def _tiny(read_len, d):
    """:func:`_tiny_files` loaded as ``s2g align`` loads them (open_graph,
    iter_read_batches): (graph, one batch of reads)."""
    from .graph import open_graph
    from .reads import iter_read_batches
    gfa, fq = _tiny_files(read_len, d)
    return open_graph(gfa), next(iter(iter_read_batches(fq, 1000)))


def _seeded(task, d):
    """A ``seeded`` task: ``s2g align --seeded`` on a tiny graph, through the CLI (so
    the index is built, saved and loaded, and the seeded aligner configured, as a run
    does them: every default the CLI passes is the run's). On the CPU without the
    traceback (the ``trace`` task compiles it, in parallel), then the parts of the
    seeded traceback that are its own (the window graph's path mapping) and the window
    kernel's lockstep groups (windows far apart, as a batch's are) whatever the tiny
    run's windows took."""
    import numpy as np

    from . import cli
    from .graph import open_graph
    from .reads import iter_read_batches
    from .scoring import Mode, Scoring
    from .trace import FlatTracebacks
    from .variants import simd
    from .window import WindowGraph
    mode, sc = Mode(task["mode"]), Scoring(*task["scoring"])
    gfa, fq = _tiny_files(task.get("read_len", 150), d)
    a, b, o, e = sc.as_tuple()
    argv = ["align", gfa, fq, "--seeded", "-q", "--no-progress", "-o", os.path.join(d, "w.gaf"),
            "--mode", mode.name.lower(), "-A", str(a), "-B", str(b), "-O", str(o), "-E", str(e),
            "--variant", task.get("variant") or "simd"]
    if not task["gpu"]:
        argv.append("--no-traceback")
    rc = cli.main(argv)
    if rc != 0:
        raise RuntimeError(f"s2g {' '.join(argv)}: exit status {rc}")
    graph = open_graph(gfa)
    batch = next(iter(iter_read_batches(fq, 1000)))
    z32 = np.zeros(0, np.int32)
    wg = WindowGraph(graph, np.zeros(1, np.int64), z32, z32, z32)
    wg.map_tracebacks(FlatTracebacks(0))
    n, nb = batch.n_reads, graph.n_bases
    step = nb // max(n, 1)
    lo = np.arange(n, dtype=np.int64) * step
    simd.align_windows(graph, batch.codes_flat, batch.offsets, np.arange(n, dtype=np.int64),
                       lo, lo + max(16, step // 2), sc, mode)


def run_task(task):
    """Compile what ``task`` names by running it (in this process)."""
    from .scoring import Mode, Scoring
    k = task.get("kind")
    if k not in KINDS:
        raise ValueError(f"unknown warm-up task {task!r}")
    if k == "fast_kernel":
        from .variants import fast
        fast.get_kernel(*fast_args(task["key"]))
        return
    if k == "long_kernel":         # compiled for its signature (a GPU) into the disk cache
        from .trace.long import launch
        local, prmt, prune = task["key"]
        launch.get_kernel(None, bool(local), bool(prmt), bool(prune))
        return
    mode = Mode(task["mode"])
    sc = Scoring(*task["scoring"])
    with tempfile.TemporaryDirectory() as d:
        if k == "seeded":
            _seeded(task, d)
            return
        graph, batch = _tiny(task.get("read_len", 150), d)
        if k == "fast_host":
            from .variants import fast
            a, b, o, e = sc.as_tuple()
            slot, n = fast.fast_slots(graph)
            fast.column_tables(graph.base, graph.node_start, graph.pred_ptr, graph.pred_idx,
                                slot, graph.is_sink, int(mode), o, e, n)
            return
        from .aligner import Aligner
        if k == "align":
            Aligner(graph, sc, mode, task["variant"], traceback=False).align_scores(batch)
            return
        from .variants import v0_cpu       # end cells, cheaply (V0 compiles in ~2 s)
        res = v0_cpu.align_batch(graph, batch, sc, mode)
        al = Aligner(graph, sc, mode, "v0", traceback=(k == "trace"),
                     traceback_on=bool(task.get("gpu")))
        if k == "trace" and task["gpu"]:
            from .trace import traceback_gpu_part
            res._gpu_part = traceback_gpu_part(graph, batch, sc, mode, res,
                                               al.max_traceback_cells)
        al.gaf_text(batch, al.finish(batch, res))


def worker(name):
    import warnings
    warnings.simplefilter("ignore")
    t = time.perf_counter()
    run_task(json.loads(name))
    print(f"S2G-WARM-OK {time.perf_counter() - t:.2f}", flush=True)
