"""Privacy invariants of the query server, as property-based tests over every query kind and policy.

The tests judge the noise the server actually draws (a spy on ``Component.add``, its one drawing path), against a
reference computed from the rows and the declared bounds alone (``tests/server/_lab.py``), with bounds that do
not start at 0 and may be negative:

* the (ε, δ) realised by the drawn noise at the true sensitivity, summed over the components of one answer,
  is at most what the querier's stored budget was charged;
* the Fisher information charged is the information of the released components, Σ slope² · 𝓘(noise);
* every budget dimension (querier and dataset; ε, δ, Fisher floor) refuses exactly at its limit, also when
  several queriers collude.
"""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from hypothesis import HealthCheck, example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.server._lab import (  # noqa: E402
    BOUNDS,
    DP_EPSILON,
    FISHER_KINDS,
    KINDS,
    REGIONS,
    DatasetDef,
    Lab,
    NoiseSpy,
    invariant_datasets,
    read_budget_state,
    realised_deltas,
    realised_epsilons,
    reference_components,
    released_information,
    set_budget_state,
)


def _settings(max_examples: int) -> settings:
    return settings(
        max_examples=max_examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )


DATASETS = invariant_datasets()
DP_NAMES = [d.name for d in DATASETS if d.family in ("laplace", "gaussian")]
FISHER_NAMES = [d.name for d in DATASETS if d.family.startswith("fisher-")]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Lab, NoiseSpy]]:
    spy = NoiseSpy()
    with Lab(tmp_path_factory.mktemp("invariants"), DATASETS) as lab, spy.installed():
        # no floor of its own: the columns' floors apply, with their allowance of filters on x and y
        lab.add_querier("inv")
        yield lab, spy


# --- queries ---------------------------------------------------------------------------------------------------

_coefficient = st.one_of(
    st.integers(-5, 5).map(float),
    st.floats(min_value=-100.0, max_value=100.0, allow_nan=False).filter(lambda a: a == 0 or abs(a) > 1e-3),
)


@st.composite
def _condition(draw: st.DrawFn, dataset: DatasetDef) -> tuple[str, str, Any]:
    if draw(st.booleans()):
        return "region", draw(st.sampled_from(["=", "!="])), draw(st.sampled_from([*REGIONS, "nowhere"]))
    column = draw(st.sampled_from(["x", "y"]))
    lo, hi = dataset.bounds[column]
    literal = draw(
        st.one_of(
            st.sampled_from([lo, hi, (lo + hi) / 2, lo - 1.0, hi + 1.0]),
            st.floats(min_value=lo, max_value=hi, allow_nan=False),
        )
    )
    return column, draw(st.sampled_from(["=", "!=", "<", "<=", ">", ">="])), literal


def _number(v: float) -> str:
    return f"- {abs(v)!r}" if v < 0 or (v == 0 and str(v).startswith("-")) else repr(v)


@st.composite
def queries(draw: st.DrawFn, names: list[str], kinds: tuple[str, ...], filtered: bool) -> dict[str, Any]:
    """(request body, reference arguments) of one query."""
    name = draw(st.sampled_from(names))
    dataset = next(d for d in DATASETS if d.name == name)
    kind = draw(st.sampled_from(kinds))
    where = []
    if filtered and kind != "identity":
        where = draw(st.lists(_condition(dataset), max_size=2))
    ref: dict[str, Any] = {"where": where}
    body: dict[str, Any] = {"kind": kind, "dataset": name}
    text = None
    if kind == "linear":
        terms = draw(
            st.lists(
                st.tuples(st.sampled_from(["x", "y", "w"]), _coefficient), min_size=1, max_size=4
            ).filter(lambda ts: any(a != 0 for _, a in ts))
        )
        ref["coefficients"] = tuple((c, a) for c, a in terms)
        if len({c for c, _ in terms}) < len(terms) or draw(st.booleans()):
            # The text form, where one column may appear in several terms.
            inner = " ".join(("- " if a < 0 else "+ ") + f"{abs(a)!r}*{c}" for c, a in terms)
            text = f"linear({inner.removeprefix('+ ')}) from {name}"
        else:
            body["coefficients"] = {c: a for c, a in terms}
    elif kind != "count":
        body["column"] = "x"
        if kind == "weighted_mean":
            body["weights"] = "w"
    if text is not None:
        if where:
            text += " where " + " and ".join(
                f"{c} {op} '{v}'" if isinstance(v, str) else f"{c} {op} {_number(v)}" for c, op, v in where
            )
        body = {"query": text}
    elif where:
        body["where"] = [{"column": c, "op": op, "value": v} for c, op, v in where]
    return {"body": body, "dataset": dataset, "kind": kind, "ref": ref}


def _budget(lab: Lab, dataset: str) -> dict[str, Any]:
    return dict(lab.get("inv", "/v1/budget").json()["datasets"][dataset])


def _answer(
    lab: Lab, spy: NoiseSpy, q: dict[str, Any]
) -> tuple[Any, Fraction, Fraction, list[Any], list[Any]]:
    """Ask ``q``; return (response JSON, ε charged, δ charged, the draws, the reference components)."""
    name = q["dataset"].name
    before = _budget(lab, name)
    spy.take()
    response = lab.post("inv", q["body"])
    assert response.status_code == 200, (q["body"], response.text)
    draws = spy.take()
    after = _budget(lab, name)
    charged_eps = Fraction(after["epsilon"]["spent"]) - Fraction(before["epsilon"]["spent"])
    charged_delta = Fraction(after["delta"]["spent"]) - Fraction(before["delta"]["spent"])
    components = reference_components(q["dataset"], q["kind"], **q["ref"])
    assert len(draws) == len(components), (q["body"], [c.name for c in components], len(draws))
    for (_, true_value), comp in zip(draws, components, strict=True):
        scale = 1.0 + float(abs(comp.sensitivity)) * 20
        assert true_value == pytest.approx(comp.value, rel=1e-9, abs=1e-9 * scale), (q["body"], comp.name)
    return response.json(), charged_eps, charged_delta, draws, components


# --- 1. the (ε, δ) of the noise drawn is at most the charge --------------------------------------------------------


@_settings(70)
@given(q=queries(DP_NAMES, KINDS, filtered=True))
@example(
    q={
        "body": {"kind": "mean", "column": "x", "dataset": "laplace_0"},
        "dataset": DATASETS[0],
        "kind": "mean",
        "ref": {"where": []},
    }
)  # noqa: E501
def test_dp_noise_drawn_spends_at_most_the_charge(lab: tuple[Lab, NoiseSpy], q: dict[str, Any]) -> None:
    lab_, spy = lab
    answer, eps, delta, draws, components = _answer(lab_, spy, q)
    assert eps == Fraction(DP_EPSILON[q["kind"]]), "the charge is the policy's declared ε"
    assert Fraction(answer["charged"]["epsilon"]) == eps and Fraction(answer["charged"]["delta"]) == delta
    k = len(components)
    if q["dataset"].family == "laplace":
        assert delta == 0
        realised = realised_epsilons(draws, components, 0.0)
        assert sum(realised) <= float(eps) * (1 + 1e-9), (q["body"], realised, eps)
    else:
        assert delta > 0
        realised = realised_epsilons(draws, components, float(delta) / k)
        assert sum(realised) <= float(eps) * (1 + 1e-9), (q["body"], realised, eps)
        deltas = realised_deltas(draws, components, float(eps) / k)
        assert sum(deltas) <= float(delta) * (1 + 1e-9), (q["body"], deltas, delta)


# --- 2. the Fisher information charged is the information released --------------------------------------------------


@_settings(60)
@given(
    q=st.one_of(queries(FISHER_NAMES, FISHER_KINDS, filtered=False), queries(DP_NAMES, KINDS, filtered=True))
)
@example(
    q={
        "body": {"kind": "mean", "column": "x", "dataset": "fisher_gaussian_1"},
        "dataset": next(d for d in DATASETS if d.name == "fisher_gaussian_1"),
        "kind": "mean",
        "ref": {"where": []},
    }
)  # noqa: E501
@example(
    q={
        "body": {"query": "linear(3.0*x - 0.5*y) from fisher_cosine_2"},
        "dataset": next(d for d in DATASETS if d.name == "fisher_cosine_2"),
        "kind": "linear",
        "ref": {"where": [], "coefficients": (("x", 3.0), ("y", -0.5))},
    }
)  # noqa: E501
def test_fisher_information_charged_is_the_information_released(
    lab: tuple[Lab, NoiseSpy], q: dict[str, Any]
) -> None:
    lab_, spy = lab
    answer, eps, delta, draws, components = _answer(lab_, spy, q)
    if q["dataset"].family.startswith("fisher-"):
        assert eps == 0 and delta == 0, "a Fisher policy charges no (ε, δ)"
    charged = {c: float(v) for c, v in lab_.ledger_row(answer["ledger_id"])["fisher_information"].items()}
    expected = released_information(draws, components)
    for column in ("x", "y", "w"):
        assert charged.get(column, 0.0) == pytest.approx(expected.get(column, 0.0), rel=1e-9, abs=0.0), (
            q["body"],
            column,
            charged,
            expected,
        )


# --- the sensitivity rule on concrete neighbours -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bounds", "added", "expected"),
    [((10.0, 60.0), 60.0, 60.0), ((-5.0, 3.0), -5.0, 8.0), ((-60.0, -10.0), -60.0, 60.0)],
)
def test_sum_sensitivity_is_the_largest_change_of_one_record(
    tmp_path: Path, bounds: tuple[float, float], added: float, expected: float
) -> None:
    # Two datasets that differ by one added record at a declared bound: the true sums differ by |added|, and
    # the sensitivity the drawn noise is calibrated for is max(hi − lo, |lo|, |hi|) — 60 for [10, 60], not 50.
    rows = [{"x": bounds[0] + (bounds[1] - bounds[0]) * i / 4, "region": "north"} for i in range(5)]
    base = DatasetDef(
        "base", rows, {"x": bounds}, '[policies.sum]\nmechanism = "laplace"\nepsilon = "1/10"', "laplace"
    )
    plus = DatasetDef("plus", [*rows, {"x": added, "region": "north"}], base.bounds, base.policies, "laplace")
    spy = NoiseSpy()
    with Lab(tmp_path, [base, plus]) as lab, spy.installed():
        lab.add_querier("inv")
        for name in ("base", "plus"):
            assert lab.post("inv", {"kind": "sum", "column": "x", "dataset": name}).status_code == 200
        (h_base, v_base), (h_plus, v_plus) = spy.take()
    assert abs(float(v_plus) - float(v_base)) == pytest.approx(abs(added))
    assert h_base.sensitivity == h_plus.sensitivity == expected
    realised = realised_epsilons([(h_base, v_base)], reference_components(base, "sum"), 0.0)
    assert realised[0] <= 0.1 * (1 + 1e-9)


# --- 3. every budget refuses exactly at its limit, also with colluding queriers -------------------------------------------

LIMIT_FLOOR = 1.0 / 64  # the dataset's floor in lim_fisher: at most 64 units of information per record
FISHER_INFO = 4.0  # 1/Q with Q = 1/4: the information one fisher-gaussian sum gives each record
EPS_CHARGE = Fraction(1, 8)
DELTA_CHARGE = Fraction(1, 1024)


def _limit_dataset(name: str, policy: str, floor: float) -> DatasetDef:
    rows = [{"x": 10.0 + i, "region": "north"} for i in range(6)]
    return DatasetDef(
        name,
        rows,
        {"x": BOUNDS[0]},
        "[policies.sum]\n" + policy,
        "limit",
        epsilon="1000",
        delta="1/2",
        fisher_floor={"x": floor},
    )


@pytest.fixture(scope="module")
def limits(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    datasets = [
        _limit_dataset("lim_epsilon", 'mechanism = "laplace"\nepsilon = "1/8"', 1e-12),
        _limit_dataset("lim_delta", 'mechanism = "gaussian"\nepsilon = "1/8"\ndelta = "1/1024"', 1e-12),
        _limit_dataset("lim_fisher", 'mechanism = "fisher-gaussian"\nquality = 0.25', LIMIT_FLOOR),
    ]
    with Lab(tmp_path_factory.mktemp("limits"), datasets) as lab:
        for q in ("q0", "q1", "q2"):
            lab.add_querier(q)
        yield lab


def _set_state(
    lab: Lab, dimension: str, queriers: list[str], rooms: list[int], dataset_room: int, offsets: list[int]
) -> tuple[dict[str, Any], Any]:
    """Give each querier ``rooms[i]`` charges of room and the dataset ``dataset_room``, from non-zero starting
    points; every other dimension has room to spare. Returns the start values (querier → spent, dataset)."""
    dataset = f"lim_{dimension}"
    start: dict[str, Any] = {}
    for name, room, offset in zip(queriers, rooms, offsets, strict=True):
        if dimension == "epsilon":
            spent = Fraction(offset, 7)
            set_budget_state(
                lab.engine, dataset, querier=name, spent_epsilon=spent, epsilon=spent + room * EPS_CHARGE
            )
        elif dimension == "delta":
            spent = Fraction(offset, 3000)
            set_budget_state(
                lab.engine, dataset, querier=name, spent_delta=spent, delta=spent + room * DELTA_CHARGE
            )
        else:
            floor = (1 / 64, 1 / 128, 1 / 32)[offset % 3]
            spent = 1 / floor - room * FISHER_INFO
            set_budget_state(lab.engine, dataset, querier=name, information={"x": spent}, fisher_floor=floor)
        start[name] = spent
    if dimension == "epsilon":
        d_start: Any = Fraction(1000) - dataset_room * EPS_CHARGE
        set_budget_state(lab.engine, dataset, spent_epsilon=d_start)
    elif dimension == "delta":
        d_start = Fraction(1, 2) - dataset_room * DELTA_CHARGE
        set_budget_state(lab.engine, dataset, spent_delta=d_start)
    else:
        d_start = 1 / LIMIT_FLOOR - dataset_room * FISHER_INFO
        set_budget_state(lab.engine, dataset, information={"x": d_start})
    return start, d_start


@_settings(45)
@given(
    dimension=st.sampled_from(["epsilon", "delta", "fisher"]),
    rooms=st.lists(st.integers(0, 4), min_size=1, max_size=3),
    dataset_room=st.integers(0, 8),
    order=st.lists(st.integers(0, 2), min_size=1, max_size=14),
    offsets=st.lists(st.integers(0, 40), min_size=3, max_size=3),
)
# dataset δ exhausted while each querier still has δ left
@example(dimension="delta", rooms=[4, 4], dataset_room=3, order=[0, 1, 0, 1, 0, 1], offsets=[5, 9, 1])
# the dataset-wide Fisher floor across colluding queriers
@example(dimension="fisher", rooms=[3, 3, 3], dataset_room=5, order=[0, 1, 2, 0, 1, 2, 0], offsets=[0, 1, 2])
# the dataset ε across colluding queriers, and a querier's own limits
@example(dimension="epsilon", rooms=[2, 3], dataset_room=4, order=[0, 0, 0, 1, 1, 1, 1], offsets=[3, 0, 0])
@example(dimension="delta", rooms=[1], dataset_room=8, order=[0, 0, 0], offsets=[2, 0, 0])
@example(dimension="fisher", rooms=[2], dataset_room=8, order=[0, 0, 0], offsets=[2, 0, 0])
def test_every_budget_refuses_exactly_at_its_limit(
    limits: Lab, dimension: str, rooms: list[int], dataset_room: int, order: list[int], offsets: list[int]
) -> None:
    queriers = [f"q{i}" for i in range(len(rooms))]
    order = [i % len(rooms) for i in order]
    start, d_start = _set_state(limits, dimension, queriers, rooms, dataset_room, offsets[: len(rooms)])
    left, d_left = list(rooms), dataset_room
    accepted = [0] * len(rooms)
    for i in order:
        expected = 200 if left[i] > 0 and d_left > 0 else 429
        r = limits.post(queriers[i], {"query": "sum(x)", "dataset": f"lim_{dimension}"})
        assert r.status_code == expected, (dimension, rooms, dataset_room, order, i, r.text)
        if expected == 200:
            left[i] -= 1
            d_left -= 1
            accepted[i] += 1
    state = read_budget_state(limits.engine, f"lim_{dimension}")
    charge: Any = {"epsilon": EPS_CHARGE, "delta": DELTA_CHARGE, "fisher": FISHER_INFO}[dimension]
    for name, n in zip(queriers, accepted, strict=True):
        assert state["queriers"][name][dimension] == start[name] + n * charge
    assert state["dataset"][dimension] == d_start + sum(accepted) * charge
