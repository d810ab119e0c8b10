"""``POST /v1/queries?dry_run=true``: the price and the expected accuracy of a query, charging nothing, reading no
data, behind the same key check and the same policy refusals as the real query.

* the price is the real query's charge, as decimals with its exact rationals; the accuracy radius of a count and a
  sum is the half-width of the interval the real answer then states (the same noise law), and a mean's accuracy
  is a formula in n;
* nothing changes: budgets, the dataset's budget, the ledger; no noise is drawn and no statement is sent to the
  data (the data reader is replaced by one that fails if it is used);
* a query the configuration refuses, or one the budget would refuse, is a dry run saying so (``fits: false``,
  the real query's status and error); a bad ``dry_run`` value is 422 naming the parameter; no key is 401, the
  admin key 403;
* a SQL statement's dry run prices each of its queries and their sum;
* the variance's radius covers the server's own sample variance over its own noise.

On SQLite and on PostgreSQL.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("lark")

from tests.server._harness import _fresh_postgres_database  # noqa: E402
from tests.server._lab import DatasetDef, Lab, NoiseSpy  # noqa: E402

REGIONS = ("north", "south", "east")
ROWS = [{"x": float((i * 7) % 50) + 10.0, "region": REGIONS[i % 3]} for i in range(240)]
POLICIES = """
[policies.count]
mechanism = "laplace"
epsilon = "1/10"
[policies.sum]
mechanism = "gaussian"
epsilon = "1/10"
delta = "1/1000000"
[policies.mean]
mechanism = "laplace"
epsilon = "1/5"
[policies.quantile]
mechanism = "exponential"
epsilon = "1/2"
[policies.variance]
mechanism = "laplace"
epsilon = "10"
"""
BOUNDS = (10.0, 60.0)


class _NoReads:
    """A data reader that fails the test if anything asks it for a cursor."""

    used = 0

    def cursor(self) -> Any:
        _NoReads.used += 1
        raise AssertionError("a dry run read the data")

    def close(self) -> None:
        pass


@pytest.fixture(params=["sqlite", "postgresql"])
def lab(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Lab]:
    database = "sqlite"
    if request.param == "postgresql":
        database = _fresh_postgres_database(str(request.getfixturevalue("_postgres_url")))
    data = DatasetDef("m", ROWS, {"x": BOUNDS}, POLICIES, "laplace", categories=REGIONS,
                      step_queries={"x": "allow"})
    with Lab(tmp_path, [data], database=database) as lab:
        lab.add_querier("q", epsilon="1", delta="1/100000")
        lab.add_querier("poor", epsilon="1/20", delta="0")
        yield lab


def dry(lab: Lab, who: str, body: dict[str, Any], flag: str = "true") -> Any:
    return lab.http.post(f"/v1/queries?dry_run={flag}", json=body,
                         headers={"Authorization": f"Bearer {lab.keys[who]}"})


def state(lab: Lab) -> tuple[Any, ...]:
    ledger = lab.get("admin", "/v1/admin/ledger", limit=500).json()["ledger"]
    return (ledger, lab.get("q", "/v1/budget").json(), lab.get("poor", "/v1/budget").json(),
            lab.get("admin", "/v1/admin/datasets").json())


def test_a_dry_run_prices_the_query_and_charges_and_reads_nothing(lab: Lab) -> None:
    service = lab.app.state.service
    before = state(lab)
    readers, service._readers = service._readers, _NoReads()
    spy = NoiseSpy()
    try:
        with spy.installed():
            answers = {text: dry(lab, "q", {"query": text}) for text in (
                "count() from m where region = 'north'", "sum(x) from m", "mean(x) from m",
                "quantile(x, 0.5) from m")}
    finally:
        service._readers = readers
    assert {t: r.status_code for t, r in answers.items()} == dict.fromkeys(answers, 200)
    assert spy.draws == [] and _NoReads.used == 0
    assert state(lab) == before  # no ledger row, no budget spent, the dataset's budget untouched

    count = answers["count() from m where region = 'north'"].json()
    assert count["dry_run"] is True and count["fits"] is True
    assert count["cost"]["epsilon"] == 0.1 and count["cost"]["exact"]["epsilon"] == "1/10"
    assert count["cost"]["delta"] == 0.0
    assert count["remaining_after"]["epsilon"]["remaining"] == "9/10"
    assert count["query"]["kind"] == "count" and count["accuracy"]["level"] == 0.95
    # Laplace of scale 1/ε = 10 on a count: P(|W| > r) = exp(−r/10) = 0.05, plus the hardening grid
    assert 10 * math.log(20) <= count["accuracy"]["radius"] <= 10 * math.log(20) + 1.0
    assert "rows" in count["accuracy"]["formula"]

    total = answers["sum(x) from m"].json()
    assert total["cost"]["epsilon"] == 0.1 and total["cost"]["delta"] == 1e-6
    assert total["cost"]["exact"]["delta"] == "1/1000000"
    assert "units of x" in total["accuracy"]["formula"]

    mean = answers["mean(x) from m"].json()
    assert mean["cost"]["epsilon"] == pytest.approx(0.2) and "radius" not in mean["accuracy"]
    assert "/(n − " in mean["accuracy"]["formula"] and "units of x" in mean["accuracy"]["formula"]

    quantile = answers["quantile(x, 0.5) from m"].json()
    assert quantile["cost"]["epsilon"] == 0.5 and quantile["accuracy"]["radius"] > 0
    assert "rows of rank" in quantile["accuracy"]["formula"]

    # the real queries then state the accuracy the dry runs announced (the same noise law)
    real_count = lab.post("q", {"query": "count() from m where region = 'north'"}).json()
    real_sum = lab.post("q", {"query": "sum(x) from m"}).json()
    for real, planned in ((real_count, count), (real_sum, total)):
        # noisy ± radius, cut at 0 (a count, and a sum of a column ≥ 0, cannot be negative): 2·radius wide unless
        # the noisy answer fell within one radius of 0 (a 2σ draw for this sum), then it starts at 0
        low, high = real["accuracy"]["low"], real["accuracy"]["high"]
        radius = planned["accuracy"]["radius"]
        assert high - low == pytest.approx(2 * radius, rel=1e-9) or (low == 0.0 and high - low < 2 * radius)
        assert real["charged"]["epsilon"] == planned["cost"]["exact"]["epsilon"]


def test_a_dry_run_reports_the_refusals_of_the_real_query(lab: Lab) -> None:
    before = state(lab)
    policy = dry(lab, "q", {"query": "identity(x) from m"})  # no identity policy
    assert policy.status_code == 200
    body = policy.json()
    assert body["fits"] is False and body["refusal"]["status"] == 422
    assert body["refusal"]["error"] == lab.post("q", {"query": "identity(x) from m"}).json()["error"]

    budget = dry(lab, "poor", {"query": "sum(x) from m"})  # costs 1/10, 1/20 left
    assert budget.status_code == 200
    refused = budget.json()
    assert refused["fits"] is False and "remaining_after" not in refused
    assert refused["refusal"]["status"] == 429 and refused["refusal"]["error"] == "budget exceeded"
    assert refused["refusal"]["budget"]["epsilon"]["remaining"] == "1/20"
    assert refused["cost"]["epsilon"] == 0.1
    assert lab.post("poor", {"query": "sum(x) from m"}).status_code == 429  # as the real query
    # a querier the server knows to be out of budget still gets the dry run (not the shortcut refusal)
    again = dry(lab, "poor", {"query": "sum(x) from m"}).json()
    assert again["fits"] is False and again["cost"]["exact"]["epsilon"] == "1/10"
    cheap = dry(lab, "poor", {"query": "count() from m"}).json()
    assert cheap["fits"] is False  # 1/10 > 1/20 as well
    # the dry runs wrote no ledger row: only the two real refusals above are there (refusal rows are written off
    # the event loop, after the answer: wait for them, then make sure nothing else came)
    deadline = time.monotonic() + 20.0
    ledger, *_ = state(lab)
    while len(ledger) < len(before[0]) + 2 and time.monotonic() < deadline:
        time.sleep(0.1)
        ledger, *_ = state(lab)
    time.sleep(0.5)
    ledger, *_ = state(lab)
    assert len(ledger) == len(before[0]) + 2
    assert all(row["status"] == "refused" for row in ledger[: len(ledger) - len(before[0])])


def test_bad_input_authentication_and_the_admin_key(lab: Lab) -> None:
    bad = dry(lab, "q", {"query": "count() from m"}, flag="maybe")
    assert bad.status_code == 422
    assert "`dry_run`" in bad.json()["error"] and bad.json()["parameter"] == "dry_run"
    twice = lab.http.post("/v1/queries?dry_run=true&dry_run=false", json={"query": "count() from m"},
                          headers={"Authorization": f"Bearer {lab.keys['q']}"})
    assert twice.status_code == 422 and "once" in twice.json()["error"]
    assert dry(lab, "q", {"query": "count() from m"}, flag="false").json()["value"] is not None  # a real answer
    anonymous = lab.http.post("/v1/queries?dry_run=true", json={"query": "count() from m"})
    assert anonymous.status_code == 401
    assert dry(lab, "admin", {"query": "count() from m"}).status_code == 403
    malformed = dry(lab, "q", {"query": "count( from m"})
    assert malformed.status_code == 422 and "dry_run" not in malformed.json()


def test_a_sql_statement_dry_run_prices_each_query_and_their_sum(lab: Lab) -> None:
    before = state(lab)
    response = dry(lab, "q", {"sql": "SELECT COUNT(*), SUM(x) FROM m"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert state(lab) == before
    assert [r["query"]["kind"] for r in body["releases"]] == ["count", "sum"]
    assert body["cost"]["exact"]["epsilon"] == "1/5" and body["cost"]["epsilon"] == pytest.approx(0.2)
    assert body["fits"] is True and body["remaining_after"]["epsilon"]["remaining"] == "4/5"
    refused = dry(lab, "q", {"sql": "SELECT COUNT(*) FROM m GROUP BY x"}).json()  # x is numeric
    assert refused["fits"] is False and refused["refusal"]["status"] == 422
    assert "group by a text column" in refused["refusal"]["error"] and refused["refusal"]["position"]["line"] == 1


def test_the_variance_radius_covers_the_servers_own_variance(lab: Lab) -> None:
    """Over the server's own noise (its hardened components, its combine), the stated radius at 95 % covers the
    exact sample variance in at least 95 % of draws, and it says more than the bounds alone (below a quarter of the
    largest variance the bounds allow)."""
    from privnoise.server.dryruns import SampleVarianceRadius, plan_radius
    from privnoise.server.querylang import parse_query

    plan = lab.app.state.service.plan(parse_query("variance(x) from m"))
    radius = plan_radius(plan)
    assert isinstance(radius, SampleVarianceRadius)
    x = np.array([r["x"] for r in ROWS])
    true = [float(x.sum()), float((x * x).sum()), float(len(x))]
    exact = float(np.var(x, ddof=1))
    r = radius.radius(0.95, len(x))
    assert 0 < r < radius.top / 4
    generator = np.random.default_rng(3)
    errors = np.array([abs(plan.combine([c.add(v, generator) for c, v in zip(plan.components, true, strict=True)])
                           - exact) for _ in range(1000)])
    assert np.mean(errors <= r) >= 0.95
    body = dry(lab, "q", {"query": "variance(x) from m"}).json()
    assert "f = (n − " in body["accuracy"]["formula"] and "radius" not in body["accuracy"]
