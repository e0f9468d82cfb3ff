"""Counters that stages in several threads add to: the GPU modules' ``PROFILE`` dicts,
read by ``--timings`` (:func:`s2g.aligner.gpu_profiles`)."""
import threading


class Counters(dict):
    """A dict of numbers whose :meth:`add` is atomic across threads. ``d[k] += v`` is a
    read, an add and a store, and another thread may run between them: the fast window
    kernel's counters, added to by the align thread and by the GAF thread's copies pass,
    lost one batch's cells in two of ten runs of 1,000,000 reads (session 63, H200; the
    GAF was identical, the ``--timings`` line was not)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._lock = threading.Lock()

    def add(self, **amounts):
        """Add each keyword's amount to its counter, all under one lock."""
        with self._lock:
            for key, value in amounts.items():
                self[key] += value
