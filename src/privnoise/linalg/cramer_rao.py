"""Cramér–Rao bounds on an adversary's estimation error (Farokhi & Sandberg, Section 2 and Appendix A).

All functions take a Fisher information matrix 𝓘 of the data x (n × n) and return lower bounds on mean squared
errors of estimators of x built from a release:

==========================  ===================================================================================
:func:`cramer_rao_bound`    Proposition 1, eq. (4): E‖x − x̂‖² ≥ Tr(𝓘⁻¹) for unbiased x̂ (∞ when 𝓘 is singular)
:func:`biased_bound`        Proposition 1, eq. (5): Tr(Gᵀ𝓘⁻¹G) + ‖x − g(x)‖² when E x̂ = g(x)
:func:`record_bounds`       eq. (7): E|x_i − x̂_i|² ≥ 1/𝓘_ii when every other record is known
:func:`trace_bound`         eq. (8): min_i E|x_i − x̂_i|² ≥ 1/Tr(𝓘)
:func:`jensen_bound`        Proposition 5: Tr(𝓘⁻¹) ≥ n²/Tr(𝓘)
==========================  ===================================================================================

Examples
--------
>>> import numpy as np
>>> from privnoise.linalg import cramer_rao
>>> info = np.diag([4.0, 1.0])
>>> cramer_rao.cramer_rao_bound(info), cramer_rao.trace_bound(info), cramer_rao.jensen_bound(info)
(1.25, 0.2, 0.8)
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import as_finite_array, as_matrix
from ..exceptions import DimensionError, InvalidParameterError

__all__ = [
    "biased_bound",
    "cramer_rao_bound",
    "is_invertible",
    "jensen_bound",
    "record_bounds",
    "trace_bound",
]


def _information(information: ArrayLike, owner: str) -> NDArray[np.float64]:
    info = as_matrix(information, "information", owner, symmetric=True)
    if np.min(np.linalg.eigvalsh(info)) < -1e-9 * max(1.0, float(np.max(np.abs(info)))):
        raise InvalidParameterError(f"`information` of `{owner}` must be positive semi-definite.")
    return info


def is_invertible(information: ArrayLike, *, rtol: float = 1e-12) -> bool:
    """Whether 𝓘 is numerically invertible (smallest eigenvalue > rtol × largest)."""
    eig = np.linalg.eigvalsh(_information(information, "is_invertible"))
    return bool(eig[-1] > 0 and eig[0] > rtol * eig[-1])


def cramer_rao_bound(information: ArrayLike) -> float:
    """Tr(𝓘⁻¹), the lower bound on E‖x − x̂‖² of every unbiased estimator (Proposition 1, eq. (4)).

    Returns ``inf`` when 𝓘 is singular: then no unbiased estimator of x exists (some direction of x does not
    change the law of the release).
    """
    info = _information(information, "cramer_rao_bound")
    if not is_invertible(info):
        return math.inf
    return float(np.trace(np.linalg.inv(info)))


def biased_bound(information: ArrayLike, bias_jacobian: ArrayLike, bias: ArrayLike) -> float:
    """Tr(Gᵀ𝓘⁻¹G) + ‖x − g(x)‖² for estimators with E x̂ = g(x) and G = ∂g/∂x (Proposition 1, eq. (5)).

    ``bias`` is x − g(x). Requires an invertible 𝓘.
    """
    info = _information(information, "biased_bound")
    g = as_matrix(bias_jacobian, "bias_jacobian", "biased_bound")
    b = as_finite_array(bias, "bias", "biased_bound", ndim=1)
    n = info.shape[0]
    if g.shape[0] != n or b.shape != (n,):
        raise DimensionError(
            f"`bias_jacobian` must have {n} rows and `bias` length {n} (the size of `information`)."
        )
    if not is_invertible(info):
        raise InvalidParameterError("`information` of `biased_bound` must be invertible (eq. (5) needs 𝓘⁻¹).")
    return float(np.trace(g.T @ np.linalg.solve(info, g)) + b @ b)


def record_bounds(information: ArrayLike) -> NDArray[np.float64]:
    """1/𝓘_ii for each record: the error bound on x_i for an adversary who knows every other record (eq. (7))."""
    diag = np.diag(_information(information, "record_bounds"))
    with np.errstate(divide="ignore"):
        return np.where(diag > 0, 1.0 / np.where(diag > 0, diag, 1.0), np.inf)


def trace_bound(information: ArrayLike) -> float:
    """1/Tr(𝓘): a lower bound on every record's error with all other records known (eq. (8))."""
    tr = float(np.trace(_information(information, "trace_bound")))
    return math.inf if tr <= 0 else 1.0 / tr


def jensen_bound(information: ArrayLike) -> float:
    """n²/Tr(𝓘), a lower bound on Tr(𝓘⁻¹) (Proposition 5)."""
    info = _information(information, "jensen_bound")
    tr = float(np.trace(info))
    return math.inf if tr <= 0 else info.shape[0] ** 2 / tr
