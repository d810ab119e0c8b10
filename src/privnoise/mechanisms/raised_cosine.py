"""Raised-cosine (cos²) noise on a box: the Fisher-information-optimal bounded noise.

Farokhi & Sandberg, Corollaries 1, 3 and 5: on ``W = [w̲, w̄]`` the density minimising the Fisher information is

    γ(w) = (2/L) cos²(π/L · (w − (w̲ + w̄)/2)),    L = w̄ − w̲,

independently per coordinate on a box. With ``s = (w − w̲)/L`` it is ``(2/L) sin²(π s)``; privnoise evaluates it
through the distance to the nearer edge so that values near the edges keep full relative precision.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import readonly
from ..exceptions import InvalidParameterError
from ..linalg import SymmetricForm
from ..snapping import CHUNK, fill_with_rejection, scratch
from ._base import Mechanism, vector_or_scalar
from .laplace import random_signs, select
from .parameters import broadcast_pair, coordinate_form, elementwise, keep_compact, listed, smallest, total

__all__ = ["RaisedCosine", "t_minus_sin_t"]

# Envelope constant of the rejection sampler: sup over d in (0, 1/2] of sin²(πd)/(2d) = 1.13821685286633…,
# attained where tan(πd) = 2πd (πd ≈ 1.16556, d ≈ 0.37101), rounded up. Any larger constant keeps the sampler
# exact, a smaller one does not; tests check it bounds the ratio.
_ENVELOPE = 1.1382169
# The probability that a proposal is refused: 1 − 1/M (a proposal is accepted with probability 1/M overall).
_REFUSED = 1.0 - 1.0 / _ENVELOPE


# Coefficients (−1)^(k+1)/(2k+1)! of t^(2k+1), k = 10 down to 1, for Horner's rule in t².
_SERIES = tuple((-1.0) ** (k + 1) / math.factorial(2 * k + 1) for k in range(10, 0, -1))


def t_minus_sin_t(t: NDArray[np.float64]) -> NDArray[np.float64]:
    """``t − sin t`` without cancellation for small ``t`` (t ≥ 0).

    Examples
    --------
    >>> import numpy as np
    >>> float(t_minus_sin_t(np.array(1e-6)))  # doctest: +ELLIPSIS
    1.6666666666...e-19
    """
    t = np.asarray(t, dtype=np.float64)
    # Below 1.5 the subtraction t − sin t would lose up to ~25 ulp (at t = 0.5); use the Taylor series
    # t³/3! − t⁵/5! + … + t²¹/21! there (at t = 1.5 the first omitted term is below 1e-18 relative). Above 1.5
    # the cancellation costs less than a factor 3.
    small = t < 1.5
    ts = np.where(small, t, 0.0)
    t2 = ts * ts
    poly = np.zeros_like(t2)
    for coefficient in _SERIES:
        poly = poly * t2 + coefficient
    series = ts * t2 * poly
    return np.where(small, series, t - np.sin(np.where(small, 1.0, t)))


def _variance(width: NDArray[np.float64]) -> NDArray[np.float64]:
    """(π² − 6) L² / (12 π²), the variance of cos² noise on an interval of width L (Appendix E)."""
    return (math.pi**2 - 6.0) * width**2 / (12.0 * math.pi**2)


# Relative error bound on sin² evaluated in single precision (argument rounding plus a few ulp of sinf),
# with a wide safety factor; draws whose test falls inside this band are decided in double precision.
_SINGLE_PRECISION_BAND = 2e-6


def _propose_edge_distances(view: NDArray[np.float64], generator: np.random.Generator) -> NDArray[np.intp]:
    """One rejection round written into ``view``: proposals ``e = 2d`` in [0, 1); returns the rejected positions."""
    m = view.size
    x, s, threshold = scratch("raised cosine", 3, m)
    single = s.view(np.float32)[:m]
    generator.random(out=view)
    np.sqrt(view, out=view)  # proposal density 2e on [0, 1), i.e. 8d for d = e/2
    np.multiply(view, np.pi / 2.0, out=x)  # πd
    single[...] = x
    np.sin(single, out=single)
    np.multiply(single, single, out=s, dtype=np.float64)  # sin² of the single-precision sine
    generator.random(out=threshold)
    threshold *= view
    threshold *= _ENVELOPE  # accept iff U·M·e < sin²(πe/2), probability sin²(πd)/(2Md)
    s *= 1.0 + _SINGLE_PRECISION_BAND
    rejected = np.flatnonzero(threshold >= s * ((1.0 - _SINGLE_PRECISION_BAND) / (1.0 + _SINGLE_PRECISION_BAND)))
    unsure = rejected[threshold[rejected] < s[rejected]]
    if unsure.size:  # inside the band: decided in double precision
        exact = np.sin(x[unsure])
        keep = threshold[unsure] < exact * exact
        rejected = np.setdiff1d(rejected, unsure[keep], assume_unique=True)
    return rejected


def _edge_distances(n: int, generator: np.random.Generator, out: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """Draw ``n`` distances to the nearer edge, in units of half the width (``e = 2d`` in [0, 1)), into ``out``.

    The distance ``d`` (units of the width L) of a raised-cosine variate from the nearer edge has density
    4 sin²(πd) on [0, 1/2]. Proposal: density 8d (``d = sqrt(U)/2``), accepted with probability sin²(πd)/(2Md),
    M = sup sin²(πd)/(2d), so about 88 % of proposals are kept. The test is made in single precision and
    re-made in double precision inside a band around the boundary, so the result is the exact rejection sampler.
    Work proceeds in cache-sized chunks (:func:`privnoise.snapping.fill_with_rejection`); the number of rounds does
    not depend on any data.
    """
    return fill_with_rejection(
        np.empty(n) if out is None else out, lambda view: _propose_edge_distances(view, generator), _REFUSED
    )


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class RaisedCosine(Mechanism):
    """Independent cos² noise on the box ``[lower, upper]`` (per coordinate).

    Parameters
    ----------
    lower, upper : float or array_like
        Ends of the support; scalars give a scalar mechanism, 1-d arrays a vector one (broadcast together).
        Any box is allowed, including ones that do not contain 0.

    Notes
    -----
    Per coordinate with ``L = upper − lower`` and ``c = (lower + upper)/2`` (Farokhi & Sandberg, Corollary 1):

    * mean ``c``; variance ``(π² − 6) L² / (12 π²)`` (Appendix E);
    * quality ``Q = Σ [(π² − 6) L²/(12π²) + c²]`` (the printed Corollary 2(ii) holds only when an end is 0);
    * Fisher information ``4π²/L²`` (so κ = m/(4π²) in Corollary 2(i));
    * entropy ``log(2L) − 1`` nats.

    References
    ----------
    F. Farokhi, H. Sandberg, "Ensuring privacy with constrained additive noise by minimizing Fisher information",
    Automatica 99 (2019), Corollaries 1–3 and 5, eq. (14).

    Examples
    --------
    >>> from privnoise.mechanisms import RaisedCosine
    >>> m = RaisedCosine(lower=0.0, upper=0.2)
    >>> round(m.fisher_information(), 4)
    986.9604
    >>> round(m.mean(), 12), round(m.pdf(0.1), 12)
    (0.1, 10.0)
    >>> x = m.sample(5, rng=1)
    >>> bool(((x > 0) & (x < 0.2)).all())
    True
    """

    lower: Any
    upper: Any
    width: NDArray[np.float64] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        owner = "RaisedCosine"
        lo = vector_or_scalar(self.lower, "lower", owner)
        hi = vector_or_scalar(self.upper, "upper", owner)
        lo, hi = broadcast_pair(lo, hi, ("lower", "upper"), owner)
        lo, hi = lo.astype(float, copy=True), hi.astype(float, copy=True)
        if np.any(hi <= lo):
            raise InvalidParameterError(f"`upper` of `{owner}` must be > `lower` in every coordinate.")
        with np.errstate(over="ignore"):  # an overflowing width is reported just below
            width = hi - lo
        if not np.all(np.isfinite(width)):
            raise InvalidParameterError(f"`upper` − `lower` of `{owner}` must be finite.")
        keep_compact(self, lower=lo, upper=hi, width=width)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.lower.shape)

    def _sample(self, n: int, generator: np.random.Generator) -> NDArray[np.float64]:
        if self.shape and not (np.all(self.lower == self.lower.flat[0]) and np.all(self.upper == self.upper.flat[0])):
            total = n * self.dim
            d = _edge_distances(total, generator).reshape((n,) + self.shape)
            d *= self.width / 2.0
            upper_side = random_signs(total, generator).reshape(d.shape) > 0
            return np.where(upper_side, self.upper - d, self.lower + d)
        # one interval for every coordinate: drawn chunk by chunk, each chunk finished while it is in cache
        lower, upper = float(self.lower.flat[0]), float(self.upper.flat[0])
        half = float(self.width.flat[0]) / 2.0
        out = np.empty((n,) + self.shape)
        flat = out.reshape(-1)
        for start in range(0, flat.size, CHUNK):
            d = flat[start : start + CHUNK]
            _edge_distances(d.size, generator, out=d)
            d *= half
            (from_upper,) = scratch("raised cosine side", 1, d.size)
            np.subtract(upper, d, out=from_upper)
            d += lower
            select(d, from_upper, generator)  # a fair choice of the edge: lower + d or upper − d
        return out

    def _unit_position(self, x: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
        """Distance to the nearer edge in units of the width, and whether ``x`` lies inside."""
        from_lower = (x - self.lower) / self.width
        from_upper = (self.upper - x) / self.width
        inside = (from_lower > 0) & (from_upper > 0)
        return np.clip(np.minimum(from_lower, from_upper), 0.0, 0.5), inside

    def _logpdf(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        d, inside = self._unit_position(x)
        with np.errstate(divide="ignore"):
            per = np.where(inside, np.log(2.0 / self.width) + 2.0 * np.log(np.sin(np.pi * d)), -np.inf)
        return per.sum(axis=tuple(range(x.ndim - len(self.shape), x.ndim))) if self.shape else per

    def _score(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        s = (x - self.lower) / self.width
        _, inside = self._unit_position(x)
        safe = np.where(inside, s, 0.5)
        return np.where(inside, (2.0 * np.pi / self.width) / np.tan(np.pi * safe), 0.0)

    def cdf(self, x: ArrayLike, /) -> Any:
        """Joint distribution function P(w ≤ x) (the product over coordinates), accurate near both edges."""
        arr = self._points(x, "cdf")
        from_lower = np.clip((arr - self.lower) / self.width, 0.0, 1.0)
        from_upper = np.clip((self.upper - arr) / self.width, 0.0, 1.0)
        low_half = from_lower <= 0.5
        t = 2.0 * np.pi * np.where(low_half, from_lower, from_upper)
        g = t_minus_sin_t(t) / (2.0 * np.pi)
        per = np.where(low_half, g, 1.0 - g)
        out = per.prod(axis=tuple(range(arr.ndim - len(self.shape), arr.ndim))) if self.shape else per
        return float(out) if np.ndim(out) == 0 else out

    def mean(self) -> Any:
        c = (self.lower + self.upper) / 2.0
        return float(c) if not self.shape else readonly(c)

    def variances(self) -> NDArray[np.float64]:
        """Per-coordinate variances (π² − 6) L² / (12 π²)."""
        return _variance(self.width)

    def covariance(self) -> Any:
        v = self.variances()
        return float(v) if not self.shape else readonly(np.diag(v))

    def fisher_information(self) -> Any:
        info = 4.0 * math.pi**2 / self.width**2
        return float(info) if not self.shape else readonly(np.diag(info))

    def covariance_form(self) -> SymmetricForm:
        return coordinate_form(elementwise(_variance, self.width))

    def information_form(self) -> SymmetricForm:
        return coordinate_form(elementwise(lambda w: 4.0 * math.pi**2 / w**2, self.width))

    def noise_scale(self) -> float:
        return math.sqrt((math.pi**2 - 6.0) / (12.0 * math.pi**2)) * smallest(self.width)

    def second_moment(self) -> float:
        spread = total(elementwise(_variance, self.width))
        return spread + total(elementwise(lambda lo, hi: ((lo + hi) / 2.0) ** 2, self.lower, self.upper))

    def marginal(self, start: int, stop: int) -> RaisedCosine | None:
        if not self.shape:
            return None
        return RaisedCosine(lower=self.lower[start:stop], upper=self.upper[start:stop])

    def entropy(self) -> float:
        return float(np.sum(np.log(2.0 * self.width) - 1.0))

    def support(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        return self.lower, self.upper

    def describe(self) -> dict[str, Any]:
        return {"family": "raised-cosine", "lower": listed(self.lower), "upper": listed(self.upper)}
