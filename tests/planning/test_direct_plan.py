"""A direct release (pn.release) is the core's plan of one component, executed by each way of computing it."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import privnoise as pn
from privnoise.planning import Plan
from privnoise.random import default_rng
from privnoise.release.direct import COMPONENT, direct_plan, output_grid


def _laplace_mean(n: int) -> tuple[pn.queries.Query, pn.mechanisms.Noise]:
    q = pn.queries.mean(n, bounds=(0.0, 1.0))
    return q, pn.dp.laplace_for_epsilon(0.5, sensitivity=q.sensitivity("l1"))


def test_the_plan_holds_one_component_and_states_the_designs_guarantee() -> None:
    q, noise = _laplace_mean(200)
    plan = direct_plan(q, noise, noise, harden=True, delta=None)
    assert isinstance(plan.core, Plan)
    assert list(plan.core.components) == [COMPONENT]
    assert plan.component.noise is noise
    assert plan.core.family is None  # its guarantee is the design's, stated by the plan
    # ε of Laplace noise for the mean: Δ₁/b with Δ₁ = 1/n and b from the calibration, computed apart
    assert plan.core.guarantee().epsilon == pytest.approx((1.0 / 200) / noise.scale, rel=1e-12)
    assert plan.grid == math.ldexp(1.0, plan.exponent)


@pytest.mark.parametrize("kind", ["mean", "identity", "nonlinear"])
def test_pn_release_is_the_plan_executed(kind: str) -> None:
    x = np.linspace(0.1, 0.9, 300)
    if kind == "mean":
        q, noise = _laplace_mean(300)
    elif kind == "identity":
        q = pn.queries.identity(300, bounds=(0.0, 1.0))
        noise = pn.dp.gaussian_for_epsilon_delta(1.0, 1e-6, sensitivity=q.sensitivity("l2"), dim=300)
    else:
        q = pn.queries.variance(300, bounds=(0.0, 1.0))
        noise = pn.dp.laplace_for_epsilon(1.0, sensitivity=q.sensitivity("l1"))
    released = pn.release(x, q, noise, rng=7, delta=1e-6)
    plan = direct_plan(q, noise, noise, harden=True, delta=1e-6, x=None if kind != "nonlinear" else x)
    exact = np.asarray(q.evaluate(x), dtype=float)
    by_plan = plan.execute(exact, default_rng(7), clamped=0)
    np.testing.assert_array_equal(np.asarray(released.value), np.asarray(by_plan.value))
    assert released.guarantee.as_dict() == by_plan.guarantee.as_dict()
    assert released.noise and released.noise[0]["name"] == COMPONENT
    assert "sensitivity" not in released.noise[0]  # the design states the guarantee, not a component sensitivity
    # every output is an exact multiple of the grid, and not the exact answer
    values = np.atleast_1d(np.asarray(released.value))
    assert np.all(np.mod(values, released.grid) == 0.0)
    assert not np.array_equal(values, np.atleast_1d(exact))


def test_unhardened_release_adds_the_raw_noise() -> None:
    q, noise = _laplace_mean(100)
    x = np.full(100, 0.5)
    released = pn.release(x, q, noise, rng=3, harden=False)
    assert released.grid == 0.0
    raw = 0.5 + float(noise.sample(rng=default_rng(3)))
    assert released.value == pytest.approx(raw, rel=0, abs=1e-15)


def test_a_policy_release_stays_in_its_box() -> None:
    q = pn.queries.mean(50, bounds=(0.0, 1.0))
    policy = pn.fisher.optimal_noise(q, output_range=(0.0, 1.0))
    x = np.ones(50)  # the answer at the box's edge
    values = [pn.release(x, q, policy, rng=seed).value for seed in range(40)]
    assert min(values) >= 0.0 and max(values) <= 1.0
    assert len(set(values)) > 5


def test_a_release_that_is_not_finite_is_refused() -> None:
    q, noise = _laplace_mean(10)
    plan = direct_plan(q, noise, noise, harden=True, delta=None)
    with pytest.raises(pn.exceptions.InvalidParameterError, match="not be finite"):
        plan.finished(np.array(np.inf), clamped=0)


def test_a_vector_release_written_to_a_file_holds_the_finished_values(tmp_path: Any) -> None:
    c = np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0], [0.5, 0.5, 0.5, 0.5]])
    q = pn.queries.linear(c, bounds=(0.0, 1.0))
    noise = pn.dp.gaussian_for_epsilon_delta(1.0, 1e-6, sensitivity=q.sensitivity("l2"), dim=3)
    x = np.array([0.1, 0.2, 0.3, 0.4])
    in_memory = pn.release(x, q, noise, rng=11, delta=1e-6)
    written = pn.release(x, q, noise, rng=11, delta=1e-6, out=tmp_path / "release.npy")
    assert written.value is None and written.interval is None and written.output is not None
    np.testing.assert_array_equal(np.load(written.output), in_memory.value)
    assert written.guarantee.as_dict() == in_memory.guarantee.as_dict() and written.grid == in_memory.grid
    assert not np.array_equal(in_memory.value, c @ x)  # noise was added


def test_the_output_grid_and_the_records_its_arithmetic_takes() -> None:
    # hardened continuous noise: the noise's own grid, coarsened until the declared outputs lie within 2^50 steps;
    # the records then within 2^50 steps of that grid divided by the query's largest row sum (written apart here)
    q = pn.queries.sum_query(4, bounds=(0.0, 1.0))
    noise = pn.dp.laplace_for_epsilon(1.0, sensitivity=q.sensitivity("l1"))
    k, reach = output_grid(noise, q, True)
    assert k == noise.default_grid_exponent()
    assert reach == 2.0**50 * math.ldexp(1.0, k) / 4  # the sum's row sums to 4
    huge = pn.queries.identity(3, bounds=(0.0, 2.0**60))
    wide = pn.mechanisms.Laplace(scale=np.ones(3))  # small noise, outputs declared up to 2^60
    k_wide, reach_wide = output_grid(wide, huge, True)
    assert k_wide > wide.default_grid_exponent() and 2.0**60 / math.ldexp(1.0, k_wide) < 2.0**50
    assert reach_wide == 2.0**50 * math.ldexp(1.0, k_wide)  # identity: row sums of 1
    assert output_grid(noise, q, False) == (None, math.inf)  # unhardened continuous noise: no grid


def test_the_guarantee_is_stated_at_the_grid_the_release_is_snapped_to() -> None:
    q, noise = _laplace_mean(64)
    x = np.full(64, 0.25)
    hardened, raw = pn.release(x, q, noise, rng=1), pn.release(x, q, noise, rng=1, harden=False)
    assert hardened.grid > 0.0 and raw.grid == 0.0
    assert hardened.guarantee.as_dict()["fisher"]["grid"] == hardened.grid
    assert raw.guarantee.as_dict()["fisher"].get("grid", 0.0) == 0.0  # stated only for a grid
    plan = direct_plan(q, noise, noise, harden=True, delta=None)
    assert plan.core.label == q.name and plan.finished(np.array(0.5), clamped=3).clamped_records == 3
    assert type(hardened.value) is float  # a scalar query answers a Python float


def test_the_unhardened_interval_is_the_noise_law_alone() -> None:
    q, noise = _laplace_mean(50)
    released = pn.release(np.full(50, 0.5), q, noise, rng=2, harden=False)
    low, high, coverage = released.interval(0.95)
    b = float(noise.scale)  # a Laplace interval of level 1 − α is ± b·log(1/α), no rounding term on no grid
    assert high - released.value == pytest.approx(b * math.log(20.0), rel=1e-12) and coverage == 0.95


def test_a_release_rounded_past_the_promised_box_is_kept_on_the_grid_points_inside() -> None:
    q = pn.queries.mean(100, bounds=(0.0, 1.0))
    policy = pn.fisher.optimal_noise(q, output_range=(0.1, 0.7))  # neither end is a grid point
    x = np.full(100, 0.5)
    plan = direct_plan(q, policy.law_at(q, x), policy, harden=True, delta=None, x=x)
    step = plan.grid
    above, below = plan.finished(np.array(0.7 + step / 3), clamped=0), plan.finished(np.array(0.1 - step / 3), clamped=0)
    assert above.value == math.floor(0.7 / step) * step <= 0.7 and below.value == math.ceil(0.1 / step) * step >= 0.1
    assert above.interval is None  # a design with a box states no additive interval
    inside = plan.finished(np.array(0.4), clamped=0)
    assert inside.value == 0.4


def test_a_caller_that_states_finite_values_is_not_checked_again() -> None:
    q, noise = _laplace_mean(10)
    plan = direct_plan(q, noise, noise, harden=True, delta=None)
    assert math.isinf(plan.finished(np.array(np.inf), clamped=0, finite=True).value)  # no second pass over the data
