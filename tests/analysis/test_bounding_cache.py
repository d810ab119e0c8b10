"""Contribution bounding done once per session (:mod:`privnoise.analysis.bounding`): drawn once and reused by every
query and view, the same rows a fresh bounding with the same draw keeps, the cap k held per unit (checked unit by
unit), filters bounding their own rows, and each query's choice uniform among a unit's taking-part rows."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import privnoise as pn
from privnoise.analysis.backend import AggregateRequest, InMemoryBackend
from privnoise.analysis.bounding import ContributionOrder
from privnoise.analysis.filters import parse_filter
from privnoise.analysis.table import Table

K = 3


def _data(units: int = 60, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 9, units)  # 1 … 8 rows per unit: many over the cap, some under
    unit = np.repeat(np.arange(units), sizes)
    rng.shuffle(unit)  # a unit's rows anywhere
    n = unit.size
    kwh = rng.uniform(-1.0, 6.0, n)
    kwh[rng.random(n) < 0.1] = np.nan
    region = rng.choice(np.array(["north", "south", "east"], dtype=object), n)
    return {"household": unit, "kwh": kwh, "region": region, "level": rng.integers(0, 5, n).astype(float)}


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    draw = ContributionOrder.draw.__func__  # type: ignore[attr-defined]

    def counted(cls, units, k, rng):  # type: ignore[no-untyped-def]
        calls.append(int(units.size))
        return draw(cls, units, k, rng)

    monkeypatch.setattr(ContributionOrder, "draw", classmethod(counted))
    return calls


def _queries(s: pn.Session) -> None:
    s.count(epsilon=0.1)
    s.mean("kwh", bounds=(0, 5), epsilon=0.1)
    s.sum("kwh", bounds=(0, 5), epsilon=0.1)
    s.variance("kwh", bounds=(0, 5), epsilon=0.1)
    s.histogram("kwh", bins=[0, 1, 2, 3, 4, 5], epsilon=0.1)
    s.histogram("region", categories=["north", "south"], epsilon=0.1)
    s.quantile("kwh", 0.5, bounds=(0, 5), epsilon=0.1)
    s.group_by("region", keys=["north", "west"]).mean("kwh", bounds=(0, 5), epsilon=0.1)
    s.group_by("region").count(epsilon=0.1)


def test_the_contribution_order_is_drawn_once_per_session_and_shared_by_its_views(monkeypatch) -> None:
    calls = _counting(monkeypatch)
    data = _data()
    s = pn.Session(data, privacy_unit="household", max_contributions=K, epsilon=100.0, delta=1e-3, missing="drop",
                   rng=4)
    assert calls == []  # nothing drawn before a query
    _queries(s)
    north = s.where("region = 'north'")
    _queries(north)
    _queries(north.where("kwh >= 1"))
    _queries(s)
    assert calls == [data["household"].size]
    other = pn.Session(s._backend, privacy_unit="household", max_contributions=K, epsilon=10.0, delta=1e-3,
                       missing="drop", rng=4)
    other.count(epsilon=0.1)
    assert len(calls) == 2  # another session, even over the same backend, draws its own order
    s.count(epsilon=0.1)
    other.mean("kwh", bounds=(0, 5), epsilon=0.1)
    assert len(calls) == 2


# (conditions, the same test written row by row on (region, kwh))
FILTERS = [
    (parse_filter("region != 'east'"), lambda region, kwh: region != "east"),
    (parse_filter("kwh >= 1 and region = 'north'"), lambda region, kwh: region == "north" and kwh >= 1),
    ((), lambda region, kwh: True),
]


def _requests() -> list[AggregateRequest]:
    common = {"unit": "household", "max_contributions": K}
    out = []
    for conditions, _ in FILTERS:
        out += [
            AggregateRequest("moments", None, where=conditions, **common),
            AggregateRequest("moments", "kwh", (0.0, 5.0), "drop", centre=2.5, where=conditions, **common),
            AggregateRequest("moments", "kwh", (0.0, 5.0), 7.0, where=conditions, **common),
            AggregateRequest("histogram", "kwh", (0.0, 5.0), "drop", edges=(0.0, 1.0, 2.0, 3.0, 4.0, 5.0),
                             where=conditions, **common),
            AggregateRequest("grid", "kwh", (0.0, 5.0), "drop", grid=(0.25, 0, 20), where=conditions, **common),
            AggregateRequest("moments", "kwh", (0.0, 5.0), "drop", group="region", keys=("north", "west"),
                             where=conditions, **common),
            AggregateRequest("moments", "level", (0.0, 4.0), "error", group="region", where=conditions, **common),
            AggregateRequest("categories", "region", categories=("south", "east"), where=conditions, **common),
            # the values prepared per column, imputation, bounds and centre: each combination its own
            AggregateRequest("moments", "kwh", (0.0, 5.0), "drop", where=conditions, **common),
            AggregateRequest("moments", "kwh", (1.0, 3.0), "drop", centre=2.0, where=conditions, **common),
            AggregateRequest("moments", "kwh", (1.0, 3.0), 7.0, centre=2.0, where=conditions, **common),
            AggregateRequest("moments", "level", None, "error", centre=1.5, where=conditions, **common),
            AggregateRequest("histogram", "kwh", (1.0, 3.0), "drop", edges=(0.0, 1.0, 2.0, 3.0, 4.0, 5.0),
                             where=conditions, **common),
        ]
    return out


def _equal(a, b) -> None:
    assert a.keys == b.keys
    for name in ("count", "sum", "sum_squares", "cells", "grid_points", "grid_counts"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


def test_a_built_backend_gives_the_aggregates_of_a_fresh_bounding_with_the_same_draw() -> None:
    data = _data(seed=1)
    built = InMemoryBackend(Table(data))
    generator = pn.default_rng(11)
    requests = _requests()
    for _ in range(2):  # the second pass reads everything from what the first prepared
        for request in requests:
            fresh = InMemoryBackend(Table(data)).aggregate(request, pn.default_rng(11))
            _equal(built.aggregate(request, generator), fresh)


def _taking_part(data: dict[str, np.ndarray], request: AggregateRequest) -> np.ndarray:
    """The rows taking part in ``request``, row by row (filters, missing values, declared keys and categories)."""
    test = next(row_test for conditions, row_test in FILTERS if conditions == request.where)
    rows = []
    for region, kwh in zip(data["region"], data["kwh"], strict=True):
        ok = not np.isnan(kwh) if "kwh" in str(request.where) else True  # a missing value fails a condition on it
        ok = ok and test(region, kwh)
        if request.column == "kwh" and request.missing == "drop" and np.isnan(kwh):
            ok = False
        if request.keys is not None and region not in request.keys:
            ok = False
        if request.kind == "categories" and region not in request.categories:
            ok = False
        rows.append(ok)
    return np.array(rows, dtype=bool)


def test_every_unit_keeps_at_most_k_of_its_taking_part_rows_after_caching() -> None:
    data = _data(seed=2)
    backend = InMemoryBackend(Table(data))
    generator = pn.default_rng(5)
    requests = _requests() * 2  # more selections than the cache keeps: evicted ones come back the same
    seen: dict[AggregateRequest, np.ndarray] = {}
    for request in requests:
        backend.aggregate(request, generator)
        _, index = backend._selection(request, backend._prepared(generator))
        kept = np.zeros(data["household"].size, dtype=bool)
        kept[np.arange(kept.size) if index is None else index] = True
        part = _taking_part(data, request)
        assert not (kept & ~part).any()
        for unit in np.unique(data["household"]):
            own = data["household"] == unit
            assert np.count_nonzero(kept & own) == min(K, np.count_nonzero(part & own)), (request, unit)
        if request in seen:
            np.testing.assert_array_equal(seen[request], kept)
        seen[request] = kept
        count = backend.aggregate(AggregateRequest("moments", None, unit="household", max_contributions=K,
                                                   where=request.where), generator).count[0]
        matching = _taking_part(data, AggregateRequest("moments", None, where=request.where))
        assert count == sum(min(K, np.count_nonzero(matching & (data["household"] == u)))
                            for u in np.unique(data["household"]))


def test_a_where_view_after_the_bounding_is_cached_bounds_its_own_rows() -> None:
    data = _data(seed=3)
    s = pn.Session(data, privacy_unit="household", max_contributions=K, epsilon=10.0, missing="drop", rng=8)
    s.mean("kwh", bounds=(0, 5), epsilon=0.5)  # bounding drawn and cached over every row
    view = s.where("region = 'north'")
    request = view._request("moments", None)
    out = view._backend.aggregate(request, view._rows_generator)
    north = data["region"] == "north"
    units = data["household"]
    assert out.count[0] == sum(min(K, np.count_nonzero(north & (units == u))) for u in np.unique(units))
    state = view._backend._prepared(view._rows_generator)
    order = state.orders[("household", K)]
    _, index = view._backend._selection(request, state)
    kept = np.zeros(units.size, dtype=bool)
    kept[index] = True
    assert not (kept & ~north).any()
    for start, end in zip(order.starts, np.r_[order.starts[1:], order.rows.size], strict=True):
        run = order.rows[start:end]  # one unit over the cap, in the session's random order
        expected = run[north[run]][:K]  # its first k northern rows in that order
        np.testing.assert_array_equal(np.sort(np.flatnonzero(kept[run] & north[run])),
                                      np.sort(np.flatnonzero(np.isin(run, expected))))


def test_each_query_keeps_a_uniform_choice_of_a_units_taking_part_rows() -> None:
    units = np.array([0, 0, 1, 0, 0, 0, 2, 0, 0, 1])
    part = np.array([True, True, True, False, True, True, True, False, True, True])  # unit 0: 5 rows take part
    generator = pn.default_rng(9)
    draws = 6000
    kept = np.zeros(units.size)
    for _ in range(draws):
        mask = ContributionOrder.draw(units, 2, generator).kept(part)
        assert mask is not None
        kept += mask
    zero = np.flatnonzero((units == 0) & part)
    assert stats.chisquare(kept[zero]).pvalue > 1e-6
    assert kept[zero].sum() == 2 * draws
    assert np.all(kept[~part] == 0) and np.all(kept[(units != 0) & part] == draws)


def _same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two code arrays group the rows alike."""
    pairs = set(zip(a.tolist(), b.tolist(), strict=True))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


@pytest.mark.parametrize("kind", ["numbers", "objects", "pandas", "arrow", "polars"])
def test_the_units_codes_group_rows_as_the_labelled_codes_do(kind) -> None:
    ids = [3, None, 7, 3, 7, None, 1, 3]
    if kind == "numbers":
        data: object = {"u": np.array([3.0, np.nan, 7, 3, 7, np.nan, 1, 3])}
    elif kind == "objects":
        data = {"u": np.array(["c", None, "g", "c", "g", None, "a", "c"], dtype=object)}
    elif kind == "pandas":
        pd = pytest.importorskip("pandas")
        data = pd.DataFrame({"u": pd.array(ids, dtype="Int64")})
    elif kind == "arrow":
        pa = pytest.importorskip("pyarrow")
        data = pa.table({"u": pa.array(ids)})
    else:
        pl = pytest.importorskip("polars")
        data = pl.DataFrame({"u": ids})
    fast, labelled = Table(data), Table(data)
    assert _same_partition(fast.unit_codes("u"), labelled.codes("u").codes)


def test_values_are_clamped_and_centred_once_per_column_and_bounds(monkeypatch) -> None:
    """A built session's further queries read the values (and histogram bins) prepared by the first with the same
    column, bounds and centre (kept read-only); other bounds or another centre prepare their own."""
    import privnoise.analysis.backend as backend_module

    prepared: list[tuple] = []
    clamp = backend_module.clamp_and_centre

    def counted(x, bounds, centre):  # type: ignore[no-untyped-def]
        prepared.append((bounds, centre))
        return clamp(x, bounds, centre)

    monkeypatch.setattr(backend_module, "clamp_and_centre", counted)
    s = pn.Session(_data(seed=3), privacy_unit="household", max_contributions=K, epsilon=100.0, missing="drop",
                   rng=5)
    for _ in range(3):
        s.mean("kwh", bounds=(0, 5), epsilon=0.1)
        s.group_by("region", keys=["north", "south", "east"]).mean("kwh", bounds=(0, 5), epsilon=0.1)
    assert prepared == [((0.0, 5.0), 2.5)]
    s.sum("kwh", bounds=(0, 5), epsilon=0.1)
    s.histogram("kwh", bins=[0, 1, 2, 3, 4, 5], epsilon=0.1)
    s.mean("kwh", bounds=(1, 3), epsilon=0.1)
    s.sum("kwh", bounds=(0, 5), epsilon=0.1)
    assert prepared == [((0.0, 5.0), 2.5), ((0.0, 5.0), 0.0), ((1.0, 3.0), 2.0)]
    s.histogram("kwh", bins=[0, 1, 2, 3, 4, 5], epsilon=0.1)
    assert len(prepared) == 3  # the histogram's values and bins were prepared by the first
    state = s._backend._sessions[0]
    kept = [value for key, value in state._entries.items() if key[0] in ("clamped", "bins")]
    assert len(kept) == 4 and not any(array.flags.writeable for array in kept)
