"""Turning command-line options into privnoise objects, with messages that name the option at fault."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from .errors import CliInputError

if TYPE_CHECKING:
    from ..queries import Query

__all__ = ["CliInputError", "build_query", "choose_goal", "parse_list", "parse_pair"]

# The largest identity query the CLI designs: its Cramér–Rao bound needs the dense n × n Fisher matrix.
MAX_IDENTITY = 4096


def _number(text: str, option: str, what: str) -> float:
    try:
        value = float(text.strip())
    except ValueError:
        raise CliInputError(f"{option}: {what} {text.strip()!r} is not a number.") from None
    if not math.isfinite(value):
        raise CliInputError(f"{option}: {what} must be finite; got {text.strip()!r}.")
    return value


def parse_pair(text: str | None, option: str) -> tuple[float, float] | None:
    """Parse ``"LO,HI"`` (two finite numbers, LO < HI) given to ``option``; None stays None.

    Examples
    --------
    >>> parse_pair("-0.1, 0.1", "--support")
    (-0.1, 0.1)
    >>> parse_pair("1", "--support")
    Traceback (most recent call last):
    ...
    privnoise._cli.errors.CliInputError: --support must be LO,HI (two numbers separated by a comma); got '1'.
    """
    if text is None:
        return None
    parts = text.split(",")
    if len(parts) != 2:
        raise CliInputError(f"{option} must be LO,HI (two numbers separated by a comma); got {text!r}.")
    lo = _number(parts[0], option, "LO")
    hi = _number(parts[1], option, "HI")
    if not lo < hi:
        raise CliInputError(f"{option} must have LO < HI; got LO = {lo:g}, HI = {hi:g}.")
    return lo, hi


def parse_list(text: str | None, option: str) -> list[float] | None:
    """Parse a comma-separated list of finite numbers given to ``option``."""
    if text is None:
        return None
    parts = [p for p in text.split(",")]
    if not text.strip() or any(not p.strip() for p in parts):
        raise CliInputError(f"{option} must be a comma-separated list of numbers; got {text!r}.")
    return [_number(p, option, f"entry {i + 1}") for i, p in enumerate(parts)]


def choose_goal(**goals: Any) -> dict[str, Any]:
    """Exactly one privacy goal; keys are optimal_noise's keyword names, reported as ``--option`` names."""
    given = {k: v for k, v in goals.items() if v is not None}
    options = ", ".join("--" + k.replace("_", "-") for k in goals)
    if len(given) != 1:
        got = " and ".join("--" + k.replace("_", "-") for k in given) or "none"
        raise CliInputError(f"give exactly one goal among {options}; got {got}.")
    return given


def build_query(
    kind: str,
    n: int | None,
    *,
    weights: list[float] | None = None,
    bounds: tuple[float, float] | None = None,
) -> Query:
    """The query ``kind`` (mean, sum, variance, identity) on n records, optionally weighted (mean, sum)."""
    from .. import queries
    from ..queries import LinearQuery

    if weights is not None:
        if kind not in ("mean", "sum"):
            raise CliInputError(f"--weights applies to --query mean or sum, not {kind}.")
        if n is not None and n != len(weights):
            raise CliInputError(f"--n is {n} but --weights has {len(weights)} entries.")
        if kind == "mean":
            return queries.weighted_mean(weights, bounds=bounds)
        return LinearQuery(weights, bounds=bounds, name="weighted_sum")
    if n is None:
        raise CliInputError("--n (the number of records) is required unless --weights is given.")
    if kind == "mean":
        return queries.mean(n, bounds=bounds)
    if kind == "sum":
        return queries.sum_query(n, bounds=bounds)
    if kind == "variance":
        if n < 2:
            raise CliInputError(f"--n must be >= 2 for --query variance; got {n}.")
        return queries.variance(n, bounds=bounds)
    if kind == "identity":
        if n > MAX_IDENTITY:
            raise CliInputError(
                f"--n must be <= {MAX_IDENTITY} for --query identity (its Cramér–Rao bound needs the dense "
                f"n × n Fisher matrix); got {n}. Use the Python API for larger releases."
            )
        return queries.identity(n, bounds=bounds)
    raise CliInputError(f"--query must be mean, sum, variance or identity; got {kind!r}.")
