"""Where a process's threads spent their time: a py-spy speedscope profile, summarised.

    python -m bench.pyspy_summary PROFILE.json [--top 25] [--step 0.1] [--match s2g/]

``py-spy record --threads --idle --format speedscope`` (bench/device_profile.sh) samples
every thread, waiting included, at a fixed rate. For each thread this prints its sampled
seconds, the functions with the most inclusive seconds (frames whose file contains
``--match``, by default s2g's own, so the stages show, not Numba's internals), and a
timeline from the thread's first sample: per ``--step`` seconds the deepest matching
frame most samples were in, consecutive equal steps merged. Threads start at different
times and speedscope keeps no start offset, so timelines of different threads are not
aligned; the main thread's shows the run's order. Used in session 17 (#15) to find the
fixed seconds around the kernels of `s2g align`.
"""
from __future__ import annotations

import argparse
import collections
import json


def load(path):
    with open(path) as fh:
        doc = json.load(fh)
    return doc["shared"]["frames"], doc["profiles"]


def label(frames, stack, match):
    """The deepest frame of ``stack`` (outermost first) whose file contains ``match``."""
    for k in reversed(stack):
        f = frames[k]
        if match in (f.get("file") or ""):
            return f"{f['name']} ({f['file'].rsplit('/', 1)[-1]}:{f.get('line')})"
    return "(other)"


def summarise(frames, prof, match="s2g/", top=25, step=0.1):
    samples, weights = prof["samples"], prof["weights"]
    total = float(sum(weights))
    incl = collections.Counter()
    for stack, w in zip(samples, weights):
        seen = set()
        for k in stack:
            f = frames[k]
            if match in (f.get("file") or "") and k not in seen:
                seen.add(k)
                incl[f"{f['name']} ({f['file'].rsplit('/', 1)[-1]})"] += w
    lines = [f"## {prof['name']}: {total:.2f} s sampled", ""]
    lines += [f"{v:8.2f} s  {k}" for k, v in incl.most_common(top)]
    # timeline: bucket by cumulative sample time
    buckets: list = []
    t = 0.0
    for stack, w in zip(samples, weights):
        b = int(t / step)
        while len(buckets) <= b:
            buckets.append(collections.Counter())
        buckets[b][label(frames, stack, match)] += w
        t += w
    lines += ["", "timeline (from the thread's first sample):"]
    prev, start = None, 0.0
    for i, c in enumerate(buckets + [None]):
        cur = c.most_common(1)[0][0] if c else None
        if cur != prev:
            if prev is not None:
                lines.append(f"  {start:7.2f} - {i * step:7.2f} s  {prev}")
            prev, start = cur, i * step
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m bench.pyspy_summary", description=__doc__.split("\n\n")[0])
    ap.add_argument("profile")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--step", type=float, default=0.1)
    ap.add_argument("--match", default="s2g/")
    args = ap.parse_args(argv)
    frames, profs = load(args.profile)
    for p in sorted(profs, key=lambda p: -sum(p["weights"])):
        print(summarise(frames, p, args.match, args.top, args.step))
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
