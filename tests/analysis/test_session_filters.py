"""Session.where: the rows a filtered view aggregates (every operator, numbers and text, missing values) against
pandas; filters applied before contribution bounding; the charge and the noise of a filtered query equal the
unfiltered one's; views share the session's budget and chain; every bad condition refused before any aggregate or
charge, with its message; the Dask backend aggregates filtered rows as the in-memory one does."""

from __future__ import annotations

import operator

import numpy as np
import pandas as pd
import pytest

import privnoise as pn
from privnoise.analysis.backend import AggregateRequest, InMemoryBackend
from privnoise.analysis.table import Table
from privnoise.core.conditions import Condition, parse_conditions
from privnoise.exceptions import InvalidParameterError

OPERATORS = {"=": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
             ">=": operator.ge}


def _frame(units: int = 40, rows: int = 6, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    unit = np.tile(np.arange(units), rows)
    kwh = np.round(rng.uniform(-2.0, 14.0, unit.size), 1)
    kwh[rng.random(unit.size) < 0.1] = np.nan
    region = rng.choice(np.array(["east", "north", "south", "north-west"], dtype=object), unit.size)
    region[rng.random(unit.size) < 0.1] = None
    return pd.DataFrame({"household": unit, "region": region, "kwh": kwh, "hour": rng.integers(0, 24, unit.size)})


def _matching(frame: pd.DataFrame, column: str, op: str, value: object) -> pd.Series:
    """The reference rule: the comparison, and a missing value never matches."""
    return frame[column].notna() & OPERATORS[op](frame[column], value).fillna(False).astype(bool)


def _moments(frame: pd.DataFrame, bounds: tuple[float, float], centre: float = 0.0) -> tuple[float, float, float]:
    x = frame["kwh"].dropna().clip(*bounds) - centre
    return float(len(x)), float(x.sum()), float((x * x).sum())


CASES = [(op, column, value) for op in OPERATORS for column, value in (("kwh", 5.3), ("hour", 12), ("region", "north"))]


@pytest.mark.parametrize(("op", "column", "value"), CASES)
def test_filtered_aggregates_are_those_of_the_matching_rows(op: str, column: str, value: object) -> None:
    frame = _frame()
    literal = f"'{value}'" if isinstance(value, str) else str(value)
    request = AggregateRequest("moments", "kwh", (0.0, 10.0), "drop", "household", 6, centre=5.0,
                               where=parse_conditions(f"{column} {op} {literal}"))
    found = InMemoryBackend(Table(frame)).aggregate(request, np.random.default_rng(0))
    expected = _moments(frame[_matching(frame, column, op, value)], (0.0, 10.0), 5.0)
    np.testing.assert_allclose([found.count[0], found.sum[0], found.sum_squares[0]], expected, rtol=1e-12, atol=1e-9)


def test_text_compares_by_code_point_and_missing_text_never_matches() -> None:
    frame = _frame()
    table = Table(frame)
    for text, expected in (
        ("region < 'north'", frame["region"].isin(["east"])),
        ("region >= 'north'", frame["region"].isin(["north", "north-west", "south"])),
        ("region != 'east'", frame["region"].isin(["north", "north-west", "south"])),  # None excluded
    ):
        request = AggregateRequest("moments", None, where=parse_conditions(text))
        assert InMemoryBackend(table).aggregate(request, np.random.default_rng(0)).count[0] == expected.sum(), text


def test_a_missing_number_never_matches_even_not_equal() -> None:
    frame = _frame()
    request = AggregateRequest("moments", None, where=parse_conditions("kwh != 5.3"))
    count = InMemoryBackend(Table(frame)).aggregate(request, np.random.default_rng(0)).count[0]
    assert count == (frame["kwh"].notna() & (frame["kwh"] != 5.3)).sum() < len(frame)


def test_conjunctions_chain_and_keyword_equalities() -> None:
    frame = _frame()
    s = pn.Session(frame, privacy_unit="household", max_contributions=6, epsilon=1e10, missing="drop", rng=3)
    chained = s.where("region = 'north'").where("kwh >= 2 and hour < 20")
    assert chained.conditions == parse_conditions("region = 'north' and kwh >= 2 and hour < 20")
    assert s.where("kwh >= 2", region="north").conditions == (Condition("kwh", ">=", 2.0),
                                                               Condition("region", "=", "north"))
    assert s.conditions == ()  # the session itself stays unfiltered
    exact = frame[(frame["region"] == "north") & (frame["kwh"] >= 2) & (frame["hour"] < 20)]
    release = chained.sum("kwh", bounds=(0, 10), epsilon=1e9)
    assert release.value == pytest.approx(exact["kwh"].clip(0, 10).sum(), abs=1e-3)
    count = chained.count("kwh", epsilon=1e9)
    assert count.value == len(exact)
    assert count.query["where"] == "region = 'north' and kwh >= 2 and hour < 20"
    assert "where region = 'north' and kwh >= 2 and hour < 20" in count.summary()


def test_every_query_kind_of_a_view_uses_the_matching_rows_only() -> None:
    frame = _frame()
    s = pn.Session(frame, privacy_unit="household", max_contributions=6, epsilon=1e10, missing="drop", rng=4)
    view = s.where("region = 'north'")
    rows = frame[frame["region"] == "north"]
    x = rows["kwh"].dropna().clip(0, 10)
    assert view.mean("kwh", bounds=(0, 10), epsilon=1e9).value == pytest.approx(x.mean(), abs=1e-4)
    assert view.variance("kwh", bounds=(0, 10), epsilon=1e9).value == pytest.approx(x.var(ddof=0), abs=1e-3)
    hist = view.histogram("region", categories=["north", "east"], epsilon=1e9)
    np.testing.assert_allclose(hist.value, [len(rows), 0.0], atol=0.5)
    groups = view.group_by("hour", keys=[3, 7]).count(epsilon=1e9)
    np.testing.assert_allclose(groups.value, [(rows["hour"] == 3).sum(), (rows["hour"] == 7).sum()], atol=0.5)
    assert view.top_k("region", candidates=["east", "north"], epsilon=1e9).value == ["north"]


# -- bounding after filtering --------------------------------------------------------------------------------------
def test_a_unit_keeps_k_of_its_matching_rows_whatever_its_other_rows() -> None:
    # unit 0: 200 rows outside the filter and 3 inside; bounding after the filter keeps all 3 (k = 3), bounding
    # before it would keep a matching row with probability about 3·3/203 each.
    unit = np.r_[np.zeros(203, dtype=int), np.arange(1, 11)]
    kwh = np.r_[np.full(200, 1.0), np.full(3, 8.0), np.full(10, 8.0)]
    frame = pd.DataFrame({"household": unit, "kwh": kwh})
    for seed in range(5):
        request = AggregateRequest("moments", "kwh", (0.0, 10.0), "error", "household", 3,
                                   where=parse_conditions("kwh > 5"))
        found = InMemoryBackend(Table(frame)).aggregate(request, np.random.default_rng(seed))
        assert found.count[0] == 13.0 and found.sum[0] == 13 * 8.0
    s = pn.Session(frame, privacy_unit="household", max_contributions=3, epsilon=1e10, rng=5)
    assert s.where("kwh > 5").count(epsilon=1e9).value == 13


def test_at_most_k_matching_rows_of_a_unit_are_kept() -> None:
    unit = np.r_[np.zeros(10, dtype=int), np.ones(10, dtype=int)]
    frame = pd.DataFrame({"household": unit, "kwh": np.r_[np.full(10, 8.0), np.full(10, 1.0)]})
    request = AggregateRequest("moments", "kwh", (0.0, 10.0), "error", "household", 4, where=parse_conditions("kwh > 5"))
    assert InMemoryBackend(Table(frame)).aggregate(request, np.random.default_rng(0)).count[0] == 4.0


# -- budget -------------------------------------------------------------------------------------------------------
def test_a_filtered_query_is_charged_and_noised_as_the_unfiltered_one() -> None:
    frame = _frame()
    for accountant in ("pure", "approximate", "zcdp"):
        kwargs = {"privacy_unit": "household", "max_contributions": 6, "epsilon": 20.0, "missing": "drop", "rng": 6,
                  "delta": 0.0 if accountant == "pure" else 1e-6, "accountant": accountant}
        plain, filtered = pn.Session(frame, **kwargs), pn.Session(frame, **kwargs)
        view = filtered.where("region = 'north' and kwh < 9")
        for session in (plain, view):
            session.mean("kwh", bounds=(0, 10), epsilon=0.5)
            session.count(epsilon=0.25)
            session.group_by("region", keys=["north", "east"]).sum("kwh", bounds=(0, 10), epsilon=0.5)
        assert filtered.remaining() == plain.remaining(), accountant
        assert filtered.spent().as_dict() == plain.spent().as_dict(), accountant
        a = plain.histogram("kwh", bins=[0, 5, 10], epsilon=0.25)
        b = view.histogram("kwh", bins=[0, 5, 10], epsilon=0.25)
        assert a.noise == b.noise and a.guarantee.as_dict() == b.guarantee.as_dict()


def test_a_view_spends_the_sessions_budget() -> None:
    s = pn.Session(_frame(), epsilon=1.0, missing="drop", rng=7)
    s.where(region="north").count(epsilon=0.75)
    assert s.remaining().exact_epsilon == pytest.approx(0.25)
    with pytest.raises(pn.BudgetExceededError):
        s.where(region="east").count(epsilon=0.5)


# -- missing values -------------------------------------------------------------------------------------------------
def test_the_error_policy_looks_at_the_matching_rows_only() -> None:
    frame = pd.DataFrame({"region": ["north", "north", "south"], "kwh": [1.0, 2.0, np.nan]})
    s = pn.Session(frame, epsilon=10.0, rng=8)
    assert s.where(region="north").sum("kwh", bounds=(0, 5), epsilon=1e9 / 1e8).query["where"] == "region = 'north'"
    left = s.remaining()
    with pytest.raises(InvalidParameterError, match="missing values.*missing='error'"):
        s.where(region="south").sum("kwh", bounds=(0, 5), epsilon=1.0)
    assert s.remaining() == left


# -- bad input ------------------------------------------------------------------------------------------------------
class _Spy(InMemoryBackend):
    calls = 0

    def aggregate(self, request, rng):
        _Spy.calls += 1
        return super().aggregate(request, rng)


BAD = [
    (("nope = 3",), {}, r"`where` of `Session` must be a column of the data .*got 'nope'"),
    (("region = 3",), {}, r"`conditions` of `Session.where`: column 'region' is text; compare it with a text literal"),
    (("kwh = 'high'",), {}, r"`conditions` of `Session.where`: column 'kwh' is number; compare it with a number "
                            r"literal"),
    (("flag = 1",), {}, r"`conditions` of `Session.where`: column 'flag' holds booleans; conditions compare numbers "
                        r"or text \(operators = != < <= > >=, IN, LIKE on text"),
    (("kwh >= ",), {}, r"`conditions` of `Session.where`: the conditions 'kwh >= ' end too early"),
    (("kwh >= 3 or",), {}, r"`conditions` of `Session.where`: unexpected 'or' at position 9.* As a SQL condition"),
    (("kwh ~ 3",), {}, r"`conditions` of `Session.where`: unexpected character at position 4"),
    (("kwh < 1e999",), {}, r"`conditions` of `Session.where`: number '1e999' is not finite"),
    (("region = 'a\x01'",), {}, r"`conditions` of `Session.where`: string literals must not contain control"),
    (("region = '" + "x" * 201 + "'",), {}, r"`conditions` of `Session.where`: string literals are limited to 200"),
    (("  ",), {}, r"`conditions` of `Session.where`: conditions are a non-empty string"),
    ((3,), {}, r"`conditions` of `Session.where`: conditions are a string .*got int"),
    ((), {}, r"`Session.where` needs conditions"),
    ((), {"flag": True}, r"`conditions` of `Session.where`: a condition's value must be a number or a string"),
    ((), {"region": ["north"]}, r"`conditions` of `Session.where`: a condition's value must be a number or a string"),
    ((), {"kwh": float("nan")}, r"`conditions` of `Session.where`: a condition's value must be finite"),
    ((), {"nope": 1}, r"`where` of `Session` must be a column of the data"),
]


@pytest.mark.parametrize(("args", "kwargs", "message"), BAD)
def test_bad_conditions_are_refused_before_any_aggregate_or_charge(args, kwargs, message) -> None:
    frame = _frame()
    frame["flag"] = frame["hour"] > 3
    s = pn.Session(_Spy(Table(frame)), epsilon=1.0, missing="drop")
    before, calls = s.remaining(), _Spy.calls
    with pytest.raises(InvalidParameterError, match=message):
        s.where(*args, **kwargs)
    assert s.remaining() == before and _Spy.calls == calls


def test_column_kinds_of_every_input() -> None:
    pa = pytest.importorskip("pyarrow")
    pl = pytest.importorskip("polars")
    frame = pd.DataFrame({"n": [1, 2, None], "t": ["a", None, "b"], "b": [True, False, True],
                          "d": pd.to_datetime(["2024-01-01"] * 3), "m": [1, "a", 2.0]})
    expected = {"n": "number", "t": "text", "b": "booleans"}
    for source in (frame, pa.Table.from_pandas(frame[["n", "t", "b"]]), pl.from_pandas(frame[["n", "t", "b"]]),
                   {"n": np.array([1.0, np.nan, 2.0]), "t": np.array(["a", "b", "c"]), "b": np.array([True] * 3)}):
        table = Table(source)
        assert {name: table.kind(name) for name in expected} == expected
    assert Table(frame).kind("d").startswith("values of type datetime64")
    assert Table(frame).kind("m") == "a mix of types"
    with pytest.raises(InvalidParameterError, match="column 'm' holds a mix of types"):
        pn.Session(frame, epsilon=1.0).where("m = 1")


def test_a_backend_without_filters_refuses_them() -> None:
    from privnoise.analysis.backend import Backend

    class Minimal(Backend):
        columns = ["x"]

        def check_column(self, name, role):
            return name

        def count_missing(self, column):
            return 0

        def aggregate(self, request, rng):  # pragma: no cover - never reached
            raise AssertionError

    s = pn.Session(Minimal(), epsilon=1.0)
    with pytest.raises(InvalidParameterError, match="the backend Minimal does not filter rows"):
        s.where("x = 1")
    with pytest.raises(InvalidParameterError, match="does not filter rows"):
        Minimal().count_missing_where("x", parse_conditions("x = 1"))
    assert Minimal().count_missing_where("x", ()) == 0


# -- Dask ---------------------------------------------------------------------------------------------------------
def test_the_dask_backend_filters_as_the_in_memory_one() -> None:
    dask = pytest.importorskip("dask")
    dd = pytest.importorskip("dask.dataframe")
    from privnoise.scale import DaskBackend

    frame = _frame(units=60, rows=8, seed=1)
    with dask.config.set(scheduler="sync"):
        distributed = DaskBackend(dd.from_pandas(frame, npartitions=4))
        memory = InMemoryBackend(Table(frame))
        for text in ("region = 'north' and kwh >= 3", "kwh != 5.3", "region < 'north'", "hour >= 12"):
            where = parse_conditions(text)
            assert distributed.count_missing_where("kwh", where) == memory.count_missing_where("kwh", where)
            for request in (
                AggregateRequest("moments", "kwh", (0.0, 10.0), "drop", "household", 8, "region", None, 5.0,
                                 where=where),
                AggregateRequest("histogram", "kwh", (0.0, 10.0), 2.0, "household", 8, edges=(0.0, 4.0, 10.0),
                                 where=where),
                AggregateRequest("categories", "region", categories=("north", "east"), where=where),
            ):
                a = distributed.aggregate(request, np.random.default_rng(0))
                b = memory.aggregate(request, np.random.default_rng(0))
                assert dict(zip(a.keys or [None], a.count, strict=True)) == dict(zip(b.keys or [None], b.count,
                                                                                     strict=True))
                np.testing.assert_allclose(a.sum.sum(), b.sum.sum(), rtol=1e-12, atol=1e-9)
                np.testing.assert_allclose(a.cells.sum(axis=0), b.cells.sum(axis=0))
        assert distributed.column_kind("region") == "text" and distributed.column_kind("kwh") == "number"
        s = pn.Session(dd.from_pandas(frame, npartitions=4), privacy_unit="household", max_contributions=8,
                       epsilon=1e10, missing="drop", rng=9)
        count = s.where("region = 'north' and kwh >= 3").count(epsilon=1e9)
        assert count.value == ((frame["region"] == "north") & (frame["kwh"] >= 3)).sum()
        with pytest.raises(InvalidParameterError, match="column 'region' is text"):
            s.where(region=1)
