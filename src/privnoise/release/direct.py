"""A direct release (:func:`privnoise.release`) as the core's plan of one component.

The plan (:class:`privnoise.planning.Plan`) holds one component, ``release``: the noise for this query (a policy's
law at the data), on the output grid 2^k every output is snapped to (:func:`output_grid`; unhardened for research
only), and states the guarantee the design gives for the query at that grid
(:meth:`~privnoise.mechanisms.NoiseDesign.guarantee_for`). Its finish shapes the noisy value as the query's
output, keeps the release of a design that promises a box on the grid points inside it and states the interval of
the noise (:func:`~.accuracy.direct_interval`). Every way of computing a release executes this plan: in memory,
whole or accumulated over blocks (:func:`privnoise.planning.execute`); block by block
and on Dask or Spark workers, where the noise is drawn next to the data and the release is
:func:`privnoise.planning.finished` from it. A release that is not finite is refused, unless finite by
construction (hardened blocks of checked records).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..exceptions import InvalidParameterError
from ..mechanisms import Mechanism, Noise, NoiseDesign
from ..planning import Plan, execute, finished
from ..planning.component import Component
from ..queries import Query
from ..snapping import MAX_GRID_UNITS, exact_exponent
from .accuracy import direct_interval
from .result import Release

__all__ = ["COMPONENT", "DirectPlan", "direct_plan", "output_grid"]

#: The name of a direct release's one component.
COMPONENT = "release"


def _finite(noisy: Any) -> None:
    """Refuse a release that is not finite (defensive: a release never contains NaN or inf)."""
    if not np.all(np.isfinite(noisy)):
        raise InvalidParameterError("the release would not be finite; check the query's scale.")


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


@dataclass(frozen=True, slots=True)
class DirectPlan:
    """The one-component plan of a direct release, with what reading its data needs: ``reach``, the largest
    |x_i| the exact arithmetic of the output grid takes."""

    core: Plan
    query: Query
    design: NoiseDesign
    reach: float

    @property
    def component(self) -> Component[Noise]:
        return self.core.components[COMPONENT]

    @property
    def exponent(self) -> int | None:
        """k of the output grid 2^k (None: unhardened continuous noise)."""
        return self.component.exponent

    @property
    def grid(self) -> float:
        """Λ = 2^k, every output an exact multiple of it (0: unhardened)."""
        k = self.exponent
        return 0.0 if k is None else math.ldexp(1.0, k)

    def execute(self, total: NDArray[np.float64], generator: np.random.Generator, *, clamped: int) -> Release:
        """The release of the exact answer ``total`` (the noise drawn here, from ``generator``)."""
        noisy: dict[str, Any] = {}
        made = execute(self.core, {COMPONENT: total.reshape(self.component.noise.shape)}, generator,
                       noisy_out=noisy, **self._fields(clamped, None))
        _finite(noisy[COMPONENT])
        return made

    def finished(self, noisy: Any, *, clamped: int, output: str | None = None, finite: bool = False) -> Release:
        """The release of ``noisy`` (the noise drawn next to the data; None when written to ``output``).
        ``finite`` states that it is finite by construction (hardened blocks of checked records): not checked
        again."""
        if noisy is not None and not finite:
            _finite(noisy)
        return finished(self.core, {COMPONENT: noisy}, **self._fields(clamped, output))

    def _fields(self, clamped: int, output: str | None) -> dict[str, Any]:
        return {"query": self.query.describe(), "mechanism": self.design.describe(), "clamped_records": clamped,
                "grid": self.grid, "output": output}


def direct_plan(query: Query, law: Noise, design: NoiseDesign, *, harden: bool, delta: float | None,
                x: NDArray[np.float64] | None = None) -> DirectPlan:
    """The plan of releasing ``query`` with ``law`` (the noise of ``design``, at the data ``x`` for a policy).

    Examples
    --------
    >>> import numpy as np, privnoise as pn
    >>> q = pn.queries.mean(100, bounds=(0.0, 1.0))
    >>> noise = pn.dp.laplace_for_epsilon(1.0, sensitivity=q.sensitivity("l1"))
    >>> plan = direct_plan(q, noise, noise, harden=True, delta=None)
    >>> release = plan.execute(np.array([0.5]), np.random.default_rng(0), clamped=0)
    >>> release.guarantee.epsilon, release.value % plan.grid == 0.0
    (1.0, True)
    """
    k, reach = output_grid(law, query, harden)
    guarantee_grid = 0.0 if k is None or not isinstance(law, Mechanism) else math.ldexp(1.0, k)
    guarantee = design.guarantee_for(query, x, delta=delta, grid=guarantee_grid)
    component: Component[Noise] = Component(name=COMPONENT, noise=law, sensitivity=None, exponent=k,
                                            hardened=harden)
    box = design.output_range()
    output_grid_step = 0.0 if k is None else math.ldexp(1.0, k)
    shape = query.output_shape

    def finish(noisy: dict[str, Any]) -> dict[str, Any]:
        value = noisy[COMPONENT]
        if value is None:  # written to a file, chunk by chunk
            return {"value": None}
        released = np.asarray(value, dtype=float).reshape(shape)
        if box is not None and k is not None:  # rounding must not leave the promised box: keep to grid points inside
            released = np.clip(released, np.ceil(box[0] / output_grid_step) * output_grid_step,
                               np.floor(box[1] / output_grid_step) * output_grid_step)
        answer: Any = float(released) if released.ndim == 0 else released
        interval = None if box is not None else direct_interval(law, answer, output_grid_step)
        return {"value": answer, "interval": interval}

    core = Plan(query.name, None, components={COMPONENT: component}, statement=guarantee, finish=finish)
    return DirectPlan(core, query, design, reach)
