"""The noise protocol every noise object implements, and the two sibling bases of noise distributions.

:class:`NoiseDesign`
    What :func:`privnoise.release` needs of anything that adds noise: ``shape``, ``guarantee_for(query)`` (the
    guarantee the noise gives for a release of that query), ``law_at(query, x)`` (the noise law at the data;
    itself for data-independent noise) and ``as_dict()``. Data-dependent policies
    (:class:`privnoise.fisher.Policy`) are designs without a ``sample`` of their own.
:class:`Noise`
    A design whose law does not depend on the data: adds ``sample(size, *, rng)``, ``marginal(start, stop)`` (the law
    of a block of independent coordinates, for releases computed chunk by chunk) and ``add_to(values, *, rng)``
    (values + noise, snapped to a 2^k grid by default so that no low-order bit leaks).
:class:`Mechanism`
    Noise with a density: ``pdf``, ``logpdf``, ``score``, ``mean``, ``covariance``, ``fisher_information``, … — the
    continuous families (Gaussian, Laplace, raised cosine, ℓ2/multi-user Laplace, tabulated).
:class:`LatticeMechanism`
    The sibling for noise on a lattice Λℤ (discrete Laplace and Gaussian): ``pmf``, ``logpmf``, ``mean``,
    ``covariance``; no density and no location Fisher information, so none of those methods exists on it.

The protocol and the plumbing of a perturbation are in :mod:`privnoise.mechanisms.protocol`, :class:`Mechanism` in
:mod:`privnoise.mechanisms.density` and :class:`LatticeMechanism` in :mod:`privnoise.mechanisms.lattice`; this
module re-exports them for the families.
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
