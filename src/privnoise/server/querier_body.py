"""The body of a request that adds a querier: its name, its budget on each dataset and optionally its own Fisher
floor, as the admin API (``POST /v1/admin/queriers``, :mod:`.app`) and the owner's console page
(:mod:`.console.owner`) read it.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from . import openapi

__all__ = ["QuerierBody"]


class QuerierBody(BaseModel):
    """A new querier: its name and its budget on each dataset (ε, δ: a number, or an exact rational as a string
    of :data:`.openapi.EPSILON_PATTERN`, :data:`.openapi.DELTA_PATTERN`), and optionally its own Fisher floor."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, strict=True)
    name: Annotated[
        str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]*[A-Za-z0-9][A-Za-z0-9_-]*$")
    ]
    epsilon: (
        Annotated[float, Field(ge=openapi.SMALLEST, le=1e6)]
        | Annotated[str, Field(pattern=openapi.EPSILON_PATTERN)]
    )
    delta: (
        Annotated[float, Field(ge=0, le=0)]
        | Annotated[float, Field(ge=openapi.SMALLEST, lt=1)]
        | Annotated[str, Field(pattern=openapi.DELTA_PATTERN)]
    ) = 0.0
    fisher_floor: Annotated[float, Field(ge=1e-300, le=1e300)] | None = None
