"""The conformance registry: every noise family privnoise ships, with examples and the independent law each one
is checked against.

An entry gives, for one family, instances to test and, for each instance, what the suite compares it with:

* ``law``: the law of a draw (or of a statistic of a vector draw, e.g. its norm) from the definition of the family,
  as a scipy frozen distribution or a pmf on the lattice — never through privnoise — and ``wrong``, the same law
  at a 30 % larger scale, which the same test must reject (the power check);
* ``privacy``: how the family's privacy statements are checked (see ``test_privacy.py``).

A family added to privnoise fails ``test_every_family_is_registered`` until it is added here; once registered,
every test of the suite runs on it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import integrate, special, stats

from privnoise.dp import DiscreteGaussian, DiscreteLaplace
from privnoise.dp.snapped import SnappedMechanism
from privnoise.fisher import Ellipsoid
from privnoise.fisher.ellipsoidal import EllipsoidalNoise
from privnoise.mechanisms import (
    Gaussian,
    L2Laplace,
    Laplace,
    MultiUserLaplace,
    RaisedCosine,
    TabulatedDensity,
)
from privnoise.mechanisms.hardening import hardened


@dataclass(frozen=True)
class LatticeLaw:
    """A law on Λ·ℤ given by its pmf at integer steps j (P(w = jΛ))."""

    grid: float
    pmf: Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Example:
    """One instance of a family and the independent law of a statistic of its draws."""

    name: str
    noise: Any
    law: Any  # a frozen scipy distribution (continuous) or a LatticeLaw
    wrong: Any  # the same law at 1.3 times the scale
    statistic: Callable[[np.ndarray], np.ndarray] = lambda w: np.ravel(w)  # noqa: E731
    mean: Any = None  # the closed-form mean and covariance (from the definition)
    covariance: Any = None
    on_grid: float | None = None  # every output is a multiple of this grid


@dataclass(frozen=True)
class Family:
    cls: type
    examples: tuple[Example, ...]
    privacy: str  # "laplace", "gaussian", "norm-laplace", "discrete-laplace", "discrete-gaussian", "none"
    notes: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def _laplace_lattice(scale: float, grid: float) -> LatticeLaw:
    q = math.exp(-grid / scale)
    return LatticeLaw(grid, lambda j: (1 - q) / (1 + q) * q ** np.abs(j))


def _gaussian_lattice(sigma: float, grid: float) -> LatticeLaw:
    s = sigma / grid
    norm = sum(math.exp(-(j * j) / (2 * s * s)) for j in range(-int(60 * s) - 2, int(60 * s) + 3))
    return LatticeLaw(grid, lambda j: np.exp(-(np.asarray(j, float) ** 2) / (2 * s * s)) / norm)


def _rounded(cdf: Callable[[np.ndarray], np.ndarray], grid: float) -> LatticeLaw:
    """The law of Λ·rint(W/Λ): P(jΛ) = F((j + ½)Λ) − F((j − ½)Λ)."""
    return LatticeLaw(grid, lambda j: cdf((np.asarray(j, float) + 0.5) * grid) - cdf((np.asarray(j, float) - 0.5) * grid))


class RaisedCosineLaw(stats.rv_continuous):
    """(1/L)(1 + cos 2πu), u = (w − c)/L ∈ [−½, ½]: the cos² law written from its definition."""

    def _pdf(self, x: np.ndarray) -> np.ndarray:
        return np.where(np.abs(x) <= 0.5, 1.0 + np.cos(2 * np.pi * x), 0.0)

    def _cdf(self, x: np.ndarray) -> np.ndarray:
        u = np.clip(x, -0.5, 0.5)
        return u + 0.5 + np.sin(2 * np.pi * u) / (2 * np.pi)


def _triangle_cdf(half_width: float) -> Any:
    return stats.triang(c=0.5, loc=-half_width, scale=2 * half_width)


class _DiskRadius(stats.rv_continuous):
    """The normalised radius r = ‖S^{-1/2}(w − c)‖ of the optimal 2-D ellipsoidal noise: density ∝ r J₀(j₀₁ r)²
    on [0, 1] (the first Dirichlet eigenfunction of the disk), normalised by quadrature."""

    def __init__(self, stretch: float = 1.0) -> None:
        super().__init__(a=0.0, b=stretch)
        self.stretch = stretch
        self.root = special.jn_zeros(0, 1)[0]
        self.total = integrate.quad(lambda r: r * special.j0(self.root * r) ** 2, 0.0, 1.0, epsabs=1e-14)[0]

    def _pdf(self, x: np.ndarray) -> np.ndarray:
        r = np.asarray(x) / self.stretch
        return np.where(r <= 1.0, r * special.j0(self.root * r) ** 2 / self.total / self.stretch, 0.0)

    def _cdf(self, x: np.ndarray) -> np.ndarray:
        out = [integrate.quad(lambda r: r * special.j0(self.root * r) ** 2, 0.0, min(float(v) / self.stretch, 1.0),
                              epsabs=1e-13)[0] / self.total for v in np.ravel(x)]
        return np.reshape(out, np.shape(x))


_SHAPE = np.array([[2.0, 0.5], [0.5, 1.0]])
_INVERSE_ROOT = np.linalg.inv(np.linalg.cholesky(_SHAPE))


def _ellipse_radius(w: np.ndarray) -> np.ndarray:
    return np.sqrt(np.sum((np.asarray(w) @ _INVERSE_ROOT.T) ** 2, axis=-1))


FAMILIES: dict[type, Family] = {
    Laplace: Family(Laplace, (
        Example("scalar", Laplace(scale=1.3), stats.laplace(scale=1.3), stats.laplace(scale=1.69), mean=0.0,
                covariance=2 * 1.3**2),
        Example("vector", Laplace(scale=[0.5, 2.0]), stats.laplace(scale=0.5), stats.laplace(scale=0.65),
                statistic=lambda w: np.asarray(w)[:, 0], mean=np.zeros(2), covariance=np.diag([0.5, 8.0])),
    ), "laplace"),
    Gaussian: Family(Gaussian, (
        Example("scalar", Gaussian.from_std(1.7), stats.norm(scale=1.7), stats.norm(scale=2.21), mean=0.0,
                covariance=1.7**2),
        Example("correlated", Gaussian(cov=[[2.0, 0.6], [0.6, 1.0]]), stats.norm(scale=math.sqrt(2.0 + 1.0 + 1.2)),
                stats.norm(scale=1.3 * math.sqrt(4.2)), statistic=lambda w: np.asarray(w).sum(axis=1),
                mean=np.zeros(2), covariance=np.array([[2.0, 0.6], [0.6, 1.0]])),
    ), "gaussian"),
    L2Laplace: Family(L2Laplace, (
        Example("scalar", L2Laplace(epsilon=0.8, dim=1), stats.laplace(scale=1.25), stats.laplace(scale=1.625),
                statistic=lambda w: np.ravel(w), mean=np.zeros(1), covariance=np.eye(1) * 2 / 0.64),
        Example("vector", L2Laplace(epsilon=0.5, dim=3), stats.gamma(3, scale=2.0), stats.gamma(3, scale=2.6),
                statistic=lambda w: np.linalg.norm(w, axis=1), mean=np.zeros(3), covariance=np.eye(3) * 4 / 0.25),
    ), "norm-laplace"),
    MultiUserLaplace: Family(MultiUserLaplace, (
        Example("two users of 2", MultiUserLaplace(epsilon=0.7, users=2, user_dim=2), stats.gamma(2, scale=1 / 0.7),
                stats.gamma(2, scale=1.3 / 0.7), statistic=lambda w: np.linalg.norm(np.asarray(w)[:, 2:], axis=1),
                mean=np.zeros(4), covariance=np.eye(4) * 3 / 0.49),
    ), "norm-laplace"),
    DiscreteLaplace: Family(DiscreteLaplace, (
        Example("unit grid", DiscreteLaplace(scale=2.0, grid_exponent=0), _laplace_lattice(2.0, 1.0),
                _laplace_lattice(2.6, 1.0), on_grid=1.0),
        Example("fine grid", DiscreteLaplace(scale=0.6, grid_exponent=-3), _laplace_lattice(0.6, 0.125),
                _laplace_lattice(0.78, 0.125), on_grid=0.125),
    ), "discrete-laplace"),
    DiscreteGaussian: Family(DiscreteGaussian, (
        Example("unit grid", DiscreteGaussian(sigma=1.0, grid_exponent=0), _gaussian_lattice(1.0, 1.0),
                _gaussian_lattice(1.3, 1.0), on_grid=1.0),
        Example("half grid", DiscreteGaussian(sigma=1.5, grid_exponent=-1), _gaussian_lattice(1.5, 0.5),
                _gaussian_lattice(1.95, 0.5), on_grid=0.5),
    ), "discrete-gaussian"),
    type(hardened(Laplace(scale=1.0), sensitivity=1.0, bound=1.0)): Family(
        type(hardened(Laplace(scale=1.0), sensitivity=1.0, bound=1.0)), (
            Example("hardened Laplace", hardened(Laplace(scale=1.0), sensitivity=1.0, bound=10.0, grid_exponent=-1),
                    _rounded(stats.laplace(scale=1.0).cdf, 0.5), _rounded(stats.laplace(scale=1.3).cdf, 0.5),
                    on_grid=0.5),
            Example("hardened Gaussian", hardened(Gaussian.from_std(2.0), sensitivity=1.0, bound=10.0,
                                                  grid_exponent=-2),
                    _rounded(stats.norm(scale=2.0).cdf, 0.25), _rounded(stats.norm(scale=2.6).cdf, 0.25),
                    on_grid=0.25),
        ), "hardened"),
    SnappedMechanism: Family(SnappedMechanism, (
        Example("snapped Laplace", SnappedMechanism(mechanism=Laplace(scale=1.0), sensitivity=1.0, bound=10.0,
                                                    grid_exponent=-1),
                _rounded(stats.laplace(scale=1.0).cdf, 0.5), _rounded(stats.laplace(scale=1.3).cdf, 0.5),
                on_grid=0.5),
        Example("snapped discrete Laplace on counts", SnappedMechanism(
            mechanism=DiscreteLaplace(scale=2.0, grid_exponent=0), sensitivity=1.0, bound=2.0**40,
            integer_values=True), _laplace_lattice(2.0, 1.0), _laplace_lattice(2.6, 1.0), on_grid=1.0),
    ), "snapped"),
    RaisedCosine: Family(RaisedCosine, (
        Example("[−1, 3]", RaisedCosine(lower=-1.0, upper=3.0), RaisedCosineLaw(a=-0.5, b=0.5)(loc=1.0, scale=4.0),
                RaisedCosineLaw(a=-0.5, b=0.5)(loc=1.0, scale=5.2), mean=1.0,
                covariance=4.0 * (1.0 / 3.0 - 2.0 / math.pi**2)),  # half-width² (1/3 − 2/π²)
    ), "none", "bounded support: no ε-DP; its guarantee is Fisher information"),
    TabulatedDensity: Family(TabulatedDensity, (
        Example("triangle", TabulatedDensity(grid=[-2.0, 0.0, 2.0], values=[0.0, 1.0, 0.0]), _triangle_cdf(2.0),
                _triangle_cdf(2.6), mean=0.0, covariance=4.0 / 6.0),
    ), "none", "bounded support: no ε-DP"),
    EllipsoidalNoise: Family(EllipsoidalNoise, (
        Example("2-D ellipse", EllipsoidalNoise(region=Ellipsoid(center=[0.0, 0.0], shape=_SHAPE)), _DiskRadius(),
                _DiskRadius(1.3), statistic=_ellipse_radius, mean=np.zeros(2)),
    ), "none", "bounded support: no ε-DP"),
}

#: Families left out of the sampling tests, with the reason (they are covered elsewhere).
EXCLUDED: dict[str, str] = {
    "InitialStateNoise": "Gaussian noise C Aᵏ z of Theorem 4 (Farokhi & Sandberg): its guarantee is Fisher information "
    "about x₀, checked against a direct matrix computation in tests/systems",
    "StatisticalInputNoise": "white Gaussian output noise certified (0, δ)-DP for Wasserstein adjacency of input laws "
    "(Liu, Kawano & Cao), not record adjacency; its theorems are checked in tests/systems",
    "RecoverabilityResponse": "a linear-Gaussian response whose guarantee is an MMSE (Nageswaran), checked by Monte "
    "Carlo in tests/recoverability",
    "TiltedRaisedCosine": "the printed policy of a paper erratum, kept for the reproduction report (tests/reproduce)",
    "FiniteElementNoise": "a finite-element density needs an eigen-solve per instance; its exact sampler is tested "
    "against an independent P2 evaluation and projection cdf in tests/fisher/test_fem_noise.py",
}
