"""The exact-rational accountant: basic (and advanced) composition with budgets kept as fractions.

Modes ``"pure"`` and ``"approximate"`` of :class:`~privnoise.dp.accounting.PrivacyAccountant`: every charge is an
exact :class:`fractions.Fraction`, so ten charges of ε = 0.1 spend exactly 1 (SECURITY.md, requirement 10), and a
budget is refused exactly. The query server's budgets compose the same way (:func:`compose`).

Examples
--------
>>> acc = RationalAccountant(mode="approximate", epsilon_budget="1", delta_budget="1e-6")
>>> acc.record_epsilon(0.25, 1e-7, count=4)
>>> acc.total_epsilon, acc.total_delta
(Fraction(1, 1), Fraction(1, 2500000))
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from .._validation import check_positive, check_positive_int, check_probability
from ..exceptions import InvalidParameterError
from .accounting import (
    OWNER,
    AccountingMode,
    Charge,
    PrivacyAccountant,
    budget_exceeded,
    budget_text,
    exact_rational,
)
from .profile import round_up

__all__ = ["RationalAccountant", "compose"]


def compose(
    spent: tuple[Fraction, Fraction], charge: tuple[Fraction, Fraction], budget: tuple[Fraction, Fraction]
) -> tuple[Fraction, Fraction] | None:
    """Basic composition of one charge onto what is spent: the new (Σε, Σδ), or None when it exceeds the budget.

    Examples
    --------
    >>> compose((Fraction(9, 10), Fraction(0)), (Fraction(1, 10), Fraction(0)), (Fraction(1), Fraction(0)))
    (Fraction(1, 1), Fraction(0, 1))
    """
    epsilon, delta = spent[0] + charge[0], spent[1] + charge[1]
    if epsilon > budget[0] or delta > budget[1]:
        return None
    return epsilon, delta


def _left(budget: Fraction | None, spent: Fraction, digits: int = 6) -> str:
    """What a budget has left after ``spent`` (never below 0), as a decimal."""
    return "∞" if budget is None else f"{float(max(budget - spent, Fraction(0))):.{digits}g}"


def _eps_array(charges: list[Charge]) -> tuple[np.ndarray, np.ndarray]:
    eps = np.array([float(c.epsilon) for c in charges if c.epsilon is not None])
    counts = np.array([c.count for c in charges if c.epsilon is not None], dtype=float)
    return eps, counts


def _advanced_epsilon(charges: list[Charge], slack: float) -> float:
    """ε' = √(2 ln(1/δ') Σε_i²) + Σ ε_i(e^{ε_i} − 1) (heterogeneous advanced composition)."""
    eps, counts = _eps_array(charges)
    square = float(np.sum(counts * eps**2))
    drift = float(np.sum(counts * eps * np.expm1(eps)))
    return math.sqrt(2.0 * math.log(1.0 / slack) * square) + drift


def _advanced_delta(charges: list[Charge], epsilon: float) -> float:
    """The δ' at which the advanced composition bound equals ``epsilon`` (1 when it cannot)."""
    eps, counts = _eps_array(charges)
    square = float(np.sum(counts * eps**2))
    drift = float(np.sum(counts * eps * np.expm1(eps)))
    if epsilon <= drift or square == 0.0:
        return 1.0
    return min(1.0, math.exp(-((epsilon - drift) ** 2) / (2.0 * square)))


class RationalAccountant(PrivacyAccountant):
    """Basic composition in exact rationals (modes "pure" and "approximate"; see the module docstring).

    With ``advanced=True`` (approximate mode), :meth:`epsilon` also applies the advanced composition theorem
    (Dwork, Rothblum & Vadhan 2010, Theorem III.3) in its heterogeneous form and reports the smaller value.
    """

    __slots__ = ("_running",)
    modes = ("pure", "approximate")

    def __init__(self, mode: AccountingMode = "approximate", **options: Any) -> None:
        super().__init__(mode, **options)
        # (the charges summed, the last of them, Σ count·ε_i, Σ count·δ_i): a session of m releases adds each
        # charge once, not m times (exact rational sums of binary fractions cost a gcd each).
        self._running: tuple[int, Charge | None, Fraction, Fraction] = (0, None, Fraction(0), Fraction(0))

    def _sums(self, charges: list[Charge], end: int | None = None) -> tuple[Fraction, Fraction]:
        """(Σ count·ε_i, Σ count·δ_i) over ``charges[:end]``, exactly: the running sums extended by the charges added
        since (recomputed whole when the charges are no longer those summed: a checkpoint restored)."""
        end = len(charges) if end is None else end
        done, last, eps, dl = self._running
        if done > end or (done and charges[done - 1] is not last):
            done, eps, dl = 0, Fraction(0), Fraction(0)
        for c in charges[done:end]:
            if c.epsilon is not None:
                eps += c.count * c.epsilon
            if c.delta is not None:
                dl += c.count * c.delta
        if end:
            self._running = (end, charges[end - 1], eps, dl)
        return eps, dl

    @property
    def total_epsilon(self) -> Fraction:
        """Σ count·ε_i, exactly."""
        return self._sums(self._charges)[0]

    @property
    def total_delta(self) -> Fraction:
        """Σ count·δ_i, exactly."""
        return self._sums(self._charges)[1]

    def record_epsilon(self, epsilon: Any, delta: Any = 0, *, count: int = 1, label: str = "") -> None:
        owner = f"{OWNER}.record_epsilon"
        eps = exact_rational(epsilon, "epsilon", owner)
        dl = exact_rational(delta, "delta", owner, allow_zero=True)
        if dl >= 1:
            raise InvalidParameterError(f"`delta` of `{owner}` must be < 1; got {dl}.")
        if self._mode == "pure" and dl != 0:
            raise InvalidParameterError(f"`delta` of `{owner}` must be 0 in mode 'pure'; got {dl}.")
        k = check_positive_int(count, "count", owner)
        self._commit(Charge(eps, dl, None, k, label or "epsilon-delta"))

    def _record_profile(
        self, profile: Any, sensitivity: float, delta: Any, count: int, label: str, *, exact: Any = None
    ) -> None:
        owner = f"{OWNER}.record"
        if profile.pure:
            if exact is not None:
                # ε = Δ/b exactly for the noise actually drawn: the scale at its binary value, the sensitivity at
                # the larger of its binary and decimal readings (0.1 declared means at least 1/10).
                scale, declared = exact
                b_exact = Fraction(float(scale)) if isinstance(scale, float | np.floating) else exact_rational(
                    scale, "scale", owner
                )
                d_exact = exact_rational(declared, "sensitivity", owner)
                if isinstance(declared, float | np.floating):
                    d_exact = max(d_exact, Fraction(float(declared)))
                epsilon = d_exact / b_exact
            else:
                epsilon = profile.epsilon_fraction(sensitivity)
            self._commit(Charge(epsilon, Fraction(0), None, count, label))
            return
        if self._mode == "pure":
            raise InvalidParameterError(f"{profile.label} noise gives no pure ε-DP; `{OWNER}` is in mode 'pure'.")
        if delta is None:
            raise InvalidParameterError(f"`delta` of `{owner}` is required in mode 'approximate'.")
        dl = exact_rational(delta, "delta", owner)
        if dl >= 1:
            raise InvalidParameterError(f"`delta` of `{owner}` must be < 1; got {dl}.")
        self._commit(Charge(round_up(profile.epsilon(sensitivity, float(dl))), dl, None, count, label))

    def _check_budget(self, charges: list[Charge]) -> None:
        asked = charges[-1]
        eps, dl = self._sums(charges, len(charges) - 1)  # what is spent; the candidate is added here, not kept
        eps += asked.count * (asked.epsilon or 0)
        dl += asked.count * (asked.delta or 0)
        budget = (
            self._budget_epsilon if self._budget_epsilon is not None else eps,
            self._budget_delta if self._budget_delta is not None else dl,
        )
        if compose((Fraction(0), Fraction(0)), (eps, dl), budget) is None:
            asked_eps, asked_dl = asked.count * (asked.epsilon or 0), asked.count * (asked.delta or 0)
            spent_eps, spent_dl = eps - asked_eps, dl - asked_dl
            raise budget_exceeded(
                f"ε = {float(asked_eps):.6g}, δ = {float(asked_dl):.3g}",
                f"ε = {float(spent_eps):.6g}, δ = {float(spent_dl):.3g}",
                f"ε = {_left(self._budget_epsilon, spent_eps)}, δ = {_left(self._budget_delta, spent_dl, 3)}",
                f"the budget ε = {budget_text(self._budget_epsilon)}, δ = {budget_text(self._budget_delta)}: "
                f"with it the total would be ε = {float(eps):.6g}, δ = {float(dl):.3g}.",
            )

    def epsilon(self, delta: float = 0.0) -> float:
        """Pure mode: Σε_i (any δ). Approximate mode: Σε_i when δ ≥ Σδ_i (and, with ``advanced``, the smaller
        advanced-composition ε when δ > Σδ_i); ``inf`` when δ < Σδ_i."""
        dl = check_probability(delta, "delta", f"{OWNER}.epsilon")
        charges = list(self._charges)
        if self._mode == "pure":
            return float(self.total_epsilon)
        slack = Fraction(repr(dl)) - self.total_delta
        if slack < 0:
            return math.inf
        basic = float(self.total_epsilon)
        if self._advanced and slack > 0 and charges:
            return min(basic, _advanced_epsilon(charges, float(slack)))
        return basic

    def delta(self, epsilon: float) -> float:
        eps = check_positive(epsilon, "epsilon", f"{OWNER}.delta", allow_zero=True)
        charges = list(self._charges)
        if not charges:
            return 0.0
        total_delta = float(self.total_delta)
        if Fraction(repr(eps)) >= self.total_epsilon:
            return total_delta
        if self._advanced:
            return min(1.0, total_delta + _advanced_delta(charges, eps))
        return 1.0
