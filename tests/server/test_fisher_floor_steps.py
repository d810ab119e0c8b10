"""SECURITY.md requirement 20: a Fisher floor holds against every sequence of answers.

A count with a filter on a floored column, histogram bins over it, its quantiles and group keys on it are step
functions of a record's value: their Fisher information is unbounded, so the Cramér–Rao floor cannot bound what
they reveal (:mod:`privnoise.server.steps`). The tests:

1. every such construct on a floored column, in the text and the JSON form, is refused with a message saying
   why, and nothing is charged (ledger, querier budget and dataset budget unchanged);
2. the audit's attack — bisecting one record's value through ``count() where id = … and kwh >= m``, through
   histogram bins, and reading it through quantiles — is refused at its first query; with the owner's
   ``step_queries = "allow"`` the same attack pins three records below the floor's √0.01 = 0.1 while the Fisher
   information counted stays 0 (the power check: the test sees the leak when the protection is lifted), and a
   querier with a floor of its own is still refused there;
3. differentiable answers on a floored column, and step constructs on columns without a floor, are answered and
   charged as before (the Fisher information charged is slope²·𝓘 of the noise actually drawn);
4. owner.toml validation of ``step_queries``.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("lark")

from privnoise.server.config import ConfigError, load_config  # noqa: E402
from privnoise.server.querylang import KINDS, QuerySpec, parse_query  # noqa: E402
from privnoise.server.steps import DIFFERENTIABLE_KINDS, StepQueryRefused, step_constructs  # noqa: E402
from tests.server._harness import _fresh_postgres_database  # noqa: E402
from tests.server._lab import DatasetDef, Lab, NoiseSpy, reference_components, released_information  # noqa: E402

FLOOR = 0.01  # √0.01 = 0.1: no record's kwh may be estimated with an RMS error below 0.1
BOUNDS = {"kwh": (0.0, 60.0), "temp": (0.0, 40.0)}
IDS = tuple(f"h{i:02d}" for i in range(12))
ROWS = [
    {"kwh": 3.0 + 4.7317 * i + 0.0123 * i * i, "temp": 10.0 + (i * 3.7) % 25.0, "region": IDS[i]} for i in range(12)
]
POLICIES = """
[policies.count]
mechanism = "laplace"
epsilon = "10"
[policies.sum]
mechanism = "laplace"
epsilon = "1"
[policies.mean]
mechanism = "laplace"
epsilon = "1"
[policies.variance]
mechanism = "laplace"
epsilon = "1"
[policies.weighted_mean]
mechanism = "gaussian"
epsilon = "1"
delta = "1/1000000"
[policies.linear]
mechanism = "laplace"
epsilon = "1"
[policies.histogram]
mechanism = "laplace"
epsilon = "10"
[policies.quantile]
mechanism = "exponential"
epsilon = "60"
"""
REASON = (
    "column 'kwh' has a Fisher floor: {what} is a step function of a record's kwh, whose Fisher information is "
    "unbounded, so the Cramér–Rao floor cannot hold"
)


def _dataset(name: str, **extra: Any) -> DatasetDef:
    return DatasetDef(
        name, ROWS, BOUNDS, POLICIES, "laplace", fisher_floor={"kwh": FLOOR, "temp": None}, categories=IDS, **extra
    )


def _lab(root: Path, database: str = "sqlite") -> Lab:
    lab = Lab(root, [_dataset("guarded"), _dataset("opened", step_queries={"kwh": "allow"})], database=database)
    lab.add_querier("q")  # no floor of its own: the columns' floors apply
    lab.add_querier("own", fisher_floor=FLOOR)  # a floor of its own
    return lab


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Lab]:
    with _lab(tmp_path) as lab:
        yield lab


def _state(lab: Lab) -> tuple[Any, ...]:
    """Everything a charge would change: the ledger, each querier's budgets, the datasets' global budgets."""
    ledger = lab.get("admin", "/v1/admin/ledger", limit=1000, outcome="charged").json()["ledger"]
    budgets = [lab.get(who, "/v1/budget").json() for who in ("q", "own")]
    return len(ledger), budgets, lab.get("admin", "/v1/admin/datasets").json()


# --- 1. every step construct on a floored column is refused, nothing charged -----------------------------------

WHERE = "a `where` condition on it (kwh {op} …)"
STEP_QUERIES = [
    *[({"query": f"count() from guarded where kwh {op} 30"}, WHERE.format(op=op)) for op in ("=", "!=", "<", "<=",
                                                                                                ">", ">=")],
    ({"query": "count() from guarded where region = 'h03' and kwh >= 17.5"}, WHERE.format(op=">=")),
    ({"query": "sum(temp) from guarded where kwh < 30"}, WHERE.format(op="<")),
    ({"query": "mean(kwh) from guarded where kwh > 5"}, WHERE.format(op=">")),
    ({"query": "linear(2*kwh - temp) from guarded where kwh <= 40"}, WHERE.format(op="<=")),
    ({"query": "histogram(kwh, bins = [0, 30, 60]) from guarded"}, "histogram bins over it"),
    ({"query": "histogram(kwh, 0, 10, 20, 60) from guarded where region = 'h03'"}, "histogram bins over it"),
    ({"query": "quantile(kwh, 0.5) from guarded"}, "a quantile of it"),
    ({"query": "quantile(kwh, [0.25, 0.5, 0.75]) from guarded where region = 'h01'"}, "a quantile of it"),
    ({"query": "count() from guarded group by kwh"}, "a `group by` key on it"),
    ({"query": "mean(temp) from guarded group by kwh"}, "a `group by` key on it"),
    (
        {"kind": "count", "dataset": "guarded", "where": [{"column": "kwh", "op": ">=", "value": 30}]},
        WHERE.format(op=">="),
    ),
    ({"kind": "histogram", "column": "kwh", "bins": [0, 30, 60], "dataset": "guarded"}, "histogram bins over it"),
    ({"kind": "quantile", "column": "kwh", "levels": [0.5], "dataset": "guarded"}, "a quantile of it"),
    ({"kind": "sum", "column": "temp", "group_by": "kwh", "dataset": "guarded"}, "a `group by` key on it"),
]


def test_every_step_construct_on_a_floored_column_is_refused_and_charges_nothing(lab: Lab) -> None:
    before = _state(lab)
    for body, what in STEP_QUERIES:
        for who in ("q", "own"):
            r = lab.post(who, body)
            assert r.status_code == 422, (body, r.text)
            message = r.json()["error"]
            assert message.startswith(REASON.format(what=what)), (body, message)
            assert '`step_queries = "allow"` under [datasets.guarded.columns.kwh] in owner.toml' in message
    assert _state(lab) == before


def test_the_planner_refuses_before_anything_is_charged(lab: Lab) -> None:
    service: Any = lab.app.state.service
    with pytest.raises(StepQueryRefused, match="Fisher floor"):
        service.plan(parse_query("count() from guarded where kwh >= 1"))
    plan = service.plan(parse_query("count() from opened where kwh >= 1"))
    assert plan.steps == (("kwh", WHERE.format(op=">=")),)
    assert service.plan(parse_query("sum(kwh) from guarded where region = 'h01'")).steps == ()


def test_every_kind_is_differentiable_or_a_step_function_of_its_columns() -> None:
    # a kind is answered on a floored column only once declared differentiable: a new kind is a step function
    assert DIFFERENTIABLE_KINDS <= set(KINDS)
    assert set(KINDS) - DIFFERENTIABLE_KINDS == {"histogram", "quantile"}
    assert step_constructs(QuerySpec("newkind", "kwh", "temp")) == (
        ("kwh", "newkind of it (not a differentiable function of it)"),
        ("temp", "newkind of it (not a differentiable function of it)"),
    )
    assert step_constructs(parse_query("weighted_mean(kwh, temp)")) == ()
    assert step_constructs(parse_query("linear(2*kwh - temp) where region = 'a'")) == (
        ("region", "a `where` condition on it (region = …)"),
    )


# --- 2. the audit's bisection -------------------------------------------------------------------------------------

REPEATS = 5
STEPS = 12  # 60 / 2¹² ≈ 0.015: far below √FLOOR once every bit is right


class Refused(Exception):
    """The server refused a query of the attack."""


def _ask(lab: Lab, who: str, body: dict[str, Any], refusals: list[str]) -> Any:
    r = lab.post(who, body)
    if r.status_code != 200:
        refusals.append(r.json()["error"])
        raise Refused
    return r.json()["value"]


def _bisect(above: Callable[[float], bool], lo: float = 0.0, hi: float = 60.0) -> float:
    for _ in range(STEPS):
        middle = (lo + hi) / 2
        lo, hi = (middle, hi) if above(middle) else (lo, middle)
    return (lo + hi) / 2


def _attacks(lab: Lab, who: str, dataset: str, refusals: list[str]) -> dict[str, Callable[[str], float]]:
    """One record's kwh (the record named by its id) estimated through filters, histogram bins and quantiles."""

    def through_filters(record: str) -> float:
        def above(m: float) -> bool:
            where = [{"column": "region", "op": "=", "value": record}, {"column": "kwh", "op": ">=", "value": m}]
            body = {"kind": "count", "where": where, "dataset": dataset}
            return sum(_ask(lab, who, body, refusals) for _ in range(REPEATS)) > REPEATS / 2

        return _bisect(above)

    def through_bins(record: str) -> float:
        def above(m: float) -> bool:
            where = [{"column": "region", "op": "=", "value": record}]
            body = {"kind": "histogram", "column": "kwh", "bins": [0.0, m, 60.0], "where": where, "dataset": dataset}
            cells = [_ask(lab, who, body, refusals) for _ in range(REPEATS)]
            return sum(c[1] - c[0] for c in cells) > 0

        return _bisect(above)

    def through_quantiles(record: str) -> float:
        where = [{"column": "region", "op": "=", "value": record}]
        body = {"kind": "quantile", "column": "kwh", "levels": [0.5], "where": where, "dataset": dataset}
        return statistics.median(float(_ask(lab, who, body, refusals)) for _ in range(REPEATS))

    return {"filters": through_filters, "bins": through_bins, "quantiles": through_quantiles}


TARGETS = ("h03", "h07", "h10")


def _truth(record: str) -> float:
    return next(r["kwh"] for r in ROWS if r["region"] == record)


def test_bisecting_a_floored_value_is_refused_at_the_first_query(lab: Lab) -> None:
    before = _state(lab)
    refusals: list[str] = []
    for name, attack in _attacks(lab, "q", "guarded", refusals).items():
        for record in TARGETS:
            with pytest.raises(Refused):
                attack(record)
            assert "column 'kwh' has a Fisher floor" in refusals[-1], (name, refusals[-1])
    assert len(refusals) == len(TARGETS) * 3  # each attempt stopped at its first query
    assert _state(lab) == before


def test_with_the_owners_allowance_the_same_bisection_pins_the_value(lab: Lab) -> None:
    """The power check: where the owner opened kwh, the attack of the previous test pins every target below
    the floor's RMS error (√0.01 = 0.1), while the Fisher information counted about kwh stays 0 — what the
    floor's refusal prevents. A querier with a floor of its own is refused there all the same."""
    refusals: list[str] = []
    errors = []
    for attack in _attacks(lab, "q", "opened", refusals).values():
        for record in TARGETS:
            errors.append(attack(record) - _truth(record))
    assert not refusals
    rms = (sum(e * e for e in errors) / len(errors)) ** 0.5
    assert max(abs(e) for e in errors) < FLOOR**0.5 / 2 and rms < FLOOR**0.5, errors
    view = lab.get("q", "/v1/budget").json()["datasets"]["opened"]["fisher"]["kwh"]
    assert view["information"] == "0" and view["record_bound"] is None  # nothing counted: unbounded, unseen
    assert view["step_queries"] == "allowed" and "do not bound what they reveal" in view["floor_covers"]

    before = _state(lab)
    for attack in _attacks(lab, "own", "opened", refusals).values():
        with pytest.raises(Refused):
            attack(TARGETS[0])
    assert len(refusals) == 3
    for message in refusals:
        assert "this querier has a Fisher floor of its own (`fisher_floor` 0.01)" in message, message
    assert _state(lab) == before


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest) -> str:
    if request.param == "sqlite":
        return "sqlite"
    return _fresh_postgres_database(str(request.getfixturevalue("_postgres_url")))


def test_a_querier_floor_is_checked_in_the_charge_transaction(tmp_path: Path, database: str) -> None:
    with _lab(tmp_path, database) as lab:
        before = _state(lab)
        for body, _what in STEP_QUERIES:
            body = {**body, "query": body["query"].replace("guarded", "opened")} if "query" in body else {
                **body, "dataset": "opened"}
            r = lab.post("own", body)
            # a numeric group key is not answered on any column (group by takes text columns)
            reason = "group by a text column" if "group by" in _what else "a Fisher floor of its own"
            assert r.status_code == 422 and reason in r.json()["error"], (body, r.text)
        assert _state(lab) == before
        views = lab.get("own", "/v1/budget").json()["datasets"]
        assert views["opened"]["fisher"]["kwh"]["step_queries"] == "refused"
        r = lab.post("q", {"query": "histogram(kwh, bins = [0, 30, 60]) from opened"})
        assert r.status_code == 200, r.text
        assert r.json()["charged"]["epsilon"] == "10"


# --- 3. differentiable answers and unfloored columns: answered and charged as before ---------------------------------

DIFFERENTIABLE = [
    ({"kind": "sum", "column": "kwh"}, "sum", {}, "1"),
    ({"kind": "mean", "column": "kwh", "where": [{"column": "region", "op": "=", "value": "h03"}]}, "mean",
     {"where": [("region", "=", "h03")]}, "1"),
    ({"kind": "variance", "column": "kwh"}, "variance", {}, "1"),
    ({"kind": "weighted_mean", "column": "kwh", "weights": "temp"}, "weighted_mean", {}, "1"),
    ({"kind": "linear", "coefficients": {"kwh": 2.0, "temp": -1.0}, "where": [
        {"column": "temp", "op": ">=", "value": 20.0}]}, "linear",
     {"coefficients": (("kwh", 2.0), ("temp", -1.0)), "where": [("temp", ">=", 20.0)]}, "1"),
    ({"kind": "count", "where": [{"column": "temp", "op": "<", "value": 15.0}]}, "count",
     {"where": [("temp", "<", 15.0)]}, "10"),
]


@pytest.mark.parametrize(("body", "kind", "ref", "epsilon"), DIFFERENTIABLE)
def test_differentiable_answers_and_unfloored_filters_are_charged_as_before(
    lab: Lab, body: dict[str, Any], kind: str, ref: dict[str, Any], epsilon: str
) -> None:
    spy = NoiseSpy()
    with spy.installed():
        r = lab.post("own", {**body, "dataset": "guarded"})
        assert r.status_code == 200, r.text
        draws = spy.take()
    assert r.json()["charged"]["epsilon"] == epsilon
    components = reference_components(_dataset("guarded"), kind, column="kwh", weights="temp", **ref)
    expected = released_information(draws, components)
    charged = lab.ledger_row(r.json()["ledger_id"])["fisher_information"]
    assert set(charged) == {c for c, v in expected.items() if v > 0}
    for column, value in expected.items():
        assert charged.get(column, 0.0) == pytest.approx(value, rel=1e-9, abs=0.0), (body, column)
    view = r.json()["remaining"]["fisher"]["kwh"]
    assert view["step_queries"] == "refused" and "floor_covers" not in view


@pytest.mark.parametrize(
    "text",
    [
        "histogram(temp, bins = [0, 20, 40]) from guarded",
        "quantile(temp, [0.25, 0.75]) from guarded where region != 'h01'",
        "mean(kwh) from guarded group by region",
        "histogram(region) from guarded",
        "count() from guarded where temp >= 20 group by region",
    ],
)
def test_step_constructs_on_columns_without_a_floor_are_answered(lab: Lab, text: str) -> None:
    r = lab.post("q", {"query": text})
    assert r.status_code == 200, r.text
    assert Fraction(r.json()["charged"]["epsilon"]) > 0


def test_the_dataset_view_says_what_each_floor_covers(lab: Lab) -> None:
    datasets = lab.get("admin", "/v1/admin/datasets").json()["datasets"]
    assert datasets["guarded"]["fisher"]["kwh"]["step_queries"] == "refused"
    opened = datasets["opened"]["fisher"]["kwh"]
    assert opened["step_queries"] == "allowed"
    assert opened["floor_covers"].startswith("differentiable answers only")
    assert "step_queries" not in datasets["opened"]["fisher"]["temp"]  # no floor: nothing to cover


def test_the_console_shows_what_an_allowed_floor_covers(lab: Lab) -> None:
    from privnoise.server.console.render import environment

    fisher = environment().get_template("macros.html").module.fisher  # the console's budget bars
    datasets = lab.get("admin", "/v1/admin/datasets").json()["datasets"]
    shown = str(fisher("kwh", datasets["opened"]["fisher"]["kwh"]))
    assert 'the floor covers <span data-field="floor_covers">differentiable answers only' in shown
    assert "floor_covers" not in str(fisher("kwh", datasets["guarded"]["fisher"]["kwh"]))
    assert "floor_covers" not in str(fisher("temp", datasets["guarded"]["fisher"]["temp"]))


# --- 4. owner.toml -----------------------------------------------------------------------------------------------

BASE = """
[datasets.m]
source = "d.csv"
epsilon = 1
[datasets.m.columns.kwh]
bounds = [0, 10]
fisher_floor = 0.01
[datasets.m.columns.region]
type = "text"
[datasets.m.policies.sum]
mechanism = "laplace"
epsilon = 0.1
"""


def _load(tmp_path: Path, text: str) -> Any:
    path = tmp_path / "owner.toml"
    path.write_text(text, encoding="utf-8")
    return load_config(path)


def test_step_queries_defaults_to_refuse_and_reads_allow(tmp_path: Path) -> None:
    assert _load(tmp_path, BASE).datasets["m"].columns["kwh"].step_queries == "refuse"
    allowed = BASE.replace("fisher_floor = 0.01", 'fisher_floor = 0.01\nstep_queries = "allow"')
    assert _load(tmp_path, allowed).datasets["m"].columns["kwh"].step_queries == "allow"
    refused = BASE.replace("fisher_floor = 0.01", 'fisher_floor = 0.01\nstep_queries = "refuse"')
    assert _load(tmp_path, refused).datasets["m"].columns["kwh"].step_queries == "refuse"


@pytest.mark.parametrize(
    ("change", "key", "rule"),
    [
        (("fisher_floor = 0.01", 'fisher_floor = 0.01\nstep_queries = "yes"'), "datasets.m.columns.kwh.step_queries",
         "must be 'refuse' (the default"),
        (("fisher_floor = 0.01", "fisher_floor = 0.01\nstep_queries = true"), "datasets.m.columns.kwh.step_queries",
         "or 'allow' (answer them"),
        (("fisher_floor = 0.01", 'step_queries = "allow"'), "datasets.m.columns.kwh.step_queries",
         "the column has no `fisher_floor`"),
        (('type = "text"', 'type = "text"\nstep_queries = "allow"'), "datasets.m.columns.region.step_queries",
         "the column has no `fisher_floor`"),
    ],
)
def test_step_queries_errors_name_the_key_and_the_rule(
    tmp_path: Path, change: tuple[str, str], key: str, rule: str
) -> None:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, BASE.replace(*change, 1))
    message = str(info.value)
    assert f"`{key}`" in message and rule in message, message
