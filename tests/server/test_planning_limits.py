"""SECURITY.md requirement 21: before a querier's budget is checked, a request costs bounded work.

A body over the parameter limit is refused with 422 naming the limit and never reaches the planner; a querier
known to be out of budget is refused before its body is planned; planning runs in a worker thread, never on the
event loop; plannings per querier are limited; the plan cache is bounded in bytes; the bound on parameters is an
upper bound of the statement's real parameters.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from privnoise.server import limits  # noqa: E402
from privnoise.server import service as service_module  # noqa: E402
from privnoise.server.answers import check_size, spec_of  # noqa: E402
from privnoise.server.querylang import QueryError  # noqa: E402
from tests.server._lab import DatasetDef, Lab  # noqa: E402

POLICIES = "\n".join(
    f'[policies.{kind}]\nmechanism = "laplace"\nepsilon = "1/10"'
    for kind in ("count", "sum", "mean", "variance", "histogram", "linear", "weighted_mean")
)
REGIONS = ("north", "south", "east", "west")


def _dataset() -> DatasetDef:
    rows = [{"x": 10.0 + i, "y": 1.0 + i % 3, "region": REGIONS[i % 4]} for i in range(12)]
    return DatasetDef(
        "d", rows, {"x": (10.0, 60.0), "y": (0.0, 5.0)}, POLICIES, "laplace", categories=REGIONS,
        step_queries={"x": "allow", "y": "allow"},
    )


@contextlib.contextmanager
def _lab(tmp_path: Path, **querier: Any) -> Iterator[Lab]:
    with Lab(tmp_path, [_dataset()]) as lab:
        lab.add_querier("alice", **querier)
        yield lab


@contextlib.contextmanager
def _spied(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, Any]]]:
    """Every call of the planner, with whether an event loop was running in its thread."""
    calls: list[dict[str, Any]] = []
    real = service_module.make_plan

    def spy(*args: Any, **kwargs: Any) -> Any:
        try:
            asyncio.get_running_loop()
            on_loop = True
        except RuntimeError:
            on_loop = False
        calls.append({"on_loop": on_loop, "thread": threading.current_thread().name})
        return real(*args, **kwargs)

    monkeypatch.setattr(service_module, "make_plan", spy)
    yield calls


def _maximal(i: int) -> dict[str, Any]:
    """A histogram of 64 edges with 8 conditions: above the parameter limit."""
    return {
        "kind": "histogram", "column": "x", "dataset": "d", "bins": [10 + 0.7 * k for k in range(64)],
        "where": [{"column": "x", "op": ">", "value": 10.0 + 0.001 * (i + k)} for k in range(8)],
    }


def test_a_body_over_the_parameter_limit_is_refused_before_planning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _lab(tmp_path) as lab, _spied(monkeypatch) as calls:
        for i in range(3):
            r = lab.post("alice", _maximal(i))
            assert r.status_code == 422, r.text
            assert f"limit of {limits.MAX_PARAMETERS}" in r.json()["error"]
        text = "histogram(x, bins = [" + ", ".join(str(10 + k) for k in range(50)) + "]) where " + " and ".join(
            f"x > {10 + k}" for k in range(8)
        )
        r = lab.post("alice", {"query": text, "dataset": "d"})
        assert r.status_code == 422 and "parameters" in r.json()["error"], r.text
        assert calls == []  # the planner never saw them
        assert lab.post("alice", {"query": "count()", "dataset": "d"}).status_code == 200


def test_planning_happens_in_a_worker_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with _lab(tmp_path) as lab, _spied(monkeypatch) as calls:
        r = lab.post("alice", {"query": "sum(x) where x > 12 and region = 'north'", "dataset": "d"})
        assert r.status_code == 200, r.text
        r = lab.post("alice", {"kind": "histogram", "column": "x", "bins": [10, 20, 60], "dataset": "d"})
        assert r.status_code == 200, r.text
    assert len(calls) == 2
    assert not any(c["on_loop"] for c in calls), calls


def test_an_exhausted_querier_is_refused_before_planning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with _lab(tmp_path, epsilon="1/10") as lab:
        assert lab.post("alice", {"query": "count()", "dataset": "d"}).status_code == 200
        # the first refusal plans (the budget is not yet known to be spent) and marks the querier
        first = lab.post("alice", {"query": "sum(x) where x > 11", "dataset": "d"})
        assert first.status_code == 429 and first.json()["error"] == "budget exceeded"
        with _spied(monkeypatch) as calls:
            for i in range(6):
                structured = {"kind": "sum", "column": "x", "dataset": "d",
                              "where": [{"column": "x", "op": ">", "value": 11.0 + i}]}
                r = lab.post("alice", structured)
                assert r.status_code == 429 and r.json()["error"] == "budget exceeded", r.text
                assert r.json()["budget"] == first.json()["budget"]
                r = lab.post("alice", {"query": f"mean(x) where x > {20 + i}"})
                assert r.status_code == 429, r.text
            assert calls == []


def test_a_querier_with_budget_left_for_a_cheaper_policy_is_not_marked(tmp_path: Path) -> None:
    policies = '[policies.count]\nmechanism = "laplace"\nepsilon = "1/100"\n[policies.sum]\nmechanism = "laplace"\nepsilon = "1"'
    rows = [{"x": 10.0 + i, "region": "north"} for i in range(4)]
    dataset = DatasetDef("d", rows, {"x": (10.0, 60.0)}, policies, "laplace")
    with Lab(tmp_path, [dataset]) as lab:
        lab.add_querier("alice", epsilon="1/2")
        assert lab.post("alice", {"query": "sum(x)"}).status_code == 429
        assert lab.post("alice", {"query": "count()"}).status_code == 200


def test_plannings_per_querier_are_limited() -> None:
    slots = limits.PlanningSlots(2)
    assert slots.take(1) and slots.take(1)
    assert not slots.take(1)  # a third one is refused at once
    assert slots.take(2)  # another querier is not affected
    slots.give(1)
    assert slots.take(1)


def test_the_plan_cache_is_bounded_in_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(service_module, "PLAN_CACHE_BYTES", 400_000)
    with _lab(tmp_path) as lab:
        service = lab.app.state.service
        for i in range(40):
            body = {"kind": "histogram", "column": "x", "dataset": "d", "bins": [10 + k for k in range(30)],
                    "where": [{"column": "y", "op": ">", "value": 0.01 * i}]}
            assert lab.post("alice", body).status_code == 200
        sizes = [size for _plan, size in service._plans.values()]
        assert sum(sizes) == service._plan_bytes <= 400_000
        assert len(sizes) < 40


QUERIES = [
    {"query": "count()"},
    {"query": "sum(x) where x > 1 and y <= 2 and region = 'east'"},
    {"query": "variance(x) where x > 1 and y <= 2 and region != 'east'"},
    {"query": "weighted_mean(x, y) where x > 1"},
    {"query": "mean(x) group by region"},
    {"query": "mean(x) where y > 1 and y < 4 and x != 20 group by region"},
    {"query": "histogram(region) where x > 12"},
    {"kind": "linear", "coefficients": {"x": 1.0, "y": -2.0}, "where": [{"column": "x", "op": ">", "value": 3}]},
    {"kind": "histogram", "column": "x", "bins": [10 + k for k in range(30)],
     "where": [{"column": "y", "op": ">", "value": float(k)} for k in range(4)]},
    {"kind": "histogram", "column": "x", "bins": [10 + 0.7 * k for k in range(64)],
     "where": [{"column": "region", "op": "=", "value": "north"}]},
]


@pytest.mark.parametrize("body", QUERIES, ids=range(len(QUERIES)))
def test_the_parameter_bound_is_an_upper_bound(tmp_path: Path, body: dict[str, Any]) -> None:
    with _lab(tmp_path) as lab:
        service = lab.app.state.service
        spec = spec_of(body | {"dataset": "d"})
        check_size(service, spec)
        plan = service.plan(spec)
        categories = len(REGIONS) if spec.group_by or (spec.kind == "histogram" and not spec.bins) else 0
        assert len(plan.parameters) <= limits.parameter_bound(spec, categories)


def test_the_limit_is_checked_on_the_parsed_query() -> None:
    spec = spec_of(_maximal(0))
    with pytest.raises(QueryError, match="limit of 4096"):
        check_size(type("S", (), {"config": type("C", (), {"datasets": {}})()})(), spec)  # type: ignore[arg-type]
