"""A pytest plugin that prints each test's time as it ends, so that a run cut short by a
time limit (the GPU machine's 10 minutes a call) still says where the time went:

    python -m pytest -m gpu -p bench.pytest_timer tests
"""

import time

_config = None
_start = time.perf_counter()


def pytest_configure(config):
    global _config
    _config = config


def pytest_runtest_logreport(report):
    if report.when == "call" or report.outcome != "passed":
        tr = _config.pluginmanager.get_plugin("terminalreporter")
        line = (f"[{time.perf_counter() - _start:7.1f} s] {report.duration:7.1f} s  "
                f"{report.outcome:7s} {report.nodeid} ({report.when})")
        if tr is not None:
            tr.write_line(line)
        else:
            print(line, flush=True)
