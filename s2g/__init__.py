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

from . import _numba  # noqa: F401  (first: the CPU target's vector width, before any JIT)
from .errors import GraphError, ReadError, S2GError
from .graph import FlatGraph, graph_info, load_graph
from .reads import ReadBatch, iter_read_batches, read_reads
from .result import AlignResult, BatchResult, Traceback
from .scoring import Mode, Scoring, fits_int32, score_bound
from . import variants

__version__ = "0.1.0"


def align(graph: FlatGraph, reads: ReadBatch, scoring: Scoring | None = None, mode="local",
          variant: str = "auto", traceback: bool = True, max_traceback_cells: int | None = None
          ) -> BatchResult:
    """Align every read of ``reads`` to ``graph``; one result per read, in order.

    ``variant``: a registered name (``s2g variants``) or ``"auto"`` (the fastest
    exact variant this machine can run). With ``traceback`` each aligned read gets a
    :class:`Traceback` (path, offsets, CIGAR). ``graph`` may also be a cyclic graph from
    :func:`s2g.graph.open_graph` (unrolled for the batch's longest read). The same driver
    as ``s2g align`` (:class:`s2g.aligner.Aligner`).
    """
    from .aligner import Aligner
    return Aligner(graph, scoring, mode, variant, traceback=traceback,
                   max_traceback_cells=max_traceback_cells).align(reads)


__all__ = ["align", "load_graph", "read_reads", "iter_read_batches", "graph_info", "Scoring",
           "Mode", "FlatGraph", "ReadBatch", "AlignResult", "BatchResult", "Traceback",
           "S2GError", "GraphError", "ReadError", "variants", "score_bound", "fits_int32"]
