"""``privnoise release ... --epsilon``: a differentially private release through :class:`privnoise.Session`.

One query on one column of a CSV or Parquet file, with a privacy unit and a cap on its rows, printed with its
guarantee and its accuracy (a confidence interval from the noise law, or the rank accuracy of a quantile). With
``--dry-run`` the query is priced and its accuracy stated from public information only (:mod:`.dry_runs`): nothing
is charged and no value of the file is read. Errors of the library are put in the command line's words
(:mod:`.wording`).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..exceptions import InvalidParameterError
from .errors import CliInputError
from .parsing import parse_list, parse_pair

if TYPE_CHECKING:
    from .budget import LedgerRequest

__all__ = ["DP_QUERIES", "ask", "dp_release", "missing_policy", "unit_cap", "whole_budget"]

log = logging.getLogger("privnoise.cli")

#: The queries a DP release answers.
DP_QUERIES = ("count", "sum", "mean", "variance", "histogram", "quantile", "median", "top-k", "count-distinct",
              "clamped-count")
#: The queries whose values are clamped to --bounds (declared, never taken from the data).
BOUNDED = ("sum", "mean", "variance", "quantile", "median", "clamped-count")


def words(text: str | None) -> list[str] | None:
    if text is None:
        return None
    items = [part.strip() for part in text.split(",")]
    if not text.strip() or any(not item for item in items):
        raise CliInputError(f"a comma-separated list must not have empty entries; got {text!r}.")
    return items


def group_columns(group_by: str | None) -> str | list[str] | None:
    """``--group-by``: one key column (``region``) or several, comma-separated (``region,tariff``)."""
    names = words(group_by)
    if names is None:
        return None
    if len(set(names)) != len(names):
        raise CliInputError(f"--group-by names a column twice: {group_by!r}.")
    return names[0] if len(names) == 1 else names


def group_keys(keys: str | None, group_by: str | None) -> Any:
    """``--keys``: the declared keys of one key column (``north,south``), or of several as each column's values,
    their product declared (``region=north,south;tariff=day,night``); None: keys selected from the data."""
    columns = group_columns(group_by)
    if keys is None or not isinstance(columns, list):
        return words(keys)
    declared: dict[str, list[str]] = {}
    for part in keys.split(";"):
        name, sep, values = part.partition("=")
        name = name.strip()
        if not sep or name not in columns or name in declared:
            raise CliInputError(
                f"--keys of a group-by on {', '.join(columns)} gives each key column's values once, "
                f"COLUMN=A,B separated by ';' (e.g. {columns[0]}=a,b;{columns[1]}=c,d); got {keys!r}."
            )
        declared[name] = words(values) or []
    missing = [name for name in columns if name not in declared]
    if missing:
        raise CliInputError(f"--keys gives no values for key column(s) {', '.join(missing)}; got {keys!r}.")
    return declared


def missing_policy(text: str) -> Any:
    if text in ("error", "drop"):
        return text
    try:
        return float(text)
    except ValueError:
        raise CliInputError(f"--missing must be 'error', 'drop' or a number to impute; got {text!r}.") from None


def unit_cap(unit: str | None, max_contributions: int | None) -> int:
    """The rows used per unit: --max-contributions, else 1 — said on stderr when --unit is given without it."""
    if max_contributions is not None:
        return max_contributions
    if unit is not None:
        log.warning("--unit %s without --max-contributions: at most 1 row per unit is used (one chosen at random, "
                    "the others left out of the release); give --max-contributions K to use up to K rows per unit.",
                    unit)
    return 1


def conditions_of(where: str | None) -> tuple[Any, ...]:
    """The parsed conditions of ``--where`` (checked against the columns when the session's view is made)."""
    if where is None:
        return ()
    from ..analysis.filters import parse_filter

    try:
        return parse_filter(where)
    except InvalidParameterError as exc:
        raise CliInputError(f"--where: {exc}") from None


def whole_budget(accountant: str, epsilon: float, delta: float) -> dict[str, float]:
    """The price of one query spending the whole (ε, δ): ε, or the largest ρ whose conversion fits (zCDP, RDP)."""
    if accountant not in ("zcdp", "rdp"):
        return {"epsilon": epsilon}
    from ..dp.zcdp import epsilon_to_zcdp

    rho = epsilon_to_zcdp(epsilon, delta)
    return {"rho": rho * (0.99 if accountant == "rdp" else 1.0 - 1e-9)}


def _quiet_cluster_logs() -> None:
    """The cluster's own INFO and WARNING chatter stays off the terminal (its errors still show)."""
    import distributed  # noqa: F401 - configures its loggers on import; they are quieted below

    for name in list(logging.root.manager.loggerDict):
        if name == "distributed" or name.startswith("distributed."):
            logging.getLogger(name).setLevel(logging.ERROR)


def check_options(query: str, *, bounds: str | None, group_by: str | None, bins: str | None,
                  categories: str | None, quantiles: str | None) -> tuple[float, float] | None:
    """The declared bounds, once the options of ``query`` are checked (before anything is read)."""
    if query not in DP_QUERIES:
        raise CliInputError(f"--query must be one of {', '.join(DP_QUERIES)} with --epsilon; got {query!r}.")
    declared = parse_pair(bounds, "--bounds")
    if query in BOUNDED and declared is None:
        raise CliInputError(f"--query {query} needs --bounds LO,HI (declared, never taken from the data).")
    if group_by is not None and query not in ("count", "sum", "mean"):
        raise CliInputError("--group-by answers --query count, sum or mean.")
    if query == "histogram" and (bins is None) == (categories is None):
        raise CliInputError("--query histogram needs exactly one of --bins EDGES and --categories A,B,...")
    if query == "quantile" and quantiles is None:
        raise CliInputError("--query quantile needs --q LEVELS (for instance --q 0.5,0.9).")
    if query == "top-k" and categories is None:
        raise CliInputError("--query top-k needs --categories A,B,... (the declared candidates).")
    return declared


def ask(session: Any, query: str, *, column: str, group_by: str | None, keys: Any,
        declared: tuple[float, float] | None, bins: str | None, categories: str | None, quantiles: str | None,
        top: int, spend: dict[str, float], dry_run: bool = False) -> Any:
    """The release (or, with ``dry_run``, the dry run) of ``query`` on ``session``."""
    budget: dict[str, Any] = {**spend, "dry_run": dry_run}
    if group_by is not None:
        columns = group_columns(group_by)
        assert columns is not None  # group_by is given
        grouped = session.group_by(columns, keys=keys)
        if query == "count":
            return grouped.count(**budget)
        return (grouped.sum if query == "sum" else grouped.mean)(column, bounds=declared, **budget)
    if query == "count":
        return session.count(column, **budget)
    if query in ("sum", "mean", "variance"):
        return getattr(session, query)(column, bounds=declared, **budget)
    if query == "clamped-count":
        return session.clamped_count(column, bounds=declared, **budget)
    if query == "histogram":
        return session.histogram(column, bins=parse_list(bins, "--bins"), categories=words(categories), **budget)
    if query == "quantile":
        return session.quantile(column, parse_list(quantiles, "--q"), bounds=declared, **budget)
    if query == "median":
        return session.median(column, bounds=declared, **budget)
    if query == "count-distinct":
        return session.count_distinct(**budget)
    return session.top_k(column, candidates=words(categories), k=top, **budget)


def dp_release(
    data: Any,
    *,
    scheduler: str | None = None,
    column: str,
    query: str,
    epsilon: float,
    delta: float,
    bounds: str | None,
    unit: str | None,
    max_contributions: int | None,
    accountant: str | None,
    missing: str,
    quantiles: str | None,
    bins: str | None,
    categories: str | None,
    group_by: str | None,
    keys: str | None,
    top: int,
    level: float,
    seed: int | None,
    ledger: LedgerRequest | None = None,
    origin: Any = None,
    where: str | None = None,
    noise: str | None = None,
    fisher: bool = False,
    spark_master: str | None = None,
) -> tuple[dict[str, Any], str]:
    """Run one query; return its JSON form and the lines to print. With ``scheduler`` ("local" or
    "tcp://host:8786"), ``data`` is partitioned Parquet (a file, directory or glob) aggregated by Dask; with
    ``spark_master`` ("local[2]", "spark://host:7077"), Parquet or CSV files read and aggregated by Spark
    (:mod:`privnoise._cli.spark_data`).

    With ``ledger``, the release's (ε, δ) is charged to the dataset of ``data`` once the options are checked and
    the session is open, before any noise is drawn; a release beyond the dataset's total is refused there.
    ``origin`` is the file, directory or glob the data came from (default: ``data``), which names the dataset.
    ``fisher`` adds the Fisher bound on one row's value to the text and the JSON (sums and means).
    """
    from ..analysis import Session

    declared = check_options(query, bounds=bounds, group_by=group_by, bins=bins, categories=categories,
                             quantiles=quantiles)
    conditions = conditions_of(where)
    cap = unit_cap(unit, max_contributions)
    if spark_master is not None:  # read and aggregated by Spark (privnoise.spark)
        from .spark_data import spark_frame

        with spark_frame(Path(data), spark_master) as frame:
            return dp_release(frame, column=column, query=query, epsilon=epsilon, delta=delta, bounds=bounds,
                              unit=unit, max_contributions=cap, accountant=accountant,
                              missing=missing, quantiles=quantiles, bins=bins, categories=categories,
                              group_by=group_by, keys=keys, top=top, level=level, seed=seed, ledger=ledger,
                              origin=data, where=where, noise=noise, fisher=fisher)
    if scheduler is not None:  # aggregated by Dask on the scheduler's cluster (privnoise.scale)
        from ..io import dask_parquet
        from ..scale.cluster import check_scheduler, connect

        check_scheduler(scheduler, "--scheduler", "privnoise release")
        _quiet_cluster_logs()
        with connect(scheduler, owner="privnoise release"):
            from .inputs import reading

            with reading(data):
                source: Any = dask_parquet(str(data))
            return dp_release(source, scheduler=None, column=column, query=query, epsilon=epsilon, delta=delta,
                              bounds=bounds, unit=unit, max_contributions=cap, accountant=accountant,
                              missing=missing, quantiles=quantiles, bins=bins, categories=categories,
                              group_by=group_by, keys=keys, top=top, level=level, seed=seed, ledger=ledger,
                              origin=data, where=where, noise=noise, fisher=fisher)
    policy = missing_policy(missing)
    key_list = group_keys(keys, group_by)  # every option is parsed before the data are read
    words(categories), parse_list(bins, "--bins"), parse_list(quantiles, "--q")
    if isinstance(data, Path):  # every value the query uses is read and checked before the ledger is charged
        from .inputs import dp_table

        # ε, δ, the accountant and the seed are checked before the file is read: a session without data
        Session({}, max_contributions=cap if unit is None else 1, epsilon=epsilon, delta=delta,
                accountant=accountant, missing=policy, noise=noise, rng=seed)  # fmt: skip

        origin = data if origin is None else origin
        data = dp_table(data, query=query, column=column, unit=unit, group_by=group_by,
                        categories=categories is not None, missing=policy, conditions=conditions)  # fmt: skip
    session = Session(
        data, privacy_unit=unit, max_contributions=cap, epsilon=epsilon, delta=delta,
        accountant=accountant, missing=policy, noise=noise, rng=seed,
    )
    if conditions:
        try:
            session = session.where(where)
        except InvalidParameterError as exc:
            raise CliInputError(f"--where: {exc}") from None
    selection = group_by is not None and keys is None
    spend = whole_budget(session.accountant, epsilon, delta * (0.9 if selection else 1.0))
    by = group_columns(group_by)
    if by is not None:  # the keys and δ are checked before anything is charged
        session.group_by(by, keys=key_list)
    state = None
    if ledger is not None:
        options = {"bounds": bounds, "unit": unit, "max_contributions": cap, "accountant": accountant,
                   "where": where,
                   "group_by": group_by, "keys": keys, "q": quantiles, "bins": bins, "categories": categories,
                   "top": top if query == "top-k" else None}  # fmt: skip
        state = ledger.charge(
            data if origin is None else origin, command="privnoise release", query=describe(query, column, group_by, where),
            epsilon=epsilon, delta=delta, details={k: v for k, v in options.items() if v is not None},
        )  # fmt: skip
    release = ask(session, query, column=column, group_by=group_by, keys=key_list, declared=declared, bins=bins,
                  categories=categories, quantiles=quantiles, top=top, spend=spend)
    payload = release.as_dict(level, fisher=fisher)
    lines = [release.summary(level, fisher=fisher), f"meaning of the accuracy: {release.meaning}."]
    if release.keys is not None and query != "top-k" and release.interval is not None:
        lines += [f"  {key}: {text}" for key, text in release.cells(level)]
    spent, remaining = session.spent(), session.remaining()
    lines.append(f"this release: ε = {spent.epsilon:.6g} at δ = {delta:g} ({session.accountant} accountant), "
                 f"charged as ε = {epsilon:g}, δ = {delta:g}")  # fmt: skip
    payload["remaining"] = remaining.as_dict()
    if state is not None:
        from .budget import state_payload

        payload["ledger"] = state_payload(state)
        lines.append(state["line"])
    return payload, "\n".join(lines)


def describe(query: str, column: str, group_by: str | None, where: str | None) -> str:
    """How the ledger names a release."""
    by = group_columns(group_by)
    return (f"{query}({column})" + ("" if by is None else f" group by {by if isinstance(by, str) else ', '.join(by)}")
            + ("" if where is None else f" where {where}"))
