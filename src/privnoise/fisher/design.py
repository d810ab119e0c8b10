"""Optimal noise design for Fisher-information privacy (Farokhi & Sandberg, Problems 2–4, Section 3).

:func:`optimal_noise` returns the noise that minimises the trace of the Fisher information the release carries
about the database, under one of these goals:

=====================================  ==============================================================================
``support=(w̲, w̄)``                    bounded noise (Problem 2): cos² on the interval/box (Corollaries 1, 3, 5)
``output_range=(y̲, ȳ)``               output constraint W(x) = {−f(x)} ⊕ Y: the release stays in Y
``quality_weight=ϱ``                  unbounded noise, min Tr 𝓘 + ϱQ (Problem 3): Gaussian Σ = (CCᵀ)^{1/2}/√ϱ
``quality_budget=ϑ``                  unbounded noise, min Tr 𝓘 s.t. Q ≤ ϑ (Problem 4): Σ = ϑ(CCᵀ)^{1/2}/Tr(CCᵀ)^{1/2}
=====================================  ==============================================================================

The printed Corollary 6 carries a spurious factor 2 in the Problem 3 covariance; ``variant="printed"`` gives it
for reproduction, the default is the corrected minimiser.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import as_finite_array, check_positive
from ..exceptions import DimensionError, InvalidParameterError, SolverError
from ..mechanisms import Gaussian, Mechanism, RaisedCosine
from ..queries import LinearQuery, Query
from .policies import OutputConstrainedPolicy, Policy, WeightedCosinePolicy
from .supports import Support

__all__ = ["gram_sqrt", "optimal_noise", "problem3_objective"]

Variant = Literal["corrected", "printed"]


def gram_sqrt(query: LinearQuery) -> NDArray[np.float64]:
    """(CCᵀ)^{1/2}, the principal square root, for a full-row-rank C.

    Raises
    ------
    InvalidParameterError
        If C is not of full row rank (Corollary 6 needs CCᵀ invertible).
    """
    gram = query.gram()
    eig, vec = np.linalg.eigh(gram)
    if eig[0] <= 1e-12 * eig[-1]:
        raise InvalidParameterError(
            f"`matrix` of `{query.name}` must have full row rank for unbounded optimal noise (Corollary 6); "
            f"CCᵀ has smallest eigenvalue {eig[0]:.3g}."
        )
    root = (vec * np.sqrt(eig)) @ vec.T
    return (root + root.T) / 2.0


def problem3_objective(query: LinearQuery, covariance: ArrayLike, quality_weight: float) -> float:
    """Tr 𝓘 + ϱ Q = Tr(Σ⁻¹CCᵀ) + ϱ Tr Σ for zero-mean Gaussian noise N(0, Σ) (Problem 3)."""
    sigma = np.atleast_2d(np.asarray(covariance, dtype=float))
    return float(np.trace(np.linalg.solve(sigma, query.gram())) + quality_weight * np.trace(sigma))


def _box(value: Any, name: str, shape: tuple[int, ...]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    try:
        lo, hi = value
    except (TypeError, ValueError):
        raise InvalidParameterError(
            f"`{name}` of `optimal_noise` must be a (lower, upper) pair; got {value!r}."
        ) from None
    lo_arr = as_finite_array(lo, f"{name}[0]", "optimal_noise", ndim=(0, 1))
    hi_arr = as_finite_array(hi, f"{name}[1]", "optimal_noise", ndim=(0, 1))
    try:
        lo_arr, hi_arr = (np.broadcast_to(a, shape).astype(float) for a in (lo_arr, hi_arr))
    except ValueError:
        raise DimensionError(
            f"`{name}` of `optimal_noise` must broadcast to the query's output shape {shape}."
        ) from None
    if np.any(hi_arr <= lo_arr):
        raise InvalidParameterError(
            f"`{name}` of `optimal_noise` must have lower < upper in every coordinate."
        )
    return lo_arr, hi_arr


def _require_separable(query: Query, what: str) -> None:
    """A box-supported optimum factorises only when CCᵀ is diagonal (Theorem 2's PDE then separates)."""
    if query.m == 1:
        return
    if not isinstance(query, LinearQuery):
        raise SolverError(
            f"{what} for a nonlinear query with m > 1 outputs solves the PDE of Theorem 2, which depends on F(x); "
            "no closed form exists."
        )
    gram = query.gram()
    off = gram - np.diag(np.diag(gram))
    if np.max(np.abs(off)) > 1e-12 * np.max(np.abs(gram)):
        raise SolverError(
            f"{what} on a box with a non-diagonal CCᵀ has no separable closed form: the optimum solves "
            "Tr(CCᵀ D²u) + μu = 0 with u = 0 on the boundary (Theorem 2). Use a query with orthogonal rows, or a "
            "numerical solver."
        )


def _needs_finite_elements(query: Query, support: Any) -> bool:
    """A box for a linear query with 2 or 3 outputs and a non-diagonal CCᵀ (solved by finite elements)."""
    if not isinstance(query, LinearQuery) or query.m not in (2, 3):
        return False
    gram = query.gram()
    off = gram - np.diag(np.diag(gram))
    return bool(np.max(np.abs(off)) > 1e-12 * np.max(np.abs(gram)))


def _as_box(support: Any, shape: tuple[int, ...]) -> Support:
    from .supports import Box

    lo, hi = _box(support, "support", shape)
    return Box(lo, hi)


def optimal_noise(
    query: Query,
    *,
    support: tuple[Any, Any] | Support | None = None,
    output_range: tuple[Any, Any] | None = None,
    quality_weight: float | None = None,
    quality_budget: float | None = None,
    log_weight: Callable[[float], float] | None = None,
    variant: Variant = "corrected",
) -> Mechanism | Policy:
    """The noise minimising the trace of the Fisher information for ``query`` under one goal.

    Parameters
    ----------
    query : Query
        What is released (``queries.mean(n)``, ``LinearQuery(C)``, ``queries.variance(n)``, …).
    support : (lower, upper) or Support, optional
        Bounded noise support W = [w̲, w̄] (a box, per output coordinate): cos² noise (Problem 2). A
        :class:`~privnoise.fisher.Support` (Box, Polygon, Ellipsoid, Polyhedron, MeshSupport), or a box whose
        CCᵀ is not diagonal, with a linear query of 2 or 3 outputs: the solution of Theorem 2's eigenproblem
        (:func:`~privnoise.fisher.support_design.optimal_noise_on_support`: closed form where one exists,
        finite elements otherwise).
    output_range : (lower, upper), optional
        The release must lie in Y = [y̲, ȳ]: noise supported on Y − f(x) (a data-dependent policy).
    quality_weight : float, optional
        ϱ > 0 of Problem 3, min Tr 𝓘 + ϱ E‖w‖² over unbounded noise (linear queries).
    quality_budget : float, optional
        ϑ > 0 of Problem 4, min Tr 𝓘 subject to E‖w‖² ≤ ϑ (linear queries).
    log_weight : callable, optional
        With ``support``, for n = m = 1: the weight log p(x) of Corollary 4 (printed form, not optimal).
    variant : {"corrected", "printed"}
        For ``quality_weight``: "printed" reproduces Corollary 6's Σ = 2(CCᵀ)^{1/2}/√ϱ.

    Returns
    -------
    Mechanism or Policy
        A :class:`~privnoise.mechanisms.RaisedCosine` or :class:`~privnoise.mechanisms.Gaussian`, or a policy for
        data-dependent goals.

    Raises
    ------
    InvalidParameterError
        If not exactly one goal is given, or a parameter breaks its rule.
    SolverError
        If the goal has no closed-form optimum for this query (e.g. a box for a non-diagonal CCᵀ).

    Notes
    -----
    Bounded support, scalar query (linear or not): Corollaries 3 and 5 give
    γ*(w) = (2/L) cos²(π/L (w − (w̲+w̄)/2)); for f(x) = x on a box, Corollary 1 gives the product. Unbounded
    support, linear query with full row rank C: with Σ the noise covariance, Tr 𝓘 = Tr(Σ⁻¹CCᵀ) and Q = Tr Σ,
    so the stationarity condition Σ⁻¹CCᵀΣ⁻¹ = ϱI gives Σ = (CCᵀ)^{1/2}/√ϱ (the printed factor 2 is an error,
    ERRATA item 4), and the budget ϑ gives Σ = ϑ(CCᵀ)^{1/2}/Tr((CCᵀ)^{1/2}).

    References
    ----------
    F. Farokhi, H. Sandberg, Automatica 99 (2019): Theorem 2, Corollaries 1, 3, 4, 5, 6.

    Examples
    --------
    >>> import privnoise as pn
    >>> q = pn.queries.mean(500)
    >>> pn.fisher.optimal_noise(q, support=(0.0, 0.2))
    RaisedCosine(lower=array(0.), upper=array(0.2))
    >>> g = pn.fisher.optimal_noise(q, quality_budget=0.01)
    >>> round(g.covariance(), 6)
    0.01
    >>> round(pn.fisher.optimal_noise(q, quality_weight=4.0).covariance(), 6)    # |C|/√ϱ = (1/√500)/2
    0.022361
    """
    if not isinstance(query, Query):
        raise InvalidParameterError(
            f"`query` of `optimal_noise` must be a privnoise Query; got {type(query).__name__}."
        )
    goals = {
        "support": support,
        "output_range": output_range,
        "quality_weight": quality_weight,
        "quality_budget": quality_budget,
    }
    given = [k for k, v in goals.items() if v is not None]
    if len(given) != 1:
        raise InvalidParameterError(
            "`optimal_noise` needs exactly one goal among support, output_range, quality_weight, quality_budget; "
            f"got {given or 'none'}."
        )
    if variant not in ("corrected", "printed"):
        raise InvalidParameterError(
            f"`variant` of `optimal_noise` must be 'corrected' or 'printed'; got {variant!r}."
        )
    if log_weight is not None and support is None:
        raise InvalidParameterError("`log_weight` of `optimal_noise` goes with `support` (Corollary 4).")
    goal = given[0]
    shape = query.output_shape

    if goal == "support":
        if isinstance(support, Support) or _needs_finite_elements(query, support):
            from .support_design import optimal_noise_on_support

            region = support if isinstance(support, Support) else _as_box(support, shape)
            if log_weight is not None:
                raise InvalidParameterError("`log_weight` of `optimal_noise` applies to n = m = 1 only.")
            return optimal_noise_on_support(query, region)
        lo, hi = _box(support, "support", shape)
        if log_weight is not None:
            if query.n != 1 or query.m != 1:
                raise DimensionError("`log_weight` (Corollary 4) applies to n = m = 1 and f(x) = x only.")
            return WeightedCosinePolicy(lower=lo.item(), upper=hi.item(), log_weight=log_weight)
        _require_separable(query, "bounded-support optimal noise")
        return RaisedCosine(lower=lo[()] if not shape else lo, upper=hi[()] if not shape else hi)

    if goal == "output_range":
        lo, hi = _box(output_range, "output_range", shape)
        _require_separable(query, "output-constrained optimal noise")
        return OutputConstrainedPolicy(lower=lo[()] if not shape else lo, upper=hi[()] if not shape else hi)

    if not isinstance(query, LinearQuery):
        raise InvalidParameterError(
            f"`{goal}` of `optimal_noise` applies to linear queries (Corollary 6); `{query.name}` is nonlinear. "
            "Use `support` (Corollary 5 covers every scalar query)."
        )
    root = gram_sqrt(query)
    if goal == "quality_weight":
        rho = check_positive(quality_weight, "quality_weight", "optimal_noise")
        factor = (2.0 if variant == "printed" else 1.0) / math.sqrt(rho)
        sigma = factor * root
    else:
        theta = check_positive(quality_budget, "quality_budget", "optimal_noise")
        sigma = theta * root / np.trace(root)
    return Gaussian(cov=float(sigma[0, 0]) if not shape else sigma)
