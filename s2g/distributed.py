"""Run ``s2g align`` on a Dask cluster: same GAF, byte for byte, as one process.

Design (issue 6)::

    client (reads the FASTA/FASTQ, writes the GAF)          workers (one per GPU, or CPU processes)
    iter_read_batches ──▶ chunk k (ReadBatch) ──submit──▶   graph cache: load_graph(path) once per process
         ▲   at most `window` chunks not yet written          align(...) ──▶ GAF text of chunk k
         └── reorder buffer ◀── (k, text) as they complete ◀──┘
    write chunk k only after chunks 0..k-1, in input order; tqdm counts written reads

* **Workers load the graph themselves**, once per process: a module-level cache keyed
  by (absolute path, size, mtime, strands, break_cycles). The compiled kernels stay
  warm in the same process (Numba's dispatchers, the GPU module). A fingerprint of
  the arrays and names is compared with the client's graph, so a worker that sees a
  different file under the same path stops the run instead of writing other output.
  :func:`align_file` also accepts an in-memory :class:`~s2g.graph.FlatGraph`, which
  is then broadcast to every worker once (``client.scatter(broadcast=True)``).
* **Chunks travel inside their task** (not scattered), so the scheduler can run a
  chunk again from its spec when the worker holding it dies; Dask does that by itself
  for lost workers (``distributed.scheduler.allowed-failures`` times), and
  ``retries`` covers exceptions that are not ours.
* **Order and memory**: the client keeps at most ``window`` chunks submitted but not
  yet written (in flight plus the reorder buffer), pulls the next chunk of reads only
  when one is written, and writes chunk k exactly once, after chunks 0..k-1. So the
  output is the concatenation, in input order, of the texts that
  :func:`s2g.gaf.write_gaf` gives for each chunk - what the single-process path
  writes - and the client holds O(window x chunk) reads and text whatever the input
  size. A result that comes back twice (a retried task) has one key and one slot in
  the buffer, so nothing can be written twice, and the run ends only when every
  chunk index up to the last has been written, so nothing can be lost.
* **Errors**: an :class:`~s2g.errors.S2GError` inside a chunk (e.g. a traceback
  window over ``--max-traceback-cells``; its message names the read) is deterministic:
  it is returned as a value, not raised, so it is not retried, and the client stops
  the run with that message. Any other exception is bisected on the worker down to
  one read; if that read fails alone the error is returned naming it, otherwise
  (a transient fault) it is raised and Dask retries the chunk. A chunk that keeps
  killing workers ends as ``KilledWorker``, reported with its read range.
"""
from __future__ import annotations

import hashlib
import io
import os
import sys
import threading
import time
import uuid
from dataclasses import dataclass, replace

from .errors import S2GError

#: default reads per chunk when not given (the CLI passes --batch-size)
CHUNK = 20_000


# --------------------------------------------------------------------------- CLI hook

def add_arguments(group) -> None:
    """Add ``--dask`` and its options to the CLI's "run" argument group."""
    group.add_argument("--dask", metavar="SCHEDULER", default=None,
                       help="run on a Dask cluster: a scheduler address (tcp://host:8786), a "
                            "scheduler JSON file, or 'local' (one worker per GPU; without a "
                            "GPU this process aligns, unless --dask-workers asks for CPU worker "
                            "processes); reads go to workers in chunks of --batch-size")
    group.add_argument("--dask-workers", type=int, default=None, metavar="N",
                       help="with --dask local: number of workers (default: one per GPU; "
                            "without GPUs min(cores, 8) processes)")
    group.add_argument("--dask-window", type=int, default=None, metavar="K",
                       help="chunks submitted but not yet written, at most (bounds client "
                            "memory; default 3 per worker thread)")
    group.add_argument("--dask-retries", type=int, default=2, metavar="R",
                       help="retries of a chunk whose task raised an unexpected error "
                            "(a chunk on a worker that dies is always rerun)")


@dataclass(frozen=True)
class DaskSettings:
    """Where and how a run goes on Dask (``s2g align --dask ...``): ``address``
    (:class:`connect`'s), ``workers`` (``local``: how many), ``window`` (chunks submitted
    but not yet written, at most; None: 3 per worker thread), ``retries`` (of a chunk
    whose task raised), ``chunk_size`` (reads a chunk)."""

    address: str = "local"
    workers: int | None = None
    window: int | None = None
    retries: int = 2
    chunk_size: int = CHUNK


def run_align(plan, settings: DaskSettings, reads, out, quiet=False, progress=None,
              reads2=None) -> int:
    """``s2g align ... --dask X``: the CLI's distributed path; returns the exit code.
    ``plan``: the client's :class:`~s2g.plan.Plan` (its graph: the client's FlatGraph,
    whose file the workers load; seeded: its index file, which they load).
    ``out``: the CLI's output (written in order; committed by the caller)."""
    from .pipeline import progress_bar

    for opt, v in (("dask-workers", settings.workers), ("dask-window", settings.window)):
        if v is not None and v < 1:
            raise S2GError(f"--{opt} must be >= 1")
    if settings.retries < 0:
        raise S2GError("--dask-retries must be >= 0")
    options = plan.worker_options()   # variant 'auto' is decided by each worker (its GPU)
    if plan.seeded is not None and not os.path.exists(options.seeded.index):
        raise S2GError(f"{options.seeded.index}: --dask needs the seed index on disk (the "
                       f"workers load it): run 's2g index {options.graph_path}' where it can "
                       "be written")
    t0 = time.perf_counter()
    with connect(settings.address, n_workers=settings.workers,
                 threads=options.threads) as client:
        options = replace(options, threads=_worker_threads(client, options.threads,
                                                           settings.address == "local"))
        bar = progress_bar(progress)
        try:
            stats = align_file(client, options.graph_path, reads, out, options, settings,
                               client_graph=plan.graph, progress=bar, reads2=reads2)
        finally:
            if bar is not None:
                bar.close()
    out.commit()
    dt = time.perf_counter() - t0
    n, n_hit = stats["reads"], stats["aligned"]
    if n == 0:
        print(f"s2g: warning: {reads} contains no reads; the GAF output is empty", file=sys.stderr)
    elif not quiet:
        print(f"s2g: {n} reads, {n_hit} aligned, {n - n_hit} without alignment; "
              f"{'seeded, ' if plan.seeded is not None else ''}variant "
              f"{','.join(sorted(stats['variants']))}; {stats['workers']} dask worker(s); "
              + (f"fragment length {stats['model'][0]:.0f} +- {stats['model'][1]:.0f} "
                 f"({stats['model'][2]}); " if stats.get("model") else "") +
              f"{dt:.2f} s ({n / dt:,.0f} reads/s)", file=sys.stderr)
    return 0


# --------------------------------------------------------------------------- clusters

def local_in_process(args):
    """``--dask local`` on a host without a GPU and without ``--dask-workers``: align in
    this process instead, and say so. Its CPU worker processes share the host's cores, each
    loading the graph and index, and were slower than one process using them all (2-core
    VM, 2026-11-28: seeded 9,434 against 18,511-20,664 reads/s, full-graph DP 796 against
    1,578-2,056; docs/performance.md#dask); ``--dask-workers N`` keeps them."""
    if getattr(args, "dask", None) != "local" or args.dask_workers is not None or gpu_count():
        return
    args.dask = None
    if not args.quiet:
        print("s2g: --dask local: no GPU here, and CPU worker processes sharing this host's "
              "cores are slower than one process using them all; aligning in this process "
              "(--dask-workers N keeps N workers; --dask ADDRESS uses a cluster)",
              file=sys.stderr)


class connect:
    """Context manager: a :class:`distributed.Client` for ``address``.

    ``address``: ``"local"`` (start a local cluster, closed on exit), a path to a
    scheduler JSON file, or a scheduler address. ``local`` makes one worker per GPU
    (``dask_cuda.LocalCUDACluster`` when importable, otherwise one worker process per
    GPU with its own ``CUDA_VISIBLE_DEVICES``) or, without GPUs, ``n_workers`` CPU
    worker processes with one Dask thread each.
    """

    def __init__(self, address, n_workers=None, threads=None, timeout=60):
        self.address, self.n_workers, self.threads, self.timeout = address, n_workers, threads, timeout
        self.cluster = self.client = None

    def __enter__(self):
        try:
            import distributed
        except ImportError:
            raise S2GError("--dask needs the 'distributed' package: pip install 's2g[dask]'") from None
        import logging
        quiet = dict(silence_logs=logging.ERROR)
        try:
            if self.address == "local":
                self.cluster = local_cluster(self.n_workers, self.threads, **quiet)
                self.client = distributed.Client(self.cluster)
            elif os.path.isfile(self.address):
                self.client = distributed.Client(scheduler_file=self.address, timeout=self.timeout)
            else:
                self.client = distributed.Client(self.address, timeout=self.timeout)
        except (OSError, TimeoutError) as exc:
            self.__exit__(None, None, None)
            raise S2GError(f"--dask {self.address}: cannot connect to the scheduler ({exc})") from None
        try:
            self.client.wait_for_workers(1, timeout=self.timeout)
        except (TimeoutError, OSError):
            self.__exit__(None, None, None)
            raise S2GError(f"--dask {self.address}: no worker joined within {self.timeout} s") from None
        return self.client

    def __exit__(self, *exc):
        import contextlib
        if self.client is not None:
            with contextlib.suppress(Exception):
                self.client.close()
        if self.cluster is not None:
            with contextlib.suppress(Exception):
                self.cluster.close()
        return False


def gpu_count() -> int:
    """GPUs this host would give workers, without creating a CUDA context here."""
    vis = os.environ.get("CUDA_VISIBLE_DEVICES")
    if vis is not None:
        return len([d for d in vis.split(",") if d.strip() and d.strip() != "-1"])
    import glob
    return len([p for p in glob.glob("/dev/nvidia[0-9]*") if p[len("/dev/nvidia"):].isdigit()])


def local_cluster(n_workers=None, threads=None, **kw):
    """A local cluster: one worker per GPU where GPUs exist, CPU worker processes otherwise."""
    import distributed

    n_gpu = gpu_count()
    if n_gpu:
        n = min(n_workers or n_gpu, n_gpu)
        try:
            from dask_cuda import LocalCUDACluster
        except ImportError:
            LocalCUDACluster = None
        if LocalCUDACluster is not None:
            return LocalCUDACluster(n_workers=n, threads_per_worker=1, dashboard_address=None, **kw)
        vis = os.environ.get("CUDA_VISIBLE_DEVICES")
        ids = [d.strip() for d in vis.split(",")] if vis else [str(i) for i in range(n_gpu)]
        workers = {f"gpu-{i}": {"cls": distributed.Nanny,
                                "options": {"nthreads": 1, "env": {"CUDA_VISIBLE_DEVICES": ids[i]}}}
                   for i in range(n)}
        scheduler = {"cls": distributed.Scheduler, "options": {"dashboard_address": None}}
        return distributed.SpecCluster(workers=workers, scheduler=scheduler, **kw)
    cores = _cores()
    n = n_workers or min(cores, 8)
    return distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                    dashboard_address=None, **kw)


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _worker_threads(client, threads, local):
    """Numba threads per worker: --threads; for a local CPU cluster, the cores shared
    by its workers; otherwise None (each worker uses all cores of its host)."""
    if threads is not None or not local:
        return threads
    n = len(client.scheduler_info(n_workers=-1).get("workers", {}))
    return max(1, _cores() // max(1, n))


# --------------------------------------------------------------------------- worker side

@dataclass(frozen=True)
class GraphSpec:
    """How a worker gets the graph: from ``path`` (loaded once per process) or ``data``."""

    path: str | None
    strands: str
    break_cycles: bool
    stamp: tuple            # (size, mtime_ns) of the file the client saw
    fingerprint: str        # of the client's FlatGraph ('' = do not check)


_CACHE: dict = {}          # key -> (graph, fingerprint); a worker-process global
_CACHE_LOCK = threading.Lock()
_RUN_LOCK = threading.Lock()   # one kernel call at a time per process (threaded workers)


def fingerprint(graph) -> str:
    """A digest of everything the GAF depends on: arrays, names, strands."""
    h = hashlib.blake2b(digest_size=16)
    for a in (graph.base, graph.node_start, graph.pred_ptr, graph.pred_idx, graph.node_seg,
              graph.node_rev, graph.seg_len):
        h.update(memoryview(a.astype(a.dtype, copy=False)).cast("B"))
    h.update("\n".join(map(str, graph.seg_names)).encode())
    h.update(graph.strands.encode())
    return h.hexdigest()


def worker_graph(spec: GraphSpec, data=None):
    """The graph for ``spec`` in this process: loaded at most once, then cached."""
    if data is not None:
        return data
    key = (spec.path, spec.stamp, spec.strands, spec.break_cycles)
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
        if hit is None:
            import warnings

            from .graph import load_graph
            if not os.path.exists(spec.path):
                raise S2GError(f"{spec.path}: graph file not found on worker {_worker_name()} "
                               "(workers must see the graph under the same path)")
            st = os.stat(spec.path)
            if (st.st_size, st.st_mtime_ns) != spec.stamp and spec.fingerprint == "":
                raise S2GError(f"{spec.path}: the file on worker {_worker_name()} differs from "
                               "the client's (size or modification time)")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")   # the client already warned
                g = load_graph(spec.path, strands=spec.strands, break_cycles=spec.break_cycles)
            fp = fingerprint(g) if spec.fingerprint else ""
            if fp != spec.fingerprint:
                raise S2GError(f"{spec.path}: the graph worker {_worker_name()} loads differs "
                               "from the client's (a different file under the same path?)")
            _CACHE.clear()        # one graph per worker: a new run's graph replaces the old
            _CACHE[key] = hit = (g, fp)
            _STATS["graph_loads"] += 1
        return hit[0]


_STATS = {"graph_loads": 0, "chunks": 0}


def _worker_name() -> str:
    try:
        from distributed import get_worker
        return get_worker().address
    except Exception:
        return f"pid {os.getpid()}"


def worker_stats() -> dict:
    """Per-process counters (``client.run(worker_stats)``): graph loads, chunks aligned."""
    return dict(_STATS, pid=os.getpid())


def align_chunk(spec: GraphSpec, batch, options, graph_data=None, test=None):
    """Align one chunk on a worker by ``options`` (a :class:`~s2g.plan.RunOptions` whose
    method is decided: :meth:`s2g.plan.Plan.worker_options`); returns ``("ok", text,
    n_reads, n_aligned, variant)`` or ``("error", message)`` for a deterministic failure
    (not retried). ``test``: the test hooks (:func:`_test_hooks`), or None."""
    test = test or {}
    try:
        graph = worker_graph(spec, graph_data)
        out = _align_text(graph, batch, options, test)
        _test_hooks(batch, test)
        return out
    except S2GError as exc:
        return ("error", str(exc))
    except Exception:  # noqa: BLE001 - bisect to the read, or let Dask retry
        culprit = _bisect(graph, batch, options, test) if "graph" in locals() else None
        if culprit is None:
            raise
        name, err = culprit
        return ("error", f"read {name!r} (record {batch.first_index + batch.names.index(name) + 1}): "
                         f"{type(err).__name__}: {err}")


def _align_text(graph, batch, options, test):
    import numpy as np

    from .aligner import Aligner
    from .gaf import write_gaf

    if test.get("_fail_read") in batch.names:
        raise RuntimeError(f"test failure on {test['_fail_read']}")
    with _RUN_LOCK:
        if options.threads:
            import numba
            numba.set_num_threads(min(options.threads, numba.config.NUMBA_NUM_THREADS))
        plan = worker_plan(graph, options)
        al = Aligner.from_plan(plan)
        res = al.align(batch)
    buf = io.StringIO()
    write_gaf(buf, al.graph_for(batch), res)
    _STATS["chunks"] += 1
    variant = plan.variant
    used = str(next(iter(al.ran), variant) if plan.seeded is None else variant)  # auto: by shape
    model = getattr(plan.seeded, "model", None)     # pairs: the fragment model in use
    model = None if model is None else (model.mean, model.sd, model.source)
    return ("ok", buf.getvalue(), batch.n_reads, int(np.count_nonzero(res.aligned())), used,
            model)


_PLANS: dict = {}


def worker_plan(graph, options):
    """This process's :class:`~s2g.plan.Plan` for ``graph`` and ``options``, made once
    (seeded: the index loaded once, from the path the client gave)."""
    import warnings

    from .index import load_index
    from .plan import plan
    key = (id(graph), options)
    with _CACHE_LOCK:
        p = _PLANS.get(key)
        if p is None:
            index = None
            if options.method == "seeded":
                path = options.seeded.index
                if not os.path.exists(path):
                    raise S2GError(f"{path}: index not found on worker {_worker_name()} "
                                   "(workers must see the index under the same path)")
                index = load_index(path, graph)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")   # the client already warned
                p = plan(graph, options, index=index)
            _PLANS.clear()        # one graph per worker, as the graph cache
            _PLANS[key] = p
    return p


def _bisect(graph, batch, options, test):
    """(name, exception) of a read that fails alone, or None (the failure is transient)."""
    step = 2 if options.pairs is not None else 1     # pairs: whole pairs (mates together)
    lo, hi = 0, batch.n_reads // step
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            _align_text(graph, batch.subset(range(step * lo, step * mid)), options, test)
        except Exception:  # noqa: BLE001 - the first failing read is in [lo, mid)
            hi = mid
            continue
        lo = mid
    try:
        _align_text(graph, batch.subset(range(step * lo, step * lo + step)), options, test)
    except Exception as exc:  # noqa: BLE001
        return batch.names[step * lo], exc
    return None


def _test_hooks(batch, test):
    """Test-only: ``test['_kill_once'] = (marker_path, first_index)`` SIGKILLs this
    worker process the first time the chunk starting at ``first_index`` has been
    aligned (its text computed, not yet returned).
    (``test['_fail_read'] = name``, checked in :func:`_align_text`, makes every
    alignment that includes that read raise.)"""
    hook = test.get("_kill_once")
    if hook and batch.first_index == hook[1]:
        try:
            fd = os.open(hook[0], os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return
        os.close(fd)
        import signal
        os.kill(os.getpid(), signal.SIGKILL)


# --------------------------------------------------------------------------- client side

def align_file(client, graph, reads, output, options=None, settings=None, client_graph=None,
               progress=None, _test=None, reads2=None) -> dict:
    """Align the FASTA/FASTQ file ``reads`` to ``graph`` on the cluster of ``client``
    and write GAF to ``output`` (a path or a text file object), in input order.

    ``graph``: a GFA path (every worker loads it once; they must see the same path)
    or a :class:`~s2g.graph.FlatGraph` (broadcast to the workers once). ``options``: a
    :class:`~s2g.plan.RunOptions` (default: its defaults, full-graph DP) whose method is
    ``exact`` or ``seeded`` (then ``options.seeded.index``: an index file the workers see
    under the same path; :meth:`s2g.plan.Plan.worker_options` makes such a record);
    ``strands`` and ``break_cycles`` are the graph's. ``settings``: a
    :class:`DaskSettings` (``chunk_size``, ``window``, ``retries``). ``client_graph``:
    the client's FlatGraph of the path (the workers check theirs against it). Returns
    ``{"reads", "aligned", "chunks", "workers", "variants", "model"}``. ``progress``: an
    object with ``update(n)`` (a tqdm bar) or None. Paired-end reads (``options.pairs``):
    ``reads`` and ``reads2`` (or ``reads`` interleaved), chunks of whole pairs; without a
    given fragment model, the first chunk is aligned alone and the model its worker learns
    from it is given to every later chunk, so the output is the single-process run's.
    """
    from .reads import iter_pair_batches, iter_read_batches

    settings = settings or DaskSettings()
    if isinstance(output, (str, os.PathLike)):
        with open(output, "w") as fh:
            return align_file(client, graph, reads, fh, options, settings, client_graph,
                              progress, _test, reads2)
    for path in (reads, reads2):
        if path is not None and not os.path.exists(path):
            raise S2GError(f"{path}: no such file")
    pairs = options.pairs if options is not None else None
    if pairs is not None:
        batches = iter_pair_batches(reads, reads2, pairs.interleaved,
                                    max(2, settings.chunk_size))
    else:
        from .config import settings as knobs
        batches = iter_read_batches(reads, settings.chunk_size,
                                    max_bases=knobs().batch_bases)
    stats = {"reads": 0, "aligned": 0, "chunks": 0, "variants": set(), "model": None}
    for text, n, n_hit, used, model in align_batches(
            client, graph, batches, options, settings, client_graph, _test):
        stats["model"] = stats["model"] or model       # the first: how it was learned
        output.write(text)
        stats["reads"] += n
        stats["aligned"] += n_hit
        stats["chunks"] += 1
        stats["variants"].add(used)
        if progress is not None:
            progress.update(n)
    stats["workers"] = len(client.scheduler_info(n_workers=-1).get("workers", {}))
    return stats


def align_batches(client, graph, batches, options=None, settings=None, client_graph=None,
                  _test=None):
    """Yield ``(gaf_text, n_reads, n_aligned, variant)`` per batch of ``batches`` (an
    iterable of :class:`~s2g.reads.ReadBatch`), in input order, computed on the
    cluster with at most ``settings.window`` batches pulled but not yet yielded
    (``options``, ``settings``: as :func:`align_file`'s)."""
    from distributed import as_completed

    from .graph import FlatGraph
    from .plan import RunOptions

    options = options or RunOptions()
    settings = settings or DaskSettings()
    if options.method == "auto":
        raise S2GError("method 'auto' is decided on the client (s2g.plan.plan(...)"
                       ".worker_options()); give 'exact' or 'seeded'")
    if isinstance(graph, FlatGraph):
        spec = GraphSpec(None, graph.strands, False, (), "")
        graph_data = client.scatter(graph, broadcast=True, hash=False)
    else:
        path = os.path.abspath(os.fspath(graph))
        if not os.path.exists(path):
            raise S2GError(f"{graph}: no such file")
        st = os.stat(path)
        fp = fingerprint(client_graph) if client_graph is not None else ""
        spec = GraphSpec(path, options.strands, options.break_cycles,
                         (st.st_size, st.st_mtime_ns), fp)
        graph_data = None
    window, retries = settings.window, settings.retries
    if window is None:
        window = max(2, 3 * sum(client.nthreads().values()))
    run = uuid.uuid4().hex[:8]
    it = iter(batches)
    if options.pairs is not None and options.pairs.model() is None:
        # the fragment model: learned from the first chunk(s), one at a time, as a single
        # process learns it; then given to every later chunk (a worker's own first chunk
        # would otherwise decide its model)
        while True:
            batch = next(it, None)
            if batch is None:
                return
            if batch.n_reads == 0:
                continue
            fut = client.submit(align_chunk, spec, batch, options, graph_data, _test,
                                key=f"s2g-align-{run}-model-{batch.first_index}", pure=False,
                                retries=retries)
            try:
                res = fut.result()
            except Exception as exc:  # noqa: BLE001 - after Dask's retries
                raise _chunk_failed(batch.first_index, batch.n_reads, batch.names[0],
                                    exc) from None
            if res[0] == "error":
                raise S2GError(res[1])
            yield res[1:]
            model = res[-1]
            if model is not None:
                options = replace(options, pairs=replace(options.pairs, fragment_mean=model[0],
                                                         fragment_sd=model[1]))
                break
    ranges: dict = {}       # key -> (index, first read name, first_index, n_reads, future)
    done: dict = {}         # index -> result (the reorder buffer)
    ac = as_completed()
    submitted = next_out = 0
    exhausted = False

    def submit_more():
        nonlocal submitted, exhausted
        while not exhausted and submitted - next_out < window:
            batch = next(it, None)
            if batch is None:
                exhausted = True
                return
            if batch.n_reads == 0:
                continue
            key = f"s2g-align-{run}-{submitted}"
            fut = client.submit(align_chunk, spec, batch, options, graph_data, _test, key=key,
                                pure=False, retries=retries)
            ranges[fut.key] = (submitted, batch.names[0], batch.first_index, batch.n_reads, fut)
            ac.add(fut)
            submitted += 1

    try:
        submit_more()
        for fut in ac:
            idx, first_name, first_index, n, _ = ranges.pop(fut.key)
            try:
                res = fut.result()
            except Exception as exc:  # noqa: BLE001 - after Dask's retries / worker losses
                raise _chunk_failed(first_index, n, first_name, exc) from None
            fut.release()
            if res[0] == "error":
                raise S2GError(res[1])
            done[idx] = res[1:]
            while next_out in done:
                yield done.pop(next_out)
                next_out += 1
            submit_more()
        if not exhausted or done or next_out != submitted:  # cannot happen: say so, never lose reads
            raise S2GError(f"internal error: {submitted} chunks submitted, {next_out} written")
    finally:
        # stop the rest of the run (an error, or the consumer stopped early)
        ac.clear()
        for *_, f in ranges.values():
            f.cancel()


def _chunk_failed(first_index, n, first_name, exc) -> S2GError:
    """The error of a chunk the cluster could not align (after Dask's retries)."""
    return S2GError(f"reads {first_index + 1}..{first_index + n} (first {first_name!r}) "
                    f"failed on the cluster: {type(exc).__name__}: {_one_line(exc)}")


def _one_line(exc) -> str:
    s = str(exc).strip().splitlines()
    return s[0] if s else type(exc).__name__
