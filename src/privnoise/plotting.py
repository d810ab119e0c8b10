"""Figures for every part of privnoise, drawn once: a matplotlib Figure on the Agg canvas, saved as PNG or
inlined in a web page as SVG (:func:`inline_svg`, for the server's console).

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

import io
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

__all__ = ["figure", "inline_svg", "save"]

_SVG = "http://www.w3.org/2000/svg"
_XLINK = "http://www.w3.org/1999/xlink"
_REFERENCE = re.compile(r"url\(#([^)]+)\)")


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


def inline_svg(fig: Any, title: str) -> str:
    """``fig`` as an ``<svg>`` element for an HTML page under a Content-Security-Policy without
    ``'unsafe-inline'``: matplotlib's ``style`` attributes become presentation attributes and its ``<style>``
    element goes (such a policy refuses both), ids that no element refers to are dropped (several figures may
    share a page), the size follows the page (``viewBox`` only, class ``figure``) and a ``<title>`` names it.

    >>> fig = figure(figsize=(3, 2))
    >>> _ = fig.subplots().plot([0, 1], [1, 0])
    >>> svg = inline_svg(fig, "a line")
    >>> svg.startswith("<svg") and "style=" not in svg and "<title>a line</title>" in svg
    True
    """
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    ET.register_namespace("", _SVG)
    ET.register_namespace("xlink", _XLINK)
    root = ET.fromstring(buffer.getvalue().encode())
    for parent in list(root.iter()):
        for child in list(parent):
            if child.tag in (f"{{{_SVG}}}metadata", f"{{{_SVG}}}style"):
                parent.remove(child)
    referenced: set[str] = set()
    for element in root.iter():
        href = element.get(f"{{{_XLINK}}}href") or element.get("href") or ""
        if href.startswith("#"):
            referenced.add(href[1:])
        for value in element.attrib.values():
            referenced.update(_REFERENCE.findall(value))
    for element in root.iter():
        style = element.attrib.pop("style", None)
        if style:
            for declaration in style.split(";"):
                name, _, value = declaration.partition(":")
                if name.strip() and value.strip():
                    element.set(name.strip(), value.strip())
        if element.get("id") is not None and element.get("id") not in referenced:
            del element.attrib["id"]
    root.set("stroke-linejoin", "round")
    root.set("stroke-linecap", "butt")
    for size in ("width", "height"):
        root.attrib.pop(size, None)
    root.set("class", "figure")
    root.set("role", "img")
    label = ET.Element(f"{{{_SVG}}}title")
    label.text = title
    root.insert(0, label)
    return ET.tostring(root, encoding="unicode")
