"""Quantiles by the exponential mechanism over a power-of-two grid of the declared range.

Candidates are the grid points jΛ in [low, high] (Λ a power of two, at least ``resolution`` steps across the range,
so every output is an exact grid point and no low-order bit depends on the data). Values are clamped to the range
and rounded to the grid (a per-row transformation, applied before anything is counted). The score of a candidate c
for the level q is

    s(c) = |(1 − q)·#{x < c} − q·#{x > c}|,

which is |#{x < c} − q·n| when no row sits at c. Adding or removing one unit (≤ k rows) moves each count by at
most k in one direction, so s moves by at most Δ = k·max(q, 1 − q). The candidate c is released with probability
∝ exp(−ε s(c)/(2Δ)): ε-DP by Koufogiannis et al.'s Proposition 4 as corrected in
:mod:`privnoise.dp.exponential` (the normaliser moves too, hence the factor 2), and ε²/8-zCDP.

Between two occupied grid points all candidates share one score, so the grid is handled as O(n) blocks (gaps and
occupied points) with multiplicities: the sampler draws a block with probability ∝ size · weight, then a point of
the block uniformly — the exact exponential mechanism over all grid points, at any resolution, in O(n log n).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..dp.exponential import exponential_mechanism, selection_probabilities

__all__ = ["QuantileBlocks", "quantile_blocks", "sample_quantile", "score_sensitivity"]


def score_sensitivity(q: float, max_contributions: int) -> float:
    """Δ = k·max(q, 1 − q): the sensitivity of the quantile score to one unit of at most k rows.

    Examples
    --------
    >>> score_sensitivity(0.9, 3)
    2.7
    """
    return max_contributions * max(q, 1.0 - q)


@dataclass(frozen=True, slots=True)
class QuantileBlocks:
    """Candidate blocks: first grid index, number of grid points, and score of each block."""

    start: NDArray[np.int64]
    size: NDArray[np.float64]
    score: NDArray[np.float64]
    step: float

    @property
    def candidates(self) -> int:
        return int(self.size.sum())

    def probabilities(self, epsilon: float, sensitivity: float) -> NDArray[np.float64]:
        """P(block) of the exponential mechanism (a block's points share it equally)."""
        return selection_probabilities(-self.score, epsilon, sensitivity=sensitivity, multiplicity=self.size)


def quantile_blocks(
    points: NDArray[np.int64], counts: NDArray[np.float64], q: float, low: int, high: int, step: float
) -> QuantileBlocks:
    """The candidate blocks for the level ``q`` given the occupied grid indices ``points`` (sorted, in
    [low, high]) and their row counts.

    Examples
    --------
    >>> b = quantile_blocks(np.array([2, 5]), np.array([1.0, 1.0]), 0.5, 0, 9, 1.0)
    >>> b.start.tolist(), b.size.tolist(), b.score.tolist()
    ([0, 2, 3, 5, 6], [2.0, 1.0, 2.0, 1.0, 4.0], [1.0, 0.5, 0.0, 0.5, 1.0])
    """
    p = np.asarray(points, dtype=np.int64)
    m = np.asarray(counts, dtype=float)
    n = float(m.sum())
    below = np.concatenate([[0.0], np.cumsum(m)])  # rows strictly below occupied point i: below[i]
    # Gaps: before p[0], between p[i] and p[i+1], after p[-1]; gap i has below[i] rows below it.
    gap_start = np.concatenate([[low], p + 1])
    gap_end = np.concatenate([p - 1, [high]])
    gap_below = below
    gap_above = n - below
    # Occupied points: below[i] rows below, n − below[i+1] above.
    point_below = below[:-1]
    point_above = n - below[1:]
    start = np.concatenate([gap_start, p])
    size = np.concatenate([gap_end - gap_start + 1, np.ones(p.size)]).astype(float)
    score = np.abs(np.concatenate([(1.0 - q) * gap_below - q * gap_above, (1.0 - q) * point_below - q * point_above]))
    order = np.argsort(start, kind="stable")
    keep = size[order] > 0
    chosen = order[keep]
    return QuantileBlocks(start[chosen], size[chosen], score[chosen], step)


def sample_quantile(
    blocks: QuantileBlocks, epsilon: float, sensitivity: float, size: int | None, generator: np.random.Generator
) -> NDArray[np.float64] | float:
    """Grid values jΛ drawn by the exponential mechanism (module docstring)."""
    n = 1 if size is None else size
    chosen = np.asarray(
        exponential_mechanism(
            -blocks.score, epsilon, sensitivity=sensitivity, multiplicity=blocks.size, size=n, rng=generator
        )
    )
    offset = np.floor(generator.random(n) * blocks.size[chosen]).astype(np.int64)
    offset = np.minimum(offset, blocks.size[chosen].astype(np.int64) - 1)
    values = (blocks.start[chosen] + offset).astype(float) * blocks.step
    return float(values[0]) if size is None else values


def grid_steps(low: float, high: float, resolution: int) -> tuple[float, int, int]:
    """(Λ, j_low, j_high): the power of two Λ ≤ (high − low)/resolution and the grid indices inside [low, high].

    Examples
    --------
    >>> grid_steps(0.0, 60.0, 1024)
    (0.03125, 0, 1920)
    """
    step = math.ldexp(1.0, math.floor(math.log2((high - low) / resolution)))
    return step, math.ceil(low / step), math.floor(high / step)
