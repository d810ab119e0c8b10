"""Repository files and package metadata: license, changelog, security policy and its references, extras."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

import privnoise
from privnoise import _optional

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT = PYPROJECT["project"]


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[\[<>=!~; ]", r, maxsplit=1)[0].lower() for r in requirements}


def test_license_file_matches_the_metadata() -> None:
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License") and "WITHOUT WARRANTY OF ANY KIND" in text
    assert PROJECT["license"] == "MIT" and PROJECT["license-files"] == ["LICENSE"]


def test_version_is_the_one_of_the_metadata() -> None:
    assert privnoise.__version__ == PROJECT["version"]


def test_changelog_keeps_a_changelog() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "keepachangelog.com" in text
    assert re.search(r"^## \[Unreleased\]$", text, re.M)
    assert re.search(rf"^## \[{re.escape(PROJECT['version'])}\] - \d{{4}}-\d{{2}}-\d{{2}}$", text, re.M)
    unreleased = text.split("## [Unreleased]", 1)[1].split("\n## [", 1)[0]
    for section in ("### Added", "### Changed"):
        assert section in unreleased


def _security_requirements() -> set[int]:
    text = (ROOT / "SECURITY.md").read_text(encoding="utf-8")
    section = text.split("## Requirements", 1)[1].split("\n## ", 1)[0]
    return {int(n) for n in re.findall(r"^(\d+)\. ", section, re.M)}


def test_security_policy_has_threat_model_guarantees_reporting_and_23_requirements() -> None:
    text = (ROOT / "SECURITY.md").read_text(encoding="utf-8")
    for heading in ("## Reporting a vulnerability", "## Threat model", "## What the guarantees promise"):
        assert heading in text
    assert _security_requirements() == set(range(1, 24))


def _references() -> list[tuple[str, list[int]]]:
    """(where, requirement numbers) of every mention of SECURITY.md in src/ and tests/."""
    found = []
    for path in [*(ROOT / "src").rglob("*.py"), *(ROOT / "tests").rglob("*.py")]:
        if path.name == "test_packaging.py":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if "SECURITY.md" not in line or '"SECURITY.md"' in line:
                continue  # no mention, or the file name as a string (copied, read), not a reference
            tail = line.split("SECURITY.md", 1)[1]
            numbers: list[int] = []
            for a, b in re.findall(r"(\d+)(?:\s*[–-]\s*(\d+))?", tail.split(")")[0].split(":")[0]):
                numbers += list(range(int(a), int(b or a) + 1))
            found.append((f"{path.relative_to(ROOT)}:{number}", numbers))
    return found


def test_every_security_reference_points_at_a_requirement_of_the_policy() -> None:
    references = _references()
    assert len(references) >= 10
    requirements = _security_requirements()
    for where, numbers in references:
        assert numbers, f"{where}: name the requirement(s) of SECURITY.md"
        assert set(numbers) <= requirements, where


def test_the_core_is_slim_and_every_extra_is_declared() -> None:
    # mpmath: the Gaussian privacy profile is evaluated in multiple precision, so calibrations stay on the safe side;
    # lark: the condition language of Session.where (and of the server's queries); sqlglot: private SQL
    assert _names(PROJECT["dependencies"]) == {"numpy", "scipy", "mpmath", "randomgen", "typer", "rich", "lark",
                                               "sqlglot"}
    extras = PROJECT["optional-dependencies"]
    for extra in ("dp", "plots", "data", "server", "postgres", "dask", "spark", "ml", "fem", "docs", "all", "test"):
        assert extra in extras, extra
    assert extras["all"] == ["privnoise[dp,plots,data,server,postgres,dask,spark,ml,fem]"]
    distributions = {
        "dp_accounting": "dp-accounting",
        "sklearn": "scikit-learn",
        "skfem": "scikit-fem",
    }
    for module, extra in _optional.EXTRAS.items():
        assert distributions.get(module, module) in _names(extras[extra]), (module, extra)
    assert "pyarrow" in _names(extras["server"])  # Parquet datasets


@pytest.mark.parametrize("requirement", [r for rs in PROJECT["optional-dependencies"].values() for r in rs])
def test_every_dependency_has_a_lower_bound(requirement: str) -> None:
    assert requirement.startswith("privnoise[") or ">=" in requirement


def test_make_installs_every_extra_and_ci_runs_make_test() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "EXTRAS := all,docs,test" in makefile and '-e ".[$(EXTRAS)]"' in makefile
    assert (ROOT / ".ci" / "run").read_text(encoding="utf-8").rstrip().endswith("make test")
