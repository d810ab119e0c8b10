"""Reproduction of Koufogiannis, Han & Pappas, "Optimality of the Laplace mechanism in differential privacy".

One :class:`~privnoise.reproduce.Row` per checkable claim, with a status:

* ``match`` — the printed formula (evaluated at :data:`SETUP`) agrees with privnoise's closed form or with an
  independent numerical method (quadrature, ODE integration, bisection, the LP);
* ``check`` — a claim verified by a second method without an exact printed number (Monte Carlo MSEs, sampler
  KS tests, LP convergence against the discrete closed form derived in :mod:`privnoise.dp.lp`);
* ``erratum`` — the printed expression is wrong (the exponent of Proposition 3's displayed inequality, a
  typo in the proof of Theorem 9, the factor 2 of Proposition 4).

Covered: Theorems 6–9 (MSEs 2/ε², 2n/ε², n(n+1)/ε², nm(m+1)/ε²), eq. (14) and the Theorem 9 normaliser, the
sampler of Section IV-C, Proposition 3 (ε = L·α; its display prints e^ε), the dual functions η of Figures 1 and 2 (feasible iff
λ < λ*), Remark 2, the Appendix's v̂₁ and η′ formulas, and the discretised LP of the Appendix.

Figures (PNG, matplotlib Agg): ``fig1-dual-eta.png``, ``fig2-dual-eta-l2.png``, ``lp-convergence.png``,
``fig3-dual-eta-small-delta.png``.

One module per part of the paper, each adding its rows (and drawing its figures) at the parameters :data:`SETUP`
(:mod:`.parameters`); :func:`build_report` fixes the order of the rows:

=====================================  ==========================================================================
:mod:`.laplace_family`                 Theorems 6–9 (MSEs), eq. (14), the sampler of Section IV-C, Proposition 3
:mod:`.dual`                           the dual functions: Figures 1–3, Remark 2, the Appendix, Theorem 9's proof
:mod:`.lp`                             the Appendix's discretised LP and its convergence figure
:mod:`.lipschitz_privacy`              Propositions 4 and 5, Lemma 10
=====================================  ==========================================================================

References
----------
F. Koufogiannis, S. Han, G. J. Pappas, "Optimality of the Laplace mechanism in differential privacy",
arXiv:1504.00065.

Examples
--------
>>> from privnoise.reproduce import koufogiannis
>>> report = koufogiannis.build_report(None, figures=False)      # doctest: +SKIP
>>> report.row("thm8-mse").status                                # doctest: +SKIP
'match'
"""

from __future__ import annotations

from pathlib import Path

from .._report import Report
from . import dual, laplace_family, lipschitz_privacy, lp
from .parameters import SETUP, Setup

__all__ = ["SETUP", "SOURCE", "Setup", "build_report"]

SOURCE = (
    'F. Koufogiannis, S. Han, G. J. Pappas, "Optimality of the Laplace mechanism in differential privacy" '
    "(arXiv:1504.00065): Definition 2, Propositions 3–5, Theorems 6–9, eq. (14), Figures 1–2, Appendix."
)


def build_report(output: Path | None, *, figures: bool = True) -> Report:
    """Compute every row (and, with ``output`` and ``figures``, the PNGs) of the reproduction report."""
    s = SETUP
    report = Report(title="Koufogiannis, Han & Pappas — optimality of the Laplace mechanism", source=SOURCE)

    laplace_family.add_rows(report, s)
    dual.add_rows(report, s)
    lp_table = lp.add_rows(report, s)
    lipschitz_privacy.add_rows(report, s)
    dual.add_figure3_row(report, s)

    le = s.lp_epsilon
    report.notes += [
        "Monte Carlo rows use fixed seeds (research reproducibility only).",
        "The LP's discrete optimum is the two-sided geometric law gₖ ∝ ρ^{|k|}, ρ = (1 − εν/2)/(1 + εν/2); "
        "its MSE (2/ε²)(1 − (εν)²/4) approaches 2/ε² from below at O(ν²).",
        "A truncated (tabulated) LP density has bounded support and is therefore not Lipschitz or ε-DP; "
        "release with the Laplace mechanism it converges to.",
        "LP convergence: "
        + "; ".join(f"N = {g}: {obj:.8g} ({(obj - 2 / le**2) / (2 / le**2):+.3%})" for g, obj, _ in lp_table),
    ]

    if output is not None and figures:
        output.mkdir(parents=True, exist_ok=True)
        dual.figures(report, output, s)
        lp.convergence_figure(report, output, s, lp_table)
        dual.figure3(report, output, s)
    if output is not None:
        report.write(output)
    return report
