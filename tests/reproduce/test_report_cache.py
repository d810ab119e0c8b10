"""The reproduction cache (PRIVNOISE_REPRODUCE_CACHE): a report read back equals the report computed, row for row
and byte for byte in Markdown; a second call computes nothing; one computation, with its figures, serves requests
for the rows alone (captions dropped, as without figures) and for the files (copied to each caller's output);
concurrent callers compute once."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from privnoise.reproduce import Report, Row, run
from privnoise.reproduce._cache import cached_report


def _counting(report: Report) -> tuple[list[Path | None], object]:
    calls: list[Path | None] = []

    def build(output: Path | None, figures: bool) -> Report:
        assert figures  # matplotlib is installed where these tests run
        calls.append(output)
        if output is not None:
            output.mkdir(parents=True, exist_ok=True)
            (output / "figure.png").write_bytes(b"png")
            report.write(output)
        return report

    return calls, build


def _report() -> Report:
    report = Report(title="t", source="s", figures=[("figure.png", "a caption")], notes=["n"])
    report.add(Row("a", "claim", 1.0 / 3.0, float("nan"), "check", "why", "closed form: by hand"))
    report.add(Row("b", "claim", "x + y", 2.5e-300, "match"))
    return report


def test_a_report_read_back_is_the_report_computed(tmp_path: Path) -> None:
    calls, build = _counting(_report())
    first = cached_report(tmp_path / "cache", "paper", tmp_path / "one", True, build)  # type: ignore[arg-type]
    again = cached_report(tmp_path / "cache", "paper", tmp_path / "two", True, build)  # type: ignore[arg-type]
    assert len(calls) == 1
    assert again.to_markdown() == first.to_markdown()
    assert [r.key for r in again.rows] == ["a", "b"] and again.rows[0].printed == 1.0 / 3.0
    assert again.rows[1].computed == 2.5e-300 and again.figures == [("figure.png", "a caption")]
    assert (tmp_path / "two" / "figure.png").read_bytes() == b"png"
    assert (tmp_path / "two" / "report.md").read_text() == (tmp_path / "one" / "report.md").read_text()


def test_one_computation_serves_rows_and_files(tmp_path: Path) -> None:
    calls, build = _counting(_report())
    rows = cached_report(tmp_path / "cache", "p", None, False, build)  # type: ignore[arg-type]
    files = cached_report(tmp_path / "cache", "p", tmp_path / "out", True, build)  # type: ignore[arg-type]
    plain = cached_report(tmp_path / "cache", "p", tmp_path / "plain", False, build)  # type: ignore[arg-type]
    assert len(calls) == 1 and calls[0] is not None  # computed once, with its files
    assert rows.figures == [] and plain.figures == [] and files.figures == [("figure.png", "a caption")]
    assert (tmp_path / "out" / "figure.png").read_bytes() == b"png"
    assert (tmp_path / "plain" / "report.md").is_file() and not (tmp_path / "plain" / "figure.png").exists()
    assert "a caption" not in (tmp_path / "plain" / "report.md").read_text()


def test_concurrent_callers_compute_once(tmp_path: Path) -> None:
    calls, build = _counting(_report())
    threads = [threading.Thread(target=cached_report, args=(tmp_path / "c", "p", None, False, build))
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1


def test_a_real_report_through_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRIVNOISE_REPRODUCE_CACHE", str(tmp_path / "cache"))
    computed = run("nageswaran", None, figures=False)
    read = run("nageswaran", None, figures=False)
    monkeypatch.delenv("PRIVNOISE_REPRODUCE_CACHE")
    fresh = run("nageswaran", None, figures=False)
    assert read.to_markdown() == computed.to_markdown() == fresh.to_markdown()
    assert [(r.key, r.printed, r.computed, r.status) for r in read.rows] == [
        (r.key, r.printed, r.computed, r.status) for r in fresh.rows]
    assert len([p for p in (tmp_path / "cache").glob("nageswaran-*") if p.is_dir()]) == 1
