"""Privacy for dynamical systems: LTI models, horizon matrices, initial-state and statistical-input privacy.

* Farokhi & Sandberg, Section 4 — :func:`initial_state_noise` (Theorem 4, corrected; ERRATA 4–6).
* Liu, Kawano & Cao — :class:`GaussianInput`, :func:`wasserstein2`, :func:`statistical_input_noise`
  (Theorem III.3, Corollary III.4, Theorem III.5; ERRATA 11) and the exact :func:`total_variation` audit.
* :mod:`~privnoise.systems.streaming` — window-by-window noise for sensor time series.
"""

from __future__ import annotations

from .gaussian_inputs import (
    GaussianInput,
    is_adjacent,
    kl_divergence,
    lemma_iii1_bound,
    pushforward,
    symmetrized_kl,
    wasserstein2,
)
from .horizon import (
    check_observable,
    markov_parameters,
    observability_gramian,
    observability_matrix,
    toeplitz_matrix,
)
from .initial_state import (
    InitialStateNoise,
    initial_state_noise,
)
from .statespace import StateSpace, as_statespace
from .statistical_input import (
    StatisticalInputNoise,
    corollary_iii4_noise,
    sensitivity_matrix,
    statistical_input_noise,
    theorem_iii3_condition,
    theorem_iii3_noise,
    theorem_iii5_noise,
)
from .streaming import StreamSanitizer, StreamState, sanitize_stream
from .total_variation import (
    gaussian_total_variation,
    monte_carlo_total_variation,
    output_law,
    total_variation,
)

__all__ = [
    "GaussianInput",
    "InitialStateNoise",
    "StateSpace",
    "StatisticalInputNoise",
    "StreamSanitizer",
    "StreamState",
    "as_statespace",
    "check_observable",
    "corollary_iii4_noise",
    "gaussian_total_variation",
    "initial_state_noise",
    "is_adjacent",
    "kl_divergence",
    "lemma_iii1_bound",
    "markov_parameters",
    "monte_carlo_total_variation",
    "observability_gramian",
    "observability_matrix",
    "output_law",
    "pushforward",
    "sanitize_stream",
    "sensitivity_matrix",
    "statistical_input_noise",
    "symmetrized_kl",
    "theorem_iii3_condition",
    "theorem_iii3_noise",
    "theorem_iii5_noise",
    "total_variation",
    "toeplitz_matrix",
    "wasserstein2",
]
