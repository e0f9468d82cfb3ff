"""GPU traceback vs CPU traceback on one batch: time per stage and identical results.

    python -m bench.gpu_traceback_profile [--reads 65536] [--bases 100000]

Simulates a SNP graph (node length 50, branching 2) and 150 bp reads with 1% errors,
scores them with the `fast` kernel, then runs ``traceback_batch`` on the CPU (all
cores) and on the GPU (:mod:`s2g.trace.gpu`), each twice (the second, warm, run is
reported), checks that both give identical tracebacks, and prints the GPU path's stages
(window sizes and programs on the CPU, the device part and within it the kernel, timed
with CUDA events, the summary) per read, with the column scratch per read and
interleaved across reads (the knob ``gpu_tb_interleave``).
"""
import argparse
import os
import tempfile
import time


from s2g.config import configure
from s2g.graph import load_graph
from s2g.reads import ReadBatch
from s2g.scoring import Mode, Scoring
from s2g.simulate import sample_reads, snp_graph
from s2g.trace import traceback_batch
from s2g.trace.gpu_chunk import PROFILE
from s2g.variants import fast


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reads", type=int, default=65536)
    ap.add_argument("--bases", type=int, default=100000)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp()
    sg, ref = snp_graph(args.bases, 50, 2, 1)
    gp = os.path.join(tmp, "g.gfa")
    sg.write_gfa(gp, ref)
    g = load_graph(gp)
    seqs = [s for _, s, _ in sample_reads(sg, args.reads, 150, 0.01, 0.5, 2)]
    reads = ReadBatch.from_sequences([f"r{k}" for k in range(len(seqs))], seqs)
    sc, mode = Scoring(), Mode.LOCAL
    res = fast.align_batch(g, reads, sc, mode)
    n = reads.n_reads
    from numba import cuda
    dev = cuda.get_current_device().name
    dev = dev.decode() if isinstance(dev, bytes) else dev
    print(f"{dev}: {n} reads x 150 bp, SNP graph {args.bases} bp, {os.cpu_count()} CPUs")
    want = None
    for where in ("cpu", "gpu, column scratch per read", "gpu, column scratch interleaved"):
        configure(gpu_tb_interleave=where.endswith("interleaved"))
        for _ in range(2):                 # the second (warm) run is reported
            for k in PROFILE:
                PROFILE[k] = 0.0
            t = time.perf_counter()
            traceback_batch(g, reads, sc, mode, res, device=where != "cpu")
            dt = time.perf_counter() - t
        got = list(res.tracebacks)
        if want is None:
            want = got
        bad = sum(x != y for x, y in zip(want, got))
        print(f"  traceback on {where}: {dt:7.3f} s  {dt * 1e6 / n:7.2f} us/read  "
              f"{n / dt:10,.0f} reads/s; differing from the CPU's: {bad}")
        assert bad == 0
        if where != "cpu":
            for k, v in PROFILE.items():
                print(f"    stage {k:8s} {v:7.3f} s  {v * 1e6 / n:7.2f} us/read")


if __name__ == "__main__":
    main()
