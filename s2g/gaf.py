"""GAF writer (lh3/gfatools rGFA.md): exactly one line per read, in input order.

Columns: query name, query length, query start, query end (0-based, end-exclusive),
strand (always ``+``: the path carries the orientation), path (``>s1>s2<s3``), path
length, path start, path end, residue matches, alignment block length, mapping
quality (255 = not computed); tags ``AS:i`` (score), ``NM:i`` (mismatches + inserted
+ deleted bases), ``cg:Z`` (CIGAR with ``=``/``X``/``I``/``D``). A read without an
alignment (or without a traceback) is written as a no-hit line, never dropped:
``name qlen 0 0 * * 0 0 0 0 0 255`` plus ``AS:i`` when a score exists.
"""
from __future__ import annotations


def gaf_line(graph, res) -> str:
    """The GAF line of one :class:`~s2g.result.AlignResult`."""
    tb = res.traceback
    if not res.aligned or tb is None:
        line = f"{res.name}\t{res.qlen}\t0\t0\t*\t*\t0\t0\t0\t0\t0\t255"
        if res.aligned:
            line += f"\tAS:i:{res.score}"
        return line
    names = graph.oriented_names()
    path = "".join([names[v] for v in tb.path])
    return (f"{res.name}\t{res.qlen}\t{tb.qstart}\t{tb.qend}\t+\t{path}\t{tb.path_len}\t"
            f"{tb.path_start}\t{tb.path_end}\t{tb.matches}\t{tb.block_len}\t255\t"
            f"AS:i:{res.score}\tNM:i:{tb.edits}\tcg:Z:{tb.cigar}")


def write_gaf(fh, graph, batch) -> int:
    """Write every result of ``batch`` to ``fh``; returns the number of lines."""
    n = 0
    for res in batch:
        fh.write(gaf_line(graph, res))
        fh.write("\n")
        n += 1
    return n
