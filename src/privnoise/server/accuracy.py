"""The accuracy every DP answer of the server states: a confidence interval (or a rank accuracy, for quantiles)
at :data:`LEVEL`, from the law of the noise, through the library's accuracy code
(:mod:`privnoise.planning.accuracy`, :mod:`privnoise.planning.plan`).

It describes the **noise only** (:data:`~privnoise.results.NOISE_ONLY`): with the stated probability over
the noise, the interval covers the exact answer on the stored (clamped) records that the noise was added to. It
says nothing of sampling error, nor of what clamping removed.

The law of a hardened component: its value is rounded to the grid Λ and grid noise is added, whose tail is no
heavier than that of the continuous noise rounded to the grid (for Laplace-type noise the discrete tail
q^m/(1 + q) is at most the rounded continuous tail q^{m − 1/2}/2, by the AM–GM inequality); so the error is
within the continuous law's radius plus Λ (two roundings of at most Λ/2), which is what a
:class:`~privnoise.planning.accuracy.NoiseLaw` with grid 2Λ states. The law comes from the noise family itself: a
registered family's own (:meth:`privnoise.dp.families.NoiseFamily.law`, handed in by the policy), else the one the
noise's privacy profile states (:meth:`~privnoise.dp.privacy_profiles.PrivacyProfile.error_law`: Laplace or
Gaussian at the largest coordinate scale for the built-in families, a family's own law for its own profile); a
family that states none (cos² Fisher noise, the discrete Gaussian, vector ℓ2 or multi-user Laplace, a custom noise
without a profile) has no interval here: the answer says so.

Per kind: ``count``, ``sum``, ``linear``, ``identity``, ``histogram`` and group-by counts and sums: value ± r (per
coordinate, not simultaneous), cut to the range the value can take. ``mean`` (also per group) and
``weighted_mean``: the Fieller-type set of :func:`~privnoise.planning.accuracy.ratio_interval` (exact coverage).
``variance``: :func:`~privnoise.planning.accuracy.variance_interval` (conservative) for S₂/N − (S₁/N)², scaled to
the server's sample variance by N/(N − 1) at the ends of the count's interval. ``quantile``: the exponential
mechanism's rank radius (:func:`~privnoise.planning.accuracy.exponential_rank_radius`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..dp.profile import NoProfile, profile_of
from ..exceptions import InvalidParameterError
from ..mechanisms.error_laws import ErrorLaw
from ..mechanisms.hardening import HardenedMechanism
from ..planning.accuracy import NoiseLaw, ratio_interval, variance_interval
from ..planning.estimates import rank_radius, vector_interval
from ..results import NOISE_ONLY, RANK

__all__ = ["LEVEL", "Accuracy", "accuracy_of", "law_of", "rank_accuracy", "stated_accuracy"]

#: The level of every stated interval.
LEVEL = 0.95
#: noisy component values → the accuracy fields of the answer's :class:`~privnoise.Release`: ``interval``
#: (level ↦ (low, high, coverage)), or ``radius`` (level ↦ rank radius) with its ``meaning``, or only a
#: ``meaning`` saying why none is stated.
Accuracy = Callable[[list[Any]], dict[str, Any]]


def _profile_law(inner: Any) -> ErrorLaw | None:
    """The law the noise's privacy profile states (None without one)."""
    try:
        profile = profile_of(inner)
    except Exception:  # noqa: BLE001 - custom noise may have no profile at all
        return None
    return None if isinstance(profile, NoProfile) else profile.error_law()


def law_of(noise: HardenedMechanism, error: Callable[[Any], ErrorLaw | None] | None = None) -> NoiseLaw | None:
    """The error law of a hardened component (module docstring), None without an (ε, δ) profile.

    ``error``: noise ↦ its law, a registered family's own (:attr:`~.mechanisms.PolicyNoise.law`); by default the
    law the noise's privacy profile states.
    """
    try:
        law = (error or _profile_law)(noise.mechanism)
    except InvalidParameterError:  # a scale no law can have (infinite): no interval stated
        return None
    return None if law is None else NoiseLaw(law, 2.0 * noise.grid)


def _json(x: Any) -> Any:
    return np.asarray(x, dtype=float).tolist()


def stated_accuracy(release: Any) -> dict[str, Any]:
    """The ``accuracy`` object of an answer, at :data:`LEVEL`, from its release's ``interval``, ``radius`` and
    ``meaning`` (a :class:`~privnoise.Release`, or the fields an :data:`Accuracy` gives, as a dict)."""
    fields = release if isinstance(release, dict) else {"interval": release.interval, "radius": release.radius,
                                                         "meaning": release.meaning}
    interval, radius = fields.get("interval"), fields.get("radius")
    if interval is not None:
        low, high, coverage = interval(LEVEL)
        return {"level": LEVEL, "low": _json(low), "high": _json(high), "coverage": _json(coverage),
                "meaning": fields.get("meaning", NOISE_ONLY)}
    if radius is not None:
        return {"level": LEVEL, "rank_radius": radius(LEVEL), "meaning": fields["meaning"]}
    return {"level": LEVEL, "available": False, "meaning": fields["meaning"]}


def _unavailable(reason: str) -> Accuracy:
    return lambda noisy: {"meaning": reason}


def rank_accuracy(epsilon: float, sensitivities: list[float], candidates: int) -> Accuracy:
    """The rank radius of each quantile level (``epsilon`` each)."""
    radii = [rank_radius(epsilon, s, candidates) for s in sensitivities]

    def radius(level: float) -> float | list[float]:
        shown = [r(level) for r in radii]
        return shown[0] if len(shown) == 1 else shown

    return lambda noisy: {"radius": radius, "meaning": RANK}


def accuracy_of(kind: str, laws: list[NoiseLaw | None], bounds: tuple[float, float] | None,
                *, low: float | None = None, high: float | None = None) -> Accuracy:
    """The accuracy of an answer of ``kind`` from its components' laws (in the planner's component order).

    ``bounds``: the declared range of a mean's or variance's column; ``low``/``high``: the range a sum or
    count can take (None: unbounded).
    """
    if any(law is None for law in laws):
        return _unavailable("no interval: this policy's noise has no (ε, δ) law to state one from")
    first = laws[0]
    assert first is not None
    if kind in ("mean", "weighted_mean"):
        assert bounds is not None and laws[1] is not None
        second = laws[1]
        lo, hi = bounds
        centre, half = (lo + hi) / 2.0, (hi - lo) / 2.0

        def ratio(noisy: list[Any]) -> dict[str, Any]:
            s, n = np.asarray(noisy[0], dtype=float), np.asarray(noisy[1], dtype=float)
            scalar = np.ndim(noisy[0]) == 0

            def interval(level: float) -> tuple[Any, Any, Any]:
                if kind == "mean":  # the sum is already centred (Σ(x − c), the planner): the library's ratio as is
                    a, b = ratio_interval(s, n, first, second, level, half_range=half)
                else:  # Σwx: Ŝ − cN̂ estimates Σw(x − c) with error W₁ − cW₂; the library's test uses the law of
                    # W₁ − mW₂ at the ratio m, so the centred ratio m − c is tested with the offset c.
                    a, b = ratio_interval(s - centre * n, n, first, second, level, half_range=half, offset=centre)
                return centre + (a[0] if scalar else a), centre + (b[0] if scalar else b), level

            return {"interval": interval}

        return ratio
    if kind == "variance":
        assert bounds is not None and all(law is not None for law in laws)
        half = (bounds[1] - bounds[0]) / 2.0
        s1_law, s2_law, n_law = laws  # the planner's order: sum, sum of squares, count

        def variance(noisy: list[Any]) -> dict[str, Any]:
            s1, s2, n = (float(v) for v in noisy)

            def interval(level: float) -> tuple[Any, Any, Any]:
                a, b = variance_interval(n, s1, s2, (n_law, s1_law, s2_law), level,  # type: ignore[arg-type]
                                         half_range=half)
                r, _ = n_law.radius(1.0 - (1.0 - level) / 3.0)  # type: ignore[union-attr]
                n_low, n_high = n - r, n + r
                if n_low > 1.0:  # sample variance = population variance · N/(N − 1), decreasing in N
                    a, b = a * n_high / (n_high - 1.0), b * n_low / (n_low - 1.0)
                else:
                    a, b = 0.0, half * half
                return min(a, half * half), min(b, half * half), level

            return {"interval": interval}

        return variance

    def plain(noisy: list[Any]) -> dict[str, Any]:
        return {"interval": vector_interval(np.asarray(noisy[0], dtype=float), first, low=low, high=high)}

    return plain
