"""Reproduction of the papers privnoise implements: one module per paper, each returning a :class:`Report`.

>>> from privnoise.reproduce import available
>>> "farokhi-sandberg" in available()
True
"""

from __future__ import annotations

import os
from importlib import import_module
from pathlib import Path

from .._optional import check
from ._report import CACHE_VARIABLE, SECOND_METHOD_FUNCTIONS, SECOND_METHODS, Report, Row, method_kind

__all__ = ["CACHE_VARIABLE", "SECOND_METHODS", "SECOND_METHOD_FUNCTIONS", "Report", "Row", "available", "method_kind", "run"]

_MODULES = {
    "farokhi-optimization": "farokhi_optimization",
    "farokhi-sandberg": "farokhi_sandberg",
    "koufogiannis": "koufogiannis",
    "liu-kawano-cao": "liu_kawano_cao",
    "nageswaran": "nageswaran",
}


def available() -> list[str]:
    """Names accepted by :func:`run` and by ``privnoise reproduce``."""
    return sorted(_MODULES)


def run(name: str, output: Path | None = None, *, figures: bool = True) -> Report:
    """Compute the report of paper ``name``; with ``output``, write report.md and its PNG figures there.

    Figures need matplotlib (the ``plots`` extra); without it, nothing is written and the error names the extra.
    Where the environment variable ``PRIVNOISE_REPRODUCE_CACHE`` names a directory, a report computed by this
    same code (every source file hashed) on the same numerical libraries is read from there instead
    (:mod:`privnoise.reproduce._cache`).
    """
    if name not in _MODULES:
        raise KeyError(f"unknown paper {name!r}; choose one of {', '.join(available())}")
    if output is not None and figures:
        check("matplotlib", feature=f"the figures of the {name} reproduction")
    module = import_module(f".{_MODULES[name]}", __name__)
    cache = os.environ.get(CACHE_VARIABLE)  # the cache module loads only when it is set
    if not cache:
        return module.build_report(output, figures=figures)
    from ._cache import cached_report

    return cached_report(Path(cache), name, output, figures,
                         lambda out, drawn: module.build_report(out, figures=drawn))
