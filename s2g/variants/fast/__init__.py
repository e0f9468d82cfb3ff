"""fast — the production GPU path: a warp-cooperative affine POA wavefront (issue 5).

Mapping
    A *group* of ``G`` lanes (G = 4, 8, 16 or 32; several groups share a warp) aligns one
    read — in local mode two reads, one per 16-bit half of every register (the *pair
    kernel*, below). Lane ``t`` owns ``K`` consecutive read rows of the current *strip*
    of ``G*K`` rows in registers (scalars of the generated source, below). Graph
    columns stream through the group in topological order as a wavefront: at step
    ``s`` lane ``t`` computes column ``j = s - t``, then passes its
    bottom row's ``H - o - e`` and ``F`` one lane down with ``shfl_up_sync``; lane 0
    takes the row above the strip (row 0 of the mode, or the strip above). No block or
    grid barrier anywhere; groups are persistent and stride over reads sorted by
    length, so a warp's groups have equal strip counts.

    All groups of a warp sit on the same columns (lane t of every group is on column
    s - t), so a warp diverges only as much as one group: with G = 8 on a SNP graph
    (~4% node-boundary columns) about 28% of steps have a boundary lane, against
    ~73% for a 32-lane group; and 8 lanes x K = 19 rows covers a 150 bp read with
    two shuffles per 19 cells. The pair kernel uses 4 lanes x 38 rows for 150 bp
    (:func:`choose_config`): 255 registers and 8 warps per SM instead of 12, but the
    column's work is shared by 76 cells per lane and a merge column meets 4 lanes of
    a warp's steps instead of 8: 7-27% faster on every graph measured (run 7).

Modules
    :mod:`.render` the kernel's source text (recurrence, pair kernel, ends and ties),
    :mod:`.kernel` its compiled dispatchers (generated source, simulator),
    :mod:`.tables` the host tables (node_bound store, keep merges, column cuts),
    :mod:`.geometry` the launch choices (G, K, pair, ranges, shared slots, pipeline;
    long reads), :mod:`.driver` the batch driver (:func:`run_kernel`,
    :func:`align_batch`), :mod:`.constants` what they share.

Traceback
    Not in this kernel (it keeps no direction data): the driver (:mod:`s2g.aligner`)
    runs :func:`s2g.traceback.traceback_batch` from the end cells it returns; with a GPU
    that is :mod:`s2g.gpu_traceback` (each read's window, 4-bit directions, walked on
    the device), and ``s2g align`` runs it right after each batch's kernel.

Diagnostics (knobs, s2g/config.py: ``S2G_CONFIG=name=value``; bench/fast_profile.py
uses them)
    ``fast_nsh`` slots kept in shared memory (``auto``), ``fast_maxreg`` a register cap
    for ptxas, ``fast_block`` threads per block (128), ``fast_exchange=shared`` the
    simulator's exchange on a real GPU, ``fast_pair=0`` the 32-bit kernel in local mode
    too, ``fast_pipe``, ``fast_pipe_p`` and ``fast_ranges`` the long-read launches.
"""
from __future__ import annotations

from .constants import (CI_BASE, CI_KEEP, CI_MERGE, CI_SINK, CI_SLOT_SHIFT,  # noqa: F401
                        CI_VIRT, GRAPH_N, NEG_INF16, PACKED_PREDS, PIPE_MAX_GROUPS,
                        PUBLISH_EVERY, READ_PAD, SLOT_BITS, SLOT_MASK, ST_NOT_RUN, ST_OK,
                        WARP, pack16)
from .driver import BATCH_READS, PROFILE, align_batch, combine_ranges, run_kernel  # noqa: F401
from .geometry import (BIG_G, BIG_K, BIG_UNITS_PER_SM, BLOCK, BLOCKS_PER_SM,  # noqa: F401
                       BND_MEM_FRACTION, FILL_WARPS_PER_SM, K_CHOICES, LONG_G, LONG_K, MAX_K,
                       MAX_RANGES, PAIR_G, PAIR_K_CHOICES, PAIR_LONG_K, PAIR_WIDE_G, PIPE,
                       PIPE_MAX_P, PIPE_UNITS_PER_SM, SHORT_G, SMEM_BLOCK_RESERVED,
                       SMEM_PER_SM, choose_config, choose_ranges, launch_shape, pair_fits,
                       pipe_groups, plan, prmt_scores, shared_slots, sm_count)
from .kernel import (EXCHANGE, MAX_REGISTERS, compiled_source, get_kernel,  # noqa: F401
                     kernel_signature, kernel_source, shared_exchange, sim)
from .render import module_text, render  # noqa: F401
from .tables import (GraphOnDevice, column_cuts, column_ranges, column_sub,  # noqa: F401
                     column_tables, fast_slots, graph_tables, kernel_constants, kernel_slots,
                     mismatch_word, row0_global)


__all__ = ["align_batch", "kernel_source", "kernel_signature", "get_kernel", "run_kernel",
           "choose_config", "plan"]
