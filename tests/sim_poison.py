"""Shared memory poisoned before every block of the CUDA simulator (the *_cudasim_check.py
scripts call :func:`install` after setting NUMBA_ENABLE_CUDASIM=1).

A GPU block finds shared memory as the SM's last block left it; the simulator runs a
launch's blocks one after another over the same arrays (zeroed, or left by the block
before). Poisoning every shared array before every block (0x35 in every byte: large
values) makes a kernel that reads shared memory before writing it give wrong results
there too. Session 20: the long-window kernel's merges read rows past a window's last
row so, and giant scores came out on the H100 only. ``S2G_SIM_POISON=0``: as the
simulator is.

:func:`install` also makes the simulator's block loop sleep 0.2 ms between polls of its
threads: numba-cuda 0.30.4's ``BlockManager.run`` spins on ``is_alive`` while the
block's threads run, holding the GIL for whole switch intervals; the seeded long-window
check (``seeded_cudasim_check.py 2 long``) took 231 s with the spin and 14 s with the
sleep, same output (2026-11-28, 2-core VM). Barriers are resolved as before.
"""
import os
import time

import numpy as np


def _polite_run(self, grid_point, *args):
    """numba-cuda 0.30.4's ``BlockManager.run`` with a short sleep while threads run."""
    from numba.cuda.simulator import kernel as simk
    threads, livethreads, blockedthreads = set(), set(), set()
    for block_point in np.ndindex(*self._block_dim):
        def target():
            self._f(*args)
        t = simk.BlockThread(target, self, grid_point, block_point, self._debug)
        t.start()
        threads.add(t)
        livethreads.add(t)
    while livethreads:
        for t in livethreads:
            if t.syncthreads_blocked:
                blockedthreads.add(t)
            elif t.exception:
                for t_other in threads:
                    t_other.abort = True
                    t_other.syncthreads_blocked = False
                    t_other.syncthreads_event.set()
                raise t.exception[0].with_traceback(t.exception[1])
        if livethreads == blockedthreads:
            for t in blockedthreads:
                t.syncthreads_blocked = False
                t.syncthreads_event.set()
            blockedthreads = set()
        else:
            time.sleep(0.0002)          # let the block's threads run (the GIL)
        livethreads = set([t for t in livethreads if t.is_alive()])
    for t in threads:
        if t.exception:
            raise t.exception[0].with_traceback(t.exception[1])


def install():
    from numba.cuda.simulator import kernel as simk
    if hasattr(simk.BlockManager, "run") and hasattr(simk, "BlockThread"):
        simk.BlockManager.run = _polite_run
    if os.environ.get("S2G_SIM_POISON", "1") == "0":
        return

    block_run = simk.BlockManager.run

    def poisoned(self, grid_point, *args):
        shared = getattr(self._f.__globals__.get("cuda"), "_shared", None)
        if getattr(shared, "_dynshared", None) is not None:
            shared._dynshared[:] = 0x35
            for arr in getattr(shared, "_allocations", {}).values():
                arr.view(np.uint8)[...] = 0x35
        return block_run(self, grid_point, *args)

    simk.BlockManager.run = poisoned
