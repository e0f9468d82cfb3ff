#!/usr/bin/env bash
# Session 5, device call 8: the real-graph GPU tests after the device buffer pool, and
# end to end on a real pggb graph (DRB1, 4.4 bp nodes): 100,000 x 150 bp pieces of its
# haplotypes (1% substitutions), FASTQ in, GAF out.
source bench/device_prelude.sh
timeout 300 python3 -m pytest -m gpu -q -p no:warnings tests/test_gpu_real.py 2>&1 | tail -3 | tee $OUT/gpu_tests.log
python3 - <<'PY'
import numpy as np
from bench.fast import fasta, pieces
hs = fasta("../shared/data/real/drb1_odgi/DRB1-3123.fa")
seqs = pieces(hs, 100000, 150, np.random.default_rng(11))
with open("/tmp/e2e/drb1.fq", "w") as fh:
    for k, s in enumerate(seqs):
        fh.write(f"@p{k}\n{s}\n+\n{'I' * len(s)}\n")
PY
G=../shared/data/real/drb1_odgi/DRB1-3123.gfa
{ for k in 0 1 2 3; do echo "== drb1 defaults"; S2G align $G $T/drb1.fq -o $T/d1.gaf --variant fast --timings 2>&1 | grep -v "Warn\|warn("; done
  echo "== drb1 cpu traceback"; S2G align $G $T/drb1.fq -o $T/d2.gaf --variant fast --traceback-on cpu --timings 2>&1 | grep -v "Warn\|warn("
  cmp $T/d1.gaf $T/d2.gaf && echo "GAF identical (GPU vs CPU traceback)"
  S2G info $G 2>&1 | head -12
} 2>&1 | tee $OUT/e2e_drb1.log
