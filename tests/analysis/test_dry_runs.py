"""Dry runs: every query of a Session (its group-by and Session.sql included) prices itself and states its accuracy
from public information only — no aggregate computed, no value read (a backend spy counts), nothing charged — and
what it says agrees with the release made afterwards: the same charge, the same noise, the same radius where the
accuracy needs no data, and for means and variances a formula in n that covers at least its level."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest

import privnoise as pn
from privnoise.analysis import DryRun, SchemaBackend, StatementDryRun
from privnoise.analysis.backend import InMemoryBackend
from privnoise.analysis.table import Table
from privnoise.exceptions import InvalidParameterError


class _Spy(InMemoryBackend):
    """Counts every call that reads the data."""

    reads = 0

    def aggregate(self, request, rng):
        _Spy.reads += 1
        return super().aggregate(request, rng)

    def count_missing(self, column):
        _Spy.reads += 1
        return super().count_missing(column)

    def count_missing_where(self, column, where):
        _Spy.reads += 1
        return super().count_missing_where(column, where)


def _data(units: int = 80, rows: int = 5, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    unit = np.tile(np.arange(units), rows)
    return {"household": unit, "region": np.array(["north", "south", "east"])[unit % 3],
            "kwh": rng.uniform(0.0, 4.0, unit.size)}


def _session(data=None, **options):
    settings = {"privacy_unit": "household", "max_contributions": 5, "epsilon": 10.0, "delta": 1e-6, "rng": 3}
    return pn.Session(_Spy(Table(data if data is not None else _data())), **(settings | options))


#: Every query of a session, as a function of (session, dry_run).
QUERIES = {
    "count": lambda s, d: s.count(epsilon=0.5, dry_run=d),
    "count column": lambda s, d: s.count("kwh", epsilon=0.5, dry_run=d),
    "sum": lambda s, d: s.sum("kwh", bounds=(-4, 4), epsilon=0.5, dry_run=d),
    "mean": lambda s, d: s.mean("kwh", bounds=(0, 4), epsilon=0.5, dry_run=d),
    "variance": lambda s, d: s.variance("kwh", bounds=(0, 4), epsilon=0.5, dry_run=d),
    "histogram bins": lambda s, d: s.histogram("kwh", bins=[0, 1, 2, 4], epsilon=0.5, dry_run=d),
    "histogram categories": lambda s, d: s.histogram("region", categories=["north", "south"], epsilon=0.5,
                                                     dry_run=d),
    "quantile": lambda s, d: s.quantile("kwh", [0.25, 0.5], bounds=(0, 4), epsilon=0.5, dry_run=d),
    "median": lambda s, d: s.median("kwh", bounds=(0, 4), epsilon=0.5, dry_run=d),
    "percentile": lambda s, d: s.percentile("kwh", 90, bounds=(0, 4), epsilon=0.5, dry_run=d),
    "top_k": lambda s, d: s.top_k("region", candidates=["north", "south", "east"], k=2, epsilon=0.5, dry_run=d),
    "count_distinct": lambda s, d: s.count_distinct(epsilon=0.5, dry_run=d),
    "clamped_count": lambda s, d: s.clamped_count("kwh", bounds=(1, 3), epsilon=0.5, dry_run=d),
    "group count": lambda s, d: s.group_by("region", keys=["east", "north"]).count(epsilon=0.5, dry_run=d),
    "group sum": lambda s, d: s.group_by("region").sum("kwh", bounds=(0, 4), epsilon=0.5, dry_run=d),
    "group mean": lambda s, d: s.group_by(["region"]).mean("kwh", bounds=(0, 4), epsilon=0.5, dry_run=d),
    "filtered mean": lambda s, d: s.where("region = 'north'").mean("kwh", bounds=(0, 4), epsilon=0.5, dry_run=d),
}


@pytest.mark.parametrize("name", list(QUERIES))
@pytest.mark.parametrize("accountant", ["approximate", "zcdp"])
def test_a_dry_run_reads_nothing_charges_nothing_and_prices_the_release(name: str, accountant: str) -> None:
    s = _session(accountant=accountant)
    before, reads = s.remaining(), _Spy.reads
    plan = QUERIES[name](s, True)
    assert isinstance(plan, DryRun) and plan.fits
    assert _Spy.reads == reads and s.remaining() == before  # touched no data, charged nothing
    json.dumps(plan.as_dict())
    assert "nothing charged, no data read" in plan.summary()
    release = QUERIES[name](s, False)
    assert _Spy.reads > reads
    # the same noise, the same guarantee and the same charge as the release
    assert plan.noise == release.noise and plan.guarantee.as_dict() == release.guarantee.as_dict()
    assert plan.remaining_after == s.remaining()
    assert plan.query == release.query


@pytest.mark.parametrize("name", ["count", "count column", "sum", "histogram bins", "group count", "quantile",
                                  "median", "top_k", "count_distinct", "clamped_count"])
def test_where_no_data_is_needed_the_dry_run_states_the_release_s_own_accuracy(name: str) -> None:
    s = _session(epsilon=100.0)
    plan, release = QUERIES[name](s, True), QUERIES[name](s, False)
    for alpha in (0.01, 0.05, 0.2):
        if release.interval is None:  # a rank radius: the same, from the same public parameters
            assert np.allclose(plan.accuracy(alpha), release.accuracy(alpha))
            continue
        low, high = release.confidence_interval(1.0 - alpha)  # noisy ± r (every count here is far from 0)
        assert np.allclose((np.asarray(high) - np.asarray(low)) / 2.0, plan.accuracy(alpha))


def test_the_sum_radius_is_the_half_width_of_the_released_interval() -> None:
    s = _session(epsilon=100.0)
    plan = s.sum("kwh", bounds=(-4, 4), epsilon=0.5, dry_run=True)
    release = s.sum("kwh", bounds=(-4, 4), epsilon=0.5)
    low, high = release.confidence_interval(0.9)
    assert plan.accuracy(0.1) == pytest.approx((high - low) / 2.0)
    assert plan.formula(0.9) == f"±{plan.accuracy(0.1):.6g} in the unit of kwh"


@pytest.mark.parametrize("kind", ["mean", "variance"])
def test_the_formula_in_n_covers_at_least_its_level(kind: str) -> None:
    # the bound holds with probability ≥ 1 − α over the noise, whatever the data: checked over many releases
    data = _data(units=60, rows=5, seed=1)
    x = np.clip(data["kwh"], 0, 4)
    truth = x.mean() if kind == "mean" else x.var()
    s = pn.Session(data, privacy_unit="household", max_contributions=5, epsilon=1e6, rng=4)
    plan = getattr(s, kind)("kwh", bounds=(0, 4), epsilon=2.0, dry_run=True)
    with pytest.raises(InvalidParameterError, match="depends on n, the number of rows used.*formula is ±"):
        plan.accuracy(0.1)
    radius = plan.accuracy(0.1, n=x.size)
    assert 0 < radius <= 4.0
    errors = np.array([abs(getattr(s, kind)("kwh", bounds=(0, 4), epsilon=2.0).value - truth) for _ in range(300)])
    assert np.mean(errors <= radius) >= 0.9
    # it shrinks as n grows (n = the rows used: a formula in n)
    assert plan.accuracy(0.1, n=10 * x.size) < radius
    assert plan.accuracy(0.1, n=1.0) == 4.0  # at most the range: the bounds' width (mean), h² (variance)


def test_a_dry_run_says_when_the_budget_would_refuse_and_still_charges_nothing() -> None:
    s = _session(epsilon=1.0, delta=0.0, accountant="pure")
    s.count(epsilon=0.75)
    plan = s.mean("kwh", bounds=(0, 4), epsilon=0.5, dry_run=True)
    assert not plan.fits and plan.remaining_after is None
    assert "asks ε = 0.5, δ = 0; spent so far ε = 0.75, δ = 0, remaining ε = 0.25" in plan.refusal
    assert "would be refused" in plan.summary() and plan.as_dict()["refusal"] == plan.refusal
    assert s.remaining().exact_epsilon == Fraction(1, 4)
    assert plan.cost == {"epsilon": 0.5, "delta": 0.0, "exact": {"epsilon": "1/2", "delta": "0"}}


def test_a_dry_run_skips_the_missing_value_check_which_reads_values() -> None:
    data = _data()
    data["kwh"] = data["kwh"].copy()
    data["kwh"][3] = np.nan
    s = _session(data)  # missing="error"
    assert s.mean("kwh", bounds=(0, 4), epsilon=0.5, dry_run=True).fits
    with pytest.raises(InvalidParameterError, match="missing values"):
        s.mean("kwh", bounds=(0, 4), epsilon=0.5)


def test_a_session_over_the_columns_names_only_dry_runs() -> None:
    s = pn.Session(SchemaBackend({"kwh": "number", "region": "text", "household": "text"}), privacy_unit="household",
                   max_contributions=5, epsilon=1.0)
    assert s.where("region = 'north'").sum("kwh", bounds=(0, 4), epsilon=0.5, dry_run=True).fits
    with pytest.raises(InvalidParameterError, match="dry runs only"):
        s.sum("kwh", bounds=(0, 4), epsilon=0.5)
    with pytest.raises(InvalidParameterError, match="must be a column of the data"):
        s.sum("nope", bounds=(0, 4), epsilon=0.5, dry_run=True)


def test_a_statement_s_dry_run_prices_it_whole_reads_nothing_and_matches_its_charge() -> None:
    s = _session()
    called = []
    before, reads = s.remaining(), _Spy.reads
    statement = "SELECT region, AVG(kwh) AS m, COUNT(*) AS n FROM t WHERE kwh > 1 GROUP BY region"
    plan = s.sql(statement, epsilon=1.0, bounds={"kwh": (0, 4)}, dry_run=True, before_release=lambda: called.append(1))
    assert isinstance(plan, StatementDryRun) and plan.fits and not called
    assert _Spy.reads == reads and s.remaining() == before
    assert set(plan.releases) == {"AVG(kwh)", "COUNT(*)"}
    assert plan.cost["epsilon"] == 1.0 and plan.cost["delta"] == pytest.approx(1e-7)
    assert "AVG(kwh): 95% accuracy ±" in plan.summary() and "/(n − " in plan.summary()
    json.dumps(plan.as_dict())
    declared = s.sql(statement, epsilon=1.0, bounds={"kwh": (0, 4)}, keys=["east", "north", "south"], dry_run=True)
    assert declared.cost["delta"] == 0.0 and _Spy.reads == reads
    s.sql(statement, epsilon=1.0, bounds={"kwh": (0, 4)}, keys=["east", "north", "south"])
    assert s.remaining() == declared.remaining_after
    plain = s.sql("SELECT SUM(kwh), MEDIAN(kwh) FROM t", epsilon=1.0, bounds={"kwh": (0, 4)}, dry_run=True)
    assert set(plain.releases) == {"SUM(kwh)", "MEDIAN(kwh)"} and plain.cost["delta"] == 0.0


def test_a_statement_s_dry_run_refused_by_the_budget_says_so() -> None:
    s = _session(epsilon=1.0)
    plan = s.sql("SELECT COUNT(*), SUM(kwh) FROM t", epsilon=2.0, bounds={"kwh": (0, 4)}, dry_run=True)
    assert not plan.fits and "refused" in plan.refusal and "refused" in plan.summary()
    assert s.remaining().epsilon == 1.0
