"""Figures for every part of privnoise, drawn once: a matplotlib Figure on the Agg canvas, saved as PNG.

Importing privnoise never imports matplotlib; these helpers import it when a figure is drawn, and use the
object-oriented API only (no pyplot state, safe in threads and servers).

Examples
--------
>>> import tempfile, pathlib
>>> fig = figure(figsize=(3, 2))
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
    """A new matplotlib Figure with constrained layout, attached to an Agg canvas."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    kwargs.setdefault("layout", "constrained")
    fig = Figure(figsize=figsize, **kwargs)
    FigureCanvasAgg(fig)
    return fig


def save(fig: Any, path: Path | str, *, dpi: int = 100) -> Path:
    """Write ``fig`` to ``path`` (PNG by its suffix) and return the path."""
    target = Path(path)
    fig.savefig(target, dpi=dpi)
    return target
