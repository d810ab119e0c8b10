"""``--support`` values naming a 2-D or 3-D support: ``KIND:POINTS`` with points separated by ``;``.

====================================  =========================================================
``box:LO1,LO2[,LO3];HI1,HI2[,HI3]``   the box [LO, HI]
``polygon:X1,Y1;X2,Y2;...``           a simple polygon (convex or not), vertices in order
``ellipse:C1,C2[,C3];S11,S12,...``    {w : (w − C)ᵀ S⁻¹ (w − C) ≤ 1}, S given row by row
``ball:C1,C2[,C3];R``                 the ball of radius R around C
``polyhedron:X,Y,Z;X,Y,Z;...``        the convex hull of the points (3-D)
====================================  =========================================================

Examples
--------
>>> parse_support("polygon:0,0;2,0;2,1;1,1;1,2;0,2", "--support").volume()
3.0
>>> parse_support("ball:0,0;2", "--support").shape.tolist()
[[4.0, 0.0], [0.0, 4.0]]
>>> parse_support("disc:0,0;1", "--support")
Traceback (most recent call last):
...
privnoise._cli.errors.CliInputError: --support kind must be one of box, polygon, ellipse, ball, polyhedron; got 'disc'.
"""

from __future__ import annotations

import math

import numpy as np

from ..exceptions import InvalidParameterError
from .errors import CliInputError

__all__ = ["KINDS", "is_named_support", "parse_matrix_query", "parse_support"]

KINDS = ("box", "polygon", "ellipse", "ball", "polyhedron")


def is_named_support(text: str | None) -> bool:
    """Whether ``--support`` names a support (``KIND:...``) rather than an interval ``LO,HI``."""
    return text is not None and ":" in text


def _points(text: str, option: str) -> list[list[float]]:
    rows = []
    for i, part in enumerate(text.split(";")):
        try:
            row = [float(v) for v in part.split(",")]
        except ValueError:
            raise CliInputError(
                f"{option}: point {i + 1} ({part.strip()!r}) must be numbers separated by commas."
            ) from None
        if not all(math.isfinite(v) for v in row):
            raise CliInputError(f"{option}: point {i + 1} must be finite.")
        rows.append(row)
    return rows


def parse_support(text: str, option: str):  # type: ignore[no-untyped-def]
    """The :class:`~privnoise.fisher.Support` named by ``text`` (``KIND:POINTS``)."""
    from .. import fisher

    kind, _, body = text.partition(":")
    kind = kind.strip().lower()
    if kind not in KINDS:
        raise CliInputError(f"{option} kind must be one of {', '.join(KINDS)}; got {kind!r}.")
    pts = _points(body, option)
    try:
        if kind == "box":
            if len(pts) != 2:
                raise CliInputError(f"{option}: box needs LO;HI; got {len(pts)} point(s).")
            return fisher.Box(pts[0], pts[1])
        if kind == "polygon":
            return fisher.Polygon(pts)
        if kind == "polyhedron":
            return fisher.Polyhedron(pts)
        if len(pts) != 2:
            raise CliInputError(f"{option}: {kind} needs CENTRE;{'R' if kind == 'ball' else 'SHAPE'}.")
        if kind == "ball":
            if len(pts[1]) != 1:
                raise CliInputError(f"{option}: ball radius must be one number.")
            return fisher.Ball(pts[0], pts[1][0])
        d = len(pts[0])
        if len(pts[1]) != d * d:
            raise CliInputError(f"{option}: ellipse shape must have {d * d} entries (row by row).")
        return fisher.Ellipsoid(pts[0], np.array(pts[1]).reshape(d, d))
    except InvalidParameterError as exc:
        raise CliInputError(f"{option}: {exc}") from None


def parse_matrix_query(text: str | None, dim: int, option: str, *, bounds: tuple[float, float] | None = None):  # type: ignore[no-untyped-def]
    """The linear query C given as rows ``R1;R2[;R3]`` (``dim`` rows), or the identity when ``text`` is None."""
    from ..queries import LinearQuery

    if text is None:
        return LinearQuery(np.eye(dim), bounds=bounds)
    rows = _points(text, option)
    if len(rows) != dim or len({len(r) for r in rows}) != 1:
        raise CliInputError(f"{option} must have {dim} rows of equal length (one per output of the support).")
    try:
        return LinearQuery(np.array(rows), bounds=bounds)
    except InvalidParameterError as exc:
        raise CliInputError(f"{option}: {exc}") from None
