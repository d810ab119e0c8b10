"""The command line's privacy ledger: what the releases from each dataset have spent, kept in one SQLite file.

Identity
    A dataset is ``--dataset NAME`` when given; else the resolved absolute path of the data file (symbolic links
    followed), or the absolute pattern of a directory or glob of Parquet files. The SHA-256 of a regular file is
    stored with every entry: a file whose content changed since its last entry keeps its budget (the same people
    may still be in it) and draws a warning, as does a file whose content is in the ledger under another name.
Budget
    Set at first use: ``--total-epsilon`` (default 1) and ``--total-delta`` (default 1e-6). A different total given
    later is refused; ``privnoise budget set`` changes it, and the change is an entry of its own. Charges compose by
    basic composition in exact rationals (:class:`~privnoise.dp.rational_accountant.RationalAccountant`, approximate
    mode, Dwork & Roth Theorem 3.16): a charge is admitted when Σε ≤ total ε and Σδ ≤ total δ. Fisher-information
    releases (no ε) and sensor streams ((0, δ)-DP of the input law, another neighbouring relation) are entries that
    charge nothing.

Its file (location, format, transactions) is :mod:`.ledger_file`.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from fractions import Fraction
from typing import Any

from .errors import CliInputError
from .ledger_file import ENVIRONMENT, LedgerFile, default_path
from .ledger_values import (
    DEFAULT_TOTAL_DELTA,
    DEFAULT_TOTAL_EPSILON,
    Dataset,
    Entry,
    LedgerRefusal,
    Status,
    admits,
    amount,
    read_fraction,
    read_information,
    spent_by,
)

__all__ = ["ENVIRONMENT", "Ledger", "LedgerRefusal", "default_path"]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Ledger(LedgerFile):
    """The ledger file at ``path`` (:class:`~.ledger_file.LedgerFile`, which also finds it): each dataset's status,
    its charges and records, and changes of its totals; ``option`` names where the path came from, for messages.
    """

    # -- reading -----------------------------------------------------------------------------------------------
    @staticmethod
    def _entries(conn: sqlite3.Connection, name: str) -> tuple[Entry, ...]:
        rows = conn.execute(
            "SELECT id, time, kind, command, query, epsilon, delta, information, sha256, details "
            "FROM entries WHERE dataset = ? ORDER BY id",
            (name,),
        ).fetchall()
        entries = []
        for key, time, kind, command, query, epsilon, delta, info, sha, details in rows:
            exact = read_fraction(epsilon), read_fraction(delta), read_information(info)
            entries.append(Entry(key, time, kind, command, query, *exact, sha, json.loads(details)))
        return tuple(entries)

    def _status(self, conn: sqlite3.Connection, name: str) -> Status | None:
        row = conn.execute(
            "SELECT identity, created, total_epsilon, total_delta FROM datasets WHERE name = ?", (name,)
        ).fetchone()
        if row is None:
            return None
        entries = self._entries(conn, name)
        sha = next((e.sha256 for e in reversed(entries) if e.sha256 is not None), None)
        return Status(
            Dataset(name, row[0], sha),
            row[1],
            (Fraction(row[2]), Fraction(row[3])),
            spent_by(entries),
            entries,
        )

    def status(self, name: str) -> Status | None:
        """The budget of dataset ``name``, or None when the ledger has no entry for it."""
        if not self.path.exists():
            return None
        with self._connection(write=False) as conn:
            return self._status(conn, name)

    def statuses(self) -> list[Status]:
        """Every dataset in the ledger, by name."""
        if not self.path.exists():
            return []
        with self._connection(write=False) as conn:
            names = [r[0] for r in conn.execute("SELECT name FROM datasets ORDER BY name")]
            return [s for name in names if (s := self._status(conn, name)) is not None]

    # -- writing -----------------------------------------------------------------------------------------------
    def _open_dataset(
        self,
        conn: sqlite3.Connection,
        dataset: Dataset,
        totals: tuple[Fraction | None, Fraction | None],
        now: str,
        command: str,
    ) -> Status:
        """The dataset's status, created with ``totals`` (or the defaults) at its first use; a total that differs
        from the recorded one is refused."""
        status = self._status(conn, dataset.name)
        if status is None:
            total = (
                DEFAULT_TOTAL_EPSILON if totals[0] is None else totals[0],
                DEFAULT_TOTAL_DELTA if totals[1] is None else totals[1],
            )
            conn.execute(
                "INSERT INTO datasets (name, identity, created, total_epsilon, total_delta) VALUES (?, ?, ?, ?, ?)",
                (dataset.name, dataset.identity, now, str(total[0]), str(total[1])),
            )
            self._insert(conn, dataset, now, "total", command, "total set at first use", epsilon=total[0], delta=total[1],
                         details={"given": [t is not None for t in totals]})  # fmt: skip
            status = self._status(conn, dataset.name)
            assert status is not None
            return status
        for given, recorded, option, letter in zip(
            totals, status.total, ("--total-epsilon", "--total-delta"), ("ε", "δ"), strict=True
        ):
            if given is not None and given != recorded:
                raise CliInputError(
                    f"{option} {amount(given)} differs from the recorded total {letter} = {amount(recorded)} of "
                    f"dataset {dataset.name!r} (a total is set at first use); change it with privnoise budget set "
                    f"{dataset.reference} {option} {given}, or leave {option} out."
                )
        return status

    @staticmethod
    def _insert(
        conn: sqlite3.Connection,
        dataset: Dataset,
        now: str,
        kind: str,
        command: str,
        query: str,
        *,
        epsilon: Fraction | None = None,
        delta: Fraction | None = None,
        information: Fraction | float | None = None,
        details: dict[str, Any] | None = None,
    ) -> int:
        info = (
            None if information is None else ("inf" if isinstance(information, float) else str(information))
        )
        cursor = conn.execute(
            "INSERT INTO entries (dataset, time, kind, command, query, epsilon, delta, information, sha256, details) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (dataset.name, now, kind, command, query, None if epsilon is None else str(epsilon),
             None if delta is None else str(delta), info, dataset.sha256,
             json.dumps(details or {}, ensure_ascii=False, sort_keys=True)),
        )  # fmt: skip
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    @staticmethod
    def _warnings(conn: sqlite3.Connection, dataset: Dataset, status: Status) -> list[str]:
        """What the user should know about the content of the data (said after the entry is committed)."""
        if dataset.sha256 is None:
            return []
        out = []
        if status.dataset.sha256 is not None and status.dataset.sha256 != dataset.sha256:
            out.append(
                f"the content of dataset {dataset.name!r} changed since its last ledger entry; its budget still "
                f"applies (the same people may be in it). Name a different dataset with --dataset NAME."
            )
        others = [r[0] for r in conn.execute(
            "SELECT DISTINCT dataset FROM entries WHERE sha256 = ? AND dataset != ? ORDER BY dataset",
            (dataset.sha256, dataset.name),
        )]  # fmt: skip
        if others:
            out.append(
                f"the same content is in the ledger as dataset {others[0]!r}: its releases spend a budget of "
                f"their own; --dataset {others[0]!r} charges that one."
            )
        return out

    def charge(
        self,
        dataset: Dataset,
        *,
        command: str,
        query: str,
        epsilon: Fraction,
        delta: Fraction,
        totals: tuple[Fraction | None, Fraction | None] = (None, None),
        details: dict[str, Any] | None = None,
    ) -> tuple[Status, list[str]]:
        """Charge (ε, δ) to ``dataset`` and commit, or raise :class:`LedgerRefusal` (nothing written).

        Returns the status after the charge and the warnings to show once the charge is committed.
        """
        now = _now()
        with self._connection(write=True) as conn:
            status = self._open_dataset(conn, dataset, totals, now, command)
            if not admits(status.total, status.spent, (epsilon, delta)):
                (se, sd), (re, rd) = status.spent, status.remaining
                raise LedgerRefusal(
                    f"{command} refused: it asks ε = {amount(epsilon)}, δ = {amount(delta)} of dataset "
                    f"{dataset.name!r}, which has spent ε = {amount(se)}, δ = {amount(sd)} of its total "
                    f"ε = {amount(status.total[0])}, δ = {amount(status.total[1])} (remaining ε = {amount(re)}, "
                    f"δ = {amount(rd)}); see privnoise budget {dataset.reference}, raise it with privnoise budget "
                    f"set {dataset.reference} --total-epsilon E [--total-delta D]."
                )
            warnings = self._warnings(conn, dataset, status)
            self._insert(
                conn, dataset, now, "dp", command, query, epsilon=epsilon, delta=delta, details=details
            )
            after = self._status(conn, dataset.name)
        assert after is not None
        return after, warnings

    def record(
        self,
        dataset: Dataset,
        *,
        kind: str,
        command: str,
        query: str,
        information: Fraction | float | None = None,
        totals: tuple[Fraction | None, Fraction | None] = (None, None),
        details: dict[str, Any] | None = None,
    ) -> tuple[int, Status, list[str]]:
        """Record a release that charges no (ε, δ) (``kind`` "fisher" or "input-law"); return its entry id."""
        now = _now()
        with self._connection(write=True) as conn:
            status = self._open_dataset(conn, dataset, totals, now, command)
            warnings = self._warnings(conn, dataset, status)
            entry = self._insert(
                conn, dataset, now, kind, command, query, information=information, details=details
            )
            after = self._status(conn, dataset.name)
        assert after is not None
        return entry, after, warnings

    def add_details(self, entry: int, details: dict[str, Any]) -> None:
        """Add ``details`` to entry ``entry`` (what a stream learns once it has run: how many readings)."""
        with self._connection(write=True) as conn:
            row = conn.execute("SELECT details FROM entries WHERE id = ?", (entry,)).fetchone()
            if row is not None:
                merged = json.loads(row[0]) | details
                conn.execute(
                    "UPDATE entries SET details = ? WHERE id = ?", (json.dumps(merged, sort_keys=True), entry)
                )

    def set_totals(
        self,
        dataset: Dataset,
        totals: tuple[Fraction | None, Fraction | None],
        *,
        command: str = "privnoise budget set",
    ) -> Status:
        """Set the total (ε, δ) of ``dataset`` (created if new); the change is recorded as an entry."""
        now = _now()
        with self._connection(write=True) as conn:
            status = self._status(conn, dataset.name)
            if status is None:
                return self._open_dataset(conn, dataset, totals, now, command)
            new = (
                status.total[0] if totals[0] is None else totals[0],
                status.total[1] if totals[1] is None else totals[1],
            )
            conn.execute(
                "UPDATE datasets SET total_epsilon = ?, total_delta = ? WHERE name = ?",
                (str(new[0]), str(new[1]), dataset.name),
            )
            self._insert(conn, dataset, now, "total", command, "total set", epsilon=new[0], delta=new[1],
                         details={"previous": {"epsilon": str(status.total[0]), "delta": str(status.total[1])}})  # fmt: skip
            after = self._status(conn, dataset.name)
        assert after is not None
        return after
