"""``privnoise release ... --epsilon``: a differentially private release through :class:`privnoise.Session`.

One query on one column of a CSV or Parquet file, with a privacy unit and a cap on its rows, printed with its
guarantee and its accuracy (a confidence interval from the noise law, or the rank accuracy of a quantile).
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

__all__ = ["DP_QUERIES", "dp_release"]

#: The queries a DP release answers.
DP_QUERIES = ("count", "sum", "mean", "variance", "histogram", "quantile", "median", "top-k", "count-distinct")


def _words(text: str | None) -> list[str] | None:
    if text is None:
        return None
    items = [part.strip() for part in text.split(",")]
    if not text.strip() or any(not item for item in items):
        raise CliInputError(f"a comma-separated list must not have empty entries; got {text!r}.")
    return items


def missing_policy(text: str) -> Any:
    if text in ("error", "drop"):
        return text
    try:
        return float(text)
    except ValueError:
        raise CliInputError(f"--missing must be 'error', 'drop' or a number to impute; got {text!r}.") from None


def _conditions(where: str | None) -> tuple[Any, ...]:
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
    max_contributions: int,
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
    spark_master: str | None = None,
) -> tuple[dict[str, Any], str]:
    """Run one query; return its JSON form and the lines to print. With ``scheduler`` ("local" or
    "tcp://host:8786"), ``data`` is partitioned Parquet (a file, directory or glob) aggregated by Dask; with
    ``spark_master`` ("local[2]", "spark://host:7077"), Parquet or CSV files read and aggregated by Spark
    (:mod:`privnoise._cli.spark_data`).

    With ``ledger``, the release's (ε, δ) is charged to the dataset of ``data`` once the options are checked and
    the session is open, before any noise is drawn; a release beyond the dataset's total is refused there.
    ``origin`` is the file, directory or glob the data came from (default: ``data``), which names the dataset.
    """
    from ..analysis import Session

    if query not in DP_QUERIES:
        raise CliInputError(f"--query must be one of {', '.join(DP_QUERIES)} with --epsilon; got {query!r}.")
    declared = parse_pair(bounds, "--bounds")
    conditions = _conditions(where)
    needs_bounds = query in ("sum", "mean", "variance", "quantile", "median")
    if needs_bounds and declared is None:
        raise CliInputError(f"--query {query} needs --bounds LO,HI (declared, never taken from the data).")
    if group_by is not None and query not in ("count", "sum", "mean"):
        raise CliInputError("--group-by answers --query count, sum or mean.")
    if query == "histogram" and (bins is None) == (categories is None):
        raise CliInputError("--query histogram needs exactly one of --bins EDGES and --categories A,B,...")
    if query == "quantile" and quantiles is None:
        raise CliInputError("--query quantile needs --q LEVELS (for instance --q 0.5,0.9).")
    if query == "top-k" and categories is None:
        raise CliInputError("--query top-k needs --categories A,B,... (the declared candidates).")
    if spark_master is not None:  # read and aggregated by Spark (privnoise.spark)
        from .spark_data import spark_frame

        with spark_frame(Path(data), spark_master) as frame:
            return dp_release(frame, column=column, query=query, epsilon=epsilon, delta=delta, bounds=bounds,
                              unit=unit, max_contributions=max_contributions, accountant=accountant,
                              missing=missing, quantiles=quantiles, bins=bins, categories=categories,
                              group_by=group_by, keys=keys, top=top, level=level, seed=seed, ledger=ledger,
                              origin=data, where=where, noise=noise)
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
                              bounds=bounds, unit=unit, max_contributions=max_contributions, accountant=accountant,
                              missing=missing, quantiles=quantiles, bins=bins, categories=categories,
                              group_by=group_by, keys=keys, top=top, level=level, seed=seed, ledger=ledger,
                              origin=data, where=where, noise=noise)
    policy = missing_policy(missing)
    key_list, candidates = _words(keys), _words(categories)  # every option is parsed before the data are read
    edges, levels = parse_list(bins, "--bins"), parse_list(quantiles, "--q")
    if isinstance(data, Path):  # every value the query uses is read and checked before the ledger is charged
        from .inputs import dp_table

        # ε, δ, the accountant and the seed are checked before the file is read: a session without data
        Session({}, max_contributions=max_contributions if unit is None else 1, epsilon=epsilon, delta=delta,
                accountant=accountant, missing=policy, noise=noise, rng=seed)  # fmt: skip

        origin = data if origin is None else origin
        data = dp_table(data, query=query, column=column, unit=unit, group_by=group_by,
                        categories=categories is not None, missing=policy, conditions=conditions)  # fmt: skip
    session = Session(
        data, privacy_unit=unit, max_contributions=max_contributions, epsilon=epsilon, delta=delta,
        accountant=accountant, missing=policy, noise=noise, rng=seed,
    )
    if conditions:
        try:
            session = session.where(where)
        except InvalidParameterError as exc:
            raise CliInputError(f"--where: {exc}") from None
    selection = group_by is not None and keys is None
    spend = whole_budget(session.accountant, epsilon, delta * (0.9 if selection else 1.0))
    state = None
    if ledger is not None:
        options = {"bounds": bounds, "unit": unit, "max_contributions": max_contributions, "accountant": accountant,
                   "where": where,
                   "group_by": group_by, "keys": keys, "q": quantiles, "bins": bins, "categories": categories,
                   "top": top if query == "top-k" else None}  # fmt: skip
        described = (f"{query}({column})" + ("" if group_by is None else f" group by {group_by}")
                     + ("" if where is None else f" where {where}"))
        state = ledger.charge(
            data if origin is None else origin, command="privnoise release", query=described, epsilon=epsilon,
            delta=delta, details={k: v for k, v in options.items() if v is not None},
        )  # fmt: skip
    if group_by is not None:
        grouped = session.group_by(group_by, keys=key_list)
        if query == "count":
            release = grouped.count(**spend)
        elif query == "sum":
            release = grouped.sum(column, bounds=declared, **spend)  # type: ignore[arg-type]
        else:
            release = grouped.mean(column, bounds=declared, **spend)  # type: ignore[arg-type]
    elif query == "count":
        release = session.count(column, **spend)
    elif query in ("sum", "mean", "variance"):
        release = getattr(session, query)(column, bounds=declared, **spend)
    elif query == "histogram":
        release = session.histogram(column, bins=edges, categories=candidates, **spend)
    elif query == "quantile":
        release = session.quantile(column, levels, bounds=declared, **spend)  # type: ignore[arg-type]
    elif query == "median":
        release = session.median(column, bounds=declared, **spend)  # type: ignore[arg-type]
    elif query == "count-distinct":
        release = session.count_distinct(**spend)
    else:
        release = session.top_k(column, candidates=candidates, k=top, **spend)  # type: ignore[arg-type]
    payload = release.as_dict(level)
    lines = [f"{release.summary(level)}", f"meaning of the accuracy: {release.meaning}."]
    if release.keys is not None and query != "top-k":
        if release.interval is not None:
            low, high = release.confidence_interval(level)
            for key, value, lo, hi in zip(release.keys, release.value, low, high, strict=True):
                lines.append(f"  {key}: {value:.6g}  [{lo:.6g}, {hi:.6g}]")
        else:
            for key, value in zip(release.keys, release.value, strict=True):
                lines.append(f"  {key}: {value:.6g}")
    spent = session.spent()
    lines.append(f"this release: ε = {spent.epsilon:.6g} at δ = {delta:g} ({session.accountant} accountant), "
                 f"charged as ε = {epsilon:g}, δ = {delta:g}")  # fmt: skip
    if state is not None:
        from .budget import state_payload

        payload["ledger"] = state_payload(state)
        lines.append(state["line"])
    return payload, "\n".join(lines)
