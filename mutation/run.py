"""Mutation testing of privnoise's privacy-critical modules with mutmut 3 (``make mutation``).

For each group of ``mutation/modules.toml`` (modules and the tests selected for them):

1. the source tree (``src/``, ``tests/``, ``pyproject.toml``) is copied into a fresh temporary directory, so the
   checkout is never touched, and a ``[tool.mutmut]`` section naming the group's modules and tests is added to the
   copy's ``pyproject.toml``;
2. mutmut generates the mutants; before anything runs, mutants outside the functions a module lists, and mutants
   whose only effect is on the text of an error message (anything inside a ``raise`` statement, the parameter and
   owner names passed to the validation helpers, ``what=``/``name=``/``owner=`` labels, log messages) are marked
   skipped: they cannot change a released value, a guarantee or a budget, and are reported as "text";
3. ``mutmut run`` runs every other mutant against the tests that reach its function (mutmut's per-function test
   selection, within the group's tests), in forked workers;
4. survivors are matched against ``mutation/equivalents.toml`` (accepted equivalent mutants, keyed by module and
   the stripped text of the original and mutated lines, so the keys survive line shifts), and the score
   killed / (total − text − equivalents) is printed per module with its target.

The exit status is 1 when a module misses its target or a group cannot run. ``--only NAME`` runs some groups,
``--keep`` keeps the temporary directories (``mutmut browse`` works there), ``--jobs`` sets mutmut's workers.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CONFIG = HERE / "modules.toml"
EQUIVALENTS = HERE / "equivalents.toml"
CATEGORIES = "privnoise-categories.json"

#: Helpers and the positions of their arguments that only name things in an error message (the parameter and
#: its owner for the validation helpers).
NAMING_HELPERS = {
    "as_finite_array": (1, 2),
    "as_matrix": (1, 2),
    "check_finite": (1, 2),
    "check_grid_exponent": (2,),
    "check_in_range": (1, 2),
    "check_positive": (1, 2),
    "check_positive_int": (1, 2),
    "check_probability": (1, 2),
    "exact_rational": (1, 2),
    "sample_shape": (1,),
    "_require_rational": (0,),
    "_points": (1,),
    "_dim_shape": (1,),
    "_check_fit": (2,),
    "_information": (1,),
    "_box": (1,),
    "_require_separable": (1,),
}
#: Local variables that hold an error message's owner.
OWNER_VARIABLES = {"owner"}
#: Keyword arguments that only label an error message (dropped before comparing, so removing one is text too).
LABEL_KEYWORDS = {"name", "owner", "what"}
#: Logging methods: their arguments are text.
LOG_METHODS = {"debug", "info", "warning", "error", "exception", "critical"}
#: mutmut exit codes that count as detected (killed, timeout, segfault, caught by a type check).
DETECTED = {"killed", "timeout", "segfault", "caught by type check"}
SKIPPED_EXIT_CODE = 34


# -- the configuration ---------------------------------------------------------------------------------------
@dataclass
class Module:
    path: str
    target: float
    functions: list[str] = field(default_factory=list)
    text_functions: list[str] = field(default_factory=list)


@dataclass
class Group:
    name: str
    tests: list[str]
    deselect: list[str]
    modules: list[Module]


def load_groups() -> list[Group]:
    data = tomllib.loads(CONFIG.read_text())
    default = float(data.get("default_target", 90))
    groups = []
    for g in data["group"]:
        modules = [
            Module(
                m["path"],
                float(m.get("target", g.get("target", default))),
                list(m.get("functions", [])),
                list(m.get("text_functions", [])),
            )
            for m in g["module"]
        ]
        groups.append(Group(g["name"], list(g["tests"]), list(g.get("deselect", [])), modules))
    return groups


def load_equivalents() -> list[dict[str, str]]:
    if not EQUIVALENTS.exists():
        return []
    entries = tomllib.loads(EQUIVALENTS.read_text()).get("equivalent", [])
    for e in entries:
        missing = {"module", "original", "mutant", "reason"} - set(e)
        if missing:
            raise SystemExit(f"{EQUIVALENTS.name}: an entry lacks {sorted(missing)}: {e}")
    return entries


# -- classification (runs inside the temporary copy, with mutmut importable) --------------------------------
class _TextOnly(ast.NodeTransformer):
    """Replace what only reaches an error or log message by a placeholder."""

    PLACEHOLDER = ast.Constant("<text>")

    def visit_Raise(self, node: ast.Raise) -> ast.AST:
        if isinstance(node.exc, ast.Call):
            node.exc = ast.Call(func=node.exc.func, args=[], keywords=[])
        return node

    def visit_arguments(self, node: ast.arguments) -> ast.AST:
        labels = OWNER_VARIABLES | LABEL_KEYWORDS
        positional = [*node.posonlyargs, *node.args]
        for arg, default in zip(
            positional[len(positional) - len(node.defaults) :], node.defaults, strict=True
        ):
            if arg.arg in labels:
                node.defaults[node.defaults.index(default)] = self.PLACEHOLDER
        node.kw_defaults = [
            self.PLACEHOLDER if d is not None and a.arg in labels else d
            for a, d in zip(node.kwonlyargs, node.kw_defaults, strict=True)
        ]
        return self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> ast.AST:
        if all(isinstance(t, ast.Name) and t.id in OWNER_VARIABLES for t in node.targets):
            node.value = self.PLACEHOLDER
            return node
        return self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        callee = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        if callee in LOG_METHODS and isinstance(node.func, ast.Attribute):
            node.args, node.keywords = [], []
            return node
        labels = NAMING_HELPERS.get(callee, ())
        node.args = [self.PLACEHOLDER if i in labels else a for i, a in enumerate(node.args)]
        node.keywords = [k for k in node.keywords if k.arg not in LABEL_KEYWORDS]
        return node


def _text_only(original: str, mutant: str) -> bool:
    def norm(code: str) -> str:
        return ast.dump(_TextOnly().visit(ast.parse(code)), annotate_fields=False)

    try:
        return norm(original) == norm(mutant)
    except SyntaxError:
        return False


def _function_sources(key: str, path: str) -> tuple[str, str]:
    import libcst as cst
    from mutmut.mutation.diff_apply import (
        read_functions_from_index,
        read_mutant_function,
        read_mutants_module,
        read_original_function,
    )

    functions = read_functions_from_index(key, path)
    if functions is None:
        module = read_mutants_module(path)
        functions = (read_original_function(module, key), read_mutant_function(module, key))
    return tuple(cst.Module([f]).code.strip() for f in functions)  # type: ignore[return-value]


def _qualified_function(key: str) -> str:
    from mutmut.utils.format_utils import orig_function_and_class_names_from_key

    function, cls = orig_function_and_class_names_from_key(key)
    return f"{cls}.{function}" if cls else function


def bridge_generate(spec: dict[str, Any]) -> None:
    """Generate the mutants and mark the out-of-scope and text-only ones skipped (cwd: the copy)."""
    import mutmut.__main__ as mutmut_main
    from mutmut.mutation.data import SourceFileMutationData
    from mutmut.utils.file_utils import copy_also_copy_files, copy_src_dir

    Path("mutants").mkdir(exist_ok=True)
    copy_src_dir()
    copy_also_copy_files()
    mutmut_main.create_mutants(int(spec["jobs"]))
    categories: dict[str, str] = {}
    for module in spec["modules"]:
        data = SourceFileMutationData(path=module["path"])
        data.load()
        if not data.exit_code_by_key:
            raise SystemExit(f"mutmut generated no mutants for {module['path']}")
        scope, text_functions = set(module["functions"]), set(module["text_functions"])
        for key in data.exit_code_by_key:
            function = _qualified_function(key)
            if scope and function not in scope:
                categories[key] = "out of scope"
            elif function in text_functions or _text_only(*_function_sources(key, module["path"])):
                categories[key] = "text"
            else:
                continue
            data.exit_code_by_key[key] = SKIPPED_EXIT_CODE
        data.save()
    Path("mutants", CATEGORIES).write_text(json.dumps(categories))


def bridge_collect(spec: dict[str, Any]) -> None:
    """Print the outcome of every mutant as JSON (cwd: the copy)."""
    import difflib

    from mutmut.mutation.data import SourceFileMutationData
    from mutmut.stats import status_by_exit_code

    categories = json.loads(Path("mutants", CATEGORIES).read_text())
    out: dict[str, list[dict[str, Any]]] = {}
    for module in spec["modules"]:
        data = SourceFileMutationData(path=module["path"])
        data.load()
        rows = []
        for key, code in data.exit_code_by_key.items():
            status = categories.get(key) or status_by_exit_code[code]
            row: dict[str, Any] = {"key": key, "status": status, "function": _qualified_function(key)}
            if status not in DETECTED and key not in categories:
                original, mutant = _function_sources(key, module["path"])
                diff = list(difflib.ndiff(original.splitlines(), mutant.splitlines()))
                row["original"] = "\n".join(line[2:].strip() for line in diff if line.startswith("- "))
                row["mutant"] = "\n".join(line[2:].strip() for line in diff if line.startswith("+ "))
            rows.append(row)
        out[module["path"]] = rows
    print(json.dumps(out))


# -- one group ------------------------------------------------------------------------------------------------
def _mutmut_section(group: Group) -> str:
    selection = list(group.tests)
    for node in group.deselect:
        selection += ["--deselect", node]
    section = {
        "source_paths": ["src"],
        "only_mutate": [m.path for m in group.modules],
        "pytest_add_cli_args_test_selection": selection,
        # the two exception-catching plugins run gc.collect() at every session end: most of a mutant's time
        "pytest_add_cli_args": [
            "-p",
            "no:cacheprovider",
            "-p",
            "no:unraisableexception",
            "-p",
            "no:threadexception",
            "--hypothesis-seed=0",
        ],
        "use_git_change_detection": False,
    }
    lines = ["", "[tool.mutmut]"]
    for key, value in section.items():
        lines.append(f"{key} = {json.dumps(value)}")
    return "\n".join(lines) + "\n"


def _prepare(group: Group) -> Path:
    work = Path(tempfile.mkdtemp(prefix=f"privnoise-mutation-{group.name}-"))
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis", ".pytest_cache", "mutants")
    for name in ("src", "tests"):
        shutil.copytree(ROOT / name, work / name, ignore=ignore)
    (work / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text() + _mutmut_section(group))
    return work


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"  # one thread per mutant worker: the workers share the cores
    env["PYTHONHASHSEED"] = "0"
    env.pop("PYTHONPATH", None)
    return env


def _bridge(work: Path, action: str, spec: dict[str, Any], log: Any) -> str:
    result = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), action, json.dumps(spec)],
        cwd=work,
        env=_environment(),
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"{action} failed (exit {result.returncode})")
    return result.stdout


def run_group(group: Group, jobs: int, keep: bool) -> tuple[dict[str, list[dict[str, Any]]], float, Path]:
    start = time.monotonic()
    work = _prepare(group)
    spec = {
        "jobs": jobs,
        "modules": [
            {"path": m.path, "functions": m.functions, "text_functions": m.text_functions}
            for m in group.modules
        ],
    }
    log_path = work / "mutation.log"
    try:
        with log_path.open("w") as log:
            _bridge(work, "_generate", spec, log)
            mutmut = Path(sys.executable).with_name("mutmut")
            run = subprocess.run(
                [str(mutmut), "run", "--max-children", str(jobs)],
                cwd=work,
                env=_environment(),
                stdout=log,
                stderr=subprocess.STDOUT,
                check=False,
            )
            if run.returncode != 0:
                raise RuntimeError(f"mutmut run failed (exit {run.returncode})")
            results = json.loads(_bridge(work, "_collect", spec, log))
    except RuntimeError as exc:
        tail = log_path.read_text(errors="replace")[-3000:]
        print(f"\n[{group.name}] {exc}; the end of {log_path}:\n{tail}", file=sys.stderr)
        return {}, time.monotonic() - start, work
    finally:
        if not keep:
            shutil.rmtree(work / "mutants", ignore_errors=True)
    if not keep:
        shutil.rmtree(work, ignore_errors=True)
    return results, time.monotonic() - start, work


# -- the score ------------------------------------------------------------------------------------------------
def _matches(entry: dict[str, str], module: str, row: dict[str, Any]) -> bool:
    return (
        module.endswith(entry["module"])
        and entry.get("function", row["function"]) == row["function"]
        and entry["original"].strip() == row.get("original", "")
        and entry["mutant"].strip() == row.get("mutant", "")
    )


def score(
    module: Module, rows: list[dict[str, Any]], equivalents: list[dict[str, str]], used: set[int]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    counts = {"total": 0, "killed": 0, "text": 0, "equivalent": 0, "survived": 0}
    survivors = []
    for row in rows:
        if row["status"] == "out of scope":
            continue
        counts["total"] += 1
        if row["status"] == "text":
            counts["text"] += 1
        elif row["status"] in DETECTED:
            counts["killed"] += 1
        else:
            hit = next((i for i, e in enumerate(equivalents) if _matches(e, module.path, row)), None)
            if hit is not None:
                used.add(hit)
                counts["equivalent"] += 1
            else:
                counts["survived"] += 1
                survivors.append(row)
    scored = counts["total"] - counts["text"] - counts["equivalent"]
    counts["scored"] = scored
    counts["score"] = 100.0 * counts["killed"] / scored if scored else 100.0
    return counts, survivors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=None, help="run only these groups")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="mutmut workers")
    parser.add_argument("--keep", action="store_true", help="keep the temporary copies")
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    args = parser.parse_args(argv)

    groups = load_groups()
    if args.only:
        unknown = set(args.only) - {g.name for g in groups}
        if unknown:
            parser.error(f"unknown group(s) {sorted(unknown)}; known: {[g.name for g in groups]}")
        groups = [g for g in groups if g.name in args.only]
    equivalents = load_equivalents()
    used: set[int] = set()
    table = []
    failed = False
    started = time.monotonic()
    for group in groups:
        print(f"[{group.name}] mutating {', '.join(m.path for m in group.modules)} ...", flush=True)
        results, elapsed, work = run_group(group, args.jobs, args.keep)
        print(f"[{group.name}] {elapsed:.0f} s" + (f" (kept in {work})" if args.keep else ""), flush=True)
        if not results:
            failed = True
            continue
        for module in group.modules:
            counts, survivors = score(module, results[module.path], equivalents, used)
            ok = counts["score"] >= module.target
            failed |= not ok
            table.append((group.name, module, counts, ok, survivors))
            for row in survivors:
                print(f"  survived [{row['status']}] {module.path}::{row['function']}")
                print(f"    - {row.get('original', '')!s}".replace("\n", "\n      "))
                print(f"    + {row.get('mutant', '')!s}".replace("\n", "\n      "))
    total = time.monotonic() - started

    print()
    header = f"{'group':<13} {'module':<40} {'killed/scored':>14} {'score':>7} {'target':>6} {'equiv':>5} {'text':>5}"
    print(header)
    print("-" * len(header))
    for name, module, counts, ok, _ in table:
        ratio = f"{counts['killed']}/{counts['scored']}"
        print(
            f"{name:<13} {module.path.removeprefix('src/privnoise/'):<40} {ratio:>14} {counts['score']:>6.1f}% "
            f"{module.target:>5.0f}% {counts['equivalent']:>5} {counts['text']:>5} {'ok' if ok else 'BELOW'}"
        )
    print(f"\ntotal time {total / 60:.1f} min with {args.jobs} worker(s)")
    if not args.only:
        stale = [e for i, e in enumerate(equivalents) if i not in used]
        for e in stale:
            print(f"note: accepted equivalent not seen (stale?): {e['module']}: {e['original']!r}")
    if args.json:
        args.json.write_text(
            json.dumps(
                [
                    {"group": n, "module": m.path, "target": m.target, **c, "survivors": s}
                    for n, m, c, _, s in table
                ],
                indent=2,
            )
        )
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] in ("_generate", "_collect"):
        sys.path.insert(0, str(Path.cwd()))
        (bridge_generate if sys.argv[1] == "_generate" else bridge_collect)(json.loads(sys.argv[2]))
    else:
        sys.exit(main())
