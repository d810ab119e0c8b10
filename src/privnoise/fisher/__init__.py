"""Fisher-information privacy (Farokhi & Sandberg, Automatica 2019).

* :func:`optimal_noise` — Problems 2–4: cos² for bounded support, Gaussian ∝ (CCᵀ)^{1/2} for unbounded support.
* :func:`fisher_guarantee`, :func:`query_information` — the information a release carries and its bounds.
* :mod:`~privnoise.fisher.cramer_rao` — Proposition 1, eqs. (7)–(8), Proposition 5.
* :func:`fisher_information_quadrature`, :func:`fisher_information_monte_carlo` — second methods for any density.
* :class:`OutputConstrainedPolicy` — a data-dependent policy (the release stays in a box Y).
* :mod:`~privnoise.fisher.comparison` — Section 5: Laplace and Gaussian differential privacy side by side.
* :class:`Box`, :class:`Polygon`, :class:`Ellipsoid`, :func:`Ball`, :class:`Polyhedron`, :class:`MeshSupport` —
  supports of bounded noise in 2-D and 3-D; :func:`solve_dirichlet_eigenproblem` (finite elements),
  :class:`FiniteElementNoise` and :class:`EllipsoidalNoise` — Theorem 2 on any support; :func:`spectral_bracket`
  — λ₁ of a box, a ball, an ellipsoid or a convex polygon bracketed by polynomials (Rayleigh–Ritz above,
  Kato–Temple with an equilibrated flux below).
* :func:`solve_problem1` — Problem 1 / Theorem 1 (max Tr 𝓘⁻¹): its supremum bracketed between explicit densities
  and the planes of :mod:`~privnoise.fisher.problem1_bounds`; :func:`chord_limit` and :func:`longest_chord` —
  the value reached by densities concentrating on a chord (:mod:`~privnoise.fisher.chords`).
* :func:`minimum_fisher_noise` — the Fisher program: minimum Fisher information under a support and/or
  second-moment budget by finite elements in u = √g (recovers cos² and the Gaussian numerically).
"""

from . import comparison, cramer_rao
from .chords import ChordDensity, ChordLimit, chord_limit, longest_chord
from .cramer_rao import biased_bound, cramer_rao_bound, jensen_bound, record_bounds, trace_bound
from .design import gram_sqrt, gram_sqrt_form, optimal_noise, problem3_objective
from .ellipsoidal import EllipsoidalNoise, unit_ball_eigenvalue
from .fem import EigenSolution, solve_dirichlet_eigenproblem
from .fem_noise import FiniteElementNoise
from .fisher_program import FisherProgramSolution, minimum_fisher_noise
from .information import (
    MonteCarloEstimate,
    fisher_guarantee,
    fisher_information_monte_carlo,
    fisher_information_quadrature,
    query_information,
)
from .policies import OutputConstrainedPolicy, Policy
from .problem1 import Problem1Solution, solve_problem1
from .problem1_bounds import eigenvalue_lower_bound, relaxation_bound
from .spectral_bounds import SpectralBracket, spectral_bracket
from .supports import Ball, Box, Ellipsoid, MeshSupport, Polygon, Polyhedron, Support

__all__ = [
    "SpectralBracket",
    "spectral_bracket",
    "Ball",
    "Box",
    "ChordDensity",
    "ChordLimit",
    "EigenSolution",
    "Ellipsoid",
    "EllipsoidalNoise",
    "FiniteElementNoise",
    "FisherProgramSolution",
    "MeshSupport",
    "MonteCarloEstimate",
    "Polygon",
    "Polyhedron",
    "Problem1Solution",
    "Support",
    "OutputConstrainedPolicy",
    "Policy",
    "biased_bound",
    "chord_limit",
    "comparison",
    "cramer_rao",
    "cramer_rao_bound",
    "eigenvalue_lower_bound",
    "fisher_guarantee",
    "fisher_information_monte_carlo",
    "fisher_information_quadrature",
    "gram_sqrt",
    "gram_sqrt_form",
    "jensen_bound",
    "longest_chord",
    "minimum_fisher_noise",
    "optimal_noise",
    "problem3_objective",
    "query_information",
    "record_bounds",
    "relaxation_bound",
    "solve_dirichlet_eigenproblem",
    "solve_problem1",
    "trace_bound",
    "unit_ball_eigenvalue",
]
