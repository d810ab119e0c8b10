"""Models, horizon matrices (against the simulated recursion) and Theorem 4 (against optimisers).

Example 4's closed forms and Theorem 4 as printed are tested with the reproduction
(``tests/reproduce/test_farokhi_sandberg_example4.py``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize

from privnoise.exceptions import DimensionError, InvalidParameterError
from privnoise.systems import (
    StateSpace,
    initial_state_noise,
    markov_parameters,
    observability_gramian,
    observability_matrix,
    toeplitz_matrix,
)

RNG = np.random.default_rng(3)
SYS = StateSpace(
    A=RNG.normal(size=(3, 3)) * 0.5,
    B=RNG.normal(size=(3, 2)),
    C=RNG.normal(size=(2, 3)),
    D=RNG.normal(size=(2, 2)),
)
#: A double integrator (position and velocity, position observed): observable from two outputs.
DOUBLE_INTEGRATOR = StateSpace(A=[[1.0, 1.0], [0.0, 1.0]], C=[[1.0, 0.0]])


def _theorem4_objective(system: StateSpace, t: int, sigma: np.ndarray, rho: float) -> float:
    """Tr Σ⁻¹ + ϱ Tr(Ψ_TᵀΨ_T Σ), from the observability matrix directly."""
    psi = observability_matrix(system, t)
    return float(np.trace(np.linalg.inv(sigma)) + rho * np.trace(psi @ sigma @ psi.T))


@pytest.mark.parametrize("t", [0, 1, 4])
def test_horizon_matrices_match_recursion(t: int) -> None:
    x0 = RNG.normal(size=3)
    u = RNG.normal(size=(t + 1, 2))
    y = SYS.simulate(x0, u).ravel()
    direct = observability_matrix(SYS, t) @ x0 + toeplitz_matrix(SYS, t) @ u.ravel()
    np.testing.assert_allclose(direct, y, rtol=1e-12, atol=1e-12)


def test_markov_and_gramian() -> None:
    h = markov_parameters(SYS, 3)
    np.testing.assert_allclose(h[2], SYS.C @ SYS.A @ SYS.B)
    g = observability_gramian(SYS, 4)
    manual = sum(
        np.linalg.matrix_power(SYS.A.T, k) @ SYS.C.T @ SYS.C @ np.linalg.matrix_power(SYS.A, k)
        for k in range(5)
    )
    np.testing.assert_allclose(g, manual, rtol=1e-12)


def test_python_control_interop() -> None:
    control = pytest.importorskip("control")
    csys = control.ss([[0.9]], [[1.0]], [[1.0]], [[0.0]], dt=1)
    np.testing.assert_allclose(observability_matrix(csys, 2).ravel(), [1, 0.9, 0.81])
    obsv = control.obsv(SYS.A, SYS.C)
    np.testing.assert_allclose(observability_matrix(SYS, 2), obsv)
    with pytest.raises(InvalidParameterError, match="dt"):
        initial_state_noise(control.ss([[0.9]], [[1.0]], [[1.0]], [[0.0]]), horizon=2, quality_weight=1.0)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"A": [[1, 2, 3], [4, 5, 6]], "C": [[1, 0, 0]]}, DimensionError, "square"),
        ({"A": [[1.0]], "C": [[1.0, 2.0]]}, DimensionError, "column"),
        ({"A": [[1.0]], "B": [[1.0]], "C": [[1.0]], "D": [[1.0, 2.0]]}, DimensionError, "`D`"),
        ({"A": [[np.nan]], "C": [[1.0]]}, InvalidParameterError, "finite"),
        ({"A": [["a"]], "C": [[1.0]]}, InvalidParameterError, "numeric"),
    ],
)
def test_bad_models(kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        StateSpace(**kwargs)


def test_unobservable_and_short_horizon() -> None:
    unobs = StateSpace(A=[[1.0, 0.0], [0.0, 2.0]], C=[[1.0, 0.0]])
    with pytest.raises(DimensionError, match="not observable"):
        initial_state_noise(unobs, horizon=5, quality_weight=1.0)
    with pytest.raises(DimensionError, match="horizon"):
        initial_state_noise(DOUBLE_INTEGRATOR, horizon=0, quality_weight=1.0)
    with pytest.raises(InvalidParameterError, match="exactly one"):
        initial_state_noise(DOUBLE_INTEGRATOR, horizon=3)
    with pytest.raises(InvalidParameterError, match="quality_weight"):
        initial_state_noise(DOUBLE_INTEGRATOR, horizon=3, quality_weight=-1.0)


def _optimise(g: np.ndarray, rho: float) -> float:
    m = g.shape[0]

    def objective(p: np.ndarray) -> float:
        low = np.zeros((m, m))
        low[np.tril_indices(m)] = p
        low[np.diag_indices(m)] = np.exp(low[np.diag_indices(m)])
        s = low @ low.T
        return float(np.trace(np.linalg.inv(s)) + rho * np.sum(g * s))

    return float(
        optimize.minimize(objective, np.zeros(m * (m + 1) // 2), method="BFGS", options={"gtol": 1e-10}).fun
    )


@pytest.mark.parametrize(("t", "rho"), [(2, 0.5), (6, 3.0)])
def test_theorem4_optimum_against_optimiser(t: int, rho: float) -> None:
    system = StateSpace(A=[[0.9, 0.2, 0.0], [0.0, 0.8, 0.3], [0.1, 0.0, 0.7]], C=[[1.0, 0.0, 0.0]])
    mech = initial_state_noise(system, horizon=t, quality_weight=rho)
    best = _theorem4_objective(system, t, np.asarray(mech.initial_covariance), rho)
    assert best == pytest.approx(_optimise(observability_gramian(system, t), rho), rel=1e-6)
    # Over full-rank white-plus-shaped noise on all T+1 outputs, nothing beats the bound (it is an infimum).
    psi = observability_matrix(system, t)
    for _ in range(20):
        m = RNG.normal(size=(t + 1, t + 1))
        s = m @ m.T + 0.01 * np.eye(t + 1)
        assert np.trace(psi.T @ np.linalg.solve(s, psi)) + rho * np.trace(s) >= best * (1 - 1e-9)


def test_quality_budget_version() -> None:
    system = DOUBLE_INTEGRATOR
    mech = initial_state_noise(system, horizon=5, quality_budget=2.0)
    assert mech.second_moment() == pytest.approx(2.0)
    g = observability_gramian(system, 5)

    def trace_info(p: np.ndarray) -> float:  # Σ = LLᵀ scaled onto Q = ϑ
        low = np.array([[math.exp(p[0]), 0.0], [p[1], math.exp(p[2])]])
        s = low @ low.T
        s *= 2.0 / np.sum(g * s)
        return float(np.trace(np.linalg.inv(s)))

    res = optimize.minimize(
        trace_info,
        np.zeros(3),
        method="Nelder-Mead",
        options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 5000},
    )
    assert np.trace(mech.fisher_information()) == pytest.approx(res.fun, rel=1e-6)


def test_sample_shapes_and_covariance() -> None:
    mech = initial_state_noise(DOUBLE_INTEGRATOR, horizon=4, quality_weight=1.0)
    w = mech.sample(100_000, rng=5)
    assert w.shape == (100_000, 5, 1)
    psi = observability_matrix(DOUBLE_INTEGRATOR, 4)
    expected = psi @ mech.initial_covariance @ psi.T
    np.testing.assert_allclose(np.cov(w[:, :, 0].T), expected, rtol=0.03, atol=0.02 * np.max(expected))
    # Unbiased estimator Ψ⁺y attains the Cramér–Rao bound Tr Σ.
    z_hat = w[:, :, 0] @ np.linalg.pinv(psi).T
    assert np.mean(np.sum(z_hat**2, axis=1)) == pytest.approx(mech.cramer_rao_bound(), rel=0.02)
    assert mech.guarantee().cramer_rao_bound == pytest.approx(mech.cramer_rao_bound())
