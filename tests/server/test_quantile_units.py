"""The server's quantile release (:mod:`privnoise.server.quantiles`) on its own: the grid of candidates from the
declared bounds, the score of every candidate against a brute force over the records (filter weights included),
the distribution of the release against the exponential mechanism's exact law (χ² at α = 1e-6 with a power check
against a wrong ε), and one draw per level."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.typing import NDArray
from scipy import stats

from privnoise.server.quantiles import QuantileRelease

ALPHA = 1e-6


def _grid(lo: float, hi: float) -> tuple[float, int, int]:
    """Λ: the largest power of two with at least 2^14 steps across [lo, hi]; the indices of the grid inside."""
    step = 1.0
    while (hi - lo) / step < 2**14:
        step /= 2.0
    while (hi - lo) / (2.0 * step) >= 2**14:
        step *= 2.0
    return step, math.ceil(lo / step), math.floor(hi / step)


def _scores(
    bounds: tuple[float, float], values: NDArray[np.float64], weights: NDArray[np.float64], q: float
) -> NDArray[np.float64]:
    """s(c) = |(1 − q)·#{x < c} − q·#{x > c}| for every candidate c (records rounded to the grid, clipped to it,
    counted with their weights)."""
    step, low, high = _grid(*bounds)
    points = np.clip(np.round(values / step), low, high)
    candidates = np.arange(low, high + 1)
    below = np.array([weights[points < c].sum() for c in candidates])
    above = np.array([weights[points > c].sum() for c in candidates])
    return np.abs((1.0 - q) * below - q * above)


def _release(bounds: tuple[float, float], levels: tuple[float, ...], epsilon: float) -> QuantileRelease:
    return QuantileRelease(bounds, levels, epsilon)


@pytest.mark.parametrize("bounds", [(0.0, 1.0), (-3.0, 5.0), (0.3, 0.7), (10.0, 60.0)])
def test_the_candidates_are_the_grid_in_the_bounds(bounds: tuple[float, float]) -> None:
    release = _release(bounds, (0.25, 0.5, 0.75), 1.5)
    step, low, high = _grid(*bounds)
    assert (release.step, release.low, release.high) == (step, low, high)
    assert release.candidates == high - low + 1
    assert release.levels == (0.25, 0.5, 0.75) and release.epsilon_each == pytest.approx(0.5, rel=1e-15)
    assert _release(bounds, (0.5,), 1.5).epsilon_each == 1.5


VALUES = np.array([-1.0, 0.10001, 0.1, 0.25, 0.3333, 0.5, 0.5, 0.71, 0.9, 1.7, 0.42, 0.64])


@pytest.mark.parametrize("q", [0.0, 0.1, 0.5, 0.9, 1.0])
def test_scores_of_every_candidate_are_the_brute_force(q: float) -> None:
    release = _release((0.0, 1.0), (q,), 1.0)
    weights = np.array([1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0])
    blocks = release.blocks(VALUES, weights, q)
    assert blocks.step == release.step
    assert blocks.start[0] == release.low and np.all(blocks.size > 0)
    assert np.array_equal(blocks.start[1:], blocks.start[:-1] + blocks.size[:-1])  # contiguous
    assert blocks.start[-1] + blocks.size[-1] - 1 == release.high
    expanded = np.repeat(blocks.score, blocks.size.astype(np.int64))
    assert expanded == pytest.approx(_scores((0.0, 1.0), VALUES, weights, q), abs=1e-12)


def _law(q: float, epsilon: float) -> NDArray[np.float64]:
    """The exponential mechanism's probabilities on the grid of [0, 1], ∝ exp(−ε s(c)/2) (score sensitivity 1)."""
    scores = _scores((0.0, 1.0), VALUES, np.ones(VALUES.size), q)
    p = np.exp(-epsilon * (scores - scores.min()) / 2.0)
    return p / p.sum()


def _chi2(indices: NDArray[np.int64], p: NDArray[np.float64], bins: int = 12) -> float:
    """The p-value of χ² of the drawn candidate indices in bins of about equal mass under ``p``."""
    edges = np.searchsorted(np.cumsum(p), np.linspace(0, 1, bins + 1)[1:-1])
    observed = np.bincount(np.searchsorted(edges, indices, side="right"), minlength=bins)
    expected = np.array([part.sum() for part in np.split(p, edges)]) * indices.size
    return float(stats.chisquare(observed, expected).pvalue)


def test_draws_follow_the_exponential_mechanism() -> None:
    release = _release((0.0, 1.0), (0.3, 0.5), 3.0)  # 1.5 per level
    rng = np.random.default_rng(20240611)
    draws = release.sample(VALUES, np.ones(VALUES.size), 0.3, 40000, rng)
    assert np.all(draws == np.round(draws / release.step) * release.step)
    indices = np.round(draws / release.step).astype(np.int64) - release.low
    assert _chi2(indices, _law(0.3, 1.5)) > ALPHA
    # power: the same draws reject a law of a wrong ε (the whole ε, or 1.5 times the share) and a wrong level
    assert _chi2(indices, _law(0.3, 3.0)) < ALPHA
    assert _chi2(indices, _law(0.3, 1.0)) < ALPHA
    assert _chi2(indices, _law(0.5, 1.5)) < ALPHA


def test_one_draw_per_level_with_the_weights() -> None:
    values = np.array([0.5, 0.1, 0.9, 0.3, 0.7, 0.2, 0.8, 0.4, 0.6, 0.05])
    weights = np.array([1.0] * 9 + [0.0])  # the last record is filtered out
    release = _release((0.0, 1.0), (0.25, 0.5, 0.75), 3000.0)  # a score gap of 1/4 is e^{−125} less likely
    got = release.release(values, weights, np.random.default_rng(1))
    step = release.step
    assert got == [np.round(v / step) * step for v in (0.3, 0.5, 0.7)]
    single = _release((0.0, 1.0), (0.5,), 1000.0)
    one = single.release(values, weights, np.random.default_rng(2))
    assert isinstance(one, float) and one == np.round(0.5 / step) * step
    assert single.release(values, weights) == one  # the server's own generator
    every = single.release(values, np.ones(values.size), np.random.default_rng(3))
    # the filtered-out record counts with weight 1 now: ten records, the median's block is [0.4, 0.5]
    assert 0.4 <= every <= 0.5


def test_a_given_generator_is_the_one_drawn_from() -> None:
    release = _release((0.0, 1.0), (0.2, 0.5, 0.8), 0.03)  # nearly uniform over 16385 candidates per level
    weights = np.ones(VALUES.size)
    first = release.release(VALUES, weights, np.random.default_rng(11))
    assert release.release(VALUES, weights, np.random.default_rng(11)) == first
    assert release.release(VALUES, weights, np.random.default_rng(12)) != first
