"""Minimum mean-square error for jointly Gaussian vectors.

For jointly Gaussian (X, Z) the conditional mean is affine in Z and the error covariance does not depend on the
value of Z::

    E[X | Z]   = μ_X + Σ_XZ Σ_Z⁺ (Z − μ_Z)
    Cov(X | Z) = Σ_X − Σ_XZ Σ_Z⁺ Σ_ZX
    mmse(X|Z)  = tr Cov(X | Z)

The pseudo-inverse Σ_Z⁺ covers a singular Σ_Z (a noiseless or rank-deficient observation): Z − μ_Z lies in the
range of Σ_Z almost surely, where Σ_Z⁺ inverts Σ_Z. These are the computations of Nageswaran, Appendix A and
eq. (26); they are reused by other modules (dynamical-system and optimisation privacy).

Examples
--------
>>> import numpy as np
>>> from privnoise.recoverability import mmse
>>> a = np.array([[1.0, 0.0, 0.0]])                  # Z = X₁ for X ~ N(0, I₃)
>>> mmse(np.eye(3), a.T, a @ a.T)                     # eq. (7): n − r = 2
2.0
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import as_finite_array, as_matrix, readonly
from ..exceptions import DimensionError

__all__ = [
    "LinearEstimator",
    "conditional_covariance",
    "linear_mmse_estimator",
    "mmse",
    "mmse_of_linear_response",
    "pseudo_inverse",
]


def pseudo_inverse(matrix: ArrayLike, *, rtol: float = 1e-12) -> NDArray[np.float64]:
    """Moore–Penrose inverse of a symmetric positive-semidefinite matrix (eigenvalues ≤ rtol·max are zero).

    Examples
    --------
    >>> pseudo_inverse([[2.0, 0.0], [0.0, 0.0]])
    array([[0.5, 0. ],
           [0. , 0. ]])
    """
    m = np.asarray(matrix, dtype=float)
    m = (m + m.T) / 2.0
    w, v = np.linalg.eigh(m)
    top = float(np.max(np.abs(w))) if w.size else 0.0
    keep = w > rtol * top
    if not np.any(keep):
        return np.zeros_like(m)
    out = (v[:, keep] / w[keep]) @ v[:, keep].T
    return np.asarray((out + out.T) / 2.0)


def _covariances(
    cov_x: ArrayLike, cov_xz: ArrayLike, cov_z: ArrayLike, owner: str
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    sx = as_matrix(cov_x, "cov_x", owner, symmetric=True)
    sz = as_matrix(cov_z, "cov_z", owner, symmetric=True)
    sxz = as_matrix(cov_xz, "cov_xz", owner)
    if sxz.shape != (sx.shape[0], sz.shape[0]):
        raise DimensionError(
            f"`cov_xz` of `{owner}` must have shape {(sx.shape[0], sz.shape[0])} (rows of cov_x, columns of "
            f"cov_z); got {sxz.shape}."
        )
    return sx, sxz, sz


def conditional_covariance(cov_x: ArrayLike, cov_xz: ArrayLike, cov_z: ArrayLike) -> NDArray[np.float64]:
    """Cov(X | Z) = Σ_X − Σ_XZ Σ_Z⁺ Σ_ZX for jointly Gaussian X (n-dim) and Z (m-dim).

    Parameters
    ----------
    cov_x : array_like, shape (n, n)
        Covariance of X.
    cov_xz : array_like, shape (n, m)
        Cross-covariance E[(X − μ_X)(Z − μ_Z)ᵀ].
    cov_z : array_like, shape (m, m)
        Covariance of Z (may be singular).

    Returns
    -------
    numpy.ndarray, shape (n, n)
        The error covariance of the MMSE estimator, symmetrised.
    """
    sx, sxz, sz = _covariances(cov_x, cov_xz, cov_z, "conditional_covariance")
    out = sx - sxz @ pseudo_inverse(sz) @ sxz.T
    return np.asarray((out + out.T) / 2.0)


def mmse(cov_x: ArrayLike, cov_xz: ArrayLike, cov_z: ArrayLike) -> float:
    """mmse(X|Z) = tr(Σ_X − Σ_XZ Σ_Z⁺ Σ_ZX) for jointly Gaussian X and Z (Nageswaran, eq. (2), (26)).

    Examples
    --------
    >>> mmse([[1.0]], [[1.0]], [[2.0]])                   # Z = X + N, N ~ N(0, 1): 1 − 1/2
    0.5
    """
    sx, sxz, sz = _covariances(cov_x, cov_xz, cov_z, "mmse")
    return float(np.trace(sx) - np.trace(sxz @ pseudo_inverse(sz) @ sxz.T))


def mmse_of_linear_response(
    data_cov: ArrayLike, attenuation: ArrayLike, noise_cov: ArrayLike | None = None
) -> float:
    """mmse(X | FX + c + W) for X ~ N(μ, Σ) and independent W ~ N(0, Q) (any c, any μ).

    Parameters
    ----------
    data_cov : array_like, shape (n, n)
        Σ, the covariance of the data.
    attenuation : array_like, shape (m, n)
        F.
    noise_cov : array_like, shape (m, m), optional
        Q (positive semidefinite); None for a noiseless response.

    Examples
    --------
    >>> mmse_of_linear_response([[1.0]], [[1.0]], [[1.0]])
    0.5
    """
    owner = "mmse_of_linear_response"
    sigma = as_matrix(data_cov, "data_cov", owner, symmetric=True)
    f = as_matrix(attenuation, "attenuation", owner)
    if f.shape[1] != sigma.shape[0]:
        raise DimensionError(
            f"`attenuation` of `{owner}` must have {sigma.shape[0]} columns (the size of data_cov); got shape "
            f"{f.shape}."
        )
    q = np.zeros((f.shape[0], f.shape[0]))
    if noise_cov is not None:
        q = as_matrix(noise_cov, "noise_cov", owner, symmetric=True)
        if q.shape != (f.shape[0], f.shape[0]):
            raise DimensionError(
                f"`noise_cov` of `{owner}` must have shape {(f.shape[0], f.shape[0])}; got {q.shape}."
            )
    return mmse(sigma, sigma @ f.T, f @ sigma @ f.T + q)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class LinearEstimator:
    """The linear MMSE estimator x̂(z) = offset + gain·z (the MMSE estimator for jointly Gaussian vectors).

    Parameters
    ----------
    gain : array_like, shape (n, m)
    offset : array_like, shape (n,)
    error_covariance : array_like, shape (n, n)
        Cov(X − x̂(Z)); its trace is the MMSE.

    Examples
    --------
    >>> est = linear_mmse_estimator([0.0], [0.0], [[1.0]], [[1.0]], [[2.0]])
    >>> est([4.0]), est.mmse()
    (array([2.]), 0.5)
    """

    gain: Any
    offset: Any
    error_covariance: Any
    _n: int = field(init=False, repr=False)

    def __post_init__(self) -> None:
        owner = "LinearEstimator"
        gain = as_matrix(self.gain, "gain", owner)
        offset = as_finite_array(self.offset, "offset", owner, ndim=1)
        err = as_matrix(self.error_covariance, "error_covariance", owner, symmetric=True)
        if offset.shape != (gain.shape[0],) or err.shape != (gain.shape[0], gain.shape[0]):
            raise DimensionError(
                f"`offset` and `error_covariance` of `{owner}` must match the {gain.shape[0]} rows of `gain`; "
                f"got {offset.shape} and {err.shape}."
            )
        object.__setattr__(self, "gain", readonly(gain))
        object.__setattr__(self, "offset", readonly(offset))
        object.__setattr__(self, "error_covariance", readonly(err))
        object.__setattr__(self, "_n", gain.shape[0])

    def __call__(self, z: ArrayLike, /) -> NDArray[np.float64]:
        """Estimate X from one response z (m,) or a batch (k, m); vectorised."""
        arr = as_finite_array(z, "z", "LinearEstimator", ndim=(1, 2))
        if arr.shape[-1] != self.gain.shape[1]:
            raise DimensionError(
                f"`z` of `LinearEstimator` must have {self.gain.shape[1]} entries per response; got shape "
                f"{arr.shape}."
            )
        return np.asarray(arr @ self.gain.T + self.offset)

    def mmse(self) -> float:
        """tr Cov(X − x̂(Z)), the mean-square error of this estimator."""
        return float(np.trace(self.error_covariance))


def linear_mmse_estimator(
    mean_x: ArrayLike, mean_z: ArrayLike, cov_x: ArrayLike, cov_xz: ArrayLike, cov_z: ArrayLike
) -> LinearEstimator:
    """The estimator x̂(z) = μ_X + Σ_XZ Σ_Z⁺ (z − μ_Z), optimal among all estimators for jointly Gaussian (X, Z).

    Its error covariance is :func:`conditional_covariance` (Σ_X − Σ_XZ Σ_Z⁺ Σ_ZX).
    """
    owner = "linear_mmse_estimator"
    mx = as_finite_array(mean_x, "mean_x", owner, ndim=1)
    mz = as_finite_array(mean_z, "mean_z", owner, ndim=1)
    sxz = as_matrix(cov_xz, "cov_xz", owner)
    sz = as_matrix(cov_z, "cov_z", owner, symmetric=True)
    if sxz.shape != (mx.size, mz.size) or sz.shape != (mz.size, mz.size):
        raise DimensionError(
            f"`cov_xz` and `cov_z` of `{owner}` must have shapes {(mx.size, mz.size)} and {(mz.size, mz.size)}; "
            f"got {sxz.shape} and {sz.shape}."
        )
    gain = sxz @ pseudo_inverse(sz)
    explained = gain @ sxz.T
    sx = as_matrix(cov_x, "cov_x", owner, symmetric=True)
    if sx.shape != (mx.size, mx.size):
        raise DimensionError(f"`cov_x` of `{owner}` must have shape {(mx.size, mx.size)}; got {sx.shape}.")
    err = sx - explained
    return LinearEstimator(gain=gain, offset=mx - gain @ mz, error_covariance=(err + err.T) / 2.0)
