"""Noise added to the exact value, the exact sum snapped to the grid: one calibration for the Session and the server.

A :class:`SnappedMechanism` releases f(x) ↦ Λ·round((clamp(f(x)) + W)/Λ), Λ = 2^k, the rounding of the *exact*
real sum (:func:`privnoise.snapping.snapped_add`). Like every hardened release, each output is an exact multiple
of Λ and its low-order bits carry nothing (SECURITY.md, requirement 2), and the noise never depends on the value.
Unlike :class:`~privnoise.mechanisms.HardenedMechanism`, which rounds the value *before* adding rounded noise and
so adds Λ to the sensitivity, the output here is a deterministic function of the real number clamp(f(x)) + W:
post-processing of the ideal additive mechanism. Clamping to [−B, B] moves no two values further apart. The
guarantee is therefore the noise's own at the declared sensitivity Δ, with no rounding term, and the noise is
calibrated exactly as the analyst's :class:`~privnoise.Session` calibrates it
(:meth:`privnoise.dp.families.NoiseFamily.calibrate`, the smallest scale whose exact share is within the share):
the query server and the Session release the same law for the same share (:func:`snapped_family_noise`).

Lattice noise (a family's variant on ℤ, e.g. discrete Laplace P(K = j) ∝ e^{−|j|/t} for counts) is added to
values that are integers by construction (``integer_values``: counts of records, each weighing 0 or 1), which lie
on its lattice ℤ ⊇ 2^k ℤ for k ≤ 0; the release is then f(x) + K exactly, and its ε at an integer sensitivity Δ is
the family's exact share Δ/t (:attr:`~privnoise.dp.families.NoiseFamily.exact_share`).

The floating-point caveat of :mod:`privnoise.snapping` applies: the continuous variates match the ideal law up to
their resolution relative to the grid (about 2⁻⁴⁰ per cell at the default grid).

Examples
--------
>>> from fractions import Fraction
>>> from privnoise.dp.families import LAPLACE
>>> s = snapped_family_noise(LAPLACE, Fraction(1, 2), sensitivity=1.0)
>>> float(s.mechanism.scale), s.epsilon_fraction()
(2.0, Fraction(1, 2))
>>> y = s.release(3.7, rng=1)
>>> y / s.grid == round(y / s.grid)
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..exceptions import InvalidParameterError
from ..mechanisms import LatticeMechanism, Noise, Perturbation
from ..mechanisms.hardening import HardenedMechanism
from ..mechanisms.lattice_grid import default_grid_exponent
from ..random import RNGLike, default_rng
from .families import FAMILIES, NoiseFamily
from .profile import PrivacyProfile, profile_of

__all__ = ["SnappedMechanism", "snapped_family_noise"]

_OWNER = "SnappedMechanism"
#: Values are clamped to ±2^50 grid steps at most, where the snapped sum is exact.
BOUND_STEPS = 2.0**50


def _registered(name: str | None) -> NoiseFamily | None:
    """The registered family of that name, or the variant on ℤ of one (None: no name, or none registered here)."""
    for family in FAMILIES.values():
        for candidate in (family, family.integer):
            if candidate is not None and candidate.name == name:
                return candidate
    return None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class SnappedMechanism(HardenedMechanism):
    """A release f(x) ↦ Λ·round((clamp(f(x)) + W)/Λ) of the exact sum (see the module docstring).

    Parameters
    ----------
    mechanism, sensitivity, bound, grid_exponent, coordinates
        As for :class:`~privnoise.mechanisms.HardenedMechanism`; ``bound`` spans at most 2^50 grid steps.
    integer_values : bool
        The values are integers (lattice noise needs it, on a grid 2^k ≤ 1).
    family : str, optional
        The name of the registered family that calibrated the noise, or of its variant on ℤ: its exact share states
        the ε of lattice noise on integers. A name, so that the noise ships to workers.
    """

    integer_values: bool = False
    family: str | None = None

    def __post_init__(self) -> None:
        HardenedMechanism.__post_init__(self)
        if isinstance(self.mechanism, LatticeMechanism) and not (self.integer_values and self.grid <= 1.0):
            raise InvalidParameterError(
                f"`mechanism` of `{_OWNER}`: lattice noise is added to integer values on a grid 2^k ≤ 1 only "
                "(`integer_values=True`)."
            )
        if float(np.max(self.bound)) > BOUND_STEPS * self.grid:
            raise InvalidParameterError(
                f"`bound` of `{_OWNER}` must span at most 2^50 grid steps of {self.grid:g}; "
                f"got {float(np.max(self.bound)):g}."
            )

    def _release_one(self, value: float, rng: RNGLike) -> float | None:
        """One finite value: clamped, then the noise's own scalar addition (:meth:`~privnoise.mechanisms.Noise.add_one`,
        the same bits and generator state as the array path); None: the array path answers."""
        bound = float(self.bound) if self.bound.ndim == 0 else float(np.max(self.bound))
        return self.mechanism.add_one(min(max(value, -bound), bound), default_rng(rng), self.grid_exponent)

    def _perturb(self, values: NDArray[np.float64], how: Perturbation) -> NDArray[np.float64]:
        """Clamp, then the noise's own hardened addition, as the analyst's Session adds it
        (:meth:`privnoise.planning.Component.add`): the exact sum snapped to the grid, or lattice noise added to the
        integers (on the lattice, so rounding them is the identity)."""
        clamped = np.clip(values, -self.bound, self.bound)
        return self.mechanism.add_to(clamped, rng=how.generator, grid_exponent=self.grid_exponent, out=how.out)

    def privacy_profile(self) -> PrivacyProfile:
        """The noise's own profile: the snapped sum is post-processing, so no rounding term enters."""
        return profile_of(self.mechanism)

    def epsilon_fraction(self) -> Fraction:
        """The pure ε in exact rationals: the calibrating family's exact share where it states one."""
        family = _registered(self.family)
        if family is not None:
            spent = family.spent(self.mechanism, self.sensitivity)
            if spent is not None:
                return spent
        return self.privacy_profile().epsilon_fraction(self.sensitivity)

    def epsilon(self, delta: float = 0.0) -> float:
        """The ε of one release: pure noise states its exact :meth:`epsilon_fraction`, other noise its ε at
        ``delta``."""
        if self.privacy_profile().pure:
            return float(self.epsilon_fraction())
        return HardenedMechanism.epsilon(self, delta)

    def describe(self) -> dict[str, Any]:
        return {**HardenedMechanism.describe(self), "rounding": "exact sum snapped to the grid"}


def snapped_family_noise(
    family: NoiseFamily, epsilon: Fraction, *, sensitivity: float, integer: bool = False
) -> SnappedMechanism:
    """The noise of a family of currency ε that spends at most ``epsilon`` at sensitivity Δ, released snapped.

    The calibration is the family's own (:meth:`~privnoise.dp.families.NoiseFamily.calibrate`: the smallest scale
    whose exact share is within ``epsilon``), the one the analyst's Session uses; ``integer`` aggregates (counts)
    get the family's variant on ℤ where it has one. The noise is a scalar applied to every coordinate (vector
    answers are batches), the grid its default, the bound 2^50 grid steps.

    Raises
    ------
    InvalidParameterError
        For a family of another currency (its (ε, δ) policies are calibrated by
        :func:`~privnoise.dp.hardened_calibration.hardened_family_noise`).
    """
    if family.currency != "epsilon":
        raise InvalidParameterError(
            f"`family` of `snapped_family_noise` must spend ε; {family.name!r} spends {family.currency}."
        )
    chosen = family.integer if integer and family.integer is not None else family
    noise: Noise = chosen.calibrate(sensitivity, epsilon, what=f"{chosen.name} noise")
    lattice = isinstance(noise, LatticeMechanism)
    k = noise.grid_exponent if isinstance(noise, LatticeMechanism) else default_grid_exponent(profile_of(noise).scale)
    return SnappedMechanism(mechanism=noise, sensitivity=sensitivity, bound=BOUND_STEPS * math.ldexp(1.0, k),
                            grid_exponent=k, integer_values=lattice, family=chosen.name)
