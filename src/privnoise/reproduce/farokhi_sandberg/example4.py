"""Section 4 as printed: Example 4's system and closed forms, Theorem 4's objective and its printed covariance.

These are paper artefacts, kept only to reproduce the printed numbers; the library's Theorem 4 noise is
:func:`privnoise.systems.initial_state_noise` (the corrected Σ = G^{−1/2}/√ϱ, G = Ψ_TᵀΨ_T).

References
----------
F. Farokhi and H. Sandberg, "Ensuring privacy with constrained additive noise by minimizing Fisher
information", Automatica 99 (2019), Section 4, Theorem 4, Example 4, Appendix K; ERRATA 4–5.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from ..._validation import as_matrix, check_positive, check_positive_int
from ...exceptions import InvalidParameterError
from ...systems import InitialStateNoise, StateSpace, initial_state_noise, observability_gramian

__all__ = [
    "Variant",
    "example4_closed_forms",
    "example4_system",
    "printed_initial_state_noise",
    "theorem4_objective",
]

Variant = Literal["corrected", "printed"]


def example4_system() -> StateSpace:
    """Example 4 (traffic crowd-sensing): s[k+1] = s[k] + v[k], v[k+1] = v[k], query C = [1 0]."""
    return StateSpace(A=[[1.0, 1.0], [0.0, 1.0]], C=[[1.0, 0.0]])


def theorem4_objective(system: Any, horizon: int, covariance: ArrayLike, quality_weight: float) -> float:
    """Tr 𝓘 + ϱQ = Tr Σ⁻¹ + ϱ Tr(Ψ_TᵀΨ_T Σ) for w_T = Ψ_T z, z ~ N(0, Σ) (Problem 3, Section 4)."""
    sigma = as_matrix(covariance, "covariance", "theorem4_objective", positive_definite=True)
    rho = check_positive(quality_weight, "quality_weight", "theorem4_objective")
    g = observability_gramian(system, horizon)
    return float(np.trace(np.linalg.inv(sigma)) + rho * np.sum(g * sigma))


def printed_initial_state_noise(system: Any, *, horizon: int, quality_weight: float) -> InitialStateNoise:
    """Theorem 4 as printed: Σ = 2(Ψ_TᵀΨ_T)^{−1/2}/√ϱ, twice the minimiser (Appendix K drops a 1/4, ERRATA 4).

    Examples
    --------
    >>> from privnoise.systems import initial_state_noise
    >>> printed = printed_initial_state_noise(example4_system(), horizon=3, quality_weight=1.0)
    >>> corrected = initial_state_noise(example4_system(), horizon=3, quality_weight=1.0)
    >>> round(printed.second_moment() / corrected.second_moment(), 12)
    2.0
    """
    corrected = initial_state_noise(system, horizon=horizon, quality_weight=quality_weight)
    return InitialStateNoise(
        system=corrected.system,
        horizon=corrected.horizon,
        initial_covariance=2.0 * corrected.initial_covariance,
    )


def example4_closed_forms(
    horizon: int, quality_weight: float, *, variant: Variant = "corrected"
) -> tuple[float, float]:
    """Example 4's closed forms (Q, E‖x̂₀ − x₀‖²) with Δ = 4T⁴ + 4T³ + 13T² − 12T + 36.

    The printed formulas use the printed Σ (factor 2); the corrected Σ halves both. The eigenvalues of
    Ψ_TᵀΨ_T are (T+1)(2T² + T + 6 ∓ √Δ)/12, whence Q = 2Tr(G^{1/2})/√ϱ and Tr Σ = 2Tr(G^{−1/2})/√ϱ (printed).
    """
    t = check_positive_int(horizon, "horizon", "example4_closed_forms")
    rho = check_positive(quality_weight, "quality_weight", "example4_closed_forms")
    if variant not in ("corrected", "printed"):
        raise InvalidParameterError(
            f"`variant` of `example4_closed_forms` must be 'corrected' or 'printed'; got {variant!r}."
        )
    delta = 4 * t**4 + 4 * t**3 + 13 * t**2 - 12 * t + 36
    lo = (t + 1) * (2 * t**2 + t + 6 - math.sqrt(delta))
    hi = (t + 1) * (2 * t**2 + t + 6 + math.sqrt(delta))
    quality = (math.sqrt(lo) + math.sqrt(hi)) / math.sqrt(3 * rho)
    error = 4 * math.sqrt(3) / math.sqrt(rho) * (1 / math.sqrt(lo) + 1 / math.sqrt(hi))
    scale = 1.0 if variant == "printed" else 0.5
    return quality * scale, error * scale
