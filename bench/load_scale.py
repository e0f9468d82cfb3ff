"""Load times of a graph's cache and seed index alone, numpy's / one thread's way against
s2g's threaded reads (s2g.fileio), warm (the page cache holds both files after pass 1):

    python -m bench.load_scale GRAPH.gfa [--passes 2]

GRAPH.gfa.s2gg and GRAPH.gfa.s2gi must exist (``s2g index GRAPH.gfa``). Prints one line
per load and pass (docs/performance.md, "Genome scale")."""
import argparse
import os
import time

import numpy as np

from s2g import fileio
from s2g import index as ix


def load_cache(path, fast):
    z = fileio.NpzReader(path) if fast else np.load(path)
    with z:
        return sum(z[k].nbytes for k in z.files)


def load_index(path, threads):
    keep = fileio.MAX_THREADS
    fileio.MAX_THREADS = threads
    try:
        with open(path, "rb", buffering=0) as fh:
            return ix._read_checked(fh, path, os.fstat(fh.fileno()).st_size).n_entries
    finally:
        fileio.MAX_THREADS = keep


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("gfa")
    ap.add_argument("--passes", type=int, default=2)
    a = ap.parse_args()
    cache, index = a.gfa + ".s2gg", a.gfa + ".s2gi"
    runs = [("graph cache, np.load", lambda: load_cache(cache, False)),
            ("graph cache, NpzReader", lambda: load_cache(cache, True)),
            ("index, 1 thread", lambda: load_index(index, 1)),
            ("index, threads", lambda: load_index(index, fileio.MAX_THREADS))]
    print(f"# {fileio.read_threads()} read threads")
    for p in range(1, a.passes + 1):
        for name, fn in runs:
            t = time.perf_counter()
            fn()
            print(f"pass {p}  {name:24s} {time.perf_counter() - t:6.2f} s", flush=True)


if __name__ == "__main__":
    main()
