"""Noise mechanisms: frozen, validated distributions with samplers, densities and information measures.

Every noise object implements one protocol (:class:`Noise`: ``shape``, ``sample(size, *, rng)``,
``guarantee_for(query)``, ``add_to(values, *, rng)``); :class:`Mechanism` is the base of noise with a density and
:class:`LatticeMechanism` its sibling for noise on a 2^k lattice (:class:`DiscreteLaplace`,
:class:`DiscreteGaussian`); :class:`HardenedMechanism` (built by :func:`hardened`) wraps any of them into a clamped
release on a 2^k grid.

============================  ==========================================================================
:class:`RaisedCosine`         cos² noise on a box — optimal bounded noise (Farokhi & Sandberg, Cor. 1/3/5)
:class:`Gaussian`             any covariance — optimal unbounded noise Σ ∝ (CCᵀ)^{1/2} (Cor. 6)
:class:`Laplace`              independent Laplace — the classical ε-DP mechanism (Section 5 comparison)
:class:`L2Laplace`            ∝ exp(−ε‖v‖₂) — optimal ℓ2 Lipschitz-private noise (Koufogiannis et al., Thm. 8)
:class:`MultiUserLaplace`     ∝ exp(−ε Σᵢ‖vᵢ‖₂) — multi-user adjacency (Thm. 9)
:class:`TabulatedDensity`     a density on a grid — output of the numerical solvers
:class:`DiscreteLaplace`      discrete Laplace on the lattice 2^k·ℤ — exact lattice outputs (Mironov 2012)
:class:`DiscreteGaussian`     discrete Gaussian on 2^k·ℤ (Canonne, Kamath & Steinke 2020)
:class:`HardenedMechanism`    any of the above, clamped and snapped to a 2^k grid, the rounding in its guarantee
============================  ==========================================================================
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from ._base import LatticeMechanism, Mechanism, Noise, NoiseDesign, Perturbation, deliver, sample_shape

#: The families, each loaded on first use so that importing the protocol imports no family's dependencies
#: (the stream command samples Gaussian noise without scipy).
_FAMILIES = {
    "DiscreteGaussian": "discrete",
    "DiscreteLaplace": "discrete",
    "Gaussian": "gaussian",
    "HardenedMechanism": "hardening",
    "Laplace": "laplace",
    "L2Laplace": "norm_laplace",
    "MultiUserLaplace": "norm_laplace",
    "RaisedCosine": "raised_cosine",
    "TabulatedDensity": "tabulated",
    "hardened": "hardening",
}

if TYPE_CHECKING:
    from .discrete import DiscreteGaussian, DiscreteLaplace
    from .gaussian import Gaussian
    from .hardening import HardenedMechanism, hardened
    from .laplace import Laplace
    from .norm_laplace import L2Laplace, MultiUserLaplace
    from .raised_cosine import RaisedCosine
    from .tabulated import TabulatedDensity


def __getattr__(name: str) -> object:
    """Import a family on first access (PEP 562)."""
    if name not in _FAMILIES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{_FAMILIES[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "DiscreteGaussian",
    "DiscreteLaplace",
    "Gaussian",
    "HardenedMechanism",
    "L2Laplace",
    "Laplace",
    "LatticeMechanism",
    "Mechanism",
    "MultiUserLaplace",
    "Noise",
    "NoiseDesign",
    "Perturbation",
    "RaisedCosine",
    "TabulatedDensity",
    "deliver",
    "hardened",
    "sample_shape",
]
