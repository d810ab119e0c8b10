"""The three ways a release is computed, each executing the query's one-component plan (:mod:`.direct`).

* Identity-like queries (s·I, diagonal) with noise of independent coordinates are computed block by block
  (:meth:`ReleasePlan.by_blocks`): the output of a block depends only on that block's records, so data read in
  chunks (:func:`privnoise.io.chunks`) is released in memory bounded by the chunk size, and written chunk by chunk
  with ``out=``.
* Other linear queries with few outputs (at most :data:`ACCUMULATE_LIMIT`: sum, mean, weighted mean, a few linear
  combinations) accumulate Cx over the blocks (:meth:`ReleasePlan.accumulated`, :func:`accumulate`): the data is
  never held whole.
* Nonlinear queries, data-dependent policies and correlated noise need the whole database, which is then read
  into memory (:meth:`ReleasePlan.whole`).

The plan (:func:`~.direct.direct_plan`) holds the noise on the power-of-two grid every output is snapped to
(:func:`~.direct.output_grid`, :mod:`privnoise.snapping`), the guarantee and the finish; a path only reads the data
and draws the noise where the data is.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..exceptions import InvalidParameterError
from ..io import Source, open_writer
from ..mechanisms import Noise, NoiseDesign
from ..queries import Query
from .direct import DirectPlan, direct_plan, output_grid
from .reading import BLOCK, BlockReader, OutOfBounds
from .result import Release

__all__ = ["ACCUMULATE_LIMIT", "ReleasePlan", "accumulate", "output_grid"]

#: Linear queries with at most this many outputs accumulate Cx block by block.
ACCUMULATE_LIMIT = 4096


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
    """One release: what is read, asked and added, and how (see the module docstring for the three ways); each way
    executes the query's one-component plan (:func:`~.direct.direct_plan`)."""

    source: Source
    query: Query
    design: NoiseDesign
    generator: np.random.Generator
    policy: OutOfBounds
    harden: bool
    delta: float | None
    path: Any

    def _plan(self, law: Noise, x: NDArray[np.float64] | None = None) -> DirectPlan:
        return direct_plan(self.query, law, self.design, harden=self.harden, delta=self.delta, x=x)

    def _publish(self, plan: DirectPlan, noisy: NDArray[np.float64], reader: BlockReader) -> Release:
        """A release computed whole: returned, or written to ``path``."""
        made = plan.finished(noisy, clamped=reader.clamped)  # the finish (box, finiteness) before any writing
        if self.path is None:
            return made
        value = np.asarray(made.value, dtype=float)
        writer = open_writer(self.path, int(value.size))
        try:
            for start in range(0, value.size, BLOCK):
                writer.write(value.ravel()[start : start + BLOCK])
            output = str(writer.commit())
        except BaseException:
            writer.abort()
            raise
        return dataclasses.replace(made, value=None, interval=None, output=output)

    def by_blocks(self, noise: Noise, operator: Any) -> Release:
        """Identity-like queries: every block of records gives the same block of outputs, with its own noise."""
        query = self.query
        plan = self._plan(noise)
        k = plan.exponent
        reader = BlockReader(self.source, query, self.policy, plan.reach)
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
        return plan.finished(result, clamped=reader.clamped, output=output, finite=True)

    def accumulated(self, noise: Noise, operator: Any) -> Release:
        """Linear queries with few outputs: Cx = Σ_blocks C[:, block] x[block], in one pass over the data."""
        query = self.query
        plan = self._plan(noise)
        reader = BlockReader(self.source, query, self.policy, plan.reach)
        total = accumulate((operator.apply_columns(block, start) for start, block in reader.blocks()), query)
        if self.path is None:
            return plan.execute(total, self.generator, clamped=reader.clamped)
        noisy = plan.component.add(total.reshape(noise.shape), self.generator)
        return self._publish(plan, noisy, reader)

    def whole(self) -> Release:
        """Nonlinear queries, policies, correlated noise: read the whole database, then release."""
        query = self.query
        reader = BlockReader(self.source, query, self.policy, math.inf)
        x = np.concatenate([block for _, block in reader.blocks()]) if query.n else np.empty(0)
        value = query.evaluate(x)
        law = self.design.law_at(query, x)
        plan = self._plan(law, x)
        exact = np.asarray(value, dtype=float).reshape(law.shape)
        if self.path is None:
            return plan.execute(exact, self.generator, clamped=reader.clamped)
        return self._publish(plan, plan.component.add(exact, self.generator), reader)
