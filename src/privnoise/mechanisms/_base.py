"""The noise protocol and the two sibling bases of noise distributions, re-exported for the families: the protocol
(:class:`NoiseDesign`, :class:`Noise`) is defined in :mod:`privnoise.mechanisms.protocol`, :class:`Mechanism` in
:mod:`privnoise.mechanisms.density` and :class:`LatticeMechanism` in :mod:`privnoise.mechanisms.lattice`.
"""

from __future__ import annotations

from .density import Mechanism, vector_or_scalar
from .lattice import LatticeMechanism
from .protocol import Noise, NoiseDesign, Perturbation, as_output, deliver, points, sample_shape

__all__ = [
    "LatticeMechanism",
    "Mechanism",
    "Noise",
    "NoiseDesign",
    "Perturbation",
    "as_output",
    "deliver",
    "points",
    "sample_shape",
    "vector_or_scalar",
]
