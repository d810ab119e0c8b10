"""Differentially private partition selection: which group keys a group-by may release when the keys are not public.

Every key present in the data gets a noisy count ĉ = round(c + W) (W Laplace of scale b, or Gaussian of standard
deviation σ; the rounding to an integer is post-processing); the key is released when ĉ ≥ T. The threshold T is the
smallest integer ≥ k + 1 for which

    δ(T) = max( S(T − ½ − k),  k · S(T − ½ − 1) )  ≤  δ,

where S is the survival function of W (S(x) = ½e^{−x/b}, or the normal tail Q(x/σ)) and k the cap on one unit's
rows. This is the exact worst case of P(some key held only by one unit is released): a unit with kept rows
c₁ + … + c_m ≤ k in m keys of its own releases one of them with probability at most Σⱼ S(T − ½ − cⱼ) (a union
bound; equality up to the product of the complements), a sum of functions convex in each cⱼ (S is convex on
[0, ∞) and T − ½ − cⱼ ≥ 0), so its maximum over the polytope is at a vertex — m keys, one with k − m + 1 rows
and m − 1 with one row — and that expression is convex in m, so m = 1 or m = k. (:func:`worst_case_release_probability`
is checked against every partition of k in the tests.)

Privacy (neighbouring databases differ by one unit). Let p ≤ δ(T) be the probability that a key of the unit's own
is released. Keys present in both databases carry the same noise law on counts shifted by the unit's rows, so with
noise calibrated to ε₀ their release is ε₀-DP; conditioning on "no key of the unit's own released" (probability
≥ 1 − p, independent of the shared keys' noise):

* M(D) vs M(D′): P[M(D) ∈ S] ≤ e^{ε₀} P[M(D′) ∈ S] + p;
* M(D′) vs M(D): P[M(D′) ∈ S] ≤ e^{ε₀} P[M(D) ∈ S]/(1 − p).

So the release is (ε₀ + log(1/(1 − δ)), δ)-DP: :func:`pure_budget_share` gives ε₀ = ε − log(1/(1 − δ)) for a
declared (ε, δ). In zero-concentrated DP the same conditioning makes the release δ-approximately ρ-zCDP (Bun &
Steinke 2016, Definition 8.1) with the ρ of the shared keys' Gaussian noise, and no shift is needed.

References
----------
.. [1] A. Korolova, K. Kenthapadi, N. Mishra, A. Ntoulas, "Releasing search queries and clicks privately", WWW 2009.
.. [2] R. Wilson, C. Zhang, W. Lam, D. Desfontaines, D. Simmons-Marengo, B. Gipson, "Differentially private SQL
   with bounded user contribution", PETS 2020.

Examples
--------
>>> laplace_partition_threshold(1.0, 1e-6, max_contributions=1)
15
>>> worst_case_release_probability(15, max_contributions=1, scale=1.0) <= 1e-6
True
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_positive, check_positive_int, check_probability
from ..exceptions import CalibrationError, InvalidParameterError

__all__ = [
    "gaussian_partition_threshold",
    "laplace_partition_threshold",
    "pure_budget_share",
    "release_probability",
    "select_partitions",
    "worst_case_release_probability",
]

_OWNER = "partition selection"


def _survival(x: float, scale: float | None, sigma: float | None) -> float:
    """P(W ≥ x) for the count noise W (Laplace of ``scale`` or Gaussian of ``sigma``)."""
    if scale is not None:
        return 1.0 - 0.5 * math.exp(x / scale) if x < 0 else 0.5 * math.exp(-x / scale)
    from scipy import stats

    assert sigma is not None
    return float(stats.norm.sf(x / sigma))


def _noise(scale: Any, sigma: Any, owner: str) -> tuple[float | None, float | None]:
    if (scale is None) == (sigma is None):
        raise InvalidParameterError(f"`{owner}` needs exactly one of `scale` (Laplace) and `sigma` (Gaussian).")
    if scale is not None:
        return check_positive(scale, "scale", owner), None
    return None, check_positive(sigma, "sigma", owner)


def release_probability(threshold: int, *, count: int, scale: float | None = None, sigma: float | None = None) -> float:
    """P(round(c + W) ≥ T) = P(W ≥ T − ½ − c): the chance that a key with ``count`` rows is released.

    Examples
    --------
    >>> round(release_probability(10, count=10, scale=1.0), 4)
    0.6967
    """
    b, s = _noise(scale, sigma, "release_probability")
    return _survival(float(threshold) - 0.5 - float(count), b, s)


def worst_case_release_probability(
    threshold: int, *, max_contributions: int, scale: float | None = None, sigma: float | None = None
) -> float:
    """δ(T): the largest probability that some key held only by one unit (≤ k rows) is released (module rule).

    Examples
    --------
    >>> round(worst_case_release_probability(20, max_contributions=4, scale=4.0), 6)
    0.019607
    """
    owner = "worst_case_release_probability"
    b, s = _noise(scale, sigma, owner)
    k = check_positive_int(max_contributions, "max_contributions", owner)
    t = float(threshold)
    if t < k + 0.5:
        raise InvalidParameterError(f"`threshold` of `{owner}` must be ≥ k + 1 = {k + 1}; got {threshold}.")
    return max(_survival(t - 0.5 - k, b, s), k * _survival(t - 1.5, b, s))


def _threshold(max_contributions: Any, delta: Any, scale: float | None, sigma: float | None, owner: str) -> int:
    """The smallest integer T ≥ k + 1 with δ(T) ≤ δ (δ(T) decreases in T): doubling, then bisection."""
    k = check_positive_int(max_contributions, "max_contributions", owner)
    dl = check_probability(delta, "delta", owner)
    if dl == 0.0:
        raise CalibrationError(f"`delta` of `{owner}` must be > 0: a key held by one unit is released with δ > 0.")

    def holds(t: int) -> bool:
        return worst_case_release_probability(t, max_contributions=k, scale=scale, sigma=sigma) <= dl

    low = k + 1
    if holds(low):
        return low
    width = 1
    while not holds(low + width):
        width *= 2
    high = low + width  # holds(high) and not holds(low)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if holds(middle) else (middle, high)
    return high


def laplace_partition_threshold(scale: float, delta: float, *, max_contributions: int) -> int:
    """The smallest integer T ≥ k + 1 with δ(T) ≤ δ for Laplace count noise of scale b (module rule).

    Examples
    --------
    >>> laplace_partition_threshold(336.0, 1e-6, max_contributions=336)
    6366
    """
    owner = "laplace_partition_threshold"
    return _threshold(max_contributions, delta, check_positive(scale, "scale", owner), None, owner)


def gaussian_partition_threshold(sigma: float, delta: float, *, max_contributions: int) -> int:
    """The smallest integer T ≥ k + 1 with δ(T) ≤ δ for Gaussian count noise of standard deviation σ.

    Examples
    --------
    >>> gaussian_partition_threshold(1.0, 1e-6, max_contributions=1)
    7
    """
    owner = "gaussian_partition_threshold"
    return _threshold(max_contributions, delta, None, check_positive(sigma, "sigma", owner), owner)


def pure_budget_share(epsilon: float, delta: float) -> float:
    """ε₀ = ε − log(1/(1 − δ)): the ε the shared keys' noise may use so that the release is (ε, δ)-DP.

    Examples
    --------
    >>> pure_budget_share(1.0, 1e-6) < 1.0
    True
    """
    owner = "pure_budget_share"
    eps = check_positive(epsilon, "epsilon", owner)
    dl = check_probability(delta, "delta", owner)
    share = eps + math.log1p(-dl)
    if share <= 0:
        raise CalibrationError(f"`epsilon` of `{owner}` must exceed log(1/(1 − δ)) = {-math.log1p(-dl):.3g}.")
    return math.nextafter(share, 0.0)


def select_partitions(noisy_counts: ArrayLike, threshold: int) -> NDArray[np.bool_]:
    """The keys to release: noisy count ≥ T (the counts are already noised and rounded).

    Examples
    --------
    >>> select_partitions([3.0, 15.0, 14.0], 15).tolist()
    [False, True, False]
    """
    counts = np.asarray(noisy_counts, dtype=float)
    if isinstance(threshold, bool) or not isinstance(threshold, int | np.integer):
        raise InvalidParameterError(f"`threshold` of `select_partitions` must be an integer; got {threshold!r}.")
    return counts >= threshold
