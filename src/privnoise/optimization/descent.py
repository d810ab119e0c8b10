"""Noisy (projected) gradient descent with privacy-preserving noise (Farokhi, eqs. (3) and (5), Theorem 1).

    x[k+1] = P_𝒞[x[k] − α_k(∇f(x[k]) + w[k])],   w[k] i.i.d.

With ``noise_variance=ε`` the noise is Theorem 1's optimum: the density minimising Tr 𝓘 subject to E‖w‖² ≤ ε is
N(0, (ε/n) I), whose Fisher information has trace n²/ε. Any other mechanism of the library can be passed instead
(a vector mechanism of dimension n, or a scalar one drawn independently per coordinate).

Examples
--------
>>> import numpy as np
>>> from privnoise.optimization import QuadraticProgram, Box, private_gradient_descent
>>> prob = QuadraticProgram(np.diag([2.0, 1.0]), [-2.0, 1.0], constraint=Box([0.0, 0.0], [0.5, 1.0]))
>>> res = private_gradient_descent(prob, noise_variance=0.01, iterations=100, rng=1)
>>> res.iterates.shape, round(res.guarantee.fisher_trace, 6)
((101, 2), 400.0)
>>> bool(0.0 <= res.objective_gap < 0.01)
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import as_finite_array, check_positive, check_positive_int, describe, readonly
from ..exceptions import DimensionError, InvalidParameterError
from ..mechanisms import Gaussian, Mechanism
from ..random import RNGLike
from .guarantees import OptimizationGuarantee, iterates_guarantee
from .problems import QuadraticProgram

__all__ = [
    "ConstantStep",
    "DescentResult",
    "InverseTimeStep",
    "StepRule",
    "expected_final_objective",
    "final_objectives",
    "optimal_noise",
    "private_gradient_descent",
]

_OWNER = "private_gradient_descent"


class StepRule:
    """A step-size schedule α_0, …, α_{T−1}."""

    __slots__ = ()

    def sizes(self, iterations: int) -> NDArray[np.float64]:
        raise NotImplementedError


@dataclass(frozen=True, slots=True, kw_only=True)
class ConstantStep(StepRule):
    """α_k = size for every k (1/L, L = λ_max(Q), is the default of :func:`private_gradient_descent`)."""

    size: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "size", check_positive(self.size, "size", "ConstantStep"))

    def sizes(self, iterations: int) -> NDArray[np.float64]:
        return np.full(iterations, self.size)


@dataclass(frozen=True, slots=True, kw_only=True)
class InverseTimeStep(StepRule):
    """α_k = 1/(λ (k + 1)), k = 0, 1, … (Proposition 2's 1/(λk) with k counted from 1; errata item 12).

    Parameters
    ----------
    strong_convexity : float
        λ > 0, a lower bound on λ_min(Q).
    """

    strong_convexity: float

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "strong_convexity",
            check_positive(self.strong_convexity, "strong_convexity", "InverseTimeStep"),
        )

    def sizes(self, iterations: int) -> NDArray[np.float64]:
        return 1.0 / (self.strong_convexity * np.arange(1, iterations + 1, dtype=float))


def optimal_noise(noise_variance: float, dim: int) -> Gaussian:
    """Theorem 1: the noise minimising Tr 𝓘 subject to E‖w‖² ≤ ε is N(0, (ε/n) I); its Tr 𝓘 is n²/ε.

    Examples
    --------
    >>> g = optimal_noise(0.5, 4)
    >>> float(g.second_moment()), float(g.fisher_information().trace())
    (0.5, 32.0)
    """
    eps = check_positive(noise_variance, "noise_variance", "optimal_noise")
    n = check_positive_int(dim, "dim", "optimal_noise")
    return Gaussian(cov=(eps / n) * np.eye(n))


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class DescentResult:
    """The outcome of :func:`private_gradient_descent`: what an observer sees and what it costs.

    Attributes
    ----------
    x : ndarray (n,)
        The last iterate x[T].
    iterates : ndarray (T + 1, n)
        x[0], …, x[T] — everything an observer of the algorithm sees.
    step_sizes : ndarray (T,)
    mechanism : Mechanism or None
        The per-iteration noise (None: plain gradient descent).
    problem : QuadraticProgram
    guarantee : OptimizationGuarantee
    """

    x: NDArray[np.float64]
    iterates: NDArray[np.float64]
    step_sizes: NDArray[np.float64]
    mechanism: Mechanism | None
    problem: QuadraticProgram
    guarantee: OptimizationGuarantee

    @property
    def objective(self) -> float:
        """f(x[T])."""
        return float(self.problem.objective(self.x))

    @property
    def optimum(self) -> float:
        """min_{x ∈ 𝒞} f(x), from :meth:`QuadraticProgram.solve`."""
        return self.problem.solve().value

    @property
    def objective_gap(self) -> float:
        """f(x[T]) − min_𝒞 f ≥ 0: the measured utility cost (reported instead of Proposition 2's bound)."""
        return self.objective - self.optimum

    def as_dict(self) -> dict[str, Any]:
        return {
            "x": self.x.tolist(),
            "iterations": int(self.step_sizes.size),
            "objective": self.objective,
            "optimum": self.optimum,
            "objective_gap": self.objective_gap,
            "noise": None if self.mechanism is None else self.mechanism.describe(),
            "guarantee": self.guarantee.as_dict(),
        }


def _steps(step: StepRule | float | None, problem: QuadraticProgram, iterations: int) -> NDArray[np.float64]:
    if step is None:
        lip = problem.smoothness
        if lip <= 0:
            raise InvalidParameterError(f"`step` of `{_OWNER}` must be given when Q = 0 (no default 1/L).")
        return ConstantStep(size=1.0 / lip).sizes(iterations)
    if isinstance(step, StepRule):
        return step.sizes(iterations)
    if isinstance(step, bool) or not isinstance(step, int | float | np.floating | np.integer):
        raise InvalidParameterError(
            f"`step` of `{_OWNER}` must be a StepRule, a positive number or None; got {describe(step)}."
        )
    return ConstantStep(size=float(step)).sizes(iterations)


def _mechanism(
    problem: QuadraticProgram, noise_variance: float | None, mechanism: Mechanism | None
) -> Mechanism | None:
    n = problem.dim
    if (noise_variance is None) == (mechanism is None):
        raise InvalidParameterError(f"`{_OWNER}` needs exactly one of `noise_variance` and `mechanism`.")
    if mechanism is not None:
        if not isinstance(mechanism, Mechanism):
            raise InvalidParameterError(
                f"`mechanism` of `{_OWNER}` must be a privnoise Mechanism; got {describe(mechanism)}."
            )
        if mechanism.shape not in ((), (n,)):
            raise DimensionError(
                f"`mechanism` of `{_OWNER}` must be scalar or of dimension {n}; got shape {mechanism.shape}."
            )
        return mechanism
    eps = check_positive(noise_variance, "noise_variance", _OWNER, allow_zero=True)
    return None if eps == 0.0 else optimal_noise(eps, n)


def _start(problem: QuadraticProgram, x0: ArrayLike | None) -> NDArray[np.float64]:
    if x0 is None:
        return problem.project(np.zeros(problem.dim))
    start = as_finite_array(x0, "x0", _OWNER, ndim=1)
    if start.size != problem.dim:
        raise DimensionError(f"`x0` of `{_OWNER}` must have length {problem.dim}; got {start.size}.")
    return problem.project(start)


def _draw(mechanism: Mechanism, leading: tuple[int, ...], n: int, rng: RNGLike) -> NDArray[np.float64]:
    if mechanism.shape == ():
        return np.asarray(mechanism.sample(leading + (n,), rng=rng), dtype=float)
    return np.asarray(mechanism.sample(leading, rng=rng), dtype=float)


def run_iterations(
    problem: QuadraticProgram,
    x0: NDArray[np.float64],
    steps: NDArray[np.float64],
    noise: NDArray[np.float64] | None,
) -> NDArray[np.float64]:
    """Iterates of (5) (of (3) without a constraint) for starts ``x0`` of shape (..., n) and noise (T, ..., n)."""
    t = steps.size
    out = np.empty((t + 1,) + x0.shape)
    out[0] = x = x0
    q_mat, q_vec = problem.Q, problem.q
    for k in range(t):  # gradient descent is sequential; each step is vectorised over replicas
        grad = x @ q_mat + q_vec
        if noise is not None:
            grad += noise[k]
        x = problem.project(x - steps[k] * grad)
        out[k + 1] = x
    return out


def private_gradient_descent(
    problem: QuadraticProgram,
    *,
    noise_variance: float | None = None,
    mechanism: Mechanism | None = None,
    iterations: int = 100,
    step: StepRule | float | None = None,
    x0: ArrayLike | None = None,
    gradient_sensitivity: float | None = None,
    delta: float = 1e-5,
    rng: RNGLike = None,
) -> DescentResult:
    """Run noisy projected gradient descent (5) — plain noisy descent (3) without a constraint.

    Parameters
    ----------
    problem : QuadraticProgram
    noise_variance : float, optional
        ε = E‖w[k]‖² ≥ 0: use Theorem 1's optimal noise N(0, (ε/n) I) (0: no noise).
    mechanism : Mechanism, optional
        Any other noise instead (exactly one of ``noise_variance`` and ``mechanism``).
    iterations : int
        T ≥ 1.
    step : StepRule or float, optional
        :class:`ConstantStep`, :class:`InverseTimeStep` or a constant; default 1/λ_max(Q).
    x0 : array_like, optional
        Starting point (projected onto 𝒞); default P_𝒞[0].
    gradient_sensitivity : float, optional
        Declared ℓ2 sensitivity of the gradient, for the (ε, δ)-DP statement of the iterates.
    delta : float
        δ of that statement.
    rng : None, int or numpy.random.Generator
        Source of the noise (default: cryptographically strong).

    Returns
    -------
    DescentResult

    References
    ----------
    F. Farokhi, "Privacy-preserving constrained quadratic optimization with Fisher information", eqs. (3), (5),
    Proposition 1 and Theorem 1.
    """
    if not isinstance(problem, QuadraticProgram):
        raise InvalidParameterError(
            f"`problem` of `{_OWNER}` must be a QuadraticProgram; got {describe(problem)}."
        )
    t = check_positive_int(iterations, "iterations", _OWNER)
    mech = _mechanism(problem, noise_variance, mechanism)
    steps = _steps(step, problem, t)
    start = _start(problem, x0)
    noise = None if mech is None else _draw(mech, (t,), problem.dim, rng)
    iterates = run_iterations(problem, start, steps, noise)
    guarantee: OptimizationGuarantee = iterates_guarantee(
        iterates, mech, gradient_sensitivity=gradient_sensitivity, delta=delta
    )
    return DescentResult(
        x=readonly(iterates[-1]),
        iterates=readonly(iterates),
        step_sizes=readonly(steps),
        mechanism=mech,
        problem=problem,
        guarantee=guarantee,
    )


def final_objectives(
    problem: QuadraticProgram,
    *,
    noise_variance: float,
    iterations: int = 100,
    replicas: int = 1000,
    step: StepRule | float | None = None,
    x0: ArrayLike | None = None,
    rng: RNGLike = None,
) -> NDArray[np.float64]:
    """f(x[T]) over ``replicas`` independent runs with Theorem 1's noise, vectorised across the runs.

    Its mean estimates E f(x[T]), the vertical axis of the paper's Figure 1 [top].
    """
    owner = "final_objectives"
    t = check_positive_int(iterations, "iterations", owner)
    r = check_positive_int(replicas, "replicas", owner)
    mech = _mechanism(problem, noise_variance, None)
    steps = _steps(step, problem, t)
    start = np.broadcast_to(_start(problem, x0), (r, problem.dim)).copy()
    noise = None if mech is None else _draw(mech, (t, r), problem.dim, rng)
    final = run_iterations(problem, start, steps, noise)[-1]
    return np.asarray(problem.objective(final), dtype=float).reshape(r)


def expected_final_objective(
    problem: QuadraticProgram,
    *,
    noise_variance: float,
    iterations: int = 100,
    step: StepRule | float | None = None,
    x0: ArrayLike | None = None,
) -> float:
    """E f(x[T]) of the unconstrained iteration (3) in closed form (no sampling).

    Notes
    -----
    x[T] = x̄[T] − Σ_k Φ_k α_k w[k] with x̄ the noiseless iterate and Φ_k = Π_{j>k}(I − α_j Q), so
    E f(x[T]) = f(x̄[T]) + ½ Σ_k α_k² Tr(Φ_kᵀ Q Φ_k Σ_w) with Σ_w = (ε/n) I. It is linear in ε: the gap grows in
    proportion to the noise variance, the premise of the paper's utility measure.
    """
    owner = "expected_final_objective"
    if problem.constraint is not None:
        raise InvalidParameterError(
            f"`problem` of `{owner}` must be unconstrained (the projection makes x[T] nonlinear in the noise); "
            "use final_objectives for a Monte Carlo estimate."
        )
    t = check_positive_int(iterations, "iterations", owner)
    eps = check_positive(noise_variance, "noise_variance", owner, allow_zero=True)
    steps = _steps(step, problem, t)
    start = _start(problem, x0)
    clean = run_iterations(problem, start, steps, None)[-1]
    n = problem.dim
    phi = np.eye(n)
    total = 0.0
    for k in range(t - 1, -1, -1):  # Φ_k accumulated backwards
        total += steps[k] ** 2 * float(np.trace(phi.T @ problem.Q @ phi))
        phi = phi @ (np.eye(n) - steps[k] * problem.Q)
    return float(problem.objective(clean)) + 0.5 * total * eps / n
