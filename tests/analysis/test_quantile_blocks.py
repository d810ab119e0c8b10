"""Quantile candidates against brute force: every grid point's score counted here, the exponential mechanism's law
over all grid points computed here and compared by χ² at α = 1e-6 (with a 30 % wrong ε rejected), and the grid of
a range that does not start at 0 from its closed form."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from privnoise.analysis.quantiles import grid_steps, quantile_blocks, sample_quantile

ALPHA = 1e-6


def _brute_scores(points: np.ndarray, counts: np.ndarray, q: float, low: int, high: int) -> np.ndarray:
    """|(1 − q)·#{x < j} − q·#{x > j}| at every grid index j in [low, high]."""
    grid = np.arange(low, high + 1)
    below = np.array([counts[points < j].sum() for j in grid])
    above = np.array([counts[points > j].sum() for j in grid])
    return np.abs((1.0 - q) * below - q * above)


def _expanded(blocks) -> np.ndarray:  # noqa: ANN001 - QuantileBlocks
    return np.repeat(blocks.score, blocks.size.astype(int))


CASES = [
    (np.array([2, 5]), np.array([1.0, 1.0]), 0.5, 0, 9),
    (np.array([0, 1, 2]), np.array([3.0, 1.0, 2.0]), 0.25, 0, 6),  # adjacent points: empty gaps between them
    (np.array([-4, 3, 4, 11]), np.array([2.0, 5.0, 1.0, 3.0]), 0.9, -7, 11),  # a point on the upper end
    (np.array([-7, 0]), np.array([4.0, 4.0]), 0.1, -7, 3),  # a point on the lower end
]


@pytest.mark.parametrize(("points", "counts", "q", "low", "high"), CASES)
def test_blocks_give_every_grid_point_its_score(points, counts, q, low, high) -> None:
    blocks = quantile_blocks(points, counts, q, low, high, 0.5)
    assert np.all(blocks.size > 0)  # a block of no candidates is never listed
    assert blocks.start.tolist() == sorted(blocks.start.tolist())
    np.testing.assert_array_equal(np.diff(blocks.start), blocks.size[:-1])  # blocks tile the grid
    assert blocks.start[0] == low and blocks.candidates == high - low + 1
    np.testing.assert_allclose(_expanded(blocks), _brute_scores(points, counts, q, low, high), rtol=0, atol=1e-12)


def _law(points, counts, q, low, high, epsilon, sensitivity) -> np.ndarray:
    weights = np.exp(-epsilon * _brute_scores(points, counts, q, low, high) / (2.0 * sensitivity))
    return weights / weights.sum()


def test_samples_follow_the_exponential_mechanism_over_every_grid_point() -> None:
    points, counts, q, low, high = np.array([3, 4, 12]), np.array([2.0, 1.0, 3.0]), 0.5, 0, 19
    step, epsilon, k = 0.25, 2.0, 1
    sensitivity = k * max(q, 1.0 - q)
    blocks = quantile_blocks(points, counts, q, low, high, step)
    n = 100_000
    values = sample_quantile(blocks, epsilon, sensitivity, n, np.random.default_rng(12))
    index = values / step
    assert np.array_equal(index, np.rint(index))  # grid points only
    observed = np.bincount(index.astype(int) - low, minlength=high - low + 1)
    expected = n * _law(points, counts, q, low, high, epsilon, sensitivity)
    assert stats.chisquare(observed, expected).pvalue > ALPHA
    wrong = n * _law(points, counts, q, low, high, 1.3 * epsilon, sensitivity)
    assert stats.chisquare(observed, wrong).pvalue < ALPHA  # power check


def test_one_draw_is_a_float_and_a_seed_replays_the_draws() -> None:
    blocks = quantile_blocks(np.array([3]), np.array([2.0]), 0.5, 0, 9, 0.5)
    one = sample_quantile(blocks, 1.0, 0.5, None, np.random.default_rng(4))
    assert isinstance(one, float) and one == sample_quantile(blocks, 1.0, 0.5, None, np.random.default_rng(4))
    first = sample_quantile(blocks, 1.0, 0.5, 50, np.random.default_rng(5))
    np.testing.assert_array_equal(first, sample_quantile(blocks, 1.0, 0.5, 50, np.random.default_rng(5)))


@pytest.mark.parametrize(("low", "high", "resolution"), [(-60.0, 60.0, 1024), (10.0, 70.0, 100), (-3.0, -1.0, 7)])
def test_grid_of_a_range_away_from_zero(low, high, resolution) -> None:
    step, j_low, j_high = grid_steps(low, high, resolution)
    assert math.frexp(step)[0] == 0.5  # a power of two
    assert step * resolution <= high - low < 2.0 * step * resolution
    assert (j_low - 1) * step < low <= j_low * step and j_high * step <= high < (j_high + 1) * step
