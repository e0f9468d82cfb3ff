"""Seeded windows' searches on the GPU (s2g/seeded/windows_gpu.py, knob gpu_window_search):
the simulator against the host's chain lists, the kernel's PTX, and on a real GPU the
lists and the alignments with the knob on against the CPU's."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import s2g
from s2g.config import configure
from s2g.graph_core import successors
from s2g.index import build_index
from s2g.reads import ReadBatch
from s2g.scoring import Mode, Scoring
from s2g.seeded import SeededAligner
from s2g.seeded.windows import batch_chain_pieces

REPO = Path(__file__).resolve().parents[1]


def test_window_searches_under_the_cuda_simulator_match_the_host():
    """Every chain's list made by the search kernel == batch_chain_pieces' (SNP graphs,
    random chains, BRCA2, DRB1), tiny caps sending chains to the host, a list buffer too
    small at first; windows from either == each other, byte for byte."""
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=str(REPO))
    p = subprocess.run([sys.executable, str(REPO / "tests" / "windows_gpu_cudasim_check.py"),
                        "4"], env=env, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.startswith("OK 4"), p.stdout
    chains, host = map(int, p.stdout.split()[2:4])
    assert chains > 100 and 0 < host < chains, p.stdout


def test_window_search_kernel_compiles_to_sm90():
    """The search kernel compiles with its real signature (the simulator checks no types),
    its local memory within the budgeted ~6 KB a thread, one atomic add a chain."""
    cuda = pytest.importorskip("numba.cuda", reason="numba-cuda is not installed")
    from s2g.seeded import windows_gpu
    try:
        windows_gpu.compile_module()
        ptx = cuda.compile_ptx(windows_gpu.search_body, windows_gpu.SEARCH_SIGNATURE,
                               cc=(9, 0))[0]
    except Exception as exc:  # no NVVM: the toolchain is a test dependency (pyproject)
        pytest.skip(f"compile_ptx unavailable: {type(exc).__name__}: {exc}")
    import re
    assert ".target sm_90" in ptx
    depots = [int(x) for x in re.findall(r"__local_depot\d+\[(\d+)\]", ptx)]
    assert depots and max(depots) <= 6 * 1024, depots
    assert ptx.count("atom.global.add.u64") == 1
    assert "fma.rn.f64" not in ptx


def _real_cases(real_data, n_reads, seed=3):
    rng = np.random.default_rng(seed)
    for gfa in ("drb1_odgi/DRB1-3123.gfa", "lpa_odgi/LPA.gfa", "mt_minigraph/MT.gfa",
                "cactus_brca2_vg/cactus-BRCA2.gfa"):
        path = real_data / gfa
        if not path.exists():
            continue
        g = s2g.load_graph(str(path), break_cycles=True)
        seqs = []
        for _ in range(n_reads):
            v = int(rng.integers(max(g.n_bases - 150, 1)))
            c = g.base[v:v + 150].copy()
            err = rng.random(len(c)) < 0.01
            c[err] = rng.integers(0, 4, int(err.sum()))
            seqs.append("".join("ACGTN"[x] for x in c.tolist()))
        yield gfa, g, ReadBatch.from_sequences([f"r{i}" for i in range(n_reads)], seqs)


@pytest.mark.gpu
def test_gpu_window_searches_equal_the_hosts_on_real_graphs(real_data):
    """On a real GPU: chain_lists == batch_chain_pieces on 3,000 reads of each real graph
    (chains by the host's chainer), and few chains left to the host."""
    from s2g.seeded import windows_gpu
    from s2g.seeded.chains import batch_chains
    for gfa, g, reads in _real_cases(real_data, 3000):
        ix = build_index(g)
        offs = np.asarray(reads.offsets, np.int64)
        starts, shift = ix.buckets
        ch, nch, _, _, _ = batch_chains(reads.codes_flat, offs, ix.keys, ix.cols, starts,
                                        shift, ix.k, ix.s, 200, 10, 38.0, 100_000, 0, 0)
        gr = (g.node_start, g.pred_ptr, g.pred_idx, *successors(g))
        wc, wa, wn, wl, wh = batch_chain_pieces(offs, ch, nch, 1.0, gr)
        gc, ga, gn, gl, gh = windows_gpu.chain_lists(g, ch, nch, offs, 1.0)
        ok = gc >= 0
        assert (gc[~ok] == -1).all() and ok.sum() >= 0.95 * ok.size, gfa
        np.testing.assert_array_equal(gc[ok], wc[ok], err_msg=gfa)
        for r, c in zip(*np.nonzero(ok & (gc > 0))):
            x = slice(wa[r, c], wa[r, c] + wc[r, c])
            y = slice(ga[r, c], ga[r, c] + gc[r, c])
            for u, v in ((wn, gn), (wl, gl), (wh, gh)):
                np.testing.assert_array_equal(u[x], v[y], err_msg=f"{gfa} chain {r},{c}")


@pytest.mark.gpu
def test_gpu_window_search_aligns_as_the_cpu(real_data):
    """On a real GPU, knob gpu_window_search on: SeededAligner(device='gpu') == the CPU
    path (scores, end cells, MAPQ, tracebacks) on 2,000 reads of each real graph."""
    configure(gpu_window_search=True)          # (the test's knobs end with it: conftest)
    for gfa, g, reads in _real_cases(real_data, 2000, seed=4):
        ix = build_index(g)
        cpu = SeededAligner(g, ix, Scoring(), Mode.LOCAL)
        want = cpu.align_batch(reads)
        cpu.traceback(reads, want)
        gpu = SeededAligner(g, ix, Scoring(), Mode.LOCAL, device="gpu")
        got = gpu.align_batch(reads)
        gpu.traceback(reads, got)
        for f in ("score", "end_i", "end_j", "mapq"):
            np.testing.assert_array_equal(getattr(got, f), getattr(want, f),
                                          err_msg=f"{gfa} {f}")
        assert list(got.tracebacks) == list(want.tracebacks), gfa
    from s2g.seeded import windows_gpu
    assert windows_gpu.PROFILE["launches"] > 0
