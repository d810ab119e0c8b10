"""W2, KL, Lemmas III.1–III.2, the three designs and the exact total-variation audit."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from privnoise.exceptions import DimensionError, InvalidParameterError
from privnoise.systems import (
    GaussianInput,
    StateSpace,
    gaussian_total_variation,
    is_adjacent,
    kl_divergence,
    lemma_iii1_bound,
    monte_carlo_total_variation,
    output_law,
    pushforward,
    statistical_input_noise,
    symmetrized_kl,
    theorem_iii3_condition,
    total_variation,
    wasserstein2,
)

RNG = np.random.default_rng(11)


def _law(d: int) -> GaussianInput:
    m = RNG.normal(size=(d, d))
    return GaussianInput(mean=RNG.normal(size=d), cov=m @ m.T + 0.2 * np.eye(d))


def _sqrt(s: np.ndarray) -> np.ndarray:
    v, u = np.linalg.eigh(s)
    return (u * np.sqrt(v)) @ u.T


def test_w2_closed_forms() -> None:
    p, q = GaussianInput(mean=[1.0], cov=[[4.0]]), GaussianInput(mean=[-0.5], cov=[[0.25]])
    assert wasserstein2(p, q) == pytest.approx(math.sqrt(1.5**2 + (2 - 0.5) ** 2), rel=1e-12)
    for d in (2, 4):
        a, b = _law(d), _law(d)
        nuclear = np.linalg.svd(_sqrt(a.cov) @ _sqrt(b.cov), compute_uv=False).sum()  # second method
        w2sq = np.sum((a.mean - b.mean) ** 2) + np.trace(a.cov) + np.trace(b.cov) - 2 * nuclear
        assert wasserstein2(a, b) ** 2 == pytest.approx(w2sq, rel=1e-9)
    # products add in W2²
    a1, a2, b1, b2 = _law(2), _law(2), _law(3), _law(3)
    assert wasserstein2(a1 & b1, a2 & b2) ** 2 == pytest.approx(
        wasserstein2(a1, a2) ** 2 + wasserstein2(b1, b2) ** 2
    )


def test_w2_monte_carlo_quantile_coupling() -> None:
    g = np.random.default_rng(1)
    x = np.sort(g.normal(2.0, 1.5, 400_000))
    y = np.sort(g.normal(-1.0, 0.5, 400_000))
    mc = math.sqrt(np.mean((x - y) ** 2))
    exact = wasserstein2(GaussianInput(mean=[2.0], cov=[[2.25]]), GaussianInput(mean=[-1.0], cov=[[0.25]]))
    assert mc == pytest.approx(exact, rel=5e-3)


def test_kl_closed_form_vs_quadrature_and_mc() -> None:
    p, q = GaussianInput(mean=[0.3], cov=[[1.7]]), GaussianInput(mean=[-0.4], cov=[[0.6]])

    def f(x: float) -> float:
        return float(
            stats.norm.pdf(x, 0.3, math.sqrt(1.7))
            * (stats.norm.logpdf(x, 0.3, math.sqrt(1.7)) - stats.norm.logpdf(x, -0.4, math.sqrt(0.6)))
        )

    assert kl_divergence(p, q) == pytest.approx(integrate.quad(f, -40, 40, limit=200)[0], rel=1e-9)
    a, b = _law(3), _law(3)
    x = np.random.default_rng(2).multivariate_normal(a.mean, a.cov, 400_000)
    mc = np.mean(
        stats.multivariate_normal(a.mean, a.cov).logpdf(x)
        - stats.multivariate_normal(b.mean, b.cov).logpdf(x)
    )
    assert kl_divergence(a, b) == pytest.approx(mc, rel=0.02, abs=0.02)


def test_lemma_iii1_and_iii2_hold_on_random_laws() -> None:
    for _ in range(200):
        d = int(RNG.integers(1, 5))
        a, b = _law(d), _law(d)
        assert symmetrized_kl(a, b) <= lemma_iii1_bound(a, b) * (1 + 1e-9)
        f = RNG.normal(size=(int(RNG.integers(1, 5)), d))
        noise = np.eye(f.shape[0]) * RNG.uniform(0.1, 2.0)
        lhs = wasserstein2(pushforward(a, f, noise), pushforward(b, f, noise))
        assert lhs <= np.linalg.norm(f, 2) * wasserstein2(a, b) * (1 + 1e-9) + 1e-12


def test_adjacency_of_occupancy_laws() -> None:
    x0 = GaussianInput(mean=[90], cov=[[10]])
    u = [GaussianInput.iid(mean=20 + k, var=0.1 * k, steps=4) for k in (1, 2)]
    assert wasserstein2(x0 & u[0], x0 & u[1]) == pytest.approx(
        math.sqrt(4 * (1 + (math.sqrt(0.1) - math.sqrt(0.2)) ** 2))
    )
    assert is_adjacent(x0 & u[0], x0 & u[1], 2.02)
    assert not is_adjacent(x0 & u[0], x0 & u[1], 2.0)


def test_tv_closed_form_quadrature_and_mc() -> None:
    # equal covariances: 2Φ(d/2) − 1
    s = np.array([[2.0, 0.3], [0.3, 1.0]])
    d = math.sqrt(np.array([1.0, -1.0]) @ np.linalg.solve(s, [1.0, -1.0]))
    assert gaussian_total_variation([0, 0], s, [1, -1], s) == pytest.approx(
        2 * stats.norm.cdf(d / 2) - 1, rel=1e-12
    )
    # 1-D different variances: direct quadrature of ½∫|p − q|
    for m2, v2 in ((0.0, 4.0), (1.0, 0.3), (-2.0, 9.0)):
        f = lambda x, m2=m2, v2=v2: 0.5 * abs(stats.norm.pdf(x) - stats.norm.pdf(x, m2, math.sqrt(v2)))  # noqa: E731
        quad = sum(integrate.quad(f, a, b, limit=200)[0] for a, b in ((-60, -3), (-3, 0), (0, 3), (3, 60)))
        assert gaussian_total_variation([0.0], [[1.0]], [m2], [[v2]]) == pytest.approx(quad, abs=1e-8)
    # 3-D different covariances: Monte Carlo
    a, b = _law(3), _law(3)
    exact = gaussian_total_variation(a.mean, a.cov, b.mean, b.cov)
    mc, se = monte_carlo_total_variation(a.mean, a.cov, b.mean, b.cov, draws=300_000, rng=8)
    assert abs(exact - mc) < 6 * se


def _building() -> tuple[StateSpace, GaussianInput]:
    return StateSpace(A=[[0.9]], B=[[1.0]], C=[[1.0]], D=[[0.0]]), GaussianInput(mean=[90], cov=[[10]])


def test_theorem_iii5_sigma_and_printed_values() -> None:
    sys, x0 = _building()
    n2 = np.linalg.norm(np.array([[0, 0, 0], [1, 0, 0], [0.9, 1, 0]]), 2)
    for delta, printed in ((0.1, 13.9193), (0.2, 6.9596)):
        noise = statistical_input_noise(sys, horizon=2, c=2.02, delta=delta, x0_public=x0)
        assert noise.sigma == pytest.approx(2.02 * n2 / (math.sqrt(2) * delta), rel=1e-12)
        assert noise.sigma > printed
        assert 0.9 * n2 / delta == pytest.approx(printed, abs=5e-5)


@pytest.mark.parametrize("delta", [0.05, 0.1, 0.2, 0.4])
def test_every_design_meets_delta_exactly(delta: float) -> None:
    sys, x0 = _building()
    u1 = GaussianInput.iid(mean=21, var=0.1, steps=3)
    u2 = GaussianInput.iid(mean=22, var=0.2, steps=3)
    c = wasserstein2(u1, u2)
    designs = [
        statistical_input_noise(sys, horizon=2, c=c, delta=delta, x0_public=x0),
        statistical_input_noise(sys, horizon=2, c=c, delta=delta),
        statistical_input_noise(sys, horizon=2, c=c, delta=delta, pair=(x0 & u1, x0 & u2)),
    ]
    for noise in designs:
        assert total_variation(sys, noise, (x0, u1), (x0, u2)) <= delta
    # Theorem III.3 is met by its own design; Corollary III.4 needs at least as much noise
    assert theorem_iii3_condition(
        sys, horizon=2, c=c, delta=delta, noise_cov=designs[2].covariance(), pair=(x0 & u1, x0 & u2)
    )
    assert designs[1].sigma >= designs[2].sigma


def test_multi_output_design_meets_delta() -> None:
    sys = StateSpace(
        A=[[0.5, 0.1], [0.0, 0.7]], B=[[1.0], [0.5]], C=[[1.0, 0.0], [0.0, 1.0]], D=[[0.1], [0.0]]
    )
    x0 = GaussianInput(mean=[1.0, 2.0], cov=[[0.5, 0.1], [0.1, 0.4]])
    u1 = GaussianInput.iid(mean=0.0, var=0.3, steps=2)
    u2 = GaussianInput.iid(mean=0.5, var=0.6, steps=2)
    c = wasserstein2(u1, u2)
    for delta in (0.1, 0.3):
        noise = statistical_input_noise(sys, horizon=1, c=c, delta=delta, x0_public=x0)
        tv = total_variation(sys, noise, (x0, u1), (x0, u2))
        p = output_law(sys, 1, (x0, u1), noise.covariance())
        q = output_law(sys, 1, (x0, u2), noise.covariance())
        mc, se = monte_carlo_total_variation(p.mean, p.cov, q.mean, q.cov, draws=200_000, rng=3)
        assert tv <= delta and abs(tv - mc) < 6 * se


def test_bad_inputs() -> None:
    sys, x0 = _building()
    with pytest.raises(InvalidParameterError, match="delta"):
        statistical_input_noise(sys, horizon=2, c=1.0, delta=1.5)
    with pytest.raises(InvalidParameterError, match="`c`"):
        statistical_input_noise(sys, horizon=2, c=float("nan"), delta=0.1)
    with pytest.raises(DimensionError, match="x0_public"):
        statistical_input_noise(
            sys, horizon=2, c=1.0, delta=0.1, x0_public=GaussianInput(mean=[0, 0], cov=np.eye(2))
        )
    u1 = GaussianInput.iid(mean=21, var=0.1, steps=3)
    u2 = GaussianInput.iid(mean=25, var=0.2, steps=3)
    with pytest.raises(InvalidParameterError, match="c-adjacent"):
        statistical_input_noise(sys, horizon=2, c=1.0, delta=0.1, pair=(x0 & u1, x0 & u2))
    with pytest.raises(InvalidParameterError, match="semidefinite"):
        GaussianInput(mean=[0.0], cov=[[-1.0]])
    with pytest.raises(DimensionError):
        GaussianInput(mean=[0.0, 1.0], cov=[[1.0]])
