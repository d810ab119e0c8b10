"""RaisedCosine: density, distribution function, sampler, moments and information measures.

The independent reference is scipy.stats.cosine, density (1 + cos x)/(2π) on [−π, π]. On [lo, hi] with
L = hi − lo and c = (lo + hi)/2 the raised cosine is (2/L) cos²(π(w − c)/L) = (1 + cos(2π(w − c)/L))/L, i.e.
``scipy.stats.cosine(loc=c, scale=L/(2π))``.
"""

from __future__ import annotations

import dataclasses
import math

import mpmath
import numpy as np
import pytest
from scipy import integrate, optimize, stats
from scipy.differentiate import derivative

from privnoise.exceptions import DimensionError, InvalidParameterError
from privnoise.mechanisms import RaisedCosine
from privnoise.mechanisms import raised_cosine as rc_module
from privnoise.mechanisms.raised_cosine import t_minus_sin_t
from privnoise.random import default_rng

WRONG_SCALES = (0.7, 1.3)
SCALAR_BOXES = [(0.3, 1.7), (-1.0, 1.0), (-5.0, -4.2), (0.0, 0.2)]
VECTOR_LOWER = [0.3, -2.0, 10.0]
VECTOR_UPPER = [1.7, -1.9, 13.0]


def reference(lo: float, hi: float, factor: float = 1.0):
    """scipy's cosine distribution on [lo, hi], its width scaled by ``factor`` about the centre."""
    return stats.cosine(loc=(lo + hi) / 2.0, scale=factor * (hi - lo) / (2.0 * np.pi))


def vector_mechanism() -> RaisedCosine:
    return RaisedCosine(lower=VECTOR_LOWER, upper=VECTOR_UPPER)


def coordinate_line(m: RaisedCosine, i: int):
    """Marginal density of coordinate i read off the joint density along the line through the centre.

    For a product density g(x) = ∏ g_j(x_j) and the centre c,
    g_i(t) = g(c + (t − c_i) e_i) / ∏_{j≠i} g_j(c_j), and g_j(c_j) = 2/L_j.
    Returns (g_i, score_i, lo_i, hi_i).
    """
    centre = (m.lower + m.upper) / 2.0
    others = np.prod(np.delete(2.0 / m.width, i))

    def point(t):
        p = np.array(np.broadcast_to(centre, np.shape(t) + centre.shape))
        p[..., i] = t
        return p

    return (
        lambda t: m.pdf(point(t)) / others,
        lambda t: m.score(point(t))[..., i],
        float(m.lower[i]),
        float(m.upper[i]),
    )


def all_lines():
    """(g, score, lo, hi) for every scalar box and every coordinate of the vector box."""
    lines = []
    for lo, hi in SCALAR_BOXES:
        m = RaisedCosine(lower=lo, upper=hi)
        lines.append(pytest.param(m.pdf, m.score, lo, hi, id=f"scalar[{lo},{hi}]"))
    v = vector_mechanism()
    for i in range(v.dim):
        lines.append(pytest.param(*coordinate_line(v, i), id=f"vector-coord{i}"))
    return lines


# -- density and distribution function ----------------------------------------------------------------


@pytest.mark.parametrize(("g", "score", "lo", "hi"), all_lines())
def test_pdf_integrates_to_one(g, score, lo, hi) -> None:
    total, _ = integrate.quad(g, lo, hi, epsabs=1e-13, epsrel=1e-12)
    assert total == pytest.approx(1.0, rel=1e-10)
    width = hi - lo
    for outside in (lo, hi, lo - 1e-9 * width, hi + 1e-9 * width, lo - width, hi + 5 * width):
        assert g(outside) == 0.0


@pytest.mark.parametrize(("lo", "hi"), SCALAR_BOXES)
def test_scalar_density_matches_scipy_cosine(lo, hi) -> None:
    m = RaisedCosine(lower=lo, upper=hi)
    ref = reference(lo, hi)
    width = hi - lo
    inner = np.linspace(lo + 1e-3 * width, hi - 1e-3 * width, 1001)
    np.testing.assert_allclose(m.pdf(inner), ref.pdf(inner), rtol=1e-9)
    np.testing.assert_allclose(m.logpdf(inner), ref.logpdf(inner), rtol=1e-9, atol=1e-12)
    everywhere = np.linspace(lo - 0.2 * width, hi + 0.2 * width, 1001)
    np.testing.assert_allclose(m.pdf(everywhere), ref.pdf(everywhere), rtol=1e-9, atol=1e-12 / width)
    np.testing.assert_allclose(m.cdf(everywhere), ref.cdf(everywhere), rtol=1e-9, atol=1e-14)
    assert m.cdf(lo) == 0.0 and m.cdf(hi) == 1.0
    assert m.cdf((lo + hi) / 2) == pytest.approx(0.5, abs=1e-14)  # the centre itself is rounded
    assert np.all(np.diff(m.cdf(everywhere)) >= 0)
    assert m.logpdf(hi + 1.0) == -np.inf
    assert m.pdf(np.inf) == 0.0 and m.cdf(np.inf) == 1.0 and m.cdf(-np.inf) == 0.0


def test_vector_density_is_the_product_of_scipy_marginals() -> None:
    m = vector_mechanism()
    lo, hi = np.array(VECTOR_LOWER), np.array(VECTOR_UPPER)
    points = default_rng(3).uniform(lo - 0.1 * (hi - lo), hi + 0.1 * (hi - lo), size=(500, 3))
    refs = [reference(a, b) for a, b in zip(lo, hi, strict=True)]
    pdf = np.prod([r.pdf(points[:, i]) for i, r in enumerate(refs)], axis=0)
    cdf = np.prod([r.cdf(points[:, i]) for i, r in enumerate(refs)], axis=0)
    assert m.pdf(points).shape == (500,)
    np.testing.assert_allclose(m.pdf(points), pdf, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(m.cdf(points), cdf, rtol=1e-9, atol=1e-14)
    inside = pdf > 0
    assert 0 < inside.sum() < 500
    logpdf = np.sum([r.logpdf(points[inside, i]) for i, r in enumerate(refs)], axis=0)
    np.testing.assert_allclose(m.logpdf(points[inside]), logpdf, rtol=1e-9)
    assert np.all(m.logpdf(points[~inside]) == -np.inf)


def _mp_position(x: float, lo: float, hi: float):
    return (mpmath.mpf(x) - mpmath.mpf(lo)) / (mpmath.mpf(hi) - mpmath.mpf(lo))


@pytest.mark.parametrize("side", ["lower", "upper"])
@pytest.mark.parametrize("delta", [1e-6, 1e-4, 1e-2, 0.25, 0.49])
@pytest.mark.parametrize(("lo", "hi"), [(0.3, 1.7), (-5.0, -4.2)])
def test_cdf_and_pdf_keep_relative_precision_near_the_edges(side, delta, lo, hi) -> None:
    m = RaisedCosine(lower=lo, upper=hi)
    width = hi - lo
    x = lo + delta * width if side == "lower" else hi - delta * width
    with mpmath.workdps(60):
        s = _mp_position(x, lo, hi)  # exact position of the double x
        cdf = s - mpmath.sin(2 * mpmath.pi * s) / (2 * mpmath.pi)
        pdf = 2 / (mpmath.mpf(hi) - mpmath.mpf(lo)) * mpmath.sin(mpmath.pi * s) ** 2
        cdf, pdf, logpdf = float(cdf), float(pdf), float(mpmath.log(pdf))
    assert m.cdf(x) == pytest.approx(cdf, rel=1e-13)
    assert m.pdf(x) == pytest.approx(pdf, rel=1e-12)
    assert m.logpdf(x) == pytest.approx(logpdf, rel=1e-13, abs=1e-13)


def test_cdf_deep_in_the_lower_tail_is_not_zero() -> None:
    m = RaisedCosine(lower=0.3, upper=1.7)
    x = 0.3 + 1e-9 * 1.4
    with mpmath.workdps(60):
        s = _mp_position(x, 0.3, 1.7)
        expected = float(s - mpmath.sin(2 * mpmath.pi * s) / (2 * mpmath.pi))
    assert expected > 0
    assert m.cdf(x) == pytest.approx(expected, rel=1e-12)


def test_score_is_the_derivative_of_logpdf() -> None:
    m = RaisedCosine(lower=0.3, upper=1.7)
    x = np.linspace(0.35, 1.65, 27)
    numeric = derivative(m.logpdf, x, initial_step=0.01).df
    np.testing.assert_allclose(m.score(x), numeric, rtol=1e-8, atol=1e-9)
    assert m.score(0.2) == 0.0 and m.score(2.0) == 0.0


# -- the helper t − sin t and the rejection envelope ------------------------------------------------


def test_t_minus_sin_t_matches_mpmath() -> None:
    t = np.unique(np.concatenate([np.geomspace(1e-8, np.pi, 1500), np.linspace(0.4, 1.7, 400), [np.pi]]))
    with mpmath.workdps(50):
        expected = np.array([float(mpmath.mpf(v) - mpmath.sin(mpmath.mpf(v))) for v in t])
    got = t_minus_sin_t(t)
    rel = np.abs(got - expected) / expected
    assert rel.max() < 1e-15, f"max relative error {rel.max():.3g} at t = {t[rel.argmax()]:.6g}"
    assert float(t_minus_sin_t(np.array(0.0))) == 0.0


def test_envelope_bounds_the_acceptance_ratio() -> None:
    def ratio(d):
        return np.sin(np.pi * d) ** 2 / (2.0 * d)

    res = optimize.minimize_scalar(
        lambda d: -ratio(d), bounds=(1e-9, 0.5), method="bounded", options={"xatol": 1e-12}
    )
    sup = -res.fun
    grid = np.linspace(1e-9, 0.5, 1_000_001)
    assert ratio(grid).max() <= rc_module._ENVELOPE
    assert sup <= rc_module._ENVELOPE
    assert rc_module._ENVELOPE - sup < 1e-6
    with mpmath.workdps(40):  # the maximiser solves tan(πd) = 2πd
        x = mpmath.findroot(lambda x: mpmath.tan(x) - 2 * x, 1.1656)
        exact = mpmath.pi * mpmath.sin(x) ** 2 / (2 * x)
    assert float(exact) <= rc_module._ENVELOPE
    assert res.x == pytest.approx(float(x / mpmath.pi), abs=1e-6)


@pytest.mark.slow
def test_single_precision_shortcut_never_changes_a_decision() -> None:
    """The fast accept test must reproduce the exact double-precision rejection sampler draw for draw."""
    k = 1_000_000
    proposals = np.empty(k)
    rejected = rc_module._propose_edge_distances(proposals, default_rng(21))
    got = np.delete(proposals, rejected)
    g = default_rng(21)
    e = np.sqrt(g.random(k))
    threshold = g.random(k)
    threshold *= e
    threshold *= rc_module._ENVELOPE
    exact = threshold < np.sin(e * (np.pi / 2.0)) ** 2
    np.testing.assert_array_equal(got, e[exact])
    assert 0.87 < got.size / k < 0.89  # acceptance 1/M ≈ 0.8786


# -- sampler ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("seed", "box"), list(enumerate(SCALAR_BOXES)))
def test_scalar_sampler_passes_ks_and_detects_wrong_scale(seed, box, assert_ks) -> None:
    lo, hi = box
    x = RaisedCosine(lower=lo, upper=hi).sample(100_000, rng=1000 + seed)
    assert_ks(x, reference(lo, hi).cdf, [reference(lo, hi, f).cdf for f in WRONG_SCALES])


def test_vector_sampler_passes_ks_in_every_coordinate(assert_ks) -> None:
    x = vector_mechanism().sample(100_000, rng=2024)
    assert x.shape == (100_000, 3)
    for i, (lo, hi) in enumerate(zip(VECTOR_LOWER, VECTOR_UPPER, strict=True)):
        assert_ks(x[:, i], reference(lo, hi).cdf, [reference(lo, hi, f).cdf for f in WRONG_SCALES])


def test_sampler_on_the_default_csprng_passes_ks(assert_ks) -> None:
    # Not seedable by design; fails with probability 1e-6.
    x = RaisedCosine(lower=0.3, upper=1.7).sample(100_000)
    assert_ks(x, reference(0.3, 1.7).cdf)


@pytest.mark.parametrize("bit_generator", [np.random.MT19937, np.random.PCG64, np.random.Philox])
def test_sampler_on_other_bit_generators_passes_ks(bit_generator, assert_ks) -> None:
    # MT19937 returns 32 random bits per raw value; the sign draw must still be fair.
    x = RaisedCosine(lower=0.3, upper=1.7).sample(100_000, rng=np.random.Generator(bit_generator(77)))
    assert_ks(x, reference(0.3, 1.7).cdf, [reference(0.3, 1.7, f).cdf for f in WRONG_SCALES])
    upper_half = np.count_nonzero(x > 1.0)
    assert abs(upper_half - 50_000) < 5 * math.sqrt(25_000)


@pytest.mark.parametrize(
    ("lo", "hi"), [(0.3, 1.7), (-1e-300, 1e-300), (1e6, 1e6 + 1e-3), (-3.0, 1e-12), (0.0, 1e300)]
)
def test_samples_lie_strictly_inside_and_are_finite(lo, hi) -> None:
    x = RaisedCosine(lower=lo, upper=hi).sample(200_000, rng=5)
    assert np.isfinite(x).all()
    assert (x > lo).all() and (x < hi).all()


def test_vector_samples_lie_strictly_inside() -> None:
    x = vector_mechanism().sample((1000, 50), rng=6)
    assert x.shape == (1000, 50, 3)
    assert (x > np.array(VECTOR_LOWER)).all() and (x < np.array(VECTOR_UPPER)).all()


@pytest.mark.slow
@pytest.mark.parametrize(
    "mechanism", [RaisedCosine(lower=0.3, upper=1.7), vector_mechanism()], ids=["scalar", "vector"]
)
def test_sample_moments_match(mechanism, assert_moments) -> None:
    assert_moments(mechanism, mechanism.sample(1_000_000, rng=99))


# -- moments and information measures ------------------------------------------------------------------


def test_closed_form_moments() -> None:
    m = RaisedCosine(lower=0.3, upper=1.7)
    ref = reference(0.3, 1.7)
    assert m.mean() == pytest.approx(ref.mean(), rel=1e-14)
    assert m.covariance() == pytest.approx(ref.var(), rel=1e-12)
    assert m.second_moment() == pytest.approx(ref.var() + ref.mean() ** 2, rel=1e-12)
    assert m.entropy() == pytest.approx(ref.entropy(), rel=1e-12)
    v = vector_mechanism()
    variances = [reference(a, b).var() for a, b in zip(VECTOR_LOWER, VECTOR_UPPER, strict=True)]
    np.testing.assert_allclose(v.mean(), (np.array(VECTOR_LOWER) + VECTOR_UPPER) / 2, rtol=1e-14)
    np.testing.assert_allclose(v.covariance(), np.diag(variances), rtol=1e-12)
    assert v.second_moment() == pytest.approx(sum(variances) + float(np.sum(v.mean() ** 2)), rel=1e-12)


@pytest.mark.parametrize(("g", "score", "lo", "hi"), all_lines())
def test_entropy_and_fisher_information_by_quadrature(g, score, lo, hi) -> None:
    m = RaisedCosine(lower=lo, upper=hi)  # the marginal of this coordinate
    entropy, _ = integrate.quad(lambda t: -g(t) * math.log(g(t)), lo, hi, epsabs=0, epsrel=1e-12, limit=200)
    assert entropy == pytest.approx(m.entropy(), rel=1e-8, abs=1e-12)

    fisher, _ = integrate.quad(lambda t: g(t) * score(t) ** 2, lo, hi, epsabs=0, epsrel=1e-12, limit=200)
    assert fisher == pytest.approx(m.fisher_information(), rel=1e-6)

    # Second method: ∫ g'²/g with g' from a numerical derivative of the density (steps toward the centre, so
    # the stencil never leaves the support).
    centre, width = (lo + hi) / 2, hi - lo

    def g_prime(t):
        return derivative(g, t, initial_step=width / 64, step_direction=-1 if t > centre else 1).df

    numeric, _ = integrate.quad(lambda t: g_prime(t) ** 2 / g(t), lo, hi, epsabs=0, epsrel=1e-10, limit=200)
    assert numeric == pytest.approx(m.fisher_information(), rel=1e-6)


def test_vector_information_sums_the_coordinates() -> None:
    v = vector_mechanism()
    marginals = [RaisedCosine(lower=a, upper=b) for a, b in zip(VECTOR_LOWER, VECTOR_UPPER, strict=True)]
    np.testing.assert_allclose(v.fisher_information(), np.diag([m.fisher_information() for m in marginals]))
    assert v.entropy() == pytest.approx(sum(m.entropy() for m in marginals), rel=1e-14)


# -- shapes -------------------------------------------------------------------------------------------


def test_density_shapes() -> None:
    m = RaisedCosine(lower=0.3, upper=1.7)
    assert (
        isinstance(m.pdf(1.0), float) and isinstance(m.cdf(1.0), float) and isinstance(m.logpdf(1.0), float)
    )
    assert m.pdf(np.ones((2, 3))).shape == (2, 3)
    v = vector_mechanism()
    centre = (np.array(VECTOR_LOWER) + VECTOR_UPPER) / 2
    assert isinstance(v.pdf(centre), float)
    assert v.pdf(np.tile(centre, (4, 5, 1))).shape == (4, 5)
    assert v.cdf(np.tile(centre, (4, 1))).shape == (4,)
    assert v.score(np.tile(centre, (4, 1))).shape == (4, 3)
    assert RaisedCosine(lower=[0.0], upper=[1.0]).shape == (1,)


# -- bad input ----------------------------------------------------------------------------------------

BAD_PARAMETERS = [
    ({"lower": np.nan, "upper": 1.0}, "lower", InvalidParameterError),
    ({"lower": 0.0, "upper": np.inf}, "upper", InvalidParameterError),
    ({"lower": -np.inf, "upper": 1.0}, "lower", InvalidParameterError),
    ({"lower": [0.0, np.nan], "upper": [1.0, 2.0]}, "lower", InvalidParameterError),
    ({"lower": "0", "upper": 1.0}, "lower", InvalidParameterError),
    ({"lower": None, "upper": 1.0}, "lower", InvalidParameterError),
    ({"lower": 0.0, "upper": object()}, "upper", InvalidParameterError),
    ({"lower": {}, "upper": 1.0}, "lower", InvalidParameterError),
    ({"lower": [0.0, [1.0]], "upper": 2.0}, "lower", InvalidParameterError),
    ({"lower": 0.0, "upper": 1j}, "upper", InvalidParameterError),
    ({"lower": [[0.0, 1.0]], "upper": [[1.0, 2.0]]}, "lower", DimensionError),
    ({"lower": [], "upper": []}, "lower", DimensionError),
    ({"lower": [0.0, 1.0], "upper": [1.0, 2.0, 3.0]}, "lower", DimensionError),
    ({"lower": 1.0, "upper": 1.0}, "upper", InvalidParameterError),
    ({"lower": 2.0, "upper": 1.0}, "upper", InvalidParameterError),
    ({"lower": [0.0, 1.0], "upper": [1.0, 1.0]}, "upper", InvalidParameterError),
    ({"lower": -1e308, "upper": 1e308}, "upper", InvalidParameterError),
]


@pytest.mark.parametrize(
    ("kwargs", "name", "error"), BAD_PARAMETERS, ids=[f"{p[1]}-{i}" for i, p in enumerate(BAD_PARAMETERS)]
)
def test_bad_parameters_are_rejected(kwargs, name, error) -> None:
    with pytest.raises(error) as excinfo:
        RaisedCosine(**kwargs)
    assert f"`{name}`" in str(excinfo.value)
    assert "RaisedCosine" in str(excinfo.value)


@pytest.mark.parametrize(
    "kwargs", [{"lower": False, "upper": True}, {"lower": 0.0, "upper": np.array([1 + 1j])}]
)
def test_bool_and_complex_parameters_are_rejected(kwargs) -> None:
    with pytest.raises(InvalidParameterError):
        RaisedCosine(**kwargs)


def test_keyword_only_and_required() -> None:
    with pytest.raises(TypeError):
        RaisedCosine(0.0, 1.0)  # type: ignore[misc]
    with pytest.raises(TypeError):
        RaisedCosine(lower=0.0)  # type: ignore[call-arg]


@pytest.mark.parametrize("method", ["pdf", "logpdf", "cdf", "score"])
@pytest.mark.parametrize("x", [np.nan, [1.0, np.nan], "a", 1j, np.array(["1.0"])], ids=repr)
def test_bad_points_are_rejected(method, x) -> None:
    with pytest.raises(InvalidParameterError, match="`x`"):
        getattr(RaisedCosine(lower=0.3, upper=1.7), method)(x)


@pytest.mark.parametrize("method", ["pdf", "logpdf", "cdf", "score"])
def test_vector_points_of_the_wrong_shape_are_rejected(method) -> None:
    v = vector_mechanism()
    for x in (1.0, [1.0, 2.0], np.ones((4, 2))):
        with pytest.raises(DimensionError, match="`x`"):
            getattr(v, method)(x)
    with pytest.raises(InvalidParameterError, match="`x`"):
        getattr(v, method)([0.5, np.nan, 11.0])


# -- immutability -------------------------------------------------------------------------------------


def test_mechanism_is_immutable() -> None:
    lower = np.array(VECTOR_LOWER)
    m = RaisedCosine(lower=lower, upper=VECTOR_UPPER)
    for name in ("lower", "upper", "width"):
        with pytest.raises(AttributeError):
            setattr(m, name, np.zeros(3))
    with pytest.raises((AttributeError, TypeError)):
        m.extra = 1  # type: ignore[attr-defined]
    for arr in (m.lower, m.upper, m.width, m.mean(), m.covariance(), m.fisher_information(), *m.support()):
        assert not arr.flags.writeable
        with pytest.raises(ValueError):
            arr[0] = 0.0
    lower[0] = -100.0  # the caller's array is copied
    assert m.lower[0] == VECTOR_LOWER[0]


def test_replace_revalidates() -> None:
    m = RaisedCosine(lower=0.3, upper=1.7)
    wider = dataclasses.replace(m, upper=2.7)
    assert float(wider.width) == pytest.approx(2.4) and float(m.width) == pytest.approx(1.4)
    with pytest.raises(InvalidParameterError, match="`upper`"):
        dataclasses.replace(m, upper=0.0)


def test_describe_round_trips() -> None:
    m = vector_mechanism()
    d = m.describe()
    assert d["family"] == "raised-cosine"
    again = RaisedCosine(lower=d["lower"], upper=d["upper"])
    np.testing.assert_array_equal(again.lower, m.lower)
    np.testing.assert_array_equal(again.upper, m.upper)
