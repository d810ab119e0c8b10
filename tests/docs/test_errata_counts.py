"""The errata page states each report's row counts only through substitutions computed from the reports."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import privnoise
from privnoise.reproduce import Report, available, run

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGE = DOCS / "errata.md"

pytest.importorskip("sphinx", reason="the docs extra is not installed")
sys.path.insert(0, str(DOCS / "_ext"))
import privnoise_docs  # noqa: E402

#: The heading of each paper's section on the errata page.
HEADINGS = {
    "farokhi-sandberg": "## Farokhi & Sandberg,",
    "liu-kawano-cao": "## Liu, Kawano & Cao,",
    "koufogiannis": "## Koufogiannis, Han & Pappas,",
    "nageswaran": "## Nageswaran,",
    "farokhi-optimization": "## Farokhi, \"Privacy-preserving",
}
#: A count written by hand: "33 rows", "17 match", "1 erratum", "15 verified claims".
HAND_COUNT = re.compile(r"\b\d+\s+(rows?|match(es)?|errat(a|um)|verified\s+claims?)\b")


@pytest.fixture(scope="module")
def reports() -> dict[str, Report]:
    return {paper: run(paper, None, figures=False) for paper in available()}


def _sections(text: str) -> dict[str, str]:
    starts = sorted((text.index(heading), paper) for paper, heading in HEADINGS.items())
    bounds = [s for s, _ in starts] + [len(text)]
    return {paper: text[start:end] for (start, paper), end in zip(starts, bounds[1:], strict=True)}


def test_every_paper_has_a_heading_and_no_count_is_written_by_hand() -> None:
    assert set(HEADINGS) == set(available())
    text = PAGE.read_text(encoding="utf-8")
    assert not HAND_COUNT.search(text), HAND_COUNT.search(text)
    for paper, section in _sections(text).items():
        mine = "{{ " + privnoise_docs.substitution_name(paper) + " }}"
        assert section.count(mine) == 1, paper
        others = set(re.findall(r"\{\{\s*(\w+)\s*\}\}", section)) - {privnoise_docs.substitution_name(paper)}
        assert not others, (paper, others)
    conf = (DOCS / "conf.py").read_text(encoding="utf-8")
    assert '"substitution"' in conf


def test_the_substitutions_are_the_reports_counts(reports: dict[str, Report]) -> None:
    subs = privnoise_docs.report_substitutions(reports)
    assert set(subs) == {privnoise_docs.substitution_name(p) for p in available()}
    for paper, report in reports.items():
        line = subs[privnoise_docs.substitution_name(paper)]
        c = report.counts()
        numbers = [int(n) for n in re.findall(r"\d+", line)]
        assert numbers == [len(report.rows), c["match"], c["erratum"], c["check"]], (paper, line)
        assert line in report.to_markdown()


def test_the_built_page_shows_the_reports_counts(tmp_path: Path, reports: dict[str, Report]) -> None:
    """A build of the errata page alone with the documentation's extension (the reports run during the build)."""
    source = tmp_path / "src"
    source.mkdir()
    (source / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(DOCS / '_ext')!r})\n"
        "extensions = ['sphinx.ext.autodoc', 'myst_parser', 'privnoise_docs']\n"
        "myst_enable_extensions = ['dollarmath', 'substitution']\nmyst_substitutions = {}\n"
        "exclude_patterns = ['_generated', 'api']\n",
        encoding="utf-8",
    )
    (source / "index.md").write_text(PAGE.read_text(encoding="utf-8"), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "text", "-q", str(source), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        # the build imports the privnoise these tests import
        env={
            "MPLBACKEND": "Agg",
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": str(Path(privnoise.__file__).parents[1]) + os.pathsep + os.environ.get("PYTHONPATH", ""),
            "PRIVNOISE_REPRODUCE_CACHE": os.environ.get("PRIVNOISE_REPRODUCE_CACHE", ""),
        },
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "substitution" not in done.stderr, done.stderr[-3000:]
    page = " ".join((tmp_path / "out" / "index.txt").read_text(encoding="utf-8").split())
    assert "{{" not in page
    for paper, report in reports.items():
        assert report.summary() in page, paper
