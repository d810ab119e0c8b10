"""Reading the data of a release: blocks of records, each checked in the pass that reads it.

:func:`check_block` checks one block of records against the query's declared bounds with its minimum and maximum
only (NaN, an infinity, a record outside the bounds or beyond the reach of the output grid's exact arithmetic make
one of them fail), and clamps it under ``out_of_bounds="clamp"``; :class:`BlockReader` reads a
:class:`~privnoise.io.Source` in blocks of at most :data:`BLOCK` records, checks each, counts the clamped records
and checks the length against the query's n.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from ..exceptions import DimensionError, InvalidParameterError
from ..io import Source
from ..queries import Query

__all__ = ["BLOCK", "BlockReader", "OutOfBounds", "check_block"]

OutOfBounds = Literal["error", "clamp"]

#: Records per block: large enough to amortise Python per block (the noise kernels work on cache-sized chunks of
#: it, :data:`privnoise.snapping.CHUNK`), small enough to stay in the last-level cache between check and noise.
BLOCK = 1 << 18


def check_block(
    block: NDArray[np.float64], bounds: Any, policy: OutOfBounds, reach: float
) -> tuple[NDArray[np.float64], int]:
    """One block of records checked against the query's declared ``bounds`` (None: none declared): the block
    (clamped under ``policy="clamp"``) and how many records were clamped; NaN, inf, records outside the bounds under
    ``policy="error"``, and undeclared records beyond ``reach`` raise.

    The minimum and maximum decide everything: NaN or an infinity makes one of them non-finite, and the declared
    bounds compare with them; only a failing block is looked at further (count, clamp).
    """
    with np.errstate(over="ignore", invalid="ignore"):
        low, high = float(block.min()), float(block.max())
    if bounds is not None and bounds.lower <= low and high <= bounds.upper:
        return block, 0
    if bounds is None and math.isfinite(low) and math.isfinite(high):
        if max(-low, high) >= reach:
            raise InvalidParameterError(
                "`data` of `release` spans more than 2^50 steps of the output grid; declare bounds on the query "
                "(the grid is then chosen to fit them) or rescale the data."
            )
        return block, 0
    bad = int(block.size - np.count_nonzero(np.isfinite(block)))
    if bad:
        raise InvalidParameterError(
            f"`data` of `release` must contain only finite numbers; got {bad} NaN or infinite "
            f"entr{'y' if bad == 1 else 'ies'}."
        )
    assert bounds is not None
    outside = int(np.count_nonzero((block < bounds.lower) | (block > bounds.upper)))
    if policy == "error":
        raise InvalidParameterError(
            f"`data` of `release` has {outside} record(s) outside the declared bounds "
            f"[{bounds.lower:g}, {bounds.upper:g}]; pass out_of_bounds='clamp' to clamp them."
        )
    return np.clip(block, bounds.lower, bounds.upper), outside


class BlockReader:
    """Reads a source in blocks of at most :data:`BLOCK` records, each checked by :func:`check_block`."""

    def __init__(self, source: Source, query: Query, policy: OutOfBounds, reach: float) -> None:
        self.source = source
        self.n = query.n
        self.bounds = query.bounds
        self.policy = policy
        self.reach = reach  # largest |x_i| the grid arithmetic can take (inf when unhardened)
        self.clamped = 0
        self.position = 0

    def _check(self, block: NDArray[np.float64]) -> NDArray[np.float64]:
        checked, clamped = check_block(block, self.bounds, self.policy, self.reach)
        self.clamped += clamped
        return checked

    def blocks(self) -> Iterator[tuple[int, NDArray[np.float64]]]:
        """(start, checked block) pairs covering records 0 … n − 1 in order."""
        with np.errstate(over="ignore", invalid="ignore"):
            for chunk in self.source.chunks():
                for offset in range(0, chunk.size, BLOCK):
                    block = chunk[offset : offset + BLOCK]
                    start = self.position
                    if start + block.size > self.n:
                        raise DimensionError(
                            f"`data` of `release` must have length {self.n} (the query's n); got more records."
                        )
                    self.position += block.size
                    yield start, self._check(block)
        if self.position != self.n:
            raise DimensionError(
                f"`data` of `release` must have length {self.n} (the query's n); got {self.position}."
            )
