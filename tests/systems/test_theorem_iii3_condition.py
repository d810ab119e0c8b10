"""Condition (12) of Theorem III.3 (Liu, Kawano & Cao): its negative cases and its boundary.

Second method: the condition computed here from its definition with explicit matrices,
min over the pair of λ_min([O_t N_t] Σ_law [O_t N_t]ᵀ + Σ_V) ≥ c² λ_max([O_t N_t]ᵀ[O_t N_t]) / (2δ²), and the exact total
variation of the noisy output laws (whenever the condition holds, TV ≤ δ).
"""

from __future__ import annotations

import numpy as np
import pytest

from privnoise.systems import (
    GaussianInput,
    StateSpace,
    statistical_input_noise,
    theorem_iii3_condition,
    total_variation,
    wasserstein2,
)
from privnoise.systems.horizon import observability_matrix, toeplitz_matrix

HORIZON = 2


def _system() -> StateSpace:
    return StateSpace(A=[[0.9]], B=[[1.0]], C=[[1.0]], D=[[0.0]])


def _pair(x0_var: float = 10.0, x0_var_prime: float = 10.0) -> tuple[GaussianInput, GaussianInput]:
    u1 = GaussianInput.iid(mean=21, var=0.1, steps=HORIZON + 1)
    u2 = GaussianInput.iid(mean=22, var=0.2, steps=HORIZON + 1)
    return (
        GaussianInput(mean=[90], cov=[[x0_var]]) & u1,
        GaussianInput(mean=[90], cov=[[x0_var_prime]]) & u2,
    )


def _by_definition(sys: StateSpace, c: float, delta: float, noise_cov: np.ndarray, pair) -> bool:
    on = np.hstack([observability_matrix(sys, HORIZON), toeplitz_matrix(sys, HORIZON)])
    required = c**2 * np.max(np.linalg.eigvalsh(on.T @ on)) / (2 * delta**2)
    lows = [np.min(np.linalg.eigvalsh(on @ law.cov @ on.T + noise_cov)) for law in pair]
    return bool(min(lows) >= required)


def _noise_cov(sigma: float) -> np.ndarray:
    return sigma**2 * np.eye(HORIZON + 1)


@pytest.mark.parametrize("delta", [0.05, 0.2])
def test_condition_fails_just_below_the_design_and_holds_at_it(delta):
    sys, pair = _system(), _pair()
    c = wasserstein2(pair[0], pair[1])
    design = statistical_input_noise(sys, horizon=HORIZON, c=c, delta=delta, pair=pair)
    assert design.sigma > 0
    for factor, expected in (
        (1.0, True),
        (1.0 + 1e-6, True),
        (1.0 - 1e-4, False),
        (0.5, False),
        (0.0, False),
    ):
        cov = _noise_cov(design.sigma * factor)
        held = theorem_iii3_condition(sys, horizon=HORIZON, c=c, delta=delta, noise_cov=cov, pair=pair)
        assert held is expected
        assert held == _by_definition(sys, c, delta, cov, pair)


def test_condition_fails_for_a_larger_radius_or_a_smaller_delta():
    sys, pair = _system(), _pair()
    c, delta = wasserstein2(pair[0], pair[1]), 0.1
    cov = statistical_input_noise(sys, horizon=HORIZON, c=c, delta=delta, pair=pair).covariance()
    assert theorem_iii3_condition(sys, horizon=HORIZON, c=c, delta=delta, noise_cov=cov, pair=pair)
    assert not theorem_iii3_condition(sys, horizon=HORIZON, c=1.01 * c, delta=delta, noise_cov=cov, pair=pair)
    assert not theorem_iii3_condition(sys, horizon=HORIZON, c=c, delta=0.99 * delta, noise_cov=cov, pair=pair)
    # a smaller radius or a larger δ asks for less
    assert theorem_iii3_condition(sys, horizon=HORIZON, c=0.9 * c, delta=delta, noise_cov=cov, pair=pair)
    assert theorem_iii3_condition(sys, horizon=HORIZON, c=c, delta=1.1 * delta, noise_cov=cov, pair=pair)


def test_condition_uses_the_less_noisy_law_of_the_pair():
    # the two laws give different output covariances; noise that covers the noisier one only is not enough
    sys = _system()
    pair = _pair(x0_var=10.0, x0_var_prime=0.1)
    swapped = (pair[1], pair[0])
    c, delta = wasserstein2(pair[0], pair[1]), 0.1
    on = np.hstack([observability_matrix(sys, HORIZON), toeplitz_matrix(sys, HORIZON)])
    required = c**2 * np.max(np.linalg.eigvalsh(on.T @ on)) / (2 * delta**2)
    floors = sorted(np.min(np.linalg.eigvalsh(on @ law.cov @ on.T)) for law in pair)
    assert floors[1] > floors[0] * 1.05 and required > floors[1]
    sigma2 = required - (floors[0] + floors[1]) / 2  # enough for the noisier law, not for the other
    cov = sigma2 * np.eye(HORIZON + 1)
    for p in (pair, swapped):
        assert not theorem_iii3_condition(sys, horizon=HORIZON, c=c, delta=delta, noise_cov=cov, pair=p)
        assert not _by_definition(sys, c, delta, cov, p)
        assert _by_definition(sys, c, delta, cov, p[1:]) != _by_definition(sys, c, delta, cov, p[:1])
    design = statistical_input_noise(sys, horizon=HORIZON, c=c, delta=delta, pair=pair)
    assert design.sigma**2 == pytest.approx(required - floors[0], rel=1e-9)
    assert theorem_iii3_condition(
        sys, horizon=HORIZON, c=c, delta=delta, noise_cov=design.covariance(), pair=swapped
    )


def test_condition_is_sound_against_the_exact_total_variation():
    sys, pair = _system(), _pair(x0_var=0.5, x0_var_prime=0.5)
    c = wasserstein2(pair[0], pair[1])
    for delta in (0.05, 0.1, 0.3):
        for sigma in np.geomspace(0.05, 200.0, 25):
            noise = statistical_input_noise(sys, horizon=HORIZON, c=c, delta=delta)
            probe = type(noise)(
                system=sys,
                horizon=HORIZON,
                sigma=float(sigma),
                c=c,
                delta=delta,
                theorem="III.3",
                required=0.0,
            )
            held = theorem_iii3_condition(
                sys, horizon=HORIZON, c=c, delta=delta, noise_cov=probe.covariance(), pair=pair
            )
            assert held == _by_definition(sys, c, delta, probe.covariance(), pair)
            tv = total_variation(sys, probe, pair[0], pair[1])
            if held:
                assert tv <= delta
            if tv > delta:
                assert not held  # the negative case: too little noise is never certified
    # the sweep reaches noise too small to certify, with a TV well above δ
    tiny = type(noise)(
        system=sys, horizon=HORIZON, sigma=0.05, c=c, delta=0.05, theorem="III.3", required=0.0
    )
    assert total_variation(sys, tiny, pair[0], pair[1]) > 0.05
