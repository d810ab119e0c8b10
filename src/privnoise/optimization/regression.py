"""Private ridge regression by noisy gradient descent (Farokhi, Section III, with the corrected cost expansion).

The cost of the linear model z ≈ xᵀ[u; 1] on records (u_i, z_i), i = 1…N, is

    f(x) = (1/N) Σ_i (xᵀũ_i − z_i)² + ρ‖x‖²,   ũ_i = [u_i; 1],
         = ½ xᵀ(2ρ I + (2/N) Σ_i ũ_i ũ_iᵀ) x + (−(2/N) Σ_i z_i ũ_i)ᵀ x + (1/N) Σ_i z_i²,

with outer products ũ_i ũ_iᵀ; the paper prints inner products ũ_iᵀũ_i (errata item 13; the printed form lives with
the reproduction, :mod:`privnoise.reproduce.farokhi_optimization`). ρ = ½ is the paper's
cost.

Examples
--------
>>> import numpy as np
>>> from privnoise.optimization import private_linear_regression
>>> u = np.linspace(-1.0, 1.0, 50)[:, None]
>>> model = private_linear_regression(u, 0.5 * u[:, 0] + 0.2, noise_variance=1e-4, ridge=0.01, rng=3)
>>> np.round(model.weights, 1), round(model.intercept, 1)
(array([0.5]), 0.2)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import as_finite_array, check_positive, readonly
from ..exceptions import DimensionError, InvalidParameterError
from ..random import RNGLike
from .constraints import Ball, Constraint
from .descent import DescentResult, StepRule, private_gradient_descent
from .guarantees import OptimizationGuarantee
from .problems import QuadraticProgram

__all__ = [
    "LinearRegressionModel",
    "private_linear_regression",
    "regression_gradient_sensitivity",
    "regression_problem",
]


def _data(
    features: ArrayLike, labels: ArrayLike, owner: str
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    u = as_finite_array(features, "features", owner, ndim=(1, 2))
    if u.ndim == 1:
        u = u[:, None]
    z = as_finite_array(labels, "labels", owner, ndim=1)
    if u.shape[0] != z.size or z.size == 0:
        raise DimensionError(
            f"`features` and `labels` of `{owner}` must have the same number (≥ 1) of records; got "
            f"{u.shape[0]} and {z.size}."
        )
    return u, z


def regression_problem(
    features: ArrayLike, labels: ArrayLike, *, ridge: float = 0.5, constraint: Constraint | None = None
) -> QuadraticProgram:
    """The quadratic program of Section III: Q = 2ρI + (2/N)ŨᵀŨ, q = −(2/N)Ũᵀz, constant (1/N)‖z‖².

    Parameters
    ----------
    features : array_like, shape (N, d)
    labels : array_like, shape (N,)
    ridge : float
        ρ ≥ 0 (the paper's cost has ρ = ½).
    constraint : Constraint, optional
        A set of dimension d + 1 for x = [weights; intercept].
    """
    owner = "regression_problem"
    u, z = _data(features, labels, owner)
    rho = check_positive(ridge, "ridge", owner, allow_zero=True)
    n_rec = z.size
    ut = np.hstack([u, np.ones((n_rec, 1))])
    q_mat = 2.0 * rho * np.eye(ut.shape[1]) + (2.0 / n_rec) * (ut.T @ ut)
    q_vec = -(2.0 / n_rec) * (ut.T @ z)
    return QuadraticProgram(q_mat, q_vec, constraint=constraint, constant=float(z @ z) / n_rec)


def regression_gradient_sensitivity(
    records: int, *, feature_bound: float, label_bound: float, radius: float, features: int
) -> float:
    """ℓ2 sensitivity of ∇f over ‖x‖ ≤ radius when one record is replaced, from declared bounds only.

    With |u_ij| ≤ b, |z| ≤ Z and B = √(d b² + 1) ≥ ‖ũ‖: ∇f_D(x) − ∇f_D'(x) = (2/N)[ũ(ũᵀx − z) − ũ'(ũ'ᵀx − z')],
    so Δ = (4/N) B (B R + Z).

    Examples
    --------
    >>> regression_gradient_sensitivity(100, feature_bound=1.0, label_bound=1.0, radius=1.0, features=3)
    0.24
    """
    owner = "regression_gradient_sensitivity"
    n_rec = check_positive(records, "records", owner)
    b = check_positive(feature_bound, "feature_bound", owner, allow_zero=True)
    zb = check_positive(label_bound, "label_bound", owner, allow_zero=True)
    r = check_positive(radius, "radius", owner, allow_zero=True)
    big_b = math.sqrt(check_positive(features, "features", owner) * b * b + 1.0)
    return 4.0 / n_rec * big_b * (big_b * r + zb)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class LinearRegressionModel:
    """A linear model z ≈ weightsᵀu + intercept trained privately, with the run that produced it."""

    weights: NDArray[np.float64]
    intercept: float
    problem: QuadraticProgram
    result: DescentResult

    def predict(self, features: ArrayLike) -> NDArray[np.float64]:
        u = as_finite_array(features, "features", "LinearRegressionModel.predict", ndim=(1, 2))
        u = u[:, None] if u.ndim == 1 and self.weights.size == 1 else np.atleast_2d(u)
        if u.shape[1] != self.weights.size:
            raise DimensionError(
                f"`features` of `LinearRegressionModel.predict` must have {self.weights.size} columns; got {u.shape}."
            )
        return np.asarray(u @ self.weights + self.intercept, dtype=float)

    @property
    def objective(self) -> float:
        return self.result.objective

    @property
    def optimum(self) -> float:
        return self.result.optimum

    @property
    def objective_gap(self) -> float:
        return self.result.objective_gap

    @property
    def guarantee(self) -> OptimizationGuarantee:
        return self.result.guarantee


def private_linear_regression(
    features: ArrayLike,
    labels: ArrayLike,
    *,
    noise_variance: float,
    ridge: float = 0.5,
    iterations: int = 100,
    step: StepRule | float | None = None,
    radius: float | None = None,
    feature_bound: float | None = None,
    label_bound: float | None = None,
    delta: float = 1e-5,
    rng: RNGLike = None,
) -> LinearRegressionModel:
    """Train z ≈ xᵀ[u; 1] by noisy gradient descent with Theorem 1's noise N(0, (ε/n) I), n = d + 1.

    Parameters
    ----------
    features, labels : array_like
        (N, d) and (N,).
    noise_variance : float
        ε = E‖w[k]‖² ≥ 0.
    ridge : float
        ρ of the cost (½ in the paper).
    iterations : int
    step : StepRule or float, optional
        Default 1/λ_max(Q).
    radius : float, optional
        Constrain ‖x‖ ≤ radius (projected descent (5)); needed, with the declared bounds below, for a DP statement.
    feature_bound, label_bound : float, optional
        Declared |u_ij| ≤ feature_bound and |z_i| ≤ label_bound (never derived from the data; records that break
        them are refused).
    delta : float
    rng : None, int or numpy.random.Generator

    Returns
    -------
    LinearRegressionModel
    """
    owner = "private_linear_regression"
    u, z = _data(features, labels, owner)
    sensitivity = None
    if feature_bound is not None or label_bound is not None:
        if feature_bound is None or label_bound is None or radius is None:
            raise InvalidParameterError(
                f"`feature_bound`, `label_bound` and `radius` of `{owner}` must be declared together for a DP statement."
            )
        fb = check_positive(feature_bound, "feature_bound", owner)
        lb = check_positive(label_bound, "label_bound", owner)
        bad_u = np.flatnonzero(np.any(np.abs(u) > fb, axis=1))
        bad_z = np.flatnonzero(np.abs(z) > lb)
        if bad_u.size or bad_z.size:
            which = f"features of record {bad_u[0]}" if bad_u.size else f"label of record {bad_z[0]}"
            raise InvalidParameterError(
                f"the declared bounds of `{owner}` must hold for every record; the {which} breaks them."
            )
        sensitivity = regression_gradient_sensitivity(
            z.size, feature_bound=fb, label_bound=lb, radius=float(radius), features=u.shape[1]
        )
    constraint = None
    if radius is not None:
        constraint = Ball(np.zeros(u.shape[1] + 1), check_positive(radius, "radius", owner))
    problem = regression_problem(u, z, ridge=ridge, constraint=constraint)
    res = private_gradient_descent(
        problem,
        noise_variance=noise_variance,
        iterations=iterations,
        step=step,
        gradient_sensitivity=sensitivity,
        delta=delta,
        rng=rng,
    )
    return LinearRegressionModel(
        weights=readonly(res.x[:-1]), intercept=float(res.x[-1]), problem=problem, result=res
    )
