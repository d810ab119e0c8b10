"""The concrete parameters at which the claims of Koufogiannis, Han & Pappas are evaluated (:data:`SETUP`).

The privacy level and dimensions of Theorems 6–9, the Monte Carlo draws and seed, the neighbour distance α of
Proposition 3, the ε, dimension and λ fractions of the dual functions of Figures 1–3 and the Appendix, and the grids
of the Appendix's discretised LP.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SETUP", "Setup"]


@dataclass(frozen=True)
class Setup:
    """The concrete parameters at which the paper's claims are evaluated."""

    epsilon: float = 0.5
    n_l1: int = 3
    n_l2: int = 3
    users: int = 4
    user_dim: int = 2
    draws: int = 200_000
    seed: int = 2015
    # Proposition 3
    alpha: float = 1.5
    # Figures 1, 2 and the Appendix
    fig_epsilon: float = 1.0
    fig2_dim: int = 3
    fractions: tuple[float, ...] = (0.5, 0.9, 0.99, 1.0, 1.05)
    appendix_delta: float = 0.1
    horizon: float = 40.0  # η(R) at R = horizon/ε decides feasibility numerically
    # The LP
    lp_epsilon: float = 1.0
    lp_half_width: float = 25.0
    lp_grids: tuple[int, ...] = (51, 101, 201, 501, 1001, 2001)


SETUP = Setup()
