"""Supports written as text, ``KIND:POINTS`` with points separated by ``;`` (``privnoise design --support`` and a
server policy's ``support``).

====================================  =========================================================
``box:LO1,LO2[,LO3];HI1,HI2[,HI3]``   the box [LO, HI]
``polygon:X1,Y1;X2,Y2;...``           a simple polygon (convex or not), vertices in order
``ellipse:C1,C2[,C3];S11,S12,...``    {w : (w − C)ᵀ S⁻¹ (w − C) ≤ 1}, S given row by row
``ball:C1,C2[,C3];R``                 the ball of radius R around C
``polyhedron:X,Y,Z;X,Y,Z;...``        the convex hull of the points (3-D)
====================================  =========================================================

Examples
--------
>>> parse_support("polygon:0,0;2,0;2,1;1,1;1,2;0,2", "support").volume()
3.0
>>> parse_support("ball:0,0;2", "support").shape.tolist()
[[4.0, 0.0], [0.0, 4.0]]
>>> parse_support("disc:0,0;1", "support")
Traceback (most recent call last):
...
privnoise.exceptions.InvalidParameterError: support kind must be one of box, polygon, ellipse, ball, polyhedron; got 'disc'.
"""

from __future__ import annotations

import math

import numpy as np

from ..exceptions import InvalidParameterError

__all__ = ["KINDS", "is_named_support", "parse_points", "parse_support"]

KINDS = ("box", "polygon", "ellipse", "ball", "polyhedron")


def is_named_support(text: str | None) -> bool:
    """Whether ``--support`` names a support (``KIND:...``) rather than an interval ``LO,HI``."""
    return text is not None and ":" in text


def parse_points(text: str, option: str) -> list[list[float]]:
    """The points of ``text`` (rows of numbers separated by ``;``), each finite; errors name ``option``."""
    rows = []
    for i, part in enumerate(text.split(";")):
        try:
            row = [float(v) for v in part.split(",")]
        except ValueError:
            raise InvalidParameterError(
                f"{option}: point {i + 1} ({part.strip()!r}) must be numbers separated by commas."
            ) from None
        if not all(math.isfinite(v) for v in row):
            raise InvalidParameterError(f"{option}: point {i + 1} must be finite.")
        rows.append(row)
    return rows


def parse_support(text: str, option: str):  # type: ignore[no-untyped-def]
    """The :class:`~privnoise.fisher.Support` named by ``text`` (``KIND:POINTS``); errors name ``option``."""
    from . import supports as fisher

    kind, _, body = text.partition(":")
    kind = kind.strip().lower()
    if kind not in KINDS:
        raise InvalidParameterError(f"{option} kind must be one of {', '.join(KINDS)}; got {kind!r}.")
    pts = parse_points(body, option)
    try:
        if kind == "box":
            if len(pts) != 2:
                raise InvalidParameterError(f"{option}: box needs LO;HI; got {len(pts)} point(s).")
            return fisher.Box(pts[0], pts[1])
        if kind == "polygon":
            return fisher.Polygon(pts)
        if kind == "polyhedron":
            return fisher.Polyhedron(pts)
        if len(pts) != 2:
            raise InvalidParameterError(f"{option}: {kind} needs CENTRE;{'R' if kind == 'ball' else 'SHAPE'}.")
        if kind == "ball":
            if len(pts[1]) != 1:
                raise InvalidParameterError(f"{option}: ball radius must be one number.")
            return fisher.Ball(pts[0], pts[1][0])
        d = len(pts[0])
        if len(pts[1]) != d * d:
            raise InvalidParameterError(f"{option}: ellipse shape must have {d * d} entries (row by row).")
        return fisher.Ellipsoid(pts[0], np.array(pts[1]).reshape(d, d))
    except InvalidParameterError as exc:
        if str(exc).startswith(option):
            raise
        raise InvalidParameterError(f"{option}: {exc}") from None

