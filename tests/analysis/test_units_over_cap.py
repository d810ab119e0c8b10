"""``Session.units_over_cap``: the number of privacy units with more rows than the cap, as a private count of
sensitivity 1 — against a brute-force count over the units, and its noise against the discrete Laplace law."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import privnoise as pn
from privnoise.exceptions import InvalidParameterError

ALPHA = 1e-6


def _data(seed: int = 3) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    rows = rng.integers(1, 9, size=300)  # 300 units of 1 … 8 rows
    unit = np.repeat(np.arange(300), rows)
    return {"unit": unit, "kwh": rng.uniform(0, 5, unit.size), "region": rng.choice(["n", "s"], unit.size)}


def _brute(data: dict[str, np.ndarray], k: int, mask: np.ndarray | None = None) -> int:
    units = data["unit"] if mask is None else data["unit"][mask]
    return int(sum(1 for c in np.bincount(units) if c > k))


@pytest.mark.parametrize("k", [1, 3, 7, 8])
def test_the_exact_difference_is_the_number_of_units_over_the_cap(k: int) -> None:
    data = _data()
    session = pn.Session(data, privacy_unit="unit", max_contributions=k, epsilon=1e6, rng=1)
    # at ε = 10⁶ (per release 1e5) the discrete noise is 0 with probability 1 − 2e^{−1e5}: the exact value shows
    assert session.units_over_cap(epsilon=1e5).value == _brute(data, k)
    north = session.where(region="n")
    assert north.units_over_cap(epsilon=1e5).value == _brute(data, k, data["region"] == "n")


def test_its_noise_is_discrete_laplace_of_sensitivity_one_and_a_wrong_scale_is_rejected() -> None:
    data = _data(5)
    k, epsilon, trials = 2, 0.5, 3000
    truth = _brute(data, k)  # about 220: the clamping at 0 never acts
    session = pn.Session(data, privacy_unit="unit", max_contributions=k, epsilon=epsilon * trials, rng=11)
    errors = np.array([session.units_over_cap(epsilon=epsilon).value - truth for _ in range(trials)])
    q = math.exp(-epsilon)  # the discrete Laplace law of sensitivity 1: P(x) = (1 − q)/(1 + q) q^|x|
    support = np.arange(-60, 61)

    def chi2_p(q: float) -> float:
        probabilities = (1 - q) / (1 + q) * q ** np.abs(support)
        counts = np.array([(errors == x).sum() for x in support])
        keep = probabilities * trials >= 5
        observed = np.r_[counts[keep], trials - counts[keep].sum()]
        expected = np.r_[probabilities[keep] * trials, trials - (probabilities[keep] * trials).sum()]
        return float(stats.chisquare(observed, expected).pvalue)

    assert chi2_p(q) > ALPHA
    assert chi2_p(math.exp(-epsilon / 2)) < ALPHA  # sensitivity 2 (a noise twice as wide) is seen


def test_refusals_and_dry_run() -> None:
    data = _data()
    plain = pn.Session({"kwh": data["kwh"]}, epsilon=1.0)
    with pytest.raises(InvalidParameterError, match="no privacy unit"):
        plain.units_over_cap(epsilon=0.1)
    session = pn.Session(data, privacy_unit="unit", max_contributions=3, epsilon=1.0)
    preview = session.units_over_cap(epsilon=0.25, dry_run=True)
    assert session.remaining().epsilon == 1.0 and preview.cost["epsilon"] == 0.25
    session.units_over_cap(epsilon=0.25)
    assert session.remaining().epsilon == pytest.approx(0.75)  # charged once, not for both counts
