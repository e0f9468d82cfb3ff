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

On the GPU machine (../shared/device/README.md): carry ``.whl`` (numpy 2.4.6, dnaio
1.2.4 + xopen, isal, zlib-ng, backports.zstd; pyabpoa 1.5.2, the newest cp312 wheel)
and a copy of ``../shared/data/real`` (e.g. ``.benchdata/real``, git-ignored), then::

    python3 -m bench --out $OUT --real-dir .benchdata/real --no-report --time-limit 330

Each CUDA variant runs in its own process (a kernel fault poisons only its own CUDA
context). Copy the JSON into ``bench/results/<device>/runs/<n>/`` and combine runs
with ``python -m bench --merge bench/results/<device>/runs/1 ... --out
bench/results/<device>`` (writes RESULTS.md, HEADLINE.md and the PNGs). Run 1 on
an H200 took 279 s with the CUDA variants failing at once; working CUDA variants
add their own time, so bound the run with ``--time-limit`` (slices per variant).
"""
