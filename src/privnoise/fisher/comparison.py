"""Fisher-information privacy beside differential privacy (Farokhi & Sandberg, Section 5), corrected.

The setting is Example 2: a weighted average y = Cx + w over records in [x̲, x̄], whose sensitivity to one record
is Δ = (x̄ − x̲) max_i |c_i|. Laplace noise of variance ϑ (scale b = √(ϑ/2)) and the optimal Gaussian noise of
variance ϑ (Corollary 6) are compared in Fisher information, estimation error, differential privacy and entropy.

Each function returns the corrected value (ERRATA items 7–10); the paper's printed expressions live with the
reproduction (:mod:`privnoise.reproduce.farokhi_sandberg`). :func:`section5_error_bounds` also returns the printed
bounds beside the corrected ones.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import as_finite_array, check_positive, check_probability
from ..dp.gaussian import gaussian_delta
from ..exceptions import InvalidParameterError

__all__ = [
    "condition16",
    "condition16_region",
    "exact_gaussian_region",
    "gaussian_entropy_bits",
    "laplace_entropy_bits",
    "laplace_epsilon_at_quality",
    "section5_error_bounds",
    "sensitivity_of_weighted_mean",
]


def sensitivity_of_weighted_mean(weights: ArrayLike, lower: float, upper: float) -> float:
    """Δ = (x̄ − x̲) max_i |c_i|: the largest change of Cx when one record moves within [x̲, x̄]."""
    c = as_finite_array(weights, "weights", "sensitivity_of_weighted_mean", ndim=1)
    lo = float(lower)
    hi = float(upper)
    if not hi > lo:
        raise InvalidParameterError(
            f"`upper` of `sensitivity_of_weighted_mean` must be > `lower`; got [{lo}, {hi}]."
        )
    return (hi - lo) * float(np.max(np.abs(c)))


def laplace_epsilon_at_quality(theta: float, sensitivity: float) -> float:
    """ε of Laplace noise with Q = 2b² = ϑ: ε = Δ/b = Δ√(2/ϑ)."""
    t = check_positive(theta, "theta", "laplace_epsilon_at_quality")
    return check_positive(sensitivity, "sensitivity", "laplace_epsilon_at_quality") * math.sqrt(2.0 / t)


def section5_error_bounds(weights: ArrayLike, x: ArrayLike, theta: float) -> dict[str, float]:
    """Error bounds of the estimator x̂ = C†y under Laplace and Gaussian noise of variance ϑ.

    Returns the corrected bounds ‖(I − C†C)x‖² + ϑ/(CCᵀ) (Gaussian) and + ϑ/(2CCᵀ) (Laplace, from its Fisher
    information 2/ϑ), their ratio, and the printed forms with (CCᵀ)².
    """
    c = as_finite_array(weights, "weights", "section5_error_bounds", ndim=1)
    xv = as_finite_array(x, "x", "section5_error_bounds", ndim=1)
    if xv.shape != c.shape:
        raise InvalidParameterError("`x` and `weights` of `section5_error_bounds` must have the same length.")
    t = check_positive(theta, "theta", "section5_error_bounds")
    cc = float(c @ c)
    residual = xv - c * (c @ xv) / cc
    a = float(residual @ residual)
    return {
        "unidentifiable_part": a,
        "gaussian_bound": a + t / cc,
        "laplace_bound": a + t / (2.0 * cc),
        "ratio": (a + t / cc) / (a + t / (2.0 * cc)),
        "printed_gaussian_bound": a + t / cc**2,
        "printed_laplace_bound": a + t / (2.0 * cc**2),
    }


def laplace_entropy_bits(theta: float) -> float:
    """Entropy of Laplace noise with variance ϑ: log₂(e√(2ϑ)) bits."""
    return math.log2(math.e * math.sqrt(2.0 * check_positive(theta, "theta", "laplace_entropy_bits")))


def gaussian_entropy_bits(theta: float) -> float:
    """Entropy of Gaussian noise with variance ϑ: log₂√(2πeϑ) bits."""
    return 0.5 * math.log2(2.0 * math.pi * math.e * check_positive(theta, "theta", "gaussian_entropy_bits"))


def condition16(theta: float, epsilon: float, delta: float, *, sensitivity: float) -> bool:
    """Condition (16): δ ≤ 1/2 and ϑ ≥ Δ(√(2 ln(1/(2δ)))/ε + 1/√(2ε)).

    It certifies (ε, δ)-DP of Gaussian noise only when ϑ is the noise *standard deviation* (ERRATA item 8).
    """
    t = check_positive(theta, "theta", "condition16")
    eps = check_positive(epsilon, "epsilon", "condition16")
    dl = check_probability(delta, "delta", "condition16")
    d = check_positive(sensitivity, "sensitivity", "condition16")
    if dl == 0.0 or dl > 0.5:
        return False
    return t >= d * (math.sqrt(2.0 * math.log(1.0 / (2.0 * dl))) / eps + 1.0 / math.sqrt(2.0 * eps))


def _grid(
    epsilons: ArrayLike, deltas: ArrayLike, ratio: tuple[str, float], owner: str
) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
    """The ε and δ axes of a privacy region and its noise-to-sensitivity ratio (its name and value), checked."""
    eps = as_finite_array(epsilons, "epsilons", owner, ndim=1)
    dls = as_finite_array(deltas, "deltas", owner, ndim=1)
    name, value = ratio
    return eps, dls, check_positive(value, name, owner)


def condition16_region(
    epsilons: ArrayLike, deltas: ArrayLike, *, theta_over_sensitivity: float = 1.0
) -> NDArray[np.bool_]:
    """Figure 2: where (16) holds on the grid ``deltas × epsilons`` (rows δ, columns ε)."""
    ratio = ("theta_over_sensitivity", theta_over_sensitivity)
    eps, dls, r = _grid(epsilons, deltas, ratio, "condition16_region")
    return np.array([[condition16(r, e, d, sensitivity=1.0) for e in eps] for d in dls], dtype=bool)


def exact_gaussian_region(
    epsilons: ArrayLike, deltas: ArrayLike, *, sigma_over_sensitivity: float = 1.0
) -> NDArray[np.bool_]:
    """Where N(0, σ²) noise is truly (ε, δ)-DP (exact profile), on the grid ``deltas × epsilons``."""
    ratio = ("sigma_over_sensitivity", sigma_over_sensitivity)
    eps, dls, s = _grid(epsilons, deltas, ratio, "exact_gaussian_region")
    profile = np.array([gaussian_delta(s, e, sensitivity=1.0) for e in eps])
    return dls[:, None] >= profile[None, :]
