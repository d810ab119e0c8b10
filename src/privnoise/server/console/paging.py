"""Sorting and paging of the console's tables, from the page's query string (``sort``, ``dir``, ``page``).

Tables sort on the server, over all their rows (a page of a sorted list, not a sorted page), by a column the
page offers; the links of the headers and of the pager keep the other parameters (filters) of the page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlencode

from fastapi import Request

__all__ = ["Paging", "sort_rows"]


@dataclass(frozen=True)
class Paging:
    """Which rows of a table a page shows, and in which order."""

    sort: str
    descending: bool
    number: int
    size: int
    params: tuple[tuple[str, str], ...]
    total: int = 0

    @classmethod
    def of(
        cls,
        request: Request,
        columns: Sequence[str],
        *,
        default: str,
        size: int,
        descending: bool = False,
    ) -> Paging:
        """The paging asked for by the request (unknown columns and bad numbers fall back to the defaults)."""
        query = request.query_params
        sort = query.get("sort", default)
        if sort not in columns:
            sort = default
        direction = query.get("dir", "")
        number = query.get("page", "1")
        kept = tuple(
            (k, v) for k, v in query.multi_items() if k not in ("sort", "dir", "page") and len(v) <= 64
        )
        return cls(
            sort=sort,
            descending=descending if direction not in ("asc", "desc") else direction == "desc",
            number=int(number) if number.isdigit() and 0 < len(number) <= 9 and int(number) > 0 else 1,
            size=size,
            params=kept,
        )

    def counted(self, total: int) -> Paging:
        """This paging over ``total`` rows (the page number kept within the pages there are)."""
        return replace(self, total=total, number=min(self.number, max(1, -(-total // self.size))))

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.size))

    @property
    def offset(self) -> int:
        return (self.number - 1) * self.size

    def slice(self, rows: Sequence[Any]) -> Sequence[Any]:
        """The rows of this page, of all the (sorted) ``rows``; call after :meth:`counted`."""
        return rows[self.offset : self.offset + self.size]

    def link(self, **changes: Any) -> str:
        """The query string of this table with ``changes`` (sort, dir, page)."""
        current = {"sort": self.sort, "dir": "desc" if self.descending else "asc", "page": str(self.number)}
        current |= {k: str(v) for k, v in changes.items()}
        return "?" + urlencode([*self.params, *current.items()])

    def sort_link(self, column: str) -> str:
        """The link of a column's header: sort by it, or turn the order round if it is the sort already."""
        if column == self.sort:
            return self.link(dir="asc" if self.descending else "desc", page=1)
        return self.link(sort=column, dir="asc", page=1)

    def aria_sort(self, column: str) -> str:
        if column != self.sort:
            return "none"
        return "descending" if self.descending else "ascending"


def sort_rows(rows: list[dict[str, Any]], key: str, descending: bool) -> list[dict[str, Any]]:
    """``rows`` sorted by ``key`` (None last), ties kept in their order."""
    present = [r for r in rows if r.get(key) is not None]
    absent = [r for r in rows if r.get(key) is None]
    return sorted(present, key=lambda r: r[key], reverse=descending) + absent
