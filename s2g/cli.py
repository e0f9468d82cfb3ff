"""Command line: ``s2g align | simulate | info | variants | bench``.

Errors are one line, ``s2g: error: ...`` on stderr. Exit status: 0 done, 1 an error
in the input, the output or the request, 2 a usage error (unknown option, missing
argument; as argparse and grep), 3 an internal error (a bug), 130 interrupted (SIGINT),
143 terminated (SIGTERM). Results go to stdout or ``-o``; ``-o FILE`` is written to a
temporary file beside FILE and renamed over it only when the run has finished, so a
failed or interrupted run leaves no file and an existing FILE as it was. Nothing here
imports CUDA unless a GPU variant is chosen.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
import time
import warnings

from . import __version__
from .errors import S2GError, printable as _printable
from .output import align_inputs, check_graph_path, output, requested_format, same_file
from .plan import is_cyclic, short_e
from .unseeded import FULL_FALLBACK_CELLS, UNSEEDED_MIN_MATCHES
from .summary import report

BATCH = 20_000      # (with a GPU: knobs batch_first, batch_grow)


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
                   help="drop DFS back edges of a cyclic graph (counted in a warning) instead of "
                        "aligning to it exactly (default: its cycles are unrolled, s2g/cyclic.py)")
    g.add_argument("--max-read-len", type=int, default=None, metavar="N",
                   help="cyclic graphs: unroll the cycles for reads of up to N bp (full-graph DP: "
                        "each batch is unrolled for its longest read, at least N, so every read "
                        "stays exact; --seeded and 's2g index': for N bp, default 1000)")
    g.add_argument("--validate", action="store_true",
                   help="also validate the GFA with gfapy (GFA 1.0 only; slow on large graphs)")
    g.add_argument("--no-graph-cache", dest="graph_cache", action="store_false",
                   default=argparse.SUPPRESS,   # read as True (_open_graph); no "(default: True)"
                   help="neither read nor write GRAPH.s2gg, the loaded graph kept beside the GFA "
                        "(default: read when it matches the GFA's SHA-256 and these options; "
                        "written by 's2g index' and, for GFA files of 1 MiB or more, by "
                        "'s2g align')")


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """``(default: X)`` after an option's help, only where it says something: not when
    the help already gives the default in its own words, nor for None, SUPPRESS or a
    flag (store_true, store_const: ``(default: False)`` is noise)."""

    def _get_help_string(self, action):
        text = action.help or ""
        default = action.default
        if ("default" in text.lower() or default is None or default is argparse.SUPPRESS
                or default is False or action.nargs == 0):
            return text
        return super()._get_help_string(action)


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line with the common prefix, exit status 2, naming the
    subcommand's own help (``s2g align --help``)."""

    def __init__(self, *a, **kw):
        if kw.get("formatter_class") in (None, argparse.ArgumentDefaultsHelpFormatter):
            kw["formatter_class"] = _HelpFormatter    # subcommands added elsewhere too
        super().__init__(*a, **kw)

    def error(self, message):
        self.exit(2, f"s2g: error: {message} (see '{self.prog} --help')\n")

    def parse_args(self, args=None, namespace=None):
        # unknown options are found by the top parser: report them as the subcommand's
        ns, extra = self.parse_known_args(args, namespace)
        if extra:
            parser = self
            for action in self._actions:
                if isinstance(action, argparse._SubParsersAction):
                    parser = action.choices.get(getattr(ns, action.dest, None), self)
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        return ns


def build_parser(bench: bool = True) -> argparse.ArgumentParser:
    fmt = _HelpFormatter
    ap = _Parser(
        prog="s2g", formatter_class=fmt,
        description="Exact affine-gap sequence-to-graph alignment (POA) of reads to a GFA "
                    "variation/pangenome graph, on CPUs and NVIDIA GPUs; writes GAF.")
    ap.add_argument("--version", action="version", version=f"s2g {__version__}")
    sub = ap.add_subparsers(dest="cmd", metavar="COMMAND")

    p = sub.add_parser("align", formatter_class=fmt, help="align reads to a graph, write GAF",
                       description="Align FASTA/FASTQ(.gz) reads to a GFA graph; one GAF line per read, "
                                   "in input order (no-hit lines for reads without an alignment).")
    p.add_argument("graph", help="GFA 1.0/1.1 file (.gz allowed)")
    p.add_argument("reads", help="FASTA/FASTQ file (.gz allowed; '-' = standard input; pipes work)")
    p.add_argument("reads2", nargs="?", default=None,
                   help="paired-end reads: the mate 2 file, in the same order as READS (mate 1s)")
    p.add_argument("-o", "--output", default="-",
                   help="GAF output file ('-' = stdout); written only when the run finishes")
    p.add_argument("--variant", "-v", default="auto",
                   help="kernel variant ('s2g variants' lists them); auto = fastest this machine can run")
    fo = p.add_argument_group("output format")
    fo.add_argument("--output-format", "-f", choices=("gaf", "sam", "bam"), default=None,
                    help="gaf, or SAM/BAM: each alignment projected onto a reference path of the "
                         "graph (needs P or W lines; BAM needs pysam: pip install 's2g[bam]'); "
                         "default: by the -o suffix (.sam, .bam), else gaf")
    fo.add_argument("--ref-path", default=None, metavar="NAME",
                    help="the path SAM/BAM is on; a W line also by prefix, e.g. CHM13#0#chr6 "
                         "(default: the only path, else a reference-looking one, else the first)")
    fo.add_argument("--ref-name", default=None, metavar="NAME",
                    help="SAM/BAM @SQ name (default: a W line's sequence name, e.g. chr6 for "
                         "GRCh38#0#chr6:29000000-34000000, whose start POS then counts from; a "
                         "P line's name, without a [start-end] suffix)")
    fo.add_argument("--ref-length", type=int, default=None, metavar="N",
                    help="SAM/BAM @SQ length, e.g. the whole chromosome's (default: the path's "
                         "end)")
    fo.add_argument("--sort", action="store_true",
                    help="SAM/BAM sorted by coordinate (a BAM file also gets its .bai index)")
    fo.add_argument("-R", "--read-group", default=None, metavar="LINE",
                    help="SAM/BAM read group header line, e.g. '@RG\\tID:s1\\tSM:NA12878' "
                         "(as bwa mem -R); every record gets its RG:Z tag (GATK needs one)")
    _add_scoring(p)
    _add_graph_opts(p)
    r = p.add_argument_group("run")
    r.add_argument("--batch-size", type=int, default=None,
                   help=f"reads per batch (bounds memory; default {BATCH:,}; with a GPU "
                        "50,000, then each batch twice the last up to 200,000, knobs "
                        "batch_first, batch_grow; a batch also ends at 25 Mbp, knob batch_bases)")
    r.add_argument("--no-traceback", action="store_true",
                   help="score only: GAF no-hit columns with AS:i (much faster on CPU)")
    r.add_argument("--max-traceback-cells", type=int, default=1 << 31,
                   help="largest traceback window per read (bytes of direction data)")
    r.add_argument("--traceback-on", choices=("auto", "gpu", "cpu"), default="auto",
                   help="where the traceback runs; auto = on the GPU with a GPU variant (reads "
                        "whose window exceeds the GPU's per-read bound are traced on the CPU)")
    r.add_argument("-t", "--threads", type=int, default=None,
                   help="CPU threads (default: all cores; more than the cores: a warning)")
    r.add_argument("--progress", dest="progress", action="store_true", default=None,
                   help="show a progress bar (default: when stderr is a terminal)")
    r.add_argument("--no-progress", dest="progress", action="store_false")
    r.add_argument("--quiet", "-q", action="store_true", help="no summary line on stderr")
    r.add_argument("--timings", action="store_true",
                   help="print seconds per stage on stderr (stages overlap: they run in "
                        "their own threads), memory peaks, and the GPU kernels' own seconds "
                        "and GCUPS")
    _add_dask_opts(r)
    sd = p.add_argument_group(
        "seeded alignment (syncmer seeds, chains, exact DP inside each candidate window)")
    how = sd.add_mutually_exclusive_group()
    how.add_argument("--seeded", dest="method", action="store_const", const="seeded",
                     help="seed, chain and align exactly inside candidate windows; reports MAPQ")
    how.add_argument("--exact", dest="method", action="store_const", const="exact",
                     help="full-graph DP for every read (the global optimum; slow on large graphs)")
    sd.set_defaults(method="auto")
    sd.add_argument("--index", default=None,
                    help="seed index (default: the graph's path + .s2gi; built and saved there "
                         "when missing)")
    sd.add_argument("--max-occ", type=int, default=200,
                    help="skip seeds with more graph positions than this (repeats)")
    sd.add_argument("--max-windows", type=int, default=5,
                    help="candidate windows aligned per read (MAPQ compares them)")
    sd.add_argument("--unseeded", choices=("auto", "full", "unmapped"), default="auto",
                    help="reads without a usable seed chain (two anchors' worth): auto = "
                         f"full-graph DP where it costs at most {short_e(FULL_FALLBACK_CELLS)} cells "
                         "(graph columns x read bases) a read, "
                         "else the windows of their single-anchor hits (MAPQ <= 3), else a "
                         "no-hit line with a warning; full = full-graph DP always; unmapped = "
                         "never full-graph DP")
    sd.add_argument("--unseeded-min-score", type=int, default=None, metavar="S",
                    help="a read that full-graph DP aligns for want of a seed chain is "
                         "written only when it scores at least S, else as a no-hit line "
                         f"(default: {UNSEEDED_MIN_MATCHES} matches' worth, "
                         f"{UNSEEDED_MIN_MATCHES} x --match, as BWA-MEM's -T 30: a read "
                         "from outside the graph always has a chance best match)")
    sd.add_argument("-N", "--secondary", type=int, default=0, metavar="N",
                    help="also write up to N secondary alignments per read (other windows "
                         "scoring >= --secondary-ratio x the best; MAPQ 0; GAF: tp:A:S, the "
                         "primary line gets tp:A:P; SAM/BAM: FLAG 256 where the walk "
                         "reaches the path)")
    sd.add_argument("--secondary-ratio", type=float, default=0.8, metavar="F",
                    help="lowest secondary-to-primary score ratio for -N")
    pe = p.add_argument_group(
        "paired-end reads (READS READS2, or --interleaved; seeded alignment: pairs scored "
        "jointly, mate rescue, GAF tags fn:Z/fp:Z (the mate's name) and pd:b (proper pair))")
    pe.add_argument("--interleaved", action="store_true",
                    help="READS holds both mates of each pair, one after the other")
    pe.add_argument("--fragment-mean", type=float, default=None, metavar="BP",
                    help="fragment length mean (default: learned from the first batch's "
                         "confidently placed pairs)")
    pe.add_argument("--fragment-sd", type=float, default=None, metavar="BP",
                    help="fragment length standard deviation (with --fragment-mean)")
    pe.add_argument("--no-rescue", dest="rescue", action="store_false",
                    help="no mate rescue (exact DP of a mate in the region its placed mate "
                         "implies)")

    p = sub.add_parser("index", formatter_class=fmt, help="build the seed index of a graph",
                       description="Closed syncmers of every walk of the graph (both strands, "
                                   "k-mers across node boundaries) -> GRAPH.gfa.s2gi (the graph's path + "
                                   ".s2gi), which 's2g align --seeded' loads.")
    p.add_argument("graph", help="GFA 1.0/1.1 file (.gz allowed)")
    p.add_argument("-o", "--output", default=None, help="index file (default: the graph's path + .s2gi)")
    p.add_argument("-k", type=int, default=19, help="k-mer length (<= 28)")
    p.add_argument("-s", type=int, default=11, help="syncmer s-mer length (< k)")
    p.add_argument("--max-kmers", type=int, default=16,
                   help="most k-mers kept per graph column where bubbles pile up")
    _add_graph_opts(p)

    p = sub.add_parser("simulate", formatter_class=fmt,
                       help="write a synthetic SNP graph, reads and truth",
                       description="Synthetic SNP graph (HGA methodology) and reads sampled from random "
                                   "walks with substitutions; writes PREFIX.gfa, PREFIX.fq, PREFIX.truth.tsv "
                                   "(--pairs: PREFIX_1.fq and PREFIX_2.fq, --reads pairs).")
    p.add_argument("prefix", help="output prefix")
    p.add_argument("--total-bases", type=int, default=20_000, help="bases in the graph")
    p.add_argument("--node-len", type=float, default=50, help="mean backbone node length")
    p.add_argument("--branching", type=int, default=2, help="alleles per variant site (in-degree)")
    p.add_argument("--reads", type=int, default=1000, help="number of reads")
    p.add_argument("--read-len", type=int, default=150, help="read length")
    p.add_argument("--error-rate", type=float, default=0.01, help="substitution rate per base")
    p.add_argument("--reverse-fraction", type=float, default=0.5, help="fraction of reverse-strand reads")
    p.add_argument("--seed", type=int, default=0, help="random seed (same seed, same files)")
    pe = p.add_argument_group("paired-end reads (--pairs: --reads pairs, Illumina FR, named "
                              "pairN/1 and pairN/2; PREFIX_1.fq and PREFIX_2.fq)")
    pe.add_argument("--pairs", action="store_true", help="write paired-end reads")
    pe.add_argument("--fragment-mean", type=float, default=300, metavar="BP",
                    help="fragment length mean (normal, at least --read-len)")
    pe.add_argument("--fragment-sd", type=float, default=30, metavar="BP",
                    help="fragment length standard deviation")
    pe.add_argument("--interleaved", action="store_true",
                    help="one interleaved PREFIX.fq instead of two files")

    p = sub.add_parser("info", formatter_class=fmt, help="describe a graph, or print the settings",
                       description="Segments, links, bases, components, cycles, max in-degree, "
                                   "node_bound slots; or, with --config, every knob of "
                                   "s2g/config.py with its value and where it came from.")
    p.add_argument("graph", nargs="?")
    p.add_argument("--config", action="store_true",
                   help="print the settings in effect (defaults, S2G_CONFIG and the other "
                        "S2G_* variables) instead of describing a graph")
    p.add_argument("--strands", choices=["both", "forward"], default="both")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(info_parser=p)

    sub.add_parser("variants", formatter_class=fmt, help="list the kernel variants",
                   description="Registered variants, their summaries, and whether this machine can run them.")
    from .warmup import add_parser as add_warmup     # standard library only: --help stays light
    add_warmup(sub)

    try:
        from . import bench_cli
    except ImportError:
        bench_cli = None
    if bench_cli is not None:
        bench_cli.add_parser(sub, bench)     # (its options import bench/: ~25-50 ms)
    return ap


def _add_dask_opts(group):
    try:
        from . import distributed
    except ImportError:
        return
    distributed.add_arguments(group)


def cmd_align(args) -> int:       # in processes of their own where the knob splits the input
    from .processes import run
    return run(args, _cmd_align, _run)


def _cmd_align(args) -> int:
    from ._numba import start_cpu_target_soon
    from .config import settings as knobs
    from .plan import cores, input_decides, resolve_kernel

    start_cpu_target_soon()
    _check_ranges(args)
    check_graph_path(args.graph)
    if args.threads is not None:
        if args.threads < 1:
            raise S2GError("--threads must be >= 1")
        import numba
        n = min(cores(), numba.config.NUMBA_NUM_THREADS)
        if args.threads > n:
            warnings.warn(f"--threads {args.threads} is more than the {n} cores here; "
                          f"using {n}")
        args.threads = min(args.threads, n)
        numba.set_num_threads(args.threads)     # this thread; the Aligner sets its stages
    if getattr(args, "dask", None):
        from .distributed import prepare
        prepare(args)               # distributed loading meanwhile; --dask local: in-process?
    args.output_format = output_format(args)
    options = run_options(args)
    kernel = (None if input_decides(options, getattr(args, "dask", None))   # auto, a GPU: the
              else resolve_kernel(options.variant, options.traceback_on))   # input decides
    if args.batch_size is None:         # (with a GPU, later batches may grow: batch_grow)
        gpu = kernel is None or kernel.device == "cuda"
        args.batch_size, args.grow_to = (knobs().batch_first, knobs().batch_grow) if gpu else \
            (BATCH, 0)
    for path in (args.reads, args.reads2):
        if path is not None and path != "-" and not os.path.exists(path):
            raise S2GError(f"{path}: no such file")
    if options.pairs is not None:
        if args.interleaved and args.reads2 is not None:
            raise S2GError("give two paired files or one --interleaved file, not both")
        options.pairs.model()           # both or neither of --fragment-mean/--fragment-sd
        if args.strands != "both":
            raise S2GError("paired-end reads need both strands of the graph (--strands both): "
                           "the mates of a pair lie on opposite strands")
    from .config import settings as knobs
    from .pipeline import switch_interval      # (start-up: knob startup_switch_us)
    with output(args.output, inputs=align_inputs(args)) as out, \
            switch_interval(knobs().startup_switch_us):
        return _align(args, out, options, kernel)


def output_format(args) -> str:
    """gaf, sam or bam: --output-format, else by the -o suffix; SAM/BAM options checked."""
    fmt = requested_format(args)
    if fmt == "gaf" and (args.ref_path is not None or args.sort or args.read_group or
                         args.ref_name is not None or args.ref_length is not None):
        raise S2GError("--ref-path, --ref-name, --ref-length, --sort and --read-group are for "
                       "SAM/BAM output (--output-format sam|bam)")
    if fmt != "gaf":
        from .sam.writer import parse_read_group
        parse_read_group(args.read_group)          # a malformed one: before any work
        if args.no_traceback:
            raise S2GError("SAM/BAM output needs the alignments' paths: drop --no-traceback")
    return fmt


def run_options(args):
    """``s2g align``'s options as the run's record (:class:`s2g.plan.RunOptions`)."""
    from .plan import PairOptions, RunOptions, SamOptions, SeededOptions
    from .scoring import Scoring
    pairs = None
    if getattr(args, "reads2", None) is not None or getattr(args, "interleaved", False):
        pairs = PairOptions(args.interleaved, args.fragment_mean, args.fragment_sd,
                            args.rescue)
    elif getattr(args, "fragment_mean", None) is not None or \
            getattr(args, "fragment_sd", None) is not None:
        raise S2GError("--fragment-mean/--fragment-sd are for paired-end reads (READS READS2, "
                       "or --interleaved)")
    return RunOptions(
        Scoring(args.match, args.mismatch, args.gap_open, args.gap_extend), args.mode,
        args.variant, args.method, traceback=not args.no_traceback,
        traceback_on=args.traceback_on, max_traceback_cells=args.max_traceback_cells,
        seeded=SeededOptions(args.index, args.max_occ, args.max_windows, args.unseeded,
                             args.secondary, args.secondary_ratio, args.unseeded_min_score),
        threads=args.threads, graph_path=args.graph, strands=args.strands, pairs=pairs,
        break_cycles=args.break_cycles, max_read_len=args.max_read_len,
        sam=None if args.output_format == "gaf" else SamOptions(
            args.ref_path, args.ref_name, args.ref_length, args.read_group))


#: ``s2g align``'s numeric options with a plain range: (attribute, option, lowest, highest)
_RANGES = (("batch_size", "--batch-size", 1, None), ("max_traceback_cells",
           "--max-traceback-cells", 1, None), ("max_read_len", "--max-read-len", 1, None),
           ("max_occ", "--max-occ", 1, None), ("max_windows", "--max-windows", 1, None),
           ("secondary", "-N/--secondary", 0, None), ("secondary_ratio", "--secondary-ratio", 0, 1),
           ("dask_workers", "--dask-workers", 1, None), ("dask_window", "--dask-window", 1, None),
           ("dask_retries", "--dask-retries", 0, None))


def _check_ranges(args):
    """Refuse out-of-range numeric options before anything is read (None: unset)."""
    for name, flag, lo, hi in _RANGES:
        v = getattr(args, name, None)
        if v is None:
            continue
        if hi is not None and not lo <= v <= hi:
            raise S2GError(f"{flag} must be between {lo} and {hi}, got {v}")
        if v < lo:
            raise S2GError(f"{flag} must be >= {lo}, got {v}")


def _align(args, out, options, kernel) -> int:
    from .config import settings as knobs
    from .plan import (choose_device, early_seeds, peek_input, peek_start_cuda, plan,
                       preimport_gpu, resolve_kernel)
    from .variants.registry import cuda_at
    from .reads import iter_read_batches

    t0 = time.perf_counter()
    dask = getattr(args, "dask", None)
    sam = args.output_format != "gaf"
    pre = None                  # the seed index, read while the graph parses
    if args.method != "exact" and not dask:
        from .index import index_path, preload_index
        pre = preload_index(args.index or index_path(args.graph))
    if options.pairs is not None:
        from .reads import iter_pair_batches
        batches = iter_pair_batches(args.reads, args.reads2, options.pairs.interleaved,
                                    max(2, args.batch_size), qualities=sam)
    else:
        part = getattr(args, "reads_part", None)         # (s2g/processes.py)
        batches = iter_read_batches(args.reads, args.batch_size, qualities=sam,
                                    max_bases=knobs().batch_bases, part=part,
                                    grow_to=getattr(args, "grow_to", 0))
    run = None              # the whole input's size (auto: its method; with a GPU, its device)
    marks = []              # --timings: (milestone, seconds from t0) of the start-up
    clear, auto = False, kernel is None   # auto with a GPU driver: read first; CUDA starts
    if kernel is None:      # in a thread where the GPU is clearly worth it (the graph meanwhile)
        batches, run, clear = peek_start_cuda(batches, args.reads, options, pre)
        marks.append(("first batch read", time.perf_counter() - t0))
    elif pre is not None and kernel.device == "cuda":
        from .seeded import chains_gpu     # seeded on a GPU, most likely: its kernels
        chains_gpu.preload(pre)            # loaded meanwhile too (knob gpu_seeds)
    graph = _open_graph(args, options.scoring, options.mode,    # a FlatGraph, or a CyclicGraph
                        keep_paths=sam)
    t_graph = time.perf_counter()
    spent = {"load graph": t_graph - t0}
    batches, early = early_seeds(clear, graph, options, pre, batches, run, dask)  # (CPU)
    preimport_gpu(clear)          # (where the GPU is clear: while CUDA starts)
    kernel = resolve_kernel(*options.kernel_args) if clear else kernel   # (waits for CUDA)
    marks.append(("graph loaded", spent["load graph"]))
    if sam:                         # a graph SAM/BAM cannot use: say so before the index
        from .sam.refpath import path_name
        path_name(graph, args.ref_path)
    say = None if args.quiet else (lambda msg: print(f"s2g: {msg}", file=sys.stderr))
    if run is None and args.method == "auto" and not dask and options.pairs is None:
        batches, run = peek_input(batches, args.reads)   # a small input: full-graph DP
    kernel = kernel or choose_device(graph, options, run, say)
    if auto and kernel.device == "cuda":        # its start overlapped the graph's load
        spent["wait for CUDA"] = time.perf_counter() - t_graph
        marks.append(("CUDA started", cuda_at() - t0))
    t_graph = time.perf_counter()
    run = plan(graph, options, None, say, index=pre, kernel=kernel, estimate=run, early=early)
    if run.seeded is not None:
        spent["index"] = time.perf_counter() - t_graph
        from .reads import ramp_batches          # smaller first and last batches (knob)
        batches = ramp_batches(batches, knobs().batch_ramp if not dask else 0,
                               knobs().batch_ramp_ends)
    writer = _sam_writer(args, out, run, options) if sam else None
    if dask:
        from . import distributed
        settings = distributed.DaskSettings(dask, args.dask_workers, args.dask_window,
                                            args.dask_retries, args.batch_size)
        distributed.run_align(run, settings, args.reads, out, args.quiet, args.progress,
                              args.reads2, args.timings, t0, writer)
        return _index_bam(args, out, writer)
    from . import pipeline
    from .aligner import Aligner
    from .warmup import compile_note

    marks.append(("planned", time.perf_counter() - t0))
    aligner = Aligner.from_plan(run)
    counts = [0, 0]
    compile_note(aligner, args.quiet, reads=args.reads)   # cold: say so before the wait
    marks.append(("pipeline starts", time.perf_counter() - t0))
    bar = pipeline.input_progress(args.progress, args.reads)   # bytes of a file, else reads

    def write(item):
        n_reads, n_aligned, data = item
        if writer is None:
            out.write(data)
        else:
            writer.write_records(data, n_reads)
        counts[0] += n_reads
        counts[1] += n_aligned
        if bar is not None:
            bar.update(n_reads)

    try:
        aligner.run(batches if bar is None else bar.track(batches), write, t0,
                    writer and writer.batch_text)
        if writer is not None:
            writer.close()
    except BaseException:
        if writer is not None:
            writer.abort()        # its temporary folder too; -o's file goes with `output`
        raise
    finally:
        if bar is not None:
            bar.close()
    out.commit()
    args.part_counts = counts                   # (s2g/processes.py)
    _index_bam(args, out, writer)
    report(args, aligner, counts, time.perf_counter() - t0, spent, marks, t0)
    return 0


def _index_bam(args, out, writer) -> int:
    """A sorted BAM written to a regular file (not /dev/null, a FIFO) gets its index."""
    if writer is not None and args.sort and args.output_format == "bam" and \
            out.path != "-" and os.path.isfile(out.path):
        from .sam import index_bam
        index_bam(out.path)
    return 0


def _sam_writer(args, out, run, options):
    """The SamWriter of SAM/BAM output on the reference path (s2g/sam/), writing (SAM
    text, or BAM through pysam) into -o's temporary file or standard output."""
    import io

    from .sam.writer import run_writer
    graph = run.seeded.graph if run.seeded is not None else run.graph
    fmt = args.output_format
    target = out.tmp if out.tmp is not None else out.fh if (fmt == "bam" or args.sort) else \
        io.TextIOWrapper(out.fh, encoding="utf-8", errors="surrogateescape", write_through=True)
    return run_writer(target, graph, options.sam, fmt, args.sort, options.scoring,
                      args.threads or 1, ["s2g", *sys.argv[1:]])


def _open_graph(args, scoring=None, mode=None, cache="auto", keep_paths=False):
    """The FlatGraph, or for a cyclic graph without --break-cycles its CyclicGraph
    (s2g/cyclic.py), which full-graph DP unrolls per batch and seeded alignment once.
    ``cache``: the graph cache's mode (s2g/graph_cache.py) unless --no-graph-cache; sets
    ``args.graph_cache_hit``."""
    from .graph import open_graph

    if args.max_read_len is not None and args.max_read_len < 1:
        raise S2GError("--max-read-len must be >= 1")
    args.graph_cache_hit = False

    def note(event, msg):
        if event == "hit":
            args.graph_cache_hit = True
        elif not getattr(args, "quiet", False):
            print(_printable(f"s2g: {msg}"), file=sys.stderr)
    graph = open_graph(args.graph, strands=args.strands, break_cycles=args.break_cycles,
                       validate=args.validate, keep_paths=keep_paths,
                       cache=cache if getattr(args, "graph_cache", True) else "off", note=note)
    if is_cyclic(graph):
        if getattr(args, "dask", None):
            raise S2GError(f"{args.graph}: --dask does not align to a cyclic graph yet (the "
                           "workers load the graph themselves); use --break-cycles")
        if mode is not None:
            from .cyclic import walk_bound
            walk_bound(1, scoring, mode)      # refuses global mode, naming the way out
    return graph


def cmd_warmup(args) -> int:
    from .warmup import cmd_warmup as run
    return run(args)


def cmd_index(args) -> int:
    from .graph_cache import cache_path
    from .index import build_index, index_path

    check_graph_path(args.graph)
    if args.output:
        g = args.graph
        for src, what in ((g, f"the input file {g}"),
                          (cache_path(g), f"the graph cache of {g} ({cache_path(g)})")):
            if same_file(args.output, src):
                raise S2GError(f"-o {args.output} is {what}; choose another output")
    else:
        _check_index_beside(args.graph, index_path(args.graph))
    # the graph cache goes beside the graph with the index; with -o elsewhere, as align
    graph = _open_graph(args, cache="auto" if args.output else "write")
    _index_compile_note()
    if is_cyclic(graph):   # cyclic: the DAG seeded alignment unrolls
        graph = graph.for_seeded(args.max_read_len)
    idx = build_index(graph, k=args.k, s=args.s, max_kmers=args.max_kmers)
    path = idx.save(args.output or index_path(args.graph))
    st = idx.stats
    print(f"s2g: {path}: {st['entries']:,} seeds ({st['distinct']:,} distinct) over "
          f"{st['columns']:,} columns, {idx.nbytes / 1e6:,.1f} MB, {st['seconds']:.1f} s"
          + (f"; {st['capped_columns']:,} columns capped at --max-kmers"
             if st['capped_columns'] else ""), file=sys.stderr)
    return 0


def _index_compile_note():
    """``s2g index``'s first run compiles the index build (~7 s on a 2-core VM): say so,
    as ``s2g align`` does (s2g/warmup.py), when its functions are not cached."""
    try:
        from .warmup import COMPILE_NOTE, index_build_cold
        if index_build_cold():
            print(COMPILE_NOTE, file=sys.stderr, flush=True)
    except Exception:            # noqa: BLE001 - a note only
        pass


def _check_index_beside(graph, path):
    """Without ``-o`` the index goes beside the graph: say so before building it when it
    cannot (a graph from a pipe or process substitution, a directory not writable)."""
    if os.path.exists(graph) and not os.path.isfile(graph):
        raise S2GError(f"{graph} is not a regular file (a pipe?), so the index cannot go "
                       f"beside it as {path}; give -o FILE")
    d = os.path.dirname(path) or "."
    if os.path.isdir(d) and not os.access(d, os.W_OK):
        raise S2GError(f"{path}: cannot write the index beside the graph ({d} is not "
                       "writable); give -o FILE")


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
    if args.pairs:
        from .simulate import simulate_pairs
        if not args.fragment_mean > 0 or not args.fragment_sd >= 0:
            raise S2GError("--fragment-mean must be > 0 and --fragment-sd >= 0")
        paths = simulate_pairs(args.prefix, args.total_bases, args.node_len, args.branching,
                               args.reads, args.read_len, args.fragment_mean, args.fragment_sd,
                               args.error_rate, args.reverse_fraction, args.seed,
                               args.interleaved)
        paths = [p for p in paths if p is not None]
    elif args.interleaved:
        raise S2GError("--interleaved is for --pairs")
    else:
        paths = simulate(args.prefix, args.total_bases, args.node_len, args.branching,
                         args.reads, args.read_len, args.error_rate, args.reverse_fraction,
                         args.seed)
    print("\n".join(paths))
    return 0


def cmd_info(args) -> int:
    import json

    if args.config:
        from . import config
        rows = config.describe()
        if args.json:
            print(json.dumps({n: {"value": v, "source": src, "when": w, "doc": d}
                              for n, v, src, w, d in rows}, indent=2))
        else:
            w = max(len(r[0]) for r in rows)
            for n, v, src, when, doc in rows:
                print(f"{n:<{w}}  {v!s:<12} {src:<11} {when:<8} {doc}")
        return 0
    if args.graph is None:
        args.info_parser.error("a GRAPH to describe, or --config")
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
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) >= 2 and argv[0] == "bench":
        from .bench_cli import EXPERIMENTS, run_experiment
        if argv[1].replace("-", "_") in EXPERIMENTS:          # s2g bench NAME [options]
            return _run(lambda _: run_experiment(argv[1:]), None)
    ap = build_parser("bench" in argv)
    args = ap.parse_args(argv)
    if args.cmd is None:
        ap.print_help(sys.stderr)
        return 2
    handler = {"align": cmd_align, "simulate": cmd_simulate, "info": cmd_info,
               "variants": cmd_variants, "index": cmd_index, "warmup": cmd_warmup}.get(args.cmd)
    if handler is None:
        handler = args.func
    old_term = None
    if threading.current_thread() is threading.main_thread():
        with contextlib.suppress(ValueError, OSError):
            old_term = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        return _run(handler, args)
    finally:
        if old_term is not None:
            signal.signal(signal.SIGTERM, old_term)


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread as Ctrl-C is, so the same clean-up runs."""


def _on_sigterm(signum, frame):
    raise _Terminated()


def _exit_now(code):
    """After an interrupt: the output is cleaned up; a kernel may still run in a worker
    thread (it cannot be stopped from Python) and the interpreter would join it at exit,
    so leave at once when one is alive."""
    busy = [t for t in threading.enumerate()
            if t is not threading.main_thread() and not t.daemon and t.is_alive()]
    if busy:
        for f in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                f.flush()
        os._exit(code)
    return code


def _run(handler, args) -> int:
    # warnings go to stderr as they happen, so they come before the summary line
    with warnings.catch_warnings():
        warnings.simplefilter("always", UserWarning)
        warnings.showwarning = _show_warning
        try:
            from .config import settings
            settings()          # a bad S2G_CONFIG: its one-line error before anything runs
            code = handler(args)
        except S2GError as exc:
            print(_printable(f"s2g: error: {exc}"), file=sys.stderr)
            return 1
        except KeyboardInterrupt as exc:
            term = isinstance(exc, _Terminated)
            print(f"s2g: {'terminated' if term else 'interrupted'}", file=sys.stderr)
            return _exit_now(143 if term else 130)
        except BrokenPipeError as exc:
            # the reader went away (| head): stop, saying where the output was cut (no
            # summary line: it would count reads that were never written); point fd 1 at
            # /dev/null so the interpreter's last flush does not complain
            with contextlib.suppress(Exception):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            lines = getattr(exc, "s2g_lines", None)
            if lines is not None and not getattr(args, "quiet", False):
                print(f"s2g: output cut: the reader of standard output (e.g. '| head') "
                      f"closed it; {lines:,} GAF line{'' if lines == 1 else 's'} had been "
                      "written to it", file=sys.stderr)
            return 0
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            print(_printable(f"s2g: error: {where}{exc.strerror or exc}"), file=sys.stderr)
            return 1
        except MemoryError:
            print("s2g: error: out of memory; try a smaller --batch-size", file=sys.stderr)
            return 1
        except Exception as exc:  # a bug: one line, full trace only on request
            if _debug():
                raise
            if "OUT_OF_MEMORY" in str(exc):     # the CUDA driver's, either launch path
                print("s2g: error: out of GPU memory; try a smaller --batch-size or "
                      "--variant simd", file=sys.stderr)
                return 1
            from .errors import where
            print(f"s2g: internal error: {type(exc).__name__}: {exc} (at {where(exc)}; set "
                  "S2G_DEBUG=1 for the traceback and please report it)", file=sys.stderr)
            return 3
    return code


def _debug() -> bool:
    try:
        from .config import settings
        return settings().debug
    except Exception:  # noqa: BLE001 - a bad S2G_CONFIG must not hide the first error
        return False


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """``warnings.showwarning`` while a command runs: a UserWarning as one line
    ``s2g: warning: ...`` on stderr at once (above a progress bar, if one is drawn);
    other categories (deprecations in libraries) are not for the user."""
    if not issubclass(category, UserWarning):
        return
    text = _printable(f"s2g: warning: {message}")
    tq = sys.modules.get("tqdm")
    if tq is not None and getattr(tq.tqdm, "_instances", None):
        tq.tqdm.write(text, file=sys.stderr)
    else:
        print(text, file=sys.stderr)
