#!/usr/bin/env bash
# Session 5, device call 4: register caps, now really applied (call 3's S2G_FAST_MAXREG
# loaded the cached 164-register cubin: the cache key ignored max_registers; fixed).
# ptxas on this VM: 144 registers without spills (14 warps/SM with 2-warp blocks),
# 128 with 148 bytes of spill stores (16 warps/SM).
source bench/device_prelude.sh >/dev/null 2>&1
P="python3 bench/fast_profile.py --graphs drb1,snp10,snp50 --configs 8x19 --reads 32768"
for cfg in "S2G_FAST_MAXREG=144 S2G_FAST_BLOCK=64" "S2G_FAST_MAXREG=128" "S2G_FAST_MAXREG=128 S2G_FAST_BLOCK=64"; do
  echo "== $cfg"
  env $cfg timeout 110 $P 2>&1 | grep -v Warn
done 2>&1 | tee $OUT/occupancy.log
