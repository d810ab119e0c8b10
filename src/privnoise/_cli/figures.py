"""The figures the commands draw with ``--plot`` (the ``plots`` extra), each written as a PNG file.

Importing this module imports no plotting library: :func:`plot_file` imports it when a figure is drawn.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["plot_file"]


@contextmanager
def plot_file(path: Path) -> Iterator[Any]:
    """The axes of a new 7 × 4.5 inch figure, written to ``path`` (PNG at 100 dpi, its folder made if need be)
    when the block ends without an error.

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "plots" / "line.png"
    >>> with plot_file(path) as ax:
    ...     _ = ax.plot([0, 1], [1, 0])
    >>> path.read_bytes()[:4] == b"\\x89PNG"
    True
    """
    from ..plotting import figure, save

    fig = figure(figsize=(7, 4.5), layout="constrained")
    yield fig.subplots()
    path.parent.mkdir(parents=True, exist_ok=True)
    save(fig, path, dpi=100)
