"""The rows of a dataset file, checked against its declared columns before anything is imported.

Imports are strict: a NaN or infinite value is rejected with the file, line and column; a value outside the
declared bounds is clamped (``out_of_bounds = "clamp"``) or rejected (``"reject"``); bounds are never inferred.
Every refusal is a :class:`DataImportError` (the Dask engine's checks of its files, :mod:`.dask_engine`, raise it
too).
"""

from __future__ import annotations

from typing import Any

from ..exceptions import InvalidParameterError
from ..io import read, read_text
from .datasets import DatasetSpec

__all__ = ["DataImportError", "rows_from_file"]


class DataImportError(InvalidParameterError):
    """A dataset file cannot be imported (NaN, inf, unparsable value, missing column, out of bounds)."""


def rows_from_file(spec: DatasetSpec) -> list[dict[str, Any]]:
    """The rows of the dataset file, read by :mod:`privnoise.io` (the library's and the command line's readers:
    byte-order marks, delimiters, NaN, inf and missing values handled alike), then checked against the bounds."""
    assert spec.source is not None
    path = spec.source
    first_line = 1 if path.suffix.lower() == ".parquet" else 2
    try:
        columns = {
            name: read_text(path, name) if col.type == "text" else read(path, name)
            for name, col in spec.columns.items()
        }
    except InvalidParameterError as exc:
        raise DataImportError(str(exc)) from None
    except OSError as exc:
        raise DataImportError(f"{path}: cannot read: {exc.strerror or exc}") from None
    count = len(next(iter(columns.values()))) if columns else 0
    rows: list[dict[str, Any]] = [{"pn_row": i} for i in range(count)]
    for name, col in spec.columns.items():
        values = columns[name]
        if col.type == "text":
            for row, value in zip(rows, values, strict=True):
                row[name] = value
            continue
        assert col.bounds is not None
        lo, hi = col.bounds
        for i, (row, x) in enumerate(zip(rows, values, strict=True)):
            x = float(x)
            if not lo <= x <= hi:
                if col.out_of_bounds == "reject":
                    raise DataImportError(
                        f"{path}: line {i + first_line}, column {name!r}: {x:g} is outside the declared bounds "
                        f"[{lo:g}, {hi:g}] (out_of_bounds = 'reject')."
                    )
                x = min(max(x, lo), hi)
            row[name] = x
    return rows

