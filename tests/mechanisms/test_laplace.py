"""Laplace: density against scipy.stats.laplace, sampler (and its sign bits), moments, information."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from randomgen import AESCounter, ChaCha
from scipy import integrate, stats
from scipy.differentiate import derivative

from privnoise.exceptions import DimensionError, InvalidParameterError
from privnoise.mechanisms import Laplace
from privnoise.mechanisms.laplace import random_signs
from privnoise.random import default_rng

WRONG_SCALES = (0.7, 1.3)
SCALARS = [(0.5, 1.2), (3.0, 0.0), (1e-3, -7.0)]  # (scale, loc)
VECTOR_SCALE = [0.5, 2.0, 7.0]
VECTOR_LOC = [0.0, 1.0, -3.0]


def vector_mechanism() -> Laplace:
    return Laplace(scale=VECTOR_SCALE, loc=VECTOR_LOC)


def coordinate_lines():
    """(g, score, scale, loc) for each scalar case and each coordinate of the vector mechanism."""
    lines = [
        pytest.param(Laplace(scale=b, loc=c).pdf, Laplace(scale=b, loc=c).score, b, c, id=f"scalar[{b},{c}]")
        for b, c in SCALARS
    ]
    m = vector_mechanism()
    loc, scale = np.array(VECTOR_LOC), np.array(VECTOR_SCALE)
    for i in range(3):
        others = np.prod(np.delete(1.0 / (2.0 * scale), i))  # the other coordinates' densities at their loc

        def point(t, i=i):
            p = np.array(np.broadcast_to(loc, np.shape(t) + loc.shape))
            p[..., i] = t
            return p

        lines.append(
            pytest.param(
                lambda t, point=point, others=others: m.pdf(point(t)) / others,
                lambda t, point=point, i=i: m.score(point(t))[..., i],
                scale[i],
                loc[i],
                id=f"vector-coord{i}",
            )
        )
    return lines


def _split_quad(f, scale: float, loc: float, width: float = 40.0, **kwargs) -> float:
    """∫ f over loc ± width·scale, split at the kink."""
    kwargs.setdefault("epsabs", 0.0)
    kwargs.setdefault("epsrel", 1e-12)
    kwargs.setdefault("limit", 200)
    return sum(
        integrate.quad(f, a, b, **kwargs)[0]
        for a, b in ((loc - width * scale, loc), (loc, loc + width * scale))
    )


# -- density ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("g", "score", "scale", "loc"), coordinate_lines())
def test_pdf_integrates_to_one(g, score, scale, loc) -> None:
    assert _split_quad(g, scale, loc) == pytest.approx(1.0, rel=1e-12)


@pytest.mark.parametrize(("scale", "loc"), SCALARS)
def test_scalar_density_matches_scipy(scale, loc) -> None:
    m = Laplace(scale=scale, loc=loc)
    ref = stats.laplace(loc=loc, scale=scale)
    x = loc + scale * np.linspace(-40, 40, 1601)
    np.testing.assert_allclose(m.logpdf(x), ref.logpdf(x), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(m.pdf(x), ref.pdf(x), rtol=1e-11, atol=0)
    np.testing.assert_allclose(m.cdf(x), ref.cdf(x), rtol=1e-11, atol=0)
    assert m.pdf(np.inf) == 0.0 and m.logpdf(-np.inf) == -np.inf
    assert m.cdf(np.inf) == 1.0 and m.cdf(-np.inf) == 0.0 and m.cdf(loc) == 0.5


def test_vector_density_is_the_product_of_scipy_marginals() -> None:
    m = vector_mechanism()
    refs = [stats.laplace(loc=c, scale=b) for b, c in zip(VECTOR_SCALE, VECTOR_LOC, strict=True)]
    x = default_rng(8).normal(size=(400, 3)) * np.array(VECTOR_SCALE) * 3 + VECTOR_LOC
    assert m.pdf(x).shape == (400,)
    np.testing.assert_allclose(
        m.logpdf(x), np.sum([r.logpdf(x[:, i]) for i, r in enumerate(refs)], axis=0), rtol=1e-12
    )
    np.testing.assert_allclose(
        m.pdf(x), np.prod([r.pdf(x[:, i]) for i, r in enumerate(refs)], axis=0), rtol=1e-11
    )
    np.testing.assert_allclose(
        m.cdf(x), np.prod([r.cdf(x[:, i]) for i, r in enumerate(refs)], axis=0), rtol=1e-11
    )


def test_score() -> None:
    m = Laplace(scale=0.5, loc=1.2)
    x = np.array([-3.0, 1.0, 1.19, 1.21, 5.0])
    np.testing.assert_allclose(m.score(x), [2.0, 2.0, 2.0, -2.0, -2.0])
    np.testing.assert_allclose(m.score(x[[0, 4]]), derivative(m.logpdf, x[[0, 4]], initial_step=0.1).df)
    assert m.score(1.2) == 0.0


# -- sampler ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("seed", "params"), list(enumerate(SCALARS)))
def test_scalar_sampler_passes_ks_and_detects_wrong_scale(seed, params, assert_ks) -> None:
    scale, loc = params
    x = Laplace(scale=scale, loc=loc).sample(100_000, rng=5000 + seed)
    assert_ks(x, stats.laplace(loc, scale).cdf, [stats.laplace(loc, f * scale).cdf for f in WRONG_SCALES])


def test_vector_sampler_passes_ks_in_every_coordinate(assert_ks) -> None:
    x = vector_mechanism().sample(100_000, rng=5100)
    assert x.shape == (100_000, 3)
    for i, (b, c) in enumerate(zip(VECTOR_SCALE, VECTOR_LOC, strict=True)):
        assert_ks(x[:, i], stats.laplace(c, b).cdf, [stats.laplace(c, f * b).cdf for f in WRONG_SCALES])


@pytest.mark.parametrize(
    "bit_generator",
    [np.random.MT19937, np.random.PCG64, np.random.Philox, np.random.SFC64, AESCounter, ChaCha],
)
def test_sampler_on_other_bit_generators_passes_ks(bit_generator, assert_ks) -> None:
    # MT19937's raw output carries 32 random bits per raw word: signs taken from raw words were 75 % positive.
    x = Laplace(scale=0.5, loc=1.2).sample(100_000, rng=np.random.Generator(bit_generator(31)))
    assert abs(np.count_nonzero(x > 1.2) - 50_000) < 5 * math.sqrt(25_000)
    assert_ks(x, stats.laplace(1.2, 0.5).cdf, [stats.laplace(1.2, 0.5 * f).cdf for f in WRONG_SCALES])


@pytest.mark.parametrize(
    "bit_generator",
    [np.random.MT19937, np.random.PCG64, np.random.Philox, np.random.SFC64, AESCounter, ChaCha],
)
def test_random_signs_are_fair_in_every_bit_position(bit_generator) -> None:
    words = 20_000
    signs = random_signs(64 * words, np.random.Generator(bit_generator(2))).reshape(words, 64)
    assert set(np.unique(signs)) == {-1.0, 1.0}
    assert np.abs(signs.sum(axis=0)).max() < 5 * math.sqrt(words)
    assert random_signs(5, default_rng(1)).shape == (5,)
    assert random_signs(0, default_rng(1)).shape == (0,)


def test_samples_are_finite() -> None:
    for m in (Laplace(scale=1e-300), Laplace(scale=1e300), vector_mechanism()):
        assert np.isfinite(m.sample(200_000, rng=9)).all()


@pytest.mark.slow
@pytest.mark.parametrize(
    "mechanism", [Laplace(scale=0.5, loc=1.2), vector_mechanism()], ids=["scalar", "vector"]
)
def test_sample_moments_match(mechanism, assert_moments) -> None:
    assert_moments(mechanism, mechanism.sample(1_000_000, rng=55))


# -- moments and information measures ------------------------------------------------------------------


def test_closed_form_moments() -> None:
    m = Laplace(scale=0.5, loc=1.2)
    ref = stats.laplace(1.2, 0.5)
    assert m.mean() == 1.2
    assert m.covariance() == pytest.approx(ref.var(), rel=1e-14)
    assert m.second_moment() == pytest.approx(ref.var() + 1.44, rel=1e-14)
    assert m.entropy() == pytest.approx(ref.entropy(), rel=1e-14)
    v = vector_mechanism()
    np.testing.assert_array_equal(v.mean(), VECTOR_LOC)
    np.testing.assert_allclose(v.covariance(), np.diag(2 * np.array(VECTOR_SCALE) ** 2))
    np.testing.assert_allclose(v.fisher_information(), np.diag(1 / np.array(VECTOR_SCALE) ** 2))
    expected = sum(stats.laplace(0, b).entropy() for b in VECTOR_SCALE)
    assert v.entropy() == pytest.approx(expected, rel=1e-14)


@pytest.mark.parametrize(("g", "score", "scale", "loc"), coordinate_lines())
def test_entropy_and_fisher_information_by_quadrature(g, score, scale, loc) -> None:
    marginal = Laplace(scale=scale, loc=loc)
    entropy = _split_quad(lambda t: -g(t) * math.log(g(t)), scale, loc)
    assert entropy == pytest.approx(marginal.entropy(), rel=1e-8, abs=1e-12)
    fisher = _split_quad(lambda t: g(t) * score(t) ** 2, scale, loc)
    assert fisher == pytest.approx(marginal.fisher_information(), rel=1e-6)

    # Second method: ∫ g'²/g with g' a numerical derivative; steps point away from the kink at loc.
    def g_prime(t):
        return derivative(g, t, initial_step=0.1 * scale, step_direction=1 if t > loc else -1).df

    numeric = _split_quad(lambda t: g_prime(t) ** 2 / g(t), scale, loc, width=30.0, epsrel=1e-10)
    assert numeric == pytest.approx(marginal.fisher_information(), rel=1e-6)


# -- shapes -------------------------------------------------------------------------------------------


def test_broadcasting_of_scale_and_loc() -> None:
    assert Laplace(scale=[1.0, 2.0], loc=0.5).loc.tolist() == [0.5, 0.5]
    assert Laplace(scale=1.0, loc=[0.0, 1.0, 2.0]).scale.tolist() == [1.0, 1.0, 1.0]
    assert Laplace(scale=1.0).shape == () and Laplace(scale=[1.0]).shape == (1,)
    assert isinstance(Laplace(scale=1.0).pdf(0.0), float)
    assert vector_mechanism().pdf(np.zeros((4, 5, 3))).shape == (4, 5)


# -- bad input ----------------------------------------------------------------------------------------

BAD_PARAMETERS = [
    ({"scale": np.nan}, "scale", InvalidParameterError),
    ({"scale": np.inf}, "scale", InvalidParameterError),
    ({"scale": 0.0}, "scale", InvalidParameterError),
    ({"scale": -1.0}, "scale", InvalidParameterError),
    ({"scale": [1.0, -1.0]}, "scale", InvalidParameterError),
    ({"scale": [1.0, 0.0]}, "scale", InvalidParameterError),
    ({"scale": [1.0, np.nan]}, "scale", InvalidParameterError),
    ({"scale": "1"}, "scale", InvalidParameterError),
    ({"scale": None}, "scale", InvalidParameterError),
    ({"scale": object()}, "scale", InvalidParameterError),
    ({"scale": 1j}, "scale", InvalidParameterError),
    ({"scale": [[1.0]]}, "scale", DimensionError),
    ({"scale": []}, "scale", DimensionError),
    ({"scale": 1.0, "loc": np.nan}, "loc", InvalidParameterError),
    ({"scale": 1.0, "loc": np.inf}, "loc", InvalidParameterError),
    ({"scale": 1.0, "loc": "a"}, "loc", InvalidParameterError),
    ({"scale": 1.0, "loc": [[0.0]]}, "loc", DimensionError),
    ({"scale": [1.0, 2.0], "loc": [1.0, 2.0, 3.0]}, "loc", DimensionError),
]


@pytest.mark.parametrize(
    ("kwargs", "name", "error"), BAD_PARAMETERS, ids=[f"{p[1]}-{i}" for i, p in enumerate(BAD_PARAMETERS)]
)
def test_bad_parameters_are_rejected(kwargs, name, error) -> None:
    with pytest.raises(error) as excinfo:
        Laplace(**kwargs)
    assert f"`{name}`" in str(excinfo.value)
    assert "Laplace" in str(excinfo.value)


@pytest.mark.parametrize(
    "kwargs", [{"scale": True}, {"scale": np.array([1 + 1j])}, {"scale": 1.0, "loc": False}]
)
def test_bool_and_complex_parameters_are_rejected(kwargs) -> None:
    with pytest.raises(InvalidParameterError):
        Laplace(**kwargs)


@pytest.mark.parametrize("method", ["pdf", "logpdf", "cdf", "score"])
@pytest.mark.parametrize("x", [np.nan, [1.0, np.nan], "a", 1j, np.array(["1.0"])], ids=repr)
def test_bad_points_are_rejected(method, x) -> None:
    with pytest.raises(InvalidParameterError, match="`x`"):
        getattr(Laplace(scale=1.0), method)(x)


@pytest.mark.parametrize("method", ["pdf", "logpdf", "cdf", "score"])
def test_vector_points_of_the_wrong_shape_are_rejected(method) -> None:
    m = vector_mechanism()
    for x in (1.0, [1.0, 2.0], np.ones((4, 2))):
        with pytest.raises(DimensionError, match="`x`"):
            getattr(m, method)(x)


# -- immutability -------------------------------------------------------------------------------------


def test_mechanism_is_immutable() -> None:
    scale, loc = np.array(VECTOR_SCALE), np.array(VECTOR_LOC)
    m = Laplace(scale=scale, loc=loc)
    for name in ("scale", "loc"):
        with pytest.raises(AttributeError):
            setattr(m, name, np.ones(3))
    with pytest.raises((AttributeError, TypeError)):
        m.extra = 1  # type: ignore[attr-defined]
    for arr in (m.scale, m.loc, m.mean(), m.covariance(), m.fisher_information()):
        assert not arr.flags.writeable
        with pytest.raises(ValueError):
            arr[0] = 0.0
    scale[0], loc[0] = -5.0, 100.0  # the caller's arrays are copied
    assert m.scale[0] == VECTOR_SCALE[0] and m.loc[0] == VECTOR_LOC[0]


def test_replace_revalidates_and_describe_round_trips() -> None:
    m = vector_mechanism()
    d = m.describe()
    assert d["family"] == "laplace"
    again = Laplace(scale=d["scale"], loc=d["loc"])
    np.testing.assert_array_equal(again.scale, m.scale)
    np.testing.assert_array_equal(again.loc, m.loc)
    with pytest.raises(InvalidParameterError, match="`scale`"):
        dataclasses.replace(m, scale=[1.0, -1.0, 1.0])


def test_one_sign_is_the_first_of_many_from_the_same_generator() -> None:
    """flip_signs of one value (its word-level path) flips it by the bit the array path gives the first value."""
    from privnoise.mechanisms.laplace import flip_signs

    for seed in range(200):
        one, many = np.array([1.5]), np.array([1.5, -2.0, 3.0])
        flip_signs(one, np.random.default_rng(seed))
        flip_signs(many, np.random.default_rng(seed))
        assert one[0] == many[0]
