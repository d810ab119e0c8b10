"""Every ``check`` row of every reproduction report names an independent second method.

A check row's ``method`` names one kind of ``SECOND_METHODS`` and never a privnoise routine; the functions the
report modules register as second methods (``second_method``) use numpy, scipy and the reproduction package only,
never the privnoise code whose results the rows check.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import math
import pkgutil
import re
import textwrap
import types
from collections.abc import Callable
from typing import Any

import pytest
from scipy import integrate

import privnoise
from privnoise import reproduce
from privnoise.mechanisms import RaisedCosine
from privnoise.reproduce import SECOND_METHOD_FUNCTIONS, SECOND_METHODS, Report, Row

#: Check rows allowed, for now, to state their method in their reason only (none left). A key may only leave it:
#: a row that names its second method must not be listed.
PENDING: frozenset[str] = frozenset()


@pytest.fixture(scope="module")
def reports() -> dict[str, Report]:
    return {name: reproduce.run(name, None, figures=False) for name in reproduce.available()}


def _check_rows(reports: dict[str, Report]) -> list[tuple[str, Row]]:
    return [(name, row) for name, report in reports.items() for row in report.rows if row.status == "check"]


@functools.cache
def privnoise_routines() -> frozenset[str]:
    """The public functions and classes of privnoise outside the reproduction package, and the public methods
    of those classes, whose names are specific enough to be told from prose: snake_case names and CamelCase names
    ("mean", "Laplace" or "Gaussian" are words a method's description uses)."""
    names: set[str] = set()
    for info in pkgutil.walk_packages(privnoise.__path__, "privnoise."):
        if info.name.startswith("privnoise.reproduce") or ".cli" in info.name or "._cli" in info.name:
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an optional dependency that is not installed
            continue
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name, None)
            if inspect.isfunction(obj) or inspect.isclass(obj):
                names.add(name)
            if inspect.isclass(obj):
                names |= {m for m in vars(obj) if not m.startswith("_")}
    return frozenset(n for n in names if "_" in n.strip("_") or sum(c.isupper() for c in n) >= 2)


def test_the_method_kind_is_the_text_before_the_colon() -> None:
    assert (
        Row("k", "c", 1.0, 1.0, "check", "", "quadrature: scipy.integrate.quad").method_kind == "quadrature"
    )
    assert Row("k", "c", 1.0, 1.0, "check", "", "a method without a kind").method_kind == ""


def test_every_check_row_names_a_second_method_of_a_registered_kind(reports: dict[str, Report]) -> None:
    missing = [f"{name}:{row.key}" for name, row in _check_rows(reports)
               if row.key not in PENDING and row.method_kind not in SECOND_METHODS]  # fmt: skip
    assert missing == []


def test_the_pending_rows_are_still_pending(reports: dict[str, Report]) -> None:
    # a pending row that names its method must leave PENDING, so that the list only shrinks
    rows = {row.key: row for _, row in _check_rows(reports)}
    assert {key for key in PENDING if key in rows and not rows[key].method} == PENDING


def test_a_row_without_a_method_is_caught() -> None:
    report = Report(title="t", source="s")
    report.add(Row("bare", "a claim", 1.0, 1.0, "check", "a reason, but no second method"))
    assert [r.key for r in report.rows if r.method_kind not in SECOND_METHODS] == ["bare"]


def test_no_second_method_names_a_privnoise_routine(reports: dict[str, Report]) -> None:
    routines = privnoise_routines()
    assert {"total_variation", "fisher_information_quadrature", "max_privacy", "RaisedCosine"} <= routines
    named = [
        f"{name}:{row.key} names {hit}"
        for name, row in _check_rows(reports)
        for hit in sorted(routines)
        if re.search(rf"(?<![\w.]){re.escape(hit)}(?!\w)", row.method)
    ]
    assert named == []


def _is_privnoise_outside_reproduce(module: str) -> bool:
    return (module == "privnoise" or module.startswith("privnoise.")) and not module.startswith(
        "privnoise.reproduce"
    )


def _imported_inside(tree: ast.AST, package: str) -> list[tuple[str, Any]]:
    """The modules a function imports in its body, as (label, module name)."""
    out: list[tuple[str, Any]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)] if node.level else []
            module = ".".join([*base, node.module] if node.module else base)
            out.append((f"import from {module}", module))
    return out


def _reached(function: Callable[..., Any]) -> list[tuple[str, Any]]:
    """The global objects ``function``'s source names (modules followed through attribute access), and the
    modules it imports in its body (as ``types.ModuleType`` stand-ins named after them)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    scope = function.__globals__
    package = function.__module__.rpartition(".")[0]
    found: list[tuple[str, Any]] = [
        (label, types.ModuleType(module)) for label, module in _imported_inside(tree, package)
    ]
    for node in ast.walk(tree):
        chain: list[str] = []
        target: ast.AST = node
        while isinstance(target, ast.Attribute):
            chain.insert(0, target.attr)
            target = target.value
        if not isinstance(target, ast.Name) or target.id not in scope:
            continue
        obj, label = scope[target.id], target.id
        for attr in chain:  # follow module.attribute while the object is a module
            if not isinstance(obj, types.ModuleType) or not hasattr(obj, attr):
                break
            obj, label = getattr(obj, attr), f"{label}.{attr}"
        found.append((label, obj))
    return found


def _privnoise_code_used(function: Callable[..., Any], seen: set[int]) -> list[str]:
    out: list[str] = []
    for label, obj in _reached(function):
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        module = obj.__name__ if isinstance(obj, types.ModuleType) else getattr(obj, "__module__", None) or ""
        if _is_privnoise_outside_reproduce(module):
            out.append(f"{label} ({module})")
        elif module.startswith("privnoise.reproduce") and inspect.isfunction(obj):
            out += _privnoise_code_used(obj, seen)  # a helper of the reproduction package: read it too
    return out


def test_the_registry_of_second_methods_is_filled(reports: dict[str, Report]) -> None:
    modules = {name.rsplit(".", 1)[0] for name in SECOND_METHOD_FUNCTIONS}
    for paper in ("farokhi_optimization", "farokhi_sandberg", "koufogiannis", "liu_kawano_cao", "nageswaran"):
        assert any(m.startswith(f"privnoise.reproduce.{paper}") for m in modules), paper


def test_no_registered_second_method_uses_privnoise_code(reports: dict[str, Report]) -> None:
    used = {
        name: hits
        for name, function in sorted(SECOND_METHOD_FUNCTIONS.items())
        if (hits := _privnoise_code_used(function, set()))
    }
    assert used == {}


def _uses_privnoise_globally() -> float:
    return float(RaisedCosine(lower=0.0, upper=1.0).fisher_information())


def _uses_privnoise_locally() -> float:
    from privnoise.fisher import fisher_information_quadrature

    return float(fisher_information_quadrature(lambda w: 1.0, (0.0, 1.0)))


def _uses_scipy_only() -> float:
    return float(integrate.quad(math.cos, 0.0, 1.0)[0])


def test_the_reader_finds_privnoise_code() -> None:
    assert _privnoise_code_used(_uses_privnoise_globally, set()) == [
        "RaisedCosine (privnoise.mechanisms.raised_cosine)"
    ]
    assert _privnoise_code_used(_uses_privnoise_locally, set()) == [
        "import from privnoise.fisher (privnoise.fisher)"
    ]
    assert _privnoise_code_used(_uses_scipy_only, set()) == []
