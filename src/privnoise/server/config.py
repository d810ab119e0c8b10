"""The owner's configuration: ``owner.toml`` validated with pydantic into frozen dataclasses.

Every error names the file, the key at fault and the rule. The format (see ``docs/server.md``)::

    [server]
    database = "sqlite"            # default: privnoise.db next to this file; or "postgresql://user@host/db"
    host = "127.0.0.1"
    port = 8000
    workers = 1                    # server processes over the same database
    max_body_bytes = 16384         # larger request bodies get 413 before they are read
    api_docs = false               # /openapi.json, /docs and /redoc are off unless switched on
    trusted_proxies = []           # addresses or CIDR networks whose X-Forwarded-For is believed (none: ignored)
    # admin_key_hash = "..."       # the admin key's stored form (python -m privnoise.server hash-key)

    [console]                      # the web console (privnoise.server.console)
    enabled = true                 # default: on when the server listens on a loopback address
    session_minutes = 30           # a console session lasts this long, then the key is asked again

    [datasets.meters]
    source = "meters.csv"          # a CSV or Parquet file imported into the database, or: table = "readings"
    epsilon = 10.0                 # global (ε, δ) budget of the dataset, shared by every querier
    delta = 1e-5

    [datasets.meters.columns.kwh]
    bounds = [0.0, 60.0]           # declared, never inferred from the data
    out_of_bounds = "clamp"        # or "reject" (at import)
    fisher_floor = 0.01            # global Cramér–Rao floor of a record (for Fisher policies)
    step_queries = "refuse"        # default; "allow": answer `where`, bins, quantiles, group keys on kwh, which
                                   # its floor then does not bound (see privnoise.server.steps)

    [datasets.meters.columns.region]
    type = "text"                  # usable in `where` clauses, `group by` and `histogram(region)`
    categories = ["north", "south", "east", "west"]   # public keys of `group by region` / `histogram(region)`

    [datasets.meters.policies.mean]
    mechanism = "laplace"          # laplace | gaussian | fisher-cosine | fisher-gaussian | fisher-fem | custom
    epsilon = 0.1                  # also the charge of `mean(kwh) group by region` (one charge for all keys)
    partition_delta = 1e-6         # optional: `group by` a text column without declared categories selects its
                                   # keys by a thresholded noisy count, and charges this δ besides ε

    [datasets.meters.policies.quantile]
    mechanism = "exponential"      # quantiles: the exponential mechanism, pure ε
    epsilon = 0.1

    [datasets.meters.policies.identity]
    mechanism = "fisher-fem"       # Theorem 2's optimal noise on a 2-D or 3-D support, by finite elements
    support = "polygon:0,0;2,0;2,1;1,1;1,2;0,2"   # as `privnoise design --support`

    [datasets.big]
    source = "meters/*.parquet"    # Parquet files (a glob or a directory) read by Dask at query time
    engine = "dask"                # default "sql": the file is imported into the database
    scheduler = "local"            # a LocalCluster of this machine, or "tcp://host:8786"
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..exceptions import InvalidParameterError
from .checks import BOUND_MAX, FLOOR_RANGE, SCALE_RANGE, checked_rational
from .querylang import KINDS as QUERY_KINDS

__all__ = [
    "QUERY_KINDS",
    "ColumnSpec",
    "ConfigError",
    "ConsoleConfig",
    "DatasetSpec",
    "PolicySpec",
    "ServerConfig",
    "is_loopback",
    "load_config",
    "parse_owner_support",
    "sqlalchemy_url",
]

MECHANISMS = ("laplace", "gaussian", "fisher-cosine", "fisher-gaussian", "fisher-fem", "custom", "exponential")
#: The kinds answered by additive Laplace or Gaussian noise only (vectors of counts and sums, one charge).
NOISE_ONLY_KINDS = ("histogram",)
_MAX_CATEGORIES = 256
FISHER_KINDS = ("sum", "mean", "linear", "identity")
FEM_KINDS = ("identity",)  # a d-dimensional support noises d consecutive records together
FEM_TOLERANCE_RANGE = (1e-8, 1e-2)
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
#: A floored column's ``step_queries``: refuse (the default) or allow answers that are step functions of it.
STEP_QUERIES = ("refuse", "allow")


class ConfigError(InvalidParameterError):
    """``owner.toml`` is malformed; the message names the file and the key."""


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
class PolicySpec:
    kind: str
    mechanism: str
    epsilon: Fraction | None = None
    delta: Fraction | None = None
    half_width: float | None = None
    quality: float | None = None
    factory: str | None = None
    partition_delta: Fraction | None = None  # δ of partition selection: `group by` a column without categories
    support: str | None = None  # fisher-fem: the support as ``KIND:POINTS`` (privnoise._cli.supports)
    tolerance: float | None = None  # fisher-fem: relative tolerance of the finite-element eigenvalue

    @property
    def is_fisher(self) -> bool:
        return self.mechanism.startswith("fisher-")

    @property
    def is_scalar_fisher(self) -> bool:
        """A Fisher policy whose noise is designed per scalar output (cos² or Gaussian)."""
        return self.mechanism in ("fisher-cosine", "fisher-gaussian")


@dataclass(frozen=True, slots=True)
class DatasetSpec:
    name: str
    table: str
    source: Path | None
    epsilon: Fraction
    delta: Fraction
    columns: dict[str, ColumnSpec]
    policies: dict[str, PolicySpec]
    engine: str = "sql"  # "sql": imported into the database; "dask": Parquet files computed on a Dask cluster
    scheduler: str | None = None  # for engine "dask": "local" or "tcp://host:port"

    def numeric(self, column: str) -> ColumnSpec | None:
        spec = self.columns.get(column)
        return spec if spec is not None and spec.type == "number" else None


@dataclass(frozen=True, slots=True)
class ConsoleConfig:
    """``[console]``: the web console for the owner and the queriers (see ``docs/server.md``)."""

    enabled: bool = True
    session_minutes: float = 30.0
    secure_cookies: bool = False  # Secure cookies even when a request did not come over TLS (behind a proxy)
    page_size: int = 25


@dataclass(frozen=True, slots=True)
class ServerConfig:
    path: Path
    database_url: str
    host: str = "127.0.0.1"
    port: int = 8000
    datasets: dict[str, DatasetSpec] = field(default_factory=dict)
    workers: int = 1
    max_body_bytes: int = 16384
    api_docs: bool = False
    admin_key_hash: str | None = None
    key_cache_seconds: float = 300.0
    auth_failures: int = 10
    auth_window_seconds: float = 60.0
    auth_tarpit_seconds: float = 1.0
    trusted_proxies: tuple[str, ...] = ()  # peers whose X-Forwarded-For is believed (addresses or networks)
    console: ConsoleConfig = field(default_factory=ConsoleConfig)


def sqlalchemy_url(url: str) -> str:
    """Map ``postgresql://`` to the psycopg 3 driver; other URLs unchanged."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


# --- the schema ------------------------------------------------------------------------------------------------

_Number = int | float
_Strict = ConfigDict(extra="forbid", frozen=True)


def _rational(kind: str) -> Any:
    def check(value: Any) -> Fraction:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise ValueError(f"must be a number or a rational string like '1/10'; got {value!r}")
        try:
            return checked_rational(value, "value", "owner.toml", kind=kind)
        except InvalidParameterError as exc:
            rule = {"epsilon": "a finite number > 0 and ≤ 10⁶", "delta": "a finite number ≥ 0 and < 1"}[kind]
            raise ValueError(
                f"must be {rule} (an exact rational of at most 100 characters); got {value!r}"
            ) from exc

    return check


def parse_owner_support(text: str) -> Any:
    """The :class:`~privnoise.fisher.Support` of a fisher-fem policy's ``support`` (``KIND:POINTS``, as
    ``privnoise design --support``); :class:`~privnoise.exceptions.InvalidParameterError` names the rule."""
    from ..fisher.support_text import parse_support

    return parse_support(text, "support")


def _positive_in(low: float, high: float) -> Any:
    def check(value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"must be a finite number; got {value!r}")
        if not math.isfinite(value):
            raise ValueError(f"must be a finite number; got {value!r}")
        if value <= 0:
            raise ValueError(f"must be > 0; got {value!r}")
        if not low <= value <= high:
            raise ValueError(f"must lie in [{low:g}, {high:g}]; got {value!r}")
        return float(value)

    return check


class _Column(BaseModel):
    model_config = _Strict
    type: Literal["number", "text"] = "number"
    bounds: Any = None
    out_of_bounds: Literal["clamp", "reject"] = "clamp"
    fisher_floor: Any = None
    categories: Any = None
    step_queries: Any = None

    @field_validator("step_queries")
    @classmethod
    def _step_queries(cls, v: Any) -> Any:
        if v is not None and (not isinstance(v, str) or v not in STEP_QUERIES):
            raise ValueError(
                "must be 'refuse' (the default: a filter, histogram bin, quantile or group key on the column is "
                "refused, since its Fisher floor cannot hold against a step function) or 'allow' (answer them; "
                f"the floor then bounds the differentiable answers only); got {v!r}"
            )
        return v

    @field_validator("categories")
    @classmethod
    def _categories(cls, v: Any) -> Any:
        if v is None:
            return v
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

    @field_validator("bounds")
    @classmethod
    def _bounds(cls, v: Any) -> Any:
        if v is None:
            return v
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

    @field_validator("fisher_floor")
    @classmethod
    def _floor(cls, v: Any) -> Any:
        return None if v is None else _positive_in(*FLOOR_RANGE)(v)

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
            raise _KeyError("bounds", "must be [LO, HI], two finite numbers with LO < HI (required)")
        elif self.categories is not None:
            raise _KeyError("categories", "categories are declared on text columns (histogram bins of a number "
                            "column are given in the query)")
        if self.step_queries is not None and self.fisher_floor is None:
            raise _KeyError("step_queries", "says whether the column's `fisher_floor` refuses step queries (filters, "
                            "bins, quantiles, group keys on it); the column has no `fisher_floor`: declare one or "
                            "remove `step_queries`")
        return self


class _KeyError(ValueError):
    """A model-level rule about one key: the error message names the key."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"[{key}] {message}")


class _Budgeted(BaseModel):
    """An (ε, δ) pair read as exact rationals (a policy's charge, a dataset's global budget)."""

    model_config = _Strict
    epsilon: Any = None
    delta: Any = None

    @field_validator("epsilon")
    @classmethod
    def _epsilon(cls, v: Any) -> Any:
        return None if v is None else _rational("epsilon")(v)

    @field_validator("delta")
    @classmethod
    def _delta(cls, v: Any) -> Any:
        return None if v is None else _rational("delta")(v)


class _Policy(_Budgeted):
    mechanism: Literal["laplace", "gaussian", "fisher-cosine", "fisher-gaussian", "fisher-fem", "custom", "exponential"]
    half_width: Any = None
    quality: Any = None
    factory: Any = None
    partition_delta: Any = None
    support: Any = None
    tolerance: Any = None

    @field_validator("partition_delta")
    @classmethod
    def _partition_delta(cls, v: Any) -> Any:
        if v is None:
            return v
        value = _rational("delta")(v)
        if value <= 0:
            raise ValueError(f"must be > 0 (a key held by one record is released with probability ≤ it); got {v!r}")
        return value

    @field_validator("support")
    @classmethod
    def _support(cls, v: Any) -> Any:
        if v is None:
            return v
        if not isinstance(v, str):
            raise ValueError(f"must be a support written KIND:POINTS, e.g. 'box:-1,-1;1,1'; got {v!r}")
        try:
            parse_owner_support(v)
        except InvalidParameterError as exc:
            raise ValueError(f"must be a 2-D or 3-D support KIND:POINTS ({exc}); got {v!r}") from None
        return v

    @field_validator("tolerance")
    @classmethod
    def _tolerance(cls, v: Any) -> Any:
        return None if v is None else _positive_in(*FEM_TOLERANCE_RANGE)(v)

    @field_validator("half_width", "quality")
    @classmethod
    def _scale(cls, v: Any) -> Any:
        return None if v is None else _positive_in(*SCALE_RANGE)(v)

    @field_validator("factory")
    @classmethod
    def _factory(cls, v: Any) -> Any:
        if v is not None and (not isinstance(v, str) or ":" not in v):
            raise ValueError(f"must be 'module:function'; got {v!r}")
        return v

    @model_validator(mode="after")
    def _needs(self) -> _Policy:
        need = {
            "laplace": ("epsilon",),
            "gaussian": ("epsilon", "delta"),
            "fisher-cosine": ("half_width",),
            "fisher-gaussian": ("quality",),
            "fisher-fem": ("support",),
            "custom": ("factory", "epsilon"),
            "exponential": ("epsilon",),
        }[self.mechanism]
        for name in need:
            if getattr(self, name) is None:
                raise _KeyError(name, f"is required for mechanism {self.mechanism!r}")
        if self.mechanism != "fisher-fem":
            for name in ("support", "tolerance"):
                if getattr(self, name) is not None:
                    raise _KeyError(name, f"is for mechanism 'fisher-fem' only, not {self.mechanism!r}")
        if self.mechanism in ("laplace", "exponential") and self.delta is not None:
            raise _KeyError("delta", f"the {self.mechanism} mechanism is pure ε-DP; remove `delta`")
        if self.partition_delta is not None and self.mechanism != "laplace":
            raise _KeyError("partition_delta", "partition selection is offered with laplace policies")
        return self


class _Dataset(_Budgeted):
    source: str | None = None
    table: str | None = None
    engine: Literal["sql", "dask"] = "sql"
    scheduler: str | None = None
    columns: dict[str, _Column] = Field(default_factory=dict)
    policies: dict[str, _Policy] = Field(default_factory=dict)

    @field_validator("scheduler")
    @classmethod
    def _scheduler(cls, v: Any) -> Any:
        from ..scale.cluster import check_scheduler

        try:
            return None if v is None else check_scheduler(v, "scheduler", "owner.toml")
        except InvalidParameterError:
            raise ValueError(f"must be 'local' or a scheduler address tcp://HOST:PORT (or tls://); got {v!r}") from None

    @model_validator(mode="after")
    def _rules(self) -> _Dataset:
        if (self.source is None) == (self.table is None):
            raise ValueError(
                "give exactly one of `source` (a CSV/Parquet file) or `table` (a database table)"
            )
        if self.engine == "dask":
            if self.source is None:
                raise _KeyError("source", "engine 'dask' reads Parquet files: give `source` (a file, glob or directory)")
            if Path(self.source).suffix.lower() not in (".parquet", ""):
                raise _KeyError("source", f"engine 'dask' reads Parquet files (a file, glob or directory); got {self.source!r}")
        elif self.scheduler is not None:
            raise _KeyError("scheduler", "is for engine = 'dask' only")
        elif self.source is not None and Path(self.source).suffix.lower() not in (".csv", ".parquet"):
            raise _KeyError("source", f"must be a .csv or .parquet file; got {self.source!r}")
        if self.table is not None:
            if not _NAME.match(self.table):
                raise _KeyError("table", f"must be an identifier (letters, digits, _); got {self.table!r}")
            if "identity" in self.policies:
                raise _KeyError("policies.identity", "identity releases need an imported dataset (`source`)")
        if self.epsilon is None:
            raise _KeyError("epsilon", "the dataset's global ε budget is required")
        if not self.columns:
            raise _KeyError("columns", "declare at least one column with its bounds")
        for name in self.columns:
            if not _NAME.match(name):
                raise _KeyError(
                    f"columns.{name}", f"must be an identifier (letters, digits, _); got {name!r}"
                )
        if not any(c.type == "number" for c in self.columns.values()):
            raise _KeyError("columns", "declare at least one numeric column with bounds")
        for kind, policy in self.policies.items():
            key = f"policies.{kind}"
            if kind not in QUERY_KINDS:
                raise _KeyError(key, f"unknown query kind; choose among {', '.join(QUERY_KINDS)}")
            if (kind == "quantile") != (policy.mechanism == "exponential"):
                raise _KeyError(
                    f"{key}.mechanism",
                    "quantiles are answered by the exponential mechanism (mechanism = 'exponential'), and it "
                    f"answers quantiles only; got {policy.mechanism!r} for {kind!r}",
                )
            if kind in NOISE_ONLY_KINDS and policy.mechanism not in ("laplace", "gaussian"):
                raise _KeyError(f"{key}.mechanism", f"{kind} is answered with laplace or gaussian noise")
            if policy.mechanism.startswith("fisher-"):
                if kind not in FISHER_KINDS:
                    raise _KeyError(
                        f"{key}.mechanism",
                        f"Fisher policies answer {', '.join(FISHER_KINDS)} (linear, unfiltered); not {kind!r}",
                    )
                if policy.mechanism == "fisher-fem" and kind not in FEM_KINDS:
                    raise _KeyError(
                        f"{key}.mechanism",
                        f"fisher-fem noise is a vector on a 2-D or 3-D support: it answers "
                        f"{', '.join(FEM_KINDS)} (blocks of consecutive records); not {kind!r}",
                    )
                if policy.mechanism == "fisher-fem" and self.engine == "dask":
                    raise _KeyError(f"{key}.mechanism", "fisher-fem answers datasets of engine 'sql' only")
                unfloored = [
                    n for n, c in self.columns.items() if c.type == "number" and c.fisher_floor is None
                ]
                if unfloored:
                    raise _KeyError(
                        key,
                        f"a Fisher policy needs `fisher_floor` on every numeric column; missing on {unfloored[0]!r}",
                    )
        return self


class _Server(BaseModel):
    model_config = _Strict
    database: str = "sqlite"
    host: str = "127.0.0.1"
    port: Annotated[int, Field(ge=0, le=65535, strict=True)] = 8000
    workers: Annotated[int, Field(ge=1, le=64, strict=True)] = 1
    max_body_bytes: Annotated[int, Field(ge=256, le=16 * 2**20, strict=True)] = 16384
    api_docs: Annotated[bool, Field(strict=True)] = False
    admin_key_hash: str | None = None
    key_cache_seconds: Annotated[float, Field(ge=0, le=86400, allow_inf_nan=False)] = 300.0
    auth_failures: Annotated[int, Field(ge=1, le=10**6, strict=True)] = 10
    auth_window_seconds: Annotated[float, Field(gt=0, le=86400, allow_inf_nan=False)] = 60.0
    auth_tarpit_seconds: Annotated[float, Field(ge=0, le=60, allow_inf_nan=False)] = 1.0
    trusted_proxies: Annotated[list[str], Field(max_length=256)] = []

    @field_validator("trusted_proxies")
    @classmethod
    def _proxies(cls, v: list[str]) -> list[str]:
        import ipaddress

        for entry in v:
            try:
                ipaddress.ip_network(entry, strict=False)
            except ValueError:
                raise ValueError(f"must be IP addresses or CIDR networks like '10.0.0.0/8'; got {entry!r}") from None
        return v

    @field_validator("database")
    @classmethod
    def _database(cls, v: str) -> str:
        if not v or not (
            v == "sqlite" or v.startswith(("sqlite:", "postgresql:", "postgres:", "postgresql+psycopg:"))
        ):
            raise ValueError(f"must be 'sqlite', a sqlite:/// URL or a postgresql:// URL; got {v!r}")
        return v

    @field_validator("admin_key_hash")
    @classmethod
    def _admin_hash(cls, v: str | None) -> str | None:
        from .keys import parse_admin_key_hash

        if v is not None and parse_admin_key_hash(v) is None:
            raise ValueError(
                "must be the output of `python -m privnoise.server hash-key` (<key id>:scrypt$...)"
            )
        return v


class _Console(BaseModel):
    model_config = _Strict
    enabled: Annotated[bool, Field(strict=True)] | None = None
    session_minutes: Annotated[float, Field(gt=0, le=24 * 60, allow_inf_nan=False)] = 30.0
    secure_cookies: Annotated[bool, Field(strict=True)] = False
    page_size: Annotated[int, Field(ge=5, le=500, strict=True)] = 25


def is_loopback(host: str) -> bool:
    """Whether ``host`` names a loopback address (127.0.0.0/8, ::1, localhost)."""
    import ipaddress

    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class _Owner(BaseModel):
    model_config = _Strict
    server: _Server = Field(default_factory=_Server)
    console: _Console = Field(default_factory=_Console)
    datasets: dict[str, _Dataset]

    @model_validator(mode="after")
    def _some(self) -> _Owner:
        if not self.datasets:
            raise _KeyError("datasets", "declare at least one dataset")
        for name in self.datasets:
            if not _NAME.match(name):
                raise _KeyError(
                    f"datasets.{name}", f"must be an identifier (letters, digits, _); got {name!r}"
                )
        return self


# --- errors and conversion --------------------------------------------------------------------------------------


def _error(file: Path, exc: ValidationError) -> ConfigError:
    """The first validation error as "<file>: `<dotted key>`: <rule>"."""
    err = exc.errors(include_url=False)[0]
    loc = [str(part) for part in err["loc"]]
    message = str(err["msg"]).removeprefix("Value error, ")
    if message.startswith("[") and "] " in message:  # a model-level rule about one key
        key, message = message[1:].split("] ", 1)
        loc.append(key)
    if err["type"] == "extra_forbidden":
        message = "unknown key"
    elif err["type"] == "missing":
        message = "is required"
    elif err["type"] != "value_error":
        message = f"{message}; got {err.get('input')!r}"
    return ConfigError(f"{file}: `{'.'.join(loc) or '(top level)'}`: {message}.")


def _spec(name: str, d: _Dataset, base: Path) -> DatasetSpec:
    columns = {
        c: ColumnSpec(c, col.type, col.bounds, col.out_of_bounds, col.fisher_floor, col.categories,
                      col.step_queries or STEP_QUERIES[0])
        for c, col in d.columns.items()
    }
    policies = {
        kind: PolicySpec(
            kind,
            p.mechanism,
            p.epsilon,
            p.delta,
            p.half_width,
            p.quality,
            p.factory,
            p.partition_delta,
            p.support,
            p.tolerance,
        )
        for kind, p in d.policies.items()
    }
    source = None if d.source is None else (base / d.source).resolve()
    table = f"pn_data_{name}" if source is not None else str(d.table)
    scheduler = (d.scheduler or "local") if d.engine == "dask" else None
    return DatasetSpec(name, table, source, d.epsilon, d.delta or Fraction(0), columns, policies, d.engine, scheduler)


def load_config(path: str | Path) -> ServerConfig:
    """Read and validate ``owner.toml``; raise :class:`ConfigError` naming the file and key at fault."""
    file = Path(path).resolve()
    try:
        raw = tomllib.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file}: not valid TOML: {exc}") from None
    if "datasets" not in raw:
        raise ConfigError(f"{file}: `datasets`: declare at least one dataset.")
    try:
        owner = _Owner.model_validate(raw)
    except ValidationError as exc:
        raise _error(file, exc) from None
    s = owner.server
    database = f"sqlite:///{file.parent / 'privnoise.db'}" if s.database == "sqlite" else s.database
    return ServerConfig(
        path=file,
        database_url=sqlalchemy_url(database),
        host=s.host,
        port=s.port,
        datasets={n: _spec(n, d, file.parent) for n, d in owner.datasets.items()},
        workers=s.workers,
        max_body_bytes=s.max_body_bytes,
        api_docs=s.api_docs,
        admin_key_hash=s.admin_key_hash,
        key_cache_seconds=s.key_cache_seconds,
        auth_failures=s.auth_failures,
        auth_window_seconds=s.auth_window_seconds,
        auth_tarpit_seconds=s.auth_tarpit_seconds,
        trusted_proxies=tuple(s.trusted_proxies),
        console=ConsoleConfig(
            # on by default where only this machine can reach it
            enabled=is_loopback(s.host) if owner.console.enabled is None else owner.console.enabled,
            session_minutes=owner.console.session_minutes,
            secure_cookies=owner.console.secure_cookies,
            page_size=owner.console.page_size,
        ),
    )
