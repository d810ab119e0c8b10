"""The Rényi filter (privnoise.dp.renyi_filter) against references that share no code with it.

- Each per-charge bound against dp-accounting's Rényi accountant for binary randomized response, and against the
  definition of the Rényi divergence summed over the two points in 60-digit mpmath arithmetic.
- The bound covers every ε-DP pair: brute force over random pairs on small supports (data processing).
- The subadditivity the catch-up rule relies on: D_α(a) + D_α(b) ≤ D_α(a + b).
- What the filter accepts is (ε_B, δ_B)-DP by the exact optimal composition of k pure ε-DP releases (the
  hockey-stick divergence of two binomial laws, in mpmath) and, with (ε, δ) charges, by dp-accounting's
  privacy-loss distributions; power: it accepts strictly more than basic composition where it should, and at
  least half of what the optimal composition allows.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction as F

import dp_accounting
import mpmath
import numpy as np
import pytest
from dp_accounting.pld import common
from dp_accounting.pld import privacy_loss_distribution as pld
from dp_accounting.rdp import rdp_privacy_accountant as rdp
from scipy.special import logsumexp

from privnoise.dp import renyi_filter
from privnoise.dp.renyi_filter import (
    DEFAULT_SHARE,
    ORDERS,
    RenyiState,
    StoredRenyiError,
    composed_epsilon,
    fits,
    randomized_response_divergences,
)
from tests.dp._composition_reference import documented_count, optimal_delta, rr_divergence

EPSILONS = [F(1, 10**6), F(1, 1000), F(1, 100), F(1, 10), F(1, 2), F(1), F(3), F(10)]


@pytest.mark.parametrize("epsilon", EPSILONS, ids=str)
def test_each_bound_is_randomized_response_rounded_up_by_at_most_two_grid_steps(epsilon: F) -> None:
    bounds = randomized_response_divergences(epsilon)
    for order, bound in zip(ORDERS, bounds, strict=True):
        exact = rr_divergence(epsilon, order)
        with mpmath.workdps(60):
            gap = mpmath.mpf(bound.numerator) / bound.denominator - exact
        assert gap >= 0, (epsilon, order)
        assert gap <= 2 * 2.0**-48 or epsilon <= bound < epsilon + 2.0**-48, (epsilon, order, gap)


@pytest.mark.parametrize("epsilon", [0.001, 0.05, 0.5, 2.0], ids=str)
def test_the_bounds_are_dp_accountings_randomized_response_divergences(epsilon: float) -> None:
    accountant = rdp.RdpAccountant(
        orders=[float(a) for a in ORDERS], neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE
    )
    accountant.compose(dp_accounting.RandomizedResponseDpEvent(2 / (1 + math.exp(epsilon)), 2))
    theirs = np.asarray(accountant._rdp, dtype=float)
    ours = np.array([float(d) for d in randomized_response_divergences(F(epsilon))])
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-14)
    # power: the bounds of a wrong ε differ
    assert not np.allclose(np.array([float(d) for d in randomized_response_divergences(F(epsilon * 1.01))]),
                           theirs, rtol=1e-4)


def test_no_epsilon_dp_pair_on_a_small_support_exceeds_the_bound() -> None:
    rng = np.random.default_rng(20261128)
    epsilon = F(7, 10)
    bounds = [float(d) for d in randomized_response_divergences(epsilon)]
    closest = math.inf
    for _ in range(3000):
        size = int(rng.integers(2, 6))
        q = rng.dirichlet(np.ones(size))
        ratios = np.exp(rng.choice([-1.0, 1.0], size) * float(epsilon) * rng.uniform(0.5, 1.0, size))
        p = q * ratios
        p /= p.sum()
        if np.max(np.abs(np.log(p / q))) > float(epsilon):
            continue  # normalising moved a ratio beyond e^ε: not an ε-DP pair
        for i, order in enumerate(ORDERS):
            a = float(order)
            divergence = float(logsumexp(a * np.log(p) + (1 - a) * np.log(q))) / (a - 1)
            assert divergence <= bounds[i] + 1e-12
            closest = min(closest, bounds[i] - divergence)
    assert closest < 0.02 * bounds[-1]  # some pairs come near the bound: it is not loose by construction


@pytest.mark.parametrize("a,b", [(F(1, 100), F(1, 100)), (F(1, 10), F(3, 10)), (F(1), F(2)), (F(1, 10**4), F(5))])
def test_divergences_are_subadditive_in_epsilon(a: F, b: F) -> None:
    for order in ORDERS:
        assert rr_divergence(a, order) + rr_divergence(b, order) <= rr_divergence(a + b, order)


def _accepted(epsilon: F, budget: tuple[F, F], share: F = DEFAULT_SHARE, limit: int = 100_000) -> int:
    state, k = RenyiState.empty(), 0
    while k < limit:
        after = state.plus([(epsilon, F(0))])
        if not fits(after, spent_epsilon=epsilon * (k + 1), spent_delta=F(0), budget=budget, share=share):
            return k
        state, k = after, k + 1
    raise AssertionError("no refusal")


@pytest.mark.parametrize(
    "epsilon,budget",
    [
        (F(1, 100), (F(1), F(1, 10**5))),
        (F(1, 10), (F(3), F(1, 10**6))),
        (F(1, 200), (F(1), F(1, 10**8))),
        (F(1, 2), (F(2), F(1, 10**5))),  # few large charges: basic composition is the better route
    ],
    ids=str,
)
def test_what_the_filter_accepts_is_within_budget_by_the_optimal_composition(epsilon: F, budget: tuple[F, F]) -> None:
    k = _accepted(epsilon, budget)
    basic = int(budget[0] / epsilon)
    assert k in (documented_count(epsilon, budget, ORDERS), documented_count(epsilon, budget, ORDERS) - 1)
    assert k >= basic  # never fewer than basic composition (no δ is charged here)
    assert optimal_delta(epsilon, k, budget[0]) <= budget[1]
    # the most the optimal composition allows, by bisection on k
    low, high = k, 8 * k + 8
    while optimal_delta(epsilon, high, budget[0]) <= budget[1]:
        high *= 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if optimal_delta(epsilon, middle, budget[0]) <= budget[1] else (low, middle)
    assert k >= low / 2, (k, low)
    if basic >= 100:  # power: many small charges fit well beyond Σε ≤ ε_B
        assert k > 1.4 * basic, (k, basic)
    # the stated ε is the optimal composition's or above (sound), and within the budget
    stated = composed_epsilon(RenyiState.empty().plus([(epsilon, F(0))] * k), budget[1] * DEFAULT_SHARE)
    assert optimal_delta(epsilon, k, F(stated)) <= budget[1]


def test_charges_with_delta_compose_within_budget_by_privacy_loss_distributions() -> None:
    rng = np.random.default_rng(7)
    budget = (F(2), F(1, 10**4))
    charges = [(F(int(e), 1000), F(int(d), 10**8)) for e, d in zip(rng.integers(5, 40, 400), rng.integers(0, 20, 400),
                                                                    strict=True)]
    state, spent, taken = RenyiState.empty(), (F(0), F(0)), []
    for epsilon, delta in charges:
        after = state.plus([(epsilon, delta)])
        total = (spent[0] + epsilon, spent[1] + delta)
        if fits(after, spent_epsilon=total[0], spent_delta=total[1], budget=budget):
            state, spent = after, total
            taken.append((epsilon, delta))
    assert sum(e for e, _ in taken) > budget[0]  # beyond basic composition
    assert spent[1] <= budget[1] * (1 - DEFAULT_SHARE)
    composed = None
    for epsilon, delta in taken:
        one = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(float(epsilon), float(delta)),
                                          value_discretization_interval=1e-4)
        composed = one if composed is None else composed.compose(one)
    assert composed is not None
    assert composed.get_delta_for_epsilon(float(budget[0])) <= float(budget[1])


def test_the_delta_share_and_the_basic_route() -> None:
    one = [(F(1, 10), F(0))]
    state = RenyiState.empty().plus(one * 20)  # Σε = 2 > ε_B = 1
    budget = (F(1), F(1, 10**5))
    assert fits(state, spent_epsilon=F(2), spent_delta=F(0), budget=budget) is False  # 20 charges of 0.1: too many
    small = RenyiState.empty().plus(one * 10)
    assert fits(small, spent_epsilon=F(1), spent_delta=F(0), budget=budget)  # basic composition: Σε = ε_B exactly
    # δ beyond what the share leaves is refused on both routes
    assert not fits(small, spent_epsilon=F(1, 2), spent_delta=F(6, 10**6), budget=budget)
    assert fits(small, spent_epsilon=F(1, 2), spent_delta=F(5, 10**6), budget=budget)
    assert not fits(small, spent_epsilon=F(1, 2), spent_delta=F(1, 10**6), budget=budget, share=F(1))
    # no δ budget: basic composition only
    many = RenyiState.empty().plus([(F(1, 1000), F(0))] * 1500)
    assert not fits(many, spent_epsilon=F(3, 2), spent_delta=F(0), budget=(F(1), F(0)))
    assert fits(many, spent_epsilon=F(3, 2), spent_delta=F(0), budget=(F(1), F(1, 10**5)))
    assert composed_epsilon(many, F(0)) == math.inf


def test_catching_up_adds_the_uncovered_charges_as_one_part() -> None:
    state = RenyiState.empty().plus([(F(1, 10), F(0))] * 3)
    assert state.epsilon == F(3, 10)
    caught = state.caught_up(F(1, 2))
    assert caught.epsilon == F(1, 2)
    expected = [s + d for s, d in zip(state.divergences, randomized_response_divergences(F(1, 5)), strict=True)]
    assert list(caught.divergences) == expected
    assert state.caught_up(F(3, 10)) is state
    with pytest.raises(StoredRenyiError, match="covers"):
        state.caught_up(F(1, 10))


def test_states_round_trip_and_stored_garbage_is_refused() -> None:
    state = RenyiState.empty().plus([(F(1, 7), F(0)), (F(2), F(1, 10**9))])
    assert RenyiState.load(state.dump()) == state
    assert RenyiState.load(None) == RenyiState.empty() == RenyiState.load("{}") == RenyiState.load("")
    assert RenyiState.empty().dump() == "{}"
    for raw in ("[1]", '{"epsilon": "1"}', '{"epsilon": "x", "divergences": {}}',
                '{"epsilon": "1", "divergences": {"2": "1"}}', "not json",
                state.dump().replace('"3/2": ', '"3/2": -'), json.dumps({**json.loads(state.dump()), "divergences": {
                    **json.loads(state.dump())["divergences"], "3/2": 1.5}}),
                state.dump().replace('2^-48', '2^-40')):
        with pytest.raises(StoredRenyiError):
            RenyiState.load(raw, "pn_budgets[1, 'd'].renyi")
    with pytest.raises(ValueError, match="epsilon"):
        randomized_response_divergences(F(-1))
    assert randomized_response_divergences(F(0)) == tuple(F(0) for _ in ORDERS)


@pytest.fixture(autouse=True)
def _fresh_caches() -> None:
    """Every test computes the bounds and thresholds itself (no value cached by an earlier test)."""
    renyi_filter.randomized_response_divergences.cache_clear()
    renyi_filter._units.cache_clear()
    renyi_filter._thresholds.cache_clear()


@pytest.mark.parametrize("epsilon", [F(1, 10**30), F(1, 10**9), F(3, 10**7)], ids=str)
def test_tiny_epsilons_are_bounded_by_their_divergence_or_one_unit(epsilon: F) -> None:
    for order, bound in zip(ORDERS, randomized_response_divergences(epsilon), strict=True):
        exact = rr_divergence(epsilon, order)
        with mpmath.workdps(60):
            value = mpmath.mpf(bound.numerator) / bound.denominator
        assert exact <= value <= exact + 2 * 2.0**-48
        assert bound.denominator <= 2**48  # a multiple of the unit


def test_the_stated_epsilon_is_the_smallest_double_above_the_rule() -> None:
    tail = F(1, 10**5) / 2
    for k in (1, 37, 400):
        state = RenyiState.empty().plus([(F(1, 100), F(0))] * k)
        with mpmath.workdps(60):
            exact = min(
                mpmath.mpf(r.numerator) / r.denominator
                + (mpmath.log(len(ORDERS) / (mpmath.mpf(tail.numerator) / tail.denominator)) - mpmath.log(
                    mpmath.mpf(a.numerator) / a.denominator)) / (mpmath.mpf(a.numerator) / a.denominator - 1)
                + mpmath.log(1 - 1 / (mpmath.mpf(a.numerator) / a.denominator))
                for r, a in zip(state.divergences, ORDERS, strict=True)
            )
            stated = composed_epsilon(state, tail)
            assert mpmath.mpf(stated) >= exact
            assert mpmath.mpf(math.nextafter(stated, -math.inf)) < exact


def test_stored_states_load_at_their_limits() -> None:
    zero = {str(a): 0 for a in ORDERS}
    state = RenyiState.load(json.dumps({"epsilon": "0", "unit": "2^-48", "divergences": zero}))
    assert state == RenyiState.empty()
    missing = {k: 1 for k in list(zero)[1:]}
    for raw in (json.dumps({"epsilon": "1", "unit": "2^-48", "divergences": missing}),
                json.dumps({"epsilon": "-1", "unit": "2^-48", "divergences": zero})):
        with pytest.raises(StoredRenyiError, match="not the filter's"):
            RenyiState.load(raw)


def _documented_threshold(budget_epsilon: F, tail: F, order: F) -> mpmath.mpf:
    """ε_B − (log(m/δ_R) − log α)/(α − 1) − log(1 − 1/α), the documented rule, in 60-digit mpmath."""
    with mpmath.workdps(60):
        b, t, a = (mpmath.mpf(v.numerator) / v.denominator for v in (budget_epsilon, tail, order))
        return b - (mpmath.log(len(ORDERS) / t) - mpmath.log(a)) / (a - 1) - mpmath.log(1 - 1 / a)


@pytest.mark.parametrize("budget", [(F(1), F(1, 10**5) / 2), (F(3), F(1, 10**6) / 2), (F(1, 2), F(1, 10**9))],
                         ids=str)
def test_each_threshold_lies_one_to_two_grid_steps_below_the_documented_rule(budget: tuple[F, F]) -> None:
    thresholds = renyi_filter._thresholds(*budget)
    for order, units in zip(ORDERS, thresholds, strict=True):
        with mpmath.workdps(60):
            exact = _documented_threshold(*budget, order) * 2**48  # in units of 2⁻⁴⁸
            assert exact - 2 < units <= exact - 1, (budget, order, units - exact)


def test_a_sum_at_the_threshold_fits_and_one_unit_more_does_not() -> None:
    budget, share = (F(1), F(1, 10**5)), DEFAULT_SHARE
    thresholds = renyi_filter._thresholds(budget[0], share * budget[1])
    order = max(range(len(ORDERS)), key=lambda i: thresholds[i])  # the order that admits the most
    assert thresholds[order] > 0
    far = [t + 10**12 for t in thresholds]  # beyond every threshold but one
    spent = (F(2), F(0))  # past Σε ≤ ε_B: only the Rényi route can admit
    for extra, expected in ((0, True), (1, False)):
        units = tuple(thresholds[i] + extra if i == order else far[i] for i in range(len(ORDERS)))
        assert fits(RenyiState(units, F(2)), spent_epsilon=spent[0], spent_delta=spent[1], budget=budget,
                    share=share) is expected


@pytest.mark.parametrize("epsilon", [F(30), F(40), F(100)], ids=str)
def test_large_epsilons_are_bounded_by_epsilon_itself_on_the_grid(epsilon: F) -> None:
    """An ε-DP pair's divergences never exceed ε, so no bound goes above ε rounded up to the grid; at α = 256 and
    ε ≥ 30, randomized response's divergence is within one grid step of ε, where that cap is what binds."""
    cap = F(-(-epsilon.numerator * 2**48 // epsilon.denominator), 2**48)  # ⌈ε · 2⁴⁸⌉ / 2⁴⁸
    bounds = randomized_response_divergences(epsilon)
    for order, bound in zip(ORDERS, bounds, strict=True):
        assert rr_divergence(epsilon, order) <= mpmath.mpf(bound.numerator) / bound.denominator
        assert bound <= cap, (epsilon, order)
    assert bounds[-1] == cap  # the cap binds at the largest order


def test_a_stored_state_that_cannot_be_read_is_named_by_its_column_by_default() -> None:
    with pytest.raises(StoredRenyiError, match=r"^renyi: 'not json' is not a Rényi state\.$"):
        RenyiState.load("not json")
