"""Result types: one small frozen record per read, arrays per batch (STYLE.md habit 8)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from .scoring import NEG_INF


@dataclass(frozen=True)
class Traceback:
    """Where the optimal alignment lies, in read and path coordinates.

    ``path``: oriented node ids (``FlatGraph`` topological indices) in walk order;
    ``path_start``/``path_end``: 0-based, end-exclusive offsets in the concatenated
    oriented path sequence; ``cigar``: ``=``/``X``/``I``/``D`` runs (clips are
    implied by ``qstart``/``qend`` as in GAF).
    """

    qstart: int
    qend: int
    path: tuple
    path_len: int
    path_start: int
    path_end: int
    cigar: str
    matches: int
    block_len: int
    edits: int


@dataclass(frozen=True)
class AlignResult:
    name: str
    qlen: int
    score: Optional[int]       # None: no alignment
    end_i: int                 # read row of the end cell (1-based rows, 0 = none)
    end_j: int                 # graph column (topological base index), -1 = none
    traceback: Optional[Traceback] = None
    mapq: int = 255            # GAF column 12 of an aligned read (255: not computed)

    @property
    def aligned(self) -> bool:
        return self.score is not None


class BatchResult:
    """Scores and end cells as arrays (what kernels fill) plus optional tracebacks."""

    def __init__(self, names, lengths, score, end_i, end_j, tracebacks=None):
        self.names = names
        self.lengths = np.asarray(lengths)
        self.score = score
        self.end_i = end_i
        self.end_j = end_j
        self._tracebacks = tracebacks
        self._pending = None       # completes the tracebacks (set_pending)
        self.flat = None           # FlatTracebacks: the tracebacks as arrays (GAF writer)
        self.mapq = None           # int array (seeded alignment), None: 255 for every read

    @property
    def flat(self):
        """The tracebacks as arrays (:class:`~s2g.traceback.FlatTracebacks`; None: none),
        completed first where a traceback left its last steps pending
        (:meth:`set_pending`)."""
        fn = self._pending
        if fn is not None:
            self._pending = None
            fn()
        return self._flat

    @flat.setter
    def flat(self, value):
        self._flat = value

    def set_pending(self, fn):
        """``fn()`` (which calls :meth:`set_flat`) runs when :attr:`flat` is first read: a
        traceback stage leaves its packing of CIGARs and paths to the thread that formats
        the batch (:meth:`s2g.aligner.Aligner.finish` with ``late``)."""
        self._pending = fn

    @property
    def tracebacks(self):
        """One :class:`Traceback` (or None) per read, built from ``flat`` when first used."""
        if self._tracebacks is None and self.flat is not None:
            self._tracebacks = self.flat.objects()
        return self._tracebacks

    @tracebacks.setter
    def tracebacks(self, value):
        self._tracebacks = value
        self._pending = None
        self.flat = None

    def set_flat(self, flat):
        """Tracebacks as arrays (:class:`~s2g.traceback.FlatTracebacks`); objects on demand."""
        self._tracebacks = None
        self.flat = flat

    def __len__(self):
        return len(self.names)

    def aligned(self) -> np.ndarray:
        return (self.score > NEG_INF) & (self.end_j >= 0)

    def __getitem__(self, r) -> AlignResult:
        ok = bool(self.score[r] > NEG_INF and self.end_j[r] >= 0)
        tb = self.tracebacks[r] if self.tracebacks is not None else None
        mq = 255 if self.mapq is None else int(self.mapq[r])
        return AlignResult(self.names[r], int(self.lengths[r]), int(self.score[r]) if ok else None,
                           int(self.end_i[r]), int(self.end_j[r]), tb, mq)

    def __iter__(self):
        # Python lists once, not numpy scalar indexing six times per read (GAF writing
        # iterates every result of every batch)
        score, ei, ej = (np.asarray(x).tolist() for x in (self.score, self.end_i, self.end_j))
        lens, tbs = self.lengths.tolist(), self.tracebacks
        mq = [255] * len(self) if self.mapq is None else np.asarray(self.mapq).tolist()
        for r in range(len(self)):
            ok = score[r] > NEG_INF and ej[r] >= 0
            yield AlignResult(self.names[r], lens[r], score[r] if ok else None, ei[r], ej[r],
                              tbs[r] if tbs is not None else None, mq[r])
