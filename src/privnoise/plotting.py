"""Figures for every part of privnoise, drawn once: a matplotlib Figure on the Agg canvas, saved as PNG.

Importing privnoise never imports matplotlib; these helpers import it when a figure is drawn, and use the
object-oriented API only (no pyplot state, safe in threads and servers).

Examples
--------
>>> import tempfile, pathlib
>>> fig = figure(figsize=(3, 2), layout="constrained")
>>> _ = fig.subplots().plot([0, 1], [1, 0])
>>> path = save(fig, pathlib.Path(tempfile.mkdtemp()) / "line.png")
>>> path.read_bytes()[:4] == b"\\x89PNG"
True
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["figure", "save"]


def figure(figsize: tuple[float, float] = (7.5, 5.5), **kwargs: Any) -> Any:
    """A new matplotlib Figure attached to an Agg canvas (keyword arguments go to ``Figure``, e.g. ``layout``)."""
    from ._optional import require

    backend = require("matplotlib.backends.backend_agg", feature="figures", extra="plots")
    fig = require("matplotlib.figure", feature="figures", extra="plots").Figure(figsize=figsize, **kwargs)
    backend.FigureCanvasAgg(fig)
    return fig


def save(fig: Any, path: Path | str, *, dpi: float | None = None) -> Path:
    """Write ``fig`` to ``path`` (PNG by its suffix) at ``dpi`` (the figure's own by default); return the path."""
    target = Path(path)
    fig.savefig(target, dpi="figure" if dpi is None else dpi)
    return target
