"""Validation of the inputs of the recoverability module (query matrix, ρ, data mean and covariance)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import as_finite_array, as_matrix, describe
from ..exceptions import DimensionError, InvalidParameterError

__all__ = ["check_data_cov", "check_matrix", "check_rho", "check_rhos", "check_vector", "rank_tolerance"]


def check_matrix(matrix: ArrayLike, owner: str, name: str = "A") -> NDArray[np.float64]:
    """A finite, non-empty 2-D query matrix with at least one nonzero entry (rank r ≥ 1, Section II)."""
    arr = as_matrix(matrix, name, owner)
    if not np.any(arr):
        raise InvalidParameterError(
            f"`{name}` of `{owner}` must not be the zero matrix (the query needs rank >= 1, Section II); got "
            f"zeros of shape {arr.shape}."
        )
    return arr


def rank_tolerance(singular_values: NDArray[np.float64], shape: tuple[int, ...]) -> float:
    """numpy.linalg.matrix_rank's threshold: max(m, n)·eps·s_max."""
    return float(max(shape) * np.finfo(float).eps * np.max(singular_values, initial=0.0))


def check_rho(rho: Any, owner: str) -> float:
    """ρ as a finite float >= 0."""
    if isinstance(rho, bool) or not isinstance(rho, int | float | np.integer | np.floating):
        if not (isinstance(rho, np.ndarray) and rho.ndim == 0 and rho.dtype.kind in "iuf"):
            raise InvalidParameterError(
                f"`rho` of `{owner}` must be a real number >= 0; got {describe(rho)}."
            )
    value = float(rho)
    if not np.isfinite(value) or value < 0:
        raise InvalidParameterError(f"`rho` of `{owner}` must be finite and >= 0; got {describe(rho)}.")
    return value


def check_rhos(rho: Any, owner: str) -> tuple[NDArray[np.float64], bool]:
    """ρ as a finite array >= 0 (scalar or 1-D); also whether it was a scalar."""
    if np.ndim(rho) == 0:
        return np.array([check_rho(rho, owner)]), True
    arr = as_finite_array(rho, "rho", owner, ndim=1)
    if np.any(arr < 0):
        raise InvalidParameterError(
            f"`rho` of `{owner}` must be >= 0; got {int(np.sum(arr < 0))} negative entr"
            f"{'y' if int(np.sum(arr < 0)) == 1 else 'ies'} (smallest {float(arr.min()):g})."
        )
    return arr, False


def check_vector(value: ArrayLike | None, name: str, owner: str, length: int) -> NDArray[np.float64]:
    """A finite vector of the given length; None means zeros."""
    if value is None:
        return np.zeros(length)
    arr = as_finite_array(value, name, owner, ndim=(0, 1))
    if arr.ndim == 0:
        arr = np.full(length, float(arr))
    if arr.shape != (length,):
        raise DimensionError(f"`{name}` of `{owner}` must have shape ({length},); got {arr.shape}.")
    return np.array(arr, dtype=float)


def check_data_cov(data_cov: ArrayLike, n: int, owner: str) -> NDArray[np.float64]:
    """A symmetric positive-definite n × n covariance of the data."""
    sigma = as_matrix(data_cov, "data_cov", owner, positive_definite=True)
    if sigma.shape != (n, n):
        raise DimensionError(
            f"`data_cov` of `{owner}` must have shape ({n}, {n}) (A has {n} columns); got {sigma.shape}."
        )
    w = np.linalg.eigvalsh(sigma)
    if w[0] <= 1e-12 * w[-1]:
        raise InvalidParameterError(
            f"`data_cov` of `{owner}` must be positive definite (well conditioned); got eigenvalues in "
            f"[{w[0]:.3g}, {w[-1]:.3g}]."
        )
    return sigma
