"""Analyst releases: one call per statistic, with privacy units, budgets, group-by and accuracy.

:class:`Session` (also ``pn.Session``)
    Data (pandas/polars frames, Arrow tables, CSV/Parquet paths, mappings of columns), a privacy unit and a cap on its
    rows, a budget and an accountant; queries ``count``, ``sum``, ``mean``, ``variance``, ``histogram``,
    ``quantile``, ``top_k`` and ``group_by(...).count/sum/mean`` (one key column or several); ``where(...)``
    (filtered views); ``remaining()``.
:class:`Estimate`
    What a query returns: value, guarantee, ``accuracy(alpha)``, ``confidence_interval(level)``.
:class:`Backend`, :class:`InMemoryBackend`, :class:`AggregateRequest`, :class:`Aggregates`
    The aggregation interface a session computes through (another engine implements ``aggregate``).

Modules: :mod:`~privnoise.analysis.plans` (sensitivities and budget splits), :mod:`~privnoise.analysis.ledger`
(accountants), :mod:`~privnoise.analysis.accuracy` (intervals from the noise law),
:mod:`~privnoise.analysis.quantiles` (the exponential mechanism on a grid), :mod:`~privnoise.analysis.backend`,
:mod:`~privnoise.analysis.filters` (filters), :mod:`~privnoise.analysis.grouping` (group-by keys).
"""

from .backend import AggregateRequest, Aggregates, Backend, InMemoryBackend, bound_contributions
from .estimate import ConcentratedGuarantee, Estimate
from .ledger import ACCOUNTANTS, Remaining
from .session import GroupBy, Session

__all__ = [
    "ACCOUNTANTS",
    "AggregateRequest",
    "Aggregates",
    "Backend",
    "ConcentratedGuarantee",
    "Estimate",
    "GroupBy",
    "InMemoryBackend",
    "Remaining",
    "Session",
    "bound_contributions",
]
