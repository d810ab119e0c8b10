"""Server-side console sessions: a key is exchanged once for a random session token held in a cookie.

The cookie holds 256 random bits; the database holds only their SHA-256 (a stolen database opens no session),
with the querier, a CSRF token and an absolute expiry. Every request reads the session again, joined with its
querier: signing out, revoking the querier (:func:`privnoise.server.queriers.revoke_querier`) or the expiry ends it
at once, in every server process.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import secrets
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, insert, select
from sqlalchemy.engine import Engine

from .. import db

__all__ = ["Session", "SessionStore"]


@dataclass(frozen=True, slots=True)
class Session:
    """A signed-in user: the querier's (or admin's) identity as the API sees it, and the session's CSRF token."""

    who: dict[str, Any]
    csrf: str

    @property
    def role(self) -> str:
        return str(self.who["role"])


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


class SessionStore:
    """Sessions in ``pn_sessions``: written through ``engine``, read through ``reader``."""

    def __init__(self, engine: Engine, reader: Engine, *, lifetime: _dt.timedelta) -> None:
        self.engine = engine
        self.reader = reader
        self.lifetime = lifetime

    def create(self, querier_id: int) -> str:
        """A new session of the querier; returns the cookie's token (expired sessions are swept on the way)."""
        token = secrets.token_urlsafe(32)
        now = db.utcnow()
        with self.engine.begin() as conn:
            conn.execute(delete(db.sessions).where(db.sessions.c.expires_at < now))
            conn.execute(
                insert(db.sessions).values(
                    token_hash=_digest(token),
                    querier_id=querier_id,
                    csrf=secrets.token_urlsafe(32),
                    expires_at=now + self.lifetime,
                )
            )
        return token

    def resolve(self, token: str | None) -> Session | None:
        """The live session of a cookie's token: unknown, expired and revoked ones give None."""
        if not token or len(token) > 100:
            return None
        q, s = db.queriers, db.sessions
        with self.reader.connect() as conn:
            row = conn.execute(
                select(q.c.id, q.c.name, q.c.role, s.c.csrf, s.c.expires_at)
                .join(q, q.c.id == s.c.querier_id)
                .where(s.c.token_hash == _digest(token), q.c.revoked_at.is_(None))
            ).first()
        if row is None:
            return None
        expires = row.expires_at if row.expires_at.tzinfo else row.expires_at.replace(tzinfo=_dt.UTC)
        if expires <= db.utcnow():
            return None
        return Session({"id": row.id, "name": row.name, "role": row.role}, row.csrf)

    def end(self, token: str | None) -> None:
        """Sign out: the session is deleted."""
        if token:
            with self.engine.begin() as conn:
                conn.execute(delete(db.sessions).where(db.sessions.c.token_hash == _digest(token)))
