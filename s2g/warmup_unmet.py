"""Warm-up tasks whose probe a successful worker left cold (:mod:`s2g.warmup`).

A run starts a worker for each planned task whose probed functions have no cache entry, and
its stages wait for them. A probe that names a function the task's worker never compiles
(the run never calls it) stays cold for ever: every warm run then starts that worker and
waits for it. It happened three times (long reads' ``summarize_sel``, session 35;
``walk_bounds``, session 39; short reads' ``gpu_program.sizes`` on the GPU, session 69: each
warm run ~1.6-3.5 s slower, and each said "compiling (first run)"). So where a worker ends
well and its task's probe is still cold, the task is remembered here, for these sources
(:data:`s2g._numba.SOURCES`), and later runs neither wait for it nor say they compile.
An edit of s2g forgets them (another stamp).
"""
from __future__ import annotations

import json
import os
import threading

_LOCK = threading.Lock()
_FILE = "warmup-unmet.json"


def _path():
    from ._numba import SOURCES
    from .variants.codegen import _cache_dir
    d = _cache_dir() if SOURCES is not None else None
    return None if d is None else os.path.join(d, _FILE)


def _read(path) -> dict:
    try:
        with open(path) as fh:
            got = json.load(fh)
        return got if isinstance(got, dict) else {}
    except (OSError, ValueError):
        return {}


def known() -> set:
    """Names (:func:`s2g.warmup.task_name`) of the tasks remembered for these sources."""
    from ._numba import SOURCES
    path = _path()
    return set() if path is None else set(_read(path).get(SOURCES, []))


def remember(names) -> None:
    """Add ``names`` to the tasks remembered for these sources (older sources' dropped;
    written to a temporary name, then renamed; a folder that cannot be written: nothing)."""
    from ._numba import SOURCES
    path = _path()
    if path is None or not names:
        return
    with _LOCK:
        have = set(_read(path).get(SOURCES, [])) | set(names)
        tmp = f"{path}.{os.getpid()}.{threading.get_ident()}"
        try:
            with open(tmp, "w") as fh:
                json.dump({SOURCES: sorted(have)}, fh)
            os.replace(tmp, path)
        except OSError:
            pass
