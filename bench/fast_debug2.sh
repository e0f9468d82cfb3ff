#!/usr/bin/env bash
# Device debugging of `fast` (bench/NOTES.md): tiny cases vs V0, then the full check + timing.
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
mkdir -p ../shared/data && ln -sfn "$PWD/.realdata" ../shared/data/real
C="2000,50,2,150,8,19 300,50,2,150,8,19 2000,50,2,40,8,5 2000,50,2,150,32,5 2000,50,4,150,8,19"
python3 bench/fast_debug2.py $C 2>&1 | grep -v Warn | tee $OUT/d_plain.log
grep -q "bad [1-9]" $OUT/d_plain.log && exit 1
timeout 400 python3 -m bench.fast --out $OUT --configs 8x19,16x10,8x12 --long 10000:512:8x24,50000:32:8x24 2>&1 | grep -v "Warn\|warn(" | tee $OUT/fast_bench.log
