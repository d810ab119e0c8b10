"""The missing-value policy shared by every reader: refuse (the default), drop the record, or impute a constant."""

from __future__ import annotations

import math
from typing import Any, Literal

from ..exceptions import InvalidParameterError

__all__ = ["Missing", "check_missing", "validate_missing"]

Missing = Literal["error", "drop"] | float


def validate_missing(missing: Any, owner: str) -> Missing:
    """``missing`` as given when it is "error", "drop" or a finite number; an error naming ``owner`` otherwise."""
    if missing in ("error", "drop"):
        return missing
    if isinstance(missing, int | float) and not isinstance(missing, bool) and math.isfinite(missing):
        return float(missing)
    raise InvalidParameterError(
        f"`missing` of `{owner}` must be 'error', 'drop' or a finite number to impute; got {missing!r}."
    )


def check_missing(missing: Missing, message: str) -> float | None:
    """What a missing value becomes: an error with ``message`` ("error"), None ("drop"), or the imputed number."""
    if missing == "error":
        raise InvalidParameterError(f"{message} (missing='error'; pass missing='drop' or a number to impute).")
    if missing == "drop":
        return None
    return float(missing)
