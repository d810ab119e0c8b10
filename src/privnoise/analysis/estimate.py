"""What a session query returns: :class:`~privnoise.results.Release`, the one result type of every interface.

``Estimate`` is its earlier name, kept so that existing code reads on; the class, its accuracy and its meaning
(:data:`NOISE_ONLY`, :data:`RANK`) are documented in :mod:`privnoise.results`.
"""

from __future__ import annotations

from ..guarantees import ConcentratedGuarantee
from ..results import NOISE_ONLY, RANK, Release

__all__ = ["NOISE_ONLY", "RANK", "ConcentratedGuarantee", "Estimate"]

#: The result of a session query: the same class as :func:`privnoise.release`'s.
Estimate = Release
