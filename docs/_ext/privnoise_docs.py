"""Sphinx extension of the privnoise documentation.

* **API pages**: one page per public module of privnoise (the modules ``pn.<name>`` exposes), generated at build
  time into ``api/privnoise.<module>.md`` from the package itself, so a new module gets its page and a moved
  function stays documented where its package exports it. A name a package exports from another package
  (``privnoise.dp.DiscreteLaplace``, defined in :mod:`privnoise.mechanisms`) is documented on that package's page
  only, where references to either path lead.
* **Reproductions**: each paper's reproduction report and figures, computed at build time by
  :func:`privnoise.reproduce.run` into ``_generated/reproduce/<paper>/``, included by the tutorials; each
  report's row counts become the MyST substitution ``counts_<paper>`` (``{{ counts_koufogiannis }}``), the only
  way the errata page states them.
* **Docstrings**: privnoise's docstrings write math in plain text, where ``|x|`` would be a reST substitution;
  bars are escaped and module-level section headings become rubrics before numpydoc and docutils see them.
* **References**: a reference that names an object by a path other than the one it is documented under
  (``privnoise.dp.laplace.laplace_for_epsilon`` for ``privnoise.dp.laplace_for_epsilon``, or a short name
  such as ``Laplace``) resolves to that object when the match is unique; a submodule resolves to the page of the
  package that documents it. References to numpy, scipy and other libraries render as code without a link. Any
  other unresolved reference stays a warning, and the build treats warnings as errors.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import shutil
import time
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging

log = logging.getLogger(__name__)

#: Libraries whose objects the docstrings may name without the documentation linking them.
EXTERNAL = (
    "abc",
    "numpy",
    "scipy",
    "dp_accounting",
    "httpx",
    "fastapi",
    "sqlalchemy",
    "matplotlib",
    "pandas",
    "pyarrow",
    "polars",
    "dask",
)

_SECTION = re.compile(r"^(?P<title>[A-Z][A-Za-z ]+)\n(?P<rule>-{3,})$", re.MULTILINE)


# -- API pages -----------------------------------------------------------------------------------------------


def public_modules() -> list[str]:
    """The modules of the API reference: every ``pn.<module>``, plus release, reproduce and client."""
    import privnoise

    names = {name for name in privnoise._MODULES}
    names |= {"release", "reproduce", "client"}
    return sorted(f"privnoise.{name}" for name in names)


def exported_from_elsewhere(module: str) -> list[str]:
    """The names ``module`` exports from another public package that exports them too (its ``_EXPORTS`` entries
    written as a relative import, ``"..mechanisms.discrete"``): that package's page documents them, so each object
    is described once."""
    exports: dict[str, str] = getattr(importlib.import_module(module), "_EXPORTS", {})
    public = public_modules()
    out = []
    for name, where in exports.items():
        if not where.startswith(".."):
            continue
        home = importlib.util.resolve_name(where, module).rpartition(".")[0]
        if home in public and name in getattr(importlib.import_module(home), "__all__", ()):
            out.append(name)
    return sorted(out)


def _api_page(module: str) -> str:
    title = f"`{module}`"
    elsewhere = exported_from_elsewhere(module)
    exclude = f"   :exclude-members: {', '.join(elsewhere)}\n" if elsewhere else ""
    return (
        f"# {title}\n\n```{{eval-rst}}\n.. automodule:: {module}\n   :members:\n   :imported-members:\n"
        f"{exclude}```\n"
    )


def write_api_pages(srcdir: Path) -> None:
    target = srcdir / "api"
    target.mkdir(exist_ok=True)
    for stale in target.glob("privnoise.*.md"):
        stale.unlink()
    for module in public_modules():
        (target / f"{module}.md").write_text(_api_page(module), encoding="utf-8")


# -- reproductions -------------------------------------------------------------------------------------------


def substitution_name(paper: str) -> str:
    """The MyST substitution that holds the row counts of ``paper``'s report, e.g. ``counts_liu_kawano_cao``."""
    return "counts_" + paper.replace("-", "_")


def report_substitutions(reports: dict[str, Any]) -> dict[str, str]:
    """``counts_<paper>`` → the report's own count sentence (:meth:`privnoise.reproduce.Report.summary`).

    The errata page states the counts only through these substitutions, so they are the reports' counts at build
    time, never numbers written by hand (``tests/docs/test_errata_counts.py``).
    """
    return {substitution_name(paper): report.summary() for paper, report in reports.items()}


def write_reproductions(srcdir: Path) -> dict[str, Any]:
    """Run every paper's reproduction into ``_generated/reproduce/<paper>/``; the reports by paper."""
    from privnoise import reproduce

    target = srcdir / "_generated" / "reproduce"
    if target.exists():
        shutil.rmtree(target)
    reports: dict[str, Any] = {}
    for paper in reproduce.available():
        start = time.perf_counter()
        reports[paper] = reproduce.run(paper, target / paper)
        log.info("reproduced %s in %.1f s", paper, time.perf_counter() - start)
    return reports


def _generate(app: Sphinx) -> None:
    srcdir = Path(app.srcdir)
    write_api_pages(srcdir)
    if app.config.privnoise_reproductions:
        reports = write_reproductions(srcdir)
        substitutions = dict(getattr(app.config, "myst_substitutions", None) or {})
        substitutions.update(report_substitutions(reports))
        app.config.myst_substitutions = substitutions


# -- docstrings ----------------------------------------------------------------------------------------------


def _escape_bars(line: str) -> str:
    stripped = line.lstrip()
    if stripped.startswith(("|", "+")):  # a grid table or a line block: leave it
        return line
    return re.sub(r"(?<!\\)\|", r"\\|", line)


def process_docstring(app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    """Escape ``|`` (absolute values, norms) and turn module section headings into rubrics."""
    text = "\n".join(_escape_bars(line) for line in lines)
    if what == "module":
        text = _SECTION.sub(lambda m: f".. rubric:: {m.group('title')}\n", text)
    lines[:] = text.split("\n")


# -- references ----------------------------------------------------------------------------------------------


def _resolve_object(path: str) -> Any:
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        return obj
    return None


def _documented(env: Any) -> dict[str, tuple[str, str, str]]:
    """Python objects documented so far: full name → (docname, node id, object type)."""
    domain = env.get_domain("py")
    return {name: (entry.docname, entry.node_id, entry.objtype) for name, entry in domain.objects.items()}


def _module_page(objects: dict[str, tuple[str, str, str]], path: str) -> str | None:
    """The nearest documented module that ``path`` (a module or an object in one) lives under."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        name = ".".join(parts[:cut])
        if name in objects and objects[name][2] == "module":
            return name
    return None


def _candidates(objects: dict[str, tuple[str, str, str]], node: Any, target: str) -> list[str]:
    """Documented names that ``target`` may mean, best first (see the module docstring)."""
    module = node.get("py:module") or ""
    paths = [target] + [f"{module}.{target}"] * bool(module)
    if node["reftype"] == "mod":
        for path in paths:
            if _resolve_object(path) is not None:
                page = _module_page(objects, path)
                if page is not None:
                    return [page]
        return []
    for path in paths:  # the same object, documented under another (public) path
        obj = _resolve_object(path) if "." in path else None
        if obj is None or isinstance(obj, int | float | str):
            continue
        same = [
            n
            for n in objects
            if n.rsplit(".", 1)[-1] == path.rsplit(".", 1)[-1] and _resolve_object(n) is obj
        ]
        if same:
            return same
    suffix = [n for n in objects if n.endswith("." + target) and n.split(".")[0] == "privnoise"]
    if suffix:
        return suffix
    for path in paths:  # an undocumented constant of a documented module: link its module
        if _resolve_object(path) is not None and "." in path:
            page = _module_page(objects, path.rsplit(".", 1)[0])
            if page is not None:
                return [page]
    return []


def missing_reference(app: Sphinx, env: Any, node: Any, contnode: nodes.Element) -> nodes.Element | None:
    if node.get("refdomain") != "py":
        return None
    target: str = node["reftarget"].lstrip("~.")
    if target.split(".")[0] in EXTERNAL or any(part.startswith("_") for part in target.split(".")):
        return contnode  # another library's object or a private class: shown as code, not linked
    objects = _documented(env)
    found = {objects[name][:2]: name for name in _candidates(objects, node, target)}
    if len(found) != 1:
        return None  # unknown or ambiguous: Sphinx warns
    (docname, node_id), name = next(iter(found.items()))
    from sphinx.util.nodes import make_refnode

    return make_refnode(app.builder, node["refdoc"], docname, node_id, contnode, name)


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value(
        "privnoise_reproductions", True, "env"
    )  # off only in the test of the extension itself
    # before myst_parser reads its configuration (builder-inited too), so that it sees the counts_* substitutions
    app.connect("builder-inited", _generate, priority=400)
    app.connect("autodoc-process-docstring", process_docstring)
    app.connect("missing-reference", missing_reference)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
