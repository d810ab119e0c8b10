"""The interval's root finder against scipy's Brent method on monotone functions of several shapes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize

from privnoise.planning.accuracy import _crossing


@pytest.mark.parametrize("seed", range(5))
def test_crossing_agrees_with_brent_within_the_tolerance(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(40):
        root = float(rng.uniform(-5, 5))
        scale = float(10 ** rng.uniform(-3, 3))
        shape = int(rng.integers(0, 4))
        functions = [
            lambda x, r=root, s=scale: s * (r - x),
            lambda x, r=root: math.tanh(r - x),
            lambda x, r=root: (r - x) ** 3,
            lambda x, r=root: math.exp(r - x) - 1.0,
        ]
        f = functions[shape]
        low, high = root - float(rng.uniform(0.01, 5)), root + float(rng.uniform(0.01, 5))
        xtol = 1e-12
        ours = _crossing(f, low, high, xtol)
        brent = optimize.brentq(f, low, high, xtol=xtol, maxiter=10_000)
        assert abs(ours - brent) <= 4 * xtol + 1e-12 * abs(root), (shape, root, ours, brent)
        backwards = _crossing(lambda x, g=f: -g(x), high, low, xtol)  # f > 0 at the first end, either side
        assert abs(backwards - brent) <= 4 * xtol + 1e-12 * abs(root)


def test_crossing_is_never_slower_than_bisection() -> None:
    calls = []

    def step(x: float) -> float:  # a jump: no interpolation helps
        calls.append(x)
        return 1.0 if x < 0.3 else -1.0

    found = _crossing(step, -1.0, 1.0, 1e-10)
    assert abs(found - 0.3) <= 1e-10 and len(calls) <= 2 * 36


@pytest.mark.parametrize("root", [-13.2303229024483, 0.25, 7.5])
def test_a_crossing_on_a_flat_tail_closes_its_bracket_in_few_evaluations(root: float) -> None:
    """A logistic tail (flat far from the root, where false position keeps one end away): the step across the
    root closes the bracket; the root is Brent's within the tolerance, in at most two thirds of bisection's steps."""
    calls = []

    def f(x: float) -> float:
        calls.append(x)
        return 1.0 / (1.0 + math.exp(-8.0 * (root - x))) - 0.05

    xtol = 1e-12
    found = _crossing(f, root - 0.8, root + 17.0, xtol)
    brent = optimize.brentq(f, root - 0.8, root + 17.0, xtol=xtol, maxiter=10_000)
    assert abs(found - brent) <= 4 * xtol + 1e-12 * abs(root)
    bisection_steps = math.ceil(math.log2(17.8 / xtol))
    calls.clear()
    _crossing(f, root - 0.8, root + 17.0, xtol)
    assert len(calls) <= 2 * bisection_steps // 3, len(calls)
