"""Gaussian: density against scipy.stats.norm / multivariate_normal, sampler, moments, information."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy import integrate, linalg, stats
from scipy.differentiate import derivative

from privnoise.exceptions import DimensionError, InvalidParameterError
from privnoise.mechanisms import Gaussian
from privnoise.random import default_rng

WRONG_SCALES = (0.7, 1.3)
SCALARS = [(2.5, 0.7), (0.09, 0.0), (1e-4, -3.0)]  # (variance, loc)
DIAG_VARIANCES = [0.25, 4.0, 9.0]
DIAG_LOC = [1.0, -2.0, 0.0]
CORR_COV = [[2.0, 1.2], [1.2, 1.0]]
CORR_LOC = [0.5, -1.0]


def diagonal() -> Gaussian:
    return Gaussian(cov=np.diag(DIAG_VARIANCES), loc=DIAG_LOC)


def correlated() -> Gaussian:
    return Gaussian(cov=CORR_COV, loc=CORR_LOC)


def gauss_legendre_grid(m: Gaussian, n: int = 200, width: float = 10.0):
    """Tensor Gauss–Legendre nodes (…, 2) and weights on the box loc ± width·std of a 2-D mechanism."""
    sd = np.sqrt(np.diag(m.cov))
    lo, hi = m.loc - width * sd, m.loc + width * sd
    u, w = np.polynomial.legendre.leggauss(n)
    nodes = [(lo[k] + hi[k]) / 2 + (hi[k] - lo[k]) / 2 * u for k in range(2)]
    weights = [(hi[k] - lo[k]) / 2 * w for k in range(2)]
    x, y = np.meshgrid(*nodes, indexing="ij")
    return np.stack([x, y], axis=-1), np.outer(*weights)


# -- density ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("variance", "loc"), SCALARS)
def test_scalar_pdf_integrates_to_one_and_matches_scipy(variance, loc) -> None:
    m = Gaussian(cov=variance, loc=loc)
    sd = math.sqrt(variance)
    total_box, _ = integrate.quad(m.pdf, loc - 40 * sd, loc + 40 * sd, epsabs=0, epsrel=1e-12, points=[loc])
    assert total_box == pytest.approx(1.0, rel=1e-12)
    ref = stats.norm(loc=loc, scale=sd)
    x = loc + sd * np.linspace(-30, 30, 1201)
    np.testing.assert_allclose(m.logpdf(x), ref.logpdf(x), rtol=1e-12)
    np.testing.assert_allclose(m.pdf(x), ref.pdf(x), rtol=1e-11, atol=0)
    np.testing.assert_allclose(m.cdf(x), ref.cdf(x), rtol=1e-11, atol=0)
    assert m.pdf(np.inf) == 0.0 and m.logpdf(-np.inf) == -np.inf
    assert m.cdf(np.inf) == 1.0 and m.cdf(-np.inf) == 0.0


def test_diagonal_pdf_integrates_to_one_per_coordinate() -> None:
    m = diagonal()
    loc, sd = np.array(DIAG_LOC), np.sqrt(DIAG_VARIANCES)
    centre_density = stats.norm(0, sd).pdf(0)  # densities of the other coordinates at their means
    for i in range(3):
        others = np.prod(np.delete(centre_density, i))

        def line(t, i=i, others=others):
            p = loc.copy()
            p[i] = t
            return m.pdf(p) / others

        total, _ = integrate.quad(
            line, loc[i] - 40 * sd[i], loc[i] + 40 * sd[i], points=[loc[i]], epsrel=1e-12
        )
        assert total == pytest.approx(1.0, rel=1e-12)


def test_vector_density_matches_scipy_multivariate_normal() -> None:
    for m, cov, loc in ((correlated(), CORR_COV, CORR_LOC), (diagonal(), np.diag(DIAG_VARIANCES), DIAG_LOC)):
        ref = stats.multivariate_normal(mean=loc, cov=cov)
        x = default_rng(8).normal(size=(400, len(loc))) * 3 + np.asarray(loc)
        assert m.pdf(x).shape == (400,)
        np.testing.assert_allclose(m.logpdf(x), ref.logpdf(x), rtol=1e-12)
        np.testing.assert_allclose(m.pdf(x), ref.pdf(x), rtol=1e-11)
        assert isinstance(m.pdf(np.asarray(loc)), float)


def test_correlated_pdf_integrates_to_one_dblquad() -> None:
    m = correlated()
    sd = np.sqrt(np.diag(m.cov))
    lo, hi = m.loc - 10 * sd, m.loc + 10 * sd
    total, _ = integrate.dblquad(
        lambda y, x: m.pdf([x, y]), lo[0], hi[0], lo[1], hi[1], epsabs=1e-10, epsrel=1e-10
    )
    assert total == pytest.approx(1.0, rel=1e-9)
    nodes, weights = gauss_legendre_grid(m)
    assert np.sum(weights * m.pdf(nodes)) == pytest.approx(1.0, rel=1e-12)


def test_density_at_infinite_points_is_zero_not_nan() -> None:
    m = correlated()
    points = np.array([[np.inf, np.inf], [np.inf, 0.0], [-np.inf, np.inf], [0.0, -np.inf], CORR_LOC])
    pdf = m.pdf(points)
    assert not np.isnan(pdf).any()
    np.testing.assert_array_equal(pdf[:4], 0.0)
    assert pdf[4] > 0
    np.testing.assert_array_equal(m.logpdf(points[:4]), -np.inf)


def test_score_is_the_gradient_of_logpdf() -> None:
    m = correlated()
    x = default_rng(4).normal(size=(20, 2)) + CORR_LOC
    precision = np.linalg.inv(CORR_COV)
    np.testing.assert_allclose(m.score(x), -(x - CORR_LOC) @ precision, rtol=1e-12, atol=1e-14)
    s = Gaussian(cov=2.5, loc=0.7)
    t = np.linspace(-3, 3, 13)
    np.testing.assert_allclose(s.score(t), derivative(s.logpdf, t).df, rtol=1e-8, atol=1e-10)


def test_vector_cdf_is_refused() -> None:
    with pytest.raises(DimensionError, match="cdf"):
        correlated().cdf(CORR_LOC)


# -- sampler ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("seed", "params"), list(enumerate(SCALARS)))
def test_scalar_sampler_passes_ks_and_detects_wrong_scale(seed, params, assert_ks) -> None:
    variance, loc = params
    sd = math.sqrt(variance)
    x = Gaussian(cov=variance, loc=loc).sample(100_000, rng=3000 + seed)
    assert_ks(x, stats.norm(loc, sd).cdf, [stats.norm(loc, f * sd).cdf for f in WRONG_SCALES])


def test_from_std_sampler_passes_ks(assert_ks) -> None:
    x = Gaussian.from_std(0.3, loc=2.0).sample(100_000, rng=3100)
    assert_ks(x, stats.norm(2.0, 0.3).cdf, [stats.norm(2.0, 0.3 * f).cdf for f in WRONG_SCALES])


def test_diagonal_sampler_passes_ks_in_every_coordinate(assert_ks) -> None:
    x = diagonal().sample(100_000, rng=3200)
    assert x.shape == (100_000, 3)
    for i, (v, loc) in enumerate(zip(DIAG_VARIANCES, DIAG_LOC, strict=True)):
        sd = math.sqrt(v)
        assert_ks(x[:, i], stats.norm(loc, sd).cdf, [stats.norm(loc, f * sd).cdf for f in WRONG_SCALES])


def test_correlated_sampler_whitens_to_independent_standard_normals(assert_ks) -> None:
    x = correlated().sample(100_000, rng=3300)
    factor = np.linalg.cholesky(np.array(CORR_COV))
    z = linalg.solve_triangular(factor, (x - CORR_LOC).T, lower=True).T
    # The coordinates and two rotations of them: the rotations catch a wrong correlation.
    projections = [z[:, 0], z[:, 1], (z[:, 0] + z[:, 1]) / math.sqrt(2), (z[:, 0] - z[:, 1]) / math.sqrt(2)]
    for p in projections:
        assert_ks(p, stats.norm.cdf, [stats.norm(0, f).cdf for f in WRONG_SCALES])


def test_correlated_sampler_power_against_a_wrong_covariance(ks_alpha) -> None:
    x = correlated().sample(100_000, rng=3301)
    for wrong in (np.diag(np.diag(CORR_COV)), 1.3**2 * np.array(CORR_COV), 0.7**2 * np.array(CORR_COV)):
        factor = np.linalg.cholesky(wrong)
        z = linalg.solve_triangular(factor, (x - CORR_LOC).T, lower=True).T
        pvalues = [
            stats.kstest(p, stats.norm.cdf).pvalue for p in (z[:, 0], z[:, 1], z.sum(axis=1) / math.sqrt(2))
        ]
        assert min(pvalues) < ks_alpha


@pytest.mark.parametrize("bit_generator", [np.random.MT19937, np.random.Philox])
def test_sampler_on_other_bit_generators_passes_ks(bit_generator, assert_ks) -> None:
    x = Gaussian(cov=2.5, loc=0.7).sample(100_000, rng=np.random.Generator(bit_generator(12)))
    sd = math.sqrt(2.5)
    assert_ks(x, stats.norm(0.7, sd).cdf, [stats.norm(0.7, f * sd).cdf for f in WRONG_SCALES])


def test_samples_are_finite() -> None:
    for m in (Gaussian(cov=1e-300), Gaussian(cov=1e300), correlated()):
        assert np.isfinite(m.sample(100_000, rng=9)).all()


@pytest.mark.slow
@pytest.mark.parametrize(
    "mechanism",
    [Gaussian(cov=2.5, loc=0.7), diagonal(), correlated()],
    ids=["scalar", "diagonal", "correlated"],
)
def test_sample_moments_match(mechanism, assert_moments) -> None:
    assert_moments(mechanism, mechanism.sample(1_000_000, rng=77))


# -- moments and information measures ------------------------------------------------------------------


def test_closed_form_moments() -> None:
    m = correlated()
    ref = stats.multivariate_normal(mean=CORR_LOC, cov=CORR_COV)
    np.testing.assert_array_equal(m.mean(), CORR_LOC)
    np.testing.assert_allclose(m.covariance(), CORR_COV)
    assert m.second_moment() == pytest.approx(3.0 + 0.25 + 1.0, rel=1e-14)
    assert m.entropy() == pytest.approx(ref.entropy(), rel=1e-12)
    np.testing.assert_allclose(m.fisher_information(), np.linalg.inv(CORR_COV), rtol=1e-12)
    s = Gaussian(cov=2.5, loc=0.7)
    assert s.mean() == 0.7 and s.covariance() == 2.5 and s.std == pytest.approx(math.sqrt(2.5))
    assert s.entropy() == pytest.approx(stats.norm(0.7, math.sqrt(2.5)).entropy(), rel=1e-14)
    np.testing.assert_allclose(diagonal().std, np.sqrt(DIAG_VARIANCES))


@pytest.mark.parametrize(("variance", "loc"), SCALARS)
def test_scalar_entropy_and_fisher_information_by_quadrature(variance, loc) -> None:
    m = Gaussian(cov=variance, loc=loc)
    sd = math.sqrt(variance)
    a, b = loc - 12 * sd, loc + 12 * sd
    entropy, _ = integrate.quad(lambda t: -m.pdf(t) * m.logpdf(t), a, b, points=[loc], epsabs=0, epsrel=1e-12)
    assert entropy == pytest.approx(m.entropy(), rel=1e-8)
    fisher, _ = integrate.quad(
        lambda t: m.pdf(t) * m.score(t) ** 2, a, b, points=[loc], epsabs=0, epsrel=1e-12
    )
    assert fisher == pytest.approx(m.fisher_information(), rel=1e-6)

    def g_prime(t):
        return derivative(m.pdf, t, initial_step=0.1 * sd).df

    numeric, _ = integrate.quad(
        lambda t: g_prime(t) ** 2 / m.pdf(t), a, b, points=[loc], epsabs=0, epsrel=1e-10
    )
    assert numeric == pytest.approx(m.fisher_information(), rel=1e-6)


def test_correlated_entropy_and_fisher_information_by_quadrature() -> None:
    m = correlated()
    nodes, weights = gauss_legendre_grid(m)
    g = m.pdf(nodes)
    assert (g > 0).all()
    entropy = -np.sum(weights * g * m.logpdf(nodes))
    assert entropy == pytest.approx(m.entropy(), rel=1e-8)

    score = m.score(nodes)
    fisher = np.einsum("ij,ij,ijk,ijl->kl", weights, g, score, score)
    np.testing.assert_allclose(fisher, m.fisher_information(), rtol=1e-6)

    # Second method: ∫ ∇g ∇gᵀ / g with ∇g from numerical partial derivatives of the density.
    sd = np.sqrt(np.diag(m.cov))

    def partial(k):
        def along(t, other):
            t, other = np.broadcast_arrays(t, other)
            return m.pdf(np.stack([t, other] if k == 0 else [other, t], axis=-1))

        return derivative(along, nodes[..., k], args=(nodes[..., 1 - k],), initial_step=0.1 * sd[k]).df

    grad = np.stack([partial(0), partial(1)], axis=-1)
    numeric = np.einsum("ij,ijk,ijl->kl", weights / g, grad, grad)
    np.testing.assert_allclose(numeric, m.fisher_information(), rtol=1e-6)


def test_diagonal_information_is_diagonal() -> None:
    m = diagonal()
    np.testing.assert_allclose(m.fisher_information(), np.diag(1 / np.array(DIAG_VARIANCES)), rtol=1e-14)
    expected = sum(stats.norm(0, math.sqrt(v)).entropy() for v in DIAG_VARIANCES)
    assert m.entropy() == pytest.approx(expected, rel=1e-13)


# -- shapes -------------------------------------------------------------------------------------------


def test_shapes_of_constructors() -> None:
    assert Gaussian(cov=np.array(2.0)).shape == ()
    assert Gaussian(cov=[[2.0]]).shape == (1,)
    assert Gaussian.from_std(2.0).shape == ()
    iso = Gaussian.from_std(2.0, 3, loc=[1.0, 2.0, 3.0])
    assert iso.shape == (3,) and iso.dim == 3
    np.testing.assert_allclose(iso.covariance(), 4.0 * np.eye(3))
    assert Gaussian(cov=np.eye(2), loc=1.5).mean().tolist() == [1.5, 1.5]


# -- bad input ----------------------------------------------------------------------------------------

BAD_PARAMETERS = [
    ({"cov": np.nan}, "cov", InvalidParameterError),
    ({"cov": np.inf}, "cov", InvalidParameterError),
    ({"cov": -1.0}, "cov", InvalidParameterError),
    ({"cov": 0.0}, "cov", InvalidParameterError),
    ({"cov": "1.0"}, "cov", InvalidParameterError),
    ({"cov": None}, "cov", InvalidParameterError),
    ({"cov": True}, "cov", InvalidParameterError),
    ({"cov": 1j}, "cov", InvalidParameterError),
    ({"cov": object()}, "cov", InvalidParameterError),
    ({"cov": [[1.0, np.nan], [np.nan, 1.0]]}, "cov", InvalidParameterError),
    ({"cov": [[np.inf, 0.0], [0.0, 1.0]]}, "cov", InvalidParameterError),
    ({"cov": [[1.0, 0.5], [0.0, 1.0]]}, "cov", InvalidParameterError),  # not symmetric
    ({"cov": [[1.0, 2.0], [2.0, 1.0]]}, "cov", InvalidParameterError),  # indefinite
    ({"cov": [[1.0, 1.0], [1.0, 1.0]]}, "cov", InvalidParameterError),  # singular
    ({"cov": [[-1.0, 0.0], [0.0, -1.0]]}, "cov", InvalidParameterError),  # negative definite
    ({"cov": [[1j, 0.0], [0.0, 1.0]]}, "cov", InvalidParameterError),
    ({"cov": [1.0, 2.0]}, "cov", DimensionError),
    ({"cov": np.ones((2, 3))}, "cov", DimensionError),
    ({"cov": np.ones((2, 2, 2))}, "cov", DimensionError),
    ({"cov": np.zeros((0, 0))}, "cov", DimensionError),
    ({"cov": 1.0, "loc": np.nan}, "loc", InvalidParameterError),
    ({"cov": 1.0, "loc": -np.inf}, "loc", InvalidParameterError),
    ({"cov": 1.0, "loc": "a"}, "loc", InvalidParameterError),
    ({"cov": 1.0, "loc": [1.0, 2.0]}, "loc", DimensionError),
    ({"cov": np.eye(2), "loc": [1.0, 2.0, 3.0]}, "loc", DimensionError),
    ({"cov": np.eye(2), "loc": [[1.0, 2.0]]}, "loc", DimensionError),
    ({"cov": np.eye(2), "loc": [1.0, np.nan]}, "loc", InvalidParameterError),
]


@pytest.mark.parametrize(
    ("kwargs", "name", "error"), BAD_PARAMETERS, ids=[f"{p[1]}-{i}" for i, p in enumerate(BAD_PARAMETERS)]
)
def test_bad_parameters_are_rejected(kwargs, name, error) -> None:
    with pytest.raises(error) as excinfo:
        Gaussian(**kwargs)
    assert f"`{name}`" in str(excinfo.value)
    assert "Gaussian" in str(excinfo.value)


@pytest.mark.parametrize(
    ("args", "name"),
    [
        ((0.0,), "sigma"),
        ((-1.0,), "sigma"),
        ((np.nan,), "sigma"),
        ((np.inf,), "sigma"),
        (("1",), "sigma"),
        ((1.0, 0), "dim"),
        ((1.0, -2), "dim"),
        ((1.0, 1.5), "dim"),
        ((1.0, True), "dim"),
        ((1.0, "2"), "dim"),
    ],
)
def test_bad_from_std_arguments_are_rejected(args, name) -> None:
    with pytest.raises(InvalidParameterError, match=f"`{name}`"):
        Gaussian.from_std(*args)


@pytest.mark.parametrize("method", ["pdf", "logpdf", "cdf", "score"])
@pytest.mark.parametrize("x", [np.nan, [1.0, np.nan], "a", 1j, np.array(["1.0"])], ids=repr)
def test_bad_points_are_rejected(method, x) -> None:
    with pytest.raises(InvalidParameterError, match="`x`"):
        getattr(Gaussian(cov=2.0), method)(x)


@pytest.mark.parametrize("method", ["pdf", "logpdf", "score"])
def test_vector_points_of_the_wrong_shape_are_rejected(method) -> None:
    m = correlated()
    for x in (1.0, [1.0, 2.0, 3.0], np.ones((4, 3))):
        with pytest.raises(DimensionError, match="`x`"):
            getattr(m, method)(x)
    with pytest.raises(InvalidParameterError, match="`x`"):
        getattr(m, method)([[0.0, 0.0], [np.nan, 0.0]])


# -- immutability -------------------------------------------------------------------------------------


def test_mechanism_is_immutable() -> None:
    cov = np.array(CORR_COV)
    loc = np.array(CORR_LOC)
    m = Gaussian(cov=cov, loc=loc)
    for name in ("cov", "loc", "_factor", "_precision"):
        with pytest.raises(AttributeError):
            setattr(m, name, np.zeros(2))
    with pytest.raises((AttributeError, TypeError)):
        m.extra = 1  # type: ignore[attr-defined]
    for arr in (m.cov, m.loc, m.mean(), m.covariance(), m.fisher_information(), m.std):
        assert not arr.flags.writeable
        with pytest.raises(ValueError):
            arr[0] = 0.0
    cov[0, 0], loc[0] = 100.0, 100.0  # the caller's arrays are copied
    assert m.cov[0, 0] == CORR_COV[0][0] and m.loc[0] == CORR_LOC[0]
    assert m.sample(rng=1)[0] < 50


def test_replace_revalidates_and_describe_round_trips() -> None:
    m = correlated()
    d = m.describe()
    assert d["family"] == "gaussian"
    again = Gaussian(cov=d["cov"], loc=d["loc"])
    np.testing.assert_array_equal(again.cov, m.cov)
    np.testing.assert_array_equal(again.loc, m.loc)
    shifted = dataclasses.replace(m, loc=[0.0, 0.0])
    np.testing.assert_array_equal(shifted.loc, [0.0, 0.0])
    with pytest.raises(InvalidParameterError, match="`cov`"):
        dataclasses.replace(m, cov=[[1.0, 2.0], [2.0, 1.0]])
