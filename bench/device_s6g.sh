#!/usr/bin/env bash
# Session 6, device call 7: 4 lanes x 38 rows (255 registers, 8 warps/SM; a merge met by
# 4 consecutive columns' lanes instead of 8) against 8 x 19 after run 7's changes.
source bench/device_prelude.sh >/dev/null 2>&1
timeout 300 python3 bench/fast_profile.py --graphs drb1,snp10,snp50,linear --configs 8x19,4x38 --reads 32768 2>&1 | grep -v Warn | tee $OUT/profile_4x38.log
