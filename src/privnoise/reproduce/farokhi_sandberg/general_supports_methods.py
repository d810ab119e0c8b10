"""Second methods of the general-support rows: Theorem 2 on a correlated box, Remark 7, Proposition 2, Remark 3.

Each function here uses numpy and scipy only, never the finite-element or Fisher-information code of privnoise
whose values the rows of :mod:`.general_supports` check:

* :func:`sine_galerkin` — a spectral Galerkin discretisation of Theorem 2's eigenproblem on a box, on products
  of sines, with its stiffness matrix by closed-form entries; it gives λ₁, the coefficients of u and
  𝓘_w = 4∫∇u∇uᵀ (rows ``thm2-trace-identity`` and ``remark7-correlated-gain``);
* :func:`ritz_bound` — the Rayleigh–Ritz upper bound of λ₁ on the first few sine modes, a dense matrix of a few
  entries (``remark7-correlated-gain``);
* :func:`information_along_segment` — Tr 𝓘 = ∫∇γᵀCCᵀ∇γ/γ along the segment (1 − t)γ₁ + tγ₂ by a Gauss–Legendre
  tensor rule, γ₁ from :func:`sine_galerkin` and γ₂ the product cos² written out (``prop2-convexity``);
* :func:`post_processing_by_convolution` — the Fisher information of y = Cx + w and z = y + w₂ from their
  densities on a grid, that of z by numerical convolution (``remark3-post-processing``).

For f(x) = Cx and a noise independent of x, Theorem 2's equation (12) reads Tr(CCᵀD²u) + μu = 0, i.e.
−∇·(CCᵀ∇u) = λu with u = 0 on ∂W and ∫u² = 1; its Fisher information (the display before Theorem 1) is
𝓘 = Cᵀ𝓘_wC with 𝓘_w = ∫∇γ∇γᵀ/γ = 4∫∇u∇uᵀ for γ = u², so Tr 𝓘 = 4∫∇uᵀCCᵀ∇u = 4λ.

References
----------
F. Farokhi and H. Sandberg, "Ensuring privacy with constrained additive noise by minimizing Fisher
information", Automatica 99 (2019) 275–288 (Theorem 2, eq. (12); Proposition 2; Remarks 3 and 7).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import signal
from scipy.sparse import linalg as sparse_linalg

from .._report import second_method

__all__ = [
    "SineGalerkin",
    "information_along_segment",
    "post_processing_by_convolution",
    "ritz_bound",
    "sine_galerkin",
]


@dataclass(frozen=True)
class SineGalerkin:
    """The principal eigenpair of −∇·(A∇u) = λu on a box from :func:`sine_galerkin`.

    Attributes
    ----------
    eigenvalue : float
        The Ritz value λ (an upper bound of λ₁, up to rounding).
    information : numpy.ndarray
        𝓘_w = 4∫∇u∇uᵀ of γ = u², 2×2.
    coefficients : numpy.ndarray
        c_jk of u = Σ c_jk X_j(w₁)Y_k(w₂), X_j = √(2/L₁) sin(jπ(w₁ − a₁)/L₁) (likewise Y_k), modes × modes;
        Σ c_jk² = ∫u² = 1 and c₁₁ > 0.
    lower, upper : numpy.ndarray
        The corners of the box.
    """

    eigenvalue: float
    information: NDArray[np.float64]
    coefficients: NDArray[np.float64]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]


def _sine_forms(
    gram: NDArray[np.float64], lengths: NDArray[np.float64], modes: int
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]]:
    """The stiffness matrix of ∫∇uᵀA∇v on the sine modes with j + k even, and its three parts.

    The 1-D sines are orthonormal and ∫X_j′X_{j′} = 2jj′/(j′² − j²) when j + j′ is odd (0 otherwise), so
    ∫∂₁φ_jk ∂₂φ_{j′k′} = B_{jj′}B_{k′k} and the stiffness is diag(A₁₁(jπ/L₁)² + A₂₂(kπ/L₂)²) + 2A₁₂ B ⊗ Bᵀ; the
    mass matrix is the identity. The principal eigenfunction is even under w − m ↦ m − w (m the centre of the
    box) and φ_jk has parity (−1)^{j+k}, so only j + k even is kept.
    """
    j = np.arange(1, modes + 1)
    jj, kk = np.meshgrid(j, j, indexing="ij")
    odd = (jj + kk) % 2 == 1
    b = np.zeros((modes, modes))
    b[odd] = 2.0 * jj[odd] * kk[odd] / (kk[odd] ** 2 - jj[odd] ** 2)
    keep = ((jj + kk) % 2 == 0).ravel()
    jk = (jj.ravel()[keep] - 1, kk.ravel()[keep] - 1)  # the kept (j, k), from 0
    d1 = (np.pi * (jk[0] + 1) / lengths[0]) ** 2
    d2 = (np.pi * (jk[1] + 1) / lengths[1]) ** 2
    cross = b[np.ix_(jk[0], jk[0])] * b[np.ix_(jk[1], jk[1])].T  # (B ⊗ Bᵀ) on the kept modes
    stiffness = np.diag(gram[0, 0] * d1 + gram[1, 1] * d2) + 2.0 * gram[0, 1] * cross
    return stiffness, np.stack([d1, d2]), cross, keep


@second_method
def sine_galerkin(gram: ArrayLike, lower: ArrayLike, upper: ArrayLike, modes: int) -> SineGalerkin:
    """λ₁, u and 𝓘_w of Theorem 2 on the box [lower, upper] by a spectral Galerkin method (a second method).

    Solves −∇·(A∇u) = λu, u = 0 on the boundary (eq. (12) for f(x) = Cx, A = CCᵀ) on the products of sines
    φ_jk = X_j(w₁)Y_k(w₂), j, k ≤ ``modes``, with the closed-form stiffness of :func:`_sine_forms`, by
    ``scipy.sparse.linalg.lobpcg`` from φ₁₁ with the diagonal as preconditioner (deterministic; the residual
    is checked). 𝓘_w = 4∫∇u∇uᵀ follows from the coefficients: 4Σc²(jπ/L₁)², 4Σc²(kπ/L₂)² and
    4cᵀ(B ⊗ Bᵀ)c. The identity Tr(A𝓘_w) = 4λ holds for the Ritz pair itself, so the method checks both the
    identity and the value of λ₁ of another discretisation. The error of λ decays like modes⁻³ (u's second
    derivatives do not vanish on the boundary when A₁₂ ≠ 0).

    Parameters
    ----------
    gram : array_like
        A = CCᵀ, symmetric positive definite, 2×2.
    lower, upper : array_like
        The corners of the box.
    modes : int
        The sines per axis (half the modes² products are kept, by parity).

    Returns
    -------
    SineGalerkin
    """
    a = np.asarray(gram, dtype=float)
    lo, hi = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    stiffness, diagonal, cross, keep = _sine_forms(a, hi - lo, modes)
    start = np.zeros((stiffness.shape[0], 1))
    start[0, 0] = 1.0  # the mode (1, 1), the product cos², comes first
    scale = np.diag(stiffness).copy()
    precondition = sparse_linalg.LinearOperator(
        stiffness.shape, matvec=lambda v: v.reshape(scale.shape[0], -1) / scale[:, None], dtype=float
    )
    values, vectors = sparse_linalg.lobpcg(stiffness, start, M=precondition, largest=False, tol=1e-11, maxiter=400)
    c = vectors[:, 0] * np.sign(vectors[0, 0])
    residual = float(np.linalg.norm(stiffness @ c - values[0] * c))
    if residual > 1e-8 * values[0]:
        raise RuntimeError(f"the sine Galerkin eigenpair did not converge (residual {residual:.2e})")
    off = float(c @ cross @ c)
    information = 4.0 * np.array([[c @ (diagonal[0] * c), off], [off, c @ (diagonal[1] * c)]])
    coefficients = np.zeros(modes * modes)
    coefficients[keep] = c
    return SineGalerkin(float(values[0]), information, coefficients.reshape(modes, modes), lo, hi)


@second_method
def ritz_bound(gram: ArrayLike, lower: ArrayLike, upper: ArrayLike, modes: int) -> float:
    """The Rayleigh–Ritz upper bound of λ₁ on the sines φ_jk with j, k ≤ ``modes`` and j + k even (Remark 7).

    With ``modes`` = 2 the space is {φ₁₁, φ₂₂}, φ₁₁² being the product cos² of Corollary 1, and the 2×2 stiffness
    has the off-diagonal entry 2A₁₂B₁₂B₂₁ = −32A₁₂/9: when A₁₂ ≠ 0 the smallest eigenvalue lies strictly below
    φ₁₁'s Rayleigh quotient π²(A₁₁/L₁² + A₂₂/L₂²), so the product cos² is not optimal.
    """
    lo, hi = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    stiffness, _, _, _ = _sine_forms(np.asarray(gram, dtype=float), hi - lo, modes)
    return float(np.linalg.eigvalsh(stiffness)[0])


@second_method
def information_along_segment(
    galerkin: SineGalerkin, gram: ArrayLike, weights: tuple[float, ...], nodes: int
) -> tuple[float, float, list[float]]:
    """Tr 𝓘 of γ₁, γ₂ and the convexity gaps along (1 − t)γ₁ + tγ₂ by quadrature (Proposition 2).

    Tr 𝓘(γ) = ∫∇γᵀA∇γ/γ (A = CCᵀ) by a Gauss–Legendre tensor rule of ``nodes``² points on the box; γ₁ = u² with u
    the sine series of ``galerkin`` and γ₂ = Π(2/Lᵢ)cos²(π(wᵢ − mᵢ)/Lᵢ), the product cos² of Corollary 1, with
    their gradients written out. The gap at t is Tr 𝓘(γ_t) − [(1 − t)Tr 𝓘(γ₁) + t Tr 𝓘(γ₂)]; pointwise it equals
    −t(1 − t)(γ₁γ₂/γ_t)(s₁ − s₂)ᵀA(s₁ − s₂) with sᵢ = ∇log γᵢ, so it is ≤ 0 for A ⪰ 0 (and ≥ 0 for A ⪯ 0).

    Returns
    -------
    tuple
        Tr 𝓘(γ₁), Tr 𝓘(γ₂) and the gap at each of ``weights``.
    """
    a = np.asarray(gram, dtype=float)
    lo, hi = galerkin.lower, galerkin.upper
    length, mid = hi - lo, (lo + hi) / 2.0
    j = np.arange(1, galerkin.coefficients.shape[0] + 1)
    x, wq = np.polynomial.legendre.leggauss(nodes)
    pts = [lo[i] + (x + 1.0) * length[i] / 2.0 for i in range(2)]
    phase = [np.outer(pts[i] - lo[i], j) * math.pi / length[i] for i in range(2)]
    sines = [math.sqrt(2.0 / length[i]) * np.sin(phase[i]) for i in range(2)]
    slopes = [math.sqrt(2.0 / length[i]) * (j * math.pi / length[i]) * np.cos(phase[i]) for i in range(2)]
    coef = galerkin.coefficients
    u = sines[0] @ coef @ sines[1].T
    g1 = u * u
    d1 = np.stack([2.0 * u * (slopes[0] @ coef @ sines[1].T), 2.0 * u * (sines[0] @ coef @ slopes[1].T)], axis=-1)
    f = [2.0 / length[i] * np.cos(math.pi * (pts[i] - mid[i]) / length[i]) ** 2 for i in range(2)]
    df = [-2.0 * math.pi / length[i] ** 2 * np.sin(2.0 * math.pi * (pts[i] - mid[i]) / length[i]) for i in range(2)]
    g2 = np.outer(f[0], f[1])
    d2 = np.stack([np.outer(df[0], f[1]), np.outer(f[0], df[1])], axis=-1)
    weight = np.outer(wq * length[0] / 2.0, wq * length[1] / 2.0)

    def trace_information(g: NDArray[np.float64], d: NDArray[np.float64]) -> float:
        pos = g > 0
        return float(np.sum(weight[pos] * np.einsum("ni,ij,nj->n", d[pos], a, d[pos]) / g[pos]))

    j1, j2 = trace_information(g1, d1), trace_information(g2, d2)
    gaps = [trace_information((1 - t) * g1 + t * g2, (1 - t) * d1 + t * d2) - ((1 - t) * j1 + t * j2) for t in weights]
    return j1, j2, gaps


def _gaussian(w: NDArray[np.float64], cov: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The N(0, cov) density on the points ``w`` (last axis 2) and its gradient −cov⁻¹w·p."""
    inv = np.linalg.inv(cov)
    p = np.exp(-0.5 * np.einsum("...i,ij,...j->...", w, inv, w)) / (2.0 * math.pi * math.sqrt(np.linalg.det(cov)))
    return p, -(w @ inv) * p[..., None]


def _location_information(p: NDArray[np.float64], grad: NDArray[np.float64], cell: float) -> NDArray[np.float64]:
    """∫∇p∇pᵀ/p by the rectangle rule on the grid (where p exceeds 10⁻¹⁴ of its maximum)."""
    p, grad = p.ravel(), grad.reshape(-1, 2)
    pos = p > 1e-14 * p.max()
    return np.einsum("ni,nj->ij", grad[pos] / p[pos, None], grad[pos]) * cell


@second_method
def post_processing_by_convolution(
    c: ArrayLike, sigma: ArrayLike, extra: ArrayLike, *, half_width: float = 8.0, points: int = 401
) -> tuple[float, float, float]:
    """Tr 𝓘_y⁻¹, Tr 𝓘_z⁻¹ and λ_min(𝓘_y − 𝓘_z) for y = Cx + w, z = y + w₂ from the densities (Remark 3).

    w ~ N(0, Σ) and w₂ ~ N(0, Σ₂) are written out on a grid of ``points``² nodes on [−h, h]², h = ``half_width``;
    the density of w + w₂ and its gradient are the numerical convolutions p_w * p₂ and p_w * ∇p₂
    (``scipy.signal.fftconvolve``), so that the law of z is never taken from the closure of Gaussians under
    sums. 𝓘 = Cᵀ(∫∇p∇pᵀ/p)C by the rectangle rule, which is exponentially accurate for these smooth, fast
    decaying densities.
    """
    cm = np.asarray(c, dtype=float)
    axis = np.linspace(-half_width, half_width, points)
    cell = float(axis[1] - axis[0]) ** 2
    w = np.stack(np.meshgrid(axis, axis, indexing="ij"), axis=-1)
    p_w, grad_w = _gaussian(w, np.asarray(sigma, dtype=float))
    p_2, grad_2 = _gaussian(w, np.asarray(extra, dtype=float))
    p_z = signal.fftconvolve(p_w, p_2, mode="same") * cell
    grad_z = np.stack([signal.fftconvolve(p_w, grad_2[..., i], mode="same") * cell for i in range(2)], axis=-1)
    info_y = cm.T @ _location_information(p_w, grad_w, cell) @ cm
    info_z = cm.T @ _location_information(p_z, grad_z, cell) @ cm
    return (
        float(np.trace(np.linalg.inv(info_y))),
        float(np.trace(np.linalg.inv(info_z))),
        float(np.linalg.eigvalsh(info_y - info_z)[0]),
    )
