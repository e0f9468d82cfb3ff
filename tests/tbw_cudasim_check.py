"""The ``fast`` kernel's traceback form and its walk (s2g/trace/gpu_warp.py, knob
``gpu_tb_warp``) under the CUDA simulator against the CPU traceback, field for field.

Invoked by tests/test_gpu_traceback.py in a subprocess with NUMBA_ENABLE_CUDASIM=1. Small
SNP graphs (one or both strands; nodes of 1-5 bases or longer; every fourth case a second
copy of the graph, so reads have two equal windows), simulated reads of 20-60 bases with
1-10% errors, homopolymer and repeat reads (ties), N, a random read and an empty one;
scorings: the default, random ones and tie-rich ones ((1,1,0,1): opening a gap costs
nothing, so open and extend tie; (1,0,0,1); (2,2,2,1)); local and semiglobal; every other
case a chunk budget of a few windows (several launches). ``SeededAligner(device="gpu")``
with the knob on must give the CPU's tracebacks, secondary alignments included, and the
form must have traced windows (its PROFILE); the comparisons take turns (:data:`COMBOS`) at
summarising the walks on the host late (knob ``late_summary``), at once, or on the GPU
(``gpu_tb_summary``, s2g/trace/gpu_summary.py). After the cases, every run checks
:func:`px_case`: a merge whose E-extension tie only the chosen predecessor's bit (px)
breaks (the form without px fails it).
Usage: python tests/tbw_cudasim_check.py [n_cases] [first_seed] -> prints "OK <cases>
<windows traced> <launches>". On a GPU (``S2G_TBW_GPU=1``, no simulator) the same cases run
the compiled kernels and the registers of the forms used are printed
(bench/device_tbw.sh).
"""
import itertools
import os
import sys
import tempfile

import numpy as np

ON_GPU = os.environ.get("S2G_TBW_GPU") == "1"
assert ON_GPU or os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", "set NUMBA_ENABLE_CUDASIM=1"

if not ON_GPU:
    import sim_poison  # noqa: E402  (tests/: shared memory poisoned as a GPU's may be)

    sim_poison.install()

from gpu_cases import append_graph_copy  # noqa: E402
from s2g.config import configure  # noqa: E402
from s2g.graph import load_graph  # noqa: E402
from s2g.index import build_index  # noqa: E402
from s2g.reads import ReadBatch  # noqa: E402
from s2g.scoring import Mode, Scoring  # noqa: E402
from s2g.seeded import SeededAligner  # noqa: E402
from s2g.simulate import SimGraph, sample_reads, snp_graph  # noqa: E402
from s2g.trace import gpu_warp  # noqa: E402

TIES = [(1, 1, 0, 1), (1, 0, 0, 1), (2, 2, 2, 1)]


def graph(tmp, seed, rng):
    """A small SNP graph, tiny nodes on odd seeds; a second copy every fourth seed."""
    tiny = seed % 2 == 1
    sg, ref = snp_graph(int(rng.integers(150, 400)), int(rng.integers(1, 6)) if tiny
                        else int(rng.integers(20, 60)), int(rng.integers(1, 4)), seed)
    path = os.path.join(tmp, f"g{seed}.gfa")
    sg.write_gfa(path, ref)
    if seed % 4 == 3:
        append_graph_copy(path)
    g = load_graph(path, strands="both" if seed % 2 else "forward")
    return sg, ref, g, build_index(g, k=11, s=5)


def tie_reads(sg, ref, rng, n):
    """Reads of the reference walk that tie at merges: an N or a third base at a SNP (every
    allele mismatches: the first predecessor must win), or a deletion over a SNP (the walk
    crosses the merge in E, the chosen predecessor's extension bit), 30-50 bases each."""
    seq = "".join(sg.seqs[v] for v in ref)
    lens = np.cumsum([0] + [len(sg.seqs[v]) for v in ref])
    snps = [int(lens[k]) for k, v in enumerate(ref)
            if k and len(sg.succ[ref[k - 1]]) > 1 and len(sg.seqs[v]) == 1]
    out = []
    for _ in range(n):
        if not snps:
            break
        p = int(rng.choice(snps))
        lo = max(0, p - int(rng.integers(10, 25)))
        s = list(seq[lo:lo + int(rng.integers(30, 50))])
        q = p - lo
        kind = int(rng.integers(3))
        if q >= len(s):
            continue
        if kind == 0:
            s[q] = "N"
        elif kind == 1:
            s[q] = "ACGT"[("ACGT".index(s[q]) + 2) % 4] if s[q] in "ACGT" else "A"
        else:
            d0, d1 = max(0, q - int(rng.integers(0, 4))), q + 1 + int(rng.integers(0, 4))
            del s[d0:d1]
        out.append("".join(s))
    return out


#: (late_summary, gpu_tb_summary) in turn, compare after compare: the walks summarised on
#: the host when the traceback completes (the default), at once, or on the GPU
COMBOS = [(True, False), (False, True), (False, False), (True, True)]
_ROUND = itertools.count()


def compare(g, ix, reads, seqs, sc, mode, chunk, tag):
    """The CPU's and the form's alignments of ``reads``, secondaries included, must agree."""
    configure(gpu_window_fast=True, gpu_tb_warp=False, gpu_tbw_chunk_bytes=chunk)
    cpu = SeededAligner(g, ix, sc, mode, min_chain=11, n_secondary=2, secondary_ratio=0.5)
    want = cpu.align_batch(reads)
    cpu.traceback(reads, want)
    late, dev = COMBOS[next(_ROUND) % len(COMBOS)]
    configure(gpu_tb_warp=True, late_summary=late, gpu_tb_summary=dev)
    gpu = SeededAligner(g, ix, sc, mode, min_chain=11, device="gpu", n_secondary=2,
                        secondary_ratio=0.5)
    got = gpu.align_batch(reads)
    for f in ("score", "end_i", "end_j", "mapq"):
        if not np.array_equal(getattr(want, f), getattr(got, f)):
            raise AssertionError(f"{tag} {mode.name} {f}")
    gpu.traceback(reads, got)
    for r, (x, y) in enumerate(zip(want.tracebacks, got.tracebacks)):
        if x != y:
            raise AssertionError(f"{tag} {mode.name} {sc} read {r} {seqs[r]!r}: "
                                 f"gpu {y} != cpu {x}")
    ws, gs = want.secondary, got.secondary
    if list(ws.owner) != list(gs.owner) or \
            list(ws.tracebacks or []) != list(gs.tracebacks or []):
        raise AssertionError(f"{tag} {mode.name}: secondary alignments differ")


#: a merge where the deletion's extension bit (``px``, docs/plans/warp_traceback.md) differs
#: from the compare ``E - e > H - o - e``. Read ``...TA TC GC...`` on ``...TACTC`` (node 1),
#: then ``AC`` (2) or ``TC`` (3, the kept predecessor), then ``GGC...`` (4): deleting ``C``,
#: matching ``TC`` and deleting ``AC`` + ``G`` (the CPU's ``26=1D2=3D26=``) ties deleting
#: ``CTC``, matching node 3's ``TC`` and opening a deletion of ``G``; at node 4's first
#: column node 2's extended E equals node 3's ``H - o - e``, so only px says "extend" (the
#: form without it walks into node 2's H). Found by a search of random bubbles.
PX_FLANK = ("TGACCTAGGTCATCGGAATCCTGA", "GGCATTCAGCTAACGTTAGCCATC")
PX_SEQS = [PX_FLANK[0] + "TACTC", "AC", "TC", "GGC" + PX_FLANK[1]]
PX_READ = PX_FLANK[0] + "TATCGC" + PX_FLANK[1]


def px_case(tmp):
    """The merge's E-extension tie (:data:`PX_SEQS`) under the default scoring and
    (2,2,2,1), local and semiglobal."""
    path = os.path.join(tmp, "px.gfa")
    SimGraph([str(k + 1) for k in range(4)], PX_SEQS, [[1, 2], [3], [3], []]).write_gfa(path)
    g = load_graph(path, strands="forward")
    ix = build_index(g, k=11, s=5)
    reads = ReadBatch.from_sequences(["px"], [PX_READ])
    for sc in (Scoring(), Scoring(2, 2, 2, 1)):
        for mode in (Mode.LOCAL, Mode.SEMIGLOBAL):
            compare(g, ix, reads, [PX_READ], sc, mode, 1 << 30, "px")


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    first = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(first, first + n):
            rng = np.random.default_rng(seed)
            sg, refw, g, ix = graph(tmp, seed, rng)
            err = float(rng.choice([0.01, 0.05, 0.1]))
            seqs = [s for _, s, _ in sample_reads(sg, 5, int(rng.integers(20, 60)), err, 0.5,
                                                  seed + 7)]
            ref = seqs[0]
            seqs.append(ref[:10] + "A" * 12 + ref[10:30])           # a homopolymer run
            seqs.append(ref[:15] + ref[5:15] + ref[15:35])          # a repeat inside
            seqs.append(ref[:12] + "N" + ref[13:40])
            seqs += tie_reads(sg, refw, rng, 16)
            seqs.append("".join(rng.choice(list("ACGTN"), int(rng.integers(1, 25)))))
            seqs.append("")
            reads = ReadBatch.from_sequences([f"r{k}" for k in range(len(seqs))], seqs)
            sc = (Scoring() if seed % 3 == 0 else Scoring(*TIES[(seed // 3) % 3])
                  if seed % 3 == 1 else Scoring(*[int(x) for x in rng.integers(1, 6, 4)]))
            for mode in (Mode.LOCAL, Mode.SEMIGLOBAL):
                compare(g, ix, reads, seqs, sc, mode, 60_000 if seed % 2 else 1 << 30,
                        f"seed {seed}")
        px_case(tmp)
    p = gpu_warp.PROFILE
    assert p["windows"] > 0 and p["launches"] > 0, p
    assert p["summaries"] > 0, p            # walks summarised on the GPU too
    print("OK", n, p["windows"], p["launches"])
    if ON_GPU:
        from s2g.variants.fast import kernel as fk
        for key, kern in sorted(fk._KERNELS.items(), key=str):
            print("kernel G K mode ... tb", key, "registers", kern.get_regs_per_thread(),
                  "local bytes", kern.get_local_mem_per_thread())
        print("gpu_warp PROFILE", p)


if __name__ == "__main__":
    main()
