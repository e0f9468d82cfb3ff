"""s2g.counters.Counters: the GPU modules' --timings counters, added to from several
threads (the align thread and the GAF thread's copies pass launch the same kernel)."""
import sys
import threading

from s2g.counters import Counters


def _hammer(add, threads=8, each=5000):
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)          # switch as often as the interpreter lets it
    try:
        ts = [threading.Thread(target=lambda: [add() for _ in range(each)])
              for _ in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    finally:
        sys.setswitchinterval(old)
    return threads * each


def test_adds_from_many_threads_are_all_counted():
    c = Counters(cells=0, wall=0.0)
    # the amount is computed by a call, as at the call sites (int(...sum()), perf_counter):
    # a plain dict's ``d[k] += int(...)`` reads d[k] before the call and lost most adds here
    n = _hammer(lambda: c.add(cells=int(abs(-2)), wall=float(abs(-1))))
    assert c["cells"] == 2 * n and c["wall"] == float(n)


def test_it_is_still_a_dict():
    c = Counters({"a": 1, "b": 0.5})
    c.add(a=2)
    assert dict(c) == {"a": 3, "b": 0.5} and isinstance(c, dict)
    c["a"] = 0                                   # the benches reset counters by item
    assert c["a"] == 0
