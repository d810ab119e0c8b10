"""A session whose neighbours replace a row (``neighbours="replaced"``, the query server's neighbours): every part's
sensitivity against a brute force over one row added, removed or replaced by any other row (any value, any cell),
each part's ε from the noise actually drawn, summed exactly against the stated guarantee and the charge; the quantile
score's sensitivity against brute force over small databases; keys drawn from the data, privacy units and unknown
neighbours refused by name before anything is charged."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import privnoise as pn
from privnoise.core import RecordReplaced, UnitAddedOrRemoved
from privnoise.exceptions import InvalidParameterError
from tests.analysis import _brute as brute
from tests.analysis.test_sensitivities import QUERIES, _data, _noise_by_name

DECLARED = [name for name in QUERIES if not name.startswith("selected")]


def _session(**kwargs) -> pn.Session:
    data = _data()
    del data["household"]
    return pn.Session(data, neighbours="replaced", epsilon=50.0, delta=1e-5, accountant="approximate", rng=4,
                      **kwargs)


@pytest.mark.parametrize("query", DECLARED)
def test_each_part_is_priced_at_its_brute_force_sensitivity_for_a_row_replaced(query: str) -> None:
    call, parts, values = QUERIES[query]
    s = _session()
    before = s.remaining()
    release = call(s, {"epsilon": 0.7})
    charged = before.exact_epsilon - s.remaining().exact_epsilon
    assert charged == Fraction(7, 10)
    noise = _noise_by_name(release)
    assert set(noise) == set(parts)
    total = Fraction(0)
    for name, (aggregate, cells) in parts.items():
        total += brute.epsilon_of(brute.replaced_sensitivity(aggregate, values, cells, norm=1), noise[name])
    assert float(total) <= float(charged) * (1 + 1e-15)
    assert float(total) == pytest.approx(float(charged), rel=1e-9)  # neither more nor less than stated
    assert release.guarantee.epsilon == float(charged) and release.guarantee.delta == 0.0
    assert "replaced" in s.adjacency


@pytest.mark.parametrize("q", [0.1, 0.5, 0.75, 0.9])
def test_the_quantile_score_moves_by_one_when_a_row_is_replaced(q: float) -> None:
    grid = np.arange(6, dtype=float)
    rng = np.random.default_rng(int(q * 100))
    found = max(brute.replaced_score_sensitivity(rng.integers(0, 6, size=7).astype(float), q, grid)
                for _ in range(6))
    assert RecordReplaced().quantile_score(q) == pytest.approx(found) == pytest.approx(1.0)
    for k in (1, 2):  # and the unit's rule against its own brute force
        unit = brute.score_sensitivity(rng.integers(0, 6, size=7).astype(float), q, grid, k)
        assert unit <= UnitAddedOrRemoved(k).quantile_score(q) + 1e-12


def test_a_replaced_session_answers_quantiles_and_top_k_with_their_own_sensitivities() -> None:
    s = _session()
    est = s.quantile("kwh", 0.5, bounds=(-2, 6), epsilon=0.5)
    assert est.guarantee.epsilon == 0.5 and est.accuracy(0.05) > 0
    top = s.top_k("region", candidates=["north", "south", "east"], k=1, epsilon=0.5)
    assert top.value[0] in ("north", "south", "east") and top.guarantee.epsilon == 0.5


def test_keys_drawn_from_the_data_need_rows_added_or_removed() -> None:
    s = _session()
    before = s.remaining()
    with pytest.raises(InvalidParameterError, match="declare the keys"):
        s.group_by("region", delta=1e-7).count(epsilon=0.5)
    assert s.remaining().exact_epsilon == before.exact_epsilon


@pytest.mark.parametrize("kwargs, rule", [
    ({"neighbours": "swapped"}, "`neighbours` of `Session` must be one of"),
    ({"neighbours": 1}, "`neighbours` of `Session` must be one of"),
    ({"neighbours": "replaced", "privacy_unit": "household", "max_contributions": 2}, "only for rows"),
])
def test_bad_neighbours_are_refused_by_name(kwargs, rule) -> None:
    with pytest.raises(InvalidParameterError, match=rule):
        pn.Session(_data(), epsilon=1.0, **kwargs)
