"""Section 2, estimation bounds: Proposition 5 (Jensen), eq. (8), and Proposition 1 (Cramér–Rao) by Monte Carlo."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from ... import queries
from ...fisher import cramer_rao_bound, fisher_guarantee, jensen_bound
from ...mechanisms import Gaussian, RaisedCosine
from ...random import default_rng
from .._report import Row, make_row, second_method
from .parameters import Setup

__all__ = ["cos2_by_rejection", "rows"]


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
            printed=s.prop5_dim**2 / float(np.trace(info)),
            computed=cramer_rao_bound(info),
            status="check",
            reason=f"eigenvalues: Σ1/λ = {direct:.10g}; privnoise's jensen_bound gives {jensen_bound(info):.10g}",
            method="dense matrix: n²/Tr 𝓘 and Σ1/λᵢ from numpy.linalg.eigvalsh",
        )
    )
    lower, upper = np.array([-0.3, 0.0, 0.2]), np.array([0.2, 1.1, 0.5])
    c = np.array([[1.0, 0.5, 0.0], [0.0, 1.0, 0.3], [0.2, 0.0, 1.0]])
    g = fisher_guarantee(queries.LinearQuery(c), RaisedCosine(lower=lower, upper=upper))
    by_hand = c.T @ np.diag(4.0 * math.pi**2 / (upper - lower) ** 2) @ c  # CᵀJC, J of the cos² (ERRATA 2)
    rows.append(
        make_row(
            key="eq8-trace-bound",
            claim="Eq. (8): min_i E(x_i − x̂_i)² ≥ 1/Tr 𝓘 (printed = 1/Tr 𝓘 by the second method; computed = "
            "privnoise's min_i 1/𝓘_ii)",
            printed=1.0 / float(np.trace(by_hand)),
            computed=g.worst_record_bound,
            status="check",
            reason=f"eq. (7) per record from the diagonal of CᵀJC; privnoise's 1/Tr 𝓘 = {g.trace_bound:.10g}",
            method="dense matrix: CᵀJC with J = diag(4π²/Lᵢ²) of the cos² noise, traced with numpy",
        )
    )
    return rows


@second_method
def cos2_by_rejection(lower: float, upper: float, size: int, gen: np.random.Generator) -> NDArray[np.float64]:
    """``size`` draws of the cos² density (14) on [lower, upper] by rejection from the uniform law (a second
    sampler, independent of privnoise's): accept w with probability cos²(π(w − c)/L)."""
    length, centre = upper - lower, (upper + lower) / 2.0
    out = np.empty(0)
    while out.size < size:
        w = gen.uniform(lower, upper, 2 * size)
        keep = gen.uniform(0.0, 1.0, 2 * size) < np.cos(np.pi / length * (w - centre)) ** 2
        out = np.concatenate([out, w[keep]])
    return out[:size]


def _proposition1(s: Setup) -> list[Row]:
    rows: list[Row] = []
    q = queries.identity(2)
    x = np.array(s.prop1_x)
    samplers: tuple[tuple[tuple[float, ...], tuple[float, ...]] | NDArray[np.float64], ...] = (
        (s.prop1_lower, s.prop1_upper),
        np.array(s.prop1_cov),
    )
    for (key, mech, label), sampler in zip(
        (
            (
                "prop1-crb-cos2",
                RaisedCosine(lower=np.array(s.prop1_lower), upper=np.array(s.prop1_upper)),
                "cos² on [−0.3, 0.2]×[0, 1.1]",
            ),
            (
                "prop1-crb-gaussian",
                Gaussian(cov=np.array(s.prop1_cov)),
                "Gaussian Σ = [[0.5, 0.2], [0.2, 0.3]]",
            ),
        ),
        samplers,
        strict=True,
    ):
        crb = fisher_guarantee(q, mech).cramer_rao_bound
        assert crb is not None
        gen = np.random.default_rng(s.prop1_seed)
        if isinstance(sampler, tuple):
            lows, highs = sampler
            w = np.stack(
                [cos2_by_rejection(lo, hi, s.prop1_draws, gen) for lo, hi in zip(lows, highs, strict=True)], 1
            )
            mean = (np.array(lows) + np.array(highs)) / 2.0
        else:
            w, mean = gen.multivariate_normal(np.zeros(2), sampler, size=s.prop1_draws), np.zeros(2)
        y = x + w
        estimate = y - mean
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
                reason=f"{'above' if relation == '≥' else 'at'} the bound; SE {se:.2g}; exact Tr Cov(w) = {exact:.8g}",
                method=f"Monte Carlo: {s.prop1_draws} draws of numpy's generator (seed {s.prop1_seed}), "
                + (
                    "cos² by rejection from the uniform law"
                    if key.endswith("cos2")
                    else "multivariate_normal"
                )
                + "; tolerance 5 standard errors",
            )
        )
    return rows
