"""Row filters against SQLite's own evaluation of the same WHERE clause: three-valued logic, NULLs, IN, BETWEEN,
LIKE and NOT, on random predicates (hypothesis). SQLite (the standard library's) shares no code with privnoise."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import privnoise as pn
from privnoise.analysis.row_masks import row_mask
from privnoise.analysis.table import Table
from privnoise.sql import parse_predicate

ROWS = 60
_rng = np.random.default_rng(4)
NUMBERS = np.where(_rng.random(ROWS) < 0.15, np.nan, _rng.integers(-3, 4, ROWS).astype(float))
WORDS = np.array([None if u < 0.15 else w for u, w in zip(_rng.random(ROWS), _rng.choice(
    ["north", "North", "south", "east", "n_x", "n%"], ROWS), strict=True)], dtype=object)


def _reference(where: str) -> np.ndarray:
    db = sqlite3.connect(":memory:")
    db.execute("PRAGMA case_sensitive_like = ON")
    db.execute("CREATE TABLE t (i INTEGER, x REAL, w TEXT)")
    db.executemany("INSERT INTO t VALUES (?, ?, ?)",
                   [(i, None if np.isnan(x) else float(x), w) for i, (x, w) in enumerate(zip(NUMBERS, WORDS, strict=True))])
    chosen = {row[0] for row in db.execute(f"SELECT i FROM t WHERE {where}")}
    return np.array([i in chosen for i in range(ROWS)])


number = st.integers(-4, 4).map(str)
word = st.sampled_from(["'north'", "'North'", "'south'", "'zz'", "'n_x'"])
atom = st.one_of(
    st.tuples(st.sampled_from(["=", "!=", "<", "<=", ">", ">="]), number).map(lambda t: f"x {t[0]} {t[1]}"),
    st.tuples(st.sampled_from(["=", "!=", "<", ">="]), word).map(lambda t: f"w {t[0]} {t[1]}"),
    st.lists(number, min_size=1, max_size=3).map(lambda v: f"x IN ({', '.join(v)})"),
    st.lists(word, min_size=1, max_size=3).map(lambda v: f"w NOT IN ({', '.join(v)})"),
    st.tuples(number, number).map(lambda t: f"x BETWEEN {t[0]} AND {t[1]}"),
    st.sampled_from(["x IS NULL", "w IS NOT NULL", "w LIKE 'n%'", "w NOT LIKE '%th'",
                     "w LIKE '_o%'"]),
)
predicate = st.recursive(atom, lambda inner: st.one_of(
    st.tuples(inner, st.sampled_from(["AND", "OR"]), inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
    inner.map(lambda p: f"NOT ({p})"),
), max_leaves=5)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(predicate)
def test_random_where_clauses_keep_the_rows_sqlite_keeps(where: str) -> None:
    table = Table({"x": NUMBERS, "w": WORDS})
    mine = row_mask(table, (parse_predicate(where),))
    assert mine is not None
    np.testing.assert_array_equal(mine, _reference(where))


def test_the_session_counts_what_sqlite_counts() -> None:
    where = "(x > 0 OR w LIKE 'n%') AND NOT x IS NULL AND w IN ('north', 'n%', 'n_x')"
    frame = {"x": NUMBERS, "w": WORDS}
    s = pn.Session(frame, epsilon=1e6, missing="drop", rng=1)
    # ε huge: the discrete Laplace count is exact with probability > 1 − 1e-100
    assert s.where(where).count(epsilon=1e6).value == int(_reference(where).sum())


def test_a_missing_value_satisfies_neither_a_comparison_nor_its_negation() -> None:
    table = Table({"x": NUMBERS, "w": WORDS})
    yes = row_mask(table, (parse_predicate("x > 0"),))
    no = row_mask(table, (parse_predicate("NOT x > 0"),))
    assert yes is not None and no is not None
    assert not np.any(yes & no) and np.array_equal(~(yes | no), np.isnan(NUMBERS))


@pytest.mark.parametrize("pattern", ["n%", "%th", "_o%", "%", "n_x", "n%%"])
def test_like_patterns_against_sqlite(pattern: str) -> None:
    table = Table({"x": NUMBERS, "w": WORDS})
    mask = row_mask(table, (parse_predicate(f"w LIKE '{pattern}'"),))
    np.testing.assert_array_equal(mask, _reference(f"w LIKE '{pattern}'"))
