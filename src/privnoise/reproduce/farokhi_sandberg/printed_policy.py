"""Corollary 4 of Farokhi & Sandberg as printed: the exponentially tilted cos² density and its weighted policy.

g(w) ∝ exp(a w) cos²(π/L · (w − c)) on [w̲, w̄], L = w̄ − w̲, c = (w̲ + w̄)/2, with a = −p′(x)/p(x) for a weight
p(x). It is *not* the Fisher-optimal density: its information exceeds the plain cos² by a positive amount (e.g.
4π² + 1 against 4π² for a = 1 on [0, 1]; ERRATA 3). These classes are paper artefacts, kept only to reproduce
Figure 1 and the Corollary 4 rows; the library's bounded-support optimum is
:func:`privnoise.fisher.optimal_noise` with ``support`` (the plain cos²).

References
----------
F. Farokhi and H. Sandberg, "Ensuring privacy with constrained additive noise by minimizing Fisher
information", Automatica 99 (2019), Corollary 4, Figure 1, Appendix G.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import integrate

from ..._validation import check_finite, readonly
from ...exceptions import DimensionError, InvalidParameterError
from ...fisher import Policy
from ...guarantees import FisherGuarantee, FisherInformation
from ...mechanisms import Mechanism, RaisedCosine
from ...queries import Query

__all__ = ["TiltedRaisedCosine", "WeightedCosinePolicy"]

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
    >>> import math
    >>> from privnoise.reproduce.farokhi_sandberg.printed_policy import TiltedRaisedCosine
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


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class WeightedCosinePolicy(Policy):
    """Corollary 4 of Farokhi & Sandberg as printed, for n = m = 1, f(x) = x and a weight p(x).

    γ(w | x) = c(x) exp(−p′(x)/p(x) · (w + x)) cos²(π/L (w − c)) on [lower, upper].

    This density is *not* the minimiser of the weighted Fisher information (Appendix G's change of variables does
    not match the operator): for p ∝ e^{−x} on [0, 1] its information is 4π² + 1, while the plain cos² policy,
    also feasible, has 4π². privnoise provides it to reproduce Figure 1 and reports both informations
    (:meth:`fisher_information_at` and :meth:`plain_cosine_information`).

    Parameters
    ----------
    lower, upper : float
        Noise support.
    log_weight : callable
        log p(x) up to a constant; its derivative is taken numerically.
    """

    lower: float
    upper: float
    log_weight: Callable[[float], float]
    label: str = "Corollary 4 as printed (not optimal; see docs/errata.md)"

    def __post_init__(self) -> None:
        owner = "WeightedCosinePolicy"
        lo = check_finite(self.lower, "lower", owner)
        hi = check_finite(self.upper, "upper", owner)
        if hi <= lo:
            raise InvalidParameterError(f"`upper` of `{owner}` must be > `lower`; got [{lo:g}, {hi:g}].")
        if not callable(self.log_weight):
            raise InvalidParameterError(f"`log_weight` of `{owner}` must be callable (x ↦ log p(x)).")
        object.__setattr__(self, "lower", lo)
        object.__setattr__(self, "upper", hi)

    @property
    def shape(self) -> tuple[int, ...]:
        return ()

    def _log_weight_derivatives(self, x: float) -> tuple[float, float]:
        """(p′/p)(x) and its derivative, by adaptive finite differences."""
        from scipy.differentiate import derivative

        def first(t: NDArray[np.float64]) -> NDArray[np.float64]:
            res = derivative(
                lambda s: np.vectorize(self.log_weight, otypes=[float])(s), t, tolerances={"rtol": 1e-12}
            )
            return np.asarray(res.df)

        d1 = float(first(np.asarray(x)))
        d2 = float(derivative(first, np.asarray(x), tolerances={"rtol": 1e-9}).df)
        return d1, d2

    def tilt_at(self, x: float) -> float:
        """a(x) = −p′(x)/p(x)."""
        return -self._log_weight_derivatives(float(x))[0]

    def density_at(self, x: float) -> TiltedRaisedCosine:
        """γ(· | x) as a mechanism."""
        return TiltedRaisedCosine(lower=self.lower, upper=self.upper, tilt=self.tilt_at(x))

    def mechanism_at(self, query: Query, x: NDArray[np.float64]) -> Mechanism:
        self._check_query(query)
        return self.density_at(float(x[0]))

    def _check_query(self, query: Query) -> None:
        if query.n != 1 or query.m != 1:
            raise DimensionError("`WeightedCosinePolicy` covers Corollary 4 only: n = m = 1 and f(x) = x.")

    def fisher_information_at(self, x: float) -> float:
        """𝓘(x) = E[(∂/∂x log p(y|x))²] of the x-dependent family, by quadrature.

        With y = x + w and a(x) = −p′/p: ∂/∂x log p(y|x) = a′(x)(w − c) − a(x) − s(w) − a′(x)·d/da log Z(a),
        where s is the cos² score and Z the normaliser. The last term is computed numerically.
        """
        x = check_finite(x, "x", "WeightedCosinePolicy.fisher_information_at")
        d1, d2 = self._log_weight_derivatives(x)
        a, a_prime = -d1, -d2
        density = TiltedRaisedCosine(lower=self.lower, upper=self.upper, tilt=a)
        c = (self.lower + self.upper) / 2.0
        # E_w[w − c] equals d/da log Z(a) − c, so the a′ terms centre the (w − c) factor at its mean.
        mean_w = density.mean()
        cosine = RaisedCosine(lower=self.lower, upper=self.upper)  # the cos² factor of the density

        def integrand(w: float) -> float:
            cos_score = float(cosine.score(w))
            score = a_prime * (w - c) - a_prime * (mean_w - c) - a - cos_score
            return score * score * density.pdf(w)

        value, _ = integrate.quad(integrand, self.lower, self.upper, epsabs=0.0, epsrel=1e-11, limit=200)
        return float(value)

    def plain_cosine_information(self) -> float:
        """4π²/L²: the information of the feasible plain cos² policy (the true Problem 2 optimum's value)."""
        return 4.0 * math.pi**2 / (self.upper - self.lower) ** 2

    def guarantee_at(self, query: Query, x: NDArray[np.float64]) -> FisherGuarantee:
        self._check_query(query)
        info = FisherInformation(query.jacobian_at(x), np.array([[self.fisher_information_at(float(x[0]))]]))
        return FisherGuarantee(info, quality=self.density_at(float(x[0])).second_moment(), scope="at-data")

    def describe(self) -> dict[str, Any]:
        return {
            "family": "weighted-cosine (Corollary 4 as printed)",
            "lower": self.lower,
            "upper": self.upper,
        }
