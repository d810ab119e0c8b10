"""Lipschitz privacy: the Lipschitz constant of a mechanism's log density, and its conversion to ε-DP.

Koufogiannis, Han & Pappas, Definition 2: an additive-noise mechanism ``u ↦ u + V`` with density g is
L-Lipschitz private w.r.t. a norm ‖·‖ on the data when |ln g(y − u) − ln g(y − u′)| ≤ L‖u − u′‖ for all
u, u′, y; for a.e.-differentiable g this is sup_v ‖∇ log g(v)‖_* ≤ L, with ‖·‖_* the dual norm. Proposition 3:
an L-Lipschitz-private mechanism is (L·α)-differentially private for the adjacency ‖u − u′‖ ≤ α.

:func:`lipschitz_constant` computes L = sup_v ‖∇ log g(v)‖_* for any privnoise mechanism: in closed form for the
families where it is known (Laplace, ℓ2/multi-user Laplace, and every density that vanishes somewhere, for which
L = ∞), numerically otherwise (probe points on growing shells plus a local maximisation of the dual norm of the
mechanism's ``score``).

The norms on the data space and their duals (ℓ1, ℓ2, ℓ∞ and the multi-user ℓ1-ℓ2) are those of
:mod:`privnoise.dp.norms`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import NDArray
from scipy import optimize

from .._validation import check_positive, check_positive_int, readonly
from ..exceptions import InvalidParameterError
from ..mechanisms import Mechanism
from .norms import Norm, check_norm, dual_norm

__all__ = [
    "LipschitzConstant",
    "dual_norm",
    "epsilon_of_lipschitz",
    "lipschitz_constant",
    "lipschitz_for_epsilon",
]

@dataclass(frozen=True, slots=True, kw_only=True)
class LipschitzConstant:
    """L = sup_v ‖∇ log g(v)‖_* of a mechanism w.r.t. an adjacency norm (Definition 2).

    Attributes
    ----------
    value : float
        The Lipschitz constant (``math.inf`` when the mechanism is not Lipschitz private for any level).
    norm : str
        The adjacency norm ("l1", "l2", "linf" or "l1-l2").
    block : int or None
        Block size of the "l1-l2" norm.
    method : {"analytic", "numerical"}
        How ``value`` was obtained.
    reason : str
        One line on the derivation (closed form used, or why L is infinite).
    argmax : numpy.ndarray or None
        A point where the numerical supremum was attained (None for analytic values).
    """

    value: float
    norm: str
    block: int | None = None
    method: Literal["analytic", "numerical"] = "analytic"
    reason: str = ""
    argmax: NDArray[np.float64] | None = field(default=None, repr=False)

    @property
    def is_private(self) -> bool:
        """Whether the mechanism is Lipschitz private at some finite level."""
        return math.isfinite(self.value)

    def epsilon(self, alpha: float) -> float:
        """ε = L·α of ε-DP for the adjacency ‖u − u′‖ ≤ α (Proposition 3); ``inf`` if L is."""
        return epsilon_of_lipschitz(self.value, alpha)


def epsilon_of_lipschitz(lipschitz: float, alpha: float) -> float:
    """ε-DP level L·α of an L-Lipschitz-private mechanism for adjacency radius α (Proposition 3).

    Examples
    --------
    >>> epsilon_of_lipschitz(0.5, 2.0)
    1.0
    """
    owner = "epsilon_of_lipschitz"
    if isinstance(lipschitz, int | float) and not isinstance(lipschitz, bool) and lipschitz == math.inf:
        check_positive(alpha, "alpha", owner)
        return math.inf
    lip = check_positive(lipschitz, "lipschitz", owner, allow_zero=True)
    return lip * check_positive(alpha, "alpha", owner)


def lipschitz_for_epsilon(epsilon: float, alpha: float) -> float:
    """The Lipschitz level ε/α that gives ε-DP for adjacency radius α (inverse of :func:`epsilon_of_lipschitz`).

    Examples
    --------
    >>> lipschitz_for_epsilon(1.0, 2.0)
    0.5
    """
    owner = "lipschitz_for_epsilon"
    return check_positive(epsilon, "epsilon", owner) / check_positive(alpha, "alpha", owner)


def _analytic(mech: Mechanism, norm: str, block: int | None) -> tuple[float, str] | None:
    from .profile import profile_of

    lo, hi = mech.support()
    if np.any(np.isfinite(lo)) or np.any(np.isfinite(hi)):
        return math.inf, "bounded support: log g = −∞ outside it, so no finite Lipschitz constant"
    return profile_of(mech).lipschitz(norm, block)


def _numerical(
    mech: Mechanism, norm: str, block: int | None, scale: float | None, shells: int
) -> tuple[float, str, NDArray[np.float64]]:
    from ..random import default_rng

    dim = mech.dim
    if scale is None:
        try:
            scale = math.sqrt(mech.second_moment() / dim)
        except NotImplementedError:
            scale = 1.0
        if not (math.isfinite(scale) and scale > 0):
            scale = 1.0
    center = np.atleast_1d(np.asarray(mech.mean(), dtype=float)) if _has_mean(mech) else np.zeros(dim)
    # Fixed-seed probe directions (research-only randomness: these points never touch data).
    gen = default_rng(20150101)
    dirs = gen.standard_normal((512, dim))
    eye = np.eye(dim)
    dirs = np.vstack([dirs, eye, -eye, np.ones((1, dim)), -np.ones((1, dim))])
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    radii = scale * np.geomspace(1e-6, 2.0**shells, 24 + 4 * shells)
    pts = center + radii[:, None, None] * dirs[None, :, :]  # (radius, direction, dim)
    flat = pts.reshape(-1, dim)

    def as_mech(x: NDArray[np.float64]) -> NDArray[np.float64]:
        return x.reshape(x.shape[:-1] + mech.shape) if mech.shape else x[..., 0]

    def value(x: NDArray[np.float64]) -> NDArray[np.float64]:
        s = np.asarray(mech.score(as_mech(x)), dtype=float)
        s = s.reshape(x.shape[:-1] + (dim,))
        return np.asarray(dual_norm(s, norm, block=block), dtype=float)  # type: ignore[arg-type]

    logp = np.asarray(mech.logpdf(as_mech(flat)), dtype=float)
    if not np.all(np.isfinite(logp)):
        return (
            math.inf,
            "density vanishes at a probe point: log g is not Lipschitz",
            flat[~np.isfinite(logp)][0],
        )
    vals = value(flat).reshape(radii.size, -1)
    per_radius = vals.max(axis=1)
    running = np.maximum.accumulate(per_radius)
    if running[-1] > running[-9] * (1.0 + 1e-6) + 1e-300 and per_radius[-1] >= per_radius[-5]:
        return math.inf, "‖score‖_* keeps growing on the outer shells (unbounded)", flat[np.argmax(vals)]
    best = float(vals.max())
    order = np.argsort(vals.ravel())[::-1][:5]
    arg = flat[order[0]]
    for start in flat[order]:
        res = optimize.minimize(lambda x: -float(value(x[None, :])[0]), start, method="Nelder-Mead")
        if -res.fun > best:
            best, arg = float(-res.fun), np.asarray(res.x, dtype=float)
    return best, "numerical supremum of the dual norm of the score (probe shells + Nelder–Mead)", arg


def _has_mean(mech: Mechanism) -> bool:
    try:
        mech.mean()
    except NotImplementedError:
        return False
    return True


def lipschitz_constant(
    mechanism: Mechanism,
    *,
    norm: Norm = "l1",
    block: int | None = None,
    method: Literal["auto", "analytic", "numerical"] = "auto",
    scale: float | None = None,
    shells: int = 10,
) -> LipschitzConstant:
    """Lipschitz constant L = sup_v ‖∇ log g(v)‖_* of an additive-noise mechanism (Definition 2).

    Parameters
    ----------
    mechanism : Mechanism
        Any privnoise mechanism with a ``score``.
    norm : {"l1", "l2", "linf", "l1-l2"}
        Adjacency norm on the data; the dual norm is taken of the score.
    block : int, optional
        Block size (per-user dimension) of the "l1-l2" norm of adjacency (4).
    method : {"auto", "analytic", "numerical"}
        "auto" uses the closed form when the family has one, the numerical search otherwise.
    scale : float, optional
        Length scale of the numerical probe shells (default √(E‖w‖²/m)).
    shells : int
        The outermost probe shell has radius scale·2^shells.

    Returns
    -------
    LipschitzConstant
        ``value`` is ``math.inf`` when the density vanishes anywhere (bounded support) or the score is
        unbounded (e.g. Gaussian): such mechanisms are not Lipschitz private and give no pure ε-DP.

    Notes
    -----
    The numerical search evaluates ‖score‖_* at 512 + 2m + 2 directions on geometrically spaced shells around
    the mean, declares L infinite if the supremum still grows on the outermost shells, and otherwise refines the
    five best probes with Nelder–Mead. It is a lower estimate of the supremum; families with a closed form
    should be preferred.

    References
    ----------
    F. Koufogiannis, S. Han, G. J. Pappas, "Optimality of the Laplace mechanism in differential privacy",
    Definition 2, condition (5), Propositions 3 and 4.

    Examples
    --------
    >>> from privnoise.mechanisms.norm_laplace import L2Laplace
    >>> lc = lipschitz_constant(L2Laplace(epsilon=0.5, dim=3), norm="l2")
    >>> lc.value, lc.epsilon(2.0)
    (0.5, 1.0)
    >>> round(lipschitz_constant(L2Laplace(epsilon=0.5, dim=3), norm="l2", method="numerical").value, 6)
    0.5
    """
    owner = "lipschitz_constant"
    if not isinstance(mechanism, Mechanism):
        raise InvalidParameterError(
            f"`mechanism` of `{owner}` must be a privnoise Mechanism; got {type(mechanism).__name__}."
        )
    b = check_norm(norm, block, mechanism.dim, owner)
    if method not in ("auto", "analytic", "numerical"):
        raise InvalidParameterError(
            f"`method` of `{owner}` must be 'auto', 'analytic' or 'numerical'; got {method!r}."
        )
    if scale is not None:
        scale = check_positive(scale, "scale", owner)
    shells = check_positive_int(shells, "shells", owner, minimum=3)
    if method in ("auto", "analytic"):
        found = _analytic(mechanism, norm, b)
        if found is not None:
            return LipschitzConstant(value=found[0], norm=norm, block=b, method="analytic", reason=found[1])
        if method == "analytic":
            raise InvalidParameterError(
                f"`method` of `{owner}` is 'analytic' but no closed form is known for {mechanism.name} "
                f"with norm {norm!r}; use 'numerical'."
            )
    value, reason, arg = _numerical(mechanism, norm, b, scale, shells)
    return LipschitzConstant(
        value=value,
        norm=norm,
        block=b,
        method="numerical",
        reason=reason,
        argmax=readonly(np.atleast_1d(arg)),
    )
