"""Crash dumps of xdist workers at the end of the output (a pytest plugin; tests/conftest.py
imports its hooks).

A worker that dies in compiled code (a segfault) is reported by xdist as "node down: Not
properly terminated"; pytest's faulthandler wrote the threads' frames to the worker's
stderr earlier, interleaved with the progress dots, and CI keeps only the output's tail:
the CI run of 2026-12-05 lost the crashing thread's frames that way (one test of
tests/test_surject.py; not reproduced since). Here each worker also writes its dump to a
file of its own (``$S2G_TEST_CRASH_DIR``, made by the controller), and the controller
prints every non-empty one in the terminal summary, last."""
from __future__ import annotations

import os

ENV = "S2G_TEST_CRASH_DIR"
#: lines of each dump shown (the crashing thread comes first in faulthandler's dump)
SHOW_LINES = 150
#: ... and the crashing thread's innermost frames again, last
INNERMOST = 12
_OPEN = []


def pytest_configure(config):
    if os.environ.get("PYTEST_XDIST_WORKER") is None and ENV not in os.environ:
        import tempfile
        os.environ[ENV] = tempfile.mkdtemp(prefix="s2g-crash-")   # workers inherit it
        config._s2g_crash_dir = os.environ[ENV]


def pytest_sessionstart(session):
    """In a worker (after pytest's faulthandler set itself up): dumps to a file."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    d = os.environ.get(ENV)
    if worker is None or not d or not os.path.isdir(d):
        return
    import faulthandler
    fh = open(os.path.join(d, f"{worker}-{os.getpid()}.txt"), "w")
    _OPEN.append(fh)                  # open for the process's life
    faulthandler.enable(file=fh, all_threads=True)


def pytest_terminal_summary(terminalreporter, config):
    d = getattr(config, "_s2g_crash_dir", None)
    if not d or not os.path.isdir(d):
        return
    import shutil
    try:
        dumps = sorted(f for f in os.listdir(d) if os.path.getsize(os.path.join(d, f)))
        if dumps:
            terminalreporter.section("s2g: crash dumps of xdist workers")
            for f in dumps:
                with open(os.path.join(d, f), errors="replace") as fh:
                    lines = fh.read().splitlines()
                terminalreporter.write_line(f"--- {f} ({len(lines)} lines)")
                for line in lines[:SHOW_LINES]:
                    terminalreporter.write_line(line)
                # and the crashing thread's innermost frames once more, at the very end
                cur = next((i for i, ln in enumerate(lines) if ln.startswith("Current thread")),
                           None)
                if cur is not None:
                    terminalreporter.write_line(f"--- {f}: the crashing thread, innermost frames")
                    for line in lines[cur + 1:cur + 1 + INNERMOST]:
                        if not line.strip():
                            break
                        terminalreporter.write_line(line)
    finally:
        shutil.rmtree(d, ignore_errors=True)
