"""Noise policies whose law depends on the data: γ(w | x) (Farokhi & Sandberg, Section 2, family (ii)).

A :class:`Policy` turns a query and a database into the mechanism to draw from and the guarantee that holds.

* :class:`OutputConstrainedPolicy` — W(x) = {−f(x)} ⊕ Y: the release always lies in the box Y.
* :class:`WeightedCosinePolicy` — Corollary 4 as printed, for a weight p(x) (labelled: not optimal).
"""

from __future__ import annotations

import dataclasses
import math
from abc import abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import integrate

from .._validation import check_finite
from ..exceptions import DimensionError, InvalidParameterError
from ..guarantees import FisherGuarantee, FisherInformation
from ..mechanisms import Mechanism, NoiseDesign, RaisedCosine, TiltedRaisedCosine
from ..queries import Query

__all__ = ["OutputConstrainedPolicy", "Policy", "WeightedCosinePolicy"]


class Policy(NoiseDesign):
    """Noise whose law depends on the database x (or on f(x)): a design without a ``sample`` of its own.

    :meth:`law_at` gives the noise law at the data and :meth:`guarantee_for` the guarantee there (scope "at-data").
    """

    __slots__ = ()

    @abstractmethod
    def mechanism_at(self, query: Query, x: NDArray[np.float64]) -> Mechanism:
        """The noise law γ(· | x) for database ``x`` (already validated)."""

    @abstractmethod
    def guarantee_at(self, query: Query, x: NDArray[np.float64]) -> FisherGuarantee:
        """The guarantee of the release at ``x``."""

    def law_at(self, query: Query, x: NDArray[np.float64]) -> Mechanism:
        return self.mechanism_at(query, x)

    def guarantee_for(
        self, query: Query, x: ArrayLike | None = None, *, delta: float | None = None, grid: float = 0.0
    ) -> FisherGuarantee:
        if x is None:
            raise InvalidParameterError(
                f"`x` is required for the guarantee of {self.name}: its noise law depends on the data."
            )
        data = np.asarray(x, dtype=float)
        return dataclasses.replace(self.guarantee_at(query, data), grid=grid)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class OutputConstrainedPolicy(Policy):
    """The Problem 2 optimum when the *output* must lie in the box Y = [lower, upper].

    With W(x) = {−f(x)} ⊕ Y the noise is cos² on Y − f(x), so the release y = f(x) + w is cos² on Y whatever x
    is. Its Fisher information about x is exactly zero, the global minimum of Tr 𝓘: the constraint alone makes
    the privacy-optimal release independent of the data. The price is the quality
    Q(x) = Var + ‖c_Y − f(x)‖², which depends on the data and is reported with scope "at-data". Use a quality
    term (Problems 3/4) when the release must also be informative.
    """

    lower: Any
    upper: Any
    _output: RaisedCosine = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_output", RaisedCosine(lower=self.lower, upper=self.upper))
        object.__setattr__(self, "lower", self._output.lower)
        object.__setattr__(self, "upper", self._output.upper)

    @property
    def shape(self) -> tuple[int, ...]:
        return self._output.shape

    def mechanism_at(self, query: Query, x: NDArray[np.float64]) -> Mechanism:
        fx = np.asarray(query(x), dtype=float)
        return RaisedCosine(lower=self._output.lower - fx, upper=self._output.upper - fx)

    def guarantee_at(self, query: Query, x: NDArray[np.float64]) -> FisherGuarantee:
        mech = self.mechanism_at(query, x)
        zero = np.zeros((query.m, query.m))
        info = FisherInformation(query.jacobian_at(x), zero)
        return FisherGuarantee(info, quality=mech.second_moment(), scope="at-data")

    def output_range(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Y: every release lies in it (a snapped release is kept on the grid points inside Y)."""
        return self.lower, self.upper

    def describe(self) -> dict[str, Any]:
        return {
            "family": "output-constrained-raised-cosine",
            "lower": self.lower.tolist(),
            "upper": self.upper.tolist(),
        }


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
