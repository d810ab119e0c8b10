"""A server plan is executed by the core: its ``core`` plan (components by name, finish, stated guarantee) is
released by :func:`privnoise.planning.execute` into a :class:`~privnoise.Release`, which the answer serialises.

Checked against the planner's own statement and charge, computed apart: the guarantee object states what is charged
(ε and δ in floats of the exact rationals, the Fisher information per record), the release draws one noise per
component through ``Component.add`` in the plan's order, and the JSON accuracy is the release's interval at 95 %.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from sqlalchemy import Table
from sqlalchemy.engine import Engine

from privnoise.guarantees import DifferentialPrivacyGuarantee
from privnoise.planning import Component
from privnoise.results import Release
from privnoise.server.accuracy import LEVEL
from privnoise.server.config import PolicySpec
from privnoise.server.planner import make_plan
from privnoise.server.plans import RecordInformation, serialised
from privnoise.server.querylang import parse_query
from tests.server._plan_lab import ROWS, database, dataset, gaussian, laplace

N = len(ROWS)


@pytest.fixture(scope="module")
def db() -> tuple[Engine, Table]:
    return database()


def _plan(db: tuple[Engine, Table], text: str, spec: Any, records: int = N) -> Any:
    engine, table = db
    return make_plan(parse_query(text), spec, table, records=records, dialect=engine.dialect)


@pytest.mark.parametrize("text", ["count()", "sum(x)", "mean(x)", "variance(x)", "mean(x) group by region",
                                  "histogram(region)", "sum(x) where region = 'north'"])
def test_a_dp_answer_is_its_core_plan_executed_with_the_charged_guarantee(db: tuple[Engine, Table], text: str) -> None:
    plan = _plan(db, text, dataset(laplace))
    core = plan.core
    assert list(core.components) == [c.name for c in plan.components]
    assert all(core.components[c.name] is c for c in plan.components)
    stated = core.guarantee()
    assert isinstance(stated, DifferentialPrivacyGuarantee)
    assert (stated.epsilon, stated.delta) == (float(plan.charge.epsilon), float(plan.charge.delta))
    assert stated.adjacency == plan.guarantee()["adjacency"] == "one record added, removed or replaced"
    assert stated.as_dict().items() <= plan.guarantee().items()

    seen: list[tuple[str, Any]] = []
    original = Component.add

    def spy(self: Component[Any], values: Any, generator: Any) -> Any:
        seen.append((self.name, values))
        return original(self, values, generator)

    true = [np.full(c.dim, 3.0) if c.dim > 1 else 3.0 for c in plan.components]
    Component.add = spy  # type: ignore[method-assign]
    try:
        noisy: dict[str, Any] = {}
        release = plan.execute(true, noisy)
    finally:
        Component.add = original  # type: ignore[method-assign]
    assert [name for name, _ in seen] == [c.name for c in plan.components] == list(noisy)
    assert isinstance(release, Release) and release.guarantee is stated
    assert release.value == serialised(release)["value"]
    expected = plan.combine(list(noisy.values()))
    np.testing.assert_array_equal(np.asarray(release.value, dtype=float), np.asarray(expected, dtype=float))
    accuracy = serialised(release)["accuracy"]
    assert accuracy == plan.stated_accuracy(list(noisy.values()))
    low, high, coverage = release.interval(LEVEL)  # type: ignore[misc]
    assert accuracy["low"] == np.asarray(low, dtype=float).tolist() and accuracy["level"] == LEVEL
    assert coverage >= LEVEL - 1e-12
    wide = release.interval(0.999)  # type: ignore[misc]
    assert np.all(np.asarray(wide[0]) <= np.asarray(low)) and np.all(np.asarray(wide[1]) >= np.asarray(high))
    if plan.keys is not None:
        assert serialised(release)["keys"] == [list(k) if isinstance(k, tuple) else k for k in plan.keys]


@pytest.mark.parametrize("mechanism", ["fisher-gaussian", "fisher-cosine"])
def test_a_fisher_answer_states_the_information_per_record_it_charges(db: tuple[Engine, Table], mechanism: str) -> None:
    policy = ((lambda kind: PolicySpec(kind, mechanism, quality=0.5)) if mechanism == "fisher-gaussian"
              else (lambda kind: PolicySpec(kind, mechanism, half_width=0.75)))
    plan = _plan(db, "mean(x)", dataset(policy, kinds=("sum", "mean", "linear", "identity")), records=40)
    stated = plan.core.guarantee()
    assert isinstance(stated, RecordInformation) and stated.notion == "fisher-information"
    # 𝓘 of one coordinate (Gaussian of variance Q: 1/Q; cos² on [−h, h]: π²/h²) times the slope 1/n, squared
    per_coordinate = 1.0 / 0.5 if mechanism == "fisher-gaussian" else math.pi**2 / 0.75**2
    assert stated.information["x"] == pytest.approx(per_coordinate / 40**2, rel=1e-9)
    assert stated.information == plan.guarantee()["per_record_information"]
    assert "x" in stated.summary() and f"{stated.information['x']:g}" in stated.summary()
    release = plan.execute([12.5])
    assert release.guarantee is stated and math.isfinite(release.value)


def test_an_identity_release_states_one_record_replaced(db: tuple[Engine, Table]) -> None:
    plan = _plan(db, "identity(x)", dataset(laplace))
    assert plan.core.guarantee().adjacency == "one record replaced"  # type: ignore[attr-defined]
    release = plan.execute([np.full(N, 20.0)])
    assert np.shape(release.value) == (N,)


def test_a_quantile_is_finished_from_the_exponential_mechanisms_choice(db: tuple[Engine, Table]) -> None:
    spec = dataset(lambda kind: PolicySpec(kind, "exponential", epsilon=1) if kind == "quantile" else laplace(kind))
    plan = _plan(db, "quantile(x, 0.5)", spec)
    release = plan.finished([31.25])
    assert release.value == 31.25 and release.noise == [] and release.interval is None
    stated = serialised(release)["accuracy"]
    assert stated["rank_radius"] == pytest.approx(plan.stated_accuracy([])["rank_radius"])
    assert release.radius is not None and release.radius(0.99) > release.radius(LEVEL)


def test_components_of_one_plan_must_have_distinct_names() -> None:
    from privnoise.server.plans import core_plan

    twice = [Component(name="sum", noise=None, sensitivity=1.0),  # type: ignore[arg-type]
             Component(name="sum", noise=None, sensitivity=1.0)]  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="distinct names"):
        core_plan("sum", twice, lambda v: v, None, laplace("sum"))


@pytest.mark.parametrize(("text", "policy", "epsilon", "delta"), [
    ("mean(x)", laplace("mean", Fraction(3, 7)), Fraction(3, 7), Fraction(0)),
    ("variance(x)", gaussian("variance", Fraction(2, 3), Fraction(1, 10**7)), Fraction(2, 3), Fraction(1, 10**7)),
    ("histogram(region)", laplace("histogram", Fraction(5, 4)), Fraction(5, 4), Fraction(0)),
])
def test_what_an_answer_charges_is_its_core_plans_cost(db: tuple[Engine, Table], text: str, policy: PolicySpec,
                                                       epsilon: Fraction, delta: Fraction) -> None:
    # the policy's declared ε and δ, exact
    plan = _plan(db, text, dataset(lambda kind: dataclasses.replace(policy, kind=kind)))
    cost = plan.core.cost()
    assert (cost.epsilon, cost.delta) == (epsilon, delta) == (plan.charge.epsilon, plan.charge.delta)
    assert [(e.epsilon, e.delta) for e in cost.events] == [(float(epsilon), float(delta))]
    assert plan.charged["epsilon"] == f"{epsilon.numerator}/{epsilon.denominator}".removesuffix("/1")


def test_a_fisher_answer_charges_no_epsilon_and_its_information(db: tuple[Engine, Table]) -> None:
    plan = _plan(db, "mean(x)", dataset(lambda kind: PolicySpec(kind, "fisher-gaussian", quality=0.5),
                                        kinds=("sum", "mean", "linear", "identity")), records=40)
    cost = plan.core.cost()
    assert (cost.epsilon, cost.delta, cost.events) == (0, 0, ())
    assert plan.charge.epsilon == 0 and list(plan.charge.information) == ["x"]
    information = plan.charge.information["x"]  # (1/Q)/n² computed apart, rounded up: never below
    assert Fraction(1, 800) <= information <= Fraction(1, 800) * (1 + Fraction(1, 10**12))


def test_a_quantile_costs_one_selection_per_level(db: tuple[Engine, Table]) -> None:
    spec = dataset(lambda kind: PolicySpec(kind, "exponential", epsilon=Fraction(3, 2)) if kind == "quantile"
                   else laplace(kind))
    plan = _plan(db, "quantile(x, [0.25, 0.5, 0.75])", spec)
    cost = plan.core.cost()
    assert [type(e).__name__ for e in cost.events] == ["SelectionEvent"] * 3
    declared = plan.policy.epsilon  # the dataset's policy for quantiles
    assert [e.epsilon for e in cost.events] == [float(declared / 3)] * 3  # ε split evenly over the levels
    assert (cost.epsilon, cost.delta) == (declared, 0) == (plan.charge.epsilon, plan.charge.delta)
