"""Snapped releases (privnoise.dp.snapped): the exact sum rounded to the grid, calibrated as the Session calibrates.

Every figure is checked against a computation that shares no code with the module: scipy's Laplace and discrete
Laplace laws (KS and χ² at α = 1e-6, with the power check at 1.3× the scale), the privacy loss of the discrete
Laplace law summed by brute force over its support, and exact rational arithmetic for the rounding of the real sum.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from privnoise.dp import DiscreteLaplace
from privnoise.dp.families import GAUSSIAN, LAPLACE
from privnoise.dp.snapped import SnappedMechanism, snapped_family_noise
from privnoise.exceptions import InvalidParameterError
from privnoise.mechanisms import Laplace
from privnoise.snapping import snapped_add, snapped_point

ALPHA = 1e-6


def _exact_rounding(v: float, w: float, exponent: int) -> float:
    """Λ·round((v + w)/Λ), halves to even, in exact rationals."""
    units = (Fraction(v) + Fraction(w)) / Fraction(2) ** exponent
    return float(round(units) * Fraction(2) ** exponent)  # Fraction.__round__ rounds halves to even


def test_one_value_and_the_array_path_round_the_real_sum_alike() -> None:
    rng = np.random.default_rng(3)
    k = -6
    grid = math.ldexp(1.0, k)
    v = rng.uniform(-50, 50, 3000)
    w = rng.laplace(0, 2, 3000)
    # half-way doubles whose exact sum lies just beside the tie: the TwoSum error decides
    v[:1000] = np.round(v[:1000] / grid) * grid + grid / 2
    w[:1000] = np.where(np.arange(1000) % 2 == 0, 2.0**-60, -(2.0**-60))
    exact = [_exact_rounding(a, b, k) for a, b in zip(v, w, strict=True)]
    point = [snapped_point(float(a), float(b), k) for a, b in zip(v, w, strict=True)]

    def fill(buffer: np.ndarray, start: int) -> None:
        buffer[...] = w[start : start + buffer.size]

    array = snapped_add(v, fill, k)
    assert point == exact
    assert array.tolist() == exact


def test_the_scalar_release_equals_the_array_release_from_the_same_generator() -> None:
    noise = snapped_family_noise(LAPLACE, Fraction(1, 3), sensitivity=2.0)
    for seed in range(200):
        one = noise.release(12.345, rng=np.random.default_rng(seed))
        array = noise.release(np.array([12.345]), rng=np.random.default_rng(seed))
        assert one == float(array[0])


def test_the_calibration_is_the_familys_at_the_exact_share() -> None:
    noise = snapped_family_noise(LAPLACE, Fraction(1, 10), sensitivity=3.0)
    b = float(noise.mechanism.scale)
    assert Fraction(3) / Fraction(b) <= Fraction(1, 10)  # ε = Δ/b in exact rationals, within the share
    assert Fraction(3) / Fraction(math.nextafter(b, 0.0)) > Fraction(1, 10)  # and the smallest such double
    assert noise.epsilon_fraction() == Fraction(3) / Fraction(b)
    assert noise.guarantee().epsilon == pytest.approx(0.1, rel=1e-15)


def test_counts_get_discrete_laplace_whose_loss_is_delta_over_t_by_brute_force() -> None:
    noise = snapped_family_noise(LAPLACE, Fraction(1, 4), sensitivity=2.0, integer=True)
    assert isinstance(noise.mechanism, DiscreteLaplace) and noise.grid == 1.0
    t = float(noise.mechanism.scale)
    support = np.arange(-4000, 4001)
    law = stats.dlaplace(1.0 / t)
    loss = np.max(np.abs(law.logpmf(support) - law.logpmf(support - 2)))  # neighbours: counts 2 apart
    assert float(noise.epsilon_fraction()) == pytest.approx(loss, rel=1e-9)
    assert noise.epsilon_fraction() <= Fraction(1, 4)
    out = noise.release(np.full(50_000, 17.0), rng=np.random.default_rng(5)) - 17.0
    assert np.all(out == np.rint(out))
    values, counts = np.unique(np.clip(out, -40, 40), return_counts=True)
    p = law.pmf(values)
    p[0], p[-1] = law.cdf(-40), law.sf(39)
    assert stats.chisquare(counts, p / p.sum() * counts.sum()).pvalue >= ALPHA
    wide = stats.dlaplace(1.0 / (1.3 * t))
    q = wide.pmf(values)
    q[0], q[-1] = wide.cdf(-40), wide.sf(39)
    assert stats.chisquare(counts, q / q.sum() * counts.sum()).pvalue < ALPHA


def test_releases_follow_the_laplace_law_and_lie_on_the_grid() -> None:
    noise = snapped_family_noise(LAPLACE, Fraction(1, 2), sensitivity=1.0)
    b = float(noise.mechanism.scale)
    out = noise.release(np.full(40_000, 3.3), rng=np.random.default_rng(11))
    assert np.all(out / noise.grid == np.rint(out / noise.grid))
    error = out - 3.3
    assert stats.kstest(error, stats.laplace(scale=b).cdf).pvalue >= ALPHA
    assert stats.kstest(error, stats.laplace(scale=1.3 * b).cdf).pvalue < ALPHA


def test_neighbouring_values_share_every_low_order_bit() -> None:
    noise = snapped_family_noise(LAPLACE, Fraction(1), sensitivity=1.0)
    rng = np.random.default_rng(2)
    for x in (0.1, 0.1 + 2.0**-40, 1.0 / 3.0):
        out = noise.release(np.full(100_000, x), rng=rng)
        units = out / noise.grid
        assert np.all(units == np.rint(units))  # nothing below the grid depends on x


def test_values_beyond_the_bound_are_clamped_not_refused() -> None:
    noise = SnappedMechanism(mechanism=Laplace(scale=1.0), sensitivity=1.0, bound=100.0, grid_exponent=-10)
    out = noise.release(np.array([1e300, -1e300, 5.0]), rng=np.random.default_rng(0))
    assert np.all(np.isfinite(out)) and abs(out[0] - 100.0) < 60 and abs(out[1] + 100.0) < 60


def test_bad_parameters_are_refused_by_name() -> None:
    with pytest.raises(InvalidParameterError, match="integer_values"):
        SnappedMechanism(mechanism=DiscreteLaplace(scale=2.0), sensitivity=1.0, bound=100.0)
    with pytest.raises(InvalidParameterError, match="bound"):
        SnappedMechanism(mechanism=Laplace(scale=1.0), sensitivity=1.0, bound=2.0**52, grid_exponent=0)
    with pytest.raises(InvalidParameterError, match="family"):
        snapped_family_noise(GAUSSIAN, Fraction(1), sensitivity=1.0)


def test_a_declared_grid_is_the_grid_of_every_output_one_value_or_many() -> None:
    noise = SnappedMechanism(mechanism=Laplace(scale=1.0), sensitivity=1.0, bound=10.0, grid_exponent=-1)
    rng = np.random.default_rng(4)
    many = noise.release(np.full(2000, 0.3), rng=rng)
    ones = np.array([noise.release(0.3, rng=rng) for _ in range(2000)])
    for out in (many, ones):
        assert np.all(out * 2 == np.rint(out * 2))  # multiples of 1/2
        assert not np.all(out == np.rint(out))  # and not all on a coarser grid


def test_the_default_grid_is_the_smallest_power_of_two_above_the_scale_over_4096() -> None:
    noise = snapped_family_noise(LAPLACE, Fraction(1, 2), sensitivity=1.0)  # b = 2
    b = float(noise.mechanism.scale)
    assert noise.grid_exponent == math.ceil(math.log2(b / 4096))


def test_a_release_into_a_given_buffer_fills_it() -> None:
    noise = snapped_family_noise(LAPLACE, Fraction(1), sensitivity=1.0)
    buffer = np.full(64, np.nan)
    out = noise.add_to(np.zeros(64), rng=np.random.default_rng(1), out=buffer)
    assert out is buffer and np.all(np.isfinite(buffer))


def test_the_stated_epsilon_of_each_kind_of_noise() -> None:
    from privnoise.dp import gaussian_epsilon
    from privnoise.mechanisms import Gaussian

    plain = SnappedMechanism(mechanism=Laplace(scale=4.0), sensitivity=3.0, bound=100.0)  # no family named
    assert plain.epsilon_fraction() == Fraction(3, 4) and plain.epsilon() == 0.75
    count = snapped_family_noise(LAPLACE, Fraction(1, 4), sensitivity=2.0, integer=True)
    t = float(count.mechanism.scale)
    assert count.epsilon() == 2.0 / t  # the exact share on integers, not the lattice profile's (Δ + 1)/t
    gauss = SnappedMechanism(mechanism=Gaussian.from_std(2.0), sensitivity=1.0, bound=100.0)
    assert gauss.epsilon(1e-6) == pytest.approx(gaussian_epsilon(2.0, 1e-6, sensitivity=1.0), rel=1e-9)


def test_lattice_noise_needs_integers_on_a_grid_of_at_most_one_and_the_bound_at_most_2_50_steps() -> None:
    with pytest.raises(InvalidParameterError, match="integer_values"):
        SnappedMechanism(mechanism=DiscreteLaplace(scale=4.0, grid_exponent=1), sensitivity=2.0, bound=2.0**40,
                         integer_values=True)
    with pytest.raises(InvalidParameterError, match="2\\^50"):  # 2^51 steps: the parent accepts up to 2^52
        SnappedMechanism(mechanism=Laplace(scale=1.0), sensitivity=1.0, bound=2.0**41, grid_exponent=-10)
    assert SnappedMechanism(mechanism=Laplace(scale=1.0), sensitivity=1.0, bound=2.0**40, grid_exponent=-10)
