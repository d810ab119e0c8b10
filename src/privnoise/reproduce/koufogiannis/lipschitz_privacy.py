"""Koufogiannis, Han & Pappas: Propositions 4 and 5 and Lemma 10 of Lipschitz privacy.

Proposition 4 (the exponential mechanism is εL-Lipschitz private as printed; 2εL when its normaliser moves, an
erratum: docs/errata.md, Koufogiannis N2), Proposition 5 (post-processing keeps the level) and Lemma 10 (an atom
in additive noise breaks Lipschitz privacy), each against a second computation.

References
----------
F. Koufogiannis, S. Han, G. J. Pappas, "Optimality of the Laplace mechanism in differential privacy",
arXiv:1504.00065: Propositions 4 and 5, Lemma 10.
"""

from __future__ import annotations

import math

import numpy as np

from ...mechanisms.laplace import Laplace
from .._report import Report, Row
from .parameters import Setup

__all__ = ["add_rows"]


def add_rows(report: Report, s: Setup) -> None:
    """Proposition 4 (exponential mechanism, corrected), Proposition 5 (post-processing), Lemma 10 (density)."""
    from ...dp.exponential import proposition4_epsilon, truncated_laplace_log_density
    from ...dp.lipschitz import lipschitz_constant

    eps = s.epsilon
    u = np.linspace(-0.5, 1.5, 4001)
    measured = max(
        float(np.max(np.abs(np.diff(truncated_laplace_log_density(u, y, eps)) / np.diff(u))))
        for y in np.linspace(0.0, 1.0, 401)
    )
    report.add(
        Row(
            "prop4-exponential",
            f"Prop. 4: p(y∣u) ∝ e^(εs(u,y)) with s L-Lipschitz in u is εL-Lipschitz private (s = −|u − y| on "
            f"y ∈ [0, 1], L = 1, ε = {eps:g}; computed = sup of |∂ₙ ln p| by finite differences)",
            eps,
            measured,
            "erratum",
            "Koufogiannis N2 (docs/errata.md): the normaliser Z(u) moves by up to εL‖u − u′‖ too, so the level is "
            f"2εL = {proposition4_epsilon(eps, 1.0):g} (proposition4_epsilon); εL holds "
            "when Z is constant",
        )
    )
    report.add(
        Row(
            "prop4-laplace",
            f"Prop. 4, s = −|u − y| on ℝ (constant normaliser): the Laplace mechanism is εL-Lipschitz (ε = {eps:g})",
            eps * 1.0,
            lipschitz_constant(Laplace(scale=1.0 / eps)).value,
            "match",
            "printed: Proposition 4's level εL with L = 1; computed: lipschitz_constant of Laplace(1/ε), "
            f"sup |∇ ln g| = ε (proposition4_epsilon with a constant normaliser: "
            f"{proposition4_epsilon(eps, 1.0, invariant_normaliser=True):g})",
        )
    )
    # Proposition 5: y ↦ max(y, 0) after the Laplace mechanism; the event {0} has P = F(−u)
    grid = np.linspace(-20.0 / eps, 20.0 / eps, 20001)
    log_p0 = np.log(np.asarray(Laplace(scale=1.0 / eps).cdf(-grid)))
    post = float(np.max(np.abs(np.diff(log_p0) / np.diff(grid))))
    report.add(
        Row(
            "prop5-post-processing",
            f"Prop. 5: f∘Q stays ε-Lipschitz for f(y) = max(y, 0) after Laplace(1/ε) (printed = ε = {eps:g}, "
            "computed = sup over u of |∂ᵤ ln P(f(Qu) = 0)|)",
            eps,
            post,
            "check",
            "finite differences of ln F(−u) on u ∈ [−20/ε, 20/ε]; must not exceed ε",
            "closed form: F(−u) = ½e^{−εu} for u ≥ 0 and 1 − ½e^{εu} otherwise, so |∂ᵤ ln F(−u)| = ε on u ≥ 0 and "
            "less elsewhere: the sup is the printed ε",
        )
    )
    # Lemma 10: noise with an atom (V = 0 with probability ½, else Laplace) is not Lipschitz private
    p_atom_same = 0.5  # P(Qu ∈ {u}) = P(V = 0)
    p_atom_moved = 0.0  # P(Qu′ ∈ {u}) for u′ ≠ u: the Laplace part has no atom
    loss = math.inf if p_atom_moved == 0.0 else math.log(p_atom_same / p_atom_moved)
    report.add(
        Row(
            "lemma10-atom",
            "Lemma 10: ε-Lipschitz additive noise has a density — with an atom, |ln P(Qu ∈ S) − ln P(Qu′ ∈ S)| is "
            "unbounded (S = {u}, V = 0 w.p. ½ else Laplace)",
            "inf",
            "inf" if math.isinf(loss) else f"{loss:g}",
            "check",
            "P(Qu ∈ {u}) = ½ but P(Qu′ ∈ {u}) = 0 for every u′ ≠ u",
            "closed form: the atom's probabilities ½ and 0 give an infinite log ratio",
        )
    )
