# Sourced by the bench/device_*.sh scripts on the GPU machine: carried wheels on
# PYTHONPATH (../shared/device/README.md), the real graphs where the tests look for
# them, an `S2G` command, and 100,000 simulated 150 bp reads on a 100 kbp SNP graph in $T.
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
mkdir -p ../shared/data && ln -sfn "$PWD/.realdata" ../shared/data/real
nvidia-smi --query-gpu=name,driver_version --format=csv
S2G() { python3 -c 'import sys; from s2g.cli import main; sys.exit(main())' "$@"; }
T=/tmp/e2e; mkdir -p $T
S2G simulate $T/snp --total-bases 100000 --reads 100000 --seed 1 >/dev/null
