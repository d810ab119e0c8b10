"""The exponential mechanism, report-noisy-max and top-k selection, and Koufogiannis et al.'s Proposition 4.

Proposition 4 (Koufogiannis, Han & Pappas), as corrected here
-------------------------------------------------------------
Let s(u, y) be L-Lipschitz in the private data u for every output y. The mechanism Q with density
P(Qu = y | u) ∝ exp(ε s(u, y)) is **2εL**-Lipschitz private; it is εL-Lipschitz private when the normaliser
Z(u) = ∫ exp(ε s(u, y)) dy does not depend on u (a translation-invariant score s(u, y) = −‖u − y‖, which gives
the Laplace mechanism). The paper states εL in general, which is false: ∇_u log P = ε∇_u s(u, y) − ε E_{y'}[∇_u
s(u, y')] has dual norm up to 2εL, and for two outputs with s(u, 0) = u, s(u, 1) = −u the log-probability
log P(0 | u) = −log(1 + e^{−2εu}) has slope → 2ε as u → −∞ (:func:`proposition4_epsilon`, tested). In the
discrete setting of differential privacy (neighbouring databases, score sensitivity Δ), the same argument gives
ε-DP for weights exp(ε s/(2Δ)), and for exp(ε s/Δ) when the scores are monotone (adding a unit never lowers any
score and removing one never raises any), because then the normaliser moves in the same direction as every
score (McSherry & Talwar 2007, Theorem 6).

:func:`exponential_mechanism`
    Draws indices i with P(i) ∝ exp(ε uᵢ/(cΔ)) (c = 2, or 1 for monotone scores), optionally among blocks of equal
    candidates (``multiplicity``: P(block) ∝ multiplicity · weight), by inverse-cdf sampling from the
    cryptographically strong generator.
:func:`report_noisy_max`
    The index (or the k indices, best first) of the largest noisy scores: Gumbel noise of scale cΔ/ε (this *is*
    the exponential mechanism, and the top-k of one Gumbel draw is k-fold peeling at ε/k each: Durfee & Rogers 2019)
    or Laplace noise of scale cΔ/ε per round (Dwork & Roth 2014, Claim 3.9), peeled k times at ε/k.

The privacy of every one of these is pure ε-DP; the exponential mechanism is also ε-bounded-range, hence
ε²/8-zCDP (:func:`privnoise.dp.zcdp.exponential_mechanism_zcdp`).

Floating-point caveat: selection probabilities are computed in double precision (relative error ~1e-16 per
candidate), which acts like a δ of that order; the output is an index (or a grid point), so no low-order bit of a
floating-point sum is released.

References
----------
.. [1] F. McSherry, K. Talwar, "Mechanism design via differential privacy", FOCS 2007.
.. [2] D. Durfee, R. Rogers, "Practical differentially private top-k selection with pay-what-you-get
   composition", NeurIPS 2019.
.. [3] C. Dwork, A. Roth, "The algorithmic foundations of differential privacy", 2014.

Examples
--------
>>> import numpy as np
>>> idx = exponential_mechanism([0.0, 0.0, 50.0], 1.0, sensitivity=1.0, size=1000, rng=1)
>>> bool(np.mean(idx == 2) > 0.99)
True
>>> proposition4_epsilon(1.0, 1.0), proposition4_epsilon(1.0, 1.0, invariant_normaliser=True)
(2.0, 1.0)
"""

from __future__ import annotations

import math
from typing import Any, Literal, get_args

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import as_finite_array, check_positive, check_positive_int
from ..exceptions import DimensionError, InvalidParameterError
from ..random import RNGLike, default_rng

__all__ = [
    "check_noisy_max_method",
    "is_bounded_range",
    "exponential_mechanism",
    "exponential_mechanism_epsilon",
    "proposition4_epsilon",
    "report_noisy_max",
    "selection_probabilities",
    "truncated_laplace_log_density",
]

NoisyMaxMethod = Literal["exponential", "laplace"]


def proposition4_epsilon(epsilon: float, lipschitz: float, *, invariant_normaliser: bool = False) -> float:
    """The Lipschitz-privacy constant of the mechanism with density ∝ exp(ε s(u, y)), s L-Lipschitz in u.

    Koufogiannis, Han & Pappas, Proposition 4, corrected (module docstring): 2εL in general, εL when the
    normaliser ∫ exp(ε s(u, y)) dy does not depend on u.

    Examples
    --------
    >>> proposition4_epsilon(0.5, 3.0)
    3.0
    """
    owner = "proposition4_epsilon"
    eps = check_positive(epsilon, "epsilon", owner)
    lip = check_positive(lipschitz, "lipschitz", owner, allow_zero=True)
    if not isinstance(invariant_normaliser, bool):
        raise InvalidParameterError(f"`invariant_normaliser` of `{owner}` must be True or False.")
    return eps * lip * (1.0 if invariant_normaliser else 2.0)


def exponential_mechanism_epsilon(temperature: float, sensitivity: float, *, monotone: bool = False) -> float:
    """The ε of differential privacy of weights exp(t·u) for scores u of sensitivity Δ: 2tΔ, or tΔ when monotone.

    The discrete form of :func:`proposition4_epsilon` (neighbouring databases instead of a metric).

    Examples
    --------
    >>> exponential_mechanism_epsilon(0.25, 2.0), exponential_mechanism_epsilon(0.25, 2.0, monotone=True)
    (1.0, 0.5)
    """
    owner = "exponential_mechanism_epsilon"
    t = check_positive(temperature, "temperature", owner)
    d = check_positive(sensitivity, "sensitivity", owner)
    return t * d * (1.0 if monotone else 2.0)


def _temperature(epsilon: float, sensitivity: float, monotone: bool, owner: str) -> float:
    eps = check_positive(epsilon, "epsilon", owner)
    d = check_positive(sensitivity, "sensitivity", owner)
    if not isinstance(monotone, bool):
        raise InvalidParameterError(f"`monotone` of `{owner}` must be True or False; got {monotone!r}.")
    return eps / (d * (1.0 if monotone else 2.0))


def _scores(scores: ArrayLike, owner: str) -> NDArray[np.float64]:
    u = as_finite_array(scores, "scores", owner, ndim=1)
    if u.size == 0:
        raise DimensionError(f"`scores` of `{owner}` must not be empty.")
    return u


def selection_probabilities(
    scores: ArrayLike,
    epsilon: float,
    *,
    sensitivity: float,
    monotone: bool = False,
    multiplicity: ArrayLike | None = None,
) -> NDArray[np.float64]:
    """P(i) of :func:`exponential_mechanism` (normalised in log space).

    Examples
    --------
    >>> selection_probabilities([0.0, 2.0], 1.0, sensitivity=1.0).round(4).tolist()
    [0.2689, 0.7311]
    """
    from scipy.special import logsumexp

    owner = "exponential_mechanism"
    u = _scores(scores, owner)
    log_w = _temperature(epsilon, sensitivity, monotone, owner) * u  # ε uᵢ/(cΔ), c = 1 monotone, else 2
    if multiplicity is not None:
        m = as_finite_array(multiplicity, "multiplicity", owner, ndim=1)
        if m.shape != u.shape:
            raise DimensionError(f"`multiplicity` of `{owner}` must have shape {u.shape}; got {m.shape}.")
        if np.any(m < 0):
            raise InvalidParameterError(f"`multiplicity` of `{owner}` must be ≥ 0.")
        with np.errstate(divide="ignore"):
            log_w = log_w + np.log(m)
    if not np.any(np.isfinite(log_w)):
        raise InvalidParameterError(f"`multiplicity` of `{owner}` must have a positive entry.")
    return np.exp(log_w - logsumexp(log_w))


def exponential_mechanism(
    scores: ArrayLike,
    epsilon: float,
    *,
    sensitivity: float,
    monotone: bool = False,
    multiplicity: ArrayLike | None = None,
    size: int | None = None,
    rng: RNGLike = None,
) -> Any:
    """Indices drawn with P(i) ∝ multiplicityᵢ · exp(ε uᵢ/(cΔ)): ε-DP for scores of sensitivity Δ.

    Parameters
    ----------
    scores : array_like, 1-d
        The utility uᵢ of each candidate (higher is better).
    epsilon : float
        The privacy parameter ε > 0.
    sensitivity : float
        Δ: the largest change of any score when one unit is added or removed.
    monotone : bool, default False
        Scores move in one direction between neighbours (counts): c = 1 instead of 2.
    multiplicity : array_like, optional
        The number of equivalent candidates each entry stands for (a block of grid points with one score).
    size : int, optional
        Number of independent draws (None: one int).
    rng : None, int or numpy.random.Generator
        Randomness (default: the cryptographically strong generator).

    Returns
    -------
    int or numpy.ndarray of int
    """
    probabilities = selection_probabilities(
        scores, epsilon, sensitivity=sensitivity, monotone=monotone, multiplicity=multiplicity
    )
    n = 1 if size is None else check_positive_int(size, "size", "exponential_mechanism")
    generator = default_rng(rng)
    cdf = np.cumsum(probabilities)
    cdf /= cdf[-1]
    draws = np.searchsorted(cdf, generator.random(n), side="right")
    np.minimum(draws, probabilities.size - 1, out=draws)
    return int(draws[0]) if size is None else draws


def check_noisy_max_method(method: Any, owner: str) -> NoisyMaxMethod:
    """``method`` of a noisy max: "exponential" (Gumbel noise once) or "laplace" (report-noisy-max, peeled)."""
    if method not in get_args(NoisyMaxMethod):
        raise InvalidParameterError(f"`method` of `{owner}` must be 'exponential' or 'laplace'; got {method!r}.")
    return method


def is_bounded_range(method: NoisyMaxMethod) -> bool:
    """Whether the noisy max ``method`` is bounded-range (ε²/8-zCDP: the exponential mechanism, Cesar & Rogers
    2021) rather than only ε-DP (ε²/2-zCDP: report-noisy-max with Laplace noise)."""
    return method == get_args(NoisyMaxMethod)[0]


def report_noisy_max(
    scores: ArrayLike,
    epsilon: float,
    *,
    sensitivity: float,
    k: int = 1,
    monotone: bool = False,
    method: NoisyMaxMethod = "exponential",
    size: int | None = None,
    rng: RNGLike = None,
) -> Any:
    """The indices of the k largest noisy scores, best first: ε-DP in total (ε/k per selected index).

    ``method="exponential"`` adds Gumbel noise of scale cΔk/ε once (the exponential mechanism, and its one-shot
    top-k); ``"laplace"`` peels k rounds of report-noisy-max with Laplace noise of scale cΔk/ε.

    Returns
    -------
    numpy.ndarray of int
        Shape (k,), or (size, k) with ``size``.

    Examples
    --------
    >>> report_noisy_max([1.0, 100.0, 50.0], 1.0, sensitivity=1.0, k=2, rng=0).tolist()
    [1, 2]
    """
    owner = "report_noisy_max"
    u = _scores(scores, owner)
    kk = check_positive_int(k, "k", owner)
    if kk > u.size:
        raise InvalidParameterError(f"`k` of `{owner}` must be ≤ the number of candidates {u.size}; got {kk}.")
    check_noisy_max_method(method, owner)
    t = _temperature(epsilon, sensitivity, monotone, owner) / kk
    n = 1 if size is None else check_positive_int(size, "size", owner)
    generator = default_rng(rng)
    scale = 1.0 / t
    if method == "exponential":
        noisy = u[None, :] + scale * generator.gumbel(size=(n, u.size))
        order = np.argsort(-noisy, axis=1, kind="stable")[:, :kk]
    else:
        order = np.empty((n, kk), dtype=np.intp)
        alive = np.ones((n, u.size), dtype=bool)
        rows = np.arange(n)
        for step in range(kk):  # k rounds, each vectorised over the draws
            noisy = np.where(alive, u[None, :] + generator.laplace(scale=scale, size=(n, u.size)), -math.inf)
            pick = np.argmax(noisy, axis=1)
            order[:, step] = pick
            alive[rows, pick] = False
    return order[0] if size is None else order


def truncated_laplace_log_density(u: ArrayLike, y: ArrayLike, epsilon: float) -> NDArray[np.float64]:
    """ln p(y | u) for p(y | u) ∝ exp(−ε|u − y|) on y ∈ [0, 1] (score −|u − y|, L = 1), normaliser in closed form.

    Z(u) = ∫₀¹ e^{−ε|u−y|} dy: for u in [0, 1], (2 − e^{−εu} − e^{−ε(1−u)})/ε; outside, e^{−ε d}(1 − e^{−ε})/ε with
    d the distance from u to [0, 1].
    """
    eps = check_positive(epsilon, "epsilon", "truncated_laplace_log_density")
    u_arr = np.asarray(u, dtype=float)
    y_arr = np.asarray(y, dtype=float)
    inside = (u_arr >= 0.0) & (u_arr <= 1.0)
    uc = np.clip(u_arr, 0.0, 1.0)
    z_in = (2.0 - np.exp(-eps * uc) - np.exp(-eps * (1.0 - uc))) / eps
    dist = np.where(u_arr < 0.0, -u_arr, np.where(u_arr > 1.0, u_arr - 1.0, 0.0))
    z_out = np.exp(-eps * dist) * (-math.expm1(-eps)) / eps
    log_z = np.log(np.where(inside, z_in, z_out))
    return np.asarray(-eps * np.abs(u_arr - y_arr) - log_z)
