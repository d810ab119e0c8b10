"""Hardened noise calibrated for the coordinates one record moves, against brute force on the lattice.

A hardened release rounds each coordinate of the value to the grid Λ before adding noise rounded to Λ. Between
neighbours that move c coordinates by Δ in total (ℓ1), the rounded values differ by at most ⌊Δ/Λ⌋ + c lattice
units. The reference here shares no code with the library: it enumerates neighbouring values over rounding
offsets, counts the units the rounded values differ by, and takes the largest log-ratio of the exact law of the
rounded Laplace noise (scipy's cdf) over the lattice; for Gaussian noise it evaluates the analytic Gaussian δ(ε)
(Balle & Wang 2018, Theorem 8) with scipy at the rounded sensitivity.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from privnoise.dp import hardened_gaussian_for_epsilon_delta, hardened_laplace_for_epsilon
from privnoise.exceptions import InvalidParameterError


def _largest_unit_shift(sensitivity: float, grid: float, moved: int) -> int:
    """The most lattice units between the rounded values of neighbours moving ``moved`` coordinates by Δ in ℓ1."""
    offsets = np.linspace(0.0, grid, 2001)
    best = 0
    for share in np.linspace(0.0, 1.0, 101):  # how the Δ is spread: one coordinate takes share·Δ, the rest evenly
        parts = [share * sensitivity] + [(1.0 - share) * sensitivity / (moved - 1)] * (moved - 1) if moved > 1 else [
            sensitivity]
        units = 0
        for part in parts:
            start = offsets[:, None] + 0.0
            moved_to = start + part
            units += int(np.max(np.abs(np.rint(moved_to / grid) - np.rint(start / grid))))
        best = max(best, units)
    return best


def _rounded_laplace_epsilon(scale: float, grid: float, units: int) -> float:
    """max_j |log P(J = j) − log P(J = j − units)| for J = rint(W/Λ), W ~ Laplace(scale), over a wide window."""
    law = stats.laplace(scale=scale)
    j = np.arange(-int(40 * scale / grid) - units, int(40 * scale / grid) + units + 1)
    upper, lower = (j + 0.5) * grid, (j - 0.5) * grid
    # the mass of each cell, from the side of the smaller tail (no cancellation)
    positive = j > 0
    mass = np.where(positive, law.sf(lower) - law.sf(upper), law.cdf(upper) - law.cdf(lower))
    log_mass = np.log(mass)
    return float(np.max(np.abs(log_mass[units:] - log_mass[:-units])))


@pytest.mark.parametrize(("sensitivity", "epsilon", "dim"), [(0.3, 0.5, 6), (1.1, 1.0, 50), (2.45, 0.2, 3)])
def test_laplace_for_one_moved_coordinate_meets_its_epsilon_by_brute_force(sensitivity, epsilon, dim):
    noise = hardened_laplace_for_epsilon(epsilon, sensitivity=sensitivity, dim=dim, coordinates=1)
    scale, grid = float(np.ravel(noise.mechanism.scale)[0]), noise.grid
    units = _largest_unit_shift(sensitivity, grid, 1)
    assert units == math.floor(sensitivity / grid) + 1
    assert _rounded_laplace_epsilon(scale, grid, units) <= epsilon * (1 + 1e-9)
    # power: the same noise does not hold when two coordinates move (the claim for one would be wrong for two)
    two = _largest_unit_shift(sensitivity, grid, 2)
    assert two == units + 1
    assert _rounded_laplace_epsilon(scale, grid, two) > epsilon * (1 + 1e-6)


def test_laplace_for_two_moved_coordinates_meets_its_epsilon_by_brute_force():
    noise = hardened_laplace_for_epsilon(0.5, sensitivity=0.7, dim=10, coordinates=2)
    scale, grid = float(np.ravel(noise.mechanism.scale)[0]), noise.grid
    assert _rounded_laplace_epsilon(scale, grid, _largest_unit_shift(0.7, grid, 2)) <= 0.5 * (1 + 1e-9)


def test_fewer_moved_coordinates_give_less_noise_and_every_coordinate_is_the_default():
    every = hardened_laplace_for_epsilon(1, sensitivity=1.0, dim=100_000)
    assert every.mechanism.scale[0] == hardened_laplace_for_epsilon(
        1, sensitivity=1.0, dim=100_000, coordinates=100_000).mechanism.scale[0]
    one = hardened_laplace_for_epsilon(1, sensitivity=1.0, dim=100_000, coordinates=1)
    assert one.mechanism.scale[0] < every.mechanism.scale[0] / 20


def _gaussian_delta(sigma: float, sensitivity: float, epsilon: float) -> float:
    a = sensitivity / (2 * sigma)
    b = epsilon * sigma / sensitivity
    return float(stats.norm.cdf(a - b) - math.exp(epsilon) * stats.norm.cdf(-a - b))


@pytest.mark.parametrize("moved", [1, 2])
def test_gaussian_for_moved_coordinates_meets_its_delta_at_the_rounded_sensitivity(moved):
    epsilon, delta, sensitivity = 1.0, 1e-6, 0.8
    noise = hardened_gaussian_for_epsilon_delta(epsilon, delta, sensitivity=sensitivity, dim=40, coordinates=moved)
    sigma = math.sqrt(float(noise.mechanism.covariance_form().max_diagonal()))
    grid = noise.grid
    # one coordinate moves ⌊Δ/Λ⌋ + 1 lattice units at most; several add at most Λ each to the ℓ2 distance
    rounded = (math.floor(sensitivity / grid) + 1) * grid if moved == 1 else sensitivity + math.sqrt(moved) * grid
    assert _gaussian_delta(sigma, rounded, epsilon) <= delta
    # power: at the sensitivity of all 40 coordinates moving, the same σ misses δ
    assert _gaussian_delta(sigma, sensitivity + math.sqrt(40) * noise.grid, epsilon) > delta


@pytest.mark.parametrize("coordinates", [0, 7, 2.5, True])
def test_coordinates_must_be_a_count_within_the_dimension(coordinates):
    with pytest.raises(InvalidParameterError, match="coordinates"):
        hardened_laplace_for_epsilon(1, sensitivity=1.0, dim=6, coordinates=coordinates)
    with pytest.raises(InvalidParameterError, match="coordinates"):
        hardened_gaussian_for_epsilon_delta(1, 1e-6, sensitivity=1.0, dim=6, coordinates=coordinates)
