"""Filters of a session's rows: public conditions applied before contribution bounding.

``session.where("region = 'north' and kwh >= 10")`` (the query server's ``where`` syntax,
:mod:`privnoise.core.conditions`) or ``session.where(region="north")`` (equalities) returns a view of the session
whose queries aggregate only the rows that satisfy every condition. The rules, the same on every backend:

* a numeric column compares with a number, a text column with a quoted string (by code point); another column type
  (booleans, dates) has no comparison; a missing value (null, None, NaN) never satisfies a condition;
* the filter applies to the rows before contribution bounding: a unit keeps at most k of its matching rows;
* conditions are checked when the view is made — the columns exist, each literal matches its column's type — with
  only the columns' types read (the values of a column of Python objects, to tell text from numbers), before any
  aggregate is computed or any budget charged.

A filter changes no sensitivity: neighbouring datasets differ by one unit's rows, the conditions are public and
evaluated row by row, so adding or removing a unit adds or removes only that unit's matching rows, of which at most
k are kept — the same change as without a filter.

The rows that satisfy the conditions are taken by :func:`~privnoise.analysis.row_masks.row_mask` (its own module,
shared with the in-memory backend).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self

from ..core.conditions import Condition, checked_condition, parse_conditions
from ..core.predicates import (
    AllOf,
    AnyOf,
    InList,
    IsNull,
    Like,
    Not,
    Predicate,
    check_predicate_kinds,
    columns_of,
)
from ..exceptions import InvalidParameterError
from .row_masks import row_mask

if TYPE_CHECKING:
    from .backend import Backend

__all__ = ["FilterViews", "filter_conditions", "parse_conditions", "parse_filter", "row_mask"]

_OWNER = "Session.where"


def parse_filter(text: str) -> tuple[Predicate, ...]:
    """The conditions of ``text``: ``column op literal`` joined by ``and`` or, failing that, a SQL condition
    (``IN``, ``BETWEEN``, ``IS NULL``, ``LIKE``, ``OR``, ``NOT``, parentheses: :func:`privnoise.sql.parse_predicate`)."""
    try:
        return parse_conditions(text)
    except InvalidParameterError as plain:
        from ..sql import SqlError, parse_predicate

        try:
            found = parse_predicate(text)
        except SqlError as sql:
            raise InvalidParameterError(f"{plain} As a SQL condition: {sql}") from None
        return found.parts if isinstance(found, AllOf) else (found,)  # type: ignore[return-value]


def filter_conditions(conditions: Any, equalities: Mapping[str, Any], backend: Backend) -> tuple[Predicate, ...]:
    """The checked conditions of ``session.where(conditions, **equalities)`` (module docstring); an error names
    the parameter and the rule, before any aggregate."""
    if conditions is None and not equalities:
        raise InvalidParameterError(
            f"`{_OWNER}` needs conditions: a text such as \"region = 'north' and kwh >= 10\" or column=value "
            "keywords."
        )
    found: list[Predicate] = []
    try:
        if conditions is not None:
            if isinstance(conditions, Condition | InList | IsNull | Like | Not | AllOf | AnyOf):
                found.append(conditions)
            elif not isinstance(conditions, str):
                raise InvalidParameterError(
                    f"conditions are a string such as \"region = 'north' and kwh >= 10\"; got {type(conditions).__name__}."
                )
            else:
                found.extend(parse_filter(conditions))
        found.extend(checked_condition(name, "=", value) for name, value in equalities.items())
    except InvalidParameterError as exc:
        raise InvalidParameterError(f"`conditions` of `{_OWNER}`: {exc}") from None
    for column in columns_of(found):
        backend.check_column(column, "where")
    try:
        check_predicate_kinds(found, backend.column_kind)
    except InvalidParameterError as exc:
        raise InvalidParameterError(f"`conditions` of `{_OWNER}`: {exc}") from None
    return tuple(found)


class FilterViews:
    """:meth:`where` of :class:`~privnoise.analysis.Session` (its base class)."""

    _backend: Backend
    #: The conditions in force (empty: every row).
    conditions: tuple[Predicate, ...] = ()

    def where(self, conditions: str | None = None, /, **equalities: Any) -> Self:
        """A view of this session whose queries use only the rows that satisfy ``conditions`` (and the equalities).

        The view shares this session's budget, ledger, generator, privacy unit and cap: a query of the view is
        charged to the session. The filter applies before contribution bounding (a unit keeps at most
        ``max_contributions`` of its matching rows), and views chain: ``s.where(a).where(b)`` keeps the rows that
        satisfy both. A filter changes no sensitivity: neighbouring datasets differ by one unit's rows, and the
        conditions are public and evaluated row by row, so adding or removing a unit adds or removes at most k
        matching rows, as without a filter (:mod:`privnoise.analysis.filters`).

        Parameters
        ----------
        conditions : str, optional
            ``column op literal`` joined by ``and``, as in the query server's ``where`` clause: operators
            ``= != < <= > >=``, numbers for numeric columns, quoted strings for text columns (compared by code
            point). A missing value never satisfies a condition.
        **equalities
            ``column=value``: the condition ``column = value``.

        Returns
        -------
        Session
            The filtered view (its ``conditions`` attribute lists every condition in force).

        Raises
        ------
        InvalidParameterError
            A condition that does not parse, names no column, compares a text column with a number (or the
            converse) or a column of another type — before any aggregate is computed or budget charged.

        Examples
        --------
        >>> import numpy as np, privnoise as pn
        >>> data = {"region": np.array(["north", "south"] * 100), "kwh": np.arange(200.0) % 20}
        >>> s = pn.Session(data, epsilon=2.0, rng=1)
        >>> north = s.where("region = 'north' and kwh >= 10")
        >>> release = north.count(epsilon=1.0)
        >>> release.query["where"], s.remaining().epsilon
        ("region = 'north' and kwh >= 10", 1.0)
        >>> north.where(kwh=12).conditions[-1]
        Condition(column='kwh', op='=', value=12.0)
        """
        found = filter_conditions(conditions, equalities, self._backend)
        view = copy.copy(self)
        view.conditions = self.conditions + found
        return view
