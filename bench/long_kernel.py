"""The long-window traceback kernel (s2g/trace/long/) alone: GCUPS per strip height.

    python -m bench.long_kernel [--reads 300] [--len 10000] [--bases 100000]
                                [--configs 32,16,32:1,32:4] [--sass FILE]
                                [--long-source FILE]

Simulates a SNP graph (node length --node-len, branching 2) and reads with 5% substitutions,
scores them with the `fast` kernel, then traces every read on the long-window kernel
(``s2g.trace.gpu.run(..., max_cells=0)``) once per config ``S[:DEBUG]`` (strip rows; DEBUG =
the ``long_debug`` knob's bits for timing experiments whose results are wrong: 1 no
direction stores, 4 no barrier, 8 no walk) after a warm-up, and prints the kernel's
time (CUDA events), cells and GCUPS; configs without DEBUG must give tracebacks identical
to the first one's; each prints a digest of the tracebacks (sha256 of their repr), to
compare runs of different commits. ``--long-source FILE`` runs another version of the
kernel's source module, s2g/trace/long/source.py (e.g. ``git show
COMMIT:s2g/trace/long/source.py > FILE``, an untracked file the device carries), in place
of the tree's: an A/B of kernel versions on one machine where the device's copy of .git
lacks the commit.
"""
import argparse
import hashlib
import importlib.util
import os
import sys
import tempfile

import numpy as np

from s2g.errors import S2GError
from s2g.graph import load_graph
from s2g.reads import ReadBatch
from s2g.scoring import Mode, Scoring
from s2g.simulate import sample_reads, snp_graph
from s2g.trace import FlatTracebacks
from s2g.variants import fast


def trace(g, reads, sc, mode, res, idx):
    from s2g.trace import gpu
    from s2g.trace.gpu_chunk import PROFILE
    for k in ("long_kernel", "long_cells", "long_launches"):
        PROFILE[k] = 0
    flat = FlatTracebacks(len(res))
    try:
        left = gpu.run(g, reads, sc, mode, res, idx, flat, max_cells=0, long_cells=1 << 40)
        flat.finish()
        ok = len(left) == 0
    except S2GError:
        flat, ok = None, False
    p = PROFILE
    return flat, ok, p["long_kernel"], p["long_cells"], p["long_launches"]


def _load_long_source(path):
    """``path`` imported as s2g.trace.long.source (before anything imports the tree's:
    s2g.trace.gpu and s2g.trace.long.launch are imported after this)."""
    import s2g.trace.long
    assert "s2g.trace.long.launch" not in sys.modules, "load the source before the launch"
    name = "s2g.trace.long.source"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    s2g.trace.long.source = mod


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reads", type=int, default=300)
    ap.add_argument("--len", type=int, default=10000)
    ap.add_argument("--bases", type=int, default=100000)
    ap.add_argument("--node-len", type=int, default=50)
    ap.add_argument("--configs", default="32,16,32:1,32:4")
    ap.add_argument("--sass", default=None, help="write the kernel's SASS here (needs nvdisasm)")
    ap.add_argument("--long-source", default=None, metavar="FILE",
                    help="run this version of s2g/trace/long/source.py instead of the tree's")
    args = ap.parse_args()
    if args.long_source:
        _load_long_source(args.long_source)
        print(f"s2g.trace.long.source from {args.long_source}")
    from s2g.trace.long import launch as long_launch
    from s2g.trace.long import plan as long_plan
    tmp = tempfile.mkdtemp()
    sg, ref = snp_graph(args.bases, args.node_len, 2, 1)
    gp = os.path.join(tmp, "g.gfa")
    sg.write_gfa(gp, ref)
    g = load_graph(gp)
    seqs = [s for _, s, _ in sample_reads(sg, args.reads, args.len, 0.05, 0.5, 2)]
    reads = ReadBatch.from_sequences([f"r{k}" for k in range(len(seqs))], seqs)
    sc, mode = Scoring(), Mode.LOCAL
    res = fast.align_batch(g, reads, sc, mode)
    idx = np.nonzero(res.aligned())[0].astype(np.int64)
    from numba import cuda
    dev = getattr(cuda.get_current_device(), "name", "CUDA simulator")
    dev = dev.decode() if isinstance(dev, bytes) else dev
    kern = long_launch.get_kernel()
    regs = [getattr(k, "regs_per_thread", None) for k in kern.overloads.values()] if \
        hasattr(kern, "overloads") else []
    print(f"{dev}: {len(idx)} reads x {args.len} bp (5% substitutions), SNP graph "
          f"{args.bases} bp, nodes {args.node_len} bp; long kernel registers per thread {regs}")
    want = None
    for cfg in args.configs.split(","):
        s, _, dbg = cfg.partition(":")
        long_plan.S, long_plan.DEBUG = int(s), int(dbg or 0)
        trace(g, reads, sc, mode, res, idx[:8])            # warm-up
        flat, ok, sec, cells, launches = trace(g, reads, sc, mode, res, idx)
        same = ""
        if not long_plan.DEBUG:
            got = flat.objects() if flat is not None else None
            if want is None:
                want = got
            same = "identical" if got == want else "DIFFERENT"
            same += " digest " + hashlib.sha256(repr(got).encode()).hexdigest()[:16]
        print(f"  S={long_plan.S:3d} debug={long_plan.DEBUG}: {sec:7.3f} s, {cells:,} cells, "
              f"{launches} launches, {cells / max(sec, 1e-9) / 1e9:6.1f} GCUPS "
              f"{'ok' if ok else 'status error (expected with debug)'} {same}", flush=True)
    if args.sass:
        with open(args.sass, "w") as f:
            for sass in kern.inspect_sass().values():
                f.write(sass)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
