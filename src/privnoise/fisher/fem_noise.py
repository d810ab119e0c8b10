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

References
----------
F. Farokhi, H. Sandberg, Automatica 99 (2019), Problem 2, Theorem 2 (eq. (12)), Remark 7.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import readonly
from ..exceptions import InvalidParameterError
from ..mechanisms import Mechanism
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

    def __post_init__(self) -> None:
        if not isinstance(self.solution, EigenSolution):
            raise InvalidParameterError(
                f"`solution` of `FiniteElementNoise` must be an EigenSolution; got {type(self.solution).__name__}."
            )
        sol = self.solution
        d = sol.dim
        pts, cells, coeffs = np.asarray(sol.points), np.asarray(sol.cells), np.asarray(sol.coefficients)
        grads, volumes = sx.simplex_geometry(pts, cells)
        corners = pts[cells]
        rule = sx.quadrature(d, 6)  # exact for w wᵀ u² (degree 6)
        mass = np.zeros(cells.shape[0])
        first = np.zeros(d)
        second = np.zeros((d, d))
        for bary, weight in zip(rule.bary, rule.weights, strict=True):
            b = np.broadcast_to(bary, (cells.shape[0], d + 1))
            dens = sx.values(coeffs, b) ** 2 * volumes * weight
            w = np.einsum("j,ejk->ek", bary, corners)
            mass += dens
            first += dens @ w
            second += np.einsum("e,ek,el->kl", dens, w, w)
        total = mass.sum()
        gv = sx.gradients_at_vertices(coeffs, grads)
        # ∫_K ∇u∇uᵀ for affine ∇u with vertex values g_a: |K| (Σ g_a g_aᵀ + (Σ g_a)(Σ g_a)ᵀ)/((d+1)(d+2))
        s = gv.sum(axis=1)
        info = np.einsum("e,eak,eal->kl", volumes, gv, gv) + np.einsum("e,ek,el->kl", volumes, s, s)
        info *= 4.0 / ((d + 1) * (d + 2) * total)
        mean = first / total
        cov = second / total - np.outer(mean, mean)
        cdf = np.cumsum(mass)
        object.__setattr__(self, "_mass_cdf", readonly(cdf / cdf[-1]))
        bound = sx.bernstein_bound(coeffs) ** 2
        envelope = bound * volumes  # B_K |K| ≥ ∫_K u²
        object.__setattr__(self, "_bound", readonly(bound))
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
            # a cell with probability ∝ B_K|K| (Walker's alias table), a uniform point in it, kept with
            # probability u²/B_K: the kept points have density ∝ u² exactly
            slot = (generator.random(m) * k).astype(np.int64)
            np.minimum(slot, k - 1, out=slot)
            cell = np.where(generator.random(m) < prob[slot], slot, alias[slot])
            bary = _uniform_barycentric(m, d, generator)
            u = sx.values(coeffs[cell], bary)
            keep = np.flatnonzero(generator.random(m) * self._bound[cell] < u * u)[:need]
            out[filled : filled + keep.size] = np.einsum("nj,njk->nk", bary[keep], pts[cells[cell[keep]]])
            filled += keep.size
        return out

    def _locate(self, x: FloatArray) -> tuple[FloatArray, NDArray[np.int64], FloatArray]:
        """Points as rows, the cell containing each (−1 outside) and barycentric coordinates (locator cached)."""
        sol = self.solution
        flat = x.reshape(-1, sol.dim)
        if self._locator is None:
            object.__setattr__(
                self, "_locator", sx.SimplexLocator(np.asarray(sol.points), np.asarray(sol.cells))
            )
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
        total = 0.0
        for bary, weight in zip(rule.bary, rule.weights, strict=True):
            g = sx.values(sol.coefficients, np.broadcast_to(bary, (volumes.size, d + 1))) ** 2
            with np.errstate(divide="ignore", invalid="ignore"):
                term = np.where(g > 0, g * np.log(g), 0.0)
            total -= weight * float(term @ volumes)
        return total

    def support(self) -> tuple[FloatArray, FloatArray]:
        pts = np.asarray(self.solution.points)
        return readonly(pts.min(axis=0)), readonly(pts.max(axis=0))

    def describe(self) -> dict[str, Any]:
        region = dict(self.solution.support.describe())
        kind = region.pop("support")
        sol = self.solution.describe()
        numbers = {k: v for k, v in sol.items() if k != "converged"}
        return {"family": f"finite-element ({kind})", **region, **numbers, "converged": float(sol["converged"])}
