"""Polyhedra {x : G x ≤ h, A x = b}: the projection is a quadratic program, solved exactly by the Lawson–Hanson
least-distance method (non-negative least squares), with its Lagrange multipliers.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize

from ..._validation import as_matrix, readonly
from ...exceptions import DimensionError, InvalidParameterError, SolverError
from .affine import EqualitySolution, solve_equalities
from .base import RecessionCone, checked_system, checked_vector

__all__ = ["Polyhedron"]


@dataclass(frozen=True, slots=True, eq=False)
class Polyhedron(EqualitySolution):
    """The polyhedron {x : G x ≤ h, A x = b}.

    Parameters
    ----------
    inequality_matrix : array_like, shape (m, n)
        G.
    inequality_bound : array_like, shape (m,)
        h.
    equality_matrix, equality_offset : array_like, optional
        A and b of optional equality constraints.

    Raises
    ------
    InvalidParameterError
        When the set is empty (checked with HiGHS through :func:`scipy.optimize.linprog`).

    Notes
    -----
    The projection min ½‖y − x‖² s.t. G y ≤ h, A y = b is a strictly convex quadratic program. The equalities are
    eliminated (y = y₀ + N t, N an orthonormal basis of null(A)), leaving a least-distance program
    min ½‖z‖² s.t. G' z ≥ h', which Lawson & Hanson (Solving Least Squares Problems, 1974, Ch. 23) reduce to the
    non-negative least-squares problem min_{u ≥ 0} ‖E u − e_{k+1}‖ with E = [G'ᵀ; h'ᵀ]; its active-set solution is
    exact up to rounding, so the KKT conditions hold to machine precision (see :meth:`project_with_multipliers`).
    """

    inequality_matrix: Any
    inequality_bound: Any
    _: KW_ONLY
    equality_matrix: Any = None
    equality_offset: Any = None

    def __post_init__(self) -> None:
        owner = "Polyhedron"
        g, h = checked_system(
            self.inequality_matrix, self.inequality_bound, ("inequality_matrix", "inequality_bound"), owner
        )
        n = g.shape[1]
        if (self.equality_matrix is None) != (self.equality_offset is None):
            raise InvalidParameterError(
                f"`equality_matrix` and `equality_offset` of `{owner}` must be given together."
            )
        if self.equality_matrix is not None:
            a = as_matrix(self.equality_matrix, "equality_matrix", owner)
            b = checked_vector(self.equality_offset, "equality_offset", owner)
            if a.shape[1] != n or b.size != a.shape[0]:
                raise DimensionError(
                    f"`equality_matrix` of `{owner}` must be (p, {n}) with `equality_offset` of length p; "
                    f"got {a.shape} and {b.size}."
                )
            x0, null = solve_equalities(a, b, owner)
        else:
            a, b = None, None
            x0, null = np.zeros(n), np.eye(n)
        lp = optimize.linprog(
            np.zeros(n), A_ub=g, b_ub=h, A_eq=a, b_eq=b, bounds=[(None, None)] * n, method="highs"
        )
        if lp.status == 2:
            raise InvalidParameterError(
                f"the constraints of `{owner}` must be feasible; G x ≤ h, A x = b has no solution (HiGHS: "
                f"{lp.message.strip()})."
            )
        if lp.status != 0:
            raise SolverError(f"HiGHS could not decide whether `{owner}` is feasible: {lp.message.strip()}")
        object.__setattr__(self, "inequality_matrix", readonly(g))
        object.__setattr__(self, "inequality_bound", readonly(h))
        object.__setattr__(self, "equality_matrix", None if a is None else readonly(a))
        object.__setattr__(self, "equality_offset", None if b is None else readonly(b))
        self._keep_equalities(x0, null)

    @property
    def dim(self) -> int:
        return int(self.inequality_matrix.shape[1])

    def _project_one(self, x: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        g, h, n0, y0 = self.inequality_matrix, self.inequality_bound, self._null, self._point
        t0 = n0.T @ (x - y0)  # the point in null-space coordinates
        gt = g @ n0
        # least distance: z = t − t0, minimise ½‖z‖² subject to (−G N) z ≥ G(y0 + N t0) − h
        gp = -gt
        hp = g @ (y0 + n0 @ t0) - h
        k = gt.shape[1]
        if k == 0 or np.all(hp <= 0):
            return y0 + n0 @ t0, np.zeros(h.size)
        scale = max(1.0, float(np.max(np.abs(hp))))
        e = np.vstack([gp.T, hp[None, :] / scale])
        f = np.zeros(k + 1)
        f[-1] = 1.0
        u, _ = optimize.nnls(e, f, maxiter=50 * (e.shape[1] + k + 1))
        r = e @ u - f
        if -r[-1] <= 1e-300:
            raise SolverError("the least-distance program of `Polyhedron.project` is infeasible (rounding?).")
        # LDP for the constraints divided by `scale`: z = scale·z', λ = scale·λ'
        z = -scale * r[:-1] / r[-1]
        multipliers = scale * u / (-r[-1])
        return y0 + n0 @ (t0 + z), multipliers

    def project_with_multipliers(self, x: ArrayLike, /) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """P[x] for one point and the Lagrange multipliers λ ≥ 0 of G y ≤ h (with y − x + Gᵀλ ⊥ null(A))."""
        p = self._points(x, "Polyhedron.project_with_multipliers")
        if p.ndim != 1:
            raise DimensionError("`x` of `Polyhedron.project_with_multipliers` must be a single point.")
        return self._project_one(p)

    def project(self, x: ArrayLike, /) -> NDArray[np.float64]:
        p = self._points(x, "Polyhedron.project")
        flat = p.reshape(-1, self.dim)
        out = np.empty_like(flat)
        for i in range(flat.shape[0]):  # one quadratic program per point: an active-set method is sequential
            out[i] = self._project_one(flat[i])[0]
        return out.reshape(p.shape)

    def contains(self, x: ArrayLike, /, *, atol: float = 1e-9) -> bool:
        p = self._points(x, "Polyhedron.contains")
        ok = np.all(p @ self.inequality_matrix.T <= self.inequality_bound + atol)
        if self.equality_matrix is not None:
            ok = ok and np.all(np.abs(p @ self.equality_matrix.T - self.equality_offset) <= atol)
        return bool(ok)

    def recession_cone(self) -> RecessionCone | None:
        return RecessionCone(self.inequality_matrix, self.equality_matrix)

    def scipy_constraints(self) -> tuple[optimize.Bounds | None, list[Any]]:
        cons: list[Any] = [optimize.LinearConstraint(self.inequality_matrix, -np.inf, self.inequality_bound)]
        if self.equality_matrix is not None:
            cons.append(
                optimize.LinearConstraint(self.equality_matrix, self.equality_offset, self.equality_offset)
            )
        return None, cons
