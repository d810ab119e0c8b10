"""Polynomial Rayleigh–Ritz and an equilibrated flux for −∇·(A∇u) = λu on a domain with a polynomial bubble.

A :class:`BubbleDomain` is a domain W ⊂ [−1, 1]^d with a polynomial b > 0 inside W and b = 0 on ∂W (the unit
ball's 1 − |t|², a convex polygon's product of its edges' distance functions), a quadrature rule exact for
polynomials up to a requested total degree, and the multiplication by b on Legendre coefficients.

* **Trial space.** u = b·m(t), m of total degree ≤ p in the products of Legendre polynomials
  P_α(t) = Π_d P_{α_d}(t_d): u vanishes on ∂W, so its Rayleigh quotient is ≥ λ₁ (Rayleigh–Ritz).
* **Integrals.** Every quantity of the bracket is the integral of a polynomial, computed by the domain's exact
  rule, so it is exact up to rounding.
* **Conditioning.** Legendre products are not orthogonal on W (on the ball the mass matrix's condition number
  grows about 10× per degree). The Galerkin problem is solved in the basis orthonormalised by a singular value
  decomposition of the basis at the quadrature nodes, and every bound is then recomputed from the explicit
  polynomial u (its values and gradients at the nodes), so whatever the solve loses costs sharpness, never
  validity.
* **Flux.** σ of total degree ≤ p + deg b + 1 per component with div σ = −u, of least ‖A^(−½)σ‖. In 2-D,
  σ = (−∫u dt₁, 0) + curl ψ: the first term's divergence is −u exactly (Legendre antiderivative) and the curls are
  divergence-free, so ψ is an unconstrained least-squares solution on the nodes and rounding never breaks the
  constraint. In 3-D, with σ = A^½σ̃ the energy is Σ_j ‖σ̃_j‖², so in an orthonormal basis of each σ̃_j it is the
  minimum-norm solution of the linear constraint on Legendre coefficients, where differentiation is exact
  (P_a' = Σ (2k + 1)P_k, k < a, a − k odd).

:mod:`privnoise.fisher._bubble_domains` builds the ball and convex polygons.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.polynomial import legendre

from .supports.base import FloatArray, IntArray

__all__ = ["BubbleDomain", "bubble_flux", "bubble_ritz", "legendre_times_x"]

# Singular values of the basis below this fraction of the largest are dropped from the orthonormal basis.
_CUTOFF = 1e-12


@dataclass(frozen=True, slots=True)
class BubbleDomain:
    """W ⊂ [−1, 1]^d with its bubble b (values and gradients (d, n) at nodes), the degree of b, a rule
    ``rule(degree) → (nodes, weights)`` exact for polynomials of that total degree, and ``multiply``, which takes
    the Legendre coefficients of m (an array (n + 1,)*d) to those of b·m (an array (n + 1 + deg b,)*d)."""

    dim: int
    bubble_degree: int
    rule: Callable[[int], tuple[FloatArray, FloatArray]]
    bubble: Callable[[FloatArray], tuple[FloatArray, FloatArray]]
    multiply: Callable[[FloatArray], FloatArray]


@functools.lru_cache(maxsize=64)
def _times_x(n: int) -> FloatArray:
    """X[k, a]: the coefficient of P_k in t·P_a (a < n): t P_a = ((a + 1) P_{a+1} + a P_{a−1}) / (2a + 1)."""
    out = np.zeros((n + 1, n))
    for a in range(n):
        out[a + 1, a] = (a + 1.0) / (2.0 * a + 1.0)
        if a > 0:
            out[a - 1, a] = a / (2.0 * a + 1.0)
    return out


def legendre_times_x(coefficients: FloatArray, axis: int) -> FloatArray:
    """The Legendre coefficients of t_axis · m from those of m (the array grows by one along every axis)."""
    times_x = _times_x(coefficients.shape[0])
    moved = np.tensordot(times_x, coefficients, axes=([1], [axis]))
    out = np.moveaxis(moved, 0, axis)
    pad = [(0, 1)] * coefficients.ndim
    pad[axis] = (0, 0)
    return np.asarray(np.pad(out, pad))


@functools.lru_cache(maxsize=32)
def _indices(d: int, degree: int) -> IntArray:
    """The multi-indices α with |α| ≤ ``degree`` (rows), in lexicographic order."""
    rows = [a for a in itertools.product(range(degree + 1), repeat=d) if sum(a) <= degree]
    return np.array(rows, dtype=np.int64)


def _evaluate(nodes: FloatArray, indices: IntArray) -> tuple[FloatArray, list[FloatArray]]:
    """P_α and its partial derivatives at the nodes: arrays (len(indices), len(nodes))."""
    d = nodes.shape[1]
    top = int(indices.max())
    tables = []
    for i in range(d):
        values = legendre.legvander(nodes[:, i], top).T
        slopes = np.stack([legendre.legval(nodes[:, i], legendre.legder(np.eye(top + 1)[k])) if k else
                           np.zeros(nodes.shape[0]) for k in range(top + 1)])
        tables.append((values, slopes))
    values = np.ones((indices.shape[0], nodes.shape[0]))
    for i in range(d):
        values *= tables[i][0][indices[:, i]]
    gradients = []
    for j in range(d):
        g = np.ones_like(values)
        for i in range(d):
            g *= tables[i][1 if i == j else 0][indices[:, i]]
        gradients.append(g)
    return values, gradients


def _orthonormal(values: FloatArray, weights: FloatArray) -> FloatArray:
    """T with (values.T @ T) orthonormal in the quadrature's inner product (small singular values dropped)."""
    _, s, vt = np.linalg.svd((values * np.sqrt(weights)).T, full_matrices=False)
    keep = s > _CUTOFF * s[0]
    return np.asarray(vt[keep].T / s[keep])


def bubble_ritz(domain: BubbleDomain, matrix: FloatArray, degree: int) -> tuple[float, FloatArray]:
    """The Rayleigh quotient ρ ≥ λ₁ of the Ritz vector and its coefficients c (∫u² = 1) in the basis b·P_α,
    |α| ≤ ``degree`` (:func:`_indices` order); ρ is recomputed from the explicit u."""
    from scipy.linalg import eigh

    d = matrix.shape[0]
    nodes, weights = domain.rule(2 * (degree + domain.bubble_degree) + 2)
    values, gradients = _evaluate(nodes, _indices(d, degree))
    bubble, bubble_gradient = domain.bubble(nodes)
    trial = values * bubble
    trial_gradients = [gradients[j] * bubble + bubble_gradient[j] * values for j in range(d)]
    transform = _orthonormal(trial, weights)
    # both forms as Gram matrices of the transformed basis (positive semi-definite whatever the rounding)
    eigenvalues, eigenvectors = np.linalg.eigh(matrix)
    root = (eigenvectors * np.sqrt(eigenvalues)) @ eigenvectors.T
    roots = np.sqrt(weights)[:, None]
    transformed = [g.T @ transform for g in trial_gradients]
    flux = np.vstack([roots * sum(root[j, i] * transformed[i] for i in range(d)) for j in range(d)])
    reduced = flux.T @ flux
    basis = roots * (trial.T @ transform)  # orthonormal up to the rounding the small singular values amplify
    gram = basis.T @ basis
    _, vectors = eigh((reduced + reduced.T) / 2.0, (gram + gram.T) / 2.0, subset_by_index=[0, 0])
    coefficients = transform @ vectors[:, 0]
    u = coefficients @ trial
    grad = np.stack([coefficients @ g for g in trial_gradients])
    mass = float(np.sum(weights * u * u))
    energy = float(np.sum(weights * np.einsum("ij,in,jn->n", matrix, grad, grad)))
    return energy / mass, coefficients / math.sqrt(mass)


@functools.lru_cache(maxsize=16)
def _derivative(top: int) -> FloatArray:
    """D[k, a]: the coefficient of P_k in P_a' (a ≤ top)."""
    out = np.zeros((top + 1, top + 1))
    for a in range(top + 1):
        for k in range(a - 1, -1, -2):
            out[k, a] = 2.0 * k + 1.0
    return out


def _legendre_of_trial(domain: BubbleDomain, coefficients: FloatArray, degree: int) -> FloatArray:
    """The Legendre coefficients (on :func:`_indices` of degree + deg b) of u = Σ c_α b·P_α."""
    d = domain.dim
    dense = np.zeros((degree + 1,) * d)
    dense[tuple(_indices(d, degree).T)] = coefficients
    product = domain.multiply(dense)
    return np.asarray(product[tuple(_indices(d, degree + domain.bubble_degree).T)])


@functools.lru_cache(maxsize=16)
def _divergence_parts(d: int, degree: int) -> tuple[FloatArray, ...]:
    """∂/∂t_i from the Legendre coefficients of degree ≤ degree + 1 to those of degree ≤ degree (one per i)."""
    source, target = _indices(d, degree + 1), _indices(d, degree)
    position = {tuple(a): n for n, a in enumerate(target.tolist())}
    derivative = _derivative(degree + 1)
    parts = []
    for i in range(d):
        part = np.zeros((target.shape[0], source.shape[0]))
        for s, alpha in enumerate(source.tolist()):
            for k in np.flatnonzero(derivative[:, alpha[i]]):
                beta = list(alpha)
                beta[i] = int(k)
                part[position[tuple(beta)], s] = derivative[k, alpha[i]]
        parts.append(part)
    return tuple(parts)


def bubble_flux(domain: BubbleDomain, matrix: FloatArray, coefficients: FloatArray,
                degree: int) -> tuple[float, float]:
    """The polynomial flux of least ‖A^(−½)σ‖ with div σ = −u (u from :func:`bubble_ritz`), and ‖div σ + u‖,
    both computed from the explicit σ by the domain's exact rule."""
    d = matrix.shape[0]
    q = degree + domain.bubble_degree  # the degree of u
    u_legendre = _legendre_of_trial(domain, coefficients, degree)
    if d == 2:
        return _stream_flux(domain, matrix, u_legendre, q)
    parts = _divergence_parts(d, q)
    nodes, weights = domain.rule(2 * (q + 1) + 2)
    values, _ = _evaluate(nodes, _indices(d, q + 1))
    transform = _orthonormal(values, weights)
    eigenvalues, vectors = np.linalg.eigh(matrix)
    root = (vectors * np.sqrt(eigenvalues)) @ vectors.T
    constraint = np.hstack([sum(root[i, j] * (parts[i] @ transform) for i in range(d)) for j in range(d)])
    unknowns = -np.linalg.lstsq(constraint, u_legendre, rcond=None)[0]
    tilde = unknowns.reshape(d, -1)
    sigma = [sum(root[i, j] * (transform @ tilde[j]) for j in range(d)) for i in range(d)]
    residual = sum(parts[i] @ sigma[i] for i in range(d)) + u_legendre
    residual_values = residual @ _evaluate(nodes, _indices(d, q))[0]
    defect = math.sqrt(float(np.sum(weights * residual_values**2)))
    sigma_values = np.stack([s @ values for s in sigma])
    inverse = np.linalg.inv(matrix)
    energy = float(np.sum(weights * np.einsum("ij,in,jn->n", inverse, sigma_values, sigma_values)))
    return energy, defect


def _stream_flux(domain: BubbleDomain, matrix: FloatArray, u_legendre: FloatArray, q: int) -> tuple[float, float]:
    """In 2-D, σ = σ_p + curl ψ: σ_p = (−∫u dt₁, 0) has div σ_p = −u exactly (Legendre antiderivative), and every
    curl ψ = (∂ψ/∂t₂, −∂ψ/∂t₁) is divergence-free, so the energy is minimised over ψ of total degree ≤ q + 2 by an
    unconstrained least-squares problem on the nodes, and whatever rounding does to ψ leaves div σ = −u."""
    dense = np.zeros((q + 1, q + 1))
    dense[tuple(_indices(2, q).T)] = u_legendre
    particular = -legendre.legint(dense, axis=0)  # (q + 2, q + 1)
    nodes, weights = domain.rule(2 * (q + 1) + 2)
    first = legendre.legval2d(nodes[:, 0], nodes[:, 1], particular)
    _, gradients = _evaluate(nodes, _indices(2, q + 2))
    curls = (gradients[1].T, -gradients[0].T)  # (n, K) each
    eigenvalues, vectors = np.linalg.eigh(matrix)
    inverse_root = (vectors / np.sqrt(eigenvalues)) @ vectors.T
    roots = np.sqrt(weights)[:, None]
    design = np.vstack([roots * (inverse_root[i, 0] * curls[0] + inverse_root[i, 1] * curls[1]) for i in range(2)])
    target = -np.concatenate([np.sqrt(weights) * inverse_root[i, 0] * first for i in range(2)])
    stream = np.linalg.lstsq(design, target, rcond=None)[0]
    sigma = np.stack([first + curls[0] @ stream, curls[1] @ stream])
    energy = float(np.sum(weights * np.einsum("ij,in,jn->n", np.linalg.inv(matrix), sigma, sigma)))
    residual = legendre.legder(particular, axis=0) + dense  # div σ + u: rounding only
    residual_values = legendre.legval2d(nodes[:, 0], nodes[:, 1], residual)
    return energy, math.sqrt(float(np.sum(weights * residual_values**2)))
