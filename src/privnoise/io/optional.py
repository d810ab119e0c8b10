"""Optional dependencies of :mod:`privnoise.io`, imported on first use with a one-line error naming the extra."""

from __future__ import annotations

import importlib
from types import ModuleType

from ..exceptions import PrivnoiseError

__all__ = ["MissingDependencyError", "require"]


class MissingDependencyError(PrivnoiseError, ImportError):
    """An optional dependency is not installed; the message names the extra that provides it."""


def require(module: str, purpose: str, *, extra: str = "data") -> ModuleType:
    """Import ``module`` or raise :class:`MissingDependencyError` ("<purpose> needs <pkg>: pip install ...").

    Examples
    --------
    >>> require("math", "arithmetic").sqrt(4.0)
    2.0
    """
    try:
        return importlib.import_module(module)
    except ImportError:
        package = module.split(".")[0]
        raise MissingDependencyError(
            f"{purpose} needs {package}, which is not installed: pip install 'privnoise[{extra}]'"
        ) from None
