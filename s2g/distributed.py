"""Run ``s2g align`` on a Dask cluster: same GAF, byte for byte, as one process.

The client (this module) plans and writes; the workers (:mod:`s2g.distributed_worker`)
align. Two ways, chosen per input:

* **Parts** (issue 44; a plain or BGZF FASTA/FASTQ file, single-end): the file is cut into
  byte ranges of whole records (:mod:`s2g.read_ranges`; the client reads a few kilobytes
  per cut), and each worker reads its own range and runs the single-process pipeline over
  it (reading, seeding, kernels, traceback and GAF text overlapped), returning GAF bytes.
  Workers must see the reads file under the same path, as they see the graph and index.
* **Chunks** (anything else: gzip that is not BGZF, standard input, pairs): the client
  reads the reads and sends chunks of ``--batch-size`` inside their tasks; each comes back
  as GAF text.

    client                                                workers (one per GPU, or CPU processes)
    part k = byte range, or chunk k = reads ──submit──▶   graph, index, plan: loaded once per
         ▲   at most `window` not yet written                process and kept (kernels warm)
         └── reorder buffer ◀── (k, GAF text) ◀────────── align part / chunk k
    write item k only after items 0..k-1, in input order; tqdm counts written reads

* **Order and memory** (:func:`in_order`): the client keeps at most ``window`` items
  submitted but not yet written, pulls the next only when one is written, and writes item
  k exactly once, after items 0..k-1. So the output is the concatenation, in input order,
  of what one process writes for each item - what the single-process path writes - and
  the client holds O(window x item) reads and text whatever the input size (parts: at most
  1 GiB of the file each, knob ``dask_part_bytes``, and one more than the workers' threads
  in flight). A result that comes back twice (a retried task) has one key and one slot in
  the buffer, so nothing can be written twice, and the run ends only when every item up
  to the last has been written, so nothing can be lost.
* **Lost workers**: tasks travel with their whole spec (a chunk's reads, a part's range),
  so the scheduler runs them again elsewhere when a worker dies (Dask's
  ``distributed.scheduler.allowed-failures``); ``retries`` covers exceptions that are not
  ours. A task that keeps killing workers ends as ``KilledWorker``, reported with its reads.
* **Errors**: an :class:`~s2g.errors.S2GError` on a worker (e.g. a traceback window over
  ``--max-traceback-cells``; its message names the read) is deterministic: returned as a
  value, not retried, and the client stops the run with that message. Any other exception
  is bisected on the worker down to one read (:mod:`s2g.distributed_worker`).
* **Graph**: workers load the GFA themselves, once per process, and compare a fingerprint
  of its arrays with the client's (a different file under the same path stops the run);
  :func:`align_file` also takes an in-memory FlatGraph, broadcast to every worker once.
"""
from __future__ import annotations

import os
import sys
import time
import uuid
import warnings
from dataclasses import dataclass, replace

from .distributed_worker import (  # noqa: F401 - the worker side, re-exported
    GraphSpec, align_chunk, align_part, fingerprint, worker_graph, worker_plan, worker_stats)
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
    #: bytes of the reads file a worker's part holds (None: knob ``dask_part_bytes``; parts
    #: only where the file can be cut, :mod:`s2g.read_ranges`)
    part_bytes: int | None = None


def run_align(plan, settings: DaskSettings, reads, out, quiet=False, progress=None,
              reads2=None, timings=False, t0=None, writer=None) -> int:
    """``s2g align ... --dask X``: the CLI's distributed path; returns the exit code.
    ``plan``: the client's :class:`~s2g.plan.Plan` (its graph: the client's FlatGraph,
    whose file the workers load; seeded: its index file, which they load).
    ``out``: the CLI's output (written in order; committed by the caller). ``t0``: the
    ``time.perf_counter()`` the run's seconds count from (the CLI's start, as one process
    counts them, graph load included; default: now). ``writer``: SAM/BAM output's
    :class:`~s2g.sam.SamWriter` (the workers format the records; closed here before the
    commit), or None: GAF."""
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
    if not quiet and options.pairs is None:
        from .read_ranges import file_kind
        if reads != "-" and os.path.isfile(reads) and os.path.getsize(reads) >= MIN_PART \
                and file_kind(reads) is None:
            print(f"s2g: note: {reads} cannot be cut into parts for the workers (only "
                  "plain or BGZF FASTA/FASTQ starting with a record can; gzip that is not "
                  "BGZF cannot): this process reads it and sends the reads in chunks, which "
                  "is slower; 'bgzip' it or give it plain", file=sys.stderr)
    t0 = time.perf_counter() if t0 is None else t0
    clock = {"planned": time.perf_counter() - t0}
    with connect(settings.address, n_workers=settings.workers,
                 threads=options.threads) as client:
        clock["connected"] = time.perf_counter() - t0
        options = replace(options, threads=_worker_threads(client, options.threads,
                                                           settings.address == "local"))
        bar = progress_bar(progress)
        try:
            stats = align_file(client, options.graph_path, reads,
                               out if writer is None else _Records(writer), options, settings,
                               client_graph=plan.graph, progress=bar, reads2=reads2)
            if writer is not None:
                writer.close()
        except BaseException:
            if writer is not None:
                writer.abort()
            raise
        finally:
            if bar is not None:
                bar.close()
        clock["aligned"] = time.perf_counter() - t0
    clock["closed"] = time.perf_counter() - t0
    out.commit()
    dt = time.perf_counter() - t0
    clock["committed"] = dt
    n, n_hit = stats["reads"], stats["aligned"]
    if n == 0:
        print(f"s2g: warning: {reads} contains no reads; the output holds no records",
              file=sys.stderr)
    elif not quiet:
        print(f"s2g: {n} reads, {n_hit} aligned, {n - n_hit} without alignment; "
              f"{'seeded, ' if plan.seeded is not None else ''}variant "
              f"{','.join(sorted(stats['variants']))}; {stats['workers']} dask worker(s); "
              + (f"fragment length {stats['model'][0]:.0f} +- {stats['model'][1]:.0f} "
                 f"({stats['model'][2]}); " if stats.get("model") else "") +
              f"{dt:.2f} s ({n / dt:,.0f} reads/s)", file=sys.stderr)
    if timings:
        print("s2g: dask client, seconds from the start: " + ", ".join(
            f"{k} {v:.2f}" for k, v in clock.items()), file=sys.stderr)
        print_parts(stats.get("parts") or [], t0)
    return 0


class _Records:
    """The output :func:`align_file` writes the workers' SAM records to: a SamWriter (SAM
    text, or BAM through pysam)."""

    mode = "wb"

    def __init__(self, writer):
        self.writer = writer

    def write(self, data):
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogateescape")
        self.writer.write_records(data, 0)


def print_parts(infos, t0):
    """``--timings`` of a run over parts: each part's seconds on its worker (waiting for the
    worker, setting up, the pipeline's stages, GPU busy) and when the client wrote it
    (seconds from ``t0``, a ``time.perf_counter()``)."""
    for k, p in enumerate(infos):
        st = ", ".join(f"{name} {v:.2f}" for name, v in p["stages"].items())
        busy = "" if p["gpu_busy"] is None else f"; GPU busy {p['gpu_busy']:.2f}"
        print(f"s2g: part {k + 1}/{len(infos)} on {p['worker']}: waited {p['lock']:.2f}, set up "
              f"{p['setup']:.2f}, run {p['run']:.2f} s (first batch {p['first_batch'] or 0:.2f};"
              f" {st}{busy}), {p['bytes'] / 2**20:,.0f} MB of GAF, written at "
              f"{p['written_at'] - t0:.2f} s", file=sys.stderr)


# --------------------------------------------------------------------------- clusters

def prepare(args):
    """``s2g align --dask ...`` before the graph loads: ``distributed`` loading in a thread
    meanwhile (~1 s on the GPU machine's vCPUs), and :func:`local_in_process`."""
    if not _IMPORTING:
        import threading
        _IMPORTING.append(threading.Thread(target=_import_distributed, daemon=True))
        _IMPORTING[0].start()
    local_in_process(args)


def local_in_process(args):
    """``--dask local`` on a host with at most one GPU and without ``--dask-workers``:
    align in this process instead, and say so; a local cluster cannot beat it there.
    Without a GPU its CPU worker processes share the host's cores, each loading the graph
    and index, and were slower than one process using them all (2-core VM, 2026-11-28:
    seeded 9,434 against 18,511-20,664 reads/s, full-graph DP 796 against 1,578-2,056);
    with one GPU, its one worker is the one process plus Dask (H200, 2026-12-04: 0.85x;
    docs/performance.md#dask). ``--dask-workers N`` keeps the workers."""
    if getattr(args, "dask", None) != "local" or args.dask_workers is not None:
        return
    n_gpu = gpu_count()
    if n_gpu > 1:
        return
    args.dask = None
    if not args.quiet:
        why = ("one GPU here: a local cluster would be its one worker, this process plus Dask"
               if n_gpu else "no GPU here, and CPU worker processes sharing this host's "
               "cores are slower than one process using them all")
        print(f"s2g: --dask local: {why}; aligning in this process (--dask-workers N keeps "
              "N workers; --dask ADDRESS uses a cluster)", file=sys.stderr)


_IMPORTING: list = []


def _import_distributed():
    try:
        import distributed  # noqa: F401
    except ImportError:         # connect() says what to install
        pass


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
        if path is not None and path != "-" and not os.path.exists(path):
            raise S2GError(f"{path}: no such file")   # ("-": standard input, in chunks)
    from .config import settings as knobs

    pairs = options.pairs if options is not None else None
    sam = options is not None and options.sam is not None     # (SAM's QUAL: the qualities)
    stats = {"reads": 0, "aligned": 0, "chunks": 0, "variants": set(), "model": None}
    parts = None
    if pairs is None and knobs().dask_parts:
        parts = plan_parts(client, reads, settings)
    if parts is not None:           # workers read their own parts of the file
        options = _decided(options)
        spec, graph_data = graph_spec(client, graph, options, client_graph)
        write_parts(client, spec, graph_data, parts, options, settings, output, stats,
                    progress, _test)
        stats["workers"] = len(client.scheduler_info(n_workers=-1).get("workers", {}))
        return stats
    if pairs is not None:
        batches = iter_pair_batches(reads, reads2, pairs.interleaved,
                                    max(2, settings.chunk_size), qualities=sam)
    else:
        batches = iter_read_batches(reads, settings.chunk_size, qualities=sam,
                                    max_bases=knobs().batch_bases)
    for text, n, n_hit, used, model in align_batches(
            client, graph, batches, options, settings, client_graph, _test):
        stats["model"] = stats["model"] or model       # the first: how it was learned
        _written(output, text, n, n_hit, used, stats, progress)
    stats["workers"] = len(client.scheduler_info(n_workers=-1).get("workers", {}))
    return stats


def _written(output, text, n, n_hit, used, stats, progress):
    """Write a chunk's or part's text and count it."""
    output.write(text)
    stats["reads"] += n
    stats["aligned"] += n_hit
    stats["chunks"] += 1
    stats["variants"].add(used)
    if progress is not None:
        progress.update(n)


def align_batches(client, graph, batches, options=None, settings=None, client_graph=None,
                  _test=None):
    """Yield ``(gaf_text, n_reads, n_aligned, variant)`` per batch of ``batches`` (an
    iterable of :class:`~s2g.reads.ReadBatch`), in input order, computed on the
    cluster with at most ``settings.window`` batches pulled but not yet yielded
    (``options``, ``settings``: as :func:`align_file`'s)."""
    options = _decided(options)
    settings = settings or DaskSettings()
    spec, graph_data = graph_spec(client, graph, options, client_graph)
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

    def submit(batch, key):
        return client.submit(align_chunk, spec, batch, options, graph_data, _test, key=key,
                             pure=False, retries=retries)

    def failed(batch, exc):
        return _chunk_failed(batch.first_index, batch.n_reads, batch.names[0], exc)

    yield from in_order(client, (b for b in it if b.n_reads), submit, failed, window,
                        f"s2g-align-{run}")


def _decided(options):
    """``options`` (None: the defaults), refused while its method is still ``auto``."""
    from .plan import RunOptions

    options = options or RunOptions()
    if options.method == "auto":
        raise S2GError("method 'auto' is decided on the client (s2g.plan.plan(...)"
                       ".worker_options()); give 'exact' or 'seeded'")
    return options


def graph_spec(client, graph, options, client_graph=None):
    """(:class:`GraphSpec`, scattered graph or None) of ``graph``: a GFA path the workers
    load (checked against ``client_graph``'s fingerprint where given) or a FlatGraph
    broadcast to them."""
    from .graph import FlatGraph

    if isinstance(graph, FlatGraph):
        spec = GraphSpec(None, graph.strands, False, (), "")
        return spec, client.scatter(graph, broadcast=True, hash=False)
    path = os.path.abspath(os.fspath(graph))
    if not os.path.exists(path):
        raise S2GError(f"{graph}: no such file")
    st = os.stat(path)
    fp = fingerprint(client_graph) if client_graph is not None else ""
    return GraphSpec(path, options.strands, options.break_cycles,
                     (st.st_size, st.st_mtime_ns), fp, options.sam is not None), None


def in_order(client, items, submit, failed, window, prefix):
    """Results of ``submit(item, key)`` (a future) for each of ``items``, yielded in the
    items' order with at most ``window`` items submitted but not yet yielded (the reorder
    buffer bounds the client's memory); a result ``("error", message)`` stops the run with
    that message, an exception after Dask's retries with ``failed(item, exc)`` (an
    S2GError). Every item's result is yielded exactly once, or the run stops. Where items
    fail, the run stops at the first failing item in input order, as one process would,
    after yielding every item before it (whichever failed first on the cluster)."""
    from distributed import as_completed

    it = iter(items)
    ranges: dict = {}       # key -> (index, item, future)
    done: dict = {}         # index -> result (the reorder buffer)
    ac = as_completed()
    submitted = next_out = 0
    exhausted = False
    error = None            # (index, S2GError) of the first failing item in input order

    def submit_more():
        nonlocal submitted, exhausted
        while error is None and not exhausted and submitted - next_out < window:
            item = next(it, None)
            if item is None:
                exhausted = True
                return
            fut = submit(item, f"{prefix}-{submitted}")
            ranges[fut.key] = (submitted, item, fut)
            ac.add(fut)
            submitted += 1

    try:
        submit_more()
        for fut in ac:
            idx, item, _ = ranges.pop(fut.key)
            if error is not None and idx > error[0]:
                continue                # after the failing item: not needed
            try:
                res = fut.result()
            except Exception as exc:  # noqa: BLE001 - after Dask's retries / worker losses
                res = ("error", failed(item, exc))
            fut.release()
            if res[0] == "error":
                exc = res[1] if isinstance(res[1], S2GError) else S2GError(res[1])
                if error is None or idx < error[0]:
                    error = (idx, exc)      # (later items: cancelled when the run stops)
            else:
                done[idx] = res[1:]
            while next_out in done:
                yield done.pop(next_out)
                next_out += 1
            if error is not None and next_out == error[0]:
                raise error[1] from None
            submit_more()
        if error is not None:
            raise error[1] from None
        if not exhausted or done or next_out != submitted:  # cannot happen: say so, never lose reads
            raise S2GError(f"internal error: {submitted} chunks submitted, {next_out} written")
    finally:
        # stop the rest of the run (an error, or the consumer stopped early)
        ac.clear()
        for *_, f in ranges.values():
            f.cancel()


# --------------------------------------------------------------------------- parts

#: a part's size bounds (bytes of the reads file as stored) when not set
MIN_PART, MAX_PART = 16 << 20, 1 << 30


def plan_parts(client, reads, settings):
    """The :class:`~s2g.read_ranges.InputRange` parts of ``reads`` for the workers of
    ``client``, or None where the file cannot be cut, or is one small part (under 16 MiB:
    chunks spread it over the workers). ``settings.part_bytes`` (None: knob
    ``dask_part_bytes``; 0 there: the file over the workers' threads, between 16 MiB and
    1 GiB). One part a worker where that fits: each part is one pipeline, which fills and
    drains (1,000,000 MHC reads on an H200 in one process: 3.6-4.0 s whole, 4.4-5.5 s in
    two parts, ``python -m bench.part_probe``)."""
    from .config import settings as knobs
    from .read_ranges import file_kind, split_input

    if file_kind(reads) is None:
        return None
    size = os.path.getsize(reads)
    part = settings.part_bytes
    if part is None:
        part = knobs().dask_part_bytes
        if part <= 0:
            threads = max(1, sum(client.nthreads().values()))
            part = min(MAX_PART, max(MIN_PART, -(-size // threads)))
    parts = split_input(reads, -(-size // max(1, part)), min_bytes=1)
    return parts if parts and (len(parts) > 1 or size >= MIN_PART) else None


def align_parts(client, spec, graph_data, parts, options, batch_size, window, retries,
                _test=None):
    """Yield ``(gaf_bytes, n_reads, n_aligned, variant, n_unnamed, info)`` per part, in
    input order (``spec``, ``graph_data``: :func:`graph_spec`'s)."""
    def submit(part, key):
        return client.submit(align_part, spec, part, options, batch_size, graph_data, _test,
                             key=key, pure=False, retries=retries)

    def failed(part, exc):
        return S2GError(f"the reads of {part.label()} failed on the cluster: "
                        f"{type(exc).__name__}: {_one_line(exc)}")

    yield from in_order(client, parts, submit, failed, window,
                        f"s2g-part-{uuid.uuid4().hex[:8]}")


def write_parts(client, spec, graph_data, parts, options, settings, output, stats,
                progress=None, _test=None):
    """Align ``parts`` on the cluster and write their GAF to ``output`` in order, counting
    into ``stats`` (:func:`s2g.distributed.align_file`'s)."""
    window = settings.window or sum(client.nthreads().values()) + 1   # parts are large
    unnamed = 0
    binary = "b" in getattr(output, "mode", "") or not hasattr(output, "encoding")
    stats["parts"] = infos = []
    for text, n, n_hit, used, n_unnamed, info in align_parts(
            client, spec, graph_data, parts, options, settings.chunk_size, window,
            settings.retries, _test):
        info["written_at"] = time.perf_counter()
        infos.append(info)
        if n_unnamed:
            from .reads import name_unnamed
            text = name_unnamed(text, stats["reads"], parts[0].token)
            unnamed += n_unnamed
        _written(output, text if binary else text.decode("utf-8", "surrogateescape"), n,
                 n_hit, used, stats, progress)
    if unnamed:
        warnings.warn(f"{parts[0].path}: {unnamed} read(s) without a name, written as "
                      "read<record number>", stacklevel=2)


def _chunk_failed(first_index, n, first_name, exc) -> S2GError:
    """The error of a chunk the cluster could not align (after Dask's retries)."""
    return S2GError(f"reads {first_index + 1}..{first_index + n} (first {first_name!r}) "
                    f"failed on the cluster: {type(exc).__name__}: {_one_line(exc)}")


def _one_line(exc) -> str:
    s = str(exc).strip().splitlines()
    return s[0] if s else type(exc).__name__
