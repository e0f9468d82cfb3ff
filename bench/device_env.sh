# Sourced by the device scripts (`. bench/device_env.sh || exit 1`), from the repository
# root: the carried wheels of .whl/ (../shared/device/README.md: the device's own numpy
# breaks numba-cuda) installed into /tmp/site and put on PYTHONPATH after the tree
# (S2G_NO_WHEELS=1, or no .whl/: the Python as it is), and unbuffered output.
if [ -d .whl ] && [ -z "${S2G_NO_WHEELS:-}" ]; then
  python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl || return 1
  export PYTHONPATH=$PWD:/tmp/site
fi
# Bytecode as an installed s2g has it (pip compiles a wheel's modules): the carried tree and
# the wheels above compiled once here, so that no timed run compiles numpy's and s2g's ~160
# modules from source (0.21 s of compiling on the 2-core VM) where PYTHONDONTWRITEBYTECODE
# is set, as on the GPU machine (found in session 63; S2G_NO_PYC=1: as before)
if [ -z "${S2G_NO_PYC:-}" ]; then
  python3 -m compileall -q -j 0 s2g bench > /dev/null 2>&1 || true
  # whether the machine's own numba and numba-cuda have theirs (they did, session 63);
  # device_quick.sh records it
  python3 -c "
import importlib.util as u, os, numba, numba_cuda
print('ok' if all(os.path.exists(u.cache_from_source(m.__file__)) for m in (numba, numba_cuda))
      else 'missing: timed runs compile them')" > /tmp/pyc_numba.txt 2>/dev/null
  echo "bytecode of numba, numba-cuda: $(cat /tmp/pyc_numba.txt)" > /tmp/pyc_state.txt
fi
# .whld/ carried (Dask runs: distributed, dask and their dependencies for Python 3.12;
# bench/device_scale_out.sh says how to fetch them): installed into /tmp/site_dask where the
# machine's Python has no `distributed`
if [ -d .whld ] && ! python3 -c "import distributed" 2>/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site_dask \
    .whld/*.whl || return 1
  export PYTHONPATH=${PYTHONPATH:-$PWD}:/tmp/site_dask
fi
export PYTHONUNBUFFERED=1
# tests/test_v0.py's and test_surject.py's parasail oracle tests skip where parasail is
# absent only with this set (the device's Python lacks it; its wheel does not fit beside the others in a carry)
python3 -c "import parasail" 2>/dev/null || export S2G_NO_PARASAIL=1
# S2G_DEVICE_CACHE=DIR: Numba's cache and the generated kernels' files under DIR (a carried
# folder, so that a later call of a session loads what an earlier call compiled; pack it
# with `tar czf "$OUT/cache.tgz" -C DIR .` at the end of a call and unpack it here)
if [ -n "${S2G_DEVICE_CACHE:-}" ]; then
  mkdir -p "$S2G_DEVICE_CACHE"
  export NUMBA_CACHE_DIR=$(realpath "$S2G_DEVICE_CACHE")/numba
  export XDG_CACHE_HOME=$(realpath "$S2G_DEVICE_CACHE")/xdg
  # the generated kernels' modules (s2g.variants.codegen.load_source imports them) compiled
  # too: where PYTHONDONTWRITEBYTECODE is set (the GPU machine), each run compiled them
  if [ -z "${S2G_NO_PYC:-}" ] && [ -d "$XDG_CACHE_HOME/s2g/kernels" ]; then
    python3 -m compileall -q -j 0 "$XDG_CACHE_HOME/s2g/kernels" > /dev/null 2>&1
  fi
fi
true
