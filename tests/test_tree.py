"""Tree checks: one dispatch table for the noise families, and no module reaching into another's private names."""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import pkgutil
from pathlib import Path

import privnoise
from privnoise.mechanisms import NoiseDesign

SOURCE = Path(privnoise.__file__).parent
DISPATCH_TABLE = SOURCE / "dp" / "profile.py"


@functools.cache
def concrete_families() -> frozenset[str]:
    """The names of every concrete noise class (subclasses of NoiseDesign that are not abstract)."""
    for info in pkgutil.walk_packages(privnoise.__path__, "privnoise."):
        importlib.import_module(info.name)
    seen: set[type] = set()
    stack: list[type] = [NoiseDesign]
    while stack:
        for sub in stack.pop().__subclasses__():
            if sub not in seen:
                seen.add(sub)
                stack.append(sub)
    return frozenset(cls.__name__ for cls in seen if not inspect.isabstract(cls))


def _names(node: ast.AST) -> set[str]:
    out = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Name):
            out.add(child.id)
        elif isinstance(child, ast.Attribute):
            out.add(child.attr)
    return out


@functools.cache
def _modules() -> list[tuple[Path, ast.Module]]:
    return [(path, ast.parse(path.read_text(encoding="utf-8"))) for path in sorted(SOURCE.rglob("*.py"))]


def test_the_family_census_finds_every_family():
    families = concrete_families()
    for name in ("Gaussian", "Laplace", "DiscreteLaplace", "HardenedMechanism", "StatisticalInputNoise",
                 "InitialStateNoise", "RecoverabilityResponse", "OutputConstrainedPolicy"):
        assert name in families


def test_no_isinstance_on_concrete_noise_families_outside_the_dispatch_table():
    families = concrete_families()
    offenders = []
    for path, tree in _modules():
        if path == DISPATCH_TABLE:
            continue
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("isinstance", "issubclass")
                and len(node.args) == 2
                and (hit := _names(node.args[1]) & families)
            ):
                offenders.append(f"{path.relative_to(SOURCE)}:{node.lineno} {sorted(hit)}")
    assert offenders == []


def test_no_module_imports_or_reaches_into_another_modules_private_names():
    offenders = []
    for path, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                private = [a.name for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
                if private:
                    offenders.append(f"{path.relative_to(SOURCE)}:{node.lineno} imports {private}")
            elif (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
                and not (  # super(...)._method: a class's own base
                    isinstance(node.value, ast.Call)
                    and isinstance(node.value.func, ast.Name)
                    and node.value.func.id == "super"
                )
            ):
                offenders.append(f"{path.relative_to(SOURCE)}:{node.lineno} {ast.unparse(node)}")
    assert offenders == []
