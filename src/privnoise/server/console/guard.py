"""The console's guard (an ASGI middleware in front of every path under ``/console``; SECURITY.md, requirement 18).

For every console request it:

1. adds the security headers (:data:`SECURITY_HEADERS`: a strict Content-Security-Policy with scripts and styles
   from the server's own static files only, no framing, no referrer to other sites (with ``no-referrer`` browsers send
   ``Origin: null`` on form posts), no caching of pages, no MIME sniffing);
2. resolves the session cookie (:mod:`.sessions`) before a byte of the body is read, and hands the session to
   the routes in the request scope (``scope["privnoise.console"]``, None when signed out);
3. for a POST: refuses a cross-site request (an ``Origin`` other than the server's own, or ``Sec-Fetch-Site``
   other than same-origin), a body that is not a URL-encoded form (415), a body larger than the server's
   ``max_body_bytes`` (413, as soon as that is known, never read whole), a form that is not well formed (400) and
   a form whose ``csrf`` field does not match, in constant time, the session's token (or, for sign-in, the
   token of the sign-in form's own cookie): 403. The parsed form goes to the route in ``scope["privnoise.form"]``.

Keys are checked by the API's :class:`~privnoise.server.gate.Authenticator` (the same key cache, scrypt limiter
and failure throttle), called by the sign-in route.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from http.cookies import CookieError, SimpleCookie
from typing import Any
from urllib.parse import parse_qsl

from anyio import to_thread

from ..gate import ASGIApp, Message, Receive, Scope, Send, read_limited, replay, respond
from .sessions import SessionStore

__all__ = [
    "CONTENT_SECURITY_POLICY",
    "FORM_FIELDS",
    "PREFIX",
    "SECURITY_HEADERS",
    "SESSION_COOKIE",
    "SIGN_IN_COOKIE",
    "ConsoleGuard",
    "FormError",
    "parse_form",
]

PREFIX = "/console"
SESSION_COOKIE = "pn_console"
SIGN_IN_COOKIE = "pn_sign_in"
#: At most this many fields in a form (a query form has a few dozen).
FORM_FIELDS = 64
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS: list[tuple[bytes, bytes]] = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=(), interest-cohort=()"),
]
_NO_STORE = (b"cache-control", b"no-store")
_STATIC_CACHE = (b"cache-control", b"private, max-age=3600")


class FormError(ValueError):
    """A request body that is not a well-formed URL-encoded form."""


def parse_form(body: bytes) -> dict[str, str]:
    """A URL-encoded form as {name: value} (UTF-8, at most :data:`FORM_FIELDS` fields, each name once)."""
    try:
        text = body.decode("utf-8")
        pairs = parse_qsl(text, keep_blank_values=True, strict_parsing=bool(text), max_num_fields=FORM_FIELDS)
    except (UnicodeDecodeError, ValueError):
        raise FormError("the form is not well formed") from None
    form: dict[str, str] = {}
    for name, value in pairs:
        if name in form:
            raise FormError(f"the field {name!r} appears twice")
        if any(ch < " " and ch not in "\t\r\n" for ch in value) or "\x7f" in value:
            raise FormError(f"the field {name!r} holds a control character")
        form[name] = value
    return form


def cookies(scope: Scope) -> dict[str, str]:
    """The request's cookies (malformed cookie headers count as none)."""
    out: dict[str, str] = {}
    for name, value in scope["headers"]:
        if name == b"cookie":
            jar: SimpleCookie = SimpleCookie()
            try:
                jar.load(value.decode("latin-1"))
            except CookieError:
                continue
            out.update({k: m.value for k, m in jar.items()})
    return out


def _header(scope: Scope, wanted: bytes) -> str | None:
    for name, value in scope["headers"]:
        if name == wanted:
            return str(value.decode("latin-1"))
    return None


def is_secure(scope: Scope) -> bool:
    """Whether the request came over TLS."""
    return scope.get("scheme") in ("https", "wss")


def origin_of(scope: Scope) -> str:
    host = _header(scope, b"host") or ""
    return f"{scope.get('scheme', 'http')}://{host}"


class ConsoleGuard:
    """The ASGI middleware described in the module docstring; other paths pass through untouched.

    ``refuse(scope, status, message)`` renders the page of a refused request (status, HTML bytes).
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        sessions: SessionStore,
        max_body: int,
        refuse: Callable[[Scope, int, str], tuple[int, bytes]],
    ) -> None:
        self.app = app
        self.sessions = sessions
        self.max_body = max_body
        self.refuse = refuse

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or not (path == PREFIX or path.startswith(PREFIX + "/")):
            await self.app(scope, receive, send)
            return
        static = path.startswith(PREFIX + "/static/")
        send = _secured(send, static=static)
        jar = cookies(scope)
        token = None if static else jar.get(SESSION_COOKIE)  # static files need no session
        session = await to_thread.run_sync(self.sessions.resolve, token) if token else None
        scope["privnoise.console"] = session
        scope["privnoise.cookies"] = jar
        method = scope["method"]
        if method in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        if method != "POST":
            await self._refuse(
                scope, send, 405, "This page answers GET and POST only.", ((b"allow", b"GET, POST"),)
            )
            return
        problem = self._cross_site(scope)
        if problem:
            await self._refuse(scope, send, 403, problem)
            return
        kind = (_header(scope, b"content-type") or "").split(";")[0].strip().lower()
        if kind != "application/x-www-form-urlencoded":
            await self._refuse(scope, send, 415, "The console accepts URL-encoded forms only.")
            return
        length = _header(scope, b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            await self._refuse(scope, send, 413, "The form is too large.")
            return
        body = await read_limited(receive, self.max_body)
        if body is None:
            await self._refuse(scope, send, 413, "The form is too large.")
            return
        try:
            form = parse_form(body)
        except FormError as exc:
            await self._refuse(scope, send, 400, f"The form was refused: {exc}.")
            return
        expected = jar.get(SIGN_IN_COOKIE) if path == PREFIX + "/sign-in" else (session and session.csrf)
        if not expected or not hmac.compare_digest(form.get("csrf", "").encode(), expected.encode()):
            await self._refuse(
                scope, send, 403, "The form's security token is missing or out of date; open the page again."
            )
            return
        scope["privnoise.form"] = form
        await self.app(scope, replay(body, receive), send)

    @staticmethod
    def _cross_site(scope: Scope) -> str | None:
        origin = _header(scope, b"origin")
        if origin is not None and origin != origin_of(scope):
            return "Cross-site form posts are refused."
        site = _header(scope, b"sec-fetch-site")
        if site is not None and site not in ("same-origin", "none"):
            return "Cross-site form posts are refused."
        return None

    async def _refuse(
        self,
        scope: Scope,
        send: Send,
        status: int,
        message: str,
        headers: tuple[tuple[bytes, bytes], ...] = (),
    ) -> None:
        status, page = self.refuse(scope, status, message)
        close = [(b"connection", b"close"), *headers]
        await respond(send, status, page, close, content_type=b"text/html; charset=utf-8")


def _secured(send: Send, *, static: bool) -> Send:
    """``send`` with the security headers added to the response's start."""

    async def secured(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"cache-control"]
            message = dict(message)
            message["headers"] = [*headers, *SECURITY_HEADERS, _STATIC_CACHE if static else _NO_STORE]
        await send(message)

    return secured


def who_of(scope: Scope) -> Any:
    """The session of a request the guard let through (None when signed out)."""
    return scope.get("privnoise.console")
