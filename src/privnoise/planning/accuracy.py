"""Accuracy of a release from the law of its noise: radii, confidence intervals and their exact coverage.

Every interval here describes the **noise only**: it covers the exact statistic of the contribution-bounded,
clamped data (the value the noise was added to) with the stated probability over the noise. It says nothing of
sampling error (how the data relate to a population), nor of what bounding and clamping removed.

:class:`NoiseLaw`
    The error E = release − statistic of one released number. Sums and other continuous values: E = W plus the
    rounding of the snapped output (|·| ≤ Λ/2), radius q + Λ/2 with P(|W| ≤ q) = level (Laplace: q = b log(1/α);
    Gaussian: q = σ Φ⁻¹(1 − α/2)). Counts are released as integers, E = round(W), whose exact law gives the
    smallest integer radius j with P(|round(W)| ≤ j) ≥ level and that exact coverage.
:func:`ratio_interval`
    The mean c + S/N from a noisy sum Ŝ = S + W₁ of (x − c) and a noisy count N̂ = N + W₂: the Fieller-type set
    {m : P(|W₁ − mW₂| ≥ |Ŝ − mN̂|) > α} (a test of m inverted; W₁ − mW₂ is exactly the law of Ŝ − mN̂ at the true
    m = S/N), closed form for both families (a difference of two Laplace laws; a Gaussian of variance σ₁² + m²σ₂²).
    Its coverage is exact (conservative by the grid rounding, ≤ Λ/2 per term); vectorised over many releases.
:func:`variance_interval`
    Interval arithmetic on three intervals at level 1 − α/3 each (conservative).
:func:`exponential_rank_radius`
    The exponential mechanism over C candidates selects, with probability ≥ 1 − α, a candidate whose score is within
    (cΔ/ε) log((C − 1)/α) of the best (McSherry & Talwar 2007): for a quantile, the number of rows below the released
    value is within that many rows of q·n (plus the best score the grid allows).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_in_range
from ..mechanisms.error_laws import ErrorLaw

__all__ = [
    "NoiseLaw",
    "check_level",
    "exponential_rank_radius",
    "ratio_interval",
    "variance_interval",
]

_EPS = float(np.finfo(float).eps)


def check_level(level: Any, owner: str) -> float:
    """A confidence level in (0, 1)."""
    return check_in_range(level, "level", owner, low=0.0, high=1.0, low_open=True, high_open=True)


@dataclass(frozen=True, slots=True)
class NoiseLaw:
    """The law of one released number's error (see the module docstring): the noise family's error law, the grid
    Λ of the snapped output (0: exact) and whether the number is released as an integer (E = round(W))."""

    error: ErrorLaw
    grid: float = 0.0
    integer: bool = False

    @property
    def scale(self) -> float:
        """The error law's parameter (b, σ or t)."""
        return self.error.scale

    def _mass_within(self, x: float) -> float:
        return self.error.mass_within(x)

    def radius(self, level: float) -> tuple[float, float]:
        """(r, coverage): P(|E| ≤ r) = coverage ≥ level (exact for integers; ≥ level, from the rounding bound, else)."""
        if self.integer:
            j = max(0, math.ceil(self.error.quantile(level) - 0.5))
            while j > 0 and self._mass_within(j - 0.5) >= level:
                j -= 1
            while self._mass_within(j + 0.5) < level:
                j += 1
            return float(j), self._mass_within(j + 0.5)
        return self.error.quantile(level) + self.grid / 2.0, level

    def variance(self) -> float:
        """Var W (the rounding aside)."""
        return self.error.variance()

    def describe(self) -> dict[str, Any]:
        return {**self.error.describe(), "grid": self.grid, "integer": self.integer}


def _difference_tail(x: NDArray[np.float64], first: NoiseLaw, second: NoiseLaw, m: NDArray[np.float64]) -> NDArray[np.float64]:
    """P(|W₁ − mW₂| ≥ x) for x ≥ 0, elementwise (the two laws of one family)."""
    return np.asarray(first.error.difference_tail(x, np.abs(m) * second.scale), dtype=float)


def _p_value(m: NDArray[np.float64], s_hat: NDArray[np.float64], n_hat: NDArray[np.float64], first: NoiseLaw,
             second: NoiseLaw, offset: float = 0.0) -> NDArray[np.float64]:
    slope = m + offset  # the coefficient of the count's noise in Ŝ − mN̂ (the uncentred ratio)
    residual = np.abs(s_hat - m * n_hat) - (first.grid / 2.0 + np.abs(slope) * second.grid / 2.0)
    return _difference_tail(np.maximum(residual, 0.0), first, second, slope)


def _p_value_one(m: float, s_hat: float, n_hat: float, first: NoiseLaw, second: NoiseLaw, offset: float) -> float:
    """:func:`_p_value` of one release at one m, on floats (a root search calls it a dozen times per answer;
    numpy's per-call overhead on one-element arrays is 20× the arithmetic). Same formulas."""
    slope = m + offset
    x = max(abs(s_hat - m * n_hat) - (first.grid / 2.0 + abs(slope) * second.grid / 2.0), 0.0)
    return float(first.error.difference_tail(x, abs(slope) * second.scale))


def _extend_one(limit: float, boundary: float, accepted: Callable[[float], bool]) -> float:
    """``limit`` moved past the farthest accepted of 32 equally spaced points between it and ``boundary``.

    A guard for accepted sets that are not intervals: the limit becomes the grid point after the farthest accepted
    one (``boundary`` when that is the last), so the interval holds every accepted grid point. (The p-values of
    :func:`_p_value` have not been seen to need it: on each side of the estimate their accepted set is an interval
    or reaches the range's edge, which the callers take first; the rule is tested on sets given directly.)
    """
    start, span = limit, boundary - limit
    if span != 0.0:
        for j in range(1, 33):
            if accepted(start + span * (j / 32.0)):
                limit = start + span * (min(j + 1, 32) / 32.0)
    return limit


def _extend_many(limit: NDArray[np.float64], boundary: NDArray[np.float64],
                 accepted: Callable[[NDArray[np.float64]], NDArray[np.bool_]]) -> NDArray[np.float64]:
    """:func:`_extend_one` of many limits at once: ``accepted`` is evaluated once, on every grid point of every
    limit (an array of 32 rows), and each limit moves past its farthest accepted point."""
    start, span = limit, boundary - limit
    hits = accepted(start + span * (np.arange(1, 33)[:, None] / 32.0))
    last = np.where(hits.any(axis=0), 32 - np.argmax(hits[::-1], axis=0), 0)  # the farthest accepted step, 0: none
    return np.where(last > 0, start + span * (np.minimum(last + 1, 32) / 32.0), limit)


def _crossing(f: Callable[[float], float], a: float, b: float, xtol: float) -> float:
    """A root of ``f`` between ``a`` (f > 0) and ``b`` (f ≤ 0) to within ``xtol``: false position with the Illinois
    modification (superlinear on a smooth crossing), falling back to a bisection step whenever the bracket does
    not shrink by half, so that it never needs more steps than bisection. Once a point is next to the root
    (|f| ≤ 10⁻⁶ of its values at the ends), a step across it (twice the secant's distance, plus xtol/2) is tried:
    a change of sign there makes that the bracket (false position alone keeps one end far away).

    Kept here rather than taken from scipy.optimize, whose import alone costs a command-line release several times
    its whole computation. The caller's guard (:func:`_extend_one`) makes the limit safe whatever the root's last
    digits.

    >>> round(_crossing(lambda x: 2.0 - x * x, 0.0, 2.0, 1e-14), 12)
    1.414213562373
    """
    fa, fb = f(a), f(b)
    small = 1e-6 * max(abs(fa), abs(fb))
    side = 0
    for _ in range(200):
        if abs(b - a) <= xtol:
            break
        width = abs(b - a)
        c = b - fb * (b - a) / (fb - fa) if fb != fa else 0.5 * (a + b)
        if not min(a, b) < c < max(a, b):
            c = 0.5 * (a + b)
        fc = f(c)
        if fc == 0.0:
            return c
        if abs(fc) <= small and fb != fa:  # next to the root: a step across it closes the bracket at once
            other = b if (fc > 0.0) == (fa > 0.0) else a
            shift = 2.0 * abs(fc * (b - a) / (fb - fa)) + 0.5 * xtol  # twice the secant's distance to the root
            d = c + math.copysign(shift, other - c)
            if min(a, b) < d < max(a, b):
                fd = f(d)
                if (fd > 0.0) != (fc > 0.0):
                    (a, fa), (b, fb) = ((c, fc), (d, fd)) if (fc > 0.0) == (fa > 0.0) else ((d, fd), (c, fc))
                    side = 0
                    continue
        if (fc > 0.0) == (fa > 0.0):
            a, fa = c, fc
            if side == -1:
                fb *= 0.5  # Illinois: the end that stays twice in a row counts half
            side = -1
        else:
            b, fb = c, fc
            if side == 1:
                fa *= 0.5
            side = 1
        if abs(b - a) > 0.5 * width:  # slow progress: bisect once
            m = 0.5 * (a + b)
            fm = f(m)
            if (fm > 0.0) == (fa > 0.0):
                a, fa = m, fm
            else:
                b, fb = m, fm
            side = 0
    return 0.5 * (a + b)


def _one_ratio_interval(s_hat: float, n_hat: float, sum_law: NoiseLaw, count_law: NoiseLaw, alpha: float, h: float,
                        offset: float) -> tuple[float, float]:
    """:func:`ratio_interval` of one release, on floats: the crossing of each limit by :func:`_crossing` on
    log p − log α (about ten evaluations instead of 64 bisection steps), then the same guard with its 32 points
    evaluated at once (:func:`_extend_many`)."""

    def accepted(m: float) -> bool:
        return _p_value_one(m, s_hat, n_hat, sum_law, count_law, offset) > alpha

    if not n_hat > 0:
        return -h, h
    centre = min(max(s_hat / n_hat, -h), h)
    if not accepted(centre):
        return centre, centre
    tolerance = 1e-13 * max(h, 1e-300)
    log_alpha = math.log(alpha)
    limits = []
    for boundary in (-h, h):
        limit = boundary
        if not accepted(boundary):

            def excess(m: float) -> float:  # log p − log α: the same sign as p − α, and nearly linear in m
                p = _p_value_one(m, s_hat, n_hat, sum_law, count_law, offset)
                return math.log(max(p, 1e-300)) - log_alpha

            root = _crossing(excess, centre, boundary, tolerance)
            # the limit is on the rejected side of the crossing, as the bisection's `far`
            step = math.copysign(4.0 * (tolerance + 4.0 * _EPS * abs(root)), boundary)
            limit = root if excess(root) <= 0.0 else min(max(root + step, -h), h)
        limits.append(limit)
    if limits == [-h, h]:  # the whole range: the guard has nothing to extend
        return -h, h
    low, high = _extend_many(np.array(limits), np.array([-h, h]), lambda m: _p_value(
        m, np.array(s_hat), np.array(n_hat), sum_law, count_law, offset) > alpha)
    return min(max(float(low), -h), h), min(max(float(high), -h), h)


def ratio_interval(
    s_hat: ArrayLike,
    n_hat: ArrayLike,
    sum_law: NoiseLaw,
    count_law: NoiseLaw,
    level: float,
    *,
    half_range: float,
    offset: float = 0.0,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Confidence limits for m = S/N within [−h, h] (module docstring), vectorised over releases.

    Parameters
    ----------
    s_hat, n_hat : array_like
        Noisy sums of (x − c) and noisy counts.
    sum_law, count_law : NoiseLaw
        Their noise laws (same family).
    level : float
        Confidence level.
    half_range : float
        h = (high − low)/2: m = S/N always lies in [−h, h].
    offset : float
        c when ``s_hat`` was made as Ŝ − cN̂ from a noisy sum of the uncentred values (its error is then
        W₁ − cW₂, and Ŝ − cN̂ − mN̂ = W₁ − (m + c)W₂ at the true m); 0 when the centred values were summed.

    Returns
    -------
    (low, high) : arrays
        Limits for m (add the centre c for the mean).

    Examples
    --------
    >>> from privnoise.mechanisms.error_laws import LaplaceError
    >>> law = NoiseLaw(LaplaceError(1.0))
    >>> low, high = ratio_interval([50.0], [100.0], law, law, 0.95, half_range=1.0)
    >>> bool(low[0] < 0.5 < high[0])
    True
    """
    s = np.atleast_1d(np.asarray(s_hat, dtype=float))
    n = np.atleast_1d(np.asarray(n_hat, dtype=float))
    alpha = 1.0 - level
    h = float(half_range)
    if s.size == 1:  # one release (the server's answers): Brent's method on scalars
        low, high = _one_ratio_interval(float(s[0]), float(n[0]), sum_law, count_law, alpha, h, offset)
        return np.array([low]), np.array([high])
    positive = n > 0
    centre = np.clip(np.where(positive, s / np.where(positive, n, 1.0), 0.0), -h, h)
    inside = _p_value(centre, s, n, sum_law, count_law, offset) > alpha
    limits = []
    for boundary in (-h, h):
        edge = np.full_like(centre, boundary)
        open_to_edge = _p_value(edge, s, n, sum_law, count_law, offset) > alpha
        near, far = centre.copy(), edge.copy()
        for _ in range(64):  # bisection between a point inside and one outside the set
            middle = (near + far) / 2.0
            accepted = _p_value(middle, s, n, sum_law, count_law, offset) > alpha
            near = np.where(accepted, middle, near)
            far = np.where(accepted, far, middle)
        limit = np.where(open_to_edge, edge, far)
        limit = np.clip(_extend_many(limit, edge, lambda m: _p_value(m, s, n, sum_law, count_law, offset) > alpha),
                        -h, h)
        limits.append(np.where(positive & inside, limit, np.where(positive, centre, edge)))
    return limits[0], limits[1]


def variance_interval(
    n_hat: float,
    s1_hat: float,
    s2_hat: float,
    laws: tuple[NoiseLaw, NoiseLaw, NoiseLaw],
    level: float,
    *,
    half_range: float,
) -> tuple[float, float]:
    """Limits for the variance S₂/N − (S₁/N)² of values centred in [−h, h] (each part at level 1 − α/3).

    Examples
    --------
    >>> from privnoise.mechanisms.error_laws import LaplaceError
    >>> law = NoiseLaw(LaplaceError(0.5))
    >>> low, high = variance_interval(1000.0, 0.0, 250.0, (law, law, law), 0.95, half_range=1.0)
    >>> bool(low < 0.25 < high)
    True
    """
    part = 1.0 - (1.0 - level) / 3.0
    rn, rs1, rs2 = (law.radius(part)[0] for law in laws)
    n_low, n_high = n_hat - rn, n_hat + rn
    s1_low, s1_high = s1_hat - rs1, s1_hat + rs1
    s2_low, s2_high = max(s2_hat - rs2, 0.0), s2_hat + rs2
    top = half_range * half_range
    if n_low <= 0:
        return 0.0, top
    biggest = max(s1_low * s1_low, s1_high * s1_high)
    smallest = 0.0 if s1_low <= 0.0 <= s1_high else min(s1_low * s1_low, s1_high * s1_high)
    low = s2_low / n_high - biggest / (n_low * n_low)
    high = s2_high / n_low - smallest / (n_high * n_high)
    return float(min(max(low, 0.0), top)), float(min(max(high, 0.0), top))


def exponential_rank_radius(epsilon: float, sensitivity: float, candidates: int, level: float, *,
                            monotone: bool = False) -> float:
    """t with P(score gap > t) ≤ 1 − level for the exponential mechanism over ``candidates`` candidates.

    t = (cΔ/ε) log((C − 1)/α), c = 2 (1 for monotone scores): the union bound over the C − 1 other candidates,
    attained when they all share one score.

    Examples
    --------
    >>> round(exponential_rank_radius(1.0, 0.5, 1001, 0.95), 3)
    9.903
    """
    if candidates < 2:
        return 0.0
    alpha = 1.0 - level
    factor = 1.0 if monotone else 2.0
    return factor * sensitivity / epsilon * math.log((candidates - 1) / alpha)
