"""The error law each family states for accuracy (``PrivacyProfile.error_law``) bounds the tails of every
coordinate of its noise, and the server's interval law comes from it: a family without one gets no interval."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from privnoise.dp import DiscreteGaussian, DiscreteLaplace
from privnoise.dp.profile import profile_of
from privnoise.mechanisms import Gaussian, L2Laplace, Laplace, MultiUserLaplace
from privnoise.mechanisms.error_laws import GaussianError, LaplaceError
from privnoise.mechanisms.hardening import hardened

from ._families import FAMILIES

LAWS = {"laplace": stats.laplace, "gaussian": stats.norm}
WITH_LAW = [
    pytest.param(e, id=f"{f.cls.__name__}-{e.name}") for f in FAMILIES.values() if f.privacy != "none"
    for e in f.examples if profile_of(e.noise).error_law() is not None
]


@pytest.mark.parametrize("example", WITH_LAW)
def test_the_stated_law_bounds_the_tails_of_every_coordinate(example):
    stated = profile_of(example.noise).error_law()
    law = LAWS[stated.name](scale=stated.scale)
    draws = np.asarray(example.noise.sample(200_000, rng=11), dtype=float).reshape(200_000, -1)
    grid = getattr(example.noise, "grid", 0.0) or 0.0
    for radius in law.ppf([0.9, 0.975, 0.995]):
        claimed = 2 * law.sf(radius - grid)  # the rounding to a grid moves a draw by at most Λ/2 ≤ Λ
        for column in draws.T:
            observed = np.mean(np.abs(column) > radius)
            # one-sided binomial bound at α = 1e-6: the observed tail may exceed the claim only by chance
            assert observed <= claimed + 5 * np.sqrt(claimed * (1 - claimed) / column.size)


def test_a_law_at_a_smaller_scale_is_caught():
    # power: the same check rejects the law of a 30 % narrower Laplace
    draws = np.asarray(Laplace(scale=1.3).sample(200_000, rng=11))
    law = stats.laplace(scale=1.0)
    radius = law.ppf(0.995)
    claimed = 2 * law.sf(radius)
    assert np.mean(np.abs(draws) > radius) > claimed + 5 * np.sqrt(claimed * (1 - claimed) / draws.size)


def test_families_state_their_own_law_or_none():
    assert profile_of(Gaussian(cov=[[4.0, 1.0], [1.0, 1.0]])).error_law() == GaussianError(2.0)  # largest marginal
    assert profile_of(Laplace(scale=[0.5, 3.0])).error_law() == LaplaceError(3.0)
    assert profile_of(L2Laplace(epsilon=2.0, dim=1)).error_law() == LaplaceError(0.5)
    assert profile_of(L2Laplace(epsilon=2.0, dim=3)).error_law() is None  # a coordinate is not Laplace
    assert profile_of(MultiUserLaplace(epsilon=1.0, users=2, user_dim=2)).error_law() is None
    assert profile_of(DiscreteGaussian(sigma=1.0, grid_exponent=0)).error_law() is None
    assert profile_of(DiscreteLaplace(scale=2.0, grid_exponent=0)).error_law() == LaplaceError(2.0)


def test_the_server_takes_the_law_from_the_family():
    pytest.importorskip("fastapi")
    from privnoise.server.accuracy import law_of

    wide = hardened(Gaussian(cov=[[4.0, 1.0], [1.0, 1.0]]), sensitivity=1.0, bound=10.0)
    assert law_of(wide).error == GaussianError(2.0) and law_of(wide).scale == 2.0
    assert law_of(hardened(L2Laplace(epsilon=1.0, dim=3), sensitivity=1.0, bound=10.0)) is None
    assert law_of(hardened(DiscreteGaussian(sigma=1.0, grid_exponent=0), sensitivity=1.0, bound=10.0)) is None
    laplace = law_of(hardened(Laplace(scale=2.0), sensitivity=1.0, bound=10.0))
    assert laplace.error == LaplaceError(2.0) and laplace.scale == 2.0
