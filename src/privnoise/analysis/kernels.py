"""One-pass kernels of the in-memory backend over prepared columns: values clamped and centred, and histogram bins
(each computed once per column, bounds and edges, then kept), and quantile grid counts.

The bins and grid counts count exactly as their definitions say (:mod:`privnoise.analysis.backend`, step 4), by
arithmetic where it is exact and cheaper than a search or a sort.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["bin_codes", "bin_index", "clamp_and_centre", "evenly_spaced", "grid_counts"]


def clamp_and_centre(x: NDArray[np.float64], bounds: tuple[float, float] | None, centre: float) -> NDArray[np.float64]:
    """``x`` clamped to ``bounds`` (None: not clamped), minus ``centre``: a new array, read-only (a backend keeps it
    for further queries).

    >>> clamp_and_centre(np.array([-1.0, 2.0, 9.0]), (0.0, 4.0), 2.0).tolist()
    [-2.0, 0.0, 2.0]
    """
    out = np.clip(x, bounds[0], bounds[1]) if bounds is not None else np.array(x, dtype=np.float64)
    if centre:
        np.subtract(out, centre, out=out)
    out.flags.writeable = False
    return out


def evenly_spaced(edges: NDArray[np.float64]) -> bool:
    """Whether ``edges`` are exactly ``numpy.linspace`` of their ends (the edges numpy's histogram uses for a number of
    bins over a range)."""
    return bool(np.array_equal(edges, np.linspace(edges[0], edges[-1], edges.size)))


def bin_index(x: NDArray[np.float64], edges: NDArray[np.float64]) -> NDArray[np.intp]:
    """The bin of each value among ``edges`` (bin i holds edges[i] ≤ x < edges[i + 1]; the last bin also holds
    x ≥ its upper edge, values below the first edge fall in the first): by arithmetic where the edges are evenly
    spaced, by binary search otherwise.

    The arithmetic s = (x − e₀)·n/(e_n − e₀) is within a few ulps of the exact position, and each edge of
    ``numpy.linspace`` within an ulp of e₀ + i·step, which in units of s is at most 2⁻⁵²·max(|e₀|, |e_n|)·n/(e_n − e₀).
    A value whose s lies farther than ``tol`` (2⁻⁴⁰·n·(1 + max(|e₀|, |e_n|)/(e_n − e₀)), far above both) from every
    integer is in bin ⌊s⌋; the few others (values at or next to an edge, values clamped to a bound) are placed by
    binary search among the edges themselves.

    >>> bin_index(np.array([0.0, 0.15, 0.25, 0.5, 1.0, -1.0]), np.linspace(0.0, 1.0, 11)).tolist()
    [0, 1, 2, 5, 9, 0]
    """
    bins = edges.size - 1
    first, last = float(edges[0]), float(edges[-1])
    if bins > 1 and evenly_spaced(edges):
        scaled = np.subtract(x, first)
        scaled *= bins / (last - first)
        np.clip(scaled, 0, bins - 1, out=scaled)
        index = scaled.astype(np.intp)
        tol = 2.0**-40 * bins * (1.0 + max(abs(first), abs(last)) / (last - first))
        scaled -= index  # the position within the bin
        near = np.flatnonzero((scaled < tol) | (scaled > 1.0 - tol))
        if near.size:  # the edges decide: exact comparisons
            index[near] = np.clip(np.searchsorted(edges, x[near], side="right") - 1, 0, bins - 1)
        return index
    return np.clip(np.searchsorted(edges, x, side="right") - 1, 0, bins - 1)


def bin_codes(x: NDArray[np.float64], edges: NDArray[np.float64]) -> NDArray[np.unsignedinteger]:
    """:func:`bin_index` in the smallest unsigned integer type that holds every bin, read-only: what a backend keeps
    per column, bounds and edges, so that a further histogram over them is one ``bincount``.

    >>> codes = bin_codes(np.array([0.0, 0.15, 1.0]), np.linspace(0.0, 1.0, 11))
    >>> codes.tolist(), codes.dtype.name
    ([0, 1, 9], 'uint8')
    """
    codes = bin_index(x, edges).astype(np.min_scalar_type(max(edges.size - 2, 0)))
    codes.flags.writeable = False
    return codes


def grid_counts(x: NDArray[np.float64], step: float, low: int, high: int) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """The occupied grid points j (x rounded to jΛ, j_low ≤ j ≤ j_high) in increasing order, and their counts: one
    ``bincount`` over the grid when it is not much larger than the data, a sort otherwise.

    >>> points, counts = grid_counts(np.array([0.2, 0.24, 1.0, 3.9]), 0.5, 0, 6)
    >>> points.tolist(), counts.tolist()
    ([0, 2, 6], [2.0, 1.0, 1.0])
    """
    scaled = np.multiply(x, 1.0 / step)  # Λ is a power of two: exact
    np.rint(scaled, out=scaled)
    np.clip(scaled, low, high, out=scaled)
    if high - low + 1 <= max(4 * x.size, 1 << 16):
        counts = np.bincount(scaled.astype(np.intp) - low, minlength=high - low + 1)
        occupied = np.flatnonzero(counts)
        return occupied.astype(np.int64) + low, counts[occupied].astype(float)
    points, found = np.unique(scaled.astype(np.int64), return_counts=True)
    return points, found.astype(float)
