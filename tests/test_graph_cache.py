"""The on-disk graph cache (s2g/graph_cache.py): exact round trips, and never a stale,
foreign or damaged graph: every doubt means "parse the GFA"."""
from __future__ import annotations

import dataclasses
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import naive
from conftest import REAL_DATA, REPO
from s2g import graph as graph_mod
from s2g import graph_cache
from s2g.cyclic import CyclicGraph
from s2g.errors import GraphError
from s2g.graph import FlatGraph, load_graph, open_graph
from s2g.graph_core import graph_checksum

IN_REPO = sorted(glob.glob(str(REPO / "graphs" / "*.gfa"))
                 + glob.glob(str(REAL_DATA / "*" / "*.gfa*")))
OPTIONS = [dict(), dict(strands="forward"), dict(break_cycles=True), dict(keep_paths=True)]


def assert_same_flat(a: FlatGraph, b: FlatGraph):
    for f in dataclasses.fields(FlatGraph):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            assert isinstance(y, np.ndarray) and x.dtype == y.dtype and x.shape == y.shape \
                and np.array_equal(x, y), f.name
        else:
            assert type(x) is type(y) and x == y, f.name
    assert a.oriented_names() == b.oriented_names()
    if "_s2g_checksum" in b.__dict__:          # read from the cache: that of its arrays
        assert b.__dict__["_s2g_checksum"] == graph_checksum(dataclasses.replace(a))


def assert_same_cyclic(a: CyclicGraph, b: CyclicGraph):
    for name in ("seg_names", "seg_seqs", "version", "paths", "n_paths", "n_walks"):
        assert getattr(a.rec, name) == getattr(b.rec, name), name
    for name in ("link_a", "link_ar", "link_b", "link_br"):
        x, y = getattr(a.rec, name), getattr(b.rec, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name
    # a cyclic graph read from the cache carries its seeded DAG (the default read
    # length's): taken without unrolling it or analysing the cycles (keep_seeded)
    from_cache = bool(b._seeded)
    seeded = b.for_seeded()
    assert seeded is b.for_seeded()
    if from_cache:
        assert "comp" not in vars(b)
        assert seeded.__dict__["_s2g_checksum"] == graph_checksum(dataclasses.replace(seeded))
    for name, x in list(vars(a).items()):
        if name.startswith("_"):
            continue
        y = getattr(b, name)           # the cycles' analysis is made on first use
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and np.array_equal(x, y), name
        elif isinstance(x, (int, str)):
            assert x == y, name
    assert_same_flat(a.unroll(150), b.unroll(150))
    assert_same_flat(a.for_seeded(), seeded)
    fresh = CyclicGraph(b.rec, b.seg_len, b.src, b.dst, b.alive, b.strands, b.source)
    assert_same_flat(fresh.for_seeded(), seeded)


def assert_same(a, b):
    assert type(a) is type(b)
    (assert_same_flat if isinstance(a, FlatGraph) else assert_same_cyclic)(a, b)


class Notes(list):
    def __call__(self, event, msg):
        self.append((event, msg))

    def events(self):
        return [e for e, _ in self]


@pytest.fixture
def no_parse(monkeypatch):
    """Fail any parse: proves a load came from the cache."""
    def refuse(*a, **k):
        raise AssertionError("parse_gfa ran")
    return lambda: monkeypatch.setattr(graph_mod, "parse_gfa", refuse)


def cached_copy(src, tmp_path, **opts):
    """A copy of ``src`` in tmp_path, its cache written; the parsed graph."""
    path = str(tmp_path / os.path.basename(src))
    shutil.copyfile(src, path)
    notes = Notes()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = open_graph(path, cache="write", note=notes, **opts)
    assert notes.events() == ["written"] and os.path.isfile(path + ".s2gg"), notes
    return path, g


@pytest.mark.parametrize("opts", OPTIONS, ids=lambda o: ",".join(o) or "default")
@pytest.mark.parametrize("src", IN_REPO, ids=os.path.basename)
def test_round_trip_in_repo_graphs(src, opts, tmp_path, no_parse):
    path, parsed = cached_copy(src, tmp_path, **opts)
    no_parse()
    notes = Notes()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cached = open_graph(path, cache="read", note=notes, **opts)
    assert notes.events() == ["hit"]
    assert_same(parsed, cached)
    assert not glob.glob(str(tmp_path / "*.tmp"))
    # a cached flat graph brings the seed index's checksum (no run hashes it again), a
    # cached cyclic graph its seeded DAG (with that DAG's checksum; assert_same_cyclic)
    assert isinstance(cached, CyclicGraph) or "_s2g_checksum" in cached.__dict__
    assert not isinstance(cached, CyclicGraph) or cached._seeded


def test_in_repo_graphs_include_cyclic_and_compressed():
    kinds = set()
    for src in IN_REPO:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            kinds.add(type(open_graph(src)).__name__)
    assert kinds == {"FlatGraph", "CyclicGraph"}
    assert any(p.endswith(".gz") for p in IN_REPO) and len(IN_REPO) >= 6


@st.composite
def gfa_with_paths(draw):
    text = naive.random_dag_gfa(draw, st, max_segs=6, max_len=5)
    segs = [ln.split("\t")[1] for ln in text.splitlines() if ln.startswith("S")]
    steps = draw(st.lists(st.tuples(st.sampled_from(segs), st.sampled_from("+-")), max_size=4))
    if steps:
        text += "P\tp 1\t" + ",".join(s + o for s, o in steps) + "\t*\n"
        text += "W\tsample\t1\tchr\t0\t9\t" + "".join(("<" if o == "-" else ">") + s
                                                       for s, o in steps) + "\n"
    return text


@settings(max_examples=30, deadline=None)
@given(text=gfa_with_paths(), opts=st.sampled_from(OPTIONS))
def test_round_trip_random_graphs(text, opts):
    d = tempfile.mkdtemp()         # hypothesis reruns the body: no tmp_path fixture
    try:
        path = os.path.join(d, "g.gfa")
        with open(path, "w") as fh:
            fh.write(text)
        parsed = open_graph(path, cache="write", **opts)
        notes = Notes()
        cached = open_graph(path, cache="read", note=notes, **opts)
        assert notes.events() == ["hit"]
        assert_same(parsed, cached)
    finally:
        shutil.rmtree(d)


def test_odd_names_paths_and_warnings_round_trip(tmp_path, no_parse):
    """UTF-8 and non-UTF-8 names, P names with spaces, W lines; the parser's warning is
    shown again on a cached load."""
    gfa = (b"H\tVN:Z:1.1\nS\ts\xc3\xa9q\tACGT\nS\tb\xff\tGGA\nS\t3\tTT\n"
           b"L\ts\xc3\xa9q\t+\tb\xff\t-\t0M\nL\tb\xff\t-\t3\t+\t*\nC\t3\t+\tb\xff\t+\t0\t*\n"
           b"P\tmy path\ts\xc3\xa9q+,b\xff-\t*\nW\tHG1\t1\tchr1\t0\t7\t>s\xc3\xa9q<b\xff\n")
    src = tmp_path / "src.gfa"
    src.write_bytes(gfa)
    (tmp_path / "c").mkdir()
    with pytest.warns(UserWarning, match=r"ignored 1 C \(containment\)"):
        parsed = open_graph(str(src), cache="write", keep_paths=True)
    assert parsed.seg_names[1] == b"b\xff".decode("utf-8", "surrogateescape")
    assert set(parsed.paths) == {"my path", "HG1#1#chr1:0-7"}
    no_parse()
    with pytest.warns(UserWarning, match=r"ignored 1 C \(containment\)"):
        cached = open_graph(str(src), cache="read", keep_paths=True)
    assert_same(parsed, cached)


def test_break_cycles_warning_repeated(tmp_path, no_parse):
    path, parsed = cached_copy(str(REAL_DATA / "mt_minigraph" / "MT.gfa"), tmp_path,
                               break_cycles=True)
    assert parsed.broken_edges > 0
    no_parse()
    with pytest.warns(UserWarning, match=rf"removed {parsed.broken_edges} edge"):
        cached = open_graph(path, cache="read", break_cycles=True)
    assert_same(parsed, cached)


def test_cached_cyclic_graph_is_refused_without_cyclic(tmp_path):
    """load_graph without max_read_len refuses a cyclic graph, cache or not."""
    path, parsed = cached_copy(str(REAL_DATA / "mt_minigraph" / "MT.gfa"), tmp_path)
    assert isinstance(parsed, CyclicGraph)
    with pytest.raises(GraphError, match="graph is cyclic"):
        load_graph(path, cache="read")
    g = load_graph(path, cache="read", max_read_len=150)
    assert_same_flat(g, parsed.unroll(150))


def _parsed(path, **opts):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return open_graph(path, **opts)


def test_stale_cache_same_size_reparses(tmp_path):
    path, parsed = cached_copy(str(REPO / "graphs" / "example.gfa"), tmp_path)
    data = bytearray(open(path, "rb").read())
    at = data.index(b"\nS\t") + 1
    at = data.index(b"\t", data.index(b"\t", at) + 1) + 1      # first base of a sequence
    data[at:at + 1] = b"A" if data[at:at + 1] != b"A" else b"C"
    st0 = os.stat(path)
    with open(path, "wb") as fh:
        fh.write(data)
    os.utime(path, ns=(st0.st_atime_ns, st0.st_mtime_ns))   # same size and mtime
    assert os.path.getsize(path) == st0.st_size
    notes = Notes()
    g = open_graph(path, cache="write", note=notes)
    assert notes.events() == ["written"]                     # parsed, and rewritten
    assert_same(g, _parsed(path))
    assert not np.array_equal(g.base, parsed.base)
    notes = Notes()
    assert_same(open_graph(path, cache="read", note=notes), g)
    assert notes.events() == ["hit"]


@pytest.mark.parametrize("other", [dict(strands="forward"), dict(break_cycles=True),
                                   dict(keep_paths=True)], ids=lambda o: ",".join(o))
def test_other_options_reparse(other, tmp_path):
    src = str(REAL_DATA / "mt_minigraph" / "MT.gfa")   # cyclic: break_cycles changes it
    path, _ = cached_copy(src, tmp_path)
    notes = Notes()
    g = _cached_quiet(path, notes, **other)
    assert "hit" not in notes.events()
    assert_same(g, _parsed(path, **other))


def _cached_quiet(path, notes, **opts):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return open_graph(path, cache="read", note=notes, **opts)


def test_other_loader_code_reparses(tmp_path, monkeypatch):
    path, parsed = cached_copy(str(REPO / "graphs" / "example.gfa"), tmp_path)
    monkeypatch.setattr(graph_cache, "_code_digest", "0" * 32)
    notes = Notes()
    assert_same(open_graph(path, cache="read", note=notes), parsed)
    assert notes.events() == []


def _corrupt_truncate(p):
    data = open(p, "rb").read()
    open(p, "wb").write(data[:len(data) // 2])


def _corrupt_flip_base(p):
    # a byte inside the 'base' member's data: only the zip CRC can tell
    data = bytearray(open(p, "rb").read())
    at = data.index(b"base.npy")
    at = data.index(b"\n", data.index(b"{'descr'", at)) + 50
    data[at] ^= 0x01
    open(p, "wb").write(bytes(data))


def _corrupt_garbage(p):
    open(p, "wb").write(b"not a cache at all\n" * 10)


def _corrupt_empty(p):
    open(p, "wb").close()


def _corrupt_missing_member(p):
    with np.load(p) as z:
        arrays = {k: z[k] for k in z.files if k != "pred_idx"}
    with open(p, "wb") as fh:
        np.savez(fh, **arrays)


def _corrupt_meta(p):
    with np.load(p) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["meta"] = np.frombuffer(b"{not json", np.uint8)
    with open(p, "wb") as fh:
        np.savez(fh, **arrays)


def _corrupt_pickle(p):
    with np.load(p) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["base"] = np.array([object()], dtype=object)
    with open(p, "wb") as fh:
        np.savez(fh, **arrays)


def _corrupt_shape_text(p):
    # an array header that claims fewer elements (a valid shape): numpy alone reads that
    # many and never reaches the member's end, where zipfile checks its CRC-32
    data = bytearray(open(p, "rb").read())
    at = data.index(b"'shape': (", data.index(b"pred_idx.npy")) + len(b"'shape': (")
    end = data.index(b",)", at)
    data[at:end] = b" " * (end - at - 1) + b"0"
    open(p, "wb").write(bytes(data))


def _corrupt_fortran_flip(p):
    # a member numpy reads (Fortran order): a flipped byte must fail zipfile's CRC-32
    with np.load(p) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["seg_len"] = np.asfortranarray(arrays["seg_len"].reshape(-1, 1))
    with open(p, "wb") as fh:
        np.savez(fh, **arrays)
    data = bytearray(open(p, "rb").read())
    at = data.index(b"\n", data.index(b"{'descr'", data.index(b"seg_len.npy"))) + 3
    data[at] ^= 0x01
    open(p, "wb").write(bytes(data))


def _corrupt_short_array(p):
    with np.load(p) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["node_start"] = arrays["node_start"][:-1]
    with open(p, "wb") as fh:
        np.savez(fh, **arrays)


@pytest.mark.parametrize("damage", [_corrupt_truncate, _corrupt_flip_base, _corrupt_garbage,
                                    _corrupt_empty, _corrupt_missing_member, _corrupt_meta,
                                    _corrupt_pickle, _corrupt_short_array, _corrupt_shape_text,
                                    _corrupt_fortran_flip],
                         ids=lambda f: f.__name__[9:])
@pytest.mark.parametrize("fast", [False, True], ids=["whole_reads", "threaded_reads"])
def test_damaged_cache_falls_back(damage, fast, tmp_path, monkeypatch):
    """``threaded_reads``: members read in threads in 64-byte pieces, as a large graph's
    are (s2g.fileio.NpzReader; its size and CRC-32 checks either way)."""
    if fast:
        from s2g import fileio
        monkeypatch.setattr(fileio, "PIECE", 64)
    path, parsed = cached_copy(str(REPO / "graphs" / "example.gfa"), tmp_path)
    damage(path + ".s2gg")
    notes = Notes()
    g = open_graph(path, cache="write", note=notes)
    assert_same(g, parsed)
    assert "hit" not in notes.events()
    assert notes[0][0] == "problem" and "damaged graph cache" in notes[0][1], notes
    assert notes.events()[-1] == "written"       # and the parse rewrote it
    notes = Notes()
    assert_same(open_graph(path, cache="read", note=notes), parsed)
    assert notes.events() == ["hit"]


def test_unwritable_cache_is_a_note(tmp_path, monkeypatch):
    src = str(REPO / "graphs" / "example.gfa")
    path = str(tmp_path / "g.gfa")
    shutil.copyfile(src, path)
    os.mkdir(path + ".s2gg")           # the cache's name is taken by a directory
    notes = Notes()
    g = open_graph(path, cache="write", note=notes)
    assert_same(g, _parsed(path))
    assert notes.events() == ["problem"] and "not written" in notes[0][1]
    os.rmdir(path + ".s2gg")

    def full(*a, **k):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(np, "savez", full)
    notes = Notes()
    assert_same(open_graph(path, cache="write", note=notes), g)
    assert notes.events() == ["problem"] and "No space left" in notes[0][1]
    assert sorted(os.listdir(tmp_path)) == ["g.gfa"]      # no temporary file left


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_read_only_directory(tmp_path):
    path = str(tmp_path / "g.gfa")
    shutil.copyfile(str(REPO / "graphs" / "example.gfa"), path)
    os.chmod(tmp_path, 0o555)
    try:
        notes = Notes()
        assert_same(open_graph(path, cache="write", note=notes), _parsed(path))
        assert notes.events() == ["problem"]
    finally:
        os.chmod(tmp_path, 0o755)


def test_modes(tmp_path, monkeypatch):
    path = str(tmp_path / "g.gfa")
    shutil.copyfile(str(REPO / "graphs" / "example.gfa"), path)
    for mode in ("off", "read", "auto"):    # example.gfa is below AUTO_MIN_BYTES
        open_graph(path, cache=mode)
        assert not os.path.exists(path + ".s2gg"), mode
    monkeypatch.setattr(graph_cache, "AUTO_MIN_BYTES", os.path.getsize(path))
    notes = Notes()
    open_graph(path, cache="auto", note=notes)
    assert notes.events() == ["written"]
    notes = Notes()
    open_graph(path, cache="off", note=notes)
    assert notes == []
    with pytest.raises(ValueError, match="graph cache mode"):
        open_graph(path, cache="yes")


def test_validate_reads_the_gfa(tmp_path):
    path, parsed = cached_copy(str(REPO / "graphs" / "example.gfa"), tmp_path)
    notes = Notes()
    assert_same(open_graph(path, cache="read", validate=True, note=notes), parsed)
    assert notes == []


def test_pipe_is_not_cached(tmp_path):
    path = str(tmp_path / "g.gfa")
    shutil.copyfile(str(REPO / "graphs" / "example.gfa"), path)
    fifo = str(tmp_path / "pipe.gfa")
    os.mkfifo(fifo)
    w = subprocess.Popen(["sh", "-c", f"cat {path} > {fifo}"])
    g = open_graph(fifo, cache="write")
    w.wait()
    assert_same_flat(g, dataclasses.replace(_parsed(path), source=fifo))
    assert not os.path.exists(fifo + ".s2gg")


def _cli(*args, cwd):
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "s2g", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=600)


def test_cli_gaf_same_with_and_without_cache(tmp_path):
    for name in ("example.gfa", "example.fq"):
        shutil.copyfile(REPO / "graphs" / name, tmp_path / name)
    run = ["align", "example.gfa", "example.fq", "--timings", "-o"]
    a = _cli(*run, "a.gaf", cwd=tmp_path)
    assert a.returncode == 0, a.stderr
    assert not (tmp_path / "example.gfa.s2gg").exists()     # small: align does not litter
    p = _cli("index", "example.gfa", cwd=tmp_path)
    assert p.returncode == 0 and "wrote the graph cache" in p.stderr, p.stderr
    assert (tmp_path / "example.gfa.s2gg").exists()
    b = _cli(*run, "b.gaf", cwd=tmp_path)
    assert b.returncode == 0 and "load graph (from GRAPH.s2gg)" in b.stderr, b.stderr
    c = _cli(*run, "c.gaf", "--no-graph-cache", cwd=tmp_path)
    assert c.returncode == 0 and "from GRAPH.s2gg" not in c.stderr, c.stderr
    gaf = (tmp_path / "a.gaf").read_text()
    assert gaf.count("\n") == 200
    assert (tmp_path / "b.gaf").read_text() == gaf == (tmp_path / "c.gaf").read_text()


@settings(max_examples=40, deadline=None)
@given(size=st.integers(0, 700), cuts=st.lists(st.integers(0, 700), max_size=6),
       threads=st.sampled_from([1, 4]))
def test_file_digest_equals_the_parsers_running_digest(size, cuts, threads):
    """The digest of a file hashed piece by piece in threads (file_digest, at a cached
    load) == the one the parser feeds as it reads (FileDigest.update, any chunking): sizes
    around the piece boundaries, an empty file; and another byte gives another digest."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(graph_cache, "PIECE", 64)
        mp.setattr(graph_cache, "CHUNK", 24)
        mp.setattr(graph_cache, "DIGEST_THREADS", threads)
        _digests_agree(size, cuts)


def _digests_agree(size, cuts):
    data = np.random.default_rng(size).integers(0, 256, size, np.uint8).tobytes()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "g.gfa")
        with open(path, "wb") as fh:
            fh.write(data)
        got = graph_cache.file_digest(path)
    run = graph_cache.FileDigest()
    at = 0
    for c in sorted(set(min(c, size) for c in cuts)) + [size]:
        run.update(data[at:c])
        at = c
    assert (got.size, got.hexdigest()) == (run.size, run.hexdigest()) == (size, got.hexdigest())
    if size:
        other = graph_cache.FileDigest()
        other.update(data[:-1] + bytes([data[-1] ^ 1]))
        assert other.hexdigest() != got.hexdigest()


def test_cached_seeded_dag_off_unrolls_at_each_load(tmp_path):
    """Knob ``cached_seeded_dag`` off: a cached cyclic graph comes without its seeded DAG,
    which is unrolled again (the same DAG) and analyses the cycles."""
    from s2g import config
    path, parsed = cached_copy(str(REAL_DATA / "mt_minigraph" / "MT.gfa"), tmp_path)
    config.configure(cached_seeded_dag=False)
    g = _cached_quiet(path, Notes())
    assert isinstance(g, CyclicGraph) and not g._seeded
    assert_same_flat(g.for_seeded(), parsed.for_seeded())
    assert "comp" in vars(g)
    config.configure(cached_seeded_dag=True)
    g = _cached_quiet(path, Notes())
    assert g._seeded and "comp" not in vars(g)
