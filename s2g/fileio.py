"""Reading large arrays from files at memory speed.

A read from the page cache is a ``memcpy`` in the kernel, one core's worth: the seed
index of a 1 Gbp graph (5.6 GB) took 0.9-1.3 s to read in one thread on the 2-core VM,
0.51-0.53 s in two (``bench`` numbers in docs/performance.md, "Genome scale"). So the
index (:mod:`s2g.index`) and the graph cache (:mod:`s2g.graph_cache`) read their big
arrays in pieces, in threads (``os.preadv`` releases the GIL), each into its own part
of the destination: nothing is copied twice, and the file position is not shared.
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

#: bytes a thread reads at a time, and the least read worth splitting
PIECE = 32 << 20
#: most threads for one read (page-cache copies stop scaling near memory bandwidth)
MAX_THREADS = 8


def read_threads() -> int:
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:                       # pragma: no cover - not Linux
        n = os.cpu_count() or 1
    return max(1, min(MAX_THREADS, n))


def pread_into(fd: int, buf, offset: int) -> None:
    """Fill ``buf`` (a writable buffer) with the bytes of ``fd`` from ``offset`` on, in
    :data:`PIECE` pieces over :func:`read_threads` threads where it is large. Raises
    ValueError when the file ends first."""
    view = memoryview(buf).cast("B")
    n = len(view)

    def piece(at):
        end = min(n, at + PIECE)
        while at < end:
            got = os.preadv(fd, [view[at:end]], offset + at)
            if not got:
                raise ValueError("the file is shorter than its header says")
            at += got

    threads = read_threads()
    if n <= PIECE or threads == 1 or not hasattr(os, "preadv"):
        if hasattr(os, "preadv"):
            for at in range(0, n, PIECE):
                piece(at)
            return
        at = 0                                   # pragma: no cover - no preadv
        while at < n:
            got = os.pread(fd, min(n - at, PIECE), offset + at)
            if not got:
                raise ValueError("the file is shorter than its header says")
            view[at:at + len(got)] = got
            at += len(got)
        return
    with ThreadPoolExecutor(min(threads, -(-n // PIECE)), thread_name_prefix="s2g-read") as ex:
        for f in [ex.submit(piece, at) for at in range(0, n, PIECE)]:
            f.result()


try:        # zlib-ng's CRC-32 (25 GB/s on the 2-core VM; s2g.index says more), else zlib's
    from zlib_ng.zlib_ng import crc32
except ImportError:                              # pragma: no cover - other platforms
    from zlib import crc32

#: a member smaller than this is read by numpy as usual
NPZ_FAST_BYTES = 1 << 20


class NpzReader:
    """What ``np.load(path, allow_pickle=False)`` gives for an ``.npz`` (``z[name]``,
    ``name in z``, a context manager), its large uncompressed members read straight into
    their arrays by :func:`pread_into` and checked against the CRC-32 the zip file keeps
    for them, as zipfile checks it (a mismatch raises ``zipfile.BadZipFile``). numpy reads
    a member in 256 KiB pieces, copying each twice: the 2.2 GB cache of a 1 Gbp graph
    took 2.65 s to load that way on the 2-core VM (docs/performance.md, "Genome scale")."""

    def __init__(self, path: str):
        import zipfile
        self._zf = zipfile.ZipFile(path)
        try:
            self._raw = open(path, "rb", buffering=0)
        except OSError:
            self._zf.close()
            raise
        self._info = {i.filename[:-4]: i for i in self._zf.infolist()
                      if i.filename.endswith(".npy")}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self._raw.close()
        self._zf.close()

    def __contains__(self, name) -> bool:
        return name in self._info

    @property
    def files(self) -> list:
        return list(self._info)

    def __getitem__(self, name):
        import zipfile

        import numpy as np
        from numpy.lib import format as npf
        info = self._info[name]
        if info.compress_type != zipfile.ZIP_STORED or info.file_size < NPZ_FAST_BYTES:
            with self._zf.open(info) as member:
                return npf.read_array(member, allow_pickle=False)
        raw = self._raw
        raw.seek(info.header_offset)
        local = raw.read(30)
        if len(local) != 30 or local[:4] != b"PK\x03\x04":
            raise zipfile.BadZipFile(f"bad local header of {info.filename!r}")
        start = info.header_offset + 30 + int.from_bytes(local[26:28], "little") \
            + int.from_bytes(local[28:30], "little")
        raw.seek(start)
        version = npf.read_magic(raw)
        read_header = npf.read_array_header_1_0 if version == (1, 0) else \
            npf.read_array_header_2_0
        shape, fortran, dtype = read_header(raw)
        if dtype.hasobject or fortran:
            with self._zf.open(info) as member:
                return npf.read_array(member, allow_pickle=False)
        data_at = raw.tell()
        arr = np.empty(shape, dtype)
        if data_at - start + arr.nbytes != info.file_size:
            raise zipfile.BadZipFile(f"{info.filename!r}: its array header does not match "
                                     "its size")
        pread_into(raw.fileno(), arr, data_at)
        raw.seek(start)
        head = raw.read(data_at - start)
        if crc32(arr, crc32(head)) != info.CRC:
            raise zipfile.BadZipFile(f"Bad CRC-32 for file {info.filename!r}")
        return arr
