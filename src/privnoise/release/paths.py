"""The three ways a release is computed, and the output grid they share.

* Identity-like queries (s·I, diagonal) with noise of independent coordinates are computed block by block
  (:meth:`ReleasePlan.by_blocks`): the output of a block depends only on that block's records, so data read in
  chunks (:func:`privnoise.io.chunks`) is released in memory bounded by the chunk size, and written chunk by chunk
  with ``out=``.
* Other linear queries with few outputs (at most :data:`ACCUMULATE_LIMIT`: sum, mean, weighted mean, a few linear
  combinations) accumulate Cx over the blocks (:meth:`ReleasePlan.accumulated`, :func:`accumulate`): the data is
  never held whole.
* Nonlinear queries, data-dependent policies and correlated noise need the whole database, which is then read
  into memory (:meth:`ReleasePlan.whole`).

:func:`output_grid` gives the power-of-two grid every output is snapped to (:mod:`privnoise.snapping`) and the
largest record magnitude its exact arithmetic takes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..exceptions import InvalidParameterError
from ..guarantees import Guarantee
from ..io import Source, open_writer
from ..mechanisms import Mechanism, Noise, NoiseDesign
from ..queries import Query
from ..snapping import MAX_GRID_UNITS, exact_exponent
from .accuracy import direct_interval
from .reading import BLOCK, BlockReader, OutOfBounds
from .result import Release

__all__ = ["ACCUMULATE_LIMIT", "ReleasePlan", "accumulate", "output_grid"]

#: Linear queries with at most this many outputs accumulate Cx block by block.
ACCUMULATE_LIMIT = 4096


def output_grid(law: Noise, query: Query, harden: bool) -> tuple[int | None, float]:
    """The exponent of the output grid (None unhardened) and the largest |x_i| its exact arithmetic takes."""
    if not harden and isinstance(law, Mechanism):
        return None, math.inf
    k = law.default_grid_exponent()
    if isinstance(law, Mechanism):  # continuous noise: coarsen the grid until the declared outputs fit
        k = exact_exponent(k, query.output_bound())
    operator = getattr(query, "operator", None)
    growth = operator.max_abs_row_sum() if operator is not None else 1.0
    return k, MAX_GRID_UNITS * math.ldexp(1.0, k) / max(growth, 1e-300)


def accumulate(parts: Iterable[NDArray[np.float64]], query: Query) -> NDArray[np.float64]:
    """Cx from its partial sums C[:, block] x[block] over blocks of records (an exactly rounded sum when the query
    has one output); a total that overflows is refused."""
    partials: list[float] = []
    total = np.zeros(query.m)
    with np.errstate(over="ignore", invalid="ignore"):
        for part in parts:
            if query.m == 1:
                partials.append(float(part[0]))
            else:
                total += part
        if query.m == 1:
            try:
                total = np.array([math.fsum(partials)])
            except (OverflowError, ValueError):
                total = np.array([math.inf])
    if not np.all(np.isfinite(total)):
        raise InvalidParameterError(f"the value of query `{query.name}` is not finite (overflow); rescale the data.")
    return total

@dataclass(frozen=True, slots=True)
class ReleasePlan:
    """One release: what is read, asked and added, and how (see the module docstring for the three ways)."""

    source: Source
    query: Query
    design: NoiseDesign
    generator: np.random.Generator
    policy: OutOfBounds
    harden: bool
    delta: float | None
    path: Any

    def _start(self, law: Noise, x: NDArray[np.float64] | None = None) -> tuple[int | None, float, Guarantee]:
        """The grid exponent, the record magnitude its arithmetic takes, and the guarantee (before any noise)."""
        k, reach = output_grid(law, self.query, self.harden)
        grid = 0.0 if k is None or not isinstance(law, Mechanism) else math.ldexp(1.0, k)
        return k, reach, self.design.guarantee_for(self.query, x, delta=self.delta, grid=grid)

    def _result(
        self, value: Any, guarantee: Guarantee, reader: BlockReader, k: int | None, noise: Any,
        output: str | None = None,
    ) -> Release:
        grid = 0.0 if k is None else math.ldexp(1.0, k)
        describe = self.query.describe(), self.design.describe()
        interval = None if self.design.output_range() is not None else direct_interval(noise, value, grid)
        return Release(value, guarantee, *describe, clamped_records=reader.clamped, grid=grid, output=output,
                       interval=interval)

    def _publish(self, value: NDArray[np.float64], guarantee: Guarantee, reader: BlockReader, k: int | None,
                 noise: Any) -> Release:
        """A release computed whole: returned, or written to ``path``."""
        if self.path is None:
            return self._result(float(value) if value.ndim == 0 else value, guarantee, reader, k, noise)
        writer = open_writer(self.path, int(value.size))
        try:
            for start in range(0, value.size, BLOCK):
                writer.write(value.ravel()[start : start + BLOCK])
            output = str(writer.commit())
        except BaseException:
            writer.abort()
            raise
        return self._result(None, guarantee, reader, k, noise, output)

    def by_blocks(self, noise: Noise, operator: Any) -> Release:
        """Identity-like queries: every block of records gives the same block of outputs, with its own noise."""
        query = self.query
        k, reach, guarantee = self._start(noise)
        reader = BlockReader(self.source, query, self.policy, reach)
        writer = None if self.path is None else open_writer(self.path, query.n)
        result = np.empty(query.n) if writer is None else None
        buffer = np.empty(BLOCK) if writer is not None else None
        reuse = noise.identical_coordinates  # blocks of equal length share one marginal law
        law: Noise | None = None
        try:
            for start, block in reader.blocks():
                stop = start + block.size
                scale = operator.record_scale(start, stop)
                unit = scale == 1.0 if type(scale) is float else bool(np.all(scale == 1.0))
                values = block if unit else block * scale
                if law is None or not reuse or law.dim != block.size:
                    law = noise.marginal(start, stop)
                assert law is not None
                target = result[start:stop] if result is not None else buffer[: block.size]  # type: ignore[index]
                law.add_to(values, rng=self.generator, harden=self.harden, grid_exponent=k, checked=True, out=target)
                if writer is not None:
                    writer.write(target)
            output = None if writer is None else str(writer.commit())
        except BaseException:
            if writer is not None:
                writer.abort()
            raise
        return self._result(result, guarantee, reader, k, noise, output)

    def accumulated(self, noise: Noise, operator: Any) -> Release:
        """Linear queries with few outputs: Cx = Σ_blocks C[:, block] x[block], in one pass over the data."""
        query = self.query
        k, reach, guarantee = self._start(noise)
        reader = BlockReader(self.source, query, self.policy, reach)
        total = accumulate((operator.apply_columns(block, start) for start, block in reader.blocks()), query)
        value = total.reshape(noise.shape)
        noisy = noise.add_to(value, rng=self.generator, harden=self.harden, grid_exponent=k)
        return self._publish(np.asarray(noisy).reshape(query.output_shape), guarantee, reader, k, noise)

    def whole(self) -> Release:
        """Nonlinear queries, policies, correlated noise: read the whole database, then release."""
        query = self.query
        reader = BlockReader(self.source, query, self.policy, math.inf)
        x = np.concatenate([block for _, block in reader.blocks()]) if query.n else np.empty(0)
        value = query.evaluate(x)
        law = self.design.law_at(query, x)
        k, _, guarantee = self._start(law, x)
        noisy = law.add_to(
            np.asarray(value, dtype=float).reshape(law.shape), rng=self.generator, harden=self.harden, grid_exponent=k
        )
        box = self.design.output_range()
        if box is not None and k is not None:  # rounding must not leave the promised box: keep to grid points inside
            lattice = math.ldexp(1.0, k)
            noisy = np.clip(noisy, np.ceil(box[0] / lattice) * lattice, np.floor(box[1] / lattice) * lattice)
        if not np.all(np.isfinite(noisy)):  # defensive: a release never contains NaN or inf
            raise InvalidParameterError("the release would not be finite; check the query's scale.")
        return self._publish(np.asarray(noisy).reshape(query.output_shape), guarantee, reader, k, law)
