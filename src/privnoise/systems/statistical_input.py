"""(0, δ)-differential privacy of statistical inputs by output noise (Liu, Kawano & Cao, Section III).

The noisy output over t+1 steps is Y_{v,t} = O_t x₀ + N_t U_t + V_t (eq. (11)); two input laws are c-adjacent when
their joint laws of (x₀, U_t) are within W₂ distance c (Definition II.1). The designs below add white noise
V_t ~ N(0, σ²I) with the smallest σ that the paper's sufficient conditions certify:

* Theorem III.3 (a given pair): min(λ_min(Σ_Y), λ_min(Σ_Y′)) ≥ c²λ_max(𝒪_t)/(2δ²), 𝒪_t = [O_t N_t]ᵀ[O_t N_t];
* Corollary III.4 (uniform over Adj₂ᶜ): λ_min(Σ_V) ≥ c²λ_max(𝒪_t)/(2δ²);
* Theorem III.5 (x₀ with a public law): λ_min(O_tΣ_{x₀}O_tᵀ) + σ² ≥ c²λ_max(N_tᵀN_t)/(2δ²).

All three follow from Lemma III.2 (W₂ contracts by ‖F‖₂), Lemma III.1 (symmetrised KL ≤ 2W₂²/λ_min) and Pinsker's
inequality TV ≤ ½√(KL + KL′). The exact total variation of :mod:`privnoise.systems.total_variation` audits them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_in_range, check_positive, check_positive_int, readonly
from ..exceptions import DimensionError, InvalidParameterError
from ..guarantees import Guarantee
from ..mechanisms import Gaussian, Noise, Perturbation, deliver
from ..queries import Query
from .gaussian_inputs import GaussianInput, wasserstein2
from .horizon import observability_matrix, toeplitz_matrix
from .statespace import StateSpace, as_statespace

__all__ = [
    "StatisticalInputGuarantee",
    "StatisticalInputNoise",
    "corollary_iii4_noise",
    "sensitivity_matrix",
    "statistical_input_noise",
    "theorem_iii3_condition",
    "theorem_iii3_noise",
    "theorem_iii5_noise",
]

Theorem = Literal["III.3", "III.4", "III.5"]


def sensitivity_matrix(system: Any, horizon: int) -> NDArray[np.float64]:
    """𝓞_t = [O_t N_t]ᵀ[O_t N_t] (eq. (13))."""
    sys = as_statespace(system)
    on = np.hstack([observability_matrix(sys, horizon), toeplitz_matrix(sys, horizon)])
    return readonly(on.T @ on)


@dataclass(frozen=True, slots=True, eq=False)
class StatisticalInputGuarantee(Guarantee):
    """(0, δ)-differential privacy of the *law* of a system's inputs under W₂ adjacency (Liu, Kawano & Cao).

    Two input laws within W₂ distance c give output laws (one window of t+1 readings) within total variation δ.
    """

    theorem: str
    delta: float
    c: float
    horizon: int
    sigma: float
    required: float
    assumption: str = ""
    notion: str = field(default="(0, delta)-differential privacy of the input law, W2 adjacency (Liu, Kawano & Cao)", init=False)

    @property
    def epsilon(self) -> float:
        return 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "notion": self.notion,
            "theorem": self.theorem,
            "delta": self.delta,
            "epsilon": 0.0,
            "c": self.c,
            "horizon": self.horizon,
            "window": self.horizon + 1,
            "sigma": self.sigma,
            "required": self.required,
            "scope": "each window of t+1 consecutive readings; k windows of the same input give TV <= k*delta",
            "assumption": self.assumption,
        }

    def summary(self) -> str:
        return (
            f"(0, {self.delta:.3g})-DP of the input law for W2-adjacent laws within c = {self.c:g} "
            f"(Theorem {self.theorem}; one window of {self.horizon + 1} readings; σ = {self.sigma:.6g})"
        )


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class StatisticalInputNoise(Noise):
    """White output noise V_t ~ N(0, σ²I_{(t+1)q}) certified (0, δ)-DP for Adj₂ᶜ by one of Section III's results.

    Its shape is one window (t+1, q); it adds to a window of readings (the identity query over them).

    Attributes
    ----------
    system, horizon : the model and t (the noise covers y(0), …, y(t), one window of t+1 readings).
    sigma : float, the noise standard deviation (0 when the public x₀ law alone suffices, Theorem III.5).
    c, delta : the adjacency radius and the target δ.
    theorem : "III.3", "III.4" or "III.5".
    required : float, the right-hand side c²λ_max(·)/(2δ²) of the certifying condition.
    """

    system: StateSpace
    horizon: int
    sigma: float
    c: float
    delta: float
    theorem: Theorem
    required: float
    assumption: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "system", as_statespace(self.system))
        check_positive(self.sigma, "sigma", "StatisticalInputNoise", allow_zero=True)

    @property
    def window(self) -> int:
        """t + 1 readings per window."""
        return self.horizon + 1

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.window, self.system.q)

    @property
    def dim(self) -> int:
        """(t+1)q, the length of V_t."""
        return self.window * self.system.q

    def covariance(self) -> NDArray[np.float64]:
        """Σ_V = σ²I."""
        return readonly(self.sigma**2 * np.eye(self.dim))

    def _law(self) -> Gaussian | None:
        return None if self.sigma == 0 else Gaussian.from_std(self.sigma, self.dim)

    def _sample(self, n: int, generator: np.random.Generator) -> NDArray[np.float64]:
        """n windows V_t, shape (n, t+1, q); vectorised."""
        v = generator.standard_normal((n,) + self.shape)
        v *= self.sigma
        return v

    def _perturb(self, values: NDArray[np.float64], how: Perturbation) -> NDArray[np.float64]:
        if self.sigma == 0:  # the public x₀ law alone certifies the output: nothing is added, nothing to snap
            return deliver(np.array(values, dtype=float), how.out)
        return super(StatisticalInputNoise, self)._perturb(values, how)

    def default_grid_exponent(self) -> int:
        law = self._law()
        return 0 if law is None else law.default_grid_exponent()

    def marginal(self, start: int, stop: int) -> Noise | None:
        law = self._law()
        return None if law is None else law.marginal(start, stop)

    def guarantee(self) -> StatisticalInputGuarantee:
        """The (0, δ) guarantee of one window."""
        return StatisticalInputGuarantee(
            self.theorem, self.delta, self.c, self.horizon, self.sigma, self.required, self.assumption
        )

    def guarantee_for(
        self, query: Query, x: ArrayLike | None = None, *, delta: float | None = None, grid: float = 0.0
    ) -> StatisticalInputGuarantee:
        """The guarantee of one window, for the identity query over its (t+1)q readings."""
        operator = getattr(query, "operator", None)
        if operator is None or operator.shape != (self.dim, self.dim) or operator.record_scale(0, 1) is None:
            raise InvalidParameterError(
                f"`query` of `StatisticalInputNoise.guarantee_for` must be the identity over one window of "
                f"{self.dim} readings; got `{query.name}`."
            )
        return self.guarantee()

    def as_dict(self) -> dict[str, Any]:
        """The guarantee, for a JSON sidecar or a header line."""
        return self.guarantee().as_dict()

    def describe(self) -> dict[str, Any]:
        return {"family": "statistical-input-gaussian", "sigma": self.sigma, "window": self.window, "q": self.system.q}


def _common(
    system: Any, horizon: int, c: float, delta: float, owner: str
) -> tuple[StateSpace, int, float, float]:
    sys = as_statespace(system)
    t = check_positive_int(horizon, "horizon", owner, minimum=0)
    cc = check_positive(c, "c", owner)
    d = check_in_range(delta, "delta", owner, low=0.0, high=1.0, low_open=True, high_open=True)
    if sys.m == 0:
        raise DimensionError(f"`system` of `{owner}` must have an input (B with at least one column).")
    return sys, t, cc, d


def _law_dims(law: GaussianInput, sys: StateSpace, t: int, name: str, owner: str, *, with_x0: bool) -> None:
    expected = (sys.n if with_x0 else 0) + (t + 1) * sys.m
    if not isinstance(law, GaussianInput):
        raise InvalidParameterError(
            f"`{name}` of `{owner}` must be a GaussianInput; got {type(law).__name__}."
        )
    if law.dim != expected:
        what = f"n + (t+1)m = {sys.n} + {t + 1}·{sys.m}" if with_x0 else f"(t+1)m = {t + 1}·{sys.m}"
        raise DimensionError(f"`{name}` of `{owner}` must have dimension {what} = {expected}; got {law.dim}.")


def corollary_iii4_noise(system: Any, *, horizon: int, c: float, delta: float) -> StatisticalInputNoise:
    """Corollary III.4: σ² = c²λ_max(𝒪_t)/(2δ²), uniform over every pair in Adj₂ᶜ.

    Examples
    --------
    >>> from privnoise.systems import StateSpace
    >>> sys = StateSpace(A=[[0.9]], B=[[1.0]], C=[[1.0]])
    >>> noise = corollary_iii4_noise(sys, horizon=2, c=1.0, delta=0.1)
    >>> bool(np.isclose(noise.sigma**2, np.linalg.eigvalsh(sensitivity_matrix(sys, 2))[-1] / 0.02))
    True
    """
    sys, t, cc, d = _common(system, horizon, c, delta, "corollary_iii4_noise")
    required = cc**2 * float(np.linalg.eigvalsh(sensitivity_matrix(sys, t))[-1]) / (2 * d * d)
    return StatisticalInputNoise(
        system=sys, horizon=t, sigma=math.sqrt(required), c=cc, delta=d, theorem="III.4", required=required
    )


def theorem_iii5_noise(
    system: Any, *, horizon: int, c: float, delta: float, x0_public: GaussianInput
) -> StatisticalInputNoise:
    """Theorem III.5: σ² = c²λ_max(N_tᵀN_t)/(2δ²) − λ_min(O_tΣ_{x₀}O_tᵀ) (at least 0), x₀ law public.

    Here c bounds W₂ between the laws of U_t only (x₀ has the same, public law in both).

    Examples
    --------
    >>> from privnoise.systems import StateSpace
    >>> sys = StateSpace(A=[[0.9]], B=[[1.0]], C=[[1.0]], D=[[0.0]])
    >>> x0 = GaussianInput(mean=[90], cov=[[10]])
    >>> round(theorem_iii5_noise(sys, horizon=2, c=2.02, delta=0.1, x0_public=x0).sigma, 4)
    22.0907
    """
    owner = "theorem_iii5_noise"
    sys, t, cc, d = _common(system, horizon, c, delta, owner)
    if not isinstance(x0_public, GaussianInput) or x0_public.dim != sys.n:
        got = x0_public.dim if isinstance(x0_public, GaussianInput) else type(x0_public).__name__
        raise DimensionError(
            f"`x0_public` of `{owner}` must be a GaussianInput of dimension n = {sys.n}; got {got}."
        )
    n_t = toeplitz_matrix(sys, t)
    o_t = observability_matrix(sys, t)
    required = cc**2 * float(np.linalg.eigvalsh(n_t.T @ n_t)[-1]) / (2 * d * d)
    floor = max(float(np.linalg.eigvalsh(o_t @ x0_public.cov @ o_t.T)[0]), 0.0)
    return StatisticalInputNoise(
        system=sys,
        horizon=t,
        sigma=math.sqrt(max(required - floor, 0.0)),
        c=cc,
        delta=d,
        theorem="III.5",
        required=required,
        assumption="x0 ~ N(mean, cov) public and identical in both input laws; c bounds W2 of the U_t laws",
    )


def _output_floor(sys: StateSpace, t: int, law: GaussianInput) -> float:
    on = np.hstack([observability_matrix(sys, t), toeplitz_matrix(sys, t)])
    return float(np.linalg.eigvalsh(on @ law.cov @ on.T)[0])


def theorem_iii3_condition(
    system: Any,
    *,
    horizon: int,
    c: float,
    delta: float,
    noise_cov: Any,
    pair: tuple[GaussianInput, GaussianInput],
) -> bool:
    """Whether Σ_V satisfies condition (12) of Theorem III.3 for the joint laws ``pair`` of (x₀, U_t)."""
    owner = "theorem_iii3_condition"
    sys, t, cc, d = _common(system, horizon, c, delta, owner)
    sv = np.asarray(noise_cov, dtype=float)
    on = np.hstack([observability_matrix(sys, t), toeplitz_matrix(sys, t)])
    required = cc**2 * float(np.linalg.eigvalsh(on.T @ on)[-1]) / (2 * d * d)
    lows = []
    for i, law in enumerate(pair):
        _law_dims(law, sys, t, f"pair[{i}]", owner, with_x0=True)
        lows.append(float(np.linalg.eigvalsh(on @ law.cov @ on.T + sv)[0]))
    return min(lows) >= required


def theorem_iii3_noise(
    system: Any, *, horizon: int, c: float, delta: float, pair: tuple[GaussianInput, GaussianInput]
) -> StatisticalInputNoise:
    """Theorem III.3 for one c-adjacent pair of joint laws of (x₀, U_t): the smallest σ meeting condition (12).

    Raises
    ------
    InvalidParameterError
        If the pair is not c-adjacent (W₂ > c).
    """
    owner = "theorem_iii3_noise"
    sys, t, cc, d = _common(system, horizon, c, delta, owner)
    if len(pair) != 2:
        raise InvalidParameterError(f"`pair` of `{owner}` must hold two GaussianInput laws; got {len(pair)}.")
    for i, law in enumerate(pair):
        _law_dims(law, sys, t, f"pair[{i}]", owner, with_x0=True)
    distance = wasserstein2(pair[0], pair[1])
    if distance > cc * (1 + 1e-12):
        raise InvalidParameterError(
            f"`pair` of `{owner}` must be c-adjacent (W2 <= c = {cc:g}); got W2 = {distance:.6g}."
        )
    required = cc**2 * float(np.linalg.eigvalsh(sensitivity_matrix(sys, t))[-1]) / (2 * d * d)
    floor = max(min(_output_floor(sys, t, law) for law in pair), 0.0)
    return StatisticalInputNoise(
        system=sys,
        horizon=t,
        sigma=math.sqrt(max(required - floor, 0.0) + 1e-12 * required),  # margin for eigenvalue rounding
        c=cc,
        delta=d,
        theorem="III.3",
        required=required,
        assumption="certified for this pair of input laws only",
    )


def statistical_input_noise(
    system: Any,
    *,
    horizon: int,
    c: float,
    delta: float,
    x0_public: GaussianInput | None = None,
    pair: tuple[GaussianInput, GaussianInput] | None = None,
) -> StatisticalInputNoise:
    """Design output noise for (0, δ)-DP of statistical inputs (Liu, Kawano & Cao, Section III).

    Parameters
    ----------
    system : StateSpace or python-control StateSpace
    horizon : int
        t >= 0; the noise covers t+1 outputs.
    c : float
        Adjacency radius (W₂).
    delta : float
        Target δ in (0, 1).
    x0_public : GaussianInput, optional
        The public law of x₀: Theorem III.5.
    pair : (GaussianInput, GaussianInput), optional
        One pair of joint (x₀, U_t) laws: Theorem III.3. With neither: Corollary III.4.

    Returns
    -------
    StatisticalInputNoise

    References
    ----------
    L. Liu, Y. Kawano and M. Cao, Theorem III.3, Corollary III.4, Theorem III.5.
    """
    if x0_public is not None and pair is not None:
        raise InvalidParameterError("`statistical_input_noise` takes `x0_public` or `pair`, not both.")
    if x0_public is not None:
        return theorem_iii5_noise(system, horizon=horizon, c=c, delta=delta, x0_public=x0_public)
    if pair is not None:
        return theorem_iii3_noise(system, horizon=horizon, c=c, delta=delta, pair=pair)
    return corollary_iii4_noise(system, horizon=horizon, c=c, delta=delta)
