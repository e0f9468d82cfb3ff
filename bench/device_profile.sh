#!/usr/bin/env bash
# py-spy on one command, on the GPU machine (device tool): where its threads' seconds go.
#   bash bench/device_profile.sh OUT NAME CMD [ARGS...]
# py-spy comes from a wheel in .whlx/ (`pip download --no-deps --only-binary=:all:
# --platform manylinux2014_x86_64 py-spy -d .whlx`), carried with the run's `carry`;
# the s2g wheels of .whl/ as in bench/device_long.sh. Writes OUT/NAME.json (speedscope:
# every thread, idle samples included, 200 Hz), OUT/NAME.log (the command's stderr and
# py-spy's) and OUT/NAME.txt (python -m bench.pyspy_summary of the JSON).
set -uo pipefail
if [ $# -lt 3 ]; then
  echo "usage: bash bench/device_profile.sh OUT NAME CMD [ARGS...]" >&2
  exit 2
fi
. bench/device_env.sh || exit 1
python3 -m pip install -q --no-index --no-deps --target /tmp/pyspy .whlx/py_spy*.whl || exit 1
out=$1 name=$2
shift 2
mkdir -p "$out"
/tmp/pyspy/bin/py-spy record --threads --idle --nonblocking --format speedscope -r 200 \
  -o "$out/$name.json" -- "$@" > "$out/$name.log" 2>&1
rc=$?
python3 -m bench.pyspy_summary "$out/$name.json" > "$out/$name.txt" 2>&1
echo "profile of '$*': exit $rc; $out/$name.txt"
exit $rc
