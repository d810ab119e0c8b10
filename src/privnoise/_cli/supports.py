"""``--support`` values naming a 2-D or 3-D support (the forms of :mod:`privnoise.fisher.support_text`), and
``--query`` rows of a linear query, with errors as command-line input errors.

Examples
--------
>>> parse_support("disc:0,0;1", "--support")
Traceback (most recent call last):
...
privnoise._cli.errors.CliInputError: --support kind must be one of box, polygon, ellipse, ball, polyhedron; got 'disc'.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..exceptions import InvalidParameterError
from ..fisher import support_text
from .errors import CliInputError

__all__ = ["is_named_support", "parse_matrix_query", "parse_support"]

is_named_support = support_text.is_named_support


def parse_support(text: str, option: str) -> Any:
    """The :class:`~privnoise.fisher.Support` named by ``--support`` (``KIND:POINTS``)."""
    try:
        return support_text.parse_support(text, option)
    except InvalidParameterError as exc:
        raise CliInputError(str(exc)) from None


def parse_matrix_query(text: str | None, dim: int, option: str, *, bounds: tuple[float, float] | None = None):  # type: ignore[no-untyped-def]
    """The linear query C given as rows ``R1;R2[;R3]`` (``dim`` rows), or the identity when ``text`` is None."""
    from ..queries import LinearQuery

    if text is None:
        return LinearQuery(np.eye(dim), bounds=bounds)
    try:
        rows = support_text.parse_points(text, option)
    except InvalidParameterError as exc:
        raise CliInputError(str(exc)) from None
    if len(rows) != dim or len({len(r) for r in rows}) != 1:
        raise CliInputError(f"{option} must have {dim} rows of equal length (one per output of the support).")
    try:
        return LinearQuery(np.array(rows), bounds=bounds)
    except InvalidParameterError as exc:
        raise CliInputError(f"{option}: {exc}") from None
