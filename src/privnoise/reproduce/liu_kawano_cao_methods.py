"""Second methods of the Liu–Kawano–Cao report: the Section IV laws written out and compared with numpy and scipy.

The building example x(t+1) = a·x(t) + u(t), y(t) = x(t) + v(t) is small enough to write its matrices by hand:
O_t has rows aᵏ and the Toeplitz N_t has a^{k−j−1} below the diagonal (C = B = 1, D = 0). The Gaussian laws of
(x₀, U_t) and of the outputs, their 2-Wasserstein distance (scipy.linalg.sqrtm), their Kullback–Leibler divergence
and a Monte Carlo total variation (scipy.stats.multivariate_normal at a fixed seed) are computed here without
privnoise.systems, so that every ``check`` row of :mod:`privnoise.reproduce.liu_kawano_cao` has an independent
second method.

References
----------
L. Liu, Y. Kawano and M. Cao, "Privacy preservation for statistical input in dynamical systems", Section IV,
eq. (1), eq. (10), Lemmas III.1–III.2, Theorem III.5.
"""

from __future__ import annotations

import math
from typing import Protocol

import numpy as np
from numpy.typing import NDArray
from scipy import linalg, stats

from ._report import second_method

__all__ = [
    "Law",
    "SectionIV",
    "gaussian_kl",
    "gaussian_w2",
    "input_law",
    "output_law_by_hand",
    "stacked_matrix",
    "theorem_iii5_sigma",
    "total_variation_by_monte_carlo",
]

#: A Gaussian law as (mean, covariance).
Law = tuple[NDArray[np.float64], NDArray[np.float64]]


class SectionIV(Protocol):
    """The parameters of Section IV the second methods read (the report's ``Setup``)."""

    @property
    def a(self) -> float: ...
    @property
    def x0_mean(self) -> float: ...
    @property
    def x0_var(self) -> float: ...
    @property
    def m_bar(self) -> float: ...
    @property
    def m_u(self) -> float: ...
    @property
    def var_u(self) -> float: ...
    @property
    def horizon(self) -> int: ...


@second_method
def stacked_matrix(a: float, horizon: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(O_t, N_t) of eq. (10) for the scalar system x(t+1) = a·x(t) + u(t), y(t) = x(t), written out."""
    steps = horizon + 1
    obs = np.array([[a**k] for k in range(steps)])
    toeplitz = np.array([[a ** (k - j - 1) if j < k else 0.0 for j in range(steps)] for k in range(steps)])
    return obs, toeplitz


@second_method
def input_law(s: SectionIV, occupants: int, samples: int) -> Law:
    """The law of (x₀, u(0), …, u(samples − 1)) for ``occupants`` people: x₀ ~ N(90, 10), u ~ N(20 + n, 0.1n)."""
    mean = np.array([s.x0_mean] + [s.m_bar + occupants * s.m_u] * samples)
    cov = np.diag([s.x0_var] + [occupants * s.var_u] * samples)
    return mean, cov


@second_method
def output_law_by_hand(s: SectionIV, occupants: int, sigma: float = 0.0) -> Law:
    """The law of y = [O_t N_t](x₀, U_t) + v with v ~ N(0, σ²I), t = ``s.horizon``."""
    obs, toeplitz = stacked_matrix(s.a, s.horizon)
    on = np.hstack([obs, toeplitz])
    mean, cov = input_law(s, occupants, s.horizon + 1)
    return on @ mean, on @ cov @ on.T + sigma**2 * np.eye(on.shape[0])


@second_method
def gaussian_w2(p: Law, q: Law) -> float:
    """W₂(N(m₁, Σ₁), N(m₂, Σ₂))² = ‖m₁ − m₂‖² + Tr(Σ₁ + Σ₂ − 2(Σ₂^½Σ₁Σ₂^½)^½), by scipy.linalg.sqrtm (eq. (1))."""
    (m1, s1), (m2, s2) = p, q
    root = np.real(linalg.sqrtm(s2))
    cross = np.real(linalg.sqrtm(root @ s1 @ root))
    return math.sqrt(max(float(np.sum((m1 - m2) ** 2) + np.trace(s1 + s2 - 2.0 * cross)), 0.0))


@second_method
def gaussian_kl(p: Law, q: Law) -> float:
    """KL(N(m₁, Σ₁) ‖ N(m₂, Σ₂)) = ½[Tr(Σ₂⁻¹Σ₁) + (m₂ − m₁)ᵀΣ₂⁻¹(m₂ − m₁) − k + ln det Σ₂ − ln det Σ₁]."""
    (m1, s1), (m2, s2) = p, q
    inv = np.linalg.inv(s2)
    d = m2 - m1
    logdet = np.linalg.slogdet(s2)[1] - np.linalg.slogdet(s1)[1]
    return 0.5 * float(np.trace(inv @ s1) + d @ inv @ d - m1.size + logdet)


@second_method
def theorem_iii5_sigma(s: SectionIV, *, c: float, delta: float) -> float:
    """σ of Theorem III.5: σ² = c²λ_max(N_tᵀN_t)/(2δ²) − λ_min(O_tΣ_{x₀}O_tᵀ) (the last term 0 up to rounding)."""
    obs, toeplitz = stacked_matrix(s.a, s.horizon)
    top = float(np.linalg.eigvalsh(toeplitz.T @ toeplitz)[-1])
    floor = max(float(np.linalg.eigvalsh(s.x0_var * obs @ obs.T)[0]), 0.0)
    return math.sqrt(c * c * top / (2.0 * delta * delta) - floor)


@second_method
def total_variation_by_monte_carlo(p: Law, q: Law, *, draws: int, seed: int) -> tuple[float, float]:
    """TV(P, Q) = E_P[(1 − q/p)⁺] by Monte Carlo with scipy.stats.multivariate_normal; (estimate, standard error)."""
    law_p = stats.multivariate_normal(mean=p[0], cov=p[1])
    law_q = stats.multivariate_normal(mean=q[0], cov=q[1])
    y = law_p.rvs(size=draws, random_state=np.random.default_rng(seed))
    values = np.clip(1.0 - np.exp(np.minimum(law_q.logpdf(y) - law_p.logpdf(y), 50.0)), 0.0, None)
    return float(values.mean()), float(values.std(ddof=1) / math.sqrt(draws))
