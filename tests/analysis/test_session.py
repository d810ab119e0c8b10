"""pn.Session: inputs, privacy units, missing values, budgets and accountants, every query kind, bad input."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import privnoise as pn
from privnoise.analysis.backend import AggregateRequest, Backend, InMemoryBackend, bound_contributions
from privnoise.analysis.table import Table
from privnoise.exceptions import BudgetExceededError, InvalidParameterError


def _meters(households: int = 60, rows: int = 8, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    unit = np.tile(np.arange(households), rows)  # a unit's rows are spread over the whole table
    region = np.array(["north", "south", "east"])[unit % 3]
    return {"household": unit, "region": region, "kwh": rng.uniform(0.0, 4.0, size=unit.size)}


# -- inputs ------------------------------------------------------------------------------------------------------
def _frames(data, tmp_path):
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    frame = pd.DataFrame(data)
    frame.to_csv(tmp_path / "m.csv", index=False)
    pq.write_table(pa.Table.from_pandas(frame), tmp_path / "m.parquet")
    return {
        "mapping": data,
        "pandas": frame,
        "polars": pl.DataFrame(data),
        "arrow": pa.Table.from_pandas(frame),
        "csv": str(tmp_path / "m.csv"),
        "parquet": tmp_path / "m.parquet",
    }


def test_every_input_gives_the_same_aggregates(tmp_path):
    data = _meters()
    request = AggregateRequest("moments", "kwh", (0.0, 4.0), "error", "household", 8, group="region",
                               keys=("north", "south", "east"), centre=2.0)
    results = {}
    for name, source in _frames(data, tmp_path).items():
        aggregates = InMemoryBackend(Table(source)).aggregate(request, np.random.default_rng(0))
        results[name] = (aggregates.count, aggregates.sum)
    reference = results["mapping"]
    for name, (count, total) in results.items():
        np.testing.assert_array_equal(count, reference[0], err_msg=name)
        np.testing.assert_allclose(total, reference[1], rtol=1e-9, err_msg=name)


def test_sessions_on_frames_and_files_release(tmp_path):
    for name, source in _frames(_meters(), tmp_path).items():
        s = pn.Session(source, privacy_unit="household", max_contributions=8, epsilon=2.0, delta=1e-6, rng=1)
        release = s.mean("kwh", bounds=(0, 4), epsilon=1.0)
        assert 0.0 <= release.value <= 4.0, name


def test_dask_objects_go_to_the_dask_backend_which_names_what_it_needs():
    class FakeDask:
        __module__ = "dask.dataframe.core"

    with pytest.raises(InvalidParameterError, match="must be a Dask DataFrame"):
        pn.Session(FakeDask(), epsilon=1.0)


# -- privacy units -----------------------------------------------------------------------------------------------
def test_bounding_keeps_k_rows_of_each_unit_wherever_they_are():
    units = np.array([3, 1, 3, 0, 3, 1, 3, 3, 2, 1, 1, 1])
    mask = bound_contributions(units, 2, np.random.default_rng(0))
    assert mask is not None
    kept = np.bincount(units[mask], minlength=4)
    np.testing.assert_array_equal(kept, [1, 2, 1, 2])
    assert bound_contributions(units, 5, np.random.default_rng(0)) is None  # nothing to drop


def test_bounding_chooses_rows_uniformly_at_random():
    units = np.zeros(10, dtype=np.int64)
    units[3::4] = 1
    generator = pn.default_rng(5)
    kept = np.zeros(units.size)
    draws = 20_000
    for _ in range(draws):
        kept += bound_contributions(units, 3, generator)
    unit0 = np.flatnonzero(units == 0)
    observed = kept[unit0]
    assert stats.chisquare(observed, np.full(unit0.size, observed.sum() / unit0.size)).pvalue > 1e-6
    assert observed.sum() == 3 * draws and np.all(kept[units == 1] == draws)


def test_sensitivities_scale_with_the_cap():
    scales = {}
    for k in (1, 4):
        data = _meters(rows=4)
        s = pn.Session(data, privacy_unit="household", max_contributions=k, epsilon=5.0, rng=2)
        scales[k] = {
            "count": s.count(epsilon=1.0).noise[0]["t"],
            "sum": s.sum("kwh", bounds=(0, 4), epsilon=1.0).noise[0]["b"],
            "cells": s.histogram("kwh", bins=[0, 1, 2, 4], epsilon=1.0).noise[0]["t"],
        }
    for name in scales[1]:
        assert scales[4][name] == pytest.approx(4 * scales[1][name], rel=1e-12), name


def test_max_contributions_needs_a_unit_column():
    with pytest.raises(InvalidParameterError, match="privacy_unit"):
        pn.Session(_meters(), max_contributions=3, epsilon=1.0)
    with pytest.raises(InvalidParameterError, match="privacy_unit"):
        pn.Session(_meters(), privacy_unit="nope", epsilon=1.0)


# -- missing values ----------------------------------------------------------------------------------------------
def test_missing_value_policies():
    data = _meters()
    data["kwh"][[0, 5, 7]] = np.nan
    strict = pn.Session(data, epsilon=1.0)
    with pytest.raises(InvalidParameterError, match="missing"):
        strict.mean("kwh", bounds=(0, 4), epsilon=0.5)
    assert strict.remaining().epsilon == 1.0  # refused before any charge
    request = AggregateRequest("moments", "kwh", (0.0, 4.0), "drop", None, 1)
    dropped = InMemoryBackend(Table(data)).aggregate(request, np.random.default_rng(0))
    imputed = InMemoryBackend(Table(data)).aggregate(
        AggregateRequest("moments", "kwh", (0.0, 4.0), 9.0, None, 1), np.random.default_rng(0)
    )
    assert dropped.count[0] == data["kwh"].size - 3
    assert imputed.count[0] == data["kwh"].size
    assert imputed.sum[0] == pytest.approx(dropped.sum[0] + 3 * 4.0)  # imputed 9 is clamped to the bound 4
    assert 0 <= pn.Session(data, epsilon=1.0, missing="drop", rng=1).mean("kwh", bounds=(0, 4), epsilon=1).value <= 4


# -- budgets ----------------------------------------------------------------------------------------------------
class _Spy(InMemoryBackend):
    calls = 0

    def aggregate(self, request, rng):
        type(self).calls += 1
        return super().aggregate(request, rng)


def test_budgets_are_exact_and_refused_before_any_aggregate():
    spy = _Spy(Table(_meters()))
    s = pn.Session(spy, privacy_unit="household", max_contributions=8, epsilon=1.0, rng=3)
    for _ in range(10):
        s.count(epsilon=0.1)
    assert s.remaining().exact_epsilon == 0  # ten charges of 0.1 spend exactly 1
    calls = _Spy.calls
    with pytest.raises(BudgetExceededError):
        s.count(epsilon=1e-9)
    assert _Spy.calls == calls  # the refused query read nothing
    assert isinstance(spy, Backend)


@pytest.mark.parametrize("accountant", ["pure", "approximate", "advanced", "pld", "rdp", "zcdp"])
def test_every_accountant_runs_every_query(accountant):
    delta = 0.0 if accountant == "pure" else 1e-5
    s = pn.Session(_meters(households=300), privacy_unit="household", max_contributions=8, epsilon=40.0, delta=delta,
                   accountant=accountant, rng=4)
    releases = [
        s.count(epsilon=1.0),
        s.sum("kwh", bounds=(0, 4), epsilon=1.0),
        s.mean("kwh", bounds=(0, 4), epsilon=1.0),
        s.variance("kwh", bounds=(0, 4), epsilon=1.0),
        s.histogram("kwh", bins=[0, 1, 2, 4], epsilon=1.0),
        s.histogram("region", categories=["north", "south"], epsilon=1.0),
        s.quantile("kwh", [0.25, 0.5], bounds=(0, 4), epsilon=1.0),
        s.top_k("region", candidates=["north", "south", "east", "west"], k=2, epsilon=1.0),
        s.group_by("region", keys=["north", "west"]).mean("kwh", bounds=(0, 4), epsilon=1.0),
    ]
    if accountant != "pure":
        releases.append(s.group_by("region").count(epsilon=2.0))
    for release in releases:
        d = release.as_dict()
        assert d["guarantee"]["notion"] in ("differential-privacy", "zero-concentrated-differential-privacy")
        assert ("confidence_interval" in d) or ("accuracy" in d)
    left = s.remaining()
    assert 0 < left.epsilon < 40.0
    assert s.spent().epsilon == pytest.approx(40.0 - left.epsilon)


def test_tight_accountants_spend_less_than_basic_composition():
    spent = {}
    for accountant in ("approximate", "advanced", "pld"):
        s = pn.Session(_meters(), epsilon=10.0, delta=1e-5, accountant=accountant, rng=5)
        for _ in range(50):
            s.count(epsilon=0.1)
        spent[accountant] = s.spent().epsilon
    assert spent["approximate"] == pytest.approx(5.0)
    assert spent["pld"] < spent["advanced"] < spent["approximate"]


def test_zcdp_session_prices_in_rho():
    s = pn.Session(_meters(), epsilon=3.0, delta=1e-6, accountant="zcdp", rng=6)
    s.mean("kwh", bounds=(0, 4), epsilon=0.2)  # ρ = 0.02
    s.count(rho=0.01)
    left = s.remaining()
    assert left.rho == pytest.approx(pn.dp.zcdp.epsilon_to_zcdp(3.0, 1e-6) - 0.03, rel=1e-9)
    with pytest.raises(InvalidParameterError, match="rho"):
        pn.Session(_meters(), epsilon=1.0).count(rho=0.1)


def test_partition_selection_needs_delta():
    s = pn.Session(_meters(), epsilon=1.0)
    with pytest.raises(InvalidParameterError, match="delta"):
        s.group_by("region")
    with pytest.raises(InvalidParameterError, match="δ"):
        s.group_by("region", delta=1e-6).count(epsilon=0.5)


# -- queries ----------------------------------------------------------------------------------------------------
def test_group_by_public_keys_releases_every_declared_key():
    s = pn.Session(_meters(), privacy_unit="household", max_contributions=8, epsilon=100.0, rng=7)
    counts = s.group_by("region", keys=["north", "south", "mars"]).count(epsilon=50.0)
    assert counts.keys == ["north", "south", "mars"]
    assert counts.value[2] <= 2.0 and counts.value[0] > 100.0


def test_group_by_unknown_keys_selects_large_groups_only():
    data = _meters(households=600)
    data["region"][:8] = "tiny"  # one small group (several units, a few rows)
    s = pn.Session(data, privacy_unit="household", max_contributions=8, epsilon=20.0, delta=1e-6, rng=8)
    means = s.group_by("region").mean("kwh", bounds=(0, 4), epsilon=10.0)
    assert set(means.keys) == {"north", "south", "east"}
    assert means.query["threshold"] > 8
    low, high = means.confidence_interval(0.95)
    assert np.all(low <= means.value) and np.all(means.value <= high)


def test_values_and_flags():
    s = pn.Session(_meters(), privacy_unit="household", max_contributions=8, epsilon=1e4, rng=9)
    count = s.count(epsilon=1e3)
    assert isinstance(count.value, int) and count.value == 480
    top = s.top_k("region", candidates=["north", "south", "east", "west"], k=3, epsilon=1e3)
    assert top.value[-1] != "west"
    hist = s.histogram("kwh", bins=[0, 2, 4], epsilon=1e3)
    assert hist.value.sum() == pytest.approx(480, abs=2)
    median = s.quantile("kwh", 0.5, bounds=(0, 4), epsilon=1e3)
    assert abs(median.value - np.median(_meters()["kwh"])) < 0.1
    with pytest.raises(InvalidParameterError, match="interval"):
        median.confidence_interval()
    assert median.accuracy(0.05) > 0
    tiny = pn.Session({"x": np.array([1.0, 2.0])}, epsilon=0.01, rng=10).mean("x", bounds=(0, 4), epsilon=0.01)
    assert 0.0 <= tiny.value <= 4.0
    assert tiny.clamped or tiny.confidence_interval()[1] - tiny.confidence_interval()[0] > 1.0


def test_bad_parameters_are_refused_before_any_charge():
    s = pn.Session(_meters(), epsilon=1.0)
    for call, match in (
        (lambda: s.mean("kwh", bounds=(4, 0), epsilon=0.1), "bounds"),
        (lambda: s.mean("kwh", bounds=(0, float("inf")), epsilon=0.1), "bounds"),
        (lambda: s.mean("nope", bounds=(0, 4), epsilon=0.1), "column"),
        (lambda: s.mean("kwh", bounds=(0, 4), epsilon=-1), "epsilon"),
        (lambda: s.mean("kwh", bounds=(0, 4)), "epsilon"),
        (lambda: s.quantile("kwh", 1.5, bounds=(0, 4), epsilon=0.1), "q"),
        (lambda: s.histogram("kwh", bins=[0, 0, 1], epsilon=0.1), "bins"),
        (lambda: s.histogram("kwh", epsilon=0.1), "bins"),
        (lambda: s.top_k("region", candidates=["a"], k=2, epsilon=0.1), "k"),
        (lambda: s.top_k("region", candidates=["a", "a"], epsilon=0.1), "distinct"),
        (lambda: s.mean("region", bounds=(0, 4), epsilon=0.1), "numbers"),
    ):
        with pytest.raises(InvalidParameterError, match=match):
            call()
    assert s.remaining().exact_epsilon == 1
    with pytest.raises(InvalidParameterError, match="accountant"):
        pn.Session(_meters(), epsilon=1.0, accountant="renyi")
    with pytest.raises(InvalidParameterError, match="delta"):
        pn.Session(_meters(), epsilon=1.0, accountant="zcdp")
    with pytest.raises(InvalidParameterError, match="missing"):
        pn.Session(_meters(), epsilon=1.0, missing="ignore")
    with pytest.raises(InvalidParameterError, match="data"):
        pn.Session(42, epsilon=1.0)


def test_estimates_serialise():
    s = pn.Session(_meters(), epsilon=10.0, rng=11)
    for release in (s.mean("kwh", bounds=(0, 4), epsilon=1.0), s.histogram("kwh", bins=[0, 2, 4], epsilon=1.0),
                    s.quantile("kwh", [0.5], bounds=(0, 4), epsilon=1.0)):
        import json

        json.dumps(release.as_dict())
        assert release.summary()
    frame = s.histogram("kwh", bins=[0, 2, 4], epsilon=1.0).to_frame()
    assert list(frame.columns) == ["key", "value", "low", "high"]
    assert Fraction(str(s.remaining().exact_epsilon)) == s.remaining().exact_epsilon


def test_sums_and_means_report_the_fisher_information_of_a_row():
    s = pn.Session(_meters(), epsilon=10.0, rng=12)
    total = s.sum("kwh", bounds=(0, 4), epsilon=1.0)
    b = total.noise[0]["b"]
    assert total.fisher_information == pytest.approx(1.0 / b**2)  # Laplace location information
    mean = s.mean("kwh", bounds=(0, 4), epsilon=1.0)
    assert mean.fisher_information == pytest.approx(1.0 / (2.0 / 0.5) ** 2)
    assert mean.as_dict(fisher=True)["row_error_floor"] == pytest.approx(16.0)
    assert "row_error_floor" not in mean.as_dict()  # a DP answer states it only when asked
    assert s.count(epsilon=1.0).fisher_information is None  # a count does not depend on any value
    z = pn.Session(_meters(), epsilon=3.0, delta=1e-6, accountant="zcdp", rng=13)
    sigma = z.sum("kwh", bounds=(0, 4), rho=0.02).noise[0]["sigma"]
    assert z.sum("kwh", bounds=(0, 4), rho=0.02).fisher_information == pytest.approx(1.0 / sigma**2)
