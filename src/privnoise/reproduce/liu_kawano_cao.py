"""Reproduction of Liu, Kawano & Cao, "Privacy preservation for statistical input in dynamical systems", Section IV.

The building CO₂ example: x(t+1) = 0.9x(t) + u(t), y(t) = x(t) + v(t), x₀ ~ N(90, 10) public, u(t) i.i.d.
N(m̄ + n·m_u, n·Σ_u) with m̄ = 20, m_u = 1, Σ_u = 0.1 for n = 1 or 2 occupants, horizon t = 2 (three outputs).

Rows: the printed radius c = 2.02 against W₂ of the paper's pair (U₂ of t+1 input samples: 1.7468; 2.02 is the
four-sample value, ERRATA 11), the σ that Theorem III.5 certifies for δ = 0.1 and 0.2 beside the printed σ (which
equals 0.9‖N₂‖₂/δ, ERRATA 11), and the exact total variation between the output laws of
one and two occupants under each σ (Gil-Pelaez inversion). Every ``check`` row's second method is written in
:mod:`privnoise.reproduce.liu_kawano_cao_methods` (the laws by hand, W₂ by scipy.linalg.sqrtm, Monte Carlo TV with
scipy.stats). Figures 1–2: noisy outputs.

References
----------
L. Liu, Y. Kawano and M. Cao, Section IV, Theorem III.5.

Examples
--------
>>> from privnoise.reproduce import liu_kawano_cao
>>> report = liu_kawano_cao.build_report(None)        # doctest: +SKIP
>>> report.row("sigma-delta-0.1").status              # doctest: +SKIP
'erratum'
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..random import default_rng
from ..systems import (
    GaussianInput,
    StateSpace,
    StatisticalInputNoise,
    statistical_input_noise,
    toeplitz_matrix,
    total_variation,
    wasserstein2,
)
from . import liu_kawano_cao_methods as lm
from ._report import Report, Row

__all__ = ["PRINTED_SIGMA", "SETUP", "SOURCE", "Setup", "build_report"]

SOURCE = (
    'L. Liu, Y. Kawano and M. Cao, "Privacy preservation for statistical input in dynamical systems" '
    "(Section IV, Theorem III.5, Lemmas III.1–III.2)."
)

#: σ printed in Section IV for δ = 0.1 and δ = 0.2.
PRINTED_SIGMA = {0.1: 13.9193, 0.2: 6.9596}


@dataclass(frozen=True)
class Setup:
    a: float = 0.9
    x0_mean: float = 90.0
    x0_var: float = 10.0
    m_bar: float = 20.0
    m_u: float = 1.0
    var_u: float = 0.1
    horizon: int = 2
    c: float = 2.02
    deltas: tuple[float, float] = (0.1, 0.2)
    mc_draws: int = 400_000
    mc_seed: int = 4
    figure_steps: int = 30
    figure_seed: int = 7

    def system(self) -> StateSpace:
        return StateSpace(A=[[self.a]], B=[[1.0]], C=[[1.0]], D=[[0.0]])

    def x0(self) -> GaussianInput:
        return GaussianInput(mean=[self.x0_mean], cov=[[self.x0_var]])

    def inputs(self, occupants: int, steps: int) -> GaussianInput:
        return GaussianInput.iid(
            mean=self.m_bar + occupants * self.m_u, var=occupants * self.var_u, steps=steps
        )


SETUP = Setup()


def _figure(output: Path, s: Setup, noise: StatisticalInputNoise, index: int) -> tuple[str, str]:
    from ..plotting import figure, save

    g = default_rng(s.figure_seed + index)
    steps = s.figure_steps
    fig = figure(figsize=(8, 4.5), layout="constrained")
    ax = fig.subplots()
    for occupants, colour in ((1, "tab:blue"), (2, "tab:red")):
        x = s.x0_mean + math.sqrt(s.x0_var) * g.standard_normal()
        clean = np.empty(steps)
        for k in range(steps):  # the model's recursion (plotting only)
            clean[k] = x
            x = s.a * x + (s.m_bar + occupants * s.m_u) + math.sqrt(occupants * s.var_u) * g.standard_normal()
        z = g.standard_normal(steps)
        noisy = clean + noise.sigma * z
        printed = clean + PRINTED_SIGMA[noise.delta] * z  # the same draw at the printed σ
        label = f"{occupants} occupant{'s' if occupants > 1 else ''}"
        ax.plot(clean, color=colour, lw=1.5, label=f"{label}: y(t) without noise")
        ax.plot(noisy, color=colour, lw=0.8, ls="--", marker="o", ms=3, label=f"{label}: certified σ")
        ax.plot(printed, color=colour, lw=0.8, ls=":", marker="x", ms=3, label=f"{label}: printed σ")
    ax.set_xlabel("time step t")
    ax.set_ylabel("CO₂ output y(t)")
    ax.set_title(
        f"δ = {noise.delta:g}: certified σ = {noise.sigma:.4g} (Theorem III.5) and printed σ = "
        f"{PRINTED_SIGMA[noise.delta]}"
    )
    ax.legend(fontsize=8, ncols=2)
    name = f"figure{index}.png"
    save(fig, output / name, dpi=100)
    caption = (
        f"Figure {index}: outputs for one and two occupants without and with the noise certified by Theorem III.5 "
        f"for δ = {noise.delta:g} (σ = {noise.sigma:.4g}), and with the paper's printed σ = {PRINTED_SIGMA[noise.delta]} "
        "(same noise draw, scaled)."
    )
    return name, caption


def _lemma_theorem_rows(report: Report, s: Setup, certified: StatisticalInputNoise) -> None:
    """Lemmas III.1–III.2, Theorem III.3 and Corollary III.4 on the Section IV pair (one vs two occupants)."""
    from ..systems import (
        corollary_iii4_noise,
        lemma_iii1_bound,
        observability_matrix,
        pushforward,
        symmetrized_kl,
        theorem_iii3_noise,
        wasserstein2,
    )

    system, x0 = s.system(), s.x0()
    t = s.horizon
    d = certified.delta
    pair = (x0 & s.inputs(1, t + 1), x0 & s.inputs(2, t + 1))
    on = np.hstack([observability_matrix(system, t), toeplitz_matrix(system, t)])
    outputs = [pushforward(law, on, certified.covariance()) for law in pair]
    hand = [lm.output_law_by_hand(s, k, certified.sigma) for k in (1, 2)]
    floor = min(float(np.linalg.eigvalsh(cov)[0]) for _, cov in hand)
    hand_kl = lm.gaussian_kl(hand[0], hand[1]) + lm.gaussian_kl(hand[1], hand[0])
    report.add(
        Row(
            "lemma-iii1",
            f"Lemma III.1: KL(P₁‖P₂) + KL(P₂‖P₁) ≤ 2W₂²/min λ_min(Σᵢ) for the output laws (certified σ, δ = {d:g}; "
            "printed = the bound by the second method, computed = privnoise's symmetrised KL)",
            2.0 * lm.gaussian_w2(*hand) ** 2 / floor,
            symmetrized_kl(*outputs),
            "check",
            f"computed must not exceed printed (privnoise's bound {lemma_iii1_bound(*outputs):.8g})",
            "dense matrix: the output laws [O₂ N₂](x₀, U₂) + v written out, W₂ by scipy.linalg.sqrtm; their "
            f"symmetrised KL by the written-out formula = {hand_kl:.8g}",
        )
    )
    obs, toeplitz = lm.stacked_matrix(s.a, t)
    hand_in = [lm.input_law(s, k, t + 1) for k in (1, 2)]
    w_out_clean = wasserstein2(*(pushforward(law, on) for law in pair))
    report.add(
        Row(
            "lemma-iii2",
            "Lemma III.2: W₂(P_y, P_y′) ≤ ‖[O₂ N₂]‖₂ W₂(P_x, P_x′) for y = [O₂ N₂](x₀, U₂) (printed = the bound by the "
            "second method, computed = privnoise's W₂ of the outputs)",
            float(np.linalg.norm(np.hstack([obs, toeplitz]), 2)) * lm.gaussian_w2(*hand_in),
            w_out_clean,
            "check",
            f"computed must not exceed printed; privnoise's W₂ of the inputs = {wasserstein2(*pair):.6g}",
            "dense matrix: [O₂ N₂] and the input laws written out, spectral norm by numpy, W₂ by scipy.linalg.sqrtm",
        )
    )
    thm3 = theorem_iii3_noise(system, horizon=t, c=s.c, delta=d, pair=pair)
    tv3 = total_variation(system, thm3, *pair)
    iii5 = lm.theorem_iii5_sigma(s, c=s.c, delta=d)
    report.add(
        Row(
            "thm-iii3-sigma",
            f"Theorem III.3 for this pair, δ = {d:g}: its σ (computed) against Theorem III.5's (printed, by the "
            "second method)",
            iii5,
            thm3.sigma,
            "check",
            f"condition (12) with the pair's own output covariances; exact TV at this σ = {tv3:.6g} ≤ δ",
            "closed form: Theorem III.5's σ² = c²λ_max(N₂ᵀN₂)/(2δ²) − λ_min(O₂Σ_{x₀}O₂ᵀ) with O₂, N₂ written out",
        )
    )
    mc3, se3 = lm.total_variation_by_monte_carlo(
        *(lm.output_law_by_hand(s, k, thm3.sigma) for k in (1, 2)), draws=s.mc_draws, seed=s.mc_seed
    )
    report.add(
        Row(
            "thm-iii3-tv",
            f"Theorem III.3: (0, δ)-DP, i.e. TV ≤ δ = {d:g}, at its σ for this pair (computed = privnoise's exact TV)",
            d,
            tv3,
            "check",
            "TV ≤ δ (privnoise: Gil-Pelaez inversion of the log-likelihood ratio)",
            f"Monte Carlo: E_P[(1 − q/p)⁺] over {s.mc_draws} draws of scipy.stats.multivariate_normal (seed "
            f"{s.mc_seed}) of the output laws written out: {mc3:.6g} ± {se3:.2g}",
        )
    )
    cor4 = corollary_iii4_noise(system, horizon=t, c=s.c, delta=d)
    on_hand = np.hstack([obs, toeplitz])
    cor4_hand = s.c * float(np.linalg.norm(on_hand, 2)) / (math.sqrt(2.0) * d)
    report.add(
        Row(
            "cor-iii4-sigma",
            f"Corollary III.4 (any pair in Adj₂^c), δ = {d:g}: λ_min(Σ_V) ≥ c²λ_max(𝒪₂)/(2δ²) (printed = "
            "Theorem III.5's σ by the second method, computed = privnoise's corollary σ)",
            iii5,
            cor4.sigma,
            "check",
            "the corollary ignores the inputs' own covariance, so its σ ≥ III.5's; exact TV at it = "
            f"{total_variation(system, cor4, *pair):.6g}",
            f"closed form: σ = c‖[O₂ N₂]‖₂/(√2δ) = {cor4_hand:.10g} and Theorem III.5's σ, with O₂, N₂ written out",
        )
    )


def build_report(output: Path | None = None, *, figures: bool = True) -> Report:
    """Evaluate Section IV; with ``output``, write ``report.md`` and ``figure1.png``, ``figure2.png``."""
    s = SETUP
    report = Report(
        title="Liu, Kawano & Cao: (0, δ)-DP of statistical inputs — Section IV (building CO₂)",
        source=SOURCE,
        notes=[
            "'ERRATA 11' refers to docs/errata.md.",
            "Certified σ: Theorem III.5, σ² = c²λ_max(N₂ᵀN₂)/(2δ²) − λ_min(O₂Σ_{x₀}O₂ᵀ) with λ_min = 0 (rank one).",
            "Exact TV: Gil-Pelaez inversion of the log-likelihood ratio's characteristic function (different "
            "covariances); the second methods estimate it by Monte Carlo with scipy.stats at a fixed seed.",
        ],
    )
    system, x0 = s.system(), s.x0()
    t = s.horizon
    n2 = float(np.linalg.norm(toeplitz_matrix(system, t), 2))

    w3 = wasserstein2(x0 & s.inputs(1, t + 1), x0 & s.inputs(2, t + 1))
    w4 = wasserstein2(x0 & s.inputs(1, t + 2), x0 & s.inputs(2, t + 2))
    report.add(
        Row(
            "c-t+1-samples",
            f"Section IV, t = {t}: c = 2.02 as the W₂ radius of the one- vs two-occupant pair, whose U₂ has t+1 = "
            f"{t + 1} samples (Definition II.1); computed = that W₂",
            s.c,
            w3,
            "erratum",
            f"the pair's W₂ is {w3:.6g} (eq. (1), three input samples); 2.02 is the four-sample value "
            f"{w4:.6g} (row c-t+2-samples). The printed sentence, that the pair is in Adj₂^c, still holds "
            f"({w3:.4g} ≤ 2.02): 2.02 is a conservative radius, the tight one {w3:.6g} (ERRATA 11)",
        )
    )
    report.add(
        Row(
            "c-adjacency",
            "Section IV: 'by setting c = 2.02, the pair … one individual and … two individual is in Adj₂^c' "
            "(computed = the pair's W₂, must not exceed c)",
            s.c,
            w3,
            "check",
            "membership holds",
            "closed form: W₂ of the joint laws of (x₀, U₂) written out, eq. (1) by scipy.linalg.sqrtm = "
            f"{lm.gaussian_w2(lm.input_law(s, 1, t + 1), lm.input_law(s, 2, t + 1)):.10g}",
        )
    )
    report.add(
        Row(
            "c-t+2-samples",
            f"the printed c = 2.02 equals W₂ of one vs two occupants with t+2 = {t + 2} input samples (one more "
            "than U₂ has)",
            s.c,
            w4,
            "match",
            "eq. (1) for the joint laws of (x₀, U) with four samples; equal to 2.02 at 3 significant digits: "
            "where the printed c comes from (ERRATA 11)",
        )
    )
    report.add(
        Row(
            "norm-N2",
            "‖N₂‖₂ of the example (eq. (10); not printed: printed = the second method)",
            f"{float(np.linalg.norm(lm.stacked_matrix(s.a, t)[1], 2)):.10g}",
            f"{n2:.10g}",
            "check",
            "privnoise's Toeplitz matrix has the same largest singular value",
            "dense matrix: largest singular value of N₂ = [[0,0,0],[1,0,0],[0.9,1,0]] written out",
        )
    )

    u1, u2 = s.inputs(1, t + 1), s.inputs(2, t + 1)
    designs: list[StatisticalInputNoise] = []
    for d in s.deltas:
        noise = statistical_input_noise(system, horizon=t, c=s.c, delta=d, x0_public=x0)
        designs.append(noise)
        printed = PRINTED_SIGMA[d]
        report.add(
            Row(
                f"sigma-delta-{d:g}",
                f"σ of Theorem III.5 for δ = {d:g} (Section IV)",
                printed,
                noise.sigma,
                "erratum",
                f"c‖N₂‖₂/(√2δ) = {noise.sigma:.6g} is what (15) certifies (ERRATA 11)",
            )
        )
        report.add(
            Row(
                f"printed-sigma-equals-{d:g}",
                f"the printed σ for δ = {d:g} equals 0.9‖N₂‖₂/δ",
                printed,
                0.9 * n2 / d,
                "match",
                "0.9 = a, not c/√2 = 1.428; the printed σ is not Theorem III.5's",
            )
        )
        tv = total_variation(system, noise, (x0, u1), (x0, u2))
        mc, se = lm.total_variation_by_monte_carlo(
            *(lm.output_law_by_hand(s, k, noise.sigma) for k in (1, 2)), draws=s.mc_draws, seed=s.mc_seed
        )
        monte_carlo = (
            f"Monte Carlo: E_P[(1 − q/p)⁺] over {s.mc_draws} draws of scipy.stats.multivariate_normal (seed "
            f"{s.mc_seed}) of the output laws written out"
        )
        report.add(
            Row(
                f"tv-certified-{d:g}",
                f"exact TV of the outputs, one vs two occupants, certified σ, δ = {d:g}",
                d,
                tv,
                "check",
                "TV ≤ δ: the certified design meets its target",
                f"{monte_carlo}: {mc:.6g} ± {se:.2g}",
            )
        )
        weak = dataclasses.replace(noise, sigma=printed)
        tv_p = total_variation(system, weak, (x0, u1), (x0, u2))
        mc_p, se_p = lm.total_variation_by_monte_carlo(
            *(lm.output_law_by_hand(s, k, printed) for k in (1, 2)), draws=s.mc_draws, seed=s.mc_seed
        )
        report.add(
            Row(
                f"tv-printed-{d:g}",
                f"exact TV with the printed σ = {printed}, δ = {d:g}",
                d,
                tv_p,
                "check",
                "TV ≤ δ still holds for this pair: Theorem III.5 is conservative (ERRATA 11)",
                f"{monte_carlo}: {mc_p:.6g} ± {se_p:.2g}",
            )
        )
        report.add(
            Row(
                f"tv-mc-{d:g}",
                f"Monte Carlo TV (certified σ, δ = {d:g}) against the exact TV (printed = the second method)",
                mc,
                tv,
                "check",
                f"privnoise's exact TV within the Monte Carlo error (standard error {se:.2g})",
                f"{monte_carlo}; tolerance 3 standard errors",
            )
        )
    _lemma_theorem_rows(report, s, designs[0])
    if output is not None:
        directory = Path(output)
        directory.mkdir(parents=True, exist_ok=True)
        if figures:
            for i, noise in enumerate(designs, start=1):
                report.figures.append(_figure(directory, s, noise, i))
        report.write(directory)
    return report
