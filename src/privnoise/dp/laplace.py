"""ε-differential privacy of Laplace noise for a scalar query (the ℓ1 Laplace mechanism).

Noise Laplace(b) on a query whose value changes by at most Δ between neighbouring databases gives ε-DP with
ε = Δ/b, hence the calibration b = Δ/ε (Dwork & Roth, Theorem 3.6). Farokhi & Sandberg's Proposition 3 prints the
inverse, b = ε/Δ, which does not give ε-DP.
"""

from __future__ import annotations

from .._validation import check_positive
from ..mechanisms import Laplace

__all__ = ["laplace_epsilon", "laplace_for_epsilon"]


def laplace_for_epsilon(epsilon: float, *, sensitivity: float) -> Laplace:
    """Laplace noise of scale Δ/ε: ε-DP for a query of ℓ1 sensitivity Δ.

    Examples
    --------
    >>> laplace_for_epsilon(0.5, sensitivity=1.0).scale
    array(2.)
    """
    eps = check_positive(epsilon, "epsilon", "laplace_for_epsilon")
    d = check_positive(sensitivity, "sensitivity", "laplace_for_epsilon")
    return Laplace(scale=d / eps)


def laplace_epsilon(scale: float, *, sensitivity: float) -> float:
    """ε = Δ/b of Laplace noise of scale b (the inverse of :func:`laplace_for_epsilon`)."""
    b = check_positive(scale, "scale", "laplace_epsilon")
    d = check_positive(sensitivity, "sensitivity", "laplace_epsilon")
    return d / b
