"""Empirical privacy audit: a statistically valid lower bound on the ε a mechanism really has.

For neighbouring inputs x and x' an (ε, δ)-DP release M satisfies, for every event E,
P[M(x) ∈ E] ≤ e^ε P[M(x') ∈ E] + δ, hence ε ≥ log((P[M(x) ∈ E] − δ)/P[M(x') ∈ E]). :func:`audit`

1. draws ``samples`` outputs from each input and splits each set into two halves;
2. on the first halves, builds candidate events from a quantile histogram — threshold events {y < t}, {y ≥ t}
   and likelihood-ratio events (unions of the bins with the largest empirical ratio) — in both directions, and
   picks the one with the largest Clopper–Pearson lower bound;
3. on the held-out second halves, counts the chosen event and reports
   ε_lb = log((p_lo − δ)/q_hi), p_lo the lower and q_hi the upper one-sided Clopper–Pearson bounds, each at level
   1 − (1 − confidence)/2.

Because the event is fixed before the held-out samples are looked at, ε_lb ≤ the true ε with probability at least
``confidence`` (SECURITY.md, requirement 4). A mechanism whose claim is below ε_lb is caught. Vector outputs are
projected onto the direction x' − x (where the likelihood ratio of Laplace and Gaussian noise lives).

References
----------
.. [1] M. Jagielski, J. Ullman, A. Oprea, "Auditing differentially private machine learning", NeurIPS 2020.
.. [2] Z. Ding, Y. Wang, G. Wang, D. Zhang, D. Kifer, "Detecting violations of differential privacy", CCS 2018.
.. [3] C. J. Clopper, E. S. Pearson, "The use of confidence or fiducial limits illustrated in the case of the
   binomial", Biometrika 1934.

Examples
--------
>>> from privnoise.mechanisms import Laplace
>>> report = audit(Laplace(scale=0.5), 0.0, 1.0, samples=200_000, rng=3)
>>> 1.7 < report.epsilon_lower_bound <= 2.0          # Laplace of scale 0.5 at Δ = 1 has ε = 2
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from .._validation import as_finite_array, check_in_range, check_positive_int, check_probability
from ..exceptions import DimensionError, InvalidParameterError
from ..mechanisms import Noise
from ..random import RNGLike, default_rng

__all__ = ["AuditReport", "audit", "clopper_pearson"]

_OWNER = "audit"


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditReport:
    """Result of :func:`audit`.

    Attributes
    ----------
    epsilon_lower_bound : float
        ε_lb ≥ 0: with probability ≥ ``confidence`` the mechanism is not (ε, δ)-DP for any ε < ε_lb.
    event : str
        The event E chosen on the selection half.
    direction : str
        "x vs x'" when E is likelier under x, "x' vs x" otherwise.
    count, count_neighbour : int
        Held-out counts of E under the likelier input (p) and under the other one (q).
    held_out : int
        Held-out samples per input.
    p_lower, q_upper : float
        Clopper–Pearson bounds on the two probabilities.
    selection_epsilon : float
        The bound the event scored on the selection half (not valid by itself; for diagnostics).
    confidence, delta : float
        Confidence level and the δ allowed for.
    claimed_epsilon : float or None
        The claim under audit, if given.
    """

    epsilon_lower_bound: float
    event: str
    direction: str
    count: int
    count_neighbour: int
    held_out: int
    p_lower: float
    q_upper: float
    selection_epsilon: float
    confidence: float
    delta: float
    claimed_epsilon: float | None = None

    @property
    def violates_claim(self) -> bool | None:
        """Whether the lower bound exceeds the claimed ε (None without a claim)."""
        if self.claimed_epsilon is None:
            return None
        return self.epsilon_lower_bound > self.claimed_epsilon

    def summary(self) -> str:
        claim = "" if self.claimed_epsilon is None else f" (claimed ε = {self.claimed_epsilon:.6g})"
        return (
            f"ε ≥ {self.epsilon_lower_bound:.4f} at confidence {self.confidence:g}, δ = {self.delta:g}{claim}; "
            f"event {self.event} ({self.direction}): {self.count}/{self.held_out} vs "
            f"{self.count_neighbour}/{self.held_out}"
        )


def clopper_pearson(
    count: ArrayLike, n: int, level: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """One-sided Clopper–Pearson bounds (lower, upper), each holding with probability ≥ ``level``.

    Examples
    --------
    >>> lo, hi = clopper_pearson(50, 100, 0.975)
    >>> round(float(lo), 4), round(float(hi), 4)
    (0.3983, 0.6017)
    """
    k = np.asarray(count, dtype=float)
    a = 1.0 - level
    with np.errstate(invalid="ignore"):
        lower = np.where(k > 0, stats.beta.ppf(a, np.maximum(k, 1e-300), n - k + 1), 0.0)
        upper = np.where(k < n, stats.beta.ppf(1.0 - a, k + 1, np.maximum(n - k, 1e-300)), 1.0)
    return np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)


def _outputs(
    mechanism: Any, x: NDArray[np.float64], n: int, generator: np.random.Generator, harden: bool
) -> NDArray[np.float64]:
    if isinstance(mechanism, Noise):
        batch = np.broadcast_to(x, (n,) + mechanism.shape)
        return np.asarray(mechanism.add_to(batch, rng=generator, harden=harden), dtype=float)
    if callable(mechanism):
        return np.asarray(mechanism(x, n, generator), dtype=float)
    raise InvalidParameterError(
        f"`mechanism` of `{_OWNER}` must be privnoise noise (a Mechanism, lattice or hardened noise) or a callable "
        f"(x, n, generator); got {type(mechanism).__name__}."
    )


def _score(
    kp: NDArray[np.float64], kq: NDArray[np.float64], n: int, level: float, delta: float
) -> NDArray[Any]:
    p_lo, _ = clopper_pearson(kp, n, level)
    _, q_hi = clopper_pearson(kq, n, level)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(p_lo > delta, np.log(np.maximum(p_lo - delta, 1e-300) / q_hi), 0.0)


def audit(
    mechanism: Any,
    x: ArrayLike,
    x_neighbour: ArrayLike,
    *,
    samples: int = 10**6,
    confidence: float = 0.95,
    rng: RNGLike = None,
    events: str | Sequence[tuple[float, float]] = "auto",
    delta: float = 0.0,
    bins: int = 200,
    claimed_epsilon: float | None = None,
    harden: bool = False,
) -> AuditReport:
    """Lower-bound the ε of ``mechanism`` on the neighbouring inputs ``x`` and ``x_neighbour``.

    Parameters
    ----------
    mechanism : Noise or callable
        Noise (the release is ``mechanism.add_to(x)``: x + noise for a mechanism, the lattice or hardened release
        for those), or ``f(x, n, generator)`` returning n outputs (for instance a wrapper of
        :func:`privnoise.release`).
    x, x_neighbour : float or array_like
        The true query values on two neighbouring databases.
    samples : int, default 10**6
        Outputs drawn per input (half select the event, half estimate it).
    confidence : float, default 0.95
        Probability that the reported bound is ≤ the true ε.
    rng : None, int or numpy.random.Generator
        Randomness (see :func:`privnoise.random.default_rng`).
    events : {"auto", "threshold", "likelihood-ratio"} or sequence of (low, high)
        Candidate events: thresholds and likelihood-ratio unions of histogram bins, one kind only, or the given
        half-open intervals [low, high).
    delta : float, default 0
        The δ of an (ε, δ) claim: ε_lb = log((p_lo − δ)/q_hi).
    bins : int, default 200
        Quantile bins of the selection histogram.
    claimed_epsilon : float, optional
        Recorded in the report (see :attr:`AuditReport.violates_claim`).
    harden : bool, default False
        Audit the snapped release of a continuous mechanism (what :func:`privnoise.release` publishes) instead of
        the raw floating-point sum.

    Returns
    -------
    AuditReport

    Raises
    ------
    InvalidParameterError
        For non-finite inputs, mismatched shapes, fewer than 1000 samples, or bad options.
    """
    xa = as_finite_array(x, "x", _OWNER, ndim=(0, 1))
    xb = as_finite_array(x_neighbour, "x_neighbour", _OWNER, ndim=(0, 1))
    if xa.shape != xb.shape:
        raise DimensionError(
            f"`x` and `x_neighbour` of `{_OWNER}` must have the same shape; got {xa.shape}, {xb.shape}."
        )
    n = check_positive_int(samples, "samples", _OWNER, minimum=1000)
    conf = check_in_range(confidence, "confidence", _OWNER, low=0.0, high=1.0, low_open=True, high_open=True)
    dl = check_probability(delta, "delta", _OWNER)
    nbins = check_positive_int(bins, "bins", _OWNER, minimum=2)
    if isinstance(events, str):
        if events not in ("auto", "threshold", "likelihood-ratio"):
            raise InvalidParameterError(
                f"`events` of `{_OWNER}` must be 'auto', 'threshold', 'likelihood-ratio' or intervals; got {events!r}."
            )
        intervals = None
    else:
        try:
            intervals = np.asarray(events, dtype=float).reshape(-1, 2)
        except (TypeError, ValueError):
            raise InvalidParameterError(
                f"`events` of `{_OWNER}` must be a sequence of (low, high); got {events!r}."
            ) from None
        if intervals.shape[0] == 0 or np.isnan(intervals).any() or np.any(intervals[:, 0] >= intervals[:, 1]):
            raise InvalidParameterError(
                f"`events` of `{_OWNER}` must be non-empty intervals with low < high."
            )
    if not isinstance(harden, bool):
        raise InvalidParameterError(f"`harden` of `{_OWNER}` must be True or False; got {harden!r}.")
    generator = default_rng(rng)
    level = 1.0 - (1.0 - conf) / 2.0

    ya = _outputs(mechanism, xa, n, generator, harden)
    yb = _outputs(mechanism, xb, n, generator, harden)
    if ya.shape[0] != n or yb.shape[0] != n:
        raise DimensionError(
            f"the mechanism under `{_OWNER}` returned {ya.shape[0]} outputs for {n} requested."
        )
    if ya.ndim > 1:
        direction = (xb - xa).reshape(-1)
        norm = float(np.linalg.norm(direction))
        u = direction / norm if norm > 0 else np.eye(direction.size)[0]
        ya = ya.reshape(n, -1) @ u
        yb = yb.reshape(n, -1) @ u
    half = n // 2
    sel_a, est_a = ya[:half], ya[half : 2 * half]
    sel_b, est_b = yb[:half], yb[half : 2 * half]
    m = est_a.size

    # Candidate events as boolean masks over histogram cells.
    if intervals is not None:

        def counts_of(values: NDArray[np.float64]) -> NDArray[np.float64]:
            inside = (values[None, :] >= intervals[:, :1]) & (values[None, :] < intervals[:, 1:])
            return inside.sum(axis=1).astype(float)

        masks_desc = [f"[{lo:.6g}, {hi:.6g})" for lo, hi in intervals]
        ca, cb = counts_of(sel_a), counts_of(sel_b)
        best = (-math.inf, "", 0, "")
        for direction_name, kp, kq in (("x vs x'", ca, cb), ("x' vs x", cb, ca)):
            scores = _score(kp, kq, half, level, dl)
            i = int(np.argmax(scores))
            if scores[i] > best[0]:
                best = (float(scores[i]), masks_desc[i], i, direction_name)
        score, desc, index, direction_name = best
        ea, eb = counts_of(est_a)[index], counts_of(est_b)[index]
    else:
        pooled = np.concatenate([sel_a, sel_b])
        edges = np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, nbins + 1)[1:-1]))
        cells = edges.size + 1
        ha = np.bincount(np.searchsorted(edges, sel_a, side="right"), minlength=cells).astype(float)
        hb = np.bincount(np.searchsorted(edges, sel_b, side="right"), minlength=cells).astype(float)
        masks: list[tuple[NDArray[np.bool_], str]] = []
        if events in ("auto", "threshold"):
            for j in range(1, cells):
                below = np.arange(cells) < j
                masks.append((below, f"y < {edges[j - 1]:.6g}"))
                masks.append((~below, f"y ≥ {edges[j - 1]:.6g}"))
        if events in ("auto", "likelihood-ratio"):
            for first, second, tag in ((ha, hb, "x"), (hb, ha, "x'")):
                order = np.argsort(-(first + 0.5) / (second + 0.5), kind="stable")
                for j in range(1, cells):
                    mask = np.zeros(cells, dtype=bool)
                    mask[order[:j]] = True
                    masks.append((mask, f"the {j} histogram cells most likely under {tag}"))
        stack = np.array([mk for mk, _ in masks])
        ka, kb = stack @ ha, stack @ hb
        best_score, best_i, direction_name = -math.inf, 0, "x vs x'"
        for name, kp, kq in (("x vs x'", ka, kb), ("x' vs x", kb, ka)):
            scores = _score(kp, kq, half, level, dl)
            i = int(np.argmax(scores))
            if scores[i] > best_score:
                best_score, best_i, direction_name = float(scores[i]), i, name
        score = best_score
        mask, desc = masks[best_i]
        ea = float(np.count_nonzero(mask[np.searchsorted(edges, est_a, side="right")]))
        eb = float(np.count_nonzero(mask[np.searchsorted(edges, est_b, side="right")]))
    kp, kq = (ea, eb) if direction_name == "x vs x'" else (eb, ea)
    p_lo, _ = clopper_pearson(kp, m, level)
    _, q_hi = clopper_pearson(kq, m, level)
    p_lower, q_upper = float(p_lo), float(q_hi)
    bound = math.log((p_lower - dl) / q_upper) if p_lower > dl else 0.0
    return AuditReport(
        epsilon_lower_bound=max(0.0, bound),
        event=desc,
        direction=direction_name,
        count=int(kp),
        count_neighbour=int(kq),
        held_out=m,
        p_lower=p_lower,
        q_upper=q_upper,
        selection_epsilon=max(0.0, score),
        confidence=conf,
        delta=dl,
        claimed_epsilon=None if claimed_epsilon is None else float(claimed_epsilon),
    )
