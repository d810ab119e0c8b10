"""Real regression data: scikit-learn's diabetes data (the default) and the UCI Adult data from a local file.

Both loaders scale every column by **declared** bounds written in this module (never by statistics of the data),
so that the gradient sensitivity of the regression cost can be stated from the bounds alone:

* :func:`load_diabetes` — 442 patients, 10 features as shipped by scikit-learn (each already centred and scaled by
  its publisher), divided by the declared bound 0.2 so that features lie in [−1, 1]; the label (a disease
  progression score, declared range [0, 400]) is divided by 400.
* :func:`load_adult` — the paper's dataset (Farokhi, Section III): 14 features and the income label (> 50K → 1).
  Categorical entries are transformed to reals as the paper does: the i-th category (0-based) of a column with k
  categories, in the order of UCI's ``adult.names``, becomes (i + 1)/k, and a missing entry ``?`` becomes 0.
  Numeric columns are mapped to [0, 1] by declared ranges; values outside them are clamped and counted.

Examples
--------
>>> data = load_diabetes()                                   # doctest: +SKIP
>>> data.features.shape, float(abs(data.features).max()) <= 1.0   # doctest: +SKIP
((442, 10), True)
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._optional import require
from .._validation import readonly
from ..exceptions import InvalidParameterError

__all__ = [
    "ADULT_CATEGORIES",
    "ADULT_COLUMNS",
    "ADULT_NUMERIC_RANGES",
    "RegressionData",
    "load_adult",
    "load_diabetes",
]


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class RegressionData:
    """Features in [−feature_bound, feature_bound], labels in [−label_bound, label_bound] (declared bounds)."""

    name: str
    features: NDArray[np.float64]
    labels: NDArray[np.float64]
    feature_names: tuple[str, ...]
    feature_bound: float
    label_bound: float
    clamped: int = 0

    @property
    def records(self) -> int:
        return int(self.labels.size)


def load_diabetes() -> RegressionData:
    """scikit-learn's bundled diabetes data, scaled by declared bounds (features /0.2, label /400).

    Raises
    ------
    MissingExtraError
        When scikit-learn (the ``ml`` extra) is not installed.
    """
    datasets = require("sklearn.datasets", feature="the diabetes dataset (load_diabetes)")
    bunch: Any = datasets.load_diabetes()
    u = np.clip(np.asarray(bunch.data, dtype=float) / 0.2, -1.0, 1.0)
    clamped = int(np.count_nonzero(np.abs(np.asarray(bunch.data) / 0.2) > 1.0))
    z = np.clip(np.asarray(bunch.target, dtype=float) / 400.0, 0.0, 1.0)
    return RegressionData(
        name="diabetes",
        features=readonly(u),
        labels=readonly(z),
        feature_names=tuple(bunch.feature_names),
        feature_bound=1.0,
        label_bound=1.0,
        clamped=clamped,
    )


ADULT_COLUMNS: tuple[str, ...] = (
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
    "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country",
)  # fmt: skip
"""The 14 feature columns of ``adult.data``/``adult.test``; the 15th is the income label."""

ADULT_NUMERIC_RANGES: dict[str, tuple[float, float]] = {
    "age": (17.0, 90.0),
    "fnlwgt": (0.0, 1_500_000.0),
    "education-num": (1.0, 16.0),
    "capital-gain": (0.0, 99_999.0),
    "capital-loss": (0.0, 4_356.0),
    "hours-per-week": (1.0, 99.0),
}
"""Declared ranges of the numeric columns (from ``adult.names``), mapped to [0, 1]."""

ADULT_CATEGORIES: dict[str, tuple[str, ...]] = {
    "workclass": (
        "Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov", "State-gov", "Without-pay",
        "Never-worked",
    ),
    "education": (
        "Bachelors", "Some-college", "11th", "HS-grad", "Prof-school", "Assoc-acdm", "Assoc-voc", "9th",
        "7th-8th", "12th", "Masters", "1st-4th", "10th", "Doctorate", "5th-6th", "Preschool",
    ),
    "marital-status": (
        "Married-civ-spouse", "Divorced", "Never-married", "Separated", "Widowed", "Married-spouse-absent",
        "Married-AF-spouse",
    ),
    "occupation": (
        "Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial", "Prof-specialty",
        "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical", "Farming-fishing", "Transport-moving",
        "Priv-house-serv", "Protective-serv", "Armed-Forces",
    ),
    "relationship": ("Wife", "Own-child", "Husband", "Not-in-family", "Other-relative", "Unmarried"),
    "race": ("White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"),
    "sex": ("Female", "Male"),
    "native-country": (
        "United-States", "Cambodia", "England", "Puerto-Rico", "Canada", "Germany", "Outlying-US(Guam-USVI-etc)",
        "India", "Japan", "Greece", "South", "China", "Cuba", "Iran", "Honduras", "Philippines", "Italy", "Poland",
        "Jamaica", "Vietnam", "Mexico", "Portugal", "Ireland", "France", "Dominican-Republic", "Laos", "Ecuador",
        "Taiwan", "Haiti", "Columbia", "Hungary", "Guatemala", "Nicaragua", "Scotland", "Thailand", "Yugoslavia",
        "El-Salvador", "Trinadad&Tobago", "Peru", "Hong", "Holand-Netherlands",
    ),
}  # fmt: skip
"""Category lists in the order of UCI's ``adult.names``."""

_LABELS = {"<=50K": 0.0, ">50K": 1.0}
_MAX_RECORDS = 1_000_000


def load_adult(path: str | PathLike[str], *, limit: int | None = None) -> RegressionData:
    """The UCI Adult data from a local ``adult.data``/``adult.test`` file (comma-separated, no header).

    Parameters
    ----------
    path : path-like
        The file; blank lines and lines starting with ``|`` (the header of ``adult.test``) are skipped.
    limit : int, optional
        Read at most this many records.

    Raises
    ------
    InvalidParameterError
        Naming the file, the line and the column of a malformed entry (wrong field count, unknown category,
        non-numeric value, unknown label).
    OSError
        When the file cannot be read.
    """
    file = Path(path)
    rows: list[list[float]] = []
    labels: list[float] = []
    clamped = 0
    cat_codes = {
        col: {c: (i + 1) / len(cats) for i, c in enumerate(cats)} for col, cats in ADULT_CATEGORIES.items()
    }
    with file.open(newline="", encoding="utf-8") as handle:
        for line_no, fields in enumerate(csv.reader(handle, skipinitialspace=True), start=1):
            if not fields or all(not f.strip() for f in fields) or fields[0].startswith("|"):
                continue
            if len(fields) != 15:
                raise InvalidParameterError(
                    f"{file}: line {line_no} must have 15 comma-separated fields (14 features and income); "
                    f"got {len(fields)}."
                )
            row: list[float] = []
            for col, raw in zip(ADULT_COLUMNS, fields[:14], strict=True):
                value = raw.strip()
                if col in ADULT_NUMERIC_RANGES:
                    lo, hi = ADULT_NUMERIC_RANGES[col]
                    try:
                        number = float(value)
                    except ValueError:
                        number = float("nan")
                    if not np.isfinite(number):
                        raise InvalidParameterError(
                            f"{file}: line {line_no}, column {col!r} must be a finite number; got {value[:30]!r}."
                        )
                    if number < lo or number > hi:
                        clamped += 1
                    row.append((min(max(number, lo), hi) - lo) / (hi - lo))
                elif value == "?":
                    row.append(0.0)
                else:
                    code = cat_codes[col].get(value)
                    if code is None:
                        raise InvalidParameterError(
                            f"{file}: line {line_no}, column {col!r} has an unknown category {value[:30]!r}."
                        )
                    row.append(code)
            label = fields[14].strip().rstrip(".")
            if label not in _LABELS:
                raise InvalidParameterError(
                    f"{file}: line {line_no}, column 'income' must be <=50K or >50K; got {label[:30]!r}."
                )
            rows.append(row)
            labels.append(_LABELS[label])
            if (limit is not None and len(rows) >= limit) or len(rows) >= _MAX_RECORDS:
                break
    if not rows:
        raise InvalidParameterError(f"{file}: contains no records.")
    return RegressionData(
        name="adult",
        features=readonly(np.array(rows)),
        labels=readonly(np.array(labels)),
        feature_names=ADULT_COLUMNS,
        feature_bound=1.0,
        label_bound=1.0,
        clamped=clamped,
    )
