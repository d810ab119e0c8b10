"""The second methods of the general-support rows (Theorem 2's trace identity, Remark 7, Proposition 2, Remark 3).

Each method is checked against a closed form, against the row it backs at a stated tolerance, and shown to reject a
perturbed input, so that the row's check can fail.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from privnoise import reproduce
from privnoise.reproduce import Report, Row
from privnoise.reproduce import farokhi_sandberg as fs
from privnoise.reproduce.farokhi_sandberg.general_supports_methods import (
    SineGalerkin,
    information_along_segment,
    post_processing_by_convolution,
    ritz_bound,
    sine_galerkin,
)

G = fs.SUPPORTS_SETUP
C = np.array(G.correlated_c)
GRAM = C @ C.T
LOWER, UPPER = np.array(G.box[0]), np.array(G.box[1])
PI2 = math.pi**2
SIGMA = np.array([[0.5, 0.2], [0.2, 0.3]])
EXTRA = np.array([[0.4, -0.1], [-0.1, 0.2]])

# Tolerances of the comparisons with the rows, stated here: the sine Galerkin's λ converges like modes⁻³ (2e-6 from
# the P2 value at 60 sines per axis), the rows' midpoint rule like grid⁻²; the convolution is exponentially accurate.
TRACE_RTOL = 1e-5
ENTRY_ATOL = 1e-3
GAP_RTOL = 1e-3
CONVOLUTION_RTOL = 1e-9


@pytest.fixture(scope="module")
def report() -> Report:
    return reproduce.run("farokhi-sandberg", figures=False)  # the run's reproduction cache (tests/conftest.py)


@pytest.fixture(scope="module")
def spectral() -> SineGalerkin:
    return sine_galerkin(GRAM, LOWER, UPPER, G.galerkin_modes)


def _number(text: str, label: str) -> float:
    return float(text.split(label, 1)[1].split()[0].rstrip(",;()"))


# -- thm2-trace-identity: the sine Galerkin method ------------------------------------------------------------


def test_sine_galerkin_is_exact_on_a_box_with_a_diagonal_gram() -> None:
    # Corollary 1: u = product of the first sines, λ = π²Σaᵢ/Lᵢ², 𝓘_w = diag(4π²/Lᵢ²)
    a, lengths = np.array(G.diagonal_a), np.array([2.0, 1.0])
    result = sine_galerkin(np.diag(a), (0.0, 0.0), (2.0, 1.0), 12)
    assert result.eigenvalue == pytest.approx(PI2 * float(np.sum(a / lengths**2)), rel=1e-12)
    np.testing.assert_allclose(result.information, np.diag(4 * PI2 / lengths**2), rtol=1e-12, atol=1e-12)
    assert abs(result.coefficients[0, 0]) == pytest.approx(1.0, rel=1e-12)


def test_sine_galerkin_satisfies_the_trace_identity(spectral: SineGalerkin) -> None:
    assert float(np.sum(spectral.coefficients**2)) == pytest.approx(1.0, rel=1e-12)  # ∫u² = 1
    assert float(np.trace(GRAM @ spectral.information)) == pytest.approx(4 * spectral.eigenvalue, rel=1e-10)


def test_sine_galerkin_converges_from_above_into_the_bracket(spectral: SineGalerkin, report: Report) -> None:
    low, up = (float(v) for v in report.row("thm2-box-correlated").reason.split("bracket [")[1].split("]")[0].split(", "))
    coarse = sine_galerkin(GRAM, LOWER, UPPER, 30)
    assert coarse.eigenvalue > spectral.eigenvalue > low  # Ritz values decrease with the space, above λ₁
    assert spectral.eigenvalue < up * (1 + TRACE_RTOL)


def _trace_identity_agrees(row: Row, result: SineGalerkin) -> bool:
    trace = float(np.trace(C.T @ result.information @ C))
    return abs(trace - float(row.computed)) <= TRACE_RTOL * float(row.computed)


def test_trace_identity_row_agrees_with_the_sine_galerkin(spectral: SineGalerkin, report: Report) -> None:
    row = report.row("thm2-trace-identity")
    assert row.method.startswith("discretisation: ")
    assert _trace_identity_agrees(row, spectral)
    assert 4 * spectral.eigenvalue == pytest.approx(float(row.printed), rel=TRACE_RTOL)
    assert _number(row.reason, "by at most") <= ENTRY_ATOL  # the 2×2 𝓘_w, entry by entry
    # a perturbed gram (CCᵀ with C₁₂ = 0.55 instead of 0.6) is rejected
    c = np.array([[1.0, 0.55], [0.0, 1.0]])
    assert not _trace_identity_agrees(row, sine_galerkin(c @ c.T, LOWER, UPPER, G.galerkin_modes))


# -- remark7-correlated-gain: the two-mode Rayleigh–Ritz bound ----------------------------------------------------


def _two_mode_bound_by_hand(gram: np.ndarray) -> float:
    """The 2×2 Rayleigh–Ritz matrix on φ₁₁, φ₂₂ of the box [−1, 1]², by hand."""
    trace = gram[0, 0] + gram[1, 1]
    matrix = np.array([[PI2 / 4 * trace, -32 * gram[0, 1] / 9], [-32 * gram[0, 1] / 9, PI2 * trace]])
    return float(np.linalg.eigvalsh(matrix)[0])


def _gain_shown(row: Row, gram: np.ndarray) -> bool:
    bound = 4 * ritz_bound(gram, LOWER, UPPER, 2)
    return bound < 0.99 * float(row.printed) and bound >= float(row.computed)


def test_two_mode_bound_is_the_matrix_by_hand() -> None:
    assert ritz_bound(GRAM, LOWER, UPPER, 2) == pytest.approx(_two_mode_bound_by_hand(GRAM), rel=1e-12)


def test_ritz_bounds_decrease_to_the_optimum(report: Report, spectral: SineGalerkin) -> None:
    bounds = [ritz_bound(GRAM, LOWER, UPPER, m) for m in (2, 4, 8, 16)]
    assert all(a >= b for a, b in zip(bounds, bounds[1:], strict=False))
    assert bounds[-1] >= spectral.eigenvalue
    row = report.row("remark7-correlated-gain")
    assert 4 * spectral.eigenvalue == pytest.approx(float(row.computed), rel=TRACE_RTOL)


def test_correlated_gain_row_agrees_with_the_two_mode_bound(report: Report) -> None:
    row = report.row("remark7-correlated-gain")
    assert row.method.startswith("dense matrix: ")
    assert _gain_shown(row, GRAM)
    assert _number(row.reason, "4λ ≤") == pytest.approx(4 * _two_mode_bound_by_hand(GRAM), rel=1e-9)
    # with an uncorrelated CCᵀ (same diagonal) the product cos² is optimal: the bound shows no gain
    diagonal = np.diag(np.diag(GRAM))
    assert 4 * ritz_bound(diagonal, LOWER, UPPER, 2) == pytest.approx(float(row.printed), rel=1e-12)
    assert not _gain_shown(row, diagonal)


# -- prop2-convexity: Gauss–Legendre quadrature along the segments ------------------------------------------------


def test_segment_quadrature_reproduces_the_closed_forms(spectral: SineGalerkin) -> None:
    j1, j2, gaps = information_along_segment(spectral, GRAM, (0.0, 1.0), G.gauss_nodes)
    assert j1 == pytest.approx(4 * spectral.eigenvalue, rel=1e-9)  # Tr 𝓘(u²) = 4λ
    assert j2 == pytest.approx(float(np.sum(np.diag(GRAM))) * PI2, rel=1e-10)  # Σ(CCᵀ)ᵢᵢ·4π²/2²
    assert gaps == pytest.approx([0.0, 0.0], abs=1e-9)


def test_segment_gaps_are_negative_for_every_weight(spectral: SineGalerkin) -> None:
    _, _, gaps = information_along_segment(spectral, GRAM, tuple(np.linspace(0.05, 0.95, 19)), G.gauss_nodes)
    assert max(gaps) < 0


def test_convexity_row_agrees_with_the_quadrature(spectral: SineGalerkin, report: Report) -> None:
    row = report.row("prop2-convexity")
    assert row.method.startswith("quadrature: ")
    _, _, gaps = information_along_segment(spectral, GRAM, G.mixture_weights, G.gauss_nodes)
    assert max(gaps) <= 0.0
    assert max(gaps) == pytest.approx(float(row.computed), rel=GAP_RTOL)
    # −CCᵀ turns Tr 𝓘 into a concave functional: the same check rejects it
    _, _, flipped = information_along_segment(spectral, -GRAM, G.mixture_weights, G.gauss_nodes)
    assert max(flipped) > 0.0


# -- remark3-post-processing: densities on a grid, z's by convolution --------------------------------------------


def test_convolution_reproduces_the_gaussian_information() -> None:
    ci = np.linalg.inv(C)
    by_y, by_z, loss = post_processing_by_convolution(C, SIGMA, EXTRA)
    assert by_y == pytest.approx(float(np.trace(ci @ SIGMA @ ci.T)), rel=CONVOLUTION_RTOL)
    assert by_z == pytest.approx(float(np.trace(ci @ (SIGMA + EXTRA) @ ci.T)), rel=CONVOLUTION_RTOL)
    closed = C.T @ (np.linalg.inv(SIGMA) - np.linalg.inv(SIGMA + EXTRA)) @ C
    assert loss == pytest.approx(float(np.linalg.eigvalsh(closed)[0]), rel=1e-8)
    assert loss > 0


def _post_processing_agrees(row: Row, extra: np.ndarray) -> bool:
    by_y, by_z, loss = post_processing_by_convolution(C, SIGMA, extra)
    return (
        math.isclose(by_y, float(row.printed), rel_tol=CONVOLUTION_RTOL)
        and math.isclose(by_z, float(row.computed), rel_tol=CONVOLUTION_RTOL)
        and loss >= 0
    )


def test_post_processing_row_agrees_with_the_convolution(report: Report) -> None:
    row = report.row("remark3-post-processing")
    assert row.method.startswith("quadrature: ")
    assert _post_processing_agrees(row, EXTRA)
    assert not _post_processing_agrees(row, 1.01 * EXTRA)  # a perturbed Σ₂ is rejected
