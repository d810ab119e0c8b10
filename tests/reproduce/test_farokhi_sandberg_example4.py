"""Section 4 as printed (Farokhi & Sandberg): Example 4's closed forms and Theorem 4's printed covariance.

The closed forms are checked against the direct traces of the noise (Tr(Ψ_TᵀΨ_T Σ), Tr Σ), and the printed Σ
against the objective computed here from the observability matrix: twice the minimiser costs 5/4 of the optimum.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from privnoise.exceptions import InvalidParameterError
from privnoise.reproduce.farokhi_sandberg.example4 import (
    example4_closed_forms,
    example4_system,
    printed_initial_state_noise,
    theorem4_objective,
)
from privnoise.systems import StateSpace, initial_state_noise, observability_matrix


def _objective(system: StateSpace, t: int, sigma: np.ndarray, rho: float) -> float:
    psi = observability_matrix(system, t)
    return float(np.trace(np.linalg.inv(sigma)) + rho * np.trace(psi @ sigma @ psi.T))


@pytest.mark.parametrize(("t", "rho"), [(2, 0.5), (6, 3.0)])
def test_printed_theorem4_costs_five_quarters_of_the_optimum(t: int, rho: float) -> None:
    system = StateSpace(A=[[0.9, 0.2, 0.0], [0.0, 0.8, 0.3], [0.1, 0.0, 0.7]], C=[[1.0, 0.0, 0.0]])
    corrected = initial_state_noise(system, horizon=t, quality_weight=rho)
    printed = printed_initial_state_noise(system, horizon=t, quality_weight=rho)
    best = _objective(system, t, np.asarray(corrected.initial_covariance), rho)
    assert theorem4_objective(system, t, corrected.initial_covariance, rho) == pytest.approx(best, rel=1e-12)
    assert theorem4_objective(system, t, printed.initial_covariance, rho) == pytest.approx(1.25 * best, rel=1e-10)
    np.testing.assert_array_equal(printed.initial_covariance, 2.0 * corrected.initial_covariance)


@pytest.mark.parametrize(("t", "rho"), [(1, 1.0), (3, 0.5), (10, 2.0), (40, 7.0)])
def test_example4_closed_forms_equal_direct(t: int, rho: float) -> None:
    for variant, mech in (
        ("printed", printed_initial_state_noise(example4_system(), horizon=t, quality_weight=rho)),
        ("corrected", initial_state_noise(example4_system(), horizon=t, quality_weight=rho)),
    ):
        q, err = example4_closed_forms(t, rho, variant=variant)  # type: ignore[arg-type]
        assert mech.second_moment() == pytest.approx(q, rel=1e-9)
        assert mech.cramer_rao_bound() == pytest.approx(err, rel=1e-9)


def test_example4_asymptotics_corrected() -> None:
    errs = [example4_closed_forms(t, 1.0)[1] * math.sqrt(t) for t in (10_000, 40_000)]
    assert errs[0] == pytest.approx(errs[1], rel=1e-3)  # Θ(1/√T), not O(T^-1.5)
    assert errs[0] == pytest.approx(2.0, rel=1e-2)  # Tr Σ ≈ 1/√λ_min(G) = 1/√(T/4) = 2/√T for ϱ = 1


def test_unknown_variant_is_refused() -> None:
    with pytest.raises(InvalidParameterError, match="variant"):
        example4_closed_forms(3, 1.0, variant="typo")  # type: ignore[arg-type]
