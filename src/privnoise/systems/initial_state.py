"""Initial-state privacy of an LTI system (Farokhi & Sandberg, Section 4, Theorem 4, Example 4).

The server answers y[k] = C x[k] + w[k], k = 0, …, T, for x[k+1] = A x[k] with a private initial state x₀. The
optimal noise of Theorem 4 is perfectly correlated across time: w[k] = C Aᵏ z with one Gaussian z ~ N(0, Σ), so
that y_T = Ψ_T (x₀ + z). The information about x₀ is 𝓘 = Σ⁻¹ and the quality Q = E‖w_T‖² = Tr(Ψ_TᵀΨ_T Σ).

Notes
-----
With G = Ψ_TᵀΨ_T the objective of Problem 3 is Tr Σ⁻¹ + ϱ Tr(GΣ); its stationarity condition Σ⁻² = ϱG gives
Σ = G^{−1/2}/√ϱ. The paper prints Σ = 2G^{−1/2}/√ϱ (Appendix K drops a 1/4, ERRATA 4); the printed form and
Example 4's closed forms live with the reproduction (:mod:`privnoise.reproduce.farokhi_sandberg`). The quality-budget version (min Tr 𝓘 s.t. Q ≤ ϑ, the analogue of Problem 4) is
Σ = ϑ G^{−1/2}/Tr(G^{1/2}). Only Tr(𝓘⁻¹) ≥ n²/Tr 𝓘 holds in general; the (T+1)²n²/Tr 𝓘 bound printed in Section 4
is false (ERRATA 6) and privnoise never reports it.

References
----------
F. Farokhi and H. Sandberg, "Ensuring privacy with constrained additive noise by minimizing Fisher
information", Automatica 99 (2019), Section 4, Theorem 4, Remark 8, Example 4, Appendix K.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import as_matrix, check_positive, check_positive_int, readonly
from ..exceptions import InvalidParameterError
from ..guarantees import FisherGuarantee, FisherInformation
from ..mechanisms import Noise
from ..queries import LinearQuery, Query
from ..random import RNGLike, default_rng
from ..snapping import grid_exponent_for_variances
from .horizon import check_observable, observability_gramian, observability_matrix
from .statespace import StateSpace, as_statespace

__all__ = ["InitialStateNoise", "initial_state_noise"]


def _sym_power(g: NDArray[np.float64], power: float) -> NDArray[np.float64]:
    """G^power of a symmetric positive-definite matrix (eigendecomposition)."""
    vals, vecs = np.linalg.eigh(g)
    out = (vecs * vals**power) @ vecs.T
    return (out + out.T) / 2.0


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class InitialStateNoise(Noise):
    """Correlated noise w[k] = C Aᵏ z, z ~ N(0, Σ), protecting x₀ over k = 0, …, T (Theorem 4).

    The release it belongs to is y_T = Ψ_T (x₀ + z): the linear query :meth:`query` (C = Ψ_T, data x₀) plus this
    noise, whose shape is one window (T+1, q).

    Parameters
    ----------
    system : StateSpace
        The model (only A and C matter).
    horizon : int
        T; the noise covers y[0], …, y[T].
    initial_covariance : array_like, shape (n, n)
        Σ, the covariance of z.

    Examples
    --------
    >>> from privnoise.systems import StateSpace, initial_state_noise
    >>> mech = initial_state_noise(StateSpace(A=[[1, 1], [0, 1]], C=[[1, 0]]), horizon=4, quality_weight=1.0)
    >>> mech.sample(rng=1).shape, mech.sample(10, rng=1).shape
    ((5, 1), (10, 5, 1))
    >>> round(mech.cramer_rao_bound(), 6) == round(float(np.trace(mech.initial_covariance)), 6)
    True
    """

    system: StateSpace
    horizon: int
    initial_covariance: Any
    _factor: NDArray[np.float64] = field(init=False, repr=False)
    _psi: NDArray[np.float64] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        owner = "InitialStateNoise"
        sys = as_statespace(self.system)
        t = check_positive_int(self.horizon, "horizon", owner, minimum=0)
        sigma = as_matrix(self.initial_covariance, "initial_covariance", owner, positive_definite=True)
        if sigma.shape != (sys.n, sys.n):
            raise InvalidParameterError(
                f"`initial_covariance` of `{owner}` must be {sys.n}×{sys.n}; got shape {sigma.shape}."
            )
        object.__setattr__(self, "system", sys)
        object.__setattr__(self, "horizon", t)
        object.__setattr__(self, "initial_covariance", readonly(sigma))
        object.__setattr__(self, "_factor", readonly(np.linalg.cholesky(sigma)))
        object.__setattr__(self, "_psi", observability_matrix(sys, t))

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.horizon + 1, self.system.q)

    @property
    def observability(self) -> NDArray[np.float64]:
        """Ψ_T = [C; CA; …; CA^T]."""
        return self._psi

    def query(self, *, bounds: Any = None) -> LinearQuery:
        """The query this noise protects: y_T = Ψ_T x₀ (n records: the initial state)."""
        return LinearQuery(self._psi, bounds=bounds, name="initial-state outputs")

    def sample_initial(self, size: int | None = None, *, rng: RNGLike = None) -> NDArray[np.float64]:
        """Draws of z ~ N(0, Σ), shape (n,) or (size, n)."""
        g = default_rng(rng)
        k = 1 if size is None else check_positive_int(size, "size", "InitialStateNoise.sample")
        z = g.standard_normal((k, self.system.n)) @ self._factor.T
        return z[0] if size is None else z

    def _sample(self, n: int, generator: np.random.Generator) -> NDArray[np.float64]:
        """n whole noise sequences w[k] = CAᵏz, shape (n, T+1, q); one matrix product, no loop."""
        z = generator.standard_normal((n, self.system.n)) @ self._factor.T
        return (z @ self._psi.T).reshape((n,) + self.shape)

    def default_grid_exponent(self) -> int:
        """From the smallest non-zero standard deviation of a reading."""
        return grid_exponent_for_variances(np.einsum("ij,jk,ik->i", self._psi, self.initial_covariance, self._psi))

    def fisher_information(self) -> NDArray[np.float64]:
        """𝓘 = Σ⁻¹: y_T = Ψ_T(x₀ + z) with Ψ_T of full column rank carries exactly the information of x₀ + z."""
        inv = np.linalg.inv(self.initial_covariance)
        return readonly((inv + inv.T) / 2.0)

    def cramer_rao_bound(self) -> float:
        """Tr(𝓘⁻¹) = Tr Σ; attained by the unbiased estimator x̂₀ = Ψ_T⁺ y_T."""
        return float(np.trace(self.initial_covariance))

    def second_moment(self) -> float:
        """Quality Q = E‖w_T‖² = Tr(Ψ_TᵀΨ_T Σ)."""
        return float(np.sum(observability_gramian(self.system, self.horizon) * self.initial_covariance))

    def guarantee(self, *, grid: float = 0.0) -> FisherGuarantee:
        """The Fisher-information guarantee on x₀ (Cramér–Rao bound Tr Σ, quality Q)."""
        info = FisherInformation(np.eye(self.system.n), self.fisher_information())
        return FisherGuarantee(info, quality=self.second_moment(), grid=grid)

    def guarantee_for(
        self, query: Query, x: ArrayLike | None = None, *, delta: float | None = None, grid: float = 0.0
    ) -> FisherGuarantee:
        """The guarantee on x₀ for the query y_T = Ψ_T x₀ (:meth:`query`); other queries are refused."""
        operator = getattr(query, "operator", None)
        if operator is None or operator.shape != self._psi.shape or not np.array_equal(
            np.asarray(operator.dense()).reshape(self._psi.shape), self._psi
        ):
            raise InvalidParameterError(
                "`query` of `InitialStateNoise.guarantee_for` must be the outputs Ψ_T x₀ of this system "
                f"(`noise.query()`); got `{query.name}`."
            )
        return self.guarantee(grid=grid)

    def describe(self) -> dict[str, Any]:
        return {
            "family": "initial-state-gaussian",
            "horizon": self.horizon,
            "initial_covariance": self.initial_covariance.tolist(),
        }


def initial_state_noise(
    system: Any,
    *,
    horizon: int,
    quality_weight: float | None = None,
    quality_budget: float | None = None,
) -> InitialStateNoise:
    """The optimal initial-state noise of Theorem 4 (``quality_weight``) or its quality-budget version.

    Parameters
    ----------
    system : StateSpace or python-control StateSpace
        A discrete-time model; (A, C) must be observable and T >= n − 1 (Remark 8).
    horizon : int
        T >= 0.
    quality_weight : float, optional
        ϱ > 0 of Problem 3: minimise Tr 𝓘 + ϱQ. Gives Σ = (Ψ_TᵀΨ_T)^{−1/2}/√ϱ.
    quality_budget : float, optional
        ϑ > 0: minimise Tr 𝓘 subject to Q ≤ ϑ. Gives Σ = ϑ(Ψ_TᵀΨ_T)^{−1/2}/Tr((Ψ_TᵀΨ_T)^{1/2}).

    Returns
    -------
    InitialStateNoise

    Raises
    ------
    InvalidParameterError
        Neither or both goals, or a non-positive goal.
    DimensionError
        An unobservable pair or too short a horizon (Remark 8).

    References
    ----------
    Farokhi & Sandberg (2019), Theorem 4 and Appendix K; ERRATA 4.

    Examples
    --------
    >>> from privnoise.systems import StateSpace
    >>> sys = StateSpace(A=[[0.9]], C=[[1.0]])
    >>> mech = initial_state_noise(sys, horizon=2, quality_weight=4.0)
    >>> bool(np.isclose(mech.initial_covariance[0, 0], 0.5 / math.sqrt(1 + 0.81 + 0.6561)))
    True
    >>> round(initial_state_noise(sys, horizon=2, quality_budget=3.0).second_moment(), 12)
    3.0
    """
    owner = "initial_state_noise"
    if (quality_weight is None) == (quality_budget is None):
        raise InvalidParameterError(
            f"`{owner}` needs exactly one of `quality_weight` (ϱ) and `quality_budget` (ϑ); got "
            f"{'both' if quality_weight is not None else 'neither'}."
        )
    sys = as_statespace(system)
    t = check_positive_int(horizon, "horizon", owner, minimum=0)
    check_observable(sys, t, owner=owner)
    g = observability_gramian(sys, t)
    if quality_weight is not None:
        rho = check_positive(quality_weight, "quality_weight", owner)
        sigma = _sym_power(g, -0.5) / math.sqrt(rho)
    else:
        theta = check_positive(quality_budget, "quality_budget", owner)
        sigma = theta * _sym_power(g, -0.5) / float(np.trace(_sym_power(g, 0.5)))
    return InitialStateNoise(system=sys, horizon=t, initial_covariance=sigma)
