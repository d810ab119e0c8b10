"""The owner's figures, drawn with matplotlib and inlined in the page as SVG that a strict CSP allows.

* :func:`tradeoff_svg`: the privacy–quality trade-off of a Fisher policy (Farokhi & Sandberg): for one release,
  the per-record error floor √(1/𝓘_ii) (eq. 7) against the RMS noise √Q = √E w², for the optimal unbounded noise
  (Gaussian, Problem 4), the optimal bounded noise (cos², Problem 2) and Laplace noise at the same Q for
  reference, with the policy's own noise marked. Every point comes from the library: the noise of
  :func:`privnoise.fisher.optimal_noise` and the bound of :func:`privnoise.fisher.fisher_guarantee`, on the
  release's per-record slope (1 for a sum, a linear combination's unit coefficient and identity, 1/n for a mean).
* :func:`epsilon_spent_svg`: the ε spent on a dataset over time, per querier and all together (the exact charges of
  the ledger, refused rows charging nothing), with the dataset's global budget.
* :func:`record_bound_svg`: the per-record Cramér–Rao bound 1/Σ_k 𝓘^{(k)}_ii of a column after each release so
  far (information adds over independent releases, Proposition 1), with the column's floor.

The figures are drawn by :func:`privnoise.plotting.figure` and inlined in the page by
:func:`privnoise.plotting.inline_svg` (no inline style, which the console's Content-Security-Policy refuses).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...fisher import fisher_guarantee, optimal_noise
from ...mechanisms import Laplace, Mechanism
from ...plotting import figure, inline_svg
from ...queries import LinearQuery
from ..config import PolicySpec
from ..mechanisms import policy_noise

__all__ = ["epsilon_spent_series", "epsilon_spent_svg", "record_bound_svg", "release_slope", "tradeoff_curve",
           "tradeoff_svg"]


def release_slope(kind: str, records: int) -> float:
    """|∂ release / ∂ x_i| of one record in a Fisher release of ``kind`` (a mean divides by n)."""
    return 1.0 / records if kind == "mean" else 1.0


def tradeoff_curve(query: LinearQuery, mechanisms: Sequence[Mechanism]) -> tuple[np.ndarray, np.ndarray]:
    """(√Q, √worst-record bound) of each mechanism on ``query``, from the library's own guarantees."""
    pairs = [(m.second_moment(), fisher_guarantee(query, m).worst_record_bound) for m in mechanisms]
    q, b = np.array(pairs, dtype=float).T
    return np.sqrt(q), np.sqrt(b)


def _policy_noise(query: LinearQuery, policy: PolicySpec) -> Mechanism:
    """The policy's own optimal noise for ``query`` (a scalar Fisher policy: cos² or Gaussian)."""
    design = policy_noise(policy).design
    assert design is not None  # the owner's page draws scalar Fisher policies only
    return design(query, policy)


@functools.lru_cache(maxsize=64)
def tradeoff_svg(dataset: str, policy: PolicySpec, records: int) -> str:
    """The trade-off figure of a Fisher ``policy`` of ``dataset`` with ``records`` records (cached)."""
    slope = release_slope(policy.kind, records)
    query = LinearQuery(np.array([slope]))
    own = _policy_noise(query, policy)
    q0 = float(own.second_moment())
    qualities = q0 * np.geomspace(1 / 16, 4.0, 12)
    gaussian = [optimal_noise(query, quality_budget=float(q)) for q in qualities]
    # cos² on [−h, h] has E w² = h²(1/3 − 2/π²): the half-widths with the same second moments
    widths = np.sqrt(qualities / (1.0 / 3.0 - 2.0 / math.pi**2))
    cosine = [optimal_noise(query, support=(-float(h), float(h))) for h in widths]
    laplace = [Laplace(scale=math.sqrt(q / 2.0)) for q in qualities]
    fig = figure(figsize=(6.4, 3.8), layout="constrained")
    ax = fig.add_subplot()
    curves: list[tuple[Sequence[Any], str, dict[str, Any]]] = [
        (gaussian, "Gaussian (Problem 4, optimal unbounded)", {"color": "C0", "lw": 2.0}),
        (cosine, "cos² on [−h, h] (Problem 2, optimal bounded)", {"color": "C1", "lw": 2.0}),
        (laplace, "Laplace at the same Q (reference)", {"color": "C2", "lw": 1.4, "ls": "--"}),
    ]
    for mechanisms, label, style in curves:
        rms, floor = tradeoff_curve(query, mechanisms)
        ax.plot(rms, floor, label=label, **style)
    rms, floor = tradeoff_curve(query, [own])
    ax.plot(rms, floor, marker="*", ms=14, color="C3", ls="none", label=f"this policy ({policy.mechanism})")
    ax.set_xlim(left=0)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.set_xlabel("RMS noise of one release, √Q (lower = better quality)")
    ax.set_ylabel("per-record error floor √(1/I_ii)\n(higher = more privacy)")
    ax.set_title(f"{dataset}: {policy.kind} — privacy/quality trade-off of one release", fontsize=10)
    ax.legend(loc="upper left", fontsize=8, framealpha=0.9)
    return inline_svg(fig, f"Privacy/quality trade-off of the {policy.kind} policy of {dataset}")


def record_bound_svg(dataset: str, column: str, information: Sequence[float], floor: float | None) -> str:
    """The per-record Cramér–Rao bound of ``column`` after each release (``information``: each release's
    per-record information, in ledger order), with the column's ``floor``."""
    total = np.cumsum(np.asarray(information, dtype=float))
    released = total > 0
    steps = np.arange(1, total.size + 1)[released]
    bound = 1.0 / total[released]
    fig = figure(figsize=(6.4, 3.2), layout="constrained")
    ax = fig.add_subplot()
    if bound.size:
        ax.step(steps, bound, where="post", color="C0", lw=2.0, label="1 / Σ I_ii after each release")
        ax.set_yscale("log")
    else:
        ax.text(
            0.5,
            0.5,
            "nothing released yet: the bound is +∞",
            ha="center",
            va="center",
            transform=ax.transAxes,
        )
    if floor is not None:
        ax.axhline(floor, color="C3", ls="--", lw=1.4, label=f"floor {floor:g}")
    ax.set_xlabel("releases so far (every query of every querier on this dataset)")
    ax.set_ylabel(f"Cramér–Rao bound of a record\nof {column} (variance)")
    ax.set_title(f"{dataset}.{column}: per-record Cramér–Rao bound after the releases so far", fontsize=10)
    ax.grid(alpha=0.3, which="both")
    if bound.size or floor is not None:
        ax.legend(loc="upper right", fontsize=8, framealpha=0.9)
    return inline_svg(fig, f"Per-record Cramér–Rao bound of {dataset}.{column} after the releases so far")


def epsilon_spent_series(
    charges: Sequence[tuple[Any, str, float]],
) -> dict[str, tuple[list[Any], list[float]]]:
    """Per querier (and ``"all queriers"``), the times of its charges and the ε spent after each one (cumulative),
    from (time, querier, ε) rows in time order."""
    out: dict[str, tuple[list[Any], list[float]]] = {}
    total = 0.0
    for when, querier, epsilon in charges:
        times, spent = out.setdefault(querier, ([], []))
        times.append(when)
        spent.append((spent[-1] if spent else 0.0) + epsilon)
        total += epsilon
        every = out.setdefault("\x00all", ([], []))
        every[0].append(when)
        every[1].append(total)
    return out


def epsilon_spent_svg(dataset: str, charges: Sequence[tuple[Any, str, float]], budget: float) -> str:
    """ε spent on ``dataset`` over time, per querier and in total, with the dataset's global ``budget``
    (``charges``: (time, querier, ε) of each charged ledger row, in time order)."""
    series = epsilon_spent_series(charges)
    fig = figure(figsize=(6.4, 3.4), layout="constrained")
    ax = fig.add_subplot()
    everyone = series.pop("\x00all", None)
    for i, (querier, (times, spent)) in enumerate(sorted(series.items())):
        ax.step(times, spent, where="post", marker="o", ms=3, lw=1.6, color=f"C{i % 9}", label=querier)
    if everyone is not None:
        ax.step(everyone[0], everyone[1], where="post", color="black", lw=2.2, label="all queriers (global)")
    else:
        ax.text(0.5, 0.5, "nothing charged yet", ha="center", va="center", transform=ax.transAxes)
    ax.axhline(budget, color="C3", ls="--", lw=1.4, label=f"global budget ε = {budget:g}")
    ax.set_ylim(bottom=0)
    ax.set_xlabel("time (UTC)")
    ax.set_ylabel("ε spent (cumulative)")
    ax.set_title(f"{dataset}: ε spent over time, per querier", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", fontsize=8, framealpha=0.9)
    fig.autofmt_xdate()
    return inline_svg(fig, f"ε spent on {dataset} over time, per querier and in total")
