"""The configuration object (s2g/config.py, issue #41): defaults, the environment
(``S2G_CONFIG`` and the documented variables, read once), ``configure()``, and
``s2g info --config``. Each test sets the variables it needs with monkeypatch and calls
``config.reset()`` (conftest's ``_knobs_per_test`` puts the settings back after it)."""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import warnings

import pytest

from cli_helpers import main as run_cli, one_error
from conftest import REPO

from s2g import config
from s2g.errors import S2GError


@pytest.fixture
def env(monkeypatch):
    """A clean environment (no S2G_* variable), read afresh; returns a setter."""
    for var in list(os.environ):
        if var.startswith("S2G_"):
            monkeypatch.delenv(var)
    config.reset()

    def set_env(**values):
        for var, v in values.items():
            monkeypatch.setenv(var, v)
        config.reset()
    return set_env


def test_defaults(env):
    s = config.settings()
    for k in config.KNOBS:
        assert getattr(s, k.name) == k.default and s.source(k.name) == "default", k.name
        assert isinstance(getattr(s, k.name), k.kind) and k.when in ("run", "compile")
        assert k.doc and "\n" not in k.doc
    assert len({k.name for k in config.KNOBS}) == len(config.KNOBS)
    with pytest.raises(AttributeError, match="no knob 'nope'"):
        s.nope
    with pytest.raises(AttributeError, match="read-only"):
        s.fast_block = 1
    assert config.settings() is s                      # read once


def test_s2g_config_parsing(env):
    env(S2G_CONFIG=" fast_block=256, long_log=yes ,,LONG_STRIP=16,gpu_tb_max_cells=1_024,"
                   "fast_nsh=8,long_chunk_bytes=0x100")
    s = config.settings()
    assert (s.fast_block, s.long_log, s.long_strip, s.gpu_tb_max_cells) == (256, True, 16, 1024)
    assert s.fast_nsh == "8" and s.long_chunk_bytes == 256
    assert s.source("fast_block") == "S2G_CONFIG" and s.source("fast_pipe") == "default"
    env(S2G_CONFIG="fast_pipe=off,tb_inline=0,devpool=TRUE")
    s = config.settings()
    assert (s.fast_pipe, s.tb_inline, s.devpool) == (False, False, True)
    env(S2G_CONFIG="long_cand_ratio=0.25,gpu_pending_frees=2e-2")     # (floats were text)
    s = config.settings()
    assert (s.long_cand_ratio, s.gpu_pending_frees) == (0.25, 0.02)


def test_gpu_pending_frees_sets_numbas_deferred_frees():
    """Knob gpu_pending_frees: Numba's share of the GPU's memory held in deferred frees,
    set whether numba.cuda's config loaded before s2g or not; 0.02 by default, 0: Numba's
    own."""
    import subprocess
    import sys
    code = ("import numba.cuda, s2g; from numba.cuda.core import config; "
            "print(config.CUDA_DEALLOCS_RATIO)")
    for cfg, want in (("gpu_pending_frees=0.05", "0.05"), ("", "0.02"),
                      ("gpu_pending_frees=0", "0.2")):
        env = dict(os.environ, S2G_CONFIG=cfg)
        env.pop("NUMBA_CUDA_MAX_PENDING_DEALLOCS_RATIO", None)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True).stdout.split()
        assert out[-1] == want


@pytest.mark.parametrize("text, why", [
    ("bogus=1", "'bogus=1' is not name=value of a knob (s2g info --config lists them)"),
    ("fast_block", "'fast_block' is not name=value of a knob"),
    ("fast_block=big", "fast_block: 'big' is not an integer"),
    ("long_cand_ratio=half", "long_cand_ratio: 'half' is not a number"),
    ("long_log=maybe", "long_log: 'maybe' is not a boolean (1/0, true/false)"),
    ("long_strip=12", "long_strip must be 8, 16, 24 or 32"),
    ("vector_width=128", "vector_width must be 256 or 512"),
    ("prewarm=2", "prewarm must be auto, 0 or 1"),
    ("fast_exchange=smem", "fast_exchange must be shfl or shared"),
])
def test_s2g_config_errors_are_one_line(env, text, why):
    env(S2G_CONFIG=text)
    with pytest.raises(S2GError) as exc:
        config.settings()
    assert why in str(exc.value) and "\n" not in str(exc.value)


def test_s2g_config_error_from_the_cli(env, capsys):
    """s2g stops at once with the one-line error (exit 1), whatever the command."""
    env(S2G_CONFIG="fast_block=big")
    code, out, err = run_cli(capsys, "variants")
    one_error(code, err, "S2G_CONFIG", "fast_block: 'big' is not an integer")
    assert out == ""


def test_documented_variables(env):
    env(S2G_CACHE_DIR="/tmp/k,1", S2G_NO_CACHE="yes", S2G_PREWARM="1", S2G_DEBUG="1")
    s = config.settings()
    assert (s.cache_dir, s.no_cache, s.prewarm, s.debug) == ("/tmp/k,1", True, "1", True)
    assert [s.source(n) for n in ("cache_dir", "no_cache", "prewarm", "debug")] == [
        "S2G_CACHE_DIR", "S2G_NO_CACHE", "S2G_PREWARM", "S2G_DEBUG"]
    env(S2G_NO_CACHE="0", S2G_PREWARM="", S2G_DEBUG="")      # set but off; empty: auto
    s = config.settings()
    assert (s.no_cache, s.prewarm, s.debug) == (False, "auto", False)
    env(S2G_PREWARM="sometimes")
    with pytest.raises(S2GError, match="prewarm must be auto, 0 or 1"):
        config.settings()
    env(S2G_PREWARM="1", S2G_CONFIG="prewarm=0")          # S2G_CONFIG is read last
    assert config.settings().prewarm == "0"
    assert config.settings().source("prewarm") == "S2G_CONFIG"


def test_legacy_variable_warns_with_its_new_spelling(env):
    env(S2G_FAST_BLOCK="256", S2G_NOT_A_KNOB="1")
    with pytest.warns(UserWarning) as rec:
        s = config.settings()
    msgs = [str(w.message) for w in rec]
    assert msgs == ["S2G_FAST_BLOCK is no longer read; use S2G_CONFIG=fast_block=256"]
    assert s.fast_block == 128                            # not read


def test_configure_validates_and_warns_for_a_compile_knob_used(env):
    with pytest.raises(ValueError, match="no knob 'fast_blocks'"):
        config.configure(fast_blocks=1)
    with pytest.raises(ValueError, match="fast_block: '256' is not an integer"):
        config.configure(fast_block="256")
    with pytest.raises(ValueError, match="is not a boolean"):
        config.configure(long_log=1)
    with pytest.raises(ValueError, match="long_strip must be"):
        config.configure(long_strip=40)
    s = config.configure(fast_pipe_p=4, long_log=True)        # run knobs: no warning
    assert s is config.settings() and s.fast_pipe_p == 4 and s.long_log
    assert s.source("fast_pipe_p") == "configure()"
    assert "vector_width" in config._COMPILED                  # s2g._numba read it at import
    with pytest.warns(UserWarning, match="vector_width is fixed when its kernels are compiled"):
        config.configure(vector_width=256 if s.vector_width == 512 else 512)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        config.configure(vector_width=config.settings().vector_width)   # unchanged: quiet


def test_compile_time_never_raises(env, monkeypatch):
    """A kernel module's import reads its compile knobs without failing: a bad
    S2G_CONFIG gives the defaults there, and the error comes at the first settings()."""
    monkeypatch.setattr(config, "_COMPILED", set(config._COMPILED))
    env(S2G_CONFIG="long_strip=16")
    assert config.compile_time("long_strip") == 16
    env(S2G_CONFIG="long_strip=16,bogus")
    assert config.compile_time("long_strip") == 32
    with pytest.raises(S2GError):
        config.settings()
    env(S2G_CONFIG="long_strip=16")
    with pytest.warns(UserWarning, match="long_strip is fixed when its kernels are compiled"):
        config.configure(long_strip=24)
    assert config.compile_time("long_strip") == 24


def test_info_config_text_and_json(env, capsys):
    env(S2G_CONFIG="fast_block=256", S2G_PREWARM="0")
    code, out, err = run_cli(capsys, "info", "--config")
    assert code == 0 and err == []
    rows = out.splitlines()
    assert len(rows) == len(config.KNOBS)
    by_name = {r.split()[0]: r.split() for r in rows}
    assert by_name["fast_block"][1:4] == ["256", "S2G_CONFIG", "compile"]
    assert by_name["prewarm"][1:4] == ["0", "S2G_PREWARM", "run"]
    assert by_name["long_log"][1:4] == ["False", "default", "run"]
    code, out, _ = run_cli(capsys, "info", "--config", "--json")
    doc = json.loads(out)
    assert code == 0 and list(doc) == [k.name for k in config.KNOBS]
    assert doc["fast_block"] == {"value": 256, "source": "S2G_CONFIG", "when": "compile",
                                 "doc": "fast: threads per block"}
    code, _, err = run_cli(capsys, "info")
    assert code == 2 and "a GRAPH to describe, or --config" in err[-1]


IMPORT_ALL = """
import importlib, pkgutil, sys, warnings
warnings.filterwarnings("error", ".*no longer read")   # its warning waits for first use
import s2g
from s2g import config
for m in pkgutil.walk_packages(s2g.__path__, "s2g."):
    if not m.name.endswith("__main__"):
        importlib.import_module(m.name)
print(" ".join(sorted(config._COMPILED)))
try:
    config.settings()
except s2g.S2GError as exc:
    print("error at first use:", exc)
"""


def test_importing_every_module_with_a_bad_config_does_not_raise():
    """Nothing reads the settings at import but the kernel modules' compile knobs
    (compile_time, which does not fail): a bad S2G_CONFIG or a legacy variable is
    reported at the first use."""
    env = dict(os.environ, S2G_CONFIG="bogus", S2G_FAST_BLOCK="3", PYTHONPATH=str(REPO))
    p = subprocess.run([sys.executable, "-c", IMPORT_ALL], capture_output=True, text=True,
                       env=env, timeout=300, cwd=str(REPO))
    assert p.returncode == 0, p.stderr
    read, error = p.stdout.splitlines()
    compile_knobs = {k.name for k in config.KNOBS if k.when == "compile"}
    assert set(read.split()) <= compile_knobs and {"no_cache", "vector_width"} <= set(read.split())
    assert error == ("error at first use: S2G_CONFIG: 'bogus' is not name=value of a knob "
                     "(s2g info --config lists them)")


def _module_level_reads():
    """(module, function) of every settings()/compile_time()/configure() call made when
    an s2g module is imported (outside any def or lambda)."""
    out = []
    for path in sorted((REPO / "s2g").rglob("*.py")):
        tree = ast.parse(path.read_text())
        todo = list(tree.body)
        while todo:
            node = todo.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                if name in ("settings", "compile_time", "configure"):
                    out.append((str(path.relative_to(REPO)), name))
            todo.extend(ast.iter_child_nodes(node))
    return out


def test_only_compile_knobs_are_read_at_import():
    reads = _module_level_reads()
    assert ("s2g/_numba.py", "compile_time") in reads
    assert [r for r in reads if r[1] != "compile_time"] == []


def test_stage_threads_knobs(env):
    """seed_threads / align_threads / tb_threads set each pipeline stage's Numba threads
    in its own thread (at most --threads); 0 leaves the stage as every stage."""
    import threading

    import numba

    import s2g
    from s2g.aligner import Aligner
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs 2 Numba threads")
    top = numba.config.NUMBA_NUM_THREADS
    g = s2g.load_graph(os.path.join(os.path.dirname(os.path.dirname(__file__)), "graphs",
                                    "example.gfa"))
    got = {}

    def probe(al, stage):
        def run():
            al._use_threads(stage)
            got[stage] = numba.get_num_threads()
        t = threading.Thread(target=run)
        t.start()
        t.join()
        return got[stage]

    al = Aligner(g, variant="simd")
    assert probe(al, "seed") == top                          # knobs at 0: untouched
    config.configure(seed_threads=1, tb_threads=top + 5)
    assert probe(al, "seed") == 1
    assert probe(al, "traceback") == top                     # capped at what Numba has
    assert probe(al, "align") == top
    al2 = Aligner(g, variant="simd", threads=1)
    config.configure(seed_threads=0, tb_threads=2)
    assert probe(al2, "traceback") == 1                      # at most --threads
    assert probe(al2, "seed") == 1


def test_loaded_loads_each_kernel_module_once_and_never_in_two_threads_at_once():
    """s2g._numba.loaded: numba-cuda's first-launch module load is not thread safe (two
    threads loading one kernel failed with "key already in dictionary: <CUlibrary>"); the
    factories load through ``loaded``, which never runs two loads at once."""
    import threading
    import time
    from s2g import _numba

    state = {"in": 0, "most": 0, "calls": 0}

    class Lib:
        def get_cufunc(self):
            state["in"] += 1
            state["most"] = max(state["most"], state["in"])
            state["calls"] += 1
            time.sleep(0.01)
            state["in"] -= 1

    class Overload:
        _codelibrary = Lib()

    class Dispatcher:
        overloads = {"a": Overload(), "b": Overload()}

    k = Dispatcher()
    threads = [threading.Thread(target=_numba.loaded, args=(k,)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert state["calls"] == 8 and state["most"] == 1
    assert _numba.loaded(k) is k
    assert _numba.loaded(object()) is not None       # the simulator's: nothing to load


def test_worker_and_cuda_knobs_are_checked(env):
    """format_workers is 1 to 16 (its stage needs a thread); cuda_early_bytes takes -1 (the
    old synchronous order of CUDA's start, for A/B runs) as well as sizes."""
    env(S2G_CONFIG="format_workers=0")
    with pytest.raises(S2GError, match="format_workers must be 1 to 16"):
        config.settings()
    env(S2G_CONFIG="format_workers=2,cuda_early_bytes=-1")
    s = config.settings()
    assert (s.format_workers, s.cuda_early_bytes) == (2, -1)


def test_a_first_compiled_call_waits_for_the_cpu_targets_start():
    """While ``start_cpu_target_soon``'s thread starts Numba's CPU target (imports that
    register types in ``typeof``'s singledispatch), a compiled function's first call in
    another thread waits for it: it typed its arguments beside those imports and failed
    with "dictionary changed size during iteration" (CI, 2026-12-08)."""
    import threading

    import numba

    from s2g import _numba
    _numba._first_calls_wait()

    @numba.njit
    def plus_one(x):
        return x + 1

    got = []
    _numba._TARGET_READY.clear()                  # as while the start thread runs
    t = threading.Thread(target=lambda: got.append(plus_one(1)), daemon=True)
    try:
        t.start()
        t.join(0.5)
        assert t.is_alive() and not got           # its first call waits
    finally:
        _numba._TARGET_READY.set()
    t.join(60)
    assert got == [2]
    assert plus_one(2) == 3                       # and later calls do not
