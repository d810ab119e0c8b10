"""Owner-side set-up: create the tables, import the datasets, provision queriers and the admin key.

Imports are strict: a NaN or infinite value is rejected with the file, line and column; a value outside the
declared bounds is clamped (``out_of_bounds = "clamp"``) or rejected (``"reject"``); bounds are never inferred.
A dataset with ``engine = "dask"`` or ``engine = "spark"`` is not imported: its files are checked by the same rules
when it is first declared (or re-imported) and read at query time (:mod:`.dask_engine`, :mod:`.spark_engine`).

Creating queriers and the admin key is in :mod:`.queriers`, reading the ledger in :mod:`.ledger`, and reading and
checking a dataset file in :mod:`.datafiles`; their names are also exported here.
"""

from __future__ import annotations

from sqlalchemy import MetaData, func, insert, inspect, select, update
from sqlalchemy.engine import Connection, Engine

from . import db
from .config import DatasetSpec, ServerConfig
from .datafiles import DataImportError, rows_from_file
from .ledger import LEDGER_ORDER, LEDGER_OUTCOMES, count_ledger, read_ledger
from .queriers import create_querier, ensure_admin, ensure_budgets, list_queriers, revoke_querier

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


def _import(conn: Connection, spec: DatasetSpec, *, replace: bool) -> int | None:
    """Import the dataset file (unless its table exists and ``replace`` is false); return its record count."""
    meta = MetaData()
    table = db.data_table(spec.table, {n: c.type for n, c in spec.columns.items()}, meta)
    exists = inspect(conn).has_table(spec.table)
    if exists and not replace:
        return None
    rows = rows_from_file(spec)  # validated before the table is touched
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


def _spark_records(conn: Connection, spec: DatasetSpec, *, check: bool) -> int:
    """The records of a Spark dataset: every value checked when it is new (or ``check``), else counted."""
    from .spark_engine import check_files, file_starts, read_files, spark_session

    known = conn.execute(select(db.datasets.c.name).where(db.datasets.c.name == spec.name)).first() is not None
    if check or not known:
        return check_files(spec)
    assert spec.master is not None
    return file_starts(read_files(spark_session(spec.master)[0], spec))[""]


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
            elif spec.engine == "spark":  # the same, on Spark
                imported = _spark_records(conn, spec, check=reimport)
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
            ensure_budgets(conn, config, q)
    if config.admin_key_hash is not None:
        ensure_admin(engine, config)
    return engine

