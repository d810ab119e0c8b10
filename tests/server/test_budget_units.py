"""The server's budget arithmetic (:mod:`privnoise.server.budgets`) on its own: exact rationals in and out, the
refusal of each budget dimension exactly at its limit (querier and dataset; ε, δ and Fisher information, also a
querier floor looser than the column's), no partial spending on a refusal, the refusal of allowed step answers
to a querier with a floor of its own, and the views' exact numbers.

Every expected value is worked out by hand from the definitions (a floor f allows Σ𝓘 ≤ 1/f exactly, the record
bound is 1/Σ𝓘), not read back from the code.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privnoise.dp.accounting import Charge
from privnoise.server.budgets import (
    DatasetState,
    QuerierState,
    Refusal,
    StoredValueError,
    apply_charge,
    apply_charges,
    dataset_view,
    dump_information,
    information_floats,
    is_finite,
    load_information,
    querier_view,
    text,
)
from privnoise.server.config import ColumnSpec, DatasetSpec
from privnoise.server.steps import StepQueryRefused

F = Fraction
ONE, HUNDREDTH, HALF, THOUSANDTH = F(1), F(1, 100), F(1, 2), F(1, 1000)


def _spec(
    epsilon: Fraction = ONE, delta: Fraction = HUNDREDTH, floors: dict[str, float | None] | None = None
) -> DatasetSpec:
    floors = {"x": 0.01, "y": None} if floors is None else floors
    columns = {c: ColumnSpec(c, "number", (-1.0, 1.0), fisher_floor=f) for c, f in floors.items()}
    columns["region"] = ColumnSpec("region", "text")
    return DatasetSpec("d", "pn_data_d", None, epsilon, delta, columns, {})


def _querier(
    epsilon: Fraction = HALF, delta: Fraction = THOUSANDTH, floor: float | None = None, **spent: Any
) -> QuerierState:
    return QuerierState(
        epsilon,
        delta,
        floor,
        spent.get("spent_eps", F(0)),
        spent.get("spent_delta", F(0)),
        dict(spent.get("info", {})),
    )


def _dataset(**spent: Any) -> DatasetState:
    return DatasetState(
        spent.get("spent_eps", F(0)), spent.get("spent_delta", F(0)), dict(spent.get("info", {}))
    )


def _snapshot(*states: Any) -> list[Any]:
    return [(s.spent_epsilon, s.spent_delta, dict(s.information)) for s in states]


# --- text and stored values ------------------------------------------------------------------------------------


def test_text_is_the_exact_rational() -> None:
    assert [text(F(1, 10)), text(F(3)), text(F(0)), text(None)] == ["1/10", "3", "0", "0"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"x": "1/3", "y": "0"}', {"x": F(1, 3), "y": F(0)}),
        ('{"x": 0.1}', {"x": F(0.1)}),  # an older float, read exactly
        ('{"x": 2}', {"x": F(2)}),
        ("{}", {}),
    ],
)
def test_load_information_reads_exact_rationals(raw: str, expected: dict[str, Fraction]) -> None:
    out = load_information(raw)
    assert out == expected and all(type(v) is Fraction for v in out.values())


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("not json", "is not JSON"),
        ("[1, 2]", "is not a JSON object"),
        ('{"x": "-1/2"}', "a negative information"),
        ('{"x": true}', "is not a finite rational"),
        ('{"x": "1/0"}', "is not a finite rational"),
        ('{"x": "abc"}', "is not a finite rational"),
        ('{"x": null}', "is not a finite rational"),
        ('{"x": 1e999}', "is not a finite rational"),
    ],
)
def test_load_information_refuses_what_is_not_a_finite_rational(raw: str, message: str) -> None:
    with pytest.raises(StoredValueError, match=message) as info:
        load_information(raw, "pn_budgets[1]")
    assert str(info.value).startswith("pn_budgets[1]")


def test_load_information_accepts_zero_and_names_the_column() -> None:
    assert load_information('{"x": "0"}') == {"x": F(0)}
    with pytest.raises(StoredValueError, match=r"^where\['x'\]: inf"):
        load_information('{"x": Infinity}', "where")


def test_dump_information_is_sorted_exact_text() -> None:
    raw = dump_information({"y": F(1, 3), "x": F(2)})
    assert raw == '{"x": "2", "y": "1/3"}'
    assert load_information(raw) == {"x": F(2), "y": F(1, 3)}


def test_information_floats() -> None:
    charge = Charge(F(0), F(0), information={"x": F(1, 4), "y": F(3)})
    out = information_floats(charge)
    assert out == {"x": 0.25, "y": 3.0} and all(type(v) is float for v in out.values())


def test_states_round_trip_through_rows() -> None:
    row = {
        "name": "d",
        "spent_epsilon": "1/10",
        "spent_delta": "0",
        "fisher_information": '{"x": "5/2"}',
        "records": 7,
    }
    state = DatasetState.from_row(row)
    assert (state.spent_epsilon, state.spent_delta, state.information, state.records) == (
        F(1, 10),
        F(0),
        {"x": F(5, 2)},
        7,
    )
    assert state.values() == {
        "spent_epsilon": "1/10",
        "spent_delta": "0",
        "fisher_information": '{"x": "5/2"}',
        "renyi": None,
    }
    assert DatasetState.from_row({**row, "records": None}).records is None
    assert DatasetState.from_row({k: v for k, v in row.items() if k != "records"}).records is None
    with pytest.raises(StoredValueError, match=r"^pn_datasets\['d'\]"):
        DatasetState.from_row({**row, "spent_epsilon": "x"})
    with pytest.raises(StoredValueError, match=r"^pn_datasets\['d'\]"):
        DatasetState.from_row({**row, "spent_delta": float("nan")})

    qrow = {
        "querier_id": 3,
        "dataset": "d",
        "epsilon": "1/2",
        "delta": "1/1000",
        "fisher_floor": 0.5,
        "spent_epsilon": "1/4",
        "spent_delta": "1/2000",
        "fisher_information": '{"x": "1"}',
    }
    q = QuerierState.from_row(qrow)
    assert (q.epsilon, q.delta, q.fisher_floor, q.spent_epsilon, q.spent_delta, q.information) == (
        F(1, 2),
        F(1, 1000),
        0.5,
        F(1, 4),
        F(1, 2000),
        {"x": F(1)},
    )
    assert type(q.fisher_floor) is float
    assert q.values() == {"spent_epsilon": "1/4", "spent_delta": "1/2000", "fisher_information": '{"x": "1"}',
                          "renyi": None}
    assert QuerierState.from_row({**qrow, "fisher_floor": None}).fisher_floor is None
    for key in ("epsilon", "delta", "spent_epsilon", "spent_delta"):
        with pytest.raises(StoredValueError, match=r"^pn_budgets\[3, 'd'\]"):
            QuerierState.from_row({**qrow, key: "1/0"})
    copy = q.copy()
    assert copy == q and copy is not q and copy.information is not q.information
    copy.information["x"] = F(9)
    assert q.information == {"x": F(1)}


def test_a_float_stored_value_is_read_exactly() -> None:
    row = {"name": "d", "spent_epsilon": 0.1, "spent_delta": 0, "fisher_information": "{}"}
    assert DatasetState.from_row(row).spent_epsilon == F(0.1)
    with pytest.raises(StoredValueError):
        DatasetState.from_row({**row, "spent_epsilon": float("inf")})
    with pytest.raises(StoredValueError):
        DatasetState.from_row({**row, "spent_epsilon": True})


# --- charging: each dimension refuses exactly at its limit ------------------------------------------------------


def test_epsilon_is_spent_exactly_up_to_the_querier_budget() -> None:
    spec, querier, dataset = _spec(), _querier(epsilon=F(3, 10)), _dataset()
    for _ in range(3):
        apply_charge(dataset, querier, spec, Charge(F(1, 10), F(0)))
    assert (querier.spent_epsilon, dataset.spent_epsilon) == (F(3, 10), F(3, 10))
    before = _snapshot(querier, dataset)
    with pytest.raises(Refusal, match="querier"):
        apply_charge(dataset, querier, spec, Charge(F(1, 10**9), F(0)))
    assert _snapshot(querier, dataset) == before


def test_epsilon_of_the_dataset_refuses_a_querier_with_budget_left() -> None:
    spec = _spec(epsilon=F(1))
    querier, dataset = _querier(epsilon=F(5)), _dataset(spent_eps=F(9, 10))
    apply_charge(dataset, querier, spec, Charge(F(1, 10), F(0)))  # exactly the dataset's ε
    assert (querier.spent_epsilon, dataset.spent_epsilon) == (F(1, 10), F(1))
    before = _snapshot(querier, dataset)
    with pytest.raises(Refusal, match="dataset"):
        apply_charge(dataset, querier, spec, Charge(F(1, 10**9), F(0)))
    assert _snapshot(querier, dataset) == before


def test_delta_refuses_exactly_at_the_querier_and_the_dataset_limits() -> None:
    spec = _spec(delta=F(1, 100))
    querier, dataset = _querier(delta=F(2, 1000)), _dataset()
    apply_charge(dataset, querier, spec, Charge(F(0), F(2, 1000)))
    assert (querier.spent_delta, dataset.spent_delta) == (F(2, 1000), F(2, 1000))
    with pytest.raises(Refusal, match="querier"):
        apply_charge(dataset, querier, spec, Charge(F(0), F(1, 10**12)))
    other, full = _querier(delta=F(1, 2)), _dataset(spent_delta=F(9, 1000))
    apply_charge(full, other, spec, Charge(F(0), F(1, 1000)))  # exactly the dataset's δ
    assert full.spent_delta == F(1, 100) and other.spent_delta == F(1, 1000)
    before = _snapshot(other, full)
    with pytest.raises(Refusal, match="dataset"):
        apply_charge(full, other, spec, Charge(F(0), F(1, 10**12)))
    assert _snapshot(other, full) == before


def test_absent_epsilon_and_delta_spend_nothing() -> None:
    spec, querier, dataset = _spec(), _querier(spent_eps=F(1, 2), spent_delta=F(1, 1000)), _dataset()
    apply_charge(dataset, querier, spec, Charge(None, None, information={"x": F(1)}))
    assert (querier.spent_epsilon, querier.spent_delta) == (F(1, 2), F(1, 1000))
    assert (dataset.spent_epsilon, dataset.spent_delta) == (F(0), F(0))
    assert querier.information == dataset.information == {"x": F(1)}


def test_fisher_floor_of_the_column_allows_exactly_its_information() -> None:
    spec = _spec(floors={"x": 0.01, "y": None})  # 0.01: exactly 100 units
    querier, dataset = _querier(), _dataset()
    apply_charge(dataset, querier, spec, Charge(F(0), F(0), information={"x": F(60)}))
    apply_charge(dataset, querier, spec, Charge(F(0), F(0), information={"x": F(40)}))
    assert querier.information == dataset.information == {"x": F(100)}
    before = _snapshot(querier, dataset)
    with pytest.raises(Refusal, match="querier"):
        apply_charge(dataset, querier, spec, Charge(F(0), F(0), information={"x": F(1, 10**12)}))
    assert _snapshot(querier, dataset) == before


def test_a_querier_floor_replaces_the_column_floor_for_that_querier() -> None:
    spec = _spec(floors={"x": 0.01, "y": None})
    strict = _querier(floor=0.5)  # allows 2 units
    dataset = _dataset()
    apply_charge(dataset, strict, spec, Charge(F(0), F(0), information={"x": F(2)}))
    with pytest.raises(Refusal, match="querier"):
        apply_charge(dataset, strict, spec, Charge(F(0), F(0), information={"x": F(1, 10**12)}))
    # a looser querier floor than the column's: the column's global floor still refuses, as the dataset's
    loose = _querier(floor=0.001)  # allows 1000 units
    apply_charge(dataset, loose, spec, Charge(F(0), F(0), information={"x": F(98)}))
    assert dataset.information == {"x": F(100)} and loose.information == {"x": F(98)}
    before = _snapshot(loose, dataset)
    with pytest.raises(Refusal, match="dataset"):
        apply_charge(dataset, loose, spec, Charge(F(0), F(0), information={"x": F(1, 10**12)}))
    assert _snapshot(loose, dataset) == before


def test_colluding_queriers_share_the_dataset_floor() -> None:
    spec = _spec(floors={"x": 0.25, "y": None})  # 4 units for everyone together
    dataset = _dataset()
    queriers = [_querier() for _ in range(4)]
    for q in queriers:
        apply_charge(dataset, q, spec, Charge(F(0), F(0), information={"x": F(1)}))
    assert dataset.information == {"x": F(4)}
    with pytest.raises(Refusal, match="dataset"):
        apply_charge(dataset, _querier(), spec, Charge(F(0), F(0), information={"x": F(1, 10**12)}))


def test_a_column_without_floor_is_tracked_never_refused() -> None:
    spec = _spec(floors={"x": 0.01, "y": None})
    querier, dataset = _querier(info={"y": F(10**30)}), _dataset(info={"y": F(10**30)})
    apply_charge(dataset, querier, spec, Charge(F(0), F(0), information={"y": F(10**30)}))
    assert querier.information == dataset.information == {"y": F(2 * 10**30)}


def test_a_refusal_on_a_later_column_spends_nothing_on_the_earlier_ones() -> None:
    spec = _spec(floors={"x": 0.01, "y": 0.5})
    querier, dataset = _querier(), _dataset()
    before = _snapshot(querier, dataset)
    with pytest.raises(Refusal, match="querier"):
        apply_charge(dataset, querier, spec, Charge(F(1, 10), F(0), information={"x": F(1), "y": F(3)}))
    assert _snapshot(querier, dataset) == before
    apply_charge(dataset, querier, spec, Charge(F(1, 10), F(1, 10**6), information={"x": F(1), "y": F(2)}))
    assert querier.information == dataset.information == {"x": F(1), "y": F(2)}
    assert (querier.spent_epsilon, querier.spent_delta) == (F(1, 10), F(1, 10**6))
    assert (dataset.spent_epsilon, dataset.spent_delta) == (F(1, 10), F(1, 10**6))


def test_information_adds_to_what_each_state_holds() -> None:
    spec = _spec(floors={"x": 0.001, "y": None})
    querier, dataset = _querier(info={"x": F(1, 3)}), _dataset(info={"x": F(2, 3), "y": F(5)})
    apply_charge(dataset, querier, spec, Charge(F(0), F(0), information={"x": F(1, 6)}))
    assert querier.information == {"x": F(1, 2)}
    assert dataset.information == {"x": F(5, 6), "y": F(5)}


def test_the_floor_is_compared_as_the_decimal_written() -> None:
    # 0.1 as a binary float is slightly above 1/10; read as written it allows exactly 10 units
    spec = _spec(floors={"x": 0.1, "y": None})
    querier, dataset = _querier(), _dataset()
    apply_charge(dataset, querier, spec, Charge(F(0), F(0), information={"x": F(10)}))
    with pytest.raises(Refusal):
        apply_charge(dataset, querier, spec, Charge(F(0), F(0), information={"x": F(1, 10**15)}))


# --- views -------------------------------------------------------------------------------------------------------


def test_querier_view_numbers() -> None:
    spec = _spec(floors={"x": 0.01, "y": None})
    state = _querier(epsilon=F(1, 2), delta=F(1, 1000), spent_eps=F(1, 10), info={"x": F(40)})
    view = querier_view(state, spec)
    assert view["epsilon"] == {"budget": "1/2", "spent": "1/10", "remaining": "2/5", "remaining_float": 0.4}
    assert view["delta"] == {
        "budget": "1/1000",
        "spent": "0",
        "remaining": "1/1000",
        "remaining_float": 0.001,
    }
    assert view["fisher"] == {
        "x": {
            "floor": 0.01,
            "information": "40",
            "information_float": 40.0,
            "record_bound": 0.025,
            "remaining_information": 60.0,
            "step_queries": "refused",
        }
    }
    own_floor = querier_view(_querier(floor=0.5, info={"x": F(1, 2)}), spec)["fisher"]["x"]
    assert (own_floor["floor"], own_floor["remaining_information"], own_floor["record_bound"]) == (
        0.5,
        1.5,
        2.0,
    )
    untouched = querier_view(_querier(), spec)["fisher"]["x"]
    assert untouched["record_bound"] is None and untouched["information"] == "0"
    assert untouched["remaining_information"] == 100.0
    assert "fisher" not in querier_view(_querier(), _spec(floors={"x": None}))


def test_overspent_views_clip_at_zero() -> None:
    spec = _spec(epsilon=F(1), floors={"x": 0.5})
    state = _querier(epsilon=F(1, 10), spent_eps=F(1, 5), info={"x": F(3)})
    view = querier_view(state, spec)
    assert view["epsilon"]["remaining"] == "0" and view["epsilon"]["remaining_float"] == 0.0
    assert view["fisher"]["x"]["remaining_information"] == 0.0


_RATIONALS = st.fractions(min_value=0, max_value=10**6, max_denominator=2**80) | st.builds(
    lambda x: Fraction(x), st.floats(min_value=0.0, max_value=1e6, allow_nan=False)
)


@settings(max_examples=300, deadline=None)
@given(
    budget=st.fractions(min_value=F(1, 10**6), max_value=10**6, max_denominator=10**9),
    spent=_RATIONALS,
    information=_RATIONALS,
    floor=st.sampled_from([0.01, 0.5, 1e-4, 3.0]),
)
def test_views_state_the_exact_rationals_rounded_once(budget, spent, information, floor) -> None:
    """Every number of a view against Fraction arithmetic: the remaining budget in lowest terms, each float the
    correctly rounded value of its rational (one rounding, not one per operation)."""
    spec = _spec(floors={"x": floor})
    view = querier_view(_querier(epsilon=budget, spent_eps=spent, info={"x": information}), spec)
    rest = max(budget - spent, F(0))
    assert view["epsilon"] == {
        "budget": str(budget), "spent": str(spent), "remaining": str(rest), "remaining_float": float(rest)
    }
    x = view["fisher"]["x"]
    assert x["information"] == str(information) and x["information_float"] == float(information)
    if information == 0:
        assert x["record_bound"] is None
    else:  # beyond the largest float (a subnormal total): the largest float
        bound = 1 / information
        assert x["record_bound"] == (float(bound) if bound <= F(sys.float_info.max) else sys.float_info.max)
    allowed = 1 / Fraction(str(floor))
    assert x["remaining_information"] == float(max(allowed - information, F(0)))


def test_dataset_view_numbers() -> None:
    spec = _spec(epsilon=F(2), delta=F(1, 100), floors={"x": 0.01, "y": None})
    state = _dataset(spent_eps=F(1, 2), spent_delta=F(1, 1000), info={"x": F(4), "y": F(10**400)})
    state.records = 12
    view = dataset_view(state, spec)
    assert view["epsilon"] == {"budget": "2", "spent": "1/2", "remaining": "3/2", "remaining_float": 1.5}
    assert view["delta"]["remaining"] == "9/1000"
    assert view["records"] == 12
    assert view["fisher"]["x"] == {
        "floor": 0.01,
        "information": "4",
        "information_float": 4.0,
        "record_bound": 0.25,
        "remaining_information": 96.0,
        "step_queries": "refused",
    }
    # a column without floor: no remaining information; a huge total shown as the largest float
    y = view["fisher"]["y"]
    assert set(y) == {"floor", "information", "information_float", "record_bound"}
    assert y["floor"] is None and y["information_float"] == sys.float_info.max and y["record_bound"] == 0.0
    assert set(view["fisher"]) == {"x", "y"}  # text columns have no Fisher entry
    json.dumps(view)  # JSON-ready: no Fraction, no inf


def test_is_finite() -> None:
    assert is_finite(1.0) and is_finite([1.0, -2.0]) and is_finite([]) and is_finite("3")
    assert not is_finite(float("nan")) and not is_finite([1.0, float("inf")]) and not is_finite(None)
    assert not is_finite("x") and not is_finite([1.0, None])


def test_stored_value_errors_name_where_the_value_is() -> None:
    with pytest.raises(StoredValueError, match=r"^fisher_information: 'nope' is not JSON"):
        load_information("nope")
    row = {"name": "d", "spent_epsilon": "0", "spent_delta": "0", "fisher_information": "[]"}
    with pytest.raises(StoredValueError, match=r"^pn_datasets\['d'\]: '\[\]' is not a JSON object"):
        DatasetState.from_row(row)
    qrow = {
        "querier_id": 3,
        "dataset": "d",
        "epsilon": "1",
        "delta": "0",
        "fisher_floor": None,
        "spent_epsilon": "0",
        "spent_delta": "0",
        "fisher_information": '{"x": "-1"}',
    }
    with pytest.raises(StoredValueError, match=r"^pn_budgets\[3, 'd'\]: a negative information"):
        QuerierState.from_row(qrow)


def test_a_column_without_floor_does_not_stop_the_check_of_the_next() -> None:
    spec = _spec(floors={"y": None, "x": 0.01})  # the unfloored column comes first
    querier, dataset = _querier(), _dataset()
    with pytest.raises(Refusal, match="querier"):
        apply_charge(dataset, querier, spec, Charge(F(0), F(0), information={"y": F(1), "x": F(101)}))
    apply_charge(dataset, querier, spec, Charge(F(0), F(0), information={"y": F(1), "x": F(100)}))
    assert querier.information == dataset.information == {"y": F(1), "x": F(100)}


def test_views_list_every_floored_column_whatever_the_order() -> None:
    spec = _spec(floors={"y": None, "x": 0.01, "z": 0.5})
    view = querier_view(_querier(info={"x": F(2)}), spec)
    assert set(view["fisher"]) == {"x", "z"}
    assert view["fisher"]["x"]["information"] == "2" and view["fisher"]["z"]["information"] == "0"
    fresh = dataset_view(_dataset(info={"x": F(2)}), spec)["fisher"]
    assert set(fresh) == {"y", "x", "z"}
    assert fresh["z"] == {
        "floor": 0.5,
        "information": "0",
        "information_float": 0.0,
        "record_bound": None,
        "remaining_information": 2.0,
        "step_queries": "refused",
    }
    assert fresh["y"] == {"floor": None, "information": "0", "information_float": 0.0, "record_bound": None}


def _opened(spec: DatasetSpec, column: str = "x") -> DatasetSpec:
    """``spec`` with ``column`` opened to step queries (``step_queries = "allow"``)."""
    columns = dict(spec.columns)
    columns[column] = dataclasses.replace(columns[column], step_queries="allow")
    return dataclasses.replace(spec, columns=columns)


def test_allowed_step_answers_are_refused_to_a_querier_with_its_own_floor() -> None:
    spec = _opened(_spec(floors={"x": 0.01, "y": None}))
    steps = (("x", "histogram bins over it"),)
    charge = Charge(F(1, 10), F(0), information={"y": F(1)})
    own, dataset = _querier(floor=0.5), _dataset()
    with pytest.raises(StepQueryRefused, match=r"column 'x' has a Fisher floor: histogram bins over it .* a Fisher "
                       r"floor of its own \(`fisher_floor` 0\.5\)"):
        apply_charge(dataset, own, spec, charge, steps)
    assert (own.spent_epsilon, own.information, dataset.spent_epsilon, dataset.information) == (0, {}, 0, {})
    inherits = _querier()  # no floor of its own: the column's allowance holds
    apply_charge(dataset, inherits, spec, charge, steps)
    assert inherits.spent_epsilon == dataset.spent_epsilon == F(1, 10)
    apply_charge(dataset, own, spec, charge)  # no step construct: charged as before
    assert own.spent_epsilon == F(1, 10) and own.information == {"y": F(1)}


def test_views_say_what_each_floor_covers() -> None:
    spec = _opened(_spec(floors={"x": 0.01, "z": 0.5, "y": None}))
    inherits = querier_view(_querier(), spec)["fisher"]
    assert inherits["x"]["step_queries"] == "allowed"
    assert inherits["x"]["floor_covers"].startswith("differentiable answers only: the owner allows filters")
    assert "(step_queries = \"allow\")" in inherits["x"]["floor_covers"]
    assert inherits["z"]["step_queries"] == "refused" and "floor_covers" not in inherits["z"]
    own = querier_view(_querier(floor=0.5), spec)["fisher"]
    assert own["x"]["step_queries"] == own["z"]["step_queries"] == "refused" and "floor_covers" not in own["x"]
    fisher = dataset_view(_dataset(), spec)["fisher"]
    assert fisher["x"]["step_queries"] == "allowed" and fisher["x"]["floor_covers"] == inherits["x"]["floor_covers"]
    assert fisher["z"]["step_queries"] == "refused"
    assert "step_queries" not in fisher["y"]  # no floor: nothing to cover


# --- charges recorded together (a SQL statement's aggregates) ------------------------------------------------------


def test_charges_recorded_together_are_all_spent_or_none() -> None:
    spec, querier, dataset = _spec(), _querier(), _dataset()
    fits = [(Charge(F(1, 5), F(0), information={"x": F(1)}), ()), (Charge(F(1, 5), F(0), information={}), ())]
    apply_charges(dataset, querier, spec, fits)
    assert _snapshot(querier, dataset) == [(F(2, 5), F(0), {"x": F(1)})] * 2
    before = _snapshot(querier, dataset)
    # the first charge fits (ε 2/5 + 1/20 ≤ 1/2), the second does not: neither is spent
    too_much = [(Charge(F(1, 20), F(0), information={"x": F(1)}), ()), (Charge(F(1, 10), F(0)), ())]
    with pytest.raises(Refusal):
        apply_charges(dataset, querier, spec, too_much)
    assert _snapshot(querier, dataset) == before
    # a step answer refused to a querier with a floor of its own, after a charge that fit: neither is spent
    floored = _querier(floor=0.5)
    with pytest.raises(StepQueryRefused):
        apply_charges(_dataset(), floored, spec, [(Charge(F(1, 10), F(0)), ()),
                                                  (Charge(F(1, 10), F(0)), (("x", "a filter"),))])
    assert _snapshot(floored) == [(F(0), F(0), {})]
