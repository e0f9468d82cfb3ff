"""A kernel's dynamic shared-memory limit (``s2g.variants.codegen.allow_shared``): it is an
attribute of the function, not of a launch, so once a thread has been allowed N bytes no
other thread may lower it before that thread launches (a window launch failed with
CUDA_ERROR_INVALID_VALUE on a GPU, bench/results/nvidia-h100/seeded/s55/). A fake driver
here, no GPU: the limit only rises, the driver is called once per new maximum, and a new
kernel object never inherits another's memo."""
from __future__ import annotations

import random
import threading
import types

import pytest

from s2g.variants import codegen


class _FakeDriver:
    def __init__(self):
        self.attr = {}                    # (handle, device) -> bytes
        self.calls = 0
        self.lock = threading.Lock()

    def cuKernelSetAttribute(self, attr, value, handle, device):  # noqa: N802 - CUDA's name
        with self.lock:
            self.calls += 1
            self.attr[(handle, device)] = value


def _kernel(handle):
    cufunc = types.SimpleNamespace(handle=handle, device=types.SimpleNamespace(id=0))
    lib = types.SimpleNamespace(get_cufunc=lambda: cufunc)
    return types.SimpleNamespace(overloads={"sig": types.SimpleNamespace(_codelibrary=lib)})


@pytest.fixture
def fake(monkeypatch):
    from numba.cuda.cudadrv import driver as drv
    d = _FakeDriver()
    attr = types.SimpleNamespace(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES=8)
    monkeypatch.setattr(drv, "binding", types.SimpleNamespace(CUfunction_attribute=attr),
                        raising=False)
    monkeypatch.setattr(drv, "driver", types.SimpleNamespace(cuKernelSetAttribute=d.cuKernelSetAttribute))
    monkeypatch.setattr(codegen, "_SHARED", {})
    return d


def test_the_limit_only_rises(fake):
    k = _kernel(1)
    assert codegen.allow_shared(k, 60_000) and fake.attr[(1, 0)] == 60_000
    assert codegen.allow_shared(k, 50_000) and fake.attr[(1, 0)] == 60_000
    assert fake.calls == 1                       # a smaller request asks the driver nothing
    assert codegen.allow_shared(k, 90_000) and fake.attr[(1, 0)] == 90_000
    assert fake.calls == 2


def test_a_new_kernel_gets_its_own_limit_even_at_an_old_id(fake):
    k = _kernel(1)
    codegen.allow_shared(k, 70_000)
    other = _kernel(2)
    # the memo is keyed by id(): the same key with another object must not count as set
    codegen._SHARED[id(other)] = codegen._SHARED.pop(id(k))
    assert codegen.allow_shared(other, 60_000)
    assert fake.attr[(2, 0)] == 60_000


def test_no_thread_sees_its_limit_lowered(fake):
    k = _kernel(3)
    bad = []

    def worker(seed):
        rng = random.Random(seed)
        for _ in range(300):
            n = rng.randrange(49_152, 200_000)
            assert codegen.allow_shared(k, n)
            if fake.attr[(3, 0)] < n:            # what this thread's launch would need
                bad.append(n)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad
    assert fake.attr[(3, 0)] == codegen._SHARED[id(k)][1]
