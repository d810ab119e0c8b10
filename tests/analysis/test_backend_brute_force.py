"""The in-memory backend's aggregates against a row-by-row loop written here (steps 1–4 of the backend's
contract: missing values, undeclared keys and categories, clamping, centring, histograms, grid counts)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privnoise.analysis.backend import AggregateRequest, InMemoryBackend, bound_contributions
from privnoise.analysis.table import Table

X = [1.5, float("nan"), -4.0, 9.0, 2.0, float("nan"), 0.25, 7.5, 3.0, -1.0]
G = ["a", "b", "c", "a", "b", "z", "a", "c", "z", "b"]
C = ["u", "v", "w", "u", "q", "v", "u", "r", "w", "v"]
DATA = {"x": np.array(X), "g": np.array(G, dtype=object), "c": np.array(C, dtype=object)}


def _rows(missing, keys):
    """(value or None, group index or None) of every row taking part: step 1 by hand."""
    labels = keys if keys is not None else sorted(set(G), key=G.index)
    out = []
    for x, g in zip(X, G, strict=True):
        if g not in labels:
            continue
        if math.isnan(x):
            if missing == "drop":
                continue
            x = float(missing)
        out.append((x, labels.index(g)))
    return out


def _backend():
    return InMemoryBackend(Table(DATA))


@pytest.mark.parametrize("missing", ["drop", 5.0, -10.0])
@pytest.mark.parametrize("keys", [None, ("b", "a"), ("a", "c", "b", "q")])
@pytest.mark.parametrize("centre", [0.0, 1.25])
def test_moments_are_the_row_sums(missing, keys, centre) -> None:
    request = AggregateRequest("moments", "x", (-2.0, 6.0), missing, group="g", keys=keys, centre=centre)
    out = _backend().aggregate(request, np.random.default_rng(0))
    got_keys = list(out.keys)
    rows = _rows(missing, list(keys) if keys is not None else None)
    count, total, squares = np.zeros(len(got_keys)), np.zeros(len(got_keys)), np.zeros(len(got_keys))
    for x, g in rows:
        v = min(max(x, -2.0), 6.0) - centre
        count[g] += 1
        total[g] += v
        squares[g] += v * v
    if keys is not None:
        assert got_keys == list(keys)
    np.testing.assert_allclose(out.count, count, atol=0)
    np.testing.assert_allclose(out.sum, total, atol=1e-12)
    np.testing.assert_allclose(out.sum_squares, squares, atol=1e-12)


@pytest.mark.parametrize("keys", [None, ("c", "a")])
def test_histograms_count_clamped_values_per_bin(keys) -> None:
    edges = (-2.0, 0.0, 1.5, 3.0, 6.0)
    request = AggregateRequest("histogram", "x", (-2.0, 6.0), "drop", group="g", keys=keys, edges=edges)
    out = _backend().aggregate(request, np.random.default_rng(0))
    rows = _rows("drop", list(keys) if keys is not None else None)
    cells = np.zeros((len(out.keys), len(edges) - 1))
    for x, g in rows:
        v = min(max(x, -2.0), 6.0)
        b = max(i for i in range(len(edges) - 1) if edges[i] <= v) if v < edges[-1] else len(edges) - 2
        cells[g, b] += 1
    np.testing.assert_array_equal(out.cells, cells)
    np.testing.assert_array_equal(out.count, cells.sum(axis=1))


@pytest.mark.parametrize("keys", [None, ("b", "a", "y")])
@pytest.mark.parametrize("categories", [("u", "v", "w"), ("w", "q", "r", "u", "v"), ("v",)])
def test_category_counts_drop_undeclared_categories(keys, categories) -> None:
    request = AggregateRequest("categories", "c", group="g", keys=keys, categories=categories)
    out = _backend().aggregate(request, np.random.default_rng(0))
    labels = list(keys) if keys is not None else sorted(set(G), key=G.index)
    cells = np.zeros((len(labels), len(categories)))
    for g, c in zip(G, C, strict=True):
        if g in labels and c in categories:
            cells[labels.index(g), categories.index(c)] += 1
    assert list(out.keys) == labels
    np.testing.assert_array_equal(out.cells, cells)
    np.testing.assert_array_equal(out.count, cells.sum(axis=1))


def test_grid_counts_round_clamped_values_to_the_grid() -> None:
    request = AggregateRequest("grid", "x", (-2.0, 6.0), 0.3, grid=(0.5, -3, 10))
    out = _backend().aggregate(request, np.random.default_rng(0))
    counts: dict[int, int] = {}
    for x in X:
        x = 0.3 if math.isnan(x) else x
        j = min(max(round(min(max(x, -2.0), 6.0) / 0.5), -3), 10)
        counts[j] = counts.get(j, 0) + 1
    assert list(out.grid_points) == sorted(counts)
    assert list(out.grid_counts) == [counts[j] for j in sorted(counts)]


def test_a_count_of_rows_without_a_value_column() -> None:
    out = _backend().aggregate(AggregateRequest("moments", group="g", keys=("z", "a")), np.random.default_rng(0))
    assert list(out.count) == [G.count("z"), G.count("a")]
    out = _backend().aggregate(AggregateRequest("moments"), np.random.default_rng(0))
    assert list(out.count) == [len(G)]


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_contribution_bounding_keeps_min_of_k_and_the_unit_size(k) -> None:
    units = np.array([3, 0, 3, 1, 3, 3, 0, 2, 3, 1, 0, 0, 0])
    for seed in range(5):
        mask = bound_contributions(units, k, np.random.default_rng(seed))
        kept = np.ones(units.size, dtype=bool) if mask is None else mask
        for u in np.unique(units):
            assert np.count_nonzero(kept[units == u]) == min(k, np.count_nonzero(units == u))
        assert (mask is None) == (k >= 5)
    data = {"x": np.arange(units.size, dtype=float), "unit": units}
    request = AggregateRequest("moments", "x", (0.0, 100.0), "error", "unit", k)
    out = InMemoryBackend(Table(data)).aggregate(request, np.random.default_rng(1))
    assert out.count[0] == sum(min(k, int(np.count_nonzero(units == u))) for u in np.unique(units))
