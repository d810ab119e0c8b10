"""owner.toml validation and the query language (no server)."""

from __future__ import annotations

from pathlib import Path

import pytest

from privnoise.server.config import ConfigError, load_config
from privnoise.server.querylang import QueryError, parse_query, spec_from_json

BASE = """
[datasets.m]
source = "d.csv"
epsilon = 1
[datasets.m.columns.kwh]
bounds = [0, 10]
[datasets.m.policies.sum]
mechanism = "laplace"
epsilon = 0.1
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "owner.toml"
    path.write_text(text)
    return path


def test_a_valid_config_loads_with_exact_budgets(tmp_path: Path) -> None:
    from fractions import Fraction

    cfg = load_config(_write(tmp_path, BASE))
    assert cfg.database_url == f"sqlite:///{tmp_path / 'privnoise.db'}"
    assert cfg.datasets["m"].policies["sum"].epsilon == Fraction(1, 10)


@pytest.mark.parametrize(
    ("change", "key"),
    [
        (("bounds = [0, 10]", "bounds = [10, 0]"), "datasets.m.columns.kwh.bounds"),
        (("bounds = [0, 10]", "out_of_bounds = 'clamp'"), "datasets.m.columns.kwh.bounds"),
        (('mechanism = "laplace"', 'mechanism = "magic"'), "datasets.m.policies.sum.mechanism"),
        (("epsilon = 0.1", "delta = 0.1"), "datasets.m.policies.sum.epsilon"),
        (("[datasets.m.policies.sum]", "[datasets.m.policies.median]"), "datasets.m.policies.median"),
        (
            ('mechanism = "laplace"\nepsilon = 0.1', 'mechanism = "fisher-gaussian"\nquality = 1.0'),
            "fisher_floor",
        ),
        (("epsilon = 1\n", "epsilon = nan\n"), "datasets.m.epsilon"),
    ],
)
def test_config_errors_name_the_file_and_key(tmp_path: Path, change: tuple[str, str], key: str) -> None:
    path = _write(tmp_path, BASE.replace(*change, 1))
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(path) in str(info.value) and key in str(info.value)


def test_the_query_language() -> None:
    spec = parse_query("weighted_mean(kwh, weight) from m where region != 'a b' and kwh >= -1.5e1")
    assert (spec.kind, spec.column, spec.weights, spec.dataset) == ("weighted_mean", "kwh", "weight", "m")
    assert [(c.column, c.op, c.value) for c in spec.where] == [("region", "!=", "a b"), ("kwh", ">=", -15.0)]
    assert parse_query("linear(2*a - b + 0.5*a)").coefficients == (("a", 2.5), ("b", -1.0))
    assert (
        spec_from_json({"kind": "count", "where": [{"column": "x", "op": "<", "value": 3}]}).where[0].value
        == 3.0
    )
    for bad in (
        "",
        "sum(kwh",
        "sum(kwh) where",
        "sum(kwh); drop table x",
        "mode(kwh)",
        "sum(kwh) where a = b",
        "identity(kwh) where kwh > 1",
        "sum(kwh) where a = 1e999",
        "sum('x')",
    ):
        with pytest.raises(QueryError):
            parse_query(bad)


@pytest.mark.parametrize(
    ("change", "key", "rule"),
    [
        (("bounds = [0, 10]", "bounds = [0, 1e308]"), "datasets.m.columns.kwh.bounds", "within ±1e+100"),
        (("epsilon = 0.1", "epsilon = 1e-320"), "datasets.m.policies.sum.epsilon", "at most 100 characters"),
        (("epsilon = 1\n", 'epsilon = "1e400"\n'), "datasets.m.epsilon", "≤ 10⁶"),
        (
            ("bounds = [0, 10]", "bounds = [0, 10]\nfisher_floor = 1e-320"),
            "datasets.m.columns.kwh.fisher_floor",
            "[1e-300, 1e+300]",
        ),
        (
            ("[datasets.m]", "[server]\nworkers = 0\n[datasets.m]"),
            "server.workers",
            "greater than or equal to 1",
        ),
        (("[datasets.m]", "[server]\nthreads = 2\n[datasets.m]"), "server.threads", "unknown key"),
        (
            ("[datasets.m]", '[server]\nadmin_key_hash = "nope"\n[datasets.m]'),
            "server.admin_key_hash",
            "hash-key",
        ),
        (
            ("[datasets.m]", "[server]\nmax_body_bytes = 1e9\n[datasets.m]"),
            "server.max_body_bytes",
            "integer",
        ),
        (("[datasets.m]", '[server]\napi_docs = "yes"\n[datasets.m]'), "server.api_docs", "boolean"),
    ],
)
def test_pydantic_config_errors_name_the_key_and_the_rule(
    tmp_path: Path, change: tuple[str, str], key: str, rule: str
) -> None:
    path = _write(tmp_path, BASE.replace(*change, 1))
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert str(path) in message and f"`{key}`" in message and rule in message, message


def test_the_server_settings_have_safe_defaults(tmp_path: Path) -> None:
    cfg = load_config(_write(tmp_path, BASE))
    assert (cfg.workers, cfg.max_body_bytes, cfg.api_docs, cfg.admin_key_hash) == (1, 16384, False, None)
    assert cfg.auth_failures == 10 and cfg.key_cache_seconds == 300
