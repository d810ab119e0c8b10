"""Step constructs on Fisher-floored columns (:mod:`privnoise.server.steps`) on their own: which parts of a query
are step functions of a column (every filter, a group key, the columns of a kind not declared differentiable),
which of them are refused on a floored column and which a column's ``step_queries = "allow"`` lets through, the
refusal to a querier with a floor of its own, and what the budget views say."""

from __future__ import annotations

from fractions import Fraction

import pytest

from privnoise.server.config import ColumnSpec, DatasetSpec
from privnoise.server.querylang import KINDS, Condition, QuerySpec, parse_query
from privnoise.server.steps import (
    ALLOW,
    DIFFERENTIABLE_KINDS,
    REFUSE,
    StepQueryRefused,
    floored_steps,
    querier_refusal,
    step_constructs,
    step_entry,
)

SPEC = DatasetSpec(
    "meters",
    "meters",
    None,
    Fraction(1),
    Fraction(0),
    {
        "kwh": ColumnSpec("kwh", "number", (0.0, 60.0), fisher_floor=0.01),  # floored, refused
        "temp": ColumnSpec("temp", "number", (0.0, 40.0), fisher_floor=0.5, step_queries="allow"),  # allowed
        "hid": ColumnSpec("hid", "number", (0.0, 100.0)),  # no floor
        "region": ColumnSpec("region", "text", categories=("n", "s")),
    },
    {},
)


def _where(column: str, op: str) -> tuple[str, str]:
    return column, f"a `where` condition on it ({column} {op} …)"


def test_the_step_values_of_a_column() -> None:
    assert (REFUSE, ALLOW) == ("refuse", "allow")
    assert DIFFERENTIABLE_KINDS == {"count", "sum", "mean", "weighted_mean", "variance", "linear", "identity"}
    assert set(KINDS) - DIFFERENTIABLE_KINDS == {"histogram", "quantile"}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("sum(kwh)", ()),
        ("weighted_mean(kwh, temp)", ()),
        ("linear(2*kwh - temp)", ()),
        ("identity(kwh)", ()),
        ("count() where hid = 7 and kwh >= 3", (_where("hid", "="), _where("kwh", ">="))),
        ("mean(kwh) where region != 'n' and kwh < 2", (_where("region", "!="), _where("kwh", "<"))),
        ("count() where temp > 1 and temp <= 3", (_where("temp", ">"), _where("temp", "<="))),
        ("sum(kwh) group by region", (("region", "a `group by` key on it"),)),
        (
            "mean(temp) where hid < 1 group by region",
            (_where("hid", "<"), ("region", "a `group by` key on it")),
        ),
        ("histogram(kwh, bins = [0, 1])", (("kwh", "histogram bins over it"),)),
        ("histogram(region) where temp = 2", (_where("temp", "="), ("region", "histogram bins over it"))),
        ("quantile(temp, [0.2, 0.7])", (("temp", "a quantile of it"),)),
    ],
)
def test_step_constructs(query: str, expected: tuple[tuple[str, str], ...]) -> None:
    assert step_constructs(parse_query(query)) == expected


def test_a_kind_not_declared_differentiable_is_a_step_function_of_every_argument() -> None:
    q = QuerySpec(
        "novel",
        column="kwh",
        weights="temp",
        coefficients=(("hid", 1.0), ("kwh", 2.0), ("temp", 3.0)),
        where=(Condition("region", "=", "n"),),
        group_by="hid",
    )
    what = "novel of it (not a differentiable function of it)"
    assert step_constructs(q) == (
        _where("region", "="),
        ("hid", "a `group by` key on it"),
        ("kwh", what),
        ("temp", what),
        ("hid", what),
    )
    assert step_constructs(QuerySpec("novel")) == ()
    assert step_constructs(QuerySpec("histogram", weights="hid")) == (("hid", "histogram bins over it"),)


def _reason(column: str, what: str) -> str:
    return (
        f"column {column!r} has a Fisher floor: {what} is a step function of a record's {column}, whose Fisher "
        "information is unbounded, so the Cramér–Rao floor cannot hold"
    )


@pytest.mark.parametrize(
    ("query", "what"),
    [
        ("count() where kwh >= 3", "a `where` condition on it (kwh >= …)"),
        ("count() where temp > 1 and hid = 2 and kwh != 4", "a `where` condition on it (kwh != …)"),
        ("histogram(kwh, bins = [0, 1])", "histogram bins over it"),
        ("quantile(kwh, 0.5) where temp < 3", "a quantile of it"),
    ],
)
def test_a_step_construct_on_a_floored_column_is_refused(query: str, what: str) -> None:
    with pytest.raises(StepQueryRefused) as info:
        floored_steps(parse_query(query), SPEC)
    assert str(info.value) == (
        f"{_reason('kwh', what)}; the owner can declare the column open to such queries with "
        '`step_queries = "allow"` under [datasets.meters.columns.kwh] in owner.toml (its floor then bounds the '
        "differentiable answers only)."
    )


def test_allowed_step_constructs_and_those_on_columns_without_a_floor() -> None:
    assert floored_steps(parse_query("count() where hid = 7 and region = 'n'"), SPEC) == ()
    assert floored_steps(parse_query("sum(kwh) where hid > 1 group by region"), SPEC) == ()
    assert floored_steps(parse_query("count() where temp > 1 and hid = 3 and temp <= 3"), SPEC) == (
        _where("temp", ">"),
        _where("temp", "<="),
    )
    assert floored_steps(parse_query("quantile(temp, 0.5)"), SPEC) == (("temp", "a quantile of it"),)
    assert floored_steps(parse_query("sum(kwh)"), SPEC) == ()


def test_a_querier_with_a_floor_of_its_own_is_refused_allowed_steps() -> None:
    steps = (_where("temp", ">"), ("kwh", "a quantile of it"))
    assert querier_refusal(steps, None) is None
    assert querier_refusal((), 0.5) is None
    refusal = querier_refusal(steps, 0.25)
    assert isinstance(refusal, StepQueryRefused)
    assert str(refusal) == (
        f"{_reason('temp', 'a `where` condition on it (temp > …)')}; this querier has a Fisher floor of its own "
        '(`fisher_floor` 0.25), which `step_queries = "allow"` on the column does not lift.'
    )
    assert "`fisher_floor` 1e-08)" in str(querier_refusal(steps, 1e-8))


def test_what_the_budget_views_say_of_step_answers() -> None:
    refused = {"step_queries": "refused"}
    assert step_entry(SPEC.columns["kwh"]) == refused
    assert step_entry(SPEC.columns["kwh"], 0.5) == refused
    assert step_entry(SPEC.columns["temp"], 0.5) == refused
    assert step_entry(SPEC.columns["temp"], 0.0) == refused
    assert step_entry(SPEC.columns["temp"]) == {
        "step_queries": "allowed",
        "floor_covers": "differentiable answers only: the owner allows filters, histogram bins, quantiles and "
        'group-by keys on temp (step_queries = "allow"), whose Fisher information is unbounded and not counted; '
        "the floor and the record bound do not bound what they reveal",
    }
