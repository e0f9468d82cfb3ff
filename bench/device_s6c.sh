#!/usr/bin/env bash
# Session 6, device call 3: the column's substitution word precomputed on the host
# (colsub, prefetched with colinfo) and -e, -o-e, the mismatch word as kernel
# parameters (constant bank; they were recomputed on every column). A/B against
# call 2's kernel (abbase2/ = commit 63c8f14), then GPU tests.
source bench/device_prelude.sh >/dev/null 2>&1
AB() { timeout 100 python3 $1 --graphs drb1,snp10,snp50,linear --configs 8x19 --reads 32768 2>&1 | grep -v Warn | sed "s/^/$2 /" | tee -a $OUT/profile_ab.log; }
AB bench/fast_profile.py new; AB abbase2/bench/fast_profile.py old
timeout 300 python3 -m pytest -m gpu -q -p no:warnings tests/test_fast.py 2>&1 | tail -3 | tee $OUT/gpu_tests.log
