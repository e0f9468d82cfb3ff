"""Random inputs and the exactness check shared by the GPU variant tests.

Used by tests/cudasim_check.py (CUDA simulator, run in a subprocess by
test_gpu_variants.py) and the ``-m gpu`` tests on the device machine (test_gpu_real.py,
test_fast.py, test_gpu_traceback.py); the end of the file lists the kernels and the
compile tasks of ``pytest -m gpu`` (conftest.py's precompile pool).
"""
from __future__ import annotations

import os
import tempfile
import warnings

import numpy as np

from s2g.graph import load_graph
from s2g.reads import ReadBatch
from s2g.scoring import Scoring

GPU_VARIANTS = ("v1_antidiag", "v2_rolling", "v3_coop", "v4_interread")


def append_graph_copy(path):
    """Append to the GFA at ``path`` a copy of its S and L lines, every segment renamed
    ``c<name>``: every read then has two equal windows (the simulator checks' repeats)."""
    with open(path) as fh:
        text = fh.read()
    copy = [ln.replace("\t", "\tc", 1) if ln[:1] == "S" else
            "\t".join(f if i not in (1, 3) else "c" + f for i, f in enumerate(ln.split("\t")))
            for ln in text.splitlines() if ln[:1] in "SL"]
    with open(path, "a") as fh:
        fh.write("\n".join(copy) + "\n")


def random_gfa_text(rng, n_seg=None, max_seg_len=4, p_link=0.45):
    """A random GFA1 DAG over segments s0..s{n-1}: links only forward in index order,
    some with a reverse orientation (inversions; cycles of the doubled graph are broken
    when loading)."""
    n_seg = n_seg or int(rng.integers(1, 6))
    alphabet = list("ACGTN") if rng.random() < 0.2 else list("ACGT")
    lines = ["H\tVN:Z:1.0"]
    for s in range(n_seg):
        ln = int(rng.integers(1, max_seg_len + 1))
        lines.append(f"S\ts{s}\t{''.join(rng.choice(alphabet, ln))}")
    for a in range(n_seg):
        for b in range(a + 1, n_seg):
            if rng.random() < p_link:
                oa = "-" if rng.random() < 0.2 else "+"
                ob = "-" if rng.random() < 0.2 else "+"
                lines.append(f"L\ts{a}\t{oa}\ts{b}\t{ob}\t0M")
    return "\n".join(lines) + "\n"


def load_text(text):
    fd, path = tempfile.mkstemp(suffix=".gfa")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return load_graph(path, break_cycles=True)
    finally:
        os.unlink(path)


def random_graph(rng, **kw):
    return load_text(random_gfa_text(rng, **kw))


def random_reads(rng, n, max_len, min_len=0):
    codes = []
    for _ in range(n):
        ln = int(rng.integers(min_len, max_len + 1))
        codes.append(rng.integers(0, 5 if rng.random() < 0.2 else 4, ln).astype(np.uint8))
    return ReadBatch.from_codes([f"r{k}" for k in range(n)], codes)


def random_scoring(rng):
    return Scoring(int(rng.integers(1, 4)), int(rng.integers(0, 5)), int(rng.integers(0, 5)),
                   int(rng.integers(1, 3)))


def mismatches(ref, res):
    """Indices of reads whose score or end cell differ between two BatchResults."""
    bad = (np.asarray(ref.score) != np.asarray(res.score)) | \
          (np.asarray(ref.end_i) != np.asarray(res.end_i)) | \
          (np.asarray(ref.end_j) != np.asarray(res.end_j))
    return np.nonzero(bad)[0].tolist()


def describe(ref, res, idx, limit=3):
    return "; ".join(f"read {r}: v0 {int(ref.score[r])}@({int(ref.end_i[r])},{int(ref.end_j[r])}) "
                     f"got {int(res.score[r])}@({int(res.end_i[r])},{int(res.end_j[r])})"
                     for r in idx[:limit])


# ------------------------------------------------------------------ ``-m gpu``: kernels
#
# Compiling dominates a cold ``pytest -m gpu`` (10-25 s per `fast` kernel on the H100
# host, and ~1-2 min of Numba CPU code: tracebacks, seeded windows): the suite uses a
# fixed set of `fast` kernels (:func:`fast_kernels`), and conftest.py compiles them and
# the CPU code the GPU tests need once, in parallel worker processes (:func:`warm`),
# into the on-disk caches (``$S2G_CACHE_DIR`` for `fast`, Numba's cache for the rest),
# in the background from the session's start; each test module's GPU tests wait for
# their own tasks (WARM_BY_MODULE) and then only load what they use.

def fast_kernels():
    """Every `fast` kernel (G, K, mode, pair) that ``pytest -m gpu`` compiles: the
    configurations :func:`s2g.variants.fast.choose_config` picks in production for
    byte-sized scorings — the 16-bit pair kernel's (local mode), the 32-bit kernel's
    long-read strips in local mode (reads too long for 16 bits), and the 32-bit kernel's
    in semiglobal and global mode. Tests that force (G, K) use these too."""
    from s2g.scoring import Mode
    from s2g.variants import fast
    lens = range(1, 4 * fast.LONG_G * fast.LONG_K)
    pair = sorted({fast.choose_config(n, True) for n in lens})
    plain = sorted({fast.choose_config(n) for n in lens})
    out = [(G, K, Mode.LOCAL, True) for G, K in pair]
    out.append((fast.LONG_G, fast.LONG_K, Mode.LOCAL, False))
    out += [(G, K, m, False) for m in (Mode.SEMIGLOBAL, Mode.GLOBAL) for G, K in plain]
    return out


def fill_length(G, K, pair):
    """The longest read that ``choose_config(., pair)`` gives (G, K): its strip's last row
    is used. Long-read strips (no longest read): 2.5 strips."""
    from s2g.variants import fast
    lens = [n for n in range(1, 4 * fast.LONG_G * fast.LONG_K)
            if fast.choose_config(n, pair) == (G, K)]
    return lens[-1] if lens[-1] < 4 * fast.LONG_G * fast.LONG_K - 1 else 5 * G * K // 2


def reads_up_to(rng, n, max_len):
    """``n`` random reads (as :func:`random_reads`), the first exactly ``max_len`` long."""
    rest = random_reads(rng, n - 1, max_len)
    first = rng.integers(0, 4, max_len).astype(np.uint8)
    return ReadBatch.from_codes([f"r{k}" for k in range(n)],
                                [first] + [rest.codes(k) for k in range(n - 1)])


#: lengths of tests/test_v0.py's variant workload (simulated 40 bp reads, the inversion
#: graph's reads of up to 12 bp): the `fast` kernels test_every_variant_equals_v0 uses
V0_WORKLOAD_LENGTHS = (12, 40)

#: what each test module's GPU tests compile (conftest's precompile pool): `fast`
#: kernels, and the CPU code of the named :func:`warm` tasks. V1-V4 (no disk cache) and
#: anything missed compile in the test process as before.
WARM_BY_MODULE = {
    "test_fast": ("fast", "cpu_align"),
    "test_v0": ("fast_v0", "cpu_align"),
    "test_gpu_real": ("cpu_align",),
    "test_gpu_traceback": ("cpu_align", "tb16", "tb_long", "gpu_tb"),
    "test_seeded": ("cpu_align", "seeded", "tb16", "gpu_tb"),
}

#: tests that wait for their own tasks, not their module's (``module::function``): the
#: seeded long-read test compiles the pruned CPU pass and the long-window kernels, which
#: no other test of its module needs (fresh H200, 2026-12-03: 376 s, 245 of them in the
#: test compiling, with its module's four tasks, none of them these, done at 127 s)
WARM_BY_TEST = {
    "test_seeded::test_gpu_long_reads_seeded_equal_cpu": ("long_cpu", "long_gpu"),
}

#: compile cost of a task, in seconds on the 2-core dev VM (a fast kernel: 1.4 K s for
#: the pair kernel, 0.7 K s for the 32-bit one); longest first keeps the pool short
_COST = {"tb16": 120, "seeded": 50, "gpu_tb": 40, "tb_long": 30, "cpu_align": 25,
         "long_gpu": 200, "long_cpu": 60}


def unit(module, function) -> str:
    """What a GPU test waits for: ``module::function`` when WARM_BY_TEST names it, else
    its module."""
    key = f"{module}::{function}"
    return key if key in WARM_BY_TEST else module


def warm_tasks(modules, first=()):
    """The :func:`warm` tasks for the GPU tests of ``modules`` (:func:`unit` names: test
    modules, or tests of WARM_BY_TEST): those of the units ``first`` (they run first),
    then the others, most expensive first."""
    from s2g.variants import fast

    def of(mod):
        out = set()
        for name in WARM_BY_TEST.get(mod, WARM_BY_MODULE.get(mod, ())):
            if name == "fast":
                out.update(("fast", G, K, int(m), p) for G, K, m, p in fast_kernels())
            elif name == "fast_v0":
                out.update(("fast", G, K, int(m), p) for G, K, m, p in fast_kernels()
                           if any(fast.choose_config(n, p) == (G, K) for n in V0_WORKLOAD_LENGTHS))
            else:
                out.add((name,))
        return out

    tasks = set().union(*(of(m) for m in modules)) if modules else set()
    early = set().union(*(of(m) for m in first if m in modules)) if first else set()

    def cost(t):
        if t[0] == "fast":
            return t[2] * (1.4 if t[4] else 0.7)
        return _COST[t[0]]
    return sorted(tasks, key=lambda t: (t not in early, -cost(t), t))


def warm(task):
    """Compile what ``task`` names (a worker of conftest's precompile pool, run in a fresh
    process with the GPU): ``("fast", G, K, mode, pair)`` one `fast` kernel, else the
    CPU (and GPU traceback) code of one kind of GPU test, by running it on a tiny input.
    Returns (task, seconds, error or None); never raises."""
    import time
    t0 = time.perf_counter()
    try:
        if task[0] == "fast":
            from s2g.variants import fast
            G, K, mode, pair = task[1:]
            fast.get_kernel(G, K, mode, True, pair)
        else:
            globals()["_warm_" + task[0]]()
        err = None
    except Exception as exc:  # noqa: BLE001 - reported by conftest; the test compiles it
        err = f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
    return task, time.perf_counter() - t0, err


def _snp(total, seed=5):
    from s2g.simulate import snp_graph
    sg, ref = snp_graph(total, 50, 2, seed)
    fd, path = tempfile.mkstemp(suffix=".gfa")
    os.close(fd)
    try:
        sg.write_gfa(path, ref)
        return sg, load_graph(path)
    finally:
        os.unlink(path)


def _sim_reads(sg, n, length, seed):
    from s2g.simulate import sample_reads
    seqs = [s for _, s, _ in sample_reads(sg, n, length, 0.02, 0.5, seed)]
    return ReadBatch.from_sequences([f"w{k}" for k in range(len(seqs))], seqs)


def _warm_cpu_align():
    """V0, cpu (V0 on every core), fast's host tables, graph loading (random, real)."""
    from pathlib import Path

    from s2g.scoring import Mode
    from s2g.variants import cpu_parallel, fast, v0_cpu
    rng = np.random.default_rng(0)
    g = random_graph(rng, n_seg=6, max_seg_len=12)
    reads = random_reads(rng, 4, 40, 1)
    sc = Scoring()
    a, b, o, e = sc.as_tuple()
    for m in Mode:
        v0_cpu.align_batch(g, reads, sc, m)
        cpu_parallel.align_batch(g, reads, sc, m)
        slot, n = fast.fast_slots(g)
        fast.column_tables(g.base, g.node_start, g.pred_ptr, g.pred_idx, slot, g.is_sink,
                           int(m), o, e, n)
    real = Path(__file__).resolve().parent / "data" / "real"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, brk in (("mt_minigraph/MT.gfa", True), ("drb1_odgi/DRB1-3123.gfa", False)):
            if (real / name).exists():
                load_graph(str(real / name), break_cycles=brk)


def _traceback_all(g, reads, sc, modes, limits=None):
    from s2g.trace import traceback_batch
    from s2g.variants import cpu_parallel
    for m in modes:
        res = cpu_parallel.align_batch(g, reads, sc, m)
        traceback_batch(g, reads, sc, m, res, limits=limits)
        list(res.tracebacks)


def _warm_tb16():
    """CPU tracebacks in int16 lanes (the reference of tests/test_gpu_traceback.py; the
    GPU tests' score bounds all fit int16 lanes, so int32 lanes are not compiled)."""
    from s2g.scoring import Mode
    sg, g = _snp(2000)       # (global mode on it would take int32 lanes: mode is not a type)
    _traceback_all(g, _sim_reads(sg, 3, 150, 6), Scoring(), [Mode.LOCAL, Mode.SEMIGLOBAL])


def _warm_tb_long():
    """CPU tracebacks of one read per thread (windows too large for lanes): lanes off, so
    that this task does not compile them too (tb16 does)."""
    from s2g.scoring import Mode
    from s2g.trace import LaneLimits
    sg, g = _snp(2000)
    _traceback_all(g, _sim_reads(sg, 3, 150, 6), Scoring(), list(Mode), LaneLimits(cells=0))


def _warm_gpu_tb():
    """The GPU traceback kernel and its host code (tests/test_gpu_traceback.py's _same)."""
    from s2g.scoring import Mode
    from s2g.trace import FlatTracebacks, gpu, traceback_batch
    from s2g.variants import cpu_parallel
    sg, g = _snp(2000)
    reads = _sim_reads(sg, 4, 150, 6)
    sc = Scoring()
    for m in (Mode.LOCAL, Mode.SEMIGLOBAL):      # every read on the GPU: no CPU lanes here
        res = cpu_parallel.align_batch(g, reads, sc, m)
        idx = np.nonzero(res.aligned())[0].astype(np.int64)
        gpu.run(g, reads, sc, m, res, idx, FlatTracebacks(len(res)))
        traceback_batch(g, reads, sc, m, res, device=True)
        list(res.tracebacks)


def _warm_seeded():
    """Index, seeded windows on the CPU and the GPU (tests/test_seeded.py)."""
    import s2g
    from s2g.index import build_index
    from s2g.scoring import Mode
    from s2g.seeded import SeededAligner
    from s2g.simulate import simulate
    with tempfile.TemporaryDirectory() as d:
        gfa, fq, _ = simulate(os.path.join(d, "s"), total_bases=20_000, n_reads=40, seed=5)
        g = s2g.load_graph(gfa)
        reads = s2g.read_reads(fq)
        ix = build_index(g)
        for m in (Mode.LOCAL, Mode.SEMIGLOBAL):   # tracebacks: tb16 and gpu_tb
            for device in ("cpu", "gpu"):
                SeededAligner(g, ix, Scoring(), m, device=device).align_batch(reads)


def _warm_long(device):
    """test_seeded's long-read test on a small input: seeded 5 kbp reads (5% errors), both
    modes, scores and tracebacks, on ``device`` (the CPU's pruned pass and its walks; the
    GPU's long-window kernels, pruned and traced, and their host code)."""
    from s2g.index import build_index
    from s2g.scoring import Mode
    from s2g.seeded import SeededAligner
    from s2g.simulate import sample_reads
    sg, g = _snp(30_000, seed=8)
    seqs = [s for _, s, _ in sample_reads(sg, 4, 5000, 0.05, 0.5, 9)]
    reads = ReadBatch.from_sequences([f"w{k}" for k in range(len(seqs))], seqs)
    ix = build_index(g)
    for m in (Mode.LOCAL, Mode.SEMIGLOBAL):
        al = SeededAligner(g, ix, Scoring(), m, device=device)
        res = al.align_batch(reads)
        al.traceback(reads, res)
        list(res.tracebacks)


def _warm_long_cpu():
    _warm_long("cpu")


def _warm_long_gpu():
    _warm_long("gpu")


def gfa_excerpt(path, n_seg):
    """GFA text of a real graph's first ``n_seg`` segments (in file order: for a sorted
    pangenome graph, a region) and the links among them; paths and walks dropped. For
    the launch-bound V1 and V2 (one launch per anti-diagonal: a whole real graph costs
    seconds per mode), a real graph's structure at a fraction of its columns."""
    keep, seg, links = set(), [], []
    with open(path) as fh:
        for line in fh:
            f = line.rstrip("\n").split("\t")
            if f[0] == "S" and len(keep) < n_seg:
                keep.add(f[1])
                seg.append("\t".join(f[:3]))
            elif f[0] == "L":
                links.append(f)
    lines = ["H\tVN:Z:1.0"] + seg
    lines += ["\t".join(f[:6]) for f in links if f[1] in keep and f[3] in keep]
    return "\n".join(lines) + "\n"
