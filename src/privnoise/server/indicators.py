"""Constant-work 0/1 indicators of a record's conditions, as SQL expressions (SECURITY.md, requirements 13 and 16).

A ``CASE WHEN test THEN 1 ELSE 0 END`` does not do the same work for a record that passes the test and one that
does not: SQLite's virtual machine executes one more instruction (the jump over the ``ELSE``) when the test holds,
PostgreSQL's expression interpreter likewise, so that the time of a filtered aggregate grows with the number of
records its filter selects. Measured on 10⁵ records, a group-by whose filter selected every record took 3 % longer
than one that selected none, which a two-sample KS test on latencies detects.

The expressions here do the same work whatever the outcome:

* a **numeric** comparison of x with a literal t goes through ``s = sign(x − t)`` ∈ {−1, 0, 1} and the scalar
  ``min``/``max`` (``least``/``greatest``), whose comparisons run inside the function, not as jumps of the
  statement:

  ====  ======================
  op    indicator
  ====  ======================
  >=    min(1, s + 1)
  >     max(0, s)
  <=    min(1, 1 − s)
  <     max(0, −s)
  =     1 − |s|
  !=    |s|
  ====  ======================

  For finite doubles x − t = 0 exactly when x = t (gradual underflow), and it cannot overflow: stored values are
  clamped to bounds within ±1e100 (:data:`~.checks.BOUND_MAX`) and literals are finite.
* a **text** comparison (or any other test) is paired with its negation:
  ``CASE WHEN test THEN 1 ELSE 0 END * CASE WHEN NOT test THEN 0 ELSE 1 END``. Exactly one of the two takes its
  ``THEN`` branch, so every record executes the same instructions (a NULL value, which fails both, is the only
  exception; NULLs are a property of the column, not of the filter).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Float, case, func, literal

__all__ = ["both_ways", "compare", "numeric_comparison"]

ONE = 1.0
ZERO = 0.0


def _pick(dialect: str) -> tuple[Any, Any]:
    """The scalar (min, max) of two arguments in ``dialect``."""
    if dialect == "sqlite":
        return func.min, func.max
    return func.least, func.greatest


def numeric_comparison(x: Any, op: str, t: float, dialect: str) -> Any:
    """The 0/1 value of ``x op t`` (module table) for a numeric expression ``x`` and a finite literal ``t``.

    Examples
    --------
    >>> from sqlalchemy import column
    >>> print(numeric_comparison(column("x"), ">=", 2.0, "sqlite").compile(compile_kwargs={"literal_binds": True}))
    min(1.0, sign(x - 2.0) + 1.0)
    """
    least, greatest = _pick(dialect)
    one, zero = literal(ONE, Float), literal(ZERO, Float)
    s = func.sign(x - literal(float(t), Float))
    if op == ">=":
        return least(one, s + one)
    if op == ">":
        return greatest(zero, s)
    if op == "<=":
        return least(one, one - s)
    if op == "<":
        return greatest(zero, -s)
    if op == "=":
        return one - func.abs(s)
    if op == "!=":
        return func.abs(s)
    raise ValueError(f"unknown comparison {op!r}; expected one of =, !=, <, <=, >, >=")


def both_ways(test: Any) -> Any:
    """The 0/1 value of a boolean SQL ``test``, evaluated with its negation so that both outcomes do the same work
    (module docstring); NULL counts as false."""
    one, zero = literal(ONE, Float), literal(ZERO, Float)
    return case((test, one), else_=zero) * case((~test, zero), else_=one)


def compare(lhs: Any, op: str, rhs: Any, numeric: bool, dialect: str) -> Any:
    """The constant-work 0/1 value of ``lhs op rhs``: :func:`numeric_comparison` for a numeric ``lhs`` and
    literal ``rhs`` (a float), :func:`both_ways` otherwise (``rhs`` a text literal)."""
    if numeric:
        return numeric_comparison(lhs, op, float(rhs), dialect)
    r = literal(rhs)
    test = {"=": lhs == r, "!=": lhs != r, "<": lhs < r, "<=": lhs <= r, ">": lhs > r, ">=": lhs >= r}.get(op)
    if test is None:
        raise ValueError(f"unknown comparison {op!r}; expected one of =, !=, <, <=, >, >=")
    return both_ways(test)
