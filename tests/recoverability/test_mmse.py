"""MMSE utilities for jointly Gaussian vectors: closed forms against Monte Carlo and plain inverses."""

from __future__ import annotations

import numpy as np
import pytest

import privnoise.recoverability as rec
from privnoise.exceptions import DimensionError, InvalidParameterError


def test_mmse_against_monte_carlo():
    g = np.random.default_rng(0)
    n, m = 4, 3
    root = g.standard_normal((n, n))
    sigma = root @ root.T + 0.5 * np.eye(n)
    F = g.standard_normal((m, n))
    Q = np.diag([0.3, 1.0, 0.0])  # one noiseless coordinate
    est = rec.linear_mmse_estimator(np.zeros(n), np.zeros(m), sigma, sigma @ F.T, F @ sigma @ F.T + Q)
    x = g.multivariate_normal(np.zeros(n), sigma, size=400_000)
    z = x @ F.T + g.standard_normal((400_000, m)) @ np.sqrt(Q)
    mc = np.mean(np.sum((x - est(z)) ** 2, axis=1))
    closed = rec.mmse_of_linear_response(sigma, F, Q)
    assert closed == pytest.approx(est.mmse(), rel=1e-12)
    assert mc == pytest.approx(closed, rel=0.01)


def test_mmse_against_plain_inverse_and_information_form():
    g = np.random.default_rng(1)
    n, m = 5, 3
    a = g.standard_normal((n, n))
    sigma = a @ a.T + np.eye(n)
    F = g.standard_normal((m, n))
    Q = np.diag([0.5, 2.0, 1.5])
    direct = np.trace(sigma - sigma @ F.T @ np.linalg.inv(F @ sigma @ F.T + Q) @ F @ sigma)
    information = np.trace(np.linalg.inv(np.linalg.inv(sigma) + F.T @ np.linalg.inv(Q) @ F))
    assert rec.mmse(sigma, sigma @ F.T, F @ sigma @ F.T + Q) == pytest.approx(direct, rel=1e-10)
    assert direct == pytest.approx(information, rel=1e-10)


def test_eq7_mmse_of_AX_is_n_minus_r():
    g = np.random.default_rng(2)
    for m, n, r in [(3, 5, 2), (5, 3, 3), (4, 4, 1)]:
        A = g.standard_normal((m, r)) @ g.standard_normal((r, n))
        assert rec.mmse_of_linear_response(np.eye(n), A) == pytest.approx(n - r, abs=1e-9)


def test_pseudo_inverse_and_singular_response():
    np.testing.assert_allclose(rec.pseudo_inverse(np.zeros((2, 2))), np.zeros((2, 2)))
    # Z = (X₁, X₁): singular Cov(Z); mmse(X|Z) = 1 for X ~ N(0, I₂)
    F = np.array([[1.0, 0.0], [1.0, 0.0]])
    assert rec.mmse_of_linear_response(np.eye(2), F) == pytest.approx(1.0)


def test_bad_inputs():
    with pytest.raises(DimensionError, match="`cov_xz`"):
        rec.mmse(np.eye(2), np.ones((3, 1)), np.eye(1))
    with pytest.raises(InvalidParameterError, match="`cov_x`"):
        rec.mmse([[np.nan]], [[1.0]], [[1.0]])
    with pytest.raises(InvalidParameterError, match="symmetric"):
        rec.mmse([[1.0, 2.0], [0.0, 1.0]], np.ones((2, 1)), [[1.0]])
    with pytest.raises(DimensionError, match="`attenuation`"):
        rec.mmse_of_linear_response(np.eye(2), np.ones((1, 3)))
    est = rec.linear_mmse_estimator([0.0], [0.0], [[1.0]], [[1.0]], [[2.0]])
    with pytest.raises(DimensionError, match="`z`"):
        est(np.ones(2))
