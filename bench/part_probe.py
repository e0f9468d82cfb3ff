"""Where a Dask worker's time goes, without Dask: one process aligns the reads file whole
(as ``s2g align`` does) and in parts (as a worker does, :func:`s2g.distributed.align_part`),
warm, in turns, and prints each run's seconds (issue 44).

    python -m bench.part_probe --graph g.gfa --reads reads.fq [--parts 2] [--repeat 2]

Same process, same plan: a difference between "whole" and "parts" is the parts' own cost
(reading a byte range, one pipeline a part); a difference between "parts" here and a Dask
worker's parts (``--timings`` of ``s2g align --dask``) is the worker process's.
"""
from __future__ import annotations

import argparse
import os
import time
import warnings


def main(argv=None):
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--graph", required=True)
    ap.add_argument("--reads", required=True)
    ap.add_argument("--parts", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=50_000)
    a = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    import s2g
    from s2g import distributed as sd
    from s2g.aligner import Aligner
    from s2g.config import settings
    from s2g.index import index_path
    from s2g.plan import RunOptions, plan
    from s2g.read_ranges import split_input

    graph = s2g.load_graph(a.graph)
    opts = plan(graph, RunOptions(method="seeded", graph_path=os.path.abspath(a.graph)),
                index=None).worker_options()
    assert os.path.exists(index_path(a.graph))
    st = os.stat(opts.graph_path)
    spec = sd.GraphSpec(opts.graph_path, opts.strands, opts.break_cycles,
                        (st.st_size, st.st_mtime_ns), "")
    parts = split_input(a.reads, a.parts, min_bytes=1)

    def whole():
        p = sd.worker_plan(sd.worker_graph(spec), opts)
        al = Aligner.from_plan(p)
        n = [0]
        al.run(s2g.iter_read_batches(a.reads, a.batch_size,
                                     max_bases=settings().batch_bases),
               lambda item: n.__setitem__(0, n[0] + item[0]))
        return n[0]

    def in_parts():
        n = 0
        for part in parts:
            res = sd.align_part(spec, part, opts, a.batch_size)
            assert res[0] == "ok", res
            n += res[2]
        return n

    for k in range(a.repeat + 1):
        for name, fn in (("whole", whole), ("parts", in_parts)):
            t = time.perf_counter()
            n = fn()
            dt = time.perf_counter() - t
            print(f"{'warm-up ' if k == 0 else ''}{name}: {n:,} reads in {dt:.2f} s "
                  f"({n / dt:,.0f} reads/s)", flush=True)


if __name__ == "__main__":
    main()
