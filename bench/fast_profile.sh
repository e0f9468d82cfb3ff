#!/usr/bin/env bash
# One device call: where `fast` spends its time (bench/NOTES.md, runs 3-4).
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
P="python3 bench/fast_profile.py"
L=$OUT/profile.log
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv | tee $L
$P --graphs snp50,linear,snp200,snp10,snp50b4 --configs 8x19 --sass $OUT 2>&1 | grep -v Warn | tee -a $L
$P --graphs snp50,linear --configs 16x10,8x24,4x38 2>&1 | grep -v Warn | tee -a $L
S2G_FAST_NSH=0 $P --graphs snp50 --configs 8x19,16x10 2>&1 | grep -v Warn | tee -a $L
S2G_FAST_NSH=3 $P --graphs snp50 --configs 8x19 2>&1 | grep -v Warn | tee -a $L
S2G_FAST_BLOCK=64 $P --graphs snp50 --configs 8x19 2>&1 | grep -v Warn | tee -a $L
$P --graphs snp50 --configs 8x24 --len 10000 --reads 2048 2>&1 | grep -v Warn | tee -a $L
timeout 200 ncu --clock-control none -k regex:fast -c 1 -s 1 \
  --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
  --section SchedulerStats --section MemoryWorkloadAnalysis --section InstructionStats \
  --section SourceCounters \
  $P --graphs snp50 --configs 8x19 --ncu --reads 16384 > $OUT/ncu_8x19.txt 2>&1
grep -A3 "Warp Cycles Per Issued\|Executed Ipc\|Achieved Occupancy\|Registers Per\|Issued Warp\|Avg. Active Threads" $OUT/ncu_8x19.txt | head -40
mkdir -p ../shared/data && ln -sfn "$PWD/.realdata" ../shared/data/real
timeout 150 python3 -m pytest -m gpu -q -x tests/test_fast.py 2>&1 | tail -5 | tee -a $L
