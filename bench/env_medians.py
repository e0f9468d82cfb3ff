"""Median wall and reads/s per configuration of `bench/device_align.sh` runs.

    python -m bench.env_medians OUT/align/*.log [more logs...]

`device_align.sh` writes one log per run: `gpu_warm.log` (the default) and, per word of
`ENVS`, `env_<k>.log` whose first line is `# env <word>`. Listing a word several times in
`ENVS`, interleaved with the others (`R="X=1 A=1 B=1"; ENVS="$R $R $R"`), gives several
runs of each configuration spread over the call; this prints, per configuration (`X=1` or
any word that sets nothing of s2g's: the default, pooled with `gpu_warm`), the runs' walls,
their median, and reads/s at the median. Logs concatenated into one file
(`cat OUT/align/*.log > all.log`) are read the same way: a `# env` line starts a run of
that configuration, a `# run gpu_warm` line (the script's header of its own runs) one of
the default; `gpu_cold` and `gpu_prof` runs (not warm, or under py-spy) and failed runs
are left out (logs from before the `# run` headers: a `gpu_*` run counts only from a
lone `gpu_warm.log`). The last column is the median of the runs' `# process wall` lines
(the whole command: imports and CUDA's start-up too), where the logs have them.
"""
from __future__ import annotations

import re
import statistics
import sys
from collections import defaultdict

_RUN = re.compile(r"s2g: (?:[0-9]+ processes: )?([0-9]+) reads, .*; ([0-9.]+) s \(([0-9,]+) reads/s\)")


def records(paths):
    """[(configuration, reads, in-process wall, process wall or None), ...] from the logs
    ``paths``, in order (the process wall: the `# process wall S s` line after a run)."""
    out = []
    for path in paths:
        label = "default" if path.endswith("gpu_warm.log") else None
        last = None                           # the record a `# process wall` line ends
        with open(path, errors="replace") as fh:
            for line in fh:
                if line.startswith("# process wall "):
                    if last is not None:
                        out[last] = out[last][:3] + (float(line.split()[3]),)
                    last = None
                    continue
                if line.startswith("# env "):
                    word = line[6:].strip()
                    label = "default" if not re.search(r"S2G|CUDA|NUMBA|ARGS=", word) else word
                    last = None
                    continue
                if line.startswith("# run "):        # device_align.sh's gpu_* logs
                    label = "default" if line.split()[2] == "gpu_warm" else None
                    last = None
                    continue
                if "error:" in line:                # a run that failed: no wall to take
                    label = None
                    continue
                m = _RUN.search(line)
                if m and label is not None:
                    out.append((label, int(m.group(1)), float(m.group(2)), None))
                    last = len(out) - 1
                    if not path.endswith("gpu_warm.log"):
                        label = None          # one run per `# env` block
    return out


def runs(paths):
    """{configuration: [(reads, in-process wall seconds), ...]} from the logs ``paths``."""
    out = defaultdict(list)
    for label, n, wall, _ in records(paths):
        out[label].append((n, wall))
    return out


def main(argv=None) -> int:
    paths = sys.argv[1:] if argv is None else argv
    if not paths:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    recs = records(paths)
    table = runs(paths)
    proc = defaultdict(list)
    for label, _, _, p in recs:
        if p is not None:
            proc[label].append(p)
    print("| configuration | runs | wall (s) | median | reads/s at the median "
          "| process wall, median (s) |")
    print("|---|---:|---|---:|---:|---:|")
    med = {k: statistics.median(w for _, w in v) for k, v in table.items()}
    for label in sorted(table, key=med.get):
        walls = table[label]
        n = statistics.median(r for r, _ in walls)
        pw = f"{statistics.median(proc[label]):.2f}" if proc[label] else "-"
        print(f"| {label} | {len(walls)} | {', '.join(f'{w:.2f}' for _, w in walls)} | "
              f"{med[label]:.2f} | {n / med[label]:,.0f} | {pw} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
