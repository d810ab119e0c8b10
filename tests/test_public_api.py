"""The public API: every exported name exists, every area is one hop from the package."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import privnoise as pn
from privnoise import reproduce

AREAS = ["dp", "fisher", "mechanisms", "optimization", "queries", "recoverability", "solvers", "systems"]


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
