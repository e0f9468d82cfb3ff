#!/usr/bin/env bash
# One device call: where `fast` spends its time (bench/NOTES.md, run 3).
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
P="python3 bench/fast_profile.py"
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv | tee $OUT/profile.log
$P --graphs snp50,linear,snp200,snp10 --configs 8x19 --sass $OUT 2>&1 | grep -v Warn | tee -a $OUT/profile.log
$P --graphs snp50,linear --configs 16x10,32x5,4x38 2>&1 | grep -v Warn | tee -a $OUT/profile.log
S2G_FAST_MAXREG=128 $P --graphs snp50,linear --configs 8x19 2>&1 | grep -v Warn | tee -a $OUT/profile.log
S2G_FAST_MAXREG=96 $P --graphs snp50 --configs 8x19,16x10 2>&1 | grep -v Warn | tee -a $OUT/profile.log
for extra in ${PROFILE_EXTRA:-}; do
  env $extra $P --graphs snp50,linear --configs 8x19,16x10 2>&1 | grep -v Warn | tee -a $OUT/profile.log
done
timeout 240 ncu --clock-control none -k regex:fast -c 1 -s 1 \
  --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
  --section SchedulerStats --section MemoryWorkloadAnalysis --section InstructionStats \
  $P --graphs snp50 --configs 8x19 --ncu --reads 4096 > $OUT/ncu_8x19.txt 2>&1
tail -120 $OUT/ncu_8x19.txt
