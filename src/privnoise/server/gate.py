"""The gate in front of the API (an ASGI middleware): authentication before the body, bounded strict bodies.

For every request but ``GET /health`` (and the API description when the owner switched it on, and the paths under
``open_prefixes``: the web console, which authenticates by session cookie with its own guard in
:mod:`.console.guard`, using the same :class:`Authenticator`, body limit and reader):

1. The ``Authorization: Bearer <key>`` header is checked before a byte of the body is read: a cached key costs
   one HMAC (:class:`~.keys.KeyCache`); otherwise one scrypt, at most ``concurrent`` at a time, unless the
   client address or the key id has failed too often recently (:class:`~.throttle.FailureThrottle`): then the
   request waits a tarpit delay and gets 429 without any verification. A missing or wrong key gets 401
   ``{"error": "unauthorized"}``, the same bytes whether or not the querier exists.
2. A body announced or found larger than ``max_body_bytes`` gets 413 as soon as that is known (from
   ``Content-Length``, or while it streams in); it is never read whole.
3. A non-empty body must be strict JSON (RFC 8259: no NaN, no Infinity, no number beyond the doubles, no lone
   surrogate): anything else gets 400. The parsed value is handed to the application with the request.

The verified identity is put in the request scope (``scope["privnoise.who"]``); the parsed body in
``scope["privnoise.json"]``. Responses of the gate close the connection when a body was left unread. The hot
path (``POST /v1/queries``) is answered by the gate itself (``routes``), without the framework's routing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import orjson
from anyio import CapacityLimiter, to_thread

from . import keys
from .throttle import FailureThrottle

__all__ = ["Authenticator", "Gate", "read_limited", "replay", "respond"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
#: A route the gate answers itself: (identity, body bytes, parsed JSON, query string) → (status, body, headers).
Route = Callable[[dict[str, Any], bytes, Any, bytes], Awaitable[tuple[int, bytes, list[tuple[bytes, bytes]]]]]

UNAUTHORIZED = orjson.dumps({"error": "unauthorized"})
THROTTLED = orjson.dumps({"error": "too many failed authentications; try again later"})
TOO_LARGE = orjson.dumps({"error": "request body too large"})
_MAX_HEADER = 300


class Authenticator:
    """Verifies ``Authorization`` headers: the key cache first, then (throttled) scrypt against the database.

    ``lookup(key_id)`` returns the querier's row (a dict with ``key_hash``) or None; it runs in a worker thread
    together with the scrypt.
    """

    def __init__(
        self,
        lookup: Callable[[str], dict[str, Any] | None],
        *,
        cache: keys.KeyCache,
        throttle: FailureThrottle,
        tarpit: float,
        concurrent: int = 1,
    ) -> None:
        self.lookup = lookup
        self.cache = cache
        self.throttle = throttle
        self.tarpit = tarpit
        self.concurrent = concurrent
        self._limiters: dict[int, CapacityLimiter] = {}
        self._flights: dict[tuple[str, str], asyncio.Future[tuple[int, dict[str, Any] | None, float]]] = {}

    def _limiter(self) -> CapacityLimiter:
        """The limiter of scrypts of the running event loop (a test may run the app on several loops)."""
        loop = id(asyncio.get_running_loop())
        limiter = self._limiters.get(loop)
        if limiter is None:
            self._limiters = {loop: (limiter := CapacityLimiter(self.concurrent))}
        return limiter

    def _verify(self, key_id: str, secret: str) -> dict[str, Any] | None:
        row = self.lookup(key_id)
        ok = keys.verify_secret(secret, row["key_hash"] if row is not None else None)
        if not ok or row is None:
            return None
        return {k: v for k, v in row.items() if k != "key_hash"}

    async def authenticate(
        self, header: bytes | None, address: str
    ) -> tuple[int, dict[str, Any] | None, float]:
        """(200, identity, 0), (401, None, 0) or (429, None, retry after)."""
        parts = None
        if header is not None and len(header) <= _MAX_HEADER:
            value = header.decode("latin-1")
            if value.startswith("Bearer "):
                parts = keys.split_key(value[7:].strip())
        if parts is not None:
            who = self.cache.get(*parts)
            if who is not None:
                return 200, who, 0.0
        key_id = parts[0] if parts is not None else None
        if parts is not None:
            # one scrypt per key at a time: concurrent first requests with the same key wait for its outcome
            flight = self._flights.get(parts)
            if flight is not None:  # the same key and secret: the same outcome
                outcome = await asyncio.shield(flight)
                if outcome[0] == 401:
                    self.throttle.failed(address, key_id)
                return outcome
            else:
                flight = self._flights[parts] = asyncio.get_running_loop().create_future()
                try:
                    outcome = await self._verified(parts, address)
                    flight.set_result(outcome)
                    return outcome
                except BaseException as exc:
                    flight.set_exception(exc)
                    flight.exception()  # retrieved: no "never retrieved" warning when nobody waited
                    raise
                finally:
                    del self._flights[parts]
        return await self._verified(None, address)

    async def _verified(
        self, parts: tuple[str, str] | None, address: str
    ) -> tuple[int, dict[str, Any] | None, float]:
        """Throttle, then one scrypt (at most ``concurrent`` at a time)."""
        key_id = parts[0] if parts is not None else None
        who = None
        async with self._limiter():
            # checked again once a scrypt slot is free: failures counted meanwhile throttle the waiting ones too
            wait = self.throttle.retry_after(address, key_id)
            if wait == 0 and parts is not None:
                who = await to_thread.run_sync(self._verify, *parts)
        if wait > 0:
            await asyncio.sleep(min(self.tarpit, wait))
            return 429, None, wait
        if who is None:
            self.throttle.failed(address, key_id)
            return 401, None, 0.0
        assert parts is not None
        self.cache.put(*parts, who)
        return 200, who, 0.0


async def respond(
    send: Send,
    status: int,
    body: bytes,
    headers: list[tuple[bytes, bytes]],
    content_type: bytes = b"application/json",
) -> None:
    """Send a whole response (the gate's own answers, the console guard's refusals)."""
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", content_type),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class Gate:
    """The ASGI middleware described in the module docstring."""

    def __init__(
        self,
        app: ASGIApp,
        authenticator: Authenticator,
        *,
        max_body: int,
        open_paths: frozenset[str],
        routes: dict[tuple[str, str], Route] | None = None,
        open_prefixes: tuple[str, ...] = (),
    ) -> None:
        self.app = app
        self.authenticator = authenticator
        self.max_body = max_body
        self.open_paths = open_paths
        self.open_prefixes = open_prefixes
        self.routes = routes or {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["path"] in self.open_paths
            or (self.open_prefixes and scope["path"].startswith(self.open_prefixes))
        ):
            await self.app(scope, receive, send)
            return
        authorization = length = None
        for name, value in scope["headers"]:
            if name == b"authorization":
                authorization = value
            elif name == b"content-length":
                length = value
        has_body = length not in (None, b"0") or any(n == b"transfer-encoding" for n, _ in scope["headers"])
        close = [(b"connection", b"close")] if has_body else []
        client = scope.get("client")
        status, who, wait = await self.authenticator.authenticate(authorization, client[0] if client else "")
        if status == 401:
            await respond(send, 401, UNAUTHORIZED, [(b"www-authenticate", b"Bearer"), *close])
            return
        if status == 429:
            await respond(send, 429, THROTTLED, [(b"retry-after", str(max(1, round(wait))).encode()), *close])
            return
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            await respond(send, 413, TOO_LARGE, [(b"connection", b"close")])
            return
        body = await read_limited(receive, self.max_body) if has_body else b""
        if body is None:
            await respond(send, 413, TOO_LARGE, [(b"connection", b"close")])
            return
        parsed: Any = None
        if body:
            try:
                parsed = orjson.loads(body)
            except orjson.JSONDecodeError as exc:
                detail = orjson.dumps({"error": f"the body is not strict JSON (RFC 8259): {exc}"})
                await respond(send, 400, detail, [])
                return
        route = self.routes.get((scope["method"], scope["path"]))
        assert who is not None
        if route is not None:  # the hot path: answered here, without the framework's routing
            status, content, headers = await route(who, body, parsed, scope.get("query_string", b""))
            headers.append((b"content-length", str(len(content)).encode()))
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": content})
            return
        scope["privnoise.who"] = who
        scope["privnoise.json"] = parsed
        await self.app(scope, replay(body, receive), send)


async def read_limited(receive: Receive, limit: int) -> bytes | None:
    """The whole body, or None as soon as it exceeds ``limit`` bytes (the rest is never read)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives ``body`` (already read) once, then the connection's own messages."""
    sent = False

    async def again() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return again
