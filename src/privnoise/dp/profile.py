"""The differential-privacy guarantee of a noise mechanism, whatever built it.

:func:`epsilon_delta_of` is the inverse of the calibration functions: given a mechanism and the sensitivity of the
query it answers, it returns the (ε, δ) pair that holds (a :class:`~privnoise.guarantees.DifferentialPrivacyGuarantee`).

=====================================  ==========================================================================
mechanism                              guarantee (sensitivity Δ in the norm named)
=====================================  ==========================================================================
``Laplace`` (scale bᵢ)                 ε = Δ₁ / minᵢ bᵢ, δ = 0 (ℓ1 sensitivity)
``L2Laplace`` (ε₀)                     ε = ε₀ Δ₂, δ = 0 (ℓ2 sensitivity; Koufogiannis et al., Theorem 8)
``MultiUserLaplace`` (ε₀)              ε = ε₀ Δ₂ for one user's block (Theorem 9)
``Gaussian`` (Σ)                       exact profile at Δ₂/√λ_min(Σ) (Balle & Wang 2018; worst direction of Σ)
``HardenedMechanism``                  its own guarantee, with the rounding in the sensitivity
``RaisedCosine`` and other bounded     none: bounded-support noise gives no ε-DP (a shift moves mass outside the
                                       support), so :class:`CalibrationError` is raised
=====================================  ==========================================================================
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validation import check_positive, check_probability
from ..exceptions import CalibrationError, InvalidParameterError
from ..guarantees import DifferentialPrivacyGuarantee
from ..mechanisms import Gaussian, L2Laplace, Laplace, Mechanism, MultiUserLaplace
from .gaussian import gaussian_epsilon

__all__ = ["epsilon_delta_of"]

_OWNER = "epsilon_delta_of"


def epsilon_delta_of(
    mechanism: Any, *, sensitivity: float, delta: float = 0.0
) -> DifferentialPrivacyGuarantee:
    """The (ε, δ) differential privacy of ``mechanism`` for a query of the given sensitivity.

    Parameters
    ----------
    mechanism : Mechanism or HardenedMechanism
        The noise.
    sensitivity : float
        Δ > 0: ℓ1 for Laplace, ℓ2 for the Gaussian and the norm-Laplace families (per user for multi-user).
    delta : float, default 0
        The δ at which ε is wanted (Gaussian noise needs δ > 0; pure mechanisms report δ = 0).

    Returns
    -------
    DifferentialPrivacyGuarantee

    Raises
    ------
    CalibrationError
        For Gaussian noise with δ = 0, and for bounded-support noise (no ε exists).

    Examples
    --------
    >>> from privnoise import dp
    >>> g = dp.gaussian_for_epsilon_delta(1.0, 1e-6, sensitivity=1.0)
    >>> round(epsilon_delta_of(g, sensitivity=1.0, delta=1e-6).epsilon, 9)
    1.0
    >>> epsilon_delta_of(dp.laplace_for_epsilon(0.5, sensitivity=2.0), sensitivity=2.0).epsilon
    0.5
    """
    from .hardening import HardenedMechanism

    sens = check_positive(sensitivity, "sensitivity", _OWNER)
    dl = check_probability(delta, "delta", _OWNER)
    if isinstance(mechanism, HardenedMechanism):
        guarantee = mechanism.guarantee(delta=dl if dl > 0 else None)
        if guarantee is None:
            raise CalibrationError("this hardened mechanism wraps a noise family without a DP guarantee.")
        return guarantee
    if not isinstance(mechanism, Mechanism):
        raise InvalidParameterError(
            f"`mechanism` of `{_OWNER}` must be a privnoise mechanism; got {type(mechanism).__name__}."
        )
    if isinstance(mechanism, Laplace):
        return DifferentialPrivacyGuarantee(
            sens / float(np.min(mechanism.scale)), 0.0, "ℓ1 sensitivity " + f"{sens:g}"
        )
    if isinstance(mechanism, MultiUserLaplace):
        return DifferentialPrivacyGuarantee(
            mechanism.epsilon * sens, 0.0, f"one user's block moves by ≤ {sens:g} in ℓ2"
        )
    if isinstance(mechanism, L2Laplace):
        return DifferentialPrivacyGuarantee(mechanism.epsilon * sens, 0.0, f"ℓ2 sensitivity {sens:g}")
    if isinstance(mechanism, Gaussian):
        if dl == 0.0:
            raise CalibrationError("Gaussian noise gives no pure ε-DP; pass delta > 0.")
        smallest = float(np.linalg.eigvalsh(np.atleast_2d(mechanism.cov))[0])
        eps = gaussian_epsilon(1.0, dl, sensitivity=sens / math.sqrt(smallest))
        return DifferentialPrivacyGuarantee(eps, dl, f"ℓ2 sensitivity {sens:g}")
    low, high = mechanism.support()
    if np.all(np.isfinite(low)) or np.all(np.isfinite(high)):
        raise CalibrationError(
            f"{mechanism.name} has bounded support: a shifted input puts mass where the original has none, so no "
            "ε-differential privacy holds. Its guarantee is Fisher-information privacy."
        )
    raise CalibrationError(f"no differential-privacy guarantee is known for {mechanism.name}.")
