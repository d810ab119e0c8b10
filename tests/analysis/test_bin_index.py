"""Bin codes by arithmetic agree, value for value, with a binary search among the edges themselves.

The arithmetic path (evenly spaced edges) places a value by its scaled position and sends the values near an edge
to the binary search; the reference here is numpy's ``searchsorted`` over the same edges, with values at every
edge, one ulp on either side of it, beyond both ends, and at random, for ranges far from zero and narrow ones."""

from __future__ import annotations

import numpy as np
import pytest

from privnoise.analysis.kernels import bin_codes, bin_index


def _reference(x: np.ndarray, edges: np.ndarray) -> np.ndarray:
    return np.clip(np.searchsorted(edges, x, side="right") - 1, 0, edges.size - 2)


@pytest.mark.parametrize("low", [0.0, -3.7, 0.1, 1e6, -1e9, 2.0**40])
@pytest.mark.parametrize("width", [1e-3, 1.0, 7.3, 100.0])
def test_every_value_lands_in_the_bin_the_edges_give(low: float, width: float) -> None:
    rng = np.random.default_rng(int(abs(low)) % 1000 + int(width * 10))
    for bins in (2, 3, 20, 255, 1000):
        edges = np.linspace(low, low + width, bins + 1)
        x = np.concatenate([edges, np.nextafter(edges, np.inf), np.nextafter(edges, -np.inf),
                            rng.uniform(low - width, low + 2 * width, 5000), [np.inf, -np.inf][:0]])
        np.testing.assert_array_equal(bin_index(x, edges), _reference(x, edges))


def test_clamped_values_and_uneven_edges() -> None:
    even = np.linspace(0, 100, 21)
    x = np.clip(np.random.default_rng(2).normal(50, 30, 20_000), 0, 100)  # many values exactly at the bounds
    x = np.concatenate([x, even])  # and one at every edge
    np.testing.assert_array_equal(bin_index(x, even), _reference(x, even))
    uneven = np.array([0.0, 1.0, 5.0, 50.0, 99.0, 100.0])
    np.testing.assert_array_equal(bin_index(x, uneven), _reference(x, uneven))
    codes = bin_codes(x, even)
    assert codes.dtype == np.uint8 and not codes.flags.writeable
    # a wrong rule (bins closed on the right) is told apart by the reference
    right_closed = np.clip(np.searchsorted(even, x, side="left") - 1, 0, 19)
    assert not np.array_equal(bin_index(x, even), right_closed)
