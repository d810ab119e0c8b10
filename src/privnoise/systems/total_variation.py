"""Exact total variation between the output laws of two statistical inputs: the audit of every design.

For N(μ₁, S₁) and N(μ₂, S₂):

* S₁ = S₂: TV = 2Φ(d/2) − 1 with d the Mahalanobis distance ‖S^{−1/2}(μ₁ − μ₂)‖ (closed form);
* otherwise TV = P₁(L > 0) − P₂(L > 0) with L(x) = log p₁(x) − log p₂(x), a quadratic form in a Gaussian vector
  (a generalised χ²). Its distribution function is computed by the Gil-Pelaez inversion
  P(L > 0) = ½ + (1/π)∫₀^∞ Im φ(u)/u du of its characteristic function
  φ(u) = exp(iuκ) Π_j (1 − 2iλ_ju)^{−1/2} exp(−u²b_j²/(2(1 − 2iλ_ju))), by adaptive quadrature.

:func:`monte_carlo_total_variation` (TV = E_{P₁}[(1 − p₂/p₁)⁺]) cross-checks it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import as_finite_array, as_matrix, check_positive_int
from ..exceptions import DimensionError, InvalidParameterError, SolverError
from ..mechanisms import Noise
from ..random import RNGLike, default_rng
from .gaussian_inputs import GaussianInput
from .horizon import observability_matrix, toeplitz_matrix
from .statespace import as_statespace
from .statistical_input import StatisticalInputNoise

__all__ = ["gaussian_total_variation", "monte_carlo_total_variation", "output_law", "total_variation"]


def _gaussian(
    mean: ArrayLike, cov: ArrayLike, owner: str, tag: str
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    mu = as_finite_array(mean, f"mean{tag}", owner, ndim=(0, 1)).reshape(-1)
    s = as_matrix(
        np.reshape(cov, (mu.size, mu.size)) if np.size(cov) == mu.size**2 else cov,
        f"cov{tag}",
        owner,
        positive_definite=True,
    )
    if s.shape[0] != mu.size:
        raise DimensionError(f"`cov{tag}` of `{owner}` must be {mu.size}×{mu.size}; got {s.shape}.")
    return mu, s


def _log_cf(
    u: NDArray[np.float64] | float, kappa: float, lam: NDArray[np.float64], b: NDArray[np.float64]
) -> Any:
    u = np.asarray(u, dtype=float)[..., None]
    z = 1.0 - 2j * lam * u
    return 1j * u[..., 0] * kappa + np.sum(-0.5 * np.log(z) - (u * u * b * b) / (2.0 * z), axis=-1)


def _prob_positive(kappa: float, lam: NDArray[np.float64], b: NDArray[np.float64]) -> float:
    """P(κ + Σ λ_j w_j² + b_j w_j > 0) for w ~ N(0, I), by Gil-Pelaez inversion."""
    from scipy import integrate  # imported here: the systems package loads without scipy (fast `stream`)

    spread = math.sqrt(float(np.sum(2 * lam**2 + b**2)))
    if spread == 0.0:
        return 1.0 if kappa > 0 else 0.0
    lam_s, b_s, k_s = lam / spread, b / spread, kappa / spread  # scale L to unit standard deviation

    def envelope(v: float) -> float:
        z = 1.0 + 4.0 * lam_s**2 * v * v
        return float(np.exp(np.sum(-0.25 * np.log(z) - v * v * b_s**2 / (2 * z))))

    def f(v: float) -> float:
        if v == 0.0:
            return k_s + float(np.sum(lam_s))  # the limit Im φ(v)/v → E[L]
        return float(np.exp(_log_cf(v, k_s, lam_s, b_s)).imag / v)

    # Head: [0, V] in chunks of about one oscillation of the mean phase; stop once the envelope is negligible.
    width = min(2.0, math.pi / max(abs(k_s) + float(np.sum(np.abs(lam_s))), 1e-9))
    total, v, limit = 0.0, 0.0, 60.0
    while v < limit:
        piece, _ = integrate.quad(f, v, v + width, epsabs=1e-13, epsrel=1e-12, limit=200)
        total += piece
        v += width
        if envelope(v) < 1e-13:
            break
        if v > 60.0 and width < 2.0:
            width = min(2.0, width * 1.5)
    else:
        # Slow (algebraic) decay: integrate the tail with QAWF on the slowly varying factor.
        nz = np.abs(lam_s) > 0
        omega = k_s - float(np.sum(b_s[nz] ** 2 / (4 * lam_s[nz])))

        def psi(w: float, nz: NDArray[np.bool_] = nz) -> complex:
            z = 1.0 - 2j * lam_s * w
            terms = np.where(
                nz,
                -0.5 * np.log(z) + 1j * w * b_s**2 / (4 * np.where(nz, lam_s, 1.0) * z),
                -w * w * b_s**2 / 2,
            )
            return complex(np.exp(np.sum(terms)))

        if abs(omega) > 1e-12:
            ts, _ = integrate.quad(lambda w: psi(w).real / w, v, np.inf, weight="sin", wvar=omega, limlst=200)
            tc, _ = integrate.quad(lambda w: psi(w).imag / w, v, np.inf, weight="cos", wvar=omega, limlst=200)
            tail = ts + tc
        else:
            tail, _ = integrate.quad(lambda w: psi(w).imag / w, v, np.inf, limit=500)
        if not math.isfinite(tail):
            raise SolverError("the Gil-Pelaez tail integral of `gaussian_total_variation` did not converge.")
        total += tail
    return min(max(0.5 + total / math.pi, 0.0), 1.0)


def gaussian_total_variation(mean1: ArrayLike, cov1: ArrayLike, mean2: ArrayLike, cov2: ArrayLike) -> float:
    """Exact TV(N(μ₁, S₁), N(μ₂, S₂)) = sup_A |P₁(A) − P₂(A)|.

    Examples
    --------
    >>> round(gaussian_total_variation([0.0], [[1.0]], [1.0], [[1.0]]), 6)      # 2Φ(1/2) − 1
    0.382925
    >>> round(gaussian_total_variation([0.0], [[1.0]], [0.0], [[4.0]]), 4)
    0.3227
    """
    owner = "gaussian_total_variation"
    m1, s1 = _gaussian(mean1, cov1, owner, "1")
    m2, s2 = _gaussian(mean2, cov2, owner, "2")
    if m1.size != m2.size:
        raise DimensionError(f"`mean2` of `{owner}` must have dimension {m1.size}; got {m2.size}.")
    diff = m1 - m2
    scale = max(float(np.max(np.abs(s1))), float(np.max(np.abs(s2))))
    if np.allclose(s1, s2, rtol=0.0, atol=1e-14 * scale):
        d = math.sqrt(float(diff @ np.linalg.solve(s1, diff)))
        return math.erf(d / (2.0 * math.sqrt(2.0)))  # 2Φ(d/2) − 1
    p1, p2 = np.linalg.inv(s1), np.linalg.inv(s2)
    a = 0.5 * (p2 - p1)
    lin = p1 @ m1 - p2 @ m2
    logdet = np.linalg.slogdet(s2)[1] - np.linalg.slogdet(s1)[1]

    def log_ratio(x: NDArray[np.float64]) -> float:
        return float(-0.5 * (x - m1) @ p1 @ (x - m1) + 0.5 * (x - m2) @ p2 @ (x - m2) + 0.5 * logdet)

    probs = []
    for mu, s in ((m1, s1), (m2, s2)):
        root = np.linalg.cholesky(s)
        lam, rot = np.linalg.eigh(root.T @ a @ root)
        b = rot.T @ root.T @ (2 * a @ mu + lin)
        probs.append(_prob_positive(log_ratio(mu), lam, b))
    return min(max(probs[0] - probs[1], 0.0), 1.0)


def monte_carlo_total_variation(
    mean1: ArrayLike,
    cov1: ArrayLike,
    mean2: ArrayLike,
    cov2: ArrayLike,
    *,
    draws: int = 200_000,
    rng: RNGLike = None,
) -> tuple[float, float]:
    """Monte Carlo TV = E_{P₁}[(1 − p₂/p₁)⁺] and its standard error (a cross-check, not a guarantee)."""
    owner = "monte_carlo_total_variation"
    m1, s1 = _gaussian(mean1, cov1, owner, "1")
    m2, s2 = _gaussian(mean2, cov2, owner, "2")
    k = check_positive_int(draws, "draws", owner, minimum=2)
    g = default_rng(rng)
    x = m1 + g.standard_normal((k, m1.size)) @ np.linalg.cholesky(s1).T

    def logpdf(mu: NDArray[np.float64], s: NDArray[np.float64]) -> NDArray[np.float64]:
        y = np.linalg.solve(np.linalg.cholesky(s), (x - mu).T)
        return -0.5 * np.sum(y * y, axis=0) - 0.5 * np.linalg.slogdet(s)[1]

    ratio = np.exp(np.minimum(logpdf(m2, s2) - logpdf(m1, s1), 50.0))
    vals = np.clip(1.0 - ratio, 0.0, None)
    return float(vals.mean()), float(vals.std(ddof=1) / math.sqrt(k))


def output_law(
    system: Any,
    horizon: int,
    law: GaussianInput | tuple[GaussianInput, GaussianInput],
    noise_cov: ArrayLike | None = None,
) -> GaussianInput:
    """The law of Y_{v,t} = O_t x₀ + N_t U_t + V_t for (x₀, U_t) ~ ``law`` (a joint law or a pair (x₀, U_t))."""
    sys = as_statespace(system)
    joint = law[0] & law[1] if isinstance(law, tuple) else law
    on = np.hstack([observability_matrix(sys, horizon), toeplitz_matrix(sys, horizon)])
    if not isinstance(joint, GaussianInput) or joint.dim != on.shape[1]:
        got = joint.dim if isinstance(joint, GaussianInput) else type(joint).__name__
        raise DimensionError(
            f"`law` of `output_law` must be a law of (x0, U_t) of dimension n + (t+1)m = {on.shape[1]}; got {got}."
        )
    cov = on @ joint.cov @ on.T
    if noise_cov is not None:
        cov = cov + np.asarray(noise_cov, dtype=float)
    return GaussianInput(mean=on @ joint.mean, cov=(cov + cov.T) / 2.0)


def total_variation(
    system: Any,
    noise: StatisticalInputNoise,
    law: GaussianInput | tuple[GaussianInput, GaussianInput],
    law_prime: GaussianInput | tuple[GaussianInput, GaussianInput],
) -> float:
    """Exact TV between the noisy output laws of two input laws under ``noise`` (the audit of a design).

    Examples
    --------
    >>> from privnoise.systems import StateSpace, statistical_input_noise
    >>> sys = StateSpace(A=[[0.9]], B=[[1.0]], C=[[1.0]], D=[[0.0]])
    >>> x0 = GaussianInput(mean=[90], cov=[[10]])
    >>> u1 = GaussianInput.iid(mean=21, var=0.1, steps=3)
    >>> u2 = GaussianInput.iid(mean=22, var=0.2, steps=3)
    >>> noise = statistical_input_noise(sys, horizon=2, c=2.02, delta=0.1, x0_public=x0)
    >>> total_variation(sys, noise, (x0, u1), (x0, u2)) <= 0.1
    True
    """
    if not isinstance(noise, Noise) or not hasattr(noise, "horizon") or not hasattr(noise, "covariance"):
        raise InvalidParameterError(
            f"`noise` of `total_variation` must be window noise such as a StatisticalInputNoise; got {type(noise).__name__}."
        )
    cov_v = noise.covariance()
    p = output_law(system, noise.horizon, law, cov_v)
    q = output_law(system, noise.horizon, law_prime, cov_v)
    return gaussian_total_variation(p.mean, p.cov, q.mean, q.cov)
