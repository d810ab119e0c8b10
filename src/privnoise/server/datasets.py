"""The datasets an owner declares: their source or table, engine, columns (bounds, floors, categories) and
global budget.

:class:`DatasetSpec` and :class:`ColumnSpec` are a validated ``[datasets.NAME]`` table of ``owner.toml`` and
its columns (see :mod:`.config` and ``docs/server.md``); :class:`DatasetSection` is their schema, which also
checks that each policy (:mod:`.policies`) answers its query kind on the declared columns.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from ..engines import SPARK_MASTER, SPARK_MASTERS
from ..exceptions import InvalidParameterError
from .checks import BOUND_MAX, FLOOR_RANGE
from .config_rules import IDENTIFIER, STRICT, Budgeted, KeyRuleError, optional_keys, positive_in, rational
from .mechanism_rules import FISHER_KINDS, NOISE_ONLY_KINDS, RULES
from .policies import PolicySection, PolicySpec, policy_family
from .queryspec import KINDS as QUERY_KINDS

__all__ = ["COMPOSITIONS", "STEP_QUERIES", "ColumnSpec", "DatasetSection", "DatasetSpec"]

_MAX_CATEGORIES = 256
#: How a dataset's (ε, δ) charges compose: basic composition, or the Rényi filter (:mod:`privnoise.dp.renyi_filter`).
COMPOSITIONS = ("basic", "renyi")
#: A floored column's ``step_queries``: refuse (the default) or allow answers that are step functions of it.
STEP_QUERIES = ("refuse", "allow")


@dataclass(frozen=True, slots=True)
class ColumnSpec:
    name: str
    type: str  # "number" | "text"
    bounds: tuple[float, float] | None = None
    out_of_bounds: str = "clamp"
    fisher_floor: float | None = None
    categories: tuple[str, ...] | None = None  # declared (public) values of a text column
    step_queries: str = "refuse"  # "allow": filters, bins, quantiles, group keys on a floored column (.steps)


@dataclass(frozen=True, slots=True)
class DatasetSpec:
    name: str
    table: str
    source: Path | None
    epsilon: Fraction
    delta: Fraction
    columns: dict[str, ColumnSpec]
    policies: dict[str, PolicySpec]
    engine: str = "sql"  # "sql": imported into the database; "dask", "spark": Parquet files computed on a cluster
    scheduler: str | None = None  # for engine "dask": "local" or "tcp://host:port"
    master: str | None = None  # for engine "spark": "local[N]", "spark://host:port", "k8s://…", "yarn"
    #: How the (ε, δ) charges on the dataset compose (its global budget and every querier's on it): "basic"
    #: (Σε, Σδ in exact rationals) or "renyi" (the Rényi filter of :mod:`privnoise.dp.renyi_filter`, which keeps
    #: ``renyi_share`` of each budget's δ for its tail).
    composition: str = "basic"
    renyi_share: Fraction = Fraction(1, 2)

    def numeric(self, column: str) -> ColumnSpec | None:
        spec = self.columns.get(column)
        return spec if spec is not None and spec.type == "number" else None


_Number = int | float


def _step_queries(v: Any) -> str:
    if not isinstance(v, str) or v not in STEP_QUERIES:
        raise ValueError(
            "must be 'refuse' (the default: a filter, histogram bin, quantile or group key on the column is "
            "refused, since its Fisher floor cannot hold against a step function) or 'allow' (answer them; "
            f"the floor then bounds the differentiable answers only); got {v!r}"
        )
    return v


def _categories(v: Any) -> tuple[str, ...]:
    if (
        not isinstance(v, list)
        or not 1 <= len(v) <= _MAX_CATEGORIES
        or any(not isinstance(c, str) or not 0 < len(c) <= 200 for c in v)
        or len(set(v)) != len(v)
    ):
        raise ValueError(
            f"must be a list of 1 to {_MAX_CATEGORIES} distinct non-empty strings (at most 200 characters each); "
            f"got {v!r}"
        )
    if any(ch < " " or ch == "\x7f" for c in v for ch in c):
        raise ValueError("must not contain control characters")
    return tuple(v)


def _bounds(v: Any) -> tuple[float, float]:
    if (
        not isinstance(v, list)
        or len(v) != 2
        or any(isinstance(b, bool) or not isinstance(b, _Number) or not math.isfinite(b) for b in v)
        or not v[0] < v[1]
    ):
        raise ValueError(f"must be [LO, HI], two finite numbers with LO < HI; got {v!r}")
    if max(abs(v[0]), abs(v[1])) > BOUND_MAX:
        raise ValueError(f"must lie within ±{BOUND_MAX:g}; got {v!r}")
    return (float(v[0]), float(v[1]))


class _Column(BaseModel):
    model_config = STRICT
    type: Literal["number", "text"] = "number"
    bounds: Any = None
    out_of_bounds: Literal["clamp", "reject"] = "clamp"
    fisher_floor: Any = None
    categories: Any = None
    step_queries: Any = None

    _optional_keys = optional_keys({
        "bounds": _bounds,
        "fisher_floor": positive_in(*FLOOR_RANGE),
        "categories": _categories,
        "step_queries": _step_queries,
    })

    @model_validator(mode="after")
    def _shape(self) -> _Column:
        if self.type == "text":
            if (
                self.bounds is not None
                or self.fisher_floor is not None
                or "out_of_bounds" in self.model_fields_set
            ):
                raise ValueError("a text column takes no bounds or policies (it is used in `where`, `group by` and `histogram`)")
        elif self.bounds is None:
            raise KeyRuleError("bounds", "must be [LO, HI], two finite numbers with LO < HI (required)")
        elif self.categories is not None:
            raise KeyRuleError("categories", "categories are declared on text columns (histogram bins of a number "
                                "column are given in the query)")
        if self.step_queries is not None and self.fisher_floor is None:
            raise KeyRuleError("step_queries", "says whether the column's `fisher_floor` refuses step queries (filters, "
                                "bins, quantiles, group keys on it); the column has no `fisher_floor`: declare one or "
                                "remove `step_queries`")
        return self


class DatasetSection(Budgeted):
    source: str | None = None
    table: str | None = None
    engine: Literal["sql", "dask", "spark"] = "sql"
    scheduler: str | None = None
    master: str | None = None
    columns: dict[str, _Column] = Field(default_factory=dict)
    policies: dict[str, PolicySection] = Field(default_factory=dict)
    composition: Literal["basic", "renyi"] = "basic"
    renyi_delta_share: Any = None

    @field_validator("renyi_delta_share")
    @classmethod
    def _share(cls, v: Any) -> Any:
        if v is None:
            return v
        try:
            share = rational("delta")(v)
        except ValueError:
            share = None
        if share is None and v in (1, "1", 1.0):
            share = Fraction(1)
        if share is None or share <= 0:
            raise ValueError(f"must be a number in (0, 1]: the share of each budget's δ kept for the Rényi filter's "
                             f"tail; got {v!r}")
        return share

    @field_validator("scheduler")
    @classmethod
    def _scheduler(cls, v: Any) -> Any:
        from ..scale.cluster import check_scheduler

        try:
            return None if v is None else check_scheduler(v, "scheduler", "owner.toml")
        except InvalidParameterError:
            raise ValueError(f"must be 'local' or a scheduler address tcp://HOST:PORT (or tls://); got {v!r}") from None

    @field_validator("master")
    @classmethod
    def _master(cls, v: Any) -> Any:
        if v is not None and (not isinstance(v, str) or not SPARK_MASTER.fullmatch(v)):
            raise ValueError(f"must be a Spark master: {SPARK_MASTERS}; got {v!r}")
        return v

    @model_validator(mode="after")
    def _rules(self) -> DatasetSection:
        if (self.source is None) == (self.table is None):
            raise ValueError(
                "give exactly one of `source` (a CSV/Parquet file) or `table` (a database table)"
            )
        if self.scheduler is not None and self.engine != "dask":
            raise KeyRuleError("scheduler", "is for engine = 'dask' only")
        if self.master is not None and self.engine != "spark":
            raise KeyRuleError("master", "is for engine = 'spark' only")
        if self.engine in ("dask", "spark"):
            if self.source is None:
                raise KeyRuleError("source", f"engine {self.engine!r} reads Parquet files: give `source` (a file, glob "
                                   "or directory)")
            if Path(self.source).suffix.lower() not in (".parquet", ""):
                raise KeyRuleError("source", f"engine {self.engine!r} reads Parquet files (a file, glob or directory); "
                                   f"got {self.source!r}")
        elif self.source is not None and Path(self.source).suffix.lower() not in (".csv", ".parquet"):
            raise KeyRuleError("source", f"must be a .csv or .parquet file; got {self.source!r}")
        if self.table is not None:
            if not IDENTIFIER.match(self.table):
                raise KeyRuleError("table", f"must be an identifier (letters, digits, _); got {self.table!r}")
            if "identity" in self.policies:
                raise KeyRuleError("policies.identity", "identity releases need an imported dataset (`source`)")
        if self.epsilon is None:
            raise KeyRuleError("epsilon", "the dataset's global ε budget is required")
        if self.composition == "renyi" and not self.delta:
            raise KeyRuleError("composition", "the Rényi filter states (ε, δ) with δ > 0: give the dataset a `delta` "
                               "budget, or keep composition = 'basic' for a pure ε budget")
        if self.renyi_delta_share is not None and self.composition != "renyi":
            raise KeyRuleError("renyi_delta_share", "is for composition = 'renyi' only")
        if not self.columns:
            raise KeyRuleError("columns", "declare at least one column with its bounds")
        for name in self.columns:
            if not IDENTIFIER.match(name):
                raise KeyRuleError(
                    f"columns.{name}", f"must be an identifier (letters, digits, _); got {name!r}"
                )
        if not any(c.type == "number" for c in self.columns.values()):
            raise KeyRuleError("columns", "declare at least one numeric column with bounds")
        for kind, policy in self.policies.items():
            key = f"policies.{kind}"
            if kind not in QUERY_KINDS:
                raise KeyRuleError(key, f"unknown query kind; choose among {', '.join(QUERY_KINDS)}")
            family = policy_family(policy.mechanism)  # a registered noise family answers what laplace does
            rules = None if family is not None else RULES[policy.mechanism]
            if (kind == "quantile") != (rules is not None and rules.quantiles):
                quantiles = " or ".join(repr(n) for n, r in RULES.items() if r.quantiles)
                raise KeyRuleError(
                    f"{key}.mechanism",
                    f"quantiles are answered by the exponential mechanism (mechanism = {quantiles}), and it "
                    f"answers quantiles only; got {policy.mechanism!r} for {kind!r}",
                )
            if kind in NOISE_ONLY_KINDS and rules is not None and not rules.answers_vectors:
                vectors = ", ".join(n for n, r in RULES.items() if r.answers_vectors)
                raise KeyRuleError(f"{key}.mechanism",
                                   f"{kind} is answered with {vectors} or a registered family's noise")
            if rules is not None and rules.fisher and kind not in FISHER_KINDS:
                raise KeyRuleError(
                    f"{key}.mechanism",
                    f"Fisher policies answer {', '.join(FISHER_KINDS)} (linear, unfiltered); not {kind!r}",
                )
            if rules is not None and rules.kinds is not None and kind not in rules.kinds:
                raise KeyRuleError(
                    f"{key}.mechanism",
                    f"{policy.mechanism} noise is a vector on a 2-D or 3-D support: it answers "
                    f"{', '.join(rules.kinds)} (blocks of consecutive records); not {kind!r}",
                )
            if rules is not None and rules.engines is not None and self.engine not in rules.engines:
                engines = " or ".join(repr(e) for e in rules.engines)
                raise KeyRuleError(
                    f"{key}.mechanism", f"{policy.mechanism} answers datasets of engine {engines} only"
                )
            if rules is not None and rules.fisher:
                unfloored = [
                    n for n, c in self.columns.items() if c.type == "number" and c.fisher_floor is None
                ]
                if unfloored:
                    raise KeyRuleError(
                        key,
                        f"a Fisher policy needs `fisher_floor` on every numeric column; missing on {unfloored[0]!r}",
                    )
        return self
