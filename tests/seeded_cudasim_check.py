"""Seeded windows on the GPU (s2g/trace/gpu.py ``run_windows``) under the CUDA simulator
against the CPU path, field for field.

Invoked by tests/test_seeded.py in a subprocess with NUMBA_ENABLE_CUDASIM=1. Small SNP
graphs (one or both strands), simulated reads with errors, a random read, an empty read,
random scoring, local and semiglobal: ``SeededAligner(device="gpu")`` must give the same
scores, end cells, MAPQ, tracebacks and secondary alignments as ``device="cpu"`` (the reference window DP and
the CPU traceback). Odd cases shrink the chunk size (several launches) and the per-task
cell bound (a GPU/CPU mix); seeds 0 and 3 run the windows on the ``fast`` kernel
(s2g/variants/fast/windows.py) and trace the chosen ones from their end cells (seed 0
with the kernel's per-node tables made beside the windows, ``seed_node_parts``). Even
cases leave the packing of the tracebacks to the first reader of ``flat`` (``late``).
With ``long``, every window runs on the long-window kernel (s2g/trace/long/; the test sets
S2G_CONFIG=long_strip=8,long_max_t=2: several strips and rounds per window); local mode's
chosen windows are traced in the rows their pruned scoring pass kept (gpu_prune_band; how
much that narrows is checked in tests/pruned_gpu_cudasim_check.py).
Usage: python tests/seeded_cudasim_check.py [n_cases] [long] -> prints "OK <cases> <gpu
windows> <secondaries> <windows traced in kept rows>".
"""
import os
import sys
import tempfile

import numpy as np

assert os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", "set NUMBA_ENABLE_CUDASIM=1"

import sim_poison  # noqa: E402  (tests/: shared memory poisoned as a GPU's may be)

sim_poison.install()

from gpu_cases import append_graph_copy  # noqa: E402
from s2g.config import configure  # noqa: E402
from s2g.graph import load_graph  # noqa: E402
from s2g.index import build_index  # noqa: E402
from s2g.reads import ReadBatch  # noqa: E402
from s2g.scoring import Mode, Scoring  # noqa: E402
from s2g.seeded import SeededAligner  # noqa: E402
from s2g.simulate import sample_reads, snp_graph  # noqa: E402
from s2g.trace import gpu as trace_gpu  # noqa: E402
from s2g.trace import gpu_chunk  # noqa: E402

#: long_device_bytes of the odd seeds' long runs: a thread's share (over the default
#: align_workers + finish_workers) holds a few of their windows (their launches of 8
#: windows become launches of 4)
LONG_BYTES = 3 * 40_000


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    long_only = sys.argv[2:3] == ["long"]
    on_gpu = 0
    n_sec = 0
    n_two = 0            # reads with two windows or more in the lead-first flow
    n_late = 0           # batches whose packing the GPU traceback left pending
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(n):
            rng = np.random.default_rng(seed)
            sg, ref = snp_graph(int(rng.integers(150, 400)), int(rng.integers(3, 30)),
                                int(rng.integers(1, 4)), seed)
            path = os.path.join(tmp, f"g{seed}.gfa")
            sg.write_gfa(path, ref)
            if seed % 2:        # a second copy of the graph: every read has two equal windows
                append_graph_copy(path)
            g = load_graph(path, strands="both" if seed % 2 else "forward")
            ix = build_index(g, k=11, s=5)
            seqs = [s for _, s, _ in sample_reads(sg, 4, int(rng.integers(20, 40)), 0.05, 0.5,
                                                  seed + 7)]
            seqs.append("".join(rng.choice(list("ACGTN"), int(rng.integers(1, 25)))))
            seqs.append("")
            reads = ReadBatch.from_sequences([f"r{k}" for k in range(len(seqs))], seqs)
            sc = Scoring(*[int(x) for x in rng.integers(1, 6, 4)])
            # long: every window on the long-window kernel (s2g/trace/long/); otherwise
            # one-thread windows, long-kernel windows (seed 2, 8, ...) and CPU ones (5, ...)
            mc = 0 if long_only else 800 if seed % 3 == 2 else 1 << 21
            # window slots in shared memory (even seeds) or all in global memory (odd)
            shared = 1 << 20 if seed % 2 == 0 else 0
            # the fast kernel's windows (seeds 0, 3: traced from their end cells) or the
            # traceback kernel's find mode (the others, and every window with "long")
            # long-kernel windows scored first, the chosen ones traced later from their end
            # cells (even seeds; with "long" on the long kernel too, in their bands), or
            # walked in the same pass (odd seeds)
            configure(gpu_tb_chunk_bytes=3000 if seed % 2 else 1 << 30,
                      gpu_long=bool(long_only or seed % 2 == 0), long_shared=shared,
                      long_round_shared=shared,
                      gpu_window_fast=bool(not long_only and seed % 3 == 0),
                      # the fast kernel's chosen windows traced by its traceback form (seed
                      # 3; tests/tbw_cudasim_check.py checks it) or by the traceback kernel
                      gpu_tb_warp=bool(not long_only and seed % 6 == 3),
                      seed_node_parts=seed == 0,      # the fast kernel's node tables: seeding
                      long_score_first=seed % 2 == 0,
                      gpu_tb_max_cells=0 if long_only else 1 << 21,
                      # long, odd seeds: each thread's long buffers bounded (a few windows a
                      # launch, the pool's long buffers dropped when a launch left too many)
                      long_device_bytes=LONG_BYTES if long_only and seed % 2 else 6 << 30)
            for mode in (Mode.LOCAL, Mode.SEMIGLOBAL):
                cpu = SeededAligner(g, ix, sc, mode, min_chain=11, n_secondary=2, secondary_ratio=0.5)
                want = cpu.align_batch(reads)
                cpu.traceback(reads, want)
                gpu = SeededAligner(g, ix, sc, mode, min_chain=11, device="gpu", n_secondary=2,
                                    secondary_ratio=0.5)
                run = trace_gpu.run_windows

                def bounded(*a, **kw):
                    nonlocal on_gpu
                    wr = run(*a, **{**kw, "max_cells": mc})
                    on_gpu += int(wr.on_gpu.sum())
                    return wr

                trace_gpu.run_windows = bounded      # what SeededAligner calls
                try:
                    got = gpu.align_batch(reads)
                finally:
                    trace_gpu.run_windows = run
                for f in ("score", "end_i", "end_j", "mapq", "col_lo"):
                    x, y = getattr(want, f), getattr(got, f)
                    if not np.array_equal(x, y):
                        raise AssertionError(f"seed {seed} {mode.name} {f}: gpu {y} != cpu {x}")
                late = seed % 2 == 0      # packing left to the first reader of flat
                gpu.traceback(reads, got, late=late)
                n_late += int(late and got._pending is not None)
                for r, (x, y) in enumerate(zip(want.tracebacks, got.tracebacks)):
                    if x != y:
                        raise AssertionError(f"seed {seed} {mode.name} read {r}: gpu {y} != cpu {x}")
                ws, gs = want.secondary, got.secondary
                n_sec += len(ws)
                if list(ws.owner) != list(gs.owner) or \
                        list(ws.tracebacks or []) != list(gs.tracebacks or []):
                    raise AssertionError(f"seed {seed} {mode.name}: secondary alignments differ")
                # long reads' flow (SeededAligner._windows): every read counted long, its
                # lead window first, the others in a second GPU run merged into the first
                # (odd seeds: two copies of the graph, so every read has two windows)
                if seed % 2 == 0:
                    continue
                configure(corridor_min_len=16)
                try:
                    cpu = SeededAligner(g, ix, sc, mode, min_chain=11)
                    want = cpu.align_batch(reads)
                    cpu.traceback(reads, want)
                    gpu = SeededAligner(g, ix, sc, mode, min_chain=11, device="gpu")
                    got = gpu.align_batch(reads)
                    gpu.traceback(reads, got)
                finally:
                    configure(corridor_min_len=1000)
                for f in ("score", "end_i", "end_j", "mapq"):
                    if not np.array_equal(getattr(want, f), getattr(got, f)):
                        raise AssertionError(f"seed {seed} {mode.name} lead-first {f}")
                if list(want.tracebacks) != list(got.tracebacks):
                    raise AssertionError(f"seed {seed} {mode.name} lead-first tracebacks")
                n_two += int(np.count_nonzero(want.n_windows > 1))
    assert on_gpu > 0 and n_sec > 0 and n_two > 0 and n_late > 0
    p = gpu_chunk.PROFILE
    if long_only:       # chosen windows traced in their pruned pass's kept rows
        assert p["long_live_windows"] > 0, p
    else:
        copies_case()
    print("OK", n, on_gpu, n_sec, p["long_live_windows"])


def copies_case():
    """60 bp reads of a 70 bp element repeated twice in a row (one merged window a read):
    the copies pass (s2g/seeded/copies.py) runs its masked windows on the GPU, on the
    ``fast`` kernel's windows and on the long-window kernel (pruned, with its floor), and
    MAPQ, scores and the other copy's score equal the CPU path's."""
    rng = np.random.default_rng(11)

    def rnd(k):
        return "".join(rng.choice(list("ACGT"), k))
    x = rnd(70)
    genome = rnd(120) + x + x + rnd(110)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "tandem.gfa")
        segs = [genome[i:i + 50] for i in range(0, len(genome), 50)]
        with open(path, "w") as fh:
            fh.write("".join(f"S\ts{i}\t{q}\n" for i, q in enumerate(segs))
                     + "".join(f"L\ts{i}\t+\ts{i + 1}\t+\t0M\n" for i in range(len(segs) - 1)))
        g = load_graph(path)
    ix = build_index(g, k=11, s=5)
    seqs = [x[0:60], x[6:36] + "A" + x[37:66]]
    reads = ReadBatch.from_sequences(["c0", "c1"], seqs)
    for fast, max_cells in ((True, 1 << 21), (False, 0)):
        configure(gpu_window_fast=fast, gpu_tb_max_cells=max_cells, gpu_long=True,
                  long_score_first=True)
        cpu = SeededAligner(g, ix, Scoring(), Mode.LOCAL, min_chain=11)
        want = cpu.align_batch(reads)
        cpu.traceback(reads, want)
        gpu = SeededAligner(g, ix, Scoring(), Mode.LOCAL, min_chain=11, device="gpu")
        got = gpu.align_batch(reads)
        gpu.traceback(reads, got)
        for f in ("score", "end_i", "end_j", "mapq", "copy_score"):
            if not np.array_equal(getattr(want, f), getattr(got, f)):
                raise AssertionError(f"copies (fast={fast}) {f}: gpu {getattr(got, f)} "
                                     f"!= cpu {getattr(want, f)}")
        assert (want.mapq <= 3).all(), want.mapq
        assert gpu.totals["copies windows on the GPU"] == 2, gpu.totals
        assert cpu.totals["windows realigned for copies"] == 2


if __name__ == "__main__":
    main()
