"""`s2g align` N times in one process: what a process's first run pays that later ones
(a warm process: a Dask worker, a notebook, the Python API) do not.

    python -m bench.repeat_align GRAPH READS [N] [s2g align options...]

Runs ``s2g align GRAPH READS -o /tmp/s2g_repeat_K.gaf --timings --no-progress OPTIONS``
(``s2g.cli.main``) N times (default 2) in this process, resetting the kernels' profile
counters between runs, and prints each run's --timings lines and its seconds in main.
Compare run 1 (Numba's and CUDA's first use, buffers allocated) with the later ones.
"""
import sys
import time

t0 = time.perf_counter()
from s2g.cli import main  # noqa: E402

print(f"import s2g.cli {time.perf_counter() - t0:.2f} s", file=sys.stderr, flush=True)


def run(argv):
    graph, reads = argv[0], argv[1]
    n = int(argv[2]) if len(argv) > 2 and argv[2].isdigit() else 2
    extra = argv[3:] if len(argv) > 2 and argv[2].isdigit() else argv[2:]
    for k in range(n):
        t = time.perf_counter()
        for name in ("s2g.variants.fast", "s2g.trace.gpu_chunk"):
            prof = getattr(sys.modules.get(name), "PROFILE", None)
            for key in prof or {}:
                prof[key] = type(prof[key])(0)
        rc = main(["align", graph, reads, "-o", f"/tmp/s2g_repeat_{k}.gaf", "--timings",
                   "--no-progress", *extra])
        print(f"## run {k + 1}: exit {rc}, {time.perf_counter() - t:.2f} s in main",
              file=sys.stderr, flush=True)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    run(sys.argv[1:])
