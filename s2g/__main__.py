"""``python -m s2g`` and the ``s2g`` command (console script ``s2g.__main__:entry``).

:func:`s2g.cli.main` runs the command; then, with its output flushed and closed, the
process leaves at once (``os._exit``, knob ``fast_exit``): the interpreter's own clean-up
(freeing every module and array, Numba's and CUDA's teardown) took 0.4-0.5 s after the
last GAF line was written. Leaving at once is what the command would do anyway at that
point: ``s2g align -o FILE`` has renamed its file into place, ``--dask`` has closed its
cluster and the compile-ahead processes are stopped before ``main`` returns. Not where
another process of ours still runs (multiprocessing children), nor in ``main`` itself,
which tests and the Python API call.
"""
import os
import sys


def entry():
    from ._numba import skip_blas_probe
    skip_blas_probe()
    from .cli import main
    code = main()
    _leave(code)


def _leave(code):
    """``sys.exit(code)``, or with the ``fast_exit`` knob ``os._exit(code)`` once stdout
    and stderr are flushed (a failed flush, e.g. a closed pipe: the normal exit)."""
    code = 0 if code is None else code
    try:
        from .config import settings
        fast = settings().fast_exit
        import multiprocessing
        fast = fast and not multiprocessing.active_children()
        for f in (sys.stdout, sys.stderr):
            f.flush()
    except Exception:               # noqa: BLE001 - leave the slow way, which reports it
        fast = False
    if fast and isinstance(code, int):
        os._exit(code)
    raise SystemExit(code)


if __name__ == "__main__":
    entry()
