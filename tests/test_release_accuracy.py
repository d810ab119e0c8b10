"""One result type: pn.release states the accuracy of its noise like a Session query, and both return a Release.

The stated radius is checked against the closed forms computed here with scipy (Laplace: b·log(1/(1 − level)),
Gaussian: σ·Φ⁻¹((1 + level)/2), each plus the grid Λ), and its coverage against the released values themselves:
an identity release adds independent noise to every record, so one release of n records is n draws of the
interval's coverage, tested by a one-sided binomial test at α = 1e-6 — which must also reject an interval 30 %
too narrow (the power check).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

import privnoise as pn
from privnoise import queries
from privnoise.exceptions import InvalidParameterError
from privnoise.fisher import optimal_noise

N = 100_000
LEVEL = 0.9
ALPHA = 1e-6


def _covered(values: np.ndarray, truth: np.ndarray, low: np.ndarray, high: np.ndarray) -> int:
    return int(np.count_nonzero((low <= truth) & (truth <= high)))


def _coverage_holds(covered: int, n: int, level: float) -> bool:
    """One-sided: the misses are not significantly more than 1 − level allows (α = 1e-6)."""
    return stats.binom.sf(n - covered - 1, n, 1.0 - level) >= ALPHA


@pytest.mark.parametrize("family", ["laplace", "gaussian"])
def test_an_identity_release_states_intervals_that_cover_at_their_level(family: str) -> None:
    rng = np.random.default_rng(3)
    truth = np.round(rng.uniform(0.0, 10.0, size=N), 3)
    query = queries.identity(N, bounds=(0.0, 10.0))
    if family == "laplace":
        noise = pn.dp.laplace_for_epsilon(1.0, sensitivity=10.0, dim=N)
        expected = 10.0 * math.log(1.0 / (1.0 - LEVEL))  # b = Δ/ε
    else:
        noise = pn.dp.gaussian_for_epsilon_delta(1.0, 1e-6, sensitivity=10.0, dim=N)
        sigma = pn.dp.gaussian_sigma(1.0, 1e-6, sensitivity=10.0)
        expected = sigma * stats.norm.ppf((1.0 + LEVEL) / 2.0)
    release = pn.release(truth, query, noise, rng=11)
    low, high = release.confidence_interval(LEVEL)
    radius = release.accuracy(1.0 - LEVEL)
    assert np.allclose(radius, expected + release.grid, rtol=1e-9)  # the closed form plus the grid (hardened)
    covered = _covered(release.value, truth, low, high)
    assert _coverage_holds(covered, N, LEVEL)
    # power: an interval 30 % narrower is rejected by the same test on the same release
    narrow = 0.7 * (radius - release.grid)
    assert not _coverage_holds(_covered(release.value, truth, release.value - narrow, release.value + narrow),
                               N, LEVEL)


def test_a_scalar_release_and_a_session_query_are_one_type() -> None:
    x = np.linspace(0.0, 4.0, 200)
    q = queries.mean(200, bounds=(0.0, 4.0))
    direct = pn.release(x, q, pn.dp.laplace_for_epsilon(1.0, sensitivity=q.sensitivity("l1")), rng=1)
    session = pn.Session({"x": x}, epsilon=1.0, rng=1).mean("x", bounds=(0.0, 4.0), epsilon=0.5)
    assert type(direct) is type(session) is pn.Release
    assert pn.analysis.Estimate is pn.Release
    low, high = direct.confidence_interval(0.95)
    assert low < direct.value < high
    payload = json.loads(json.dumps(direct.as_dict(), allow_nan=False))
    assert payload["accuracy"]["radius"] == pytest.approx(direct.value - low)
    assert payload["mechanism"] and "clamped_records" not in payload and "clamped" not in payload
    assert "95% interval" in direct.summary()


def test_noise_without_an_error_law_states_no_accuracy_and_says_so() -> None:
    x = np.linspace(0.0, 4.0, 200)
    q = queries.mean(200, bounds=(0.0, 4.0))
    release = pn.release(x, q, optimal_noise(q, support=(-0.1, 0.1)), rng=1)  # bounded cos² noise: no (ε, δ) law
    assert not release.stated_accuracy
    with pytest.raises(InvalidParameterError, match="states no accuracy"):
        release.confidence_interval()
    with pytest.raises(InvalidParameterError, match="states no accuracy"):
        release.accuracy()
    assert "accuracy" not in release.as_dict()
    assert "interval" not in release.summary() and release.guarantee.summary() in release.summary()


def test_a_release_written_to_a_file_states_no_interval(tmp_path) -> None:
    truth = np.arange(1000, dtype=float)
    query = queries.identity(1000, bounds=(0.0, 1000.0))
    release = pn.release(truth, query, pn.dp.laplace_for_epsilon(1.0, sensitivity=1000.0, dim=1000), rng=2,
                         out=tmp_path / "noisy.npy")
    assert release.value is None and release.output is not None and not release.stated_accuracy
