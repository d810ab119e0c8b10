"""Numeric Arrow columns read through the Arrow memory layout agree with pyarrow's own conversion."""

from __future__ import annotations

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")

from privnoise.analysis.table import _arrow_numeric  # noqa: E402
from privnoise.io.arrow_numbers import arrow_floats  # noqa: E402


def _reference(array: object) -> tuple[np.ndarray, np.ndarray]:
    """pyarrow's conversion (to_numpy with nulls as NaN), independent of the layout reader."""
    import pyarrow.compute as pc

    floats = pc.cast(array, pa.float64())
    missing = np.asarray(pc.is_null(array, nan_is_null=True).to_numpy(zero_copy_only=False), dtype=bool)
    values = np.asarray(pc.fill_null(floats, np.nan).to_numpy(zero_copy_only=False), dtype=np.float64)
    return missing, values


@pytest.mark.parametrize("kind", ["int8", "int16", "int32", "int64", "uint8", "uint32", "uint64", "float32",
                                  "float64"])
def test_layout_reader_agrees_with_pyarrow_on_nulls_nans_and_slices(kind: str) -> None:
    rng = np.random.default_rng(11)
    for trial in range(20):
        n = int(rng.integers(0, 300))
        raw = rng.integers(0, 100, size=n) if kind.startswith(("int", "uint")) else rng.normal(size=n)
        values = raw.astype(kind)
        nulls = rng.random(n) < 0.2 if trial % 3 else np.zeros(n, dtype=bool)
        if kind.startswith("float") and n:
            values[rng.random(n) < 0.1] = np.nan
        array = pa.array(values, type=getattr(pa, kind)(), mask=nulls)
        start = int(rng.integers(0, n + 1))
        for piece in (array, array.slice(start), array.slice(start, max(n - start - 3, 0))):
            missing, got = arrow_floats(piece)
            want_missing, want = _reference(piece)
            np.testing.assert_array_equal(missing, want_missing)
            np.testing.assert_array_equal(got, want)  # NaN where missing on both sides


def test_chunked_columns_decimals_and_large_integers() -> None:
    import decimal

    chunked = pa.chunked_array([pa.array([1.0, None]), pa.array([], pa.float64()), pa.array([3.5])])
    column = _arrow_numeric(chunked, "x")
    np.testing.assert_array_equal(column.missing, [False, True, False])
    np.testing.assert_array_equal(column.values, [1.0, np.nan, 3.5])
    decimals = pa.array([decimal.Decimal("1.25"), None], pa.decimal128(5, 2))
    missing, values = arrow_floats(decimals)
    np.testing.assert_array_equal(missing, [False, True]) and np.testing.assert_array_equal(values, [1.25, np.nan])
    # beyond 2**53 an integer has no exact float: refused as Arrow's safe cast refuses it
    with pytest.raises(pa.ArrowInvalid):
        arrow_floats(pa.array([2**60, 1], pa.int64()))
