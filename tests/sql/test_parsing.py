"""Statements read into what they release, and every construct that cannot be answered privately refused with its
position — in the dialects analysts bring."""

from __future__ import annotations

import pytest

from privnoise.core.conditions import Condition
from privnoise.core.predicates import AllOf, AnyOf, InList, IsNull, Like, Not
from privnoise.sql import Aggregate, Arithmetic, KeyColumn, Number, SqlError, parse_predicate, parse_statement


@pytest.mark.parametrize(("dialect", "text"), [
    ("postgres", "SELECT region, AVG(kwh) AS m, COUNT(*) FROM meters GROUP BY region"),
    ("bigquery", "SELECT region, AVG(kwh) AS m, COUNT(*) FROM `meters` GROUP BY region"),
    ("spark", "SELECT region, AVG(kwh) AS m, COUNT(*) FROM meters GROUP BY region"),
    ("duckdb", "SELECT region, AVG(kwh) AS m, COUNT(*) FROM meters GROUP BY 1"),
])
def test_the_same_question_in_four_dialects_reads_the_same(dialect: str, text: str) -> None:
    s = parse_statement(text, dialect=dialect)
    assert s.table == "meters" and s.group_by == ("region",)
    assert [o.expression for o in s.outputs] == [KeyColumn("region"), Aggregate("mean", "kwh"), Aggregate("count", None)]


def test_aggregates_of_every_kind() -> None:
    s = parse_statement(
        "SELECT COUNT(*), COUNT(kwh), COUNT(DISTINCT hh), SUM(kwh), AVG(kwh), VAR_POP(kwh), VARIANCE(kwh), "
        "STDDEV(kwh), MEDIAN(kwh), PERCENTILE_CONT(0.9) WITHIN GROUP (ORDER BY kwh), MIN(kwh), MAX(kwh) FROM t",
        dialect="duckdb")
    assert [o.expression for o in s.outputs] == [
        Aggregate("count", None), Aggregate("count", "kwh"), Aggregate("count_distinct", "hh"), Aggregate("sum", "kwh"),
        Aggregate("mean", "kwh"), Aggregate("variance", "kwh"), Aggregate("variance", "kwh"),
        Aggregate("stddev", "kwh"), Aggregate("quantile", "kwh", 0.5), Aggregate("quantile", "kwh", 0.9),
        Aggregate("quantile", "kwh", 0.0), Aggregate("quantile", "kwh", 1.0)]
    # a repeated aggregate is released once
    assert len(s.aggregates) == 11  # VAR_POP and VARIANCE are one release
    spark = parse_statement("SELECT percentile(kwh, 0.25) FROM t", dialect="spark")
    assert spark.outputs[0].expression == Aggregate("quantile", "kwh", 0.25)


def test_post_processing_reads_aliases_positions_and_arithmetic() -> None:
    s = parse_statement("SELECT g, SUM(x) / COUNT(*) AS r, -AVG(x) + 1 FROM t GROUP BY g HAVING r > 2 AND NOT COUNT(*) "
                        "< 5 ORDER BY 2 DESC, g LIMIT 7")
    total, count, mean = Aggregate("sum", "x"), Aggregate("count", None), Aggregate("mean", "x")
    assert s.outputs[1].expression == Arithmetic("/", total, count)
    assert s.outputs[2].expression == Arithmetic("+", Arithmetic("-", Number(0.0), mean), Number(1.0))
    assert s.order_by == ((Arithmetic("/", total, count), True), (KeyColumn("g"), False))
    assert s.limit == 7 and s.aggregates == (total, count, mean)


def test_filters_become_predicates_with_sql_meaning() -> None:
    p = parse_predicate("NOT (a NOT IN (1, 2)) AND b NOT LIKE 'x%' AND c IS NOT NULL AND d NOT BETWEEN 1 AND 2 "
                        "AND 3 < e AND (f = 'n' OR g <= -1.5)")
    assert p == AllOf((
        InList("a", (1.0, 2.0)),  # NOT (a NOT IN ...) is a IN ..., unknown where a is missing in both
        Not(Like("b", "x%")), IsNull("c", negated=True),
        Not(AllOf((Condition("d", ">=", 1.0), Condition("d", "<=", 2.0)))), Condition("e", ">", 3.0),
        AnyOf((Condition("f", "=", "n"), Condition("g", "<=", -1.5)))))


def test_bigquery_options_are_read_and_positions_kept() -> None:
    text = ("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 0.5, delta = 1e-7, privacy_unit_column = hh,\n"
            "  max_groups_contributed = 3) region, COUNT(*) FROM t GROUP BY region, kwh")
    with pytest.raises(SqlError, match=r"'zz' .*\(line 2, column 56\)"):  # the blanked options keep positions
        parse_statement(text.replace("region, COUNT(*)", "region, kwh + COUNT(*) + zz"), dialect="bigquery")
    s = parse_statement(text, dialect="bigquery")
    assert s.options == {"epsilon": 0.5, "delta": 1e-7, "privacy_unit_column": "hh", "max_groups_contributed": 3}


REFUSED = [
    ("SELECT kwh FROM t", "neither aggregated nor in GROUP BY", (1, 8)),
    ("SELECT * FROM t", "SELECT \\* releases records", (1, 8)),
    ("SELECT DISTINCT region FROM t", "SELECT DISTINCT", None),
    ("SELECT COUNT(*) FROM a JOIN b ON a.id = b.id", "JOIN", (1, 29)),
    ("SELECT COUNT(*) FROM (SELECT * FROM t) s", "subquery", None),
    ("WITH c AS (SELECT 1) SELECT COUNT(*) FROM c", "common table expression", None),
    ("SELECT COUNT(*) FROM t WHERE x IN (SELECT y FROM u)", "subquery", None),
    ("SELECT SUM(kwh) OVER (PARTITION BY r) FROM t", "window function", (1, 8)),
    ("SELECT SUM(a * b) FROM t", "expression inside an aggregate", (1, 8)),
    ("SELECT COUNT(*) FROM t WHERE a < b", "compares two columns", (1, 30)),
    ("SELECT COUNT(*) FROM t WHERE lower(a) = 'x'", "not a column", None),
    ("SELECT COUNT(*) FROM t UNION SELECT COUNT(*) FROM u", "only SELECT", None),
    ("SELECT\n  COUNT(*),\n  RANK() FROM t", "RANK is not answered", (3, 3)),
    ("SELECT COUNT(*) FROM t GROUP BY ROLLUP(a)", "not a column", None),
    ("SELECT g, COUNT(*) FROM t GROUP BY g HAVING g = 'a'", "not a value of the answer", (1, 49)),
    ("SELECT COUNT(*) FROM t LIMIT 2 OFFSET 1", "OFFSET", None),
    ("SELECT FROM WHERE", "does not parse", (1, 17)),
    ("SELECT COUNT(*) FROM t; SELECT COUNT(*) FROM t", "one statement", None),
    ("DELETE FROM t", "only SELECT", None),
    ("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = -1) COUNT(*) FROM t", "epsilon must be", (1, 42)),
    ("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(budget = 1) COUNT(*) FROM t", "unknown differential-privacy option", None),
    ("SELECT PERCENTILE_CONT(1.5) WITHIN GROUP (ORDER BY x) FROM t", "level is a number in \\[0, 1\\]", None),
]


@pytest.mark.parametrize(("text", "message", "position"), REFUSED)
def test_what_cannot_be_answered_privately_is_refused_with_its_position(text: str, message: str, position) -> None:
    with pytest.raises(SqlError, match=message) as caught:
        parse_statement(text, dialect="postgres")
    if position is not None:
        assert (caught.value.line, caught.value.column) == position


@pytest.mark.parametrize("bad", [None, "", "   ", 3, "x" * 20_001])
def test_a_statement_is_a_string_of_sql(bad) -> None:
    with pytest.raises(SqlError, match="statement"):
        parse_statement(bad)
