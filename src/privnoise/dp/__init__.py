"""Differential privacy: calibration, accounting, hardened sampling and empirical audits.

Calibration
    :func:`laplace_for_epsilon` (ℓ1 or ℓ2 norm) / :func:`epsilon_of_laplace`, :func:`multi_user_laplace` —
    the optimal Laplace mechanisms of Koufogiannis, Han & Pappas (Theorems 7–9);
    :func:`gaussian_for_epsilon_delta`, :func:`gaussian_sigma`, :func:`gaussian_epsilon`, :func:`gaussian_delta` —
    the exact (analytic) Gaussian privacy profile of Balle & Wang (2018) and its inverses;
    :func:`classical_gaussian_sigma` — the classical Δ√(2 ln(1.25/δ))/ε calibration, for comparison;
    :func:`epsilon_delta_of` — the (ε, δ) of any mechanism for a given sensitivity (inverse of the above).
Lipschitz privacy
    :func:`lipschitz_constant` — sup ‖∇ log g‖_* of a mechanism's density and its ε for an adjacency radius.
Accounting
    :class:`PrivacyAccountant` — pure, approximate (basic/advanced) and tight (PLD, RDP via dp-accounting)
    composition, with exact rational budgets.
Hardening (SECURITY.md 1–2)
    :func:`hardened` / :class:`HardenedMechanism` — clamp, snap to a 2^k grid, rounding added to the sensitivity;
    :class:`DiscreteLaplace`, :class:`DiscreteGaussian` — integer-lattice noise from the CSPRNG.
Audit (SECURITY.md 4)
    :func:`audit` / :class:`AuditReport` — an empirical ε lower bound with Clopper–Pearson confidence.
"""

from .accounting import AccountingMode, PrivacyAccountant, exact_rational
from .audit import AuditReport, audit, clopper_pearson
from .exponential import exponential_mechanism_epsilon, exponential_mechanism_lipschitz
from .gaussian import (
    classical_gaussian_sigma,
    gaussian_delta,
    gaussian_epsilon,
    gaussian_for_epsilon_delta,
    gaussian_sigma,
)
from .hardening import HardenedMechanism, hardened
from .laplace import epsilon_of_laplace, laplace_epsilon, laplace_for_epsilon, multi_user_laplace
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
from .lipschitz import (
    LipschitzConstant,
    dual_norm,
    epsilon_of_lipschitz,
    lipschitz_constant,
    lipschitz_for_epsilon,
)
from .profile import epsilon_delta_of

__all__ = [
    "DEFAULT_GRID_BITS",
    "AccountingMode",
    "AuditReport",
    "DiscreteGaussian",
    "DiscreteLaplace",
    "HardenedMechanism",
    "LipschitzConstant",
    "PrivacyAccountant",
    "audit",
    "classical_gaussian_sigma",
    "clopper_pearson",
    "default_grid_exponent",
    "discrete_gaussian_delta",
    "discrete_gaussian_epsilon",
    "discrete_laplace_epsilon",
    "dual_norm",
    "epsilon_of_laplace",
    "epsilon_delta_of",
    "epsilon_of_lipschitz",
    "exponential_mechanism_epsilon",
    "exponential_mechanism_lipschitz",
    "exact_rational",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_for_epsilon_delta",
    "gaussian_sigma",
    "hardened",
    "laplace_epsilon",
    "laplace_for_epsilon",
    "lattice_sensitivity",
    "lipschitz_constant",
    "lipschitz_for_epsilon",
    "multi_user_laplace",
    "zcdp_delta",
    "zcdp_epsilon",
]
