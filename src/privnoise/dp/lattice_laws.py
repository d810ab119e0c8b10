"""The discrete Laplace and discrete Gaussian laws on ℤ, in lattice units: their samplers and the discrete
Gaussian's normaliser.

* :func:`sample_discrete_laplace` — P(j) ∝ exp(−|j|/t), drawn as the difference of two geometric variables, each
  the floor of a scaled exponential (Inusah & Kozubowski 2006).
* :func:`sample_discrete_gaussian` — P(j) ∝ exp(−j²/(2σ²)), drawn by the rejection sampler of Canonne, Kamath &
  Steinke (2020, Algorithm 3) from discrete Laplace proposals, vectorised over batches.
* :func:`discrete_gaussian_log_normaliser` — log Σ_j exp(−j²/(2s²)), shared by the probability mass function of
  :class:`~privnoise.dp.lattice.DiscreteGaussian` and its exact δ(ε) (:mod:`privnoise.dp.lattice_privacy`).

The draws come from floating-point exponential and uniform variates: see the floating-point caveat in
:mod:`privnoise.dp.lattice`.

References
----------
.. [1] C. Canonne, G. Kamath, T. Steinke, "The discrete Gaussian for differential privacy", NeurIPS 2020
   (Algorithm 3: sampler).
.. [2] S. Inusah, T. Kozubowski, "A discrete analogue of the Laplace distribution", J. Stat. Plan. Inference 2006.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

__all__ = ["discrete_gaussian_log_normaliser", "sample_discrete_gaussian", "sample_discrete_laplace"]


def sample_discrete_laplace(t: float, n: int, generator: np.random.Generator) -> NDArray[np.float64]:
    """``n`` draws of the discrete Laplace distribution on ℤ, P(j) ∝ exp(−|j|/t), as integer-valued doubles.

    G = ⌊t·E⌋ with E standard exponential is geometric on {0, 1, …} with P(G ≥ j) = exp(−j/t); the difference of
    two independent such variables is discrete Laplace (Inusah & Kozubowski 2006).
    """
    e = generator.standard_exponential((2, n))
    e *= t
    np.floor(e, out=e)
    return e[0] - e[1]


def sample_discrete_gaussian(sigma: float, n: int, generator: np.random.Generator) -> NDArray[np.float64]:
    """``n`` draws of the discrete Gaussian on ℤ, P(j) ∝ exp(−j²/(2σ²)), as integer-valued doubles.

    Canonne, Kamath & Steinke (2020), Algorithm 3: propose Y from the discrete Laplace with t = ⌊σ⌋ + 1 and accept
    it with probability exp(−(|Y| − σ²/t)²/(2σ²)); here proposals are drawn in batches and the accepted ones kept
    in order, so the number of batches (and the time) does not depend on any data.
    """
    t = math.floor(sigma) + 1.0
    out = np.empty(n)
    filled = 0
    while filled < n:
        need = n - filled
        batch = int(need * 1.6) + 64
        y = sample_discrete_laplace(t, batch, generator)
        shift = np.abs(y) - sigma * sigma / t
        accept = generator.random(batch) < np.exp(-(shift * shift) / (2.0 * sigma * sigma))
        kept = y[accept][:need]
        out[filled : filled + kept.size] = kept
        filled += kept.size
    return out


def discrete_gaussian_log_normaliser(s: float) -> float:
    """log Σ_j exp(−j²/(2s²)): direct sum for s < 8, else the Poisson-summation value √(2π)s (exact in double)."""
    if s >= 8.0:
        return math.log(math.sqrt(2.0 * math.pi) * s)
    j = np.arange(-math.ceil(40 * s) - 1, math.ceil(40 * s) + 2, dtype=float)
    return float(np.log(np.sum(np.exp(-(j * j) / (2.0 * s * s)))))
