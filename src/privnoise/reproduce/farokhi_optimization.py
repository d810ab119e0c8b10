"""Reproduction of Farokhi, "Privacy-preserving constrained quadratic optimization with Fisher information".

Rows (see :class:`~privnoise.reproduce.Row`): Theorem 1 (Tr 𝓘 = n²/ε, E‖w‖² = ε, a Laplace competitor), the
Proposition 1 information from the iterates (G ⊗ J against the matrix A of (6) built directly) and its printed
constant, the Proposition 2 counterexample (errata 12), the Section III cost expansion (errata 13), and Figure 1:
E f(x[100]) against ε by Monte Carlo beside its closed form, min f, and 1/Tr 𝓘 = ε/n². Figure 1 is drawn on the
default dataset (scikit-learn's diabetes data) and, when ``adult_file`` is given, on the paper's Adult data. The
paper prints no numbers for Figure 1; in those ``check`` rows the *printed* column holds the second method.

Examples
--------
>>> from privnoise.reproduce import farokhi_optimization
>>> report = farokhi_optimization.build_report(None, figures=False)      # doctest: +SKIP
>>> report.row("prop2-counterexample").status                            # doctest: +SKIP
'erratum'
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .. import optimization as po
from .._validation import as_finite_array
from ..exceptions import DimensionError
from ..mechanisms import Laplace
from ..random import default_rng
from ._report import Report, Row, second_method

__all__ = [
    "EPSILONS",
    "SOURCE",
    "build_report",
    "expected_objective_by_moments",
    "printed_expansion",
    "ridge_minimum",
]

SOURCE = (
    'F. Farokhi, "Privacy-preserving constrained quadratic optimization with Fisher information" '
    "(Sections II–III, Propositions 1–2, Theorem 1, Figure 1)."
)

EPSILONS = np.logspace(-3, 1, 9)
"""The ε grid of Figure 1."""

ITERATIONS = 100
REPLICAS = 400
RIDGE = 0.5


def printed_expansion(features: ArrayLike, labels: ArrayLike, *, ridge: float = 0.5) -> tuple[Any, Any]:
    """Section III's printed Q and q, with inner products ũᵀũ (so Q is a multiple of I; errata 13).

    Kept only to show the printed expansion failing; the correct program is
    :func:`privnoise.optimization.regression_problem` (outer products ũũᵀ).
    """
    u = as_finite_array(features, "features", "printed_expansion", ndim=2)
    z = as_finite_array(labels, "labels", "printed_expansion", ndim=1)
    if u.shape[0] != z.size or z.size == 0:
        raise DimensionError(
            "`features` and `labels` of `printed_expansion` must have the same number (≥ 1) of records; got "
            f"{u.shape[0]} and {z.size}."
        )
    ut = np.hstack([u, np.ones((z.size, 1))])
    n = ut.shape[1]
    q_mat = (2.0 * ridge + 2.0 / z.size * float(np.sum(ut * ut))) * np.eye(n)
    q_vec = -(2.0 / z.size) * (ut.T @ z)
    return q_mat, q_vec


@second_method
def ridge_minimum(features: ArrayLike, labels: ArrayLike, *, ridge: float) -> float:
    """min over x of (1/N)Σ(ũᵀx − z)² + ρ‖x‖², ũ = [u; 1], by least squares on the stacked system (a second method).

    The cost of Section III is minimised as the least-squares problem [Ũ/√N; √ρ I]x ≈ [z/√N; 0], without forming
    Q or q, and evaluated term by term at the solution.
    """
    u, z = np.asarray(features, dtype=float), np.asarray(labels, dtype=float)
    ut = np.hstack([u, np.ones((z.size, 1))])
    n = ut.shape[1]
    stacked = np.vstack([ut / math.sqrt(z.size), math.sqrt(ridge) * np.eye(n)])
    target = np.concatenate([z / math.sqrt(z.size), np.zeros(n)])
    x = np.linalg.lstsq(stacked, target, rcond=None)[0]
    return float(np.mean((ut @ x - z) ** 2) + ridge * x @ x)


@second_method
def expected_objective_by_moments(
    features: ArrayLike, labels: ArrayLike, *, ridge: float, noise_variance: float, iterations: int
) -> float:
    """E f(x[T]) of the noisy descent (3) from x[0] = 0 with α = 1/λ_max(Q), by propagating the iterates' mean
    and covariance (a second method, Farokhi, Section III and eq. (3)).

    With Q = 2ρI + (2/N)ŨᵀŨ and q = −(2/N)Ũᵀz (the corrected expansion), x[k+1] = Mx[k] − αq − αw[k] with
    M = I − αQ and w[k] ~ N(0, (ε/n)I), so the mean obeys m ← Mm − αq and the covariance P ← MPMᵀ + α²(ε/n)I;
    then E f = f(m) + ½Tr(QP) for f(x) = ½xᵀQx + qᵀx + ‖z‖²/N.
    """
    u, z = np.asarray(features, dtype=float), np.asarray(labels, dtype=float)
    ut = np.hstack([u, np.ones((z.size, 1))])
    n = ut.shape[1]
    q_mat = 2.0 * ridge * np.eye(n) + (2.0 / z.size) * (ut.T @ ut)
    q_vec = -(2.0 / z.size) * (ut.T @ z)
    alpha = 1.0 / float(np.linalg.eigvalsh(q_mat)[-1])
    m_mat = np.eye(n) - alpha * q_mat
    mean, cov = np.zeros(n), np.zeros((n, n))
    for _ in range(iterations):
        mean = m_mat @ mean - alpha * q_vec
        cov = m_mat @ cov @ m_mat.T + alpha**2 * noise_variance / n * np.eye(n)
    return float(0.5 * mean @ q_mat @ mean + q_vec @ mean + z @ z / z.size + 0.5 * np.trace(q_mat @ cov))


def _figure1(report: Report, data: po.RegressionData, seed: int) -> dict[str, np.ndarray | float]:
    prob = po.regression_problem(data.features, data.labels, ridge=RIDGE)
    n = prob.dim
    opt = prob.solve().value
    mc = np.array(
        [
            po.final_objectives(
                prob, noise_variance=e, iterations=ITERATIONS, replicas=REPLICAS, rng=seed + i
            ).mean()
            for i, e in enumerate(EPSILONS)
        ]
    )
    exact = np.array(
        [po.expected_final_objective(prob, noise_variance=e, iterations=ITERATIONS) for e in EPSILONS]
    )
    moments = np.array(
        [
            expected_objective_by_moments(
                data.features, data.labels, ridge=RIDGE, noise_variance=e, iterations=ITERATIONS
            )
            for e in EPSILONS
        ]
    )
    least_squares = ridge_minimum(data.features, data.labels, ridge=RIDGE)
    tag = data.name
    noiseless = po.private_gradient_descent(prob, noise_variance=0.0, iterations=ITERATIONS).objective
    report.add(
        Row(f"fig1-{tag}-optimum", f"min f on {tag} (N = {data.records}, n = {n}): dashed line of Fig. 1 [top]",
            least_squares, noiseless, "check", "printed: second method; computed: f(x[100]) of noiseless descent (3)",
            "dense matrix: least squares on [Ũ/√N; √ρI]x ≈ [z/√N; 0], the cost evaluated term by term")
    )  # fmt: skip
    for e, m, x, closed in zip(EPSILONS, mc, moments, exact, strict=True):
        if e in (EPSILONS[0], EPSILONS[4], EPSILONS[-1]):
            report.add(
                Row(f"fig1-{tag}-Ef-eps{e:g}", f"E f(x[100]) at ε = {e:g} on {tag} (Fig. 1 [top])", float(x),
                    float(m), "check", f"printed: second method; computed: mean of {REPLICAS} runs of privnoise's "
                    f"descent (its closed form f(x̄) + ½Σαₖ²Tr(ΦₖᵀQΦₖ)ε/n gives {closed:.10g})",
                    "dense matrix: the iterates' mean and covariance propagated through x ← (I − αQ)x − αq − αw; "
                    f"tolerance 2 % (Monte Carlo over {REPLICAS} runs)")
            )  # fmt: skip
    slope = (moments - least_squares) / EPSILONS
    report.add(
        Row(f"fig1-{tag}-gap-linear", f"E f(x[100]) − min f ∝ ε on {tag} (spread of gap/ε over the grid)",
            float(slope[0]), float(slope[-1]), "check", "gap/ε at the smallest (printed) and largest (computed) ε",
            "dense matrix: propagated mean and covariance of the iterates, minus the least-squares minimum")
    )  # fmt: skip
    report.add(
        Row(f"fig1-{tag}-inverse-trace", f"1/Tr 𝓘 at ε = 1 on {tag} (Fig. 1 [bottom]: ε/n²)", 1.0 / n**2,
            1.0 / float(np.trace(po.optimal_noise(1.0, n).fisher_information())), "match", "Theorem 1 noise")
    )  # fmt: skip
    return {"mc": mc, "exact": exact, "optimum": opt, "n": float(n)}


def _plot(path: Path, curves: dict[str, dict[str, np.ndarray | float]]) -> None:
    from ..plotting import figure, save

    fig = figure(figsize=(7, 7), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True)
    for (name, c), colour in zip(curves.items(), ("C0", "C1"), strict=False):
        top.plot(EPSILONS, c["mc"], "o-", color=colour, label=f"{name}: E f(x[100]) (Monte Carlo)")
        top.plot(EPSILONS, c["exact"], ":", color="k", lw=1)
        top.axhline(float(c["optimum"]), color=colour, ls="--", label=f"{name}: min f")
        bottom.plot(
            EPSILONS, EPSILONS / float(c["n"]) ** 2, "-", color=colour, label=f"{name}: 1/Tr I = ε/n²"
        )
    top.set_xscale("log")
    top.set_ylabel("E f(x[100])")
    top.set_title("Figure 1: privacy–utility trade-off of noisy gradient descent (dotted: closed form)")
    top.legend(fontsize=8)
    top.grid(alpha=0.3)
    bottom.set_yscale("log")
    bottom.set_xlabel("ε = E‖w‖² (utility budget)")
    bottom.set_ylabel("1/Tr I (privacy)")
    bottom.legend(fontsize=8)
    bottom.grid(alpha=0.3)
    path.parent.mkdir(parents=True, exist_ok=True)
    save(fig, path, dpi=100)


def build_report(output: Path | None, *, figures: bool = True, adult_file: Path | None = None) -> Report:
    """Compute every row (and, with ``output`` and ``figures``, write report.md and figure1.png there)."""
    report = Report(title="Farokhi — private constrained quadratic optimisation", source=SOURCE)
    gen = default_rng(2020)

    # Theorem 1
    n, eps = 11, 0.1
    g = po.optimal_noise(eps, n)
    report.add(Row("thm1-fisher-trace", "Theorem 1: Tr 𝓘 = n²/ε (n = 11, ε = 0.1)", n * n / eps,
                   float(np.trace(g.fisher_information())), "match", "trace of the Gaussian's precision matrix"))  # fmt: skip
    w = g.sample(200_000, rng=gen)
    report.add(Row("thm1-variance", "Theorem 1: E‖w‖² = ε", eps, float(np.mean(np.sum(w * w, axis=1))), "match",
                   "Monte Carlo, 2·10⁵ draws"))  # fmt: skip
    lap = Laplace(scale=math.sqrt(eps / n / 2))
    report.add(Row("thm1-laplace-competitor", "Theorem 1: a Laplace noise with the same E‖w‖² has more information",
                   2 * n * n / eps, n * float(lap.fisher_information()), "check",
                   "printed: 2n²/ε > n²/ε in closed form; computed: Laplace per coordinate, Tr 𝓘 = nJ",
                   "closed form: Laplace(b) has J = 1/b², and b² = ε/(2n) gives Tr 𝓘 = n/b² = 2n²/ε"))  # fmt: skip

    # Proposition 1 from the iterates of a small run
    prob = po.QuadraticProgram(np.array([[1.0, 0.3], [0.3, 0.6]]), np.array([0.4, -0.2]))
    res = po.private_gradient_descent(
        prob, noise_variance=0.5, iterations=12, step=0.3, x0=[2.0, -2.0], rng=5
    )
    j = np.eye(2) / (0.5 / 2)  # the noise N(0, (ε/n)I) has information (n/ε)I
    # A of (6), stacked from the iterates here: block row k is −[x[k]ᵀ 1] ⊗ I, so A·vec(Q, q) = −(Qx[k] + q)
    a = np.vstack([-np.kron(np.append(xk, 1.0)[None, :], np.eye(2)) for xk in res.iterates[:-1]])
    direct = float(np.trace(np.linalg.inv(a.T @ np.kron(np.eye(len(res.iterates) - 1), j) @ a)))
    report.add(Row("prop1-crb-from-iterates", "Proposition 1: Tr 𝓘_θ⁻¹ from the iterates (A of (6); printed = the "
                   "direct AᵀJA, which the paper does not print: N3)", direct,
                   res.guarantee.cramer_rao_bound, "check", "direct AᵀJA vs privnoise's Tr(G⁻¹)Tr(J⁻¹)",
                   "dense matrix: A of (6) stacked from the iterates in the report, J = (n/ε)I, Tr((Aᵀ(I ⊗ J)A)⁻¹)"))  # fmt: skip
    theta = np.concatenate([prob.Q.reshape(-1, order="F"), prob.q])
    y = a @ theta + gen.normal(scale=0.5, size=(20_000, a.shape[0]))  # σ² = ε/n = 0.25
    est = np.linalg.lstsq(a, y.T, rcond=None)[0].T
    report.add(
        Row(
            "prop1-crb-monte-carlo",
            "Proposition 1: the CRB is attained by least squares on (6)",
            float(np.mean(np.sum((est - theta) ** 2, axis=1))),
            res.guarantee.cramer_rao_bound,
            "check",
            "printed: Monte Carlo MSE of the unbiased least-squares estimate of (Q, q), 2·10⁴ runs",
            "Monte Carlo: numpy normal noise (σ² = 0.25, seed 2020) on A of (6), least squares; tolerance 3 %",
        )
    )
    report.add(Row("prop1-bound-below-crb", "Proposition 1 with c = (n²+n)²/Σ(1+‖x[k]‖²) is below the CRB "
                   "(printed = the CRB by the second method, computed = privnoise's Proposition 1 bound)",
                   direct, res.guarantee.proposition1_bound, "check",
                   "Tr M⁻¹ ≥ d²/Tr M (d = n² + n); also checked by Monte Carlo in the tests",
                   "dense matrix: Tr((Aᵀ(I ⊗ J)A)⁻¹) from A of (6) stacked in the report"))  # fmt: skip
    # the printed constant uses λ_max(Σ AₖᵀAₖ) in place of Tr G: on a well-spread design it exceeds the CRB
    xs = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.0], [0.0, -1.0], [0.0, 0.0]])
    gi = po.iterates_guarantee(xs, po.optimal_noise(0.5, 2))
    printed = 36.0 / (float(np.linalg.eigvalsh(gi.gram)[-1]) * gi.fisher_trace)
    report.add(Row("prop1-printed-constant", "Proposition 1 proof: (n²+n)²/(λ_max(ΣAₖᵀAₖ)·Tr 𝓘) ≤ E‖θ − θ̂‖²",
                   printed, gi.cramer_rao_bound, "erratum",
                   "the printed bound exceeds the Cramér–Rao bound Tr(G⁻¹)Tr(J⁻¹) (attained by least squares); "
                   "Tr(ΣAₖᵀAₖ·J) = Tr G·Tr J, not ≤ λ_max·Tr J"))  # fmt: skip

    # Proposition 2: ε = 0, a far start
    p2 = po.QuadraticProgram(np.diag([1.0, 1.5]), np.array([-1.0, 1.0]))
    far = po.private_gradient_descent(p2, noise_variance=0.0, iterations=100, x0=[1e3, -1e3],
                                      step=po.InverseTimeStep(strong_convexity=1.0))  # fmt: skip
    report.add(Row("prop2-counterexample", "Proposition 2: E f(x[T]) − min f ≤ 17(1+log T)/(λT)·Tr E{wwᵀ} at ε = 0",
                   0.0, far.objective_gap, "erratum",
                   "errata 12: no noise, x[0] = (10³, −10³), α_k = 1/(λ(k+1)), T = 100: the gap is positive; no bound in "
                   "the noise alone holds: for (3) E f(x[T]) = f(x̄[T]) + ½Σαₖ²Tr(ΦₖᵀQΦₖ)ε/n, x̄ the noiseless iterate"))  # fmt: skip

    # Section III expansion (errata 13) and Figure 1
    data = po.load_diabetes()
    x = gen.standard_normal(data.features.shape[1] + 1)
    ut = np.hstack([data.features, np.ones((data.records, 1))])
    direct_cost = float(np.mean((ut @ x - data.labels) ** 2) + 0.5 * x @ x)
    qp, qvp = printed_expansion(data.features, data.labels)
    report.add(Row("sec3-expansion-printed", "Section III expansion with inner products [u;1]ᵀ[u;1]", direct_cost,
                   float(0.5 * x @ qp @ x + qvp @ x + np.mean(data.labels**2)), "erratum",
                   "errata 13: the quadratic term needs outer products, "
                   "Q = I + (2/N)Σ[u;1][u;1]ᵀ"))  # fmt: skip
    corrected = po.regression_problem(data.features, data.labels, ridge=RIDGE)
    report.add(Row("sec3-expansion-corrected", "Section III expansion corrected to outer products [u;1][u;1]ᵀ "
                   "(printed = the cost f(x) as defined, computed = the corrected expansion)", direct_cost,
                   float(corrected.objective(x)), "check", "errata 13: outer products give the cost",
                   "direct evaluation: (1/N)Σ(xᵀũ − z)² + ½‖x‖² term by term with numpy"))  # fmt: skip
    curves = {"diabetes": _figure1(report, data, seed=100)}
    if adult_file is not None:
        curves["adult"] = _figure1(report, po.load_adult(adult_file), seed=200)
    report.notes.append(
        "Figure 1 uses the corrected cost (ridge ½), noise N(0, (ε/n)I), α = 1/λ_max(Q), x[0] = 0, 100 iterations; "
        "the default dataset is scikit-learn's diabetes data (features/0.2, label/400, declared bounds)."
    )
    report.notes.append(
        "Proposition 2's bound is never reported as a guarantee; results carry the measured gap."
    )
    if output is not None:
        if figures:
            _plot(output / "figure1.png", curves)
            report.figures.append(("figure1.png", "E f(x[100]) and 1/Tr 𝓘 against ε (Figure 1)"))
        report.write(output)
    return report
