"""Signing in and out: a key is exchanged once for a session cookie.

The sign-in form carries a token that must match a cookie set with the form (so that another site cannot sign a
visitor in under its own key). The key goes to the API's :class:`~privnoise.server.gate.Authenticator` with the
client's address: the same key cache, the same scrypt and the same failure throttle as ``Authorization`` headers,
so wrong keys tried through the console count against the address and the key id exactly as through the API. A
good key opens a new session (:mod:`.sessions`); the cookie is ``HttpOnly``, ``SameSite=Strict``, limited to the
console's path, lives ``session_minutes`` and is ``Secure`` when the request came over TLS (or the owner asked for
it). The key itself is never stored, logged, put in a URL or shown again.
"""

from __future__ import annotations

import secrets

from anyio import to_thread
from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from .guard import PREFIX, SESSION_COOKIE, SIGN_IN_COOKIE, is_secure
from .render import page

__all__ = ["router", "set_cookie"]

router = APIRouter(prefix=PREFIX, include_in_schema=False)
_SIGN_IN_SECONDS = 1800


def set_cookie(request: Request, response: Response, name: str, value: str, max_age: int) -> None:
    """A console cookie: HttpOnly, SameSite=Strict, the console's path; Secure over TLS."""
    console = request.app.state.console
    response.set_cookie(
        name,
        value,
        max_age=max_age,
        path=PREFIX,
        httponly=True,
        samesite="strict",
        secure=is_secure(request.scope) or console.config.console.secure_cookies,
    )


def _home(role: str) -> str:
    return f"{PREFIX}/datasets" if role == "admin" else f"{PREFIX}/query"


@router.get("")
@router.get("/")
def home(request: Request) -> Response:
    session = request.scope.get("privnoise.console")
    return RedirectResponse(
        _home(session.role) if session is not None else f"{PREFIX}/sign-in", status_code=303
    )


def _form(request: Request, *, status: int = 200, message: str = "") -> Response:
    token = secrets.token_urlsafe(32)
    response = page(request, "sign_in.html", status=status, csrf=token, message=message)
    set_cookie(request, response, SIGN_IN_COOKIE, token, _SIGN_IN_SECONDS)
    return response


@router.get("/sign-in")
def sign_in_form(request: Request) -> Response:
    return _form(request)


@router.post("/sign-in")
async def sign_in(request: Request) -> Response:
    console = request.app.state.console
    key = request.scope["privnoise.form"].get("key", "").strip()
    try:
        header: bytes | None = b"Bearer " + key.encode("ascii")
    except UnicodeEncodeError:
        header = None  # not a key: a failure like any other wrong key
    client = request.scope.get("client")
    status, who, wait = await console.authenticator.authenticate(header, client[0] if client else "")
    if status == 429:
        return _form(
            request,
            status=429,
            message=f"Too many failed sign-ins from here or for this key; try again in {max(1, round(wait))} s.",
        )
    if status != 200 or who is None:
        return _form(request, status=401, message="That key does not open the console.")
    token = await to_thread.run_sync(console.sessions.create, int(who["id"]))
    response = RedirectResponse(_home(str(who["role"])), status_code=303)
    set_cookie(request, response, SESSION_COOKIE, token, int(console.config.console.session_minutes * 60))
    response.delete_cookie(SIGN_IN_COOKIE, path=PREFIX)
    return response


@router.post("/sign-out")
def sign_out(request: Request) -> Response:
    console = request.app.state.console
    console.sessions.end(request.scope["privnoise.cookies"].get(SESSION_COOKIE))
    response = RedirectResponse(f"{PREFIX}/sign-in", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path=PREFIX)
    return response
