"""Reading large arrays from files at memory speed.

A read from the page cache is a ``memcpy`` in the kernel, one core's worth: the seed
index of a 1 Gbp graph (5.6 GB) took 2.80 s to load in one thread on the 2-core VM, 0.80 s
with its reads in threads (``python -m bench.load_scale``; docs/performance.md, "Genome
scale"). So the
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
    if not hasattr(os, "preadv"):                # pragma: no cover - e.g. Windows
        os.lseek(fd, offset, os.SEEK_SET)
        at = 0
        while at < n:
            got = os.readv(fd, [view[at:]]) if hasattr(os, "readv") else \
                _read_into(fd, view[at:])
            if not got:
                raise ValueError("the file is shorter than its header says")
            at += got
        return
    if n <= PIECE or threads == 1:
        for at in range(0, n, PIECE):
            piece(at)
        return
    with ThreadPoolExecutor(min(threads, -(-n // PIECE)), thread_name_prefix="s2g-read") as ex:
        for f in [ex.submit(piece, at) for at in range(0, n, PIECE)]:
            f.result()


def _read_into(fd, view) -> int:                 # pragma: no cover - no readv
    data = os.read(fd, min(len(view), PIECE))
    view[:len(data)] = data
    return len(data)


try:        # zlib-ng: 25 GB/s on the 2-core VM, 3.9 for zlib (xopen, dnaio's, requires it
    from zlib_ng.zlib_ng import crc32            # on x86-64 and aarch64); same CRC-32
    FAST_CRC = True
except ImportError:                              # pragma: no cover - other platforms
    from zlib import crc32
    FAST_CRC = False


class NpzReader:
    """What ``np.load(path, allow_pickle=False)`` gives for an ``.npz`` (``z[name]``,
    ``name in z``, a context manager), its uncompressed members read straight into their
    arrays by :func:`pread_into`, their size checked against their array header and their
    bytes against the CRC-32 the zip file keeps for them (a mismatch raises
    ``zipfile.BadZipFile``). numpy reads a member in 256 KiB pieces, copying each twice: the
    2.2 GB cache of a 1 Gbp graph took 2.65 s to load that way on the 2-core VM
    (docs/performance.md, "Genome scale"). Other members (compressed, Fortran order,
    objects, datetimes, npy format 3) go through numpy, read to their end so that zipfile
    checks their CRC-32 too and a header that claims fewer bytes than the member holds is
    refused (numpy alone stops where the header says and checks nothing)."""

    def __init__(self, path: str):
        import zipfile
        self._raw = open(path, "rb", buffering=0)
        try:                     # one open file: the directory and the bytes agree
            self._zf = zipfile.ZipFile(self._raw)
        except BaseException:
            self._raw.close()
            raise
        self._info = {i.filename[:-4]: i for i in self._zf.infolist()
                      if i.filename.endswith(".npy")}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        try:
            self._zf.close()
        finally:
            self._raw.close()

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
        if info.compress_type != zipfile.ZIP_STORED:
            return self._numpy_read(info)
        raw = self._raw
        raw.seek(info.header_offset)
        local = raw.read(30)
        if len(local) != 30 or local[:4] != b"PK\x03\x04":
            raise zipfile.BadZipFile(f"bad local header of {info.filename!r}")
        start = info.header_offset + 30 + int.from_bytes(local[26:28], "little") \
            + int.from_bytes(local[28:30], "little")
        raw.seek(start)
        version = npf.read_magic(raw)
        if version not in ((1, 0), (2, 0)):
            return self._numpy_read(info)
        read_header = npf.read_array_header_1_0 if version == (1, 0) else \
            npf.read_array_header_2_0
        shape, fortran, dtype = read_header(raw)
        if dtype.hasobject or fortran or dtype.kind in "mM":
            return self._numpy_read(info)
        data_at = raw.tell()
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if data_at - start + nbytes != info.file_size:
            raise zipfile.BadZipFile(f"{info.filename!r}: its array header does not match "
                                     "its size")
        arr = np.empty(shape, dtype)
        if nbytes:
            pread_into(raw.fileno(), arr.reshape(-1), data_at)
        raw.seek(start)
        head = raw.read(data_at - start)
        if crc32(arr.reshape(-1) if nbytes else b"", crc32(head)) != info.CRC:
            raise zipfile.BadZipFile(f"Bad CRC-32 for file {info.filename!r}")
        return arr

    def _numpy_read(self, info):
        import zipfile

        from numpy.lib import format as npf
        with self._zf.open(info) as member:
            arr = npf.read_array(member, allow_pickle=False)
            if member.read(1):
                raise zipfile.BadZipFile(f"{info.filename!r} holds more than its array")
        return arr
