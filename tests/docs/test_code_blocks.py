"""Every code block of the README and of the documentation site runs (see :mod:`tests.docs.codeblocks`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .codeblocks import ROOT, Block, blocks, documents, run_document


def _spark_missing() -> str | None:
    """Why the Spark guide's blocks cannot run here (None: they can)."""
    import importlib.util
    import os
    import shutil

    if importlib.util.find_spec("pyspark") is None:
        return "pyspark is not installed (the spark extra)"
    home = os.environ.get("JAVA_HOME")
    if shutil.which("java") is None and not (home and Path(home, "bin", "java").exists()):
        return "no Java runtime (scripts/ensure-java.sh)"
    return None


def _document(path: Path) -> object:
    """A page as a test case; the Spark guide runs with the Spark tests (one Spark session per worker)."""
    if path.name != "spark.md":
        return path
    reason = _spark_missing()
    return pytest.param(path, marks=[pytest.mark.xdist_group("spark"),
                                     pytest.mark.skipif(reason is not None, reason=reason or "")])


@pytest.mark.parametrize("path", [_document(p) for p in documents()], ids=lambda p: str(p.relative_to(ROOT)))
def test_code_blocks_run(path: Path, tmp_path: Path) -> None:
    found = blocks(path)
    ran = run_document(path, tmp_path)
    expected = sum(1 for b in found if b.skip is None and b.language != "text")
    assert ran == expected


def test_skips_are_few_and_give_a_reason() -> None:
    skipped = [b for p in documents() for b in blocks(p) if b.skip is not None]
    assert all(b.skip for b in skipped)
    # the build targets, the install line, the blocks that need a running server, a Dask or a Spark cluster
    assert len(skipped) <= 13, [b.where for b in skipped]


def test_the_collector_finds_markers_and_refuses_unknown_languages(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- docs-test: file data/x.toml -->\n```toml\na = 1\n```\n\n<!-- docs-test: skip no server -->\n"
        "```sh\nexit 1\n```\n\n```python\nimport tomllib\nassert tomllib.load(open('data/x.toml', 'rb')) == {'a': 1}\n```\n"
    )
    found = blocks(page)
    assert [(b.language, b.skip, b.file) for b in found] == [
        ("toml", None, "data/x.toml"),
        ("sh", "no server", None),
        ("python", None, None),
    ]
    bad = tmp_path / "bad.md"
    bad.write_text("```ini\n[x]\n```\n")
    with pytest.raises(AssertionError, match="language 'ini'"):
        run_document(bad, tmp_path / "w1")
    failing = tmp_path / "failing.md"
    failing.write_text("```python\nassert 1 == 2, 'wrong'\n```\n")
    with pytest.raises(AssertionError, match="failing.md:1 \\(python\\) failed"):
        run_document(failing, tmp_path / "w2")


def test_block_where_names_the_file_and_line() -> None:
    block = Block(ROOT / "README.md", 7, "python", "pass\n")
    assert block.where == "README.md:7"


def test_every_example_file_is_shipped_and_used() -> None:
    import re

    texts = "\n".join(p.read_text(encoding="utf-8") for p in documents())
    mentioned = set(re.findall(r"examples/([\w.-]+\.\w+)", texts))
    shipped = {p.name for p in (ROOT / "examples").iterdir() if p.is_file()}
    assert mentioned <= shipped, mentioned - shipped
    assert shipped - mentioned <= {"meters.csv"}, (
        shipped - mentioned
    )  # meters.csv is the source of owner.toml
    assert "meters.csv" in (ROOT / "examples" / "owner.toml").read_text(encoding="utf-8")


def test_demo_server_blocks_run_as_the_explorer_against_the_demo_configuration(tmp_path: Path) -> None:
    pytest.importorskip("fastapi")
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- docs-test: demo-server -->\n```python\nimport privnoise as pn\n"
        "with pn.client.Client('http://127.0.0.1:8000', key) as c:\n"
        "    answer = c.query('count() group by tariff')\n"
        "    budget = c.budget()\n"
        "assert sorted(answer['keys']) == ['economy7', 'green', 'standard']\n"
        "```\n\n<!-- docs-test: demo-server -->\n```sh\n"
        "privnoise query --server http://127.0.0.1:8000 --key $KEY 'histogram(region)' > out.txt\ngrep -q north out.txt\n```\n"
    )
    assert [b.demo_server for b in blocks(page)] == [True, True]
    namespace_check = tmp_path / "w1"
    assert run_document(page, namespace_check) == 2
    # a query the demo's configuration cannot answer fails the block that shows it
    wrong = tmp_path / "wrong.md"
    wrong.write_text(
        "<!-- docs-test: demo-server -->\n```sh\n"
        "privnoise query --server http://127.0.0.1:8000 --key $KEY 'mean(weight)'\n```\n"
    )
    with pytest.raises(AssertionError, match="wrong.md:2 \\(sh\\) failed"):
        run_document(wrong, tmp_path / "w2")
