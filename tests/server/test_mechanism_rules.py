"""The configuration rules of the policy mechanisms (``server/mechanism_rules.py``): each rule refuses an
``owner.toml`` that breaks it, naming the key, and each mechanism loads where the rules allow it."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy")

from privnoise.server.config import ConfigError, load_config  # noqa: E402
from privnoise.server.mechanism_rules import MECHANISMS, RULES  # noqa: E402
from tests.server._lab import DatasetDef  # noqa: E402

BOUNDS = (0.0, 10.0)


def _load(tmp_path: Path, policies: str) -> None:
    d = DatasetDef("d", [{"x": 1.0, "region": "north"}], {"x": BOUNDS}, policies, "rules")
    path = tmp_path / "owner.toml"
    path.write_text(d.toml(), encoding="utf-8")
    load_config(path)


def _policy(kind: str, mechanism: str, **keys: str) -> str:
    lines = [f"[policies.{kind}]", f'mechanism = "{mechanism}"', *(f"{k} = {v}" for k, v in keys.items())]
    return "\n".join(lines)


@pytest.mark.parametrize(
    ("policy", "key", "rule"),
    [
        (_policy("sum", "gaussian", epsilon='"1"'), "policies.sum.delta", "is required for mechanism 'gaussian'"),
        (_policy("sum", "laplace"), "policies.sum.epsilon", "is required for mechanism 'laplace'"),
        (_policy("sum", "fisher-cosine"), "policies.sum.half_width", "is required for mechanism 'fisher-cosine'"),
        (_policy("sum", "fisher-gaussian"), "policies.sum.quality", "is required for mechanism 'fisher-gaussian'"),
        (_policy("sum", "custom", epsilon='"1"'), "policies.sum.factory", "is required for mechanism 'custom'"),
        (_policy("sum", "laplace", epsilon='"1"', delta='"1/1000"'), "policies.sum.delta",
         "the laplace mechanism is pure ε-DP"),
        (_policy("quantile", "exponential", epsilon='"1"', delta='"1/1000"'), "policies.quantile.delta",
         "the exponential mechanism is pure ε-DP"),
        (_policy("count", "gaussian", epsilon='"1"', delta='"1/1000"', partition_delta='"1/1000000"'),
         "policies.count.partition_delta", "partition selection is offered with laplace policies"),
        (_policy("sum", "laplace", epsilon='"1"', tolerance="1e-4"), "policies.sum.tolerance",
         "is for mechanism 'fisher-fem' only, not 'laplace'"),
        (_policy("quantile", "laplace", epsilon='"1"'), "policies.quantile.mechanism",
         "quantiles are answered by the exponential mechanism (mechanism = 'exponential')"),
        (_policy("sum", "exponential", epsilon='"1"'), "policies.sum.mechanism",
         "it answers quantiles only; got 'exponential' for 'sum'"),
        (_policy("histogram", "fisher-cosine", half_width="1.0"), "policies.histogram.mechanism",
         "histogram is answered with laplace, gaussian or a registered family's noise"),
        (_policy("histogram", "custom", epsilon='"1"', factory='"m:f"'), "policies.histogram.mechanism",
         "histogram is answered with laplace, gaussian"),
        (_policy("count", "fisher-gaussian", quality="1.0"), "policies.count.mechanism",
         "Fisher policies answer sum, mean, linear, identity (linear, unfiltered); not 'count'"),
        (_policy("mean", "fisher-fem", support='"box:-1,-1;1,1"'), "policies.mean.mechanism",
         "fisher-fem noise is a vector on a 2-D or 3-D support: it answers identity"),
    ],
)
def test_each_rule_refuses_what_breaks_it_naming_the_key(tmp_path: Path, policy: str, key: str, rule: str) -> None:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, policy)
    message = str(info.value)
    assert f"`datasets.d.{key}`" in message and rule in message, message


@pytest.mark.parametrize(
    "policy",
    [
        _policy("sum", "laplace", epsilon='"1"'),
        _policy("histogram", "gaussian", epsilon='"1"', delta='"1/1000"'),
        _policy("count", "laplace", epsilon='"1"', partition_delta='"1/1000000"'),
        _policy("mean", "fisher-cosine", half_width="1.0"),
        _policy("identity", "fisher-gaussian", quality="1.0"),
        _policy("identity", "fisher-fem", support='"box:-1,-1;1,1"', tolerance="1e-3"),
        _policy("quantile", "exponential", epsilon='"1"'),
        _policy("sum", "custom", epsilon='"1"', factory='"m:f"'),
    ],
)
def test_each_mechanism_loads_where_its_rules_allow_it(tmp_path: Path, policy: str) -> None:
    _load(tmp_path, policy)


def test_the_rules_name_every_mechanism_once_and_the_policy_noises_build_each() -> None:
    from privnoise.server.mechanisms import POLICY_NOISES

    assert len(set(MECHANISMS)) == len(MECHANISMS) == len(RULES)
    assert set(POLICY_NOISES) == set(MECHANISMS) - {"exponential"}  # the quantiles' mechanism draws no noise
    assert {n for n, r in RULES.items() if r.fisher} == {n for n in POLICY_NOISES if POLICY_NOISES[n].design} | {
        "fisher-fem"
    }
