"""The privacy profiles of the noise families: how each one's (ε, δ) depends on the sensitivity it meets.

A profile is the value :func:`privnoise.dp.profile.profile_of` returns for a noise object (through the dispatch
table there): the ε and δ at a sensitivity, the exact rational ε an accountant charges, the dp-accounting event,
the Lipschitz constant, the exact composition of repeated releases, and the rounding to a lattice Λ when the value
is rounded before the noise is added (one Λ per output one record moves, :meth:`PrivacyProfile.touching`).

======================================================  =========================================================
:mod:`~privnoise.dp.privacy_profiles.base`              the interface :class:`PrivacyProfile`, :class:`NoProfile`
                                                        and :class:`RoundedProfile` (hardened releases)
:mod:`~privnoise.dp.privacy_profiles.continuous`        :class:`LaplaceProfile`, :class:`GaussianProfile`,
                                                        :class:`NormLaplaceProfile`
:mod:`~privnoise.dp.privacy_profiles.discrete`          :class:`DiscreteLaplaceProfile`,
                                                        :class:`DiscreteGaussianProfile`
======================================================  =========================================================
"""

from __future__ import annotations

from .base import NoProfile, PrivacyProfile, RoundedProfile, declared_value, round_up
from .continuous import GaussianProfile, LaplaceProfile, NormLaplaceProfile
from .discrete import DiscreteGaussianProfile, DiscreteLaplaceProfile

__all__ = [
    "DiscreteGaussianProfile",
    "DiscreteLaplaceProfile",
    "GaussianProfile",
    "LaplaceProfile",
    "NoProfile",
    "NormLaplaceProfile",
    "PrivacyProfile",
    "RoundedProfile",
    "declared_value",
    "round_up",
]
