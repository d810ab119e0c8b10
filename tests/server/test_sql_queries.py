"""SQL statements at the query server (``{"sql": ..., "dialect": ...}``, :mod:`privnoise.server.sqlanswers`).

* The SQL path and the query language plan the same question to the same Plan (the same cached object: same SQL,
  parameters, noise, charge and guarantee), and charge and record it alike: a count, a mean, a group-by mean over
  declared categories, a filtered sum.
* Compound ``WHERE`` clauses count the records that the standard library's SQLite counts for the same clause.
* Refusals — a join, a subquery, a row-level SELECT, an unknown dataset, options above the policy, a syntax
  error — are 4xx with the construct's position, and charge nothing; so does a statement whose queries together
  exceed the querier's budget (and one that fits is charged exactly the sum of its queries).
* Random statements (random tokens, mutated valid statements; hypothesis) never get a 5xx.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("fastapi")

from privnoise.server.querylang import parse_query  # noqa: E402
from privnoise.server.sqlanswers import StatementPlan, plan_statement  # noqa: E402
from privnoise.server.sqlreleases import QueryRelease, interval_at  # noqa: E402
from tests.server._lab import DatasetDef, Lab, read_budget_state  # noqa: E402

REGIONS = ("north", "south", "east")
WORDS = ("north", "North", "south", "", "n_x", "n%", "a*b", "[x]")
EPSILON = {"count": "1/10", "sum": "1/10", "mean": "1/5", "variance": "3/10", "quantile": "1/2"}


def _policies(epsilon: dict[str, str], extra: str = "") -> str:
    out = []
    for kind, e in epsilon.items():
        mechanism = "exponential" if kind == "quantile" else "laplace"
        out.append(f'[policies.{kind}]\nmechanism = "{mechanism}"\nepsilon = "{e}"\n{extra}')
    return "\n".join(out)


def _rows(n: int, seed: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    return [{"x": float(rng.integers(5, 66)), "y": float(rng.integers(-6, 4)), "region": REGIONS[i % 3],
             "word": str(rng.choice(WORDS)), "tariff": ("day", "night", "peak")[int(rng.integers(0, 3))]}
            for i in range(n)]


DATASETS = [
    DatasetDef("meters", _rows(120, 1), {"x": (10.0, 60.0), "y": (-5.0, 3.0)}, _policies(EPSILON), "laplace",
               categories=REGIONS, fisher_floor={"x": None, "y": None}, texts={"word": None, "tariff": None}),
    # counts exact to well within 0.5: the records a clause selects, against SQLite
    DatasetDef("exact", _rows(200, 2), {"x": (10.0, 60.0), "y": (-5.0, 3.0)}, _policies({"count": "1000"}),
               "laplace", categories=REGIONS, fisher_floor={"x": None, "y": None},
               texts={"word": None, "tariff": None}),
    # a group-by over keys found in the data (partition selection)
    DatasetDef("free", _rows(300, 3), {"x": (10.0, 60.0), "y": (-5.0, 3.0)},
               _policies({"count": "2", "sum": "2"}, "partition_delta = 1e-6\n"), "laplace", categories=REGIONS,
               fisher_floor={"x": None, "y": None}, texts={"word": None, "tariff": None}),
]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    with Lab(tmp_path_factory.mktemp("sql"), DATASETS) as lab:
        for name in ("analyst", "fuzzer", "refused"):
            lab.add_querier(name, epsilon="1000")
        lab.add_querier("poor", epsilon="1/4")
        lab.add_querier("counter", epsilon="100000")
        yield lab


def _who(lab: Lab, name: str) -> dict[str, Any]:
    from sqlalchemy import select

    from privnoise.server import db

    with lab.engine.connect() as conn:
        qid = conn.execute(select(db.queriers.c.id).where(db.queriers.c.name == name)).scalar_one()
    return {"id": int(qid), "name": name, "role": "querier"}


def _spent(lab: Lab, dataset: str, querier: str) -> tuple[Fraction, Fraction]:
    state = read_budget_state(lab.engine, dataset)["queriers"][querier]
    return state["epsilon"], state["delta"]


# --- (a) the same Plan, charge and guarantee --------------------------------------------------------------------

SAME = [
    ("SELECT COUNT(*) FROM meters", ["count() from meters"]),
    ("SELECT AVG(x) AS mean_x FROM meters", ["mean(x) from meters"]),
    ("SELECT region, AVG(x) FROM meters GROUP BY region", ["mean(x) from meters group by region"]),
    ("SELECT SUM(x) FROM meters WHERE region = 'north' AND y >= -2",
     ["sum(x) from meters where region = 'north' and y >= -2"]),
    ("SELECT SUM(x), COUNT(*) FROM meters WHERE x BETWEEN 20 AND 40",
     ["sum(x) from meters where x >= 20 and x <= 40", "count() from meters where x >= 20 and x <= 40"]),
]


@pytest.mark.parametrize(("sql", "texts"), SAME)
def test_the_sql_path_plans_what_the_query_language_plans(lab: Lab, sql: str, texts: list[str]) -> None:
    service = lab.app.state.service
    planned = plan_statement(service, _who(lab, "analyst"), {"sql": sql, "dialect": "postgres"})
    assert isinstance(planned, StatementPlan), planned
    expected = [service.plan(parse_query(t)) for t in texts]
    assert planned.plans == expected
    for mine, theirs in zip(planned.plans, expected, strict=True):
        assert mine is theirs  # one cached plan: one statement, noise, charge, guarantee
        assert (mine.sql, mine.parameters, mine.charge, mine.guarantee_base) == (
            theirs.sql, theirs.parameters, theirs.charge, theirs.guarantee_base)


@pytest.mark.parametrize(("sql", "texts"), SAME)
def test_the_sql_path_charges_and_records_what_the_query_language_does(
    lab: Lab, sql: str, texts: list[str]
) -> None:
    before = _spent(lab, "meters", "analyst")
    r = lab.post("analyst", {"sql": sql})
    assert r.status_code == 200, r.text
    answer = r.json()
    middle = _spent(lab, "meters", "analyst")
    asked = [lab.post("analyst", {"query": t}).json() for t in texts]
    after = _spent(lab, "meters", "analyst")
    assert middle[0] - before[0] == after[0] - middle[0] == sum(Fraction(a["charged"]["epsilon"]) for a in asked)
    assert Fraction(answer["charged"]["epsilon"]) == middle[0] - before[0]
    assert answer["guarantee"]["epsilon_exact"] == answer["charged"]["epsilon"]
    assert len(answer["ledger_ids"]) == len(texts)
    for mine, theirs in zip(answer["answers"], asked, strict=True):
        assert mine["charged"] == theirs["charged"]
        assert mine["guarantee"] == theirs["guarantee"]
        assert mine["query"] == theirs["query"]
        assert lab.ledger_row(mine["ledger_id"])["query"] == lab.ledger_row(theirs["ledger_id"])["query"]


def test_an_answer_has_a_row_per_group_with_intervals_and_post_processing(lab: Lab) -> None:
    sql = ("SELECT region, AVG(x) AS m, SUM(x) / COUNT(*) AS r, COUNT(*) AS n FROM meters GROUP BY region "
           "HAVING AVG(x) >= 10 ORDER BY region DESC LIMIT 2")  # a mean is clipped to [10, 60]: every group
    answer = lab.post("analyst", {"sql": sql, "dialect": "postgres"}).json()
    assert answer["columns"]["region"] == ["south", "north"]
    assert set(answer["columns"]) == {"region", "m", "r", "n"}
    assert set(answer["intervals"]) == {"m", "r", "n"} and answer["level"] == 0.95
    low, high = answer["intervals"]["n"]["low"], answer["intervals"]["n"]["high"]
    assert all(lo <= v <= hi for lo, v, hi in zip(low, answer["columns"]["n"], high, strict=True))
    assert answer["key_columns"] == ["region"] and answer["statement"] == sql
    assert [a["aggregates"] for a in answer["answers"]] == [["AVG(x)"], ["SUM(x)"], ["COUNT(*)"]]


def test_stated_intervals_at_95_percent_are_the_answers_accuracy(lab: Lab) -> None:
    """The intervals of a statement's aggregates are those its queries state (.accuracy), at any level."""
    service = lab.app.state.service
    for text in ("count() from meters", "sum(y) from meters", "mean(x) from meters", "mean(x) from meters group by "
                 "region", "count() from meters group by region"):
        plan = service.plan(parse_query(text))
        noisy = [np.asarray(c.noise.release(np.zeros(c.dim) if c.dim > 1 else 50.0)) for c in plan.components]
        stated = plan.stated_accuracy(noisy)
        interval = interval_at(QueryRelease(None, plan, plan.finished(noisy)))  # type: ignore[arg-type]
        assert interval is not None
        low, high = interval(0.95)
        np.testing.assert_allclose(low, np.atleast_1d(stated["low"]))
        np.testing.assert_allclose(high, np.atleast_1d(stated["high"]))
        wide = interval(0.999)
        assert np.all(wide[0] <= low) and np.all(wide[1] >= high)


def test_variance_and_stddev_are_post_processing_of_one_query(lab: Lab) -> None:
    answer = lab.post("analyst", {"sql": "SELECT VAR_POP(x) AS v, STDDEV(x) AS s FROM meters"}).json()
    assert len(answer["ledger_ids"]) == 1 and answer["answers"][0]["query"]["kind"] == "variance"
    assert answer["columns"]["s"][0] == pytest.approx(answer["columns"]["v"][0] ** 0.5)
    assert 0.0 <= answer["columns"]["v"][0] <= 25.0**2


def test_quantiles_are_quantile_queries(lab: Lab) -> None:
    answer = lab.post("analyst", {"sql": "SELECT MEDIAN(x), PERCENTILE_CONT(0.9) WITHIN GROUP (ORDER BY x), "
                                         "MIN(x) FROM meters", "dialect": "postgres"}).json()
    assert [a["query"]["levels"] for a in answer["answers"]] == [[0.5], [0.9], [0.0]]
    assert answer["intervals"] == {} and all(10.0 <= v[0] <= 60.0 for v in answer["columns"].values())


def test_keys_selected_in_the_data_are_the_union_of_each_querys(lab: Lab) -> None:
    answer = lab.post("analyst", {"sql": "SELECT tariff, COUNT(*) AS n, SUM(x) AS s FROM free GROUP BY tariff"})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["columns"]["tariff"] == sorted(body["columns"]["tariff"])
    assert set(body["columns"]["tariff"]) <= {"day", "night", "peak"} and len(body["ledger_ids"]) == 2
    assert Fraction(body["charged"]["delta"]) == 2 * Fraction(1, 10**6)


# --- (b) compound WHERE clauses against SQLite -------------------------------------------------------------------


def _reference(where: str) -> int:
    db = sqlite3.connect(":memory:")
    db.execute("PRAGMA case_sensitive_like = ON")
    db.execute("CREATE TABLE exact (x REAL, y REAL, region TEXT, word TEXT)")
    rows = DATASETS[1].rows
    db.executemany("INSERT INTO exact VALUES (?, ?, ?, ?)",
                   [(min(max(r["x"], 10.0), 60.0), min(max(r["y"], -5.0), 3.0), r["region"], r["word"]) for r in rows])
    return int(db.execute(f"SELECT COUNT(*) FROM exact WHERE {where}").fetchone()[0])


CLAUSES = [
    "region IN ('north', 'east') OR x > 40",
    "NOT (word LIKE 'n%' OR word = '') AND y BETWEEN -2 AND 1",
    "word LIKE '%*%' OR word LIKE '[%' OR word LIKE 'n\\_x'",
    "word NOT IN ('north', 'North') AND NOT region = 'south'",
    "(x < 20 OR x >= 55) AND NOT (y > 0 AND word LIKE '_o%')",
    "word IS NOT NULL AND x IS NULL",
    "x IN (10, 11, 12, 60) OR word = 'n%'",
]


@pytest.mark.parametrize("where", CLAUSES)
def test_compound_clauses_count_what_sqlite_counts(lab: Lab, where: str) -> None:
    r = lab.post("counter", {"sql": f"SELECT COUNT(*) AS n FROM exact WHERE {where}"})
    assert r.status_code == 200, r.text
    assert abs(r.json()["columns"]["n"][0] - _reference(where)) < 0.5


# --- (c) refusals: 4xx with the position, nothing charged ------------------------------------------------------

REFUSED = [
    ("SELECT COUNT(*) FROM meters JOIN other ON meters.x = other.x", "JOIN"),
    ("SELECT COUNT(*) FROM meters WHERE x IN (SELECT x FROM meters)", "subquery"),
    ("SELECT COUNT(*) FROM (SELECT * FROM meters) AS t", "subquery"),
    ("SELECT x, region FROM meters", "row-level"),
    ("SELECT COUNT(*) FROM nowhere", "unknown dataset 'nowhere'"),
    ("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 5) COUNT(*) FROM meters", "more than the owner's policies"),
    ("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 0.01) COUNT(*) FROM meters", "below what the owner's"),
    ("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(privacy_unit_column = id) COUNT(*) FROM meters", "single records"),
    ("SELECT COUNT(*) FORM meters", "does not parse"),
    ("SELECT COUNT(*) FROM meters WHERE", "does not parse"),
    ("SELECT VARIANCE(x) FROM meters GROUP BY region", "with GROUP BY"),
    ("SELECT COUNT(DISTINCT region) FROM meters", "COUNT(DISTINCT"),
    ("SELECT AVG(nope) FROM meters", "not a declared column"),
    ("SELECT AVG(x) FROM meters WHERE word > 3", "compare it with a text literal"),
]


@pytest.mark.parametrize(("sql", "why"), REFUSED)
def test_refusals_name_the_construct_and_its_position_and_charge_nothing(lab: Lab, sql: str, why: str) -> None:
    before = _spent(lab, "meters", "refused")
    r = lab.post("refused", {"sql": sql, "dialect": "postgres"})
    assert r.status_code == 422, r.text
    body = r.json()
    assert why in body["error"]
    position = body["position"]
    assert f"(line {position['line']}, column {position['column']})" in body["error"]
    assert _spent(lab, "meters", "refused") == before


def test_the_position_is_where_the_construct_stands(lab: Lab) -> None:
    r = lab.post("refused", {"sql": "SELECT COUNT(*)\n  FROM meters\n  JOIN other ON meters.x = other.x"})
    assert r.json()["position"] == {"line": 3, "column": 8}  # the joined table
    r = lab.post("refused", {"sql": "SELECT SUM(x),\n       AVG(nope) FROM meters"})
    assert r.json()["position"] == {"line": 2, "column": 8}


def test_a_body_holds_one_form(lab: Lab) -> None:
    for body in ({"sql": "SELECT COUNT(*) FROM meters", "query": "count()"},
                 {"sql": "SELECT COUNT(*) FROM meters", "dataset": "meters"},
                 {"query": "count()", "dialect": "postgres"},
                 {"sql": "SELECT COUNT(*) FROM meters", "dialect": "klingon"}):
        r = lab.post("refused", body)
        assert r.status_code == 422, body


# --- (e) the budget: all or nothing ------------------------------------------------------------------------------


def test_a_statement_over_the_budget_charges_nothing_and_one_within_charges_its_sum(lab: Lab) -> None:
    before = _spent(lab, "meters", "poor")
    r = lab.post("poor", {"sql": "SELECT COUNT(*), SUM(x), AVG(x) FROM meters"})  # 1/10 + 1/10 + 1/5 > 1/4
    assert r.status_code == 429 and r.json()["error"] == "budget exceeded"
    assert _spent(lab, "meters", "poor") == before
    r = lab.post("poor", {"sql": "SELECT COUNT(*), SUM(x) FROM meters"})  # 1/5 ≤ 1/4
    assert r.status_code == 200, r.text
    assert _spent(lab, "meters", "poor")[0] - before[0] == Fraction(1, 5)
    rows = [lab.ledger_row(i) for i in r.json()["ledger_ids"]]
    assert [row["epsilon"] for row in rows] == ["1/10", "1/10"]
    r = lab.post("poor", {"sql": "SELECT COUNT(*), SUM(x) FROM meters"})  # 2/5 > 1/4: refused whole
    assert r.status_code == 429 and _spent(lab, "meters", "poor")[0] - before[0] == Fraction(1, 5)


# --- (d) fuzzing: never a server error ---------------------------------------------------------------------------

TOKENS = ["SELECT", "FROM", "WHERE", "GROUP", "BY", "HAVING", "ORDER", "LIMIT", "AND", "OR", "NOT", "IN", "IS",
          "NULL", "LIKE", "BETWEEN", "JOIN", "ON", "AS", "WITH", "DIFFERENTIAL_PRIVACY", "OPTIONS", "(", ")", ",",
          "*", "=", "<", ">=", "!=", "+", "/", "-", "COUNT(*)", "SUM(x)", "AVG(y)", "MEDIAN(x)", "STDDEV(x)",
          "PERCENTILE_CONT(0.5)", "WITHIN", "meters", "exact", "x", "y", "region", "word", "'north'", "'n%'", "1",
          "-3", "1e308", "0.5", "epsilon", "delta", ";", "OVER", "DISTINCT", "UNION", "'", '"', "`", "\n", "\x00"]
VALID = ["SELECT region, AVG(x) AS m FROM meters WHERE word LIKE 'n%' OR y > 0 GROUP BY region ORDER BY m LIMIT 2",
         "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 0.1) COUNT(*) FROM meters WHERE x IN (10, 20)",
         "SELECT SUM(x) / COUNT(*) AS r, MEDIAN(y) FROM meters WHERE NOT (region = 'east' AND x BETWEEN 1 AND 30)"]


def _mutated(draw: Any) -> str:
    text = draw(st.sampled_from(VALID))
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(text)))
        j = draw(st.integers(i, min(len(text), i + 8)))
        text = text[:i] + draw(st.sampled_from(["", *TOKENS, draw(st.text(max_size=3))])) + text[j:]
    return text


statements = st.one_of(
    st.lists(st.sampled_from(TOKENS), min_size=1, max_size=25).map(" ".join),
    st.composite(lambda draw: _mutated(draw))(),
    st.text(max_size=60),
)


@settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
          database=None)
@given(statements, st.sampled_from([None, "postgres", "bigquery", "spark", "duckdb"]))
def test_random_statements_never_get_a_server_error(lab: Lab, sql: str, dialect: str | None) -> None:
    body: dict[str, Any] = {"sql": sql} if dialect is None else {"sql": sql, "dialect": dialect}
    r = lab.post("fuzzer", body)
    assert r.status_code < 500, (sql, r.status_code, r.text)
    assert r.status_code in (200, 422, 429), (sql, r.status_code, r.text)
