"""Tables and plots from the JSON records of one results folder.

Writes ``RESULTS.md`` (one table per experiment), ``HEADLINE.md`` (device, variant,
peak GCUPS, speedup over V0 and over abPOA, the command) and, when matplotlib is
installed, one PNG per experiment in the style of the design's figures (GCUPS
against the swept parameter, one line per variant; log axes where the sweep is
geometric). Only records with ``status: "ok"`` are plotted; the others are listed
with their reasons.
"""
from __future__ import annotations

import json
import os

TITLES = {
    "n_reads": ("Number of reads", "reads", True),
    "read_length": ("Read length", "read length (bp)", True),
    "branching": ("Branching factor (alleles per site) at fixed total bases", "branching factor", False),
    "node_length": ("Mean backbone node length at fixed total bases", "mean backbone node length (bp)", True),
    "real": ("Real graphs", "graph", False),
}
ORDER = ["v0", "cpu", "v1", "v2", "v3", "v4", "fast", "abpoa"]


def _color(v):
    return f"C{ORDER.index(v) if v in ORDER else len(ORDER) + hash(v) % 2}"


def _load(folder):
    docs = {}
    for path in sorted(os.path.join(folder, f"{e}.json") for e in TITLES):
        if not os.path.exists(path):
            continue
        with open(path) as fh:
            try:
                doc = json.load(fh)
            except json.JSONDecodeError:
                continue
        if isinstance(doc, dict) and "records" in doc and "experiment" in doc:
            docs[doc["experiment"]] = doc
    return docs


def _x(r):
    return r["params"].get("point", r["graph"])


def _vkey(v):
    return (ORDER.index(v) if v in ORDER else len(ORDER), v)


def _sig(x) -> str:
    """Three significant digits, without exponents: 0.0123, 4.56, 789, 2,040."""
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.3g}"


def _fmt(x, nd=2):
    if x is None:
        return "–"
    if isinstance(x, float):
        if 0 < abs(x) < 0.1:
            return _sig(x)                          # 0.0044, not 0.0
        return f"{x:,.{nd}f}" if abs(x) < 1000 else f"{x:,.0f}"
    return str(x)


def table(doc):
    rows = ["| point | graph bases (DP) | variant | reads timed | GCUPS (min–max) | kernel ms | timing "
            "| e2e s (reads) | × V0 | × abPOA | status |",
            "|---|---:|---|---:|---:|---:|---|---:|---:|---:|---|"]
    recs = sorted(doc["records"], key=lambda r: (str(type(_x(r))), _x(r), _vkey(r["variant"])))
    for r in recs:
        if r.get("status") == "ok":
            g = f"{_sig(r['gcups'])} ({_sig(r['gcups_min'])}–{_sig(r['gcups_max'])})"
            e2e = f"{_fmt(r.get('e2e_s'), 3)} ({r.get('e2e_n_reads', '–')})" if r.get("e2e_s") else "–"
            rows.append(f"| {_x(r)} | {r['graph_bases']:,} | {r['variant']} | {r['n_reads']} | {g} | "
                        f"{r['kernel_s'] * 1e3:.3g} | {r['timing']} | {e2e} | {_fmt(r.get('speedup_vs_v0'), 1)} "
                        f"| {_fmt(r.get('speedup_vs_peer'), 2)} | ok |")
        else:
            rows.append(f"| {_x(r)} | {r['graph_bases']:,} | {r['variant']} | – | – | – | – | – | – | – | "
                        f"{r.get('status')}: {str(r.get('reason', '')).replace('|', '/')} |")
    return "\n".join(rows)


def headline(docs):
    """Peak GCUPS per variant in the n_reads experiment (the design's Table 6)."""
    doc = docs.get("n_reads") or next(iter(docs.values()), None)
    if doc is None:
        return None
    best = {}
    for r in doc["records"]:
        if r.get("status") == "ok" and (r["variant"] not in best or r["gcups"] > best[r["variant"]]["gcups"]):
            best[r["variant"]] = r
    host = doc["host"]
    lines = [f"# s2g benchmark headline — {host['gpu'] or host['cpu']}", "",
             f"Date {doc['date']}, commit `{doc['commit']}`. Command: `{doc['command']}`", "",
             f"Experiment `{doc['experiment']}`: peak kernel GCUPS of each variant over the read counts "
             "(cells = DP bases (both strands) x read length; CUDA-event kernel time, transfers "
             "excluded, median of 5+; CPU variants and abPOA by host clock). Speedups are GCUPS "
             "ratios on the same workload; abPOA (pyabpoa, local, band off, one CPU thread, one "
             "strand) ran on this machine's CPU.", "",
             "| device | variant | reads | GCUPS | × V0 | × abPOA |", "|---|---|---:|---:|---:|---:|"]
    for v in sorted(best, key=_vkey):
        r = best[v]
        lines.append(f"| {r['device']} | {v} | {r['n_reads']} | {_sig(r['gcups'])} | "
                     f"{_fmt(r.get('speedup_vs_v0'), 1)} | {_fmt(r.get('speedup_vs_peer'), 2)} |")
    bad = {}
    for r in doc["records"]:
        if r["variant"] not in best and r.get("status") != "ok":
            bad.setdefault(r["variant"], f"{r.get('status')}: {str(r.get('reason', ''))[:120]}")
    if bad:
        lines += ["", "Not timed (no record passed the V0 check or ran): " + "; ".join(
            f"**{v}** ({why})" for v, why in sorted(bad.items(), key=lambda x: _vkey(x[0]))) + "."]
    if doc.get("dropped_variants"):
        lines += ["", "Left out of this merge (`--drop-variants`): " + ", ".join(doc["dropped_variants"])
                  + "; see the folder's NOTES.md."]
    return "\n".join(lines) + "\n"


def plot(doc, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    exp = doc["experiment"]
    title, xlabel, logx = TITLES.get(exp, (exp, "point", False))
    ok = [r for r in doc["records"] if r.get("status") == "ok"]
    if not ok:
        return False
    host = doc["host"]
    fig, axes = plt.subplots(1, 2 if exp == "n_reads" else 1, figsize=(11 if exp == "n_reads" else 6.5, 4.2))
    axes = list(axes) if exp == "n_reads" else [axes]
    variants = sorted({r["variant"] for r in ok}, key=_vkey)
    if exp == "real":
        graphs = sorted({r["graph"] for r in ok})
        w = 0.8 / max(1, len(variants))
        for i, v in enumerate(variants):
            ys = [next((r["gcups"] for r in ok if r["variant"] == v and r["graph"] == g), 0) for g in graphs]
            axes[0].bar([j + i * w for j in range(len(graphs))], ys, w, label=v, color=_color(v))
        axes[0].set_xticks([j + 0.4 - w / 2 for j in range(len(graphs))])
        axes[0].set_xticklabels(graphs, rotation=20, fontsize=8)
        axes[0].set_yscale("log")
    else:
        for v in variants:
            rs = sorted((r for r in ok if r["variant"] == v), key=_x)
            axes[0].plot([_x(r) for r in rs], [r["gcups"] for r in rs], "o-", label=v, color=_color(v))
            if exp == "n_reads" and v not in ("v0",):
                pts = [(r) for r in rs if r.get("speedup_vs_v0")]
                if pts:
                    axes[1].plot([_x(r) for r in pts], [r["speedup_vs_v0"] for r in pts], "o-", label=v,
                                 color=_color(v))
        axes[0].set_xlabel(xlabel)
        if logx:
            axes[0].set_xscale("log", base=2)
        axes[0].set_yscale("log")
    axes[0].set_ylabel("GCUPS (kernel)")
    axes[0].set_title(title, fontsize=10)
    axes[0].grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    if exp == "n_reads":
        axes[1].set_xscale("log", base=2)
        axes[1].set_yscale("log")
        axes[1].set_xlabel(xlabel)
        axes[1].set_ylabel("speedup over V0 (GCUPS ratio)")
        axes[1].set_title("Speedup over V0", fontsize=10)
        axes[1].grid(True, which="both", alpha=0.3)
        axes[1].legend(fontsize=8)
    fig.suptitle(f"{host['gpu'] or host['cpu']} — {doc['date'][:10]} — commit {doc['commit']}", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write_report(folder, plots=True):
    docs = _load(folder)
    if not docs:
        return
    parts = ["# s2g benchmark results", ""]
    for exp in [e for e in TITLES if e in docs] + [e for e in docs if e not in TITLES]:
        doc = docs[exp]
        h = doc["host"]
        parts += [f"## {TITLES.get(exp, (exp,))[0]} (`{exp}.json`)", "",
                  f"GPU: {h['gpu'] or '–'}; CPU: {h['cpu']}; date {doc['date']}; commit `{doc['commit']}`; "
                  f"command `{doc['command']}`", ""]
        if doc.get("runs"):
            parts += ["Merged from runs (records keep their own date and commit): " + "; ".join(
                f"{r['dir']} ({r['date']}, `{r['commit']}`: `{r['command']}`)" for r in doc["runs"]), ""]
        if doc.get("dropped_variants"):
            parts += ["Left out of this merge (`--drop-variants`): " + ", ".join(doc["dropped_variants"])
                      + "; see the folder's NOTES.md.", ""]
        if doc.get("variants_not_runnable"):
            parts += ["Not runnable here: " + "; ".join(f"{k} ({v})" for k, v in
                                                         doc["variants_not_runnable"].items()), ""]
        if plots:
            png = f"{exp}.png"
            try:
                if plot(doc, os.path.join(folder, png)):
                    parts += [f"![{exp}]({png})", ""]
            except ImportError:
                plots = False
        parts += [table(doc), ""]
        peers = [r for r in doc["records"] if r["variant"] == "abpoa"]
        if peers:
            parts += ["abPOA: " + peers[0]["settings"] + ". Caveats: " + "; ".join(peers[0]["caveats"]) + ".", ""]
    with open(os.path.join(folder, "RESULTS.md"), "w") as fh:
        fh.write("\n".join(parts))
    h = headline(docs)
    if h:
        with open(os.path.join(folder, "HEADLINE.md"), "w") as fh:
            fh.write(h)
