"""The query language's new kinds — ``histogram``, ``quantile`` and ``group by`` — on SQLite and PostgreSQL.

* parsing: every existing form parses to the spec it always did; the new forms; bad queries get a 422 naming the
  problem before anything is charged (the ledger and the budgets are unchanged);
* the true cell values the server computes (spied on the noise it draws) against a reference computed from the
  rows, and the vector sensitivity against a brute force over neighbouring databases (one record added, removed
  or replaced);
* one exact charge per query (a group-by over k keys charges the policy once), refusal when exhausted;
* the server's quantile: its exact distribution is the library's exponential mechanism on the same data (KS at
  α = 1e-6 with a power check against a 30 % wrong ε), and ``pn.dp.audit`` finds no more than the claimed ε;
* the stated accuracy: intervals cover at their level over repeated noise (binomial tolerance);
* constant work: a group-by's statement aggregates every key over the whole table, with no WHERE or GROUP BY.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("lark")

from privnoise.server.quantiles import QuantileRelease  # noqa: E402
from privnoise.server.querylang import Condition, QueryError, QuerySpec, parse_query  # noqa: E402
from privnoise.server.vectors import vector_sensitivity  # noqa: E402
from tests.server._harness import _fresh_postgres_database  # noqa: E402
from tests.server._lab import DatasetDef, Lab, NoiseSpy  # noqa: E402

ALPHA = 1e-6
REGIONS = ("north", "south", "east", "west")
ROWS = [{"x": float((i * 7) % 50) + 10.0, "region": REGIONS[i % 3]} for i in range(240)]  # no "west" rows
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
partition_delta = "1/1000000"
[policies.histogram]
mechanism = "laplace"
epsilon = "1/10"
[policies.quantile]
mechanism = "exponential"
epsilon = "1/2"
"""
BOUNDS = (10.0, 60.0)


def _datasets() -> list[DatasetDef]:
    # x has the lab's Fisher floor (its information is tracked) and is opened to filters, bins and quantiles,
    # which a floored column refuses by default (tests/server/test_fisher_floor_steps.py)
    allow = {"x": "allow"}
    return [
        DatasetDef("m", ROWS, {"x": BOUNDS}, POLICIES, "laplace", categories=REGIONS, step_queries=allow),
        DatasetDef("plain", ROWS, {"x": BOUNDS}, POLICIES, "laplace", step_queries=allow),  # region: no categories
    ]


@pytest.fixture(params=["sqlite", "postgresql"])
def lab(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Lab]:
    database = "sqlite"
    if request.param == "postgresql":
        database = _fresh_postgres_database(str(request.getfixturevalue("_postgres_url")))
    with Lab(tmp_path, _datasets(), database=database) as lab:
        lab.add_querier("q", epsilon="1", delta="1/100000")
        yield lab


def _state(lab: Lab) -> tuple[Any, Any, Any]:
    ledger = lab.get("admin", "/v1/admin/ledger", limit=500, outcome="charged").json()["ledger"]
    return len(ledger), lab.get("q", "/v1/budget").json(), lab.get("admin", "/v1/admin/datasets").json()


# --- parsing ---------------------------------------------------------------------------------------------------

EXISTING = {
    "count()": QuerySpec("count"),
    "count(*) from meters": QuerySpec("count", dataset="meters"),
    "sum(kwh) where region = 'north'": QuerySpec("sum", "kwh", where=(Condition("region", "=", "north"),)),
    "avg(kwh) from m where kwh >= -1.5e1 and region != \"a b\"": QuerySpec(
        "mean", "kwh", where=(Condition("kwh", ">=", -15.0), Condition("region", "!=", "a b")), dataset="m"
    ),
    "wmean(kwh, weight)": QuerySpec("weighted_mean", "kwh", "weight"),
    "var(kwh) where kwh < 3": QuerySpec("variance", "kwh", where=(Condition("kwh", "<", 3.0),)),
    "linear(2*a - b + 0.5*a)": QuerySpec("linear", coefficients=(("a", 2.5), ("b", -1.0))),
    "linear(-kwh + .5e1*w)": QuerySpec("linear", coefficients=(("kwh", -1.0), ("w", 5.0))),
    "identity(kwh) from meters": QuerySpec("identity", "kwh", dataset="meters"),
}
NEW = {
    "histogram(kwh, bins = [0, 10, 20, 60]) from meters where region = 'north'": QuerySpec(
        "histogram", "kwh", where=(Condition("region", "=", "north"),), dataset="meters", bins=(0.0, 10.0, 20.0, 60.0)
    ),
    "histogram(kwh, 0, 10, 60)": QuerySpec("histogram", "kwh", bins=(0.0, 10.0, 60.0)),
    "histogram(region) from meters": QuerySpec("histogram", "region", dataset="meters"),
    "quantile(kwh, 0.5) from meters": QuerySpec("quantile", "kwh", dataset="meters", levels=(0.5,)),
    "QUANTILE(kwh, [0.25, 0.5, 0.75])": QuerySpec("quantile", "kwh", levels=(0.25, 0.5, 0.75)),
    "mean(kwh) from meters group by region": QuerySpec("mean", "kwh", dataset="meters", group_by="region"),
    "sum(kwh) where kwh > 1 GROUP BY region": QuerySpec(
        "sum", "kwh", where=(Condition("kwh", ">", 1.0),), group_by="region"
    ),
    "count() group by region": QuerySpec("count", group_by="region"),
}


@pytest.mark.parametrize("text", [*EXISTING, *NEW])
def test_every_form_parses_to_its_spec_and_reads_back_from_its_json(text: str) -> None:
    from privnoise.server.querylang import spec_from_json

    spec = parse_query(text)
    assert spec == {**EXISTING, **NEW}[text]
    assert spec_from_json(spec.as_dict()) == spec


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("quantile(kwh)", "expected ',' and the levels"),
        ("quantile(kwh, 1.5)", "levels must lie in [0, 1]"),
        ("histogram(kwh, bins = [3, 1])", "strictly increasing"),
        ("histogram(kwh, edges = [0, 1])", "no argument named 'edges'"),
        ("variance(kwh) group by region", "variance takes no group by"),
        ("mean(kwh) group by", "ends too early"),
        ("mean(kwh) group region", "unexpected 'region'"),
        ("sum(2*kwh)", "must be a column name"),
        ("linear(2*a + 3)", "no constant term"),
        ("sum(kwh, weight)", "takes 1 argument"),
        ("sum(kwh) where a = 1e999", "not finite"),
    ],
)
def test_bad_queries_name_the_problem(text: str, problem: str) -> None:
    with pytest.raises(QueryError, match=problem.replace("[", r"\[").replace("(", r"\(")):
        parse_query(text)


BAD = [
    ("quantile(x, 2) from m", "levels must lie in [0, 1]"),
    ("histogram(x) from m", "needs its bins"),
    ("histogram(region, bins = [0, 1]) from m", "bins are for a numeric column"),
    ("sum(x) from plain group by region", "declare `categories"),
    ("mean(x) from m group by nope", "'nope' is not a declared column"),
    ("variance(x) from m", "does not answer variance"),
    ("mean(x) from m group by region where", "unexpected 'where'"),
    ("quantile(nope, 0.5) from m", "'nope' is not a declared column"),
]


def test_bad_queries_are_refused_before_anything_is_charged(lab: Lab) -> None:
    before = _state(lab)
    for text, problem in BAD:
        r = lab.post("q", {"query": text})
        assert r.status_code == 422, (text, r.text)
        assert problem in r.json()["error"], (text, r.json())
    r = lab.post("q", {"kind": "quantile", "column": "x", "levels": [0.5], "bins": [0, 1], "dataset": "m"})
    assert r.status_code == 422 and "quantile takes no bins" in r.json()["error"], r.text
    r = lab.post("q", {"query": "histogram(x, bins = [10, 60]) from m", "group_by": "region"})
    assert r.status_code == 422 and "no other fields" in r.json()["error"], r.text
    assert _state(lab) == before


# --- values, sensitivities, charges ---------------------------------------------------------------------------


def _reference_cells() -> tuple[np.ndarray, np.ndarray]:
    x = np.array([r["x"] for r in ROWS])
    keys = np.array([r["region"] for r in ROWS])
    counts = np.array([np.sum(keys == k) for k in REGIONS], dtype=float)
    sums = np.array([np.sum(np.clip(x[keys == k], *BOUNDS)) for k in REGIONS])
    return counts, sums


def _brute_sensitivity(term: Any, norm: float) -> float:
    """max ‖cells(D) − cells(D')‖ over one record added, removed or replaced, records on a grid of the box."""
    points = [(v, k) for v in (BOUNDS[0], 25.0, BOUNDS[1]) for k in range(len(REGIONS))]

    def cells(point: tuple[float, int] | None) -> np.ndarray:
        out = np.zeros(len(REGIONS))
        if point is not None:
            out[point[1]] = term(point[0])
        return out

    pairs = [(a, None) for a in points] + list(itertools.product(points, points))
    return max(float(np.linalg.norm(cells(a) - cells(b), ord=norm)) for a, b in pairs)


@pytest.mark.parametrize(("norm", "order"), [("l1", 1.0), ("l2", 2.0)])
def test_the_vector_sensitivity_is_the_brute_force_over_neighbours(norm: str, order: float) -> None:
    assert vector_sensitivity(1.0, 1.0, norm) == pytest.approx(_brute_sensitivity(lambda v: 1.0, order))
    assert vector_sensitivity(*BOUNDS, norm) == pytest.approx(_brute_sensitivity(lambda v: v, order))
    # a range across zero: replacing within a cell (hi − lo) can dominate
    assert vector_sensitivity(-5.0, 3.0, "l1") == 10.0 and vector_sensitivity(-5.0, 3.0, "l2") == 8.0


def test_group_by_and_histogram_release_every_cell_once_at_the_vector_sensitivity(lab: Lab) -> None:
    counts, sums = _reference_cells()
    spy = NoiseSpy()
    with spy.installed():
        r = lab.post("q", {"query": "mean(x) from m group by region"})
        assert r.status_code == 200, r.text
        (sum_noise, true_sums), (count_noise, true_counts) = spy.take()
        assert r.json()["keys"] == list(REGIONS)
        centre = sum(BOUNDS) / 2.0  # a mean's sums are of x − c
        np.testing.assert_allclose(true_sums, sums - centre * counts, rtol=1e-12)
        np.testing.assert_array_equal(true_counts, counts)
        assert sum_noise.sensitivity == _brute_sensitivity(lambda v: v - centre, 1) == BOUNDS[1] - BOUNDS[0]
        assert count_noise.sensitivity == 2.0  # Laplace: ℓ1
        r = lab.post("q", {"query": "sum(x) from m where x < 30 group by region"})
        ((noise, true),) = spy.take()
        x = np.array([r_["x"] for r_ in ROWS])
        keys = np.array([r_["region"] for r_ in ROWS])
        np.testing.assert_allclose(true, [np.sum(x[(keys == k) & (x < 30)]) for k in REGIONS], rtol=1e-12)
        assert noise.sensitivity == pytest.approx(math.sqrt(2.0) * BOUNDS[1])  # Gaussian: ℓ2
        r = lab.post("q", {"query": "histogram(x, bins = [0, 20, 40, 45]) from m"})
        ((noise, true),) = spy.take()
        edges = np.array([0.0, 20.0, 40.0, 45.0])
        expected = np.bincount(np.clip(np.searchsorted(edges, np.minimum(x, 45.0), side="right") - 1, 0, 2),
                               minlength=3)
        np.testing.assert_array_equal(true, expected)
        assert noise.sensitivity == 2.0
        r = lab.post("q", {"query": "histogram(region) from m"})
        ((noise, true),) = spy.take()
        np.testing.assert_array_equal(true, counts)
        assert r.json()["keys"] == list(REGIONS) and len(r.json()["value"]) == 4


def test_each_query_charges_its_policy_once_exactly_and_is_refused_when_exhausted(lab: Lab) -> None:
    lab.add_querier("small", epsilon="7/10", delta="0")
    spent = Fraction(0)
    for text, epsilon in [
        ("mean(x) from m group by region", Fraction(1, 5)),
        ("histogram(x, bins = [10, 30, 60]) from m", Fraction(1, 10)),
        ("quantile(x, [0.25, 0.5, 0.75]) from m", Fraction(1, 2)),
    ]:
        before = lab.get("small", "/v1/budget").json()["datasets"]["m"]["epsilon"]["remaining"]
        r = lab.post("small", {"query": text})
        if Fraction(before) < epsilon:
            assert r.status_code == 429, r.text
            assert lab.get("small", "/v1/budget").json()["datasets"]["m"]["epsilon"]["remaining"] == before
            continue
        assert r.status_code == 200, r.text
        assert Fraction(r.json()["charged"]["epsilon"]) == epsilon and r.json()["charged"]["delta"] == "0"
        spent += epsilon
        after = lab.get("small", "/v1/budget").json()["datasets"]["m"]["epsilon"]["remaining"]
        assert Fraction(after) == Fraction(7, 10) - spent
    assert spent == Fraction(3, 10)  # the quantile (1/2) did not fit in the 2/5 left
    ledger = lab.get("admin", "/v1/admin/ledger", limit=50, querier="small", outcome="charged").json()["ledger"]
    assert sorted(Fraction(row["epsilon"]) for row in ledger) == [Fraction(1, 10), Fraction(1, 5)]


# --- the quantile against the library --------------------------------------------------------------------------


def _quantile_release(lab: Lab, text: str) -> tuple[Any, np.ndarray, np.ndarray]:
    service: Any = lab.app.state.service
    plan = service.plan(parse_query(text))
    values, weights = service._read_rows(plan)
    return plan.quantile, values, weights


def _exact_cdf(release: Any, values: np.ndarray, weights: np.ndarray, q: float, epsilon: float) -> Any:
    """The CDF of the exponential mechanism from the library's block probabilities (uniform within a block)."""
    blocks = release.blocks(values, weights, q)
    p = blocks.probabilities(epsilon, 1.0)
    starts, sizes = blocks.start.astype(float), blocks.size

    def cdf(x: np.ndarray) -> np.ndarray:
        j = np.floor(np.asarray(x, dtype=float) / blocks.step + 1e-9)
        inside = np.clip((j[:, None] - starts[None, :] + 1.0) / sizes[None, :], 0.0, 1.0)
        return np.asarray(inside @ p)

    return cdf


def test_the_server_quantile_is_the_library_exponential_mechanism(lab: Lab, assert_ks: Any) -> None:
    from privnoise.analysis.quantiles import quantile_blocks

    release, values, weights = _quantile_release(lab, "quantile(x, 0.5) from m where region = 'north'")
    x = np.array([r["x"] for r in ROWS])
    north = x[np.array([r["region"] == "north" for r in ROWS])]
    # the same candidate blocks as the library's, on the filtered rows alone (zero-weight points merge away)
    mine = release.blocks(values, weights, 0.5)
    points, counts = np.unique(np.rint(north / release.step).astype(np.int64), return_counts=True)
    theirs = quantile_blocks(points, counts.astype(float), 0.5, release.low, release.high, release.step)
    for blocks in (mine, theirs):
        assert blocks.candidates == release.candidates
    grid = np.arange(release.low, release.high + 1) * release.step
    np.testing.assert_allclose(_exact_cdf(release, values, weights, 0.5, 0.5)(grid),
                               np.cumsum(np.repeat(theirs.probabilities(0.5, 1.0) / theirs.size,
                                                   theirs.size.astype(int))), atol=1e-9)
    samples = release.sample(values, weights, 0.5, 100_000, np.random.default_rng(12))
    assert_ks(samples, _exact_cdf(release, values, weights, 0.5, 0.5),
              [_exact_cdf(release, values, weights, 0.5, 0.5 * 0.7)])


def test_an_audit_finds_no_more_than_the_claimed_epsilon_of_the_server_quantile(lab: Lab) -> None:
    import privnoise as pn

    release, values, weights = _quantile_release(lab, "quantile(x, 0.5) from m")
    neighbour = values.copy()
    neighbour[np.argmin(values)] = BOUNDS[1]  # one record replaced: the lowest moved to the top

    def mechanism(which: Any, n: int, generator: np.random.Generator) -> np.ndarray:
        data = neighbour if float(np.ravel(which)[0]) else values
        return release.sample(data, weights, 0.5, n, generator)

    report = pn.dp.audit(mechanism, 0.0, 1.0, samples=200_000, confidence=1 - ALPHA, rng=3,
                         claimed_epsilon=0.5)
    assert report.epsilon_lower_bound <= 0.5, report
    # power: the same audit sees a release that spends three times the claimed ε
    wrong = QuantileRelease(BOUNDS, (0.5,), 1.5)

    def overspending(which: Any, n: int, generator: np.random.Generator) -> np.ndarray:
        data = neighbour if float(np.ravel(which)[0]) else values
        return wrong.sample(data, weights, 0.5, n, generator)

    report = pn.dp.audit(overspending, 0.0, 1.0, samples=200_000, confidence=1 - ALPHA, rng=3,
                         claimed_epsilon=0.5)
    assert report.epsilon_lower_bound > 0.5, report


# --- accuracy ---------------------------------------------------------------------------------------------------


def test_stated_intervals_cover_at_their_level(lab: Lab) -> None:
    """Repeated noise on the plan's own components (fixed seed): the stated 95 % intervals of a count, a group-by
    mean and a histogram cover the true values within the binomial tolerance; intervals shrunk by 30 % do not."""
    service: Any = lab.app.state.service
    rng = np.random.default_rng(5)
    counts, sums = _reference_cells()
    runs = 600
    tolerance = 5.0 * math.sqrt(0.95 * 0.05 / runs)
    for text, truth in [
        ("count() from m", np.array([float(len(ROWS))])),
        ("mean(x) from m group by region", np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)),
        ("histogram(region) from m", counts),
    ]:
        plan = service.plan(parse_query(text))
        true = service._read(plan)[0]
        hits = np.zeros(truth.size)
        shrunk = np.zeros(truth.size)
        for _ in range(runs):
            noisy = [c.noise.release(v, rng=rng) for c, v in zip(plan.components, true, strict=True)]
            accuracy = plan.stated_accuracy(noisy)
            low, high = np.atleast_1d(accuracy["low"]), np.atleast_1d(accuracy["high"])
            hits += (low <= truth) & (truth <= high)
            shrunk += np.abs(truth - np.atleast_1d(noisy[0])) <= 0.7 * (high - low) / 2
        known = ~np.isnan(truth)
        assert np.all(hits[known] / runs >= 0.95 - tolerance), (text, hits / runs)
        if not text.startswith("mean"):  # power: a 30 % narrower interval of a count is seen to undercover
            assert np.all(shrunk[truth > 0] / runs < 0.95 - tolerance), (text, shrunk / runs)


def test_answers_state_their_accuracy_and_what_it_means(lab: Lab) -> None:
    for text in ("count() from m", "mean(x) from m", "sum(x) from m group by region", "histogram(region) from m"):
        body = lab.post("q", {"query": text}).json()
        acc = body["accuracy"]
        assert acc["level"] == 0.95 and acc["meaning"].startswith("noise only")
        assert np.all(np.asarray(acc["low"]) <= np.asarray(acc["high"]))
    body = lab.post("q", {"query": "quantile(x, [0.1, 0.9]) from m"}).json()
    assert len(body["value"]) == 2 and len(body["accuracy"]["rank_radius"]) == 2
    assert all(BOUNDS[0] <= v <= BOUNDS[1] for v in body["value"])
    assert "rows below the released value" in body["accuracy"]["meaning"]


# --- constant work ----------------------------------------------------------------------------------------------


def test_a_group_by_is_one_statement_over_every_record_and_every_key(lab: Lab) -> None:
    service: Any = lab.app.state.service
    plan = service.plan(parse_query("mean(x) from m where x > 20 group by region"))
    sql = plan.sql.upper()
    assert " WHERE " not in sql and "GROUP BY" not in sql
    # every record compares its key with every declared key once (.cells), and has one test per cell
    assert sql.count(" IS NOT DISTINCT FROM " if "%(" in sql else " IS ?") == len(REGIONS)
    assert all(f" AS PN_K{j}," in sql or f" AS PN_K{j} " in sql for j in range(len(REGIONS)))
    assert len(plan.statement.selected_columns) == 2 * len(REGIONS) + 1
    assert [c.dim for c in plan.components] == [len(REGIONS), len(REGIONS)]
    quantile = service.plan(parse_query("quantile(x, 0.5) from m where region = 'north'"))
    assert " WHERE " not in quantile.sql.upper() and "GROUP BY" not in quantile.sql.upper()


# --- partition selection (keys not declared) ----------------------------------------------------------------------

SELECTION_POLICIES = """
[policies.mean]
mechanism = "laplace"
epsilon = "10"
partition_delta = "{delta}"
[policies.count]
mechanism = "laplace"
epsilon = "10"
partition_delta = "{delta}"
"""


@pytest.fixture(params=["sqlite", "postgresql"])
def selecting(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Lab]:
    database = "sqlite"
    if request.param == "postgresql":
        database = _fresh_postgres_database(str(request.getfixturevalue("_postgres_url")))
    rows = [*ROWS, {"x": 11.0, "region": "lonely"}]  # a key held by one record
    datasets = [
        DatasetDef("keys", rows, {"x": BOUNDS}, SELECTION_POLICIES.format(delta="1/1000000"), "laplace"),
        DatasetDef("loose", rows, {"x": BOUNDS}, SELECTION_POLICIES.format(delta="1/20"), "laplace"),
    ]
    with Lab(tmp_path, datasets, database=database) as lab:
        lab.add_querier("q", epsilon="100", delta="1/10")
        yield lab


def test_undeclared_keys_are_selected_by_a_noisy_count_and_charge_the_partition_delta(selecting: Lab) -> None:
    before = len(selecting.get("admin", "/v1/admin/ledger", limit=500).json()["ledger"])
    r = selecting.post("q", {"query": "mean(x) from keys group by region"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["keys"] == ["east", "north", "south"]  # sorted; "lonely" released with probability ≤ 1e-6
    assert body["charged"]["epsilon"] == "10" and body["charged"]["delta"] == "1/1000000"
    assert body["guarantee"]["delta_exact"] == "1/1000000"
    low, high = body["accuracy"]["low"], body["accuracy"]["high"]
    assert len(body["value"]) == len(low) == len(high) == 3  # the accuracy of the released keys only
    ledger = selecting.get("admin", "/v1/admin/ledger", limit=500).json()["ledger"]
    assert len(ledger) == before + 1


def test_a_key_of_one_record_is_released_with_probability_at_most_the_partition_delta(selecting: Lab) -> None:
    """200 000 releases of the plan's own count noise on a key of one record: the release frequency is ≤ δ = 1/20
    within the binomial tolerance; the threshold lowered by 2 (one below the continuous law's) releases it more
    often than δ (power)."""
    service: Any = selecting.app.state.service
    plan = service.plan(parse_query("count() from loose group by region"))
    selection, (noise,) = plan.selection, [c.noise for c in plan.components]
    assert noise.sensitivity == 2.0 and plan.charge.delta == Fraction(1, 20)
    rng = np.random.default_rng(8)
    runs = 200_000
    ones = np.ones(runs)
    padded = np.asarray(noise.release(ones.reshape(-1, 2), rng=rng), dtype=float).reshape(-1)
    released = np.rint(padded) >= selection.threshold
    tolerance = 5.0 * math.sqrt(0.05 * 0.95 / runs)
    assert released.mean() <= 0.05 + tolerance, released.mean()
    lowered = np.rint(padded) >= selection.threshold - 2
    assert lowered.mean() > 0.05 + tolerance, lowered.mean()


def test_the_existing_kinds_state_their_accuracy_or_that_their_noise_has_none(tmp_path: Path) -> None:
    rows = [{"x": float(i % 60), "w": 1.0 + (i % 3) * 0.5, "region": "north"} for i in range(300)]
    policies = """
[policies.weighted_mean]
mechanism = "gaussian"
epsilon = "1/2"
delta = "1/1000000"
[policies.variance]
mechanism = "laplace"
epsilon = "1"
[policies.linear]
mechanism = "laplace"
epsilon = "1/2"
[policies.identity]
mechanism = "fisher-gaussian"
quality = 1.0
[policies.mean]
mechanism = "fisher-cosine"
half_width = 1.0
"""
    bounds = {"x": (0.0, 60.0), "w": (0.0, 2.0)}
    floors = {"x": 1e-9, "w": 1e-9}
    with Lab(tmp_path, [DatasetDef("k", rows, bounds, policies, "laplace", fisher_floor=floors)]) as lab:
        lab.add_querier("q")
        for text in ("weighted_mean(x, w) from k", "variance(x) from k", "linear(2*x - w) from k"):
            accuracy = lab.post("q", {"query": text}).json()["accuracy"]
            assert accuracy["low"] < accuracy["high"] and accuracy["meaning"].startswith("noise only"), text
        body = lab.post("q", {"query": "identity(x) from k"}).json()
        assert len(body["accuracy"]["low"]) == len(body["value"]) == len(rows)
        assert all(0.0 <= lo <= hi <= 60.0 for lo, hi in zip(body["accuracy"]["low"], body["accuracy"]["high"],
                                                             strict=True))
        accuracy = lab.post("q", {"query": "mean(x) from k"}).json()["accuracy"]  # cos² noise: no (ε, δ) law
        assert accuracy["available"] is False and "no interval" in accuracy["meaning"]

