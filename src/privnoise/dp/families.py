"""The registry of noise families that interfaces calibrate by name: each family answers for itself.

A :class:`NoiseFamily` is everything an interface (the Session, the CLI, the server) needs to add calibrated noise to
an aggregate without knowing which family it is:

* its **currency**: the budget a share of a query measures — pure ε (``"epsilon"``: the exact rational, advanced and
  PLD accountants) or ρ of zCDP (``"rho"``: the zCDP and RDP accountants);
* its **sensitivity norm** (ℓ1 or ℓ2) and a **builder** from one scale parameter to the noise object;
* its **calibration**: the smallest scale whose exact share, read from the noise's own privacy profile
  (:func:`privnoise.dp.profile.profile_of`: ε as an exact rational, or ρ), is within the share given — through the
  one safe-side search (:func:`privnoise.dp.calibration.smallest_parameter`);
* its **error law** (:mod:`privnoise.mechanisms.error_laws`), for the interval an answer states;
* its **privacy event** (:mod:`privnoise.dp.events`), for the numerical accountants;
* optionally an **integer variant** (noise on ℤ for counts, whose ε at an integer sensitivity is exact) and a
  **partition-selection threshold** (keys released only above it); without one, an interface asks for declared
  keys instead.

The registry (:data:`FAMILIES`, :func:`register_family`, :func:`family_named`) is the one place where a family is
named; configuration parsing maps a name to its family here, and nothing else compares family names.

Examples
--------
>>> from fractions import Fraction
>>> noise = LAPLACE.calibrate(2.0, Fraction(1, 2), what="a sum")
>>> LAPLACE.spent(noise, 2.0) <= Fraction(1, 2), round(LAPLACE.scale(noise), 6)
(True, 4.0)
>>> family_named("gaussian", owner="doc").currency
'rho'
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

from ..core.adjacency import Norm
from ..exceptions import CalibrationError, InvalidParameterError
from ..guarantees import ConcentratedGuarantee, DifferentialPrivacyGuarantee, Guarantee
from ..mechanisms import Gaussian, Laplace
from ..mechanisms.discrete import DiscreteLaplace
from ..mechanisms.error_laws import DiscreteLaplaceError, ErrorLaw
from .calibration import safe_side, smallest_parameter
from .events import DiscreteLaplaceEvent, GaussianEvent, LaplaceEvent, PrivacyEvent, PureEvent, ZCDPEvent
from .partition import gaussian_partition_threshold, laplace_partition_threshold, pure_budget_share
from .profile import NoProfile, profile_of

__all__ = [
    "DISCRETE_LAPLACE",
    "FAMILIES",
    "GAUSSIAN",
    "LAPLACE",
    "Currency",
    "NoiseFamily",
    "default_family",
    "family_named",
    "register_family",
]

#: What a share of a query's budget measures.
Currency = Literal["epsilon", "rho"]


@dataclass(frozen=True, slots=True, kw_only=True)
class NoiseFamily:
    """A noise family an interface calibrates by name (module docstring).

    Parameters
    ----------
    name : str
        The registered name (``"laplace"``).
    currency : {"epsilon", "rho"}
        What a share measures: pure ε, or ρ of zCDP.
    norm : {"l1", "l2"}
        The sensitivity norm of its profile.
    build : callable
        scale ↦ the noise (a :class:`~privnoise.mechanisms.Noise` with a privacy profile and an error law).
    start : callable
        (Δ, share) ↦ a first scale for the search (the closed form where one exists).
    scalar_event : callable, optional
        (scale, Δ) ↦ the event of one release on a scalar (a pair of neighbouring values); None: the part's share
        is composed as a worst-case pure ε (or a ρ-zCDP) event.
    isotropic : bool
        The scalar event is exact for a vector at the family's sensitivity too (Gaussian noise: the privacy loss
        depends on the shift only through ‖shift‖₂/σ).
    integer : NoiseFamily, optional
        The variant on ℤ for integer aggregates (counts).
    error : callable, optional
        noise ↦ its error law, where the profile's (a bound for every coordinate) is looser than the exact law.
    exact_share : callable, optional
        (noise, Δ) ↦ the exact share spent, where the profile's general answer is looser (lattice noise on integer
        data: no rounding enters).
    threshold : callable, optional
        (count scale, δ, k) ↦ the partition-selection threshold of counts with this noise.
    description : str
        One line for people.
    """

    name: str
    currency: Currency
    norm: Norm
    build: Callable[[float], Any]
    start: Callable[[float, Fraction], float]
    scalar_event: Callable[[float, float], PrivacyEvent] | None = None
    isotropic: bool = False
    integer: NoiseFamily | None = None
    error: Callable[[Any], ErrorLaw] | None = None
    exact_share: Callable[[Any, float], Fraction] | None = None
    threshold: Callable[[float, float, int], int] | None = None
    description: str = ""

    # -- calibration ------------------------------------------------------------------------------------------------
    def spent(self, noise: Any, sensitivity: float) -> Fraction | None:
        """The exact share (ε or ρ) ``noise`` spends at sensitivity Δ (None: the profile states none)."""
        if self.exact_share is not None:
            return self.exact_share(noise, sensitivity)
        profile = profile_of(noise)
        if isinstance(profile, NoProfile):
            return None
        if self.currency == "epsilon":
            return profile.epsilon_fraction(sensitivity) if profile.pure else None
        return profile.rho(sensitivity)

    def calibrate(self, sensitivity: float, share: Fraction, *, what: str) -> Any:
        """The noise of the smallest scale whose exact share at sensitivity Δ is within ``share``."""

        def holds(scale: float) -> bool:
            spent = self.spent(self.build(scale), sensitivity)
            return spent is not None and spent <= share

        start = self.start(sensitivity, share)
        try:  # the closed form, moved to the safe side by the fewest steps
            scale = safe_side(start, holds, what=what)
        except CalibrationError:  # `start` is no closed form for this family: search the scale
            scale = smallest_parameter(lambda s: float(self.spent(self.build(s), sensitivity) or math.inf),
                                       share, start=start, what=what, holds=holds)
        return self.build(scale)

    # -- what a release states ---------------------------------------------------------------------------------------
    def law(self, noise: Any) -> ErrorLaw | None:
        """The error law of one coordinate of ``noise`` (None: no interval can be stated)."""
        if self.error is not None:
            return self.error(noise)
        profile = profile_of(noise)
        return None if isinstance(profile, NoProfile) else profile.error_law()

    def scale(self, noise: Any) -> float:
        """The scale parameter of ``noise`` (b, σ or t: its error law's)."""
        law = self.law(noise)
        if law is None:  # pragma: no cover - registered families state a law
            raise InvalidParameterError(f"noise family {self.name!r} states no error law.")
        return law.scale

    def event(self, noise: Any, sensitivity: float, share: Fraction, *, scalar: bool) -> PrivacyEvent:
        """The privacy event of one part: the family's scalar event on a scalar pair (or on any vector for an isotropic
        family), else its share as a pure ε (or ρ-zCDP) event."""
        if (scalar or self.isotropic) and self.scalar_event is not None:
            return self.scalar_event(self.scale(noise), sensitivity)
        return PureEvent(float(share)) if self.currency == "epsilon" else ZCDPEvent(float(share))

    def guarantee(self, price: Fraction, delta: Fraction, adjacency: str) -> Guarantee:
        """What a query of this price states: (ε, δ)-DP, or (δ-approximate) ρ-zCDP."""
        if self.currency == "epsilon":
            return DifferentialPrivacyGuarantee(float(price), float(delta), adjacency)
        return ConcentratedGuarantee(float(price), float(delta), adjacency)

    def selection_epsilon(self, share: Fraction, *, bounded_range: bool = True) -> float:
        """The ε an exponential-mechanism part may use on ``share``: ε itself (rounded down to within the exact
        share), or the ε with ε²/8 ≤ ρ (ε²/2 ≤ ρ when not bounded-range, as report-noisy-max with Laplace noise)."""
        if self.currency == "epsilon":
            eps = float(share)  # the nearest double may lie above the exact share
            return eps if Fraction(eps) <= share else math.nextafter(eps, 0.0)
        factor = 8.0 if bounded_range else 2.0
        return math.nextafter(math.sqrt(factor * float(share)), 0.0)

    def selection_share(self, share: Fraction, delta: Fraction) -> Fraction:
        """The share the noise of a partition-selected count may use so that the whole release is within ``share``
        at ``delta``: ε₀ = ε − log(1/(1 − δ)) for pure ε (:func:`~privnoise.dp.partition.pure_budget_share`); the
        share itself for ρ (the release is δ-approximate ρ-zCDP)."""
        if self.currency == "epsilon":
            return Fraction(pure_budget_share(float(share), float(delta)))
        return share


def _laplace_start(sensitivity: float, share: Fraction) -> float:
    return float(Fraction(sensitivity) / share)


def _gaussian_start(sensitivity: float, share: Fraction) -> float:
    return sensitivity / math.sqrt(2.0 * float(share))


def _integer_share(noise: Any, sensitivity: float) -> Fraction:
    # ε = Δ/t exactly for integer data and integer Δ (a shift of Δ moves each log-probability by at most Δ/t)
    units = Fraction(int(sensitivity))
    if units != Fraction(sensitivity):
        raise InvalidParameterError(f"discrete Laplace noise needs an integer sensitivity; got {sensitivity!r}.")
    return units / Fraction(noise.scale)


DISCRETE_LAPLACE = NoiseFamily(
    name="discrete-laplace",
    currency="epsilon",
    norm="l1",
    build=lambda t: DiscreteLaplace(scale=t, grid_exponent=0),
    start=_laplace_start,
    scalar_event=lambda t, sensitivity: DiscreteLaplaceEvent(1.0 / t, int(sensitivity)),
    error=lambda noise: DiscreteLaplaceError(noise.scale),
    exact_share=_integer_share,
    description="discrete Laplace (geometric) noise on ℤ for counts",
)

LAPLACE = NoiseFamily(
    name="laplace",
    currency="epsilon",
    norm="l1",
    build=lambda b: Laplace(scale=b),
    start=_laplace_start,
    scalar_event=lambda b, sensitivity: LaplaceEvent(b / sensitivity),
    integer=DISCRETE_LAPLACE,
    threshold=lambda b, delta, k: laplace_partition_threshold(b, delta, max_contributions=k),
    description="Laplace noise, pure ε-DP at ℓ1 sensitivity",
)

GAUSSIAN = NoiseFamily(
    name="gaussian",
    currency="rho",
    norm="l2",
    build=lambda s: Gaussian.from_std(s),
    start=_gaussian_start,
    scalar_event=lambda s, sensitivity: GaussianEvent(s / sensitivity),
    isotropic=True,
    threshold=lambda s, delta, k: gaussian_partition_threshold(s, delta, max_contributions=k),
    description="Gaussian noise, ρ-zCDP at ℓ2 sensitivity",
)

#: name → family: every family an interface can name.
FAMILIES: dict[str, NoiseFamily] = {f.name: f for f in (LAPLACE, GAUSSIAN)}


def register_family(family: NoiseFamily) -> NoiseFamily:
    """Make ``family`` available by name to every interface (the Session's ``noise=``, the CLI, the server's
    policies); a name already taken by another family is refused."""
    if not isinstance(family, NoiseFamily):
        raise InvalidParameterError(f"`family` of `register_family` must be a NoiseFamily; got {type(family).__name__}.")
    known = FAMILIES.get(family.name)
    if known is not None and known is not family:
        raise InvalidParameterError(f"`family` of `register_family`: the name {family.name!r} is already registered.")
    FAMILIES[family.name] = family
    return family


def family_named(name: Any, *, owner: str, currency: Currency | None = None) -> NoiseFamily:
    """The registered family ``name`` (of the given currency when one is asked)."""
    family = FAMILIES.get(name) if isinstance(name, str) else None
    if family is None:
        raise InvalidParameterError(
            f"`noise` of `{owner}` must be one of {', '.join(map(repr, sorted(FAMILIES)))}; got {name!r}."
        )
    if currency is not None and family.currency != currency:
        raise InvalidParameterError(
            f"`noise` of `{owner}`: {name!r} spends {family.currency}, but this accountant counts {currency}."
        )
    return family


def default_family(currency: Currency) -> NoiseFamily:
    """The family an accountant of this currency uses unless another is named: Laplace for ε, Gaussian for ρ."""
    return LAPLACE if currency == "epsilon" else GAUSSIAN
