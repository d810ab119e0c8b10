"""The ``privnoise`` command: design, release, demo, reproduce, --version and error handling."""

from __future__ import annotations

import json
import math
import tomllib
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import privnoise
import privnoise.reproduce
from privnoise.cli import app
from privnoise.reproduce import Report, Row

runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, list(args))


def ok(*args: str):
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    return result


def fails(*args: str, match: str):
    """Exit status 2, a one-line message mentioning ``match`` and no traceback."""
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert match in result.output, result.output
    return result


def design_json(*args: str) -> dict:
    return json.loads(ok("design", *args, "--json").stdout)


def release_args(path: Path, *args: str, query: str = "mean") -> tuple[str, ...]:
    return ("release", str(path), "--column", "kwh", "--query", query, *args)


def test_version():
    result = ok("--version")
    assert result.output.strip() == f"privnoise {privnoise.__version__}"


def test_help_lists_commands():
    result = ok("--help")
    for command in ("design", "release", "demo", "reproduce"):
        assert command in result.output


# -- design ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("goal", "family"),
    [
        (["--support", "-0.1,0.1"], "raised cosine"),
        (["--quality-budget", "0.01"], "Gaussian"),
        (["--quality-weight", "4"], "Gaussian"),
        (["--output-range", "0,5"], "output range"),
    ],
)
def test_design_text_each_goal(goal, family):
    result = ok("design", "--query", "mean", "--n", "500", *goal)
    assert family in result.output
    if goal[0] != "--output-range":
        assert "worst-record bound" in result.output
        assert "Cramér–Rao" in result.output


def test_design_text_reports_expected_numbers():
    result = ok("design", "--query", "mean", "--n", "500", "--support", "0,0.2")
    assert "986.96" in result.output  # Fisher information 4π²/L² of cos² on [0, 0.2]
    assert "253.303" in result.output  # worst-record bound n²L²/(4π²)
    assert "no pure ε-differential privacy" in result.output


def test_design_json_support():
    payload = design_json("--query", "mean", "--n", "500", "--support", "0,0.2")
    assert payload["query"] == {"kind": "linear", "name": "mean", "n": 500, "m": 1}
    mech = payload["mechanism"]
    assert mech["family"] == "raised-cosine"
    assert mech["parameters"] == {"lower": 0.0, "upper": 0.2}
    assert mech["fisher_information"] == pytest.approx(4 * math.pi**2 / 0.04)
    assert mech["second_moment"] == pytest.approx((math.pi**2 - 6) * 0.04 / (12 * math.pi**2) + 0.01)
    assert mech["entropy_nats"] == pytest.approx(math.log(0.4) - 1)
    g = payload["guarantee"]
    assert g["notion"] == "fisher-information" and g["scope"] == "all-data"
    assert g["worst_record_bound"] == pytest.approx(500**2 * 0.04 / (4 * math.pi**2))
    assert g["cramer_rao_bound"] == "inf"
    assert g["quality"] == pytest.approx(mech["second_moment"])


def test_design_json_quality_budget_identity():
    payload = design_json("--query", "identity", "--n", "3", "--quality-budget", "0.3")
    assert payload["mechanism"]["family"] == "gaussian"
    assert np.allclose(payload["mechanism"]["covariance"], 0.1 * np.eye(3))
    assert payload["mechanism"]["second_moment"] == pytest.approx(0.3)
    assert payload["guarantee"]["cramer_rao_bound"] == pytest.approx(0.3)  # Tr Σ for the identity
    assert payload["guarantee"]["worst_record_bound"] == pytest.approx(0.1)


def test_design_json_quality_weight_variants():
    corrected = design_json("--query", "sum", "--n", "4", "--quality-weight", "4")
    printed = design_json("--query", "sum", "--n", "4", "--quality-weight", "4", "--variant", "printed")
    # Σ = (CCᵀ)^{1/2}/√ϱ = 2/2 = 1 (corrected); the printed Corollary 6 doubles it
    assert corrected["mechanism"]["covariance"] == pytest.approx(1.0)
    assert printed["mechanism"]["covariance"] == pytest.approx(2.0)
    assert "printed" in printed["goal"]


def test_design_json_output_range_is_data_dependent():
    payload = design_json("--query", "mean", "--n", "10", "--output-range", "0,5")
    assert payload["data_dependent"] is True
    assert "guarantee" not in payload
    assert payload["mechanism"]["family"] == "output-constrained-raised-cosine"


def test_design_weights():
    payload = design_json("--query", "mean", "--weights", "1,2,3,4", "--support", "-1,1")
    assert payload["query"]["name"] == "weighted_mean" and payload["query"]["n"] == 4
    # 𝓘_ii = c_i² J with c = w/Σw: the least protected record is the heaviest, c = 0.4
    assert payload["guarantee"]["worst_record_bound"] == pytest.approx(1 / (0.16 * math.pi**2))
    payload = design_json("--query", "sum", "--weights", "1,2", "--quality-budget", "1")
    assert payload["query"]["name"] == "weighted_sum"


def test_design_variance_with_and_without_bounds():
    payload = design_json("--query", "variance", "--n", "100", "--support", "-1,1")
    assert "guarantee" not in payload and "--bounds" in payload["notes"][0]
    payload = design_json("--query", "variance", "--n", "100", "--support", "-1,1", "--bounds", "0,10")
    assert payload["guarantee"]["scope"] == "declared-domain"
    assert payload["query"]["bounds"] == [0.0, 10.0]


def test_design_large_vector_json_is_summarised():
    payload = design_json("--query", "identity", "--n", "100", "--support", "-1,1")
    cov = payload["mechanism"]["covariance"]
    assert cov["summarised"] is True and cov["shape"] == [100, 100] and len(cov["diagonal"]) == 100


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["--support", "1"], "--support must be LO,HI"),
        (["--support", "1,2,3"], "--support must be LO,HI"),
        (["--support", "2,1"], "--support must have LO < HI"),
        (["--support", "1,1"], "--support must have LO < HI"),
        (["--support", "a,1"], "--support: LO 'a' is not a number"),
        (["--support", "0,inf"], "--support: HI must be finite"),
        (["--support", "0,1", "--quality-budget", "1"], "got --support and --quality-budget"),
        ([], "give exactly one goal"),
        (["--quality-budget", "-1"], "error: --quality-budget must be > 0; got -1.0."),
        (["--quality-weight", "nan"], "--quality-weight must be finite"),
        (["--support", "0,1", "--bounds", "5,1"], "--bounds must have LO < HI"),
        (["--support", "0,1", "--weights", "1,2"], "--n is 10 but --weights has 2 entries"),
        (["--support", "0,1", "--weights", "1,,2"], "--weights must be a comma-separated list"),
    ],
)
def test_design_bad_options(args, match):
    fails("design", "--query", "mean", "--n", "10", *args, match=match)


def test_design_bad_combinations():
    fails("design", "--query", "variance", "--n", "10", "--quality-budget", "1", match="nonlinear")
    fails("design", "--query", "variance", "--n", "1", "--support", "0,1", match="--n must be >= 2")
    fails("design", "--query", "identity", "--weights", "1,2", "--support", "0,1", match="--weights applies")
    fails("design", "--query", "mean", "--support", "0,1", match="--n (the number of records) is required")
    fails("design", "--query", "identity", "--n", "5000", "--support", "0,1", match="--n must be <= 4096")
    assert invoke("design", "--query", "median", "--n", "3", "--support", "0,1").exit_code == 2
    assert invoke("design", "--query", "mean", "--n", "0", "--support", "0,1").exit_code == 2


# -- release -----------------------------------------------------------------------------------------------

TRUE_MEAN = 1.234567891


@pytest.fixture
def data_csv(tmp_path: Path) -> Path:
    """Eight records whose mean is 1.234567891 (an unmistakable number)."""
    offsets = np.array([-0.5, 0.5, -0.25, 0.25, -0.125, 0.125, 0.0, 0.0])
    x = TRUE_MEAN + offsets
    path = tmp_path / "meter.csv"
    lines = ["household,kwh"] + [f"{i},{float(v)!r}" for i, v in enumerate(x, start=1)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert abs(x.mean() - TRUE_MEAN) < 1e-12
    return path


def _true_strings() -> list[str]:
    return [repr(TRUE_MEAN), "1.2345678", f"{TRUE_MEAN:.6g}", f"{TRUE_MEAN:.4f}"]


def test_release_text_never_prints_the_true_value(data_csv):
    # noise on [0.5, 1] shifts every release to [1.73, 2.23], so no digit string of the noisy value can match
    result = ok("release", str(data_csv), "--column", "kwh", "--query", "mean", "--support", "0.5,1")
    assert "value:" in result.output and "worst-record bound" in result.output
    for text in _true_strings():
        assert text not in result.output


def test_release_json(data_csv):
    result = ok(*release_args(data_csv, "--support", "0.5,1", "--json"))
    payload = json.loads(result.stdout)
    value = payload["value"]
    assert math.isfinite(value) and TRUE_MEAN + 0.5 < value < TRUE_MEAN + 1.0
    assert payload["guarantee"]["notion"] == "fisher-information"
    assert payload["guarantee"]["records"] == 8
    assert payload["guarantee"]["worst_record_bound"] == pytest.approx(64 * 0.25 / (4 * math.pi**2))
    assert payload["mechanism"] == {"family": "raised-cosine", "lower": 0.5, "upper": 1.0}
    for text in _true_strings():
        assert text not in result.output


@pytest.mark.parametrize(
    ("query", "goal"),
    [
        ("mean", ["--quality-budget", "0.01"]),
        ("sum", ["--quality-weight", "2"]),
        ("variance", ["--support", "-1,1"]),
    ],
)
def test_release_queries_and_goals(data_csv, query, goal):
    result = ok(*release_args(data_csv, "--bounds", "0,5", *goal, "--json", query=query))
    payload = json.loads(result.stdout)
    assert math.isfinite(payload["value"])
    assert payload["query"]["name"] == query and payload["query"]["bounds"] == [0.0, 5.0]
    expected = "declared-domain" if query == "variance" else "all-data"
    assert payload["guarantee"]["scope"] == expected


def test_release_seed_is_reproducible_and_warned(data_csv):
    args = ("release", str(data_csv), "--column", "kwh", "--query", "mean", "--support", "0.5,1", "--json")
    first = ok(*args, "--seed", "7")
    second = ok(*args, "--seed", "7")
    assert "research" in first.stderr
    assert json.loads(first.stdout)["value"] == json.loads(second.stdout)["value"]


def test_release_clamp(tmp_path):
    path = tmp_path / "oob.csv"
    path.write_text("kwh\n1\n7\n2\n", encoding="utf-8")
    base = release_args(path, "--support", "-1,1", "--bounds", "0,5")
    fails(*base, match="1 record(s) of column 'kwh' lie outside --bounds [0, 5]; pass --clamp")
    result = ok(*base, "--clamp", "--json")
    payload = json.loads(result.stdout)
    assert "clamped_records" not in payload  # data-dependent: never part of the published release
    assert "1 record(s) clamped" in result.stderr


def _csv(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "bad.csv"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("id,kwh\n1,0.5\n2,abc\n", "line 3, column 'kwh': not a number."),
        ("id,kwh\n1,0.5\n2,nan\n", "line 3, column 'kwh': not finite"),
        ("id,kwh\n1,inf\n", "line 2, column 'kwh': not finite"),
        ("id,kwh\n1,\n", "line 2, column 'kwh': missing value"),
        ("id,watts\n1,0.5\n", "column 'kwh' is not in the header"),
        ("id,kwh\n", "has no data rows"),
    ],
)
def test_release_bad_data(tmp_path, text, match):
    path = _csv(tmp_path, text)
    result = fails(*release_args(path, "--support", "0,1"), match=match)
    assert str(path) in result.output.replace("\n", "")
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["--support", "1"], "--support must be LO,HI"),
        (["--support", "1,0"], "--support must have LO < HI"),
        (["--support", "0,1", "--quality-budget", "1"], "got --support and --quality-budget"),
        (["--support", "0,1", "--clamp"], "--clamp needs --bounds"),
        (["--support", "0,1", "--bounds", "0"], "--bounds must be LO,HI"),
    ],
)
def test_release_bad_options(data_csv, args, match):
    fails("release", str(data_csv), "--column", "kwh", "--query", "mean", *args, match=match)


def test_release_other_errors(data_csv, tmp_path):
    fails(
        "release",
        str(data_csv),
        "--column",
        "kwh",
        "--query",
        "variance",
        "--support",
        "0,1",
        match="--query variance needs --bounds",
    )
    fails(
        "release",
        str(tmp_path / "absent.csv"),
        "--column",
        "kwh",
        "--query",
        "mean",
        "--support",
        "0,1",
        match="No such file or directory",
    )
    fails(*release_args(tmp_path, "--support", "0,1"), match=str(tmp_path))
    assert invoke(*release_args(data_csv, "--support", "0,1", query="identity")).exit_code == 2


# -- demo --------------------------------------------------------------------------------------------------


def test_demo_runs_the_server_end_to_end_and_writes_csv_plot_and_summary(tmp_path):
    pytest.importorskip("fastapi")
    out = tmp_path / "demo"
    result = ok("demo", "--output", str(out), "--households", "40", "--seed", "3")
    csv_path, png, summary = out / "smart_meter.csv", out / "tradeoff.png", out / "demo.json"
    assert csv_path.exists() and png.exists() and summary.exists()
    assert (out / "owner.toml").exists() and (out / "privnoise.db").exists()
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    assert csv_path.read_text(encoding="utf-8").splitlines()[0] == "household,region,timestamp,kwh"
    assert len(csv_path.read_text(encoding="utf-8").splitlines()) == 1 + 40 * 7 * 48
    payload = json.loads(summary.read_text(encoding="utf-8"))
    assert payload["data"]["households"] == 40 and payload["data"]["seed"] == 3
    assert payload["server"]["url"].startswith("http://127.0.0.1:")
    releases = payload["releases"]
    answered = [r for r in releases if "refused" not in r]
    refused = [r for r in releases if "refused" in r]
    # the analyst spends ε = 1 (0.2 + 0.2 + 0.1 + 0.3 + 0.2) and two of three identity releases, then is refused
    assert [r["query"] for r in refused] == [
        "identity(kwh)",
        "mean(kwh) where region = 'east'",
        "mean(kwh) where region = 'west'",
    ]
    assert answered[-1]["remaining"]["epsilon"]["remaining"] == "0"
    for r in answered:
        values = r["value"] if isinstance(r["value"], list) else [r["value"]]
        assert all(math.isfinite(v) for v in values)
        assert r["guarantee"]["notion"] in ("differential-privacy", "fisher-information")
    identity = [r for r in answered if r["query"] == "identity(kwh)"]
    assert len(identity[0]["value"]) == 40
    # each identity release alone gives every record information 1/25; the DP answers before them add a little
    # more (information adds over all releases), so the bounds sit just below 25 and 12.5
    bounds = [r["guarantee"]["record_bound_after"]["kwh"] for r in identity]
    assert bounds[0] < 25.0 and bounds[1] < 12.5
    assert bounds == pytest.approx([25.0, 12.5], rel=1e-3)
    first_dp = answered[0]["guarantee"]
    assert first_dp["notion"] == "differential-privacy" and first_dp["per_record_information"]["kwh"] > 0
    flat = result.output.replace("\n", "")
    assert "refused" in flat
    for path in (csv_path, png, summary):
        assert str(path) in flat
    # the console's URL is printed; the keys go to a file only its owner reads, never to the output
    assert "http://127.0.0.1:8000/console/" in flat and payload["console"]["url"] in flat
    keys = tomllib.loads((out / "keys.toml").read_text(encoding="utf-8"))
    assert set(keys) == {"admin", "analyst", "explorer"} and (out / "keys.toml").stat().st_mode & 0o777 == 0o600
    assert all(key.startswith("pn_") and key not in flat for key in keys.values())


def test_demo_counts_print_as_integers() -> None:
    from privnoise._cli.demo_command import answer_text

    assert answer_text("count() where region = 'north'", 55.59) == "56"
    assert answer_text("count()", -3.2) == "0"
    assert answer_text("mean(kwh)", 12.6712) == "12.67" and answer_text("identity(kwh)", [1.234, 2.0]).startswith("2")


def test_demo_says_its_units_and_names_its_real_port(tmp_path) -> None:
    pytest.importorskip("fastapi")
    result = ok("demo", "--output", str(tmp_path), "--households", "8", "--port", "8765")
    flat = result.stdout.replace("\n", " ")
    assert "mean daily consumption, in kWh/day" in flat and "now in kWh per half hour" in flat
    assert "console:  http://127.0.0.1:8765/console/" in flat and ":8000/" not in flat
    assert tomllib.loads((tmp_path / "owner.toml").read_text(encoding="utf-8"))["server"]["port"] == 8765
    summary = json.loads((tmp_path / "demo.json").read_text(encoding="utf-8"))
    assert summary["console"]["url"] == "http://127.0.0.1:8765/console/"
    assert [r["query"] for r in summary["household_level_releases"]["releases"]][-2:] == ["clamped_count(kwh)",
                                                                                          "remaining()"]


def test_demo_leaves_the_explorer_its_whole_budget_and_says_how_to_use_it(tmp_path) -> None:
    pytest.importorskip("fastapi")
    from starlette.testclient import TestClient

    from privnoise.server import store
    from privnoise.server.app import create_app
    from privnoise.server.config import load_config

    result = ok("demo", "--output", str(tmp_path), "--households", "12", "--port", "8766")
    flat = result.stdout.replace("\n", " ")
    summary = json.loads((tmp_path / "demo.json").read_text(encoding="utf-8"))
    assert summary["try"]["querier"] == "explorer" and summary["try"]["epsilon"] == 2.0
    for command in summary["try"]["commands"]:
        assert command in flat
    assert "privnoise query --server http://127.0.0.1:8766 " in flat
    keys = tomllib.loads((tmp_path / "keys.toml").read_text(encoding="utf-8"))
    config = load_config(tmp_path / "owner.toml")
    engine = store.init_database(config)
    try:
        with TestClient(create_app(config, engine=engine)) as client:
            explorer = {"Authorization": f"Bearer {keys['explorer']}"}
            analyst = {"Authorization": f"Bearer {keys['analyst']}"}
            budget = client.get("/v1/budget", headers=explorer).json()["datasets"]["households"]
            assert budget["epsilon"]["spent"] in ("0", 0, 0.0)
            # the queries of the README run on the demo's configuration, for the explorer
            for text in ("mean(kwh) group by region", "count() group by region, tariff", "histogram(region)",
                         "quantile(kwh, 0.5)"):
                assert client.post("/v1/queries", json={"query": text}, headers=explorer).status_code == 200, text
            # the analyst has a Fisher floor of its own: a step query on kwh is refused to it (docs/server.md)
            refused = client.post("/v1/queries", json={"query": "quantile(kwh, 0.5)"}, headers=analyst)
            assert refused.status_code == 422
    finally:
        engine.dispose()


def test_demo_can_run_twice_in_the_same_directory(tmp_path):
    pytest.importorskip("fastapi")
    ok("demo", "--output", str(tmp_path), "--households", "8")
    ok("demo", "--output", str(tmp_path), "--households", "8")  # a fresh database each time


def test_demo_rejects_too_few_households(tmp_path):
    assert invoke("demo", "--output", str(tmp_path), "--households", "1").exit_code == 2


# -- reproduce ---------------------------------------------------------------------------------------------


def _fake_report() -> Report:
    report = Report(title="Fake paper", source="nowhere")
    report.add(Row("cor2-fisher", "Corollary 2(i)", 39.478, 39.478, "match"))
    report.add(Row("cor6-factor", "Corollary 6 Σ", 2.0, 1.0, "erratum", reason="spurious factor 2"))
    report.add(Row("prop1-crb", "Proposition 1", "holds", "holds", "check"))
    return report


def test_reproduce_with_monkeypatched_run(tmp_path, monkeypatch):
    calls = []

    def fake_run(name, output=None, *, figures=True):
        calls.append((name, output))
        report = _fake_report()
        report.write(output)
        return report

    monkeypatch.setattr(privnoise.reproduce, "run", fake_run)
    out = tmp_path / "rep"
    result = ok("reproduce", "farokhi-sandberg", "--output", str(out))
    assert calls == [("farokhi-sandberg", out)]
    assert (out / "report.md").exists()
    text = result.output
    assert "Fake paper" in text and "match" in text and "erratum" in text
    assert "cor6-factor" in text and "spurious factor 2" in text
    assert "cor2-fisher" not in text  # only errata are listed row by row
    assert str(out / "report.md") in text.replace("\n", "")


def test_reproduce_default_directory(tmp_path, monkeypatch):
    seen = []

    def fake_run(name, output=None, **_):
        seen.append(output)
        return _fake_report()

    monkeypatch.setattr(privnoise.reproduce, "run", fake_run)
    monkeypatch.chdir(tmp_path)
    ok("reproduce", "farokhi-sandberg")
    assert seen == [Path("reproduce") / "farokhi-sandberg"]


def test_reproduce_unknown_paper():
    fails("reproduce", "no-such-paper", match="'no-such-paper' is not one of 'farokhi-optimization'")
