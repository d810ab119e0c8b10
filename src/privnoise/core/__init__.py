"""The core every interface builds on: what neighbouring databases are, and how much one aggregate can change
between them (:mod:`privnoise.core.adjacency`)."""

from .adjacency import Adjacency, Bounds, RecordReplaced, UnitAddedOrRemoved

__all__ = ["Adjacency", "Bounds", "RecordReplaced", "UnitAddedOrRemoved"]
