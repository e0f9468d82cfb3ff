#!/usr/bin/env bash
# Session 6, device call 6: (a) end to end with per-thread default streams (cuda-python's
# CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM) and the GPU traceback in the finisher thread
# (S2G_TB_INLINE=0), so that its host half overlaps the next batch's kernel; GAF compared.
# (b) 10 kbp x 8,192 reads (4,096 pairs, 65% of the resident groups at G = 8): G = 16.
source bench/device_prelude.sh >/dev/null 2>&1
A() { S2G align $T/snp.gfa $T/snp.fq --variant fast --timings "$@" 2>&1 | grep "stage"; }
{ echo "== cold"; A -o $T/o0.gaf
  for k in 1 2 3; do echo "== defaults"; A -o $T/o1.gaf; done
  for k in 1 2 3; do echo "== ptds, tb in finisher"; S2G_TB_INLINE=0 CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM=1 A -o $T/o3.gaf; done
  for k in 1 2; do echo "== ptds, tb inline"; CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM=1 A -o $T/o4.gaf; done
  for k in 1 2; do echo "== ptds, tb in finisher, batch 25000"; S2G_TB_INLINE=0 CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM=1 A -o $T/o5.gaf --batch-size 25000; done
  for k in 1 2; do echo "== legacy stream, tb in finisher"; S2G_TB_INLINE=0 A -o $T/o6.gaf; done
  for f in o3 o4 o5 o6; do cmp $T/o1.gaf $T/$f.gaf && echo "$f GAF identical to defaults"; done
} 2>&1 | tee $OUT/e2e_streams.log
timeout 150 python3 bench/fast_profile.py --graphs snp50 --configs 8x24,16x24 --reads 8192 --len 10000 --bases 20000 --no-check 2>&1 | grep -v Warn | tee $OUT/long_g16.log
