"""`fast` kernel GCUPS against read length, from a `python -m bench.fast` run (fast.json).

    python -m bench.read_length DIR/fast.json --out DIR [--title TEXT]

Writes DIR/read_length.png and DIR/read_length.md: one point per read length and read
count on the SNP 100 kbp graph (the 150 bp row of the same run, then every ``--long``
row), with the kernel configuration each ran (G lanes x K rows, ranges, pipelined stages)
and its share of the 150 bp rate; real-graph rows (150 bp pieces and ``--real-long``
pieces) in a second table. Every number is the run's own (CUDA events, median of its
repetitions); nothing is measured here. The runs should fill the GPU: give ``bench.fast``
read counts that do (e.g. ``--long 1000:16384:auto,10000:4000:auto``), since a batch of
few reads measures occupancy, not the kernel (the stale suite plot of 2026-11-22 timed 256
reads a point).
"""
import argparse
import json
import os
import re


def _rows(doc):
    """(length, reads, GCUPS, config text, workload) of the SNP 100 kbp rows: the 150 bp
    benchmark rows first."""
    out = []
    for r in doc["runs"]:
        w = r.get("workload", "")
        m = re.match(r"snp100k_n50_b2 both strands, (\d+) bp, local", w)
        if not m:
            continue
        cfg = f"{r['G']} x {r['K']}"
        if r.get("ranges", 1) > 1:
            cfg += f", {r['ranges']} ranges"
        if r.get("P"):
            cfg += f", {r['P']} stages"
        out.append((int(m.group(1)), int(r["reads"]), float(r["gcups"]), cfg, w))
    return out


def _real_rows(doc):
    return [(r["workload"], int(r["reads"]), int(round(r["read_len_mean"])), float(r["gcups"]),
             f"{r['G']} x {r['K']}") for r in doc["runs"]
            if not r.get("workload", "").startswith("snp")]


def markdown(doc, rows, base):
    lines = [f"# `fast` kernel GCUPS by read length ({doc['device']}, {doc['date']})", "",
             f"`{doc['command']}`; SNP graph of 100 kbp (200,000 DP columns, both strands), "
             "1% substitutions, local mode; kernel only (CUDA events, median). "
             "Reads above ~16 kbp run the 32-bit kernel (their scores no longer fit the pair "
             "kernel's 16 bits at the default scoring). "
             "*of 150 bp*: GCUPS over the same run's 150 bp rate "
             f"({base:,.0f}).", "",
             "| read length | reads | config (G x K) | GCUPS | of 150 bp |",
             "|---:|---:|---|---:|---:|"]
    for L, n, gc, cfg, _w in rows:
        lines.append(f"| {L:,} | {n:,} | {cfg} | {gc:,.0f} | {gc / base:.0%} |")
    real = _real_rows(doc)
    if real:
        lines += ["", "Real graphs (pieces of their haplotypes, 1% substitutions):", "",
                  "| workload | reads | length | config | GCUPS |", "|---|---:|---:|---|---:|"]
        for w, n, L, gc, cfg in real:
            lines.append(f"| {w} | {n:,} | {L:,} | {cfg} | {gc:,.0f} |")
    return "\n".join(lines) + "\n"


def plot(doc, rows, base, path, title=None):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7.5, 4.4))
    # the line: per length, the batch of most reads (its best row where a length was also
    # timed with a forced config); every other row a hollow marker with its reads and config
    main = {}
    for L, n, gc, cfg, _w in rows:
        if L not in main or (n, gc) > (main[L][1], main[L][2]):
            main[L] = (L, n, gc, cfg)
    pts = sorted(main.values())
    ax.plot([p[0] for p in pts], [p[2] for p in pts], "o-", color="C0",
            label="the largest batch timed at each length")
    for L, n, gc, cfg in pts:
        ax.annotate(f"{n:,} x {cfg.split(',')[0]}", (L, gc), textcoords="offset points",
                    xytext=(4, 5), fontsize=6, color="C0")
    for L, n, gc, cfg, _w in rows:
        if main[L][1:3] != (n, gc):
            ax.plot([L], [gc], "o", mfc="none", color="C3")
            ax.annotate(f"{n:,} x {cfg.split(',')[0]}", (L, gc), textcoords="offset points",
                        xytext=(4, -10), fontsize=6, color="C3")
    ax.axhline(base, color="k", ls="--", lw=0.8, label=f"150 bp, 65,536 reads ({base:,.0f})")
    ax.axhline(0.8 * base, color="k", ls=":", lw=0.8, label="80% of the 150 bp rate")
    ax.set_xscale("log")
    ax.set_xlabel("read length (bp)")
    ax.set_ylabel("kernel GCUPS")
    ax.set_ylim(0, base * 1.15)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="lower left")
    ax.set_title(title or f"fast kernel, SNP 100 kbp graph, {doc['device']}, {doc['date'][:10]}",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m bench.read_length", description=__doc__.split("\n\n")[0])
    ap.add_argument("json", help="fast.json of a `python -m bench.fast` run")
    ap.add_argument("--out", default=".", help="folder for read_length.png and read_length.md")
    ap.add_argument("--title", default=None)
    args = ap.parse_args(argv)
    with open(args.json) as fh:
        doc = json.load(fh)
    rows = _rows(doc)
    base_rows = [gc for L, n, gc, *_ in rows if L == 150]
    if not base_rows or len(rows) < 2:
        raise SystemExit(f"{args.json}: needs the 150 bp row and at least one --long row")
    base = max(base_rows)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "read_length.md"), "w") as fh:
        fh.write(markdown(doc, rows, base))
    plot(doc, rows, base, os.path.join(args.out, "read_length.png"), args.title)
    print(f"wrote {args.out}/read_length.md and read_length.png ({len(rows)} rows)")


if __name__ == "__main__":
    main()
