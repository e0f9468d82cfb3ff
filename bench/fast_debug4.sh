#!/usr/bin/env bash
# `fast` on the GPU under several build options; the first exact one is checked in full and timed.
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
mkdir -p ../shared/data && ln -sfn "$PWD/.realdata" ../shared/data/real
C="2000,50,2,150,8,19 300,50,2,150,8,19 2000,50,2,40,8,5 2000,50,4,150,8,19 2000,50,2,400,8,24"
WIN=""
for combo in "S2G_FAST_MERGE=rows" "S2G_FAST_OPT=0" "S2G_FAST_MERGE=preds S2G_FAST_OPT=0" "S2G_FAST_EXCHANGE=shared S2G_FAST_OPT=0"; do
  echo "== $combo" | tee -a $OUT/combos.log
  env $combo timeout 100 python3 bench/fast_debug2.py $C 2>&1 | grep -v "Warn\|warn(" | tee -a $OUT/combos.log > /tmp/c.log
  cat /tmp/c.log
  if ! grep -q "bad [1-9]" /tmp/c.log && grep -q "bad 0" /tmp/c.log; then WIN="$combo"; break; fi
done
echo "exact combo: '$WIN'"
[ -n "$WIN" ] || exit 1
env $WIN timeout 330 python3 -m bench.fast --out $OUT --configs 8x19,16x10,8x12 --long 10000:512:8x24 2>&1 | grep -v "Warn\|warn(" | tee $OUT/fast_bench.log
