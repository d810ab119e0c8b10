"""A Python client of the privnoise query server (needs the ``server`` extra: httpx).

>>> from privnoise.client import Client                                   # doctest: +SKIP
>>> with Client("http://127.0.0.1:8000", key) as c:                       # doctest: +SKIP
...     answer = c.query("mean(kwh) where region = 'north'")
...     answer["value"], answer["guarantee"]["epsilon"], c.budget()

:meth:`Client.query` returns the server's JSON answer (``value``, ``keys`` for histograms and group-bys,
``accuracy`` — the 95 % interval or a quantile's rank radius from the noise law, noise only —, ``guarantee``,
``charged``, ``remaining``);
a refusal for budget raises :class:`BudgetRefused`, any other non-2xx answer :class:`ServerError` (among them
429 ``too many failed authentications``, 413 for a body over the server's limit, 503 when a charge could not be
recorded: nothing was charged, try again).
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, Any

from ._optional import require
from .exceptions import BudgetExceededError, PrivnoiseError

if TYPE_CHECKING:
    import httpx
else:
    httpx = require("httpx", feature="privnoise.client")

__all__ = ["BudgetRefused", "Client", "ServerError"]


class ServerError(PrivnoiseError):
    """The server answered with an error status; ``status`` and ``body`` hold what it said."""

    def __init__(self, status: int, body: Any) -> None:
        self.status = status
        self.body = body
        message = body.get("error") if isinstance(body, dict) and "error" in body else body
        super().__init__(f"server answered {status}: {message}")


class BudgetRefused(BudgetExceededError):
    """The server refused a query because it would exceed a budget (HTTP 429); nothing was charged."""

    def __init__(self, body: Any) -> None:
        self.status = 429
        self.body = body
        super().__init__("the query would exceed the privacy budget; nothing was charged.")


class Client:
    """A querier's (or the owner's) connection to a privnoise server, authenticated by an API key.

    Parameters
    ----------
    server : str
        Base URL, e.g. ``"http://127.0.0.1:8000"``.
    key : str
        The API key given by ``privnoise admin add-querier`` (sent as ``Authorization: Bearer``).
    timeout : float
        Seconds per request.
    """

    def __init__(self, server: str, key: str, *, timeout: float = 30.0, transport: Any = None) -> None:
        kwargs: dict[str, Any] = {} if transport is None else {"transport": transport}
        self._http = httpx.Client(
            base_url=server.rstrip("/"),
            headers={"Authorization": f"Bearer {key}"},
            timeout=timeout,
            **kwargs,
        )

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self._http.request(method, path, **kwargs)
        try:
            body = response.json()
        except ValueError:
            body = response.text
        if response.status_code == 429 and isinstance(body, dict) and body.get("error") == "budget exceeded":
            raise BudgetRefused(body)
        if response.status_code >= 400:
            raise ServerError(response.status_code, body)
        return body

    def query(self, query: str | dict[str, Any], *, dataset: str | None = None,
              dry_run: bool = False) -> dict[str, Any]:
        """Ask one query: its text form (``"sum(kwh) where region = 'north'"``), a SQL statement (text that starts
        with ``SELECT``; its ``FROM`` names the dataset) or its JSON form (a dict).

        With ``dry_run=True`` nothing is charged and no data is read: the server says what the query would cost
        (``cost``), the accuracy its answer would state (``accuracy``, from public information only), and whether
        it fits the budget now (``fits``, with ``remaining_after`` or ``refusal``)."""
        if isinstance(query, str):
            sql = query.lstrip()[:6].upper() == "SELECT"
            body: dict[str, Any] = {"sql": query} if sql else {"query": query}
        elif isinstance(query, dict):
            body = dict(query)
        else:
            raise TypeError(f"`query` of `Client.query` must be a str or a dict; got {type(query).__name__}.")
        if dataset is not None:
            body["dataset"] = dataset
        params = {"dry_run": "true"} if dry_run else None
        result: dict[str, Any] = self._call("POST", "/v1/queries", json=body, params=params)
        return result

    def budget(self) -> dict[str, Any]:
        """This querier's budgets, per dataset (spent and remaining, exact rationals as text)."""
        result: dict[str, Any] = self._call("GET", "/v1/budget")
        return result

    def health(self) -> bool:
        return bool(self._http.get("/health").status_code == 200)

    # -- admin (the admin key) -----------------------------------------------------------------------------
    def add_querier(
        self, name: str, *, epsilon: float | str, delta: float | str = 0.0, fisher_floor: float | None = None
    ) -> str:
        """Create a querier (admin key); return its API key."""
        body: dict[str, Any] = {"name": name, "epsilon": epsilon, "delta": delta}
        if fisher_floor is not None:
            body["fisher_floor"] = fisher_floor
        return str(self._call("POST", "/v1/admin/queriers", json=body)["key"])

    def ledger(self, *, limit: int = 100, querier: str | None = None) -> list[dict[str, Any]]:
        params: dict[str, Any] = {"limit": limit} | ({"querier": querier} if querier else {})
        result: list[dict[str, Any]] = self._call("GET", "/v1/admin/ledger", params=params)["ledger"]
        return result

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
