"""Exponentially tilted cos² noise: the density of Farokhi & Sandberg's Corollary 4 (as printed).

g(w) ∝ exp(a w) cos²(π/L · (w − c)) on [w̲, w̄], L = w̄ − w̲, c = (w̲ + w̄)/2. For a weight p(x) the corollary
takes a = −p′(x)/p(x). It is *not* the Fisher-optimal density (its information exceeds the plain cos² by a
positive amount, e.g. 4π² + 1 against 4π² for a = 1 on [0, 1]); privnoise keeps it to reproduce Figure 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import integrate

from .._validation import check_finite, readonly
from ..exceptions import InvalidParameterError
from ._base import Mechanism
from .raised_cosine import RaisedCosine

__all__ = ["TiltedRaisedCosine"]

_MIN_ACCEPTANCE = 1e-4


def _log_sinh_ratio(t: float) -> float:
    """log(sinh(t)/t), stable for all real t."""
    t = abs(t)
    if t < 1e-4:
        return t * t / 6.0
    return t + math.log1p(-math.exp(-2.0 * t)) - math.log(2.0 * t)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class TiltedRaisedCosine(Mechanism):
    """Scalar noise with density ∝ exp(tilt·w) cos²(π/L (w − c)) on [lower, upper].

    Parameters
    ----------
    lower, upper : float
        Support.
    tilt : float
        The exponent a; 0 gives :class:`RaisedCosine`.

    Examples
    --------
    >>> from privnoise.mechanisms import TiltedRaisedCosine
    >>> g = TiltedRaisedCosine(lower=0.0, upper=1.0, tilt=1.0)
    >>> round(g.fisher_information() - 4 * math.pi**2, 9)
    1.0
    """

    lower: float
    upper: float
    tilt: float
    _base: RaisedCosine = field(init=False, repr=False)
    _log_norm: float = field(init=False, repr=False)

    def __post_init__(self) -> None:
        owner = "TiltedRaisedCosine"
        lo = check_finite(self.lower, "lower", owner)
        hi = check_finite(self.upper, "upper", owner)
        if hi <= lo:
            raise InvalidParameterError(f"`upper` of `{owner}` must be > `lower`; got [{lo:g}, {hi:g}].")
        a = check_finite(self.tilt, "tilt", owner)
        object.__setattr__(self, "lower", lo)
        object.__setattr__(self, "upper", hi)
        object.__setattr__(self, "tilt", a)
        object.__setattr__(self, "_base", RaisedCosine(lower=lo, upper=hi))
        h = (hi - lo) / 2.0
        b = math.pi / h
        c = (hi + lo) / 2.0
        # Z = ∫ e^{aw} cos² = e^{ac} · sinh(ah)/a · b²/(a² + b²)   (→ h as a → 0)
        log_norm = a * c + math.log(h) + _log_sinh_ratio(a * h) + math.log(b * b / (a * a + b * b))
        object.__setattr__(self, "_log_norm", log_norm)
        if self.acceptance_rate() < _MIN_ACCEPTANCE:
            raise InvalidParameterError(
                f"`tilt` of `{owner}` times the width must be moderate (|tilt|·L ≲ 20) for exact sampling; got "
                f"{a:g}·{hi - lo:g}."
            )

    @property
    def shape(self) -> tuple[int, ...]:
        return ()

    def acceptance_rate(self) -> float:
        """Probability that a cos² proposal is kept: Z_tilted / (Z_cos · e^{a w*})."""
        w_star = self.upper if self.tilt > 0 else self.lower
        return math.exp(self._log_norm - math.log((self.upper - self.lower) / 2.0) - self.tilt * w_star)

    def _sample(self, n: int, generator: np.random.Generator) -> NDArray[np.float64]:
        w_star = self.upper if self.tilt > 0 else self.lower
        out = np.empty(n)
        filled = 0
        rate = self.acceptance_rate()
        while filled < n:
            need = n - filled
            k = int(need / rate * 1.1) + 64
            proposal = np.asarray(self._base.sample(k, rng=generator))
            keep = generator.random(k) < np.exp(self.tilt * (proposal - w_star))
            accepted = proposal[keep][:need]
            out[filled : filled + accepted.size] = accepted
            filled += accepted.size
        return out

    def _logpdf(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        base = self._base.logpdf(x) - math.log(2.0 / (self.upper - self.lower))  # log cos²
        return base + self.tilt * x - self._log_norm

    def _score(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        inside = (x > self.lower) & (x < self.upper)
        return np.where(inside, self._base.score(x) + self.tilt, 0.0)

    def _expect(self, fn: Any) -> float:
        value, _ = integrate.quad(
            lambda w: fn(w) * self.pdf(w), self.lower, self.upper, epsabs=0.0, epsrel=1e-12, limit=200
        )
        return float(value)

    def mean(self) -> float:
        return self._expect(lambda w: w)

    def covariance(self) -> float:
        mu = self.mean()
        return self._expect(lambda w: (w - mu) ** 2)

    def fisher_information(self) -> float:
        return self._expect(lambda w: float(self._score(np.asarray(w))) ** 2)

    def entropy(self) -> float:
        return -self._expect(lambda w: float(self._logpdf(np.asarray(w))))

    def support(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        return readonly(np.array(self.lower)), readonly(np.array(self.upper))

    def describe(self) -> dict[str, Any]:
        return {"family": "tilted-raised-cosine", "lower": self.lower, "upper": self.upper, "tilt": self.tilt}
