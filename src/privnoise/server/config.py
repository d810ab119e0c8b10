"""The owner's configuration: ``owner.toml`` read with :mod:`tomllib` into frozen dataclasses.

Every error names the file and the key at fault. The format (see ``docs/server.md``)::

    [server]
    database = "sqlite"            # default: privnoise.db next to this file; or "postgresql://user@host/db"
    host = "127.0.0.1"
    port = 8000

    [datasets.meters]
    source = "meters.csv"          # a CSV or Parquet file imported into the database, or: table = "readings"
    epsilon = 10.0                 # global (ε, δ) budget of the dataset, shared by every querier
    delta = 1e-5

    [datasets.meters.columns.kwh]
    bounds = [0.0, 60.0]           # declared, never inferred from the data
    out_of_bounds = "clamp"        # or "reject" (at import)
    fisher_floor = 0.01            # global Cramér–Rao floor of a record (for Fisher policies)

    [datasets.meters.columns.region]
    type = "text"                  # usable in `where` clauses only

    [datasets.meters.policies.mean]
    mechanism = "laplace"          # laplace | gaussian | fisher-cosine | fisher-gaussian | custom
    epsilon = 0.1
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from ..dp.accounting import exact_rational
from ..exceptions import InvalidParameterError

__all__ = [
    "QUERY_KINDS",
    "ColumnSpec",
    "ConfigError",
    "DatasetSpec",
    "PolicySpec",
    "ServerConfig",
    "load_config",
    "sqlalchemy_url",
]

QUERY_KINDS = ("count", "sum", "mean", "weighted_mean", "variance", "linear", "identity")
MECHANISMS = ("laplace", "gaussian", "fisher-cosine", "fisher-gaussian", "custom")
FISHER_KINDS = ("sum", "mean", "linear", "identity")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


class ConfigError(InvalidParameterError):
    """``owner.toml`` is malformed; the message names the file and the key."""


@dataclass(frozen=True, slots=True)
class ColumnSpec:
    name: str
    type: str  # "number" | "text"
    bounds: tuple[float, float] | None = None
    out_of_bounds: str = "clamp"
    fisher_floor: float | None = None


@dataclass(frozen=True, slots=True)
class PolicySpec:
    kind: str
    mechanism: str
    epsilon: Fraction | None = None
    delta: Fraction | None = None
    half_width: float | None = None
    quality: float | None = None
    factory: str | None = None

    @property
    def is_fisher(self) -> bool:
        return self.mechanism.startswith("fisher-")


@dataclass(frozen=True, slots=True)
class DatasetSpec:
    name: str
    table: str
    source: Path | None
    epsilon: Fraction
    delta: Fraction
    columns: dict[str, ColumnSpec]
    policies: dict[str, PolicySpec]

    def numeric(self, column: str) -> ColumnSpec | None:
        spec = self.columns.get(column)
        return spec if spec is not None and spec.type == "number" else None


@dataclass(frozen=True, slots=True)
class ServerConfig:
    path: Path
    database_url: str
    host: str = "127.0.0.1"
    port: int = 8000
    datasets: dict[str, DatasetSpec] = field(default_factory=dict)


def sqlalchemy_url(url: str) -> str:
    """Map ``postgresql://`` to the psycopg 3 driver; other URLs unchanged."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


class _Reader:
    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, key: str, message: str) -> ConfigError:
        return ConfigError(f"{self.path}: `{key}`: {message}")

    def table(self, data: Any, key: str) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise self.fail(key, f"must be a table; got {type(data).__name__}.")
        return data

    def unknown(self, data: dict[str, Any], key: str, allowed: tuple[str, ...]) -> None:
        extra = sorted(set(data) - set(allowed))
        if extra:
            raise self.fail(f"{key}.{extra[0]}", f"unknown key; allowed keys: {', '.join(allowed)}.")

    def name(self, value: str, key: str) -> str:
        if not _NAME.match(value):
            raise self.fail(key, f"must be an identifier (letters, digits, _); got {value!r}.")
        return value

    def number(self, data: dict[str, Any], name: str, key: str, *, positive: bool = True) -> float | None:
        if name not in data:
            return None
        v = data[name]
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            raise self.fail(f"{key}.{name}", f"must be a finite number; got {v!r}.")
        if positive and v <= 0:
            raise self.fail(f"{key}.{name}", f"must be > 0; got {v!r}.")
        return float(v)

    def rational(self, data: dict[str, Any], name: str, key: str, *, zero: bool = False) -> Fraction | None:
        if name not in data:
            return None
        try:
            q = exact_rational(data[name], name, key, allow_zero=zero)
        except InvalidParameterError:
            raise self.fail(f"{key}.{name}", f"must be a finite number > 0; got {data[name]!r}.") from None
        if name == "delta" and q >= 1:
            raise self.fail(f"{key}.{name}", f"must be < 1; got {data[name]!r}.")
        return q


def _column(r: _Reader, name: str, data: Any, key: str) -> ColumnSpec:
    data = r.table(data, key)
    r.unknown(data, key, ("type", "bounds", "out_of_bounds", "fisher_floor"))
    kind = data.get("type", "number")
    if kind not in ("number", "text"):
        raise r.fail(f"{key}.type", f"must be 'number' or 'text'; got {kind!r}.")
    if kind == "text":
        if len(data) > 1:
            raise r.fail(key, "a text column takes no bounds or policies (it is used in `where` only).")
        return ColumnSpec(name, "text")
    bounds = data.get("bounds")
    if (
        not isinstance(bounds, list)
        or len(bounds) != 2
        or any(isinstance(b, bool) or not isinstance(b, int | float) or not math.isfinite(b) for b in bounds)
        or not bounds[0] < bounds[1]
    ):
        raise r.fail(f"{key}.bounds", f"must be [LO, HI], two finite numbers with LO < HI; got {bounds!r}.")
    policy = data.get("out_of_bounds", "clamp")
    if policy not in ("clamp", "reject"):
        raise r.fail(f"{key}.out_of_bounds", f"must be 'clamp' or 'reject'; got {policy!r}.")
    floor = r.number(data, "fisher_floor", key)
    return ColumnSpec(name, "number", (float(bounds[0]), float(bounds[1])), policy, floor)


def _policy(r: _Reader, kind: str, data: Any, key: str, columns: dict[str, ColumnSpec]) -> PolicySpec:
    data = r.table(data, key)
    r.unknown(data, key, ("mechanism", "epsilon", "delta", "half_width", "quality", "factory"))
    mech = data.get("mechanism")
    if mech not in MECHANISMS:
        raise r.fail(f"{key}.mechanism", f"must be one of {', '.join(MECHANISMS)}; got {mech!r}.")
    eps = r.rational(data, "epsilon", key)
    delta = r.rational(data, "delta", key)
    half_width = r.number(data, "half_width", key)
    quality = r.number(data, "quality", key)
    factory = data.get("factory")
    need: dict[str, tuple[str, ...]] = {
        "laplace": ("epsilon",),
        "gaussian": ("epsilon", "delta"),
        "fisher-cosine": ("half_width",),
        "fisher-gaussian": ("quality",),
        "custom": ("factory", "epsilon"),
    }
    for name in need[mech]:
        if name not in data:
            raise r.fail(f"{key}.{name}", f"is required for mechanism {mech!r}.")
    if mech == "custom" and (not isinstance(factory, str) or ":" not in factory):
        raise r.fail(f"{key}.factory", f"must be 'module:function'; got {factory!r}.")
    if mech.startswith("fisher-"):
        if kind not in FISHER_KINDS:
            raise r.fail(
                f"{key}.mechanism",
                f"Fisher policies answer {', '.join(FISHER_KINDS)} (linear, unfiltered); not {kind!r}.",
            )
        unfloored = [c.name for c in columns.values() if c.type == "number" and c.fisher_floor is None]
        if unfloored:
            raise r.fail(
                key,
                f"a Fisher policy needs `fisher_floor` on every numeric column; missing on {unfloored[0]!r}.",
            )
    if mech == "laplace" and delta is not None:
        raise r.fail(f"{key}.delta", "Laplace noise is pure ε-DP; remove `delta`.")
    return PolicySpec(kind, mech, eps, delta, half_width, quality, factory)


def _dataset(r: _Reader, name: str, data: Any, base: Path) -> DatasetSpec:
    key = f"datasets.{name}"
    r.name(name, key)
    data = r.table(data, key)
    r.unknown(data, key, ("source", "table", "epsilon", "delta", "columns", "policies"))
    if ("source" in data) == ("table" in data):
        raise r.fail(key, "give exactly one of `source` (a CSV/Parquet file) or `table` (a database table).")
    source = None
    if "source" in data:
        if not isinstance(data["source"], str):
            raise r.fail(f"{key}.source", "must be a file path.")
        source = (base / data["source"]).resolve()
        if source.suffix.lower() not in (".csv", ".parquet"):
            raise r.fail(f"{key}.source", f"must be a .csv or .parquet file; got {data['source']!r}.")
        table = f"pn_data_{name}"
    else:
        table = r.name(str(data["table"]), f"{key}.table")
        if "identity" in data.get("policies", {}):
            raise r.fail(f"{key}.policies.identity", "identity releases need an imported dataset (`source`).")
    eps = r.rational(data, "epsilon", key)
    if eps is None:
        raise r.fail(f"{key}.epsilon", "the dataset's global ε budget is required.")
    delta = r.rational(data, "delta", key, zero=True) or Fraction(0)
    cols_raw = r.table(data.get("columns", {}), f"{key}.columns")
    if not cols_raw:
        raise r.fail(f"{key}.columns", "declare at least one column with its bounds.")
    columns = {
        r.name(c, f"{key}.columns.{c}"): _column(r, c, v, f"{key}.columns.{c}") for c, v in cols_raw.items()
    }
    if not any(c.type == "number" for c in columns.values()):
        raise r.fail(f"{key}.columns", "declare at least one numeric column with bounds.")
    pol_raw = r.table(data.get("policies", {}), f"{key}.policies")
    policies = {}
    for kind, value in pol_raw.items():
        if kind not in QUERY_KINDS:
            raise r.fail(
                f"{key}.policies.{kind}", f"unknown query kind; choose among {', '.join(QUERY_KINDS)}."
            )
        policies[kind] = _policy(r, kind, value, f"{key}.policies.{kind}", columns)
    return DatasetSpec(name, table, source, eps, delta, columns, policies)


def load_config(path: str | Path) -> ServerConfig:
    """Read and validate ``owner.toml``; raise :class:`ConfigError` naming the file and key at fault."""
    file = Path(path).resolve()
    r = _Reader(file)
    try:
        raw = tomllib.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file}: not valid TOML: {exc}") from None
    r.unknown(raw, "(top level)", ("server", "datasets"))
    server = r.table(raw.get("server", {}), "server")
    r.unknown(server, "server", ("database", "host", "port"))
    db = server.get("database", "sqlite")
    if not isinstance(db, str) or not db:
        raise r.fail(
            "server.database", f"must be 'sqlite', a sqlite:/// URL or a postgresql:// URL; got {db!r}."
        )
    if db == "sqlite":
        db = f"sqlite:///{file.parent / 'privnoise.db'}"
    elif not db.startswith(("sqlite:", "postgresql:", "postgres:", "postgresql+psycopg:")):
        raise r.fail(
            "server.database", f"must be 'sqlite', a sqlite:/// URL or a postgresql:// URL; got {db!r}."
        )
    host = server.get("host", "127.0.0.1")
    port = server.get("port", 8000)
    if not isinstance(host, str):
        raise r.fail("server.host", f"must be a string; got {host!r}.")
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise r.fail("server.port", f"must be an integer in [0, 65535]; got {port!r}.")
    datasets_raw = r.table(raw.get("datasets", {}), "datasets")
    if not datasets_raw:
        raise r.fail("datasets", "declare at least one dataset.")
    datasets = {n: _dataset(r, n, v, file.parent) for n, v in datasets_raw.items()}
    return ServerConfig(file, sqlalchemy_url(db), host, port, datasets)
