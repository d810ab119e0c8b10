"""Server budgets composed by the Rényi filter (``composition = "renyi"``), on SQLite and PostgreSQL, in process.

The number of answers a querier gets is the number the documented rule admits, recomputed here in mpmath (the
Rényi divergence of randomized response by its definition), and that many answers are within the querier's budget
by the exact optimal composition of pure ε-DP releases. The filter's state is durable (a new server on the same
database goes on from it), a dataset switched from basic composition counts what was charged before, the budget
views state the composed ε, and configurations that cannot hold are refused naming the key.
"""

from __future__ import annotations

from fractions import Fraction as F
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient  # noqa: E402

from privnoise.dp.renyi_filter import ORDERS  # noqa: E402  (the list of orders the rule names, not its values)
from privnoise.server import store  # noqa: E402
from privnoise.server.app import create_app  # noqa: E402
from privnoise.server.config import ConfigError, load_config  # noqa: E402
from tests.dp._composition_reference import documented_count, optimal_delta  # noqa: E402

CHARGE = F(1, 100)
QUERIER = (F(1), F(1, 10**5))
QUERY = {"query": "count() from meters"}


def _config(tmp_path: Path, database: str, composition: str = "renyi", extra: str = "") -> Path:
    (tmp_path / "meters.csv").write_text("kwh\n" + "\n".join(str(i % 50) for i in range(30)) + "\n", encoding="utf-8")
    path = tmp_path / "owner.toml"
    path.write_text(
        f"""[server]
database = "{database}"
host = "127.0.0.1"

[datasets.meters]
source = "meters.csv"
epsilon = 50
delta = 1e-4
composition = "{composition}"
{extra}
[datasets.meters.columns.kwh]
bounds = [0.0, 60.0]
[datasets.meters.policies.count]
mechanism = "laplace"
epsilon = 0.01
""",
        encoding="utf-8",
    )
    return path


def _database(tmp_path: Path, database_url: str) -> str:
    if database_url == "sqlite":
        return "sqlite"
    from tests.server._harness import _fresh_postgres_database

    return _fresh_postgres_database(database_url)


def _provision(path: Path) -> dict[str, str]:
    config = load_config(path)
    engine = store.init_database(config)
    try:
        admin = store.ensure_admin(engine, config)
        assert admin is not None
        alice = store.create_querier(engine, config, "alice", epsilon=str(QUERIER[0]), delta=str(QUERIER[1]))
    finally:
        engine.dispose()
    return {"admin": admin, "alice": alice}


class Served:
    def __init__(self, path: Path, keys: dict[str, str]) -> None:
        self.path, self.keys = path, keys

    def run(self) -> TestClient:
        return TestClient(create_app(load_config(self.path)))

    def ask_until_refused(self, client: TestClient, limit: int = 2000) -> int:
        headers = {"Authorization": f"Bearer {self.keys['alice']}"}
        for answered in range(limit):
            r = client.post("/v1/queries", json=QUERY, headers=headers)
            if r.status_code != 200:
                assert r.status_code == 429, r.text
                return answered
        raise AssertionError("never refused")

    def budget(self, client: TestClient) -> dict[str, Any]:
        r = client.get("/v1/budget", headers={"Authorization": f"Bearer {self.keys['alice']}"})
        assert r.status_code == 200, r.text
        return dict(r.json()["datasets"]["meters"])


@pytest.fixture
def served(tmp_path: Path, database_url: str) -> Served:
    path = _config(tmp_path, _database(tmp_path, database_url))
    return Served(path, _provision(path))


def test_a_querier_gets_the_answers_the_rule_admits_and_no_more(served: Served) -> None:
    expected = documented_count(CHARGE, QUERIER, ORDERS)
    basic = int(QUERIER[0] / CHARGE)
    assert expected > 2 * basic  # the rule admits far more than Σε ≤ ε_B: the test has power
    with served.run() as client:
        answered = served.ask_until_refused(client)
        view = served.budget(client)
    assert answered in (expected, expected - 1)  # − 1: the bounds are rounded up to 2⁻⁴⁸
    assert optimal_delta(CHARGE, answered, QUERIER[0]) <= QUERIER[1]
    assert view["epsilon"]["spent"] == str(CHARGE * answered)  # Σε is still what was charged
    composition = view["composition"]
    assert composition["rule"] == "renyi" and composition["within_budget"] is True
    assert composition["delta"] == str(QUERIER[1]) and composition["tail_delta"] == str(QUERIER[1] / 2)
    assert float(QUERIER[0]) - 0.02 < composition["epsilon"] <= float(QUERIER[0])
    assert optimal_delta(CHARGE, answered, F(composition["epsilon"])) <= QUERIER[1]
    # a new server on the same database goes on from the stored state: still refused
    with served.run() as client:
        assert served.ask_until_refused(client) == 0


def test_charges_made_under_basic_composition_are_counted_after_a_switch(tmp_path: Path, database_url: str) -> None:
    database = _database(tmp_path, database_url)
    basic_path = _config(tmp_path, database, composition="basic")
    served = Served(basic_path, _provision(basic_path))
    with served.run() as client:
        assert served.ask_until_refused(client) == 100  # basic composition: Σε ≤ 1
        assert "composition" not in served.budget(client)
    renyi_path = _config(tmp_path, database, composition="renyi")
    served = Served(renyi_path, served.keys)
    with served.run() as client:
        more = served.ask_until_refused(client)
    expected = documented_count(CHARGE, QUERIER, ORDERS, already=F(1), already_count=100)
    assert 100 + more in (expected, expected - 1)
    assert 100 + more < documented_count(CHARGE, QUERIER, ORDERS)  # the hundred earlier charges as one part cost more
    assert optimal_delta(CHARGE, 100 + more, QUERIER[0]) <= QUERIER[1]


@pytest.mark.parametrize(
    "composition,extra,key",
    [
        ("renyi", "delta = 0\n", "composition"),
        ("basic", "renyi_delta_share = 0.5\n", "renyi_delta_share"),
        ("renyi", "renyi_delta_share = 0\n", "renyi_delta_share"),
        ("renyi", "renyi_delta_share = 1.5\n", "renyi_delta_share"),
        ("renyi", 'renyi_delta_share = "half"\n', "renyi_delta_share"),
        ("moments", "", "composition"),
    ],
)
def test_configurations_that_cannot_hold_are_refused_naming_the_key(
    tmp_path: Path, composition: str, extra: str, key: str
) -> None:
    path = _config(tmp_path, "sqlite", composition=composition, extra=extra)
    if extra.startswith("delta"):
        path.write_text(path.read_text(encoding="utf-8").replace("delta = 1e-4\n", ""), encoding="utf-8")
    with pytest.raises(ConfigError, match=key):
        load_config(path)


def test_a_share_of_one_leaves_no_delta_for_approximate_charges(tmp_path: Path) -> None:
    path = _config(tmp_path, "sqlite", extra="renyi_delta_share = 1\n")
    spec = load_config(path).datasets["meters"]
    assert spec.composition == "renyi" and spec.renyi_share == 1


def test_a_charge_enters_the_filter_part_by_part_only_when_its_events_cover_it() -> None:
    from privnoise.dp.accounting import Charge
    from privnoise.dp.events import GaussianEvent, PureEvent, SelectionEvent
    from privnoise.server.composition import charged_parts

    selections = Charge(F(3, 10), F(0), events=(SelectionEvent(0.1), SelectionEvent(0.1), SelectionEvent(0.1)))
    parts = charged_parts(selections)
    assert len(parts) == 3 and all(e >= F(1, 10) and e - F(1, 10) < F(1, 10**15) and d == 0 for e, d in parts)
    assert sum(e for e, _ in parts) >= F(3, 10)
    whole = [(F(3, 10), F(0))]
    assert charged_parts(Charge(F(3, 10), F(0), events=(PureEvent(0.3),))) == whole
    assert charged_parts(Charge(F(3, 10), F(0), events=(SelectionEvent(0.1), SelectionEvent(0.1)))) == whole
    assert charged_parts(Charge(F(3, 10), F(0), events=(GaussianEvent(2.0), SelectionEvent(0.3)))) == whole
    assert charged_parts(Charge(F(3, 10), F(1, 10**6), events=(PureEvent(0.2, 1e-6), SelectionEvent(0.1)))) == [
        (F(3, 10), F(1, 10**6))]


def _spec(composition: str) -> Any:
    from privnoise.server.datasets import ColumnSpec, DatasetSpec

    return DatasetSpec("d", "t", None, F(1), F(1, 10**5), {"x": ColumnSpec("x", "number", (0.0, 1.0))}, {},
                       composition=composition)


def test_the_basic_rule_is_sums_within_the_budget_on_both_coordinates() -> None:
    from privnoise.server.composition import admits, within

    basic, budget = _spec("basic"), (F(1), F(1, 10**5))
    assert within(None, budget, budget, basic)
    assert not within(None, (F(1) + F(1, 10**9), F(0)), budget, basic)
    assert not within(None, (F(1, 2), F(1, 10**5) + F(1, 10**12)), budget, basic)
    assert within(None, (F(0), F(1, 10**5)), budget, basic)  # δ compared with δ, not ε
    assert not within(None, (F(1, 10**6), F(2, 10**5)), (F(1), F(1, 10**5)), basic)
    assert admits(None, (F(9, 10), F(0)), (F(1, 10), F(0)), budget, basic)
    assert not admits(None, (F(9, 10), F(0)), (F(1, 5), F(0)), budget, basic)
    assert not admits(None, (F(1, 2), F(1, 10**5)), (F(1, 10), F(1, 10**9)), budget, basic)


def test_the_renyi_rule_admits_past_the_sum_and_counts_what_was_spent() -> None:
    from privnoise.dp.renyi_filter import RenyiState
    from privnoise.server.composition import admits, composed_view, within

    renyi, budget = _spec("renyi"), QUERIER
    many = RenyiState.empty().plus([(CHARGE, F(0))] * 300)
    assert within(many, (CHARGE * 300, F(0)), budget, renyi)
    assert not within(many, (CHARGE * 300, F(0)), budget, _spec("basic"))
    assert admits(many, (CHARGE * 300, F(0)), (CHARGE, F(0)), budget, renyi)
    # the spent ε the state does not cover is caught up: 300 charges' worth of Σε beyond what the state holds
    assert not admits(RenyiState.empty(), (CHARGE * 600, F(0)), (CHARGE, F(0)), budget, renyi)
    assert not admits(many, (CHARGE * 300, F(0)), (F(1), F(0)), budget, renyi)  # one large charge on top
    view = composed_view(many, (CHARGE * 300, F(0)), budget, renyi)
    assert view["rule"] == "renyi" and view["within_budget"] is True and 0.5 < view["epsilon"] < 1
    assert view["tail_delta"] == str(budget[1] / 2) and view["delta"] == str(budget[1])
    empty = composed_view(None, (F(0), F(0)), budget, renyi)
    assert empty["epsilon"] == 0.0 and empty["within_budget"] is True
    few = composed_view(RenyiState.empty().plus([(F(1, 10), F(0))] * 3), (F(3, 10), F(0)), budget, renyi)
    assert few["epsilon"] == pytest.approx(0.3)  # basic composition states less than the filter for few charges
    # δ spent beyond what the tail leaves: the basic route is closed; the filter alone states ε
    delta_heavy = composed_view(many, (CHARGE * 300, budget[1]), budget, renyi)
    assert delta_heavy["within_budget"] is False and delta_heavy["epsilon"] == view["epsilon"]
    over = composed_view(many.plus([(F(1), F(0))]), (CHARGE * 300 + 1, F(0)), budget, renyi)
    assert over["within_budget"] is False and over["epsilon"] > 1


def test_charge_parts_at_their_edges() -> None:
    from privnoise.dp.accounting import Charge
    from privnoise.dp.events import SelectionEvent
    from privnoise.server.composition import charged_parts

    assert charged_parts(Charge(None, None)) == [(F(0), F(0))]
    two = charged_parts(Charge(F(3, 10), F(0), events=(SelectionEvent(0.15), SelectionEvent(0.15))))
    assert len(two) == 2
    with_zero = charged_parts(Charge(F(3, 10), F(0), events=(SelectionEvent(0.3), SelectionEvent(0.0))))
    assert with_zero[1] == (F(0), F(0)) and with_zero[0][0] >= F(3, 10)
