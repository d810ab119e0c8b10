"""Section 5 of Farokhi & Sandberg as printed: the Laplace scale, ε at a quality and the entropies (ERRATA 7, 9).

Paper artefacts, kept only to reproduce the printed numbers beside the corrected values of
:mod:`privnoise.fisher.comparison`.
"""

from __future__ import annotations

import math

from ..._validation import check_positive

__all__ = [
    "printed_gaussian_entropy_bits",
    "printed_laplace_entropy_bits",
    "printed_laplace_epsilon_at_quality",
    "printed_laplace_scale",
]


def printed_laplace_scale(epsilon: float, sensitivity: float) -> float:
    """Proposition 3 as printed: b = ε/Δ (does not give ε-DP; the correct scale is Δ/ε)."""
    return check_positive(epsilon, "epsilon", "printed_laplace_scale") / check_positive(
        sensitivity, "sensitivity", "printed_laplace_scale"
    )


def printed_laplace_epsilon_at_quality(theta: float, sensitivity: float) -> float:
    """The printed Section 5 value (x̄ − x̲)√(ϑ/2) max c_i (follows from the inverted scale)."""
    t = check_positive(theta, "theta", "printed_laplace_epsilon_at_quality")
    return check_positive(sensitivity, "sensitivity", "printed_laplace_epsilon_at_quality") * math.sqrt(
        t / 2.0
    )


def printed_laplace_entropy_bits(theta: float) -> float:
    """Printed H(γ) = log₂(e√2 ϑ) (treats ϑ as a standard deviation)."""
    return math.log2(math.e * math.sqrt(2.0) * check_positive(theta, "theta", "printed_laplace_entropy_bits"))


def printed_gaussian_entropy_bits(theta: float) -> float:
    """Printed H(γ*) = log₂(√(2πe) ϑ) (treats ϑ as a standard deviation)."""
    return math.log2(
        math.sqrt(2.0 * math.pi * math.e) * check_positive(theta, "theta", "printed_gaussian_entropy_bits")
    )
