#!/usr/bin/env bash
# Session 6, device call 8: the pair kernel's default config is now 4 x 38 for 150 bp
# (4 x 26 for 100 bp). GPU tests of the fast kernel, then the suite's fast rows at both
# configs, 10 kbp at 8x24 and 4x38 strips, and the real graphs at the new default.
source bench/device_prelude.sh >/dev/null 2>&1
timeout 280 python3 -m pytest -m gpu -q -p no:warnings tests/test_fast.py 2>&1 | tail -3 | tee $OUT/gpu_tests.log
timeout 300 python3 -m bench.fast --out $OUT --skip-random --configs 4x38,8x19 \
  --long "10000:12672:8x24:20000,10000:12672:4x38:20000" 2>&1 | grep -v Warn | tee $OUT/fast.log | tail -14
