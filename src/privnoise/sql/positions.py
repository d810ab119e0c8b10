"""Where a construct stands in a statement: line and column (1-based) from the parser's token offsets."""

from __future__ import annotations

from typing import Any

from .statement import SqlError

__all__ = ["refuse", "where_in"]


def where_in(text: str, node: Any) -> tuple[int | None, int | None]:
    """(line, column) of the first token of ``node`` in ``text`` (None, None when the parser kept no offset)."""
    starts = [n.meta["start"] for n in node.walk() if isinstance(getattr(n, "meta", None), dict) and "start" in n.meta]
    if not starts:
        return None, None
    start = min(starts)
    line = text.count("\n", 0, start) + 1
    column = start - (text.rfind("\n", 0, start) + 1) + 1
    return line, column


def refuse(text: str, node: Any, message: str) -> SqlError:
    """The error for ``node``: ``message`` and its position."""
    line, column = where_in(text, node)
    return SqlError(message, line, column)
