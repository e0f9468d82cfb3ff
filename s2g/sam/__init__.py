"""Surjection: graph alignments projected onto one reference path, written as SAM/BAM.

A read's graph alignment (:class:`~s2g.result.Traceback`: a walk of oriented nodes, the
walk offsets ``path_start``/``path_end``, the read clip ``qstart``/``qend``) is placed on
a reference path (a GFA ``P`` or ``W`` line, :class:`RefPath`) in three steps, all in
Numba over the whole batch:

1. **Placement** (:func:`_place`, parallel over reads). Every walk node that overlaps
   the aligned part of the walk and whose segment occurs on the path votes, once per
   occurrence, for a strand (the node in the step's orientation: forward; in the
   opposite one: reverse) and an offset between walk and path coordinates, weighted by
   the bases it covers. The heaviest cluster of votes of one strand whose offsets lie
   within ``16 + indels + aligned_walk_len/4`` of each other is the first candidate;
   up to :data:`CANDIDATES` windows with at least half its weight follow (a path through
   collapsed repeats, LPA's KIV-2 copies, repeats the read's segments; each candidate is
   realigned and the best score wins, ties to the heaviest; a repeat closer than the
   tolerance widens one window instead). Each window is the cluster's span around the
   aligned walk, plus a
   pad of ``8 + I + D`` bases (the graph CIGAR's inserted and deleted bases), clamped to
   the path. The votes' tolerance also takes in the path bases the walk skips or adds
   between its on-path nodes (a deletion or insertion allele against the path, up to a
   read length: :func:`_skips`), so such a read is one window whose band spans the gap. A walk with no node on the path: unmapped (FLAG 4) with its graph placement
   in tags ``XG:Z`` (GAF path) and ``XP:i`` (path start).
2. **Realignment** (:func:`_realign`, parallel over reads, int32). The aligned part of
   the read (``qstart..qend``, reverse-complemented on the reverse strand) is aligned
   with free end gaps in the reference window (glocal) with the same affine scoring as the
   graph DP (match ``+a``, mismatch/N ``-b``, gap of ``k`` ``-(o + k*e)``), in a diagonal
   band that holds the graph alignment's diagonals (the expected start and end diagonals
   +- the pad); either end of the read part may be soft-clipped at a penalty of
   ``CLIP_PENALTY`` (5) matches, as bwa-mem's ``-L 5,5``: read bases the path does not
   spell (an insertion allele, a read past the path's end, an allele the read takes that
   would cost more as a gap) become ``S``, not inserted or scattered edits. On a linear
   stretch of the path the result is the best alignment of that read part to the window,
   so AS equals the graph score there (AS: the CIGAR's score; candidates compare it less the
   clip penalties). Tie order in the
   traceback: match/mismatch, then insertion, then deletion; the leftmost end column of
   the last row; a whole read before a clipped one.
3. **Formatting** (:func:`_format_sam`, sequential Numba, like :mod:`s2g.gaf`): SAM
   lines with ``M``/``I``/``D`` CIGARs, ``S`` for the clipped read ends, ``NM:i``,
   ``MD:Z``, ``AS:i`` (the realigned score), MAPQ from the graph alignment (255 when the
   aligner did not compute one), capped by the best candidate elsewhere on the path (a
   repeat the path holds twice: 20 a mismatch, 0 on a tie; ``writer._path_mapq``),
   ``XG:Z``/``XP:i``; a pair's 0x2 also needs its mates forward-reverse on the path within
   the fragment model's mean + 4 sd (``writer._proper_on_path``). Reverse-strand records carry FLAG
   16 and the reverse-complemented SEQ/QUAL, as SAM wants.

Exactly one primary record per input read, in input order. Secondary graph alignments
(``res.secondary``, seeded ``-N``) are surjected the same way and follow their read's
primary record (:meth:`SamWriter._with_secondaries`): FLAG 256, MAPQ 0, SEQ and QUAL ``*``
(minimap2's default), the same CIGAR and tags; one whose walk misses the path, or that
repeats its primary's or an earlier secondary's strand and span, is not written; for
pairs, FLAG 1/64/128/8/32, RNEXT/PNEXT and ``MC:Z`` from the mate's primary, TLEN 0.

A read whose candidates align two parts of it (an SV against the path) also gets a
supplementary record for the second part (FLAG 2048, soft clips, whole SEQ; ``SA:Z`` on
both: :meth:`SamWriter._with_supplementary`), after its primary and secondary records.

Pairs: :meth:`SamWriter.write_batch` with ``pairs`` (2n reads interleaved, mate 1 of pair
k at 2k) chooses the mates' path candidates together (with the pairs' fragment model:
:mod:`s2g.sam.pairing`), sets FLAG 1/2/8/32/64/128, RNEXT/PNEXT/TLEN and places an
unmapped mate at its mate's position (SAM 1.6, section 2.4).

BAM goes through pysam (imported only then: ``pip install 's2g[bam]'``); ``sort``
writes a coordinate-sorted BAM (``pysam.sort``), ``index`` its ``.bai``.

The package, by phase:

* :mod:`s2g.sam.refpath` — the reference path as arrays (:class:`RefPath`), which path
  (:func:`choose_path`), the path's bases;
* :mod:`s2g.sam.project` — placement (``_place``), realignment (``_realign``), a
  batch's surjection (:func:`surject_batch`, :class:`Surjected`);
* :mod:`s2g.sam.pairing` — the mates' candidates chosen together (``pair_pick``);
* :mod:`s2g.sam.writer` — the Numba SAM formatter (``_format_sam``), :class:`SamWriter`
  (SAM/BAM, sort, index), :func:`write_sam`, :func:`index_bam`.
"""
from .project import (CANDIDATES, FORWARD, MIN_SHARE, NONE, OFF_PATH, OP_DEL,  # noqa: F401
                      OP_INS, OP_MATCH, OP_MISMATCH, REVERSE, Surjected, surject_batch)
from .refpath import RefPath, choose_path  # noqa: F401
from .writer import SamWriter, index_bam, write_sam  # noqa: F401

__all__ = ["CANDIDATES", "FORWARD", "MIN_SHARE", "NONE", "OFF_PATH", "OP_DEL", "OP_INS",
           "OP_MATCH", "OP_MISMATCH", "REVERSE", "RefPath", "SamWriter", "Surjected",
           "choose_path", "index_bam", "surject_batch", "write_sam"]
