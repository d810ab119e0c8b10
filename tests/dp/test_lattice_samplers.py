"""The lattice samplers: χ² against the exact pmf with power checks at small, moderate and default-grid scales, the
rounded-Gaussian proposal's bound checked in exact arithmetic, agreement with the independent CKS sampler, and
zeros that are always +0."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from scipy import stats

from privnoise.mechanisms.discrete import DiscreteGaussian, DiscreteLaplace
from privnoise.mechanisms.lattice_laws import (
    GaussianProposal,
    sample_discrete_gaussian,
    sample_discrete_gaussian_cks,
    sample_discrete_laplace,
)
from privnoise.random import default_rng
from privnoise.snapping import CHUNK

ALPHA = 1e-6


def binned_pvalue(units: np.ndarray, log_weight, edges: np.ndarray) -> float:
    """χ² of integer samples over the integer bins [edges[i], edges[i+1]) plus two tails, against the law with
    unnormalised log-probabilities ``log_weight(j)``, its mass summed over every integer within reach; cells
    expecting fewer than 5 draws are pooled into one."""
    reach = int(edges[-1] - edges[0]) * 3 + 100
    j = np.arange(-reach, reach + 1, dtype=float)
    w = np.exp(log_weight(j) - log_weight(np.zeros(1))[0])
    pmf = w / w.sum()
    cells = np.concatenate([[-np.inf], edges, [np.inf]])
    expected = units.size * np.array(
        [pmf[(j >= lo) & (j < hi)].sum() for lo, hi in zip(cells[:-1], cells[1:], strict=True)]
    )
    observed = np.histogram(units, bins=cells)[0]
    thin = expected < 5
    observed = np.append(observed[~thin], observed[thin].sum())
    expected = np.append(expected[~thin], max(expected[thin].sum(), 1e-300))
    return float(stats.chisquare(observed, expected * observed.sum() / expected.sum()).pvalue)


def gaussian_log_weight(s):
    return lambda j: -(j * j) / (2.0 * s * s)


def laplace_log_weight(t):
    return lambda j: -np.abs(j) / t


def edges_for(scale: float) -> np.ndarray:
    """Integer bin edges covering ±4 scales: single integers for small scales, ~60 bins for large ones."""
    reach = max(3, math.ceil(4 * scale))
    step = max(1, reach // 30)
    return np.arange(-reach, reach + step + 1, step, dtype=float)


@pytest.mark.slow
@pytest.mark.parametrize("s", [0.3, 1.7, 2.5, 12.0, 4096.0])
def test_discrete_gaussian_chi2_and_power(s):
    units = sample_discrete_gaussian(s, 200_000, default_rng(21))
    assert np.array_equal(units, np.rint(units))
    edges = edges_for(s)
    assert binned_pvalue(units, gaussian_log_weight(s), edges) > ALPHA
    for wrong in (0.7, 1.3):
        assert binned_pvalue(units, gaussian_log_weight(s * wrong), edges) < ALPHA


def test_discrete_gaussian_of_tiny_scale_is_zero():
    """s = 0.05: P(j ≠ 0) ≈ 2e⁻²⁰⁰ per draw."""
    assert not sample_discrete_gaussian(0.05, 100_000, default_rng(26)).any()


@pytest.mark.slow
@pytest.mark.parametrize("t", [0.3, 1.6, 7.5, 4096.0])
def test_discrete_laplace_chi2_and_power(t):
    units = sample_discrete_laplace(t, 200_000, default_rng(22))
    assert np.array_equal(units, np.rint(units))
    edges = edges_for(t)
    assert binned_pvalue(units, laplace_log_weight(t), edges) > ALPHA
    for wrong in (0.7, 1.3):
        assert binned_pvalue(units, laplace_log_weight(t * wrong), edges) < ALPHA


def chunk_by_chunk(sampler, scale: float, seed: int, chunks: int = 13) -> np.ndarray:
    """Draws made one chunk at a time into a buffer, as a hardened release's kernel makes them: each call proposes
    its chunk with extra proposals that fill the refused places (privnoise.snapping.fill_with_rejection)."""
    generator, buffer = default_rng(seed), np.empty(CHUNK)
    parts = []
    for _ in range(chunks):
        sampler(scale, buffer.size, generator, out=buffer)
        parts.append(buffer.copy())
    return np.concatenate(parts)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("sampler", "log_weight", "scale"),
    [
        (sample_discrete_gaussian, gaussian_log_weight, 0.3),  # about half the proposals refused
        (sample_discrete_gaussian, gaussian_log_weight, 1.7),
        (sample_discrete_gaussian, gaussian_log_weight, 4096.0),  # the default grid: a few refused per chunk
        (sample_discrete_laplace, laplace_log_weight, 0.3),
        (sample_discrete_laplace, laplace_log_weight, 7.5),
        (sample_discrete_laplace, laplace_log_weight, 4096.0),
    ],
)
def test_chunk_by_chunk_draws_chi2_and_power(sampler, log_weight, scale):
    units = chunk_by_chunk(sampler, scale, 31)
    assert units.size > 200_000 and np.array_equal(units, np.rint(units))
    assert not np.signbit(units[units == 0]).any()
    edges = edges_for(scale)
    assert binned_pvalue(units, log_weight(scale), edges) > ALPHA
    for wrong in (0.7, 1.3):
        assert binned_pvalue(units, log_weight(scale * wrong), edges) < ALPHA


@pytest.mark.slow
@pytest.mark.parametrize("s", [0.8, 2.5, 9.0])
def test_discrete_gaussian_agrees_with_the_cks_sampler(s):
    """Two independent exact samplers: a two-sample χ² of their histograms."""
    a = sample_discrete_gaussian(s, 200_000, default_rng(23))
    b = sample_discrete_gaussian_cks(s, 200_000, default_rng(24))
    edges = edges_for(s)
    cells = np.concatenate([[-np.inf], edges, [np.inf]])
    table = np.vstack([np.histogram(a, cells)[0], np.histogram(b, cells)[0]])
    table = table[:, table.sum(axis=0) >= 10]
    assert stats.chi2_contingency(table, correction=False)[1] > ALPHA


@pytest.mark.parametrize("s", [0.01, 0.3, 1.0, 3.0, 64.0, 4096.0, 2.0**40])
def test_rounded_gaussian_bound_holds_in_exact_arithmetic(s):
    """E = x²/(2τ²) − j²/(2s²) ≤ C over every cell |x − j| ≤ 1/2 (at its worst end, |x| = |j| + 1/2), checked with
    rationals for the doubles the sampler uses, and attained near |j| = 1/(2η) (C is not loose)."""
    law = GaussianProposal.for_sigma(s)
    tau2, s2, bound = Fraction(law.tau) ** 2, Fraction(s) ** 2, Fraction(law.bound)

    def log_ratio(a: Fraction) -> Fraction:  # E at the cell end |x| = a + 1/2
        x = a + Fraction(1, 2)
        return x * x / (2 * tau2) - a * a / (2 * s2)

    peak = Fraction(1) / (2 * Fraction(law.eta))
    slack = 1 + Fraction(1, 2**40)  # only from rounding τ = s√(1 + η) to a double
    for a in {0, 1, 2, math.floor(peak), math.ceil(peak), 10 * math.ceil(peak) + 3}:
        assert log_ratio(Fraction(a)) <= bound * slack
    assert bound / slack <= log_ratio(peak) <= bound * slack  # attained at a = 1/(2η): C is not loose


@pytest.mark.parametrize("s", [0.3, 2.5, 50.0])
def test_acceptance_rate_matches_the_proposal(s):
    """The mean acceptance probability of rounded N(0, τ²) proposals is the stated rate (Monte Carlo, 10⁶ draws),
    and the rate is Σ_j exp(−j²/(2s²))·e^{−C}/(τ√(2π)) computed independently with mpmath."""
    law = GaussianProposal.for_sigma(s)
    x = np.random.default_rng(5).normal(0.0, law.tau, 1_000_000)
    p = np.exp(law.log_ratio(x, np.rint(x)))
    assert p.max() <= 1.0 + 1e-12
    assert p.mean() == pytest.approx(law.acceptance(), abs=5 * p.std() / 1000)
    mpmath.mp.dps = 30
    total = mpmath.nsum(lambda j: mpmath.exp(-(j**2) / (2 * mpmath.mpf(s) ** 2)), [-mpmath.inf, mpmath.inf])
    exact = total * mpmath.exp(-mpmath.mpf(law.bound)) / (mpmath.mpf(law.tau) * mpmath.sqrt(2 * mpmath.pi))
    assert law.acceptance() == pytest.approx(float(exact), rel=1e-12)
    assert law.acceptance() > 0.4


@pytest.mark.parametrize("make", [lambda: DiscreteLaplace(scale=1.0), lambda: DiscreteGaussian(sigma=1.0)])
def test_lattice_zeros_are_positive(make):
    mech = make()
    w = mech.sample_units(200_000, rng=25)
    assert (w == 0).any() and not np.signbit(w[w == 0]).any()


def test_samplers_fill_a_given_buffer_and_are_reproducible():
    out = np.full(50_000, np.nan)
    sample_discrete_gaussian(3.0, out.size, default_rng(7), out=out)
    assert np.array_equal(out, sample_discrete_gaussian(3.0, out.size, default_rng(7)))
    sample_discrete_laplace(3.0, out.size, default_rng(8), out=out)
    assert np.array_equal(out, sample_discrete_laplace(3.0, out.size, default_rng(8)))
    for n in (0, 1, 5, 17):
        assert sample_discrete_gaussian(0.5, n, default_rng(9)).shape == (n,)
        assert sample_discrete_laplace(0.5, n, default_rng(9)).shape == (n,)
