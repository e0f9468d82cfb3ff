"""Variant registry: a table, not a class tree (STYLE.md habit 2; sgkit's distance api).

Each entry names a module that exposes the common contract::

    align_batch(graph: FlatGraph, reads: ReadBatch, scoring: Scoring, mode: Mode,
                traceback: bool = False) -> BatchResult

Modules are imported only when a variant is used, so ``import s2g`` and
``s2g --help`` never touch CUDA (STYLE.md habit 3).
"""
from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass

from ..errors import S2GError


@dataclass(frozen=True)
class VariantInfo:
    name: str
    module: str
    device: str       # "cpu" or "cuda"
    summary: str
    limits: str
    rank: int         # larger = preferred by --variant auto among those that can run
    auto: bool = True  # False: runnable by name only (not yet verified exact on a GPU)


REGISTRY: dict = {}


def register(info: VariantInfo) -> None:
    REGISTRY[info.name] = info


register(VariantInfo(
    "v0", "s2g.variants.v0_cpu", "cpu",
    "Sequential CPU baseline and correctness oracle: one read at a time, nodes in "
    "topological order, one column at a time, int64 scores.",
    "none beyond memory: 16 x (n_slots + 3) x (read length + 1) bytes per read", 0))
register(VariantInfo(
    "cpu", "s2g.variants.cpu_parallel", "cpu",
    "V0's kernel on every core (Numba prange over reads); identical results.",
    "as v0, per thread", 10))
register(VariantInfo(
    "simd", "s2g.variants.simd", "cpu",
    "V0's recurrence with reads in SIMD lanes: length-bucketed groups of 64 int16 lanes "
    "(32 int32, 16 int64 by the score bound), [row][lane] arrays vectorised by LLVM, "
    "prange over groups; same scores and end cells as V0; also aligns seeded windows.",
    "(2 x n_slots + 7) x (longest read + 1) x lanes cells per group in flight, per thread", 15))

# GPU variants (modules owned by their issues; each module docstring has the details)
register(VariantInfo(
    "v1", "s2g.variants.v1_antidiag", "cuda",
    "Anti-diagonal tiling, naive: one thread per cell, H/E/F fully in global memory, "
    "one kernel launch per anti-diagonal.",
    "3 full (m+1) x N int32 matrices (longest read) must fit in free device memory; one launch per anti-diagonal per read", 1))
register(VariantInfo(
    "v2", "s2g.variants.v2_rolling", "cuda",
    "Rolling anti-diagonal buffers plus a node_bound store of predecessor columns; "
    "all reads of a batch advance together, one host-driven launch per anti-diagonal.",
    "(9 + 2 x n_slots) x 4 bytes per read base in global memory; launch-bound", 2))
register(VariantInfo(
    "v3", "s2g.variants.v3_coop", "cuda",
    "One cooperative kernel, grid-wide barrier per anti-diagonal, three rotating "
    "anti-diagonal buffers, strided rows, atomic max of the packed best cell.",
    "grid limited by cooperative-launch occupancy (strided rows cover any batch); "
    "one grid barrier per anti-diagonal", 3))
register(VariantInfo(
    "v4", "s2g.variants.v4_interread", "cuda",
    "One thread block per read, rolling buffers and node_bound in shared memory, "
    "block barrier per anti-diagonal; long reads in passes.",
    "(7 + 2 x n_slots) x block x 4 bytes of shared memory (<= 48 KiB); reads longer "
    "than the block (<= 256) take extra passes over the graph", 4))
register(VariantInfo(
    "fast", "s2g.variants.fast", "cuda",
    "Production fast path: groups of 4-8 lanes per read inside a warp (in local mode two "
    "reads, scores in 16-bit halves, s16x2 DPX instructions), K rows per lane in "
    "registers, columns streamed as a wavefront with shfl_up_sync, lane-private "
    "node_bound slots (shared memory first); traceback on the GPU from its end cells. "
    "Exact against the CPU oracle on the H200; 3,129 GCUPS at 150 bp on a 100 kbp "
    "SNP graph (bench/NOTES.md, run 7).",
    "16-bit pairs where the score bound allows (local mode), else int32, else the cpu "
    "variant; long reads in strips of 192 rows with an 8 x columns byte buffer per "
    "group in flight", 20))


def list_variants():
    return list(REGISTRY.values())


def get_variant(name: str):
    """The module of variant ``name`` (imported now), or a clear error."""
    info = REGISTRY.get(name)
    if info is None:
        raise S2GError(f"unknown variant {name!r}; registered: {', '.join(REGISTRY)}")
    ok, why = can_run(info)
    if not ok:
        raise S2GError(f"variant {name!r} cannot run here: {why}")
    return importlib.import_module(info.module)


_CUDA_STATE = None


def cuda_available():
    """(True, device name) or (False, reason); imports numba.cuda only when called."""
    global _CUDA_STATE
    if _CUDA_STATE is None:
        try:
            from numba import cuda
            if cuda.is_available():
                # the simulator's FakeCUDADevice has no name in numba-cuda 0.30
                name = getattr(cuda.get_current_device(), "name", None) or "CUDA simulator"
                _CUDA_STATE = (True, name.decode() if isinstance(name, bytes) else str(name))
            else:
                _CUDA_STATE = (False, "no CUDA GPU or driver found")
        except Exception as exc:  # a broken CUDA install must not break CPU use
            _CUDA_STATE = (False, f"CUDA unavailable ({type(exc).__name__}: {exc})")
    return _CUDA_STATE


def can_run(info: VariantInfo):
    if importlib.util.find_spec(info.module) is None:
        return False, f"module {info.module} is not installed"
    if info.device == "cpu":
        return True, "CPU"
    return cuda_available()


def pick_auto() -> str:
    """The fastest registered variant this machine can run."""
    best = max((v for v in REGISTRY.values() if v.auto and can_run(v)[0]), key=lambda v: v.rank)
    return best.name
