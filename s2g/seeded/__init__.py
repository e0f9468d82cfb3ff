"""Seeded alignment: syncmer seeds -> chains -> column windows -> exact DP in each window.

Full-graph DP costs (graph columns x read length) per read, whatever the graph's size;
on a 100 Mbp graph that is seconds per read even at the GPU kernel's 3,000 GCUPS. Like
every practical graph mapper (vg giraffe, GraphAligner, minigraph) s2g seeds first and
runs DP only near the seeds; unlike them, the DP inside a candidate region stays exact:
**the reported alignment is the exact optimum over every walk inside the window it
names** (:mod:`s2g.window`), and a read's answer is the best of its windows.

Per read (all compiled, in parallel over reads: :meth:`SeededAligner.candidates`), one
module per phase:

1. *Seeds* (:mod:`s2g.seeded.seeds`): the read's closed syncmers looked up in the index,
   repeats skipped and counted.
2. *Chains* (:mod:`s2g.seeded.chains`): colinear chaining of the anchors, as in
   minimap2; chains are taken best first, each anchor once.
3. *Windows* (:mod:`s2g.seeded.windows`): each chain becomes the set of columns every
   walk the read can follow through it lies in (bounded graph searches); at most
   ``max_cand`` windows per read, and a batch's windows become one window graph
   (:class:`s2g.window.WindowGraph`).

Then the exact DP runs in every window and the best window is the read's alignment
(:mod:`s2g.seeded.aligner`), with its MAPQ and secondary alignments
(:mod:`s2g.seeded.mapq`).
"""
from __future__ import annotations

from .aligner import FULL_FALLBACK_CELLS, MAX_CAND, SeededAligner
from .chains import CHAIN_LOOKBACK, MAX_WINDOW, batch_chains, chain, read_chains, take_chains
from .mapq import (CUT_RATIO, MAPQ_CUT_CAP, MAPQ_MAX, MAPQ_PER_MISMATCH, MAPQ_REPEAT_CAP, pick,
                   secondaries)
from .seeds import MAX_OCC, anchors, read_syncmers
from .search import SCRATCH_BYTES, SCRATCH_NODE_BYTES
from .windows import KEEP_BYTES, KEEP_PIECES, Windows, batch_windows, read_windows

__all__ = ["CHAIN_LOOKBACK", "CUT_RATIO", "FULL_FALLBACK_CELLS", "KEEP_BYTES", "KEEP_PIECES",
           "MAPQ_CUT_CAP", "MAPQ_MAX", "MAPQ_PER_MISMATCH", "MAPQ_REPEAT_CAP", "MAX_CAND",
           "MAX_OCC", "MAX_WINDOW", "SCRATCH_BYTES", "SCRATCH_NODE_BYTES", "SeededAligner",
           "Windows", "anchors", "batch_chains", "batch_windows", "chain", "pick",
           "read_chains", "read_syncmers", "read_windows", "secondaries", "take_chains"]
