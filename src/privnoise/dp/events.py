"""Privacy events: what one part of a release costs, in one language every numerical accountant reads.

An event describes one noisy part of a release by its law relative to its sensitivity, as dp-accounting's events do.
Each says how it composes in the two numerical accountants — as a privacy-loss distribution (:meth:`PrivacyEvent.pld`,
pessimistic discretisation) and as a Rényi-DP event (:meth:`PrivacyEvent.rdp`) — and raises
:class:`UnsupportedEvent` where that accountant has no exact form for it, so an accountant never guesses. The exact
rational and zCDP accountants charge the part's share (ε or ρ) itself, an upper bound the calibration checked. The
events of pure or (ε, δ) parts also say which (ε, δ) they satisfy (:meth:`PrivacyEvent.dp_parameters`), which the
query server's Rényi filter (:mod:`privnoise.dp.renyi_filter`) composes.

==========================  ====================================================  =================================
event                       PLD                                                   RDP
==========================  ====================================================  =================================
:class:`LaplaceEvent`       the scalar Laplace pair at b/Δ                        the Laplace mechanism at b/Δ
:class:`DiscreteLaplaceEvent`  the discrete Laplace pair (parameter 1/t, Δ ∈ ℤ)   unsupported
:class:`PureEvent`          the worst-case (ε, δ) pair                            unsupported
:class:`GaussianEvent`      the Gaussian pair at σ/Δ                              the Gaussian mechanism at σ/Δ
:class:`ZCDPEvent`          unsupported                                           ρ-zCDP (ε(α) = αρ)
:class:`SelectionEvent`     the worst-case ε pair                                 ε²/8-zCDP (bounded range), else ε²/2
==========================  ====================================================  =================================

Examples
--------
>>> round(LaplaceEvent(2.0).pld(1e-4).get_epsilon_for_delta(1e-9), 4)  # Laplace of b/Δ = 2: ε = 1/2
0.5
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "DiscreteLaplaceEvent",
    "GaussianEvent",
    "LaplaceEvent",
    "PrivacyEvent",
    "PureEvent",
    "SelectionEvent",
    "UnsupportedEvent",
    "ZCDPEvent",
]


class UnsupportedEvent(ValueError):
    """The accountant has no exact form for this event."""


class PrivacyEvent:
    """The cost of one noisy part of a release (module docstring)."""

    __slots__ = ()

    def pld(self, interval: float) -> Any:
        """The privacy-loss distribution (dp-accounting), discretised at ``interval``."""
        raise UnsupportedEvent(f"no privacy-loss distribution for {self!r}")

    def rdp(self) -> Any:
        """The dp-accounting event the Rényi-DP accountant composes."""
        raise UnsupportedEvent(f"no Rényi-DP event for {self!r}")

    def dp_parameters(self) -> tuple[float, float]:
        """The (ε, δ) of differential privacy the part satisfies (pure and (ε, δ) parts only)."""
        raise UnsupportedEvent(f"no (ε, δ) stated for {self!r}")


@dataclass(frozen=True, slots=True)
class LaplaceEvent(PrivacyEvent):
    """Laplace noise of scale b on a scalar of sensitivity Δ: ``noise_multiplier`` = b/Δ."""

    noise_multiplier: float

    def pld(self, interval: float) -> Any:
        from dp_accounting.pld import privacy_loss_distribution as pld

        return pld.from_laplace_mechanism(self.noise_multiplier, value_discretization_interval=interval)

    def rdp(self) -> Any:
        import dp_accounting

        return dp_accounting.LaplaceDpEvent(self.noise_multiplier)

    def dp_parameters(self) -> tuple[float, float]:
        return 1.0 / self.noise_multiplier, 0.0


@dataclass(frozen=True, slots=True)
class DiscreteLaplaceEvent(PrivacyEvent):
    """Discrete Laplace noise P(K = j) ∝ e^{−a|j|} on an integer of integer sensitivity Δ: ``parameter`` = a = 1/t."""

    parameter: float
    sensitivity: int

    def pld(self, interval: float) -> Any:
        from dp_accounting.pld import privacy_loss_distribution as pld

        return pld.from_discrete_laplace_mechanism(self.parameter, sensitivity=self.sensitivity,
                                                   value_discretization_interval=interval)

    def dp_parameters(self) -> tuple[float, float]:
        return self.parameter * self.sensitivity, 0.0


@dataclass(frozen=True, slots=True)
class PureEvent(PrivacyEvent):
    """Any (ε, δ)-DP part, composed as the worst-case pair of that (ε, δ) (exact for no mechanism in particular)."""

    epsilon: float
    delta: float = 0.0

    def pld(self, interval: float) -> Any:
        from dp_accounting.pld import common
        from dp_accounting.pld import privacy_loss_distribution as pld

        params = common.DifferentialPrivacyParameters(float(self.epsilon), float(self.delta))
        return pld.from_privacy_parameters(params, value_discretization_interval=interval)

    def dp_parameters(self) -> tuple[float, float]:
        return float(self.epsilon), float(self.delta)


@dataclass(frozen=True, slots=True)
class GaussianEvent(PrivacyEvent):
    """Gaussian noise of standard deviation σ at ℓ2 sensitivity Δ: ``noise_multiplier`` = σ/Δ."""

    noise_multiplier: float

    def pld(self, interval: float) -> Any:
        from dp_accounting.pld import privacy_loss_distribution as pld

        return pld.from_gaussian_mechanism(self.noise_multiplier, value_discretization_interval=interval)

    def rdp(self) -> Any:
        import dp_accounting

        return dp_accounting.GaussianDpEvent(self.noise_multiplier)


@dataclass(frozen=True, slots=True)
class ZCDPEvent(PrivacyEvent):
    """A ρ-zCDP part (Bun & Steinke 2016): the exponential mechanism (ε²/8), a family stating only its ρ."""

    rho: float

    def rdp(self) -> Any:
        import dp_accounting

        return dp_accounting.ZCDpEvent(float(self.rho))


@dataclass(frozen=True, slots=True)
class SelectionEvent(PrivacyEvent):
    """A selection of pure ε: the exponential mechanism (bounded range, ε²/8-zCDP; Cesar & Rogers 2021) or
    report-noisy-max with Laplace noise (ε²/2-zCDP, Bun & Steinke 2016, Proposition 1.4)."""

    epsilon: float
    bounded_range: bool = True

    @property
    def rho(self) -> float:
        return self.epsilon * self.epsilon / (8.0 if self.bounded_range else 2.0)

    def pld(self, interval: float) -> Any:
        return PureEvent(self.epsilon).pld(interval)

    def dp_parameters(self) -> tuple[float, float]:
        return float(self.epsilon), 0.0

    def rdp(self) -> Any:
        return ZCDPEvent(self.rho).rdp()
