"""Queries a trusted server answers: f(x) with its Jacobian F(x) and the bounds the data owner declares.

A query knows nothing of mechanisms. It evaluates ``f(x)`` for a database ``x ∈ ℝⁿ``, gives the Jacobian
``F(x)`` the Fisher information needs (Farokhi & Sandberg, Theorem 2), and carries the owner's declared bounds on
each record, which are never inferred from the data (SECURITY.md, requirement 6).

Modules: :mod:`~privnoise.queries.base` (:class:`Query`, the interface, and :class:`Bounds`),
:mod:`~privnoise.queries.linear_query` (:class:`LinearQuery`, f(x) = Cx), :mod:`~privnoise.queries.function_query`
(:class:`FunctionQuery`, a differentiable f) and :mod:`~privnoise.queries.factories` (:func:`mean`, :func:`sum`,
:func:`variance`, :func:`identity`, …); every name is importable from :mod:`privnoise.queries` itself.

Examples
--------
>>> import numpy as np
>>> from privnoise import queries
>>> q = queries.mean(4)
>>> q(np.array([1.0, 2.0, 3.0, 4.0]))
2.5
>>> v = queries.variance(3, bounds=(0.0, 1.0))
>>> round(v(np.array([0.0, 0.5, 1.0])), 12)
0.25
"""

from __future__ import annotations

from . import factories
from .base import Bounds, Query
from .base import SensitivityNorm as SensitivityNorm
from .factories import diagonal as diagonal
from .factories import identity as identity
from .factories import linear as linear
from .factories import mean as mean
from .factories import sum as sum
from .factories import sum_query as sum_query
from .factories import variance as variance
from .factories import weighted_mean as weighted_mean
from .factories import weighted_sum as weighted_sum
from .function_query import FunctionQuery
from .linear_query import LinearQuery

__all__ = ["Bounds", "FunctionQuery", "LinearQuery", "Query"]
# every factory, named once in its module (BoundsLike, the alias their annotations use, stays there)
__all__ += [name for name in factories.__all__ if name != "BoundsLike"]
