"""Quadratic programs min_{x ∈ 𝒞} f(x) = ½ xᵀQx + qᵀx (+ a constant) (Farokhi, eqs. (1) and (4)).

Examples
--------
>>> import numpy as np
>>> from privnoise.optimization import QuadraticProgram, Box
>>> prob = QuadraticProgram(Q=np.diag([2.0, 1.0]), q=[-2.0, 1.0], constraint=Box(lower=[0.0, 0.0], upper=[0.5, 1.0]))
>>> sol = prob.solve()
>>> np.round(sol.x, 9), round(sol.value, 9)
(array([0.5, 0. ]), -0.75)
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import linalg, optimize

from .._validation import as_finite_array, as_matrix, check_finite, describe, readonly
from ..exceptions import DimensionError, InvalidParameterError, SolverError
from .constraints import Constraint

__all__ = ["QuadraticProgram", "Solution"]

_OWNER = "QuadraticProgram"


@dataclass(frozen=True, slots=True, kw_only=True)
class Solution:
    """A minimiser x* of a quadratic program, its value f(x*) and how it was found."""

    x: NDArray[np.float64]
    value: float
    method: str
    stationarity: float


@dataclass(frozen=True, slots=True, eq=False)
class QuadraticProgram:
    """min_{x ∈ 𝒞} ½ xᵀQx + qᵀx + constant.

    Parameters
    ----------
    Q : array_like, shape (n, n)
        Symmetric positive semi-definite (Farokhi, eq. (1)).
    q : array_like, shape (n,)
    constraint : Constraint, optional
        A convex set with an exact projection (:class:`Box`, :class:`Ball`, :class:`Affine`, :class:`Polyhedron`);
        None for the unconstrained problem (1).
    constant : float, default 0
        Added to the objective (e.g. (1/N)Σz² of the regression cost); it does not change the minimiser.

    Raises
    ------
    InvalidParameterError
        Q not symmetric, not positive semi-definite, NaN/inf entries, an objective unbounded below on 𝒞 (a
        direction d of the recession cone of 𝒞 with Qd = 0 and qᵀd < 0), or a constraint of another dimension.

    Notes
    -----
    An indefinite Q is refused even on a bounded set: the paper's analysis (and Theorem 1's utility measure) needs
    a convex f, and on an unbounded set an indefinite f is unbounded below.
    """

    Q: Any
    q: Any
    _: KW_ONLY
    constraint: Constraint | None = None
    constant: float = 0.0
    _eigenvalues: NDArray[np.float64] = field(init=False, repr=False)
    _cache: dict[str, Any] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        qm = as_matrix(self.Q, "Q", _OWNER, square=True)
        scale = max(1.0, float(np.max(np.abs(qm))))
        if not np.allclose(qm, qm.T, rtol=0.0, atol=1e-12 * scale):
            i, j = np.unravel_index(int(np.argmax(np.abs(qm - qm.T))), qm.shape)
            raise InvalidParameterError(
                f"`Q` of `{_OWNER}` must be symmetric; got Q[{i},{j}] = {qm[i, j]:g} but Q[{j},{i}] = {qm[j, i]:g}."
            )
        qm = (qm + qm.T) / 2.0
        eig = np.linalg.eigvalsh(qm)
        if eig[0] < -1e-10 * scale:
            unbounded = self.constraint is None or self.constraint.recession_cone() is not None
            why = "f is unbounded below on an unbounded constraint set" if unbounded else "f is non-convex"
            raise InvalidParameterError(
                f"`Q` of `{_OWNER}` must be positive semi-definite ({why}); got smallest eigenvalue {eig[0]:.6g}."
            )
        n = qm.shape[0]
        qv = as_finite_array(self.q, "q", _OWNER, ndim=1)
        if qv.size != n:
            raise DimensionError(f"`q` of `{_OWNER}` must have length {n} (the size of Q); got {qv.size}.")
        if self.constraint is not None:
            if not isinstance(self.constraint, Constraint):
                raise InvalidParameterError(
                    f"`constraint` of `{_OWNER}` must be a Box, Ball, Affine or Polyhedron; "
                    f"got {describe(self.constraint)}."
                )
            if self.constraint.dim != n:
                raise DimensionError(
                    f"`constraint` of `{_OWNER}` must live in dimension {n}; got {self.constraint.dim}."
                )
        object.__setattr__(self, "Q", readonly(qm))
        object.__setattr__(self, "q", readonly(qv))
        object.__setattr__(self, "constant", check_finite(self.constant, "constant", _OWNER))
        object.__setattr__(self, "_eigenvalues", readonly(np.clip(eig, 0.0, None)))
        object.__setattr__(self, "_cache", {})
        self._check_bounded_below()

    # -- structure --------------------------------------------------------------------------------------------------
    @property
    def dim(self) -> int:
        """n, the number of decision variables."""
        return int(self.Q.shape[0])

    @property
    def smoothness(self) -> float:
        """L = λ_max(Q), the Lipschitz constant of ∇f."""
        return float(self._eigenvalues[-1])

    @property
    def strong_convexity(self) -> float:
        """λ = λ_min(Q) (0 when Q is singular)."""
        return float(self._eigenvalues[0])

    def objective(self, x: ArrayLike, /) -> Any:
        """f(x) = ½ xᵀQx + qᵀx + constant for a point or a batch ``(..., n)``."""
        p = as_finite_array(x, "x", f"{_OWNER}.objective")
        if p.ndim == 0 or p.shape[-1] != self.dim:
            raise DimensionError(
                f"`x` of `{_OWNER}.objective` must end with length {self.dim}; got {p.shape}."
            )
        out = 0.5 * np.einsum("...i,ij,...j->...", p, self.Q, p) + p @ self.q + self.constant
        return float(out) if np.ndim(out) == 0 else out

    def gradient(self, x: ArrayLike, /) -> NDArray[np.float64]:
        """∇f(x) = Qx + q."""
        return np.asarray(x, dtype=float) @ self.Q + self.q

    def project(self, x: NDArray[np.float64], /) -> NDArray[np.float64]:
        """P_𝒞[x] (the identity without a constraint)."""
        return x if self.constraint is None else self.constraint.project(x)

    def _check_bounded_below(self) -> None:
        """Refuse a d in the recession cone with Qd = 0 and qᵀd < 0 (then f → −∞ along d)."""
        cone = None if self.constraint is None else self.constraint.recession_cone()
        if self.constraint is not None and cone is None:
            return
        eig, vec = np.linalg.eigh(self.Q)
        tol = 1e-10 * max(1.0, float(np.max(np.abs(eig))))
        kernel = vec[:, eig <= tol]  # d = K c with Qd = 0
        if kernel.shape[1] == 0:
            return
        k = kernel.shape[1]
        a_ub = None if cone is None or cone.inequality is None else cone.inequality @ kernel
        a_eq = None if cone is None or cone.equality is None else cone.equality @ kernel
        lp = optimize.linprog(
            kernel.T @ self.q,
            A_ub=a_ub,
            b_ub=None if a_ub is None else np.zeros(a_ub.shape[0]),
            A_eq=a_eq,
            b_eq=None if a_eq is None else np.zeros(a_eq.shape[0]),
            bounds=[(-1.0, 1.0)] * k,
            method="highs",
        )
        if lp.status == 0 and lp.fun < -1e-9 * max(1.0, float(np.linalg.norm(self.q))):
            d = kernel @ lp.x
            raise InvalidParameterError(
                f"`q` of `{_OWNER}` must not decrease along a direction where Q is flat and the constraint set is "
                f"unbounded (f is unbounded below); qᵀd = {float(self.q @ d):.6g} along d = {describe(d)}."
            )

    # -- the exact minimiser -----------------------------------------------------------------------------------------
    def solve(self) -> Solution:
        """A minimiser x* and f(x*), with an exact method where one exists.

        Unconstrained: the least-norm solution of Qx = −q. Constrained: scipy's SLSQP (a second, independent
        method) polished by projected-gradient steps with the exact projection until x = P_𝒞[x − ∇f(x)/L] holds to
        rounding. ``stationarity`` is ‖x − P_𝒞[x − ∇f(x)/L]‖, which is 0 exactly at a minimiser.
        """
        if "solution" in self._cache:
            return self._cache["solution"]
        n, lip = self.dim, self.smoothness
        if self.constraint is None:
            x = linalg.lstsq(self.Q, -self.q)[0] if lip > 0 else np.zeros(n)
            method = "least-squares"
        else:
            x0 = self.constraint.project(np.zeros(n))
            bounds, cons = self.constraint.scipy_constraints()
            res = optimize.minimize(
                lambda v: 0.5 * v @ self.Q @ v + self.q @ v,
                x0,
                jac=lambda v: self.Q @ v + self.q,
                bounds=bounds,
                constraints=cons,
                method="SLSQP",
                options={"ftol": 1e-15, "maxiter": 1000},
            )
            x = self.constraint.project(res.x)
            method = "SLSQP + projected-gradient polish"
            if lip > 0:
                x = self._polish(x, lip)
        stat = self._stationarity(x, lip)
        if not np.isfinite(stat) or stat > 1e-6 * max(1.0, float(np.linalg.norm(x))):
            raise SolverError(f"`{_OWNER}.solve` did not reach a minimiser (stationarity {stat:.3g}).")
        sol = Solution(x=readonly(x), value=float(self.objective(x)), method=method, stationarity=stat)
        self._cache["solution"] = sol
        return sol

    def _stationarity(self, x: NDArray[np.float64], lip: float) -> float:
        if lip == 0:
            return float(np.linalg.norm(x - self.project(x - self.q)))
        return float(np.linalg.norm(x - self.project(x - (self.Q @ x + self.q) / lip)))

    def _polish(self, x: NDArray[np.float64], lip: float) -> NDArray[np.float64]:
        """Accelerated projected gradient (FISTA with restarts) from a near-optimal start."""
        y, prev, t = x.copy(), x.copy(), 1.0
        best, best_stat = x, self._stationarity(x, lip)
        for _ in range(20_000):
            new = self.project(y - (self.Q @ y + self.q) / lip)
            if (new - prev) @ (y - new) > 0:  # restart when momentum points uphill
                t = 1.0
            t_next = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
            y = new + ((t - 1.0) / t_next) * (new - prev)
            prev, t = new, t_next
            stat = self._stationarity(new, lip)
            if stat < best_stat:
                best, best_stat = new, stat
            if best_stat <= 1e-13 * max(1.0, float(np.linalg.norm(best))):
                break
        return best
