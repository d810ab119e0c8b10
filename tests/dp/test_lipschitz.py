"""Lipschitz privacy (Definition 2, Propositions 3–4): analytic constants, the numerical search, ε = L·α."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privnoise.dp.lipschitz import (
    LipschitzConstant,
    dual_norm,
    epsilon_of_lipschitz,
    lipschitz_constant,
    lipschitz_for_epsilon,
)
from privnoise.exceptions import DimensionError, InvalidParameterError
from privnoise.mechanisms.gaussian import Gaussian
from privnoise.mechanisms.laplace import Laplace
from privnoise.mechanisms.norm_laplace import L2Laplace, MultiUserLaplace
from privnoise.mechanisms.raised_cosine import RaisedCosine
from privnoise.mechanisms.tabulated import TabulatedDensity

B = np.array([0.5, 2.0, 1.0])
CASES = [
    # (mechanism, norm, block, closed form)
    (Laplace(scale=0.25), "l1", None, 4.0),
    (Laplace(scale=B), "l1", None, 2.0),
    (Laplace(scale=B), "l2", None, math.sqrt(4 + 0.25 + 1)),
    (Laplace(scale=B), "linf", None, 2 + 0.5 + 1),
    (Laplace(scale=[0.5, 2.0, 1.0, 4.0]), "l1-l2", 2, math.sqrt(4 + 0.25)),
    (L2Laplace(epsilon=0.7, dim=3), "l2", None, 0.7),
    (L2Laplace(epsilon=0.7, dim=3), "l1", None, 0.7),
    (L2Laplace(epsilon=0.7, dim=4), "linf", None, 0.7 * 2),
    (L2Laplace(epsilon=0.7, dim=4), "l1-l2", 2, 0.7),
    (MultiUserLaplace(epsilon=1.3, users=3, user_dim=2), "l1-l2", 2, 1.3),
    (MultiUserLaplace(epsilon=1.3, users=3, user_dim=2), "l2", None, 1.3 * math.sqrt(3)),
    (MultiUserLaplace(epsilon=1.3, users=3, user_dim=2), "l1", None, 1.3),
    (MultiUserLaplace(epsilon=1.3, users=3, user_dim=2), "linf", None, 1.3 * 3 * math.sqrt(2)),
]


@pytest.mark.parametrize("mech, norm, block, expected", CASES)
def test_analytic_matches_closed_form_and_numerical_search(mech, norm, block, expected):
    analytic = lipschitz_constant(mech, norm=norm, block=block)
    assert analytic.method == "analytic"
    assert analytic.value == pytest.approx(expected, rel=1e-12)
    numerical = lipschitz_constant(mech, norm=norm, block=block, method="numerical")
    assert numerical.method == "numerical"
    # the search is a lower estimate that must reach the supremum (attained on whole cones for these families)
    assert numerical.value <= expected * (1 + 1e-9)
    assert numerical.value == pytest.approx(expected, rel=1e-4)


def test_multi_user_with_other_block_falls_back_to_numerical():
    mech = MultiUserLaplace(epsilon=1.0, users=2, user_dim=2)
    lc = lipschitz_constant(mech, norm="l1-l2", block=4)  # the whole vector as one block: ‖(û₁, û₂)‖₂ = √2
    assert lc.method == "numerical"
    assert lc.value == pytest.approx(math.sqrt(2), rel=1e-4)
    with pytest.raises(InvalidParameterError, match="`method` of `lipschitz_constant`"):
        lipschitz_constant(mech, norm="l1-l2", block=4, method="analytic")


@pytest.mark.parametrize(
    "mech",
    [
        Gaussian(cov=2.0),
        Gaussian(cov=np.diag([1.0, 3.0])),
        RaisedCosine(lower=-1.0, upper=2.0),
        TabulatedDensity(grid=[-1.0, 0.0, 1.0], values=[0.0, 1.0, 0.0]),
    ],
)
@pytest.mark.parametrize("method", ["auto", "numerical"])
def test_not_lipschitz_private(mech, method):
    lc = lipschitz_constant(mech, norm="l2", method=method)
    assert lc.value == math.inf and not lc.is_private
    assert lc.epsilon(1.0) == math.inf


def test_proposition_3_privacy_loss_by_search():
    """sup_y |log g(y − u) − log g(y − u′)| over ‖u − u′‖ ≤ α equals L·α (attained far along u − u′)."""
    rng = np.random.default_rng(0)
    for mech, norm, alpha in [
        (L2Laplace(epsilon=0.8, dim=3), "l2", 1.5),
        (MultiUserLaplace(epsilon=0.5, users=2, user_dim=3), "l1-l2", 2.0),
        (Laplace(scale=[1.0, 0.5]), "l1", 0.3),
    ]:
        lc = lipschitz_constant(mech, norm=norm, block=3 if norm == "l1-l2" else None)
        claimed = lc.epsilon(alpha)
        worst = 0.0
        for _ in range(200):
            d = rng.normal(size=mech.dim)
            d *= alpha / dual_norm_primal(d, norm)
            y = rng.normal(size=(400, mech.dim)) * 5 + np.outer(rng.uniform(-50, 50, 400), d)
            loss = np.abs(mech.logpdf(y) - mech.logpdf(y - d))
            worst = max(worst, float(loss.max()))
        assert worst <= claimed * (1 + 1e-12)
        # a pair of neighbours and an output that attain the bound
        if norm == "l1":
            d = np.zeros(mech.dim)
            d[int(np.argmin(mech.scale))] = alpha
        else:
            d = np.zeros(mech.dim)
            d[0] = alpha
        y = 100 * d
        assert abs(mech.logpdf(y) - mech.logpdf(y - d)) == pytest.approx(claimed, rel=1e-9)


def dual_norm_primal(d: np.ndarray, norm: str) -> float:
    """The adjacency (primal) norm, written independently of the module."""
    if norm == "l1":
        return float(np.abs(d).sum())
    if norm == "l2":
        return float(np.linalg.norm(d))
    return float(sum(np.linalg.norm(b) for b in d.reshape(-1, 3)))


def test_conversions_round_trip():
    for lip, alpha in [(0.5, 2.0), (3.0, 0.1), (0.0, 1.0)]:
        eps = epsilon_of_lipschitz(lip, alpha)
        assert eps == pytest.approx(lip * alpha)
        if lip > 0:
            assert lipschitz_for_epsilon(eps, alpha) == pytest.approx(lip)
    assert epsilon_of_lipschitz(math.inf, 1.0) == math.inf
    assert LipschitzConstant(value=2.0, norm="l2").epsilon(0.25) == 0.5


def test_dual_norm():
    z = np.array([[3.0, -4.0, 0.0, 12.0]])
    assert dual_norm(z, "l1").tolist() == [12.0]
    assert dual_norm(z, "l2").tolist() == [13.0]
    assert dual_norm(z, "linf").tolist() == [19.0]
    assert dual_norm(z, "l1-l2", block=2).tolist() == [12.0]


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: lipschitz_constant(L2Laplace(epsilon=1.0, dim=2), norm="l3"), "norm"),
        (lambda: lipschitz_constant(L2Laplace(epsilon=1.0, dim=2), norm="l1-l2"), "block"),
        (lambda: lipschitz_constant(L2Laplace(epsilon=1.0, dim=3), norm="l1-l2", block=2), "block"),
        (lambda: lipschitz_constant(L2Laplace(epsilon=1.0, dim=2), norm="l2", block=2), "block"),
        (lambda: lipschitz_constant("laplace"), "mechanism"),
        (lambda: lipschitz_constant(L2Laplace(epsilon=1.0, dim=2), method="guess"), "method"),
        (lambda: lipschitz_constant(L2Laplace(epsilon=1.0, dim=2), scale=-1.0), "scale"),
        (lambda: epsilon_of_lipschitz(1.0, 0.0), "alpha"),
        (lambda: epsilon_of_lipschitz(np.nan, 1.0), "lipschitz"),
        (lambda: epsilon_of_lipschitz(-1.0, 1.0), "lipschitz"),
        (lambda: lipschitz_for_epsilon(np.inf, 1.0), "epsilon"),
        (lambda: lipschitz_for_epsilon(1.0, -2.0), "alpha"),
    ],
)
def test_bad_inputs(call, name):
    with pytest.raises(InvalidParameterError, match=f"`{name}`"):
        call()


def test_dimension_error_for_block():
    with pytest.raises(DimensionError):
        dual_norm([1.0, 2.0, 3.0], "l1-l2", block=2)
