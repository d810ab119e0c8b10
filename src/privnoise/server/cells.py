"""The cell of each record of a histogram or a group-by over declared keys, computed once per record, and the 0/1
test of each cell on it (:mod:`.vectors`, :mod:`.row_source`); the same work for every record whatever its cell
and whatever the filter selects (SECURITY.md, requirements 13 and 16).

* **Bins of a numeric column.** With internal edges e₁ < … < e_{k−1} of k bins and x the value clamped to its
  declared bounds, the bin is ``CAST(Σᵢ sign(x − eᵢ) + k AS INTEGER) / 2`` (integer division): in the open bin
  (e_j, e_{j+1}) the sum is j − (k − 1 − j), at x = e_j one less, so that the cast is 2j + 1 or 2j. Values below
  the first edge or above the last give −(k − 1) and k − 1, bins 0 and k − 1: the bins of the value clamped to
  the edges, without clamping it again. ``sign`` is a function (its comparisons run inside it) and x − eᵢ is 0
  exactly when x = eᵢ (gradual underflow; overflow to ±∞ keeps the sign), so the index does the same work for
  every value (:mod:`.indicators`). When every internal edge lies strictly inside the declared bounds, a value
  beyond a bound is in the bin of that bound, so SQLite (whose stored doubles are never NaN) bins the stored
  value, NULL as the lower bound, without clamping it (:mod:`.row_source`).
* **Declared keys of text columns.** A key column's index is Σⱼ (j + 1)·(c IS aⱼ) over its declared categories
  a₁, …: j + 1 for the j-th category, 0 for another value or NULL (``IS`` — PostgreSQL's ``IS NOT DISTINCT
  FROM`` — is never NULL). On several key columns the cell of a record is the tuple of their indices.

Each cell's test compares the record's index with the cell's (``b = j``, one comparison). A comparison does not
do the same work when it holds and when it does not (SQLite executes one more instruction when it fails), so the
tests are balanced over the record, never left to the data:

* every clamped value is in exactly one bin, so of the k bin tests exactly one holds for every record;
* of a key column's equalities, one holds when its value is declared and none otherwise; of the cells' tests,
  one holds when every key is declared and none otherwise. So the tests of a record also evaluate, once for each
  key column, ``index = 0`` (true exactly when its equalities all failed), and once ``Π indices = 0`` (true
  exactly when no cell test holds), added to the first cell's test multiplied by 0: every record evaluates
  as many true comparisons (the number of key columns, plus one) as every other.

When each cell's test is read by one term of the statement only (a count or a sum per cell, a histogram), the
record's cell is computed once with the balancing tests (:func:`balanced_code`) and each cell's test is one
comparison with it, in the aggregate itself (:func:`code_tests`); otherwise (a mean per cell reads each test twice)
each test is computed once beside the balancing tests (:func:`key_tests`) and read as a column.

The filter never enters an index: it is the record's weight, multiplied into every sum — or, when the weight is
computed once per record before the cells (:mod:`.row_source`), multiplied once per record into each cell's test,
or into the record's cell (:func:`weighted_code`: a record filtered out is in no cell, and a balancing test holds
for it instead), so that the sums read the tests alone. Either way every record does the same work, whatever the
filter selects.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Float, Integer, cast, func, literal, literal_column, type_coerce

__all__ = [
    "balanced_code", "bin_index", "bin_tests", "code_tests", "flag", "key_balance", "key_code", "key_codes",
    "key_index", "key_tests", "weighted_code",
]


def flag(test: Any, dialect: str) -> Any:
    """The 0/1 integer value of a boolean SQL ``test`` (SQLite: the comparison's own value; PostgreSQL: cast)."""
    if dialect == "sqlite":
        return type_coerce(test, Integer)
    return cast(test, Integer)


def _int(n: int) -> Any:
    return literal_column(str(int(n)), Integer)


def bin_index(x: Any, edges: Sequence[float]) -> Any:
    """The 0-based bin of ``x`` among the bins of ``edges`` (module docstring; the last bin closed, values outside
    the edges in the first or the last bin).

    Examples
    --------
    >>> from sqlalchemy import column
    >>> print(bin_index(column("x"), [0.0, 5.0, 60.0]).compile(compile_kwargs={"literal_binds": True}))
    CAST(sign(x - 5.0) + 2.0 AS INTEGER) / 2
    """
    total: Any = literal(float(len(edges) - 1), Float)
    for e in reversed(edges[1:-1]):
        total = func.sign(x - literal(float(e), Float)) + total
    return cast(total, Integer) // _int(2)


def bin_tests(index: Any, bins: int, dialect: str) -> list[Any]:
    """One 0/1 test per bin on a record's bin ``index`` (:func:`bin_index`): exactly one holds for every record."""
    return [flag(index == _int(j), dialect) for j in range(bins)]


def key_index(column: Any, categories: Sequence[str], dialect: str) -> Any:
    """Σⱼ (j + 1)·(``column`` IS aⱼ) over the declared ``categories``: 0 for a value not declared, or NULL.

    Examples
    --------
    >>> from sqlalchemy import column
    >>> from sqlalchemy.dialects import sqlite
    >>> index = key_index(column("r"), ["n", "s"], "sqlite")
    >>> print(index.compile(dialect=sqlite.dialect()))
    (r IS ?) + 2 * (r IS ?)
    """
    tests = [flag(column.is_not_distinct_from(literal(a)), dialect) for a in categories]
    total = tests[0]
    for j, t in enumerate(tests[1:], start=2):
        total = total + _int(j) * t
    return total


def key_code(indices: Sequence[Any], categories: Sequence[Sequence[str]]) -> Any:
    """The cell of a record from its key ``indices`` (:func:`key_index`, one per key column, whose declared
    ``categories`` are given): the indices as digits, each column's radix its number of categories + 1."""
    code: Any = indices[-1]
    for index, radix in zip(indices[:-1], _radices(categories)[:-1], strict=True):
        code = index * _int(radix) + code
    return code


def key_codes(categories: Sequence[Sequence[str]], keys: Sequence[Any]) -> list[int]:
    """The :func:`key_code` of each cell of ``keys`` (a category per cell on one key column, a tuple of them on
    several)."""
    radices = _radices(categories)
    return [sum(r * (list(c).index(k) + 1) for r, c, k in zip(radices, categories, (key,) if len(categories) == 1
                                                             else tuple(key), strict=True)) for key in keys]


def key_balance(indices: Sequence[Any], dialect: str, weight: Any = None) -> Any:
    """The balancing tests of the module docstring: ``index = 0`` for each key column, ``Π indices = 0`` once
    (``weight · Π indices = 0`` when the cell is multiplied by the record's 0/1 filter ``weight``: true exactly when
    no cell's test holds, the record being filtered out or one of its keys not declared)."""
    product: Any = indices[0] if weight is None else weight * indices[0]
    for index in indices[1:]:
        product = product * index
    balance: Any = flag(product == _int(0), dialect)
    for index in indices:
        balance = balance + flag(index == _int(0), dialect)
    return balance


def key_tests(indices: Sequence[Any], categories: Sequence[Sequence[str]], keys: Sequence[Any],
              dialect: str) -> list[Any]:
    """One 0/1 test per cell of ``keys`` on the records' key ``indices`` (:func:`key_code`), with the balancing
    tests (:func:`key_balance`) added to the first, multiplied by 0."""
    code = key_code(indices, categories)
    tests = [flag(code == _int(value), dialect) for value in key_codes(categories, keys)]
    if tests:
        tests[0] = tests[0] + _int(0) * key_balance(indices, dialect)
    return tests


def balanced_code(indices: Sequence[Any], categories: Sequence[Sequence[str]], dialect: str) -> Any:
    """:func:`key_code` with the balancing tests (:func:`key_balance`) added, multiplied by 0: for a record's cell
    computed once, when each cell's test (:func:`code_tests`) is read once per record."""
    return key_code(indices, categories) + _int(0) * key_balance(indices, dialect)


def weighted_code(indices: Sequence[Any], categories: Sequence[Sequence[str]], weight: Any, dialect: str) -> Any:
    """:func:`balanced_code` times the record's 0/1 filter ``weight`` (0, no cell, when the record is filtered
    out), with the balancing tests of that product (:func:`key_balance`): the filter is then in the cell, each
    cell's test (:func:`code_tests`) counts the record only when it is selected, and of the cells' tests and the
    balancing product test exactly one holds for every record."""
    return weight * key_code(indices, categories) + _int(0) * key_balance(indices, dialect, weight)


def code_tests(code: Any, categories: Sequence[Sequence[str]], keys: Sequence[Any], dialect: str) -> list[Any]:
    """One 0/1 test per cell of ``keys`` on a record's cell ``code`` (:func:`balanced_code`)."""
    return [flag(code == _int(value), dialect) for value in key_codes(categories, keys)]


def _radices(categories: Sequence[Sequence[str]]) -> list[int]:
    return [math.prod(len(c) + 1 for c in categories[i + 1:]) for i in range(len(categories))]
