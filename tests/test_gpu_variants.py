"""GPU variants V1-V4 under the CUDA simulator, exact against V0 (runs in CI, no GPU).

NUMBA_ENABLE_CUDASIM must be set before numba is imported, and this pytest process
has already imported numba, so the checks run in subprocesses
(tests/cudasim_check.py), two at once (one per CI core), each under a minute.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

pytest.importorskip("numba.cuda", reason="numba-cuda is not installed (pip install numba-cuda)")

GROUPS = [("v1_antidiag,v3_coop", 12, 11), ("v2_rolling,v4_interread", 10, 12)]


def test_gpu_variants_match_v0_under_simulator():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=str(REPO), S2G_NO_CACHE="1")
    procs = [subprocess.Popen([sys.executable, str(HERE / "cudasim_check.py"), names, str(cases),
                               str(seed)], cwd=REPO, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
             for names, cases, seed in GROUPS]
    outs = []
    for p in procs:
        out, _ = p.communicate(timeout=600)
        outs.append((p.returncode, out))
    for rc, out in outs:
        assert rc == 0, out[-4000:]
