"""ℓ2 (K-norm) Laplace noise and its multi-user block form: the MSE-optimal Lipschitz-private noise.

Koufogiannis, Han & Pappas, Theorems 8 and 9:

* :class:`L2Laplace` — density ∝ exp(−ε‖v‖₂) on ℝⁿ, the optimal ε-Lipschitz-private additive noise for the
  identity query when the adjacency norm is ℓ2 (Theorem 8, normaliser eq. (14)).
* :class:`MultiUserLaplace` — density ∝ exp(−ε Σᵢ‖vᵢ‖₂) on ℝ^{users·user_dim}, the optimal noise under the composite
  adjacency (4) Σᵢ‖uᵢ − u′ᵢ‖₂ ≤ α (Theorem 9): each user's block is an independent :class:`L2Laplace`.

Both sample the norm r = ‖v‖₂ ~ Gamma(n, 1/ε) and an independent direction uniform on the sphere Sⁿ⁻¹ (normalised
standard normal vector), vectorised over draws.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_positive, check_positive_int, readonly
from ..linalg import IsotropicForm, SymmetricForm
from ._base import Mechanism
from .laplace import random_signs

__all__ = ["L2Laplace", "MultiUserLaplace", "l2_laplace_log_normaliser"]


def l2_laplace_log_normaliser(epsilon: float, dim: int) -> float:
    """log of the normaliser of eq. (14): ε^n Γ(n/2 + 1) / (π^{n/2} Γ(n + 1)).

    Examples
    --------
    >>> import math
    >>> round(math.exp(l2_laplace_log_normaliser(2.0, 1)), 12)   # the 1-D Laplace density ε/2
    1.0
    """
    n = dim
    return (
        n * math.log(epsilon)
        + math.lgamma(n / 2.0 + 1.0)
        - (n / 2.0) * math.log(math.pi)
        - math.lgamma(n + 1.0)
    )


def _unit_directions(n: int, dim: int, generator: np.random.Generator) -> NDArray[np.float64]:
    """``n`` independent directions uniform on the sphere S^{dim−1}, shape ``(n, dim)``."""
    if dim == 1:
        return random_signs(n, generator).reshape(n, 1)
    z = generator.standard_normal((n, dim))
    norm = np.sqrt(np.einsum("ij,ij->i", z, z))
    # An all-zero normal vector has probability ~0; map it to e₁ rather than divide by zero.
    zero = norm == 0.0
    if zero.any():
        z[zero] = 0.0
        z[zero, 0] = 1.0
        norm[zero] = 1.0
    z /= norm[:, None]
    return z


def _l2_blocks(n: int, dim: int, epsilon: float, generator: np.random.Generator) -> NDArray[np.float64]:
    """``n`` independent ℓ2-Laplace vectors of dimension ``dim``, shape ``(n, dim)``."""
    radius = generator.standard_gamma(float(dim), n)
    radius /= epsilon
    v = _unit_directions(n, dim, generator)
    v *= radius[:, None]
    return v


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class L2Laplace(Mechanism):
    """ℓ2 (K-norm) Laplace noise on ℝⁿ with density g(v) = c_n(ε) exp(−ε‖v‖₂).

    Parameters
    ----------
    epsilon : float
        Lipschitz privacy level ε > 0 per unit of ℓ2 distance (the exponent's coefficient; for a query of ℓ2
        sensitivity Δ and a target ε-DP use ε/Δ, see :func:`privnoise.dp.laplace.laplace_for_epsilon`).
    dim : int
        Dimension n ≥ 1; the mechanism's shape is ``(dim,)``.

    Notes
    -----
    * Normaliser (eq. (14)): c_n(ε) = εⁿ Γ(n/2 + 1) / (π^{n/2} Γ(n + 1)).
    * ‖V‖₂ ~ Gamma(n, 1/ε) independent of V/‖V‖₂, which is uniform on Sⁿ⁻¹ (Section IV-C).
    * Mean 0, covariance (n + 1)/ε² · I, mean-squared error E‖V‖² = n(n + 1)/ε² (Theorem 8), the minimum over all
      ε-Lipschitz-private additive noises under the ℓ2 norm.
    * Score ∇log g(v) = −ε v/‖v‖₂ (set to 0 at the cusp v = 0), so sup‖∇log g‖₂ = ε: ε-Lipschitz private
      w.r.t. ℓ2 (Definition 2) and εα-DP for ℓ2-adjacency radius α (Proposition 3).
    * Location Fisher information (ε²/n) I, finite for every n ≥ 1: g is Lipschitz continuous (the cusp at 0 is
      a kink, not a jump) and its score is bounded by ε, so E[∇log g ∇log gᵀ] = ε² E[ûûᵀ] = (ε²/n) I with û
      uniform on the sphere. For n = 1 this is the Laplace value 1/b² = ε².
    * Entropy n − log c_n(ε) nats (E[ε‖V‖] = n).

    References
    ----------
    F. Koufogiannis, S. Han, G. J. Pappas, "Optimality of the Laplace mechanism in differential privacy",
    Theorem 8 and eq. (14).

    Examples
    --------
    >>> m = L2Laplace(epsilon=2.0, dim=3)
    >>> m.shape, m.second_moment()          # n(n+1)/ε² = 12/4
    ((3,), 3.0)
    >>> float(m.fisher_information()[0, 0])   # ε²/n
    1.3333333333333333
    >>> m.sample(4, rng=0).shape
    (4, 3)
    """

    epsilon: float
    dim: int

    def __post_init__(self) -> None:
        owner = "L2Laplace"
        object.__setattr__(self, "epsilon", check_positive(self.epsilon, "epsilon", owner))
        object.__setattr__(self, "dim", check_positive_int(self.dim, "dim", owner))

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.dim,)

    def log_normaliser(self) -> float:
        """log c_n(ε) of eq. (14)."""
        return l2_laplace_log_normaliser(self.epsilon, self.dim)

    def _sample(self, n: int, generator: np.random.Generator) -> NDArray[np.float64]:
        return _l2_blocks(n, self.dim, self.epsilon, generator)

    def _logpdf(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        r = np.sqrt(np.sum(x * x, axis=-1))
        return self.log_normaliser() - self.epsilon * r

    def _score(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        r = np.sqrt(np.sum(x * x, axis=-1, keepdims=True))
        safe = np.where(r > 0, r, 1.0)
        return np.where(r > 0, -self.epsilon * x / safe, 0.0)

    def mean(self) -> Any:
        return readonly(np.zeros(self.dim))

    def covariance(self) -> Any:
        return readonly(np.eye(self.dim) * (self.dim + 1) / self.epsilon**2)

    def second_moment(self) -> float:
        """Mean-squared error n(n + 1)/ε² (Theorem 8)."""
        return self.dim * (self.dim + 1) / self.epsilon**2

    def fisher_information(self) -> Any:
        return readonly(np.eye(self.dim) * self.epsilon**2 / self.dim)

    def covariance_form(self) -> SymmetricForm:
        return IsotropicForm(self.dim, (self.dim + 1) / self.epsilon**2)

    def information_form(self) -> SymmetricForm:
        return IsotropicForm(self.dim, self.epsilon**2 / self.dim)

    def entropy(self) -> float:
        return float(self.dim - self.log_normaliser())

    def describe(self) -> dict[str, Any]:
        return {"family": "l2-laplace", "epsilon": self.epsilon, "dim": self.dim}


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class MultiUserLaplace(Mechanism):
    """Multi-user Laplace noise on ℝ^{users·user_dim}: density ∏ᵢ c_m(ε) exp(−ε‖vᵢ‖₂) (Theorem 9).

    Parameters
    ----------
    epsilon : float
        Lipschitz privacy level ε > 0 w.r.t. the composite norm Σᵢ‖uᵢ‖₂ of adjacency relation (4).
    users : int
        Number of users n ≥ 1.
    user_dim : int
        Dimension m ≥ 1 of each user's data. ``dim`` (inherited) is the total number of coordinates users·user_dim.

    Notes
    -----
    The shape is ``(users * user_dim,)``, flattened user by user: user i owns coordinates ``i*m … (i+1)*m − 1``
    (the ∇ᵢ of the paper's proof); reshape a draw to ``(users, user_dim)`` to get one row per user. Blocks are
    independent :class:`L2Laplace` vectors, so

    * covariance (m + 1)/ε² · I and MSE E‖V‖² = n m (m + 1)/ε² (Theorem 9);
    * normaliser (εᵐ Γ(m/2 + 1)/(m π^{m/2} Γ(m)))ⁿ — the same as eq. (14) per block since mΓ(m) = Γ(m + 1);
    * Fisher information (ε²/m) I; entropy n(m − log c_m(ε));
    * score block i = −ε vᵢ/‖vᵢ‖₂, so max_i‖∇ᵢ log g‖₂ = ε (constraint (5)): ε-Lipschitz private w.r.t.
      adjacency (4) and εα-DP when Σᵢ‖uᵢ − u′ᵢ‖₂ ≤ α.

    References
    ----------
    F. Koufogiannis, S. Han, G. J. Pappas, "Optimality of the Laplace mechanism in differential privacy",
    Theorem 9 and adjacency relation (4).

    Examples
    --------
    >>> m = MultiUserLaplace(epsilon=1.0, users=4, user_dim=2)
    >>> m.shape, m.second_moment()          # n m (m+1)/ε² = 4·2·3
    ((8,), 24.0)
    >>> m.sample(5, rng=1).reshape(5, 4, 2).shape
    (5, 4, 2)
    """

    epsilon: float
    users: int
    user_dim: int

    def __post_init__(self) -> None:
        owner = "MultiUserLaplace"
        object.__setattr__(self, "epsilon", check_positive(self.epsilon, "epsilon", owner))
        object.__setattr__(self, "users", check_positive_int(self.users, "users", owner))
        object.__setattr__(self, "user_dim", check_positive_int(self.user_dim, "user_dim", owner))

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.users * self.user_dim,)

    def block(self) -> L2Laplace:
        """The ℓ2-Laplace law of one user's block."""
        return L2Laplace(epsilon=self.epsilon, dim=self.user_dim)

    def log_normaliser(self) -> float:
        """log of the Theorem 9 normaliser, n·log c_m(ε)."""
        return self.users * l2_laplace_log_normaliser(self.epsilon, self.user_dim)

    def _sample(self, n: int, generator: np.random.Generator) -> NDArray[np.float64]:
        return _l2_blocks(n * self.users, self.user_dim, self.epsilon, generator).reshape(n, self.dim)

    def _blocks(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return x.reshape(x.shape[:-1] + (self.users, self.user_dim))

    def _logpdf(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        r = np.sqrt(np.sum(self._blocks(x) ** 2, axis=-1))
        return self.log_normaliser() - self.epsilon * r.sum(axis=-1)

    def _score(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        b = self._blocks(x)
        r = np.sqrt(np.sum(b * b, axis=-1, keepdims=True))
        safe = np.where(r > 0, r, 1.0)
        return np.where(r > 0, -self.epsilon * b / safe, 0.0).reshape(x.shape)

    def mean(self) -> Any:
        return readonly(np.zeros(self.dim))

    def covariance(self) -> Any:
        return readonly(np.eye(self.dim) * (self.user_dim + 1) / self.epsilon**2)

    def second_moment(self) -> float:
        """Mean-squared error n m (m + 1)/ε² (Theorem 9)."""
        return self.users * self.user_dim * (self.user_dim + 1) / self.epsilon**2

    def fisher_information(self) -> Any:
        return readonly(np.eye(self.dim) * self.epsilon**2 / self.user_dim)

    def covariance_form(self) -> SymmetricForm:
        return IsotropicForm(self.dim, (self.user_dim + 1) / self.epsilon**2)

    def information_form(self) -> SymmetricForm:
        return IsotropicForm(self.dim, self.epsilon**2 / self.user_dim)

    def marginal(self, start: int, stop: int) -> MultiUserLaplace | None:
        m = self.user_dim
        if start % m or stop % m:
            return None
        return MultiUserLaplace(epsilon=self.epsilon, users=(stop - start) // m, user_dim=m)

    def entropy(self) -> float:
        return float(self.users * (self.user_dim - l2_laplace_log_normaliser(self.epsilon, self.user_dim)))

    def describe(self) -> dict[str, Any]:
        return {
            "family": "multi-user-laplace",
            "epsilon": self.epsilon,
            "users": self.users,
            "user_dim": self.user_dim,
        }
