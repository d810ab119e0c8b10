"""Private quadratic optimisation: projections (KKT), optimum, gap ∝ ε, Tr 𝓘 = n²/ε, Proposition 1, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize

import privnoise.optimization as po
from privnoise.dp import gaussian_epsilon
from privnoise.exceptions import DimensionError, InvalidParameterError
from privnoise.mechanisms import Gaussian, Laplace
from privnoise.optimization.guarantees import iterates_information_matrix

RNG = np.random.default_rng(20240601)


def _psd(n: int, seed: int, floor: float = 0.5) -> np.ndarray:
    m = np.random.default_rng(seed).standard_normal((n, n))
    return m @ m.T / n + floor * np.eye(n)


# -- projections: exactness via KKT -------------------------------------------------------------------------------
def _kkt_polyhedron(y, x, g, h, a=None, b=None, tol=1e-9):
    """Second method: active set at y, then multipliers by bounded least squares; residual of stationarity."""
    assert np.all(g @ y <= h + tol)
    active = g @ y >= h - 1e-7
    blocks = [g[active].T]
    lo = [np.zeros(int(active.sum()))]
    if a is not None:
        assert np.allclose(a @ y, b, atol=tol)
        blocks.append(a.T)
        lo.append(np.full(a.shape[0], -np.inf))
    mat = np.hstack(blocks)
    lower = np.concatenate(lo)
    if mat.shape[1] == 0:
        return float(np.linalg.norm(y - x))
    res = optimize.lsq_linear(mat, x - y, bounds=(lower, np.full(lower.size, np.inf)), tol=1e-14)
    return float(np.linalg.norm(mat @ res.x - (x - y)))


def test_box_projection_kkt():
    box = po.Box([-1.0, 0.0, -np.inf], [1.0, np.inf, 2.0])
    pts = RNG.standard_normal((200, 3)) * 3
    y = box.project(pts)
    # KKT: y − x is in the normal cone: (y−x)_i ≥ 0 at lower, ≤ 0 at upper, 0 in the interior
    d = y - pts
    at_lo, at_hi = y <= box.lower + 1e-15, y >= box.upper - 1e-15
    assert np.all(d[~at_lo & ~at_hi] == 0)
    assert np.all(d[at_lo & ~at_hi] >= 0) and np.all(d[at_hi & ~at_lo] <= 0)


def test_ball_projection_kkt():
    ball = po.Ball([1.0, -1.0], 0.7)
    pts = RNG.standard_normal((300, 2)) * 2
    y = ball.project(pts)
    r = np.linalg.norm(y - ball.center, axis=1)
    outside = np.linalg.norm(pts - ball.center, axis=1) > 0.7
    np.testing.assert_allclose(r[outside], 0.7, rtol=1e-13)
    np.testing.assert_array_equal(y[~outside], pts[~outside])
    # x − y = μ (y − c) with μ ≥ 0 on the boundary
    mu = np.sum((pts - y) * (y - ball.center), axis=1)[outside] / 0.49
    np.testing.assert_allclose((pts - y)[outside], mu[:, None] * (y - ball.center)[outside], atol=1e-12)
    assert np.all(mu >= 0)


def test_affine_projection_kkt():
    a = RNG.standard_normal((2, 4))
    b = a @ RNG.standard_normal(4)
    aff = po.Affine(a, b)
    pts = RNG.standard_normal((50, 4))
    y = aff.project(pts)
    np.testing.assert_allclose(y @ a.T, np.broadcast_to(b, (50, 2)), atol=1e-12)
    # x − y in the row space of A: (x − y) = Aᵀν
    nu = np.linalg.lstsq(a.T, (pts - y).T, rcond=None)[0]
    np.testing.assert_allclose(a.T @ nu, (pts - y).T, atol=1e-12)
    np.testing.assert_allclose(y, pts - (a @ pts.T - b[:, None]).T @ np.linalg.pinv(a).T, atol=1e-12)


@pytest.mark.parametrize("with_equality", [False, True])
def test_polyhedron_projection_kkt_and_slsqp(with_equality):
    g = RNG.standard_normal((6, 3))
    h = np.abs(RNG.standard_normal(6)) + 0.1
    a, b = (np.array([[1.0, 1.0, 1.0]]), np.array([0.2])) if with_equality else (None, None)
    poly = po.Polyhedron(g, h, equality_matrix=a, equality_offset=b)
    for x in RNG.standard_normal((25, 3)) * 3:
        y, lam = poly.project_with_multipliers(x)
        assert _kkt_polyhedron(y, x, g, h, a, b) < 1e-9
        # the method's own multipliers: λ ≥ 0, complementary slackness, stationarity on null(A)
        assert np.all(lam >= 0) and np.all(np.abs(lam * (g @ y - h)) < 1e-9)
        resid = y - x + g.T @ lam
        if a is not None:
            resid = resid - a.T @ np.linalg.lstsq(a.T, resid, rcond=None)[0]
        assert np.linalg.norm(resid) < 1e-9
        cons = [optimize.LinearConstraint(g, -np.inf, h)]
        if a is not None:
            cons.append(optimize.LinearConstraint(a, b, b))
        ref = optimize.minimize(
            lambda v, x=x: 0.5 * (v - x) @ (v - x),
            np.zeros(3),
            jac=lambda v, x=x: v - x,
            constraints=cons,
            method="SLSQP",
            options={"ftol": 1e-14},
        )
        np.testing.assert_allclose(y, ref.x, atol=1e-6)
    batch = RNG.standard_normal((4, 5, 3))
    assert poly.project(batch).shape == (4, 5, 3)


# -- the optimum --------------------------------------------------------------------------------------------------
CONSTRAINTS = {
    "none": None,
    "box": po.Box([-0.2, -1.0, 0.0], [0.3, 1.0, 0.1]),
    "ball": po.Ball([0.5, 0.0, 0.0], 0.4),
    "affine": po.Affine([[1.0, -1.0, 2.0]], [0.5]),
    "polyhedron": po.Polyhedron([[1.0, 1.0, 1.0], [-1.0, 0.0, 0.0], [0.0, 1.0, -1.0]], [0.2, 0.5, 0.0]),
}


@pytest.mark.parametrize("name", list(CONSTRAINTS))
def test_noiseless_descent_reaches_scipy_optimum(name):
    qm, qv = _psd(3, 1), np.array([1.0, -2.0, 0.5])
    prob = po.QuadraticProgram(qm, qv, constraint=CONSTRAINTS[name])
    res = po.private_gradient_descent(prob, noise_variance=0.0, iterations=3000)
    bounds, cons = (None, []) if prob.constraint is None else prob.constraint.scipy_constraints()
    ref = optimize.minimize(
        lambda v: 0.5 * v @ qm @ v + qv @ v,
        np.zeros(3),
        jac=lambda v: qm @ v + qv,
        bounds=bounds,
        constraints=cons,
        method="SLSQP",
        options={"ftol": 1e-15, "maxiter": 1000},
    )
    np.testing.assert_allclose(res.x, ref.x, atol=1e-6)
    np.testing.assert_allclose(res.x, prob.solve().x, atol=1e-8)
    assert abs(res.objective_gap) < 1e-10
    assert res.guarantee.fisher_trace == math.inf and res.guarantee.differential_privacy is None


def test_inverse_time_step_and_constant_step():
    prob = po.QuadraticProgram(_psd(2, 3), [1.0, 1.0])
    lam = prob.strong_convexity
    np.testing.assert_allclose(
        po.InverseTimeStep(strong_convexity=lam).sizes(3), [1 / lam, 1 / (2 * lam), 1 / (3 * lam)]
    )
    res = po.private_gradient_descent(
        prob, noise_variance=0.0, iterations=2000, step=po.InverseTimeStep(strong_convexity=lam)
    )
    assert res.objective_gap < 1e-6
    assert np.all(
        po.private_gradient_descent(prob, noise_variance=0.0, iterations=3, step=0.1).step_sizes == 0.1
    )


# -- utility: the gap grows in proportion to ε ---------------------------------------------------------------------
def test_gap_proportional_to_noise_variance_monte_carlo():
    prob = po.QuadraticProgram(_psd(4, 7), np.array([0.5, -1.0, 0.3, 0.0]))
    opt = prob.solve().value
    eps = np.array([0.01, 0.03, 0.1, 0.3])
    exact = np.array([po.expected_final_objective(prob, noise_variance=e, iterations=100) - opt for e in eps])
    mc = np.array(
        [
            po.final_objectives(prob, noise_variance=e, iterations=100, replicas=4000, rng=11 + i).mean()
            - opt
            for i, e in enumerate(eps)
        ]
    )
    # the noiseless part is below rounding: gap/ε is one constant (closed form) and Monte Carlo agrees within 5 %
    np.testing.assert_allclose(exact / eps, exact[0] / eps[0], rtol=1e-6)
    np.testing.assert_allclose(mc / eps, exact / eps, rtol=0.05)


def test_gap_proportional_with_box_constraint_monte_carlo():
    prob = po.QuadraticProgram(
        _psd(3, 2), np.array([-2.0, 1.0, 0.0]), constraint=po.Box(-np.ones(3), 0.5 * np.ones(3))
    )
    opt = prob.solve().value
    eps = np.array([0.001, 0.004])
    gaps = np.array(
        [
            po.final_objectives(prob, noise_variance=e, iterations=100, replicas=4000, rng=3).mean() - opt
            for e in eps
        ]
    )
    assert np.all(gaps > 0)
    np.testing.assert_allclose(gaps[1] / gaps[0], 4.0, rtol=0.1)


# -- privacy -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("n", "eps"), [(1, 0.1), (3, 0.5), (10, 2.0)])
def test_fisher_trace_theorem1(n, eps):
    prob = po.QuadraticProgram(np.eye(n), np.ones(n))
    res = po.private_gradient_descent(prob, noise_variance=eps, iterations=5, rng=0)
    assert res.guarantee.fisher_trace == pytest.approx(n * n / eps, rel=1e-12)
    mech = po.optimal_noise(eps, n)
    assert mech.second_moment() == pytest.approx(eps)
    # a feasible competitor with the same E‖w‖² (Laplace per coordinate) has twice the information
    lap = Laplace(scale=math.sqrt(eps / n / 2))
    res_l = po.private_gradient_descent(prob, mechanism=lap, iterations=5, rng=0)
    assert res_l.guarantee.fisher_trace == pytest.approx(2 * n * n / eps, rel=1e-9)
    assert res_l.guarantee.differential_privacy is None


def test_information_matrix_kronecker_form():
    it = RNG.standard_normal((7, 2))
    j = np.array([[3.0, 0.5], [0.5, 1.0]])
    direct = iterates_information_matrix(it, j)
    g = po.iterates_guarantee(it, Gaussian(cov=np.linalg.inv(j)))
    gram = np.hstack([it[:-1], np.ones((6, 1))])
    np.testing.assert_allclose(direct, np.kron(gram.T @ gram, j), atol=1e-12)
    assert g.cramer_rao_bound == pytest.approx(np.trace(np.linalg.inv(direct)), rel=1e-10)
    assert g.proposition1_bound == pytest.approx(36.0 / np.trace(direct), rel=1e-10)
    assert g.proposition1_bound <= g.cramer_rao_bound


def test_proposition1_bound_against_monte_carlo_unbiased_estimator():
    """Model (6) given the iterates: least squares is unbiased with MSE = Tr(𝓘_θ⁻¹) ≥ the Proposition 1 bound."""
    n, eps, t = 2, 0.5, 12
    qm, qv = np.array([[1.0, 0.3], [0.3, 0.6]]), np.array([0.4, -0.2])
    prob = po.QuadraticProgram(qm, qv)
    res = po.private_gradient_descent(prob, noise_variance=eps, iterations=t, step=0.3, x0=[2.0, -2.0], rng=5)
    x = res.iterates
    a = np.vstack([-np.kron(np.append(xk, 1.0)[None, :], np.eye(n)) for xk in x[:-1]])  # the A of (6)
    theta = np.concatenate([qm.reshape(-1, order="F"), qv])
    reps = 20000
    w = np.random.default_rng(8).normal(scale=math.sqrt(eps / n), size=(reps, t * n))
    y = a @ theta + w
    est = np.linalg.lstsq(a, y.T, rcond=None)[0].T
    mse = np.mean(np.sum((est - theta) ** 2, axis=1))
    assert np.abs(est.mean(axis=0) - theta).max() < 0.05 * math.sqrt(mse)  # unbiased
    assert mse == pytest.approx(res.guarantee.cramer_rao_bound, rel=0.03)
    assert res.guarantee.proposition1_bound <= mse
    # the observed y really are (x[k+1] − x[k])/α_k = A_k θ − w[k]
    y_obs = (np.diff(x, axis=0) / 0.3).reshape(-1)
    assert np.linalg.norm(y_obs - a @ theta) > 0


def test_dp_statement_composition():
    n, eps, t = 3, 0.3, 50
    prob = po.QuadraticProgram(np.eye(n), np.zeros(n), constraint=po.Ball(np.zeros(n), 1.0))
    res = po.private_gradient_descent(
        prob, noise_variance=eps, iterations=t, gradient_sensitivity=0.05, delta=1e-6, rng=1
    )
    dp = res.guarantee.differential_privacy
    sigma = math.sqrt(eps / n)
    assert dp is not None and dp.delta == 1e-6
    assert dp.epsilon == pytest.approx(
        gaussian_epsilon(sigma / math.sqrt(t), 1e-6, sensitivity=0.05), rel=1e-12
    )
    from privnoise.dp import accountant_for

    acc = accountant_for(mode="pld")
    acc.record_gaussian(sigma, sensitivity=0.05, count=t)
    # the PLD accountant is a pessimistic upper bound on the exact composition
    assert dp.epsilon <= acc.epsilon(1e-6) * (1 + 1e-9)
    assert acc.epsilon(1e-6) == pytest.approx(dp.epsilon, rel=0.02)


# -- regression (Section III) --------------------------------------------------------------------------------------
def test_regression_cost_expansion_corrected():
    u = RNG.uniform(-1, 1, (40, 3))
    z = RNG.uniform(0, 1, 40)
    prob = po.regression_problem(u, z, ridge=0.5)
    ut = np.hstack([u, np.ones((40, 1))])
    for x in RNG.standard_normal((5, 4)):
        direct = np.mean((ut @ x - z) ** 2) + 0.5 * x @ x
        assert prob.objective(x) == pytest.approx(direct, rel=1e-12)


def test_private_linear_regression_diabetes():
    data = po.load_diabetes()
    assert data.features.shape == (442, 10) and np.abs(data.features).max() <= 1.0
    model = po.private_linear_regression(
        data.features, data.labels, noise_variance=0.0, ridge=0.5, iterations=300
    )
    assert model.objective_gap < 1e-8
    exact = np.linalg.solve(model.problem.Q, -model.problem.q)
    np.testing.assert_allclose(np.append(model.weights, model.intercept), exact, atol=1e-6)
    noisy = po.private_linear_regression(
        data.features,
        data.labels,
        noise_variance=0.1,
        ridge=0.5,
        iterations=100,
        radius=5.0,
        feature_bound=1.0,
        label_bound=1.0,
        rng=2,
    )
    assert noisy.guarantee.fisher_trace == pytest.approx(121 / 0.1)
    assert noisy.guarantee.differential_privacy is not None
    assert noisy.predict(data.features[:3]).shape == (3,)


ADULT_SAMPLE = """\
39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, 2174, 0, 40, United-States, <=50K
50, Self-emp-not-inc, 83311, Bachelors, 13, Married-civ-spouse, Exec-managerial, Husband, White, Male, 0, 0, 13, United-States, <=50K

52, Self-emp-inc, 287927, HS-grad, 9, Married-civ-spouse, Exec-managerial, Wife, White, Female, 15024, 0, 40, United-States, >50K
31, Private, 45781, Masters, 14, Never-married, Prof-specialty, Not-in-family, White, Female, 14084, 0, 50, ?, >50K.
"""


def test_load_adult_sample(tmp_path):
    path = tmp_path / "adult.data"
    path.write_text("|1x3 Cross validator\n" + ADULT_SAMPLE, encoding="utf-8")
    data = po.load_adult(path)
    assert data.features.shape == (4, 14)
    np.testing.assert_array_equal(data.labels, [0, 0, 1, 1])
    assert data.features[0, 1] == pytest.approx(6 / 8)  # State-gov is the 6th of 8 workclasses
    assert data.features[3, 13] == 0.0  # missing native-country
    assert data.features[0, 0] == pytest.approx((39 - 17) / 73)
    assert np.all((data.features >= 0) & (data.features <= 1))


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("39, State-gov, 77516, Bachelors, 13", "line 1 must have 15"),
        (
            "39, Nowhere-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, 0, 0, 40, "
            "United-States, <=50K",
            "column 'workclass'",
        ),
        (
            "abc, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, 0, 0, 40, "
            "United-States, <=50K",
            "column 'age'",
        ),
        (
            "39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, 0, 0, 40, "
            "United-States, rich",
            "column 'income'",
        ),
    ],
)
def test_load_adult_errors(tmp_path, line, message):
    path = tmp_path / "bad.data"
    path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(InvalidParameterError, match=message) as info:
        po.load_adult(path)
    assert "bad.data" in str(info.value)


# -- bad problems --------------------------------------------------------------------------------------------------
def test_bad_problems():
    with pytest.raises(InvalidParameterError, match="symmetric"):
        po.QuadraticProgram([[1.0, 2.0], [0.0, 1.0]], [0.0, 0.0])
    with pytest.raises(InvalidParameterError, match="positive semi-definite.*unbounded below"):
        po.QuadraticProgram([[1.0, 0.0], [0.0, -1.0]], [0.0, 0.0])
    with pytest.raises(InvalidParameterError, match="positive semi-definite.*unbounded below"):
        po.QuadraticProgram(
            [[1.0, 0.0], [0.0, -1.0]], [0.0, 0.0], constraint=po.Box([0.0, 0.0], [np.inf, 1.0])
        )
    with pytest.raises(InvalidParameterError, match="non-convex"):
        po.QuadraticProgram([[1.0, 0.0], [0.0, -1.0]], [0.0, 0.0], constraint=po.Ball([0.0, 0.0], 1.0))
    with pytest.raises(InvalidParameterError, match="unbounded below"):
        po.QuadraticProgram([[1.0, 0.0], [0.0, 0.0]], [0.0, 1.0])
    po.QuadraticProgram([[1.0, 0.0], [0.0, 0.0]], [0.0, 1.0], constraint=po.Box([-1.0, 0.0], [1.0, np.inf]))
    with pytest.raises(InvalidParameterError, match="finite"):
        po.QuadraticProgram([[1.0, np.nan], [np.nan, 1.0]], [0.0, 0.0])
    with pytest.raises(InvalidParameterError, match="finite"):
        po.QuadraticProgram(np.eye(2), [np.nan, 0.0])
    with pytest.raises(DimensionError):
        po.QuadraticProgram(np.eye(2), [0.0, 0.0, 1.0])
    with pytest.raises(DimensionError):
        po.QuadraticProgram(np.eye(2), [0.0, 0.0], constraint=po.Ball(np.zeros(3), 1.0))
    with pytest.raises(InvalidParameterError, match="infeasible"):
        po.Box([1.0, 0.0], [0.0, 1.0])
    with pytest.raises(InvalidParameterError, match="no solution"):
        po.Affine([[1.0, 1.0], [2.0, 2.0]], [1.0, 3.0])
    with pytest.raises(InvalidParameterError, match="feasible"):
        po.Polyhedron([[1.0, 0.0], [-1.0, 0.0]], [0.0, -1.0])
    with pytest.raises(InvalidParameterError, match="radius"):
        po.Ball([0.0], -1.0)
    with pytest.raises(InvalidParameterError, match="NaN"):
        po.Box([np.nan], [1.0])


def test_bad_descent_arguments():
    prob = po.QuadraticProgram(np.eye(2), [0.0, 0.0])
    with pytest.raises(InvalidParameterError, match="exactly one"):
        po.private_gradient_descent(prob, iterations=3)
    with pytest.raises(InvalidParameterError, match="noise_variance"):
        po.private_gradient_descent(prob, noise_variance=-1.0)
    with pytest.raises(InvalidParameterError, match="noise_variance"):
        po.private_gradient_descent(prob, noise_variance=float("nan"))
    with pytest.raises(InvalidParameterError, match="iterations"):
        po.private_gradient_descent(prob, noise_variance=0.1, iterations=0)
    with pytest.raises(DimensionError):
        po.private_gradient_descent(prob, mechanism=Gaussian(cov=np.eye(3)))
    with pytest.raises(DimensionError):
        po.private_gradient_descent(prob, noise_variance=0.1, x0=[1.0])
    with pytest.raises(InvalidParameterError, match="step"):
        po.private_gradient_descent(prob, noise_variance=0.1, step="big")
    with pytest.raises(InvalidParameterError, match="gradient_sensitivity"):
        po.private_gradient_descent(prob, noise_variance=0.1, gradient_sensitivity=-1.0)
    with pytest.raises(InvalidParameterError, match="declared bounds"):
        po.private_linear_regression(
            [[2.0]], [0.5], noise_variance=0.1, radius=1.0, feature_bound=1.0, label_bound=1.0
        )
