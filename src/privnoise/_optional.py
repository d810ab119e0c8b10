"""Optional dependencies: one place that imports them and says which extra to install when one is missing.

privnoise's core needs numpy, scipy, randomgen, typer and rich only. Everything else is an extra of the
``privnoise`` distribution, imported at the point of use through :func:`require`, which raises one
:class:`~privnoise.exceptions.MissingExtraError` naming the exact ``pip install`` line:

>>> require("math", feature="a doctest").pi > 3
True
>>> require("no_such_module_xyz", feature="the demo")
Traceback (most recent call last):
...
privnoise.exceptions.MissingExtraError: the demo needs the optional package 'no_such_module_xyz' (not installed): pip install 'privnoise[all]'

Call :func:`require` (or :func:`check`) before anything is written, so that a missing extra never leaves a
half-written result behind.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from .exceptions import MissingExtraError

__all__ = ["EXTRAS", "check", "extra_of", "install_line", "require"]

#: The extra of ``pyproject.toml`` that provides each optional top-level module.
EXTRAS: dict[str, str] = {
    "dp_accounting": "dp",
    "matplotlib": "plots",
    "pandas": "data",
    "pyarrow": "data",
    "fastapi": "server",
    "uvicorn": "server",
    "sqlalchemy": "server",
    "httpx": "server",
    "psycopg": "postgres",
    "dask": "dask",
    "distributed": "dask",
    "pyspark": "spark",
    "sklearn": "ml",
    "skfem": "fem",
    "shapely": "fem",
    "pyamg": "fem",
}


def extra_of(module: str) -> str:
    """The extra that provides ``module`` (its top-level package), ``"all"`` for one not listed."""
    return EXTRAS.get(module.split(".", 1)[0], "all")


def install_line(extra: str) -> str:
    """The command that installs ``extra``: ``pip install 'privnoise[extra]'``."""
    return f"pip install 'privnoise[{extra}]'"


def _message(modules: list[str], feature: str, extra: str | None) -> str:
    tops = sorted({module.split(".", 1)[0] for module in modules})
    extras = extra or ",".join(sorted({extra_of(top) for top in tops}))
    names = ", ".join(repr(top) for top in tops)
    package = "package" if len(tops) == 1 else "packages"
    return f"{feature} needs the optional {package} {names} (not installed): {install_line(extras)}"


def require(module: str, *, feature: str, extra: str | None = None) -> ModuleType:
    """Import ``module``, or raise :class:`MissingExtraError` naming ``feature`` and the extra to install.

    Parameters
    ----------
    module : str
        The module to import, e.g. ``"matplotlib.figure"``.
    feature : str
        What needs it, in the user's words (``"privnoise demo"``, ``"accountant_for(mode='pld')"``).
    extra : str, optional
        The extra to name; by default the one :data:`EXTRAS` lists for the module's top-level package.
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        top = module.split(".", 1)[0]
        if exc.name is not None and exc.name.split(".", 1)[0] != top:
            raise  # the module exists but one of its own dependencies is broken: show the real error
        raise MissingExtraError(_message([module], feature, extra)) from None


def check(*modules: str, feature: str, extra: str | None = None) -> None:
    """Raise :class:`MissingExtraError` naming every module that is not installed, without importing any.

    >>> check("math", "no_such_module_a", "no_such_module_b", feature="the demo", extra="server")
    Traceback (most recent call last):
    ...
    privnoise.exceptions.MissingExtraError: the demo needs the optional packages 'no_such_module_a', 'no_such_module_b' (not installed): pip install 'privnoise[server]'
    """
    missing = [m for m in modules if importlib.util.find_spec(m.split(".", 1)[0]) is None]
    if missing:
        raise MissingExtraError(_message(missing, feature, extra))
