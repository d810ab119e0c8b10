"""The error laws of the noise families: what an accuracy statement needs to know of one coordinate's noise W.

Each family's privacy profile names its law (:meth:`privnoise.dp.privacy_profiles.PrivacyProfile.error_law`), a
symmetric law about 0 whose two-sided tails bound those of every coordinate of the noise. An accuracy statement
asks it four things:

* :meth:`ErrorLaw.quantile` — q with P(|W| ≤ q) = level (Laplace: b log(1/(1 − level)); Gaussian:
  σ Φ⁻¹((1 + level)/2));
* :meth:`ErrorLaw.mass_within` — P(|W| < x), exact, from which the smallest integer radius of a count is found;
* :meth:`ErrorLaw.variance` — Var W;
* :meth:`ErrorLaw.difference_tail` — P(|W₁ − mW₂| ≥ x) for W₁ of this law and W₂ of the same family: the law of a
  ratio's residual Ŝ − mN̂ (:func:`privnoise.planning.accuracy.ratio_interval`).

The discrete Laplace law of integer counts (P(K = j) ∝ e^{−|j|/t}) answers the difference tail with the
continuous Laplace formula: |K| is stochastically below |W| + 1/2 for W Laplace of scale t (P(|K| ≥ m) =
2q^m/(1 + q) ≤ q^{m − 1/2} with q = e^{−1/t}, by the AM–GM inequality), and for W₁ symmetric and unimodal
P(|W₁ − mY| ≥ x) grows with |Y| in that order (Anderson's theorem), so the residual's tail is at most the
continuous one at x − |m|/2 — the half step a count's grid of 1 already takes off the residual.

New families register their law by name in :data:`ERROR_LAWS` (:func:`error_law`), the one place where a law is
named; everything else holds the law object.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from .._validation import check_positive
from ..exceptions import InvalidParameterError

__all__ = ["ERROR_LAWS", "DiscreteLaplaceError", "ErrorLaw", "GaussianError", "LaplaceError", "error_law"]


@dataclass(frozen=True, slots=True)
class ErrorLaw(ABC):
    """The law of one coordinate's noise W (module docstring); ``scale`` is its parameter."""

    scale: float
    #: The name of the law and of its parameter, as a release describes them.
    name: ClassVar[str]
    parameter: ClassVar[str]

    def __post_init__(self) -> None:
        check_positive(self.scale, "scale", type(self).__name__)

    @abstractmethod
    def quantile(self, level: float) -> float:
        """q with P(|W| ≤ q) = level (for a lattice law, a starting point for the exact search)."""

    @abstractmethod
    def mass_within(self, x: float) -> float:
        """P(|W| < x)."""

    @abstractmethod
    def variance(self) -> float:
        """Var W."""

    @abstractmethod
    def difference_tail(self, x: NDArray[np.float64] | float, other: NDArray[np.float64] | float) -> Any:
        """P(|W₁ − W₂'| ≥ x) elementwise, W₁ of this law and W₂' of the same family with scale ``other``
        (= |m| times the second law's scale; 0 means no second term); x may be one float, as a root search asks."""

    def describe(self) -> dict[str, Any]:
        return {"family": self.name, self.parameter: self.scale}


def _laplace_difference_tail(x: Any, a: float, c: Any) -> Any:
    """Two-sided tail of the difference of Laplace(a) and Laplace(c) at x ≥ 0:
    [a² e^{−x/a} − c² e^{−x/c}]/(a² − c²); near a = c the divided difference of s ↦ s² e^{−x/s}; c = 0 gives
    e^{−x/a}. Scalars go through ``math`` (a root search calls it a dozen times per answer)."""
    if (isinstance(x, float) or np.ndim(x) == 0) and (isinstance(c, float) or np.ndim(c) == 0):
        x, c = float(x), float(c)
        if c == 0:
            tail = math.exp(-x / a)
        elif abs(a - c) <= 1e-5 * a:
            middle = (a + c) / 2.0
            tail = (2.0 * middle + x) * math.exp(-x / middle) / (2.0 * middle)
        else:
            tail = (a * a * math.exp(-x / a) - c * c * math.exp(-x / c)) / ((a - c) * (a + c))
        return min(max(tail, 0.0), 1.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        safe_c = np.where(c > 0, c, 1.0)
        general = (a * a * np.exp(-x / a) - c * c * np.exp(-x / safe_c)) / ((a - c) * (a + c))
        middle = (a + c) / 2.0
        near = (2.0 * middle + x) * np.exp(-x / middle) / (2.0 * middle)
    close = np.abs(a - c) <= 1e-5 * a
    tail = np.where(c == 0, np.exp(-x / a), np.where(close, near, general))
    return np.clip(tail, 0.0, 1.0)


@dataclass(frozen=True, slots=True)
class LaplaceError(ErrorLaw):
    """Laplace noise of scale b: P(|W| ≥ x) = e^{−x/b}."""

    name: ClassVar[str] = "laplace"
    parameter: ClassVar[str] = "b"

    def quantile(self, level: float) -> float:
        return self.scale * -math.log1p(-level)

    def mass_within(self, x: float) -> float:
        return -math.expm1(-x / self.scale)

    def variance(self) -> float:
        return 2.0 * self.scale**2

    def difference_tail(self, x: Any, other: Any) -> Any:
        return _laplace_difference_tail(x, self.scale, other)


@dataclass(frozen=True, slots=True)
class DiscreteLaplaceError(LaplaceError):
    """Discrete Laplace noise on ℤ of parameter t: P(K = j) ∝ e^{−|j|/t}, P(|K| ≤ m) = 1 − 2q^{m+1}/(1 + q)."""

    name: ClassVar[str] = "discrete-laplace"
    parameter: ClassVar[str] = "t"

    def mass_within(self, x: float) -> float:
        m = math.ceil(x) - 1  # the largest integer < x
        q = math.exp(-1.0 / self.scale)
        return 0.0 if m < 0 else 1.0 - 2.0 * q ** (m + 1) / (1.0 + q)

    def variance(self) -> float:
        q = math.exp(-1.0 / self.scale)
        return 2.0 * q / (1.0 - q) ** 2


@dataclass(frozen=True, slots=True)
class GaussianError(ErrorLaw):
    """Gaussian noise of standard deviation σ: P(|W| < x) = 2Φ(x/σ) − 1."""

    name: ClassVar[str] = "gaussian"
    parameter: ClassVar[str] = "sigma"

    def quantile(self, level: float) -> float:
        from scipy import (
            special,  # loaded on use: a program that never meets Gaussian noise does not pay for it
        )

        return self.scale * float(special.ndtri(0.5 + level / 2.0))

    def mass_within(self, x: float) -> float:
        return math.erf(float(x) / (self.scale * math.sqrt(2.0)))  # 2Φ(x/σ) − 1

    def variance(self) -> float:
        return self.scale**2

    def difference_tail(self, x: Any, other: Any) -> Any:
        # W₁ − W₂' is Gaussian of variance σ₁² + σ₂'²
        if np.ndim(x) == 0 and np.ndim(other) == 0:
            spread = math.hypot(self.scale, float(other))
            return min(max(math.erfc(float(x) / (spread * math.sqrt(2.0))), 0.0), 1.0)
        from scipy import special

        spread = np.sqrt(self.scale**2 + np.square(other))
        return 2.0 * special.ndtr(-x / spread)


#: name → law: the registry of error laws (a family registers its own here).
ERROR_LAWS: dict[str, Callable[[float], ErrorLaw]] = {
    LaplaceError.name: LaplaceError,
    DiscreteLaplaceError.name: DiscreteLaplaceError,
    GaussianError.name: GaussianError,
}


def error_law(name: str, scale: float) -> ErrorLaw:
    """The registered error law ``name`` at ``scale``.

    Examples
    --------
    >>> law = error_law("laplace", 2.0)
    >>> round(law.quantile(0.95), 4), law.variance()
    (5.9915, 8.0)
    """
    try:
        build = ERROR_LAWS[name]
    except KeyError:
        raise InvalidParameterError(f"`name` of `error_law` must be one of {', '.join(sorted(ERROR_LAWS))}; got {name!r}.") from None
    return build(scale)
