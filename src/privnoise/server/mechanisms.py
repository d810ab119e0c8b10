"""Policy → noise: every answer the server gives is a hardened (clamped, grid-snapped) release drawn from the
cryptographically strong default generator, through the library's noise protocol. No seed exists on this path.

The noise of a component is a :class:`~privnoise.mechanisms.HardenedMechanism`, the same object a library user
builds; an answer adds it as every plan's component does (:meth:`privnoise.planning.Component.add`: the protocol's
``add_to``, clamp, round to the grid, add grid noise; blocks of d records for vector noise of d coordinates).

* Differential-privacy policies are calibrated by the library. ``laplace`` policies and registered families of ε
  get the noise the analyst's Session calibrates for the same share
  (:func:`privnoise.dp.snapped.snapped_family_noise`: the family's smallest scale whose exact ε is within the share,
  released as the exact sum snapped to the grid, post-processing that adds no rounding term), and the released
  counts of count, histogram and declared-key group-by answers get its noise on ℤ (discrete Laplace, ε = Δ/t
  exactly on integer counts). ``gaussian`` policies use :func:`privnoise.dp.hardened_gaussian_for_epsilon_delta`
  (the value rounded first, the rounding included in the sensitivity). The budget is charged the declared (ε, δ)
  exactly.
* Fisher policies use Farokhi & Sandberg's optimal noise for the release itself, designed by
  :func:`privnoise.fisher.optimal_noise` on the scalar or identity query: cos² noise on [−h, h] (Problem 2) or
  Gaussian noise with E w² = Q per record (Problem 4), kept structured (an identity over a million records is a
  σ²·I). The information a release carries about each record is ``slope² 𝓘_w`` (Proposition 1), charged to the
  Fisher budgets.
* ``mechanism = "fisher-fem"``: Theorem 2's optimal noise on the owner's 2-D or 3-D support W, the principal
  Dirichlet eigenfunction of −Δu = λu on W by finite elements (:func:`privnoise.fisher.fem.solve_dirichlet_eigenproblem`,
  :class:`privnoise.fisher.FiniteElementNoise`; C = I on the released block), designed once per policy
  (:func:`fem_design`). An identity release of n records is cut into blocks of d = dim W consecutive records,
  each with its own draw from W (the optimal noise on the product support Wᵏ is the product of the optimal
  noises, its Dirichlet eigenfunction being the product); a last, shorter block keeps the first coordinates of
  a draw (a marginal, whose information about a record is at most the diagonal entry it comes from). A record
  at coordinate j of its block is charged (𝓘_w)_jj ≤ max_j (𝓘_w)_jj, the amount charged.
* ``mechanism = "custom"`` calls an owner-supplied ``module:function`` returning a privnoise Mechanism; the server
  hardens it and charges the declared (ε, δ). It exists for owners with their own noise (and for the failure
  tests).
* ``mechanism = "<family>"``, a noise family registered by name (:func:`privnoise.dp.families.register_family`)
  when the configuration was loaded (the policy holds it): :func:`family_noise` builds its :class:`PolicyNoise`
  from the family object alone — :func:`privnoise.dp.hardened_family_noise` calibrates the hardened release through
  the family's own privacy profile (pure ε in exact rationals, or ε at δ for a ρ family), vector answers use the
  family's sensitivity norm, answers state the family's error law, and the Fisher information charged is its
  noise's (:func:`noise_information`).

What a noise reports — its scale, its per-record Fisher information — comes from its privacy profile
(:func:`privnoise.dp.profile_of`) and its structured information, never from a switch on its family. Calibrations
are cached (:func:`build_noise` is called once per policy, sensitivity and dimension), and every number they
produce is checked: the sensitivity and the noise scale must be finite and in :data:`~.checks.SCALE_RANGE`, the
noise's Fisher information finite and positive, else the query is refused
(:class:`~privnoise.exceptions.InvalidParameterError`) before anything is charged.
"""

from __future__ import annotations

import functools
import importlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import queries
from ..core.adjacency import Norm
from ..dp.families import LAPLACE, NoiseFamily
from ..dp.gaussian import gaussian_sigma
from ..dp.hardened_calibration import (
    hardened_family_noise,
    hardened_gaussian_for_epsilon_delta,
)
from ..dp.profile import NoProfile, profile_of
from ..dp.snapped import snapped_family_noise
from ..exceptions import CalibrationError, InvalidParameterError
from ..fisher import optimal_noise
from ..fisher.fem import solve_dirichlet_eigenproblem
from ..fisher.fem_noise import FiniteElementNoise
from ..mechanisms import Mechanism
from ..mechanisms.error_laws import ErrorLaw
from ..mechanisms.hardening import HardenedMechanism, hardened, noise_scale
from ..mechanisms.lattice_grid import default_grid_exponent
from .checks import SCALE_RANGE
from .config import PolicySpec, parse_owner_support

__all__ = [
    "POLICY_NOISES",
    "PolicyNoise",
    "additive_noise",
    "build_noise",
    "describe_design",
    "describe_noise",
    "family_noise",
    "fem_design",
    "noise_information",
    "policy_noise",
]

_BOUND_STEPS = 2.0**50
_OWNER = "query"


def _checked_scale(scale: float, what: str) -> float:
    low, high = SCALE_RANGE
    if not math.isfinite(scale) or not low <= scale <= high:
        raise InvalidParameterError(
            f"the {what} of `{_OWNER}` would be {scale:g}, outside [{low:g}, {high:g}]: the coefficients or "
            "the declared bounds are too extreme for this policy."
        )
    return scale


def _harden(mech: Mechanism, sensitivity: float) -> HardenedMechanism:
    k = default_grid_exponent(noise_scale(mech))
    return hardened(mech, sensitivity=sensitivity, bound=_BOUND_STEPS * math.ldexp(1.0, k), grid_exponent=k)


def _import_factory(path: str) -> Any:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def _information(inner: Any) -> float:
    """The largest diagonal entry of the noise's information matrix, or — for noise that keeps no structured form —
    the largest of its ``fisher_information()`` (a scalar per coordinate)."""
    form = getattr(inner, "information_form", None)
    if callable(form):
        return float(form().max_diagonal())
    fisher = getattr(inner, "fisher_information", None)
    if not callable(fisher):
        raise InvalidParameterError(
            f"the noise of `{_OWNER}` ({type(inner).__name__}) states no Fisher information to charge."
        )
    return float(np.max(np.asarray(fisher(), dtype=float)))


def noise_information(noise: HardenedMechanism, policy: PolicySpec) -> float | None:
    """𝓘_w, the Fisher information of one coordinate of the noise (the largest diagonal entry of its information
    matrix); None for custom noise (not charged to Fisher budgets).

    The snapped output carries no more information than the continuous noise (data processing), so this bounds it.
    """
    if not policy_noise(policy).charges_information:
        return None
    info = _information(noise.mechanism)
    if not math.isfinite(info) or info <= 0.0:
        raise InvalidParameterError(
            f"the noise of `{_OWNER}` would carry a Fisher information of {info:g} per record; it must be finite "
            "and > 0 (the coefficients or the declared bounds are too extreme for this policy)."
        )
    return info


@functools.lru_cache(maxsize=64)
def fem_design(support: str, tolerance: float | None = None) -> FiniteElementNoise:
    """The optimal noise of a fisher-fem policy on ``support`` (``KIND:POINTS``): Problem 2 with C = I (the
    noise is added to the released block itself), solved by finite elements until the guaranteed bracket of λ₁
    is within ``tolerance`` relative (default 1e-4: a certified 1e-6 takes minutes in 2-D). Cached: designed once
    per support and tolerance.

    Raises
    ------
    CalibrationError
        When the finite-element solution did not reach the tolerance.
    """
    region = parse_owner_support(support)
    solution = solve_dirichlet_eigenproblem(region, rtol=1e-4 if tolerance is None else tolerance)
    if not solution.converged:
        raise CalibrationError(
            f"the finite-element design on {support!r} did not reach the tolerance "
            f"(guaranteed bracket [{solution.lower_bound:g}, {solution.upper_bound:g}] at {solution.unknowns} "
            "unknowns)."
        )
    return FiniteElementNoise(solution=solution)


def describe_design(policy: PolicySpec) -> dict[str, Any]:
    """What a fisher-fem answer states about its design: the support, the block size d, 𝓘_w of the noise drawn
    (4∫∇u∇uᵀ, exact for the density sampled), λ₁ of the discrete solution with its error bound, the mesh size
    and the noise's mean."""
    assert policy.support is not None
    noise = fem_design(policy.support, policy.tolerance)
    sol = noise.solution
    return {
        "support": sol.support.describe(),
        "block": sol.dim,
        "fisher_information": np.asarray(noise.fisher_information()).tolist(),
        "eigenvalue": float(sol.discrete_eigenvalue),
        "error_estimate": float(sol.error_estimate),
        "mesh_size": float(sol.mesh_size),
        "mean": np.asarray(noise.mean()).tolist(),
    }


def describe_noise(noise: HardenedMechanism) -> dict[str, Any]:
    """The family, the grid and the scale of a component's noise (from its privacy profile)."""
    inner: Any = noise.mechanism
    out: dict[str, Any] = {"family": type(inner).__name__, "grid": noise.grid, "hardened": True}
    profile = profile_of(inner)
    if isinstance(profile, NoProfile):  # Fisher noise without a DP profile: its quality
        out["second_moment"] = float(inner.second_moment())
    elif profile.pure:  # Laplace-type: its smallest scale
        out["scale"] = profile.scale
    else:  # Gaussian-type: σ in its weakest direction
        out["sigma"] = profile.scale
    return out


def build_noise(policy: PolicySpec, *, sensitivity: float, dim: int = 1, share: int = 1,
                coordinates: int | None = None, integer: bool = False) -> HardenedMechanism:
    """The noise for one of ``share`` components of an answer (the policy's (ε, δ) is split evenly).

    ``coordinates``: how many of the ``dim`` coordinates one record moves (an identity release one, the cells of a
    histogram or group-by two; default all), which bounds what the rounding to the grid adds to the sensitivity.
    ``integer``: the aggregate is an integer (a count of records), released with the family's noise on ℤ where it
    has one. Cached: the same policy, sensitivity and dimension give the same (immutable) calibrated noise.
    """
    if not math.isfinite(sensitivity) or sensitivity <= 0.0:
        raise InvalidParameterError(
            f"the sensitivity of `{_OWNER}` must be finite and > 0; got {sensitivity!r} "
            "(a linear query needs a non-zero coefficient)."
        )
    try:
        return _build(policy, sensitivity, dim, share, coordinates, integer)
    except CalibrationError as exc:
        raise InvalidParameterError(f"cannot calibrate the noise of `{_OWNER}`: {exc}") from None


def _laplace(policy: PolicySpec, sensitivity: float, dim: int, eps: Any, delta: Any,
             coordinates: int | None, integer: bool) -> HardenedMechanism:
    _checked_scale(sensitivity / float(eps), "Laplace scale")
    h = snapped_family_noise(LAPLACE, eps, sensitivity=sensitivity, integer=integer)
    _checked_scale(profile_of(h.mechanism).scale, "Laplace scale")
    return h


def _gaussian(policy: PolicySpec, sensitivity: float, dim: int, eps: Any, delta: Any,
              coordinates: int | None, integer: bool) -> HardenedMechanism:
    _checked_scale(gaussian_sigma(float(eps), float(delta), sensitivity=sensitivity), "Gaussian σ")
    h = hardened_gaussian_for_epsilon_delta(eps, delta, sensitivity=sensitivity, dim=dim, coordinates=coordinates)
    _checked_scale(profile_of(h.mechanism).scale, "Gaussian σ")
    return h


def _custom(policy: PolicySpec, sensitivity: float, dim: int, eps: Any, delta: Any,
            coordinates: int | None, integer: bool) -> HardenedMechanism:
    assert policy.factory is not None
    mech = _import_factory(policy.factory)(policy)
    if not isinstance(mech, Mechanism):
        raise CalibrationError(f"custom factory {policy.factory!r} must return a privnoise Mechanism.")
    return _harden(mech, sensitivity)


def _registered(policy: PolicySpec, sensitivity: float, dim: int, eps: Any, delta: Any,
                coordinates: int | None, integer: bool) -> HardenedMechanism:
    family = policy.family
    assert family is not None
    if family.currency == "epsilon":  # the Session's calibration, released snapped (privnoise.dp.snapped)
        h: HardenedMechanism = snapped_family_noise(family, eps, sensitivity=sensitivity, integer=integer)
    else:
        h = hardened_family_noise(family, eps, delta, sensitivity=sensitivity, dim=dim, coordinates=coordinates)
    _checked_scale(profile_of(h.mechanism).scale, f"{family.name} scale")
    return h


def _fem(policy: PolicySpec, sensitivity: float, dim: int, eps: Any, delta: Any,
         coordinates: int | None, integer: bool) -> HardenedMechanism:
    assert policy.support is not None
    return _harden(fem_design(policy.support, policy.tolerance), sensitivity)


def cosine_design(query: Any, policy: PolicySpec) -> Mechanism:
    """Problem 2's optimal noise for ``query``: cos² noise on the policy's [−h, h]."""
    assert policy.half_width is not None
    noise = optimal_noise(query, support=(-policy.half_width, policy.half_width))
    assert isinstance(noise, Mechanism)
    return noise


def gaussian_design(query: Any, policy: PolicySpec) -> Mechanism:
    """Problem 4's optimal noise for ``query``: Gaussian noise of quality Q per output."""
    assert policy.quality is not None
    outputs = int(np.prod(query.output_shape, dtype=np.int64))
    noise = optimal_noise(query, quality_budget=policy.quality * outputs)
    assert isinstance(noise, Mechanism)
    return noise


def _fisher(design: Callable[[Any, PolicySpec], Mechanism]) -> Builder:
    # The optimal noise of the release itself, one scalar or an identity over `dim` records (Problems 2 and 4 for
    # C = I: independent copies per record, Σ ∝ (CCᵀ)^{1/2} = I, kept structured); E w_i² = Q per record.
    def build(policy: PolicySpec, sensitivity: float, dim: int, eps: Any, delta: Any,
              coordinates: int | None, integer: bool) -> HardenedMechanism:
        return _harden(design(queries.mean(1) if dim == 1 else queries.identity(dim), policy), sensitivity)

    return build


#: (policy, sensitivity, dimension, ε share, δ share, moved coordinates, integer aggregate) → the hardened noise of
#: one component.
Builder = Callable[[PolicySpec, float, int, Any, Any, "int | None", bool], HardenedMechanism]


@dataclass(frozen=True, slots=True, kw_only=True)
class PolicyNoise:
    """What a policy's ``mechanism`` is: how it builds an answer's noise and what the answer states.

    Attributes
    ----------
    name : str
        The ``mechanism`` of the configuration.
    build : Builder
        The hardened noise of one component.
    vector_norm : {"l1", "l2"} or None
        The sensitivity norm of vector answers (histograms, group-by); None: it answers none.
    charges_information : bool
        Its answers are charged the Fisher information they carry (not for owner-supplied noise).
    note : str
        What a Fisher answer says of its guarantee.
    design : callable, optional
        Fisher policies: (query, policy) ↦ the optimal noise of a linear query (the console's figures).
    describe : callable, optional
        policy ↦ what an answer states about the noise's design (finite elements).
    law : callable, optional
        noise ↦ the error law of one coordinate of the (unhardened) noise, for the interval an answer states (a
        registered family's own); None: the noise's privacy profile states it.
    """

    name: str
    build: Builder
    vector_norm: Norm | None = None
    charges_information: bool = True
    note: str = ""
    design: Callable[[Any, PolicySpec], Mechanism] | None = None
    describe: Callable[[PolicySpec], dict[str, Any]] | None = None
    law: Callable[[Any], ErrorLaw | None] | None = None


#: The policies' mechanisms by name: the one place the server switches on them (configuration parsing aside).
POLICY_NOISES: dict[str, PolicyNoise] = {
    p.name: p
    for p in (
        PolicyNoise(name="laplace", build=_laplace, vector_norm="l1"),
        PolicyNoise(name="gaussian", build=_gaussian, vector_norm="l2"),
        PolicyNoise(name="custom", build=_custom, charges_information=False),
        PolicyNoise(name="fisher-cosine", build=_fisher(cosine_design), design=cosine_design,
                    note="bounded cos² noise gives no pure ε-DP"),
        PolicyNoise(name="fisher-gaussian", build=_fisher(gaussian_design), design=gaussian_design),
        PolicyNoise(name="fisher-fem", build=_fem, describe=describe_design,
                    note="bounded noise gives no pure ε-DP; records are noised in consecutive blocks of the "
                    "support's dimension, each block with its own draw from the finite-element design (see `design`)"),
    )
}


@functools.lru_cache(maxsize=64)
def family_noise(family: NoiseFamily) -> PolicyNoise:
    """The :class:`PolicyNoise` of a registered noise family, from the family object alone: its hardened noise
    calibrated through its profile, its sensitivity norm for vector answers, its error law, its Fisher information."""
    return PolicyNoise(name=family.name, build=_registered, vector_norm=family.norm, law=family.law)


def policy_noise(policy: PolicySpec) -> PolicyNoise:
    """The :class:`PolicyNoise` of ``policy``'s mechanism (its registered family's, when it names one)."""
    if policy.family is not None:
        return family_noise(policy.family)
    return POLICY_NOISES[policy.mechanism]


def additive_noise(policy: PolicySpec) -> PolicyNoise | None:
    """The :class:`PolicyNoise` of ``policy``, None when its mechanism adds no noise (the exponential mechanism of
    quantiles)."""
    return policy_noise(policy) if policy.family is not None or policy.mechanism in POLICY_NOISES else None


@functools.lru_cache(maxsize=4096)
def _build(policy: PolicySpec, sensitivity: float, dim: int, share: int, coordinates: int | None,
           integer: bool) -> HardenedMechanism:
    eps = None if policy.epsilon is None else policy.epsilon / share
    delta = None if policy.delta is None else policy.delta / share
    return policy_noise(policy).build(policy, sensitivity, dim, eps, delta, coordinates, integer)
