"""Reproduction reports: one row per checkable claim of a paper (printed value, computed value, status)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Concatenate, Literal, ParamSpec, TypeVar

__all__ = [
    "CACHE_VARIABLE",
    "SECOND_METHODS",
    "SECOND_METHOD_FUNCTIONS",
    "Report",
    "Row",
    "RowBuilder",
    "Status",
    "make_row",
    "method_kind",
    "second_method",
]

Status = Literal["match", "erratum", "check"]

#: The environment variable naming the report cache's directory (:mod:`privnoise.reproduce._cache`).
CACHE_VARIABLE = "PRIVNOISE_REPRODUCE_CACHE"

#: The kinds of second method a ``check`` row may name, each computed independently of the privnoise code under
#: test (in the report module itself, or with numpy and scipy directly). A row's ``method`` starts with one of
#: these kinds, then a colon and what was computed, e.g. "quadrature: scipy.integrate.quad of g′²/g".
SECOND_METHODS: dict[str, str] = {
    "closed form": "a formula evaluated by hand in the report module (the paper's, or one derived there)",
    "direct evaluation": "the quantity's definition evaluated term by term with numpy",
    "dense matrix": "a direct dense linear-algebra computation with numpy or scipy.linalg",
    "quadrature": "numerical integration (scipy.integrate, or a midpoint rule written in the report)",
    "Monte Carlo": "sampling with numpy's generator at a fixed seed, with a stated tolerance",
    "finite differences": "central differences of a function written out in the report module",
    "optimisation": "scipy.optimize over an explicit parametrisation written in the report module",
    "ODE integration": "scipy.integrate.solve_ivp of the differential equation written in the report module",
    "root finding": "scipy.optimize root finding of an equation written in the report module",
    "statistical test": "a goodness-of-fit test against a law of scipy.stats",
    "discretisation": "a different discretisation of the same problem (another mesh, basis or formulation)",
    "literature": "a value published elsewhere, with its source",
}

#: The functions of the report modules that compute a second method, by qualified name (filled by
#: ``second_method`` as the modules are imported). The tests read their source: they may use numpy, scipy and
#: the reproduction package, never the rest of privnoise.
SECOND_METHOD_FUNCTIONS: dict[str, Callable[..., Any]] = {}

_F = TypeVar("_F", bound=Callable[..., Any])
_P = ParamSpec("_P")


def second_method(function: _F) -> _F:
    """Register ``function`` as a second method (unchanged), so that the tests can check it uses no privnoise code
    outside the reproduction package."""
    SECOND_METHOD_FUNCTIONS[f"{function.__module__}.{function.__qualname__}"] = function
    return function


@dataclass(frozen=True, slots=True)
class Row:
    """One claim of a paper.

    Attributes
    ----------
    key : str
        A stable identifier (used by the tests), e.g. "cor2-quality-example1".
    claim : str
        What the paper states, in a few words, with its location ("Corollary 2(ii)").
    printed : float or str
        The value the paper prints (or the printed formula evaluated).
    computed : float or str
        What privnoise computes.
    status : {"match", "erratum", "check"}
        "match" when they agree; "erratum" when the printed value is wrong (``reason`` says why);
        "check" for a claim without a printed number that privnoise verified numerically.
    reason : str
        One line: what the comparison shows, or why the paper is wrong (the erratum's corrected form).
    method : str
        The independent second method of a ``check`` row: one kind of ``SECOND_METHODS``, a colon, and what
        was computed (empty for rows whose printed column is the paper's own text).

    A row carries no tolerance: whoever compares printed and computed (the tests) states its own, so that no
    change in the reporting code can loosen a check.
    """

    key: str
    claim: str
    printed: float | str
    computed: float | str
    status: Status
    reason: str = ""
    method: str = ""

    @property
    def method_kind(self) -> str:
        """The kind of second method (the text before the first colon of ``method``)."""
        return method_kind(self.method)

    def agrees(self, *, rtol: float, abs_tol: float = 1e-12) -> bool:
        """Whether printed and computed agree within the caller's ``rtol`` (numbers), or are equal (text)."""
        if isinstance(self.printed, str) or isinstance(self.computed, str):
            return str(self.printed) == str(self.computed)
        return math.isclose(float(self.printed), float(self.computed), rel_tol=rtol, abs_tol=abs_tol)


def method_kind(method: str) -> str:
    """The kind a second method's description names: the text before its first colon ("" when it names none).

    >>> method_kind("quadrature: scipy.integrate.quad of g′²/g")
    'quadrature'
    """
    kind, colon, _ = method.partition(":")
    return kind.strip() if colon else ""


def _cell(text: str) -> str:
    """Escape a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def _fmt(value: float | str) -> str:
    if isinstance(value, str):
        return _cell(value)
    return f"{value:.8g}"


@dataclass
class Report:
    """A reproduction report: rows plus figures, written as Markdown next to its PNGs."""

    title: str
    source: str
    rows: list[Row] = field(default_factory=list)
    figures: list[tuple[str, str]] = field(default_factory=list)  # (file name, caption)
    notes: list[str] = field(default_factory=list)

    def add(self, row: Row) -> None:
        if any(r.key == row.key for r in self.rows):
            raise ValueError(f"duplicate row key {row.key!r}")
        self.rows.append(row)

    def row(self, key: str) -> Row:
        for r in self.rows:
            if r.key == key:
                return r
        raise KeyError(key)

    def counts(self) -> dict[str, int]:
        out = {"match": 0, "erratum": 0, "check": 0}
        for r in self.rows:
            out[r.status] += 1
        return out

    def summary(self) -> str:
        """The counts of the rows in one sentence, e.g. "39 rows: 18 match, 3 errata, 18 verified claims ..."."""
        c = self.counts()
        errata = "erratum" if c["erratum"] == 1 else "errata"
        return (
            f"{len(self.rows)} rows: {c['match']} match, {c['erratum']} {errata}, {c['check']} verified claims "
            "without a printed number."
        )

    def to_markdown(self) -> str:
        lines = [
            f"# {self.title}",
            "",
            f"Source: {self.source}",
            "",
            self.summary(),
            "",
            "| key | claim | printed | computed | status | reason | second method |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in self.rows:
            lines.append(
                f"| `{r.key}` | {_cell(r.claim)} | {_fmt(r.printed)} | {_fmt(r.computed)} | {r.status} | "
                f"{_cell(r.reason)} | {_cell(r.method)} |"
            )
        if self.notes:
            lines += ["", "## Notes", ""] + [f"- {n}" for n in self.notes]
        if self.figures:
            lines += ["", "## Figures", ""]
            for name, caption in self.figures:
                lines += [f"![{caption}]({name})", "", f"*{caption}*", ""]
        return "\n".join(lines) + "\n"

    def write(self, directory: Path) -> Path:
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / "report.md"
        path.write_text(self.to_markdown(), encoding="utf-8")
        return path


def make_row(
    key: str,
    claim: str,
    printed: float | str,
    computed: float | str,
    status: Status,
    reason: str = "",
    method: str = "",
) -> Row:
    """A :class:`Row` from its fields, with numpy numbers turned into floats."""
    return Row(
        key=key,
        claim=claim,
        printed=printed if isinstance(printed, str) else float(printed),
        computed=computed if isinstance(computed, str) else float(computed),
        status=status,
        reason=reason,
        method=method,
    )


def _adding_to_report(build: Callable[_P, Row]) -> Callable[Concatenate[RowBuilder, _P], None]:
    """A method of :class:`RowBuilder` that adds ``build(...)`` to the report, with ``build``'s arguments."""

    def add(builder: RowBuilder, /, *args: _P.args, **kwargs: _P.kwargs) -> None:
        """Add the row that ``build`` makes of these arguments to the report."""
        builder.report.add(build(*args, **kwargs))

    return add


@dataclass
class RowBuilder:
    """Adds rows to a report, turning numpy numbers into floats: ``add`` takes the arguments of :func:`make_row`."""

    report: Report

    add = _adding_to_report(make_row)
