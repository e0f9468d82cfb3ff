"""The peer: abPOA (pyabpoa) on the same graph and reads, on this machine's CPU.

How abPOA is fed, and why this is the fairest comparison we found
------------------------------------------------------------------
abPOA is a partial-order aligner: it builds its graph from sequences (progressive
MSA) and cannot read an arbitrary GFA. It can, however, *restore* a graph from a GFA
whose ``P`` lines spell sequences (``incr_fn``, abPOA's incremental mode): each path
is threaded through its segments, one graph node per base, with no re-alignment.
So the peer gets **our graph, forward strand only, as paths**:

* simulated SNP graphs: one path per allele index ``t`` (allele ``t`` at every
  site), which covers every node and every edge of the graph, so abPOA's graph has
  exactly our forward bases;
* real graphs with ``P`` lines (cactus-BRCA2, DRB1): the file itself; nodes on no
  path are absent from abPOA's graph. Graphs without paths (C4, MT) and cyclic ones
  (LPA: abPOA's topological sort fails and the library exits) get no peer record
  (status ``skipped``/``failed`` with the reason).

Then every read is aligned with ``msa(reads, out_cons=False, out_msa=False,
incr_fn=gfa)``: local mode (``aln_mode='l'``), adaptive band disabled
(``extra_b=-1``: full DP over every node), match 2, mismatch 4, single affine gap
``4 + 2k`` (``gap_open2=gap_ext2=0``) — the same scores as s2g's defaults.

Differences that remain (stated in every peer record's ``caveats``):

* abPOA aligns each read to **one strand**; s2g aligns to both (its DP has twice
  the bases). Reads are given to abPOA in graph orientation where the truth is
  known (simulated), as they come otherwise. Speed is therefore compared per cell
  (GCUPS), with abPOA's cells = (bases in abPOA's graph) x (read length).
* abPOA *adds* each aligned read to the graph (there is no align-only call in
  pyabpoa); later reads see a graph grown by earlier reads' mismatches (~1-2 nodes
  per read at 1% error). Cells are counted on the restored graph, which slightly
  undercounts abPOA's work.
* abPOA computes a full traceback (CIGAR) per read; its scores are not returned by
  pyabpoa, so they are not checked against V0.
* abPOA is single-threaded (SIMD, 16- or 32-bit lanes); kernel time = (restore +
  align) - (restore + align of a 1-base read), measured as medians.

Run as a subprocess (``python -m bench.peer`` reading JSON on stdin), because
abPOA calls ``exit()`` on graphs it cannot handle.
"""
from __future__ import annotations

import json
import statistics
import sys
import time


def _aligner(pyabpoa, sc):
    return pyabpoa.msa_aligner(aln_mode="l", match=sc["match"], mismatch=sc["mismatch"],
                               gap_open1=sc["gap_open"], gap_ext1=sc["gap_extend"],
                               gap_open2=0, gap_ext2=0, extra_b=-1)


def _time(al, seqs, gfa):
    t0 = time.perf_counter()
    al.msa(seqs, out_cons=False, out_msa=False, incr_fn=gfa.encode())
    return time.perf_counter() - t0


def work(job: dict) -> dict:
    import pyabpoa

    gfa, reads, reps, budget = job["gfa"], job["reads"], job["reps"], job["budget"]
    al = _aligner(pyabpoa, job["scoring"])
    _time(al, ["A"], gfa)  # first restore: page cache, allocations
    restore = statistics.median(_time(al, ["A"], gfa) for _ in range(max(3, reps)))
    # size the subsample so one repetition takes about ``budget`` seconds
    k, t = 1, _time(al, reads[:1], gfa) - restore
    while k < len(reads) and t < budget / 2:
        k2 = min(len(reads), max(2 * k, int(k * 0.7 * budget / max(t, 1e-6))))
        t, k = _time(al, reads[:k2], gfa) - restore, k2
    full = [_time(al, reads[:k], gfa) for _ in range(reps)]
    kern = [max(x - restore, 1e-9) for x in full]
    return {"n_reads": k, "kernel": kern, "e2e": full, "restore_s": restore,
            "version": getattr(pyabpoa, "__version__", None) or _dist_version()}


def _dist_version():
    try:
        from importlib.metadata import version
        return version("pyabpoa")
    except Exception:
        return None


def available() -> tuple:
    try:
        import importlib.util
        if importlib.util.find_spec("pyabpoa") is None:
            return False, "pyabpoa is not installed"
        return True, _dist_version() or "?"
    except Exception as exc:  # pragma: no cover
        return False, str(exc)


if __name__ == "__main__":
    out = work(json.load(sys.stdin))
    json.dump(out, sys.stdout)
