"""The session ledger at its edges: a fresh session in every accountant mode, the count of queries, δ spent to the
last digit by partition selection (advanced: basic composition still holds; rdp: no slack left, so nothing more
can be stated), and pieces an accountant cannot compose refused instead of composed as something else."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import privnoise as pn
from privnoise.analysis.ledger import Cost, _pld_compose, _rdp_epsilon
from privnoise.dp.events import DiscreteLaplaceEvent, PureEvent, UnsupportedEvent, ZCDPEvent
from privnoise.exceptions import BudgetExceededError

MODES = [("pure", 0.0), ("approximate", 1e-6), ("advanced", 1e-6), ("pld", 1e-6), ("zcdp", 1e-6), ("rdp", 1e-6)]


def _data() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    return {"unit": np.arange(400) % 100, "region": np.array(["north", "south"])[rng.integers(0, 2, 400)],
            "kwh": rng.uniform(0.0, 5.0, 400)}


@pytest.mark.parametrize(("mode", "delta"), MODES)
def test_a_fresh_session_has_spent_nothing_and_counts_its_queries(mode: str, delta: float) -> None:
    s = pn.Session(_data(), privacy_unit="unit", max_contributions=4, epsilon=3.0, delta=delta, accountant=mode,
                   rng=1)
    fresh = s.remaining()
    assert (fresh.epsilon, fresh.spent_epsilon, fresh.queries, fresh.delta) == (3.0, 0.0, 0, delta)
    assert s.spent().epsilon == 0.0
    s.count(epsilon=0.2)
    s.mean("kwh", bounds=(0.0, 5.0), epsilon=0.2)
    after = s.remaining()
    assert after.queries == 2 and 0.0 < after.spent_epsilon < 3.0
    assert after.epsilon == pytest.approx(3.0 - after.spent_epsilon, abs=1e-12)
    assert s.spent().epsilon == after.spent_epsilon


def test_advanced_composition_with_every_delta_spent_falls_back_to_the_sum() -> None:
    # partition selection at the session's whole δ: no slack for the advanced theorem, but basic composition
    # (Σε at Σδ = δ) still holds, so further pure queries are charged and the spent ε is their exact sum
    s = pn.Session(_data(), privacy_unit="unit", max_contributions=4, epsilon=10.0, delta=1e-5,
                   accountant="advanced", rng=2)
    s.group_by("region", delta=1e-5).count(epsilon=1.0)
    s.count(epsilon=0.5)
    s.count(epsilon=0.25)
    assert s.remaining().spent_epsilon == pytest.approx(1.75, rel=1e-15)
    assert s.remaining().delta == 0.0


def test_rdp_with_every_delta_spent_refuses_the_next_query() -> None:
    s = pn.Session(_data(), privacy_unit="unit", max_contributions=4, epsilon=50.0, delta=1e-5,
                   accountant="rdp", rng=3)
    with pytest.raises(BudgetExceededError, match="refused: it asks ρ = 0.5, δ = 1e-05; .* no ε holds"):
        s.group_by("region", delta=1e-5).count(epsilon=1.0)
    assert s.remaining().queries == 0


def test_events_an_accountant_cannot_compose_are_refused() -> None:
    with pytest.raises(UnsupportedEvent, match="no privacy-loss distribution"):
        _pld_compose(None, Cost("x", rho=Fraction(1), events=(ZCDPEvent(0.5),)))
    with pytest.raises(UnsupportedEvent, match="no Rényi-DP event"):
        _rdp_epsilon([Cost("x", epsilon=Fraction(1, 2), events=(PureEvent(0.5),))], 1e-6)
    with pytest.raises(UnsupportedEvent, match="no Rényi-DP event"):
        _rdp_epsilon([Cost("x", epsilon=Fraction(1, 2), events=(DiscreteLaplaceEvent(0.5, 1),))], 1e-6)
