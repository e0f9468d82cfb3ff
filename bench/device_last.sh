#!/usr/bin/env bash
# Device call: end-to-end align with the on-disk kernel cache (cold, then warm), and the
# bench suite's remaining experiments for the GPU variants.
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
mkdir -p ../shared/data && ln -sfn "$PWD/.realdata" ../shared/data/real
nvidia-smi --query-gpu=name,driver_version --format=csv
S2G() { python3 -c 'import sys; from s2g.cli import main; sys.exit(main())' "$@"; }
T=/tmp/e2e; mkdir -p $T
S2G simulate $T/snp --total-bases 100000 --reads 100000 --seed 1 >/dev/null
for k in cold warm warm2; do echo "== $k"; ( time S2G align $T/snp.gfa $T/snp.fq -o $T/out_$k.gaf --variant fast ) 2>&1 | grep -v "Warn\|warn("; done
cmp $T/out_cold.gaf $T/out_warm.gaf && echo "cold and warm runs identical"; ls ~/.cache/s2g/kernels | head -3
timeout 200 python3 -m bench --experiments branching,node_length,real --variants fast,v4 --skip-v0 --no-peer \
  --time-limit 140 --budget 0.5 --no-report --real-dir .realdata --out $OUT/suite2 2>&1 | grep -v "Warn\|warn(" | grep "GCUPS\|skip\|FAIL\|done\|rror" | tail -40
