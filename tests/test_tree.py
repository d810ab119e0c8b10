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
            if isinstance(node, ast.ImportFrom) and node.module is not None:  # `from . import _module`: a submodule
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


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SOURCE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_modules(path: Path, tree: ast.Module) -> list[tuple[int, str]]:
    """Every module ``path`` imports, at any level (function-level imports included), as absolute names."""
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[: len(base) - (node.level - 1)]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            out.append((node.lineno, name))
            out.extend((node.lineno, f"{name}.{alias.name}") for alias in node.names)  # `from . import module`
    return out


def _imports_of(path: Path, tree: ast.Module, forbidden: tuple[str, ...]) -> list[str]:
    """The imports of one module that fall in the ``forbidden`` packages."""
    return [
        f"{path.relative_to(SOURCE)}:{line} imports {imported}"
        for line, imported in _imported_modules(path, tree)
        if any(imported == f or imported.startswith(f + ".") for f in forbidden)
    ]


def test_the_import_reader_resolves_relative_imports() -> None:
    tree = ast.parse("from .._cli.supports import parse_support\nfrom . import limits\nimport privnoise.cli\n")
    found = {name for _, name in _imported_modules(SOURCE / "server" / "config.py", tree)}
    assert {"privnoise._cli.supports", "privnoise.server.limits", "privnoise.cli"} <= found


def test_nothing_below_the_command_line_imports_it() -> None:
    # the library, the server and the reports are used without the command line; it sits on top of them
    offenders = []
    for path, tree in _modules():
        if _module_name(path).partition(".")[2].partition(".")[0] not in ("cli", "_cli"):
            offenders += _imports_of(path, tree, ("privnoise._cli", "privnoise.cli"))
    assert offenders == []


#: The layers above the core: they may use a distributed engine directly.
ABOVE_THE_CORE = ("cli", "_cli", "server", "scale", "reproduce")


def test_the_core_never_imports_a_distributed_engine() -> None:
    # engines register under privnoise.engines and are loaded when the core is handed their data
    offenders = []
    for path, tree in _modules():
        if _module_name(path).partition(".")[2].partition(".")[0] not in ABOVE_THE_CORE:
            offenders += _imports_of(path, tree, ("privnoise.scale", "dask", "distributed", "pyspark"))
    assert offenders == []


def test_engines_load_only_for_their_data() -> None:
    import subprocess
    import sys

    code = (
        "import sys, numpy as np, privnoise as pn\n"
        "q = pn.queries.mean(3, bounds=(0.0, 1.0))\n"
        "pn.release(np.array([0.1, 0.5, 0.9]), q, pn.dp.laplace_for_epsilon(1.0, sensitivity=q.sensitivity('l1')),"
        " rng=1)\n"
        "pn.Session({'x': [0.1, 0.5]}, epsilon=1).count(epsilon=0.5)\n"
        "print(sorted(m for m in ('dask', 'privnoise.scale') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
