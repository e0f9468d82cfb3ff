"""How long the first batches of a FASTQ take to read while another thread runs Python
(the GPU path's start-up: numba.cuda's import holds the GIL in a thread beside the reader),
and with which read size (``fastq_blocks.read_step``).

    python -m bench.read_gil_probe READS.fq [N_READS] [busy|none|cuda] [SWITCH_S]

``busy``: a thread spinning in Python; ``cuda``: a thread importing numba.cuda; ``none``:
alone. ``S2G_READ_STEP=small`` reads 128 KiB a call (the size before session 65).
``SWITCH_S``: ``sys.setswitchinterval`` for the run. Prints the seconds of the first and the
second batch of N_READS (default 50,000). Run it in a fresh process each time (the first
batch includes loading the parse pass from Numba's cache)."""
import os
import sys
import threading
import time


def main(argv):
    path = argv[0]
    n = int(argv[1]) if len(argv) > 1 else 50_000
    busy = argv[2] if len(argv) > 2 else "none"
    from s2g import fastq_blocks
    from s2g.reads import iter_read_batches
    if os.environ.get("S2G_READ_STEP") == "small":
        fastq_blocks.read_step = lambda raw, piece: fastq_blocks.READ_STEP
    stop = []

    def spin():
        x = 0
        while not stop:
            x += 1

    def imp():
        import numba.cuda  # noqa: F401

    if busy in ("busy", "cuda"):
        threading.Thread(target=spin if busy == "busy" else imp, daemon=True).start()
    if len(argv) > 3:
        sys.setswitchinterval(float(argv[3]))
    t0 = time.perf_counter()
    it = iter_read_batches(path, n)
    next(it)
    t1 = time.perf_counter()
    next(it)
    t2 = time.perf_counter()
    stop.append(1)
    print(f"{busy}, read step {os.environ.get('S2G_READ_STEP', 'default')}: first batch "
          f"{t1 - t0:.3f} s, second {t2 - t1:.3f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
