"""What the modules of the ``fast`` kernel share: the warp, the pipelined kernel's shared
words, the column info word's layout, the pair kernel's 16-bit sentinel and the read
status codes. (The launch choices and their measured reasons: :mod:`.geometry`.)
"""
from __future__ import annotations

WARP = 32
PIPE_MAX_GROUPS = 32         # shared words per block for the pipeline's counters
PUBLISH_EVERY = 32           # a producing group publishes its progress every 32 columns

# column info word: bits 0-2 graph base (N -> 5, never equal to a read code),
# bit 3 merge (first column of a non-simple node), bit 4 virtual (first column of a
# source node), bit 5 sink (last column of a sink node), bit 6 keep (a merge column one
# of whose predecessors is the previous column: its rows stay in registers and only the
# other predecessors come from slots), bits 8.. slot + 1 to store
CI_BASE = 7
CI_MERGE = 1 << 3
CI_VIRT = 1 << 4
CI_SINK = 1 << 5
CI_KEEP = 1 << 6
CI_SLOT_SHIFT = 8
GRAPH_N = 5
READ_PAD = 6                 # code of rows past the read's end (never matches)
# mword of a merge column: up to PACKED_PREDS predecessor slots + 1, SLOT_BITS each
# (one load, prefetched with colinfo); -1: read them from the CSR (mptr, mslot)
SLOT_BITS = 10
SLOT_MASK = (1 << SLOT_BITS) - 1
PACKED_PREDS = 3

ST_OK, ST_NOT_RUN = 0, 1

#: the 16-bit sentinel of the pair kernel (every real value of local mode is >= -o-e-e)
NEG_INF16 = -16384


def pack16(v: int) -> int:
    """``v`` in both 16-bit halves of a signed 32-bit word."""
    w = (v & 0xFFFF) * 0x10001
    return w - (1 << 32) if w >= 1 << 31 else w
