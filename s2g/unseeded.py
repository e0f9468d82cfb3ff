"""What seeded alignment does with reads that have no usable seed chain (``--unseeded``):
the full-graph DP budget of ``auto`` and the least score such a read is written with.
A leaf module: :mod:`s2g.plan`, :mod:`s2g.cli` and :mod:`s2g.seeded.aligner` read it
(the CLI's help without importing Numba)."""
from __future__ import annotations

#: reads without a usable chain (``--unseeded auto``): full-graph DP when it costs at most
#: this many cells (graph columns x read length) per read; otherwise the windows of their
#: weak chains, or a no-hit line when they have no anchor. ~0.1 s of a CPU thread (the
#: ``cpu`` variant, ~0.46 GCUPS, aligns a batch's few such reads:
#: :meth:`s2g.seeded.SeededAligner._full_module`), some 500 seeded reads' worth: graphs up
#: to ~330,000 columns for 150 bp reads, ~170,000 for 300 bp, so very noisy reads on a
#: gene-sized graph are still aligned (issue #40: 300 bp at 15-20% errors on 104,000
#: columns, tests/test_noisy_reads.py), while on genome-sized graphs reads from outside
#: the graph cannot set a run's pace. It was 5e8 (3.3 M columns at 150 bp) until
#: 2026-12-06: on the 2.5 M-column M. bovis graph 20 seedless reads among 1,000,000 took
#: 29.2 of a 36.2 s GPU run (one warp a read, 1.46 s each; H100), and 200 random reads
#: among 10,000 took a CPU run from 0.89 to 6.55 s. ``--unseeded full`` still aligns every
#: such read by full-graph DP. The same budget on both devices: both write the same GAF.
FULL_FALLBACK_CELLS = 50_000_000

#: a read without a seed chain that full-graph DP aligns (``--unseeded``) is reported
#: when it scores at least this many matches' worth (x the match score), else a no-hit
#: line: its score is its only evidence, and a read from outside the graph always has a
#: best chance match (random 150 bp reads on the 2.5 M-column M. bovis graph: AS 24-38,
#: i.e. 12-19 matches' worth, 2/4/4/2 scoring). BWA-MEM's ``-T 30`` (minimum score to
#: output, match 1) is the same bar; ``--unseeded-min-score`` sets the score itself.
UNSEEDED_MIN_MATCHES = 30
