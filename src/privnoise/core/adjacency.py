"""Neighbouring databases and the sensitivity of each aggregate between them, written once for every interface.

An aggregate is a sum over rows of a per-row value g ∈ [low, high] (a count is g = 1; a sum of clamped x is
g = x; a centred sum is g = x − c ∈ [−h, h]; a sum of squares is g = (x − c)² ∈ [0, h²]); a vector aggregate sums
g into disjoint cells (a histogram, a group-by), each row in one cell. Its sensitivity is the largest change, in
the norm of the noise (ℓ1 for Laplace, ℓ2 for Gaussian), between two neighbouring databases:

=========================  =================================  ===============================================
adjacency                  scalar sum                         vector of cells (ℓ1 / ℓ2)
=========================  =================================  ===============================================
:class:`RecordReplaced`    max(high − low, |low|, |high|)     max(high − low, 2M) / max(high − low, √2·M)
:class:`UnitAddedOrRemoved`  k·M                              k·M / k·M
=========================  =================================  ===============================================

with M = max(|low|, |high|). The quantile score s(c) = |(1 − q)·#{x < c} − q·#{x > c}| moves by at most 1 when one
record is replaced (it leaves one side of c for the other: (1 − q) + q) and by k·max(q, 1 − q) when a unit of k
rows is added or removed. One record replaced by another moves g from one value to another (high − low) in
the same cell, or takes M out of one cell and puts M into another (2M in ℓ1, √2·M in ℓ2); added or removed, it
changes one cell by at most M. A unit added or removed brings or takes at most k rows, each changing its cell by
at most M: k·M in ℓ1, and in ℓ2 at most k·M, reached when all k rows fall in one cell.

The query server's neighbours are :class:`RecordReplaced` (bounded and unbounded adjacency together); the
analyst's :class:`~privnoise.Session` uses :class:`UnitAddedOrRemoved` with the session's contribution cap k.

Examples
--------
>>> RecordReplaced().sum(10.0, 60.0), RecordReplaced().cells(0.0, 60.0, "l1")
(60.0, 120.0)
>>> UnitAddedOrRemoved(3).sum(-1.0, 0.5), UnitAddedOrRemoved(3).count()
(3.0, 3.0)
>>> RecordReplaced().quantile_score(0.9), UnitAddedOrRemoved(3).quantile_score(0.9)
(1.0, 2.7)
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Literal

from ..exceptions import InvalidParameterError

__all__ = ["Adjacency", "Bounds", "Norm", "RecordReplaced", "UnitAddedOrRemoved"]

Norm = Literal["l1", "l2"]


@dataclass(frozen=True, slots=True)
class Bounds:
    """Declared bounds [low, high] of a value column."""

    low: float
    high: float

    @property
    def centre(self) -> float:
        """c = (low + high)/2."""
        return (self.low + self.high) / 2.0

    @property
    def half(self) -> float:
        """h = (high − low)/2."""
        return (self.high - self.low) / 2.0

    @property
    def magnitude(self) -> float:
        """M = max(|low|, |high|)."""
        return max(abs(self.low), abs(self.high))


def _norm(norm: str) -> str:
    if norm not in ("l1", "l2"):
        raise InvalidParameterError(f"a sensitivity norm must be 'l1' or 'l2'; got {norm!r}.")
    return norm


def _checked(low: float, high: float) -> tuple[float, float]:
    if not (math.isfinite(low) and math.isfinite(high)) or low > high:
        raise InvalidParameterError(f"a per-row range must be finite with low ≤ high; got [{low}, {high}].")
    return float(low), float(high)


class Adjacency(ABC):
    """Which databases are neighbours, and the sensitivities that follow (module docstring)."""

    @abstractmethod
    def sum(self, low: float, high: float) -> float:
        """Δ of Σ g over rows, each g ∈ [low, high]."""

    @abstractmethod
    def cells(self, low: float, high: float, norm: Norm) -> float:
        """Δ (``norm``) of a vector whose cells each sum g ∈ [low, high] over disjoint rows."""

    @abstractmethod
    def describe(self) -> str:
        """The neighbours in words (stated with every guarantee)."""

    @abstractmethod
    def quantile_score(self, q: float) -> float:
        """Δ of the quantile score s(c) = |(1 − q)·#{x < c} − q·#{x > c}| at level ``q``."""

    @property
    @abstractmethod
    def several_cells(self) -> bool:
        """Whether one neighbour may change more than one cell of a vector of disjoint cells."""

    @property
    @abstractmethod
    def monotone_counts(self) -> bool:
        """Whether the counts of disjoint cells all move the same way between neighbours (none up, one down)."""

    def count(self) -> float:
        """Δ of a count of rows (g = 1)."""
        return self.sum(1.0, 1.0)


@dataclass(frozen=True, slots=True)
class RecordReplaced(Adjacency):
    """One record added, removed or replaced by another (the query server's neighbours)."""

    def sum(self, low: float, high: float) -> float:
        low, high = _checked(low, high)
        return max(high - low, abs(low), abs(high))

    def cells(self, low: float, high: float, norm: Norm) -> float:
        low, high = _checked(low, high)
        moved = max(abs(low), abs(high)) * (2.0 if _norm(norm) == "l1" else math.sqrt(2.0))
        return max(high - low, moved)

    def describe(self) -> str:
        return "one record added, removed or replaced"

    def quantile_score(self, q: float) -> float:
        return 1.0  # added or removed: max(q, 1 − q); replaced: one record from below c to above, (1 − q) + q

    @property
    def several_cells(self) -> bool:
        return True  # replaced: out of one cell, into another

    @property
    def monotone_counts(self) -> bool:
        return False  # replaced: one count down, another up


@dataclass(frozen=True, slots=True)
class UnitAddedOrRemoved(Adjacency):
    """One privacy unit added or removed, with at most ``k`` of its rows used (the Session's neighbours)."""

    k: int

    def __post_init__(self) -> None:
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
            raise InvalidParameterError(f"`k` of `UnitAddedOrRemoved` must be an integer ≥ 1; got {self.k!r}.")

    def sum(self, low: float, high: float) -> float:
        low, high = _checked(low, high)
        return self.k * max(abs(low), abs(high))

    def cells(self, low: float, high: float, norm: Norm) -> float:
        _norm(norm)
        return self.sum(low, high)  # ℓ1 and ℓ2 alike: all k rows may fall in one cell

    def describe(self) -> str:
        return f"one unit added or removed (at most {self.k} rows used)"

    def quantile_score(self, q: float) -> float:
        return self.k * max(q, 1.0 - q)  # each of the k rows moves one of the two counts by one

    @property
    def several_cells(self) -> bool:
        return self.k > 1

    @property
    def monotone_counts(self) -> bool:
        return True  # rows only arrive (or only leave)
