#!/usr/bin/env bash
# Session 6, device call 10: long-read strip shapes at 10 kbp (one full wave of read
# pairs, 12,672 reads; and 8,192): 8x24 (the default), 16x24, 8x19; each checked first.
source bench/device_prelude.sh >/dev/null 2>&1
timeout 200 python3 bench/long_configs.py --configs 8x24,16x24,8x19 --reads 12672 2>&1 | grep -v Warn | tee $OUT/long_configs.log
timeout 100 python3 bench/long_configs.py --configs 8x24,16x24 --reads 8192 2>&1 | grep -v Warn | tee -a $OUT/long_configs.log
