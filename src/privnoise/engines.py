"""Distributed engines: where data that lives on a cluster is aggregated and released.

The core (:func:`privnoise.release`, :class:`privnoise.Session`) never imports an engine. An engine registers
itself under the ``privnoise.engines`` entry-point group, named by the top-level package of the data types it
takes (``dask`` for Dask collections); the core loads it only when it is handed such data, so that ``import
privnoise`` and releases of in-memory data never import Dask. privnoise's own Dask engine is registered in its
``pyproject.toml``::

    [project.entry-points."privnoise.engines"]
    dask = "privnoise.scale.engine:DASK"

An engine is any object with :meth:`Engine.accepts`, :meth:`Engine.backend` (a Session's aggregates) and
:meth:`Engine.release` (:func:`privnoise.release` of its data). :data:`SPARK_MASTER` is the one rule for the
Spark masters every interface accepts (the command line's ``--master``, a server dataset's ``master``), checked
before Spark starts.

Examples
--------
>>> import numpy as np
>>> engine_for(np.zeros(3)) is None
True
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .exceptions import InvalidParameterError

if TYPE_CHECKING:
    from .analysis.backend import Backend

__all__ = ["GROUP", "IN_MEMORY", "SPARK_MASTER", "SPARK_MASTERS", "Engine", "engine_for", "engine_names"]

#: A Spark master: ``local``, ``local[N]``, ``local[*]``, ``local[N,F]`` (a task tried up to F times),
#: ``local-cluster[N,C,M]`` (N executor JVMs of C cores and M MiB on this machine, as a standalone cluster would
#: run them), ``spark://HOST:PORT[,HOST:PORT…]``, ``k8s://https://HOST:PORT`` or ``yarn``.
SPARK_MASTER = re.compile(r"local(\[(\d+|\*)(,\d+)?\])?|local-cluster\[\d+,\d+,\d+\]|"
                          r"spark://[\w.-]+(:\d+)?(,[\w.-]+(:\d+)?)*|k8s://https?://[\w.-]+(:\d+)?|yarn")
#: :data:`SPARK_MASTER` in words, for the errors that refuse another.
SPARK_MASTERS = ("'local', 'local[N]', 'local[N,F]', 'local[*]', 'local-cluster[N,C,M]', 'spark://HOST:PORT', "
                 "'k8s://https://HOST:PORT' or 'yarn'")

#: The entry-point group engines register under.
GROUP = "privnoise.engines"
#: The packages whose data the core computes in memory: never handed to an engine, so that a session over such
#: data does not scan every installed distribution's entry points (a few tens of milliseconds).
IN_MEMORY = frozenset({"builtins", "pathlib", "numpy", "pyarrow", "pandas", "polars"})


@runtime_checkable
class Engine(Protocol):
    """What the core asks of a distributed engine."""

    name: str

    def accepts(self, data: Any) -> bool:
        """Whether ``data`` is a collection of this engine."""

    def backend(self, data: Any) -> Backend:
        """The aggregation backend of a :class:`~privnoise.Session` over ``data``."""

    def release(self, data: Any, query: Any, mechanism: Any, **options: Any) -> Any:
        """:func:`privnoise.release` of ``data`` (parameters already validated; ``options`` as passed there)."""


@functools.cache
def _registered() -> dict[str, Any]:
    from importlib.metadata import entry_points  # loaded only when an engine is looked for (slow to import)

    return {point.name: point for point in entry_points(group=GROUP)}


def engine_names() -> tuple[str, ...]:
    """The names of the registered engines (the packages whose data they take)."""
    return tuple(sorted(_registered()))


@functools.cache
def _load(name: str) -> Engine:
    engine = _registered()[name].load()
    if not isinstance(engine, Engine):
        raise InvalidParameterError(f"the engine registered as {name!r} in {GROUP!r} lacks accepts/backend/release.")
    return engine


def engine_for(data: Any) -> Engine | None:
    """The engine that takes ``data``, or None for data the core handles in memory.

    Only the engine registered under the top-level package of ``type(data)`` is loaded (and only then); data of
    the packages in :data:`IN_MEMORY` has none.
    """
    package = type(data).__module__.partition(".")[0]
    if package in IN_MEMORY or package not in _registered():
        return None
    engine = _load(package)
    return engine if engine.accepts(data) else None
