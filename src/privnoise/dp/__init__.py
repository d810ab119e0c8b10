"""Differential privacy: calibration of Laplace and Gaussian noise.

* :func:`laplace_for_epsilon` / :func:`laplace_epsilon` — ε-DP Laplace, b = Δ/ε.
* :func:`gaussian_for_epsilon_delta`, :func:`gaussian_sigma`, :func:`gaussian_epsilon`, :func:`gaussian_delta` —
  the exact (analytic) Gaussian privacy profile of Balle & Wang (2018) and its inverses.
* :func:`classical_gaussian_sigma` — the classical Δ√(2 ln(1.25/δ))/ε calibration, for comparison.
"""

from .gaussian import (
    classical_gaussian_sigma,
    gaussian_delta,
    gaussian_epsilon,
    gaussian_for_epsilon_delta,
    gaussian_sigma,
)
from .laplace import laplace_epsilon, laplace_for_epsilon

__all__ = [
    "classical_gaussian_sigma",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_for_epsilon_delta",
    "gaussian_sigma",
    "laplace_epsilon",
    "laplace_for_epsilon",
]
