"""The closed-form optimal noise on an ellipsoid matched to the query: shape ∝ CCᵀ (2-D and 3-D).

On E = {w : (w − c)ᵀ S⁻¹ (w − c) ≤ 1} with S = s·CCᵀ, the substitution w = c + S^{1/2} v turns
−∇·(CCᵀ∇u) = λu into −(1/s)Δ_v u = λu on the unit ball, whose principal Dirichlet eigenfunction is radial:

* 2-D: φ(r) = J₀(j r)/(√π |J₁(j)|), j = j₀,₁ ≈ 2.404826 the first zero of J₀, eigenvalue j²;
* 3-D: φ(r) = sin(πr)/(√(2π) r), eigenvalue π²;

both normalised by ∫φ² dv = 1. With the Jacobian det S^{1/2}, γ(w) = φ(‖v‖)²/√det S, the location Fisher
information is 𝓘_w = (4λ_ball/d) S⁻¹ and Tr(𝓘_w CCᵀ) = 4λ_ball/s = 4λ₁(E).

References
----------
F. Farokhi, H. Sandberg, Automatica 99 (2019), Theorem 2, eq. (12) with F(x) = C (a closed form the paper does not
give; it is checked against the finite-element solver in the tests).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import integrate, special

from .._validation import readonly
from ..exceptions import InvalidParameterError
from ..mechanisms import Mechanism, RaisedCosine
from .supports import Ellipsoid

__all__ = ["EllipsoidalNoise", "unit_ball_eigenvalue"]

FloatArray = NDArray[np.float64]
_J01 = float(special.jn_zeros(0, 1)[0])


def unit_ball_eigenvalue(dim: int) -> float:
    """λ₁ of −Δ on the unit ball with Dirichlet conditions: j₀,₁² in 2-D, π² in 3-D.

    Examples
    --------
    >>> round(unit_ball_eigenvalue(2), 10), round(unit_ball_eigenvalue(3), 10)
    (5.7831859629, 9.8696044011)
    """
    return _J01**2 if dim == 2 else math.pi**2


def _radial(r: FloatArray, dim: int) -> tuple[FloatArray, FloatArray]:
    """φ(r) and φ′(r) of the normalised radial eigenfunction on the unit ball (0 outside)."""
    r = np.asarray(r, dtype=float)
    inside = r < 1.0
    if dim == 2:
        norm = 1.0 / (math.sqrt(math.pi) * abs(float(special.j1(_J01))))
        phi = norm * special.j0(_J01 * r)
        dphi = -norm * _J01 * special.j1(_J01 * r)
    else:
        norm = 1.0 / math.sqrt(2.0 * math.pi)
        x = math.pi * r
        safe = np.where(r > 1e-4, r, 1.0)
        phi = np.where(r > 1e-4, norm * np.sin(x) / safe, norm * math.pi * (1.0 - x * x / 6.0))
        dphi = np.where(
            r > 1e-4,
            norm * (math.pi * np.cos(x) * safe - np.sin(x)) / safe**2,
            -norm * math.pi**3 * r / 3.0,
        )
    return np.where(inside, phi, 0.0), np.where(inside, dphi, 0.0)


@lru_cache(maxsize=2)
def _radial_moments(dim: int) -> tuple[float, float]:
    """E‖v‖² and the entropy −∫φ² log φ² dv on the unit ball (quadrature)."""
    area = 2.0 * math.pi if dim == 2 else 4.0 * math.pi

    def density(r: float) -> float:
        return float(_radial(np.array(r), dim)[0]) ** 2

    second, _ = integrate.quad(
        lambda r: area * r ** (dim - 1) * r * r * density(r), 0.0, 1.0, epsabs=0.0, epsrel=1e-12
    )

    def neg_log(r: float) -> float:
        g = density(r)
        return -area * r ** (dim - 1) * g * math.log(g) if g > 0 else 0.0

    entropy, _ = integrate.quad(neg_log, 0.0, 1.0, epsabs=0.0, epsrel=1e-11, limit=200)
    return float(second), float(entropy)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class EllipsoidalNoise(Mechanism):
    """The optimal density on an ellipsoid whose shape is proportional to CCᵀ (closed form, 2-D or 3-D).

    Parameters
    ----------
    region : Ellipsoid
        The support set E = {w : (w − c)ᵀ S⁻¹ (w − c) ≤ 1}.

    Examples
    --------
    >>> import numpy as np
    >>> from privnoise.fisher import Ellipsoid
    >>> noise = EllipsoidalNoise(region=Ellipsoid(center=[0, 0], shape=[[2, 0.5], [0.5, 1]]))
    >>> info = noise.fisher_information()          # (4 j₀,₁²/2) S⁻¹
    >>> bool(np.allclose(info @ noise.region.shape, 2 * 5.783185962946784 * np.eye(2)))
    True
    """

    region: Ellipsoid
    _inverse_root: FloatArray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.region, Ellipsoid):
            raise InvalidParameterError(
                f"`region` of `EllipsoidalNoise` must be an Ellipsoid; got {type(self.region).__name__}."
            )
        object.__setattr__(self, "_inverse_root", readonly(np.linalg.inv(self.region.root)))

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.region.dim,)

    @property
    def _log_jacobian(self) -> float:
        return 0.5 * math.log(float(np.linalg.det(self.region.shape)))

    def _sample(self, n: int, generator: np.random.Generator) -> FloatArray:
        d = self.region.dim
        if d == 3:
            radius = np.asarray(
                RaisedCosine(lower=0.0, upper=1.0)._sample(n, generator)
            )  # density 2 sin²(πr)
        else:
            radius = np.empty(n)
            filled = 0
            while filled < n:
                k = max(64, int(1.1 * (n - filled) / 0.27))
                r = np.sqrt(generator.random(k))  # proposal density 2r
                keep = r[generator.random(k) < special.j0(_J01 * r) ** 2]  # target ∝ r J₀(jr)²
                take = min(keep.size, n - filled)
                radius[filled : filled + take] = keep[:take]
                filled += take
        direction = generator.standard_normal((n, d))
        direction /= np.linalg.norm(direction, axis=1, keepdims=True)
        v = direction * radius[:, None]
        return np.asarray(self.region.center + v @ self.region.root.T)

    def _unit(self, x: FloatArray) -> FloatArray:
        return np.asarray((x - self.region.center) @ self._inverse_root.T)

    def _logpdf(self, x: FloatArray) -> FloatArray:
        r = np.linalg.norm(self._unit(x), axis=-1)
        phi, _ = _radial(r, self.region.dim)
        with np.errstate(divide="ignore"):
            return 2.0 * np.log(np.abs(phi)) - self._log_jacobian

    def _score(self, x: FloatArray) -> FloatArray:
        v = self._unit(x)
        r = np.linalg.norm(v, axis=-1)
        phi, dphi = _radial(r, self.region.dim)
        with np.errstate(divide="ignore", invalid="ignore"):
            radial = np.where((phi != 0) & (r > 0), 2.0 * dphi / (phi * np.where(r > 0, r, 1.0)), 0.0)
        return np.asarray((radial[..., None] * v) @ self._inverse_root)

    def mean(self) -> Any:
        return self.region.center

    def covariance(self) -> Any:
        second, _ = _radial_moments(self.region.dim)
        return readonly(second / self.region.dim * np.asarray(self.region.shape))

    def fisher_information(self) -> Any:
        d = self.region.dim
        return readonly(4.0 * unit_ball_eigenvalue(d) / d * np.linalg.inv(self.region.shape))

    def entropy(self) -> float:
        return _radial_moments(self.region.dim)[1] + self._log_jacobian

    def support(self) -> tuple[FloatArray, FloatArray]:
        half = np.sqrt(np.diag(self.region.shape))
        return self.region.center - half, self.region.center + half

    def describe(self) -> dict[str, Any]:
        region = dict(self.region.describe())
        region.pop("support")
        return {"family": "ellipsoidal (closed form)", **region}
