#!/usr/bin/env bash
# Session 6, device call 1: node_bound slots as 64-bit words (row r's H-o-e and E-out in
# one LDS.64/STS.64; global slots lane-interleaved like shared ones). A/B in one process
# order against HEAD's kernel (abbase/: an untracked copy of s2g/ and bench/ at HEAD),
# then the fast kernel's GPU tests, then where DRB1's stalls are (ncu stall reasons).
source bench/device_prelude.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
AB() { timeout 150 python3 $1 --graphs drb1,snp10,snp50,linear --configs 8x19 --reads 32768 2>&1 | grep -v Warn | sed "s/^/$2 /" | tee -a $OUT/profile_ab.log; }
AB bench/fast_profile.py new; AB abbase/bench/fast_profile.py old; AB bench/fast_profile.py new; AB abbase/bench/fast_profile.py old
timeout 330 python3 -m pytest -m gpu -q -p no:warnings tests/test_fast.py 2>&1 | tail -3 | tee $OUT/gpu_tests.log
ST=$(for s in barrier branch_resolving dispatch_stall drain imc_miss lg_throttle long_scoreboard math_pipe_throttle membar mio_throttle misc no_instruction not_selected selected short_scoreboard sleeping tex_throttle wait; do printf "smsp__average_warps_issue_stalled_%s_per_issue_active.ratio," $s; done)
timeout 120 ncu --clock-control none -k regex:fast -c 1 -s 1 --section WarpStateStats --section SchedulerStats \
  --metrics ${ST}smsp__inst_executed.sum,smsp__thread_inst_executed.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum,smsp__inst_executed_op_global_ld.sum,sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active \
  python3 bench/fast_profile.py --graphs drb1 --configs 8x19 --ncu --reads 32768 > $OUT/ncu_drb1_stalls.txt 2>&1
grep -i "stalled\|inst_executed\|pipe\|Warp Cycles\|Active Threads\|Eligible" $OUT/ncu_drb1_stalls.txt | head -40
