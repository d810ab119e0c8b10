"""A noise family added from outside the library works through every library interface, touching no other file.

The toy family is logistic noise, g(w) = e^{−w/s}/(s(1 + e^{−w/s})²): |d log g/dw| = tanh(|w|/(2s))/s < 1/s, so a
shift of Δ changes the log-density by less than Δ/s and the mechanism is pure (Δ/s)-DP at ℓ1 sensitivity Δ; its
Fisher information is 1/(3s²), its variance π²s²/3, and P(|W| ≤ x) = tanh(x/(2s)). It is defined here: a mechanism
(sampler, density, score, moments), its own privacy profile (``privacy_profile()``), its error law and a
:class:`~privnoise.dp.families.NoiseFamily` registered by name. The Session then calibrates, releases, states and
accounts it like the built-in families; ``pn.release`` states its guarantee from its own profile; the query server
answers policies that name it (``mechanism = "logistic"``), its hardened release calibrated through the family's
profile with the rounding to the grid added to the sensitivity, through the in-process test client of
tests/server/_lab.py.

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


# --- the query server ---------------------------------------------------------------------------------------------

#: The toy dataset of the server tests: 80 declared keys (a group by of 80 cells stays within the server's
#: parameter limit), five records each, x in [0, 10] on multiples of 1/8 (exact sums, exact grid rounding).
KEYS = tuple(f"k{i:02d}" for i in range(80))
LOW, HIGH = 0.0, 10.0
POLICY_EPSILON = {"count": Fraction(1, 2), "sum": Fraction(1, 4), "histogram": Fraction(1, 3)}


def _server_rows() -> list[dict[str, Any]]:
    return [{"x": (i * 37 % 81) / 8.0, "region": KEYS[i % len(KEYS)]} for i in range(5 * len(KEYS))]


def _lab(root: Any, policies: str) -> Any:
    from tests.server._lab import DatasetDef, Lab

    dataset = DatasetDef(name="toy", rows=_server_rows(), bounds={"x": (LOW, HIGH)}, policies=policies,
                         family="registered", categories=KEYS)
    lab = Lab(root, [dataset])
    lab.add_querier("q")
    return lab


def _logistic_policies() -> str:
    return "\n".join(f'[policies.{kind}]\nmechanism = "logistic"\nepsilon = "{eps}"'
                     for kind, eps in POLICY_EPSILON.items())


def _reference_grid(sensitivity: Fraction, epsilon: Fraction) -> Fraction:
    """The server's grid: the smallest power of two Λ ≥ (Δ/ε)/2¹² (the scale without rounding, over 4096)."""
    target = sensitivity / epsilon / 4096
    k = math.floor(math.log2(target))
    while Fraction(2) ** k < target:
        k += 1
    while Fraction(2) ** (k - 1) >= target:
        k -= 1
    return Fraction(2) ** k


def _stated(answer: dict[str, Any]) -> tuple[Fraction, Fraction]:
    """(s, Λ) of an answer's one noise component, read exactly from the JSON doubles."""
    (noise,) = answer["guarantee"]["noise"]
    return Fraction(noise["scale"]), Fraction(noise["grid"])


def test_the_server_charges_states_and_calibrates_the_toy_family(logistic: NoiseFamily, tmp_path) -> None:
    rows = _server_rows()
    # Δ₁ for one record added, removed or replaced, and the coordinates it moves (a replaced record leaves one
    # cell and enters another): count 1; sum max(|lo|, |hi|, hi − lo); histogram 2; group-by sum 2 max(|lo|, |hi|)
    cases = {
        "count() from toy": ("count", Fraction(1), 1, float(len(rows))),
        "sum(x) from toy": ("sum", Fraction(10), 1, math.fsum(r["x"] for r in rows)),
        "histogram(region) from toy": ("histogram", Fraction(2), 2, None),
        "sum(x) from toy group by region": ("sum", Fraction(20), 2, None),
    }
    spent = Fraction(0)
    with _lab(tmp_path, _logistic_policies()) as lab:
        for text, (kind, sensitivity, _moved, exact) in cases.items():
            response = lab.post("q", {"query": text})
            assert response.status_code == 200, response.text
            answer = response.json()
            eps = POLICY_EPSILON[kind]
            spent += eps
            # (a) the charge is the policy's ε, exactly, in the answer, the ledger and the querier's budget
            assert answer["charged"]["epsilon"] == str(eps) and answer["charged"]["delta"] == "0"
            row = lab.ledger_row(answer["ledger_id"])
            assert (row["mechanism"], Fraction(row["epsilon"]), Fraction(row["delta"])) == ("logistic", eps, 0)
            assert Fraction(answer["remaining"]["epsilon"]["spent"]) == spent
            # (b) the stated guarantee: pure ε-DP at the policy's ε
            guarantee = answer["guarantee"]
            assert guarantee["notion"] == "differential-privacy"
            assert (Fraction(guarantee["epsilon_exact"]), guarantee["epsilon"], guarantee["delta"]) == (eps, float(eps), 0.0)
            # the calibration, in exact rationals: the exact sum snapped to the grid is post-processing of the
            # logistic mechanism, Δ/s-DP, at most ε and no looser (the Session's calibration)
            s, grid = _stated(answer)
            assert answer["guarantee"]["noise"][0]["family"] == "Logistic"
            assert grid == _reference_grid(sensitivity, eps)
            assert sensitivity / s <= eps
            assert sensitivity / s > eps * (1 - Fraction(1, 10**12))
            # the Fisher information charged per record of x: slope² · 1/(3s²), rounded up (never below)
            if kind == "sum":
                information = answer["charged"]["fisher_information"]["x"]
                assert information >= 1.0 / (3.0 * float(s) ** 2) and information == pytest.approx(1 / (3 * float(s) ** 2), rel=1e-12)
            if exact is not None:  # a scalar answer's interval: value ± (the logistic 95 % radius + Λ)
                radius = stats.logistic(scale=float(s)).ppf(0.975) + float(grid)
                accuracy = answer["accuracy"]
                assert accuracy["high"] == pytest.approx(answer["value"] + radius, rel=1e-9)
                assert accuracy["low"] == pytest.approx(max(answer["value"] - radius, 0.0), rel=1e-9, abs=1e-9)


def test_the_servers_group_by_answers_follow_the_logistic_law_and_cover(logistic: NoiseFamily, tmp_path) -> None:
    rows = _server_rows()
    exact = np.array([math.fsum(r["x"] for r in rows if r["region"] == key) for key in KEYS])
    errors: list[NDArray[np.float64]] = []
    covered: list[NDArray[np.bool_]] = []
    stated: set[tuple[Fraction, Fraction]] = set()
    with _lab(tmp_path, _logistic_policies()) as lab:
        for _ in range(75):  # 6000 cells
            response = lab.post("q", {"query": "sum(x) from toy group by region"})
            assert response.status_code == 200, response.text
            answer = response.json()
            assert answer["keys"] == list(KEYS)
            s, grid = _stated(answer)
            stated.add((s, grid))
            value = np.asarray(answer["value"], dtype=float)
            # the exact sums are multiples of 1/8, hence of Λ: the release minus them is the noise rounded to Λ
            assert np.all(np.rint(exact / float(grid)) * float(grid) == exact)
            errors.append(value - exact)
            accuracy = answer["accuracy"]
            covered.append((np.asarray(accuracy["low"]) <= exact) & (exact <= np.asarray(accuracy["high"])))
    ((s, grid),) = stated  # one calibration for every answer
    scale = float(s)
    noise = np.concatenate(errors)
    assert noise.size == 6000
    # (c) logistic noise of scale s, KS at α = 1e-6; rounding W to the grid moves its CDF by at most Λ/(8s) < 1e-4,
    # far below the KS statistic's resolution at 6000 draws
    assert float(grid) / (8 * scale) < 1e-4
    assert stats.kstest(noise, stats.logistic(scale=scale).cdf).pvalue > ALPHA
    # ... which rejects a 30 % wider scale and Laplace noise of the same scale (power)
    assert stats.kstest(noise, stats.logistic(scale=1.3 * scale).cdf).pvalue < ALPHA
    assert stats.kstest(noise, stats.laplace(scale=scale).cdf).pvalue < ALPHA
    # (d) the stated 95 % intervals (per cell) cover the exact sums at their level (binomial, 5 σ)
    coverage = float(np.mean(np.concatenate(covered)))
    assert abs(coverage - 0.95) < 5.0 * math.sqrt(0.95 * 0.05 / noise.size)


def test_the_hardened_toy_family_is_within_its_share_in_exact_rationals(logistic: NoiseFamily) -> None:
    from privnoise.dp import hardened_family_noise
    from privnoise.server.config import PolicySpec
    from privnoise.server.mechanisms import build_noise

    cases = [  # (Δ, ε, dim, coordinates moved)
        (1.0, Fraction(1, 2), 1, None),
        (10.0, Fraction(1, 4), 1, None),
        (20.0, Fraction(1, 4), 80, 2),
        (0.3, Fraction(1, 10), 5, 5),
        (1e-3, Fraction(7, 3), 1000, 1),
    ]
    for sensitivity, eps, dim, coordinates in cases:
        moved = dim if coordinates is None else coordinates
        h = hardened_family_noise(LOGISTIC, eps, sensitivity=sensitivity, dim=dim, coordinates=coordinates)
        s, grid = Fraction(h.mechanism.scale), Fraction(h.grid)
        assert (Fraction(sensitivity) + grid * moved) / s <= eps
        assert (Fraction(sensitivity) + grid * moved) / s > eps * (1 - Fraction(1, 10**12))
        # what the hardened release states of itself: the toy profile's (Δ + Λ)/s, within the share too
        assert h.privacy_profile().epsilon_fraction(sensitivity) == (Fraction(sensitivity) + grid) / s <= eps
        # the server's noise: the exact sum snapped (no rounding term), Δ/s within the share and no looser
        snapped = build_noise(PolicySpec("sum", "logistic", epsilon=eps, family=LOGISTIC), sensitivity=sensitivity,
                              dim=dim, coordinates=coordinates)
        s = Fraction(snapped.mechanism.scale)
        assert Fraction(sensitivity) / s <= eps
        assert Fraction(sensitivity) / s > eps * (1 - Fraction(1, 10**12))
        assert snapped.privacy_profile().epsilon_fraction(sensitivity) == Fraction(sensitivity) / s


def test_a_registered_family_of_currency_rho_answers_the_policys_epsilon_and_delta(tmp_path) -> None:
    import dataclasses

    from privnoise.dp.families import GAUSSIAN

    normal = register_family(dataclasses.replace(GAUSSIAN, name="normal"))
    eps, delta = Fraction(1, 2), Fraction(1, 10**6)
    try:
        with _lab(tmp_path, f'[policies.sum]\nmechanism = "normal"\nepsilon = "{eps}"\ndelta = "{delta}"') as lab:
            response = lab.post("q", {"query": "sum(x) from toy group by region"})
    finally:
        FAMILIES.pop(normal.name)
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["charged"]["epsilon"] == str(eps) and answer["charged"]["delta"] == str(delta)
    guarantee = answer["guarantee"]
    assert (Fraction(guarantee["epsilon_exact"]), Fraction(guarantee["delta_exact"])) == (eps, delta)
    (noise,) = guarantee["noise"]
    sigma, grid = noise["sigma"], noise["grid"]
    # the exact Gaussian profile (Balle & Wang 2018) at the ℓ2 sensitivity √2·10 of a replaced record, plus the
    # rounding of the two cells it moves (√2 Λ): δ(ε) within the policy's δ, and not by much
    def delta_at(sd: float) -> float:
        d = math.sqrt(2.0) * 10.0 + math.sqrt(2.0) * grid
        a, b = d / (2 * sd), float(eps) * sd / d
        return float(stats.norm.cdf(a - b) - math.exp(float(eps)) * stats.norm.cdf(-a - b))

    assert delta_at(sigma) <= float(delta) and delta_at(sigma * (1 - 1e-6)) > float(delta)


def test_the_configuration_names_registered_families_only(logistic: NoiseFamily, tmp_path) -> None:
    from privnoise.server.config import ConfigError

    def load(policy: str) -> Any:
        return _lab(tmp_path / str(len(list(tmp_path.iterdir()))), policy)

    with pytest.raises(ConfigError, match=r"mechanism`: must name .* one of .*'laplace', 'logistic'; got 'logistc'"):
        load('[policies.sum]\nmechanism = "logistc"\nepsilon = 1')
    with pytest.raises(ConfigError, match=r"delta`: the noise family 'logistic' is pure ε-DP"):
        load('[policies.sum]\nmechanism = "logistic"\nepsilon = 1\ndelta = 1e-6')
    with pytest.raises(ConfigError, match=r"epsilon`: is required"):
        load('[policies.sum]\nmechanism = "logistic"')
    with pytest.raises(ConfigError, match=r"partition_delta`: partition selection is offered with laplace"):
        load('[policies.sum]\nmechanism = "logistic"\nepsilon = 1\npartition_delta = 1e-6')
    FAMILIES.pop("logistic")  # no longer registered: refused, and no longer listed
    try:
        with pytest.raises(ConfigError, match=r"one of 'custom', .*'laplace'; got 'logistic'"):
            load('[policies.sum]\nmechanism = "logistic"\nepsilon = 1')
    finally:
        register_family(LOGISTIC)
