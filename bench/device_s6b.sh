#!/usr/bin/env bash
# Session 6, device call 2: slots hold E itself (no arithmetic at a store); a merge's
# reset of the registers as multiply-adds (FMA pipe) instead of selects (ALU pipe);
# int32 merge-loop bookkeeping. A/B against HEAD's kernel (abbase/), GPU tests, ncu.
source bench/device_prelude.sh >/dev/null 2>&1
AB() { timeout 100 python3 $1 --graphs drb1,snp10,snp50,linear --configs 8x19 --reads 32768 2>&1 | grep -v Warn | sed "s/^/$2 /" | tee -a $OUT/profile_ab.log; }
AB bench/fast_profile.py new; AB abbase/bench/fast_profile.py old
timeout 300 python3 -m pytest -m gpu -q -p no:warnings tests/test_fast.py 2>&1 | tail -3 | tee $OUT/gpu_tests.log
ST=$(for s in branch_resolving long_scoreboard math_pipe_throttle no_instruction not_selected selected short_scoreboard wait; do printf "smsp__average_warps_issue_stalled_%s_per_issue_active.ratio," $s; done)
timeout 100 ncu --clock-control none -k regex:fast -c 1 -s 1 --section WarpStateStats \
  --metrics ${ST}smsp__inst_executed.sum,sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active \
  python3 bench/fast_profile.py --graphs drb1 --configs 8x19 --ncu --reads 32768 > $OUT/ncu_drb1.txt 2>&1
grep -i "stalled\|inst_executed\|pipe\|issue_active\|Warp Cycles\|Active Threads" $OUT/ncu_drb1.txt | head -20
