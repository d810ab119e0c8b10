"""``privnoise release``: a noisy answer to a query on one column of a CSV or Parquet file, with its guarantee.

::

    privnoise release data.csv --column kwh --query mean --bounds 0,5 --support -0.01,0.01
    privnoise release data.csv --column kwh --query mean --bounds 0,5 --epsilon 1
    privnoise release data.csv --column kwh --query mean --bounds 0,5 --epsilon 1 --dry-run

A release with ``--epsilon`` is differentially private (:mod:`.analyst`); otherwise its noise is Fisher-optimal
(:mod:`.fisher_release`). Every release is charged to the privacy ledger first (:mod:`.budget`); ``--dry-run``
charges nothing and reads no value: the price and the expected accuracy from public information (:mod:`.dry_runs`).
"""

from __future__ import annotations

import logging
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from .budget import DatasetOption, LedgerOption, LedgerRequest, TotalDeltaOption, TotalEpsilonOption
from .errors import CliInputError, errors_exit_2
from .options import (
    Accountant,
    AsJson,
    Bounds,
    Budget,
    MissingValues,
    Support,
    Weight,
    print_json,
    print_text,
)

__all__ = ["ReleaseQuery", "release_command"]

log = logging.getLogger("privnoise.cli")
#: How ``privnoise release`` declares group keys (in messages).
KEYS = "--keys A,B,..."


class ReleaseQuery(StrEnum):
    mean = "mean"
    sum = "sum"
    variance = "variance"
    row_count = "count"  # (not `count`: that name is str.count)
    histogram = "histogram"
    quantile = "quantile"
    median = "median"
    top_k = "top-k"
    count_distinct = "count-distinct"
    clamped_count = "clamped-count"


def _engine(engine: str | None, scheduler: str | None, master: str | None,
            epsilon: float | None) -> tuple[str | None, str | None]:
    """(Dask scheduler, Spark master) of ``--engine``, ``--scheduler`` and ``--master``; a one-line error for a
    combination that does not go together."""
    if engine not in (None, "dask", "spark"):
        raise CliInputError(f"--engine must be 'dask' or 'spark'; got {engine!r}.")
    if engine is not None and epsilon is None:
        raise CliInputError(f"--engine {engine} computes differentially private releases: give --epsilon.")
    if master is not None and engine != "spark":
        raise CliInputError("--master is the Spark master of --engine spark.")
    if engine == "spark":
        if scheduler is not None:
            raise CliInputError("--scheduler is the Dask scheduler of --engine dask; Spark takes --master.")
        return None, master or "local[2]"
    if engine == "dask" and scheduler is None:
        return "local", None
    return scheduler, None


@errors_exit_2
def release_command(
    data: Annotated[
        Path,
        typer.Argument(metavar="DATA",
                       help="CSV or Parquet file (with --scheduler or --engine spark: Parquet files, a directory or a glob)."),
    ],
    column: Annotated[str, typer.Option("--column", help="Numeric column holding the records.")],
    query: Annotated[ReleaseQuery, typer.Option("--query", help="The query to answer.")],
    support: Support = None,
    quality_budget: Budget = None,
    quality_weight: Weight = None,
    bounds: Bounds = None,
    clamp: Annotated[bool, typer.Option("--clamp", help="Clamp records outside --bounds.")] = False,
    as_json: AsJson = False,
    seed: Annotated[
        int | None,
        typer.Option("--seed", min=0, help="RESEARCH ONLY: seeded noise is predictable."),
    ] = None,
    epsilon: Annotated[
        float | None,
        typer.Option("--epsilon", help="Differential privacy: the budget ε of this release (instead of a Fisher goal)."),
    ] = None,
    delta: Annotated[float, typer.Option("--delta", help="With --epsilon: the δ of the budget.")] = 0.0,
    unit: Annotated[str | None, typer.Option("--unit", help="With --epsilon: the privacy-unit column.")] = None,
    max_contributions: Annotated[
        int | None,
        typer.Option("--max-contributions", min=1, help="With --epsilon: rows used per unit (at random; default 1)."),
    ] = None,
    accountant: Accountant = None,
    missing: MissingValues = "error",
    quantiles: Annotated[str | None, typer.Option("--q", metavar="LEVELS", help="Quantile levels, e.g. 0.5,0.9.")] = None,
    bins: Annotated[str | None, typer.Option("--bins", metavar="EDGES", help="Histogram bin edges.")] = None,
    categories: Annotated[
        str | None, typer.Option("--categories", metavar="A,B", help="Declared categories (histogram, top-k).")
    ] = None,
    group_by: Annotated[str | None, typer.Option("--group-by", metavar="COLUMN[,COLUMN]",
                                                 help="Group-by key column, or several comma-separated.")] = None,
    keys: Annotated[
        str | None, typer.Option("--keys", metavar="A,B", help="Public group keys (else partition selection); with "
                                 "several key columns COLUMN=A,B;COLUMN=C,D, their product.")
    ] = None,
    top: Annotated[int, typer.Option("--top", min=1, help="How many categories top-k selects.")] = 1,
    noise: Annotated[
        str | None,
        typer.Option("--noise", metavar="FAMILY",
                     help="With --epsilon: the registered noise family (default: laplace, or gaussian for zcdp/rdp)."),
    ] = None,
    where: Annotated[
        str | None,
        typer.Option("--where", metavar="CONDITIONS",
                     help="With --epsilon: public conditions on the rows, e.g. \"region = 'north' and kwh > 0\"."),
    ] = None,
    level: Annotated[float, typer.Option("--level", min=0.0, max=1.0, help="Confidence level.")] = 0.95,
    scheduler: Annotated[
        str | None, typer.Option("--scheduler", help="With --epsilon: aggregate on Dask, 'local' or tcp://HOST:PORT.")
    ] = None,
    engine: Annotated[
        str | None,
        typer.Option("--engine", metavar="ENGINE",
                     help="With --epsilon: aggregate on 'dask' (--scheduler, default local) or 'spark' (--master)."),
    ] = None,
    master: Annotated[
        str | None,
        typer.Option("--master", help="With --engine spark: local[N] (default local[2]), spark://HOST:PORT, k8s://..."),
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="With --epsilon: only the price and the expected accuracy, from public "
                     "information (nothing charged, no value read)."),
    ] = False,
    fisher: Annotated[
        bool, typer.Option("--fisher", help="With --epsilon: also the Fisher bound on one row's value (sum, mean).")
    ] = False,
    ledger_path: LedgerOption = None,
    dataset: DatasetOption = None,
    total_epsilon: TotalEpsilonOption = None,
    total_delta: TotalDeltaOption = None,
) -> None:
    """Release a noisy answer to a query on one column of a CSV or Parquet file, with the guarantee that holds.

    With --epsilon the release is differentially private for a privacy unit (--unit, --max-contributions) and
    comes with its accuracy; otherwise the noise is Fisher-optimal for --support, --quality-budget or
    --quality-weight. Every release is recorded in the ledger before it is printed: its (ε, δ) is charged to the
    dataset's total (refused beyond it); a Fisher release is recorded with its information.
    """
    ledger = LedgerRequest.from_options(ledger_path, dataset, total_epsilon, total_delta)
    scheduler, spark_master = _engine(engine, scheduler, master, epsilon)
    if epsilon is not None:
        from .wording import cli_words, translate

        if support is not None or quality_budget is not None or quality_weight is not None or clamp:
            raise CliInputError("--epsilon is a DP release: drop --support, --quality-budget, --quality-weight, --clamp.")
        question: dict[str, Any] = {"column": column, "query": query.value, "epsilon": epsilon, "delta": delta, "bounds": bounds,
                    "unit": unit, "max_contributions": max_contributions, "accountant": accountant,
                    "quantiles": quantiles, "bins": bins, "categories": categories, "group_by": group_by, "keys": keys,
                    "top": top, "level": level, "ledger": ledger, "where": where, "noise": noise}
        with cli_words(keys=KEYS):
            if dry_run:
                from .dry_runs import dry_release

                payload, text = dry_release(data, **question)
            else:
                from .analyst import dp_release

                if seed is not None:
                    log.warning("--seed makes the noise predictable; use it for research only, never for a real "
                                "release.")
                payload, text = dp_release(data, scheduler=scheduler, missing=missing, seed=seed, fisher=fisher,
                                           spark_master=spark_master, **question)
        payload["notes"] = [translate(note, keys=KEYS) for note in payload.get("notes", [])]
        text = translate(text, keys=KEYS)
        if as_json:
            print_json(payload)
        else:
            print_text(text)
        return
    if query.value not in ("mean", "sum", "variance"):
        raise CliInputError(f"--query {query.value} is a differentially private release: give --epsilon.")
    if dry_run or fisher:
        raise CliInputError("--dry-run and --fisher describe a differentially private release: give --epsilon.")
    if support is None and quality_budget is None and quality_weight is None:
        raise CliInputError(
            f"--query {query.value} needs a privacy goal: --epsilon E for a differentially private release (with "
            "--unit and --max-contributions for a privacy unit), or one Fisher-information goal among --support, "
            "--quality-budget, --quality-weight."
        )
    if scheduler is not None:
        raise CliInputError("--scheduler computes differentially private releases: give --epsilon.")
    if where is not None or noise is not None:
        raise CliInputError("--where and --noise shape a differentially private release: give --epsilon.")
    from .fisher_release import fisher_release

    fisher_release(
        data, column=column, query=query.value, support=support, quality_budget=quality_budget,
        quality_weight=quality_weight, bounds=bounds, clamp=clamp, seed=seed, as_json=as_json, ledger=ledger,
    )  # fmt: skip

