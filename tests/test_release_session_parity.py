"""pn.release and the Session answer the same question with the same noise and state the same ε.

Where both apply — a sum of n records declared in [low, high], one record replaced, Laplace noise at ε — the direct
release (pn.release with Laplace noise calibrated to the query's ℓ1 sensitivity) and a Session built with
``neighbours="replaced"`` must state the same ε, hold the same noise (family, scale, output grid) and release
values that follow the Session's stated law (KS at α = 1e-6, rejecting a 30 % wrong scale). The sensitivity is
high − low, written here apart from both.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import privnoise as pn

pd = pytest.importorskip("pandas")

ALPHA = 1e-6
N, LOW, HIGH = 100, 0.0, 5.0


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0])
def test_a_direct_sum_and_a_session_sum_hold_the_same_noise_and_epsilon(epsilon: float) -> None:
    x = np.random.default_rng(3).uniform(LOW, HIGH, N)
    session = pn.Session(pd.DataFrame({"x": x}), neighbours="replaced", epsilon=10)
    by_session = session.sum("x", bounds=(LOW, HIGH), epsilon=epsilon)
    q = pn.queries.sum_query(N, bounds=(LOW, HIGH))
    direct = pn.release(x, q, pn.dp.laplace_for_epsilon(epsilon, sensitivity=q.sensitivity("l1")), rng=5)

    sensitivity = HIGH - LOW  # one record replaced moves the sum by at most the width of the bounds
    stated = by_session.noise[0]
    assert stated["family"] == "laplace" and stated["sensitivity"] == sensitivity
    assert stated["b"] == pytest.approx(sensitivity / epsilon, rel=1e-12)
    assert direct.noise[0]["family"] == "laplace" and direct.noise[0]["scale"] == pytest.approx(stated["b"], rel=1e-12)
    assert direct.grid == stated["grid"]
    assert by_session.guarantee.epsilon == pytest.approx(epsilon, rel=1e-12)
    assert direct.guarantee.as_dict()["differential_privacy"]["epsilon"] == pytest.approx(epsilon, rel=1e-12)


def test_direct_sums_follow_the_sessions_stated_law() -> None:
    x = np.random.default_rng(4).uniform(LOW, HIGH, N)
    session = pn.Session(pd.DataFrame({"x": x}), neighbours="replaced", epsilon=10)
    b = session.sum("x", bounds=(LOW, HIGH), epsilon=1.0).noise[0]["b"]
    q = pn.queries.sum_query(N, bounds=(LOW, HIGH))
    noise = pn.dp.laplace_for_epsilon(1.0, sensitivity=q.sensitivity("l1"))
    generator = pn.random.default_rng(12)
    errors = np.array([pn.release(x, q, noise, rng=generator).value for _ in range(6000)]) - float(np.sum(x))
    assert stats.kstest(errors, stats.laplace(scale=b).cdf).pvalue > ALPHA
    for wrong in (0.7 * b, 1.3 * b):  # power: a 30 % wrong scale is rejected
        assert stats.kstest(errors, stats.laplace(scale=wrong).cdf).pvalue < ALPHA
