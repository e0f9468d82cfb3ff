"""The lean launch path (knob ``lean_cuda``, s2g/variants/_lean.py): its cubin store, its
module preparation, and on a GPU (``-m gpu``) a seeded run through it equal to the CPU's,
the second without importing numba.cuda."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from s2g.variants import _lean

HERE = Path(__file__).resolve().parent


def _fake_dispatcher(entry="_Z3fooPi", image=b"\x7fELF fake cubin"):
    import numba
    lib = types.SimpleNamespace(get_cubin=lambda: image)
    ov = types.SimpleNamespace(_codelibrary=lib, entry_name=entry,
                               argument_types=(numba.int32[::1], numba.int64))
    return types.SimpleNamespace(overloads={("sig",): ov})


@pytest.fixture
def store(tmp_path, monkeypatch):
    from s2g import _numba
    from s2g.variants import _driver
    monkeypatch.setattr(_numba, "SOURCES", "stamp-a")
    monkeypatch.setattr(_driver, "device_attribute", lambda name: {
        "COMPUTE_CAPABILITY_MAJOR": 9, "COMPUTE_CAPABILITY_MINOR": 0}[name])
    from s2g.variants import codegen
    monkeypatch.setattr(codegen, "_cache_dir", lambda: str(tmp_path))
    return tmp_path


def test_store_round_trip(store):
    assert _lean.load("chains_gpu.count") is None
    image, meta = _lean.save("chains_gpu.count", _fake_dispatcher())
    assert meta == {"key": "chains_gpu.count", "entry": "_Z3fooPi", "bytes": len(image),
                    "spec": [["a", 1], ["s", "i8"]]}
    got = _lean.load("chains_gpu.count")
    assert got == (image, meta)
    assert _lean.load("chains_gpu.chain") is None        # another key: another file
    assert _lean.store_dir().startswith(str(store))
    files = sorted(p.name for p in Path(_lean.store_dir()).iterdir())
    assert len(files) == 2 and files[0].endswith(".cubin") and files[1].endswith(".json")


def test_store_refuses_a_damaged_or_foreign_entry(store):
    _lean.save("k", _fake_dispatcher())
    cubin, meta = map(Path, _lean._paths("k"))
    assert str(cubin).startswith(str(store))
    cubin.write_bytes(b"short")                          # truncated: its size disagrees
    assert _lean.load("k") is None
    _lean.save("k", _fake_dispatcher())
    assert _lean.load("k") is not None
    doc = json.loads(meta.read_text())
    doc["key"] = "other"                                  # a digest collision's entry
    meta.write_text(json.dumps(doc))
    assert _lean.load("k") is None


def test_store_folder_follows_sources_versions_and_device(store, monkeypatch):
    from s2g import _numba
    from s2g.variants import _driver
    a = _lean.version()
    monkeypatch.setattr(_numba, "SOURCES", "stamp-b")            # an edit of s2g
    b = _lean.version()
    monkeypatch.setattr(_driver, "device_attribute", lambda name: 8)   # another GPU
    c = _lean.version()
    assert len({a, b, c}) == 3
    monkeypatch.setattr(_numba, "SOURCES", None)                  # no disk cache
    assert _lean.store_dir() is None and _lean.load("k") is None


def test_a_new_store_folder_prunes_all_but_the_newest_others(store, monkeypatch):
    """An edit or upgrade makes a new version folder: the older ones do not pile up (the
    KEEP_VERSIONS newest stay, this one among them); a folder that exists prunes nothing."""
    from s2g import _numba
    root = Path(_lean.store_dir()).parent
    for k in range(6):                                  # six older versions, oldest first
        d = root / f"old{k}"
        d.mkdir(parents=True)
        (d / "x.cubin").write_bytes(b"x")
        os.utime(d, (1000 + k, 1000 + k))
    _lean.save("k", _fake_dispatcher())
    kept = sorted(p.name for p in root.iterdir())
    assert kept == sorted(["old3", "old4", "old5", Path(_lean.store_dir()).name])
    assert _lean.load("k") is not None
    (root / "old9").mkdir()
    _lean.save("k2", _fake_dispatcher())                # same folder: nothing pruned
    assert len(list(root.iterdir())) == 5
    monkeypatch.setattr(_numba, "SOURCES", "stamp-z")  # an edit: a new folder, pruned again
    _lean.save("k", _fake_dispatcher())
    assert len(list(root.iterdir())) == _lean.KEEP_VERSIONS


def test_store_ignores_a_dispatcher_of_several_signatures(store):
    d = _fake_dispatcher()
    d.overloads[("other",)] = d.overloads[("sig",)]
    assert _lean.save("k", d) is None


def test_lean_path_is_the_default():
    from s2g import config
    assert config._BY_NAME["lean_cuda"].default is True


def test_a_stored_cubin_the_driver_refuses_is_stored_again(store, monkeypatch):
    """A stored entry whose cubin the driver will not load (damaged, written for another
    driver) is compiled and stored again, not an error."""
    from s2g.variants import _driver
    loaded = []

    class FakeKernel:
        def __init__(self, image, entry, spec):
            if image == b"bad":
                raise RuntimeError("CUDA_ERROR_INVALID_IMAGE")
            loaded.append(image)

    monkeypatch.setattr(_driver, "Kernel", FakeKernel)
    monkeypatch.setattr(_lean, "_STATE", [True])
    monkeypatch.setattr(_lean, "_KERNELS", {})
    _lean.save("k", _fake_dispatcher(image=b"bad"))
    builds = []
    k = _lean.kernel("k", lambda: builds.append(1) or _fake_dispatcher(image=b"good"))
    assert isinstance(k, FakeKernel) and builds == [1] and loaded == [b"good"]
    assert _lean.load("k")[0] == b"good"                 # the store holds the new one
    monkeypatch.setattr(_lean, "_KERNELS", {})
    _lean.kernel("k", lambda: builds.append(2))           # next process: loaded, not built
    assert builds == [1] and loaded == [b"good", b"good"]


def test_off_path_is_numba(monkeypatch):
    """Knob off or the simulator: numba.cuda and the factories' own dispatchers."""
    from s2g import config
    config.configure(lean_cuda=False)
    monkeypatch.setattr(_lean, "_STATE", [])
    assert not _lean.active()
    built = object()
    assert _lean.kernel("any", lambda: built) is built
    from numba import cuda
    assert _lean.api() is cuda
    monkeypatch.setattr(_lean, "_STATE", [])
    monkeypatch.setenv("S2G_CONFIG", "lean_cuda=1")
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    config.reset()
    assert config.settings().lean_cuda and not _lean.active()
    from s2g.variants import _driver
    monkeypatch.setattr(_lean, "_STATE", [])
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "0")
    monkeypatch.setattr(_driver, "lib", lambda: object())
    assert _lean.active()                      # knob on, a driver, no simulator: lean

    def no_driver():
        raise OSError("libcuda.so.1: cannot open shared object file")
    monkeypatch.setattr(_driver, "lib", no_driver)
    monkeypatch.setattr(_lean, "_STATE", [])
    assert not _lean.active()                  # no driver (CI, a CPU host): numba's path


def test_kernel_modules_import_without_numba_cuda():
    """The GPU run's modules import without numba.cuda (its kernels' device functions are
    made when they compile: _lean.compile_module)."""
    code = ("import sys, importlib\n"
            "from s2g.plan import GPU_RUN_MODULES\n"
            "mods = GPU_RUN_MODULES + ('s2g.seeded.chains_gpu', 's2g.seeded.windows_gpu',"
            " 's2g.variants.fast.wtables_gpu', 's2g.trace.gpu_summary', 's2g.seeded.copies',"
            " 's2g.variants.fast.driver', 's2g.variants.registry', 's2g.variants._devpool',"
            " 's2g.trace.gpu', 's2g.trace.gpu_chunk', 's2g.trace.long.launch',"
            " 's2g.trace.long.prune', 's2g.trace.long.programs_gpu', 's2g.trace.long.plan')\n"
            "for m in mods:\n"
            "    importlib.import_module(m)\n"
            "    assert 'numba.cuda' not in sys.modules, m\n"
            "print('ok')\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=300, env={**os.environ, "S2G_CONFIG": "lean_cuda=1"})
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stdout + p.stderr


def test_warmup_probes_the_store_for_long_kernels(store, monkeypatch):
    """On the lean path warm-up asks the store (not Numba's cache, which would import
    numba.cuda) whether the long-window kernels are compiled: cold until the rounds and
    the walk kernel are both stored."""
    from s2g import warmup
    from s2g.trace.long import launch, plan
    monkeypatch.setattr(_lean, "_STATE", [True])
    task = {"kind": "long_kernel", "key": (1, 1, 0)}
    assert warmup.cold(task)
    _lean.save(launch._lean_key((plan.S, True, True, False)), _fake_dispatcher())
    assert warmup.cold(task)                              # the walk kernel still missing
    _lean.save("long.walk", _fake_dispatcher())
    assert not warmup.cold(task)
    assert warmup.cold({"kind": "long_kernel", "key": (1, 1, 1)})      # pruned: another


def test_long_kernels_go_through_the_store(monkeypatch):
    """Each long-window kernel factory asks :func:`_lean.kernel` under its own key."""
    from s2g.trace.long import launch, programs_gpu, prune
    keys = []
    monkeypatch.setattr(_lean, "kernel", lambda key, build: keys.append(key) or key)
    monkeypatch.setattr(launch, "_WALK", None)
    monkeypatch.setattr(launch, "_KERNELS", {})
    monkeypatch.setattr(programs_gpu, "_KERNEL", [])
    monkeypatch.setattr(prune, "_RANGES", [])
    launch.get_walk_kernel()
    launch.get_kernel(8, True, True, False)
    launch.get_kernel(8, True, True, True)
    programs_gpu.kernel()
    prune.ranges_kernel()
    assert len(set(keys)) == 5 and keys[0] == "long.walk"
    assert keys[-2:] == ["long.spread", "long.ranges"]


def test_compile_module_makes_device_functions_once():
    g = {"__name__": "m"}

    def helper(x):
        return x + 1
    helper.__module__ = "m"
    g["helper"] = _lean.device(helper)
    g["plain"] = len
    jit = _lean.compile_module(g)
    from numba import cuda
    assert jit is cuda.jit and g["cuda"] is cuda
    assert g["helper"] is not helper and g["plain"] is len
    first = g["helper"]
    _lean.compile_module(g)
    assert g["helper"] is first


def digest(res) -> str:
    """A seeded batch result's scores, end cells, MAPQ and tracebacks, hashed."""
    h = hashlib.sha256()
    for f in ("score", "end_i", "end_j", "mapq"):
        h.update(np.ascontiguousarray(getattr(res, f)).tobytes())
    h.update(repr(list(res.tracebacks)).encode())
    return h.hexdigest()


_CHILD = """
import sys
sys.path.insert(0, {here!r})
import s2g
from s2g.index import build_index
from s2g.seeded import SeededAligner
from s2g.scoring import Scoring
from test_lean import digest
g = s2g.load_graph({gfa!r})
reads = s2g.read_reads({fq!r})
from s2g.scoring import Mode
gpu = SeededAligner(g, build_index(g), Scoring(), Mode.parse("local"), device="gpu")
res = gpu.align_batch(reads)
gpu.traceback(reads, res)
print(digest(res), "numba.cuda" in sys.modules)
"""


@pytest.mark.gpu
@pytest.mark.parametrize("read_len,n_reads", [(150, 3000), (6000, 40)],
                         ids=["short", "long"])
def test_lean_gpu_run_equals_the_cpu_and_skips_numba_cuda(tmp_path, read_len, n_reads):
    """On a GPU: a seeded run with ``lean_cuda`` (the first stores its cubins, the second
    launches them) gives the CPU path's scores, end cells, MAPQ and tracebacks, and the
    second never imports numba.cuda: short reads (the window kernels) and long ones (the
    long-window kernels, s2g.trace.long)."""
    import s2g
    from s2g.index import build_index
    from s2g.scoring import Mode, Scoring
    from s2g.seeded import SeededAligner
    from s2g.simulate import simulate
    gfa, fq, _ = simulate(str(tmp_path / "s"), total_bases=200_000, n_reads=n_reads,
                          read_len=read_len, seed=5)
    g = s2g.load_graph(gfa)
    reads = s2g.read_reads(fq)
    cpu = SeededAligner(g, build_index(g), Scoring(), Mode.parse("local"))
    want = cpu.align_batch(reads)
    cpu.traceback(reads, want)
    env = {**os.environ, "S2G_CONFIG": "lean_cuda=1"}
    runs = []
    for _ in range(2):
        p = subprocess.run([sys.executable, "-c", _CHILD.format(here=str(HERE), gfa=gfa,
                                                                  fq=fq)],
                           capture_output=True, text=True, timeout=900, env=env)
        assert p.returncode == 0, p.stdout + p.stderr
        runs.append(p.stdout.split())
    assert runs[0][0] == digest(want) and runs[1][0] == digest(want)
    assert runs[1][1] == "False", "the second lean run imported numba.cuda"


def test_cubin_bytes_of_each_form(tmp_path):
    """numba-cuda 0.30 returns cuda.core's ObjectCode (bytes in ``code``, or a file's path);
    older versions bytes (the device run of session 68 failed on the first)."""
    assert _lean.cubin_bytes(b"abc") == b"abc"
    assert _lean.cubin_bytes(types.SimpleNamespace(code=b"\x7fELF")) == b"\x7fELF"
    p = tmp_path / "k.cubin"
    p.write_bytes(b"on disk")
    assert _lean.cubin_bytes(types.SimpleNamespace(code=str(p))) == b"on disk"
