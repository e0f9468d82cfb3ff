"""The ``s2g`` command answers Numba's BLAS probe "no" (s2g/_numba.py,
``skip_blas_probe``): Numba's CPU target imports ``scipy.linalg`` at its first use where
SciPy is installed, 0.16-0.39 s of a run's start-up for kernels that use no BLAS. A fake
SciPy on the path records whether ``scipy.linalg`` was imported; numba-cuda's copy of the
probe (the CUDA target's, at its first use) is skipped too."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROBE = r"""
import sys
from s2g._numba import skip_blas_probe
skipped = skip_blas_probe()
from numba.core.registry import cpu_target
cpu_target.target_context.refresh()          # what a first compile or cache load does
import numba.np.arraymath as am
import importlib                              # the CUDA target's copy (at its first use)
cam = importlib.import_module("numba.cuda.np.arraymath")
print(skipped, "scipy.linalg" in sys.modules, am._HAVE_BLAS, cam._HAVE_BLAS)
import scipy.linalg                           # the user's own import still works
print("scipy.linalg" in sys.modules)
"""


def _fake_scipy(root):
    pkg = root / "scipy"
    (pkg / "linalg").mkdir(parents=True)
    (pkg / "__init__.py").write_text('__version__ = "1.17.0"\n')
    (pkg / "linalg" / "__init__.py").write_text("")
    (pkg / "linalg" / "cython_blas.py").write_text("")


@pytest.mark.parametrize("knob, expect", [("", "True False False False"),
                                          ("blas_probe=1", "False True True True")])
def test_the_s2g_command_skips_numbas_blas_probe(tmp_path, knob, expect):
    _fake_scipy(tmp_path)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(tmp_path), os.getcwd(), os.environ.get("PYTHONPATH", "")]), S2G_CONFIG=knob)
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == [expect, "True"]


def test_entry_installs_the_skip_before_the_cli(monkeypatch):
    from s2g import __main__, _numba
    calls = []
    monkeypatch.setattr(_numba, "skip_blas_probe", lambda: calls.append("skip"))
    monkeypatch.setattr(__main__, "_leave", lambda code: calls.append(("leave", code)))
    import s2g.cli
    monkeypatch.setattr(s2g.cli, "main", lambda: calls.append("main") or 0)
    __main__.entry()
    assert calls == ["skip", "main", ("leave", 0)]


def test_only_the_probes_frames_are_refused(tmp_path, monkeypatch):
    """The finder refuses ``scipy.linalg`` to a ``_check_blas`` of the two probe modules
    only: the same import from any other function, or a module of another name, passes."""
    from s2g import _numba
    _fake_scipy(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    for m in [m for m in sys.modules if m == "scipy" or m.startswith("scipy.")]:
        monkeypatch.delitem(sys.modules, m)

    def probe(module, name="_check_blas"):
        ns = {"__name__": module}
        exec(f"def {name}():\n    import scipy.linalg\n", ns)
        try:
            ns[name]()
            return "imported"
        except ImportError:
            return "refused"
    monkeypatch.setattr(sys, "meta_path", [_numba._BLAS_SKIP] + sys.meta_path)
    try:
        assert probe("numba.np.arraymath") == "refused"
        assert probe("numba.cuda.np.arraymath") == "refused"
        assert "scipy.linalg" not in sys.modules
        assert probe("numba.np.arraymath", "other") == "imported"
        sys.modules.pop("scipy.linalg")
        assert probe("mypackage.arraymath") == "imported"
    finally:
        for m in [m for m in sys.modules if m == "scipy" or m.startswith("scipy.")]:
            sys.modules.pop(m)
