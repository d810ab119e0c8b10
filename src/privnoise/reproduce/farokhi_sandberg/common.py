"""Helpers shared by the sections of the Farokhi & Sandberg reproduction: typed designs and second methods."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import integrate

from ... import queries
from ...fisher import optimal_noise
from ...mechanisms import Mechanism
from .._report import Row, make_row

__all__ = ["PI2", "cholesky_matrix", "noise_for", "printed_cos2", "quad", "same_noise_row"]

PI2 = math.pi**2


def noise_for(query: queries.Query, **goal: Any) -> Mechanism:
    """``optimal_noise`` for a data-independent goal, typed as a Mechanism."""
    mech = optimal_noise(query, **goal)
    if not isinstance(mech, Mechanism):
        raise TypeError(f"expected a Mechanism for {goal}; got {type(mech).__name__}")
    return mech


def same_noise_row(key: str, claim: str, first: Mechanism, second: Mechanism, grid: NDArray[np.float64],
                   reason: str) -> Row:
    """A ``match`` row saying two optimal noises are one: printed 0, computed max over ``grid`` of abs(γ₁ − γ₂)."""
    largest_gap = float(np.max(np.abs(first.pdf(grid) - second.pdf(grid))))
    return make_row(key, claim, 0.0, largest_gap, "match", reason)


def quad(fn: Callable[[float], float], a: float, b: float, *, points: tuple[float, ...] = ()) -> float:
    """Adaptive quadrature of ``fn`` on [a, b] to a relative 1e-11 (the second method of many rows)."""
    kwargs: dict[str, Any] = {"epsabs": 0.0, "epsrel": 1e-11, "limit": 400}
    if points:
        kwargs["points"] = points
    value, _ = integrate.quad(fn, a, b, **kwargs)
    return float(value)


def printed_cos2(w: NDArray[np.float64], lower: float, upper: float) -> NDArray[np.float64]:
    """Corollary 1 / eq. (14) as printed, product over the last axis (1-d input: one coordinate)."""
    width = upper - lower
    per = (2.0 / width) * np.cos(math.pi / width * (w - (upper + lower) / 2.0)) ** 2
    per = np.where((w >= lower) & (w <= upper), per, 0.0)
    return np.asarray(np.prod(np.atleast_1d(per), axis=-1))


def cholesky_matrix(params: NDArray[np.float64], m: int) -> NDArray[np.float64]:
    """The positive-definite LLᵀ of a lower factor given by its m(m+1)/2 entries (log-diagonal)."""
    lower = np.zeros((m, m))
    lower[np.tril_indices(m)] = params
    lower[np.diag_indices(m)] = np.exp(lower[np.diag_indices(m)])
    return lower @ lower.T
