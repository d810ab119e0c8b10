"""The owner's configuration: ``owner.toml`` validated with pydantic into frozen dataclasses.

This module reads the file, validates it and converts it (:func:`load_config`); each section is declared with
its concept: the server and console settings in :mod:`.settings`, the datasets and their columns in
:mod:`.datasets`, their policies in :mod:`.policies`, and the rules they share in :mod:`.config_rules`.

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
    composition = "basic"          # default: Σε, Σδ; "renyi": the Rényi filter (many small charges fit more
                                   # than Σε allows; needs delta > 0), see privnoise.dp.renyi_filter
    # renyi_delta_share = 0.5      # with "renyi": the share of each budget's δ kept for the filter's tail

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
    mechanism = "laplace"          # laplace | gaussian | fisher-cosine | fisher-gaussian | fisher-fem | custom,
                                   # or the name of a noise family registered before the file is loaded
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

    [datasets.lake]
    source = "lake/readings/"      # Parquet files, or a Delta table's latest version, read by Spark at query time
    engine = "spark"
    master = "local[2]"            # or "spark://host:7077": one master for every Spark dataset of the server
"""

from __future__ import annotations

import tomllib
from fractions import Fraction
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError, model_validator

from ..dp.renyi_filter import DEFAULT_SHARE
from ..exceptions import InvalidParameterError
from .config_rules import IDENTIFIER, STRICT, KeyRuleError
from .datasets import STEP_QUERIES, ColumnSpec, DatasetSection, DatasetSpec
from .mechanism_rules import FEM_KINDS, FISHER_KINDS, MECHANISMS, NOISE_ONLY_KINDS
from .policies import FEM_TOLERANCE_RANGE, PolicySpec, parse_owner_support, policy_family
from .queryspec import KINDS as QUERY_KINDS
from .settings import ConsoleConfig, ConsoleSection, ServerConfig, ServerSection, is_loopback, sqlalchemy_url

__all__ = [
    "FEM_KINDS",
    "FEM_TOLERANCE_RANGE",
    "FISHER_KINDS",
    "MECHANISMS",
    "NOISE_ONLY_KINDS",
    "QUERY_KINDS",
    "STEP_QUERIES",
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


class ConfigError(InvalidParameterError):
    """``owner.toml`` is malformed; the message names the file and the key."""


class _Owner(BaseModel):
    model_config = STRICT
    server: ServerSection = Field(default_factory=ServerSection)
    console: ConsoleSection = Field(default_factory=ConsoleSection)
    datasets: dict[str, DatasetSection]

    @model_validator(mode="after")
    def _some(self) -> _Owner:
        if not self.datasets:
            raise KeyRuleError("datasets", "declare at least one dataset")
        for name in self.datasets:
            if not IDENTIFIER.match(name):
                raise KeyRuleError(
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


def _spec(name: str, d: DatasetSection, base: Path) -> DatasetSpec:
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
            policy_family(p.mechanism),
        )
        for kind, p in d.policies.items()
    }
    source = None if d.source is None else (base / d.source).resolve()
    table = f"pn_data_{name}" if source is not None else str(d.table)
    scheduler = (d.scheduler or "local") if d.engine == "dask" else None
    master = (d.master or "local[2]") if d.engine == "spark" else None
    return DatasetSpec(name, table, source, d.epsilon, d.delta or Fraction(0), columns, policies, d.engine, scheduler,
                       master, d.composition, d.renyi_delta_share or DEFAULT_SHARE)


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
    masters = sorted({d.master or "local[2]" for d in owner.datasets.values() if d.engine == "spark"})
    if len(masters) > 1:
        raise ConfigError(f"{file}: `datasets.*.master`: a server runs one Spark session, so every dataset with "
                          f"engine = 'spark' names the same master; got {', '.join(masters)}.")
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
