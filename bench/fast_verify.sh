#!/usr/bin/env bash
# One device call: verify `fast` on the GPU, read its resource usage and SASS, time it.
# Usage on the device machine (carry .whl and .realdata): bash bench/fast_verify.sh
set -o pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
mkdir -p ../shared/data && ln -sfn "$PWD/.realdata" ../shared/data/real
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv | tee $OUT/gpu.txt
timeout 90 python3 bench/fast_debug.py 2>&1 | tee $OUT/fast_debug.log
python3 - <<'PY' 2>&1 | tee $OUT/fast_resources.log
from s2g.variants import fast
from s2g.scoring import Mode
for G, K in [(8, 19), (16, 10), (4, 38), (8, 24)]:
    k = fast.get_kernel(G, K, Mode.LOCAL)
    sig = fast.kernel_signature()
    k.compile(sig)
    try:
        print(G, K, "regs", k.get_regs_per_thread(sig), "local bytes", k.get_local_mem_per_thread(sig), flush=True)
    except Exception as exc:
        print("resource query failed", exc)
    if (G, K) == (8, 19):
        try:
            open(__import__("os").environ["OUT"] + "/fast_8x19.sass", "w").write(k.inspect_sass(sig))
        except Exception as exc:
            print("sass failed", exc)
PY
timeout 300 python3 -m bench.fast --out $OUT --configs 8x19,16x10,4x38,8x12 --long 10000:1024:8x24,50000:64:8x24 2>&1 | tee $OUT/fast_bench.log | grep -v "^  " ; tail -14 $OUT/fast_bench.log
for R in 128 96; do S2G_FAST_MAXREG=$R timeout 100 python3 -m bench.fast --out /tmp/r$R --skip-check --configs 8x19,16x10 --long "" --quick 2>&1 | grep "150bp" | sed "s/^/maxreg=$R /"; done | tee $OUT/fast_maxreg.log
