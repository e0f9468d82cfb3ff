"""``s2g bench``: the benchmark suite of ``bench/`` (issue 4) as an s2g subcommand.

The suite lives in the top-level ``bench`` package next to ``s2g`` in the repository
(it is not installed with s2g); this module finds it from the checkout, so
``s2g bench`` and ``python -m bench`` take the same options.
"""
from __future__ import annotations

import argparse
import os
import sys

from .errors import S2GError

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _harness():
    try:
        from bench import harness
    except ImportError:
        if not os.path.isfile(os.path.join(_ROOT, "bench", "harness.py")):
            raise S2GError("the benchmark suite (bench/) ships with the source checkout, not with an "
                           "installed s2g; run it from a clone of the repository") from None
        sys.path.insert(0, _ROOT)
        from bench import harness
    if not harness.__file__.startswith(os.path.join(_ROOT, "bench")) and \
            os.path.isfile(os.path.join(_ROOT, "bench", "harness.py")):
        raise S2GError(f"a different 'bench' package shadows s2g's: {harness.__file__}")
    return harness


#: ``s2g bench NAME ...``: the suite's other experiments, each its own module's options
EXPERIMENTS = {
    "seeded": "seeded alignment against full-graph DP: sensitivity, MAPQ calibration, speed",
    "pairs": "paired-end against single-end on the same reads: pairing, rescue, MAPQ, speed",
    "golden": "byte-identical outputs across a refactoring (SHA-1 per GAF)",
    "long_reads": "long-read workloads end to end through the CLI",
    "long_windows": "long reads' seeded windows: count, width, cells, exactness",
    "gpu_windows": "seeded window stage: fast kernel windows, find mode and CPU, same reads",
    "devices": "s2g align on the GPU path, the CPU path and GraphAligner, same reads, one table",
    "scale_out": "s2g align --dask on clusters of 1, 2, 4 ... workers against one process",
    "device_choice": "the GPU path, the CPU path and auto by read count (auto's device)",
}


def run_experiment(argv) -> int:
    """``s2g bench NAME [options]``: ``python -m bench.NAME [options]``."""
    import importlib
    _harness()                                   # the checkout's bench/ on sys.path
    name = argv[0].replace("-", "_")
    mod = importlib.import_module(f"bench.{name}")
    prog, sys.argv[0] = sys.argv[0], f"s2g bench {argv[0]}"     # argparse's usage line
    try:
        code = mod.main(argv[1:])
    finally:
        sys.argv[0] = prog
    return int(code or 0)


def add_parser(sub, full=True):
    """``s2g bench``'s parser; its options (the harness's) only with ``full``: they import
    the suite, ~25 ms that every other command skips."""
    p = sub.add_parser("bench", formatter_class=argparse.ArgumentDefaultsHelpFormatter,
                       help="run the benchmark suite (GCUPS, speedup over V0 and abPOA)",
                       description="Benchmark suite: read length, number of reads, branching factor, "
                                   "node length and real graphs; every runnable variant checked against "
                                   "V0 and timed; abPOA as the peer; JSON + RESULTS.md + HEADLINE.md + PNG "
                                   "in bench/results/<device>/. Same as `python -m bench`. "
                                   "Other experiments: `s2g bench NAME --help`, NAME one of: "
                                   + "; ".join(f"{k} ({v})" for k, v in EXPERIMENTS.items()))
    try:
        if full:
            _harness().add_arguments(p)
    except S2GError:
        pass
    p.set_defaults(func=run)


def run(args) -> int:
    return _harness().run(args)
