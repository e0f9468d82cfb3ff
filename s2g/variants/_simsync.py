"""Group barriers for the CUDA simulator's form of the pipelined `fast` kernel.

The simulator runs a block's threads as Python threads and has no warp primitives; its
``syncthreads`` waits for every live thread of the block. In the pipelined kernel
(:mod:`s2g.variants.fast`, ``pipe``) the groups of a block run different strips and one
group may wait for another's progress, so a block-wide barrier per step would deadlock:
each group synchronises by itself here. Plain Python (not a device function), called
from the simulated kernel; never used on a GPU.
"""
from __future__ import annotations

import threading
import time
import weakref

_LOCK = threading.Lock()
_BARRIERS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
TIMEOUT = 120.0              # a thread that died leaves the others a clear error


def gsync(G: int) -> None:
    """Barrier of the ``G`` consecutive threads of the caller's group (its block)."""
    th = threading.current_thread()
    key = (tuple(th.blockIdx), th.thread_id // G, G)
    with _LOCK:
        bars = _BARRIERS.setdefault(th._manager, {})
        bar = bars.get(key)
        if bar is None:
            bar = bars[key] = threading.Barrier(G, timeout=TIMEOUT)
    bar.wait()


def pause() -> None:
    """Let the other simulated threads run while this one polls a progress counter."""
    time.sleep(0)
