"""Which compile-ahead tasks a run would start (s2g/warmup.py), and why: per task of the
run's plan, each dispatcher whose disk cache it checks and whether that cache holds an
entry. A warm machine that still starts a task on every run (a dispatcher never cached by
its task) shows up here as a ``cold`` line.

    python -m bench.warm_probe [--variant fast] [--mode local] [--read-len 10000] [--seeded]
"""
from __future__ import annotations

import argparse


def main(argv=None):
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--variant", default="fast")
    ap.add_argument("--mode", default="local")
    ap.add_argument("--read-len", type=int, default=10000)
    ap.add_argument("--seeded", action="store_true")
    ap.add_argument("--gpu-traceback", action="store_true")
    args = ap.parse_args(argv)
    from s2g import warmup
    from s2g.scoring import Mode, Scoring
    mode = int(Mode.parse(args.mode))
    tasks = warmup.plan(args.variant, mode, Scoring(), args.read_len, True,
                        args.gpu_traceback, True, seeded=args.seeded)
    for task, stages in tasks:
        print(f"task {warmup.task_name(task)} (stages {', '.join(stages)}): "
              f"{'COLD' if warmup.cold(task) else 'warm'}")
        for d in warmup._dispatchers(task):
            name = getattr(d, "__qualname__", None) or getattr(getattr(d, "py_func", None),
                                                                "__qualname__", repr(d))
            print(f"  {'entry' if warmup._has_entry(d) else 'COLD '} {name}")


if __name__ == "__main__":
    main()
