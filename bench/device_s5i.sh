#!/usr/bin/env bash
# Session 5, device call 9: the DRB1 traceback probe on the GPU host's 16-core CPU
# (e2e call 8: 14.4 s of CPU traceback for 100,000 reads, against 1.9 s on the SNP graph).
source bench/device_prelude.sh >/dev/null 2>&1
nproc
timeout 200 python3 bench/drb1_traceback_probe.py 20000 2>&1 | grep -v Warn | tee $OUT/drb1_tb_probe.log
