"""Noise mechanisms: frozen, validated distributions with samplers, densities and information measures.

============================  ==========================================================================
:class:`RaisedCosine`         cos² noise on a box — optimal bounded noise (Farokhi & Sandberg, Cor. 1/3/5)
:class:`Gaussian`             any covariance — optimal unbounded noise Σ ∝ (CCᵀ)^{1/2} (Cor. 6)
:class:`Laplace`              independent Laplace — the classical ε-DP mechanism (Section 5 comparison)
:class:`TiltedRaisedCosine`   e^{aw}cos² — Corollary 4 as printed (not optimal; kept to reproduce Figure 1)
============================  ==========================================================================
"""

from ._base import Mechanism
from .gaussian import Gaussian
from .laplace import Laplace
from .raised_cosine import RaisedCosine
from .tilted_raised_cosine import TiltedRaisedCosine

__all__ = ["Gaussian", "Laplace", "Mechanism", "RaisedCosine", "TiltedRaisedCosine"]
