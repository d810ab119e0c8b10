"""Richardson extrapolation of the discrete eigenvalues of :mod:`privnoise.fisher.fem`.

The discrete eigenvalues λ_h of successive meshes approach λ₁ like λ_h ≈ λ₁ + c·N^(−r) in the number N of
unknowns (P2 elements: r = 4/d on resolved meshes). :func:`extrapolate` fits r to the last three levels and
extrapolates λ₁. The extrapolation is an estimate only: the solver reports it clipped into the guaranteed bracket
of :mod:`privnoise.fisher._fem_bounds`, and stops on the bracket's width. :func:`error_estimate` (the contraction
of successive levels) is used only when no bracket is requested (``certify=False``, for searches that solve many
eigenproblems and need estimates): it is no guarantee (on a correlated cube it claimed 6.1e-6 where the error was
1.9e-5).
"""

from __future__ import annotations

__all__ = ["error_estimate", "extrapolate"]


def extrapolate(history: list[tuple[int, float]], nominal_rate: float) -> tuple[float, float]:
    """Richardson extrapolation λ∞ of λ_N ≈ λ∞ + c N^(−r), r fitted to the last three levels when possible;
    returns (λ∞, r)."""
    if len(history) < 2:
        return history[-1][1], nominal_rate
    (n1, l1), (n2, l2) = history[-2], history[-1]
    rate = nominal_rate
    if len(history) >= 3:
        n0, l0 = history[-3]
        d01, d12 = l0 - l1, l1 - l2
        if d01 > 0 and d12 > 0:
            from scipy.optimize import brentq

            def gap(r: float) -> float:
                return (n0**-r - n1**-r) / (n1**-r - n2**-r) - d01 / d12

            lo, hi = 0.2, 3.0 * nominal_rate
            if gap(lo) * gap(hi) < 0:
                rate = brentq(gap, lo, hi, xtol=1e-10)
    factor = (n2 / n1) ** rate - 1.0
    return (l2 - (l1 - l2) / factor if factor > 0 else l2), rate


def error_estimate(
    history: list[tuple[int, float]], estimates: list[float], rate: float, *, uniform: bool
) -> float:
    """The error of the latest extrapolation, estimated from successive levels.

    Uniform refinement (every cell split, unknowns × 2ᵈ per level): the previous extrapolation was off by about
    the change δ between the two, and the extrapolation's own error contracts at least like the discrete error
    (its leading term is gone), so the latest one is within δ·(N₋₁/N)^r. Adaptive refinement grows the mesh
    irregularly (× 1.6) and the fitted rate is noisier: there the larger of δ and the Richardson correction
    |λ_h − λ∞| (the discrete value's own error), a bound on the previous level's error, is reported.
    """
    correction = abs(history[-1][1] - estimates[-1])
    if len(estimates) < 2:
        return correction
    shift = abs(estimates[-1] - estimates[-2])
    if uniform:
        return shift * min(1.0, (history[-2][0] / history[-1][0]) ** rate)
    return max(correction, shift)
