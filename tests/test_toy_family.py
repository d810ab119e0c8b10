"""A noise family added from outside the library works through every library interface, touching no other file.

The toy family is logistic noise, g(w) = e^{−w/s}/(s(1 + e^{−w/s})²): |d log g/dw| = tanh(|w|/(2s))/s < 1/s, so a
shift of Δ changes the log-density by less than Δ/s and the mechanism is pure (Δ/s)-DP at ℓ1 sensitivity Δ; its
Fisher information is 1/(3s²), its variance π²s²/3, and P(|W| ≤ x) = tanh(x/(2s)). It is defined here: a mechanism
(sampler, density, score, moments), its own privacy profile (``privacy_profile()``), its error law and a
:class:`~privnoise.dp.families.NoiseFamily` registered by name. The Session then calibrates, releases, states and
accounts it like the built-in families; ``pn.release`` states its guarantee from its own profile.

The references are computed here with scipy (the logistic law, quadrature) and exact rationals, not by the library.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
import pytest
from numpy.typing import NDArray
from scipy import integrate, stats

import privnoise as pn
from privnoise.dp.families import FAMILIES, NoiseFamily, register_family
from privnoise.dp.privacy_profiles import PrivacyProfile
from privnoise.mechanisms import Mechanism
from privnoise.mechanisms.error_laws import ErrorLaw

ALPHA = 1e-6


@dataclass(frozen=True, slots=True)
class LogisticError(ErrorLaw):
    name: ClassVar[str] = "logistic"
    parameter: ClassVar[str] = "s"

    def quantile(self, level: float) -> float:
        return self.scale * math.log((1.0 + level) / (1.0 - level))

    def mass_within(self, x: float) -> float:
        return math.tanh(x / (2.0 * self.scale))

    def variance(self) -> float:
        return math.pi**2 * self.scale**2 / 3.0

    def difference_tail(self, x: Any, other: Any) -> Any:
        # P(|W₁ − W₂'| ≥ x) by quadrature over W₂' (W₂' of scale `other`)
        def one(xv: float, c: float) -> float:
            if c == 0.0:
                return 1.0 - math.tanh(xv / (2.0 * self.scale))
            law1, law2 = stats.logistic(scale=self.scale), stats.logistic(scale=c)
            inside = integrate.quad(lambda v: (law1.cdf(xv + v) - law1.cdf(-xv + v)) * law2.pdf(v), -np.inf, np.inf)[0]
            return min(max(1.0 - inside, 0.0), 1.0)

        out = np.vectorize(one)(np.asarray(x, dtype=float), np.broadcast_to(np.asarray(other, dtype=float), np.shape(x)))
        return float(out) if np.ndim(out) == 0 else out


@dataclass(frozen=True, slots=True)
class LogisticProfile(PrivacyProfile):
    s: float
    norm: Any = "l1"
    pure: bool = True
    label: str = "logistic"

    @property
    def scale(self) -> float:  # type: ignore[override]
        return self.s

    def epsilon(self, sensitivity: float, delta: float = 0.0, *, grid: float | None = None) -> float:
        return (sensitivity + (grid or 0.0)) / self.s

    def epsilon_fraction(self, sensitivity: float, *, grid: float | None = None) -> Fraction:
        return (Fraction(sensitivity) + Fraction(grid or 0.0)) / Fraction(self.s)

    def error_law(self) -> ErrorLaw:
        return LogisticError(self.s)


@dataclass(frozen=True, slots=True, kw_only=True)
class Logistic(Mechanism):
    scale: float

    @property
    def shape(self) -> tuple[int, ...]:
        return ()

    def _sample(self, n: int, generator: np.random.Generator) -> NDArray[np.float64]:
        u = generator.random(n)
        return self.scale * np.log(u / (1.0 - u))

    def _logpdf(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        z = x / self.scale
        return -np.abs(z) - 2.0 * np.log1p(np.exp(-np.abs(z))) - math.log(self.scale)

    def _score(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return -np.tanh(x / (2.0 * self.scale)) / self.scale

    def mean(self) -> float:
        return 0.0

    def covariance(self) -> float:
        return math.pi**2 * self.scale**2 / 3.0

    def fisher_information(self) -> float:
        return 1.0 / (3.0 * self.scale**2)

    def entropy(self) -> float:
        return math.log(self.scale) + 2.0

    def describe(self) -> dict[str, Any]:
        return {"family": "logistic", "scale": self.scale}

    def privacy_profile(self) -> PrivacyProfile:
        return LogisticProfile(self.scale)


LOGISTIC = NoiseFamily(
    name="logistic",
    currency="epsilon",
    norm="l1",
    build=lambda s: Logistic(scale=s),
    start=lambda sensitivity, share: float(Fraction(sensitivity) / share),
    description="logistic noise (a toy family registered by a test)",
)


@pytest.fixture
def logistic() -> Iterator[NoiseFamily]:
    register_family(LOGISTIC)
    yield LOGISTIC
    FAMILIES.pop("logistic")


def _data(n: int = 6000, groups: int = 3000) -> dict[str, Any]:
    rng = np.random.default_rng(5)
    return {"g": np.arange(n) % groups, "x": rng.uniform(-10.0, 10.0, n)}


def test_the_session_calibrates_releases_and_states_the_toy_family(logistic: NoiseFamily) -> None:
    data = _data()
    session = pn.Session(data, epsilon=4, noise="logistic", rng=17)
    estimate = session.group_by("g", keys=list(range(3000))).sum("x", bounds=(-10.0, 10.0), epsilon=2)
    (noise,) = estimate.noise
    # calibrated by the family: Δ/s ≤ ε exactly (Δ = 10 for one added or removed row), and no looser than needed
    assert noise["family"] == "logistic"
    s = noise["s"]
    assert Fraction(10) / Fraction(s) <= 2 and 10 / s > 2 * (1 - 1e-12)
    assert estimate.guarantee.as_dict()["epsilon"] == 2.0 and session.spent().epsilon == 2.0
    # the law of the release: exact group sums plus logistic noise of scale s (KS, α = 1e-6) ...
    exact = np.bincount(data["g"], weights=data["x"], minlength=3000)
    errors = np.asarray(estimate.value, dtype=float) - exact
    assert stats.kstest(errors, stats.logistic(scale=s).cdf).pvalue > ALPHA
    # ... which rejects a 30 % wider scale and Laplace noise of the same scale (power)
    assert stats.kstest(errors, stats.logistic(scale=1.3 * s).cdf).pvalue < ALPHA
    assert stats.kstest(errors, stats.laplace(scale=s).cdf).pvalue < ALPHA
    # the stated intervals come from the family's error law: coverage at 95 % per cell (binomial, α = 1e-6)
    low, high = estimate.confidence_interval(0.95)
    covered = np.mean((np.asarray(low) <= exact) & (exact <= np.asarray(high)))
    assert abs(covered - 0.95) < 5.0 * math.sqrt(0.95 * 0.05 / 3000)
    radius = stats.logistic(scale=s).ppf(0.975)
    assert np.median(np.asarray(high) - np.asarray(low)) == pytest.approx(2 * radius, rel=1e-3)


def test_every_accountant_of_epsilon_composes_the_toy_family(logistic: NoiseFamily) -> None:
    data = _data(200, 10)
    for accountant, delta in (("pure", 0.0), ("approximate", 1e-6), ("advanced", 1e-6), ("pld", 1e-6)):
        session = pn.Session(data, epsilon=1, delta=delta, accountant=accountant, noise="logistic", rng=3)
        session.count(epsilon=0.5)
        session.mean("x", bounds=(-10.0, 10.0), epsilon=0.25)
        # the PLD accountant composes each part as a worst-case pure pair: never below basic composition's 3/4 by
        # more than its discretisation
        assert session.spent().epsilon == pytest.approx(0.75, rel=1e-3)
        with pytest.raises(pn.exceptions.BudgetExceededError):
            session.count(epsilon=0.5)


def test_a_family_is_refused_by_an_accountant_of_the_other_currency(logistic: NoiseFamily) -> None:
    with pytest.raises(pn.exceptions.InvalidParameterError, match="spends epsilon"):
        pn.Session(_data(), epsilon=1, delta=1e-6, accountant="zcdp", noise="logistic")
    with pytest.raises(pn.exceptions.InvalidParameterError, match="'logistic'"):
        pn.Session(_data(), epsilon=1, noise="logistc")


def test_an_unknown_family_names_the_registered_ones() -> None:
    with pytest.raises(pn.exceptions.InvalidParameterError, match="'gaussian', 'laplace'"):
        pn.Session(_data(), epsilon=1, noise="logistic")


def test_pn_release_states_the_toy_familys_guarantee_from_its_own_profile() -> None:
    query = pn.queries.mean(4, bounds=(0.0, 1.0))  # Δ₁ = 1/4
    release = pn.release(np.array([0.2, 0.4, 0.6, 0.8]), query, Logistic(scale=0.5), rng=9)
    guarantee = release.guarantee.as_dict()
    assert guarantee["differential_privacy"]["epsilon"] == pytest.approx(0.5, rel=1e-12)  # (1/4)/(1/2)
    # the Fisher information of the mean about each record: (1/4)² · 1/(3s²) = 1/12 (Farokhi & Sandberg, Prop. 1)
    assert guarantee["fisher"]["worst_record_bound"] == pytest.approx(12.0, rel=1e-9)


def test_the_command_line_releases_with_the_toy_family(logistic: NoiseFamily, tmp_path, monkeypatch) -> None:
    pd = pytest.importorskip("pandas")
    from typer.testing import CliRunner

    from privnoise.cli import app

    monkeypatch.setenv("PRIVNOISE_LEDGER", str(tmp_path / "ledger.sqlite"))
    path = tmp_path / "values.csv"
    pd.DataFrame(_data(400, 40)).to_csv(path, index=False)
    result = CliRunner().invoke(app, ["release", str(path), "--column", "x", "--query", "sum", "--bounds", "-10,10",
                                      "--epsilon", "1", "--noise", "logistic", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    (noise,) = payload["noise"]
    assert noise["family"] == "logistic" and noise["s"] == pytest.approx(10.0)  # Δ/ε
    assert payload["guarantee"]["epsilon"] == 1.0
    refused = CliRunner().invoke(app, ["release", str(path), "--column", "x", "--query", "sum", "--bounds", "-10,10",
                                       "--epsilon", "1", "--noise", "gaussian"])
    assert refused.exit_code == 2 and "spends rho" in refused.output


def test_a_session_on_dask_uses_the_toy_family_too(logistic: NoiseFamily) -> None:
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(_data())
    local = pn.Session(frame, epsilon=1, noise="logistic", rng=3)
    spread = pn.Session(dd.from_pandas(frame, npartitions=4), epsilon=1, noise="logistic", rng=3)
    keys = list(range(3000))
    a = local.group_by("g", keys=keys).sum("x", bounds=(-10.0, 10.0), epsilon=1)
    b = spread.group_by("g", keys=keys).sum("x", bounds=(-10.0, 10.0), epsilon=1)
    assert a.noise == b.noise and a.guarantee.as_dict() == b.guarantee.as_dict()
    exact = np.bincount(frame["g"], weights=frame["x"], minlength=3000)
    errors = np.asarray(b.value, dtype=float) - exact
    s = b.noise[0]["s"]
    assert stats.kstest(errors, stats.logistic(scale=s).cdf).pvalue > ALPHA
    assert stats.kstest(errors, stats.logistic(scale=1.3 * s).cdf).pvalue < ALPHA
