"""ε-differential privacy of Laplace noise: ℓ1 (independent Laplace), ℓ2 (K-norm) and multi-user Laplace.

* ℓ1: noise Laplace(b) per coordinate on a query whose value moves by at most Δ in ℓ1 between neighbours gives
  ε-DP with ε = Δ/b, hence b = Δ/ε (Dwork & Roth, Theorem 3.6; Koufogiannis, Han & Pappas, Theorem 7: the MSE
  optimal ε-Lipschitz noise under ℓ1, density (ε/2)ⁿ e^{−ε‖v‖₁}). Farokhi & Sandberg's Proposition 3 prints
  the inverse, b = ε/Δ, which does not give ε-DP.
* ℓ2: noise ∝ exp(−(ε/Δ)‖v‖₂) for a query of ℓ2 sensitivity Δ (Theorem 8); MSE n(n + 1)Δ²/ε².
* multi-user: noise ∝ exp(−(ε/α) Σᵢ‖vᵢ‖₂) for adjacency (4) Σᵢ‖uᵢ − u′ᵢ‖₂ ≤ α (Theorem 9).

Each calibration has its inverse (:func:`laplace_epsilon`, :func:`epsilon_of_laplace`); the ε is the
Lipschitz constant of :mod:`privnoise.dp.lipschitz` times the sensitivity (Proposition 3).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Literal

import numpy as np

from .._validation import check_positive, check_positive_int
from ..exceptions import InvalidParameterError
from ..mechanisms import L2Laplace, Laplace, Mechanism, MultiUserLaplace
from .calibration import safe_side

__all__ = [
    "epsilon_of_laplace",
    "laplace_epsilon",
    "laplace_for_epsilon",
    "multi_user_laplace",
]


def laplace_for_epsilon(
    epsilon: float,
    *,
    sensitivity: float = 1.0,
    norm: Literal["l1", "l2"] = "l1",
    dim: int | None = None,
) -> Laplace | L2Laplace:
    """Laplace noise that makes a query of sensitivity Δ ε-differentially private.

    Parameters
    ----------
    epsilon : float
        Target ε > 0.
    sensitivity : float
        Sensitivity Δ > 0 of the query in the chosen norm.
    norm : {"l1", "l2"}
        "l1": independent Laplace of scale Δ/ε per coordinate (Theorem 7); "l2": the ℓ2 Laplace
        :class:`~privnoise.mechanisms.norm_laplace.L2Laplace` with exponent coefficient ε/Δ (Theorem 8).
    dim : int, optional
        Dimension of the query. ``None`` gives a scalar :class:`Laplace` for "l1" and is not allowed for "l2".

    Returns
    -------
    Laplace or L2Laplace

    Raises
    ------
    InvalidParameterError
        For a non-positive or non-finite ε or Δ, an unknown ``norm``, a ``dim`` < 1, or "l2" without ``dim``.

    References
    ----------
    F. Koufogiannis, S. Han, G. J. Pappas, "Optimality of the Laplace mechanism in differential privacy",
    Theorems 7 and 8 with Proposition 3.

    Examples
    --------
    >>> laplace_for_epsilon(0.5, sensitivity=1.0).scale
    array(2.)
    >>> laplace_for_epsilon(0.5, sensitivity=2.0, norm="l2", dim=3)
    L2Laplace(epsilon=0.25, dim=3)
    """
    owner = "laplace_for_epsilon"
    eps = check_positive(epsilon, "epsilon", owner)
    d = check_positive(sensitivity, "sensitivity", owner)
    if norm not in ("l1", "l2"):
        raise InvalidParameterError(f"`norm` of `{owner}` must be 'l1' or 'l2'; got {norm!r}.")
    n = None if dim is None else check_positive_int(dim, "dim", owner)
    if norm == "l1":
        exact_d, exact_eps = Fraction(d), Fraction(eps)  # ε = Δ/b compared exactly, not after a rounded division
        scale = safe_side(d / eps, lambda b: exact_d / Fraction(b) <= exact_eps, what="the Laplace scale")
        return Laplace(scale=scale if n is None else np.broadcast_to(scale, (n,)))
    if n is None:
        raise InvalidParameterError(f"`dim` of `{owner}` is required for norm 'l2'; got None.")
    return L2Laplace(epsilon=eps / d, dim=n)


def multi_user_laplace(epsilon: float, users: int, dim: int, *, sensitivity: float = 1.0) -> MultiUserLaplace:
    """Multi-user Laplace noise that is ε-DP for adjacency (4): Σᵢ‖uᵢ − u′ᵢ‖₂ ≤ α = ``sensitivity``.

    Returns :class:`~privnoise.mechanisms.norm_laplace.MultiUserLaplace` with coefficient ε/α on ``users``
    blocks of dimension ``dim`` (Theorem 9); its MSE is users·dim·(dim + 1)·α²/ε².

    Examples
    --------
    >>> m = multi_user_laplace(1.0, 4, 2)
    >>> m.epsilon, m.shape, m.second_moment()
    (1.0, (8,), 24.0)
    """
    owner = "multi_user_laplace"
    eps = check_positive(epsilon, "epsilon", owner)
    n = check_positive_int(users, "users", owner)
    m = check_positive_int(dim, "dim", owner)
    a = check_positive(sensitivity, "sensitivity", owner)
    return MultiUserLaplace(epsilon=eps / a, users=n, user_dim=m)


def epsilon_of_laplace(mechanism: Mechanism, *, sensitivity: float = 1.0) -> float:
    """The ε-DP level of a Laplace-family mechanism for a query of sensitivity Δ in the mechanism's own norm.

    * :class:`Laplace` (ℓ1 adjacency): ε = Δ · max_i 1/bᵢ — the dual (ℓ∞) norm of the score bound.
    * :class:`L2Laplace` (ℓ2 adjacency): ε = Δ · ε_mech.
    * :class:`MultiUserLaplace` (adjacency (4)): ε = Δ · ε_mech.

    This is the inverse of :func:`laplace_for_epsilon` and :func:`multi_user_laplace`; the bound is tight
    (attained by outputs far along the direction of the neighbours' difference).

    Examples
    --------
    >>> epsilon_of_laplace(laplace_for_epsilon(0.3, sensitivity=2.0, norm="l2", dim=4), sensitivity=2.0)
    0.3
    """
    from .profile import LaplaceProfile, NormLaplaceProfile, profile_of

    owner = "epsilon_of_laplace"
    d = check_positive(sensitivity, "sensitivity", owner)
    profile = profile_of(mechanism)
    if not isinstance(profile, LaplaceProfile | NormLaplaceProfile):
        raise InvalidParameterError(
            f"`mechanism` of `{owner}` must be Laplace, L2Laplace or MultiUserLaplace; got {type(mechanism).__name__}."
        )
    return profile.epsilon(d)


def laplace_epsilon(scale: float, *, sensitivity: float = 1.0) -> float:
    """ε = Δ/b of Laplace noise of scale b (the inverse of :func:`laplace_for_epsilon` with norm "l1")."""
    b = check_positive(scale, "scale", "laplace_epsilon")
    d = check_positive(sensitivity, "sensitivity", "laplace_epsilon")
    return d / b
