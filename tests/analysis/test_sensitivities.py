"""Every Session query's parts against sensitivities found by brute force: for each released component, the largest
change of its exact aggregate when one unit (≤ k rows, any values, any cells or groups) is added or removed; the
noise actually drawn then gives each part's ε = Δ₁/b (ρ = Δ₂²/(2σ²)), and the parts, summed exactly, must make
the query's stated guarantee and its charge — neither more (a guarantee stated below the truth) nor less.
The backend's aggregates are checked to be the sums over rows the brute force assumes."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import privnoise as pn
from privnoise.analysis.backend import AggregateRequest, InMemoryBackend
from privnoise.analysis.table import Table
from tests.analysis import _brute as brute

REGIONS = ("north", "south", "east")
BINS = (0.0, 1.0, 2.5, 4.0)
CATEGORIES = ("north", "east")


def _data(households: int = 40, rows: int = 4, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    unit = np.tile(np.arange(households), rows)
    region = np.array(REGIONS)[(unit + np.repeat(np.arange(rows), households)) % 3]  # a unit in several regions
    return {"household": unit, "region": region, "kwh": rng.uniform(-2.0, 6.0, unit.size)}


def _value(low, high):
    return lambda v: brute.clamp(v, low, high)


def _centred(low, high):
    return lambda v: brute.clamp(v, low, high) - (low + high) / 2


# query name -> (call, {component name: (aggregate of one unit's rows, cells)}, values)
QUERIES = {
    "count": (lambda s, p: s.count(**p), {"count": (brute.count, 1)}, (0.0,)),
    "sum": (lambda s, p: s.sum("kwh", bounds=(-1, 3), **p), {"sum": (brute.total(-1, 3), 1)},
            brute.values_around(-1, 3)),
    "mean": (lambda s, p: s.mean("kwh", bounds=(1, 4), **p),
             {"sum": (brute.centred(1, 4), 1), "count": (brute.count, 1)}, brute.values_around(1, 4)),
    "variance": (lambda s, p: s.variance("kwh", bounds=(-1, 3), **p),
                 {"count": (brute.count, 1), "sum": (brute.centred(-1, 3), 1),
                  "sum of squares": (brute.centred_squares(-1, 3), 1)}, brute.values_around(-1, 3)),
    "histogram": (lambda s, p: s.histogram("kwh", bins=BINS, **p), {"cells": (brute.per_cell(3), 3)}, (0.0,)),
    "categories": (lambda s, p: s.histogram("region", categories=CATEGORIES, **p),
                   {"cells": (brute.per_cell(2), 2)}, (0.0,)),
    "group count": (lambda s, p: s.group_by("region", keys=REGIONS).count(**p),
                    {"count": (brute.per_cell(3), 3)}, (0.0,)),
    "group sum": (lambda s, p: s.group_by("region", keys=REGIONS).sum("kwh", bounds=(-1, 3), **p),
                  {"sum": (brute.per_cell(3, _value(-1, 3)), 3)}, brute.values_around(-1, 3)),
    "group mean": (lambda s, p: s.group_by("region", keys=REGIONS).mean("kwh", bounds=(1, 4), **p),
                   {"sum": (brute.per_cell(3, _centred(1, 4)), 3), "count": (brute.per_cell(3), 3)},
                   brute.values_around(1, 4)),
    "selected count": (lambda s, p: s.group_by("region", delta=1e-7).count(**p),
                       {"count": (brute.per_cell(3), 3)}, (0.0,)),
    "selected sum": (lambda s, p: s.group_by("region", delta=1e-7).sum("kwh", bounds=(-1, 3), **p),
                     {"count": (brute.per_cell(3), 3), "sum": (brute.per_cell(3, _value(-1, 3)), 3)},
                     brute.values_around(-1, 3)),
    "selected mean": (lambda s, p: s.group_by("region", delta=1e-7).mean("kwh", bounds=(1, 4), **p),
                      {"count": (brute.per_cell(3), 3), "sum": (brute.per_cell(3, _centred(1, 4)), 3)},
                      brute.values_around(1, 4)),
}


def _session(k: int, accountant: str, **kwargs) -> pn.Session:
    return pn.Session(_data(), privacy_unit="household", max_contributions=k, epsilon=50.0, delta=1e-5,
                      accountant=accountant, rng=21, **kwargs)


def _noise_by_name(release) -> dict[str, dict]:
    noise = {n["name"]: n for n in release.noise}
    assert len(noise) == len(release.noise)
    return noise


@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("query", list(QUERIES))
def test_laplace_parts_add_up_to_the_stated_epsilon_and_the_charge(query, k):
    call, parts, values = QUERIES[query]
    s = _session(k, "approximate")
    before = s.remaining()
    release = call(s, {"epsilon": 0.7})
    after = s.remaining()
    charged = before.exact_epsilon - after.exact_epsilon
    assert charged == Fraction(7, 10)
    noise = _noise_by_name(release)
    assert set(noise) == set(parts)
    total = Fraction(0)
    for name, (aggregate, cells) in parts.items():
        delta1 = brute.sensitivity(aggregate, k, values, cells, norm=1)
        total += brute.epsilon_of(delta1, noise[name])
    selected = query.startswith("selected")
    partition_delta = 1e-7 if selected else 0.0
    spent = float(total) + (-math.log1p(-partition_delta))  # (ε₀ + log(1/(1 − δ)), δ) for partition selection
    assert spent <= float(charged) * (1 + 1e-15)
    assert spent == pytest.approx(float(charged), rel=1e-9)
    assert release.guarantee.epsilon == float(charged)
    assert release.guarantee.delta == partition_delta
    assert before.delta - after.delta == pytest.approx(partition_delta, rel=1e-12, abs=0)


@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("query", list(QUERIES))
def test_gaussian_parts_add_up_to_the_stated_rho(query, k):
    call, parts, values = QUERIES[query]
    s = _session(k, "zcdp")
    release = call(s, {"rho": Fraction(3, 100)})
    noise = _noise_by_name(release)
    assert set(noise) == set(parts)
    total = Fraction(0)
    for name, (aggregate, cells) in parts.items():
        delta2 = brute.sensitivity(aggregate, k, values, cells, norm=2)
        total += brute.rho_of(delta2, noise[name])
    assert total <= Fraction(3, 100)
    assert float(total) == pytest.approx(0.03, rel=1e-9)
    assert release.guarantee.rho == 0.03
    assert release.guarantee.delta == (1e-7 if query.startswith("selected") else 0.0)


def test_epsilon_in_a_gaussian_session_is_priced_at_half_its_square():
    s = _session(2, "zcdp")
    release = s.mean("kwh", bounds=(1, 4), epsilon=0.3)
    assert release.guarantee.rho == float(Fraction(3, 10) ** 2 / 2)
    noise = _noise_by_name(release)
    total = brute.rho_of(brute.sensitivity(brute.centred(1, 4), 2, brute.values_around(1, 4), norm=2), noise["sum"])
    total += brute.rho_of(brute.sensitivity(brute.count, 2, (0.0,), norm=2), noise["count"])
    assert float(total) == pytest.approx(0.045, rel=1e-9) and total <= Fraction(9, 200)


# -- the backend computes the sums over rows the brute force assumes ---------------------------------------------
def _with_unit(data: dict[str, np.ndarray], rows: list[tuple[float, str]]) -> dict[str, np.ndarray]:
    unit = int(data["household"].max()) + 1
    return {
        "household": np.concatenate([data["household"], np.full(len(rows), unit)]),
        "region": np.concatenate([data["region"], np.array([r for _, r in rows])]),
        "kwh": np.concatenate([data["kwh"], np.array([v for v, _ in rows])]),
    }


REQUESTS = {
    "moments": AggregateRequest("moments", "kwh", (-1.0, 3.0), "error", "household", 3, centre=1.0),
    "grouped": AggregateRequest("moments", "kwh", (1.0, 4.0), "error", "household", 3, group="region",
                                keys=REGIONS, centre=2.5),
    "histogram": AggregateRequest("histogram", "kwh", (0.0, 4.0), "error", "household", 3, edges=BINS),
    "categories": AggregateRequest("categories", "region", None, "error", "household", 3, categories=CATEGORIES),
}


@pytest.mark.parametrize("kind", list(REQUESTS))
def test_a_unit_changes_the_backends_aggregates_by_its_own(kind):
    request = REQUESTS[kind]
    data = _data(rows=3)  # every unit within the cap: nothing is dropped
    base = InMemoryBackend(Table(data)).aggregate(request, np.random.default_rng(0))
    unit = [(-7.0, "north"), (2.2, "east"), (9.0, "east")]
    added = InMemoryBackend(Table(_with_unit(data, unit))).aggregate(request, np.random.default_rng(0))
    low, high = request.bounds or (0.0, 0.0)
    index = {r: i for i, r in enumerate(REGIONS)}
    rows = [(v, index[r]) for v, r in unit]
    if kind == "moments":
        assert added.count[0] - base.count[0] == 3
        assert added.sum[0] - base.sum[0] == pytest.approx(brute.centred(low, high)(rows), abs=1e-9)
        assert added.sum_squares[0] - base.sum_squares[0] == pytest.approx(
            brute.centred_squares(low, high)(rows), abs=1e-9)
    elif kind == "grouped":
        np.testing.assert_allclose(added.count - base.count, brute.per_cell(3)(rows))
        np.testing.assert_allclose(added.sum - base.sum, brute.per_cell(3, _centred(low, high))(rows), atol=1e-9)
    elif kind == "histogram":
        cells = [(v, int(np.clip(np.searchsorted(BINS, brute.clamp(v, 0, 4), side="right") - 1, 0, 2)))
                 for v, _ in unit]
        np.testing.assert_allclose(added.cells[0] - base.cells[0], brute.per_cell(3)(cells))
    else:
        np.testing.assert_allclose(added.cells[0] - base.cells[0], [1.0, 2.0])
    # a unit beyond the cap contributes exactly k rows
    if kind != "categories":
        many = InMemoryBackend(Table(_with_unit(data, unit + [(1.0, "south")] * 3))).aggregate(
            request, np.random.default_rng(1))
        assert float(np.sum(many.count) - np.sum(base.count)) == 3.0
