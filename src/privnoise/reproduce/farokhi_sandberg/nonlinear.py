"""Section 3, nonlinear queries: Corollary 5 (the variance query gets the noise of Corollary 3)."""

from __future__ import annotations

import numpy as np

from ... import queries
from ...fisher import fisher_guarantee
from ...mechanisms import Mechanism
from .._report import Row, make_row
from .common import PI2, noise_for, same_noise_row
from .parameters import Setup

__all__ = ["rows"]


def rows(s: Setup, *, corollary3_noise: Mechanism) -> list[Row]:
    """Rows of Corollary 5; ``corollary3_noise`` is the weighted-mean noise of Corollary 3 on the same support."""
    rows: list[Row] = []
    n = len(s.variance_data)
    q_var = queries.variance(n)
    mech = noise_for(q_var, support=s.scalar_support)
    grid = np.linspace(*s.scalar_support, 1001)
    rows.append(same_noise_row(
        "cor5-variance-query",
        "Cor. 5: the variance query gets the same noise (14) as Cor. 3 (max abs(γ_var − γ_C1))",
        mech, corollary3_noise, grid,
        "optimal_noise(variance(5), support=…) vs optimal_noise(weighted_mean, support=…)",
    ))
    x = np.array(s.variance_data)
    step = 1e-6
    grad = np.array(
        [(np.var(x + step * e, ddof=1) - np.var(x - step * e, ddof=1)) / (2 * step) for e in np.eye(n)]
    )
    lo, hi = s.scalar_support
    rows.append(
        make_row(
            key="cor5-trace-info",
            claim="Cor. 5: Tr 𝓘(x) = ‖∇f(x)‖²·4π²/L² for the variance query at x (printed = FD)",
            printed=float(grad @ grad) * 4.0 * PI2 / (hi - lo) ** 2,
            computed=fisher_guarantee(q_var, mech, x).information.trace(),
            status="check",
            reason="Tr 𝓘(x) = ‖∇f(x)‖²J for the scalar variance query",
            method="finite differences: central differences (step 10⁻⁶) of numpy.var, times the closed form "
            "J = 4π²/L² of the cos² noise",
        )
    )
    return rows
