"""``privnoise budget``: a dataset's privacy budget in the ledger; the ledger options every releasing command takes.

::

    privnoise budget meters.csv                         # spent, remaining, total and every charge
    privnoise budget --dataset meters --json
    privnoise budget list                               # every dataset in the ledger
    privnoise budget set meters.csv --total-epsilon 3   # change the total (the change is recorded)

The identity of a dataset and the defaults are described in :mod:`privnoise._cli.ledger`, the storage in
:mod:`privnoise._cli.ledger_file` (the values it holds in :mod:`privnoise._cli.ledger_values`).
:class:`LedgerRequest` is what ``release``, ``stream`` and ``optimize`` hand their ledger options to: it charges
a release (or records a Fisher release or a stream) before the command prints anything.
"""

from __future__ import annotations

import json
import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .errors import CliInputError, errors_exit_2

if TYPE_CHECKING:  # the ledger (sqlite3, hashlib, fractions) is imported when a command runs, not at start-up
    from fractions import Fraction

    from .ledger import Ledger
    from .ledger_values import Dataset, Entry, Status

__all__ = [
    "DatasetOption",
    "LedgerOption",
    "LedgerRequest",
    "TotalDeltaOption",
    "TotalEpsilonOption",
    "register",
]

log = logging.getLogger("privnoise.cli")

LedgerOption = Annotated[
    Path | None,
    typer.Option(
        "--ledger",
        metavar="PATH",
        help="The privacy ledger, an SQLite file (default: $PRIVNOISE_LEDGER, else the platform data directory, "
        "e.g. ~/.local/share/privnoise/ledger.sqlite).",
    ),
]
DatasetOption = Annotated[
    str | None,
    typer.Option(
        "--dataset",
        metavar="NAME",
        help="The dataset's name in the ledger (default: the resolved path of DATA).",
    ),
]
TotalEpsilonOption = Annotated[
    str | None,
    typer.Option(
        "--total-epsilon",
        metavar="E",
        help="The dataset's total ε, set at its first use (default 1); afterwards only 'privnoise budget set' "
        "changes it.",
    ),
]
TotalDeltaOption = Annotated[
    str | None,
    typer.Option(
        "--total-delta",
        metavar="D",
        help="The dataset's total δ, set at its first use (default 1e-6); afterwards only 'privnoise budget set' "
        "changes it.",
    ),
]


@dataclass(frozen=True, slots=True)
class LedgerRequest:
    """The ledger options of one command, checked before any data is read."""

    ledger: Path | None = None
    dataset: str | None = None
    totals: tuple[Fraction | None, Fraction | None] = (None, None)

    @classmethod
    def from_options(
        cls,
        ledger: Path | None,
        dataset: str | None = None,
        total_epsilon: str | None = None,
        total_delta: str | None = None,
    ) -> LedgerRequest:
        """Parse the options (a bad total names its option); the ledger file is not opened yet."""
        from .ledger_values import parse_total

        return cls(
            ledger,
            dataset,
            (parse_total(total_epsilon, "--total-epsilon"), parse_total(total_delta, "--total-delta")),
        )

    def charge(
        self,
        data: Any,
        *,
        command: str,
        query: str,
        epsilon: float | Fraction,
        delta: float | Fraction,
        details: dict[str, Any],
    ) -> dict[str, Any]:
        """Charge (ε, δ) of a release of ``data`` durably, or raise the one-line refusal; return the ledger's state.

        Floats are read as the decimals typed (0.1 is 1/10), as the library's exact accountant reads them; a
        Fraction is charged as it is.
        """
        from ..dp.accounting import exact_rational
        from .ledger import Ledger
        from .ledger_values import identify

        eps = exact_rational(epsilon, "epsilon", command)
        dl = exact_rational(delta, "delta", command, allow_zero=True)
        if dl >= 1:
            raise CliInputError(f"--delta must be < 1; got {delta!r}.")
        book = Ledger.locate(self.ledger)
        dataset = identify(data, self.dataset)
        status, warnings = book.charge(
            dataset, command=command, query=query, epsilon=eps, delta=dl, totals=self.totals, details=details
        )
        for warning in warnings:
            log.warning(warning)
        return _state(book, status) | {"charged": {"epsilon": str(eps), "delta": str(dl)}}

    def record(
        self,
        data: Any,
        *,
        kind: str,
        command: str,
        query: str,
        information: Fraction | float | None = None,
        details: dict[str, Any],
    ) -> tuple[int, dict[str, Any]]:
        """Record a release that charges no (ε, δ): a Fisher release or a stream. Returns its entry and the state."""
        from .ledger import Ledger
        from .ledger_values import identify

        book = Ledger.locate(self.ledger)
        dataset = identify(data, self.dataset)
        entry, status, warnings = book.record(
            dataset, kind=kind, command=command, query=query, information=information, totals=self.totals,
            details=details,
        )  # fmt: skip
        for warning in warnings:
            log.warning(warning)
        return entry, _state(book, status)

    def add_details(self, entry: int, details: dict[str, Any]) -> None:
        """Complete entry ``entry`` with what is known after the release ran."""
        from .ledger import Ledger

        Ledger.locate(self.ledger).add_details(entry, details)


def _state(book: Ledger, status: Status) -> dict[str, Any]:
    """The ledger's part of a command's JSON output, and its one text line under ``"line"``."""
    state = status.as_dict()
    return {
        "path": str(book.path),
        "dataset": state["dataset"],
        "total": state["total"],
        "spent": state["spent"],
        "remaining": state["remaining"],
        "record_information": state["record_information"],
        "line": f"ledger: dataset {status.dataset.name!r}: {status.summary()} "
        f"(privnoise budget {status.dataset.reference})",
    }


def state_payload(state: dict[str, Any]) -> dict[str, Any]:
    """The ledger's state for a JSON output (without its text line)."""
    return {key: value for key, value in state.items() if key != "line"}


# -- the budget command ----------------------------------------------------------------------------------------


def _entry_cells(entry: Entry) -> tuple[str, str, str, str]:
    """query, ε, δ and the note of one entry, for the table."""
    from .ledger_values import amount

    if entry.kind == "dp":
        return entry.query, amount(entry.epsilon), amount(entry.delta), ""
    if entry.kind == "total":
        return (entry.query, "", "", f"total ε = {amount(entry.epsilon)}, δ = {amount(entry.delta)}")
    if entry.kind == "fisher":
        info = (
            ""
            if entry.information is None
            else f"worst-record Fisher information {amount(entry.information)}; "
        )
        return entry.query, "—", "—", info + "no ε charged"
    if entry.kind == "input-law":
        per = entry.details.get("delta_per_window")
        readings = entry.details.get("readings")
        note = f"(0, {per})-DP of the input law per window"
        note += "" if readings is None else f", {readings} readings"
        return entry.query, "—", "—", note + "; not charged (another adjacency)"
    return entry.query, "", "", entry.kind


def _show(book: Ledger, dataset: Dataset, as_json: bool) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from .ledger_values import DEFAULT_TOTAL_DELTA, DEFAULT_TOTAL_EPSILON, amount

    status = book.status(dataset.name)
    if status is None:
        if as_json:
            _json({"ledger": str(book.path), "dataset": dataset.name, "in_ledger": False, "charges": []})
            return
        Console(highlight=False, soft_wrap=True).print(
            f"dataset {escape(repr(dataset.name))} has no entry in the ledger {escape(str(book.path))}: its total is "
            f"set at its first release (by default ε = {amount(DEFAULT_TOTAL_EPSILON)}, δ = "
            f"{amount(DEFAULT_TOTAL_DELTA)}).",
            markup=True,
        )
        return
    if as_json:
        _json({"ledger": str(book.path), "in_ledger": True} | status.as_dict())
        return
    out = Console(highlight=False, soft_wrap=True)
    out.print(f"[bold]dataset[/bold] {escape(repr(status.dataset.name))} ({status.dataset.identity}), ledger "
              f"{escape(str(book.path))}")  # fmt: skip
    (te, td), (se, sd), (re, rd) = status.total, status.spent, status.remaining
    out.print(f"total      ε = {amount(te)}, δ = {amount(td)}")
    out.print(f"spent      ε = {amount(se)}, δ = {amount(sd)}")
    out.print(f"remaining  ε = [bold]{amount(re)}[/bold], δ = [bold]{amount(rd)}[/bold]")
    info = status.record_information
    if info is not None:
        bound = "∞" if info == 0 else ("0" if info == float("inf") else f"{1 / float(info):.6g}")
        out.print(f"Fisher releases: worst-record information adds up to {amount(info)}, so every record's error "
                  f"with all others known is at least {bound} (eq. (7))")  # fmt: skip
    table = Table(title="Ledger entries, oldest first", title_justify="left")
    for header in ("time (UTC)", "command", "query", "ε", "δ", "note"):
        table.add_column(header, overflow="fold")
    for entry in status.entries:
        query, eps, dl, note = _entry_cells(entry)
        table.add_row(entry.time, escape(entry.command), escape(query), eps, dl, escape(note))
    out.print(table)


def _list(book: Ledger, as_json: bool) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from .ledger_values import amount

    statuses = book.statuses()
    if as_json:
        rows = []
        for status in statuses:
            state = status.as_dict()
            state["entries"] = len(state.pop("charges"))
            state["last"] = status.entries[-1].time if status.entries else status.created
            rows.append(state)
        _json({"ledger": str(book.path), "datasets": rows})
        return
    table = Table(title=f"Datasets in the ledger {book.path}", title_justify="left")
    for header in (
        "dataset",
        "identity",
        "total ε",
        "total δ",
        "spent ε",
        "spent δ",
        "entries",
        "last entry (UTC)",
    ):
        table.add_column(header, overflow="fold")
    for status in statuses:
        last = status.entries[-1].time if status.entries else status.created
        (te, td), (se, sd) = status.total, status.spent
        table.add_row(escape(status.dataset.name), status.dataset.identity, amount(te), amount(td), amount(se),
                      amount(sd), str(len(status.entries)), last)  # fmt: skip
    Console(highlight=False, soft_wrap=True).print(table)


def _json(payload: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")


def _group_class() -> type:
    """A command group whose default subcommand is ``show``: ``privnoise budget DATA`` is ``privnoise budget show
    DATA``."""
    from typer.core import TyperGroup

    class ShowByDefault(TyperGroup):
        def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
            if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
                args = ["show", *args]
            return super().parse_args(ctx, args)

    return ShowByDefault


DataArgument = Annotated[
    str | None,
    typer.Argument(metavar="DATA", help="The data file (or give --dataset NAME).", show_default=False),
]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]


def register(app: typer.Typer) -> None:
    """Add the ``budget`` command and its subcommands ``show`` (the default), ``list`` and ``set`` to ``app``."""
    budget_app = typer.Typer(
        cls=_group_class(),
        name="budget",
        help="The privacy ledger: a dataset's budget (privnoise budget DATA, or --dataset NAME), every dataset "
        "(privnoise budget list), or a new total (privnoise budget set DATA --total-epsilon E). A dataset is "
        "--dataset NAME, else the resolved absolute path of DATA.",
        no_args_is_help=True,
        add_completion=False,
        rich_markup_mode=None,
    )

    @budget_app.command("show")
    @errors_exit_2
    def show(
        data: DataArgument = None,
        dataset: DatasetOption = None,
        ledger: LedgerOption = None,
        as_json: AsJson = False,
    ) -> None:
        """Show a dataset's total, spent and remaining (ε, δ) and every entry (the default: privnoise budget DATA)."""
        from .ledger import Ledger
        from .ledger_values import identify

        if data is None and dataset is None:
            raise CliInputError(
                "privnoise budget show needs DATA or --dataset NAME (or: privnoise budget list)."
            )
        _show(Ledger.locate(ledger), identify(data, dataset, content=False), as_json)

    @budget_app.command("list")
    @errors_exit_2
    def list_datasets(ledger: LedgerOption = None, as_json: AsJson = False) -> None:
        """List the datasets in the ledger, with their totals and what they spent."""
        from .ledger import Ledger

        _list(Ledger.locate(ledger), as_json)

    @budget_app.command("set")
    @errors_exit_2
    def set_total(
        data: DataArgument = None,
        dataset: DatasetOption = None,
        ledger: LedgerOption = None,
        total_epsilon: TotalEpsilonOption = None,
        total_delta: TotalDeltaOption = None,
        as_json: AsJson = False,
    ) -> None:
        """Change a dataset's total (ε, δ), or set it before its first release; the change is recorded."""
        from .ledger import Ledger
        from .ledger_values import amount, identify

        request = LedgerRequest.from_options(ledger, dataset, total_epsilon, total_delta)
        if request.totals == (None, None):
            raise CliInputError("privnoise budget set needs --total-epsilon and/or --total-delta.")
        if data is None and dataset is None:
            raise CliInputError("privnoise budget set needs DATA or --dataset NAME.")
        book, target = Ledger.locate(ledger), identify(data, dataset, content=False)
        before = book.status(target.name)
        status = book.set_totals(target, request.totals)
        if as_json:
            _json({"ledger": str(book.path), "in_ledger": True} | status.as_dict())
            return
        was = "" if before is None else f" (was ε = {amount(before.total[0])}, δ = {amount(before.total[1])})"
        sys.stdout.write(
            f"dataset {target.name!r}: total set to ε = {amount(status.total[0])}, δ = {amount(status.total[1])}"
            f"{was}; {status.summary()}.\n"
        )

    app.add_typer(budget_app)
