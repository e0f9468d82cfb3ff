#!/usr/bin/env bash
# Device call: GPU tests of every GPU variant, the fast bench, end-to-end align of 100k reads.
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
mkdir -p ../shared/data && ln -sfn "$PWD/.realdata" ../shared/data/real
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv | tee $OUT/gpu_tests.log
timeout 260 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_fast.py tests/test_gpu_real.py 2>&1 | tail -15 | tee -a $OUT/gpu_tests.log
timeout 200 python3 -m bench.fast --out $OUT --skip-random 2>&1 | grep -v "Warn\|warn(" | tee $OUT/fast_bench.log
T=/tmp/e2e; mkdir -p $T
python3 -c 'import sys; from s2g.cli import main; sys.exit(main())' simulate $T/snp --total-bases 100000 --reads 100000 --seed 1 >/dev/null
S2G="python3 -c 'import sys; from s2g.cli import main; sys.exit(main())'"
( time python3 -c 'import sys; from s2g.cli import main; sys.exit(main())' align $T/snp.gfa $T/snp.fq -o $T/out.gaf --variant fast ) 2>&1 | tail -12 | tee $OUT/e2e.log
wc -l $T/out.gaf | tee -a $OUT/e2e.log
