"""ρ-privacy π(ρ) of Theorem 1 (Nageswaran) for X ~ N(0, Iₙ), and its general-covariance extension.

A user holds X and answers the query AX with a response Z such that E‖AX − Z‖² ≤ ρ (eq. (1)); privacy is
mmse(X|Z) (eq. (2)). With the nonzero singular values of A sorted **ascending**, 0 < s₁ ≤ … ≤ s_r (eq. (6)),

    π(ρ) = n − r + min{ρ/s₁², 1 + (ρ − s₁²)/s₂², …, r − 1 + (ρ − Σ_{i<r} sᵢ²)/s_r², r}      (eq. (8))

a nondecreasing, concave, piecewise-affine function: the budget ρ hides the components of AX in order of
increasing singular value (eq. (9), (25)). Sorting descending instead is strictly worse as soon as the singular
values differ (docs/errata.md, Nageswaran). For an affine query AX + b, π(ρ) is the same (eq. (29)).

Examples
--------
>>> import numpy as np
>>> from privnoise.recoverability import max_privacy
>>> A = np.array([[2.0, 0, 0, 0, 0], [0, 3.0, 0, 0, 0], [0, 0, 4.0, 0, 0]])   # Figure 1: n = 5, s = (2, 3, 4)
>>> [float(v) for v in max_privacy(A, [0.0, 4.0, 13.0, 29.0, 40.0])]
[2.0, 3.0, 4.0, 5.0, 5.0]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import as_finite_array, readonly
from ..exceptions import DimensionError
from ..random import RNGLike, default_rng
from ._inputs import check_data_cov, check_matrix, check_rho, check_rhos, rank_tolerance

__all__ = [
    "Theorem1Scheme",
    "allocation",
    "max_privacy",
    "privacy_of_allocation",
    "singular_values",
    "theorem1_scheme",
]


def _svd(matrix: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """(s ascending, Ũ m×r, Ṽ n×r) of the nonzero singular values: A = Ũ diag(s) Ṽᵀ, eq. (4)–(6)."""
    u, s, vt = np.linalg.svd(matrix, full_matrices=False)
    keep = s > rank_tolerance(s, matrix.shape)
    order = np.argsort(s[keep], kind="stable")
    return s[keep][order], u[:, keep][:, order], vt[keep].T[:, order]


def singular_values(A: ArrayLike) -> NDArray[np.float64]:
    """The nonzero singular values s₁ ≤ … ≤ s_r of A, sorted ascending as eq. (6) requires.

    Examples
    --------
    >>> singular_values([[0.0, 4.0], [2.0, 0.0], [0.0, 0.0]])
    array([2., 4.])
    """
    return _svd(check_matrix(A, "singular_values"))[0]


def allocation(s: ArrayLike, rho: float) -> NDArray[np.float64]:
    """ρᵢ of eq. (25): fill ρ into the components in the order given (ascending sᵢ for Theorem 1), ρᵢ ≤ sᵢ².

    Parameters
    ----------
    s : array_like, shape (r,)
        Positive singular values in the order in which the budget is spent.
    rho : float
        ρ >= 0.

    Returns
    -------
    numpy.ndarray, shape (r,)
        ρᵢ = clip(ρ − Σ_{j<i} sⱼ², 0, sᵢ²); they sum to min(ρ, Σ sᵢ²).

    Examples
    --------
    >>> allocation([2.0, 3.0, 4.0], 8.5)
    array([4. , 4.5, 0. ])
    """
    sv = as_finite_array(s, "s", "allocation", ndim=1)
    r = check_rho(rho, "allocation")
    sq = sv**2
    before = np.concatenate(([0.0], np.cumsum(sq)[:-1]))
    return np.asarray(np.clip(r - before, 0.0, sq))


def privacy_of_allocation(n: int, s: ArrayLike, rho_i: ArrayLike) -> float:
    """n − r + Σ ρᵢ/sᵢ², the privacy (27) of the scheme (23) with budgets ρᵢ.

    Examples
    --------
    >>> privacy_of_allocation(5, [2.0, 3.0, 4.0], [4.0, 4.5, 0.0])
    3.5
    """
    sv = np.asarray(s, dtype=float)
    return float(n - sv.size + np.sum(np.asarray(rho_i, dtype=float) / sv**2))


def _theorem1(n: int, s: NDArray[np.float64], rho: NDArray[np.float64]) -> NDArray[np.float64]:
    """Eq. (8), vectorised over ρ: n − r + min over t = 0..r of the r + 1 affine pieces."""
    sq = s**2
    before = np.concatenate(([0.0], np.cumsum(sq)[:-1]))
    t = np.arange(s.size, dtype=float)
    pieces = t + (rho[:, None] - before) / sq  # t + (ρ − Σ_{i≤t} sᵢ²)/s_{t+1}²
    pieces = np.concatenate((pieces, np.full((rho.size, 1), float(s.size))), axis=1)
    return np.asarray(n - s.size + pieces.min(axis=1))


@overload
def max_privacy(A: ArrayLike, rho: float, *, data_cov: ArrayLike | None = None) -> float: ...
@overload
def max_privacy(
    A: ArrayLike, rho: NDArray[Any] | Sequence[float], *, data_cov: ArrayLike | None = None
) -> NDArray[np.float64]: ...
def max_privacy(A: ArrayLike, rho: Any, *, data_cov: ArrayLike | None = None) -> Any:
    """Maximum privacy π(ρ) = sup mmse(X|Z) over responses Z with E‖AX − Z‖² ≤ ρ.

    Parameters
    ----------
    A : array_like, shape (m, n)
        The query matrix, of any shape and any rank r ≥ 1 (not the zero matrix).
    rho : float or array_like of float
        Recoverability level(s) ρ >= 0; an array gives an array of the same length.
    data_cov : array_like, shape (n, n), optional
        Covariance Σ of X ~ N(μ, Σ). None means Σ = Iₙ, the paper's setting (Theorem 1, closed form).
        Otherwise the exact value for a general positive-definite Σ (beyond the paper; see
        :mod:`privnoise.recoverability.general_covariance` for the proof and the solver).

    Returns
    -------
    float or numpy.ndarray
        π(ρ). Neither the data mean nor an offset b of an affine query AX + b changes it (eq. (29)).

    Raises
    ------
    InvalidParameterError
        NaN/inf or all-zero ``A``, ρ < 0 or non-finite, ``data_cov`` not symmetric positive definite.
    DimensionError
        ``A`` not 2-D, ``data_cov`` not n × n.

    Notes
    -----
    With s₁ ≤ … ≤ s_r ascending (eq. (6)), π(ρ) is eq. (8), equivalently eq. (9): π(0) = n − r = mmse(X|AX)
    (eq. (7)) and π(ρ) = n for ρ ≥ Σ sᵢ² = tr(AAᵀ) (Remark (ii)).

    References
    ----------
    A. Nageswaran, "Gaussian data privacy under linear function recoverability", Theorem 1, eq. (8), (9), (29).

    Examples
    --------
    >>> max_privacy([[2.0, 0.0], [0.0, 1.0]], 0.5)                 # s = (1, 2): n − r + ρ/s₁²
    0.5
    >>> max_privacy([[1.0, 0.0]], 0.25, data_cov=[[1.0, 0.5], [0.5, 1.0]]) > 0.75 + 0.25
    True
    """
    owner = "max_privacy"
    matrix = check_matrix(A, owner)
    rhos, scalar = check_rhos(rho, owner)
    if data_cov is None:
        s = _svd(matrix)[0]
        values = _theorem1(matrix.shape[1], s, rhos)
    else:
        from .general_covariance import solve_general

        sigma = check_data_cov(data_cov, matrix.shape[1], owner)
        values = np.array([solve_general(matrix, float(r), sigma).value for r in rhos])
    return float(values[0]) if scalar else readonly(values)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Theorem1Scheme:
    """The paper's achievability scheme (23)–(25) in the coordinates of the singular vectors.

    Z̃_o = D_a S̃VᵀX + D_no N (eq. (23)), an r-vector, and its recoverability-space form
    Z_o = Ũ D_a ŨᵀAX + Ũ D_no N = Ũ Z̃_o (Remark after (28)), with N ~ N(0, I_r).

    Attributes
    ----------
    n : int
        Dimension of the data.
    singular_values : numpy.ndarray, shape (r,)
        s₁ ≤ … ≤ s_r, ascending.
    allocation : numpy.ndarray, shape (r,)
        ρᵢ of eq. (25).
    attenuation : numpy.ndarray, shape (r,)
        Diagonal of D_a: 1 − ρᵢ/sᵢ² (eq. (24)).
    noise_std : numpy.ndarray, shape (r,)
        Diagonal of D_no: √(ρᵢ − ρᵢ²/sᵢ²) (eq. (24)).
    left, right : numpy.ndarray
        Ũ (m × r) and Ṽ (n × r): A = Ũ diag(s) Ṽᵀ.
    """

    n: int
    singular_values: Any
    allocation: Any
    attenuation: Any
    noise_std: Any
    left: Any
    right: Any

    def privacy(self) -> float:
        """n − r + Σ ρᵢ/sᵢ², eq. (27)."""
        return privacy_of_allocation(self.n, self.singular_values, self.allocation)

    def reduced_response(self, x: ArrayLike, /, *, rng: RNGLike = None) -> NDArray[np.float64]:
        """Z̃_o = D_a S̃VᵀX + D_no N of eq. (23) for one x (n,) or a batch (k, n); vectorised."""
        arr = as_finite_array(x, "x", "Theorem1Scheme.reduced_response", ndim=(1, 2))
        if arr.shape[-1] != self.n:
            raise DimensionError(
                f"`x` of `Theorem1Scheme.reduced_response` must have {self.n} entries per record; got shape "
                f"{arr.shape}."
            )
        generator = default_rng(rng)
        signal = (arr @ self.right) * (self.singular_values * self.attenuation)
        noise = generator.standard_normal(signal.shape) * self.noise_std
        return np.asarray(signal + noise)


def theorem1_scheme(A: ArrayLike, rho: float) -> Theorem1Scheme:
    """The scheme (23)–(25) for A and ρ, with the singular values sorted ascending.

    Examples
    --------
    >>> sch = theorem1_scheme([[2.0, 0, 0, 0, 0], [0, 3.0, 0, 0, 0], [0, 0, 4.0, 0, 0]], 8.5)
    >>> sch.allocation, sch.attenuation, sch.privacy()
    (array([4. , 4.5, 0. ]), array([0. , 0.5, 1. ]), 3.5)
    """
    owner = "theorem1_scheme"
    matrix = check_matrix(A, owner)
    r = check_rho(rho, owner)
    s, u, v = _svd(matrix)
    rho_i = allocation(s, r)
    ratio = rho_i / s**2
    return Theorem1Scheme(
        n=matrix.shape[1],
        singular_values=readonly(s),
        allocation=readonly(rho_i),
        attenuation=readonly(1.0 - ratio),
        noise_std=readonly(np.sqrt(np.maximum(rho_i * (1.0 - ratio), 0.0))),
        left=readonly(u),
        right=readonly(v),
    )
