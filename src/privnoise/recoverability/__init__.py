"""Gaussian data privacy under linear function recoverability (Nageswaran).

A user holds X ~ N(μ, Σ) and answers a linear (or affine) query AX + b with a response Z whose mean-square
distance to the answer is at most ρ; privacy is the querier's MMSE of X from Z.

============================================  ==========================================================================
:func:`max_privacy`                           π(ρ): Theorem 1 (Σ = I, eq. (8)); any positive-definite Σ (exact, numerical)
:func:`optimal_response`                      the response attaining it: attenuation + Gaussian noise (eq. (23)–(25))
:class:`RecoverabilityResponse`               ``respond(x, rng=)``, ``recoverability_error()``, ``privacy()``
:func:`singular_values`                       s₁ ≤ … ≤ s_r, ascending as eq. (6) requires
:func:`allocation`, :func:`theorem1_scheme`   ρᵢ of eq. (25), the scheme in singular coordinates
:mod:`~.mmse`                                 MMSE and the linear MMSE estimator for jointly Gaussian vectors
:mod:`~.general_covariance`                   general Σ: the proof, the solver and its duality-gap certificate
============================================  ==========================================================================

Examples
--------
>>> import numpy as np
>>> import privnoise.recoverability as rec
>>> A = np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 1.0]])
>>> resp = rec.optimal_response(A, 1.0)
>>> bool(np.isclose(resp.privacy(), rec.max_privacy(A, 1.0)))
True
>>> bool(np.isclose(resp.recoverability_error(), 1.0))
True
"""

from . import general_covariance
from . import mmse as _mmse_module
from .general_covariance import GeneralSolution, dual_bound
from .mmse import (
    LinearEstimator,
    conditional_covariance,
    linear_mmse_estimator,
    mmse,
    mmse_of_linear_response,
    pseudo_inverse,
)
from .scheme import RecoverabilityResponse, optimal_response, recoverability_error
from .theorem import (
    Theorem1Scheme,
    allocation,
    max_privacy,
    privacy_of_allocation,
    singular_values,
    theorem1_scheme,
)

__all__ = [
    "GeneralSolution",
    "LinearEstimator",
    "RecoverabilityResponse",
    "Theorem1Scheme",
    "allocation",
    "conditional_covariance",
    "dual_bound",
    "general_covariance",
    "linear_mmse_estimator",
    "max_privacy",
    "mmse",
    "mmse_of_linear_response",
    "optimal_response",
    "privacy_of_allocation",
    "pseudo_inverse",
    "recoverability_error",
    "singular_values",
    "theorem1_scheme",
]

del _mmse_module
