"""Device buffers allocated once and reused by every batch (issue 5's host pipeline).

``fast.run_kernel`` and ``s2g.gpu_traceback.run`` need a dozen device arrays per batch
whose sizes change little from batch to batch. Each ``cuda.device_array`` is a
``cuMemAlloc`` (and a deferred free); a :class:`DevicePool` keeps one buffer per name,
grows it when a batch needs more and hands out views of its first ``size`` elements.

Pools are per thread (``pool()``): a buffer is reused only by the thread that launched
the previous kernel on it, and every user synchronises (copies results back) before it
returns, so no kernel still reads a buffer when it is handed out again.
"""
from __future__ import annotations

import threading
import weakref

import numpy as np

from ..config import settings
from . import _lean

_LOCAL = threading.local()
_COUNT = threading.Lock()
#: bytes of device buffers every pool holds now, and the most they held at once
#: (``--timings`` reports PEAK; buffers outside the pools, the graph's tables, are small)
HELD = {"device": 0, "pinned": 0}
PEAK = {"device": 0, "pinned": 0, "used": 0}
#: per buffer name, the largest one pool's buffer of that name grew to (bytes; knob
#: ``devpool_names`` prints them: where a run's device memory goes)
NAMES: dict = {}
_FLUSH = threading.Lock()


def _bytes(buf) -> int:
    return 0 if buf is None else int(buf.size) * buf.dtype.itemsize


def _account(kind, old, new):
    with _COUNT:
        HELD[kind] += _bytes(new) - _bytes(old)
        PEAK[kind] = max(PEAK[kind], HELD[kind])


def _sample_used():
    """PEAK["used"]: the most device memory in use (the whole GPU's: every pool, the
    graph's and index's arrays, the context, frees Numba has not yet made), sampled after
    each allocation of a pool's, where use rises."""
    cuda = _lean.api()
    try:
        free, total = cuda.current_context().get_memory_info()
        used = int(total) - int(free)
    except Exception:                 # noqa: BLE001 - the simulator has no such numbers
        return                        # (infinite ones)
    if used > PEAK["used"]:
        with _COUNT:
            PEAK["used"] = max(PEAK["used"], used)


#: None: the ``devpool`` knob decides at each allocation (off: allocate every buffer
#: afresh, a diagnostic, to compare); True/False: forced (tests)
ENABLED = None


def enabled() -> bool:
    """Whether pools reuse their buffers (:data:`ENABLED`, else the ``devpool`` knob)."""
    return settings().devpool if ENABLED is None else bool(ENABLED)


def shared(*arrays):
    """``arrays`` (device arrays just uploaded), once the uploads are done on the device:
    other threads use them from their own streams (``per_thread_streams``), which do not
    wait for this thread's copies. A context-wide synchronisation, once per upload of a
    graph's or an index's arrays. Returns ``arrays`` (one array: itself)."""
    cuda = _lean.api()
    cuda.synchronize()
    return arrays[0] if len(arrays) == 1 else arrays


def expect(scale: float):
    """This thread's buffers, where they must grow while it works on a batch, grow to
    ``scale`` times the size asked for (at least): a batch that is a ``scale``-th piece of
    the batches to come (:func:`s2g.reads.ramp_batches`' first pieces) sizes them for
    those once, where growing by a quarter at a time would allocate again at each of the
    ramp's doublings (page-locked allocations are slow: session 34's ramp was slower for
    it). 1: as asked."""
    _LOCAL.scale = max(1.0, float(scale))


def expect_batch(batch):
    """:func:`expect` for a stage about to work on ``batch`` (anything: a ramp piece of
    :func:`s2g.reads.ramp_batches` says its ``ramp_scale``, others are whole: 1)."""
    expect(getattr(batch, "ramp_scale", 1.0))


def _grown(buf, size) -> int:
    """Elements of a buffer replacing ``buf`` (None: none yet) that must hold ``size``."""
    grown = size if buf is None else max(size, buf.size + buf.size // 4)
    return max(grown, int(size * getattr(_LOCAL, "scale", 1.0)))


class DevicePool:
    """Named, growing device buffers; ``empty``/``put`` return views of them."""

    def __init__(self):
        self._bufs: dict = {}
        self.allocations = 0          # cuMemAlloc calls made (tests, profiles)
        self.trims = 0                # :meth:`trim`s that dropped buffers
        # a pool goes with its thread (threading.local): its buffers are freed then, and
        # HELD must say so (each `s2g.align` call runs its stages in new threads)
        # (not at exit: the CUDA context may be gone by then)
        weakref.finalize(self, _release, self._bufs).atexit = False
        self._limit = None            # (prefixes, bytes): :meth:`limit`

    def limit(self, prefixes: tuple, nbytes):
        """Buffers named with one of ``prefixes`` should hold at most ``nbytes`` together
        (None: no bound): they grow by a quarter only within it, and :meth:`trim` drops
        them when a launch left them over it."""
        self._limit = None if nbytes is None else (tuple(prefixes), int(nbytes))

    def _held_by(self, prefixes) -> int:
        return sum(_bytes(b) for k, b in self._bufs.items()
                   if isinstance(k, str) and k.startswith(prefixes))

    def trim(self) -> bool:
        """Drops the buffers :meth:`limit` bounds when they hold more than its bytes (they
        are allocated again at the next launch's sizes), and has Numba free them now
        (it defers frees); True if it did."""
        if self._limit is None:
            return False
        prefixes, nbytes = self._limit
        if self._held_by(prefixes) <= nbytes:
            return False
        self.drop(prefixes)
        return True

    def drop(self, prefixes: tuple):
        """Drops the buffers named with one of ``prefixes`` and has Numba free them now."""
        gone = [k for k in self._bufs if isinstance(k, str) and k.startswith(prefixes)]
        if not gone:
            return
        for k in gone:
            _account("device", self._bufs.pop(k), None)
        self.trims += 1
        cuda = _lean.api()
        with _FLUSH:                  # (Numba's pending frees are the context's, shared)
            try:
                cuda.current_context().deallocations.clear()
            except Exception:         # noqa: BLE001 - the simulator has none to make
                pass

    def empty(self, name: str, size: int, dtype):
        """A device array of ``size`` elements of ``dtype`` (contents undefined)."""
        cuda = _lean.api()
        size = int(max(size, 1))
        dtype = np.dtype(dtype)
        buf = self._bufs.get(name)
        if not enabled():
            self.allocations += 1
            return cuda.device_array(size, dtype)
        if buf is None or buf.dtype != dtype or buf.size < size:
            self._bufs[name] = None          # let the old one go first
            _account("device", buf, None)
            grown = _grown(buf, size)
            lim = self._limit
            if lim is not None and name.startswith(lim[0]) and grown > size:
                room = (lim[1] - self._held_by(lim[0])) // dtype.itemsize  # (buf not held)
                grown = max(size, min(grown, room))
            del buf
            try:
                buf = cuda.device_array(grown, dtype)
            except Exception as exc:          # noqa: BLE001 - CudaAPIError (not in the simulator)
                if grown == size or "OUT_OF_MEMORY" not in str(exc):
                    raise
                # a quarter more than a buffer of half the GPU's memory may not fit where
                # the size asked for does (C4 seeded windows, H100, session 20)
                buf = cuda.device_array(size, dtype)
            self._bufs[name] = buf
            _account("device", None, buf)
            NAMES[name] = max(NAMES.get(name, 0), _bytes(buf))
            _sample_used()
            self.allocations += 1
        return buf[:size]

    def host_empty(self, name: str, size: int, dtype):
        """A page-locked host array of ``size`` elements (``put`` uploads it by DMA, without
        the driver's staging copy), reused as :meth:`empty`'s buffers are: valid until
        this thread asks for ``name`` again."""
        cuda = _lean.api()
        size = int(max(size, 1))
        dtype = np.dtype(dtype)
        key = ("host", name)
        buf = self._bufs.get(key)
        if not enabled():
            return np.empty(size, dtype)
        if buf is None or buf.dtype != dtype or buf.size < size:
            self._bufs[key] = None
            _account("pinned", buf, None)
            buf = cuda.pinned_array(_grown(buf, size), dtype)
            self._bufs[key] = buf
            _account("pinned", None, buf)
        return buf[:size]

    def put(self, name: str, host):
        """A device copy of the 1-D host array ``host`` (in a reused buffer)."""
        host = np.ascontiguousarray(host)
        if host.size == 0:
            return self.empty(name, 1, host.dtype)
        d = self.empty(name, host.size, host.dtype)
        d.copy_to_device(host)
        return d

    def put_packed(self, name: str, hosts):
        """Device copies of the 1-D host arrays ``hosts`` in one upload (knob
        ``gpu_pack_uploads``): packed, each at a 256-byte boundary, into this thread's
        page-locked staging buffer ``name``, copied into one device buffer ``name`` and
        returned as typed views of it (an empty array: one element, as :meth:`put`'s). One
        copy instead of one per array: each is a driver call that gives up the GIL and
        waits to take it back."""
        hosts = [np.ascontiguousarray(h).reshape(-1) for h in hosts]
        offs, total = packed_layout([max(h.size, 1) * h.itemsize for h in hosts])
        stage = self.host_empty(name + ".stage", total, np.uint8)
        for h, o in zip(hosts, offs):
            stage[o:o + h.nbytes] = h.view(np.uint8)
        dev = self.empty(name, total, np.uint8)
        dev.copy_to_device(stage)
        return [typed_view(dev, o, h.dtype, max(h.size, 1)) for h, o in zip(hosts, offs)]

    def empty_packed(self, name: str, specs):
        """(one device buffer, typed views of it, their byte offsets) for ``specs`` =
        [(size, dtype), ...] (sizes at least 1), each at a 256-byte boundary: a launch's
        outputs, downloaded in one copy (:func:`host_views` makes the host side)."""
        specs = [(max(int(n), 1), np.dtype(dt)) for n, dt in specs]
        offs, total = packed_layout([n * dt.itemsize for n, dt in specs])
        dev = self.empty(name, total, np.uint8)
        return dev, [typed_view(dev, o, dt, n) for (n, dt), o in zip(specs, offs)], offs

    def held(self, *names) -> int:
        """Bytes held by the named buffers (``fast.plan`` counts them as free)."""
        return sum(b.size * b.dtype.itemsize for k, b in self._bufs.items()
                   if k in names and b is not None)

    def clear(self):
        _release(self._bufs)


def packed_layout(nbytes, align=256):
    """(byte offset of each of ``nbytes``'s pieces, total bytes): each piece at an
    ``align``-byte boundary (at least one byte in all)."""
    offs, t = [], 0
    for nb in nbytes:
        t = -(-t // align) * align
        offs.append(t)
        t += int(nb)
    return offs, max(t, 1)


def typed_view(buf, off, dtype, size):
    """``size`` elements of ``dtype`` at byte ``off`` of the uint8 array ``buf`` (device or
    host), as an array of that type sharing its memory."""
    dtype = np.dtype(dtype)
    return buf[off:off + size * dtype.itemsize].view(dtype)


def host_views(host, offs, specs):
    """:meth:`DevicePool.empty_packed`'s views on the host: ``host`` the downloaded bytes."""
    return [typed_view(host, o, dt, max(int(n), 1)) for (n, dt), o in zip(specs, offs)]


def _release(bufs):
    """Drop the buffers of ``bufs`` (a pool's) and their bytes from :data:`HELD`."""
    for k, b in bufs.items():
        _account("pinned" if isinstance(k, tuple) else "device", b, None)
    bufs.clear()


def pool() -> DevicePool:
    """This thread's pool."""
    p = getattr(_LOCAL, "pool", None)
    if p is None:
        p = _LOCAL.pool = DevicePool()
    return p


def events(site: str, k: int):
    """``k`` CUDA events for the kernel timings of ``site``: made once a thread and site
    (knob ``gpu_reuse_events``; each call's must be read before the next call of the site
    in the thread), else new."""
    cuda = _lean.api()
    if not settings().gpu_reuse_events:
        return [cuda.event() for _ in range(k)]
    got = getattr(_LOCAL, "events", None)
    if got is None:
        got = _LOCAL.events = {}
    ev = got.get(site)
    if ev is None or len(ev) < k:
        ev = got[site] = [cuda.event() for _ in range(k)]
    return ev[:k]


def sync_first():
    """Wait for this thread's stream (knob ``gpu_sync_first``) before a copy back that
    would wait for its kernels inside the driver's copy."""
    if settings().gpu_sync_first:
        cuda = _lean.api()
        cuda.default_stream().synchronize()
