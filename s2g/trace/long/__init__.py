"""Long windows of the GPU traceback: rows split into strips, a block per round of strips
(issue 15), for windows too large for the one-thread kernel (:mod:`s2g.trace.gpu_kernel`).

* :mod:`s2g.trace.long.source` — the kernel, Python source generated per strip height
  (its design and measurements);
* :mod:`s2g.trace.long.plan` — strips, rounds and jobs, threads and shared memory a
  block, the band-only layout, device bytes a window and a launch;
* :mod:`s2g.trace.long.launch` — the compiled kernels and one launch of a chunk of
  windows, then the walks.
"""
