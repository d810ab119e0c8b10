"""The core's plan and executor: every component's noise is drawn on its aggregate, in the plan's order, from one
generator; the release states the plan's guarantee for the plan's neighbours; a plan that cannot be executed is
refused by name before anything is drawn.

The noise law is checked against scipy's Laplace law at b = Δ/ε (the closed form, not the calibrator), with a power
check at a 30 % wrong scale; the sensitivities against the per-row ranges written out here.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from privnoise.core import RecordReplaced, UnitAddedOrRemoved
from privnoise.dp.families import FAMILIES
from privnoise.exceptions import InvalidParameterError
from privnoise.planning import Component, Plan, execute, group_plan, split
from privnoise.planning.estimates import count_finish

LAPLACE = FAMILIES["laplace"]


def _mean_plan(adjacency, epsilon: float = 1.0) -> Plan:
    plan = Plan("mean", LAPLACE, adjacency, price=Fraction(epsilon))
    plan.add("sum", plan.adjacency.sum(-5.0, 5.0), split(plan.price, 2))
    plan.add("count", plan.adjacency.count(), split(plan.price, 2))
    plan.finish = lambda noisy: {"value": float(noisy["sum"][0] / max(noisy["count"][0], 1.0))}
    return plan


def test_execute_draws_every_component_in_the_plans_order_from_one_generator() -> None:
    plan = _mean_plan(UnitAddedOrRemoved(3))
    release = execute(plan, {"count": [400.0], "sum": [37.0]}, np.random.default_rng(5), query={"query": "mean"})
    generator = np.random.default_rng(5)  # the same draws by hand: the sum's noise first, then the count's
    s_hat = plan.components["sum"].add([37.0], generator)
    n_hat = plan.components["count"].add([400.0], generator)
    assert release.value == float(s_hat[0] / n_hat[0])
    assert [part["name"] for part in release.noise] == ["sum", "count"]


def test_the_release_states_the_plans_price_for_its_neighbours() -> None:
    unit = execute(_mean_plan(UnitAddedOrRemoved(3), 0.5), {"sum": [1.0], "count": [9.0]},
                   np.random.default_rng(1), query={})
    assert unit.guarantee.epsilon == 0.5 and unit.guarantee.delta == 0.0
    assert unit.guarantee.adjacency == "one unit added or removed (at most 3 rows used)"
    replaced = execute(_mean_plan(RecordReplaced()), {"sum": [1.0], "count": [9.0]}, np.random.default_rng(1),
                       query={})
    assert replaced.guarantee.adjacency == "one record added, removed or replaced"
    stated = _mean_plan(UnitAddedOrRemoved(2))
    stated.stated = "one household added or removed"
    assert stated.guarantee().adjacency == "one household added or removed"


@pytest.mark.parametrize(("adjacency", "sum_sensitivity", "count_sensitivity"), [
    (UnitAddedOrRemoved(3), 3 * 5.0, 3.0),  # k rows of g ∈ [−5, 5], each |g| ≤ 5
    (RecordReplaced(), 10.0, 1.0),  # one g replaced: max(high − low, |low|, |high|)
])
def test_the_sensitivities_are_those_of_the_plans_adjacency(adjacency, sum_sensitivity, count_sensitivity) -> None:
    plan = _mean_plan(adjacency)
    assert plan.components["sum"].sensitivity == sum_sensitivity
    assert plan.components["count"].sensitivity == count_sensitivity


def test_the_noise_drawn_by_execute_follows_the_laplace_law_of_its_share(assert_ks) -> None:
    epsilon, k, n = 0.8, 2, 200_000
    plan = Plan("sum", LAPLACE, UnitAddedOrRemoved(k), price=Fraction(epsilon).limit_denominator())
    plan.add("sum", plan.adjacency.sum(0.0, 10.0), plan.price)
    plan.finish = lambda noisy: {"value": noisy["sum"]}
    release = execute(plan, {"sum": np.zeros(n)}, np.random.default_rng(3), query={})
    b = k * 10.0 / epsilon  # Δ/ε, Δ = k·max(|low|, |high|)
    grid = math.ldexp(1.0, plan.components["sum"].grid_exponent)  # the output grid: far below KS's resolution here
    assert grid < b * 1e-3
    assert_ks(release.value, stats.laplace(scale=b).cdf, [stats.laplace(scale=1.3 * b).cdf,
                                                          stats.laplace(scale=b / 1.3).cdf])


def test_a_plan_without_an_aggregate_or_a_finish_is_refused_before_any_draw() -> None:
    plan = _mean_plan(UnitAddedOrRemoved(1))
    generator = np.random.default_rng(0)
    state = generator.bit_generator.state
    with pytest.raises(InvalidParameterError, match=r"no value for component\(s\) \['count'\]"):
        execute(plan, {"sum": [1.0]}, generator, query={})
    plan.finish = None
    with pytest.raises(InvalidParameterError, match="has no `finish`"):
        execute(plan, {"sum": [1.0], "count": [1.0]}, generator, query={})
    assert generator.bit_generator.state == state  # nothing was drawn


def test_a_plan_of_counts_finishes_into_a_non_negative_integer() -> None:
    plan = Plan("count", LAPLACE, UnitAddedOrRemoved(1), price=Fraction(1, 10))
    count = plan.add("count", plan.adjacency.count(), plan.price, integer=True, discrete=True)
    plan.finish = count_finish(count.law)
    values = [execute(plan, {"count": [0.0]}, np.random.default_rng(seed), query={}) for seed in range(40)]
    assert all(isinstance(r.value, int) and r.value >= 0 for r in values)
    assert any(r.clamped for r in values)  # a noisy count below 0 is clipped, and says so
    assert count.family.name == "discrete-laplace" and count.scale == 10.0  # t = Δ/ε on ℤ


def test_selected_keys_are_refused_when_rows_may_be_replaced() -> None:
    plan = Plan("group count", LAPLACE, RecordReplaced(), price=Fraction(1))
    with pytest.raises(InvalidParameterError, match="declare the keys"):
        group_plan(plan, unknown_keys=True, delta=Fraction(1, 10**6), count_share=plan.price, integer=True)
    declared, threshold = group_plan(plan, unknown_keys=False, delta=Fraction(0), count_share=plan.price,
                                     integer=True)
    assert threshold is None and declared.sensitivity == 2.0  # one record leaves one cell and enters another (ℓ1)


def test_a_component_no_family_calibrated_states_no_law_and_no_event() -> None:
    plan = _mean_plan(UnitAddedOrRemoved(1))
    noise = plan.components["sum"].noise
    bare = Component(name="values", noise=noise, sensitivity=1.0, information=0.5, slopes={"x": 1.0}, dim=3)
    with pytest.raises(ValueError, match="states no error law"):
        bare.law  # noqa: B018
    with pytest.raises(ValueError, match="has no event"):
        bare.event(scalar=True)
