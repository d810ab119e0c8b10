"""``privnoise serve``, ``privnoise admin ...`` and ``privnoise query``: the trusted query server from the shell.

::

    privnoise admin init --config owner.toml                 # tables, data import, the admin key (printed once)
    privnoise admin add-querier alice --config owner.toml --epsilon 1.0 --delta 1e-6 --fisher-floor 0.5
    privnoise serve --config owner.toml                      # embedded SQLite next to the config, port 8000
    privnoise query --server http://127.0.0.1:8000 --key $KEY "mean(kwh) where region = 'north'"

Errors print one red line on stderr and exit with status 2. The server extra (FastAPI, uvicorn, SQLAlchemy,
httpx; psycopg for PostgreSQL: the postgres extra) is imported only when one of these commands runs, and a
missing one is named with its ``pip install`` line before anything is written. Logs go to stderr: ``serve
--log-level`` sets the server's level (default from ``-v``/``-q``: warning), ``--access-log`` adds one line per
request.
"""

from __future__ import annotations

import functools
import json
import logging
import sys
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from .._optional import check
from .errors import errors_exit_2, verbosity
from .errors import fail as _fail
from .logs import library_level

if TYPE_CHECKING:
    pass

__all__ = ["register"]

F = TypeVar("F", bound=Callable[..., Any])
ConfigOption = Annotated[Path, typer.Option("--config", help="The owner's configuration (owner.toml).")]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]


class LogLevel(StrEnum):
    critical = "critical"
    error = "error"
    warning = "warning"
    info = "info"
    debug = "debug"


def _errors_exit_2(func: F) -> F:
    """:func:`errors_exit_2`, plus database/HTTP errors as one line."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except Exception as exc:  # database and HTTP errors: one line, no traceback
            if type(exc).__module__.split(".")[0] in ("sqlalchemy", "httpx", "psycopg"):
                first = str(exc).splitlines()[0] if str(exc) else repr(exc)
                raise _fail(f"{type(exc).__name__}: {first}") from None
            raise

    return errors_exit_2(wrapper)  # type: ignore[return-value]


def _json(payload: Any) -> None:
    sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")


def _require_server(command: str) -> None:
    check("fastapi", "uvicorn", "sqlalchemy", feature=f"privnoise {command}", extra="server")


def _load(config_path: Path, command: str) -> Any:
    """The owner's configuration, once the extras it needs (server; postgres for a PostgreSQL URL) are there."""
    _require_server(command)
    from ..io.limits import read_text_file
    from ..server.config import load_config
    from .inputs import reading

    read_text_file(config_path, "configuration")  # size, encoding, a directory or a loop: one line, before TOML
    with reading(config_path):
        config = load_config(config_path)
    if str(config.database_url).startswith("postgresql"):
        check("psycopg", feature=f"privnoise {command} with a PostgreSQL database", extra="postgres")
    return config


def _setup(config_path: Path, command: str) -> tuple[Any, Any]:
    config = _load(config_path, command)
    from ..server import store

    return config, store.init_database(config)


def serve(
    config: ConfigOption,
    host: Annotated[
        str | None, typer.Option("--host", help="Listen address (default from the config).")
    ] = None,
    port: Annotated[int | None, typer.Option("--port", min=0, max=65535, help="Port (default 8000).")] = None,
    log_level: Annotated[
        LogLevel | None,
        typer.Option("--log-level", help="The server's log level on stderr (default: warning; -v: info)."),
    ] = None,
    access_log: Annotated[
        bool, typer.Option("--access-log", help="Log one line per request (method, path, status) on stderr.")
    ] = False,
) -> None:
    """Run the query server (FastAPI + uvicorn) for the datasets of owner.toml."""
    from rich.console import Console
    from rich.markup import escape

    cfg, engine = _setup(config, "serve")
    from ..server import store
    from ..server.run import serve as run_server

    admin_key = store.ensure_admin(engine, cfg)
    engine.dispose()
    out = Console(highlight=False, soft_wrap=True)
    if admin_key is not None:
        out.print(f"admin key (shown once, store it): [bold]{admin_key}[/bold]")
    h, p = host or cfg.host, cfg.port if port is None else port
    out.print(
        f"privnoise server on http://{h}:{p} (database {escape(_safe_url(cfg.database_url))}); Ctrl-C stops"
    )
    if log_level is None:
        level = logging.getLevelName(library_level(verbosity())).lower()
    else:
        level = log_level.value
    logging.getLogger("privnoise.server").setLevel(level.upper())
    # log_config=None: uvicorn keeps the command's stderr handler (its own default config logs access to stdout)
    run_server(cfg, host=h, port=p, log_level=level, access_log=access_log, log_config=None)


def _safe_url(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


admin_app = typer.Typer(
    help="Owner commands: set up the database, add queriers, read the ledger.",
    no_args_is_help=True,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)


@admin_app.command("init")
@_errors_exit_2
def admin_init(
    config: ConfigOption,
    reimport: Annotated[bool, typer.Option("--reimport", help="Import the dataset files again.")] = False,
    rotate_admin_key: Annotated[
        bool, typer.Option("--rotate-admin-key", help="Replace the admin key.")
    ] = False,
) -> None:
    """Create the tables, import the datasets (NaN rejected, bounds applied) and print a new admin key."""
    from rich.console import Console
    from rich.markup import escape

    cfg = _load(config, "admin init")
    from ..server import store

    engine = store.init_database(cfg, reimport=reimport)
    key = store.ensure_admin(engine, cfg, rotate=rotate_admin_key)
    out = Console(highlight=False, soft_wrap=True)
    out.print(f"database ready: {escape(_safe_url(cfg.database_url))}; datasets: {', '.join(cfg.datasets)}")
    if key is not None:
        out.print(f"admin key (shown once, store it): [bold]{key}[/bold]")
    else:
        out.print("an admin key exists already (use --rotate-admin-key to replace it)")


@admin_app.command("add-querier")
@_errors_exit_2
def admin_add_querier(
    name: Annotated[str, typer.Argument(help="The querier's name.")],
    config: ConfigOption,
    epsilon: Annotated[str, typer.Option("--epsilon", help="ε budget on each dataset (e.g. 1.0 or 1/2).")],
    delta: Annotated[str, typer.Option("--delta", help="δ budget on each dataset.")] = "0",
    fisher_floor: Annotated[
        float | None,
        typer.Option(
            "--fisher-floor",
            "--fisher-budget",
            help="Smallest Cramér–Rao bound (variance) any record may reach (default: each column's floor).",
        ),
    ] = None,
) -> None:
    """Add a querier with its budgets and print its API key (shown once; only a hash is stored)."""
    from rich.console import Console
    from rich.markup import escape

    from ..server import store

    cfg, engine = _setup(config, "admin add-querier")
    key = store.create_querier(engine, cfg, name, epsilon=epsilon, delta=delta, fisher_floor=fisher_floor)
    Console(highlight=False, soft_wrap=True).print(
        f"API key of {escape(name)} (shown once): [bold]{key}[/bold]"
    )


@admin_app.command("list-queriers")
@_errors_exit_2
def admin_list_queriers(config: ConfigOption, as_json: AsJson = False) -> None:
    """List the queriers and their budgets per dataset."""
    from rich.console import Console
    from rich.table import Table

    from ..server import store

    _cfg, engine = _setup(config, "admin list-queriers")
    rows = store.list_queriers(engine)
    if as_json:
        _json(rows)
        return
    table = Table(title="Queriers", title_justify="left")
    for header in ("name", "role", "ε", "δ", "fisher floor", "created"):
        table.add_column(header)
    for r in rows:
        floor = "" if r["fisher_floor"] is None else f"{r['fisher_floor']:g}"
        table.add_row(r["name"], r["role"], r["epsilon"], r["delta"], floor, str(r["created_at"])[:19])
    Console(highlight=False).print(table)


@admin_app.command("ledger")
@_errors_exit_2
def admin_ledger(
    config: ConfigOption,
    limit: Annotated[int, typer.Option("--limit", min=1, help="Most recent rows.")] = 50,
    querier: Annotated[str | None, typer.Option("--querier", help="Only this querier.")] = None,
    as_json: AsJson = False,
) -> None:
    """Print the ledger of releases (what was asked and charged, and refused queries; never a true value)."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from ..server import store

    _cfg, engine = _setup(config, "admin ledger")
    rows = store.read_ledger(engine, limit=limit, querier=querier)
    if as_json:
        _json(rows)
        return
    table = Table(title="Ledger (newest first)", title_justify="left")
    for header in ("id", "when", "querier", "dataset", "query", "mechanism", "ε", "δ", "status"):
        table.add_column(header)
    for r in rows:
        table.add_row(
            str(r["id"]),
            r["created_at"][:19],
            r["querier"],
            r["dataset"],
            escape(json.dumps(r["query"])),
            r["mechanism"],
            r["epsilon"],
            r["delta"],
            escape(f"refused ×{r['repeats']}: {r['reason']}" if r["status"] == "refused" else r["status"]),
        )
    Console(highlight=False).print(table)


def query(
    text: Annotated[str, typer.Argument(metavar="QUERY", help="Text query, or a JSON object.")],
    server: Annotated[str, typer.Option("--server", help="Server URL.")] = "http://127.0.0.1:8000",
    key: Annotated[
        str, typer.Option("--key", envvar="PRIVNOISE_KEY", help="API key (or $PRIVNOISE_KEY).")
    ] = "",
    dataset: Annotated[
        str | None, typer.Option("--dataset", help="Dataset (if the server has several).")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what the query would cost and how accurate it would be; charge "
                           "nothing, read no data.")
    ] = False,
    as_json: AsJson = False,
) -> None:
    """Ask a query server for a noisy answer; print it with its guarantee and the remaining budget."""
    from rich.console import Console

    check("httpx", feature="privnoise query", extra="server")
    from ..client import BudgetRefused, Client, ServerError

    if not key:
        raise _fail("--key (or $PRIVNOISE_KEY) is required.")
    body: str | dict[str, Any] = text
    if text.lstrip().startswith("{"):
        try:
            body = json.loads(text)
        except json.JSONDecodeError as exc:
            raise _fail(f"QUERY looks like JSON but is not: {exc}") from None
    try:
        with Client(server, key) as client:
            answer = client.query(body, dataset=dataset, dry_run=dry_run)
    except BudgetRefused:
        raise _fail("refused: the query would exceed your privacy budget (nothing was charged).") from None
    except ServerError as exc:
        raise _fail(str(exc)) from None
    if as_json:
        _json(answer)
        return
    from .server_answers import print_answer, print_dry_run

    if dry_run:
        print_dry_run(Console(highlight=False, soft_wrap=True), answer)
        return
    print_answer(Console(highlight=False, soft_wrap=True), answer)


def register(app: typer.Typer) -> None:
    """Add ``serve``, ``admin`` and ``query`` to the ``privnoise`` command."""
    app.command("serve")(_errors_exit_2(serve))
    app.add_typer(admin_app, name="admin")
    app.command("query")(_errors_exit_2(query))
