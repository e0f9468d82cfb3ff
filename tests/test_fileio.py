"""s2g.fileio: large reads in threads land every byte where it belongs, and a file that
ends early is an error, not a short array."""
from __future__ import annotations

import os

import numpy as np
import pytest

from s2g import fileio


@pytest.mark.parametrize("piece", [7, 64, 1 << 20])
@pytest.mark.parametrize("offset", [0, 5])
def test_pread_into_pieces_in_threads(tmp_path, monkeypatch, piece, offset):
    monkeypatch.setattr(fileio, "PIECE", piece)
    data = np.random.default_rng(1).integers(0, 256, 10_000 + offset, np.uint8)
    p = tmp_path / "f"
    p.write_bytes(data.tobytes())
    out = np.zeros(10_000, np.uint8)
    fd = os.open(p, os.O_RDONLY)
    try:
        fileio.pread_into(fd, out, offset)
        assert np.array_equal(out, data[offset:])
        with pytest.raises(ValueError, match="shorter"):
            fileio.pread_into(fd, np.zeros(10_001, np.uint8), offset)
    finally:
        os.close(fd)


def test_npz_reader_equals_np_load(tmp_path, monkeypatch):
    monkeypatch.setattr(fileio, "PIECE", 100)
    arrays = {"a": np.arange(5_000, dtype=np.int64), "b": np.frombuffer(b"xyz", np.uint8),
              "e": np.zeros(0, np.int32), "m": np.arange(600, dtype=np.int32).reshape(20, 30),
              "z": np.zeros((0, 3)), "s": np.array(7), "f": np.asfortranarray(np.ones((3, 2))),
              "t": np.array(["2026-12-06"], "datetime64[D]"), ">": np.arange(9, dtype=">i4")}
    p = tmp_path / "a.npz"
    np.savez(p, **arrays)
    with fileio.NpzReader(str(p)) as z, np.load(p) as ref:
        assert sorted(z.files) == sorted(ref.files)
        for k in ref.files:
            assert z[k].dtype == ref[k].dtype and np.array_equal(z[k], ref[k]), k
        assert "a" in z and "q" not in z
