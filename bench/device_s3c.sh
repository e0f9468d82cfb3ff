#!/usr/bin/env bash
# Session 3, device call 3: kernel v3 with the virtual slot moved to the last global slot
# (call 2 had put it in shared slot 0, pushing a graph slot to global memory); pipe
# utilisation from ncu (is the ALU pipe the limit?); 10 kbp reads.
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
P="python3 bench/fast_profile.py"
L=$OUT/profile.log
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv | tee $L
timeout 100 $P --graphs snp50,linear,snp10,snp50b4 --configs 8x19 2>&1 | grep -v Warn | tee -a $L
timeout 90 $P --graphs snp50 --configs 8x24 --len 10000 --reads 2048 --no-check 2>&1 | grep -v Warn | tee -a $L
timeout 200 ncu --clock-control none -k regex:fast -c 1 -s 1 \
  --section SpeedOfLight --section Occupancy --section ComputeWorkloadAnalysis \
  --section WarpStateStats --section SchedulerStats --section InstructionStats \
  --metrics sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fmaheavy.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__thread_inst_executed.sum \
  $P --graphs linear --configs 8x19 --ncu --reads 16384 > $OUT/ncu_linear.txt 2>&1
grep -i "pipe\|Issue Slots\|Executed Ipc\|Achieved Occupancy\|Registers Per\|Warp Cycles Per Issued\|Active Threads\|inst_executed\|Stall\|SM Frequency" $OUT/ncu_linear.txt | head -60
