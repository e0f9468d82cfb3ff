"""Overlapped batch pipeline for ``s2g align``: read, align, finish, write.

Three stages run at once, in input order, with bounded memory:

* a reader thread parses and encodes the next batches (dnaio; at most ``depth`` ahead);
* an aligner thread runs the variant's kernel on batch k (score and end cell), while
  the caller's thread waits and writes (so it stays responsive to signals);
* a finisher thread does the CPU traceback of batch k-1;
* a formatter thread builds the GAF text of batch k-2 (optional ``format_one``): the
  traceback (parallel Numba, GIL released) of one batch runs while Python formats the
  previous one, instead of one after the other in one thread.

The kernels (Numba ``nogil``, CUDA launches) release the GIL, so on a GPU machine the
windowed traceback and the GAF formatting of one batch hide behind the kernel of the
next. Output is written strictly in input order, exactly as the one-stage loop wrote it.
"""
from __future__ import annotations

import contextlib
import queue
import sys
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor

from .config import settings


@contextlib.contextmanager
def switch_interval(us: int):
    """The GIL's switch interval at ``us`` microseconds meanwhile (0: as it is), then as it
    was. ``s2g align``'s start-up (knob ``startup_switch_us``): its main thread's short
    Numba calls of the first reads wait up to the interval for the GIL each time they
    return, while numba.cuda is imported in another thread."""
    old = sys.getswitchinterval()
    if us > 0:
        sys.setswitchinterval(us / 1e6)
    try:
        yield
    finally:
        sys.setswitchinterval(old)

_DONE = object()


#: (stage, thread name, perf_counter at start, at end) of every timed stage call, where the
#: knob ``stage_log`` is on (:func:`log_stage`; printed by ``--timings``)
STAGE_LOG: list = []


def log_stage(name, t0, t1):
    """Record a stage call in :data:`STAGE_LOG` (knob ``stage_log``; list.append is atomic)."""
    if settings().stage_log:
        STAGE_LOG.append((name, threading.current_thread().name, t0, t1))


class GilProbe:
    """A thread that sleeps 1 ms at a time and records how much later than that it ran
    again (knob ``gil_probe``): with the GIL free it wakes within tens of microseconds;
    where the stages' threads queue for it, up to the switch interval (5 ms)."""

    def __init__(self):
        self.late = []
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, name="s2g-gil-probe", daemon=True)
        self._t.start()

    def _run(self):
        while not self._stop.is_set():
            t = time.perf_counter()
            time.sleep(0.001)
            self.late.append(time.perf_counter() - t - 0.001)

    def stop(self):
        """(samples, mean seconds late, 95th percentile) once stopped."""
        self._stop.set()
        self._t.join(1.0)
        late = sorted(self.late)
        if not late:
            return 0, 0.0, 0.0
        return len(late), sum(late) / len(late), late[int(0.95 * (len(late) - 1))]


def prefetch(iterable, depth: int = 2, name: str = "s2g-reader"):
    """Iterate ``iterable`` in a background thread (``name``), ``depth`` items ahead; errors
    re-raised here."""
    q: queue.Queue = queue.Queue(maxsize=max(1, depth))
    stop = threading.Event()

    def run():
        try:
            for item in iterable:
                while not stop.is_set():
                    try:
                        q.put((True, item), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            q.put((True, _DONE))
        except BaseException as exc:  # handed to the consumer, which raises it
            q.put((False, exc))

    t = threading.Thread(target=run, name=name, daemon=True)
    t.start()
    try:
        while True:
            ok, item = q.get()
            if not ok:
                raise item
            if item is _DONE:
                return
            yield item
    finally:
        stop.set()


def run(batches, align_one, finish_one, write, depth: int = 2, format_one=None,
        finish_workers: int = 1, align_workers: int = 1, format_workers: int = 1):
    """``write(format_one(batch, finish_one(batch, align_one(batch))))`` for every batch
    (without ``format_one``: ``write(finish_one(...))``), stages overlapped.

    ``align_one`` runs in ``align_workers`` aligner threads (several batches aligned at
    once: a stage that mostly waits on its GPU work and copies), ``finish_one`` in
    ``finish_workers`` worker threads (several batches traced at once) and ``format_one``
    in ``format_workers`` more; results are formatted and written in input order whatever
    order the workers end in (each batch's future waits in a queue); ``write`` runs in the
    calling thread, which otherwise only waits: a kernel holds its thread until it
    returns, and Python handles signals in the main thread only, so Ctrl-C (and the
    CLI's SIGTERM) interrupts the caller at once, whatever the batch size. At most
    ``align_workers`` batches are being aligned and ``depth`` finished-but-unwritten
    batches are held. On an error or interrupt the workers are not waited for (the CLI
    exits without joining them). Knob ``serial_stages``: every stage in the calling thread,
    batch after batch (how long the stages take when they do not share the host: compare
    ``--timings``' seconds per stage with the threaded run's). Returns the number of
    batches.
    """
    if settings().serial_stages:            # every stage of a batch here, one after another
        n = 0
        for batch in batches:
            res = finish_one(batch, align_one(batch))
            write(res if format_one is None else format_one(batch, res))
            n += 1
        return n
    n = 0
    pending: deque = deque()
    aligning: deque = deque()
    n_align = max(1, int(align_workers))
    aligner = ThreadPoolExecutor(n_align, thread_name_prefix="s2g-align")
    pool = ThreadPoolExecutor(max(1, int(finish_workers)), thread_name_prefix="s2g-finish")
    n_fmt = max(1, int(format_workers))
    fmt = ThreadPoolExecutor(n_fmt, thread_name_prefix="s2g-format")
    ok = False
    try:
        for batch in prefetch(batches, depth + n_align - 1):
            fa = aligner.submit(align_one, batch)
            aligning.append(fa)
            if len(aligning) >= n_align:         # (one worker: as before, this batch's)
                aligning.popleft().result()      # an error is raised here, in order
            fut = pool.submit(lambda b=batch, f=fa: finish_one(b, f.result()))
            if format_one is not None:
                fut = fmt.submit(lambda b=batch, f=fut: format_one(b, f.result()))
            pending.append(fut)
            n += 1
            while pending and (len(pending) > depth + finish_workers + n_align + n_fmt - 3
                               or pending[0].done()):
                write(pending.popleft().result())
        while pending:
            write(pending.popleft().result())
        ok = True
    finally:
        for ex in (aligner, pool, fmt):
            ex.shutdown(wait=ok, cancel_futures=not ok)
    return n


def progress_bar(enabled, total=None, unit="read"):
    """A tqdm bar of reads (``unit="B"``: bytes) on stderr, or None; ``enabled=None``: when
    stderr is a terminal. (Here, not in cli.py, so that the Dask path draws the same bar
    without importing the CLI.)"""
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        return None
    from tqdm import tqdm
    kw = dict(unit_scale=True) if unit == "B" else {}
    return tqdm(total=total, unit=unit, file=sys.stderr, dynamic_ncols=True, smoothing=0.1,
                **kw)


class InputProgress:
    """``s2g align``'s bar: over the bytes of the reads file where its size is known (a
    regular file; compressed: the compressed bytes), so it shows a percentage and an ETA,
    the reads written beside them; else (standard input, a pipe) over reads, without a
    total. :meth:`track` the batches as they are read (each one's ``input_pos``,
    :func:`s2g.reads.input_position`), :meth:`update` as they are written, in the same
    order."""

    def __init__(self, bar, total):
        self.bar, self.total = bar, total
        self.reads = 0
        self._pos = deque()

    def track(self, batches):
        """``batches``, each one's input position noted as it is read (any thread)."""
        for b in batches:
            self._pos.append(getattr(b, "input_pos", None))
            yield b

    def update(self, n_reads):
        """The next batch (``n_reads`` reads) is written."""
        self.reads += n_reads
        if self.total is None:
            self.bar.update(n_reads)
            return
        pos = self._pos.popleft() if self._pos else None
        self.bar.set_postfix_str(f"{self.reads:,} reads", refresh=False)
        if pos is not None and pos > self.bar.n:
            self.bar.update(min(pos, self.total) - self.bar.n)

    def close(self):
        self.bar.close()


def input_progress(enabled, path):
    """The :class:`InputProgress` of reads file ``path`` (``-``: standard input), or None
    (``enabled`` as :func:`progress_bar`'s)."""
    from .reads import input_size
    total = input_size(path)
    bar = progress_bar(enabled, total, "read" if total is None else "B")
    return None if bar is None else InputProgress(bar, total)
