"""The steps a session's query families share, declared once: the Session defines them, the classes of its queries
(:mod:`.grouping`, :mod:`.distributions`, :mod:`.conveniences`) inherit the declarations from :class:`SessionSteps`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ..core import Bounds
    from ..planning.plan import Finish, Plan
    from .backend import AggregateRequest, Aggregates, Backend
    from .dry_run import DryRun
    from .estimate import Estimate
    from .ledger import Ledger

__all__ = ["SessionSteps"]


class SessionSteps:
    """The state and steps of :class:`~privnoise.analysis.Session` that its query classes use (declarations only)."""

    privacy_unit: str | None
    max_contributions: int
    _backend: Backend
    _ledger: Ledger
    _generator: np.random.Generator
    _rows_generator: np.random.Generator

    if TYPE_CHECKING:
        def where(self, conditions: Any = None, /, **equalities: Any) -> Any: ...
        def _value_column(self, column: Any, owner: str, dry_run: bool = False) -> str: ...
        def _bounds(self, bounds: Any, owner: str) -> Bounds: ...
        def _plan(self, label: str, epsilon: Any, rho: Any) -> Plan: ...
        def _request(self, kind: Any, column: str | None, bounds: Bounds | None = None,
                     **extra: Any) -> AggregateRequest: ...
        def _run(self, plan: Plan, request: AggregateRequest) -> Aggregates: ...
        def _execute(self, plan: Plan, aggregates: dict[str, Any], query: dict[str, Any], finish: Finish,
                     **fields: Any) -> Estimate: ...
        def _dry_run(self, plan: Plan, query: dict[str, Any], accuracy: Any) -> DryRun: ...
