"""The GPU traceback (s2g/trace/gpu*.py) under the CUDA simulator against the CPU one.

Invoked by tests/test_gpu_traceback.py in a subprocess with NUMBA_ENABLE_CUDASIM=1. For
random SNP graphs (one or both strands), simulated reads with 10% errors, a random read
with N, an empty read and random scoring, in every mode, the tracebacks of
``traceback_batch(..., device=True)`` must equal the CPU's field for field (path, CIGAR,
offsets: the same tie order). Odd cases also shrink the chunk size (several kernel
launches) and the per-read cell bound (a mix of GPU and CPU reads in one batch).
With ``long``, every window runs on the long-window kernel (s2g/trace/long/; the test sets
S2G_CONFIG=long_strip=8,long_max_t=2: several strips and rounds per window). ``band``: the
same with reads of 56-80 bases at 1% errors, whose bands (gpu_program.band_rows) are
narrow, in local and semiglobal mode: the long kernel keeps only the band's direction codes
and merge choices (long.plan.band_layout), and the check fails unless it kept under 60% of
the windows' code words.
Usage: python tests/gpu_tb_cudasim_check.py [n_cases] [long|band]
-> prints "OK <cases> <gpu reads>".
"""
import os
import sys
import tempfile

import numpy as np

assert os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", "set NUMBA_ENABLE_CUDASIM=1"

import sim_poison  # noqa: E402  (tests/: shared memory poisoned as a GPU's may be)

sim_poison.install()

from s2g.config import configure  # noqa: E402
from s2g.graph import load_graph  # noqa: E402
from s2g.reads import ReadBatch  # noqa: E402
from s2g.scoring import Mode, Scoring  # noqa: E402
from s2g.simulate import sample_reads, snp_graph  # noqa: E402
from s2g.trace import gpu, traceback_batch, traceback_gpu_part  # noqa: E402
from s2g.trace.long import plan  # noqa: E402
from s2g.variants import v0_cpu  # noqa: E402


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    band = sys.argv[2:3] == ["band"]
    long_only = sys.argv[2:3] == ["long"] or band
    on_gpu = 0
    run = gpu.run
    layout = plan.band_layout
    words = [0, 0]                          # code words kept (band), and of whole windows

    def counting_layout(coff, rows, *args):
        layout(coff, rows, *args)
        words[0] += int(args[-2].sum())
        words[1] += int((np.diff(coff) * plan.code_stride(rows)).sum()) // 4

    plan.band_layout = counting_layout

    def counting_run(*args, **kw):          # how many reads the device path traced
        nonlocal on_gpu
        left = run(*args, **kw)
        on_gpu += len(args[5]) - len(left)
        return left

    gpu.run = counting_run      # what traceback_batch calls (s2g.trace.batch: gpu.run)
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(n):
            rng = np.random.default_rng(seed)
            # long: reads of 17-30 rows, 3-4 strips of 8 rows, one or two threads a block
            # (every strip its own round, or two strips a round)
            lo, hi = (100, 130) if band else (24, 48) if long_only else (8, 40)
            sg, ref = snp_graph(int(rng.integers(lo, hi)), int(rng.integers(1, 8)),
                                int(rng.integers(1, 6)), seed)
            plan.MAX_T = 1 + seed % 2
            path = os.path.join(tmp, f"g{seed}.gfa")
            sg.write_gfa(path, ref)
            g = load_graph(path, strands="both" if seed % 2 else "forward")
            m = int(rng.integers(56, 81) if band else rng.integers(17, 31) if long_only
                    else rng.integers(3, 30))
            seqs = [s for _, s, _ in sample_reads(sg, 3, m, 0.01 if band else 0.1, 0.5,
                                                  seed + 7)]
            seqs.append("".join(rng.choice(list("ACGTN"), int(rng.integers(1, 25)))))
            seqs.append("")
            reads = ReadBatch.from_sequences([f"r{k}" for k in range(len(seqs))], seqs)
            # band: gaps of 2 a base beside matches of 2 (a mismatch leaves room for 3
            # deletions or 1 insertion: bands of ~8 rows on the SNP graph's equal branches)
            sc = Scoring(2, 4, 4, 2) if band else Scoring(*[int(x) for x in rng.integers(1, 6, 4)])
            # long: every window on the long-window kernel (s2g/trace/long/); otherwise a
            # mix of one-thread windows, long-kernel windows and CPU windows; window slots
            # in shared memory (even seeds) or all in global memory (odd)
            shared = 1 << 20 if seed % 2 == 0 else 0
            configure(gpu_tb_chunk_bytes=3000 if seed % 2 else 1 << 30,
                      gpu_tb_max_cells=0 if long_only else 200 if seed % 3 == 2 else 1 << 21,
                      gpu_long=bool(long_only or seed % 2 == 0), long_shared=shared,
                      long_round_shared=shared)
            for mode in ((Mode.LOCAL, Mode.SEMIGLOBAL) if band else Mode):
                res = v0_cpu.align_batch(g, reads, sc, mode)
                traceback_batch(g, reads, sc, mode, res)
                want = list(res.tracebacks)
                traceback_batch(g, reads, sc, mode, res, device=True)
                for r, (x, y) in enumerate(zip(want, res.tracebacks)):
                    if x != y:
                        raise AssertionError(f"seed {seed} {mode.name} read {r}: gpu {y} != cpu {x}")
                if band:
                    continue
                # the split `s2g align` uses: GPU half, then the CPU half in another call
                flat, left = traceback_gpu_part(g, reads, sc, mode, res)
                traceback_batch(g, reads, sc, mode, res, flat=flat, idx=left)
                if list(res.tracebacks) != want:
                    raise AssertionError(f"seed {seed} {mode.name}: split traceback differs")
    assert on_gpu > 0
    if band:
        assert 0 < words[0] < 0.6 * words[1], f"band layout kept {words[0]} of {words[1]} words"
        print(f"band layout: {words[0]} of {words[1]} code words kept", file=sys.stderr)
    print("OK", n, on_gpu)


if __name__ == "__main__":
    main()
