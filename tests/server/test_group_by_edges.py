"""Edges of the server's group-by cells: exactly the cell limit is allowed (one more is refused), and the keys a
partition selection stores on one key column are plain strings in text order (lists of strings on several)."""

from __future__ import annotations

from fractions import Fraction

import pytest

pytest.importorskip("fastapi")

from sqlalchemy import MetaData, create_engine  # noqa: E402

from privnoise.server.config import ColumnSpec, DatasetSpec  # noqa: E402
from privnoise.server.db import data_table  # noqa: E402
from privnoise.server.planner import make_plan  # noqa: E402
from privnoise.server.querylang import QueryError, parse_query  # noqa: E402
from privnoise.server.vectors import MAX_CELLS, cell_count, stored_keys  # noqa: E402
from tests.server.test_group_by_keys import COLUMNS, _laplace  # noqa: E402


def _spec(sizes: tuple[int, int]) -> DatasetSpec:
    cols = {f"k{i}": ColumnSpec(f"k{i}", "text", categories=tuple(f"v{j:03d}" for j in range(n)))
            for i, n in enumerate(sizes)}
    return DatasetSpec("d", "d", None, Fraction(10), Fraction(1, 1000), {**COLUMNS, **cols},
                       {"count": _laplace()("count")})


def test_exactly_the_cell_limit_is_planned_and_one_more_is_refused() -> None:
    assert MAX_CELLS == 256
    dialect = create_engine("sqlite://").dialect
    for sizes, allowed in (((16, 16), True), ((2, 128), True), ((257, 1), False), ((16, 17), False)):
        spec = _spec(sizes)
        assert cell_count(spec, ("k0", "k1")) == sizes[0] * sizes[1]
        table = data_table("d", {c: s.type for c, s in spec.columns.items()}, MetaData())
        query = parse_query("count() group by k0, k1")
        if allowed:
            plan = make_plan(query, spec, table, records=3, dialect=dialect)
            assert len(plan.keys) == sizes[0] * sizes[1]
        else:
            with pytest.raises(QueryError, match=f"more than the limit of {MAX_CELLS}"):
                make_plan(query, spec, table, records=3, dialect=dialect)


def test_stored_keys_of_one_column_are_strings_in_text_order() -> None:
    spec = _spec((2, 2))
    rows = [("west", 3, 1.0), ("east", 5, 2.0), (None, 9, 9.0), ("north", 1, 4.0)]
    keys, kept = stored_keys(rows, spec, ("free",))
    assert keys == ["east", "north", "west"] and kept == [(5, 2.0), (1, 4.0), (3, 1.0)]
    pairs, rest = stored_keys([("b", "v001", 2), ("a", "v000", 1), ("a", "zzz", 7)], spec, ("free", "k0"))
    assert pairs == [["a", "v000"], ["b", "v001"]] and rest == [(1,), (2,)]
