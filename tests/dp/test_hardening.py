"""Hardened releases: exact grid, clamping, KS/χ² with power, guarantees, and SECURITY.md requirement 2.

The low-order-bit test (requirement 2) draws 10⁶ outputs on each of two neighbouring inputs x = 0 and x' = Δ = 1
and computes two statistics:

* **porosity events** (Mironov 2012): E_j = {0 < |y| < 1/2 and y·2^j is not an integer} for j = 53 (the resolution of
  1 + Z for Z in (−1, −1/2)) — for the unhardened ``x + Laplace`` the event has many hits from x = 0 and *none* from
  x' = 1, an infinite likelihood ratio; for the hardened release no output is off its grid, so no such event is
  ever hit from either input;
* **conditional low-bit homogeneity**: the low 8 bits of the 52-bit mantissa, tabulated per binary exponent (the
  high bits), compared between the two inputs by a χ² homogeneity test summed over exponents with at least 1000
  outputs on each side. Unhardened: p < 10⁻⁶ (the low bits differ). Hardened: the low bits are constant (zero),
  the statistic is 0 and nothing separates the inputs.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from privnoise.dp.gaussian import gaussian_epsilon, gaussian_for_epsilon_delta
from privnoise.dp.laplace import laplace_for_epsilon
from privnoise.dp.lattice_privacy import discrete_gaussian_epsilon
from privnoise.exceptions import CalibrationError, DimensionError, InvalidParameterError
from privnoise.mechanisms import Gaussian, Laplace, RaisedCosine
from privnoise.mechanisms.discrete import DiscreteGaussian, DiscreteLaplace
from privnoise.mechanisms.hardening import HardenedMechanism, hardened

ALPHA = 1e-6


def on_grid(y: np.ndarray, grid: float) -> bool:
    units = np.asarray(y) / grid
    return bool(np.all(units == np.rint(units)))


MECHANISMS = [
    ("laplace", lambda: hardened(Laplace(scale=1.0), sensitivity=1.0, bound=50.0)),
    ("laplace-vector", lambda: hardened(Laplace(scale=[1.0, 2.0]), sensitivity=1.0, bound=[5.0, 7.0])),
    ("gaussian", lambda: hardened(Gaussian.from_std(3.0), sensitivity=1.0, bound=10.0)),
    ("gaussian-2d", lambda: hardened(Gaussian(cov=[[2.0, 0.5], [0.5, 1.0]]), sensitivity=1.0, bound=10.0)),
    (
        "discrete-laplace",
        lambda: hardened(DiscreteLaplace(scale=1.0, grid_exponent=-4), sensitivity=1.0, bound=9.0),
    ),
    ("discrete-gaussian", lambda: hardened(DiscreteGaussian(sigma=2.0), sensitivity=1.0, bound=9.0)),
    ("raised-cosine", lambda: hardened(RaisedCosine(lower=-1.0, upper=1.0), sensitivity=1.0, bound=9.0)),
]


@pytest.mark.parametrize("name, make", MECHANISMS)
def test_every_output_lies_on_the_grid(name, make):
    h = make()
    rng = np.random.default_rng(1)
    values = rng.uniform(-20, 20, (5000,) + h.shape) * rng.choice([1e-9, 1.0, 1e6], (5000,) + h.shape)
    y = h.release(values, rng=3)
    assert y.shape == values.shape
    assert np.isfinite(y).all() and on_grid(y, h.grid)
    noise = h.sample(1000, rng=4)
    assert noise.shape == (1000,) + h.shape and on_grid(noise, h.grid)
    assert math.log2(h.grid) == h.grid_exponent


def test_clamping_and_scalar_release():
    h = hardened(Laplace(scale=1.0), sensitivity=1.0, bound=2.0)
    assert h.release(1e300, rng=9) == h.release(2.0, rng=9)
    assert h.release(-np.float64(7.0), rng=9) == h.release(-2.0, rng=9)
    assert isinstance(h.release(0.3, rng=1), float)


def test_default_grid_is_documented():
    h = hardened(Laplace(scale=3.0), sensitivity=1.0, bound=10.0)
    assert h.grid >= 3.0 / 2**12 > h.grid / 2
    lat = hardened(DiscreteGaussian(sigma=2.0, grid_exponent=-3), sensitivity=1.0, bound=1.0)
    assert lat.grid == 0.125


def test_guarantees():
    lap = laplace_for_epsilon(0.5, sensitivity=1.0)  # b = 2
    h = hardened(lap, sensitivity=1.0, bound=10.0, grid_exponent=-4)
    g = h.guarantee()
    assert g.delta == 0.0 and g.epsilon == (16 + 1) / 16 / 2.0
    hv = hardened(Laplace(scale=[1.0, 1.0, 1.0]), sensitivity=1.0, bound=1.0, grid_exponent=-3)
    assert hv.epsilon() == (8 + 3) / 8
    gauss = hardened(Gaussian.from_std(2.0), sensitivity=1.0, bound=10.0, grid_exponent=-5)
    assert gauss.guarantee(delta=1e-6).epsilon == pytest.approx(
        gaussian_epsilon(2.0, 1e-6, sensitivity=1.0 + 2.0**-5)
    )
    assert gauss.delta(gauss.epsilon(1e-6)) == pytest.approx(1e-6, rel=1e-6)
    g2 = hardened(Gaussian(cov=np.diag([4.0, 1.0])), sensitivity=1.0, bound=10.0, grid_exponent=-5)
    assert g2.epsilon(1e-6) == pytest.approx(gaussian_epsilon(1.0, 1e-6, sensitivity=1.0 + math.sqrt(2) / 32))
    dgs = hardened(DiscreteGaussian(sigma=1.0, grid_exponent=-2), sensitivity=1.0, bound=3.0)
    assert dgs.epsilon(1e-5) == discrete_gaussian_epsilon(4.0, 1e-5, sensitivity=5)
    dl = hardened(DiscreteLaplace(scale=1.0, grid_exponent=-2), sensitivity=0.5, bound=3.0)
    assert dl.guarantee().epsilon == 0.75
    assert hardened(RaisedCosine(lower=-1, upper=1), sensitivity=1.0, bound=1.0).guarantee() is None
    with pytest.raises(CalibrationError):
        gauss.epsilon(0.0)
    with pytest.raises(InvalidParameterError):
        gauss.guarantee()


def test_rounded_laplace_log_ratio_is_at_most_grid_over_scale():
    # The noise K = rint(W/Λ) of snapped Laplace has P(K=k)/P(K=k+1) ≤ e^{Λ/b}: the module docstring's claim.
    b, grid = 1.3, 0.5
    k = np.arange(-60, 1)
    cdf = stats.laplace(scale=b).cdf
    pmf = cdf((k + 0.5) * grid) - cdf((k - 0.5) * grid)  # k ≤ 0; the pmf is symmetric
    assert np.max(np.abs(np.diff(np.log(pmf)))) <= grid / b * (1 + 1e-12)


@pytest.mark.slow
def test_snapped_laplace_pmf_chi2_and_power():
    b, k = 1.5, -1
    h = hardened(Laplace(scale=b), sensitivity=1.0, bound=10.0, grid_exponent=k)
    units = h.sample(200_000, rng=21) / h.grid
    reach = 30
    j = np.arange(-reach - 1, reach + 2)

    def pvalue(scale: float) -> float:
        dist = stats.laplace(scale=scale)
        upper = (np.arange(-reach, reach + 1) + 0.5) * h.grid
        lower = upper - h.grid
        inner = np.where(lower >= 0, dist.sf(lower) - dist.sf(upper), dist.cdf(upper) - dist.cdf(lower))
        tail = dist.cdf(-(reach + 0.5) * h.grid)
        expected = np.concatenate([[tail], inner, [tail]]) * units.size
        observed = np.bincount(
            np.clip(units, -reach - 1, reach + 1).astype(int) + reach + 1, minlength=j.size
        )
        return float(stats.chisquare(observed, expected * observed.sum() / expected.sum()).pvalue)

    assert pvalue(b) > ALPHA
    assert pvalue(0.7 * b) < ALPHA and pvalue(1.3 * b) < ALPHA


@pytest.mark.slow
@pytest.mark.parametrize(
    "mech, dist",
    [(Laplace(scale=2.0), stats.laplace(scale=2.0)), (Gaussian.from_std(1.5), stats.norm(scale=1.5))],
)
def test_hardened_release_passes_ks_with_power(mech, dist, assert_ks):
    h = hardened(mech, sensitivity=1.0, bound=100.0)
    x = 3.3
    center = float(np.rint(x / h.grid) * h.grid)
    y = h.release(np.full(200_000, x), rng=31)
    scale = dist.std() / math.sqrt(2) if isinstance(mech, Laplace) else dist.std()
    family = stats.laplace if isinstance(mech, Laplace) else stats.norm
    assert_ks(
        y,
        family(loc=center, scale=scale).cdf,
        [family(loc=center, scale=scale * w).cdf for w in (0.7, 1.3)],
    )


# -- SECURITY.md requirement 2 -------------------------------------------------------------------------------
def porosity_count(y: np.ndarray, j: int = 53) -> int:
    """Hits of E_j = {0 < |y| < 1/2, y·2^j not an integer}."""
    inside = (np.abs(y) > 0) & (np.abs(y) < 0.5)
    scaled = np.ldexp(y[inside], j)
    return int(np.count_nonzero(scaled != np.rint(scaled)))


def low_bit_chi2(
    y0: np.ndarray, y1: np.ndarray, bits: int = 8, minimum: int = 1000
) -> tuple[float, int, float]:
    """χ² homogeneity of the low ``bits`` mantissa bits given the exponent, summed over exponents: (stat, dof, p)."""

    def split(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        raw = np.abs(y).view(np.uint64)
        return (raw >> np.uint64(52)).astype(np.int64), (raw & np.uint64((1 << bits) - 1)).astype(np.int64)

    e0, l0 = split(y0)
    e1, l1 = split(y1)
    statistic, dof = 0.0, 0
    for e in np.intersect1d(e0, e1):
        a = np.bincount(l0[e0 == e], minlength=1 << bits)
        b = np.bincount(l1[e1 == e], minlength=1 << bits)
        if a.sum() < minimum or b.sum() < minimum:
            continue
        used = (a + b) > 0
        if used.sum() < 2:
            continue  # the low bits take one value on both sides: nothing to compare, nothing separates
        table = np.vstack([a[used], b[used]])
        chi2, _, d, _ = stats.chi2_contingency(table, correction=False)
        statistic += chi2
        dof += d
    p = 1.0 if dof == 0 else float(stats.chi2.sf(statistic, dof))
    return statistic, dof, p


@pytest.mark.slow
def test_unhardened_laplace_is_separated_by_low_order_bits():
    lap = laplace_for_epsilon(1.0, sensitivity=1.0)
    n = 1_000_000
    y0 = 0.0 + lap.sample(n, rng=41)
    y1 = 1.0 + lap.sample(n, rng=42)
    hits0, hits1 = porosity_count(y0), porosity_count(y1)
    assert hits0 > 10_000 and hits1 == 0  # reachable from x = 0 only: an infinite likelihood ratio
    _, dof, p = low_bit_chi2(y0, y1)
    assert dof > 0 and p < ALPHA


@pytest.mark.slow
@pytest.mark.parametrize(
    "make",
    [
        lambda: hardened(laplace_for_epsilon(1.0, sensitivity=1.0), sensitivity=1.0, bound=100.0),
        lambda: hardened(Gaussian.from_std(1.0), sensitivity=1.0, bound=100.0),
        lambda: hardened(DiscreteLaplace(scale=1.0), sensitivity=1.0, bound=100.0),
        lambda: hardened(DiscreteGaussian(sigma=1.0), sensitivity=1.0, bound=100.0),
    ],
)
def test_hardened_output_is_not_separated_by_low_order_bits(make):
    h: HardenedMechanism = make()
    n = 1_000_000
    y0 = h.release(np.zeros(n), rng=43)
    y1 = h.release(np.ones(n), rng=44)
    assert on_grid(y0, h.grid) and on_grid(y1, h.grid)
    assert porosity_count(y0) == porosity_count(y1) == 0
    for j in range(-h.grid_exponent, 54):  # no output has a bit below the grid, from either input
        assert porosity_count(y0, j) == porosity_count(y1, j) == 0
    statistic, _, p = low_bit_chi2(y0, y1)
    assert statistic == 0.0 and p > ALPHA


@pytest.mark.parametrize(
    "call, name, error",
    [
        (lambda: hardened("laplace", sensitivity=1.0, bound=1.0), "mechanism", InvalidParameterError),
        (
            lambda: hardened(Laplace(scale=1.0), sensitivity=0.0, bound=1.0),
            "sensitivity",
            InvalidParameterError,
        ),
        (
            lambda: hardened(Laplace(scale=1.0), sensitivity=np.nan, bound=1.0),
            "sensitivity",
            InvalidParameterError,
        ),
        (lambda: hardened(Laplace(scale=1.0), sensitivity=1.0, bound=-1.0), "bound", InvalidParameterError),
        (lambda: hardened(Laplace(scale=1.0), sensitivity=1.0, bound=np.inf), "bound", InvalidParameterError),
        (lambda: hardened(Laplace(scale=1.0), sensitivity=1.0, bound=[1.0, 2.0]), "bound", DimensionError),
        (
            lambda: hardened(Laplace(scale=1.0), sensitivity=1.0, bound=1.0, grid_exponent=-50),
            "grid_exponent",
            InvalidParameterError,
        ),
        (lambda: hardened(Laplace(scale=1.0), sensitivity=1.0, bound=1e300), "bound", InvalidParameterError),
        (
            lambda: hardened(
                DiscreteLaplace(scale=1.0, grid_exponent=-3), sensitivity=1.0, bound=1.0, grid_exponent=-4
            ),
            "grid_exponent",
            InvalidParameterError,
        ),
        (
            lambda: hardened(Laplace(scale=1.0), sensitivity=1.0, bound=1.0).release(np.nan),
            "value",
            InvalidParameterError,
        ),
        (
            lambda: hardened(Laplace(scale=1.0), sensitivity=1.0, bound=1.0).release([1.0, np.inf]),
            "value",
            InvalidParameterError,
        ),
        (
            lambda: hardened(Laplace(scale=[1.0, 1.0]), sensitivity=1.0, bound=1.0).release([1.0, 2.0, 3.0]),
            "value",
            DimensionError,
        ),
        (
            lambda: hardened(Laplace(scale=1.0), sensitivity=1.0, bound=1.0).release("1"),
            "value",
            InvalidParameterError,
        ),
        (
            lambda: hardened(Laplace(scale=1.0), sensitivity=1.0, bound=1.0).sample(-1),
            "size",
            InvalidParameterError,
        ),
    ],
)
def test_bad_inputs(call, name, error):
    with pytest.raises(error) as info:
        call()
    assert name in str(info.value)


def test_gaussian_for_epsilon_delta_hardens():
    h = hardened(gaussian_for_epsilon_delta(1.0, 1e-5, sensitivity=1.0), sensitivity=1.0, bound=5.0)
    # the rounding costs little: ε grows by about 0.1 % at the default grid
    epsilon = h.epsilon(1e-5)
    assert epsilon > 1.0 and epsilon < 1.002


@pytest.mark.parametrize(
    "make",
    [
        lambda: hardened(laplace_for_epsilon(1.0, sensitivity=1.0), sensitivity=1.0, bound=100.0),
        lambda: hardened(Gaussian.from_std(1.0), sensitivity=1.0, bound=100.0),
        lambda: hardened(Laplace(scale=[1.0, 2.0]), sensitivity=1.0, bound=[100.0, 50.0]),
        lambda: hardened(DiscreteLaplace(scale=1.0), sensitivity=1.0, bound=100.0),
        lambda: hardened(DiscreteGaussian(sigma=1.0), sensitivity=1.0, bound=100.0),
    ],
)
def test_hardened_zero_output_has_no_sign(make):
    """x = −2⁻³⁰ and x' = +2⁻³⁰ both round to the lattice point 0: a zero output must not carry the sign of x
    (−0.0 only from one side would separate them)."""
    h: HardenedMechanism = make()
    n = 400_000 // h.dim
    shape = (n,) + h.shape
    for x in (-(2.0**-30), 2.0**-30, -0.0):
        y = h.release(np.full(shape, x), rng=47)
        zeros = y[y == 0]
        assert zeros.size and not np.signbit(zeros).any()


@pytest.mark.parametrize(
    "noise",
    [
        hardened(laplace_for_epsilon(0.05, sensitivity=10.0), sensitivity=10.0, bound=1000.0),
        hardened(Laplace(scale=3.0), sensitivity=1.0, bound=50.0, grid_exponent=-2),
        hardened(Gaussian(cov=4.0), sensitivity=1.0, bound=50.0),
        hardened(DiscreteLaplace(scale=4.0, grid_exponent=-3), sensitivity=1.0, bound=50.0),
    ],
)
def test_one_float_is_released_as_a_one_value_array(noise: HardenedMechanism) -> None:
    """The scalar path of a release (a server answer's value) gives, bit for bit, what the array path gives a
    one-value array from the same generator state (the same draws in the same order): clamping, half-way values,
    zeros, both signs; and it leaves the generator where the array path does."""
    grid = noise.grid
    values = [3.7, -0.2, 0.0, -0.0, 2.5 * grid, -0.5 * grid, 1e9, -1e9, 49.999, -50.0]
    for seed in range(40):
        for v in values:
            first, second = np.random.default_rng(seed), np.random.default_rng(seed)
            one = noise.release(v, rng=first)
            array = noise.release(np.array([v]), rng=second)
            assert isinstance(one, float)
            assert np.float64(one).view(np.uint64) == array.view(np.uint64)[0], (seed, v, one, array[0])
            assert first.integers(1 << 62) == second.integers(1 << 62)


def test_add_one_answers_one_finite_value_as_the_array_path_does_and_declines_the_rest() -> None:
    scalar = hardened(Laplace(scale=1.0), sensitivity=1.0, bound=50.0)
    for value in (0.3, -12.75, 49.0):
        one = scalar.add_one(value, np.random.default_rng(11))
        array = scalar.add_to(np.array(value), rng=np.random.default_rng(11))
        assert one is not None and one == float(array)  # the same draw, the same lattice arithmetic
        assert one == pytest.approx(value, abs=60.0) and (one / 2.0**scalar.grid_exponent).is_integer()
    assert scalar.add_one(float("nan"), np.random.default_rng(1)) is None
    assert scalar.add_one(float("inf"), np.random.default_rng(1)) is None
    assert scalar.add_one(1.0, np.random.default_rng(1), grid_exponent=scalar.grid_exponent - 1) is None
    assert scalar.add_one(1.0, np.random.default_rng(1), grid_exponent=scalar.grid_exponent) is not None
    vector = hardened(Laplace(scale=[1.0, 2.0]), sensitivity=1.0, bound=[5.0, 7.0])
    assert vector.add_one(1.0, np.random.default_rng(1)) is None


def test_guarantee_for_states_the_query_s_declared_sensitivity_and_falls_back_to_the_mechanism_s() -> None:
    from privnoise import queries

    lap = hardened(Laplace(scale=1.0), sensitivity=1.0, bound=50.0, grid_exponent=-3)
    bounded = queries.linear(np.ones((1, 1)), bounds=(0.0, 2.0))  # one record moves the answer by up to 2
    # ℓ1 on the grid Λ = 1/8: a move of Δ becomes ⌊Δ/Λ⌋ + 1 grid steps, ε = steps·Λ/b
    assert lap.guarantee_for(bounded).epsilon == pytest.approx((16 + 1) * 0.125, rel=1e-15)
    unbounded = queries.linear(np.ones((1, 1)))  # no declared bounds: the mechanism's own Δ = 1
    assert lap.guarantee_for(unbounded).epsilon == pytest.approx((8 + 1) * 0.125, rel=1e-15)
    gauss = hardened(Gaussian.from_std(3.0), sensitivity=1.0, bound=10.0, grid_exponent=-3)
    stated = gauss.guarantee_for(bounded, delta=1e-6)
    assert stated.delta == 1e-6 and stated.epsilon == pytest.approx(
        gaussian_epsilon(3.0, 1e-6, sensitivity=(16 + 1) * 0.125), rel=1e-12)
    own = gauss.guarantee_for(unbounded, delta=1e-6)
    assert own.epsilon == pytest.approx(gaussian_epsilon(3.0, 1e-6, sensitivity=(8 + 1) * 0.125), rel=1e-12)
    with pytest.raises(CalibrationError, match="pass `delta`"):
        gauss.guarantee_for(bounded)
