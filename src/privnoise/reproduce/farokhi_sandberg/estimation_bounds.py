"""Section 2, estimation bounds: Proposition 5 (Jensen), eq. (8), and Proposition 1 (Cramér–Rao) by Monte Carlo."""

from __future__ import annotations

import math

import numpy as np

from ... import queries
from ...fisher import cramer_rao_bound, fisher_guarantee, jensen_bound
from ...mechanisms import Gaussian, RaisedCosine
from ...random import default_rng
from .._report import Row, make_row
from .parameters import Setup

__all__ = ["rows"]


def rows(s: Setup) -> list[Row]:
    """Rows of Proposition 5 and eq. (8), then of Proposition 1."""
    return [*_proposition5_and_eq8(s), *_proposition1(s)]


def _proposition5_and_eq8(s: Setup) -> list[Row]:
    rows: list[Row] = []
    rng = default_rng(s.prop5_seed)
    a = rng.standard_normal((s.prop5_dim, s.prop5_dim))
    info = a @ a.T + 0.1 * np.eye(s.prop5_dim)
    direct = float(np.sum(1.0 / np.linalg.eigvalsh(info)))
    rows.append(
        make_row(
            key="prop5-jensen",
            claim="Prop. 5: Tr(𝓘⁻¹) ≥ n²/Tr 𝓘 on a random 4×4 PD matrix (printed = bound)",
            printed=jensen_bound(info),
            computed=cramer_rao_bound(info),
            status="check",
            reason=f"eigenvalues: Σ1/λ = {direct:.10g}, n²/Σλ = {s.prop5_dim**2 / np.trace(info):.10g}",
        )
    )
    mech = RaisedCosine(lower=np.array([-0.3, 0.0, 0.2]), upper=np.array([0.2, 1.1, 0.5]))
    g = fisher_guarantee(
        queries.LinearQuery(np.array([[1.0, 0.5, 0.0], [0.0, 1.0, 0.3], [0.2, 0.0, 1.0]])), mech
    )
    rows.append(
        make_row(
            key="eq8-trace-bound",
            claim="Eq. (8): min_i E(x_i − x̂_i)² ≥ 1/Tr 𝓘 (printed = 1/Tr 𝓘; computed = min_i 1/𝓘_ii)",
            printed=g.trace_bound,
            computed=g.worst_record_bound,
            status="check",
            reason="eq. (7) per record from the diagonal of CᵀJC",
        )
    )
    return rows


def _proposition1(s: Setup) -> list[Row]:
    rows: list[Row] = []
    q = queries.identity(2)
    x = np.array(s.prop1_x)
    for key, mech, label in (
        (
            "prop1-crb-cos2",
            RaisedCosine(lower=np.array(s.prop1_lower), upper=np.array(s.prop1_upper)),
            "cos² on [−0.3, 0.2]×[0, 1.1]",
        ),
        ("prop1-crb-gaussian", Gaussian(cov=np.array(s.prop1_cov)), "Gaussian Σ = [[0.5, 0.2], [0.2, 0.3]]"),
    ):
        crb = fisher_guarantee(q, mech).cramer_rao_bound
        assert crb is not None
        w = np.asarray(mech.sample(s.prop1_draws, rng=s.prop1_seed))
        y = x + w
        estimate = y - np.asarray(mech.mean())
        err = np.sum((estimate - x) ** 2, axis=1)
        mse, se = float(err.mean()), float(err.std(ddof=1) / math.sqrt(err.size))
        exact = float(np.trace(np.atleast_2d(mech.covariance())))
        relation = "≥" if key.endswith("cos2") else "="
        rows.append(
            make_row(
                key=key,
                claim=f"Prop. 1: E‖x − x̂‖² {relation} Tr(𝓘⁻¹) for x̂ = y − E w, {label} (printed = Tr(𝓘⁻¹))",
                printed=crb,
                computed=mse,
                status="check",
                reason=f"Monte Carlo, {s.prop1_draws} draws, seed {s.prop1_seed}: SE {se:.2g}; "
                f"exact Tr Cov(w) = {exact:.8g}",
            )
        )
    return rows
