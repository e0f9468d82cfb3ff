"""Traceback: paths and CIGARs from each read's optimal end cell (CPU and GPU).

The CPU traceback, by phase:

* :mod:`s2g.trace.common` — what the CPU and GPU tracebacks share: op and status
  codes, the traceback window's backward search, the cell and its tie order, the walk
  summary, the lane column programs;
* :mod:`s2g.trace.scalar` — the window and its DP for one read in int64, row
  checkpoints for large windows (:func:`traceback_read`, the reference);
* :mod:`s2g.trace.columns` — the lane kernels: a column of every lane, a lane's merge
  and its walk;
* :mod:`s2g.trace.lanes` — many reads' windows in lanes across reads (programs, groups,
  the lockstep DP);
* :mod:`s2g.trace.bands` — long windows in lanes with row bands;
* :mod:`s2g.trace.batch` — a batch in chunks: lanes, row bands, the rest one read per
  thread, the GPU half first (:func:`traceback_gpu_part`), results as
  :class:`FlatTracebacks`.

The GPU traceback: :mod:`s2g.trace.gpu` and its modules (``gpu_*``, the long-window
kernel in :mod:`s2g.trace.long`), imported only where a run uses the GPU.

Importing this package imports no GPU module. The limits that tests and bench scripts
patch (``LANE_CELLS``, ``CHUNK_OPS``, ``LANES_TB``, ``SUPER``, ...) are read from
:mod:`s2g.trace.batch`: patch them there.
"""
from .batch import FlatTracebacks, LaneLimits, traceback_batch, traceback_gpu_part  # noqa: F401
from .columns import asm_report  # noqa: F401
from .scalar import MAX_CELLS, traceback_one, traceback_read  # noqa: F401

__all__ = ["MAX_CELLS", "FlatTracebacks", "LaneLimits", "asm_report",
           "traceback_batch", "traceback_gpu_part", "traceback_one", "traceback_read"]
