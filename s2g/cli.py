"""Command line: ``s2g align | simulate | info | variants | bench``.

Errors are one line, ``s2g: error: ...`` on stderr, exit status 1 (2 for usage
errors, as argparse does). Results go to stdout or ``-o``. Nothing here imports
CUDA unless a GPU variant is chosen.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
import warnings

from . import __version__
from .errors import S2GError

BATCH = 20_000
#: GPU variants: larger batches keep the GPU fuller (e2e 100,000 x 150 bp on an H200:
#: median 2.93 s at 50,000 against 3.19 s at 20,000; bench/results/nvidia-h200/s4)
GPU_BATCH = 50_000


def _add_scoring(p):
    g = p.add_argument_group("scoring (a gap of length k costs gap-open + k * gap-extend)")
    g.add_argument("--match", "-A", type=int, default=2, metavar="A", help="match score")
    g.add_argument("--mismatch", "-B", type=int, default=4, metavar="B", help="mismatch penalty (positive)")
    g.add_argument("--gap-open", "-O", type=int, default=4, metavar="O", help="gap open penalty")
    g.add_argument("--gap-extend", "-E", type=int, default=2, metavar="E", help="gap extension penalty per base")
    g.add_argument("--mode", "-m", default="local", choices=["local", "semiglobal", "global"],
                   help="local: best substring pair; semiglobal: whole read, free graph ends; "
                        "global: whole read, source-to-sink walk")


def _add_graph_opts(p):
    g = p.add_argument_group("graph")
    g.add_argument("--strands", choices=["both", "forward"], default="both",
                   help="align to both strands of every segment, or to the + strand only")
    g.add_argument("--break-cycles", action="store_true",
                   help="drop DFS back edges of a cyclic graph (counted in a warning) instead of refusing it")
    g.add_argument("--validate", action="store_true",
                   help="also validate the GFA with gfapy (GFA 1.0 only; slow on large graphs)")


def build_parser() -> argparse.ArgumentParser:
    fmt = argparse.ArgumentDefaultsHelpFormatter
    ap = argparse.ArgumentParser(
        prog="s2g", formatter_class=fmt,
        description="Exact affine-gap sequence-to-graph alignment (POA) of reads to a GFA "
                    "variation/pangenome graph, on CPUs and NVIDIA GPUs; writes GAF.")
    ap.add_argument("--version", action="version", version=f"s2g {__version__}")
    sub = ap.add_subparsers(dest="cmd", metavar="COMMAND")

    p = sub.add_parser("align", formatter_class=fmt, help="align reads to a graph, write GAF",
                       description="Align FASTA/FASTQ(.gz) reads to a GFA graph; one GAF line per read, "
                                   "in input order (no-hit lines for reads without an alignment).")
    p.add_argument("graph", help="GFA 1.0/1.1 file (.gz allowed)")
    p.add_argument("reads", help="FASTA/FASTQ file (.gz allowed)")
    p.add_argument("-o", "--output", default="-", help="GAF output file ('-' = stdout)")
    p.add_argument("--variant", "-v", default="auto",
                   help="kernel variant ('s2g variants' lists them); auto = fastest this machine can run")
    _add_scoring(p)
    _add_graph_opts(p)
    r = p.add_argument_group("run")
    r.add_argument("--batch-size", type=int, default=None,
                   help=f"reads per batch (bounds memory; default {BATCH:,}, {GPU_BATCH:,} with a "
                        "GPU variant)")
    r.add_argument("--no-traceback", action="store_true",
                   help="score only: GAF no-hit columns with AS:i (much faster on CPU)")
    r.add_argument("--max-traceback-cells", type=int, default=1 << 31,
                   help="largest traceback window per read (bytes of direction data)")
    r.add_argument("--traceback-on", choices=("auto", "gpu", "cpu"), default="auto",
                   help="where the traceback runs; auto = on the GPU with a GPU variant (reads "
                        "whose window exceeds the GPU's per-read bound are traced on the CPU)")
    r.add_argument("--threads", type=int, default=None, help="CPU threads (default: all cores)")
    r.add_argument("--progress", dest="progress", action="store_true", default=None,
                   help="show a progress bar (default: when stderr is a terminal)")
    r.add_argument("--no-progress", dest="progress", action="store_false")
    r.add_argument("--quiet", "-q", action="store_true", help="no summary line on stderr")
    r.add_argument("--timings", action="store_true",
                   help="print seconds per stage on stderr (stages overlap: they run in "
                        "their own threads)")
    _add_dask_opts(r)

    p = sub.add_parser("simulate", formatter_class=fmt,
                       help="write a synthetic SNP graph, reads and truth",
                       description="Synthetic SNP graph (HGA methodology) and reads sampled from random "
                                   "walks with substitutions; writes PREFIX.gfa, PREFIX.fq, PREFIX.truth.tsv.")
    p.add_argument("prefix", help="output prefix")
    p.add_argument("--total-bases", type=int, default=20_000, help="bases in the graph")
    p.add_argument("--node-len", type=float, default=50, help="mean backbone node length")
    p.add_argument("--branching", type=int, default=2, help="alleles per variant site (in-degree)")
    p.add_argument("--reads", type=int, default=1000, help="number of reads")
    p.add_argument("--read-len", type=int, default=150, help="read length")
    p.add_argument("--error-rate", type=float, default=0.01, help="substitution rate per base")
    p.add_argument("--reverse-fraction", type=float, default=0.5, help="fraction of reverse-strand reads")
    p.add_argument("--seed", type=int, default=0, help="random seed (same seed, same files)")

    p = sub.add_parser("info", formatter_class=fmt, help="describe a graph",
                       description="Segments, links, bases, components, cycles, max in-degree, node_bound slots.")
    p.add_argument("graph")
    p.add_argument("--strands", choices=["both", "forward"], default="both")
    p.add_argument("--json", action="store_true", help="print JSON")

    sub.add_parser("variants", formatter_class=fmt, help="list the kernel variants",
                   description="Registered variants, their summaries, and whether this machine can run them.")

    try:
        from . import bench_cli
    except ImportError:
        bench_cli = None
    if bench_cli is not None:
        bench_cli.add_parser(sub)
    return ap


def _add_dask_opts(group):
    try:
        from . import distributed
    except ImportError:
        return
    distributed.add_arguments(group)


def _progress(enabled, total=None):
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        return None
    from tqdm import tqdm
    return tqdm(total=total, unit="read", file=sys.stderr, dynamic_ncols=True, smoothing=0.1)


def cmd_align(args) -> int:
    import numpy as np

    from . import load_graph
    from .gaf import gaf_text
    from .reads import iter_read_batches
    from .scoring import Mode, Scoring
    from .variants import registry

    if args.batch_size is not None and args.batch_size < 1:
        raise S2GError("--batch-size must be >= 1")
    if args.threads is not None:
        if args.threads < 1:
            raise S2GError("--threads must be >= 1")
        import numba
        numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
    scoring = Scoring(args.match, args.mismatch, args.gap_open, args.gap_extend)
    mode = Mode.parse(args.mode)
    variant = registry.pick_auto() if args.variant == "auto" else args.variant
    module = registry.get_variant(variant)  # fail before reading anything
    tb_gpu = _traceback_on_gpu(args.traceback_on, registry.REGISTRY[variant])
    if args.batch_size is None:
        args.batch_size = GPU_BATCH if registry.REGISTRY[variant].device == "cuda" else BATCH
    if not os.path.exists(args.reads):
        raise S2GError(f"{args.reads}: no such file")
    t0 = time.perf_counter()
    graph = load_graph(args.graph, strands=args.strands, break_cycles=args.break_cycles,
                       validate=args.validate)
    spent = {"load graph": time.perf_counter() - t0}

    span = {}                     # stage -> [first start, last end] (relative to t0)

    def timed(name, fn):
        def run(*a):
            t = time.perf_counter()
            try:
                return fn(*a)
            finally:
                t1 = time.perf_counter()
                spent[name] = spent.get(name, 0.0) + t1 - t
                span.setdefault(name, [t - t0, 0.0])[1] = t1 - t0
        return run
    if getattr(args, "dask", None):
        from . import distributed
        return distributed.run_align(args, graph, scoring, mode, variant)
    from . import pipeline
    from .traceback import traceback_batch, traceback_gpu_part

    counts = [0, 0]
    bar = _progress(args.progress)
    out = sys.stdout if args.output == "-" else _open_out(args.output)

    # With the traceback on the GPU, its GPU half runs in the aligning thread right after
    # the batch's kernel (the GPU is one queue: from the finisher thread it waited for the
    # next batch's kernel); reads left for the CPU (long windows) go to the finisher.
    inline = tb_gpu and not args.no_traceback and os.environ.get("S2G_TB_INLINE", "1") != "0"

    def align_one(batch):
        res = module.align_batch(graph, batch, scoring, mode, traceback=False)
        if inline:
            res._gpu_part = traceback_gpu_part(graph, batch, scoring, mode, res,
                                               args.max_traceback_cells)
        return res

    def finish_one(batch, res):
        if not args.no_traceback:
            flat, idx = res.__dict__.pop("_gpu_part", (None, None))
            traceback_batch(graph, batch, scoring, mode, res, max_cells=args.max_traceback_cells,
                            device=tb_gpu, flat=flat, idx=idx)
        return res

    def format_one(batch, res):
        return batch.n_reads, int(np.count_nonzero(res.aligned())), gaf_text(graph, res)

    def write(item):
        n_reads, n_aligned, text = item
        out.write(text)
        counts[0] += n_reads
        counts[1] += n_aligned
        if bar is not None:
            bar.update(n_reads)

    try:
        pipeline.run(iter_read_batches(args.reads, args.batch_size), timed("align", align_one),
                     timed("traceback", finish_one), timed("write", write),
                     format_one=timed("GAF text", format_one))
    finally:
        if bar is not None:
            bar.close()
        if out is not sys.stdout:
            out.close()
    n, n_hit = counts
    dt = time.perf_counter() - t0
    if n == 0:
        print(f"s2g: warning: {args.reads} contains no reads; the GAF output is empty", file=sys.stderr)
    elif not args.quiet:
        print(f"s2g: {n} reads, {n_hit} aligned, {n - n_hit} without alignment; variant {variant}; "
              f"{dt:.2f} s ({n / dt:,.{0 if n / dt >= 10 else 1}f} reads/s)", file=sys.stderr)
    if args.timings:
        where = "GPU" if tb_gpu else "CPU"
        print("s2g: seconds per stage: " + ", ".join(
            f"{k}{f' ({where})' if k == 'traceback' else ''} {v:.2f}" for k, v in spent.items())
            + f"; wall {dt:.2f} (aligning from {span.get('align', [0])[0]:.2f} s to "
            f"{span.get('align', [0, 0])[1]:.2f} s)", file=sys.stderr)
    return 0


def _traceback_on_gpu(where, info) -> bool:
    """``--traceback-on``: auto follows the variant's device; gpu needs a usable GPU."""
    from .variants import registry
    if where == "cpu" or (where == "auto" and info.device != "cuda"):
        return False
    ok, why = registry.cuda_available()
    if not ok:
        if where == "gpu":
            raise S2GError(f"--traceback-on gpu: {why}")
        return False
    return True


def _open_out(path):
    try:
        return open(path, "w")
    except OSError as exc:
        raise S2GError(f"{path}: cannot write: {exc.strerror}") from None


def cmd_simulate(args) -> int:
    from .simulate import simulate

    for name in ("total_bases", "reads", "read_len", "branching"):
        if getattr(args, name) < 1:
            raise S2GError(f"--{name.replace('_', '-')} must be >= 1")
    if args.node_len < 1:
        raise S2GError("--node-len must be >= 1")
    if not 0 <= args.error_rate <= 1 or not 0 <= args.reverse_fraction <= 1:
        raise S2GError("--error-rate and --reverse-fraction must be between 0 and 1")
    d = os.path.dirname(args.prefix)
    if d and not os.path.isdir(d):
        raise S2GError(f"{d}: no such directory")
    paths = simulate(args.prefix, args.total_bases, args.node_len, args.branching, args.reads,
                     args.read_len, args.error_rate, args.reverse_fraction, args.seed)
    print("\n".join(paths))
    return 0


def cmd_info(args) -> int:
    import json

    from .graph import graph_info

    info = graph_info(args.graph, strands=args.strands)
    if args.json:
        print(json.dumps(info, indent=2))
    else:
        w = max(map(len, info))
        for k, v in info.items():
            print(f"{k:<{w}}  {v}")
    return 0


def cmd_variants(args) -> int:
    from .variants import registry

    auto = registry.pick_auto()
    for v in registry.list_variants():
        ok, why = registry.can_run(v)
        mark = "yes" if ok else f"no ({why})"
        star = "  [auto]" if v.name == auto else ""
        print(f"{v.name:<6} {v.device:<5} runs here: {mark}{star}\n       {v.summary}\n       limits: {v.limits}")
    return 0


def main(argv=None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    if args.cmd is None:
        ap.print_help(sys.stderr)
        return 2
    handler = {"align": cmd_align, "simulate": cmd_simulate, "info": cmd_info,
               "variants": cmd_variants}.get(args.cmd)
    if handler is None:
        handler = args.func
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        try:
            code = handler(args)
        except S2GError as exc:
            _flush_warnings(caught)
            print(f"s2g: error: {exc}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print("s2g: interrupted", file=sys.stderr)
            return 130
        except BrokenPipeError:
            with contextlib.suppress(Exception):
                sys.stdout = open(os.devnull, "w")
            return 0
        except MemoryError:
            print("s2g: error: out of memory; try a smaller --batch-size", file=sys.stderr)
            return 1
        except Exception as exc:  # a bug: one line, full trace only on request
            if os.environ.get("S2G_DEBUG"):
                raise
            print(f"s2g: internal error: {type(exc).__name__}: {exc} (set S2G_DEBUG=1 for the "
                  "traceback and please report it)", file=sys.stderr)
            return 3
        _flush_warnings(caught)
    return code


def _flush_warnings(caught):
    for w in caught:
        if issubclass(w.category, UserWarning):
            print(f"s2g: warning: {w.message}", file=sys.stderr)
    caught.clear()
