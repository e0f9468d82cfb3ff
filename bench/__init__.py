"""s2g benchmark suite (issue 4): ``python -m bench`` or ``s2g bench``.

Experiments (workloads from :mod:`s2g.simulate` with fixed seeds, plus the real graphs
in ``../shared/data/real``):

* ``read_length`` — GCUPS vs read length (64 ... 8,192 bp) on a fixed SNP graph
  (the design's Figures 5-6; intra-read V1-V3 against inter-read V4/fast).
* ``n_reads`` — GCUPS and speedup over V0 vs number of reads (Table 6).
* ``branching`` — GCUPS vs alleles per site at fixed total bases (Table 7, Figure 7).
* ``node_length`` — GCUPS vs mean backbone node length at fixed total bases (Figure 9).
* ``real`` — the real graphs with reads sampled from their own sequences.

Every variant that :func:`s2g.variants.registry.can_run` admits is timed; its scores
are checked against V0 first; abPOA (pyabpoa) is timed beside it on the same
workload as the peer. See :mod:`bench.harness` for the measurement protocol and
:mod:`bench.peer` for the abPOA comparison. Nothing here imports matplotlib or CUDA
at import time.
"""
