"""Zero-concentrated differential privacy: ρ composition and its conversion to (ε, δ).

A mechanism is ρ-zCDP when the Rényi divergence of order α between its outputs on neighbouring inputs is at most
ρα for every α > 1 (Bun & Steinke 2016, Definition 1.1). zCDP composes by adding ρ (their Lemma 2.3), which makes it
the natural budget for Gaussian noise and for many releases:

==============================================  ===================================================================
mechanism                                       ρ
==============================================  ===================================================================
Gaussian noise N(0, σ²), ℓ2 sensitivity Δ       Δ²/(2σ²) (Bun & Steinke, Proposition 1.6; also the discrete
                                                Gaussian on ℤ with an integer Δ: Canonne, Kamath & Steinke 2020,
                                                Theorem 14)
any pure ε-DP mechanism                         ε²/2 (Bun & Steinke, Proposition 1.4)
the exponential mechanism at ε                  ε²/8 (it is ε-bounded-range: Cesar & Rogers 2021, Lemma 3.2)
==============================================  ===================================================================

A δ-approximate ρ-zCDP mechanism (Bun & Steinke, Definition 8.1) is ρ-zCDP once an event of probability at least
1 − δ is conditioned on — a partition selection that releases a key held by one unit with probability at most δ is
one. Approximate zCDP composes by adding ρ and δ (their Lemma 8.2).

Conversion to (ε, δ)
--------------------
:func:`zcdp_to_epsilon` gives the ε of (ε, δ)-DP implied by ρ-zCDP by the conversion of Canonne, Kamath & Steinke
(2020, Corollary 13; the same bound as Asoodeh et al. 2021 for a Rényi curve ρα)::

    ε(ρ, δ) = inf_{α > 1}  αρ + (log(1/δ) + (α − 1) log(1 − 1/α) − log α) / (α − 1),

minimised over α exactly (a coarse grid, then Brent's method; every α gives a valid bound, so the minimum found is
valid whatever its precision). When every charge is *continuous* Gaussian noise the composition *is* one Gaussian
mechanism with Δ/σ = √(2ρ) (Dong, Roth & Su 2022, Corollary 3.3), whose exact (ε, δ) is the analytic Gaussian profile
(Balle & Wang 2018): :class:`ZCDPAccountant` then reports the smaller, exact value. Which charges qualify is the
noise family's own statement (:attr:`~privnoise.dp.privacy_profiles.PrivacyProfile.gaussian_curve`): the discrete
Gaussian has the same ρ but a worse (ε, δ) curve (at σ = 1, Δ = 2 and δ = 1e-3 its exact ε is 7.78 where the
continuous curve gives 7.58), so it converts through ρ like every other family.

References
----------
.. [1] M. Bun, T. Steinke, "Concentrated differential privacy: simplifications, extensions, and lower bounds",
   TCC 2016.
.. [2] C. Canonne, G. Kamath, T. Steinke, "The discrete Gaussian for differential privacy", NeurIPS 2020.
.. [3] M. Cesar, R. Rogers, "Bounding, concentrating, and truncating: unifying privacy loss composition for data
   analytics", ALT 2021.
.. [4] S. Asoodeh, J. Liao, F. Calmon, O. Kosut, L. Sankar, "Three variants of differential privacy: lossless
   conversion and applications", IEEE JSAIT 2021.

Examples
--------
>>> round(zcdp_to_epsilon(0.125, 1e-6), 4)
2.4191
>>> rho = epsilon_to_zcdp(1.0, 1e-6); round(rho, 5), zcdp_to_epsilon(rho, 1e-6) <= 1.0
(0.02436, True)
>>> acc = ZCDPAccountant(epsilon_budget=1, delta_budget="1e-6")
>>> acc.record_rho("0.005"); acc.record_rho("0.005")
>>> acc.total_rho
Fraction(1, 100)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from .._validation import check_positive, check_positive_int, check_probability
from ..exceptions import BudgetExceededError, CalibrationError, InvalidParameterError
from .accounting import Charge, PrivacyAccountant, budget_exceeded, budget_text, exact_rational
from .calibration import smallest_parameter
from .gaussian import gaussian_delta, gaussian_epsilon

__all__ = [
    "ZCDPAccountant",
    "ZCDPCharge",
    "epsilon_to_zcdp",
    "exponential_mechanism_zcdp",
    "gaussian_zcdp",
    "pure_zcdp",
    "zcdp_to_delta",
    "zcdp_to_epsilon",
]

_OWNER = "ZCDPAccountant"


def _log_orders() -> np.ndarray:
    return np.linspace(-14.0, 14.0, 561)  # log(α − 1): α from 1 + 8e-7 to 1 + 1.2e6


def _epsilon_at(rho: float, log_delta: float, alpha: Any) -> Any:
    a = np.asarray(alpha, dtype=float)
    return a * rho + (-log_delta + (a - 1.0) * np.log1p(-1.0 / a) - np.log(a)) / (a - 1.0)


def zcdp_to_epsilon(rho: float, delta: float) -> float:
    """The ε of (ε, δ)-DP implied by ρ-zCDP (Canonne, Kamath & Steinke 2020, Corollary 13; see the module).

    Examples
    --------
    >>> round(zcdp_to_epsilon(0.5, 1e-5), 4)
    4.7284
    """
    owner = "zcdp_to_epsilon"
    r = check_positive(rho, "rho", owner, allow_zero=True)
    dl = check_probability(delta, "delta", owner)
    if dl == 0.0:
        return math.inf
    if r == 0.0:
        return 0.0
    from scipy import optimize

    log_delta = math.log(dl)
    grid = _log_orders()
    values = _epsilon_at(r, log_delta, 1.0 + np.exp(grid))
    i = int(np.argmin(values))
    low, high = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    best = float(values[i])
    if high > low:
        found = optimize.minimize_scalar(
            lambda t: float(_epsilon_at(r, log_delta, 1.0 + math.exp(t))), bounds=(low, high), method="bounded",
            options={"xatol": 1e-10},
        )
        best = min(best, float(_epsilon_at(r, log_delta, 1.0 + math.exp(float(found.x)))))
    return max(0.0, best * (1.0 + 1e-12))


def zcdp_to_delta(rho: float, epsilon: float) -> float:
    """The δ of (ε, δ)-DP implied by ρ-zCDP: min over α of exp((α−1)(αρ−ε))/(α−1)·(1 − 1/α)^α (the same
    conversion, read the other way).

    Examples
    --------
    >>> round(zcdp_to_delta(0.125, 1.0), 6)
    0.017985
    """
    owner = "zcdp_to_delta"
    r = check_positive(rho, "rho", owner, allow_zero=True)
    eps = check_positive(epsilon, "epsilon", owner, allow_zero=True)
    if r == 0.0:
        return 0.0
    from scipy import optimize

    def log_delta(t: float) -> float:
        a = 1.0 + math.exp(t)
        return (a - 1.0) * (a * r - eps) - math.log(a - 1.0) + a * math.log1p(-1.0 / a)

    grid = _log_orders()
    values = np.array([log_delta(float(t)) for t in grid])
    i = int(np.argmin(values))
    low, high = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    found = optimize.minimize_scalar(log_delta, bounds=(low, high), method="bounded", options={"xatol": 1e-10})
    best = min(float(values[i]), log_delta(float(found.x)))
    return float(min(1.0, math.exp(min(best, 0.0)) * (1.0 + 1e-12)))


def epsilon_to_zcdp(epsilon: float, delta: float) -> float:
    """The largest ρ whose conversion :func:`zcdp_to_epsilon` at δ is at most ε (never rounded up).

    Examples
    --------
    >>> rho = epsilon_to_zcdp(2.0, 1e-6)
    >>> zcdp_to_epsilon(rho, 1e-6) <= 2.0 < zcdp_to_epsilon(rho * 1.001, 1e-6)
    True
    """
    owner = "epsilon_to_zcdp"
    eps = check_positive(epsilon, "epsilon", owner)
    dl = check_probability(delta, "delta", owner)
    if dl == 0.0:
        raise CalibrationError(f"`delta` of `{owner}` must be > 0: zCDP implies no pure ε-DP.")
    # p = 1/ρ: ε(1/p) decreases in p; the smallest p meeting ε is the largest ρ.
    p = smallest_parameter(
        lambda q: zcdp_to_epsilon(1.0 / q, dl), eps, start=1.0 / (eps * eps), what="the ρ of an (ε, δ) budget",
        limit=1e30,
    )
    return 1.0 / p


def gaussian_zcdp(sigma: float, *, sensitivity: float) -> float:
    """ρ = Δ²/(2σ²) of Gaussian noise N(0, σ²) at ℓ2 sensitivity Δ (Bun & Steinke 2016, Proposition 1.6).

    Examples
    --------
    >>> gaussian_zcdp(2.0, sensitivity=1.0)
    0.125
    """
    owner = "gaussian_zcdp"
    s = check_positive(sigma, "sigma", owner)
    d = check_positive(sensitivity, "sensitivity", owner)
    return d * d / (2.0 * s * s)


def pure_zcdp(epsilon: Any) -> Fraction:
    """ρ = ε²/2 of any ε-DP mechanism (Bun & Steinke 2016, Proposition 1.4), exactly.

    Examples
    --------
    >>> pure_zcdp("0.2")
    Fraction(1, 50)
    """
    eps = exact_rational(epsilon, "epsilon", "pure_zcdp")
    return eps * eps / 2


def exponential_mechanism_zcdp(epsilon: Any) -> Fraction:
    """ρ = ε²/8 of the exponential mechanism at ε (ε-bounded range; Cesar & Rogers 2021, Lemma 3.2), exactly.

    Examples
    --------
    >>> exponential_mechanism_zcdp(2)
    Fraction(1, 2)
    """
    eps = exact_rational(epsilon, "epsilon", "exponential_mechanism_zcdp")
    return eps * eps / 8


@dataclass(frozen=True, slots=True)
class ZCDPCharge:
    """The zCDP part of one charge: ρ, and whether its privacy loss is that of continuous Gaussian noise (then the
    exact Gaussian profile applies to a composition of such charges only)."""

    rho: Fraction
    gaussian: bool


class ZCDPAccountant(PrivacyAccountant):
    """Composition in zero-concentrated DP: Σρ and Σδ (approximate zCDP) in exact rationals.

    Parameters
    ----------
    epsilon_budget, delta_budget : optional
        An (ε, δ)-DP budget: a charge is refused (:class:`~privnoise.exceptions.BudgetExceededError`, nothing
        recorded) unless Σρ ≤ ρ_max, the largest ρ whose conversion at δ_budget − Σδ is at most ε_budget — one
        exact comparison of rationals against ρ_max rounded down.

    Notes
    -----
    ``record_rho`` charges a ρ directly; ``record_laplace``, ``record_gaussian``, ``record`` and
    ``record_guarantee`` (pure ε only) charge noise through its privacy profile: ρ = Δ²/(2σ²) for the Gaussian
    and the discrete Gaussian, ε²/2 for pure ε-DP noise, and whether the exact Gaussian curve applies
    (``profile.gaussian_curve``: continuous Gaussian noise only). See the module docstring for the conversion.
    """

    __slots__ = ()
    modes = ("zcdp",)

    def __init__(self, mode: str = "zcdp", **options: Any) -> None:
        super().__init__(mode, **options)  # type: ignore[arg-type]

    # -- totals ------------------------------------------------------------------------------------------------
    @staticmethod
    def _totals(charges: list[Charge]) -> tuple[Fraction, Fraction, bool]:
        rho = sum((c.count * c.event.rho for c in charges), Fraction(0))
        delta = sum((c.count * c.delta for c in charges if c.delta is not None), Fraction(0))
        return rho, delta, all(c.event.gaussian for c in charges)

    @property
    def total_rho(self) -> Fraction:
        """Σ count·ρ_i, exactly."""
        return self._totals(list(self._charges))[0]

    @property
    def total_delta(self) -> Fraction:
        """Σ count·δ_i of the approximate-zCDP charges, exactly."""
        return self._totals(list(self._charges))[1]

    def spent(self, delta: float | None = None) -> Any:
        """The (ε(δ), δ) guarantee of the composition so far (``delta`` is required)."""
        if delta is None:
            raise InvalidParameterError(f"`delta` of `{_OWNER}.spent` is required: zCDP converts at a δ.")
        return super().spent(delta)

    def rho_budget(self, delta: Any = None) -> Fraction:
        """ρ_max: the largest ρ whose conversion at ``delta`` (default δ_budget − Σδ) is within the ε budget."""
        if self._budget_epsilon is None or self._budget_delta is None:
            raise InvalidParameterError(f"`{_OWNER}.rho_budget` needs an ε and a δ budget.")
        slack = (self._budget_delta - self.total_delta if delta is None
                 else exact_rational(delta, "delta", _OWNER, allow_zero=True))
        if slack <= 0:
            return Fraction(0)
        return Fraction(math.nextafter(epsilon_to_zcdp(float(self._budget_epsilon), float(slack)), 0.0))

    # -- recording ---------------------------------------------------------------------------------------------
    def record_rho(self, rho: Any, *, delta: Any = 0, count: int = 1, label: str = "", gaussian: bool = False) -> None:
        """Charge ``count`` releases of ρ-zCDP each (δ-approximate with ``delta`` > 0).

        ``gaussian=True`` asserts that each release is continuous Gaussian noise with Δ/σ = √(2ρ), whose exact
        curve then applies to a composition of such charges; leave it False for anything else (the discrete
        Gaussian included): ρ then converts through Canonne, Kamath & Steinke's bound.
        """
        owner = f"{_OWNER}.record_rho"
        r = exact_rational(rho, "rho", owner)
        dl = exact_rational(delta, "delta", owner, allow_zero=True)
        if dl >= 1:
            raise InvalidParameterError(f"`delta` of `{owner}` must be < 1; got {dl}.")
        k = check_positive_int(count, "count", owner)
        self._commit(Charge(None, dl, ZCDPCharge(r, gaussian and dl == 0), k, label or "zcdp"))

    def record_epsilon(self, epsilon: Any, delta: Any = 0, *, count: int = 1, label: str = "") -> None:
        """Charge ``count`` pure ε-DP releases (ρ = ε²/2 each); an (ε, δ) pair with δ > 0 has no zCDP form."""
        if exact_rational(delta, "delta", f"{_OWNER}.record_epsilon", allow_zero=True) != 0:
            raise InvalidParameterError(
                f"`delta` of `{_OWNER}.record_epsilon` must be 0: (ε, δ)-DP with δ > 0 has no zCDP form; charge "
                "its ρ with `record_rho(rho, delta=...)` when it is approximate zCDP."
            )
        self.record_rho(pure_zcdp(epsilon), count=count, label=label or "pure")

    def _record_profile(
        self, profile: Any, sensitivity: float, delta: Any, count: int, label: str, *, exact: Any = None
    ) -> None:
        rho = profile.rho(sensitivity)
        if rho is None:
            raise InvalidParameterError(f"{profile.label} noise has no zCDP guarantee known to privnoise.")
        self.record_rho(rho, count=count, label=label, gaussian=profile.gaussian_curve)

    def _check_budget(self, charges: list[Charge]) -> None:
        rho, delta, _ = self._totals(charges)
        asked = charges[-1]
        asked_rho, asked_delta = asked.count * asked.event.rho, asked.count * (asked.delta or 0)
        asks = f"ρ = {float(asked_rho):.6g}, δ = {float(asked_delta):.3g}"
        if self._budget_delta is not None and delta > self._budget_delta:
            raise budget_exceeded(
                asks,
                f"δ = {float(delta - asked_delta):.3g} of approximate zCDP",
                f"δ = {float(max(self._budget_delta - delta + asked_delta, Fraction(0))):.3g}",
                f"the budget δ = {budget_text(self._budget_delta)}.",
            )
        if self._budget_epsilon is None:
            return
        if self._budget_delta is None or self._budget_delta == 0:
            raise BudgetExceededError(f"`{_OWNER}` has an ε budget but no δ > 0: zCDP implies no pure ε-DP.")
        limit = self.rho_budget(self._budget_delta - delta)
        if rho > limit:
            spent = rho - asked_rho
            raise budget_exceeded(
                asks,
                f"ρ = {float(spent):.6g}",
                f"ρ = {float(max(limit - spent, Fraction(0))):.6g}",
                f"ρ = {float(limit):.6g} (the budget (ε, δ) = ({budget_text(self._budget_epsilon)}, "
                f"{budget_text(self._budget_delta)}) less the approximate δ {float(delta):.3g}).",
            )

    # -- conversion --------------------------------------------------------------------------------------------
    def epsilon(self, delta: float = 0.0) -> float:
        """The ε of (ε, δ)-DP for the composition so far: Σδ_i is taken from δ, the rest converts Σρ (exactly
        through the Gaussian profile when every charge is Gaussian noise)."""
        dl = check_probability(delta, "delta", f"{_OWNER}.epsilon")
        rho, approximate, gaussian = self._totals(list(self._charges))
        slack = dl - float(approximate)
        if rho == 0:
            return 0.0 if slack >= 0 else math.inf
        if slack <= 0:
            return math.inf
        bound = zcdp_to_epsilon(float(rho), slack)
        if gaussian:
            bound = min(bound, gaussian_epsilon(1.0, slack, sensitivity=math.sqrt(2.0 * float(rho))))
        return bound

    def delta(self, epsilon: float) -> float:
        """The δ of (ε, δ)-DP for the composition so far (Σδ_i plus the conversion's δ)."""
        eps = check_positive(epsilon, "epsilon", f"{_OWNER}.delta", allow_zero=True)
        rho, approximate, gaussian = self._totals(list(self._charges))
        if rho == 0:
            return float(approximate)
        conversion = zcdp_to_delta(float(rho), eps)
        if gaussian:
            conversion = min(conversion, gaussian_delta(1.0, eps, sensitivity=math.sqrt(2.0 * float(rho))))
        return min(1.0, float(approximate) + conversion)
