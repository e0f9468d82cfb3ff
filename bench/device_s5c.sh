#!/usr/bin/env bash
# Session 5, device call 3: occupancy experiments after keep merges. 164 registers give
# 12 warps per SM (3 blocks of 4 warps; 3 node_bound slots fit in shared memory). Does a
# register cap (128: 16 warps; 144 with 2-warp blocks: 14) or smaller blocks help the
# merge-heavy DRB1 (4.4 bp nodes) and snp10 without hurting snp50?
source bench/device_prelude.sh
P="python3 bench/fast_profile.py --graphs drb1,snp10,snp50 --configs 8x19 --reads 32768"
for cfg in "" "S2G_FAST_MAXREG=128" "S2G_FAST_MAXREG=144 S2G_FAST_BLOCK=64" "S2G_FAST_BLOCK=64" "S2G_FAST_MAXREG=152 S2G_FAST_BLOCK=32"; do
  echo "== $cfg"
  env $cfg timeout 110 $P 2>&1 | grep -v Warn
done 2>&1 | tee $OUT/occupancy.log
