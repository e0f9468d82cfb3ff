"""``s2g align`` in several processes of one host (knob ``processes``, issue #42).

Why: the GPU path's host stages (reading, seeding, window building, the traceback's host
part, GAF text) run in threads of one process, and each of their many short Numba, numpy
and CUDA calls waits for the one GIL: on an H100 host a 1,000,000-read run keeps 7 of 16
cores and 11-18% of the GPU busy (docs/performance.md). Processes have a GIL each. With
``processes`` N > 1, ``s2g align`` cuts a plain or BGZF reads file into N byte ranges of
whole records (:func:`s2g.read_ranges.split_input`, as ``--dask`` does), forks N children
before it starts anything else (no thread yet, no CUDA context), and each child runs the
whole single-process pipeline over its range (its own CUDA context on the same GPU) into
a temporary file beside the output. The parent waits, then writes their GAF in input
order: byte-identical to one process (unnamed reads' stand-in names given their record
numbers, as the Dask client does). A child's error stops the run: the others are
killed, the output is not written, the child's message is said.

Not split (one process, as before): standard input, gzip that is not BGZF, a file too
small for two parts of ``processes_min_bytes`` (knob) each, paired reads, SAM/BAM output, ``--dask``,
a process that already runs threads, or no ``os.fork``. Each child takes ``--threads``
(default: the cores over N). Children write their notes and ``--timings`` to a file
each; the parent says them after they end, each line marked with its part. Each child
loads the graph and the seed index itself: their memory counts N times (MHC's: ~0.1 GB;
a 1 Gbp graph's ~8 GB), and so does each child's GPU memory.

Measured (H100 host, 1,000,000 reads, docs/performance.md): no gain over one process
there (the children's start-ups and their share of the 16 vCPUs); hence off by default.
"""
from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import threading
import time

from .config import settings
from .errors import S2GError

#: bytes of a part's GAF copied at a time (whole lines)
COPY_STEP = 64 << 20
#: seconds a child stopped after another part's failure has to end before SIGKILL
STOP_GRACE = 5.0


def run(args, align, guard) -> int:
    """``align(args)`` (``s2g align``'s body), in :func:`parts_of` processes where it
    splits, else in this one; ``guard(align, args)``: a child's run, its errors said on
    its stderr and turned into its exit status (``s2g.cli._run``)."""
    parts = parts_of(args)
    if parts is None:
        return align(args)
    return _fork(args, align, guard, parts)


def parts_of(args):
    """The input ranges of a split run, or None (see the module's doc)."""
    n = int(settings().processes)
    if n <= 1 or not hasattr(os, "fork") or threading.active_count() > 1:
        return None
    if getattr(args, "dask", None) or getattr(args, "reads2", None) is not None or \
            getattr(args, "interleaved", False) or args.reads == "-":
        return None
    from .output import requested_format
    if requested_format(args) != "gaf":
        return None
    from .read_ranges import split_input
    try:
        parts = split_input(args.reads, n, min_bytes=settings().processes_min_bytes)
    except OSError:
        return None                     # (the run itself says what is wrong with it)
    return parts if parts is not None and len(parts) > 1 else None


def _fork(args, align, guard, parts) -> int:
    t0 = time.perf_counter()
    from .output import align_inputs, output
    from .plan import cores
    if args.threads is None:
        args.threads = max(1, cores() // len(parts))
    _import_cuda(args)
    out_dir = os.path.dirname(os.path.abspath(args.output)) if args.output != "-" else None
    tmp = tempfile.mkdtemp(prefix=".s2g-parts-", dir=out_dir if out_dir and
                           os.access(out_dir, os.W_OK) else None)
    kids = []
    try:
        with output(args.output, inputs=align_inputs(args)) as out:   # (its errors before the work)
            n_reads, n_hit, unnamed = _parts(args, align, guard, parts, tmp, kids, out)
        if unnamed:                     # (one process says it as its reader meets them)
            import warnings
            warnings.warn(f"{args.reads}: {unnamed} read(s) without a name, written as "
                          "read<record number>", stacklevel=2)
        if not args.quiet:
            for k in range(len(parts)):
                _relay(tmp, k, len(parts))
            wall = time.perf_counter() - t0
            print(f"s2g: {len(parts)} processes: {n_reads} reads, {n_hit} aligned; "
                  f"{wall:.2f} s ({n_reads / max(wall, 1e-9):,.0f} reads/s)", file=sys.stderr)
        return 0
    finally:
        for pid in kids:                # an error or an interrupt: the children go too
            if pid is not None:
                _stop(pid)
        shutil.rmtree(tmp, ignore_errors=True)


def _stop(pid, grace=None):
    """Ends the child ``pid`` and reaps it: SIGTERM (its clean-up runs), then SIGKILL
    after ``grace`` seconds (default :data:`STOP_GRACE`) if it has not ended. A child that
    did not end on SIGTERM (its Python handler runs only when its main thread runs
    bytecode) made a failed run hang with its error said (CI, 2026-12-07: a part's
    malformed record; seen once); its output is thrown away, so killing it loses nothing."""
    grace = STOP_GRACE if grace is None else grace
    try:
        os.kill(pid, signal.SIGTERM)
        end = time.monotonic() + grace
        while time.monotonic() < end:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return
            time.sleep(0.01)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except OSError:                     # (gone already, or not ours)
        pass


def _import_cuda(args):
    """Knob ``processes_import_cuda``: numba.cuda's modules imported here, before the
    fork, where a GPU variant may run and a CUDA driver is there. Only the import: the
    driver is started (cuInit) lazily, in each child, as a forked child needs. Not on the
    lean path (knob ``lean_cuda``): its children launch stored cubins without numba.cuda."""
    from .variants import _lean
    from .variants.registry import REGISTRY, _no_driver
    info = REGISTRY.get(args.variant)
    if not settings().processes_import_cuda or (info is not None and info.device == "cpu") \
            or _no_driver() or _lean.active():
        return
    try:
        import numba.cuda  # noqa: F401
    except Exception:                   # noqa: BLE001 - each child says what is wrong
        pass


def _parts(args, align, guard, parts, tmp, kids, out):
    """Fork a child a part (their pids into ``kids``), wait for them all, copy their GAF
    onto ``out`` in order: (reads, aligned, unnamed reads named)."""
    for f in (sys.stdout, sys.stderr):
        f.flush()
    for rng in parts:
        pid = os.fork()
        if pid == 0:
            _child(args, align, guard, rng, tmp)   # never returns
        kids.append(pid)
    while kids:                     # the first part to fail stops the others
        pid, status = os.wait()
        if pid not in kids:
            continue
        k, code = kids.index(pid), os.waitstatus_to_exitcode(status)
        kids[k] = None
        if code != 0:
            _relay(tmp, k, len(parts), errors_only=True)
            raise S2GError(f"part {k + 1} of {len(parts)} of {args.reads} failed "
                           f"(exit status {code}); nothing was written")
        if all(p is None for p in kids):
            kids.clear()
    n_reads = n_hit = unnamed = 0
    for k, rng in enumerate(parts):
        got = _counts(tmp, k)
        unnamed += _copy(os.path.join(tmp, f"{k}.gaf"), out, n_reads, rng.token)
        n_reads += got[0]
        n_hit += got[1]
    return n_reads, n_hit, unnamed


def _child(args, align, guard, rng, tmp):
    """In a forked child: align ``rng`` into ``tmp/<part>.gaf``, its stderr into
    ``tmp/<part>.err``, its counts into ``tmp/<part>.n``; then leave (never returns)."""
    code = 3
    try:
        _die_with_parent()
        k = rng.part
        fd = os.open(os.path.join(tmp, f"{k}.err"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(fd, 2)
        os.close(fd)
        args.output = os.path.join(tmp, f"{k}.gaf")
        args.reads_part = rng
        args.progress = None
        code = guard(align, args)
        counts = getattr(args, "part_counts", None)
        if code == 0 and counts is not None:
            with open(os.path.join(tmp, f"{k}.n"), "w") as fh:
                fh.write(f"{counts[0]} {counts[1]}\n")
    except BaseException:               # noqa: BLE001 - the parent says the part failed
        pass
    finally:
        for f in (sys.stdout, sys.stderr):
            try:
                f.flush()
            except Exception:           # noqa: BLE001
                pass
        os._exit(code)


def _die_with_parent():
    """Linux: SIGKILL this child if the parent dies (prctl PR_SET_PDEATHSIG)."""
    try:
        import ctypes
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)
    except Exception:                   # noqa: BLE001 - elsewhere: the parent's finally
        pass


def _counts(tmp, k):
    with open(os.path.join(tmp, f"{k}.n")) as fh:
        a, b = fh.read().split()
    return int(a), int(b)


def _copy(path, out, first, token) -> int:
    """Part file ``path`` onto ``out``, its unnamed reads named by their record numbers
    (its first record is the input's ``first`` + 1); returns how many it named."""
    from .reads import name_unnamed
    seen = set()
    rest = b""
    with open(path, "rb") as fh:
        while True:
            more = fh.read(COPY_STEP)
            data = rest + more
            cut = data.rfind(b"\n") + 1 if more else len(data)
            data, rest = data[:cut], data[cut:]
            data = name_unnamed(data, first, token, seen)
            if data:
                out.write(data)
            if not more:
                return len(seen)


def _relay(tmp, k, n, errors_only=False):
    """Part ``k``'s stderr lines on this stderr, each marked with its part."""
    try:
        with open(os.path.join(tmp, f"{k}.err"), errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return
    for line in lines:
        if errors_only and "error" not in line:
            continue
        body = line[5:] if line.startswith("s2g: ") else line
        print(f"s2g: [part {k + 1}/{n}] {body}", file=sys.stderr)
