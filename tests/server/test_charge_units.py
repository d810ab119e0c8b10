"""The charge path's arithmetic on its own: interval products and sensitivities of bounds that do not start at 0,
the Fisher information of a plan's components (Σ over components of (slope·√𝓘_w)², per column), the guarantee
with the record bounds after a charge, and the retries of :meth:`Service.charge` on a stale plan.

Expected values are worked out by hand from the definitions (neighbours add, remove or replace one record).
"""

from __future__ import annotations

import math
from concurrent.futures import Future
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from privnoise.exceptions import InvalidParameterError
from privnoise.planning import Component
from privnoise.server.charging import StalePlan
from privnoise.server.planner import Plan, _range_product, _sensitivity
from privnoise.server.plans import information_of
from privnoise.server.querylang import QueryError
from privnoise.server.service import Service

F = Fraction


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ((10.0, 60.0), (0.5, 2.0), (5.0, 120.0)),
        ((-5.0, 3.0), (2.0, 3.0), (-15.0, 9.0)),
        ((-60.0, -10.0), (1.0, 1.5), (-90.0, -10.0)),
        ((-5.0, 3.0), (-5.0, 3.0), (-15.0, 25.0)),
        ((-3.0, -2.0), (-7.0, -5.0), (10.0, 21.0)),
        ((2.0, 3.0), (-4.0, 5.0), (-12.0, 15.0)),
    ],
)
def test_range_product_is_the_interval_product(a: Any, b: Any, expected: Any) -> None:
    assert _range_product(a, b) == expected


@pytest.mark.parametrize(
    ("lo", "hi", "expected"),
    [
        (10.0, 60.0, 60.0),  # adding a record at 60 changes the sum by 60, not 50
        (-60.0, -10.0, 60.0),  # removing a record at −60
        (-5.0, 3.0, 8.0),  # replacing −5 by 3
        (0.0, 1.0, 1.0),
        (-1000.0, 2.0, 1002.0),
        (0.25, 0.5, 0.5),
    ],
)
def test_sensitivity_is_the_largest_change_of_one_record(lo: float, hi: float, expected: float) -> None:
    assert _sensitivity(lo, hi) == expected
    # by enumeration: add or remove a record at any value, or replace one value by another
    corners = [lo, hi]
    brute = max([abs(v) for v in corners] + [abs(u - v) for u in corners for v in corners])
    assert _sensitivity(lo, hi) == brute


def _component(name: str, information: float | None, slopes: dict[str, float]) -> Component:
    noise: Any = None  # _information reads only the noise's information and the slopes
    return Component(name=name, noise=noise, sensitivity=1.0, information=information, slopes=slopes)


def test_information_sums_slope_squared_times_noise_information_per_column() -> None:
    components = [
        _component("weighted_sum", 0.25, {"x": 2.0, "w": 3.0}),  # 2²·0.25 = 1, 3²·0.25 = 9/4
        _component("weight_sum", 16.0, {"w": 1.0}),  # 16
        _component("count", 16.0, {}),
    ]
    assert information_of(components) == {"x": F(1), "w": F(9, 4) + F(16)}
    assert all(type(v) is Fraction for v in information_of(components).values())


def test_information_skips_custom_noise_and_zero_slopes() -> None:
    components = [_component("sum", None, {"x": 1.0}), _component("sum", 4.0, {"x": 0.0, "y": 0.5})]
    assert information_of(components) == {"y": F(1)}
    assert information_of([]) == {}


def test_information_is_the_smallest_double_not_below_the_exact_product() -> None:
    # slope²·𝓘 in rationals, then rounded up: never below the information released, at most one ulp above
    rng = np.random.default_rng(8)
    for slope, information in zip(rng.uniform(1e-3, 1e3, 200), rng.uniform(1e-3, 1e3, 200), strict=True):
        exact = F(float(slope)) ** 2 * F(float(information))
        (charged,) = information_of([_component("mean", float(information), {"x": float(slope)})]).values()
        assert charged >= exact
        assert F(math.nextafter(float(charged), 0.0)) < exact
    # (slope·√𝓘)² in floats is below the exact value here, by an ulp
    slope, information = 0.1, 56.924695443473
    exact = F(slope) ** 2 * F(information)
    assert F((slope * math.sqrt(information)) ** 2) < exact
    assert information_of([_component("mean", information, {"x": slope})])["x"] >= exact


@pytest.mark.parametrize(("information", "slope"), [(1e200, 1e200), (1e-200, 1e-200)])
def test_information_refuses_what_overflows_or_underflows(information: float, slope: float) -> None:
    with pytest.raises(InvalidParameterError, match="column 'x'"):
        information_of([_component("sum", information, {"x": slope})])


def _plan(base: dict[str, Any]) -> Plan:
    fields: dict[str, Any] = {name: None for name in Plan.__dataclass_fields__}
    fields["guarantee_base"] = base
    return Plan(**fields)


def test_guarantee_adds_the_record_bounds_after_the_charge() -> None:
    base = {"notion": "fisher-information", "per_record_information": {"x": 2.0}}
    plan = _plan(base)
    after = {"epsilon": {}, "fisher": {"x": {"record_bound": 0.25}, "y": {"record_bound": None}}}
    out = plan.guarantee(after)
    assert out == {**base, "record_bound_after": {"x": 0.25, "y": None}}
    assert "record_bound_after" not in base  # the cached base is not changed
    assert plan.guarantee() == base and plan.guarantee() is not base
    assert plan.guarantee({"epsilon": {}}) == base


class _Committer:
    """Raises StalePlan ``stale`` times, then charges."""

    def __init__(self, stale: int) -> None:
        self.stale = stale
        self.submitted: list[tuple[Any, int]] = []

    def submit(self, plan: Any, querier_id: int) -> Future[Any]:
        self.submitted.append((plan, querier_id))
        future: Future[Any] = Future()
        if len(self.submitted) <= self.stale:
            future.set_exception(StalePlan(100 + len(self.submitted)))
        else:
            future.set_result(("charged", plan))
        return future


def _service(stale: int) -> tuple[Service, _Committer, list[Any]]:
    service = Service.__new__(Service)
    committer = _Committer(stale)
    refreshed: list[Any] = []

    def refresh(plan: Any, records: int | None) -> Any:
        refreshed.append((plan, records))
        return f"plan for {records}"

    service.committer = committer  # type: ignore[assignment]
    service.refreshed = refresh  # type: ignore[method-assign]
    return service, committer, refreshed


@pytest.mark.parametrize("stale", [0, 1, 2])
def test_charge_replans_a_stale_plan_up_to_three_attempts(stale: int) -> None:
    service, committer, refreshed = _service(stale)
    plan, charged = service.charge("plan", 7)  # type: ignore[arg-type]
    expected = "plan" if stale == 0 else f"plan for {100 + stale}"
    assert plan == expected and charged == ("charged", expected)
    assert len(committer.submitted) == stale + 1 and all(q == 7 for _, q in committer.submitted)
    assert [r for _, r in refreshed] == [101, 102][:stale]
    assert [p for p, _ in refreshed] == ["plan", "plan for 101"][:stale]  # each stale plan is the one remade


def test_charge_gives_up_after_three_stale_plans() -> None:
    service, committer, refreshed = _service(3)
    with pytest.raises(QueryError, match="re-imported"):
        service.charge("plan", 7)  # type: ignore[arg-type]
    assert len(committer.submitted) == 3 and len(refreshed) == 3


def test_sensitivity_of_a_degenerate_range_is_its_magnitude() -> None:
    assert _sensitivity(-2.0, -2.0) == 2.0 and math.isfinite(_sensitivity(-1e100, 1e100))


def _components(policy: Any, n: int) -> list[Component]:
    from privnoise.server.mechanisms import build_noise, noise_information

    noise = build_noise(policy, sensitivity=2.0, share=n)
    return [Component(name=f"c{i}", noise=noise, sensitivity=2.0, information=noise_information(noise, policy),
                      slopes={"x": 1.0}) for i in range(n)]


def test_the_stated_dp_guarantee_is_the_charge() -> None:
    from privnoise.dp.accounting import Charge
    from privnoise.server.config import PolicySpec
    from privnoise.server.mechanisms import describe_noise
    from privnoise.server.plans import plan_guarantee

    policy = PolicySpec("mean", "gaussian", epsilon=F(3, 10), delta=F(1, 10**6))
    components = _components(policy, 2)
    charge = Charge(F(3, 10), F(1, 10**6), information={"x": F(1, 4)})
    noise = [describe_noise(c.noise) for c in components]
    assert plan_guarantee(policy, components, charge, False) == {
        "notion": "differential-privacy",
        "epsilon": 0.3,
        "delta": 1e-6,
        "epsilon_exact": "3/10",
        "delta_exact": "1/1000000",
        "adjacency": "one record added, removed or replaced",
        "composition": "2 hardened release(s), (ε, δ) split evenly",
        "noise": noise,
        "per_record_information": {"x": 0.25},
    }
    laplace = PolicySpec("identity", "laplace", epsilon=F(1, 2))
    out = plan_guarantee(laplace, _components(laplace, 1), Charge(F(1, 2), None), True)
    assert (out["epsilon"], out["delta"], out["delta_exact"]) == (0.5, 0.0, "0")
    assert out["adjacency"] == "one record replaced" and out["composition"].startswith("1 hardened")
    assert plan_guarantee(laplace, [], Charge(None, None), False)["epsilon"] == 0.0


def test_the_stated_fisher_guarantee_is_the_information_charged() -> None:
    from privnoise.dp.accounting import Charge
    from privnoise.server.config import PolicySpec
    from privnoise.server.mechanisms import describe_noise
    from privnoise.server.plans import plan_guarantee

    for mechanism, note in [
        ("fisher-cosine", "bounded cos² noise gives no pure ε-DP"),
        ("fisher-gaussian", ""),
    ]:
        policy = PolicySpec("sum", mechanism, half_width=0.5, quality=0.5)
        components = _components(policy, 1)
        charge = Charge(F(0), F(0), information={"x": F(4), "y": F(0), "z": F(1, 2)})
        assert plan_guarantee(policy, components, charge, False) == {
            "notion": "fisher-information",
            "per_record_information": {"x": 4.0, "y": 0.0, "z": 0.5},
            "record_bound_of_this_release": {"x": 0.25, "y": None, "z": 2.0},
            "noise": [describe_noise(c.noise) for c in components],
            "note": note,
        }


def test_the_stated_fem_guarantee_carries_the_design() -> None:
    from privnoise.dp.accounting import Charge
    from privnoise.server.config import PolicySpec
    from privnoise.server.mechanisms import describe_design
    from privnoise.server.plans import plan_guarantee

    policy = PolicySpec("identity", "fisher-fem", support="box:-1,-1;1,1", tolerance=1e-3)
    out = plan_guarantee(policy, _components(policy, 1), Charge(F(0), F(0), information={"x": F(10)}), True)
    assert out["design"] == describe_design(policy)
    assert out["note"].startswith(
        "bounded noise gives no pure ε-DP; records are noised in consecutive blocks"
    )
    assert out["record_bound_of_this_release"] == {"x": 0.1}
