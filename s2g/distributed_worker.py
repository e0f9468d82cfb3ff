"""The worker side of ``s2g align --dask`` (:mod:`s2g.distributed` is the client's): the
tasks a worker runs, and what it keeps from one task to the next.

* :func:`align_chunk`: a chunk of reads the client sent, aligned as one batch.
* :func:`align_part`: a part of the reads file (:mod:`s2g.read_ranges`) read here and run
  through the single-process pipeline (:meth:`s2g.aligner.Aligner.run`: reading, seeding,
  kernels, traceback and GAF text overlapped), returned as GAF bytes.

Both return ``("ok", ...)`` or ``("error", message)`` for a deterministic failure (an
:class:`~s2g.errors.S2GError`, not retried); any other exception is bisected down to the
read that fails alone, or raised so that Dask retries the task. The graph and the plan
(seeded: the index) are loaded once per worker process and kept (:func:`worker_graph`,
:func:`worker_plan`), so the kernels stay warm from task to task.
"""
from __future__ import annotations

import hashlib
import io
import os
import threading
import time
from dataclasses import dataclass

from .errors import S2GError

@dataclass(frozen=True)
class GraphSpec:
    """How a worker gets the graph: from ``path`` (loaded once per process) or ``data``."""

    path: str | None
    strands: str
    break_cycles: bool
    stamp: tuple            # (size, mtime_ns) of the file the client saw
    fingerprint: str        # of the client's FlatGraph ('' = do not check)
    keep_paths: bool = False    # SAM/BAM output: the reference path's


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
    key = (spec.path, spec.stamp, spec.strands, spec.break_cycles, spec.keep_paths)
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
                g = load_graph(spec.path, strands=spec.strands, break_cycles=spec.break_cycles,
                               keep_paths=spec.keep_paths)
            fp = fingerprint(g) if spec.fingerprint else ""
            if fp != spec.fingerprint:
                raise S2GError(f"{spec.path}: the graph worker {_worker_name()} loads differs "
                               "from the client's (a different file under the same path?)")
            _CACHE.clear()        # one graph per worker: a new run's graph replaces the old
            _CACHE[key] = hit = (g, fp)
            _STATS["graph_loads"] += 1
        return hit[0]


_STATS = {"graph_loads": 0, "chunks": 0, "parts": 0}


def _worker_name() -> str:
    try:
        from distributed import get_worker
        return get_worker().address
    except Exception:
        return f"pid {os.getpid()}"


def worker_stats() -> dict:
    """Per-process counters (``client.run(worker_stats)``): graph loads, chunks and parts
    aligned."""
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


def _aligner(graph, options):
    """(plan, a fresh Aligner of it) on this thread's Numba threads (under _RUN_LOCK)."""
    from .aligner import Aligner

    if options.threads:
        import numba
        numba.set_num_threads(min(options.threads, numba.config.NUMBA_NUM_THREADS))
    plan = worker_plan(graph, options)
    return plan, Aligner.from_plan(plan)


def _used(plan, al) -> str:
    """The variant that ran (auto on full-graph DP: picked by each batch's shape)."""
    return str(next(iter(al.ran), plan.variant) if plan.seeded is None else plan.variant)


def _align_text(graph, batch, options, test):
    import numpy as np

    from .gaf import write_gaf

    if test.get("_fail_read") in batch.names:
        raise RuntimeError(f"test failure on {test['_fail_read']}")
    with _RUN_LOCK:
        plan, al = _aligner(graph, options)
        res = al.align(batch)
    if options.sam is not None:
        text = _records_text(plan, options)(batch, res)
    else:
        buf = io.StringIO()
        write_gaf(buf, al.graph_for(batch), res)
        text = buf.getvalue()
    _STATS["chunks"] += 1
    used = _used(plan, al)
    model = getattr(plan.seeded, "model", None)     # pairs: the fragment model in use
    model = None if model is None else (model.mean, model.sd, model.source)
    return ("ok", text, batch.n_reads, int(np.count_nonzero(res.aligned())), used, model)


_PLANS: dict = {}
_SAMS: dict = {}


def _records_text(plan, options):
    """SAM/BAM output: this process's SAM record formatter for ``plan``'s graph (seeded:
    the one it aligns to, a cyclic graph's unrolled DAG), made once."""
    from .sam.writer import records_text
    graph = plan.seeded.graph if plan.seeded is not None else plan.graph
    key = (id(graph), options.sam, options.scoring)
    with _CACHE_LOCK:
        f = _SAMS.get(key)
        if f is None:
            _SAMS.clear()
            _SAMS[key] = f = records_text(graph, options.sam, options.scoring)
    return f


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
    _kill_once(test.get("_kill_once"), batch.first_index)


def _kill_once(hook, at):
    """SIGKILL this process if ``hook`` = (marker_path, value) names ``at`` and its marker
    file does not exist yet (made here: once per test)."""
    if not hook or hook[1] != at:
        return
    try:
        fd = os.open(hook[0], os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return
    os.close(fd)
    import signal
    os.kill(os.getpid(), signal.SIGKILL)


_MALLOC = []


def malloc_as_usual():
    """Undo, once per worker process, what Dask's nanny does to glibc's malloc (knob
    ``dask_malloc``). The nanny starts workers with ``MALLOC_TRIM_THRESHOLD_=65536``
    (``distributed.nanny.pre-spawn-environ``), so that freed memory goes back to the
    system; but setting it turns off glibc's dynamic mmap threshold, and every buffer over
    128 KiB is then mapped and unmapped afresh, its pages faulted in each time: the
    pipeline's per-batch arrays. Here the two thresholds are set where the dynamic rule
    takes them (``M_MMAP_THRESHOLD`` 32 MiB, ``M_TRIM_THRESHOLD`` twice that)."""
    from .config import settings as knobs

    if _MALLOC or not knobs().dask_malloc or "MALLOC_TRIM_THRESHOLD_" not in os.environ:
        return
    _MALLOC.append(True)
    import ctypes
    import ctypes.util
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallopt(-3, 32 << 20)          # M_MMAP_THRESHOLD
        libc.mallopt(-1, 64 << 20)          # M_TRIM_THRESHOLD
    except (OSError, AttributeError):       # not glibc: nothing to undo
        pass


def align_part(spec, part, options, batch_size, graph_data=None, test=None):
    """Align the records of ``part`` on a worker (:func:`align_parts`' task); returns
    ``("ok", gaf_bytes, n_reads, n_aligned, variant, n_unnamed, info)`` (``info``: where
    the task's seconds went, for ``--timings``) or ``("error", message)`` for a
    deterministic failure (not retried)."""
    from .read_ranges import check

    test = test or {}
    malloc_as_usual()
    try:
        check(part, f"on worker {_worker_name()}")
        graph = worker_graph(spec, graph_data)
        out = _part_text(graph, part, options, batch_size, test)
        _kill_hook(part, test)
        return out
    except S2GError as exc:
        return ("error", _unmarked(str(exc), part))
    except Exception:  # noqa: BLE001 - bisect to the read, or let Dask retry
        if "graph" not in locals():
            raise
        culprit = _culprit(graph, part, options, batch_size, test)
        if culprit is None:
            raise
        name, k, err = culprit
        return ("error", _unmarked(f"read {name!r} (record {k} of {part.label()}): "
                                   f"{type(err).__name__}: {err}", part))


def _unmarked(message: str, part) -> str:
    """``message`` with the stand-in names of unnamed reads said in words (as they are, or
    as ``repr`` writes them)."""
    from .reads import unnamed_marks
    return unnamed_marks(part.token).sub(
        lambda m: f"<unnamed, record {m.group(1)} of this part>", message)


def _culprit(graph, part, options, batch_size, test):
    """(name, record number in the part, exception) of a read of ``part`` that fails alone,
    or None (the failure is transient): the part's batches aligned one by one, the first
    that fails bisected (never the whole part as one batch)."""
    from .config import settings as knobs
    from .reads import iter_read_batches

    for b in iter_read_batches(part.path, batch_size, max_bases=knobs().batch_bases,
                               qualities=options.sam is not None, part=part):
        try:
            _align_text(graph, b, options, test)
        except Exception:  # noqa: BLE001 - this batch: bisect it
            hit = _bisect(graph, b, options, test)
            if hit is None:
                return None
            return hit[0], b.first_index + b.names.index(hit[0]) + 1, hit[1]
    return None


def _part_text(graph, part, options, batch_size, test):
    from .aligner import gpu_profiles
    from .config import settings as knobs
    from .summary import gpu_busy
    from .reads import iter_read_batches

    out, counts = [], [0, 0, 0]             # reads, aligned, unnamed
    fail = test.get("_fail_read")

    def batches():
        for b in iter_read_batches(part.path, batch_size, max_bases=knobs().batch_bases,
                                   qualities=options.sam is not None, part=part):
            if fail is not None and fail in b.names:
                raise RuntimeError(f"test failure on {test['_fail_read']}")
            counts[2] += b.unnamed
            yield b

    def write(item):
        n, n_hit, data = item
        out.append(data)
        counts[0] += n
        counts[1] += n_hit

    t0 = time.perf_counter()
    with _RUN_LOCK:
        t_lock = time.perf_counter() - t0
        plan, al = _aligner(graph, options)
        before = gpu_profiles()         # the kernels' counters run on from part to part
        t_run = time.perf_counter()
        al.run(batches(), write, t_run,
               None if options.sam is None else _records_text(plan, options))
        t_end = time.perf_counter()
    _STATS["parts"] += 1
    text = b"".join(out)
    st = al.stats()
    busy = gpu_busy({k: {"kernel": v.get("kernel", 0.0) - before.get(k, {}).get("kernel", 0.0)}
                     for k, v in st.profiles.items()}, st.span)
    info = {"worker": _worker_name(), "lock": t_lock, "setup": t_run - t0 - t_lock,
            "run": t_end - t_run, "stages": st.seconds, "first_batch": st.first_batch_s,
            "gpu_busy": busy[0] if busy else None, "bytes": len(text)}
    return ("ok", text, counts[0], counts[1], _used(plan, al), counts[2], info)


def _kill_hook(part, test):
    """Test-only: ``test['_kill_part_once'] = (marker_path, part number)`` SIGKILLs this
    worker the first time that part has been aligned (its text made, not yet returned)."""
    _kill_once(test.get("_kill_part_once"), part.part)
