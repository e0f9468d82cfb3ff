"""Scoring scheme, alignment modes and score bounds.

Convention (abPOA, minimap2): match ``+a``, mismatch ``-b``, and a gap of length
``k`` costs ``o + k*e``. ``N`` on either side scores as a mismatch. Parasail and
BLAST write the same scheme as ``open = o + e``, ``extend = e``.

Everything is validated here, once, before a variant is chosen (STYLE.md habit 1).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass

from .errors import S2GError

#: "minus infinity" for DP cells that cannot be reached. Far enough from the int32
#: limits that subtracting a few gap penalties can never wrap, close enough that
#: int32 kernels can use it too.
NEG_INF = -(1 << 29)

#: largest |score| an int32 kernel accepts (see :func:`score_bound`).
INT32_SAFE = (1 << 28)


class Mode(enum.IntEnum):
    """Alignment mode; the integer value is what kernels receive."""

    LOCAL = 0       #: best (read substring, graph walk substring); H floored at 0
    SEMIGLOBAL = 1  #: whole read against any graph walk (free graph ends)
    GLOBAL = 2      #: whole read against a whole source-to-sink walk

    @classmethod
    def parse(cls, value) -> "Mode":
        if isinstance(value, Mode):
            return value
        try:
            return cls[str(value).upper()]
        except KeyError:
            names = ", ".join(m.name.lower() for m in cls)
            raise S2GError(f"unknown mode {value!r}; choose one of: {names}") from None


#: the lowest value of each scoring option, and why where it is not plain
_LOWEST = {"match": 1, "mismatch": 0, "gap_open": 0, "gap_extend": 1}
_WHY = {"match": "otherwise no alignment scores above an empty one",
        "gap_extend": "a free gap extension makes the optimum ill-defined"}


@dataclass(frozen=True)
class Scoring:
    """Affine scoring: match ``+match``, mismatch ``-mismatch``, gap k = ``gap_open + k*gap_extend``."""

    match: int = 2
    mismatch: int = 4
    gap_open: int = 4
    gap_extend: int = 2

    def __post_init__(self):
        for name in ("match", "mismatch", "gap_open", "gap_extend"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int):
                raise S2GError(f"--{name.replace('_', '-')} must be an integer, got {v!r}")
            flag = f"--{name.replace('_', '-')}"
            lo = _LOWEST[name]
            if v < lo:
                why = _WHY.get(name, "")
                if v < 0 and name != "match":     # the sign convention, not the range
                    why = (f"it is a penalty's magnitude: a {name.replace('_', ' ')} of {v} "
                           f"is written {flag} {-v}")
                raise S2GError(f"{flag} must be >= {lo}, got {v}" + (f" ({why})" if why else ""))
            if v > 10_000:
                raise S2GError(f"{flag} {v} is out of range (at most 10000)")

    @property
    def parasail_open(self) -> int:
        """Parasail's gap-open (cost of the first gap base)."""
        return self.gap_open + self.gap_extend

    def as_tuple(self):
        return (self.match, self.mismatch, self.gap_open, self.gap_extend)


def score_bound(scoring: Scoring, mode: Mode, read_len: int, graph_bases: int) -> int:
    """Largest absolute value any DP cell can hold (before NEG_INF sentinels).

    Best: ``a*m``. Worst reachable: local cells are >= 0; semiglobal cells are
    >= -(o + e*m) (insert the read prefix); global cells can also delete the whole
    graph: >= -(2*o + e*(m + graph_bases)) - b*m. E/F add one more gap open.
    """
    a, b, o, e = scoring.as_tuple()
    best = a * read_len
    if mode == Mode.LOCAL:
        worst = o + e
    elif mode == Mode.SEMIGLOBAL:
        worst = 2 * o + e * (read_len + 1) + b * read_len
    else:
        worst = 3 * o + e * (read_len + graph_bases + 1) + b * read_len
    return max(best, worst)


def fits_int32(scoring: Scoring, mode: Mode, read_len: int, graph_bases: int) -> bool:
    """True when int32 kernels are exact for this problem (abPOA's int16/int32 switch, one level up)."""
    return score_bound(scoring, mode, read_len, graph_bases) < INT32_SAFE
