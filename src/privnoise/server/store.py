"""Owner-side set-up: create the tables, import the datasets, provision queriers and the admin key.

Imports are strict: a NaN or infinite value is rejected with the file, line and column; a value outside the
declared bounds is clamped (``out_of_bounds = "clamp"``) or rejected (``"reject"``); bounds are never inferred.
A dataset with ``engine = "dask"`` is not imported: its files are checked by the same rules when it is first
declared (or re-imported) and read at query time (:mod:`.dask_engine`).
"""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

from sqlalchemy import MetaData, delete, func, insert, inspect, select, update
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError

from ..exceptions import InvalidParameterError
from ..io import read, read_text
from . import db, keys
from .checks import FLOOR_RANGE, checked_float, checked_rational
from .config import DatasetSpec, ServerConfig

__all__ = [
    "DataImportError",
    "create_querier",
    "ensure_admin",
    "init_database",
    "LEDGER_ORDER",
    "LEDGER_OUTCOMES",
    "count_ledger",
    "list_queriers",
    "read_ledger",
    "revoke_querier",
]


class DataImportError(InvalidParameterError):
    """A dataset file cannot be imported (NaN, inf, unparsable value, missing column, out of bounds)."""


def _rows_from_file(spec: DatasetSpec) -> list[dict[str, Any]]:
    """The rows of the dataset file, read by :mod:`privnoise.io` (the library's and the command line's readers:
    byte-order marks, delimiters, NaN, inf and missing values handled alike), then checked against the bounds."""
    assert spec.source is not None
    path = spec.source
    first_line = 1 if path.suffix.lower() == ".parquet" else 2
    try:
        columns = {
            name: read_text(path, name) if col.type == "text" else read(path, name)
            for name, col in spec.columns.items()
        }
    except InvalidParameterError as exc:
        raise DataImportError(str(exc)) from None
    except OSError as exc:
        raise DataImportError(f"{path}: cannot read: {exc.strerror or exc}") from None
    count = len(next(iter(columns.values()))) if columns else 0
    rows: list[dict[str, Any]] = [{"pn_row": i} for i in range(count)]
    for name, col in spec.columns.items():
        values = columns[name]
        if col.type == "text":
            for row, value in zip(rows, values, strict=True):
                row[name] = value
            continue
        assert col.bounds is not None
        lo, hi = col.bounds
        for i, (row, x) in enumerate(zip(rows, values, strict=True)):
            x = float(x)
            if not lo <= x <= hi:
                if col.out_of_bounds == "reject":
                    raise DataImportError(
                        f"{path}: line {i + first_line}, column {name!r}: {x:g} is outside the declared bounds "
                        f"[{lo:g}, {hi:g}] (out_of_bounds = 'reject')."
                    )
                x = min(max(x, lo), hi)
            row[name] = x
    return rows


def _import(conn: Connection, spec: DatasetSpec, *, replace: bool) -> int | None:
    """Import the dataset file (unless its table exists and ``replace`` is false); return its record count."""
    meta = MetaData()
    table = db.data_table(spec.table, {n: c.type for n, c in spec.columns.items()}, meta)
    exists = inspect(conn).has_table(spec.table)
    if exists and not replace:
        return None
    rows = _rows_from_file(spec)  # validated before the table is touched
    if exists:
        table.drop(conn)
    meta.create_all(conn)
    if rows:
        conn.execute(insert(table), rows)
    return len(rows)


def _dask_records(conn: Connection, spec: DatasetSpec, *, check: bool) -> int:
    """The records of a Dask dataset: every value checked when it is new (or ``check``), else from the metadata."""
    from .dask_engine import check_files

    known = conn.execute(select(db.datasets.c.name).where(db.datasets.c.name == spec.name)).first() is not None
    if check or not known:
        return check_files(spec)
    from ..io import dask_parquet

    return int(dask_parquet(str(spec.source)).divisions[-1]) + 1


def _count(conn: Connection, table: str) -> int:
    t = db.data_table(table, {}, MetaData())
    return int(conn.execute(select(func.count()).select_from(t)).scalar_one())


def init_database(config: ServerConfig, *, engine: Engine | None = None, reimport: bool = False) -> Engine:
    """Create the tables, import every ``source`` dataset not yet imported, add missing budget rows."""
    engine = engine or db.make_engine(config.database_url)
    db.metadata.create_all(engine)
    with engine.begin() as conn:
        db.upgrade(conn)
        for spec in config.datasets.values():
            imported = None
            if spec.engine == "dask":  # not imported: its values are checked once, read at query time
                imported = _dask_records(conn, spec, check=reimport)
            elif spec.source is not None:
                imported = _import(conn, spec, replace=reimport)
            elif not inspect(conn).has_table(spec.table):
                raise DataImportError(
                    f"{config.path}: dataset {spec.name!r}: table {spec.table!r} does not exist."
                )
            present = conn.execute(
                select(db.datasets.c.name, db.datasets.c.records).where(db.datasets.c.name == spec.name)
            ).first()
            if present is None:
                conn.execute(
                    insert(db.datasets).values(
                        name=spec.name,
                        spent_epsilon="0",
                        spent_delta="0",
                        fisher_information="{}",
                        records=imported if imported is not None else _count(conn, spec.table),
                    )
                )
            elif imported is not None or present[1] is None or spec.source is None:
                # a re-import (or an owner's table) may change the number of records: running servers see
                # the new count in their next charge transaction and make new plans
                records = imported if imported is not None else _count(conn, spec.table)
                conn.execute(
                    update(db.datasets).where(db.datasets.c.name == spec.name).values(records=records)
                )
        for q in conn.execute(select(db.queriers).where(db.queriers.c.role == "querier")).mappings().all():
            _ensure_budgets(conn, config, q)
    if config.admin_key_hash is not None:
        ensure_admin(engine, config)
    return engine


def _ensure_budgets(conn: Connection, config: ServerConfig, querier: Any) -> None:
    have = {
        r[0]
        for r in conn.execute(select(db.budgets.c.dataset).where(db.budgets.c.querier_id == querier["id"]))
    }
    for name in config.datasets:
        if name not in have:
            conn.execute(
                insert(db.budgets).values(
                    querier_id=querier["id"],
                    dataset=name,
                    epsilon=querier["epsilon"],
                    delta=querier["delta"],
                    fisher_floor=querier["fisher_floor"],
                    spent_epsilon="0",
                    spent_delta="0",
                    fisher_information="{}",
                )
            )


def _text(q: Fraction) -> str:
    return str(q)


def create_querier(
    engine: Engine,
    config: ServerConfig,
    name: str,
    *,
    epsilon: Any,
    delta: Any = 0,
    fisher_floor: float | None = None,
    role: str = "querier",
) -> str:
    """Add a querier (or the admin) and return its API key (shown once; only its hash is stored)."""
    owner = "create_querier"
    if (
        not isinstance(name, str)
        or not name
        or len(name) > 64
        or not name.isascii()
        or not name.replace("-", "").replace("_", "").isalnum()
    ):
        raise InvalidParameterError(
            f"`name` of `{owner}` must be 1–64 letters, digits, - or _; got {name!r}."
        )
    eps = checked_rational(epsilon, "epsilon", owner, kind="admin" if role == "admin" else "epsilon")
    dl = checked_rational(delta, "delta", owner, kind="delta")
    if fisher_floor is not None:
        fisher_floor = checked_float(fisher_floor, "fisher_floor", owner, *FLOOR_RANGE)
        if fisher_floor <= 0:
            raise InvalidParameterError(f"`fisher_floor` of `{owner}` must be > 0; got {fisher_floor!r}.")
    key, key_id, key_hash = keys.new_key()
    try:
        with engine.begin() as conn:
            if conn.execute(select(db.queriers.c.id).where(db.queriers.c.name == name)).first() is not None:
                raise InvalidParameterError(f"querier {name!r} already exists.")
            values = {
                "name": name,
                "role": role,
                "key_id": key_id,
                "key_hash": key_hash,
                "epsilon": _text(eps),
                "delta": _text(dl),
                "fisher_floor": fisher_floor,
                "created_at": db.utcnow(),
            }
            pk = conn.execute(insert(db.queriers).values(**values)).inserted_primary_key
            assert pk is not None
            qid = pk[0]
            if role == "querier":
                _ensure_budgets(conn, config, values | {"id": qid})
    except IntegrityError:  # a concurrent creation of the same name won the race
        raise InvalidParameterError(f"querier {name!r} already exists.") from None
    return key


def ensure_admin(engine: Engine, config: ServerConfig, *, rotate: bool = False) -> str | None:
    """Create the admin key if there is none (or replace it with ``rotate``); return it, else None.

    With ``admin_key_hash`` in the configuration, the admin row takes that key (id and hash) and no key is
    ever made or returned here: the owner holds it.
    """
    configured = keys.parse_admin_key_hash(config.admin_key_hash) if config.admin_key_hash else None
    with engine.begin() as conn:
        row = conn.execute(select(db.queriers.c.id).where(db.queriers.c.role == "admin")).first()
        if configured is not None:
            key_id, key_hash = configured
            if row is not None:
                conn.execute(
                    update(db.queriers)
                    .where(db.queriers.c.id == row[0])
                    .values(key_id=key_id, key_hash=key_hash)
                )
            else:
                conn.execute(
                    insert(db.queriers).values(
                        name="admin",
                        role="admin",
                        key_id=key_id,
                        key_hash=key_hash,
                        epsilon="0",
                        delta="0",
                        fisher_floor=None,
                        created_at=db.utcnow(),
                    )
                )
            return None
        if row is not None and rotate:
            key, key_id, key_hash = keys.new_key()
            conn.execute(
                update(db.queriers).where(db.queriers.c.id == row[0]).values(key_id=key_id, key_hash=key_hash)
            )
            return key
    if row is not None:
        return None
    return create_querier(engine, config, "admin", epsilon=0, role="admin")


def revoke_querier(engine: Engine, name: str) -> str | None:
    """Revoke a querier: its key no longer opens anything and its console sessions end; its budgets and ledger
    rows stay. Return its key id (for the key caches), or None if there is no such querier (or it is the admin).

    The stored hash is replaced by the hash of a secret nobody knows, so a revoked key costs the same scrypt as
    any wrong key. A server process that verified the key recently keeps it for at most ``key_cache_seconds``
    unless it is told (the console forgets it in its own process).
    """
    _, _, unusable = keys.new_key()
    with engine.begin() as conn:
        row = conn.execute(
            select(db.queriers.c.id, db.queriers.c.key_id).where(
                db.queriers.c.name == name, db.queriers.c.role == "querier"
            )
        ).first()
        if row is None:
            return None
        conn.execute(
            update(db.queriers)
            .where(db.queriers.c.id == row[0], db.queriers.c.revoked_at.is_(None))
            .values(key_hash=unusable, revoked_at=db.utcnow())
        )
        conn.execute(delete(db.sessions).where(db.sessions.c.querier_id == row[0]))
    return str(row[1])


def list_queriers(engine: Engine) -> list[dict[str, Any]]:
    with engine.connect() as conn:
        rows = (
            conn.execute(
                select(
                    db.queriers.c.name,
                    db.queriers.c.role,
                    db.queriers.c.epsilon,
                    db.queriers.c.delta,
                    db.queriers.c.fisher_floor,
                    db.queriers.c.created_at,
                    db.queriers.c.revoked_at,
                ).order_by(db.queriers.c.id)
            )
            .mappings()
            .all()
        )
    return [{k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in dict(r).items()} for r in rows]


#: The orders :func:`read_ledger` knows: a column of its rows, and the direction.
LEDGER_ORDER = ("id", "querier", "dataset", "mechanism", "created_at", "status")


#: The outcomes :func:`read_ledger` filters on: a charge (``status`` "charged" or "failed"), or a refusal.
LEDGER_OUTCOMES = ("charged", "refused")


def _ledger_filters(
    stmt: Any, querier: str | None, dataset: str | None, status: str | None, outcome: str | None = None
) -> Any:
    if outcome is not None:
        if outcome not in LEDGER_OUTCOMES:
            raise InvalidParameterError(
                f"`outcome` of the ledger must be one of {', '.join(LEDGER_OUTCOMES)}; got {outcome!r}."
            )
        refused = db.ledger.c.status == "refused"
        stmt = stmt.where(refused if outcome == "refused" else ~refused)
    if querier is not None:
        stmt = stmt.where(db.queriers.c.name == querier)
    if dataset is not None:
        stmt = stmt.where(db.ledger.c.dataset == dataset)
    if status is not None:
        stmt = stmt.where(db.ledger.c.status == status)
    return stmt


def count_ledger(
    engine: Engine,
    *,
    querier: str | None = None,
    dataset: str | None = None,
    status: str | None = None,
    outcome: str | None = None,
) -> int:
    """The number of ledger rows that :func:`read_ledger` filters with the same arguments."""
    stmt = select(func.count()).select_from(
        db.ledger.join(db.queriers, db.queriers.c.id == db.ledger.c.querier_id)
    )
    with engine.connect() as conn:
        return int(conn.execute(_ledger_filters(stmt, querier, dataset, status, outcome)).scalar_one())


def read_ledger(
    engine: Engine,
    *,
    limit: int = 100,
    querier: str | None = None,
    dataset: str | None = None,
    status: str | None = None,
    outcome: str | None = None,
    offset: int = 0,
    order: str = "id",
    descending: bool = True,
) -> list[dict[str, Any]]:
    """Ledger rows (by default the most recent first), filtered by querier name, dataset, status and outcome
    (:data:`LEDGER_OUTCOMES`), ordered by one of :data:`LEDGER_ORDER` (then by id); a ledger row never holds a
    true value. A refused row (``status`` "refused") charged nothing: its ``query`` is the text the querier
    sent (a string, at most 1,000 characters), ``reason`` says why it was refused and ``repeats`` how many
    refusals of that querier it stands for (:mod:`.refusals`); other rows have ``reason`` None and ``repeats`` 1."""
    if order not in LEDGER_ORDER:
        raise InvalidParameterError(
            f"`order` of `read_ledger` must be one of {', '.join(LEDGER_ORDER)}; got {order!r}."
        )
    key = db.queriers.c.name if order == "querier" else db.ledger.c[order]
    stmt = (
        select(
            db.ledger.c.id,
            db.queriers.c.name.label("querier"),
            db.ledger.c.dataset,
            db.ledger.c.query,
            db.ledger.c.mechanism,
            db.ledger.c.epsilon,
            db.ledger.c.delta,
            db.ledger.c.fisher_information,
            db.ledger.c.created_at,
            db.ledger.c.status,
            db.ledger.c.reason,
            db.ledger.c.repeats,
        )
        .join(db.queriers, db.queriers.c.id == db.ledger.c.querier_id)
        .order_by(*((key.desc(), db.ledger.c.id.desc()) if descending else (key.asc(), db.ledger.c.id.asc())))
        .limit(limit)
        .offset(offset)
    )
    stmt = _ledger_filters(stmt, querier, dataset, status, outcome)
    with engine.connect() as conn:
        rows = conn.execute(stmt).mappings().all()
    out = []
    for r in rows:
        d = dict(r)
        d["query"] = json.loads(d["query"])
        d["fisher_information"] = json.loads(d["fisher_information"])
        d["created_at"] = d["created_at"].isoformat()
        out.append(d)
    return out
