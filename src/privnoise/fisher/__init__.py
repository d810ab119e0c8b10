"""Fisher-information privacy (Farokhi & Sandberg, Automatica 2019).

* :func:`optimal_noise` — Problems 2–4: cos² for bounded support, Gaussian ∝ (CCᵀ)^{1/2} for unbounded support.
* :func:`fisher_guarantee`, :func:`query_information` — the information a release carries and its bounds.
* :mod:`~privnoise.fisher.cramer_rao` — Proposition 1, eqs. (7)–(8), Proposition 5.
* :func:`fisher_information_quadrature`, :func:`fisher_information_monte_carlo` — second methods for any density.
* :class:`OutputConstrainedPolicy`, :class:`WeightedCosinePolicy` — data-dependent policies.
* :mod:`~privnoise.fisher.comparison` — Section 5: Laplace and Gaussian differential privacy side by side.
"""

from . import comparison, cramer_rao
from .cramer_rao import biased_bound, cramer_rao_bound, jensen_bound, record_bounds, trace_bound
from .design import gram_sqrt, gram_sqrt_form, optimal_noise, problem3_objective
from .information import (
    MonteCarloEstimate,
    fisher_guarantee,
    fisher_information_monte_carlo,
    fisher_information_quadrature,
    query_information,
)
from .policies import OutputConstrainedPolicy, Policy, WeightedCosinePolicy

__all__ = [
    "MonteCarloEstimate",
    "OutputConstrainedPolicy",
    "Policy",
    "WeightedCosinePolicy",
    "biased_bound",
    "comparison",
    "cramer_rao",
    "cramer_rao_bound",
    "fisher_guarantee",
    "fisher_information_monte_carlo",
    "fisher_information_quadrature",
    "gram_sqrt",
    "gram_sqrt_form",
    "jensen_bound",
    "optimal_noise",
    "problem3_objective",
    "query_information",
    "record_bounds",
    "trace_bound",
]
