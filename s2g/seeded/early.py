"""The first batch seeded on the CPU while CUDA starts (knob ``early_cpu_seeds``; issue #42).

``s2g align`` on a GPU machine reads its first batch and loads the graph and the seed
index while CUDA starts in another thread (numba.cuda's import, the driver, the context:
0.6-0.75 s from the start on an H100 host, ~0.35 s after the graph is loaded). Until then
the GPU's seeding cannot run, and once it can, its first call pays its own start (device
buffers, the index's upload): the first batch was seeded 0.3-0.45 s after the pipeline
started (H100 hosts, session 65), and nothing aligns until it is.

Here that first batch is seeded on the host's cores meanwhile, by a CPU
:class:`~s2g.seeded.SeededAligner` built with the run's seeding options (its chains by
:func:`~s2g.seeded.chains.batch_chains`, its windows by the host searches), and the GPU
aligner takes those candidates for the batch instead of making them
(:meth:`SeededAligner.seed_batches`). Nothing in the output changes: the GPU's chains and
window lists are the CPU's bit for bit (``tests/seeds_gpu_cudasim_check.py``,
``tests/windows_gpu_cudasim_check.py``), so the windows, and all that follows, are the same.

It starts only where it cannot cost the run its pace: an index file already there (one
that must be built is built by the plan, with its notes), an acyclic graph, single reads,
the first batch left whole (``batch_ramp``), and the CPU seeding's functions in Numba's
disk cache (:func:`warm`: otherwise this thread would compile, holding Numba's compiler
lock that the pipeline's first calls need). The GPU aligner waits for the result when the
first batch reaches its seeding (the thread started ~0.5 s earlier); a failure there
(any exception) only means the batch is seeded as usual."""
from __future__ import annotations

import itertools
import threading
import time


def warm() -> bool:
    """Whether the CPU seeding's entry points have a disk cache entry (:func:`s2g.warmup.cold`'s
    probe); False where in doubt."""
    try:
        from ..warmup import _has_entry
        from .chains import batch_chains
        from .windows import batch_windows
        return all(_has_entry(d) for d in (batch_chains, batch_windows))
    except Exception:                   # noqa: BLE001 - a probe only
        return False


class EarlySeeds:
    """The candidates (:class:`~s2g.seeded.windows.Windows`) of ``reads`` made in a
    background thread by a CPU aligner of ``options``' seeding parameters on ``graph``
    with the index of the future ``index`` (:func:`s2g.index.preload_index`); :meth:`take`
    hands them to the aligner that meets the same batch object."""

    def __init__(self, graph, options, index, reads):
        self.reads = reads
        self.windows = None
        self.seconds = (0.0, 0.0)       # chains, windows
        self.ended = {}                 # first_at's keys -> time.perf_counter()
        self.pool = None                # the CPU aligner's search scratch (handed on)
        self.error = None
        self._thread = threading.Thread(target=self._run, args=(graph, options, index),
                                        name="s2g-early-seeds", daemon=True)
        self._thread.start()

    def _run(self, graph, options, index):
        try:
            import numba

            from ..graph_core import graph_checksum
            from .aligner import SeededAligner
            if options.threads:         # --threads (Numba's count is the calling thread's)
                numba.set_num_threads(max(1, min(int(options.threads),
                                                 numba.config.NUMBA_NUM_THREADS)))
            ix = index.result()
            if ix.checksum != graph_checksum(graph):
                return                  # another graph's: the plan rebuilds it
            so = options.seeded
            sa = SeededAligner(graph, ix, options.scoring, options.mode, max_occ=so.max_occ,
                               max_cand=so.max_windows, unseeded="unmapped",
                               window_kernel=_no_kernel, device="cpu")
            t0 = time.perf_counter()
            got = sa.chains(self.reads)
            t1 = time.perf_counter()
            self.windows = sa.windows_of(self.reads, got)
            t2 = time.perf_counter()
            self.seconds = (t1 - t0, t2 - t1)
            self.ended = {"chains": t1, "windows_of": t2}
            self.pool = sa._scratch[0] if sa._scratch else None
        except Exception as exc:        # noqa: BLE001 - the batch is seeded as usual
            self.error = exc
            self.windows = None

    def take(self, reads):
        """The candidates of ``reads`` when it is this batch and they were made (waiting
        for the thread), else None; once taken, neither the batch nor its candidates are
        held here any more."""
        if self.reads is None or reads is not self.reads:
            return None
        self._thread.join()
        w, self.windows, self.reads = self.windows, None, None
        return w


def _no_kernel(*args, **kwargs):
    raise RuntimeError("the early seeding aligner aligns nothing")


def start(graph, options, index, batches):
    """(``batches`` with their first put back, an :class:`EarlySeeds` of that first batch,
    or None where the CPU seeding would compile: :func:`warm`). The caller
    (:func:`s2g.plan.early_seeds`) checks the rest of the module doc's conditions."""
    if not warm():
        return batches, None
    first = next(batches, None)
    if first is None:
        return iter(()), None
    return itertools.chain([first], batches), EarlySeeds(graph, options, index, first)
