#!/usr/bin/env bash
# Session 5, device call 2: keep merges (a merge column keeps the previous column in
# registers and loads only its other predecessors; E = max(E, E-out + e) fused).
# bench.fast with its on-device checks (random graphs in every mode, real graphs, 10 kbp);
# 10 kbp with 8,192 reads (4,096 pairs: 65% of the 6,336 resident groups) and 12,672
# (one full wave); profile of DRB1/snp10/snp50/linear; ncu stall reasons at 10 kbp.
source bench/device_prelude.sh
timeout 400 python3 -m bench.fast --out $OUT --configs 8x19 \
  --long "10000:8192:8x24:20000,10000:12672:8x24:20000" 2>&1 | grep -v Warn | tee $OUT/fast.log | tail -22
P="python3 bench/fast_profile.py"
timeout 80 $P --graphs drb1,snp10,linear --configs 8x19 --reads 32768 2>&1 | grep -v Warn | tee $OUT/profile.log
timeout 100 ncu --clock-control none -k regex:fast -c 1 -s 1 --section WarpStateStats --section SchedulerStats \
  --section Occupancy --metrics smsp__inst_executed.sum,smsp__inst_executed_op_global_ld.sum \
  $P --graphs snp50 --bases 20000 --len 10000 --reads 8192 --configs 8x24 --ncu > $OUT/ncu_10k.txt 2>&1
grep -i "Stall\|Issued\|Eligible\|Occupancy\|inst_executed\|Duration" $OUT/ncu_10k.txt | head -40
