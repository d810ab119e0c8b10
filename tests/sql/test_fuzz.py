"""Random statements — token soup and mutations of valid ones — are either read or refused with a SqlError; the
reader never raises anything else, and a refusal's position lies inside the statement."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from privnoise.sql import SqlError, parse_statement

VALID = [
    "SELECT region, AVG(kwh) AS m, COUNT(*) FROM meters WHERE kwh > 0 AND region IN ('a', 'b') GROUP BY region "
    "HAVING COUNT(*) > 3 ORDER BY m DESC LIMIT 2",
    "SELECT PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY kwh), STDDEV(kwh) FROM t WHERE NOT (x IS NULL OR y LIKE 'a%')",
    "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon=1, delta=1e-6, privacy_unit_column=id) COUNT(*) FROM t",
]


def _check(text: str, dialect: str | None) -> None:
    try:
        parse_statement(text, dialect=dialect)
    except SqlError as exc:
        if exc.line is not None:  # carriage returns are line breaks, a CR LF pair one
            lines = text.replace("\r\n", "\n").replace("\r", "\n").count("\n") + 1
            assert 1 <= exc.line <= lines and exc.column is not None and exc.column >= 1


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("SELECT COUNT(*)FROMtWHEREx>1'a'()GROUPBY,;-\n\"`%_.=<!")),
               max_size=80), st.sampled_from([None, "postgres", "bigquery", "spark", "duckdb"]))
def test_token_soup_is_read_or_refused(text: str, dialect: str | None) -> None:
    _check(text, dialect)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(VALID), st.integers(0, 200), st.integers(0, 12), st.text(max_size=6),
       st.sampled_from([None, "postgres", "bigquery", "spark", "duckdb"]))
def test_mutated_statements_are_read_or_refused(base: str, at: int, cut: int, insert: str, dialect: str | None) -> None:
    at = min(at, len(base))
    _check(base[:at] + insert + base[at + cut:], dialect)
