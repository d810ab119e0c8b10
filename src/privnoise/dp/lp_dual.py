"""Dual certificates of the optimality of Laplace noise (Koufogiannis, Han & Pappas, Figures 1 and 2).

The dual of the optimal-noise program over radial functions is (problem (15); n = 1 gives problem (8))

    maximise λ  subject to  η′(r) + (n − 1)/r · η(r) + ε|η(r)| ≤ r² − λ,   lim_{r→∞} η(r) ≥ 0,

and a candidate dual solution is the solution of the initial value problem with equality and η(0) = 0 (eq. (9)
for n = 1, eq. (16) for n ≥ 2). It is feasible — η eventually turns positive — iff λ < λ* = n(n + 1)/ε² (2/ε²
for n = 1), the MSE of the (ℓ2-)Laplace noise; weak duality then proves that noise optimal.

Closed form (derived here, checked against the ODE in the tests): while η < 0 the equation is linear,
(r^{n−1}e^{−εr}η)′ = r^{n−1}e^{−εr}(r² − λ), so with x = εr and P the regularised lower incomplete gamma function

    η(r) = r^{1−n} e^{x} Γ(n) ε^{−n} [λ* P(n + 2, x) − λ P(n, x)].

The bracket tends to λ* − λ, so η crosses zero at a unique r₃ > √λ iff λ < λ*; after r₃ it solves
η′ + (n − 1)/r η + εη = r² − λ with r² − λ > 0, so it stays positive. At λ = λ* the solution is
η(r) = −r(εr + n + 1)/ε² (Remark 2; Theorem 8), negative for every r > 0: infeasible.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import integrate, optimize, special

from .._validation import as_finite_array, check_positive, check_positive_int
from ..exceptions import InvalidParameterError

__all__ = ["dual_crossing", "dual_eta", "dual_eta_ode", "dual_threshold"]


def dual_threshold(epsilon: float, dim: int = 1) -> float:
    """λ* = n(n + 1)/ε²: the Laplace MSE, the supremum of feasible dual values (2/ε² for n = 1).

    Examples
    --------
    >>> dual_threshold(1.0), dual_threshold(2.0, 3)
    (2.0, 3.0)
    """
    eps = check_positive(epsilon, "epsilon", "dual_threshold")
    n = check_positive_int(dim, "dim", "dual_threshold")
    return n * (n + 1) / eps**2


def _bracket(x: NDArray[np.float64], lam: float, eps: float, n: int) -> NDArray[np.float64]:
    """λ* P(n+2, x) − λ P(n, x), using the complementary form for large x to avoid cancellation."""
    star = n * (n + 1) / eps**2
    low = star * special.gammainc(n + 2, x) - lam * special.gammainc(n, x)
    high = (star - lam) - (star * special.gammaincc(n + 2, x) - lam * special.gammaincc(n, x))
    return np.where(x < n + 1.0, low, high)


def _negative_branch(r: NDArray[np.float64], lam: float, eps: float, n: int) -> NDArray[np.float64]:
    x = eps * r
    safe = np.where(r > 0, r, 1.0)
    with np.errstate(over="ignore"):
        factor = np.exp((1 - n) * np.log(safe) + x + special.gammaln(n) - n * math.log(eps))
        out = factor * _bracket(x, lam, eps, n)
    return np.where(r > 0, out, 0.0)


def dual_crossing(lam: float, *, epsilon: float, dim: int = 1) -> float:
    """The radius r₃ where the dual solution η of (9)/(16) turns positive (``inf`` when λ ≥ λ*: infeasible).

    Examples
    --------
    >>> dual_crossing(2.0, epsilon=1.0)
    inf
    >>> round(dual_crossing(1.0, epsilon=1.0), 6) > 1.0
    True
    """
    owner = "dual_crossing"
    lam = check_positive(lam, "lam", owner)
    eps = check_positive(epsilon, "epsilon", owner)
    n = check_positive_int(dim, "dim", owner)
    if lam >= n * (n + 1) / eps**2:
        return math.inf

    def f(r: float) -> float:
        return float(_bracket(np.array(eps * r), lam, eps, n))

    lo = math.sqrt(lam)
    hi = 2.0 * lo + 1.0 / eps
    while f(hi) <= 0:
        hi *= 2.0
    return float(optimize.brentq(f, lo, hi, xtol=1e-14, rtol=1e-13))


def dual_eta(points: ArrayLike, lam: float, *, epsilon: float, dim: int = 1) -> NDArray[np.float64]:
    """The solution η of the dual initial value problem (9) (n = 1) or (16) (n ≥ 2) at ``points``.

    Parameters
    ----------
    points : array_like
        Radii r ≥ 0 (for n = 1 any real v: η is odd, η(−v) = −η(v)).
    lam : float
        The dual value λ > 0.
    epsilon : float
        Privacy level ε > 0.
    dim : int
        Dimension n of the ℓ2 problem (1 for Figure 1).

    Returns
    -------
    numpy.ndarray
        η at the points (closed form on the negative branch; an accurate ODE solve after the crossing r₃).

    Examples
    --------
    >>> eta = dual_eta([1.0, 3.0], 2.0, epsilon=1.0)      # λ = λ*: η = −v(v + 2)
    >>> np.round(eta, 10).tolist()
    [-3.0, -15.0]
    """
    owner = "dual_eta"
    lam = check_positive(lam, "lam", owner)
    eps = check_positive(epsilon, "epsilon", owner)
    n = check_positive_int(dim, "dim", owner)
    v = as_finite_array(points, "points", owner)
    if n > 1 and np.any(v < 0):
        raise InvalidParameterError(f"`points` of `{owner}` must be radii >= 0 for dim > 1.")
    sign = np.sign(v) if n == 1 else np.ones_like(v)
    r = np.abs(v)
    r3 = dual_crossing(lam, epsilon=eps, dim=n)
    out = _negative_branch(r, lam, eps, n)
    beyond = r > r3
    if np.any(beyond):
        targets = np.unique(r[beyond])

        def rhs(t: float, y: NDArray[np.float64]) -> NDArray[np.float64]:
            return np.array([t * t - lam - (n - 1) / t * y[0] - eps * y[0]])

        sol = integrate.solve_ivp(
            rhs, (r3, float(targets[-1])), [0.0], method="DOP853", t_eval=targets, rtol=1e-11, atol=1e-12
        )
        out = out.copy()
        out[beyond] = np.interp(r[beyond], sol.t, sol.y[0])
    return np.asarray(sign * out, dtype=float)


def dual_eta_ode(points: ArrayLike, lam: float, *, epsilon: float, dim: int = 1) -> NDArray[np.float64]:
    """η of (9)/(16) by direct numerical integration of η′ = r² − λ − (n − 1)/r·η − ε|η| (a second method).

    Starts at r₀ = 1e-9/ε with the series η ≈ −λr/n and integrates with an explicit Runge–Kutta method
    (DOP853, rtol 1e-11). Accepts radii r ≥ 0 only.

    Examples
    --------
    >>> np.round(dual_eta_ode([1.0, 3.0], 2.0, epsilon=1.0), 6).tolist()
    [-3.0, -15.0]
    """
    owner = "dual_eta_ode"
    lam = check_positive(lam, "lam", owner)
    eps = check_positive(epsilon, "epsilon", owner)
    n = check_positive_int(dim, "dim", owner)
    r = as_finite_array(points, "points", owner, ndim=1)
    if np.any(r < 0):
        raise InvalidParameterError(f"`points` of `{owner}` must be radii >= 0.")
    r0 = 1e-9 / eps

    def rhs(t: float, y: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.array([t * t - lam - (n - 1) / t * y[0] - eps * abs(y[0])])

    targets = np.unique(np.maximum(r, r0))
    sol = integrate.solve_ivp(
        rhs,
        (r0, float(targets[-1]) + r0),
        [-lam * r0 / n],
        method="DOP853",
        t_eval=targets,
        rtol=1e-11,
        atol=1e-12,
    )
    out = np.interp(np.maximum(r, r0), sol.t, sol.y[0])
    return np.where(r > 0, out, 0.0)
