"""Selection mechanisms against laws computed here: the exponential mechanism's probabilities (softmax at the
temperature ε/(cΔ), with multiplicities), its sampler and noisy max (Gumbel and Laplace, top-k at ε/k a pick)
by χ² tests at α = 1e-6 that also reject a 30 % wrong temperature, and the closed-form constants."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import integrate, stats

from privnoise.dp.exponential import (
    exponential_mechanism,
    exponential_mechanism_epsilon,
    proposition4_epsilon,
    report_noisy_max,
    selection_probabilities,
    truncated_laplace_log_density,
)
from privnoise.exceptions import DimensionError, InvalidParameterError

ALPHA = 1e-6


def _softmax(log_w: np.ndarray) -> np.ndarray:
    w = np.exp(log_w - log_w.max())
    return w / w.sum()


def _chi2_pvalue(observed: np.ndarray, probabilities: np.ndarray) -> float:
    expected = probabilities * observed.sum()
    keep = expected > 0
    return float(stats.chisquare(observed[keep], expected[keep] * observed[keep].sum() / expected[keep].sum()).pvalue)


@pytest.mark.parametrize("monotone", [False, True])
def test_probabilities_are_the_softmax_at_epsilon_over_c_delta(monotone):
    scores = np.array([0.0, 1.5, -2.0, 3.0])
    eps, delta = 0.8, 1.7
    c = 1.0 if monotone else 2.0
    expected = _softmax(eps * scores / (c * delta))
    got = selection_probabilities(scores, eps, sensitivity=delta, monotone=monotone)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    # blocks of equal candidates: P(block) ∝ multiplicity · weight; an empty block is never chosen
    mult = np.array([3.0, 1.0, 0.0, 2.0])
    with np.errstate(divide="ignore"):
        expected = _softmax(eps * scores / (c * delta) + np.log(mult))
    got = selection_probabilities(scores, eps, sensitivity=delta, monotone=monotone, multiplicity=mult)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert got[2] == 0.0


def test_sampler_follows_the_law_and_rejects_a_wrong_temperature():
    scores = np.array([0.0, 1.0, 2.0, 0.5])
    mult = np.array([1.0, 4.0, 1.0, 2.0])
    eps, delta, n = 1.0, 0.5, 200_000
    draws = exponential_mechanism(scores, eps, sensitivity=delta, multiplicity=mult, size=n, rng=3)
    observed = np.bincount(draws, minlength=4).astype(float)
    law = _softmax(eps * scores / (2 * delta) + np.log(mult))
    assert _chi2_pvalue(observed, law) > ALPHA
    wrong = _softmax(1.3 * eps * scores / (2 * delta) + np.log(mult))
    assert _chi2_pvalue(observed, wrong) < ALPHA
    one = exponential_mechanism(scores, eps, sensitivity=delta, rng=4)
    assert isinstance(one, int) and 0 <= one < 4
    # the last candidate is reachable (inverse cdf up to its end)
    assert exponential_mechanism([0.0, 50.0], 1.0, sensitivity=1.0, size=100, rng=5).min() == 1


def _gumbel_top_k_law(scores: np.ndarray, scale: float, k: int) -> dict[tuple[int, ...], float]:
    """P(the ordered top-k) of u + Gumbel(scale): sequential softmax without replacement (Plackett–Luce)."""
    w = np.exp((scores - scores.max()) / scale)
    law = {}
    for order in itertools.permutations(range(scores.size), k):
        p, left = 1.0, w.sum()
        for i in order:
            p *= w[i] / left
            left -= w[i]
        law[order] = p
    return law


def _laplace_argmax_law(scores: np.ndarray, scale: float) -> np.ndarray:
    """P(argmax of u + Laplace(scale)) by quadrature: ∫ f(x − uᵢ) Πⱼ≠ᵢ F(x − uⱼ) dx."""
    out = []
    for i in range(scores.size):
        def integrand(x: float, i: int = i) -> float:
            value = math.exp(-abs(x - scores[i]) / scale) / (2.0 * scale)
            for j in range(scores.size):
                if j != i:
                    z = (x - scores[j]) / scale
                    value *= 0.5 * math.exp(z) if z < 0 else 1.0 - 0.5 * math.exp(-z)
            return value

        edges = [-np.inf, *sorted(scores), np.inf]
        out.append(sum(integrate.quad(integrand, a, b, limit=200)[0] for a, b in zip(edges[:-1], edges[1:],
                                                                                  strict=True)))
    return np.array(out)


def _ordered_counts(picks: np.ndarray, keys: list[tuple[int, ...]], candidates: int) -> np.ndarray:
    codes = picks @ (candidates ** np.arange(picks.shape[1]))
    counts = np.bincount(codes, minlength=candidates ** picks.shape[1])
    return np.array([counts[np.dot(key, candidates ** np.arange(len(key)))] for key in keys], dtype=float)


@pytest.mark.parametrize(("k", "monotone"), [(1, False), (2, True), (2, False)])
def test_gumbel_noisy_max_has_scale_c_delta_k_over_epsilon(k, monotone):
    scores = np.array([0.0, 1.0, 2.5])
    eps, delta, n = 1.2, 0.7, 60_000
    c = 1.0 if monotone else 2.0
    picks = report_noisy_max(scores, eps, sensitivity=delta, k=k, monotone=monotone, size=n, rng=11)
    assert picks.shape == (n, k)
    law = _gumbel_top_k_law(scores, c * delta * k / eps, k)
    keys = list(law)
    observed = _ordered_counts(picks, keys, scores.size)
    assert _chi2_pvalue(observed, np.array([law[key] for key in keys])) > ALPHA
    wrong = _gumbel_top_k_law(scores, c * delta * k / (1.3 * eps), k)
    assert _chi2_pvalue(observed, np.array([wrong[key] for key in keys])) < ALPHA


@pytest.mark.parametrize(("k", "monotone"), [(1, True), (2, False)])
def test_laplace_noisy_max_has_scale_c_delta_k_over_epsilon(k, monotone):
    scores = np.array([0.0, 1.0, 2.5])
    eps, delta, n = 1.2, 0.7, 60_000
    c = 1.0 if monotone else 2.0
    picks = report_noisy_max(scores, eps, sensitivity=delta, k=k, monotone=monotone, method="laplace", size=n,
                             rng=12)
    assert picks.shape == (n, k)
    first = np.bincount(picks[:, 0], minlength=3).astype(float)
    law = _laplace_argmax_law(scores, c * delta * k / eps)
    assert law.sum() == pytest.approx(1.0, abs=1e-8)
    assert _chi2_pvalue(first, law) > ALPHA
    assert _chi2_pvalue(first, _laplace_argmax_law(scores, c * delta * k / (1.3 * eps))) < ALPHA
    if k == 2:  # peeling: the second pick is never the first, and is the noisy max of the rest
        assert np.all(picks[:, 0] != picks[:, 1])
        rest = picks[picks[:, 0] == 2, 1]
        pair = _laplace_argmax_law(scores[:2], c * delta * k / eps)
        assert _chi2_pvalue(np.bincount(rest, minlength=2).astype(float), pair) > ALPHA
    one = report_noisy_max(scores, eps, sensitivity=delta, k=k, method="laplace", rng=1)
    assert one.shape == (k,)


def test_constants_of_the_exponential_mechanism():
    assert exponential_mechanism_epsilon(0.3, 2.0) == pytest.approx(1.2, rel=1e-15)
    assert exponential_mechanism_epsilon(0.3, 2.0, monotone=True) == pytest.approx(0.6, rel=1e-15)
    assert proposition4_epsilon(0.3, 2.0) == pytest.approx(1.2, rel=1e-15)
    assert proposition4_epsilon(0.3, 2.0, invariant_normaliser=True) == pytest.approx(0.6, rel=1e-15)
    assert proposition4_epsilon(0.3, 0.0) == 0.0


@pytest.mark.parametrize("u", [-0.7, 0.0, 0.3, 1.0, 1.8])
def test_truncated_laplace_density_integrates_to_one(u):
    eps = 1.7
    total, _ = integrate.quad(lambda y: math.exp(float(truncated_laplace_log_density(u, y, eps))), 0.0, 1.0,
                              points=[min(max(u, 0.0), 1.0)])
    assert total == pytest.approx(1.0, rel=1e-10)
    # its log-ratio in y is the score's: −ε|u − y|
    a, b = truncated_laplace_log_density(u, [0.2, 0.9], eps)
    assert a - b == pytest.approx(-eps * (abs(u - 0.2) - abs(u - 0.9)), abs=1e-12)


def test_bad_input_of_the_selection_mechanisms():
    with pytest.raises(DimensionError):
        selection_probabilities([], 1.0, sensitivity=1.0)
    with pytest.raises(DimensionError):
        selection_probabilities([1.0, 2.0], 1.0, sensitivity=1.0, multiplicity=[1.0])
    with pytest.raises(InvalidParameterError):
        selection_probabilities([1.0, 2.0], 1.0, sensitivity=1.0, multiplicity=[1.0, -1.0])
    with pytest.raises(InvalidParameterError):
        selection_probabilities([1.0, 2.0], 1.0, sensitivity=1.0, multiplicity=[0.0, 0.0])
    with pytest.raises(InvalidParameterError):
        selection_probabilities([1.0, 2.0], 1.0, sensitivity=1.0, monotone=1)
    with pytest.raises(InvalidParameterError):
        report_noisy_max([1.0, 2.0], 1.0, sensitivity=1.0, k=3)
    with pytest.raises(InvalidParameterError):
        report_noisy_max([1.0, 2.0], 1.0, sensitivity=1.0, method="gumbel")
    with pytest.raises(InvalidParameterError):
        proposition4_epsilon(1.0, 1.0, invariant_normaliser=1)
    assert report_noisy_max([1.0, 2.0], 1.0, sensitivity=1.0, k=2, rng=0).shape == (2,)


def test_monotone_sampling_uses_the_monotone_temperature():
    scores = np.array([0.0, 1.0, 2.0])
    draws = exponential_mechanism(scores, 1.0, sensitivity=1.0, monotone=True, size=100_000, rng=6)
    observed = np.bincount(draws, minlength=3).astype(float)
    assert _chi2_pvalue(observed, _softmax(scores)) > ALPHA
    assert _chi2_pvalue(observed, _softmax(scores / 2)) < ALPHA


def test_a_seed_reproduces_the_selection():
    scores = [0.0, 0.3, 0.1, 0.2]
    for method in ("exponential", "laplace"):
        a = report_noisy_max(scores, 1.0, sensitivity=1.0, k=2, method=method, size=50, rng=9)
        b = report_noisy_max(scores, 1.0, sensitivity=1.0, k=2, method=method, size=50, rng=9)
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(exponential_mechanism(scores, 1.0, sensitivity=1.0, size=50, rng=9),
                                  exponential_mechanism(scores, 1.0, sensitivity=1.0, size=50, rng=9))


def test_scores_and_multiplicities_must_be_vectors():
    with pytest.raises(DimensionError):
        selection_probabilities([[1.0, 2.0]], 1.0, sensitivity=1.0)
    with pytest.raises(DimensionError):
        report_noisy_max([[1.0, 2.0]], 1.0, sensitivity=1.0)
    with pytest.raises(DimensionError):
        selection_probabilities([1.0, 2.0], 1.0, sensitivity=1.0, multiplicity=[[1.0, 2.0]])
