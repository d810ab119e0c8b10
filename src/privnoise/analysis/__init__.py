"""Analyst releases: one call per statistic, with privacy units, budgets, group-by and accuracy.

:class:`Session` (also ``pn.Session``)
    Data (pandas/polars frames, Arrow tables, CSV/Parquet paths, mappings of columns), a privacy unit and a cap on its
    rows, a budget and an accountant; queries ``count``, ``sum``, ``mean``, ``variance``, ``histogram``,
    ``quantile``, ``top_k`` and ``group_by(...).count/sum/mean`` (one key column or several); ``where(...)``
    (filtered views); ``clamped_count`` (how many values the bounds clamp, privately); ``remaining()``.
:class:`Estimate`
    What a query returns: value, guarantee, ``accuracy(alpha)``, ``confidence_interval(level)``.
:class:`DryRun`, :class:`StatementDryRun`
    What a query (``dry_run=True``) or a SQL statement would be charged and its expected accuracy, from public
    information only; :class:`SchemaBackend` holds the columns' names and kinds only, for dry runs.
:class:`Backend`, :class:`InMemoryBackend`, :class:`AggregateRequest`, :class:`Aggregates`
    The aggregation interface a session computes through (another engine implements ``aggregate``).

Modules: :mod:`~privnoise.planning.plan` (sensitivities and budget splits), :mod:`~privnoise.analysis.ledger`
(accountants), :mod:`~privnoise.planning.accuracy` (intervals from the noise law),
:mod:`~privnoise.analysis.quantiles` (the exponential mechanism on a grid), :mod:`~privnoise.analysis.backend`,
:mod:`~privnoise.analysis.filters` (filters), :mod:`~privnoise.analysis.grouping` (group-by keys),
:mod:`~privnoise.analysis.dry_run` (cost and accuracy before spending).
"""

from .backend import (
    AggregateRequest,
    Aggregates,
    Backend,
    InMemoryBackend,
    SchemaBackend,
    bound_contributions,
)
from .dry_run import DryRun, StatementDryRun
from .estimate import ConcentratedGuarantee, Estimate
from .ledger import ACCOUNTANTS, Remaining
from .session import GroupBy, Session

__all__ = [
    "ACCOUNTANTS",
    "AggregateRequest",
    "Aggregates",
    "Backend",
    "ConcentratedGuarantee",
    "DryRun",
    "Estimate",
    "GroupBy",
    "InMemoryBackend",
    "Remaining",
    "SchemaBackend",
    "Session",
    "StatementDryRun",
    "bound_contributions",
]
