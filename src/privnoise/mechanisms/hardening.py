"""Hardened releases: clamp the input, work on a power-of-two grid, and state the guarantee that includes the rounding.

``x + laplace()`` computed in doubles leaks through its low-order bits: the set of reachable outputs depends on x
(Mironov 2012; SECURITY.md, requirement 2). :func:`hardened` wraps any additive-noise mechanism into a release
that

1. clamps the true value to the declared box [−B, B] (never inferred from the data),
2. rounds it to the grid Λ·ℤ, Λ = 2^k (``np.rint`` of an exact power-of-two scaling: error ≤ Λ/2),
3. draws the noise W from the wrapped mechanism and rounds it to the same grid, K = rint(W/Λ), and
4. returns Λ·(rint(x/Λ) + K), computed exactly (integers below 2^53 in doubles, exact power-of-two scaling).

Every output is an exact multiple of Λ and its low-order bits are zero. For lattice noise
(:class:`~privnoise.mechanisms.DiscreteLaplace`, :class:`~privnoise.mechanisms.DiscreteGaussian`) step 3 is the
identity. The noise never depends on the value, so neither the output's reachable set nor the sampling time does.

Guarantee and its cost
----------------------
For continuous noise, Λ·(n + rint(W/Λ)) = round_Λ(Λn + W) exactly (n an integer), so the release is the wrapped
mechanism applied to the *rounded* input, followed by rounding: post-processing. Rounding moves each coordinate of
the input by at most Λ/2, so neighbours at distance Δ become lattice points at distance at most Δ + Λ per
coordinate (:func:`~privnoise.mechanisms.lattice_grid.lattice_sensitivity`). The guarantee is the wrapped
mechanism's at that sensitivity — this is the conservative accounting "add the rounding Λ to the sensitivity",
here a theorem for the ideal noise rather than a heuristic:

* Laplace of scale b (ℓ1 sensitivity Δ): ε = (⌊Δ/Λ⌋ + m)Λ/b for equal scales (Δ/min b + Λ Σ 1/b_i otherwise),
  i.e. ε grows by at most mΛ/b ≤ m·2⁻¹¹ at the default grid.
* Gaussian with covariance Σ (ℓ2 sensitivity Δ): the exact analytic profile (:mod:`privnoise.dp.gaussian`) of
  N(0, λ_min(Σ)) at sensitivity ⌊Δ/Λ⌋Λ + Λ (scalar) or Δ + √m Λ (vector).
* Discrete Laplace / Gaussian on the same lattice: :mod:`privnoise.dp.lattice_privacy` (the discrete Gaussian's
  exact δ(ε) of Canonne, Kamath & Steinke for scalars, its zCDP bound for vectors).
* any other mechanism: no DP guarantee is known (``guarantee()`` returns None); bounded-support noise, for
  instance, gives no pure ε-DP.

The utility cost is the extra variance of the rounding, at most Λ²/4 per coordinate (≈ Λ²/12 on average) — below
2⁻²⁴ b² at the default grid. Mironov's snapping mechanism also clamps the *output* and proves a bound for its own
floating-point Laplace sampler with Λ ≥ λ; privnoise rounds the input first, which gives the rigorous sensitivity
accounting above at any grid but relies on the floating-point noise being faithful at the scale of Λ (see the
floating-point caveat in :mod:`privnoise.mechanisms.discrete`: errors of order 2⁻⁵⁰ relative per cell and tails
truncated beyond ≈ 40 scales, not added to the reported numbers).

The default grid is the smallest power of two Λ ≥ scale/2^12 (scale: the smallest Laplace scale, or the smallest
standard deviation); ``grid_exponent`` chooses another. The declared bound may span at most 2^52 grid steps.

References
----------
.. [1] I. Mironov, "On significance of the least significant bits for differential privacy", CCS 2012.
.. [2] C. Canonne, G. Kamath, T. Steinke, "The discrete Gaussian for differential privacy", NeurIPS 2020.
.. [3] B. Balle, Y.-X. Wang, "Improving the Gaussian mechanism for differential privacy", ICML 2018.

Examples
--------
>>> import numpy as np
>>> from privnoise.dp.laplace import laplace_for_epsilon
>>> h = hardened(laplace_for_epsilon(1.0, sensitivity=1.0), sensitivity=1.0, bound=100.0)
>>> h.grid == 2.0**-12, round(h.guarantee().epsilon, 6)
(True, 1.000244)
>>> y = h.release(np.full(4, 3.7), rng=1)
>>> bool(np.all(y / h.grid == np.rint(y / h.grid)))
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import as_finite_array, check_positive, check_positive_int, check_probability, readonly
from ..exceptions import CalibrationError, DimensionError, InvalidParameterError
from ..guarantees import DifferentialPrivacyGuarantee
from ..random import RNGLike
from ..snapping import lattice_add, lattice_point, lattice_sum
from ._base import LatticeMechanism, Mechanism, Noise, Perturbation, deliver
from .lattice_grid import check_grid_exponent
from .protocol import GridFiller
from .statements import DIFFERENTIAL_PRIVACY, PRIVACY_PROFILE, statement

if TYPE_CHECKING:
    from ..guarantees import Guarantee
    from ..queries import Query

__all__ = ["HardenedMechanism", "hardened", "noise_scale"]

_OWNER = "HardenedMechanism"


def noise_scale(mechanism: Noise) -> float:
    """The scale that sets the default grid: the smallest Laplace scale, σ_min for a Gaussian (√λ_min(Σ)), the
    lattice scale for lattice noise, else √λ_min of the covariance (:func:`privnoise.dp.profile.profile_of`, the
    rule :data:`~privnoise.mechanisms.statements.PRIVACY_PROFILE` registered in
    :mod:`privnoise.mechanisms.statements`).
    """
    return statement(PRIVACY_PROFILE)(mechanism).scale


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class HardenedMechanism(Noise):
    """A release f(x) ↦ Λ·(rint(clamp(f(x))/Λ) + rint(W/Λ)) whose every output lies on the grid Λ·ℤ, Λ = 2^k.

    Build it with :func:`hardened`; see the module docstring for the guarantee and its cost.

    Parameters
    ----------
    mechanism : Mechanism or LatticeMechanism
        The noise W (Laplace, Gaussian, DiscreteLaplace, DiscreteGaussian or any other).
    sensitivity : float
        Declared sensitivity Δ of the query: ℓ1 for Laplace noise, ℓ2 for Gaussian noise.
    bound : float or array_like
        Declared bound B: the true value is clamped to [−B, B] (per coordinate) before anything else.
    grid_exponent : int, optional
        k with Λ = 2^k (default: smallest Λ ≥ scale/2^12; a lattice mechanism fixes its own grid).
    coordinates : int, optional
        How many coordinates one record moves (default: all of them): the rounding to the grid adds up to Λ to
        the sensitivity per moved coordinate only (an identity release moves one, a histogram two when a record
        is replaced).
    """

    mechanism: Noise
    sensitivity: float
    bound: Any
    grid_exponent: Any = None
    coordinates: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.mechanism, Mechanism | LatticeMechanism):
            raise InvalidParameterError(
                f"`mechanism` of `{_OWNER}` must be a privnoise Mechanism; got {type(self.mechanism).__name__}."
            )
        object.__setattr__(self, "sensitivity", check_positive(self.sensitivity, "sensitivity", _OWNER))
        if self.coordinates is not None:
            moved = check_positive_int(self.coordinates, "coordinates", _OWNER)
            size = int(np.prod(self.mechanism.shape, dtype=np.int64))
            if moved > size:
                raise InvalidParameterError(
                    f"`coordinates` of `{_OWNER}` must be at most the noise's {size} coordinates; got {moved}."
                )
        bound = as_finite_array(self.bound, "bound", _OWNER, ndim=(0, 1))
        if np.any(bound <= 0):
            raise InvalidParameterError(f"`bound` of `{_OWNER}` must be > 0; got {float(bound.min()):g}.")
        shape = self.mechanism.shape
        if bound.ndim == 1 and bound.shape != shape:
            raise DimensionError(
                f"`bound` of `{_OWNER}` must be a scalar or have shape {shape}; got {bound.shape}."
            )
        if isinstance(self.mechanism, LatticeMechanism):
            k = self.mechanism.grid_exponent
            if self.grid_exponent is not None and self.grid_exponent != k:
                raise InvalidParameterError(
                    f"`grid_exponent` of `{_OWNER}` must equal the lattice's ({k}) for lattice noise; "
                    f"got {self.grid_exponent!r}."
                )
        else:
            k = check_grid_exponent(self.grid_exponent, noise_scale(self.mechanism), _OWNER)
        if float(np.max(bound)) / math.ldexp(1.0, k) > 2.0**52:
            raise InvalidParameterError(
                f"`bound` of `{_OWNER}` must span at most 2^52 grid steps of 2^{k}; got {float(np.max(bound)):g}."
            )
        object.__setattr__(self, "bound", readonly(np.broadcast_to(bound, shape).astype(float)))
        object.__setattr__(self, "grid_exponent", k)

    # -- the grid and the noise -----------------------------------------------------------------------------
    @property
    def grid(self) -> float:
        """Λ = 2^grid_exponent: every output is an exact multiple of it."""
        return math.ldexp(1.0, self.grid_exponent)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.mechanism.shape

    def default_grid_exponent(self) -> int:
        return int(self.grid_exponent)

    def _units(self, n: int, generator: np.random.Generator) -> NDArray[np.float64]:
        """n noise draws in grid units (integer-valued doubles), shape (n,) + shape."""
        if isinstance(self.mechanism, LatticeMechanism):
            return self.mechanism.sample_units(n, rng=generator)
        w = np.asarray(self.mechanism.sample(n, rng=generator), dtype=float).reshape((n,) + self.shape)
        return np.rint(np.ldexp(w, -self.grid_exponent))

    def _sample(self, n: int, generator: np.random.Generator) -> NDArray[np.float64]:
        """Noise rounded to the grid (what :meth:`release` adds to a lattice point)."""
        return np.ldexp(self._units(n, generator), self.grid_exponent)

    def release(self, value: ArrayLike, *, rng: RNGLike = None) -> Any:
        """Release ``value`` (one query answer of shape ``shape``, or a batch ``(..., *shape)`` each with its own
        independent noise): clamp to [−B, B], round to the grid, add grid noise. NaN and inf are rejected.
        """
        if type(value) is float and not self.shape and math.isfinite(value):  # one number (a server's answer)
            one = self._release_one(value, rng)
            if one is not None:
                return one
        out = self.add_to(value, rng=rng)
        return float(out) if out.ndim == 0 else out

    def add_one(self, value: float, generator: np.random.Generator, grid_exponent: int | None = None) -> float | None:
        """The release of one finite value on this noise's own grid (:meth:`_release_one`; ``grid_exponent`` is
        the grid's, which a hardened noise fixes), or None when the array path answers."""
        if self.shape or not math.isfinite(value) or grid_exponent not in (None, self.grid_exponent):
            return None
        return self._release_one(float(value), generator)

    def _release_one(self, value: float, rng: RNGLike) -> float | None:
        """The release of one finite float through the family's scalar draw (``grid_draw``: the value its filler
        gives a one-value buffer), with :func:`~privnoise.snapping.lattice_point`'s arithmetic on Python floats:
        the same result as the array path from the same generator state; None when the family has no such draw."""
        from ..random import default_rng

        if isinstance(self.mechanism, LatticeMechanism):
            return None
        w = self.mechanism.grid_draw(default_rng(rng), self.grid_exponent)
        if w is None:
            return None
        bound = self.bound
        return lattice_point(value, float(round(w)), self.grid_exponent, float(bound.flat[0]))

    def _perturb(self, values: NDArray[np.float64], how: Perturbation) -> NDArray[np.float64]:
        """Clamp, round to the grid, add grid noise (always on the grid: a hardened mechanism cannot be unhardened).

        The noise is drawn, rounded and added chunk by chunk when the family can draw in chunks (lattice noise;
        centred Laplace and independent Gaussian noise), else drawn whole."""
        k = self.grid_exponent
        width = max(self.dim, 1)
        fill: GridFiller | None = None
        if isinstance(self.mechanism, LatticeMechanism):
            fill = self.mechanism.unit_filler(how.generator)  # whole draws per chunk
        else:
            filler = self.mechanism.grid_filler(how.generator, k)
            if filler is not None:
                draw, width = filler

                def fill(buffer: NDArray[np.float64], start: int) -> None:
                    draw(buffer, start)
                    np.rint(buffer, out=buffer)  # K = rint(W/Λ)

        if fill is None:
            noise = self._units(how.count, how.generator).reshape(values.shape)
            return deliver(lattice_sum(np.clip(values, -self.bound, self.bound), noise, k), how.out)
        bound: Any = self.bound
        if bound.size == 1 or np.all(bound == bound.flat[0]):
            bound = float(bound.flat[0])
        else:  # per-coordinate bounds: chunks of whole draws
            width = self.dim
        return lattice_add(values, fill, k, bound=bound, out=how.out, width=width)

    # -- the guarantee ---------------------------------------------------------------------------------------
    def privacy_profile(self) -> Any:
        """The wrapped family's profile with the value rounded to this grid first
        (:class:`~privnoise.dp.privacy_profiles.RoundedProfile`), for ``coordinates`` moved coordinates when declared:
        a :class:`~privnoise.dp.PrivacyProfile`, stated by the rule registered in
        :mod:`privnoise.mechanisms.statements`."""
        profile = statement(PRIVACY_PROFILE)(self.mechanism, grid=self.grid)
        return profile if self.coordinates is None else profile.touching(self.coordinates)

    def _profile(self) -> Any:
        return self.privacy_profile()

    def epsilon(self, delta: float = 0.0) -> float:
        """The ε for which the release is (ε, δ)-DP (δ ignored for Laplace-type noise, which is pure ε-DP)."""
        dl = check_probability(delta, "delta", f"{_OWNER}.epsilon")
        return self._profile().epsilon(self.sensitivity, dl)

    def epsilon_fraction(self) -> Fraction:
        """The pure ε of Laplace-type noise as an exact rational (what an accountant charges)."""
        return self._profile().epsilon_fraction(self.sensitivity)

    def delta(self, epsilon: float) -> float:
        """The smallest δ for which the release is (ε, δ)-DP."""
        eps = check_positive(epsilon, "epsilon", f"{_OWNER}.delta", allow_zero=True)
        return self._profile().delta(eps, self.sensitivity)

    def guarantee(self, *, delta: float | None = None) -> DifferentialPrivacyGuarantee | None:
        """The (ε, δ)-DP guarantee of one release, rounding included; None when the noise has no DP guarantee.

        Laplace-type noise: pure ε-DP (``delta`` is ignored). Gaussian-type noise: ε at the given ``delta``
        (required).
        """
        profile = self._profile()
        adjacency = f"clamped to ±bound, sensitivity {self.sensitivity:g} ({'ℓ1' if profile.pure else 'ℓ2'})"
        try:
            if profile.pure:
                return DifferentialPrivacyGuarantee(epsilon=self.epsilon(), delta=0.0, adjacency=adjacency)
            profile.epsilon(self.sensitivity, 0.5)  # raises when the family has no profile at all
        except CalibrationError:
            return None
        if delta is None:
            raise InvalidParameterError(f"`delta` of `{_OWNER}.guarantee` is required for Gaussian-type noise.")
        dl = check_probability(delta, "delta", f"{_OWNER}.guarantee")
        return DifferentialPrivacyGuarantee(epsilon=self.epsilon(dl), delta=dl, adjacency=adjacency)

    def guarantee_for(
        self, query: Query, x: ArrayLike | None = None, *, delta: float | None = None, grid: float = 0.0
    ) -> Guarantee:
        """(ε, δ) at the query's declared sensitivity (the declared ``sensitivity`` without bounds), rounding
        included. The value is rounded before the noise, so the law is piecewise constant in the data and no
        Cramér–Rao (Fisher) bound is stated."""
        guarantee = statement(DIFFERENTIAL_PRIVACY)(self, query, delta=delta)
        if guarantee is None and (self.pure or delta):
            guarantee = self.guarantee(delta=delta)
        if guarantee is None:
            raise CalibrationError(
                f"hardened `{self.mechanism.name}` noise states a differential-privacy guarantee only; "
                "pass `delta` for Gaussian-type noise (bounded-support noise has none)."
            )
        return guarantee

    @property
    def declared_sensitivity(self) -> float:
        return float(self.sensitivity)

    @property
    def pure(self) -> bool:
        """Whether the guarantee is pure ε-DP (Laplace-type noise)."""
        return self._profile().pure

    def describe(self) -> dict[str, Any]:
        return {
            "hardened": True,
            "grid": self.grid,
            "bound": self.bound.tolist(),
            "sensitivity": self.sensitivity,
            "noise": self.mechanism.describe(),
        }


def hardened(
    mechanism: Mechanism, *, sensitivity: float, bound: ArrayLike, grid_exponent: int | None = None,
    coordinates: int | None = None,
) -> HardenedMechanism:
    """Wrap ``mechanism`` into a clamped, grid-snapped release (see :class:`HardenedMechanism`).

    Parameters
    ----------
    mechanism : Mechanism
        Additive noise: Laplace (ℓ1 sensitivity), Gaussian (ℓ2), DiscreteLaplace, DiscreteGaussian, or any other.
    sensitivity : float
        Declared sensitivity Δ > 0 of the query.
    bound : float or array_like
        Declared bound B > 0; the true value is clamped to [−B, B].
    grid_exponent : int, optional
        k with Λ = 2^k; default the smallest Λ ≥ scale/2^12.
    coordinates : int, optional
        How many coordinates one record moves (default: all).

    Returns
    -------
    HardenedMechanism

    Raises
    ------
    InvalidParameterError
        For a non-mechanism, a non-positive or non-finite sensitivity or bound, a grid too fine for the scale
        (more than 2^40 steps per scale) or the bound (more than 2^52 steps).

    Examples
    --------
    >>> from privnoise.mechanisms import Gaussian
    >>> h = hardened(Gaussian.from_std(2.0), sensitivity=1.0, bound=10.0, grid_exponent=-8)
    >>> round(h.guarantee(delta=1e-5).epsilon, 4)
    2.0018
    """
    return HardenedMechanism(
        mechanism=mechanism, sensitivity=sensitivity, bound=bound, grid_exponent=grid_exponent, coordinates=coordinates
    )
