#!/usr/bin/env bash
# Session 6, device call 5: the GPU tests that run the fast kernel end to end (real
# graphs, long reads, GPU traceback from its end cells) after calls 2-3's kernel changes.
source bench/device_prelude.sh >/dev/null 2>&1
timeout 520 python3 -m pytest -m gpu -q -p no:warnings tests/test_gpu_real.py tests/test_gpu_traceback.py 2>&1 | tail -4 | tee $OUT/gpu_tests.log
