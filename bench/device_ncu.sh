#!/usr/bin/env bash
# Nsight Compute on one launch of one kernel (the GPU machine has ncu on Firecracker):
#   bash bench/device_ncu.sh OUT KERNEL_REGEX SKIP -- python3 -m bench.long_kernel --reads 100 --configs 32
# writes OUT/ncu_<regex>.txt: speed of light, occupancy, launch stats, warp states (stall
# reasons per active warp), schedulers, instruction mix, compute and memory workloads.
# --clock-control none: leave the clocks alone (/work/.library/device/METHOD.md).
set -u
out=$1; kre=$2; skip=$3; shift 3; [ "${1:-}" = "--" ] && shift
mkdir -p "$out"
ncu --clock-control none -k "regex:$kre" --launch-skip "$skip" --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
    --section SchedulerStats --section InstructionStats --section ComputeWorkloadAnalysis \
    --section MemoryWorkloadAnalysis \
    --metrics 'regex:smsp__warp_issue_stalled_.*_per_warp_active\.pct' \
    --print-details all "$@" > "$out/ncu_${kre//[^A-Za-z0-9]/_}.txt" 2>&1
echo "ncu exit $?; $(wc -l < "$out/ncu_${kre//[^A-Za-z0-9]/_}.txt") lines in $out"
