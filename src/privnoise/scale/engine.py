"""The Dask engine (:mod:`privnoise.engines`): Dask collections are aggregated and released on their cluster."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["DASK", "DaskEngine"]


@dataclass(frozen=True)
class DaskEngine:
    """Sessions over Dask DataFrames (:class:`~privnoise.scale.DaskBackend`) and releases of Dask collections
    (:func:`~privnoise.scale.release_on_dask`)."""

    name: str = "dask"

    def accepts(self, data: Any) -> bool:
        return type(data).__module__.startswith("dask.")

    def backend(self, data: Any) -> Any:
        from .backend import DaskBackend

        return DaskBackend(data)

    def release(self, data: Any, query: Any, mechanism: Any, **options: Any) -> Any:
        from .release import release_on_dask

        return release_on_dask(data, query, mechanism, **options)


#: The registered instance (``privnoise.engines`` entry point ``dask``).
DASK = DaskEngine()
