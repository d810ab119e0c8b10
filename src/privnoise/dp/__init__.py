"""Differential privacy: calibration, accounting, hardened sampling and empirical audits.

Calibration
    :func:`laplace_for_epsilon` (ℓ1 or ℓ2 norm) / :func:`epsilon_of_laplace`, :func:`multi_user_laplace` —
    the optimal Laplace mechanisms of Koufogiannis, Han & Pappas (Theorems 7–9);
    :func:`gaussian_for_epsilon_delta`, :func:`gaussian_sigma`, :func:`gaussian_epsilon`, :func:`gaussian_delta` —
    the exact (analytic) Gaussian privacy profile of Balle & Wang (2018) and its inverses;
    :func:`classical_gaussian_sigma` — the classical Δ√(2 ln(1.25/δ))/ε calibration, for comparison;
    :func:`epsilon_delta_of` — the (ε, δ) of any mechanism for a given sensitivity (inverse of the above).
Lipschitz privacy
    :func:`lipschitz_constant` — sup ‖∇ log g‖_* of a mechanism's density and its ε for an adjacency radius;
    :func:`optimal_noise_lp` — loss-optimal ε-Lipschitz-private scalar noise by linear programming (HiGHS),
    converging to the Laplace density (Koufogiannis et al., Appendix); :func:`dual_eta`, :func:`dual_eta_ode`,
    :func:`dual_crossing`, :func:`dual_threshold` — the dual certificates of its Figures 1 and 2 (feasible iff
    λ < λ* = n(n + 1)/ε²).
Accounting
    :func:`accountant_for` — the accountant of a mode: a :class:`RationalAccountant` (pure, approximate:
    basic/advanced composition in exact rationals), a :class:`LibraryAccountant` (tight PLD, RDP via
    dp-accounting) or a :class:`ZCDPAccountant`; :class:`PrivacyAccountant` is their base.
Noise families
    :class:`NoiseFamily`, :func:`register_family`, :func:`family_named` — the registry of families every interface
    calibrates by name (:mod:`privnoise.dp.families`); :class:`PrivacyEvent` — what one part of a release costs, in
    the language the numerical accountants compose (:mod:`privnoise.dp.events`).
Calibration
    :func:`smallest_parameter`, :func:`safe_side` — the one safe-side calibrator behind every calibration.
Hardening (SECURITY.md 1–2)
    :func:`hardened` / :class:`HardenedMechanism` — clamp, snap to a 2^k grid, rounding added to the sensitivity;
    :func:`hardened_laplace_for_epsilon`, :func:`hardened_gaussian_for_epsilon_delta`, and
    :func:`hardened_family_noise` for any registered family — calibrated to a declared (ε, δ) with the rounding
    included (the query server's Gaussian noise); :class:`SnappedMechanism` / :func:`snapped_family_noise` — the
    exact sum of value and noise snapped to the grid, calibrated as the analyst's Session calibrates (the query
    server's Laplace-type noise);
    :class:`DiscreteLaplace`, :class:`DiscreteGaussian` — integer-lattice noise from the CSPRNG (these families and
    :class:`HardenedMechanism` are defined in :mod:`privnoise.mechanisms`, beside the continuous ones, and exported
    here too; their exact guarantees are in :mod:`privnoise.dp.lattice_privacy`).
Audit (SECURITY.md 4)
    :func:`audit` / :class:`AuditReport` — an empirical ε lower bound with Clopper–Pearson confidence.
Selection and zCDP (the analyst's queries, :class:`privnoise.Session`)
    :func:`exponential_mechanism`, :func:`report_noisy_max`, :func:`proposition4_epsilon` — the exponential
    mechanism, noisy max / top-k, and Koufogiannis et al.'s Proposition 4 as corrected
    (:mod:`privnoise.dp.exponential`); :func:`laplace_partition_threshold`, :func:`gaussian_partition_threshold` —
    partition selection for group-by with unknown keys (:mod:`privnoise.dp.partition`); :class:`ZCDPAccountant`,
    :func:`zcdp_to_epsilon`, :func:`epsilon_to_zcdp` — zero-concentrated DP (:mod:`privnoise.dp.zcdp`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

# The names below load their module on first use (PEP 562), so that a program that needs one accountant does not
# import the audit, the linear programs and scipy's statistics with it (the command line starts in a fraction of
# a second). Type checkers and the documentation see them as ordinary imports. A module written "..mechanisms.x"
# is privnoise.mechanisms.x: the lattice and hardened noise families, exported here too.
_EXPORTS: dict[str, str] = {
    "accountant_for": "accountants",
    "AccountingMode": "accounting",
    "PrivacyAccountant": "accounting",
    "exact_rational": "accounting",
    "AuditReport": "audits",
    "audit": "audits",
    "clopper_pearson": "audits",
    "safe_side": "calibration",
    "smallest_parameter": "calibration",
    "PrivacyEvent": "events",
    "exponential_mechanism": "exponential",
    "exponential_mechanism_epsilon": "exponential",
    "proposition4_epsilon": "exponential",
    "report_noisy_max": "exponential",
    "FAMILIES": "families",
    "NoiseFamily": "families",
    "family_named": "families",
    "register_family": "families",
    "classical_gaussian_sigma": "gaussian",
    "gaussian_delta": "gaussian",
    "gaussian_epsilon": "gaussian",
    "gaussian_for_epsilon_delta": "gaussian",
    "gaussian_sigma": "gaussian",
    "hardened_family_noise": "hardened_calibration",
    "hardened_gaussian_for_epsilon_delta": "hardened_calibration",
    "hardened_laplace_for_epsilon": "hardened_calibration",
    "HardenedMechanism": "..mechanisms.hardening",
    "SnappedMechanism": "snapped",
    "snapped_family_noise": "snapped",
    "hardened": "..mechanisms.hardening",
    "epsilon_of_laplace": "laplace",
    "laplace_epsilon": "laplace",
    "laplace_for_epsilon": "laplace",
    "multi_user_laplace": "laplace",
    "DEFAULT_GRID_BITS": "..mechanisms.lattice_grid",
    "DiscreteGaussian": "..mechanisms.discrete",
    "DiscreteLaplace": "..mechanisms.discrete",
    "default_grid_exponent": "..mechanisms.lattice_grid",
    "discrete_gaussian_delta": "lattice_privacy",
    "discrete_gaussian_epsilon": "lattice_privacy",
    "discrete_laplace_epsilon": "lattice_privacy",
    "lattice_sensitivity": "..mechanisms.lattice_grid",
    "zcdp_delta": "lattice_privacy",
    "zcdp_epsilon": "lattice_privacy",
    "LibraryAccountant": "library_accountant",
    "LipschitzConstant": "lipschitz",
    "dual_norm": "lipschitz",
    "epsilon_of_lipschitz": "lipschitz",
    "lipschitz_constant": "lipschitz",
    "lipschitz_for_epsilon": "lipschitz",
    "NoiseLPSolution": "lp",
    "optimal_noise_lp": "lp",
    "dual_crossing": "lp_dual",
    "dual_eta": "lp_dual",
    "dual_eta_ode": "lp_dual",
    "dual_threshold": "lp_dual",
    "gaussian_partition_threshold": "partition",
    "laplace_partition_threshold": "partition",
    "PrivacyProfile": "profile",
    "epsilon_delta_of": "profile",
    "profile_of": "profile",
    "RationalAccountant": "rational_accountant",
    "ZCDPAccountant": "zcdp",
    "epsilon_to_zcdp": "zcdp",
    "zcdp_to_delta": "zcdp",
    "zcdp_to_epsilon": "zcdp",
}

if TYPE_CHECKING:
    from ..mechanisms.discrete import DiscreteGaussian, DiscreteLaplace
    from ..mechanisms.hardening import HardenedMechanism, hardened
    from ..mechanisms.lattice_grid import DEFAULT_GRID_BITS, default_grid_exponent, lattice_sensitivity
    from .accountants import accountant_for
    from .accounting import AccountingMode, PrivacyAccountant, exact_rational
    from .audits import AuditReport, audit, clopper_pearson
    from .calibration import safe_side, smallest_parameter
    from .events import PrivacyEvent
    from .exponential import (
        exponential_mechanism,
        exponential_mechanism_epsilon,
        proposition4_epsilon,
        report_noisy_max,
    )
    from .families import FAMILIES, NoiseFamily, family_named, register_family
    from .gaussian import (
        classical_gaussian_sigma,
        gaussian_delta,
        gaussian_epsilon,
        gaussian_for_epsilon_delta,
        gaussian_sigma,
    )
    from .hardened_calibration import (
        hardened_family_noise,
        hardened_gaussian_for_epsilon_delta,
        hardened_laplace_for_epsilon,
    )
    from .laplace import epsilon_of_laplace, laplace_epsilon, laplace_for_epsilon, multi_user_laplace
    from .lattice_privacy import (
        discrete_gaussian_delta,
        discrete_gaussian_epsilon,
        discrete_laplace_epsilon,
        zcdp_delta,
        zcdp_epsilon,
    )
    from .library_accountant import LibraryAccountant
    from .lipschitz import (
        LipschitzConstant,
        dual_norm,
        epsilon_of_lipschitz,
        lipschitz_constant,
        lipschitz_for_epsilon,
    )
    from .lp import NoiseLPSolution, optimal_noise_lp
    from .lp_dual import dual_crossing, dual_eta, dual_eta_ode, dual_threshold
    from .partition import gaussian_partition_threshold, laplace_partition_threshold
    from .profile import PrivacyProfile, epsilon_delta_of, profile_of
    from .rational_accountant import RationalAccountant
    from .snapped import SnappedMechanism, snapped_family_noise
    from .zcdp import ZCDPAccountant, epsilon_to_zcdp, zcdp_to_delta, zcdp_to_epsilon



__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())

__all__ = [
    "FAMILIES",
    "NoiseFamily",
    "PrivacyEvent",
    "accountant_for",
    "family_named",
    "register_family",
    "DEFAULT_GRID_BITS",
    "AccountingMode",
    "AuditReport",
    "DiscreteGaussian",
    "DiscreteLaplace",
    "HardenedMechanism",
    "LibraryAccountant",
    "LipschitzConstant",
    "NoiseLPSolution",
    "PrivacyAccountant",
    "PrivacyProfile",
    "RationalAccountant",
    "SnappedMechanism",
    "ZCDPAccountant",
    "audit",
    "classical_gaussian_sigma",
    "clopper_pearson",
    "default_grid_exponent",
    "discrete_gaussian_delta",
    "discrete_gaussian_epsilon",
    "discrete_laplace_epsilon",
    "dual_crossing",
    "dual_eta",
    "dual_eta_ode",
    "dual_threshold",
    "dual_norm",
    "epsilon_of_laplace",
    "epsilon_delta_of",
    "epsilon_of_lipschitz",
    "epsilon_to_zcdp",
    "exponential_mechanism",
    "exponential_mechanism_epsilon",
    "gaussian_partition_threshold",
    "exact_rational",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_for_epsilon_delta",
    "gaussian_sigma",
    "hardened",
    "hardened_family_noise",
    "hardened_gaussian_for_epsilon_delta",
    "hardened_laplace_for_epsilon",
    "laplace_epsilon",
    "laplace_for_epsilon",
    "laplace_partition_threshold",
    "lattice_sensitivity",
    "lipschitz_constant",
    "lipschitz_for_epsilon",
    "multi_user_laplace",
    "optimal_noise_lp",
    "profile_of",
    "proposition4_epsilon",
    "report_noisy_max",
    "safe_side",
    "smallest_parameter",
    "snapped_family_noise",
    "zcdp_delta",
    "zcdp_epsilon",
    "zcdp_to_delta",
    "zcdp_to_epsilon",
]
