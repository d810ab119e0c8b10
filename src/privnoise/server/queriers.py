"""The queriers and the admin: their creation with an API key (shown once), their budget rows on every dataset,
the admin key (made, rotated or taken from the configuration), revocation and the list of queriers.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from sqlalchemy import delete, insert, select, update
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError

from ..exceptions import InvalidParameterError
from . import db, keys
from .checks import FLOOR_RANGE, checked_float, checked_rational
from .settings import ServerConfig

__all__ = ["create_querier", "ensure_admin", "ensure_budgets", "list_queriers", "revoke_querier"]


def ensure_budgets(conn: Connection, config: ServerConfig, querier: Any) -> None:
    """Add a budget row of ``querier`` (its own ε, δ and Fisher floor) on every dataset of ``config`` it has none on."""
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
                ensure_budgets(conn, config, values | {"id": qid})
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


#: The columns of a querier's row that :func:`list_queriers` returns.
_LISTED_COLUMNS = ("name", "role", "epsilon", "delta", "fisher_floor", "created_at", "revoked_at")


def list_queriers(engine: Engine) -> list[dict[str, Any]]:
    stmt = select(*db.columns(db.queriers, *_LISTED_COLUMNS)).order_by(db.queriers.c.id)
    with engine.connect() as conn:
        rows = conn.execute(stmt).mappings().all()
    return [{k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in dict(r).items()} for r in rows]

