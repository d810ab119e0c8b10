"""General data covariance Σ: reduction to Theorem 1, closed forms, certificates, converse and optimiser checks."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize

import privnoise.recoverability as rec
from privnoise.exceptions import DimensionError, InvalidParameterError
from privnoise.recoverability.general_covariance import solve_general


def random_matrix(m: int, n: int, rank: int, seed: int) -> np.ndarray:
    g = np.random.default_rng(seed)
    return g.standard_normal((m, rank)) @ g.standard_normal((rank, n))


def random_cov(n: int, seed: int) -> np.ndarray:
    g = np.random.default_rng(seed)
    a = g.standard_normal((n, n))
    return a @ a.T / n + 0.3 * np.eye(n)


CASES = [(3, 5, 3, 0), (5, 3, 3, 1), (4, 4, 2, 2), (2, 4, 1, 3), (3, 3, 3, 4)]


@pytest.mark.parametrize(("m", "n", "r", "seed"), CASES)
def test_identity_covariance_reduces_to_theorem1(m, n, r, seed):
    A = random_matrix(m, n, r, seed)
    total = np.trace(A @ A.T)
    rhos = np.concatenate((np.linspace(0, 1.2 * total, 25), [1e-9, 1e-6]))
    np.testing.assert_allclose(
        rec.max_privacy(A, rhos, data_cov=np.eye(n)), rec.max_privacy(A, rhos), atol=1e-8
    )
    for rho in (0.2 * total, 0.7 * total):
        general = rec.optimal_response(A, rho, data_cov=np.eye(n))
        paper = rec.optimal_response(A, rho)
        assert general.privacy() == pytest.approx(paper.privacy(), abs=1e-8)
        assert general.recoverability_error() == pytest.approx(rho, rel=1e-8)
        # distinct singular values: the response itself is the paper's Z_o
        np.testing.assert_allclose(general.attenuation, paper.attenuation, atol=1e-6)
        np.testing.assert_allclose(general.noise_covariance(), paper.noise_covariance(), atol=1e-6)


def test_scalar_covariance_scales():
    """Σ = σ²I: X = σY, so π_Σ(ρ) = σ² π_{σA}(ρ) (whitening is exact)."""
    A = random_matrix(3, 4, 3, 11)
    for sigma2 in (0.25, 4.0):
        rhos = np.linspace(0, 1.2 * sigma2 * np.trace(A @ A.T), 15)
        np.testing.assert_allclose(
            rec.max_privacy(A, rhos, data_cov=sigma2 * np.eye(4)),
            sigma2 * rec.max_privacy(np.sqrt(sigma2) * A, rhos),
            atol=1e-8,
        )


def test_commuting_covariance_is_a_knapsack():
    """Σ and AᵀA diagonal: fractional knapsack on ratios σⱼ/kⱼ, solved by scipy's linprog."""
    sig = np.array([1.0, 3.0, 0.5, 2.0])
    A = np.diag([1.0, 0.5, 2.0, 0.0])
    kk = np.diag(A) ** 2 * sig  # diagonal of Σ^{1/2}AᵀAΣ^{1/2}
    for rho in np.linspace(0, 1.1 * kk.sum(), 12):
        res = optimize.linprog(-sig, A_ub=[kk], b_ub=[rho], bounds=[(0, 1)] * 4, method="highs")
        assert rec.max_privacy(A, rho, data_cov=np.diag(sig)) == pytest.approx(-res.fun, abs=1e-8)


@pytest.mark.parametrize(("m", "n", "r", "seed"), CASES)
def test_response_attains_value_with_certificate(m, n, r, seed):
    A = random_matrix(m, n, r, seed)
    sigma = random_cov(n, 50 + seed)
    total = np.trace(A @ sigma @ A.T)
    for frac in (0.0, 1e-4, 0.1, 0.5, 0.9, 1.5):
        rho = frac * total
        sol = solve_general(A, rho, sigma)
        resp = rec.optimal_response(A, rho, data_cov=sigma)
        assert sol.gap <= 1e-8 * np.trace(sigma)
        assert resp.privacy() == pytest.approx(sol.value, abs=1e-7)
        assert resp.recoverability_error() == pytest.approx(min(rho, total), rel=1e-7, abs=1e-10)
        # Independent upper bound: the dual (D) at a grid of multipliers is never below the value.
        for lam in np.geomspace(1e-3, 1e3, 13):
            assert rec.dual_bound(A, rho, sigma, lam) >= sol.value - 1e-9
    assert solve_general(A, 0.0, sigma).value == pytest.approx(
        rec.mmse_of_linear_response(sigma, A), abs=1e-9
    )
    assert solve_general(A, 2 * total, sigma).value == pytest.approx(np.trace(sigma))


def test_monte_carlo_general_covariance():
    A = random_matrix(3, 4, 3, 21)
    sigma = random_cov(4, 22)
    mu = np.array([1.0, -2.0, 0.5, 3.0])
    b = np.array([0.5, 0.0, -1.0])
    rho = 0.3 * np.trace(A @ sigma @ A.T)
    resp = rec.optimal_response(A, rho, data_cov=sigma, data_mean=mu, offset=b)
    g = np.random.default_rng(23)
    x = g.multivariate_normal(mu, sigma, size=400_000)
    z = resp.respond(x, rng=24)
    assert np.mean(np.sum((x @ A.T + b - z) ** 2, axis=1)) == pytest.approx(rho, rel=0.01)
    xhat = resp.estimator()(z)
    assert np.mean(np.sum((x - xhat) ** 2, axis=1)) == pytest.approx(
        rec.max_privacy(A, rho, data_cov=sigma), rel=0.01
    )


def test_converse_random_linear_gaussian_responses():
    g = np.random.default_rng(8)
    worst = -np.inf
    for trial in range(400):
        m, n = int(g.integers(1, 4)), int(g.integers(1, 5))
        A = random_matrix(m, n, int(g.integers(1, min(m, n) + 1)), 3000 + trial)
        sigma = random_cov(n, 4000 + trial)
        rho = float(g.uniform(0.01, 1.2) * np.trace(A @ sigma @ A.T))
        D = g.standard_normal((m, n))
        L = g.standard_normal((m, m)) * g.uniform(0, 1)
        d_cost = np.trace(D @ sigma @ D.T)
        scale = np.sqrt(rho / (d_cost + np.trace(L @ L.T)))
        F, Q = A + scale * D, scale**2 * (L @ L.T)
        assert rec.recoverability_error(A, F, Q, data_cov=sigma) == pytest.approx(rho, rel=1e-9)
        excess = rec.mmse_of_linear_response(sigma, F, Q) - rec.max_privacy(A, rho, data_cov=sigma)
        worst = max(worst, excess)
    assert worst <= 1e-8


def test_converse_non_gaussian_sign_response():
    """Z = c·sign(uᵀX): E[X | Z] = ±Σu√(2/(π uᵀΣu)); never beats π_Σ(ρ)."""
    g = np.random.default_rng(4)
    A = random_matrix(2, 3, 2, 5)
    sigma = random_cov(3, 6)
    for _ in range(200):
        u = g.standard_normal(3)
        c = g.standard_normal(2) * g.uniform(0, 3)
        su = sigma @ u
        k = np.sqrt(2 / (np.pi * (u @ su)))
        rho = np.trace(A @ sigma @ A.T) - 2 * k * c @ A @ su + c @ c
        assert np.trace(sigma) - k**2 * (su @ su) <= rec.max_privacy(A, rho, data_cov=sigma) + 1e-10


def test_nonlinear_optimiser_does_not_beat_and_nearly_reaches():
    """SLSQP over linear-Gaussian responses (F, lower-triangular L) from several starts."""
    A = random_matrix(2, 3, 2, 31)
    sigma = random_cov(3, 32)
    rho = 0.4 * np.trace(A @ sigma @ A.T)
    m, n = A.shape
    tri = np.tril_indices(m)

    def unpack(p):
        F = p[: m * n].reshape(m, n)
        L = np.zeros((m, m))
        L[tri] = p[m * n :]
        return F, L @ L.T

    def privacy(p):
        F, Q = unpack(p)
        return rec.mmse(sigma, sigma @ F.T, F @ sigma @ F.T + Q + 1e-12 * np.eye(m))

    def slack(p):
        F, Q = unpack(p)
        d = A - F
        return rho - np.trace(d @ sigma @ d.T) - np.trace(Q)

    g = np.random.default_rng(33)
    best = -np.inf
    for _ in range(8):
        p0 = np.concatenate(((0.5 * A).ravel(), 0.3 * g.standard_normal(len(tri[0]))))
        p0[: m * n] += 0.2 * g.standard_normal(m * n)
        res = optimize.minimize(
            lambda p: -privacy(p),
            p0,
            method="SLSQP",
            constraints=[{"type": "ineq", "fun": slack}],
            options={"maxiter": 500, "ftol": 1e-12},
        )
        if slack(res.x) >= -1e-9:
            best = max(best, privacy(res.x))
    target = rec.max_privacy(A, rho, data_cov=sigma)
    assert best <= target + 1e-6
    assert best >= target - 1e-3


def test_not_piecewise_affine_for_general_covariance():
    """Section IV conjecture fails: slope of π_Σ at 0⁺ is infinite for Σ = [[1, ½], [½, 1]], A = [1, 0]."""
    A = np.array([[1.0, 0.0]])
    sigma = np.array([[1.0, 0.5], [0.5, 1.0]])
    base = rec.max_privacy(A, 0.0, data_cov=sigma)
    assert base == pytest.approx(0.75)
    for rho in (1e-2, 1e-4, 1e-6):
        explicit = rec.mmse_of_linear_response(sigma, np.array([[1.0, -np.sqrt(rho)]]))  # Z = X₁ − √ρ X₂
        assert rec.recoverability_error(A, np.array([[1.0, -np.sqrt(rho)]]), data_cov=sigma) == pytest.approx(
            rho
        )
        assert (explicit - base) / np.sqrt(rho) > 0.74
        assert rec.max_privacy(A, rho, data_cov=sigma) >= explicit - 1e-12
    ratios = [(rec.max_privacy(A, r, data_cov=sigma) - base) / r for r in (1e-2, 1e-4, 1e-6)]
    assert ratios[1] > 9 * ratios[0] and ratios[2] > 9 * ratios[1]


def test_bad_data_cov():
    A = np.eye(2)
    with pytest.raises(InvalidParameterError, match="`data_cov`.*positive definite"):
        rec.max_privacy(A, 1.0, data_cov=[[1.0, 0.0], [0.0, -1.0]])
    with pytest.raises(InvalidParameterError, match="`data_cov`.*positive definite"):
        rec.max_privacy(A, 1.0, data_cov=[[1.0, 1.0], [1.0, 1.0]])
    with pytest.raises(InvalidParameterError, match="`data_cov`.*symmetric"):
        rec.optimal_response(A, 1.0, data_cov=[[1.0, 0.5], [0.0, 1.0]])
    with pytest.raises(DimensionError, match="`data_cov`"):
        rec.max_privacy(A, 1.0, data_cov=np.eye(3))
    with pytest.raises(InvalidParameterError, match="`data_cov`"):
        rec.optimal_response(A, 1.0, data_cov=[[np.nan, 0.0], [0.0, 1.0]])
