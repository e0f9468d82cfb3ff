#!/usr/bin/env bash
# Session 5, device call 1: (a) the check left from session 4 (deferred summary, chunk
# padding): GPU traceback tests, e2e at the defaults, GAF equal to the CPU traceback's;
# (b) DRB1 (4.4 bp nodes): kernel time at 8x19 and 4x19, and where the time goes (ncu).
source bench/device_prelude.sh
timeout 200 python3 -m pytest -m gpu -q -p no:warnings tests/test_gpu_traceback.py 2>&1 | tail -3 | tee $OUT/gpu_tests.log
A() { S2G align $T/snp.gfa $T/snp.fq --variant fast --timings "$@" 2>&1 | grep -v "Warn\|warn("; }
{ echo "== cold"; A -o $T/o0.gaf; for k in 1 2 3; do echo "== defaults"; A -o $T/o1.gaf; done
  echo "== cpu traceback"; A -o $T/o2.gaf --traceback-on cpu
  cmp $T/o1.gaf $T/o2.gaf && echo "GAF identical (GPU vs CPU traceback)"
} 2>&1 | tee $OUT/e2e.log
P="python3 bench/fast_profile.py"
timeout 120 $P --graphs drb1,snp10,snp50 --configs 8x19,4x19 --reads 32768 2>&1 | grep -v Warn | tee $OUT/profile.log
timeout 150 ncu --clock-control none -k regex:fast -c 1 -s 1 \
  --section SpeedOfLight --section Occupancy --section ComputeWorkloadAnalysis \
  --section WarpStateStats --section SchedulerStats --section InstructionStats --section MemoryWorkloadAnalysis \
  --metrics sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__thread_inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum,smsp__inst_executed_op_global_ld.sum \
  $P --graphs drb1 --configs 8x19 --ncu --reads 32768 > $OUT/ncu_drb1.txt 2>&1
grep -i "pipe\|Issue Slots\|Executed Ipc\|Achieved Occupancy\|Registers Per\|Warp Cycles Per Issued\|Active Threads\|inst_executed\|Stall\|Duration\|shared" $OUT/ncu_drb1.txt | head -60
