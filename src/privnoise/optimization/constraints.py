"""Convex constraint sets 𝒞 with exact Euclidean projections P_𝒞[x] = argmin_{y ∈ 𝒞} ‖x − y‖₂ (Farokhi, eq. (5)).

=====================  ================================================  ===========================================
set                    𝒞                                                  projection
=====================  ================================================  ===========================================
:class:`Box`           {x : lo ≤ x ≤ hi} (infinite ends allowed)           clip, coordinate by coordinate
:class:`Ball`          {x : ‖x − c‖₂ ≤ r}                                  radial scaling c + (x − c)·min(1, r/‖x − c‖)
:class:`Affine`        {x : A x = b}                                       x − A⁺(A x − b)
:class:`Polyhedron`    {x : G x ≤ h, A x = b}                              a quadratic program, solved exactly by the
                                                                           Lawson–Hanson least-distance method (NNLS)
=====================  ================================================  ===========================================

Every projection accepts a batch of points of shape ``(..., n)``. Each set also describes its recession cone
(the directions along which it is unbounded), which :class:`~privnoise.optimization.QuadraticProgram` uses to
refuse a problem whose objective is unbounded below.

Examples
--------
>>> import numpy as np
>>> Box(lower=[0.0, 0.0], upper=[1.0, 1.0]).project(np.array([2.0, -1.0]))
array([1., 0.])
>>> Ball(center=[0.0, 0.0], radius=1.0).project(np.array([3.0, 4.0]))
array([0.6, 0.8])
>>> Affine(matrix=[[1.0, 1.0]], offset=[1.0]).project(np.array([1.0, 1.0]))
array([0.5, 0.5])
>>> p = Polyhedron(inequality_matrix=[[1.0, 1.0]], inequality_bound=[1.0])
>>> np.round(p.project(np.array([1.0, 1.0])), 12)
array([0.5, 0.5])
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import linalg, optimize

from .._validation import as_finite_array, as_matrix, check_positive, readonly
from ..exceptions import DimensionError, InvalidParameterError, SolverError

__all__ = ["Affine", "Ball", "Box", "Constraint", "Polyhedron", "RecessionCone"]


@dataclass(frozen=True, slots=True)
class RecessionCone:
    """{d : G d ≤ 0, A d = 0} (``None`` blocks are absent); the whole space when both are None."""

    inequality: NDArray[np.float64] | None
    equality: NDArray[np.float64] | None


class Constraint:
    """A closed convex set of ℝⁿ with an exact Euclidean projection."""

    __slots__ = ()

    @property
    def dim(self) -> int:
        """The dimension n of the space the set lives in."""
        raise NotImplementedError

    def project(self, x: ArrayLike, /) -> NDArray[np.float64]:
        """P_𝒞[x] for a point (shape ``(n,)``) or a batch of points (shape ``(..., n)``)."""
        raise NotImplementedError

    def contains(self, x: ArrayLike, /, *, atol: float = 1e-9) -> bool:
        """Whether the point ``x`` lies in 𝒞 (within ``atol``)."""
        raise NotImplementedError

    def recession_cone(self) -> RecessionCone | None:
        """The directions of unboundedness, or None when the set is bounded."""
        raise NotImplementedError

    def scipy_constraints(self) -> tuple[optimize.Bounds | None, list[Any]]:
        """The set as bounds and constraints for :func:`scipy.optimize.minimize` (a second method)."""
        raise NotImplementedError

    def _points(self, x: ArrayLike, owner: str) -> NDArray[np.float64]:
        arr = as_finite_array(x, "x", owner)
        if arr.ndim == 0 or arr.shape[-1] != self.dim:
            raise DimensionError(f"`x` of `{owner}` must end with length {self.dim}; got shape {arr.shape}.")
        return arr


def _vector(value: ArrayLike, name: str, owner: str, *, allow_inf: bool = False) -> NDArray[np.float64]:
    if allow_inf:
        arr = np.asarray(value, dtype=float) if not isinstance(value, str | bytes) else np.asarray([np.nan])
        if np.isnan(arr).any():
            raise InvalidParameterError(f"`{name}` of `{owner}` must not contain NaN.")
    else:
        arr = as_finite_array(value, name, owner)
    if arr.ndim != 1 or arr.size == 0:
        raise DimensionError(f"`{name}` of `{owner}` must be a non-empty vector; got shape {arr.shape}.")
    return arr


@dataclass(frozen=True, slots=True, eq=False)
class Box(Constraint):
    """The box {x : lower ≤ x ≤ upper}; ends may be ±inf.

    Parameters
    ----------
    lower, upper : array_like, shape (n,)
        Coordinate bounds with lower ≤ upper (a scalar is broadcast to the other's length).
    """

    lower: Any
    upper: Any

    def __post_init__(self) -> None:
        owner = "Box"
        lo = np.atleast_1d(np.asarray(self.lower, dtype=float)) if np.ndim(self.lower) == 0 else None
        hi = np.atleast_1d(np.asarray(self.upper, dtype=float)) if np.ndim(self.upper) == 0 else None
        lo = _vector(self.lower, "lower", owner, allow_inf=True) if lo is None else lo
        hi = _vector(self.upper, "upper", owner, allow_inf=True) if hi is None else hi
        if np.isnan(lo).any() or np.isnan(hi).any():
            raise InvalidParameterError(f"`lower` and `upper` of `{owner}` must not contain NaN.")
        if lo.size != hi.size and lo.size != 1 and hi.size != 1:
            raise DimensionError(
                f"`lower` and `upper` of `{owner}` differ in length: {lo.size} and {hi.size}."
            )
        lo, hi = np.broadcast_arrays(lo, hi)
        if np.any(lo == np.inf) or np.any(hi == -np.inf):
            raise InvalidParameterError(f"`lower` of `{owner}` must be < inf and `upper` > -inf.")
        if np.any(lo > hi):
            i = int(np.argmax(lo > hi))
            raise InvalidParameterError(
                f"`lower` of `{owner}` must be <= `upper` (the box is empty, so infeasible); "
                f"got lower[{i}] = {lo[i]:g} > upper[{i}] = {hi[i]:g}."
            )
        object.__setattr__(self, "lower", readonly(lo))
        object.__setattr__(self, "upper", readonly(hi))

    @property
    def dim(self) -> int:
        return int(self.lower.size)

    def project(self, x: ArrayLike, /) -> NDArray[np.float64]:
        return np.clip(self._points(x, "Box.project"), self.lower, self.upper)

    def contains(self, x: ArrayLike, /, *, atol: float = 1e-9) -> bool:
        p = self._points(x, "Box.contains")
        return bool(np.all(p >= self.lower - atol) and np.all(p <= self.upper + atol))

    def recession_cone(self) -> RecessionCone | None:
        upper, lower = np.isfinite(self.upper), np.isfinite(self.lower)
        if np.all(lower) and np.all(upper):
            return None
        eye = np.eye(self.dim)  # once, not once per coordinate
        rows = np.vstack([eye[upper], -eye[lower]])  # d_i ≤ 0 where bounded above, d_i ≥ 0 where bounded below
        return RecessionCone(rows if rows.size else None, None)

    def scipy_constraints(self) -> tuple[optimize.Bounds | None, list[Any]]:
        return optimize.Bounds(self.lower, self.upper), []


@dataclass(frozen=True, slots=True, eq=False)
class Ball(Constraint):
    """The Euclidean ball {x : ‖x − center‖₂ ≤ radius}.

    Parameters
    ----------
    center : array_like, shape (n,)
    radius : float
        ≥ 0 (0 gives the single point ``center``).
    """

    center: Any
    radius: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "center", readonly(_vector(self.center, "center", "Ball")))
        object.__setattr__(self, "radius", check_positive(self.radius, "radius", "Ball", allow_zero=True))

    @property
    def dim(self) -> int:
        return int(self.center.size)

    def project(self, x: ArrayLike, /) -> NDArray[np.float64]:
        d = self._points(x, "Ball.project") - self.center
        norm = np.linalg.norm(d, axis=-1, keepdims=True)
        with np.errstate(divide="ignore", over="ignore"):
            scale = np.where(norm > self.radius, self.radius / np.where(norm > 0, norm, 1.0), 1.0)
        return self.center + d * scale

    def contains(self, x: ArrayLike, /, *, atol: float = 1e-9) -> bool:
        d = self._points(x, "Ball.contains") - self.center
        return bool(np.all(np.linalg.norm(d, axis=-1) <= self.radius + atol))

    def recession_cone(self) -> RecessionCone | None:
        return None

    def scipy_constraints(self) -> tuple[optimize.Bounds | None, list[Any]]:
        c, r = self.center, self.radius
        con = {
            "type": "ineq",
            "fun": lambda x: np.array([r * r - float((x - c) @ (x - c))]),
            "jac": lambda x: (-2.0 * (x - c))[None, :],
        }
        return None, [con]


def _consistent(a: NDArray[np.float64], b: NDArray[np.float64], owner: str) -> tuple[Any, Any]:
    """A point of {A x = b} and an orthonormal basis of null(A); InvalidParameterError when inconsistent."""
    x0, *_ = linalg.lstsq(a, b)
    scale = max(1.0, float(np.max(np.abs(b))), float(np.max(np.abs(a))) * float(np.max(np.abs(x0))))
    if np.max(np.abs(a @ x0 - b)) > 1e-9 * scale:
        raise InvalidParameterError(
            f"`offset` of `{owner}` must lie in the range of `matrix` (A x = b has no solution, the set is "
            f"empty); got a residual of {float(np.max(np.abs(a @ x0 - b))):.3g}."
        )
    return x0, linalg.null_space(a)


@dataclass(frozen=True, slots=True, eq=False)
class Affine(Constraint):
    """The affine subspace {x : A x = b}.

    Parameters
    ----------
    matrix : array_like, shape (p, n)
        A (any rank).
    offset : array_like, shape (p,)
        b, in the range of A (otherwise the set is empty and construction fails).

    Notes
    -----
    P[x] = x₀ + N Nᵀ(x − x₀) with x₀ a point of the set and N an orthonormal basis of null(A), which equals
    x − A⁺(A x − b).
    """

    matrix: Any
    offset: Any
    _point: NDArray[np.float64] = field(init=False, repr=False)
    _null: NDArray[np.float64] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        owner = "Affine"
        a = as_matrix(self.matrix, "matrix", owner)
        b = _vector(self.offset, "offset", owner)
        if b.size != a.shape[0]:
            raise DimensionError(f"`offset` of `{owner}` must have length {a.shape[0]}; got {b.size}.")
        x0, null = _consistent(a, b, owner)
        object.__setattr__(self, "matrix", readonly(a))
        object.__setattr__(self, "offset", readonly(b))
        object.__setattr__(self, "_point", readonly(x0))
        object.__setattr__(self, "_null", readonly(null))

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    def project(self, x: ArrayLike, /) -> NDArray[np.float64]:
        d = self._points(x, "Affine.project") - self._point
        return self._point + (d @ self._null) @ self._null.T

    def contains(self, x: ArrayLike, /, *, atol: float = 1e-9) -> bool:
        p = self._points(x, "Affine.contains")
        return bool(np.all(np.abs(p @ self.matrix.T - self.offset) <= atol))

    def recession_cone(self) -> RecessionCone | None:
        if self._null.shape[1] == 0:
            return None
        return RecessionCone(None, self.matrix)

    def scipy_constraints(self) -> tuple[optimize.Bounds | None, list[Any]]:
        return None, [optimize.LinearConstraint(self.matrix, self.offset, self.offset)]


@dataclass(frozen=True, slots=True, eq=False)
class Polyhedron(Constraint):
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
    _point: NDArray[np.float64] = field(init=False, repr=False)
    _null: NDArray[np.float64] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        owner = "Polyhedron"
        g = as_matrix(self.inequality_matrix, "inequality_matrix", owner)
        h = _vector(self.inequality_bound, "inequality_bound", owner)
        if h.size != g.shape[0]:
            raise DimensionError(
                f"`inequality_bound` of `{owner}` must have length {g.shape[0]}; got {h.size}."
            )
        n = g.shape[1]
        if (self.equality_matrix is None) != (self.equality_offset is None):
            raise InvalidParameterError(
                f"`equality_matrix` and `equality_offset` of `{owner}` must be given together."
            )
        if self.equality_matrix is not None:
            a = as_matrix(self.equality_matrix, "equality_matrix", owner)
            b = _vector(self.equality_offset, "equality_offset", owner)
            if a.shape[1] != n or b.size != a.shape[0]:
                raise DimensionError(
                    f"`equality_matrix` of `{owner}` must be (p, {n}) with `equality_offset` of length p; "
                    f"got {a.shape} and {b.size}."
                )
            x0, null = _consistent(a, b, owner)
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
        object.__setattr__(self, "_point", readonly(x0))
        object.__setattr__(self, "_null", readonly(null))

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
