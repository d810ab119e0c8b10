"""Fisher information: of a query's release about the data, and of any noise density by a second method.

* :func:`query_information` — 𝓘(x) = F(x)ᵀ J F(x) for a release f(x) + w with data-independent noise
  (Farokhi & Sandberg, Section 3): closed form from the query's Jacobian and the mechanism's location information.
* :func:`fisher_information_quadrature` — ∫ g′(w)²/g(w) dw for any 1-D density, by adaptive quadrature.
* :func:`fisher_information_monte_carlo` — E[∇log g ∇log gᵀ] estimated from draws of any mechanism.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import integrate

from .._validation import check_positive_int
from ..exceptions import DimensionError, InvalidParameterError, SolverError
from ..guarantees import FisherGuarantee, FisherInformation
from ..linalg import DenseForm, SymmetricForm
from ..mechanisms import Mechanism
from ..mechanisms.statements import FISHER_INFORMATION, register_statement
from ..queries import Query
from ..random import RNGLike

__all__ = [
    "MonteCarloEstimate",
    "fisher_information_monte_carlo",
    "fisher_information_quadrature",
    "fisher_guarantee",
    "query_information",
]


def _check_fit(query: Query, mechanism: Mechanism, owner: str) -> None:
    if not isinstance(query, Query):
        raise InvalidParameterError(
            f"`query` of `{owner}` must be a privnoise Query; got {type(query).__name__}."
        )
    if not isinstance(mechanism, Mechanism):
        raise InvalidParameterError(
            f"`mechanism` of `{owner}` must be a privnoise Mechanism; got {type(mechanism).__name__}."
        )
    if mechanism.shape != query.output_shape:
        raise DimensionError(
            f"`mechanism` of `{owner}` has shape {mechanism.shape} but the query's output has shape "
            f"{query.output_shape}."
        )


def _absolute(form: SymmetricForm) -> SymmetricForm:
    """|J| entrywise (a diagonal form is its own absolute value)."""
    return form if form.is_diagonal else DenseForm(np.abs(form.dense()), check=False)


def query_information(
    query: Query, mechanism: Mechanism, x: ArrayLike | None = None
) -> tuple[FisherInformation, str]:
    """Fisher information about the data in ``query(x) + w`` with ``w`` drawn from ``mechanism``.

    Returns the information and its scope: "all-data" for a linear query (𝓘 = CᵀJC for every x),
    "declared-domain" for a query with a declared Jacobian bound B (entrywise worst case Bᵀ|J|B: each 𝓘_ii and
    Tr 𝓘 are upper-bounded over the domain), "at-data" otherwise (computed at ``x``, which is then required).
    The query's operator and the noise's information stay structured (an identity query with isotropic noise
    costs O(1)).
    """
    _check_fit(query, mechanism, "query_information")
    noise_info = mechanism.information_form()
    if query.is_linear:
        return FisherInformation(query.jacobian_operator(), noise_info), "all-data"
    bound = query.sup_jacobian_operator()
    if bound is not None:
        return FisherInformation(bound, _absolute(noise_info)), "declared-domain"
    if x is None:
        raise InvalidParameterError(
            f"`x` of `query_information` is required: the nonlinear query `{query.name}` declares no Jacobian bound, "
            "so its Fisher information depends on the data."
        )
    return FisherInformation(query.jacobian_operator(x), noise_info), "at-data"


def fisher_guarantee(
    query: Query, mechanism: Mechanism, x: ArrayLike | None = None, *, grid: float = 0.0
) -> FisherGuarantee:
    """The :class:`~privnoise.guarantees.FisherGuarantee` of releasing ``query(x) + w``, ``w ~ mechanism``.

    ``grid`` > 0 states that the release is snapped to that grid (:mod:`privnoise.snapping`); the bounds still hold
    (data processing) and the guarantee reports the rounding.

    Examples
    --------
    >>> from privnoise import queries
    >>> from privnoise.mechanisms import RaisedCosine
    >>> g = fisher_guarantee(queries.mean(500), RaisedCosine(lower=0.0, upper=0.2))
    >>> round(g.worst_record_bound, 3)    # n² L² / (4π²) kWh²: error floor on one household given all others
    253.303
    """
    info, scope = query_information(query, mechanism, x)
    return FisherGuarantee(info, quality=mechanism.second_moment(), scope=scope, grid=grid)


def fisher_information_quadrature(
    pdf: Callable[[NDArray[np.float64]], ArrayLike],
    support: tuple[float, float] = (-math.inf, math.inf),
    *,
    derivative: Callable[[NDArray[np.float64]], ArrayLike] | None = None,
    breakpoints: tuple[float, ...] = (),
    rtol: float = 1e-11,
) -> float:
    """∫ g′(w)²/g(w) dw for a 1-D density g, by adaptive quadrature (a check independent of closed forms).

    Parameters
    ----------
    pdf : callable
        The density g (vectorised or scalar).
    support : (a, b)
        Integration range; infinite ends are allowed.
    derivative : callable, optional
        g′. When omitted, a five-point central difference with a step of 1e-3 of the support's width (or less,
        to stay inside the support) is used.
    breakpoints : tuple of float
        Points where g′ is discontinuous (e.g. 0 for the Laplace density).
    rtol : float
        Relative tolerance passed to the quadrature.

    Examples
    --------
    >>> import numpy as np
    >>> g = lambda w: np.exp(-w**2 / 2) / np.sqrt(2 * np.pi)
    >>> round(fisher_information_quadrature(g), 10)
    1.0
    """
    a, b = support
    if not a < b:
        raise InvalidParameterError(
            f"`support` of `fisher_information_quadrature` must have a < b; got {support}."
        )

    if derivative is None:
        scale = 1e-3 * ((b - a) if math.isfinite(b - a) else 1.0)

        def g_prime(w: float) -> float:
            # five-point central difference (exact for quartics), the step kept well inside the support
            h = min(scale, (w - a) / 8.0, (b - w) / 8.0)
            if h <= 0.0:
                return 0.0
            f = [float(np.asarray(pdf(np.asarray(w + k * h)))) for k in (-2, -1, 1, 2)]
            return (f[0] - 8.0 * f[1] + 8.0 * f[2] - f[3]) / (12.0 * h)

    else:

        def g_prime(w: float) -> float:
            return float(np.asarray(derivative(np.asarray(w))))

    def integrand(w: float) -> float:
        g = float(np.asarray(pdf(np.asarray(w))))
        if g <= 0.0:
            return 0.0
        d = g_prime(w)
        return d * d / g

    edges = [a, *sorted(p for p in breakpoints if a < p < b), b]
    total = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", integrate.IntegrationWarning)
        for lo, hi in zip(edges[:-1], edges[1:], strict=True):
            try:
                value, _ = integrate.quad(integrand, lo, hi, epsabs=0.0, epsrel=rtol, limit=200)
            except integrate.IntegrationWarning as exc:
                raise SolverError(
                    f"the Fisher information integral did not converge on [{lo:g}, {hi:g}] (g′²/g may not be "
                    f"integrable, i.e. the information may be infinite): {str(exc).splitlines()[0]}"
                ) from None
            total += value
    if not math.isfinite(total):
        raise SolverError("the Fisher information integral did not converge (is g′²/g integrable?).")
    return total


@dataclass(frozen=True, slots=True)
class MonteCarloEstimate:
    """A Monte Carlo estimate with its standard error (same shape)."""

    estimate: NDArray[np.float64]
    standard_error: NDArray[np.float64]
    samples: int


def fisher_information_monte_carlo(
    mechanism: Mechanism, *, samples: int = 100_000, rng: RNGLike = None
) -> MonteCarloEstimate:
    """Estimate E[∇log g(w) ∇log g(w)ᵀ] from ``samples`` draws of ``mechanism`` using its score.

    Examples
    --------
    >>> from privnoise.mechanisms import Gaussian
    >>> est = fisher_information_monte_carlo(Gaussian(cov=4.0), samples=200_000, rng=3)
    >>> bool(abs(est.estimate[0, 0] - 0.25) < 5 * est.standard_error[0, 0])
    True
    """
    if not isinstance(mechanism, Mechanism):
        raise InvalidParameterError(
            "`mechanism` of `fisher_information_monte_carlo` must be a privnoise Mechanism."
        )
    count = check_positive_int(samples, "samples", "fisher_information_monte_carlo", minimum=2)
    w = np.asarray(mechanism.sample(count, rng=rng)).reshape(count, mechanism.dim)
    s = np.asarray(mechanism.score(w.reshape((count,) + mechanism.shape))).reshape(count, mechanism.dim)
    products = s[:, :, None] * s[:, None, :]
    return MonteCarloEstimate(
        estimate=products.mean(axis=0),
        standard_error=products.std(axis=0, ddof=1) / math.sqrt(count),
        samples=count,
    )


register_statement(FISHER_INFORMATION, fisher_guarantee)
