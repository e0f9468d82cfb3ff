"""s2g/_numba.py's drop_stale_caches: Numba keys a cached kernel on its own source file
only, while a cached kernel holds the code of the kernels it calls from other modules, so
any change to the package's sources drops every cached kernel (and nothing else)."""
from __future__ import annotations

import os

from s2g import _numba


def _files(root):
    return sorted(os.path.relpath(os.path.join(d, f), root)
                  for d, _, fs in os.walk(root) for f in fs)


def _cache(root):
    for sub in ("", "variants"):
        pc = os.path.join(root, sub, "__pycache__")
        os.makedirs(pc, exist_ok=True)
        for name in ("k.f-1.py311.nbi", "k.f-1.py311.1.nbc", "k.cpython-311.pyc"):
            with open(os.path.join(pc, name), "w") as fh:
                fh.write("x")


def test_drop_stale_caches(tmp_path):
    root = str(tmp_path / "pkg")
    os.makedirs(os.path.join(root, "variants"))
    for rel in ("a.py", os.path.join("variants", "b.py")):
        with open(os.path.join(root, rel), "w") as fh:
            fh.write("x = 1\n")
    _cache(root)
    assert _numba.drop_stale_caches(root) == 4          # no stamp yet: every kernel cache
    left = _files(root)
    assert not [f for f in left if f.endswith((".nbi", ".nbc"))]
    assert os.path.join("__pycache__", "k.cpython-311.pyc") in left
    assert os.path.join("__pycache__", _numba.STAMP) in left
    _cache(root)
    assert _numba.drop_stale_caches(root) == 0          # the same sources: kept
    assert len([f for f in _files(root) if f.endswith((".nbi", ".nbc"))]) == 4
    with open(os.path.join(root, "variants", "b.py"), "a") as fh:
        fh.write("y = 2\n")                              # one module edited
    assert _numba.drop_stale_caches(root) == 4
    assert _numba.drop_stale_caches(root) == 0


def test_drop_stale_caches_never_fails(tmp_path):
    assert _numba.drop_stale_caches(str(tmp_path / "missing")) == 0


def test_concurrent_cache_writes_of_two_signatures_keep_their_own_code(tmp_path):
    """Two processes compile one function for two signatures at once: each reads the
    index empty, writes its index and its data. Numba named both entries ``.1.nbc``, so
    where one's index and the other's data won, a signature pointed at code for other
    types (a segfault in CI). s2g names entries by their key's digest
    (:func:`s2g._numba.name_cache_entries_by_key`): A's index with B's data still loads A's
    own data."""
    import s2g._numba  # noqa: F401  (the patch)
    from numba.core.caching import IndexDataCacheFile
    a = IndexDataCacheFile(str(tmp_path), "mod.f-3.py311", ("stamp", 1))
    b = IndexDataCacheFile(str(tmp_path), "mod.f-3.py311", ("stamp", 1))
    key_a, key_b = (("int64",), "magic"), (("float64",), "magic")
    a.save(key_a, "code for int64")                # A: index {a}, data
    index_a = (tmp_path / "mod.f-3.py311.nbi").read_bytes()
    (tmp_path / "mod.f-3.py311.nbi").unlink()      # B read the index before A wrote it
    b.save(key_b, "code for float64")              # B: index {b}, data (written last)
    (tmp_path / "mod.f-3.py311.nbi").write_bytes(index_a)   # A's index won
    assert a.load(key_a) == "code for int64"
    assert a.load(key_b) is None                   # dropped: compiled again, never wrong
