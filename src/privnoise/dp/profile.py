"""The differential privacy of every noise family, answered by one dispatch table.

:func:`profile_of` maps a noise object to its :class:`PrivacyProfile` — in the manner of dp_accounting's events —
through the table :data:`PROFILES` (family → profile), or through the noise's own ``privacy_profile()`` method. Calibration inverses (:func:`epsilon_delta_of`), hardened
releases, accountants, Lipschitz constants and release guarantees all ask the profile; no other module switches on
the concrete noise family.

=====================================  ==========================================================================
family                                 profile (sensitivity Δ in the norm named)
=====================================  ==========================================================================
``Laplace`` (scale bᵢ)                 ε = Δ₁ / minᵢ bᵢ, δ = 0 (ℓ1 sensitivity)
``L2Laplace`` (ε₀)                     ε = ε₀ Δ₂, δ = 0 (ℓ2 sensitivity; Koufogiannis et al., Theorem 8)
``MultiUserLaplace`` (ε₀)              ε = ε₀ Δ for Δ = Σ_users ‖block‖₂ (adjacency (4), Theorem 9)
``Gaussian`` (Σ)                       exact profile at Δ₂/√λ_min(Σ) (Balle & Wang 2018; worst direction of Σ)
``DiscreteLaplace``, ``DiscreteGaussian``  their lattice profiles, the rounding of the value to the lattice included
``HardenedMechanism``                  the wrapped family's profile with the input rounded to its grid (its own
                                       ``privacy_profile()``, as any family may state)
``RaisedCosine`` and other bounded     none: bounded-support noise gives no ε-DP (a shift moves mass outside the
                                       support), so :class:`CalibrationError` is raised
=====================================  ==========================================================================

With ``grid`` = Λ, the value is rounded to Λℤ before the noise is added (a hardened release): the rounding moves it by
at most Λ/2 per coordinate, so the sensitivity grows to
:func:`~privnoise.mechanisms.lattice_grid.lattice_sensitivity`.

Hardened noise lives with the families (:mod:`privnoise.mechanisms.hardening`), below this module: it asks for the
profile of the noise it wraps through the rule :data:`~privnoise.mechanisms.statements.PRIVACY_PROFILE`
(:func:`rounded_profile_of`), which this module registers beside the (ε, δ) of a release (:func:`dp_guarantee_for`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .._validation import check_positive, check_positive_int, check_probability
from ..exceptions import InvalidParameterError
from ..guarantees import DifferentialPrivacyGuarantee
from ..mechanisms import Gaussian, L2Laplace, Laplace, MultiUserLaplace
from ..mechanisms.discrete import DiscreteGaussian, DiscreteLaplace
from ..mechanisms.statements import DIFFERENTIAL_PRIVACY, PRIVACY_PROFILE, register_statement
from ..queries import Query
from .privacy_profiles import (
    DiscreteGaussianProfile,
    DiscreteLaplaceProfile,
    GaussianProfile,
    LaplaceProfile,
    NoProfile,
    NormLaplaceProfile,
    PrivacyProfile,
    RoundedProfile,
    round_up,
)

__all__ = [
    "PROFILES",
    "GaussianProfile",
    "LaplaceProfile",
    "NoProfile",
    "NormLaplaceProfile",
    "PrivacyProfile",
    "dp_guarantee_for",
    "epsilon_delta_of",
    "profile_of",
    "round_up",
    "rounded_profile_of",
]

_OWNER = "epsilon_delta_of"


def _laplace(noise: Laplace) -> PrivacyProfile:
    return LaplaceProfile(np.atleast_1d(noise.scale), noise.dim)


def _gaussian(noise: Gaussian) -> PrivacyProfile:
    marginal = math.sqrt(noise.covariance_form().max_diagonal())
    return GaussianProfile(noise.noise_scale(), noise.dim, marginal=marginal)


def _l2_laplace(noise: L2Laplace) -> PrivacyProfile:
    return NormLaplaceProfile(noise.epsilon, noise.dim)


def _multi_user(noise: MultiUserLaplace) -> PrivacyProfile:
    return NormLaplaceProfile(
        noise.epsilon, noise.dim, norm="l1-l2", block=noise.user_dim, users=noise.users, label="multi-user Laplace"
    )


def _discrete_laplace(noise: DiscreteLaplace) -> PrivacyProfile:
    return DiscreteLaplaceProfile(noise.scale, noise.grid, noise.dim)


def _discrete_gaussian(noise: DiscreteGaussian) -> PrivacyProfile:
    return DiscreteGaussianProfile(noise.sigma, noise.grid, noise.dim)


#: The dispatch table: noise family → its privacy profile. The one place that names concrete families.
PROFILES: dict[type, Callable[[Any], PrivacyProfile]] = {
    Laplace: _laplace,
    Gaussian: _gaussian,
    L2Laplace: _l2_laplace,
    MultiUserLaplace: _multi_user,
    DiscreteLaplace: _discrete_laplace,
    DiscreteGaussian: _discrete_gaussian,
}


def profile_of(noise: Any) -> PrivacyProfile:
    """The :class:`PrivacyProfile` of a noise object (``NoProfile`` when it has none): the object's own
    ``privacy_profile()`` where its family states one (hardened noise, families registered outside this table),
    else the table's entry for its family."""
    own = getattr(noise, "privacy_profile", None)
    if callable(own):
        return own()
    for family in type(noise).__mro__:
        build = PROFILES.get(family)
        if build is not None:
            return build(noise)
    name = getattr(noise, "name", type(noise).__name__)
    support = getattr(noise, "support", None)
    if support is not None:
        low, high = support()
        if np.all(np.isfinite(low)) or np.all(np.isfinite(high)):
            return NoProfile(
                f"{name} has bounded support: a shifted input puts mass where the original has none, so no "
                "ε-differential privacy holds. Its guarantee is Fisher-information privacy.",
                scale=noise.noise_scale(),
            )
    scale = noise.noise_scale() if hasattr(noise, "noise_scale") else 1.0
    return NoProfile(f"no differential-privacy guarantee is known for {name}.", scale=scale)


def rounded_profile_of(noise: Any, *, grid: float | None = None) -> PrivacyProfile:
    """The profile of ``noise`` (:func:`profile_of`), of the value rounded to the lattice Λℤ first when ``grid`` = Λ
    (:class:`~privnoise.dp.privacy_profiles.RoundedProfile`: a hardened release). The rule
    :data:`~privnoise.mechanisms.statements.PRIVACY_PROFILE`, which the noise families ask without importing this
    module."""
    profile = profile_of(noise)
    return profile if grid is None else RoundedProfile(profile, grid)


def epsilon_delta_of(
    mechanism: Any, *, sensitivity: float, delta: float = 0.0, coordinates: int | None = None
) -> DifferentialPrivacyGuarantee:
    """The (ε, δ) differential privacy of ``mechanism`` for a query of the given sensitivity.

    Parameters
    ----------
    mechanism : Noise
        The noise (a mechanism, lattice noise or a hardened mechanism).
    sensitivity : float
        Δ > 0: ℓ1 for Laplace, ℓ2 for the Gaussian and ℓ2 Laplace, Σ_users ‖·‖₂ for multi-user Laplace.
    delta : float, default 0
        The δ at which ε is wanted (Gaussian-type noise needs δ > 0; pure mechanisms report δ = 0).
    coordinates : int, optional
        How many coordinates one record moves (the query's ``changed_outputs()``; all of them by default). Only the
        rounding to a lattice depends on it.

    Returns
    -------
    DifferentialPrivacyGuarantee

    Raises
    ------
    CalibrationError
        For Gaussian noise with δ = 0, and for bounded-support noise (no ε exists).

    Examples
    --------
    >>> from privnoise import dp
    >>> g = dp.gaussian_for_epsilon_delta(1.0, 1e-6, sensitivity=1.0)
    >>> round(epsilon_delta_of(g, sensitivity=1.0, delta=1e-6).epsilon, 9)
    1.0
    >>> epsilon_delta_of(dp.laplace_for_epsilon(0.5, sensitivity=2.0), sensitivity=2.0).epsilon
    0.5
    """
    from ..mechanisms import Noise

    sens = check_positive(sensitivity, "sensitivity", _OWNER)
    dl = check_probability(delta, "delta", _OWNER)
    if not isinstance(mechanism, Noise):
        raise InvalidParameterError(
            f"`mechanism` of `{_OWNER}` must be a privnoise mechanism; got {type(mechanism).__name__}."
        )
    profile = profile_of(mechanism)
    if coordinates is not None:
        profile = profile.touching(check_positive_int(coordinates, "coordinates", _OWNER))
    return profile.guarantee(sens, dl)


def dp_guarantee_for(noise: Any, query: Query, *, delta: float | None = None) -> DifferentialPrivacyGuarantee | None:
    """The DP guarantee of ``query(x) + noise`` at the query's declared sensitivity, or None where none holds: no
    profile, no declared bounds (or Jacobian bound), or Gaussian-type noise without a ``delta``."""
    profile = profile_of(noise)
    if isinstance(profile, NoProfile) or query.bounds is None:
        return None
    profile = profile.touching(query.changed_outputs())
    if not profile.pure and not delta:
        return None
    try:
        sensitivity = query.sensitivity(profile.norm, block=profile.block)
    except InvalidParameterError:
        return None
    if sensitivity <= 0:
        return None
    dl = 0.0 if profile.pure else check_probability(delta, "delta", "release")
    guarantee = profile.guarantee(sensitivity, dl)
    bounds = query.bounds
    return DifferentialPrivacyGuarantee(
        guarantee.epsilon,
        guarantee.delta,
        f"one record changes within [{bounds.lower:g}, {bounds.upper:g}] ({guarantee.adjacency})",
    )


register_statement(DIFFERENTIAL_PRIVACY, dp_guarantee_for)
register_statement(PRIVACY_PROFILE, rounded_profile_of)
