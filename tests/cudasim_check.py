"""GPU variants vs V0 under the CUDA simulator (STYLE.md habit 10).

Run by test_gpu_variants.py in a subprocess with NUMBA_ENABLE_CUDASIM=1, because the
variable must be set before numba is first imported. Usage::

    NUMBA_ENABLE_CUDASIM=1 python tests/cudasim_check.py v1_antidiag,v3_coop [cases] [seed]

Tiny random DAGs (both strands, inversions, N bases), reads of 0..12 bases, all three
modes, random scoring; every variant's score and end cell must equal V0's. Block
sizes are patched down (8 threads; V4 blocks of 4 rows, so reads of up to 12 bases
take up to 3 passes) so the simulator's Python threads stay few and strided rows and
passes are exercised. Also: V1's memory refusal, the int32 refusal, the traceback
from a variant's end cells (``s2g.trace.traceback_batch``, as the driver runs it).
Exit status 0 only when everything matched.
"""
from __future__ import annotations

import importlib
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from gpu_cases import describe, mismatches, random_graph, random_reads, random_scoring  # noqa: E402


def main(argv):
    from numba import config
    if not config.ENABLE_CUDASIM:
        print("NUMBA_ENABLE_CUDASIM=1 must be set before numba is imported", file=sys.stderr)
        return 2
    from s2g.errors import S2GError
    from s2g.reads import ReadBatch
    from s2g.scoring import Mode, Scoring
    from s2g.trace import traceback_batch
    from s2g.variants import _cuda_common as cc
    from s2g.variants import v0_cpu

    names = argv[1].split(",")
    cases = int(argv[2]) if len(argv) > 2 else 6
    seed = int(argv[3]) if len(argv) > 3 else 0
    cc.BLOCK = 8
    cc.V4_MAX_BLOCK = 4
    mods = {n: importlib.import_module(f"s2g.variants.{n}") for n in names}
    rng = np.random.default_rng(seed)
    failures = 0
    t0 = time.time()
    for case in range(cases):
        g = random_graph(rng)
        reads = random_reads(rng, 3, 12)
        sc = random_scoring(rng)
        for mode in Mode:
            ref = v0_cpu.align_batch(g, reads, sc, mode)
            for n, mod in mods.items():
                res = mod.align_batch(g, reads, sc, mode)
                bad = mismatches(ref, res)
                if bad:
                    failures += 1
                    print(f"FAIL {n} case {case} {mode.name} {sc} bases={g.n_bases} "
                          f"lens={reads.lengths().tolist()}: {describe(ref, res, bad)}")
    # traceback through the shared CPU traceback from the GPU end cell
    g = random_graph(rng, n_seg=4)
    reads = random_reads(rng, 2, 10, min_len=3)
    ref = traceback_batch(g, reads, Scoring(), Mode.LOCAL,
                          v0_cpu.align_batch(g, reads, Scoring(), Mode.LOCAL))
    for n, mod in mods.items():
        res = traceback_batch(g, reads, Scoring(), Mode.LOCAL,
                              mod.align_batch(g, reads, Scoring(), Mode.LOCAL))
        if [t and t.cigar for t in res.tracebacks] != [t and t.cigar for t in ref.tracebacks]:
            failures += 1
            print(f"FAIL {n} traceback differs from v0's")
    # refusals: int32 bound, V1's memory check
    long = ReadBatch.from_codes(["long"], [np.zeros(30_000, np.uint8)])
    for n, mod in mods.items():
        try:
            mod.align_batch(g, long, Scoring(10_000, 10_000, 10_000, 10_000), Mode.GLOBAL)
            failures += 1
            print(f"FAIL {n} accepted a problem beyond int32")
        except S2GError as exc:
            if "int32" not in str(exc):
                failures += 1
                print(f"FAIL {n} int32 refusal message: {exc}")
    if "v1_antidiag" in mods:
        saved = cc.free_device_memory
        cc.free_device_memory = lambda: 100
        try:
            mods["v1_antidiag"].align_batch(g, reads, Scoring(), Mode.LOCAL)
            failures += 1
            print("FAIL v1 ignored its memory need")
        except S2GError as exc:
            if "3 x (m+1) x N x 4" not in str(exc):
                failures += 1
                print(f"FAIL v1 memory message: {exc}")
        finally:
            cc.free_device_memory = saved
    print(f"{','.join(names)}: {cases} cases x 3 modes, {failures} failures, "
          f"{time.time() - t0:.1f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
