"""Optimal bounded noise on any 2-D or 3-D support, from the finite-element eigenfunction (Theorem 2).

:class:`FiniteElementNoise` is the density γ = u² of an :class:`~privnoise.fisher.fem.EigenSolution`: u is the
P2 finite-element approximation of the principal Dirichlet eigenfunction of −∇·(CCᵀ∇u) = λu on W, normalised so
that ∫u² = 1 over the mesh. Everything the mechanism reports is exact for this density (not for the continuous
optimum it approximates):

* ``pdf`` is u², evaluated on the cell containing the point;
* ``fisher_information()`` is 𝓘_w = 4∫∇u∇uᵀ (exact quadrature of the piecewise-linear gradient), so that
  Tr(𝓘_w CCᵀ) = 4 × ``solution.discrete_eigenvalue``;
* ``mean()``, ``covariance()`` and ``second_moment()`` are exact quadratures of w u² and wwᵀu²;
* ``sample`` draws exactly from u² by rejection from a piecewise-constant envelope: a cell K with probability
  ∝ B_K|K| (an alias table, O(1) per draw), a uniform point of K, kept with probability u(w)²/B_K, where B_K
  bounds u² on K through the Bernstein coefficients of u (tight on fine meshes: about 1.2 proposals per draw).

On curved supports the cells at ∂W are curved (P2-mapped, x = F(ξ); see :mod:`privnoise.fisher.fem`), and u is
quadratic in the reference coordinates ξ. There the density in x is û(ξ)² and a cell carries the mass
∫ û² |det DF| dξ, so the sampler proposes ξ uniformly on the reference cell (the cell with probability ∝ B_K D_K,
D_K the largest Bernstein coefficient of |det DF|), keeps it with probability û(ξ)²|det DF(ξ)|/(B_K D_K) and
returns F(ξ): exactly the density u² on the curved cell (on straight cells D_K = |det DF| and nothing changes).
Moments on curved cells are exact quadratures in ξ (polynomials of degree ≤ 8 + d); 𝓘_w there uses
∇u = DF⁻ᵀ∇_ξû, a rational integrand, by a degree-11 rule (accurate to rounding on these near-affine cells).

References
----------
F. Farokhi, H. Sandberg, Automatica 99 (2019), Problem 2, Theorem 2 (eq. (12)), Remark 7.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import readonly
from ..exceptions import InvalidParameterError
from ..mechanisms import Mechanism
from . import _isoparametric as iso
from . import _simplices as sx
from .fem import EigenSolution

__all__ = ["FiniteElementNoise"]

FloatArray = NDArray[np.float64]
_CHUNK = 1 << 17


def _alias_table(p: FloatArray) -> tuple[FloatArray, NDArray[np.int64]]:
    """Walker's alias table (Vose's construction) for the probabilities ``p``: draw i uniformly, keep it with
    probability ``prob[i]``, else take ``alias[i]``."""
    k = p.size
    scaled = p * k
    prob = np.ones(k)
    alias = np.arange(k, dtype=np.int64)
    small = [i for i in range(k) if scaled[i] < 1.0]
    large = [i for i in range(k) if scaled[i] >= 1.0]
    while small and large:
        s_, l_ = small.pop(), large.pop()
        prob[s_] = scaled[s_]
        alias[s_] = l_
        scaled[l_] -= 1.0 - scaled[s_]
        (small if scaled[l_] < 1.0 else large).append(l_)
    return readonly(prob), readonly(alias)


def _uniform_barycentric(n: int, dim: int, generator: np.random.Generator) -> FloatArray:
    """Uniform points of the reference simplex, as barycentric coordinates (spacings of sorted uniforms)."""
    u = generator.random((n, dim))
    if dim == 2:
        flip = u.sum(axis=1) > 1.0
        u[flip] = 1.0 - u[flip]
        return np.column_stack([1.0 - u.sum(axis=1), u])
    u.sort(axis=1)
    return np.column_stack([u[:, 0], u[:, 1] - u[:, 0], u[:, 2] - u[:, 1], 1.0 - u[:, 2]])


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class FiniteElementNoise(Mechanism):
    """Noise with density u², u the P2 finite-element principal eigenfunction on a support (2-D or 3-D).

    Built by :func:`privnoise.fisher.optimal_noise` for linear queries with 2 or 3 outputs and a
    :class:`~privnoise.fisher.Support`, or directly from a solution::

        FiniteElementNoise(solution=solve_dirichlet_eigenproblem(W, CCᵀ))

    Examples
    --------
    >>> from privnoise.fisher import Polygon, solve_dirichlet_eigenproblem
    >>> W = Polygon([(0, 0), (2, 0), (2, 1), (1, 1), (1, 2), (0, 2)])
    >>> noise = FiniteElementNoise(solution=solve_dirichlet_eigenproblem(W, rtol=1e-4))
    >>> bool(abs(noise.fisher_information().trace() / 4 - noise.solution.discrete_eigenvalue) < 1e-9)
    True
    >>> x = noise.sample(1000, rng=1)
    >>> x.shape, bool(W.contains(x).all())
    ((1000, 2), True)
    """

    solution: EigenSolution
    _mass_cdf: FloatArray = field(init=False, repr=False)
    _bound: FloatArray = field(init=False, repr=False)
    _alias: tuple[FloatArray, NDArray[np.int64]] = field(init=False, repr=False)
    _proposals_per_draw: float = field(init=False, repr=False)
    _moments: tuple[FloatArray, FloatArray, FloatArray] = field(init=False, repr=False)
    _locator: Any = field(init=False, repr=False)
    _row: NDArray[np.int64] = field(init=False, repr=False)
    _det_bound: FloatArray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.solution, EigenSolution):
            raise InvalidParameterError(
                f"`solution` of `FiniteElementNoise` must be an EigenSolution; got {type(self.solution).__name__}."
            )
        sol = self.solution
        d = sol.dim
        pts, cells, coeffs = np.asarray(sol.points), np.asarray(sol.cells), np.asarray(sol.coefficients)
        curved = np.asarray(sol.curved_cells)
        flat = np.ones(cells.shape[0], dtype=bool)
        flat[curved] = False
        row = np.full(cells.shape[0], -1, dtype=np.int64)
        row[curved] = np.arange(curved.size)
        grads, volumes = sx.simplex_geometry(pts, cells)
        corners = pts[cells]
        rule = sx.quadrature(d, 6)  # exact for w wᵀ u² (degree 6) on straight cells
        mass = np.zeros(cells.shape[0])
        first = np.zeros(d)
        second = np.zeros((d, d))
        for bary, weight in zip(rule.bary, rule.weights, strict=True):
            b = np.broadcast_to(bary, (cells.shape[0], d + 1))
            dens = sx.values(coeffs, b) ** 2 * volumes * weight * flat
            w = np.einsum("j,ejk->ek", bary, corners)
            mass += dens
            first += dens @ w
            second += np.einsum("e,ek,el->kl", dens, w, w)
        gv = sx.gradients_at_vertices(coeffs, grads)
        # ∫_K ∇u∇uᵀ for affine ∇u with vertex values g_a: |K| (Σ g_a g_aᵀ + (Σ g_a)(Σ g_a)ᵀ)/((d+1)(d+2))
        s = gv.sum(axis=1)
        weights = volumes * flat
        info = np.einsum("e,eak,eal->kl", weights, gv, gv) + np.einsum("e,ek,el->kl", weights, s, s)
        info /= (d + 1) * (d + 2)
        scale = volumes.copy()  # D_K/d!: bounds |K|·|det DF|/(d!|K|) per cell, |K| on straight cells
        det_bound = np.zeros(curved.size)
        if curved.size:
            nodes = np.asarray(sol.curved_nodes)
            c_mass, c_first, c_second, c_info = _curved_integrals(coeffs[curved], nodes)
            mass[curved] = c_mass
            first, second, info = first + c_first, second + c_second, info + c_info
            det_bound = np.abs(iso.determinant_bernstein(nodes)).max(axis=1)
            scale[curved] = det_bound / math.factorial(d)
        total = mass.sum()
        info *= 4.0 / total
        mean = first / total
        cov = second / total - np.outer(mean, mean)
        cdf = np.cumsum(mass)
        object.__setattr__(self, "_mass_cdf", readonly(cdf / cdf[-1]))
        bound = sx.bernstein_bound(coeffs) ** 2
        envelope = bound * scale  # B_K D_K/d! ≥ ∫_K u²
        object.__setattr__(self, "_bound", readonly(bound))
        object.__setattr__(self, "_row", readonly(row))
        object.__setattr__(self, "_det_bound", readonly(det_bound))
        object.__setattr__(self, "_alias", _alias_table(envelope / envelope.sum()))
        object.__setattr__(self, "_proposals_per_draw", float(envelope.sum() / total))
        object.__setattr__(
            self, "_moments", (readonly(mean), readonly((cov + cov.T) / 2), readonly((info + info.T) / 2))
        )
        object.__setattr__(self, "_locator", None)

    # -- Mechanism interface ------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return (self.solution.dim,)

    def _sample(self, n: int, generator: np.random.Generator) -> FloatArray:
        sol = self.solution
        d = sol.dim
        out = np.empty((n, d))
        pts, cells, coeffs = sol.points, sol.cells, sol.coefficients
        prob, alias = self._alias
        k = prob.size
        filled = 0
        while filled < n:
            need = n - filled
            m = min(_CHUNK, int(need * self._proposals_per_draw * 1.05) + 64)
            # a cell with probability ∝ B_K D_K (Walker's alias table), a uniform point of the reference cell,
            # kept with probability u²|det DF|/(B_K D_K): the kept points have density ∝ u² exactly
            slot = (generator.random(m) * k).astype(np.int64)
            np.minimum(slot, k - 1, out=slot)
            cell = np.where(generator.random(m) < prob[slot], slot, alias[slot])
            bary = _uniform_barycentric(m, d, generator)
            u = sx.values(coeffs[cell], bary)
            row = self._row[cell]
            bent = np.flatnonzero(row >= 0)
            accept = u * u
            if bent.size:
                jac = iso.jacobians(sol.curved_nodes[row[bent]], bary[bent])
                accept[bent] *= np.abs(np.linalg.det(jac)) / self._det_bound[row[bent]]
            keep = np.flatnonzero(generator.random(m) * self._bound[cell] < accept)[:need]
            x = np.einsum("nj,njk->nk", bary[keep], pts[cells[cell[keep]]])
            on_curved = np.flatnonzero(row[keep] >= 0)
            if on_curved.size:
                x[on_curved] = iso.map_points(sol.curved_nodes[row[keep[on_curved]]], bary[keep[on_curved]])
            out[filled : filled + keep.size] = x
            filled += keep.size
        return out

    def _locate(self, x: FloatArray) -> tuple[FloatArray, NDArray[np.int64], FloatArray]:
        """Points as rows, the cell containing each (−1 outside) and barycentric coordinates (locator cached)."""
        sol = self.solution
        flat = x.reshape(-1, sol.dim)
        if self._locator is None:
            locator = sx.SimplexLocator(
                np.asarray(sol.points),
                np.asarray(sol.cells),
                np.asarray(sol.curved_cells),
                np.asarray(sol.curved_nodes),
            )
            object.__setattr__(self, "_locator", locator)
        cell, bary = self._locator.find(flat)
        return flat, cell, bary

    def _density(self, x: FloatArray) -> FloatArray:
        sol = self.solution
        flat, cell, bary = self._locate(x)
        inside = cell >= 0
        dens = np.zeros(flat.shape[0])
        dens[inside] = sx.values(sol.coefficients[cell[inside]], bary[inside]) ** 2
        return dens.reshape(x.shape[:-1])

    def _logpdf(self, x: FloatArray) -> FloatArray:
        with np.errstate(divide="ignore"):
            return np.log(self._density(x))

    def _score(self, x: FloatArray) -> FloatArray:
        sol = self.solution
        flat, cell, bary = self._locate(x)
        out = np.zeros_like(flat)
        inside = np.flatnonzero(cell >= 0)
        if inside.size:
            c = cell[inside]
            grads, _ = sx.simplex_geometry(np.asarray(sol.points), np.asarray(sol.cells)[c])
            gv = sx.gradients_at_vertices(sol.coefficients[c], grads)
            grad = np.einsum("nj,njk->nk", bary[inside], gv)
            row = self._row[c]
            bent = np.flatnonzero(row >= 0)
            if bent.size:
                grad[bent] = _physical_gradients(
                    sol.coefficients[c[bent]], sol.curved_nodes[row[bent]], bary[inside[bent]]
                )
            u = sx.values(sol.coefficients[c], bary[inside])
            with np.errstate(divide="ignore", invalid="ignore"):
                score = np.where(u[:, None] != 0.0, 2.0 * grad / u[:, None], 0.0)
            out[inside] = score
        return out.reshape(x.shape)

    def mean(self) -> Any:
        return self._moments[0]

    def covariance(self) -> Any:
        return self._moments[1]

    def fisher_information(self) -> Any:
        """𝓘_w = 4∫∇u∇uᵀ of the density u² (exact for the finite-element u)."""
        return self._moments[2]

    def entropy(self) -> float:
        """−∫u² log u², by a degree-10 quadrature on every cell (u² log u² is not a polynomial)."""
        sol = self.solution
        d = sol.dim
        _, volumes = sx.simplex_geometry(np.asarray(sol.points), np.asarray(sol.cells))
        rule = sx.quadrature(d, 10)
        curved = np.asarray(sol.curved_cells)
        total = 0.0
        for bary, weight in zip(rule.bary, rule.weights, strict=True):
            b = np.broadcast_to(bary, (volumes.size, d + 1))
            g = sx.values(sol.coefficients, b) ** 2
            measure = volumes.copy()
            if curved.size:
                jac = iso.jacobians(np.asarray(sol.curved_nodes), b[: curved.size])
                measure[curved] = np.abs(np.linalg.det(jac)) / math.factorial(d)
            with np.errstate(divide="ignore", invalid="ignore"):
                term = np.where(g > 0, g * np.log(g), 0.0)
            total -= weight * float(term @ measure)
        return total

    def support(self) -> tuple[FloatArray, FloatArray]:
        """A box holding the mesh (vertices, and the Bernstein control points of curved cells)."""
        sol = self.solution
        pts = np.vstack([np.asarray(sol.points), *sx.bernstein_control_points(np.asarray(sol.curved_nodes))])
        return readonly(pts.min(axis=0)), readonly(pts.max(axis=0))

    def describe(self) -> dict[str, Any]:
        region = dict(self.solution.support.describe())
        kind = region.pop("support")
        sol = self.solution.describe()
        numbers = {k: v for k, v in sol.items() if k != "converged"}
        return {"family": f"finite-element ({kind})", **region, **numbers, "converged": float(sol["converged"])}


def _physical_gradients(coefficients: FloatArray, nodes: FloatArray, bary: FloatArray) -> FloatArray:
    """∇u = DF⁻ᵀ ∇_ξ û on curved cells (one cell per point), shape (n, d)."""
    reference = np.einsum("na,nal->nl", coefficients, iso.shape_gradients(bary))
    jac = iso.jacobians(nodes, bary)
    return np.asarray(np.linalg.solve(np.swapaxes(jac, 1, 2), reference[:, :, None])[:, :, 0])


def _curved_integrals(
    coefficients: FloatArray, nodes: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Per curved cell ∫u², and over them ∫w u², ∫wwᵀu² (exact: degree ≤ 8 + d in ξ) and ∫∇u∇uᵀ (degree-11 rule)."""
    e, _, d = nodes.shape
    rule = sx.quadrature(d, 11)
    reference = 1.0 / math.factorial(d)
    mass = np.zeros(e)
    first = np.zeros(d)
    second = np.zeros((d, d))
    info = np.zeros((d, d))
    for bary, weight in zip(rule.bary, rule.weights, strict=True):
        b = np.ascontiguousarray(np.broadcast_to(bary, (e, d + 1)))
        jac = iso.jacobians(nodes, b)
        measure = np.abs(np.linalg.det(jac)) * weight * reference
        dens = sx.values(coefficients, b) ** 2 * measure
        w = iso.map_points(nodes, b)
        mass += dens
        first += dens @ w
        second += np.einsum("e,ek,el->kl", dens, w, w)
        grad = _physical_gradients(coefficients, nodes, b)
        info += np.einsum("e,ek,el->kl", measure, grad, grad)
    return mass, first, second, info
