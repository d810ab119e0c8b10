"""``privnoise sql``: a SQL ``SELECT`` over a CSV or Parquet file answered with noise, one row per group.

::

    privnoise sql meters.csv "SELECT region, AVG(kwh) AS mean_kwh, COUNT(*) FROM meters WHERE kwh > 0 GROUP BY region" \\
        --epsilon 1 --unit household --max-contributions 20 --bounds kwh=0,60 --keys region=north,south

The statement is read and checked (:mod:`privnoise.sql`) before the file is; the bounds of every aggregated column
are declared (``--bounds COLUMN=LO,HI``, repeatable), never read from the data; the statement's ε — ``--epsilon``
or its ``WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = …)`` — is charged to the ledger before any noise is drawn.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from .budget import DatasetOption, LedgerOption, LedgerRequest, TotalDeltaOption, TotalEpsilonOption
from .errors import CliInputError, errors_exit_2
from .options import Accountant, AsJson, MissingValues, print_json, print_text

__all__ = ["sql_command"]

#: How ``privnoise sql`` declares group keys (in messages).
KEYS = "--keys COLUMN=A,B,..."


def _assignments(values: list[str] | None, option: str, what: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for text in values or []:
        name, sep, rest = text.partition("=")
        if not sep or not name.strip() or not rest.strip():
            raise CliInputError(f"{option} takes COLUMN={what}; got {text!r}.")
        if name.strip() in found:
            raise CliInputError(f"{option} names column {name.strip()!r} twice.")
        found[name.strip()] = rest.strip()
    return found


def _bounds(values: list[str] | None) -> dict[str, tuple[float, float]]:
    from .parsing import parse_pair

    out: dict[str, tuple[float, float]] = {}
    for name, text in _assignments(values, "--bounds", "LO,HI").items():
        pair = parse_pair(text, f"--bounds {name}")
        assert pair is not None
        out[name] = pair
    return out


def _keys(values: list[str] | None, group_by: tuple[str, ...]) -> Any:
    found = _assignments(values, "--keys", "A,B,...")
    if not found:
        return None
    extra = sorted(set(found) - set(group_by))
    if extra or set(found) != set(group_by):
        raise CliInputError(f"--keys declares the keys of every GROUP BY column ({', '.join(group_by) or 'none'}); "
                            f"got {', '.join(sorted(found))}.")
    lists = {name: [v.strip() for v in found[name].split(",") if v.strip()] for name in group_by}
    return lists[group_by[0]] if len(group_by) == 1 else lists


def _text(answer: Any, level: float) -> str:
    lines = []
    for row_index, row in enumerate(answer.rows()):
        cells = []
        for name, value in row.items():
            shown = "—" if value is None else f"{value:.6g}" if isinstance(value, float) else str(value)
            if name in answer.intervals:
                low, high = answer.intervals[name]
                shown += f" [{low[row_index]:.6g}, {high[row_index]:.6g}]"
            cells.append(f"{name} = {shown}")
        lines.append("  " + "; ".join(cells))
    if not lines:
        lines.append("  (no row: no group was selected)")
    return "\n".join([*lines, f"({level:.0%} intervals, noise only); {answer.guarantee['summary']}"])


@errors_exit_2
def sql_command(
    data: Annotated[Path, typer.Argument(metavar="DATA", help="CSV or Parquet file (the statement's table).")],
    statement: Annotated[str, typer.Argument(metavar="STATEMENT", help="One SQL SELECT with aggregates.")],
    epsilon: Annotated[
        float | None, typer.Option("--epsilon", help="The statement's ε (or OPTIONS(epsilon = ...) in it).")
    ] = None,
    delta: Annotated[float, typer.Option("--delta", help="The δ (partition selection of GROUP BY keys).")] = 0.0,
    bounds: Annotated[
        list[str] | None,
        typer.Option("--bounds", metavar="COLUMN=LO,HI", help="Declared bounds of an aggregated column (repeat)."),
    ] = None,
    keys: Annotated[
        list[str] | None,
        typer.Option("--keys", metavar="COLUMN=A,B", help="Public keys of a GROUP BY column (repeat; else selection)."),
    ] = None,
    unit: Annotated[str | None, typer.Option("--unit", help="The privacy-unit column.")] = None,
    max_contributions: Annotated[
        int | None, typer.Option("--max-contributions", min=1, help="Rows used per unit (at random).")
    ] = None,
    dialect: Annotated[
        str | None, typer.Option("--dialect", help="SQL dialect: postgres, bigquery, spark, duckdb, ...")
    ] = None,
    accountant: Accountant = None,
    missing: MissingValues = "error",
    level: Annotated[float, typer.Option("--level", min=0.0, max=1.0, help="Confidence level.")] = 0.95,
    seed: Annotated[int | None, typer.Option("--seed", min=0, help="RESEARCH ONLY: seeded noise is predictable.")] = None,
    as_json: AsJson = False,
    ledger_path: LedgerOption = None,
    dataset: DatasetOption = None,
    total_epsilon: TotalEpsilonOption = None,
    total_delta: TotalDeltaOption = None,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Only the price and the expected accuracy of each aggregate, from public "
                     "information (nothing charged, no value read)."),
    ] = False,
) -> None:
    """Answer a SQL SELECT on a CSV or Parquet file with differentially private noise, one row per group.

    Aggregates: COUNT(*), COUNT(col), COUNT(DISTINCT unit), SUM, AVG, VAR_POP, STDDEV, PERCENTILE_CONT, MEDIAN,
    MIN, MAX; WHERE with comparisons, IN, BETWEEN, IS NULL, LIKE, AND/OR/NOT; GROUP BY; HAVING, ORDER BY, LIMIT
    and arithmetic on aggregates as post-processing. The statement's (ε, δ) is charged to the ledger first.
    """
    from ..sql import SqlError, parse_statement

    ledger = LedgerRequest.from_options(ledger_path, dataset, total_epsilon, total_delta)
    try:
        parsed = parse_statement(statement, dialect=dialect)
    except SqlError as exc:
        raise CliInputError(f"STATEMENT: {exc}") from None
    options = parsed.options
    if epsilon is None:
        epsilon = options.get("epsilon")
    elif "epsilon" in options and float(options["epsilon"]) != epsilon:
        raise CliInputError(f"--epsilon {epsilon:g} differs from the statement's OPTIONS(epsilon = {options['epsilon']:g}).")
    if epsilon is None:
        raise CliInputError("give the statement's budget: --epsilon, or OPTIONS(epsilon = ...) in the statement.")
    if not delta and "delta" in options:
        delta = float(options["delta"])
    option_unit = options.get("privacy_unit_column")
    if unit is not None and option_unit is not None and unit != option_unit:
        raise CliInputError(f"--unit {unit!r} differs from the statement's privacy_unit_column = {option_unit!r}.")
    unit = unit or option_unit
    from .analyst import unit_cap
    from .wording import cli_words, translate

    cap = unit_cap(unit, max_contributions or options.get("max_groups_contributed"))
    declared = _bounds(bounds)
    key_lists = _keys(keys, parsed.group_by)
    with cli_words(keys=KEYS):
        payload, text = _answer(data, parsed, epsilon=epsilon, delta=delta, declared=declared, keys=key_lists,
                                unit=unit, cap=cap, accountant=accountant, missing=missing, level=level, seed=seed,
                                ledger=ledger, dry_run=dry_run)
    text = translate(text, keys=KEYS)
    if as_json:
        print_json(payload)
    else:
        print_text(text)


def _answer(data: Path, parsed: Any, *, epsilon: float, delta: float, declared: dict[str, Any], keys: Any,
            unit: str | None, cap: int, accountant: str | None, missing: str, level: float, seed: int | None,
            ledger: LedgerRequest, dry_run: bool = False) -> tuple[dict[str, Any], str]:
    from ..analysis import SchemaBackend, Session
    from ..core.predicates import atoms_of
    from ..exceptions import InvalidParameterError
    from ..io.tables import table
    from .analyst import missing_policy, whole_budget
    from .inputs import column_kinds, data_file, reading

    policy = missing_policy(missing)
    Session({}, epsilon=epsilon, delta=delta,
            accountant=accountant, missing=policy, rng=seed)  # ε, δ, the accountant, the seed: before reading
    if unit is None and cap != 1:
        raise CliInputError("--max-contributions needs --unit (the column whose rows are capped).")
    numeric = list(dict.fromkeys(a.column for a in parsed.aggregates
                                 if a.column is not None and a.kind not in ("count_distinct",)))
    missing_bounds = [c for c in numeric if c not in declared and any(
        a.column == c and a.kind != "count" for a in parsed.aggregates)]
    if missing_bounds:
        raise CliInputError(f"declare the bounds of {', '.join(missing_bounds)}: --bounds {missing_bounds[0]}=LO,HI "
                            "(never taken from the data).")
    text_columns = [c for c in (*parsed.group_by, unit) if c is not None and c not in numeric]
    for atom in atoms_of(parsed.where):
        if atom.column in numeric or atom.column in text_columns:
            continue
        literal = getattr(atom, "value", None)
        literal = atom.values[0] if hasattr(atom, "values") else literal
        (numeric if isinstance(literal, float | int) and not isinstance(literal, bool) else text_columns).append(atom.column)
    if not numeric and not text_columns:  # COUNT(*) alone: the rows are counted through the first column
        from .inputs import header

        text_columns = header(data)[:1]
    selecting = bool(parsed.group_by) and keys is None
    spend: dict[str, Any] = whole_budget(accountant or ("pure" if not delta else "approximate"), epsilon, delta)
    if dry_run:  # the header only: the columns' names and the kinds their use gives them
        from .dry_runs import dry_statement

        schema = SchemaBackend(column_kinds(data, numeric, text_columns))
        session = Session(schema, privacy_unit=unit, max_contributions=cap, epsilon=epsilon, delta=delta,
                          accountant=accountant, missing=policy)
        try:
            return dry_statement(session, parsed, data=data, epsilon=epsilon, delta=delta, declared=declared,
                                 keys=keys, selecting=selecting, spend=spend, level=level, ledger=ledger)
        except InvalidParameterError as exc:
            raise CliInputError(str(exc)) from None
    with reading(data):
        frame = table(data_file(data), numeric=numeric, text=text_columns, missing=policy)
    session = Session(frame, privacy_unit=unit, max_contributions=cap, epsilon=epsilon, delta=delta,
                      accountant=accountant, missing=policy, rng=seed)
    charged: dict[str, Any] = {}

    def charge() -> None:  # durable, after every check, before any aggregate is computed
        charged["state"] = ledger.charge(
            data, command="privnoise sql", query=parsed.text.strip(), epsilon=epsilon, delta=delta,
            details={"unit": unit, "max_contributions": cap, "bounds": {k: list(v) for k, v in declared.items()}},
        )

    try:
        answer = session.sql(parsed.text, bounds=declared, keys=keys, delta=delta if selecting else None,
                             level=level, before_release=charge, **spend)
    except InvalidParameterError as exc:
        raise CliInputError(str(exc)) from None
    payload = answer.as_dict()
    payload["remaining"] = session.remaining().as_dict()
    text = _text(answer, level)
    state = charged.get("state")
    if state is not None:
        from .budget import state_payload

        payload["ledger"] = state_payload(state)
        text += "\n" + state["line"]
    return payload, text
