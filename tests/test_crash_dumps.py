"""tests/crash_dumps.py: a worker that segfaults leaves its threads' frames at the end of
the output, where CI's kept tail shows them."""
from __future__ import annotations

import os
import subprocess
import sys

from conftest import TESTS


def test_a_crashed_workers_frames_come_last(tmp_path):
    (tmp_path / "conftest.py").write_text(
        "from crash_dumps import pytest_configure, pytest_sessionstart, pytest_terminal_summary\n")
    (tmp_path / "test_boom.py").write_text(
        "import faulthandler\n\ndef test_ok():\n    pass\n\n"
        "def test_segfault_here():\n    faulthandler._sigsegv()\n")
    # a fresh controller: not this run's crash folder, nor its xdist worker identity
    env = {k: v for k, v in os.environ.items()
           if k != "S2G_TEST_CRASH_DIR" and not k.startswith("PYTEST_XDIST")}
    env["PYTHONPATH"] = str(TESTS) + os.pathsep + env.get("PYTHONPATH", "")
    p = subprocess.run([sys.executable, "-m", "pytest", "-n", "1", "-p", "no:cacheprovider",
                        "-q", str(tmp_path)], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=300)
    out = p.stdout
    assert p.returncode != 0, out
    at = out.index("s2g: crash dumps of xdist workers")
    tail = out[at:]
    assert "test_segfault_here" in tail and "test_boom.py" in tail, out[-3000:]
    assert "Fatal Python error" in tail or "Segmentation fault" in tail, out[-3000:]
    last = tail[tail.index("the crashing thread, innermost frames"):]
    assert "test_segfault_here" in last, out[-3000:]
