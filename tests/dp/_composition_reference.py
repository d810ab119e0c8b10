"""References for composing pure ε-DP releases, in 60-digit mpmath and from definitions only (no privnoise code).

``rr_divergence(ε, α)``: the Rényi divergence of order α between the two output laws of binary randomized response
at ε, summed over both points by the definition. ``optimal_delta(ε, k, t)``: the smallest δ such that k ε-DP
releases are (t, δ)-DP, the hockey-stick divergence of the k-fold randomized-response products (randomized response
is the worst ε-DP pair), summed over the number of flipped answers.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import mpmath


def _mp(value: Fraction) -> Any:
    return mpmath.mpf(value.numerator) / value.denominator


def rr_divergence(epsilon: Fraction, order: Fraction) -> Any:
    with mpmath.workdps(60):
        e, a = _mp(epsilon), _mp(order)
        p = mpmath.exp(e) / (1 + mpmath.exp(e))
        q = 1 - p
        return mpmath.log(p**a * q ** (1 - a) + q**a * p ** (1 - a)) / (a - 1)


def optimal_delta(epsilon: Fraction, k: int, target: Fraction) -> Any:
    with mpmath.workdps(60):
        e, t = _mp(epsilon), _mp(target)
        total = mpmath.mpf(0)
        for i in range(k + 1):
            term = mpmath.binomial(k, i) * (mpmath.exp((k - i) * e) - mpmath.exp(t + i * e))
            if term <= 0:
                break
            total += term
        return total / (1 + mpmath.exp(e)) ** k


def documented_count(epsilon: Fraction, budget: tuple[Fraction, Fraction], orders: tuple[Fraction, ...],
                     already: Fraction = Fraction(0), already_count: int = 0) -> int:
    """How many charges of ``epsilon`` the Rényi filter's documented rule admits in all, δ_R = δ_B/2, m =
    len(orders): the largest k with k·ε ≤ ε_B, or k·D_α(ε) ≤ ε_B − (log(m/δ_R) − log α)/(α − 1) − log(1 − 1/α)
    at some order; after ``already_count`` charges of total ``already`` made under basic composition, which enter
    as one ε-DP part."""
    best = int(budget[0] / epsilon)
    with mpmath.workdps(60):
        tail = _mp(budget[1]) / 2
        for order in orders:
            a = _mp(order)
            room = _mp(budget[0]) - (mpmath.log(len(orders) / tail) - mpmath.log(a)) / (a - 1) - mpmath.log(1 - 1 / a)
            if already:
                room -= rr_divergence(already, order)
            best = max(best, already_count + int(mpmath.floor(room / rr_divergence(epsilon, order))))
    return best
