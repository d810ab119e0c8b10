"""Differential privacy: calibration, accounting, hardened sampling and empirical audits.

Calibration
    :func:`laplace_for_epsilon` / :func:`laplace_epsilon` — ε-DP Laplace, b = Δ/ε.
    :func:`gaussian_for_epsilon_delta`, :func:`gaussian_sigma`, :func:`gaussian_epsilon`, :func:`gaussian_delta` —
    the exact (analytic) Gaussian privacy profile of Balle & Wang (2018) and its inverses;
    :func:`classical_gaussian_sigma` — the classical Δ√(2 ln(1.25/δ))/ε calibration, for comparison.
Accounting
    :class:`PrivacyAccountant` — pure, approximate (basic/advanced) and tight (PLD, RDP via dp-accounting)
    composition, with exact rational budgets.
Hardening (SECURITY.md 1–2)
    :func:`hardened` / :class:`HardenedMechanism` — clamp, snap to a 2^k grid, rounding added to the sensitivity;
    :class:`DiscreteLaplace`, :class:`DiscreteGaussian` — integer-lattice noise from the CSPRNG.
Audit (SECURITY.md 4)
    :func:`audit` / :class:`AuditReport` — an empirical ε lower bound with Clopper–Pearson confidence.
"""

from .accounting import PrivacyAccountant, exact_rational
from .audit import AuditReport, audit, clopper_pearson
from .gaussian import (
    classical_gaussian_sigma,
    gaussian_delta,
    gaussian_epsilon,
    gaussian_for_epsilon_delta,
    gaussian_sigma,
)
from .hardening import HardenedMechanism, hardened
from .laplace import laplace_epsilon, laplace_for_epsilon
from .lattice import (
    DEFAULT_GRID_BITS,
    DiscreteGaussian,
    DiscreteLaplace,
    default_grid_exponent,
    discrete_gaussian_delta,
    discrete_gaussian_epsilon,
    discrete_laplace_epsilon,
    lattice_sensitivity,
    zcdp_delta,
    zcdp_epsilon,
)

__all__ = [
    "DEFAULT_GRID_BITS",
    "AuditReport",
    "DiscreteGaussian",
    "DiscreteLaplace",
    "HardenedMechanism",
    "PrivacyAccountant",
    "audit",
    "classical_gaussian_sigma",
    "clopper_pearson",
    "default_grid_exponent",
    "discrete_gaussian_delta",
    "discrete_gaussian_epsilon",
    "discrete_laplace_epsilon",
    "exact_rational",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_for_epsilon_delta",
    "gaussian_sigma",
    "hardened",
    "laplace_epsilon",
    "laplace_for_epsilon",
    "lattice_sensitivity",
    "zcdp_delta",
    "zcdp_epsilon",
]
