"""The concrete parameters at which Farokhi & Sandberg's claims are evaluated (one frozen value, passed to every
section, so that the tests can recompute every second-method value independently)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["SETUP", "Setup"]


@dataclass(frozen=True)
class Setup:
    """The concrete parameters at which the paper's claims are evaluated."""

    # Corollary 1 / Appendix E: an asymmetric box [w̲, w̄]^m.
    asym_box: tuple[float, float] = (-0.3, 1.1)
    asym_m: int = 2
    asym_point: tuple[float, float] = (0.2, 0.9)
    # Corollary 2: a box with lower end 0, and Example 1 (smart meters, 0 < w̲).
    zero_box: tuple[float, float] = (0.0, 0.5)
    example1_box: tuple[float, float] = (0.1, 0.3)
    cor2_m: int = 3
    # Corollaries 3 and 5: scalar queries on one support.
    scalar_support: tuple[float, float] = (-0.5, 1.0)
    weights_c1: tuple[float, ...] = (1.0, 2.0, 3.0, 4.0)  # normalised by queries.weighted_mean
    weights_c2: tuple[float, ...] = (3.0, -1.0, 0.5)
    variance_data: tuple[float, ...] = (0.2, 1.5, 0.7, 2.0, 1.1)
    # Corollary 4: f(x) = x, W = [0, 1].
    cor4_support: tuple[float, float] = (0.0, 1.0)
    cor4_x: float = 0.3
    cor4_gauss_x: float = 0.7
    cor4_gauss_w: float = 0.3
    # Corollary 6.
    cor6_matrix: tuple[tuple[float, ...], ...] = ((1.0, 0.5, -0.2), (0.3, -1.0, 0.8))
    cor6_rho: float = 2.0
    cor6_theta: float = 0.5
    # Proposition 5: a random positive-definite matrix.
    prop5_dim: int = 4
    prop5_seed: int = 2019
    # Proposition 1: identity query n = m = 2.
    prop1_lower: tuple[float, float] = (-0.3, 0.0)
    prop1_upper: tuple[float, float] = (0.2, 1.1)
    prop1_cov: tuple[tuple[float, float], tuple[float, float]] = ((0.5, 0.2), (0.2, 0.3))
    prop1_x: tuple[float, float] = (1.0, -2.0)
    prop1_draws: int = 200_000
    prop1_seed: int = 11
    # Section 5: Example 2 with records in [x̲, x̄].
    records: tuple[float, float] = (0.0, 10.0)
    sec5_data: tuple[float, ...] = (2.0, 7.0, 1.0, 5.0)
    sec5_epsilon: float = 0.5
    sec5_theta: float = 0.5
    sec5_draws: int = 200_000
    sec5_seed: int = 5
    entropy_theta: float = 4.0
    # Condition (16) and Figure 2.
    grid_epsilons: tuple[float, float, int] = (0.05, 10.0, 200)
    grid_deltas: tuple[float, float, int] = (0.0025, 0.5, 200)
    figure2_sensitivity: float = 4.0  # ϑ = Δ = 4: the variance reading gives σ = 2 = Δ/2
    counterexample: tuple[float, float, float, float] = (5.5, 1.0, 1e-5, 1.0)  # (ϑ, ε, δ, Δ)
    # Section 4: Theorem 4 and Example 4 (traffic), closed forms at several (T, ϱ).
    ex4_cases: tuple[tuple[int, float], ...] = ((3, 0.5), (10, 2.0), (50, 1.0))
    thm4_case: tuple[int, float] = (5, 2.0)
    ex4_asymptotic: tuple[int, int] = (1000, 4000)
    false_bound_case: tuple[int, float] = (5, 1.0)

    @property
    def grid(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(ε grid, δ grid) of condition (16)."""
        return np.linspace(*self.grid_epsilons), np.linspace(*self.grid_deltas)


SETUP = Setup()
