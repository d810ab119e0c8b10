"""The discrete Laplace and discrete Gaussian laws on ℤ, in lattice units: their samplers and the discrete
Gaussian's normaliser.

* :func:`sample_discrete_laplace` — P(j) ∝ exp(−|j|/t): a random sign times a geometric variable (the floor of a
  scaled exponential), the pair (−, 0) rejected so that 0 is not counted twice (Inusah & Kozubowski 2006).
* :func:`sample_discrete_gaussian` — P(j) ∝ exp(−j²/(2s²)): a continuous Gaussian of a slightly larger scale τ,
  rounded to the nearest integer and accepted with an exactly bounded probability (:class:`GaussianProposal`;
  about 1 − 1/(2s) of the proposals are kept, so for the default grid nearly all).
* :func:`sample_discrete_gaussian_cks` — the rejection sampler of Canonne, Kamath & Steinke (2020, Algorithm 3) from
  discrete Laplace proposals, kept as an independent reference.
* :func:`discrete_gaussian_log_normaliser` — log Σ_j exp(−j²/(2s²)), shared by the probability mass function of
  :class:`~privnoise.mechanisms.DiscreteGaussian` and its exact δ(ε) (:mod:`privnoise.dp.lattice_privacy`).

Both samplers work in cache-sized chunks with preallocated buffers and fill the places of rejected proposals with
later accepted ones: conditional on which proposals are accepted, the accepted values are independent draws of the
target law, so the output is an i.i.d. sample. The number of rounds depends only on the random draws, never on data.
The draws come from floating-point exponential, normal and uniform variates: see the floating-point caveat in
:mod:`privnoise.mechanisms.discrete`.

Rounded-Gaussian proposal (discrete Gaussian)
---------------------------------------------
Draw x ~ N(0, τ²) with τ² = s²(1 + η) and let j = rint(x), so the pair (j, x) has density φ_τ(x) on the cell
|x − j| ≤ 1/2. The target pair — j from the discrete Gaussian, x uniform on its cell — has density ∝ exp(−j²/(2s²)),
and the ratio of the two is ∝ exp(E) with

    E = x²/(2τ²) − j²/(2s²) = ((x − j)(x + j) − η j²) / (2τ²).

With |x| ≤ |j| + 1/2, 2τ²E ≤ a + 1/4 − η a² (a = |j|), whose maximum over a ≥ 0 is (1 + η)/(4η), so
E ≤ C = 1/(8 η s²) everywhere: accepting with probability exp(E − C) ≤ 1 is an exact rejection sampler for every j
(no truncation). The rate of acceptance is Σ_j exp(−j²/(2s²)) · exp(−C) / (τ√(2π)); η = (1 + √(1 + 16s²))/(8s²)
maximises it (≈ exp(−1/(2s)) for large s, ≥ 0.45 for any s). The acceptance test reads 16 random bits first and
draws a full uniform only when those do not decide it (probability ≈ 2⁻¹⁶ + 1/(2s)); the lower bound 1 + D ≤ e^D
decides the rest without an exponential.

References
----------
.. [1] C. Canonne, G. Kamath, T. Steinke, "The discrete Gaussian for differential privacy", NeurIPS 2020
   (Algorithm 3: sampler).
.. [2] S. Inusah, T. Kozubowski, "A discrete analogue of the Laplace distribution", J. Stat. Plan. Inference 2006.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..snapping import CHUNK, fill_with_rejection, proposals_for, scratch
from .laplace import flip_signs

__all__ = [
    "GaussianProposal",
    "discrete_gaussian_log_normaliser",
    "sample_discrete_gaussian",
    "sample_discrete_gaussian_cks",
    "sample_discrete_laplace",
]

#: Slack on the decisions made without an exponential: absorbs the rounding of the quantities compared (≪ 2⁻³²).
_MARGIN = 2.0**-32
_ALL_ONES = np.iinfo(np.uint64).max


def _words(count: int, generator: np.random.Generator) -> NDArray[np.uint64]:
    """``count`` full-range 64-bit words (straight from the bit generator's next_uint64)."""
    return generator.integers(0, _ALL_ONES, size=count, dtype=np.uint64, endpoint=True)


def sample_discrete_laplace(
    t: float, n: int, generator: np.random.Generator, *, out: NDArray[np.float64] | None = None
) -> NDArray[np.float64]:
    """``n`` draws of the discrete Laplace distribution on ℤ, P(j) ∝ exp(−|j|/t), as integer-valued doubles.

    G = ⌊t·E⌋ with E standard exponential is geometric on {0, 1, …} with P(G = j) ∝ exp(−j/t); a fair sign S gives
    S·G, and rejecting the pair (−, 0) leaves P(j) ∝ exp(−|j|/t) on ℤ (Inusah & Kozubowski 2006). About
    (1 − e^{−1/t})/2 of the pairs are rejected.
    """
    result = np.empty(n) if out is None else out.reshape(-1)

    def propose(view: NDArray[np.float64]) -> NDArray[np.intp]:
        generator.standard_exponential(out=view)
        view *= t
        np.floor(view, out=view)
        flip_signs(view, generator)
        zeros = np.flatnonzero(view == 0.0)
        refused = zeros[np.signbit(view[zeros])]  # (−, 0) would count 0 twice
        view[zeros] = 0.0  # a zero is one lattice point: +0
        return refused

    return fill_with_rejection(result, propose, -math.expm1(-1.0 / t) / 2.0)


@dataclass(frozen=True, slots=True)
class GaussianProposal:
    """The rounded-Gaussian proposal of the discrete Gaussian with parameter s (module docstring): the proposal
    scale τ = s√(1 + η), η, the bound C = 1/(8ηs²) of the log-ratio E, and the acceptance rate."""

    s: float
    eta: float
    tau: float
    bound: float

    @classmethod
    def for_sigma(cls, s: float) -> GaussianProposal:
        eta = (1.0 + math.sqrt(1.0 + 16.0 * s * s)) / (8.0 * s * s)
        return cls(s, eta, s * math.sqrt(1.0 + eta), 1.0 / (8.0 * eta * s * s))

    def log_ratio(self, x: NDArray[np.float64], j: NDArray[np.float64]) -> NDArray[np.float64]:
        """E − C = ((x − j)(x + j) − η j²)/(2τ²) − C ≤ 0: the log of the acceptance probability."""
        a = x - j
        return (a * (a + 2.0 * j) - self.eta * j * j) / (2.0 * self.tau * self.tau) - self.bound

    def acceptance(self) -> float:
        """The probability that a proposal is accepted."""
        return math.exp(discrete_gaussian_log_normaliser(self.s) - self.bound) / (self.tau * math.sqrt(2.0 * math.pi))


def sample_discrete_gaussian(
    sigma: float, n: int, generator: np.random.Generator, *, out: NDArray[np.float64] | None = None
) -> NDArray[np.float64]:
    """``n`` draws of the discrete Gaussian on ℤ, P(j) ∝ exp(−j²/(2σ²)), as integer-valued doubles.

    Rounded continuous Gaussian proposals of scale τ = σ√(1 + η), accepted with probability exp(E − C) ≤ 1
    (module docstring): exact for every j, no truncation of the tails beyond the floating-point variates'.
    """
    law = GaussianProposal.for_sigma(sigma)
    result = np.empty(n) if out is None else out.reshape(-1)
    rejection = 1.0 - law.acceptance()
    size = proposals_for(min(n, CHUNK), rejection) + 64
    j, work = scratch("discrete gaussian", 2, size)
    two_tau2 = 2.0 * law.tau * law.tau
    # sure acceptance: (u + 1)/2¹⁶ ≤ 1 + D − margin, D = E − C, i.e. 2τ²E ≥ (u + 1)·2τ²/2¹⁶ + 2τ²(C − 1 + margin)
    slope = two_tau2 * 2.0**-16
    offset = slope + two_tau2 * (law.bound - 1.0 + _MARGIN)

    def propose(view: NDArray[np.float64]) -> NDArray[np.intp]:
        m = view.size
        x = work[:m] if m <= size else np.empty(m)
        k = j[:m] if m <= size else np.empty(m)
        generator.standard_normal(out=x)
        x *= law.tau
        np.rint(x, out=k)
        np.subtract(x, k, out=x)  # a = x − j, exact
        np.multiply(k, -law.eta, out=view)
        view += x
        view += x
        view *= k
        x *= x
        view += x  # 2τ²E = a² + j(2a − ηj)
        bits = _words((m + 3) // 4, generator).view(np.uint16)[:m]
        np.multiply(bits, slope, out=x)
        x += offset
        unsure = np.flatnonzero(view < x)
        if unsure.size:  # the 16 bits do not decide: a full uniform U = (u + V)/2¹⁶ against p = e^D
            p = np.exp(view[unsure] / two_tau2 - law.bound)
            unsure = unsure[generator.random(unsure.size) >= p * 65536.0 - bits[unsure]]
        np.add(k, 0.0, out=view)  # −0 → +0
        return unsure

    return fill_with_rejection(result, propose, rejection)


def sample_discrete_gaussian_cks(sigma: float, n: int, generator: np.random.Generator) -> NDArray[np.float64]:
    """``n`` draws of the discrete Gaussian by Canonne, Kamath & Steinke (2020), Algorithm 3: propose Y from the
    discrete Laplace with t = ⌊σ⌋ + 1 and accept it with probability exp(−(|Y| − σ²/t)²/(2σ²)). A reference
    sampler, independent of :func:`sample_discrete_gaussian`."""
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
