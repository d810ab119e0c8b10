"""Problem 2 on a general support: the optimal bounded noise for a linear query with 2 or 3 outputs.

:func:`optimal_noise_on_support` picks, in this order:

1. a box with CCᵀ diagonal: the product of cos² densities (Corollary 1, :class:`~privnoise.mechanisms.RaisedCosine`);
2. an ellipsoid whose shape is proportional to CCᵀ: the Bessel (2-D) or sinc (3-D) closed form
   (:class:`~privnoise.fisher.EllipsoidalNoise`);
3. otherwise the finite-element solution (:class:`~privnoise.fisher.FiniteElementNoise`).

References
----------
F. Farokhi, H. Sandberg, Automatica 99 (2019), Problem 2, Theorem 2, Corollary 1, Remark 7.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ..exceptions import DimensionError, InvalidParameterError
from ..mechanisms import Mechanism, RaisedCosine
from ..queries import LinearQuery, Query
from .ellipsoidal import EllipsoidalNoise
from .fem import solve_dirichlet_eigenproblem
from .fem_noise import FiniteElementNoise
from .supports import Box, Ellipsoid, Support

__all__ = ["matched_ellipsoid", "optimal_noise_on_support", "query_gram"]


def query_gram(query: Query, support: Support, owner: str = "optimal_noise") -> NDArray[np.float64]:
    """CCᵀ of a linear query whose output dimension is the support's, with full row rank."""
    if not isinstance(query, LinearQuery):
        raise InvalidParameterError(
            f"`support` of `{owner}` as a {type(support).__name__} needs a linear query (Theorem 2 with F(x) = C); "
            f"`{query.name}` is nonlinear."
        )
    if query.m != support.dim:
        raise DimensionError(
            f"`support` of `{owner}` is {support.dim}-dimensional but the query has {query.m} outputs."
        )
    gram = np.asarray(query.gram(), dtype=float)
    eig = np.linalg.eigvalsh(gram)
    if eig[0] <= 1e-12 * eig[-1]:
        raise InvalidParameterError(
            f"`query` of `{owner}` must have full row rank on a {support.dim}-D support (CCᵀ singular)."
        )
    return gram


def matched_ellipsoid(support: Ellipsoid, gram: NDArray[np.float64]) -> bool:
    """Whether the ellipsoid's shape is a positive multiple of CCᵀ (to 1e-12 relative)."""
    shape = np.asarray(support.shape)
    scale = float(np.trace(shape) / np.trace(gram))
    return bool(np.max(np.abs(shape - scale * gram)) <= 1e-12 * float(np.max(np.abs(shape))))


def optimal_noise_on_support(query: Query, support: Support, *, rtol: float = 1e-4) -> Mechanism:
    """The noise minimising Tr 𝓘 for a linear query with 2 or 3 outputs, supported on ``support``.

    Parameters
    ----------
    query : LinearQuery
        f(x) = Cx with m = 2 or 3 outputs and full row rank.
    support : Support
        Box, Polygon, Ellipsoid (Ball), Polyhedron or MeshSupport of dimension m.
    rtol : float, default 1e-4
        The relative width of the guaranteed bracket of λ₁ the finite-element solver refines to (a certified
        1e-6 takes minutes in 2-D; in 3-D the bracket stays wider and the solution reports ``converged=False``).

    Returns
    -------
    Mechanism
        RaisedCosine, EllipsoidalNoise or FiniteElementNoise.

    Examples
    --------
    >>> import numpy as np, privnoise as pn
    >>> q = pn.queries.LinearQuery(np.array([[1.0, 0.5], [0.0, 1.0]]))
    >>> W = pn.fisher.Ellipsoid(center=[0, 0], shape=q.gram())
    >>> type(optimal_noise_on_support(q, W)).__name__
    'EllipsoidalNoise'
    """
    gram = query_gram(query, support)
    off_diagonal = np.max(np.abs(gram - np.diag(np.diag(gram))))
    if isinstance(support, Box) and off_diagonal <= 1e-12 * float(np.max(np.abs(gram))):
        return RaisedCosine(lower=np.asarray(support.lower), upper=np.asarray(support.upper))
    if isinstance(support, Ellipsoid) and matched_ellipsoid(support, gram):
        return EllipsoidalNoise(region=support)
    return FiniteElementNoise(solution=solve_dirichlet_eigenproblem(support, gram, rtol=rtol))
