"""Shared memory poisoned before every block of the CUDA simulator (the *_cudasim_check.py
scripts call :func:`install` after setting NUMBA_ENABLE_CUDASIM=1).

A GPU block finds shared memory as the SM's last block left it; the simulator runs a
launch's blocks one after another over the same arrays (zeroed, or left by the block
before). Poisoning every shared array before every block (0x35 in every byte: large
values) makes a kernel that reads shared memory before writing it give wrong results
there too. Session 20: the long-window kernel's merges read rows past a window's last
row so, and giant scores came out on the H100 only. ``S2G_SIM_POISON=0``: as the
simulator is.
"""
import os

import numpy as np


def install():
    if os.environ.get("S2G_SIM_POISON", "1") == "0":
        return
    from numba.cuda.simulator import kernel as simk

    block_run = simk.BlockManager.run

    def poisoned(self, grid_point, *args):
        shared = getattr(self._f.__globals__.get("cuda"), "_shared", None)
        if getattr(shared, "_dynshared", None) is not None:
            shared._dynshared[:] = 0x35
            for arr in getattr(shared, "_allocations", {}).values():
                arr.view(np.uint8)[...] = 0x35
        return block_run(self, grid_point, *args)

    simk.BlockManager.run = poisoned
