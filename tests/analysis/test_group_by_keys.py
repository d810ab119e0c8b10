"""Session.group_by on several key columns: aggregates per key tuple against pandas' groupby on two columns,
declared tuples and products, keys sorted, one column per key column in frames; partition selection over tuples
with its threshold re-derived here (a tuple held by one unit is released with probability ≤ δ); one key as before;
bad keys refused with their message; the Dask backend agrees with the in-memory one."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import privnoise as pn
from privnoise.analysis.backend import AggregateRequest, InMemoryBackend
from privnoise.analysis.grouping import declared_keys, sort_key
from privnoise.analysis.table import Table
from privnoise.core.conditions import parse_conditions
from privnoise.exceptions import InvalidParameterError

SPECIES = ("Adelie", "Chinstrap", "Gentoo")
ISLANDS = ("Biscoe", "Dream", "Torgersen")


def _penguins(units: int = 90, rows: int = 4, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    unit = np.tile(np.arange(units), rows)
    species = rng.choice(np.array(SPECIES, dtype=object), unit.size)
    island = rng.choice(np.array(ISLANDS[:2], dtype=object), unit.size)  # no Torgersen rows
    mass = np.round(rng.uniform(2.5, 6.5, unit.size), 2)
    return pd.DataFrame({"unit": unit, "species": species, "island": island, "mass": mass})


def _reference(frame: pd.DataFrame, bounds: tuple[float, float], centre: float) -> pd.DataFrame:
    x = frame.assign(x=frame["mass"].clip(*bounds) - centre)
    return x.groupby(["species", "island"])["x"].agg(["count", "sum"])


def test_aggregates_per_tuple_are_pandas_groupby_on_two_columns() -> None:
    frame = _penguins()
    request = AggregateRequest("moments", "mass", (3.0, 6.0), "error", "unit", 4, ("species", "island"), None, 4.5)
    found = InMemoryBackend(Table(frame)).aggregate(request, np.random.default_rng(0))
    reference = _reference(frame, (3.0, 6.0), 4.5)
    assert sorted(found.keys or []) == list(reference.index)
    for key, count, total in zip(found.keys or [], found.count, found.sum, strict=True):
        assert count == reference.loc[key, "count"]
        assert total == pytest.approx(reference.loc[key, "sum"], rel=1e-12, abs=1e-9)


def test_session_values_per_tuple_sorted_with_a_column_per_key() -> None:
    frame = _penguins()
    s = pn.Session(frame, privacy_unit="unit", max_contributions=4, epsilon=1e10, delta=1e-6, rng=1)
    reference = _reference(frame, (3.0, 6.0), 0.0)
    counts = s.group_by(["species", "island"]).count(epsilon=1e9)
    assert counts.keys == sorted(reference.index) and all(isinstance(k, tuple) for k in counts.keys)
    np.testing.assert_array_equal(counts.value, reference["count"].to_numpy())
    sums = s.group_by(["species", "island"]).sum("mass", bounds=(3, 6), epsilon=1e9)
    np.testing.assert_allclose(sums.value, reference["sum"].to_numpy(), atol=1e-3)
    means = s.group_by(["species", "island"]).mean("mass", bounds=(3, 6), epsilon=1e9)
    np.testing.assert_allclose(means.value, (reference["sum"] / reference["count"]).to_numpy(), atol=1e-4)
    table = means.to_frame()
    assert list(table.columns) == ["species", "island", "value", "low", "high"]
    assert list(zip(table["species"], table["island"], strict=True)) == means.keys
    assert means.query["key"] == ["species", "island"] and means.query["keys"] == "selected"
    assert means.as_dict()["keys"][0] == list(means.keys[0]) and means.as_dict()["key_columns"] == ["species", "island"]


def test_declared_tuples_and_products_release_every_key_sorted() -> None:
    frame = _penguins()
    s = pn.Session(frame, privacy_unit="unit", max_contributions=4, epsilon=1e10, rng=2)
    reference = _reference(frame, (3.0, 6.0), 0.0)["count"]
    product = s.group_by(["species", "island"], keys={"island": list(ISLANDS), "species": ["Gentoo", "Adelie"]})
    assert product.keys == (("Gentoo", "Biscoe"), ("Gentoo", "Dream"), ("Gentoo", "Torgersen"), ("Adelie", "Biscoe"),
                            ("Adelie", "Dream"), ("Adelie", "Torgersen"))
    counts = product.count(epsilon=1e9)
    assert counts.keys == sorted(product.keys) and counts.query["keys"] == "declared"
    np.testing.assert_array_equal(counts.value, [reference.get(k, 0) for k in counts.keys])
    assert counts.value[counts.keys.index(("Adelie", "Torgersen"))] == 0  # absent, released
    listed = s.group_by(["island", "species"], keys=[("Dream", "Gentoo"), ["Biscoe", "Adelie"]]).count(epsilon=1e9)
    assert listed.keys == [("Biscoe", "Adelie"), ("Dream", "Gentoo")]
    np.testing.assert_array_equal(listed.value, [reference[("Adelie", "Biscoe")], reference[("Gentoo", "Dream")]])


def test_one_key_stays_a_plain_key() -> None:
    frame = _penguins()
    s = pn.Session(frame, epsilon=1e10, rng=3)
    one = s.group_by("species", keys=["Gentoo", "Adelie"]).count(epsilon=1e9)
    listed = s.group_by(["species"], keys={"species": ["Gentoo", "Adelie"]}).count(epsilon=1e9)
    assert one.keys == listed.keys == ["Gentoo", "Adelie"]  # declared order, as before
    assert list(one.to_frame().columns) == ["species", "value", "low", "high"] and one.query["key"] == "species"


def test_filters_and_tuples_together() -> None:
    frame = _penguins()
    s = pn.Session(frame, privacy_unit="unit", max_contributions=4, epsilon=1e10, delta=1e-6, rng=4)
    counts = s.where("mass >= 4 and species != 'Chinstrap'").group_by(["species", "island"]).count(epsilon=1e9)
    rows = frame[(frame["mass"] >= 4) & (frame["species"] != "Chinstrap")]
    reference = rows.groupby(["species", "island"]).size()
    assert counts.keys == list(reference.index)
    np.testing.assert_array_equal(counts.value, reference.to_numpy())


def test_keys_sort_numbers_then_text_then_missing() -> None:
    labels = [("b", None), ("b", 2), (1, "z"), ("a", 3.5), (None, "a"), ("b", 1)]
    assert sorted(labels, key=sort_key) == [(1, "z"), ("a", 3.5), ("b", 1), ("b", 2), ("b", None), (None, "a")]
    frame = pd.DataFrame({"a": ["x", None, "x", "y"], "b": [2, 1, 1, 1]})
    counts = pn.Session(frame, epsilon=1e10, delta=1e-6, rng=5).group_by(["a", "b"]).count(epsilon=1e9)
    assert counts.keys == []  # every tuple is held by one row: none reaches the threshold


# -- partition selection over tuples ------------------------------------------------------------------------------
def _laplace_threshold(b: float, delta: float, k: int) -> int:
    """The closed form of tests/dp/test_partition_thresholds.py: round(c + W) ≥ T releases a unit's own key with
    probability at most max(S(T − ½ − k), k·S(T − 3/2)), S(x) = ½e^{−x/b}."""
    first = 0.5 + k + b * math.log(1.0 / (2.0 * delta))
    second = 1.5 + b * math.log(k / (2.0 * delta))
    return max(k + 1, math.ceil(max(first, second)))


@pytest.mark.parametrize(("epsilon", "delta", "k"), [(1.0, 1e-6, 1), (0.7, 1e-5, 3), (2.3, 1e-7, 5)])
def test_a_tuple_of_one_unit_is_released_with_probability_at_most_delta(epsilon, delta, k) -> None:
    frame = _penguins(units=400, rows=k)
    lone = pd.DataFrame({"unit": [10_000] * k, "species": ["Emperor"] * k, "island": ["Ross"] * k, "mass": [5.0] * k})
    data = pd.concat([frame, lone], ignore_index=True)
    s = pn.Session(data, privacy_unit="unit", max_contributions=k, epsilon=100.0, delta=1e-3, rng=6)
    counts = s.group_by(["species", "island"], delta=delta).count(epsilon=epsilon)
    b = counts.noise[0]["b"]
    epsilon0 = epsilon - math.log(1.0 / (1.0 - delta))  # the pure part left once δ pays for the threshold
    assert k / epsilon0 <= b <= k / epsilon0 * (1 + 1e-6)
    threshold = counts.query["threshold"]
    assert threshold == _laplace_threshold(b, delta, k)
    assert 0.5 * math.exp(-(threshold - 0.5 - k) / b) <= delta  # a tuple of one unit: at most k rows
    assert k * 0.5 * math.exp(-(threshold - 1.5) / b) <= delta  # one row in each of k tuples of its own
    assert ("Emperor", "Ross") not in counts.keys
    assert set(counts.keys) == {(sp, isl) for sp in SPECIES for isl in ISLANDS[:2]}


def test_the_lone_tuple_stays_hidden_over_many_seeds() -> None:
    k, delta = 2, 1e-6
    rows = pd.DataFrame({"unit": [0, 0, 1, 1, 2], "species": ["A", "A", "B", "B", "C"], "island": ["x"] * 5})
    for seed in range(200):
        s = pn.Session(rows, privacy_unit="unit", max_contributions=k, epsilon=10.0, delta=1e-3, rng=seed)
        assert s.group_by(["species", "island"], delta=delta).count(epsilon=5.0).keys == []


# -- bad input ------------------------------------------------------------------------------------------------------
BAD = [
    (([],), {}, r"`key` of `group_by` must be a column or a non-empty list of columns; got"),
    ((5,), {}, r"`key` of `group_by` must be a column or a non-empty list of columns; got"),
    ((["species", "nope"],), {}, r"`key` of `Session` must be a column of the data .*got 'nope'"),
    ((["species", "species"],), {}, r"`key` of `group_by` names a column twice: \['species', 'species'\]"),
    ((["species", "island"],), {"keys": [("Adelie",)]},
     r"`keys` of `group_by` on 2 columns must be tuples of 2 values \(species, island\)"),
    ((["species", "island"],), {"keys": ["Adelie"]}, r"`keys` of `group_by` on 2 columns must be tuples of 2 values"),
    ((["species", "island"],), {"keys": [("A", "B"), ("A", "B")]},
     r"`keys` of `group_by` must be a non-empty list of distinct values"),
    ((["species", "island"],), {"keys": []}, r"`keys` of `group_by` must be a non-empty list of distinct values"),
    ((["species", "island"],), {"keys": "Adelie"}, r"`keys` of `group_by` must be a list of values"),
    ((["species", "island"],), {"keys": {"species": ["Adelie"]}},
     r"`keys` of `group_by` as a mapping must give the values of every key column \['species', 'island'\] and no "
     r"other; got \['species'\]"),
    ((["species", "island"],), {"keys": {"species": ["A"], "island": ["B"], "mass": [1]}},
     r"as a mapping must give the values of every key column"),
    ((["species", "island"],), {"keys": {"species": [], "island": ["B"]}},
     r"`keys\['species'\]` of `group_by` must be a non-empty list of distinct values"),
    ((["species", "island"],), {"keys": [(["a"], "B")]}, r"`keys` of `group_by` must be hashable values"),
    ((["species", "island"],), {}, r"`delta` of `group_by` must be > 0 when the keys are not declared"),
]


@pytest.mark.parametrize(("args", "kwargs", "message"), BAD)
def test_bad_keys_are_refused_before_any_charge(args, kwargs, message) -> None:
    s = pn.Session(_penguins(), epsilon=1.0)
    with pytest.raises(InvalidParameterError, match=message):
        s.group_by(*args, **kwargs)
    assert s.remaining().exact_epsilon == 1


def test_declared_keys_unwrap_numpy_scalars() -> None:
    assert declared_keys([(np.int64(1), np.str_("a"))], ("n", "t")) == ((1, "a"),)
    assert declared_keys({"n": np.array([2, 1])}, "n") == (2, 1)


# -- Dask ---------------------------------------------------------------------------------------------------------
def test_the_dask_backend_groups_by_tuples_as_the_in_memory_one() -> None:
    dask = pytest.importorskip("dask")
    dd = pytest.importorskip("dask.dataframe")
    from privnoise.scale import DaskBackend

    frame = _penguins(units=120, rows=5, seed=3)
    frame.loc[::17, "island"] = None  # missing key values are a key of their own (None)
    with dask.config.set(scheduler="sync"):
        distributed = DaskBackend(dd.from_pandas(frame, npartitions=4))
        memory = InMemoryBackend(Table(frame))
        for keys in (None, (("Adelie", "Biscoe"), ("Gentoo", None), ("Emperor", "Ross"))):
            for where in ((), parse_conditions("mass < 5")):
                request = AggregateRequest("moments", "mass", (3.0, 6.0), "error", "unit", 5, ("species", "island"),
                                           keys, 4.5, where=where)
                a = distributed.aggregate(request, np.random.default_rng(0))
                b = memory.aggregate(request, np.random.default_rng(0))
                assert set(a.keys or []) == set(b.keys or [])
                for key, count, total in zip(b.keys or [], b.count, b.sum, strict=True):
                    i = (a.keys or []).index(key)
                    assert a.count[i] == count and a.sum[i] == pytest.approx(total, rel=1e-12, abs=1e-9)
        s = pn.Session(dd.from_pandas(frame, npartitions=4), privacy_unit="unit", max_contributions=5, epsilon=1e10,
                       delta=1e-6, rng=7)
        counts = s.group_by(["species", "island"], keys={"species": list(SPECIES), "island": ["Biscoe"]}).count(
            epsilon=1e9)
        reference = frame[frame["island"] == "Biscoe"].groupby("species").size()
        assert counts.keys == [(sp, "Biscoe") for sp in SPECIES]
        np.testing.assert_array_equal(counts.value, reference.loc[list(SPECIES)].to_numpy())
