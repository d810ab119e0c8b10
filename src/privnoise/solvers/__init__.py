"""Numerical optimal noise: the discretised LP of Koufogiannis, Han & Pappas, and the Fisher program.

* :func:`optimal_noise_lp` — loss-optimal ε-Lipschitz-private scalar noise by linear programming (HiGHS);
  converges to the Laplace density, objective → 2/ε² (MSE) or 1/ε (absolute error).
* :func:`minimum_fisher_noise` — minimum Fisher information under a support and/or second-moment budget
  (finite elements in u = √g; recovers cos² and the Gaussian).
* :func:`dual_eta`, :func:`dual_eta_ode`, :func:`dual_crossing`, :func:`dual_threshold` — the dual certificates of
  Figures 1 and 2 (feasible iff λ < λ* = n(n + 1)/ε²).
"""

from .dual import dual_crossing, dual_eta, dual_eta_ode, dual_threshold
from .fisher_program import FisherProgramSolution, minimum_fisher_noise
from .lp import NoiseLPSolution, optimal_noise_lp

__all__ = [
    "FisherProgramSolution",
    "NoiseLPSolution",
    "dual_crossing",
    "dual_eta",
    "dual_eta_ode",
    "dual_threshold",
    "minimum_fisher_noise",
    "optimal_noise_lp",
]
