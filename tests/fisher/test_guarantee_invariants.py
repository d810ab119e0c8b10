"""What a Fisher guarantee states, checked against the dense matrices it summarises: Cramér–Rao bounds, per-record
bounds, the eq. (8) and Jensen bounds at their edges (zero information), and the published JSON form.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from privnoise import queries
from privnoise.exceptions import DimensionError, InvalidParameterError
from privnoise.fisher import cramer_rao
from privnoise.fisher.information import fisher_guarantee
from privnoise.guarantees import DifferentialPrivacyGuarantee, FisherGuarantee, FisherInformation, json_number
from privnoise.mechanisms import Gaussian, RaisedCosine


def test_bounds_against_dense_matrices():
    rng = np.random.default_rng(7)
    f = rng.normal(size=(4, 3))
    j = np.array([[2.0, 0.3, 0.0, 0.1], [0.3, 1.0, 0.2, 0.0], [0.0, 0.2, 3.0, 0.4], [0.1, 0.0, 0.4, 1.5]])
    info = FisherInformation(f, j)
    dense = f.T @ j @ f
    assert info.n == 3 and np.allclose(info.matrix(), dense)
    assert np.allclose(info.diagonal(), np.diag(dense)) and info.trace() == pytest.approx(np.trace(dense))
    assert info.is_invertible()
    g = FisherGuarantee(info, quality=2.5)
    assert g.cramer_rao_bound == pytest.approx(np.trace(np.linalg.inv(dense)))
    assert np.allclose(g.record_bounds, 1 / np.diag(dense))
    assert g.worst_record_bound == pytest.approx(np.min(1 / np.diag(dense)))
    assert g.trace_bound == pytest.approx(1 / np.trace(dense))
    assert cramer_rao.cramer_rao_bound(dense) == pytest.approx(np.trace(np.linalg.inv(dense)))
    assert cramer_rao.jensen_bound(dense) == pytest.approx(9 / np.trace(dense))
    assert cramer_rao.jensen_bound(dense) <= cramer_rao.cramer_rao_bound(dense)
    assert np.allclose(cramer_rao.record_bounds(dense), 1 / np.diag(dense))
    assert cramer_rao.trace_bound(dense) == pytest.approx(1 / np.trace(dense))


def test_fewer_outputs_than_records_is_never_invertible():
    info = FisherInformation(np.ones((1, 3)), [[2.0]])
    assert not info.is_invertible()
    g = FisherGuarantee(info, quality=1.0)
    assert g.cramer_rao_bound == math.inf
    assert FisherInformation(np.eye(2), np.diag([4.0, 1.0])).is_invertible()  # as many outputs as records
    square = FisherInformation(np.eye(2), np.diag([1.0, 0.0]))  # singular J
    assert not square.is_invertible()
    assert FisherGuarantee(square, quality=0.0).cramer_rao_bound == math.inf


def test_records_without_information_are_unbounded():
    # a record the release does not depend on: 𝓘_ii = 0, its error bound is infinite (never 1/0 or a NaN)
    info = FisherInformation(np.array([[1.0, 0.0, 2.0]]), [[0.5]])
    g = FisherGuarantee(info, quality=2.0)
    assert np.array_equal(g.record_bounds, [2.0, np.inf, 0.5])
    assert np.array_equal(cramer_rao.record_bounds(np.diag([2.0, 0.0, 0.5])), [0.5, np.inf, 2.0])
    zero = np.zeros((2, 2))
    assert cramer_rao.trace_bound(zero) == math.inf and cramer_rao.jensen_bound(zero) == math.inf
    assert cramer_rao.cramer_rao_bound(zero) == math.inf and not cramer_rao.is_invertible(zero)
    small = np.diag([0.25, 0.25])  # traces below 1 are ordinary values
    assert cramer_rao.trace_bound(small) == 2.0 and cramer_rao.jensen_bound(small) == 8.0
    empty = FisherGuarantee(FisherInformation(np.zeros((1, 2)), [[1.0]]), quality=1.0)
    assert empty.trace_bound == math.inf and empty.worst_record_bound == math.inf


def test_invertibility_threshold():
    assert cramer_rao.is_invertible(np.diag([1.0, 2e-12]))
    assert not cramer_rao.is_invertible(np.diag([1.0, 1e-12]))  # at rtol × largest: singular
    assert cramer_rao.is_invertible(np.diag([1e-3, 1e-3]))  # small but well conditioned
    assert cramer_rao.is_invertible(np.diag([1.0, 0.5]), rtol=0.5) is False
    with pytest.raises(InvalidParameterError, match="positive semi-definite"):
        cramer_rao.cramer_rao_bound(np.diag([1.0, -1e-6]))
    assert cramer_rao.cramer_rao_bound(np.diag([1.0, -1e-12])) == math.inf  # rounding noise is tolerated
    assert cramer_rao.cramer_rao_bound(np.diag([1e6, -1e-4])) == math.inf  # relative to the largest entry


def test_biased_bound_shapes_and_value():
    info = np.diag([4.0, 1.0, 2.0])
    g = np.array([[1.0, 0.0], [0.5, 1.0], [0.0, 2.0]])
    b = np.array([0.1, -0.2, 0.3])
    expected = np.trace(g.T @ np.linalg.inv(info) @ g) + b @ b
    assert cramer_rao.biased_bound(info, g, b) == pytest.approx(expected)
    with pytest.raises(DimensionError):
        cramer_rao.biased_bound(info, g[:2], b)
    with pytest.raises(DimensionError):
        cramer_rao.biased_bound(info, g, b[:2])
    with pytest.raises(InvalidParameterError):
        cramer_rao.biased_bound(info, g, b.reshape(3, 1))
    with pytest.raises(InvalidParameterError, match="invertible"):
        cramer_rao.biased_bound(np.diag([1.0, 0.0, 1.0]), g, b)


def test_fisher_information_validation():
    with pytest.raises(InvalidParameterError, match="noise_information"):
        FisherInformation(np.eye(2), [[1.0, 0.5], [0.0, 1.0]])  # not symmetric
    with pytest.raises(DimensionError, match="noise_information"):
        FisherInformation(np.eye(2), np.eye(3))
    with pytest.raises(DimensionError, match="noise_information"):
        FisherInformation(np.ones((2, 3)), np.ones((2, 3)))
    with pytest.raises(InvalidParameterError, match="quality"):
        FisherGuarantee(FisherInformation(np.eye(1), [[1.0]]), quality=-1.0)
    assert FisherGuarantee(FisherInformation(np.eye(1), [[1.0]]), quality=0.0).quality == 0.0
    with pytest.raises(ValueError, match="scope"):
        FisherGuarantee(FisherInformation(np.eye(1), [[1.0]]), quality=1.0, scope="everywhere")
    big = FisherInformation(np.ones((1, 4096)), [[1.0]])
    assert big.matrix().shape == (4096, 4096)  # the dense limit itself is allowed
    with pytest.raises(DimensionError):
        FisherInformation(np.ones((1, 4097)), [[1.0]]).matrix()


def test_published_form_states_the_guarantee():
    g = fisher_guarantee(queries.mean(4, bounds=(0.0, 1.0)), RaisedCosine(lower=-0.1, upper=0.1))
    out = g.as_dict()
    per_record = 4 * np.pi**2 / 0.2**2 / 16  # (1/4)² 𝓘_w with 𝓘_w = 4π²/L² for cos² on a width L = 0.2
    info = 4 * per_record
    assert out == {
        "notion": "fisher-information",
        "scope": "all-data",
        "fisher_information_trace": pytest.approx(info),
        "cramer_rao_bound": "inf",
        "worst_record_bound": pytest.approx(1 / per_record),
        "trace_bound": pytest.approx(1 / info),
        "quality": pytest.approx(RaisedCosine(lower=-0.1, upper=0.1).second_moment()),
        "records": 4,
    }
    json.dumps(out)
    text = g.summary()
    assert "Fisher-information privacy (all-data)" in text
    assert "; unbiased Cramér–Rao bound ∞ (no unbiased estimator exists); quality" in text
    assert f"{g.worst_record_bound:.6g}" in text and f"{g.trace_bound:.6g}" in text
    square = FisherGuarantee(FisherInformation(np.eye(2), np.diag([4.0, 1.0])), quality=1.0)
    assert square.as_dict()["cramer_rao_bound"] == 1.25 and "1.25" in square.summary()
    pair = queries.FunctionQuery(
        lambda v: np.array([v[0] * v[1], v[1]]), 2, jacobian_bound=1.0, bounds=(0, 1)
    )
    declared = fisher_guarantee(pair, Gaussian(cov=np.eye(2)))
    assert declared.as_dict()["cramer_rao_bound"] is None
    assert "; unbiased Cramér–Rao bound n/a; quality" in declared.summary()


def test_json_numbers():
    assert json_number(1.5) == 1.5 and isinstance(json_number(2), float)
    assert json_number(math.inf) == "inf" and json_number(-math.inf) == "-inf"
    assert json_number(0.0) == 0.0


def test_differential_privacy_guarantee_form():
    g = DifferentialPrivacyGuarantee(epsilon=0.5, delta=1e-6, adjacency="ℓ2 sensitivity 1")
    assert g.as_dict() == {
        "notion": "differential-privacy",
        "epsilon": 0.5,
        "delta": 1e-6,
        "adjacency": "ℓ2 sensitivity 1",
    }
    assert g.summary() == "(0.5, 1e-06)-differential privacy (approximate; ℓ2 sensitivity 1)"
    assert DifferentialPrivacyGuarantee(epsilon=1.0).summary() == (
        "(1, 0)-differential privacy (pure; one record changes within its declared bounds)"
    )
    for bad in ({"epsilon": -0.1}, {"epsilon": math.inf}, {"epsilon": math.nan}, {"epsilon": 1.0, "delta": 1.0}):
        with pytest.raises(InvalidParameterError):
            DifferentialPrivacyGuarantee(**bad)
    # ε = 0 is a statement too: nothing released yet, or (0, δ)-DP (statistical-input privacy)
    assert DifferentialPrivacyGuarantee(epsilon=0.0, delta=1e-3).summary().startswith("(0, 0.001)-differential")


def test_gaussian_guarantee_of_a_correlated_linear_release():
    c = np.array([[1.0, 1.0, 0.0], [0.0, 1.0, -1.0]])
    noise = Gaussian(cov=[[1.0, 0.4], [0.4, 2.0]])
    g = fisher_guarantee(queries.LinearQuery(c), noise)
    dense = c.T @ np.linalg.inv(noise.cov) @ c
    assert g.information.trace() == pytest.approx(np.trace(dense))
    assert np.allclose(g.record_bounds, 1 / np.diag(dense))
    assert g.cramer_rao_bound == math.inf  # 2 outputs cannot identify 3 records


def test_design_thresholds_are_relative():
    import privnoise as pn
    # C of full row rank but wildly scaled rows: CCᵀ = diag(10⁴, 10⁻¹⁰), condition 10¹⁴ beyond 10¹²: refused
    with pytest.raises(InvalidParameterError, match="full row rank"):
        pn.fisher.optimal_noise(queries.LinearQuery(np.diag([100.0, 1e-5])), quality_budget=1.0)
    ok = pn.fisher.optimal_noise(queries.LinearQuery(np.diag([100.0, 1e-3])), quality_budget=1.0)
    assert np.allclose(ok.cov, np.diag([100.0, 1e-3]) / 100.001)  # Σ = ϑ (CCᵀ)^{1/2} / Tr (CCᵀ)^{1/2}
    # nearly orthogonal rows of a large C: off-diagonal CCᵀ at 10⁻¹⁴ of the diagonal is separable …
    c = 1e3 * np.array([[1.0, 1e-14], [0.0, 1.0]])
    box = pn.fisher.optimal_noise(queries.LinearQuery(c), support=(-1.0, 1.0))
    assert isinstance(box, RaisedCosine) and box.shape == (2,)  # the closed-form product of cos²
    for goal in ({"support": (0.2, 0.2)}, {"output_range": (1.0, 1.0)}):
        with pytest.raises(InvalidParameterError, match="lower < upper"):
            pn.fisher.optimal_noise(queries.mean(3), **goal)


def test_numerical_information_arguments():
    from privnoise.fisher.information import fisher_information_monte_carlo, fisher_information_quadrature

    with pytest.raises(InvalidParameterError, match="support"):
        fisher_information_quadrature(lambda w: np.ones_like(w), (1.0, 1.0))
    two = fisher_information_monte_carlo(Gaussian(cov=1.0), samples=2, rng=1)  # the fewest with a spread
    assert two.samples == 2 and np.isfinite(two.standard_error).all()
    assert fisher_information_monte_carlo(Gaussian(cov=1.0)).samples == 100_000  # the documented default


def test_semi_definiteness_tolerance_and_invertibility_scale():
    with pytest.raises(InvalidParameterError, match="positive semi-definite"):
        cramer_rao.cramer_rao_bound(np.diag([1.0, -1.5e-9]))  # beyond 10⁻⁹ of a unit-sized matrix
    assert cramer_rao.cramer_rao_bound(np.diag([1.0, -0.5e-9])) == math.inf
    assert not cramer_rao.is_invertible(np.diag([1e3, 1e-10]))  # 10⁻¹³ of the largest eigenvalue
    assert cramer_rao.is_invertible(np.diag([1e-3, 1e-10]))  # 10⁻⁷ of it


def test_structured_information_is_never_expanded():
    from privnoise.linalg import Identity, IsotropicForm

    n = 10**6  # a dense F or J would take 8 TB
    info = FisherInformation(Identity(n, 0.5), IsotropicForm(n, 4.0))
    assert isinstance(info.operator, Identity) and isinstance(info.noise_form, IsotropicForm)
    assert info.trace() == pytest.approx(n * 0.25 * 4.0, rel=1e-15)  # Tr(J F Fᵀ) = n s² v
    assert info.max_diagonal() == pytest.approx(1.0, rel=1e-15)
    assert info.is_invertible()  # s²v I is, by its closed form
    assert info.inverse_trace() == pytest.approx(n / 1.0, rel=1e-15)


def test_invertibility_of_a_large_unstructured_information_is_refused_not_guessed():
    from scipy import sparse

    from privnoise.linalg import IsotropicForm, SparseMatrix

    n = 5000  # beyond the dense limit, and no closed form for a general sparse F
    info = FisherInformation(SparseMatrix(sparse.identity(n, format="csr")), IsotropicForm(n, 2.0))
    assert info.inverse_trace() is None
    with pytest.raises(DimensionError, match="dense Fisher matrix"):
        info.is_invertible()


@pytest.mark.parametrize("grid", [0.0, 0.5, 2.0**-8])
def test_a_snapped_release_states_its_grid_and_rounded_quality(grid):
    info = FisherInformation(np.eye(3), np.diag([4.0, 1.0, 2.0]))
    g = FisherGuarantee(info, quality=2.0, grid=grid)
    out = g.as_dict()
    summary = g.summary()
    if grid == 0.0:
        assert "grid" not in out and "quality_with_rounding" not in out
        assert summary.endswith("quality Q = E‖w‖² = 2")
        return
    expected = (math.sqrt(2.0) + math.sqrt(3) * grid / 2) ** 2  # (√Q + √m Λ/2)²: the rounding moves ≤ Λ/2 each
    assert out["grid"] == grid
    assert out["quality_with_rounding"] == pytest.approx(expected, rel=1e-15)
    assert summary.endswith(f"quality Q = E‖w‖² = 2; output snapped to the grid 2^{round(math.log2(grid))}")


def test_combine_joins_exactly_one_fisher_and_one_dp_guarantee():
    from privnoise.guarantees import CombinedGuarantee, combine

    fisher = FisherGuarantee(FisherInformation(np.eye(2), np.eye(2)), quality=2.0)
    dp = DifferentialPrivacyGuarantee(0.5, 1e-6)
    assert combine() is None and combine(None, None) is None
    assert combine(fisher) is fisher and combine(None, dp) is dp
    for parts in ((fisher, dp), (dp, None, fisher)):
        both = combine(*parts)
        assert isinstance(both, CombinedGuarantee)
        assert both.fisher is fisher and both.differential_privacy is dp
        assert both.parts == (fisher, dp)
        out = both.as_dict()
        assert out == {"notion": both.notion, "fisher": fisher.as_dict(), "differential_privacy": dp.as_dict()}
        assert json.loads(json.dumps(out)) == out
    combined = CombinedGuarantee(fisher, dp)
    for parts in ((fisher, fisher), (dp, dp), (fisher, dp, dp), (fisher, fisher, dp), (fisher, combined), (combined, dp)):
        with pytest.raises(InvalidParameterError, match="one Fisher guarantee and one DP guarantee"):
            combine(*parts)


def test_monte_carlo_information_states_the_standard_error_of_its_mean():
    from privnoise.fisher.information import fisher_information_monte_carlo

    count = 5
    est = fisher_information_monte_carlo(Gaussian(cov=4.0), samples=count, rng=3)
    w = np.asarray(Gaussian(cov=4.0).sample(count, rng=3), dtype=float)  # the same draws
    products = (w / 4.0) ** 2  # the Gaussian score −w/σ², squared
    assert est.estimate[0, 0] == pytest.approx(products.mean(), rel=1e-12)
    unbiased_sd = math.sqrt(((products - products.mean()) ** 2).sum() / (count - 1))
    assert est.standard_error[0, 0] == pytest.approx(unbiased_sd / math.sqrt(count), rel=1e-12)
