"""The server's policy → noise step (:mod:`privnoise.server.mechanisms`) on its own: the (ε, δ) each of ``share``
components is calibrated to, the noise's Fisher information against the closed forms (Laplace 1/b², Gaussian
1/σ², cos² π²/h², Problem 4's σ² = Q), the scale checks at their exact limits, the grid, and the block release of
vector noise.

The calibrated values are checked by a second method: the hardened Laplace noise's exact rational ε, the
Gaussian's ε at the component's δ from the library's privacy profile and the analytic Gaussian σ.
"""

from __future__ import annotations

import math
from fractions import Fraction
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from privnoise.dp.gaussian import gaussian_sigma
from privnoise.exceptions import InvalidParameterError
from privnoise.mechanisms import Laplace, RaisedCosine
from privnoise.mechanisms.lattice_grid import default_grid_exponent
from privnoise.server.checks import SCALE_RANGE
from privnoise.server.config import PolicySpec
from privnoise.server.mechanisms import (
    _checked_scale,
    _harden,
    _import_factory,
    build_noise,
    describe_design,
    describe_noise,
    fem_design,
    noise_information,
)

F = Fraction
LAPLACE = PolicySpec("sum", "laplace", epsilon=F(1, 10))
GAUSSIAN = PolicySpec("sum", "gaussian", epsilon=F(1, 2), delta=F(1, 10**6))
COSINE = PolicySpec("sum", "fisher-cosine", half_width=0.75)
QUALITY = PolicySpec("sum", "fisher-gaussian", quality=0.5)
FEM = PolicySpec("identity", "fisher-fem", support="box:-1,-2;1,2", tolerance=1e-3)
CUSTOM = PolicySpec("sum", "custom", epsilon=F(1), factory="tests.server._failing:build")


# --- checks ------------------------------------------------------------------------------------------------------


def test_scale_checks_hold_exactly_at_the_limits() -> None:
    low, high = SCALE_RANGE
    assert _checked_scale(low, "s") == low and _checked_scale(high, "s") == high
    for bad in (math.nextafter(low, 0.0), math.nextafter(high, math.inf), math.nan, math.inf, 0.0, -1.0):
        with pytest.raises(InvalidParameterError, match="outside"):
            _checked_scale(bad, "Laplace scale")


@pytest.mark.parametrize("sensitivity", [0.0, -1.0, math.nan, math.inf, -math.inf])
def test_a_sensitivity_not_finite_and_positive_is_refused(sensitivity: float) -> None:
    with pytest.raises(InvalidParameterError, match="sensitivity"):
        build_noise(LAPLACE, sensitivity=sensitivity)


def test_the_smallest_positive_sensitivity_is_calibrated() -> None:
    h = build_noise(PolicySpec("sum", "laplace", epsilon=F(1, 10**6)), sensitivity=1e-144)
    spent = F(1e-144) / F(float(h.mechanism.scale))  # Δ/b in exact rationals
    assert F(1, 10**6) * (1 - F(1, 10**12)) < spent <= F(1, 10**6)
    assert F(1, 10**6) * (1 - F(1, 10**12)) < h.epsilon_fraction() <= F(1, 10**6)


def test_too_extreme_scales_are_refused_before_calibration() -> None:
    policy = PolicySpec("sum", "laplace", epsilon=F(1, 10**6))
    with pytest.raises(InvalidParameterError, match="Laplace scale"):
        build_noise(policy, sensitivity=1e145)  # b = Δ/ε = 1e151
    g = PolicySpec("sum", "gaussian", epsilon=F(1, 10**6), delta=F(1, 10**9))
    with pytest.raises(InvalidParameterError, match="Gaussian σ"):
        build_noise(g, sensitivity=1e145)


def test_a_custom_factory_that_is_no_mechanism_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    import tests.server._failing as failing

    monkeypatch.setattr(failing, "not_a_mechanism", lambda policy: object(), raising=False)
    policy = PolicySpec("sum", "custom", epsilon=F(1), factory="tests.server._failing:not_a_mechanism")
    with pytest.raises(InvalidParameterError, match="cannot calibrate the noise of `query`: custom factory"):
        build_noise(policy, sensitivity=1.0)


def test_import_factory() -> None:
    assert _import_factory("math:sqrt") is math.sqrt
    assert _import_factory("privnoise.mechanisms:Laplace") is Laplace


# --- calibration: each of `share` components gets (ε/share, δ/share) --------------------------------------------


@pytest.mark.parametrize("share", [1, 2, 3])
def test_laplace_components_are_calibrated_to_their_share(share: int) -> None:
    h = build_noise(LAPLACE, sensitivity=2.0, share=share)
    assert h.epsilon_fraction() == F(1, 10) / share  # exact, rounding included
    assert h.sensitivity == 2.0
    b = float(h.mechanism.scale)
    assert 2.0 / b <= 0.1 / share < 1.01 * 2.0 / b  # the continuous Laplace ε is just below the share
    assert noise_information(h, LAPLACE) == pytest.approx(1.0 / b**2, rel=1e-12)  # 𝓘 = 1/b²


def test_laplace_identity_has_one_law_per_record() -> None:
    h = build_noise(LAPLACE, sensitivity=1.0, dim=5)  # a scalar law drawn for every record of the batch
    assert h.shape == () and h.epsilon_fraction() == F(1) / F(float(h.mechanism.scale)) <= F(1, 10)
    assert h.release(np.arange(5.0), rng=np.random.default_rng(0)).shape == (5,)


@pytest.mark.parametrize("share", [1, 3])
def test_gaussian_components_are_calibrated_to_their_share(share: int) -> None:
    h = build_noise(GAUSSIAN, sensitivity=2.0, share=share)
    eps, delta = 0.5 / share, 1e-6 / share
    assert eps * (1 - 1e-3) <= h.epsilon(delta) <= eps
    assert h.epsilon(delta / 2) > eps  # the share of δ is used, not less
    sigma = math.sqrt(float(np.asarray(h.mechanism.covariance())))
    analytic = gaussian_sigma(eps, delta, sensitivity=2.0)
    assert analytic <= sigma <= 1.01 * analytic  # the analytic σ, widened for the grid rounding
    assert noise_information(h, GAUSSIAN) == pytest.approx(1.0 / sigma**2, rel=1e-12)  # 𝓘 = 1/σ²


def test_gaussian_identity_shape() -> None:
    h = build_noise(GAUSSIAN, sensitivity=1.0, dim=4)
    assert h.shape == (4,)


def test_fisher_cosine_is_cos2_on_the_half_width() -> None:
    h = build_noise(COSINE, sensitivity=3.0)
    mech = h.mechanism
    assert isinstance(mech, RaisedCosine)
    lower, upper = (np.asarray(v, dtype=float) for v in mech.support())
    assert float(lower) == -0.75 and float(upper) == 0.75
    assert noise_information(h, COSINE) == pytest.approx((math.pi / 0.75) ** 2, rel=1e-12)  # 𝓘 = π²/h²
    many = build_noise(COSINE, sensitivity=3.0, dim=3)
    assert many.shape == (3,)
    assert noise_information(many, COSINE) == pytest.approx((math.pi / 0.75) ** 2, rel=1e-12)


@pytest.mark.parametrize("dim", [1, 4])
def test_fisher_gaussian_has_the_quality_per_record(dim: int) -> None:
    h = build_noise(QUALITY, sensitivity=1.0, dim=dim)
    variances = np.atleast_1d(np.diag(np.atleast_2d(np.asarray(h.mechanism.covariance(), dtype=float))))
    assert variances.shape == (dim,)
    np.testing.assert_allclose(variances, 0.5, rtol=1e-12)  # E w_i² = Q (Problem 4 with C = I)
    assert noise_information(h, QUALITY) == pytest.approx(2.0, rel=1e-12)  # 𝓘 = 1/Q


def test_fisher_fem_uses_the_cached_design() -> None:
    h = build_noise(FEM, sensitivity=2.0, dim=9)
    design = fem_design("box:-1,-2;1,2", 1e-3)
    assert h.mechanism is design and h.shape == (2,)
    info = np.asarray(design.fisher_information())
    # the box [-1, 1] × [-2, 2]: cos² ⊗ cos², 𝓘 = diag(π²/1², π²/2²) (Corollary 1)
    np.testing.assert_allclose(np.diag(info), [math.pi**2, math.pi**2 / 4], rtol=1e-3)
    assert noise_information(h, FEM) == float(np.max(np.diag(info)))
    assert design.solution.rtol == 1e-3 and design.solution.converged
    assert fem_design("box:-1,-1;1,1").solution.rtol == 1e-4  # the default tolerance (a certified bracket)


def test_noise_is_cached_per_policy_sensitivity_dimension_and_share() -> None:
    a = build_noise(LAPLACE, sensitivity=2.0, share=2)
    assert build_noise(LAPLACE, sensitivity=2.0, share=2) is a
    assert build_noise(LAPLACE, sensitivity=2.0, share=3) is not a


def test_custom_noise_is_hardened_and_carries_no_fisher_charge() -> None:
    h = build_noise(CUSTOM, sensitivity=1.5)
    assert type(h.mechanism).__name__ == "FailingGaussian" and h.sensitivity == 1.5
    assert noise_information(h, CUSTOM) is None


# --- the grid and the description --------------------------------------------------------------------------------


def test_harden_sets_the_default_grid_and_a_wide_bound() -> None:
    mech = Laplace(scale=3.0)
    h = _harden(mech, 2.0)
    k = default_grid_exponent(3.0)
    assert h.mechanism is mech and h.sensitivity == 2.0 and h.grid_exponent == k
    assert float(np.asarray(h.bound)) == 2.0**50 * 2.0**k


@pytest.mark.parametrize("info", [math.inf, math.nan, 0.0, -1.0])
def test_noise_information_refuses_what_is_not_finite_and_positive(info: float) -> None:
    form = SimpleNamespace(max_diagonal=lambda: info)
    noise: Any = SimpleNamespace(mechanism=SimpleNamespace(information_form=lambda: form))
    with pytest.raises(InvalidParameterError, match="Fisher information"):
        noise_information(noise, COSINE)


def test_describe_noise_reports_the_scale_of_each_family() -> None:
    lap = build_noise(LAPLACE, sensitivity=2.0)
    out = describe_noise(lap)
    assert out == {
        "family": "Laplace",
        "grid": lap.grid,
        "hardened": True,
        "scale": float(lap.mechanism.scale),
    }
    gauss = build_noise(GAUSSIAN, sensitivity=2.0)
    sigma = math.sqrt(float(np.asarray(gauss.mechanism.covariance())))
    out = describe_noise(gauss)
    assert set(out) == {"family", "grid", "hardened", "sigma"} and out["family"] == "Gaussian"
    assert out["sigma"] == pytest.approx(sigma, rel=1e-12)
    cos = build_noise(COSINE, sensitivity=1.0)
    out = describe_noise(cos)
    assert set(out) == {"family", "grid", "hardened", "second_moment"} and out["family"] == "RaisedCosine"
    assert out["second_moment"] == pytest.approx(0.75**2 * (1 / 3 - 2 / math.pi**2), rel=1e-12)


def test_describe_design_states_the_fem_design() -> None:
    h = build_noise(FEM, sensitivity=1.0, dim=4)
    sol = h.mechanism.solution
    out = describe_design(FEM)
    assert out["block"] == 2 and out["support"] == sol.support.describe()
    assert out["fisher_information"] == np.asarray(h.mechanism.fisher_information()).tolist()
    assert (out["eigenvalue"], out["error_estimate"], out["mesh_size"]) == (
        sol.discrete_eigenvalue,
        sol.error_estimate,
        sol.mesh_size,
    )
    assert out["mean"] == np.asarray(h.mechanism.mean()).tolist()
    assert out["mean"] == pytest.approx([0.0, 0.0], abs=1e-4)  # a centred box: mean 0 up to the mesh
    assert set(out) == {
        "support",
        "block",
        "fisher_information",
        "eigenvalue",
        "error_estimate",
        "mesh_size",
        "mean",
    }
    noise = describe_noise(h)
    assert (
        set(noise) == {"family", "grid", "hardened", "second_moment"}
        and noise["family"] == "FiniteElementNoise"
    )
    assert noise["second_moment"] == pytest.approx(float(h.mechanism.second_moment()), rel=1e-12)
