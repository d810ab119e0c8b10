"""Names of a package that load their module on first use (PEP 562), shared by :mod:`privnoise.dp` and
:mod:`privnoise.sql`: a program that needs one of their names does not import the others' dependencies."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, exports: dict[str, str],
                 namespace: dict[str, Any]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of ``package``: ``exports`` maps each name to the submodule that
    defines it (``"audits"``), or to a module written as a relative import from the package (``"..mechanisms.x"``,
    as in ``from ..mechanisms.x import name``); a name, once loaded, is kept in the package's ``namespace`` (its
    ``globals()``).

    >>> getattr_, dir_ = lazy_exports("privnoise.dp", {"audit": "audits"}, {})
    >>> getattr_("audit").__name__, "audit" in dir_()
    ('audit', True)
    """

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        relative = module if module.startswith(".") else f".{module}"
        value = getattr(importlib.import_module(relative, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__
