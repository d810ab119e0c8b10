"""The rules shared by the sections of ``owner.toml``: strict pydantic models, identifiers, exact rationals,
bounded positive numbers, and the error of a model-level rule about one key.

Every section of the owner's configuration (:mod:`.config`) is a pydantic model with :data:`STRICT`: unknown keys
are refused and the values are frozen. A rule that concerns one key of a section raises :class:`KeyRuleError`,
whose message names the key (:func:`privnoise.server.config.load_config` puts it in the error's dotted key).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator

from ..exceptions import InvalidParameterError
from .checks import checked_rational

__all__ = ["IDENTIFIER", "STRICT", "Budgeted", "KeyRuleError", "optional_keys", "positive_in", "rational"]

#: A dataset, table or column name: an identifier of at most 63 characters.
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
#: The pydantic settings of every section: unknown keys are refused, the values frozen.
STRICT = ConfigDict(extra="forbid", frozen=True)


def rational(kind: str) -> Any:
    def check(value: Any) -> Fraction:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise ValueError(f"must be a number or a rational string like '1/10'; got {value!r}")
        try:
            return checked_rational(value, "value", "owner.toml", kind=kind)
        except InvalidParameterError as exc:
            rule = {"epsilon": "a finite number > 0 and ≤ 10⁶", "delta": "a finite number ≥ 0 and < 1"}[kind]
            raise ValueError(
                f"must be {rule} (an exact rational of at most 100 characters); got {value!r}"
            ) from exc

    return check


def positive_in(low: float, high: float) -> Any:
    def check(value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"must be a finite number; got {value!r}")
        if not math.isfinite(value):
            raise ValueError(f"must be a finite number; got {value!r}")
        if value <= 0:
            raise ValueError(f"must be > 0; got {value!r}")
        if not low <= value <= high:
            raise ValueError(f"must lie in [{low:g}, {high:g}]; got {value!r}")
        return float(value)

    return check


def optional_keys(checks: Mapping[str, Callable[[Any], Any]]) -> Any:
    """The field validator of a section's optional keys, one check per key: an absent key (None) stays None, any
    other value becomes what its key's check returns (or the check's :class:`ValueError`)."""

    def check(cls: type[BaseModel], value: Any, info: ValidationInfo) -> Any:
        assert info.field_name is not None
        return None if value is None else checks[info.field_name](value)

    return field_validator(*checks)(classmethod(check))


class KeyRuleError(ValueError):
    """A model-level rule about one key: the error message names the key."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"[{key}] {message}")


class Budgeted(BaseModel):
    """An (ε, δ) pair read as exact rationals (a policy's charge, a dataset's global budget)."""

    model_config = STRICT
    epsilon: Any = None
    delta: Any = None

    @field_validator("epsilon")
    @classmethod
    def _epsilon(cls, v: Any) -> Any:
        return None if v is None else rational("epsilon")(v)

    @field_validator("delta")
    @classmethod
    def _delta(cls, v: Any) -> Any:
        return None if v is None else rational("delta")(v)
