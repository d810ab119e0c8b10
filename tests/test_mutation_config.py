"""The mutation groups name code that exists: every module path of ``mutation/modules.toml`` is a file, and every
function it lists (``name`` or ``Class.method``) is defined there, so a renamed or moved function cannot leave a
group measuring nothing."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "mutation" / "modules.toml"


def _defined(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            names.add(node.name)
            names.update(f"{node.name}.{item.name}" for item in node.body
                         if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef))
    return names


def _modules() -> list[tuple[str, str, list[str]]]:
    data = tomllib.loads(CONFIG.read_text(encoding="utf-8"))
    return [(g["name"], m["path"], [*m.get("functions", []), *m.get("text_functions", [])])
            for g in data["group"] for m in g["module"]]


@pytest.mark.parametrize(("group", "path", "functions"), _modules(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_listed_function_exists(group: str, path: str, functions: list[str]) -> None:
    source = ROOT / path
    assert source.is_file(), f"group {group}: {path} does not exist"
    missing = sorted(set(functions) - _defined(source))
    assert not missing, f"group {group}: {path} defines none of {missing}"


def test_a_missing_function_is_caught(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def kept():\n    pass\n\nclass K:\n    def run(self):\n        pass\n", encoding="utf-8")
    assert _defined(module) == {"kept", "K", "K.run"}
    assert {"gone", "K.run"} - _defined(module) == {"gone"}
