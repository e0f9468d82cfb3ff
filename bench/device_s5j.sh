#!/usr/bin/env bash
# Session 5, device call 10: a merge without the previous column assigns its first
# predecessor instead of resetting 2K+1 registers and maxing into them (SASS 2,704 ->
# 2,880 instructions, 164 registers). Profile against call 2/3 (defaults: drb1 1,825,
# snp10 1,686, snp50 2,506, linear 2,946), then the fast kernel's GPU tests.
source bench/device_prelude.sh >/dev/null 2>&1
timeout 100 python3 bench/fast_profile.py --graphs drb1,snp10,snp50,linear --configs 8x19 --reads 32768 2>&1 | grep -v Warn | tee $OUT/profile.log
timeout 330 python3 -m pytest -m gpu -q -p no:warnings tests/test_fast.py 2>&1 | tail -3 | tee $OUT/gpu_tests.log
