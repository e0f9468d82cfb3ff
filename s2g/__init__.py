"""s2g — exact affine-gap sequence-to-graph alignment (POA) on CPUs and NVIDIA GPUs.

Public API::

    import s2g
    g = s2g.load_graph("graphs/example.gfa")          # GFA -> FlatGraph
    reads = s2g.read_reads("graphs/example.fq")        # FASTA/FASTQ(.gz) -> ReadBatch
    res = s2g.align(g, reads, mode="local", variant="auto")
    for r in res: print(r.name, r.score, r.traceback.cigar)

See README.md for the CLI and ARCHITECTURE.md (../shared) for the semantics.
"""
from __future__ import annotations

import os

from . import _numba  # noqa: F401  (first: the CPU target's vector width, before any JIT)
from .config import compile_time

if compile_time("per_thread_streams"):
    # read by CUDA Python when numba.cuda first loads it (s2g imports numba.cuda lazily):
    # the stages' threads (seeding, windows, tracebacks) then wait only for their own GPU
    # work; a value the user set is kept. Shared device arrays are synchronized once
    # after their upload (s2g.variants._devpool.shared).
    os.environ.setdefault("CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM", "1")
if compile_time("gpu_pending_frees") > 0:
    # Numba's deferred frees (read at each free): its config, loaded or not yet
    os.environ.setdefault("NUMBA_CUDA_MAX_PENDING_DEALLOCS_RATIO",
                          str(compile_time("gpu_pending_frees")))
    import sys
    for _m in ("numba.cuda.core.config", "numba.core.config"):
        if hasattr(sys.modules.get(_m), "CUDA_DEALLOCS_RATIO"):
            sys.modules[_m].CUDA_DEALLOCS_RATIO = float(
                os.environ["NUMBA_CUDA_MAX_PENDING_DEALLOCS_RATIO"])
from .errors import GraphError, ReadError, S2GError
from .graph import FlatGraph, graph_info, load_graph
from .reads import ReadBatch, iter_pair_batches, iter_read_batches, read_pairs, read_reads
from .result import AlignResult, BatchResult, Traceback
from .scoring import Mode, Scoring, fits_int32, score_bound
from . import variants

__version__ = "0.1.0"


def align(graph: FlatGraph, reads: ReadBatch, scoring: Scoring | None = None, mode="local",
          variant: str = "auto", traceback: bool = True, max_traceback_cells: int | None = None,
          method: str = "auto", index=None, pairs=None) -> BatchResult:
    """Align every read of ``reads`` to ``graph``; one result per read, in order.

    ``variant``: a registered name (``s2g variants``) or ``"auto"`` (the fastest
    exact variant this machine can run). With ``traceback`` each aligned read gets a
    :class:`Traceback` (path, offsets, CIGAR). ``graph`` may also be a cyclic graph from
    :func:`s2g.graph.open_graph` (unrolled for the batch's longest read).

    ``method``: ``"exact"`` (full-graph DP: the global optimum for every read),
    ``"seeded"`` (seeds, chains and exact DP inside candidate windows, with MAPQ; as
    ``s2g align --seeded``) or ``"auto"``, chosen as ``s2g align`` chooses
    (:func:`s2g.plan.choose_method`): full-graph DP on graphs under 100,000 columns
    (1,000,000 with a GPU variant), and on larger ones too when the reads' full-graph DP
    is small (at most 5e9 cells a CPU core; on a GPU 0.4 s of its kernel at its rate for
    that many reads, :func:`s2g.plan.small_exact`), or in global mode; seeded
    alignment otherwise. ``index``: seeded alignment's
    :class:`~s2g.index.SeedIndex` or the path of its file (``s2g index``); None: built in
    memory when seeded alignment runs. The same driver as ``s2g align``
    (:mod:`s2g.plan`, :class:`s2g.aligner.Aligner`).

    ``pairs``: paired-end reads, ``reads`` holding the mates interleaved (mate 1 of pair
    k at read 2k, mate 2 at 2k+1: :func:`s2g.reads.read_pairs`): ``True`` (the fragment
    length learned from the reads) or a :class:`~s2g.plan.PairOptions`; seeded alignment
    then (``res.pair_proper``, ``res.pair_frag`` per pair).
    """
    from .aligner import Aligner
    from .plan import PairOptions, RunOptions, SeededOptions, plan
    path = index if isinstance(index, (str, os.PathLike)) else None
    if pairs is True:
        pairs = PairOptions()
    options = RunOptions(scoring or Scoring(), mode, variant, method, traceback=traceback,
                         max_traceback_cells=max_traceback_cells,
                         seeded=SeededOptions(index=os.fspath(path) if path else None),
                         pairs=pairs or None)
    cells = int(graph.n_bases) * int(reads.lengths().sum())   # the whole input: one batch
    run = plan(graph, options, run_cells=cells, index=None if path else index,
               run_reads=reads.n_reads)
    return Aligner.from_plan(run).align(reads)


__all__ = ["align", "load_graph", "read_reads", "iter_read_batches", "read_pairs",
           "iter_pair_batches", "graph_info", "Scoring",
           "Mode", "FlatGraph", "ReadBatch", "AlignResult", "BatchResult", "Traceback",
           "S2GError", "GraphError", "ReadError", "variants", "score_bound", "fits_int32"]
