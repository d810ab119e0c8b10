"""The public API: every exported name exists, every area is one hop from the package."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import privnoise as pn
from privnoise import reproduce

AREAS = ["dp", "fisher", "mechanisms", "optimization", "queries", "recoverability", "systems"]


def test_every_exported_name_exists():
    for name in pn.__all__:
        assert hasattr(pn, name), name


@pytest.mark.parametrize("area", AREAS)
def test_every_area_is_exported_and_has_a_complete_all(area):
    assert area in pn.__all__
    module = getattr(pn, area)
    for name in getattr(module, "__all__", []):
        assert hasattr(module, name), f"{area}.{name}"


def test_every_module_imports():
    for info in pkgutil.walk_packages(pn.__path__, "privnoise."):
        importlib.import_module(info.name)


def test_reproduce_registry_covers_the_five_papers():
    assert set(reproduce.available()) == {
        "farokhi-sandberg",
        "liu-kawano-cao",
        "koufogiannis",
        "nageswaran",
        "farokhi-optimization",
    }


def test_lazy_exports_match_the_names_type_checkers_see():
    """``privnoise/__init__.py`` loads names on first use; its TYPE_CHECKING imports must say the same."""
    import ast
    from pathlib import Path

    tree = ast.parse(Path(pn.__file__).read_text(encoding="utf-8"))
    block = next(
        n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING"
    )
    seen: dict[str, str] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.level == 1
        for alias in node.names:
            seen[alias.name] = node.module or alias.name
    public = set(pn.__all__) - {"__version__"}
    assert set(seen) == public
    for name, module in pn._EXPORTS.items():
        assert seen[name] == module, name
        assert getattr(pn, name) is getattr(importlib.import_module(f"privnoise.{module}"), name)
