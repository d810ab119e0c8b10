"""ℓ2 and multi-user Laplace (Koufogiannis, Han & Pappas, Theorems 8, 9): sampler, density, moments, information."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy import integrate, special, stats

from privnoise.exceptions import DimensionError, InvalidParameterError
from privnoise.mechanisms.laplace import Laplace
from privnoise.mechanisms.norm_laplace import L2Laplace, MultiUserLaplace

N_DRAWS = 100_000
WRONG = (0.7, 1.3)


def printed_normaliser(eps: float, n: int) -> float:
    """Eq. (14) as printed."""
    return eps**n * math.gamma(n / 2 + 1) / (math.pi ** (n / 2) * math.gamma(n + 1))


@pytest.mark.parametrize("eps, n", [(0.5, 1), (2.0, 2), (1.0, 3), (3.0, 5)])
def test_radius_is_gamma(eps, n, assert_ks):
    v = L2Laplace(epsilon=eps, dim=n).sample(N_DRAWS, rng=100 + n)
    r = np.linalg.norm(v, axis=1)
    assert_ks(
        r,
        stats.gamma(n, scale=1 / eps).cdf,
        [stats.gamma(n, scale=1 / (f * eps)).cdf for f in WRONG],
    )


@pytest.mark.parametrize("n", [2, 3, 6])
def test_direction_is_uniform(n, assert_ks):
    v = L2Laplace(epsilon=1.7, dim=n).sample(N_DRAWS, rng=200 + n)
    u = v / np.linalg.norm(v, axis=1, keepdims=True)
    # A coordinate of a uniform direction on S^{n-1}: (u₁ + 1)/2 ~ Beta((n−1)/2, (n−1)/2); test two coordinates
    # and a fixed oblique projection (rotation invariance).
    a = (n - 1) / 2
    law = stats.beta(a, a).cdf
    wrong = [stats.beta(a * f, a * f).cdf for f in (0.5, 2.0)]
    assert_ks((u[:, 0] + 1) / 2, law, wrong)
    assert_ks((u[:, -1] + 1) / 2, law)
    w = np.arange(1.0, n + 1.0)
    w /= np.linalg.norm(w)
    assert_ks((u @ w + 1) / 2, law)


def marginal_cdf_3d(t: np.ndarray, eps: float) -> np.ndarray:
    """CDF of one coordinate of 3-D ℓ2-Laplace noise: density (ε/4) e^{−ε|t|}(1 + ε|t|) (derived by hand)."""
    x = np.abs(t) * eps
    upper = 0.5 * (special.gammaincc(3, x) - 0.5 * x * special.gammaincc(2, x))
    return np.where(t >= 0, 1.0 - upper, upper)


def test_coordinate_marginal_3d_and_power(assert_ks):
    eps = 0.8
    v = L2Laplace(epsilon=eps, dim=3).sample(N_DRAWS, rng=7)
    assert_ks(
        v[:, 1],
        lambda t: marginal_cdf_3d(t, eps),
        [lambda t, f=f: marginal_cdf_3d(t, f * eps) for f in WRONG],
    )
    # the marginal density integrates to 1 and has variance (n+1)/ε² = 4/ε²
    dens = lambda t: eps / 4 * math.exp(-eps * abs(t)) * (1 + eps * abs(t))  # noqa: E731
    assert 2 * integrate.quad(dens, 0, np.inf)[0] == pytest.approx(1.0, rel=1e-10)
    assert 2 * integrate.quad(lambda t: t * t * dens(t), 0, np.inf)[0] == pytest.approx(4 / eps**2, rel=1e-10)


@pytest.mark.parametrize(
    "mech",
    [L2Laplace(epsilon=1.3, dim=3), MultiUserLaplace(epsilon=0.7, users=3, user_dim=2)],
    ids=["l2", "multi"],
)
def test_moments_and_mse(mech, assert_moments):
    w = mech.sample(N_DRAWS, rng=31)
    assert_moments(mech, w)


@pytest.mark.parametrize("eps, n", [(0.5, 2), (2.0, 4)])
def test_mse_closed_form_by_monte_carlo(eps, n):
    w = L2Laplace(epsilon=eps, dim=n).sample(200_000, rng=5)
    sq = np.einsum("ij,ij->i", w, w)
    assert L2Laplace(epsilon=eps, dim=n).second_moment() == n * (n + 1) / eps**2
    assert abs(sq.mean() - n * (n + 1) / eps**2) < 5 * sq.std() / math.sqrt(sq.size)
    users, m = 4, n
    mu = MultiUserLaplace(epsilon=eps, users=users, user_dim=m)
    assert mu.second_moment() == pytest.approx(users * m * (m + 1) / eps**2)
    wm = mu.sample(100_000, rng=6)
    sqm = np.einsum("ij,ij->i", wm, wm)
    assert abs(sqm.mean() - mu.second_moment()) < 5 * sqm.std() / math.sqrt(sqm.size)


@pytest.mark.parametrize("eps", [0.7, 2.5])
def test_normaliser_2d_by_quadrature(eps):
    m = L2Laplace(epsilon=eps, dim=2)
    assert math.exp(m.log_normaliser()) == pytest.approx(printed_normaliser(eps, 2), rel=1e-13)
    # polar quadrature of the mechanism's own pdf
    polar, _ = integrate.nquad(
        lambda r, th: m.pdf([r * math.cos(th), r * math.sin(th)]) * r,
        [[0, np.inf], [0, 2 * math.pi]],
        opts={"epsrel": 1e-10},
    )
    assert polar == pytest.approx(1.0, rel=1e-8)
    if eps != 0.7:
        return
    # Cartesian quadrature over a box holding all but e^{-30}·poly of the mass, split at the cusp
    lim = 30 / eps
    parts = [(-lim, 0.0), (0.0, lim)]
    cart = sum(
        integrate.dblquad(lambda y, x: m.pdf([x, y]), xa, xb, ya, yb, epsabs=1e-10, epsrel=1e-8)[0]
        for xa, xb in parts
        for ya, yb in parts
    )
    assert cart == pytest.approx(1.0, rel=1e-6)


def test_normaliser_3d_by_spherical_quadrature():
    eps = 1.4
    m = L2Laplace(epsilon=eps, dim=3)

    def integrand(r, theta, phi):
        x = [r * math.sin(theta) * math.cos(phi), r * math.sin(theta) * math.sin(phi), r * math.cos(theta)]
        return m.pdf(x) * r * r * math.sin(theta)

    total, _ = integrate.nquad(
        integrand, [[0, 60 / eps], [0, math.pi], [0, 2 * math.pi]], opts={"epsrel": 1e-8}
    )
    assert total == pytest.approx(1.0, rel=1e-6)
    assert math.exp(m.log_normaliser()) == pytest.approx(printed_normaliser(eps, 3), rel=1e-13)


def test_multi_user_density_is_product_of_blocks():
    eps, users, m = 0.9, 3, 2
    mech = MultiUserLaplace(epsilon=eps, users=users, user_dim=m)
    x = np.random.default_rng(0).normal(size=(10, users * m))
    blocks = sum(L2Laplace(epsilon=eps, dim=m).logpdf(x[:, i * m : (i + 1) * m]) for i in range(users))
    np.testing.assert_allclose(mech.logpdf(x), blocks, rtol=1e-13)
    printed = (eps**m * math.gamma(m / 2 + 1) / (m * math.pi ** (m / 2) * math.gamma(m))) ** users
    assert math.exp(mech.log_normaliser()) == pytest.approx(printed, rel=1e-12)
    assert mech.block().dim == m and mech.block().epsilon == eps
    assert mech.entropy() == pytest.approx(users * L2Laplace(epsilon=eps, dim=m).entropy())


def test_one_dimension_is_laplace():
    eps = 1.6
    l2 = L2Laplace(epsilon=eps, dim=1)
    lap = Laplace(scale=1 / eps)
    x = np.linspace(-5, 5, 41)
    np.testing.assert_allclose(l2.logpdf(x[:, None]), lap.logpdf(x), rtol=1e-13)
    assert l2.entropy() == pytest.approx(lap.entropy())
    assert l2.second_moment() == pytest.approx(lap.second_moment())
    assert float(l2.fisher_information()[0, 0]) == pytest.approx(lap.fisher_information())


def test_score_is_gradient_of_logpdf():
    m = MultiUserLaplace(epsilon=1.1, users=2, user_dim=3)
    x = np.random.default_rng(3).normal(size=6)
    h = 1e-6
    num = np.array([(m.logpdf(x + h * e) - m.logpdf(x - h * e)) / (2 * h) for e in np.eye(6)])
    np.testing.assert_allclose(m.score(x), num, rtol=1e-6, atol=1e-8)
    assert np.all(L2Laplace(epsilon=2.0, dim=3).score(np.zeros(3)) == 0.0)


@pytest.mark.parametrize("eps, n", [(0.5, 2), (1.5, 4)])
def test_fisher_information_and_entropy_by_monte_carlo(eps, n):
    mech = L2Laplace(epsilon=eps, dim=n)
    w = mech.sample(100_000, rng=17)
    s = mech.score(w)
    info = s.T @ s / len(s)
    se = (s[:, :, None] * s[:, None, :]).std(axis=0) / math.sqrt(len(s))
    assert np.all(np.abs(info - mech.fisher_information()) < 5 * se + 1e-12)
    assert np.trace(mech.fisher_information()) == pytest.approx(eps**2)
    nll = -mech.logpdf(w)
    assert abs(nll.mean() - mech.entropy()) < 5 * nll.std() / math.sqrt(nll.size)


def test_matrices_are_read_only_and_frozen():
    m = L2Laplace(epsilon=1.0, dim=2)
    with pytest.raises(ValueError):
        m.covariance()[0, 0] = 3.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.epsilon = 2.0  # type: ignore[misc]
    assert dataclasses.replace(m, epsilon=2.0).epsilon == 2.0


@pytest.mark.parametrize("bad", [0.0, -1.0, np.nan, np.inf, "1", True, None])
def test_bad_epsilon(bad):
    with pytest.raises(InvalidParameterError, match="`epsilon` of `L2Laplace`"):
        L2Laplace(epsilon=bad, dim=2)
    with pytest.raises(InvalidParameterError, match="`epsilon` of `MultiUserLaplace`"):
        MultiUserLaplace(epsilon=bad, users=2, user_dim=2)


@pytest.mark.parametrize("bad", [0, -2, 1.5, "3", None, True])
def test_bad_dimensions(bad):
    with pytest.raises(InvalidParameterError, match="`dim` of `L2Laplace`"):
        L2Laplace(epsilon=1.0, dim=bad)
    with pytest.raises(InvalidParameterError, match="`users` of `MultiUserLaplace`"):
        MultiUserLaplace(epsilon=1.0, users=bad, user_dim=2)
    with pytest.raises(InvalidParameterError, match="`user_dim` of `MultiUserLaplace`"):
        MultiUserLaplace(epsilon=1.0, users=2, user_dim=bad)


def test_bad_points():
    m = L2Laplace(epsilon=1.0, dim=3)
    with pytest.raises(DimensionError, match="`x` of `L2Laplace.logpdf`"):
        m.logpdf(np.zeros(2))
    with pytest.raises(InvalidParameterError, match="NaN"):
        m.pdf([0.0, np.nan, 0.0])
    with pytest.raises(InvalidParameterError, match="`x`"):
        m.score("abc")
    with pytest.raises(InvalidParameterError, match="`size`"):
        m.sample(-1)
    assert m.logpdf([np.inf, 0.0, 0.0]) == -np.inf
