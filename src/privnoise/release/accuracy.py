"""The accuracy a direct release states: value ± r per coordinate, from the law of its noise.

Every coordinate of the output is f(x)ᵢ + Wᵢ rounded to the grid Λ (hardened output; Λ = 0 for an unhardened
research release). The noise's privacy profile names an error law whose two-sided tails bound those of every
coordinate (:meth:`privnoise.dp.privacy_profiles.PrivacyProfile.error_law`: Laplace or Gaussian at the largest
coordinate scale); with probability ≥ level over the noise, |outputᵢ − f(x)ᵢ| ≤ r(level) + Λ, which is what a
:class:`~privnoise.planning.accuracy.NoiseLaw` with grid 2Λ states (two roundings of at most Λ/2: the one the
hardened sampler's lattice may make, and the output's). The interval is per coordinate, not simultaneous, and
covers f of the records as read (clamped to the declared bounds under ``out_of_bounds="clamp"``): it says nothing
of what clamping changed. Noise without such a law (bounded cos² noise, designs whose output is confined to a box,
custom noise without a profile) states no accuracy; the release says so instead of guessing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..dp.profile import NoProfile, profile_of
from ..planning.accuracy import NoiseLaw

__all__ = ["direct_interval"]


def direct_interval(noise: Any, value: Any, grid: float) -> Callable[[float], tuple[Any, Any, Any]] | None:
    """level ↦ (low, high, coverage) of each coordinate of ``value`` (module docstring), or None.

    Examples
    --------
    >>> import privnoise as pn
    >>> noise = pn.dp.laplace_for_epsilon(1.0, sensitivity=1.0)
    >>> interval = direct_interval(noise, 10.0, 0.0)
    >>> low, high, coverage = interval(0.95)
    >>> round(float(high) - 10.0, 4), coverage  # b·log(1/(1 − 0.95)) with b = 1
    (2.9957, 0.95)
    """
    if value is None:
        return None
    try:
        profile = profile_of(noise)
        law = None if isinstance(profile, NoProfile) else profile.error_law()
    except Exception:  # noqa: BLE001 - custom noise may state no profile, or a scale no law can have
        return None
    if law is None:
        return None
    stated = NoiseLaw(law, 2.0 * grid)
    centre = np.asarray(value, dtype=float)

    def interval(level: float) -> tuple[Any, Any, Any]:
        radius, coverage = stated.radius(level)
        low, high = centre - radius, centre + radius
        return (float(low), float(high), coverage) if centre.ndim == 0 else (low, high, coverage)

    return interval
