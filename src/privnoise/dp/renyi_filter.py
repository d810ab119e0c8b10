"""A Rényi privacy filter: a durable budget that composes pure and (ε, δ) charges tighter than their sum.

A budget (ε_B, δ_B) answers a sequence of charges chosen one at a time (each may depend on earlier answers). The
exact-rational accountant adds them (basic composition, Σε_i ≤ ε_B and Σδ_i ≤ δ_B). This filter keeps, for each
Rényi order α of :data:`ORDERS`, the sum R(α) = Σ_i D_α(ε_i) of an upper bound on each charge's Rényi divergence,
stored exactly (integers in units of 2⁻⁴⁸), so a server's budget row holds a fixed-size state that a new charge
updates by addition.

Per charge
    An ε-DP release is a post-processing of binary randomized response with P(truth) = e^ε/(1 + e^ε) (Kairouz,
    Oh & Viswanath 2015, Theorem 2.1), so by the data-processing inequality its Rényi divergence of order α is at
    most that of randomized response:
    D_α(ε) = (1/(α − 1)) · log[(e^{αε} + e^{(1 − α)ε}) / (1 + e^ε)] ≤ min(ε, αε²/2).
    An (ε, δ)-DP release is, with probability at least 1 − δ, the ε-DP one (the same theorem): its ε part enters
    R(α), its δ the sum Σδ_i.

The filter (what :func:`fits` accepts)
    Reserve δ_R = share · δ_B for the Rényi tail (``share`` in (0, 1]). A sequence may go on while Σδ_i ≤ δ_B − δ_R
    and either Σε_i ≤ ε_B (basic composition) or, for some order α of the m = len(ORDERS) orders,
    R(α) ≤ ε_B − (log(m/δ_R) − log α)/(α − 1) − log(1 − 1/α).
    Whatever the adaptive choices, the sequence is (ε_B, δ_B)-DP. Proof: write each (ε_i, δ_i) part as the
    four-point pair of Kairouz et al. (a revealing outcome of probability δ_i, else randomized response), which the
    real answers are post-processings of. Then δ(ε_B) = sup_S P(S) − e^{ε_B} Q(S) is at most P(a part revealed)
    ≤ Σδ_i ≤ δ_B − δ_R plus E_P[(1 − e^{ε_B − L})₊; none revealed], L the privacy loss of the transcript up to the
    last accepted charge. That expectation vanishes where the basic route held (L ≤ Σε_i ≤ ε_B). Where order α
    held, (1 − e^{ε_B − L})₊ ≤ e^{(α − 1)(L − ε_B)} (1/α)(1 − 1/α)^{α − 1} (the maximum over L, as in Canonne,
    Kamath & Steinke 2020, Proposition 12), and M_α = exp((α − 1)(L_t − Σ_{i≤t} D_α(ε_i))) is a non-negative
    supermartingale of mean ≤ 1 (each step's Rényi bound holds given the past; Feldman & Zrnic 2021), so by optional
    stopping that part is at most e^{(α − 1)(R(α) − ε_B)} (1/α)(1 − 1/α)^{α − 1} ≤ δ_R/m. Summed over the m orders:
    δ(ε_B) ≤ δ_B.
    Basic composition stays inside the rule, so the filter never refuses what basic composition within δ_B − δ_R
    accepts; with many small charges it accepts several times more (about √k).

Every number is rounded the safe way: each D_α is computed in 60-digit decimal arithmetic and rounded up to a
multiple of 2⁻⁴⁸, one unit more than the ceiling (a divergence too small for those digits is far below the unit);
each threshold is rounded down the same way; sums are exact.

Examples
--------
>>> from fractions import Fraction
>>> state = RenyiState.empty()
>>> for _ in range(300):
...     state = state.plus([(Fraction(1, 100), Fraction(0))])
>>> fits(state, spent_epsilon=Fraction(3), spent_delta=Fraction(0), budget=(Fraction(1), Fraction(1, 10**5)))
True
>>> round(composed_epsilon(state, Fraction(1, 10**5) / 2), 3)  # 300 charges of ε = 0.01: far below Σε = 3
0.812
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, localcontext
from fractions import Fraction

__all__ = [
    "DEFAULT_SHARE",
    "ORDERS",
    "RenyiState",
    "StoredRenyiError",
    "composed_epsilon",
    "fits",
    "randomized_response_divergences",
]

#: The Rényi orders the filter keeps (m = 16 of them; each costs log(m) in the threshold, see the module docstring).
ORDERS: tuple[Fraction, ...] = tuple(
    Fraction(a) for a in ("3/2", "2", "5/2", "3", "4", "5", "6", "8", "10", "12", "16", "24", "32", "64", "128", "256")
)
#: The share of a budget's δ reserved for the Rényi route's tail when none is configured.
DEFAULT_SHARE = Fraction(1, 2)
_GRID = 2**48  # divergences rounded up, thresholds down, to multiples of 2⁻⁴⁸
_UNIT = "2^-48"
_ORDER_KEYS = tuple(str(a) for a in ORDERS)
_DIGITS = 60


class StoredRenyiError(ValueError):
    """A stored Rényi state is not what :meth:`RenyiState.dump` writes."""


def _decimal(value: Fraction) -> Decimal:
    return Decimal(value.numerator) / Decimal(value.denominator)


def _up(value: Decimal) -> Fraction:
    """The smallest multiple of 2⁻⁴⁸ above ``value`` (strictly above: one grid step covers the last digit)."""
    return Fraction(int((value * _GRID).to_integral_value(rounding=ROUND_CEILING)) + 1, _GRID)


def _down(value: Decimal) -> Fraction:
    return Fraction(int((value * _GRID).to_integral_value(rounding=ROUND_FLOOR)) - 1, _GRID)


@functools.lru_cache(maxsize=1024)
def randomized_response_divergences(epsilon: Fraction) -> tuple[Fraction, ...]:
    """Upper bounds on the Rényi divergences D_α, α in :data:`ORDERS`, of any ε-DP release (module docstring):
    those of randomized response, each rounded up to a multiple of 2⁻⁴⁸.

    Examples
    --------
    >>> d = randomized_response_divergences(Fraction(1, 10))
    >>> round(float(d[1]), 9)  # α = 2: log((e^0.2 + e^-0.1)/(1 + e^0.1)), a little below α ε²/2 = 0.01
    0.009958584
    """
    if epsilon < 0:
        raise ValueError(f"`epsilon` must be ≥ 0; got {epsilon}.")
    if epsilon == 0:
        return tuple(Fraction(0) for _ in ORDERS)
    with localcontext() as ctx:
        ctx.prec = _DIGITS
        e = _decimal(epsilon)
        out = []
        for order in ORDERS:
            a = _decimal(order)
            high, low = a * e, (1 - a) * e  # log(e^{αε} + e^{(1−α)ε}) = αε + log(1 + e^{(1−2α)ε})
            top = high + (1 + (low - high).exp()).ln()
            bottom = e + (1 + (-e).exp()).ln()  # log(1 + e^ε)
            value = (top - bottom) / (a - 1)
            out.append(min(_up(value), _ceil_grid(epsilon)))  # never above ε (those of an ε-DP pair are ≤ ε)
    return tuple(out)


def _ceil_grid(value: Fraction) -> Fraction:
    return Fraction(-(-value.numerator * _GRID // value.denominator), _GRID)


@functools.lru_cache(maxsize=1024)
def _units(epsilon: Fraction) -> tuple[int, ...]:
    """:func:`randomized_response_divergences` in units of 2⁻⁴⁸ (each bound is a multiple of it)."""
    return tuple(int(d * _GRID) for d in randomized_response_divergences(epsilon))


def _conversion(tail: Fraction) -> list[Decimal]:
    """(log(m/δ_R) − log α)/(α − 1) + log(1 − 1/α) per order: what R(α) may reach below ε (module docstring)."""
    log_term = (Decimal(len(ORDERS)) / _decimal(tail)).ln()
    out = []
    for order in ORDERS:
        a = _decimal(order)
        out.append((log_term - a.ln()) / (a - 1) + (1 - 1 / a).ln())
    return out


@functools.lru_cache(maxsize=256)
def _thresholds(budget_epsilon: Fraction, tail: Fraction) -> tuple[int, ...]:
    """ε_B minus the conversion, per order, rounded down, in units of 2⁻⁴⁸ (< 0 admits nothing at that order)."""
    with localcontext() as ctx:
        ctx.prec = _DIGITS
        return tuple(int(_down(_decimal(budget_epsilon) - c) * _GRID) for c in _conversion(tail))


@dataclass(frozen=True, slots=True)
class RenyiState:
    """The sums R(α), α in :data:`ORDERS`, of the charges so far, in units of 2⁻⁴⁸ (every bound is a multiple of
    it, so the sums are exact integers; all 0 before any charge), and the Σε of the charges they cover."""

    units: tuple[int, ...]
    epsilon: Fraction = Fraction(0)

    @property
    def divergences(self) -> tuple[Fraction, ...]:
        """The sums R(α) as exact rationals."""
        return tuple(Fraction(u, _GRID) for u in self.units)

    @classmethod
    def empty(cls) -> RenyiState:
        return cls(tuple(0 for _ in ORDERS))

    def plus(self, parts: Iterable[tuple[Fraction, Fraction]]) -> RenyiState:
        """The state after charges of (ε_i, δ_i) parts: each ε_i's divergences added (δ_i is summed elsewhere)."""
        sums, covered = self.units, self.epsilon
        for epsilon, _delta in parts:
            covered += epsilon
            sums = tuple(map(int.__add__, sums, _units(Fraction(epsilon))))
        return RenyiState(sums, covered)

    def caught_up(self, spent_epsilon: Fraction) -> RenyiState:
        """The state covering charges of Σε = ``spent_epsilon``: those it does not cover yet (charged while the
        budget composed by basic composition) enter as one ε-DP part of their Σε. Sound: their composition is
        (Σε)-DP, so its Rényi divergence is at most randomized response's at Σε, which bounds the sum of theirs."""
        missing = spent_epsilon - self.epsilon
        if missing < 0:
            raise StoredRenyiError(f"the Rényi state covers ε = {self.epsilon}, more than the {spent_epsilon} spent.")
        return self.plus([(missing, Fraction(0))]) if missing else self

    def dump(self) -> str:
        """JSON text {"epsilon": "p/q", "unit": "2^-48", "divergences": {order: integer}} (empty: "{}")."""
        if not self.epsilon and not any(self.units):
            return "{}"
        return json.dumps({"epsilon": str(self.epsilon), "unit": _UNIT,
                           "divergences": dict(zip(_ORDER_KEYS, self.units, strict=True))})

    @classmethod
    def load(cls, text: str | None, where: str = "renyi") -> RenyiState:
        """The state :meth:`dump` wrote (None or "" or "{}": nothing charged)."""
        if not text or text == "{}":
            return cls.empty()
        try:
            data = json.loads(text)
            if not isinstance(data, dict) or not isinstance(data.get("divergences"), dict) or data.get("unit") != _UNIT:
                raise ValueError
            covered = Fraction(data["epsilon"])
            stored = {Fraction(k): v for k, v in data["divergences"].items()}
        except (KeyError, TypeError, ValueError, ZeroDivisionError):
            raise StoredRenyiError(f"{where}: {text[:80]!r} is not a Rényi state.") from None
        if (set(stored) != set(ORDERS) or covered < 0
                or any(type(v) is not int or v < 0 for v in stored.values())):
            raise StoredRenyiError(f"{where}: the stored orders or values of {text[:80]!r} are not the filter's.")
        return cls(tuple(stored[a] for a in ORDERS), covered)


def fits(
    state: RenyiState,
    *,
    spent_epsilon: Fraction,
    spent_delta: Fraction,
    budget: tuple[Fraction, Fraction],
    share: Fraction = DEFAULT_SHARE,
) -> bool:
    """Whether a sequence whose charges sum to (``spent_epsilon``, ``spent_delta``) and whose Rényi sums are
    ``state`` is within ``budget`` = (ε_B, δ_B) by the filter of the module docstring, with δ_R = ``share``·δ_B."""
    budget_epsilon, budget_delta = budget
    tail = share * budget_delta
    if spent_delta > budget_delta - tail:
        return False
    if spent_epsilon <= budget_epsilon:
        return True
    if tail <= 0:
        return False
    return any(r <= t for r, t in zip(state.units, _thresholds(budget_epsilon, tail), strict=True))


def composed_epsilon(state: RenyiState, tail: Fraction) -> float:
    """The smallest ε the Rényi route states for the charges so far, with δ_R = ``tail``: the minimum over the
    orders of R(α) plus the conversion (module docstring), rounded up to a float (+∞ when ``tail`` is 0)."""
    if tail <= 0:
        return math.inf
    with localcontext() as ctx:
        ctx.prec = _DIGITS
        best = min(Decimal(u) / _GRID + c for u, c in zip(state.units, _conversion(tail), strict=True))
    value = float(best)
    return value if Decimal(value) >= best else math.nextafter(value, math.inf)
