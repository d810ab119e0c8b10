"""Gaussian input laws and the divergences between them (Liu, Kawano & Cao, Section I-D, Lemmas III.1–III.2).

* :class:`GaussianInput` — a law N(m, Σ) of an initial state, an input sequence U_t, or both (``x0 & u``).
* :func:`wasserstein2` — eq. (1): W₂² = ‖m₁ − m₂‖² + Tr(Σ₁ + Σ₂ − 2(Σ₁^{1/2}Σ₂Σ₁^{1/2})^{1/2}).
* :func:`kl_divergence`, :func:`symmetrized_kl` — the Gaussian closed forms of Appendix A.
* :func:`lemma_iii1_bound` — KL(P₁‖P₂) + KL(P₂‖P₁) ≤ 2W₂²/min(λ_min(Σ₁), λ_min(Σ₂)).
* :func:`pushforward` — the law of Fx + v (Lemma III.2: W₂(Fx + v, Fx′ + v) ≤ ‖F‖₂ W₂(x, x′)).
* :func:`is_adjacent` — Definition II.1, c-adjacency under W₂.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import as_finite_array, as_matrix, check_positive, check_positive_int, readonly
from ..exceptions import DimensionError, InvalidParameterError

__all__ = [
    "GaussianInput",
    "is_adjacent",
    "kl_divergence",
    "lemma_iii1_bound",
    "psd_sqrt",
    "pushforward",
    "symmetrized_kl",
    "wasserstein2",
]

_OWNER = "GaussianInput"


def psd_sqrt(matrix: NDArray[np.float64]) -> NDArray[np.float64]:
    """The symmetric square root of a positive-semidefinite matrix (tiny negative eigenvalues clipped)."""
    vals, vecs = np.linalg.eigh((matrix + matrix.T) / 2.0)
    root = (vecs * np.sqrt(np.clip(vals, 0.0, None))) @ vecs.T
    return (root + root.T) / 2.0


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class GaussianInput:
    """A Gaussian law N(mean, cov) of an initial state x₀, of an input sequence U_t, or of (x₀, U_t).

    Parameters
    ----------
    mean : array_like, shape (d,)
        A scalar is read as d = 1.
    cov : array_like, shape (d, d)
        Symmetric positive semidefinite (a zero covariance is a point mass, Remark II.2); a scalar is 1×1.

    Examples
    --------
    >>> x0 = GaussianInput(mean=[90], cov=[[10]])
    >>> u1 = GaussianInput.iid(mean=21, var=0.1, steps=3)
    >>> (x0 & u1).dim, (x0 & u1).mean.tolist()
    (4, [90.0, 21.0, 21.0, 21.0])
    """

    mean: Any
    cov: Any

    def __post_init__(self) -> None:
        mean = as_finite_array(self.mean, "mean", _OWNER, ndim=(0, 1)).reshape(-1)
        cov_in = (
            self.cov
            if np.ndim(self.cov) == 2
            else np.reshape(as_finite_array(self.cov, "cov", _OWNER, ndim=0), (1, 1))
        )
        cov = as_matrix(cov_in, "cov", _OWNER, symmetric=True)
        if cov.shape != (mean.size, mean.size):
            raise DimensionError(
                f"`cov` of `{_OWNER}` must be {mean.size}×{mean.size} to match `mean`; got {cov.shape}."
            )
        smallest = float(np.linalg.eigvalsh(cov)[0])
        if smallest < -1e-10 * max(1.0, float(np.max(np.abs(cov)))):
            raise InvalidParameterError(
                f"`cov` of `{_OWNER}` must be positive semidefinite; got smallest eigenvalue {smallest:.6g}."
            )
        object.__setattr__(self, "mean", readonly(mean))
        object.__setattr__(self, "cov", readonly(cov))

    @classmethod
    def iid(cls, *, mean: ArrayLike, var: ArrayLike, steps: int) -> GaussianInput:
        """``steps`` independent samples of N(mean, var): U_t for an i.i.d. input (Section II-A).

        ``mean`` is a scalar or an m-vector, ``var`` a scalar variance or an m×m covariance.
        """
        k = check_positive_int(steps, "steps", "GaussianInput.iid")
        mu = as_finite_array(mean, "mean", "GaussianInput.iid", ndim=(0, 1)).reshape(-1)
        if np.ndim(var) == 0:
            v = np.eye(mu.size) * check_positive(var, "var", "GaussianInput.iid", allow_zero=True)
        else:
            v = as_matrix(var, "var", "GaussianInput.iid", symmetric=True)
        return cls(mean=np.tile(mu, k), cov=np.kron(np.eye(k), v))

    @property
    def dim(self) -> int:
        return int(self.mean.size)

    def __and__(self, other: GaussianInput) -> GaussianInput:
        """The product law of independent (self, other): means stacked, block-diagonal covariance."""
        if not isinstance(other, GaussianInput):
            return NotImplemented
        d1, d2 = self.dim, other.dim
        cov = np.zeros((d1 + d2, d1 + d2))
        cov[:d1, :d1] = self.cov
        cov[d1:, d1:] = other.cov
        return GaussianInput(mean=np.concatenate([self.mean, other.mean]), cov=cov)

    def min_eigenvalue(self) -> float:
        return float(np.linalg.eigvalsh(self.cov)[0])


def _pair(p: GaussianInput, q: GaussianInput, owner: str) -> None:
    for name, law in (("p", p), ("q", q)):
        if not isinstance(law, GaussianInput):
            raise InvalidParameterError(
                f"`{name}` of `{owner}` must be a GaussianInput; got {type(law).__name__}."
            )
    if p.dim != q.dim:
        raise DimensionError(f"`q` of `{owner}` must have dimension {p.dim} like `p`; got {q.dim}.")


def wasserstein2(p: GaussianInput, q: GaussianInput) -> float:
    """The 2-Wasserstein distance between two Gaussian laws, eq. (1).

    Examples
    --------
    >>> u1 = GaussianInput.iid(mean=21, var=0.1, steps=4)
    >>> u2 = GaussianInput.iid(mean=22, var=0.2, steps=4)
    >>> round(wasserstein2(u1, u2), 4)
    2.0171
    """
    _pair(p, q, "wasserstein2")
    r1 = psd_sqrt(p.cov)
    cross = psd_sqrt(r1 @ q.cov @ r1)
    w2sq = float(np.sum((p.mean - q.mean) ** 2) + np.trace(p.cov) + np.trace(q.cov) - 2.0 * np.trace(cross))
    return math.sqrt(max(w2sq, 0.0))


def _logdet_pd(cov: NDArray[np.float64], name: str, owner: str) -> float:
    sign, logdet = np.linalg.slogdet(cov)
    if sign <= 0 or np.linalg.eigvalsh(cov)[0] <= 0:
        raise InvalidParameterError(f"`{name}` of `{owner}` must have a positive-definite covariance for KL.")
    return float(logdet)


def kl_divergence(p: GaussianInput, q: GaussianInput) -> float:
    """KL(p‖q) = ½[(m_q − m_p)ᵀΣ_q⁻¹(m_q − m_p) + Tr(Σ_q⁻¹Σ_p) − d + log det Σ_q/det Σ_p] (Appendix A)."""
    _pair(p, q, "kl_divergence")
    lp = _logdet_pd(p.cov, "p", "kl_divergence")
    lq = _logdet_pd(q.cov, "q", "kl_divergence")
    diff = q.mean - p.mean
    solve = np.linalg.solve(q.cov, np.column_stack([diff, p.cov]))
    return float(0.5 * (diff @ solve[:, 0] + np.trace(solve[:, 1:]) - p.dim + lq - lp))


def symmetrized_kl(p: GaussianInput, q: GaussianInput) -> float:
    """KL(p‖q) + KL(q‖p)."""
    return kl_divergence(p, q) + kl_divergence(q, p)


def lemma_iii1_bound(p: GaussianInput, q: GaussianInput) -> float:
    """Lemma III.1's upper bound on KL(p‖q) + KL(q‖p): 2W₂²(p, q)/min(λ_min(Σ_p), λ_min(Σ_q))."""
    floor = min(p.min_eigenvalue(), q.min_eigenvalue())
    if floor <= 0:
        return math.inf
    return 2.0 * wasserstein2(p, q) ** 2 / floor


def pushforward(law: GaussianInput, matrix: ArrayLike, noise_cov: ArrayLike | None = None) -> GaussianInput:
    """The law of F x + v for x ~ ``law`` and an independent v ~ N(0, noise_cov) (Lemma III.2)."""
    f = as_matrix(matrix, "matrix", "pushforward")
    if f.shape[1] != law.dim:
        raise DimensionError(f"`matrix` of `pushforward` must have {law.dim} column(s); got shape {f.shape}.")
    cov = f @ law.cov @ f.T
    if noise_cov is not None:
        s = as_matrix(noise_cov, "noise_cov", "pushforward", symmetric=True)
        if s.shape != cov.shape:
            raise DimensionError(f"`noise_cov` of `pushforward` must be {cov.shape}; got {s.shape}.")
        cov = cov + s
    return GaussianInput(mean=f @ law.mean, cov=(cov + cov.T) / 2.0)


def is_adjacent(p: GaussianInput, q: GaussianInput, c: float) -> bool:
    """Definition II.1: (p, q) ∈ Adj₂ᶜ iff W₂(p, q) ≤ c."""
    return wasserstein2(p, q) <= check_positive(c, "c", "is_adjacent") * (1 + 1e-12)
