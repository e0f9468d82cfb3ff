# Sourced by the device scripts (`. bench/device_env.sh || exit 1`), from the repository
# root: the carried wheels of .whl/ (../shared/device/README.md: the device's own numpy
# breaks numba-cuda) installed into /tmp/site and put on PYTHONPATH after the tree
# (S2G_NO_WHEELS=1, or no .whl/: the Python as it is), and unbuffered output.
if [ -d .whl ] && [ -z "${S2G_NO_WHEELS:-}" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || return 1
  export PYTHONPATH=$PWD:/tmp/site
fi
export PYTHONUNBUFFERED=1
