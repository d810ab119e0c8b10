"""Theorem 1 and the scheme (23)–(25): closed form, a second method, Monte Carlo, converse and bad input."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import privnoise.recoverability as rec
from privnoise.exceptions import DimensionError, InvalidParameterError


def random_matrix(m: int, n: int, rank: int, seed: int) -> np.ndarray:
    g = np.random.default_rng(seed)
    return g.standard_normal((m, rank)) @ g.standard_normal((rank, n))


SHAPES = [(3, 5, 3), (5, 3, 3), (4, 4, 2), (6, 4, 1), (2, 7, 2), (4, 4, 4)]
CASES = [(m, n, r, seed) for seed, (m, n, r) in enumerate(SHAPES)]


def pi_by_lp(A: np.ndarray, rho: float) -> float:
    """Second method: the fractional-knapsack LP max Σpᵢ s.t. Σ sᵢ²pᵢ ≤ ρ, 0 ≤ pᵢ ≤ 1, by scipy's linprog."""
    from scipy.optimize import linprog

    s = np.linalg.svd(A, compute_uv=False)
    s = s[s > 1e-10 * s.max()]
    res = linprog(-np.ones(s.size), A_ub=[s**2], b_ub=[rho], bounds=[(0, 1)] * s.size, method="highs")
    return A.shape[1] - s.size - res.fun


@pytest.mark.parametrize(("m", "n", "r", "seed"), CASES)
def test_theorem1_against_lp_and_eq27(m, n, r, seed):
    A = random_matrix(m, n, r, seed)
    s = rec.singular_values(A)
    assert s.size == r and np.all(np.diff(s) >= 0)
    total = float(np.sum(s**2))
    rhos = np.concatenate((np.linspace(0, 1.3 * total, 37), np.cumsum(s**2)))
    values = rec.max_privacy(A, rhos)
    for rho, v in zip(rhos, values, strict=True):
        assert v == pytest.approx(pi_by_lp(A, rho), abs=1e-9)
        assert v == pytest.approx(rec.privacy_of_allocation(n, s, rec.allocation(s, rho)), abs=1e-12)
    assert values[0] == pytest.approx(n - r)
    assert rec.max_privacy(A, 2 * total) == pytest.approx(n)
    assert np.all(np.diff(values[:37]) >= -1e-12)  # nondecreasing


@pytest.mark.parametrize(("m", "n", "r", "seed"), CASES)
def test_scheme_closed_form(m, n, r, seed):
    A = random_matrix(m, n, r, seed)
    total = float(np.sum(rec.singular_values(A) ** 2))
    for rho in (0.0, 0.1 * total, 0.5 * total, 0.9 * total, total, 2 * total):
        resp = rec.optimal_response(A, rho)
        assert resp.recoverability_error() == pytest.approx(min(rho, total), rel=1e-9, abs=1e-9)
        assert resp.privacy() == pytest.approx(rec.max_privacy(A, rho), rel=1e-9, abs=1e-9)
        # second method: (26) written with plain inverses on the r-dimensional reduced response
        sch = resp.scheme
        assert sch is not None
        da, dno = np.diag(sch.attenuation), np.diag(sch.noise_std)
        st = np.diag(sch.singular_values)
        cov_z = da @ st @ st @ da + dno @ dno
        live = np.diag(cov_z) > 1e-12  # components with ρᵢ = sᵢ² are the constant 0
        gain = st[:, live] @ da[np.ix_(live, live)]
        reduced = np.trace(gain @ np.linalg.inv(cov_z[np.ix_(live, live)]) @ gain.T) if live.any() else 0.0
        assert n - reduced == pytest.approx(resp.privacy(), abs=1e-9)


def test_scheme_is_the_papers_Zo():
    """F = Ũ D_a ŨᵀA and Q = Ũ D_no² Ũᵀ, element by element (Remark after (28))."""
    A = random_matrix(3, 5, 3, 42)
    u, s, vt = np.linalg.svd(A, full_matrices=False)
    order = np.argsort(s)
    u, s = u[:, order], s[order]
    rho = s[0] ** 2 + 0.3 * s[1] ** 2
    rho_i = np.array([s[0] ** 2, 0.3 * s[1] ** 2, 0.0])
    da = np.diag(1 - rho_i / s**2)
    dno = np.diag(np.sqrt(rho_i - rho_i**2 / s**2))
    resp = rec.optimal_response(A, rho)
    np.testing.assert_allclose(resp.attenuation, u @ da @ u.T @ A, atol=1e-12)
    np.testing.assert_allclose(resp.noise_covariance(), u @ dno @ dno @ u.T, atol=1e-12)


@pytest.mark.parametrize(("m", "n", "r", "seed"), CASES[:4])
def test_scheme_monte_carlo(m, n, r, seed):
    """E‖AX − Z‖² and E‖X − x̂(Z)‖² by simulation, within 1 % (fixed seeds)."""
    A = random_matrix(m, n, r, seed)
    total = float(np.sum(rec.singular_values(A) ** 2))
    rho = 0.45 * total
    resp = rec.optimal_response(A, rho)
    x = np.random.default_rng(100 + seed).standard_normal((400_000, n))
    z = resp.respond(x, rng=200 + seed)
    rec_err = np.mean(np.sum((x @ A.T - z) ** 2, axis=1))
    xhat = resp.estimator()(z)
    mmse_mc = np.mean(np.sum((x - xhat) ** 2, axis=1))
    assert rec_err == pytest.approx(rho, rel=0.01)
    assert mmse_mc == pytest.approx(rec.max_privacy(A, rho), rel=0.01)


def test_converse_random_linear_gaussian_responses():
    """Z = FX + W with random F, Q scaled to E‖AX − Z‖² = ρ never beats π(ρ)."""
    g = np.random.default_rng(7)
    worst = -np.inf
    for trial in range(600):
        m, n = int(g.integers(1, 5)), int(g.integers(1, 6))
        r = int(g.integers(1, min(m, n) + 1))
        A = random_matrix(m, n, r, 1000 + trial)
        total = float(np.trace(A @ A.T))
        rho = float(g.uniform(0.01, 1.2) * total)
        D = g.standard_normal((m, n)) * g.uniform(0, 1)
        L = g.standard_normal((m, m)) * g.uniform(0, 1)
        if trial % 3 == 0:
            D = -A * g.uniform(0, 1) + 0.05 * D  # pure attenuation, nearly
        scale = np.sqrt(rho / (np.trace(D @ D.T) + np.trace(L @ L.T)))
        F, Q = A + scale * D, scale**2 * (L @ L.T)
        assert rec.recoverability_error(A, F, Q) == pytest.approx(rho, rel=1e-9)
        excess = rec.mmse_of_linear_response(np.eye(n), F, Q) - rec.max_privacy(A, rho)
        worst = max(worst, excess)
    assert worst <= 1e-9


def test_converse_non_gaussian_sign_response():
    """Z = c·sign(uᵀX), a non-Gaussian response: E[X|Z] = Z/|c|·u√(2/π)/‖u‖; never beats π(ρ)."""
    g = np.random.default_rng(3)
    A = random_matrix(3, 4, 3, 9)
    for _ in range(300):
        u = g.standard_normal(4)
        c = g.standard_normal(3) * g.uniform(0, 3)
        k = np.sqrt(2 / np.pi) / np.linalg.norm(u)
        rho = np.trace(A @ A.T) - 2 * k * c @ A @ u + c @ c
        mmse_sign = 4 - k**2 * (u @ u)
        assert mmse_sign <= rec.max_privacy(A, rho) + 1e-12


def test_ascending_order_required():
    """Allocating ρ to the largest singular values first gives strictly less privacy (docs/errata.md)."""
    s = np.array([2.0, 3.0, 4.0])
    for rho in (1.0, 4.0, 8.5, 20.0):
        asc = rec.privacy_of_allocation(5, s, rec.allocation(s, rho))
        desc = rec.privacy_of_allocation(5, s[::-1], rec.allocation(s[::-1], rho))
        assert desc < asc
    A = np.diag([4.0, 2.0, 3.0])
    np.testing.assert_allclose(rec.singular_values(A), [2.0, 3.0, 4.0])


def test_remark_iii_nonincreasing_in_each_singular_value():
    grid = np.linspace(0.5, 4, 8)
    rhos = np.linspace(0, 40, 41)
    for s1, s2 in itertools.product(grid, grid):
        base = rec.max_privacy(np.diag([s1, s2, 3.0]), rhos)
        bigger = rec.max_privacy(np.diag([s1 * 1.1, s2, 3.0]), rhos)
        assert np.all(bigger <= base + 1e-12)


def test_affine_query_same_privacy_and_shifted_response():
    A = random_matrix(2, 3, 2, 5)
    b = np.array([10.0, -3.0])
    mu = np.array([1.0, 2.0, -1.0])
    plain = rec.optimal_response(A, 1.0)
    affine = rec.optimal_response(A, 1.0, offset=b, data_mean=mu)
    assert affine.privacy() == pytest.approx(plain.privacy())
    assert affine.recoverability_error() == pytest.approx(1.0)
    x = mu + np.random.default_rng(1).standard_normal((300_000, 3))
    z = affine.respond(x, rng=2)
    assert np.mean(np.sum((x @ A.T + b - z) ** 2, axis=1)) == pytest.approx(1.0, rel=0.01)


def test_respond_single_batch_and_seed():
    A = random_matrix(3, 5, 2, 1)
    resp = rec.optimal_response(A, 2.0)
    x = np.arange(5.0)
    assert resp.respond(x, rng=3).shape == (3,)
    batch = np.tile(x, (6, 1))
    assert resp.respond(batch, rng=3).shape == (6, 3)
    np.testing.assert_array_equal(resp.respond(batch, rng=3), resp.respond(batch, rng=3))
    assert not np.array_equal(resp.respond(batch)[0], resp.respond(batch)[0])
    assert resp.scheme is not None
    assert resp.scheme.reduced_response(batch, rng=0).shape == (6, 2)
    assert resp.attenuation.flags.writeable is False
    zero = rec.optimal_response(A, 0.0)
    np.testing.assert_allclose(zero.respond(batch, rng=0), batch @ A.T, atol=1e-12)


BAD_A = [
    (np.array([[np.nan, 1.0]]), InvalidParameterError, "finite"),
    (np.array([[np.inf, 1.0]]), InvalidParameterError, "finite"),
    (np.zeros((2, 3)), InvalidParameterError, "zero matrix"),
    (np.ones(3), DimensionError, "dimension"),
    (np.ones((0, 3)), DimensionError, "empty"),
    ("abc", InvalidParameterError, "numeric"),
]


@pytest.mark.parametrize(("A", "error", "match"), BAD_A)
@pytest.mark.parametrize("func", [rec.max_privacy, rec.optimal_response])
def test_bad_matrix(func, A, error, match):
    with pytest.raises(error, match=match) as info:
        func(A, 1.0)
    assert "`A`" in str(info.value)


@pytest.mark.parametrize("rho", [-1.0, np.nan, np.inf, "1", True, None])
@pytest.mark.parametrize("func", [rec.max_privacy, rec.optimal_response])
def test_bad_rho(func, rho):
    with pytest.raises(InvalidParameterError, match="`rho`"):
        func(np.eye(2), rho)


def test_bad_rho_array_and_vectors():
    with pytest.raises(InvalidParameterError, match="`rho`"):
        rec.max_privacy(np.eye(2), [1.0, -2.0])
    with pytest.raises(InvalidParameterError, match="`rho`"):
        rec.max_privacy(np.eye(2), [1.0, np.nan])
    with pytest.raises(DimensionError, match="`offset`"):
        rec.optimal_response(np.eye(2), 1.0, offset=[1.0, 2.0, 3.0])
    with pytest.raises(DimensionError, match="`data_mean`"):
        rec.optimal_response(np.ones((2, 3)), 1.0, data_mean=[1.0, 2.0])
    with pytest.raises(InvalidParameterError, match="`offset`"):
        rec.optimal_response(np.eye(2), 1.0, offset=[1.0, np.nan])


def test_bad_respond_input():
    resp = rec.optimal_response(np.eye(2), 1.0)
    with pytest.raises(DimensionError, match="`x`"):
        resp.respond(np.ones(3), rng=0)
    with pytest.raises(InvalidParameterError, match="`x`"):
        resp.respond([1.0, np.nan], rng=0)
    with pytest.raises(DimensionError, match="`x`"):
        resp.respond(np.ones((2, 2, 2)), rng=0)
    with pytest.raises(InvalidParameterError, match="`rng`"):
        resp.respond(np.ones(2), rng="seed")  # type: ignore[arg-type]
