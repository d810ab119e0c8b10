"""``quantile(c, q)`` and ``quantile(c, [q₁, …])``: the exponential mechanism over a grid of the declared bounds,
by the library's sampler (:mod:`privnoise.analysis.quantiles`).

Candidates are the grid points jΛ in the declared bounds [lo, hi] of the column (Λ a power of two, at least
:data:`RESOLUTION` steps across); the records' clamped values are rounded to the grid; the score of a candidate c for
level q is s(c) = |(1 − q)·#{x < c} − q·#{x > c}|, and c is drawn with probability ∝ exp(−ε s(c)/(2Δ)).

**Sensitivity for the server's privacy unit.** Neighbours differ by one record added, removed or replaced. Adding or
removing one moves s by at most max(q, 1 − q); replacing one may move it from below c to above c, changing
#{x < c} by −1 and #{x > c} by +1, so s moves by at most (1 − q) + q = 1. Hence Δ = 1 for every level. The
release is ε-DP by the exponential mechanism's guarantee (Koufogiannis et al., Proposition 4, as corrected in
:mod:`privnoise.dp.exponential`); L levels take ε/L each (sequential composition), and the policy's ε is charged
exactly, δ = 0.

**Constant work.** The statement reads every record's clamped value and filter weight (one pass over the table,
whatever a filter selects); the counts per grid point are weighted sums over all records, so a filtered-out
record is an occupied point with count 0 (which leaves the mechanism's distribution unchanged: such a point has the
score of the gaps on either side).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..analysis.quantiles import grid_steps, quantile_blocks, sample_quantile
from ..random import default_rng

__all__ = ["RESOLUTION", "QuantileRelease", "SENSITIVITY"]

#: At least this many grid steps across the declared bounds (as the library's default).
RESOLUTION = 1 << 14
#: The score's sensitivity for one record added, removed or replaced (module docstring).
SENSITIVITY = 1.0


class QuantileRelease:
    """The exponential-mechanism release of ``levels`` of a column declared on ``bounds``, ``epsilon`` in all."""

    def __init__(self, bounds: tuple[float, float], levels: tuple[float, ...], epsilon: float) -> None:
        self.levels = levels
        self.epsilon_each = epsilon / len(levels)
        self.step, self.low, self.high = grid_steps(bounds[0], bounds[1], RESOLUTION)
        self.candidates = self.high - self.low + 1

    def blocks(self, values: NDArray[np.float64], weights: NDArray[np.float64], q: float) -> Any:
        """The candidate blocks of level ``q`` (every record counted with its filter weight)."""
        points = np.clip(np.rint(values / self.step), self.low, self.high).astype(np.int64)
        occupied, inverse = np.unique(points, return_inverse=True)
        counts = np.bincount(inverse, weights=weights, minlength=occupied.size).astype(np.float64)
        return quantile_blocks(occupied, counts, q, self.low, self.high, self.step)

    def sample(self, values: NDArray[np.float64], weights: NDArray[np.float64], q: float, size: int,
               generator: np.random.Generator) -> NDArray[np.float64]:
        """``size`` independent releases of level ``q`` (what :meth:`release` draws once; for tests and audits)."""
        return np.asarray(sample_quantile(self.blocks(values, weights, q), self.epsilon_each, SENSITIVITY, size,
                                          generator))

    def release(self, values: NDArray[np.float64], weights: NDArray[np.float64],
                generator: np.random.Generator | None = None) -> float | list[float]:
        """One grid value per level (a number for one level), drawn from the server's cryptographically strong
        generator (``generator`` is for tests only: no request can give one)."""
        rng = default_rng() if generator is None else generator
        chosen = [float(self.sample(values, weights, q, 1, rng)[0]) for q in self.levels]
        return chosen[0] if len(chosen) == 1 else chosen
