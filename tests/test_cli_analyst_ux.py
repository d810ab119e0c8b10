"""The analyst's command line in its own words: a DP user sent to --epsilon first, library errors in option names,
refusals that say what was asked and what is left, Fisher lines only with --fisher, quantiles in plain numbers,
clamping flagged with the option that counts it, the budget in --json, dry runs that charge nothing and read no
value."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from privnoise.cli import app

pd = pytest.importorskip("pandas")
runner = CliRunner()


@pytest.fixture(scope="module")
def penguins(tmp_path_factory) -> Path:
    rng = np.random.default_rng(0)
    unit = np.repeat(np.arange(120), 3)
    frame = pd.DataFrame({"id": unit, "species": np.array(["Gentoo", "Adelie", "Chinstrap"])[unit % 3],
                          "mass": np.round(rng.normal(4200.0, 800.0, unit.size))})
    frame.loc[5, "mass"] = np.nan
    path = tmp_path_factory.mktemp("penguins") / "penguins.csv"
    frame.to_csv(path, index=False)
    return path


def _run(*args: object):
    return runner.invoke(app, [str(a) for a in args])


def _error(result) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    (line,) = [line for line in result.output.splitlines() if line.startswith("error:")]
    return line


def _ledger(path: Path) -> dict:
    result = _run("budget", path, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


# -- (2) the goal of a release -------------------------------------------------------------------------------------
def test_a_release_without_a_goal_names_epsilon_first_then_the_fisher_goals(penguins: Path) -> None:
    line = _error(_run("release", penguins, "--column", "mass", "--query", "mean", "--bounds", "2500,6500"))
    assert line.index("--epsilon") < line.index("--support") < line.index("--quality-budget")
    assert "differentially private" in line and "Fisher-information goal" in line


# -- (3) the cap on a unit's rows ----------------------------------------------------------------------------------
def test_a_unit_without_max_contributions_is_said_on_stderr(penguins: Path) -> None:
    result = _run("release", penguins, "--column", "mass", "--query", "count", "--epsilon", "0.1", "--unit", "id",
                  "--missing", "drop", "--json")
    assert result.exit_code == 0, result.output
    assert "--unit id without --max-contributions: at most 1 row per unit is used" in result.stderr
    payload = json.loads(result.stdout)
    assert payload["query"]["max_contributions"] == 1
    assert payload["guarantee"]["adjacency"].endswith("(at most 1 row per unit used)")
    quiet = _run("release", penguins, "--column", "mass", "--query", "count", "--epsilon", "0.1", "--unit", "id",
                 "--max-contributions", "3", "--missing", "drop")
    assert quiet.exit_code == 0 and "without --max-contributions" not in quiet.stderr


# -- (4) the library's errors in the command line's words ----------------------------------------------------------
def test_missing_values_are_refused_in_option_names(penguins: Path) -> None:
    for args in (("release", penguins, "--column", "mass", "--query", "mean", "--bounds", "2500,6500", "--epsilon",
                  "1"),
                 ("sql", penguins, "SELECT AVG(mass) FROM t", "--epsilon", "1", "--bounds", "mass=2500,6500")):
        line = _error(_run(*args))
        assert "--missing drop" in line and "--missing NUMBER" in line and "missing='drop'" not in line


def test_keys_or_delta_in_option_names_and_nothing_charged(penguins: Path, tmp_path: Path) -> None:
    line = _error(_run("release", penguins, "--column", "mass", "--query", "mean", "--bounds", "2500,6500",
                       "--epsilon", "0.1", "--missing", "drop", "--group-by", "species"))
    assert "(--keys A,B,...) or give --delta D > 0" in line and "`keys`" not in line and "session" not in line
    assert _ledger(penguins)["in_ledger"] is False  # refused before the ledger was charged
    line = _error(_run("sql", penguins, "SELECT species, COUNT(*) FROM t GROUP BY species", "--epsilon", "0.1"))
    assert "(--keys COLUMN=A,B,...) or give --delta D > 0" in line and "`keys`" not in line


@pytest.mark.parametrize(("message", "expected"), [
    ("`data` of `Session`: nonexist.csv is not a file.", "DATA: nonexist.csv is not a file."),
    ("`path` of `dask_parquet`: no Parquet file matches 'x.parquet'.", "DATA: no Parquet file matches 'x.parquet'."),
    ("column 'mass' of `mean` has missing values and the session's policy is missing='error'; pass missing='drop' or "
     "a number to impute to Session.", "column 'mass' of `mean` has missing values and --missing is error; give "
     "--missing drop (leave those rows out) or --missing NUMBER (impute it)."),
    ("a key held by one unit is released with probability ≤ δ. Declare `keys` or give the session a δ > 0.",
     "a key held by one unit is released with probability ≤ δ. Declare the keys (--keys A,B) or give --delta D > 0."),
    ("group count needs δ > 0 (partition selection); accountant 'pure' has δ = 0: declare the keys or use another "
     "accountant.", "group count needs δ > 0 (partition selection); accountant 'pure' has δ = 0: declare the keys "
     "(--keys A,B) or give --delta D > 0."),
    ("this session protects None: build the session with privacy_unit='id'", "this session protects None: give "
     "--unit 'id'"),
    ("`max_contributions` of `Session` needs `privacy_unit` (the column whose rows are capped).",
     "--max-contributions needs --unit (the column whose rows are capped)."),
])
def test_the_table_of_library_phrases(message: str, expected: str) -> None:
    from privnoise._cli.wording import translate

    assert translate(message, keys="--keys A,B") == expected


def test_a_missing_file_and_a_bad_column_name_the_option(penguins: Path) -> None:
    assert _error(_run("release", "nonexist.csv", "--column", "mass", "--query", "count", "--epsilon", "1")) == (
        "error: nonexist.csv: No such file or directory")
    line = _error(_run("release", penguins, "--column", "mass", "--query", "count", "--epsilon", "1",
                       "--max-contributions", "3"))
    assert line == "error: --max-contributions needs --unit (the column whose rows are capped)."


# -- (5) refusals --------------------------------------------------------------------------------------------------
def test_a_refused_release_says_what_it_asked_and_what_is_left(penguins: Path, tmp_path: Path) -> None:
    common = ("--column", "mass", "--query", "count", "--missing", "drop", "--dataset", "refusal", "--total-epsilon",
              "1.5")
    assert _run("release", penguins, *common, "--epsilon", "1").exit_code == 0
    line = _error(_run("release", penguins, *common, "--epsilon", "1"))
    assert "asks ε = 1, δ = 0" in line and "remaining ε = 0.5, δ = 1e-06" in line


# -- (6) Fisher lines only when asked ------------------------------------------------------------------------------
def test_dp_output_carries_fisher_lines_only_with_fisher(penguins: Path) -> None:
    args = ("release", penguins, "--column", "mass", "--query", "mean", "--bounds", "2500,6500", "--epsilon", "0.2",
            "--missing", "drop")
    plain = _run(*args)
    assert plain.exit_code == 0 and "Fisher" not in plain.stdout and "Cramér" not in plain.stdout
    assert "fisher_information_per_row" not in json.loads(_run(*args, "--json").stdout)
    asked = _run(*args, "--fisher")
    assert "standard deviation ≥" in asked.stdout and "(in the unit of mass; variance ≥" in asked.stdout
    payload = json.loads(_run(*args, "--fisher", "--json").stdout)
    assert payload["row_error_floor"] > 0 and payload["fisher"].startswith("Fisher: from this release")


# -- (7) quantiles -------------------------------------------------------------------------------------------------
def test_quantile_output_has_plain_numbers(penguins: Path) -> None:
    result = _run("release", penguins, "--column", "mass", "--query", "quantile", "--q", "0.5", "--bounds",
                  "2500,6500", "--epsilon", "0.2", "--missing", "drop")
    assert result.exit_code == 0, result.output
    first = result.stdout.splitlines()[0]
    assert re.match(r"quantile: q = 0.5: [\d.]+ \(±[\d.]+ rows\) \(95% rank accuracy\);", first), first
    assert "[" not in first.split(";")[0]


# -- (8) clamping --------------------------------------------------------------------------------------------------
def test_clamping_is_flagged_with_the_option_that_counts_it(penguins: Path) -> None:
    result = _run("release", penguins, "--column", "mass", "--query", "mean", "--bounds", "3000,4000", "--epsilon",
                  "0.2", "--missing", "drop", "--json")
    payload = json.loads(result.stdout)
    (note,) = payload["notes"]
    assert "values clamped to the declared bounds [3000, 4000]" in note and "--query clamped-count" in note
    assert "Session.clamped_count" not in note
    text = _run("release", penguins, "--column", "mass", "--query", "mean", "--bounds", "3000,4000", "--epsilon",
                "0.2", "--missing", "drop").stdout
    assert "the interval covers the statistic of the clamped values" in text and "--query clamped-count" in text
    counted = _run("release", penguins, "--column", "mass", "--query", "clamped-count", "--bounds", "3000,4000",
                   "--epsilon", "0.2", "--missing", "drop", "--unit", "id", "--max-contributions", "3", "--json")
    assert counted.exit_code == 0, counted.output
    payload = json.loads(counted.stdout)
    assert payload["query"]["query"] == "clamped count" and payload["ledger"]["charged"]["epsilon"] == "1/5"
    assert _error(_run("release", penguins, "--column", "mass", "--query", "clamped-count", "--epsilon", "1")).endswith(
        "--query clamped-count needs --bounds LO,HI (declared, never taken from the data).")


# -- (9) the budget in --json --------------------------------------------------------------------------------------
def test_json_carries_the_remaining_budget_and_the_ledger(penguins: Path) -> None:
    result = _run("release", penguins, "--column", "mass", "--query", "count", "--epsilon", "0.25", "--missing",
                  "drop", "--json")
    payload = json.loads(result.stdout)
    assert payload["remaining"]["epsilon"] == pytest.approx(0.0, abs=1e-12) and "epsilon_exact" in payload["remaining"]
    assert payload["ledger"]["remaining"]["epsilon_value"] == pytest.approx(0.75)
    sql = json.loads(_run("sql", penguins, "SELECT COUNT(*) FROM t", "--epsilon", "0.25", "--json").stdout)
    assert "remaining" in sql and sql["ledger"]["spent"]["epsilon_value"] == pytest.approx(0.5)


# -- dry runs ------------------------------------------------------------------------------------------------------
@pytest.fixture
def unreadable(tmp_path: Path) -> Path:
    """A header and values no reader accepts: a dry run must not read them."""
    path = tmp_path / "meters.csv"
    path.write_text("household,region,kwh\n1,north,not-a-number\n2,south,\x01\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("options", [
    ("--query", "mean", "--bounds", "0,10"),
    ("--query", "sum", "--bounds", "0,10", "--where", "region = 'north'"),
    ("--query", "count", "--group-by", "region", "--delta", "1e-6"),
    ("--query", "quantile", "--q", "0.5,0.9", "--bounds", "0,10"),
    ("--query", "histogram", "--bins", "0,1,10"),
    ("--query", "variance", "--bounds", "0,10", "--accountant", "zcdp", "--delta", "1e-6"),
])
def test_a_dry_run_charges_nothing_and_reads_no_value(unreadable: Path, options: tuple[str, ...]) -> None:
    base = ("release", unreadable, "--column", "kwh", "--epsilon", "0.5", "--unit", "household",
            "--max-contributions", "48", *options)
    assert _run(*base).exit_code == 2  # the values cannot be read
    result = _run(*base, "--dry-run")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("dry run of ") and "nothing charged, no value of DATA read" in result.stdout
    assert "accuracy (noise only): ±" in result.stdout and "it would fit" in result.stdout
    payload = json.loads(_run(*base, "--dry-run", "--json").stdout)
    assert payload["dry_run"] is True and payload["ledger"]["fits"] is True and payload["ledger"]["in_ledger"] is False
    assert payload["cost"]["exact"].get("epsilon") == "1/2" or "rho" in payload["cost"]
    assert _ledger(unreadable)["in_ledger"] is False


def test_a_dry_run_states_the_mean_s_accuracy_as_a_formula_in_n(unreadable: Path) -> None:
    result = _run("release", unreadable, "--column", "kwh", "--query", "mean", "--bounds", "0,10", "--epsilon", "1",
                  "--dry-run")
    assert re.search(r"95% accuracy \(noise only\): ±[\d.]+/\(n − [\d.]+\) in the unit of kwh, for n > [\d.]+ rows "
                     r"used, at most 10", result.stdout), result.stdout
    assert "values clamped to --bounds 0,10" in result.stdout


def test_a_dry_run_says_when_the_ledger_would_refuse(unreadable: Path) -> None:
    result = _run("release", unreadable, "--column", "kwh", "--query", "count", "--epsilon", "2", "--dry-run")
    assert result.exit_code == 0 and "remaining ε = 1, δ = 1e-06: it would be refused" in result.stdout
    assert json.loads(_run("release", unreadable, "--column", "kwh", "--query", "count", "--epsilon", "2",
                           "--dry-run", "--json").stdout)["ledger"]["fits"] is False


def test_a_dry_run_checks_the_columns_against_the_header(unreadable: Path) -> None:
    line = _error(_run("release", unreadable, "--column", "nope", "--query", "count", "--epsilon", "1", "--dry-run"))
    assert "no column 'nope' ('household', 'region', 'kwh')" in line


def test_sql_dry_run(unreadable: Path) -> None:
    statement = "SELECT region, AVG(kwh) AS m, COUNT(*) FROM meters WHERE kwh > 0 GROUP BY region"
    args = ("sql", unreadable, statement, "--epsilon", "1", "--delta", "1e-6", "--bounds", "kwh=0,10",
            "--unit", "household", "--max-contributions", "48")
    assert _run(*args).exit_code == 2
    result = _run(*args, "--dry-run")
    assert result.exit_code == 0, result.output
    assert "dry run of the statement: would charge ε = 1, δ = 1e-06" in result.stdout
    assert "AVG(kwh): 95% accuracy ±" in result.stdout and "COUNT(*): 95% accuracy ±" in result.stdout
    payload = json.loads(_run(*args, "--dry-run", "--json").stdout)
    assert set(payload["releases"]) == {"AVG(kwh)", "COUNT(*)"} and payload["ledger"]["fits"] is True
    assert _ledger(unreadable)["in_ledger"] is False
