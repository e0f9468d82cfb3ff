"""FASTA/FASTQ(.gz) -> ReadBatch (uint8 base codes, offsets, names).

Parsing is dnaio's (the reader behind cutadapt): FASTA and FASTQ detected from the
content, gzip/bzip2/xz through xopen, multi-line FASTA, and it is several times faster
than a Python loop. Nothing here is written by hand except the base check.

Bases: ACGT (either case; U reads as T) keep their codes; the other IUPAC codes
(N R Y S W K M B D H V) become N, which scores as a mismatch against everything.
Any other character stops the run with the read name and position. Empty reads are
kept (they get a GAF no-hit line); duplicate names are kept as they are.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from .errors import ReadError
from .graph import BASE_CODE

_VALID = np.zeros(256, bool)
for _c in "ACGTUNRYSWKMBDHV":
    _VALID[ord(_c)] = _VALID[ord(_c.lower())] = True


@dataclass
class ReadBatch:
    """Reads as one flat code array: read r is ``codes_flat[offsets[r]:offsets[r+1]]``."""

    names: list
    codes_flat: np.ndarray   # uint8
    offsets: np.ndarray      # int64[n+1]
    first_index: int = 0     # position of read 0 in the whole input (streaming)

    @property
    def n_reads(self) -> int:
        return len(self.names)

    def codes(self, r: int) -> np.ndarray:
        return self.codes_flat[self.offsets[r]:self.offsets[r + 1]]

    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    @property
    def max_len(self) -> int:
        return int(self.lengths().max(initial=0))

    @property
    def total_bases(self) -> int:
        return int(self.offsets[-1])

    def subset(self, idx) -> "ReadBatch":
        idx = np.asarray(idx, np.int64)
        return ReadBatch.from_codes([self.names[i] for i in idx], [self.codes(i) for i in idx])

    @classmethod
    def from_codes(cls, names, code_arrays, first_index=0) -> "ReadBatch":
        lens = np.fromiter((len(c) for c in code_arrays), np.int64, len(code_arrays))
        offsets = np.zeros(len(lens) + 1, np.int64)
        np.cumsum(lens, out=offsets[1:])
        flat = np.concatenate(code_arrays).astype(np.uint8) if len(code_arrays) else np.zeros(0, np.uint8)
        return cls(list(names), flat, offsets, first_index)

    @classmethod
    def from_sequences(cls, names, seqs, first_index=0, source="<input>") -> "ReadBatch":
        """Encode sequences (str or bytes), checking every character (see module doc)."""
        raw = [s.encode() if isinstance(s, str) else bytes(s) for s in seqs]
        lens = np.fromiter((len(s) for s in raw), np.int64, len(raw))
        offsets = np.zeros(len(raw) + 1, np.int64)
        np.cumsum(lens, out=offsets[1:])
        buf = np.frombuffer(b"".join(raw), np.uint8)
        bad = np.nonzero(~_VALID[buf])[0]
        if len(bad):
            p = int(bad[0])
            r = int(np.searchsorted(offsets, p, side="right") - 1)
            ch = chr(buf[p])
            raise ReadError(f"{source}: read {names[r]!r} (record {first_index + r + 1}) has invalid "
                            f"character {ch!r} at position {p - offsets[r] + 1}; reads must be IUPAC nucleotides")
        return cls(list(names), BASE_CODE[buf], offsets, first_index)


def _open(path):
    import dnaio

    if not os.path.exists(path):
        raise ReadError(f"{path}: no such file")
    if os.path.isdir(path):
        raise ReadError(f"{path}: is a directory, expected FASTA or FASTQ")
    if os.path.getsize(path) == 0:
        return None
    try:
        return dnaio.open(path)
    except (OSError, dnaio.exceptions.UnknownFileFormat, dnaio.exceptions.FileFormatError) as exc:
        raise ReadError(f"{path}: not a FASTA/FASTQ file ({_one_line(exc)})") from None


def _one_line(exc) -> str:
    s = str(exc).strip().splitlines()
    return s[0] if s else type(exc).__name__


def iter_read_batches(path: str, batch_size: int = 65536):
    """Yield :class:`ReadBatch` chunks of at most ``batch_size`` reads, in input order."""
    import dnaio

    if batch_size < 1:
        raise ReadError("batch size must be >= 1")
    fh = _open(path)
    if fh is None:
        return
    names, seqs, first = [], [], 0
    try:
        with fh:
            for rec in fh:
                names.append(rec.name.split(None, 1)[0] if rec.name.strip() else rec.name)
                seqs.append(rec.sequence)
                if len(names) == batch_size:
                    yield ReadBatch.from_sequences(names, seqs, first, path)
                    first += len(names)
                    names, seqs = [], []
    except (dnaio.exceptions.FileFormatError, EOFError, OSError) as exc:
        raise ReadError(f"{path}: malformed input after record {first + len(names)} ({_one_line(exc)})") from None
    if names:
        yield ReadBatch.from_sequences(names, seqs, first, path)


def read_reads(path: str) -> ReadBatch:
    """All reads of a FASTA/FASTQ(.gz) file in one batch."""
    batches = list(iter_read_batches(path, batch_size=1 << 62))
    if not batches:
        return ReadBatch.from_codes([], [])
    return batches[0]
