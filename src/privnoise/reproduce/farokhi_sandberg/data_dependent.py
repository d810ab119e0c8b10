"""Section 3, data-dependent noise: Corollary 4 and Figure 1 (the printed p-weighted policy, ERRATA 3)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ...mechanisms import RaisedCosine
from .._report import Row, make_row
from .common import quad
from .parameters import Setup
from .printed_policy import WeightedCosinePolicy

__all__ = ["figure1", "rows"]


def rows(s: Setup) -> list[Row]:
    """Rows of Corollary 4 (the printed p-weighted policy, ERRATA 3)."""
    rows: list[Row] = []
    policy = WeightedCosinePolicy(lower=s.cor4_support[0], upper=s.cor4_support[1], log_weight=lambda x: -x)
    printed_info = policy.fisher_information_at(s.cor4_x)
    rows.append(
        make_row(
            key="cor4-exp-weight-information",
            claim="Cor. 4, p ∝ e^{−x} on [0, 1]: the printed policy e^{w}cos² minimises Tr 𝓘 "
            "(its value vs the plain cos²)",
            printed=printed_info,
            computed=policy.plain_cosine_information(),
            status="erratum",
            reason="ERRATA 3: the printed policy has 4π²+1 (WeightedCosinePolicy.fisher_information_at); "
            "the feasible plain cos² has 4π², so Cor. 4 is not the minimiser",
        )
    )
    grid = np.linspace(*s.cor4_support, 501)
    diff = np.max(np.abs(policy.density_at(0.0).pdf(grid) - policy.density_at(1.0).pdf(grid)))
    rows.append(
        make_row(
            key="cor4-exp-weight-x-independent",
            claim="Cor. 4 / Fig. 1: for p ∝ e^{−x} the policy does not depend on x (max abs(γ(·∣0) − γ(·∣1)))",
            printed=0.0,
            computed=float(diff),
            status="match",
            reason="p′/p = −1 is constant",
        )
    )

    x0, w0 = s.cor4_gauss_x, s.cor4_gauss_w
    lo, hi = s.cor4_support
    width = hi - lo

    def printed_unnormalised(w: float) -> float:  # −p′/p = 2x for p ∝ e^{−x²}
        return math.exp(2.0 * x0 * (w + x0)) * math.cos(math.pi / width * (w - (lo + hi) / 2.0)) ** 2

    c_x = 1.0 / quad(printed_unnormalised, lo, hi)
    gauss_policy = WeightedCosinePolicy(
        lower=s.cor4_support[0], upper=s.cor4_support[1], log_weight=lambda x: -x * x
    )
    rows.append(
        make_row(
            key="cor4-printed-density",
            claim="Cor. 4 printed γ(w∣x) with c(x), p ∝ e^{−x²}, x = 0.7, w = 0.3",
            printed=c_x * printed_unnormalised(w0),
            computed=gauss_policy.density_at(x0).pdf(w0),
            status="match",
            reason="c(x) by quadrature; computed = WeightedCosinePolicy.density_at(x).pdf",
        )
    )
    return rows


def figure1(output: Path, s: Setup) -> tuple[str, str]:
    """Figure 1: Corollary 4's printed policy γ(w ∣ x) for two priors, with the plain cos²."""
    from ...plotting import figure, save

    lo, hi = s.cor4_support
    w = np.linspace(lo, hi, 201)
    xs = np.linspace(-1.5, 1.5, 25)  # contains the five x of the line plots
    plain = RaisedCosine(lower=lo, upper=hi).pdf(w)
    fig = figure(figsize=(10, 7.5), layout="constrained")
    axes = fig.subplots(2, 2)
    for row, (label, log_weight) in enumerate(
        (("p(x) ∝ exp(−x²)", lambda x: -x * x), ("p(x) ∝ exp(−x)", lambda x: -x))
    ):
        policy = WeightedCosinePolicy(lower=s.cor4_support[0], upper=s.cor4_support[1], log_weight=log_weight)
        table = np.array([policy.density_at(x).pdf(w) for x in xs])
        ax = axes[row, 0]
        image = ax.imshow(
            table.T, origin="lower", aspect="auto", extent=(xs[0], xs[-1], lo, hi), cmap="viridis"
        )
        fig.colorbar(image, ax=ax, label="γ*(w | x)")
        ax.set_xlabel("x")
        ax.set_ylabel("w")
        ax.set_title(f"Corollary 4 as printed, {label}")
        ax = axes[row, 1]
        for x in (-1.5, -0.75, 0.0, 0.75, 1.5):
            ax.plot(w, table[int(np.argmin(np.abs(xs - x)))], label=f"x = {x:g}")
        ax.plot(w, plain, "k--", lw=2, label="plain cos² (eq. (14))")
        ax.set_xlabel("w")
        ax.set_ylabel("density")
        same = " (all coincide)" if row == 1 else ""
        ax.set_title(f"γ*(w | x) at five x{same}")
        ax.legend(fontsize=8)
    fig.suptitle(
        "Figure 1: Corollary 4 policies on W = [0, 1] (printed form; not the Fisher minimiser, ERRATA 3)"
    )
    save(fig, output / "figure1.png")
    return (
        "figure1.png",
        "Figure 1 reproduced: Corollary 4's printed policy γ(w ∣ x) for p ∝ exp(−x²) (top) "
        "and p ∝ exp(−x) (bottom, independent of x), with the plain cos² for reference.",
    )
