"""The query server's read-only views of what is stored: a querier's budgets, the datasets' global budgets, and a
key's row for the authenticator (:class:`.service.Service` has them; none of them writes or charges)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Engine

from . import db
from .budgets import DatasetState, QuerierState, dataset_view, querier_view
from .config import ServerConfig
from .planner import Plan

__all__ = ["BudgetViews"]


class BudgetViews:
    """The views of :class:`.service.Service`, read through its ``reader`` engine for its ``config``."""

    config: ServerConfig
    reader: Engine

    def budget(self, querier_id: int) -> dict[str, Any]:
        with self.reader.connect() as conn:
            rows = (
                conn.execute(select(db.budgets).where(db.budgets.c.querier_id == querier_id)).mappings().all()
            )
        return {
            r["dataset"]: querier_view(QuerierState.from_row(r), self.config.datasets[r["dataset"]])
            for r in rows
            if r["dataset"] in self.config.datasets
        }

    def view(self, state: QuerierState, plan: Plan) -> dict[str, Any]:
        return querier_view(state, plan.spec)

    def datasets(self) -> dict[str, Any]:
        with self.reader.connect() as conn:
            rows = conn.execute(select(db.datasets)).mappings().all()
        return {
            r["name"]: dataset_view(DatasetState.from_row(r), self.config.datasets[r["name"]])
            for r in rows
            if r["name"] in self.config.datasets
        }

    def lookup_key(self, key_id: str) -> dict[str, Any] | None:
        """The querier (or admin) row of a key id, with its stored hash, for the authenticator."""
        with self.reader.connect() as conn:
            row = (
                conn.execute(
                    select(
                        db.queriers.c.id, db.queriers.c.name, db.queriers.c.role, db.queriers.c.key_hash
                    ).where(db.queriers.c.key_id == key_id)
                )
                .mappings()
                .first()
            )
        return None if row is None else dict(row)
