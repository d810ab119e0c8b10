"""The optimal query response: attenuation of the query value plus independent Gaussian noise.

For X ~ N(0, Iₙ) this is the paper's scheme (Nageswaran, eq. (23)–(25) and the Remark after (28)):

    Z_o = Ũ D_a Ũᵀ A X + Ũ D_no N,   D_a = diag(1 − ρᵢ/sᵢ²),  D_no = diag(√(ρᵢ − ρᵢ²/sᵢ²)),  N ~ N(0, I_r)

with the singular values sorted ascending and ρᵢ from eq. (25); for AX + b the response is Z_o + b (eq. (29)),
and for X ~ N(μ, Σ) the optimal linear-Gaussian response of :mod:`.general_covariance`. Both are
:class:`RecoverabilityResponse` objects Z = F X + c + L N with N ~ N(0, I).

Examples
--------
>>> import numpy as np
>>> import privnoise.recoverability as rec
>>> A = np.array([[2.0, 0, 0, 0, 0], [0, 3.0, 0, 0, 0], [0, 0, 4.0, 0, 0]])
>>> resp = rec.optimal_response(A, 8.5)
>>> round(resp.recoverability_error(), 12), round(resp.privacy(), 12), resp.max_privacy
(8.5, 3.5, 3.5)
>>> resp.respond(np.ones((4, 5)), rng=1).shape
(4, 3)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import as_finite_array, as_matrix, readonly
from ..exceptions import DimensionError, InvalidParameterError
from ..guarantees import Guarantee, json_number
from ..mechanisms import Noise
from ..queries import LinearQuery, Query
from ..random import RNGLike, default_rng
from ..snapping import grid_exponent_for_variances
from ._inputs import check_data_cov, check_matrix, check_rho, check_vector
from .general_covariance import solve_general, sqrtm_psd
from .mmse import LinearEstimator, conditional_covariance, linear_mmse_estimator
from .theorem import Theorem1Scheme, theorem1_scheme

__all__ = ["MMSEGuarantee", "RecoverabilityResponse", "optimal_response", "recoverability_error"]

_OWNER = "RecoverabilityResponse"


def recoverability_error(
    A: ArrayLike,
    attenuation: ArrayLike,
    noise_cov: ArrayLike | None = None,
    *,
    data_cov: ArrayLike | None = None,
    data_mean: ArrayLike | None = None,
    offset: ArrayLike | None = None,
    shift: ArrayLike | None = None,
) -> float:
    """E‖AX + b − Z‖² for the response Z = F X + c + W, X ~ N(μ, Σ), W ~ N(0, Q) independent (eq. (1)).

    Equals tr((A − F)Σ(A − F)ᵀ) + tr Q + ‖(A − F)μ + b − c‖².

    Examples
    --------
    >>> recoverability_error([[2.0]], [[1.0]], [[0.5]])          # (2 − 1)²·1 + 0.5
    1.5
    """
    owner = "recoverability_error"
    matrix = check_matrix(A, owner)
    m, n = matrix.shape
    f = as_matrix(attenuation, "attenuation", owner)
    if f.shape != (m, n):
        raise DimensionError(f"`attenuation` of `{owner}` must have shape {(m, n)} like A; got {f.shape}.")
    sigma = np.eye(n) if data_cov is None else check_data_cov(data_cov, n, owner)
    q = np.zeros((m, m)) if noise_cov is None else as_matrix(noise_cov, "noise_cov", owner, symmetric=True)
    if q.shape != (m, m):
        raise DimensionError(f"`noise_cov` of `{owner}` must have shape {(m, m)}; got {q.shape}.")
    mu = check_vector(data_mean, "data_mean", owner, n)
    bias = (
        (matrix - f) @ mu + check_vector(offset, "offset", owner, m) - check_vector(shift, "shift", owner, m)
    )
    d = matrix - f
    return float(np.trace(d @ sigma @ d.T) + np.trace(q) + bias @ bias)


@dataclass(frozen=True, slots=True, eq=False)
class MMSEGuarantee(Guarantee):
    """Privacy as the querier's minimum mean squared error: mmse(X | Z) = π(ρ) at recoverability error ρ (Nageswaran).

    Holds for data X ~ N(μ, Σ) whatever estimator the querier uses (Theorem 1 and eq. (2)).
    """

    privacy: float
    max_privacy: float
    recoverability_error: float
    rho: float
    notion: str = field(default="mmse", init=False)

    def as_dict(self) -> dict[str, Any]:
        return {
            "notion": self.notion,
            "mmse": json_number(self.privacy),
            "max_privacy": json_number(self.max_privacy) if self.max_privacy == self.max_privacy else None,
            "recoverability_error": json_number(self.recoverability_error),
            "rho": self.rho,
        }

    def summary(self) -> str:
        return (
            f"MMSE privacy: any estimate of X from the response has E‖X − X̂‖² ≥ {self.privacy:.6g} "
            f"(recoverability error {self.recoverability_error:.6g} ≤ ρ = {self.rho:g})"
        )


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class RecoverabilityResponse(Noise):
    """A query response Z = F X + c + L N, N ~ N(0, I_k) independent of X ~ N(μ, Σ), answering AX + b.

    Build it with :func:`optimal_response`; the constructor validates shapes and accepts any linear-Gaussian
    response (useful for comparisons). As noise it is the part c + L N added to the attenuated query F X
    (:meth:`query`): ``privnoise.release(x, resp.query(), resp)`` is :meth:`respond`, hardened, with the MMSE
    guarantee.

    Parameters
    ----------
    matrix : array_like, shape (m, n)
        A.
    rho : float
        The recoverability level ρ the response was designed for.
    attenuation : array_like, shape (m, n)
        F (for the paper's scheme Ũ D_a Ũᵀ A).
    noise_factor : array_like, shape (m, k)
        L, so that the noise covariance is LLᵀ (for the paper's scheme Ũ D_no); k may be 0.
    shift : array_like, shape (m,), optional
        c (default 0); the optimal response uses c = (A − F)μ + b.
    offset : array_like, shape (m,), optional
        b of the affine query AX + b (default 0).
    data_mean : array_like, shape (n,), optional
        μ (default 0).
    data_cov : array_like, shape (n, n), optional
        Σ (default Iₙ).
    max_privacy : float, optional
        π(ρ) the response is meant to attain (NaN when unknown).
    scheme : Theorem1Scheme, optional
        The paper's quantities (s ascending, ρᵢ, D_a, D_no, Ũ, Ṽ) when Σ = Iₙ.
    duality_gap : float, default 0
        Certificate of the numerical solver (0 for the closed form).
    """

    matrix: Any
    rho: float
    attenuation: Any
    noise_factor: Any
    shift: Any = None
    offset: Any = None
    data_mean: Any = None
    data_cov: Any = None
    max_privacy: float = float("nan")
    scheme: Theorem1Scheme | None = None
    duality_gap: float = 0.0
    _n: int = field(init=False, repr=False)

    def __post_init__(self) -> None:
        a = check_matrix(self.matrix, _OWNER, "matrix")
        m, n = a.shape
        f = as_matrix(self.attenuation, "attenuation", _OWNER)
        if f.shape != (m, n):
            raise DimensionError(f"`attenuation` of `{_OWNER}` must have shape {(m, n)}; got {f.shape}.")
        lf = as_finite_array(self.noise_factor, "noise_factor", _OWNER, ndim=2)
        if lf.shape[0] != m:
            raise DimensionError(f"`noise_factor` of `{_OWNER}` must have {m} rows; got shape {lf.shape}.")
        sigma = np.eye(n) if self.data_cov is None else check_data_cov(self.data_cov, n, _OWNER)
        object.__setattr__(self, "matrix", readonly(a))
        object.__setattr__(self, "rho", check_rho(self.rho, _OWNER))
        object.__setattr__(self, "attenuation", readonly(f))
        object.__setattr__(self, "noise_factor", readonly(lf))
        object.__setattr__(self, "shift", readonly(check_vector(self.shift, "shift", _OWNER, m)))
        object.__setattr__(self, "offset", readonly(check_vector(self.offset, "offset", _OWNER, m)))
        object.__setattr__(self, "data_mean", readonly(check_vector(self.data_mean, "data_mean", _OWNER, n)))
        object.__setattr__(self, "data_cov", readonly(sigma))
        object.__setattr__(self, "max_privacy", float(self.max_privacy))
        object.__setattr__(self, "duality_gap", float(self.duality_gap))
        object.__setattr__(self, "_n", n)

    @property
    def shape(self) -> tuple[int, ...]:
        """(m,): the response has m entries."""
        return (int(self.matrix.shape[0]),)

    @property
    def data_dim(self) -> int:
        """n, the dimension of the data X."""
        return self._n

    def query(self) -> LinearQuery:
        """The attenuated query F X the noise c + L N is added to."""
        return LinearQuery(self.attenuation, name="attenuated query")

    def _sample(self, n: int, generator: np.random.Generator) -> NDArray[np.float64]:
        """n draws of c + L N, shape (n, m)."""
        w = np.broadcast_to(self.shift, (n, self.shape[0])).copy()
        if self.noise_factor.shape[1]:
            w += generator.standard_normal((n, self.noise_factor.shape[1])) @ self.noise_factor.T
        return w

    def default_grid_exponent(self) -> int:
        """From the smallest non-zero noise standard deviation of a coordinate."""
        variances = np.einsum("ij,ij->i", self.noise_factor, self.noise_factor)
        return grid_exponent_for_variances(variances, max(float(np.max(np.abs(self.shift))), 1.0))

    def guarantee(self) -> MMSEGuarantee:
        """mmse(X | Z) with the recoverability error it costs."""
        return MMSEGuarantee(self.privacy(), self.max_privacy, self.recoverability_error(), self.rho)

    def guarantee_for(
        self, query: Query, x: ArrayLike | None = None, *, delta: float | None = None, grid: float = 0.0
    ) -> MMSEGuarantee:
        """The MMSE guarantee, for the attenuated query F X (:meth:`query`) only."""
        operator = getattr(query, "operator", None)
        if operator is None or operator.shape != self.attenuation.shape or not np.array_equal(
            np.asarray(operator.dense()).reshape(self.attenuation.shape), self.attenuation
        ):
            raise InvalidParameterError(
                f"`query` of `{_OWNER}.guarantee_for` must be the attenuated query F X (`response.query()`); "
                f"got `{query.name}`."
            )
        return self.guarantee()

    def describe(self) -> dict[str, Any]:
        return self.as_dict()

    def noise_covariance(self) -> NDArray[np.float64]:
        """Q = LLᵀ, the covariance of the additive noise."""
        return np.asarray(self.noise_factor @ self.noise_factor.T)

    def respond(self, x: ArrayLike, /, *, rng: RNGLike = None) -> NDArray[np.float64]:
        """The response z = F x + c + L N for one record x (n,) or a batch (k, n), vectorised.

        Noise is drawn through :func:`privnoise.random.default_rng` (a CSPRNG when ``rng`` is None); an int
        seed is for research reproducibility only. The shape of ``x`` is checked before any noise is drawn. This is
        the paper's Z_o in floating point, for analysis; a published response goes through
        ``privnoise.release(x, response.query(), response)``, which snaps it to a 2^k grid.
        """
        arr = as_finite_array(x, "x", f"{_OWNER}.respond", ndim=(1, 2))
        if arr.shape[-1] != self._n:
            raise DimensionError(
                f"`x` of `{_OWNER}.respond` must have {self._n} entries per record; got shape {arr.shape}."
            )
        generator = default_rng(rng)
        z = arr @ self.attenuation.T + self.shift
        k = self.noise_factor.shape[1]
        if k:
            z = z + generator.standard_normal((*arr.shape[:-1], k)) @ self.noise_factor.T
        return np.asarray(z)

    def recoverability_error(self) -> float:
        """E‖AX + b − Z‖², closed form (= min(ρ, tr(AΣAᵀ)) for the optimal response)."""
        return recoverability_error(
            self.matrix,
            self.attenuation,
            self.noise_covariance(),
            data_cov=self.data_cov,
            data_mean=self.data_mean,
            offset=self.offset,
            shift=self.shift,
        )

    def _cross_and_response_cov(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        sigma, f = self.data_cov, self.attenuation
        return sigma @ f.T, f @ sigma @ f.T + self.noise_covariance()

    def posterior_covariance(self) -> NDArray[np.float64]:
        """Cov(X | Z) = Σ − ΣFᵀ(FΣFᵀ + Q)⁺FΣ, by direct matrix computation."""
        cross, cov_z = self._cross_and_response_cov()
        return conditional_covariance(self.data_cov, cross, cov_z)

    def privacy(self) -> float:
        """mmse(X|Z), eq. (2), by direct computation of the conditional covariance (= π(ρ) if optimal)."""
        return float(np.trace(self.posterior_covariance()))

    def estimator(self) -> LinearEstimator:
        """The querier's MMSE estimator of X from Z (linear, as (X, Z) is jointly Gaussian)."""
        cross, cov_z = self._cross_and_response_cov()
        mean_z = self.attenuation @ self.data_mean + self.shift
        return linear_mmse_estimator(self.data_mean, mean_z, self.data_cov, cross, cov_z)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready summary (lists of floats)."""
        out: dict[str, Any] = {
            "rho": self.rho,
            "max_privacy": self.max_privacy,
            "privacy": self.privacy(),
            "recoverability_error": self.recoverability_error(),
            "attenuation": self.attenuation.tolist(),
            "noise_covariance": self.noise_covariance().tolist(),
            "shift": self.shift.tolist(),
            "duality_gap": self.duality_gap,
        }
        if self.scheme is not None:
            out["scheme"] = {
                "singular_values_ascending": self.scheme.singular_values.tolist(),
                "allocation": self.scheme.allocation.tolist(),
                "attenuation_diagonal": self.scheme.attenuation.tolist(),
                "noise_std_diagonal": self.scheme.noise_std.tolist(),
            }
        return out


def optimal_response(
    A: ArrayLike,
    rho: float,
    *,
    offset: ArrayLike | None = None,
    data_mean: ArrayLike | None = None,
    data_cov: ArrayLike | None = None,
) -> RecoverabilityResponse:
    """The ρ-recoverable response of maximum privacy for the query AX + b, X ~ N(μ, Σ).

    Parameters
    ----------
    A : array_like, shape (m, n)
        Query matrix of any shape and rank r ≥ 1.
    rho : float
        Recoverability level ρ >= 0: E‖AX + b − Z‖² ≤ ρ.
    offset : array_like, shape (m,), optional
        b of an affine query (eq. (29)); default 0.
    data_mean : array_like, shape (n,), optional
        μ; default 0 (the paper's setting).
    data_cov : array_like, shape (n, n), optional
        Σ, positive definite; default Iₙ (the paper's setting: the closed-form scheme (23)–(25)).

    Returns
    -------
    RecoverabilityResponse
        With Σ = Iₙ: Z = Ũ D_a Ũᵀ A (X − μ) + Aμ + b + Ũ D_no N, the paper's Z_o (plus b, and centred at μ);
        ``scheme`` holds s (ascending), ρᵢ, D_a, D_no. Otherwise the optimal response of
        :mod:`.general_covariance` (``scheme`` is None). In both cases recoverability_error() = min(ρ, tr(AΣAᵀ))
        and privacy() = π(ρ).

    Raises
    ------
    InvalidParameterError, DimensionError
        As for :func:`~privnoise.recoverability.max_privacy`, and for ``offset``/``data_mean`` of wrong shape.

    Notes
    -----
    A mean μ ≠ 0 is handled by centring: the response to X − μ plus Aμ + b; it changes neither privacy nor
    recoverability. With Σ = Iₙ the scheme is proven optimal over all responses (Theorem 1); with a general Σ
    the response is proven optimal over all responses as well (privnoise's own result, see
    :mod:`privnoise.recoverability.general_covariance`), computed numerically with a duality-gap certificate.

    References
    ----------
    A. Nageswaran, "Gaussian data privacy under linear function recoverability", eq. (23)–(25), (29) and the
    Remark after (28).

    Examples
    --------
    >>> resp = optimal_response([[1.0, 1.0]], 1.0)              # s₁ = √2: D_a = 1/2, D_no² = 1 − 1/2
    >>> resp.attenuation, resp.noise_covariance()
    (array([[0.5, 0.5]]), array([[0.5]]))
    """
    owner = "optimal_response"
    matrix = check_matrix(A, owner)
    m, n = matrix.shape
    r = check_rho(rho, owner)
    b = check_vector(offset, "offset", owner, m)
    mu = check_vector(data_mean, "data_mean", owner, n)
    if data_cov is None:
        sch = theorem1_scheme(matrix, r)
        u = sch.left
        f = (u * sch.attenuation) @ u.T @ matrix
        noise = u * sch.noise_std
        value, gap, sigma = sch.privacy(), 0.0, None
    else:
        sigma = check_data_cov(data_cov, n, owner)
        sol = solve_general(matrix, r, sigma)
        root = sqrtm_psd(sigma)
        inv_root = np.linalg.inv(root)
        bw = matrix @ root
        w, v = np.linalg.eigh(sol.whitened_posterior)
        w = np.clip(w, 0.0, 1.0)
        f = bw @ (np.eye(n) - sol.whitened_posterior) @ inv_root
        var = w * (1.0 - w)
        keep = var > 1e-15
        noise = (bw @ v[:, keep]) * np.sqrt(var[keep])
        value, gap, sch = sol.value, sol.gap, None
    keep_cols = np.any(noise != 0.0, axis=0)
    return RecoverabilityResponse(
        matrix=matrix,
        rho=r,
        attenuation=f,
        noise_factor=noise[:, keep_cols],
        shift=(matrix - f) @ mu + b,
        offset=b,
        data_mean=mu,
        data_cov=sigma,
        max_privacy=value,
        scheme=sch,
        duality_gap=gap,
    )
