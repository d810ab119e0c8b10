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
ABOVE_THE_CORE = ("cli", "_cli", "server", "scale", "spark", "reproduce")


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
        "print(sorted(m for m in ('dask', 'privnoise.scale', 'pyspark', 'privnoise.spark') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# --- the shape of the import graph (DESIGN.md, "Target architecture") -------------------------------------------


def _type_checking_lines(tree: ast.Module) -> set[int]:
    """The lines of ``if TYPE_CHECKING:`` blocks: imports there are for type checkers, not run."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


@functools.cache
def _runtime_graph() -> dict[str, set[str]]:
    """module → the privnoise modules it imports when run (function-level imports included; ``from . import x``
    imports the submodule x, not the package's ``__init__``)."""
    modules = {_module_name(path): (path, tree) for path, tree in _modules()}
    graph: dict[str, set[str]] = {}
    for name, (path, tree) in modules.items():
        skipped = _type_checking_lines(tree)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(tree):
            if getattr(node, "lineno", None) in skipped:
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = package.split(".")
                if node.level:
                    base = base[: len(base) - (node.level - 1)]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                submodules = [f"{source}.{a.name}" for a in node.names if f"{source}.{a.name}" in modules]
                targets = submodules if len(submodules) == len(node.names) else [source, *submodules]
            for target in targets:
                parts = target.split(".")
                while parts and ".".join(parts) not in modules:
                    parts.pop()
                if parts and ".".join(parts) != name:
                    found.add(".".join(parts))
        graph[name] = found
    return graph


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _strongly_connected({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_counting_function_level_imports() -> None:
    assert _strongly_connected(_runtime_graph()) == []


#: The layers of DESIGN.md, lowest first: a module imports only its own layer and those below.
LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"exceptions", "_validation", "_optional", "_version", "_lazy", "random", "snapping", "core", "io"}),
    frozenset({"linalg"}),
    frozenset({"queries", "sql"}),
    frozenset({"guarantees", "results"}),
    frozenset({"mechanisms"}),
    frozenset({"dp"}),
    frozenset({"fisher"}),
    frozenset({"planning"}),
    frozenset({"systems", "recoverability", "optimization", "sample_data", "plotting"}),
    frozenset({"engines", "analysis", "release"}),
    frozenset({"scale", "spark"}),
    frozenset({"reproduce", "server", "client"}),
    frozenset({"_cli", "cli", ""}),  # "" is the package itself: `import privnoise` loads names on first use
)


def _layer(module: str) -> int:
    top = module.partition(".")[2].partition(".")[0]
    for level, names in enumerate(LAYERS):
        if top in names:
            return level
    raise AssertionError(f"{module} belongs to no layer of LAYERS")


def test_no_module_imports_a_layer_above_its_own() -> None:
    offenders = [
        f"{module} -> {target}"
        for module, targets in sorted(_runtime_graph().items())
        for target in sorted(targets)
        if _layer(target) > _layer(module)
    ]
    assert offenders == []


#: The consumers of the noise families (DESIGN.md: "families never import dp/fisher consumers").
FAMILY_CONSUMERS = ("privnoise.dp", "privnoise.fisher")


def test_the_noise_families_never_import_their_consumers() -> None:
    # every import counts, function-level and TYPE_CHECKING ones included: the families reach the privacy profiles
    # and the Fisher information only through the rules registered in mechanisms/statements.py
    offenders = []
    for path, tree in _modules():
        if _module_name(path).partition(".")[2].partition(".")[0] == "mechanisms":
            offenders += _imports_of(path, tree, FAMILY_CONSUMERS)
    assert offenders == []


def test_the_consumer_check_sees_function_level_and_type_checking_imports() -> None:
    tree = ast.parse(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..dp.profile import PrivacyProfile\n"
        "def f():\n    from ..fisher import information\n"
    )
    found = _imports_of(SOURCE / "mechanisms" / "hardened.py", tree, FAMILY_CONSUMERS)
    assert [line.rpartition(" ")[2] for line in found] == [
        "privnoise.dp.profile", "privnoise.dp.profile.PrivacyProfile", "privnoise.fisher",
        "privnoise.fisher.information",
    ]


def test_lattice_and_hardened_noise_live_with_the_families() -> None:
    from privnoise import dp, mechanisms

    concrete_families()  # every submodule imported: none may shadow an exported name
    for name in ("DiscreteLaplace", "DiscreteGaussian", "HardenedMechanism", "hardened"):
        assert getattr(mechanisms, name).__module__.startswith("privnoise.mechanisms."), name
        assert getattr(dp, name) is getattr(mechanisms, name), name  # still exported where they were public


#: The longest a module may be: one concept per module.
MAX_LINES = 400


def test_no_module_is_longer_than_one_concept_needs() -> None:
    long = [f"{path.relative_to(SOURCE)} ({n})" for path, _ in _modules()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES]
    assert long == []


#: The names of the noise families and selection methods (the registries' keys and the server's policies).
FAMILY_NAMES = frozenset({"laplace", "gaussian", "discrete-laplace", "discrete-gaussian", "fisher-cosine",
                          "fisher-gaussian", "fisher-fem", "custom", "exponential", "fisher-"})
#: Where a family is named: the registries (families, error laws, selection methods, the server's policy mechanisms
#: and what each asks of the configuration). Elsewhere code reads a family object or a mechanism's rules.
NAMING_MODULES = (
    "dp/families.py",
    "mechanisms/error_laws.py",
    "dp/exponential.py",
    "server/mechanisms.py",  # the registry of the policies' mechanisms
    "server/mechanism_rules.py",  # what each policy mechanism asks of the configuration
)


def test_no_family_name_is_compared_outside_the_registries() -> None:
    # the switching on families lives in their registries: elsewhere, code asks the family object, never its name
    offenders = []
    for path, tree in _modules():
        where = path.relative_to(SOURCE).as_posix()
        if where.startswith(NAMING_MODULES):
            continue
        for node in ast.walk(tree):
            operands: list[ast.AST] = []
            if isinstance(node, ast.Compare):
                operands = [node.left, *node.comparators]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
                "startswith", "endswith"
            ):
                operands = list(node.args)
            named = {c.value for o in operands for c in ast.walk(o)
                     if isinstance(c, ast.Constant) and c.value in FAMILY_NAMES}
            if named:
                offenders.append(f"{where}:{node.lineno} {sorted(named)}")
    assert offenders == []
