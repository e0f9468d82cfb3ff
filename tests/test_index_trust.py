"""A damaged seed index is never used (issue #40; s2g/index.py, "On disk").

The promises tested, each kind of damage on its own: ``s2g align --seeded`` with the
default index (``GRAPH.s2gi``, beside the graph) rebuilds a damaged, truncated, foreign,
stale or unreadable one with one note, and its GAF is byte for byte that of a run with a
good index; with ``--index PATH`` the run is refused with one line naming ``s2g index``,
the file left as it was and no output (nor temporary output) written; ``load_index``
raises :class:`S2GError` for each. Format 3 served 2,000 flipped bytes with exit 0 and
1,265 of 2,000 reads unmapped, and crashed (SIGSEGV) on a stretch of 0xff.
"""
from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest

import s2g
from s2g.cli import main
from s2g.errors import S2GError
from s2g.index import MAGIC, build_index, get_index, index_path, load_index
from s2g.simulate import simulate


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A 30 kbp graph, 40 reads, the GAF of a run with a good index, a good index's
    bytes and another graph's index."""
    d = tmp_path_factory.mktemp("trust")
    gfa, fq, _ = simulate(str(d / "g"), total_bases=30_000, n_reads=40, seed=5)
    other, _, _ = simulate(str(d / "other"), total_bases=5_000, n_reads=1, seed=6)
    g = s2g.load_graph(gfa)
    good = build_index(g).save(str(d / "good.s2gi"))
    foreign = build_index(s2g.load_graph(other)).save(str(d / "foreign.s2gi"))
    out = str(d / "clean.gaf")
    assert main(["align", gfa, fq, "--seeded", "-q", "-o", out, "--index", good]) == 0
    return {"gfa": gfa, "fq": fq, "graph": g, "good": open(good, "rb").read(),
            "foreign": open(foreign, "rb").read(), "gaf": open(out, "rb").read()}


def _layout(raw: bytes):
    """(start, end) of the hashes and of the columns in an index file of format 4."""
    keys = _header_end(raw)
    keys += -keys % 64
    n = json.loads(raw[16:_header_end(raw) - 4])["entries"]
    cols = keys + 8 * n + (-(keys + 8 * n) % 64)
    return (keys, keys + 8 * n), (cols, cols + 4 * n)


def _header_end(raw: bytes) -> int:
    """Where the header (magic, length, JSON, CRC-32) ends."""
    return 16 + int.from_bytes(raw[8:16], "little") + 4


def _flip(raw, w):
    """2,000 random bytes of the hashes and columns changed (not the padding: its own
    check would catch them first)."""
    (k0, k1), (c0, c1) = _layout(raw)
    rng = np.random.default_rng(40)
    b = bytearray(raw)
    for at in rng.choice(np.r_[k0:k1, c0:c1], 2000, replace=False):
        b[at] ^= int(rng.integers(1, 256))
    return bytes(b)


def _ff(raw, w):
    """0xff over most of the columns (format 3: SIGSEGV in the lookups)."""
    _, (c0, c1) = _layout(raw)
    b = bytearray(raw)
    b[c0 + 64:c1 - 64] = b"\xff" * (c1 - c0 - 128)
    return bytes(b)


def _truncated(raw, w):
    return raw[:len(raw) // 2]


def _foreign(raw, w):
    return w["foreign"]


def _format3(raw, w):
    """The same entries in format 3's layout (no checksums)."""
    ix = load_index_bytes(raw, w)
    head = json.dumps({"version": 3, "k": ix.k, "s": ix.s, "checksum": ix.checksum,
                       "entries": ix.n_entries, "stats": ix.stats}).encode()
    out = bytearray(MAGIC + np.uint64(len(head)).tobytes() + head)
    for arr in (ix.keys, ix.cols):
        out += b"\0" * (-len(out) % 64) + arr.tobytes()
    return bytes(out)


def _format2(raw, w):
    """An ``.npz`` as formats 1-2 were."""
    import io
    ix = load_index_bytes(raw, w)
    buf = io.BytesIO()
    np.savez(buf, version=np.int64(2), k=np.int64(ix.k), s=np.int64(ix.s),
             checksum=np.array(ix.checksum), keys=ix.keys, cols=ix.cols)
    return buf.getvalue()


def _header(raw, w):
    """Valid JSON still, of the same length: k=19 made k=17 (without a check, seeds of
    the wrong length would be looked up)."""
    n_head = int.from_bytes(raw[8:16], "little")
    head = raw[16:16 + n_head]
    assert b'"k": 19' in head
    return raw[:16] + head.replace(b'"k": 19', b'"k": 17') + raw[16 + n_head:]


def load_index_bytes(raw, w):
    path = os.path.join(os.path.dirname(w["gfa"]), f"tmp{os.getpid()}.s2gi")
    with open(path, "wb") as fh:
        fh.write(raw)
    try:
        return load_index(path, w["graph"])
    finally:
        os.unlink(path)


DAMAGE = {"flipped": _flip, "ff_stretch": _ff, "truncated": _truncated, "foreign": _foreign,
          "format3": _format3, "format2": _format2, "header": _header}


def _copy_graph(w, tmp_path):
    gfa = str(tmp_path / "g.gfa")
    shutil.copyfile(w["gfa"], gfa)
    return gfa


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_default_index_damaged_is_rebuilt_and_output_unchanged(world, tmp_path, capsys, kind):
    gfa = _copy_graph(world, tmp_path)
    idx = index_path(gfa)
    with open(idx, "wb") as fh:
        fh.write(DAMAGE[kind](world["good"], world))
    out = str(tmp_path / "o.gaf")
    assert main(["align", gfa, world["fq"], "--seeded", "-o", out]) == 0
    err = capsys.readouterr().err
    notes = [x for x in err.splitlines() if idx in x]
    assert len(notes) == 1 and notes[0].startswith(f"s2g: {idx}: ") and \
        notes[0].endswith("; rebuilding it"), err
    assert open(out, "rb").read() == world["gaf"]
    again = load_index(idx, world["graph"])           # saved over the bad one, good now
    good = load_index_bytes(world["good"], world)
    np.testing.assert_array_equal(again.keys, good.keys)
    np.testing.assert_array_equal(again.cols, good.cols)
    assert sorted(os.listdir(tmp_path)) == ["g.gfa", "g.gfa.s2gi", "o.gaf"]   # no temporaries


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_named_index_damaged_is_refused_and_left_alone(world, tmp_path, capsys, kind):
    gfa = _copy_graph(world, tmp_path)
    idx = str(tmp_path / "named.s2gi")
    bad = DAMAGE[kind](world["good"], world)
    with open(idx, "wb") as fh:
        fh.write(bad)
    outdir = tmp_path / "out"
    outdir.mkdir()
    assert main(["align", gfa, world["fq"], "--seeded", "-o", str(outdir / "o.gaf"),
                 "--index", idx]) == 1
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1, err
    assert err.startswith(f"s2g: error: {idx}: ") and \
        err.rstrip().endswith(f"rebuild it with 's2g index {gfa} -o {idx}'"), err
    assert open(idx, "rb").read() == bad
    assert os.listdir(outdir) == []                   # neither output nor .s2g-tmp
    assert not os.path.exists(index_path(gfa))        # nothing built beside the graph


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_load_index_raises_a_clear_error(world, tmp_path, kind):
    path = str(tmp_path / "i.s2gi")
    with open(path, "wb") as fh:
        fh.write(DAMAGE[kind](world["good"], world))
    with pytest.raises(S2GError, match=r"^" + str(path) + r": .*s2g index") as exc:
        load_index(path, world["graph"])
    assert "\n" not in str(exc.value)


def test_every_single_damaged_byte_is_caught(world, tmp_path):
    """One byte changed anywhere (each of the header's, a sample of the rest) fails the
    load, by the check of its part of the file; the good file loads."""
    raw = world["good"]
    path = str(tmp_path / "i.s2gi")
    (k0, k1), (c0, c1) = _layout(raw)
    rng = np.random.default_rng(1)
    where = set(range(0, k0)) | set(range(k1, c0)) | {k1 - 1, c0, c1 - 1}
    where |= set(rng.choice(len(raw), 300, replace=False).tolist())
    for at in sorted(where):
        b = bytearray(raw)
        b[at] ^= 0x10
        with open(path, "wb") as fh:
            fh.write(b)
        part = ("" if at < _header_end(raw) else       # magic, length, JSON or its CRC
                "hashes fail their checksum" if k0 <= at < k1 else
                "columns fail their checksum" if c0 <= at < c1 else "nonzero padding")
        with pytest.raises(S2GError, match=part or None):
            load_index(path, world["graph"])
    with open(path, "wb") as fh:
        fh.write(raw)
    load_index(path, world["graph"])


def test_unreadable_default_index_is_bypassed(world, tmp_path, capsys):
    """A directory where the index should be: rebuilt for this run, not saved, same GAF."""
    gfa = _copy_graph(world, tmp_path)
    os.mkdir(index_path(gfa))
    out = str(tmp_path / "o.gaf")
    assert main(["align", gfa, world["fq"], "--seeded", "-o", out]) == 0
    err = capsys.readouterr().err
    assert f"s2g: {index_path(gfa)}: cannot read the index" in err and "rebuilding it" in err
    assert "index not saved" in err
    assert open(out, "rb").read() == world["gaf"]
    assert main(["align", gfa, world["fq"], "--seeded", "-o", out, "--index",
                 index_path(gfa)]) == 1
    assert "rebuild it with 's2g index" in capsys.readouterr().err


def test_quiet_rebuild_is_silent_and_the_same(world, tmp_path, capsys):
    gfa = _copy_graph(world, tmp_path)
    with open(index_path(gfa), "wb") as fh:
        fh.write(_flip(world["good"], world))
    out = str(tmp_path / "o.gaf")
    assert main(["align", gfa, world["fq"], "--seeded", "-q", "-o", out]) == 0
    assert capsys.readouterr().err == ""
    assert open(out, "rb").read() == world["gaf"]
    load_index(index_path(gfa), world["graph"])


def test_get_index_without_preload_rebuilds_the_default_only(world, tmp_path):
    gfa = _copy_graph(world, tmp_path)
    with open(index_path(gfa), "wb") as fh:
        fh.write(_truncated(world["good"], world))
    said = []
    with pytest.raises(S2GError, match="rebuild it with 's2g index"):
        get_index(world["graph"], gfa, build=False)
    ix = get_index(world["graph"], gfa, progress=said.append)
    assert len(said) == 1 and "rebuilding it" in said[0]
    np.testing.assert_array_equal(ix.keys, load_index(index_path(gfa), world["graph"]).keys)


def test_stdlib_zlib_gives_the_same_crcs(world, monkeypatch):
    """Where zlib-ng is missing, zlib (in threads) computes the same CRC-32s: a file
    written with one loads with the other."""
    import zlib

    import s2g.index as mod
    good = load_index_bytes(world["good"], world)
    arrays = (good.keys, good.cols)
    fast = mod._body_crcs(arrays, 4096)
    views = [memoryview(a).cast("B") for a in arrays]
    assert fast == [[zlib.crc32(v[o:o + 4096]) for o in range(0, len(v), 4096)] for v in views]
    monkeypatch.setattr(mod, "_crc32", zlib.crc32)
    monkeypatch.setattr(mod, "CRC_THREADS", 2)
    assert mod._body_crcs(arrays, 4096) == fast
    np.testing.assert_array_equal(load_index_bytes(world["good"], world).cols, good.cols)
