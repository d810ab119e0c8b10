"""The command line's privacy ledger: every release from a user's file is charged (or recorded) durably, per
dataset, before anything is printed; a release beyond the dataset's total is refused with one line on stderr."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from typer.testing import CliRunner

from privnoise._cli.ledger import ENVIRONMENT, Ledger, default_path
from privnoise.cli import app

runner = CliRunner()
PRIVNOISE = Path(sys.executable).parent / "privnoise"
MEAN = ("--column", "kwh", "--query", "mean", "--bounds", "0,60")


@pytest.fixture
def meters(tmp_path: Path) -> Path:
    rows = ["household,kwh"] + [f"{h},{(h * 7) % 40 + 0.5}" for h in range(60)]
    path = tmp_path / "meters.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _release(path: Path, *args: str) -> object:
    return runner.invoke(app, ["release", str(path), *MEAN, *args])


def _budget(*args: str) -> dict:
    result = runner.invoke(app, ["budget", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _one_error_line(result: object, *needles: str) -> str:
    assert result.exit_code == 2, result.output  # type: ignore[attr-defined]
    assert result.stdout == ""  # type: ignore[attr-defined]
    lines = result.stderr.strip().splitlines()  # type: ignore[attr-defined]
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr  # type: ignore[attr-defined]
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(PRIVNOISE), *args], capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
    )  # fmt: skip


# -- refusal and durability across processes --------------------------------------------------------------


def test_a_release_beyond_the_total_is_refused_in_another_process_with_one_line(meters: Path, tmp_path: Path):
    ledger = tmp_path / "book" / "ledger.sqlite"
    env = {ENVIRONMENT: str(ledger)}
    first = _cli("release", str(meters), *MEAN, "--epsilon", "0.6", env=env)
    assert first.returncode == 0, first.stderr
    assert "mean:" in first.stdout and "remaining ε = 0.4" in first.stdout
    second = _cli("release", str(meters), *MEAN, "--epsilon", "0.6", "--json", env=env)
    assert second.returncode == 2 and second.stdout == ""
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1, second.stderr
    line = lines[0]
    for needle in ("refused", "asks ε = 0.6", "spent ε = 0.6", "total ε = 1", "remaining ε = 0.4",
                   "privnoise budget", "budget set", "--total-epsilon"):  # fmt: skip
        assert needle in line, line
    shown = _cli("budget", str(meters), "--json", env=env)
    assert shown.returncode == 0, shown.stderr
    state = json.loads(shown.stdout)
    assert state["dataset"] == str(meters.resolve()) and state["identity"] == "file"
    assert [c["kind"] for c in state["charges"]] == ["total", "dp"]  # the refusal is not recorded
    assert state["spent"]["epsilon"] == "3/5" and state["remaining"]["epsilon"] == "2/5"
    assert state["total"] == {
        "epsilon": "1",
        "delta": "1/1000000",
        "epsilon_value": 1.0,
        "delta_value": 1e-06,
    }
    assert ledger.stat().st_mode & 0o777 == 0o600


def test_charges_are_exact_rationals_composed_by_basic_composition(meters: Path):
    asked = [("0.1", "1e-7"), ("0.2", "2e-7"), ("0.3", "3e-7"), ("0.4", "4e-7")]  # float sums miss 1 and 1e-6
    for epsilon, delta in asked:
        assert _release(meters, "--epsilon", epsilon, "--delta", delta).exit_code == 0
    state = _budget(str(meters))
    spent = (sum(Fraction(e) for e, _ in asked), sum(Fraction(d) for _, d in asked))
    assert spent == (Fraction(1), Fraction(1, 10**6))
    assert (Fraction(state["spent"]["epsilon"]), Fraction(state["spent"]["delta"])) == spent
    assert state["remaining"]["epsilon"] == "0" and state["remaining"]["delta"] == "0"
    charged = [(c["epsilon"], c["delta"]) for c in state["charges"] if c["kind"] == "dp"]
    assert charged == [(str(Fraction(e)), str(Fraction(d))) for e, d in asked]
    assert [c["query"] for c in state["charges"] if c["kind"] == "dp"] == ["mean(kwh)"] * 4
    _one_error_line(_release(meters, "--epsilon", "0.001"), "remaining ε = 0, δ = 0")


def test_the_charge_is_committed_before_the_result_and_stays_when_the_release_fails(meters: Path):
    result = _release(meters, "--epsilon", "0.25", "--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["ledger"]["charged"] == {"epsilon": "1/4", "delta": "0"}
    assert (
        payload["ledger"]["spent"]["epsilon"] == "1/4"
        and payload["ledger"]["path"] == os.environ[ENVIRONMENT]
    )
    # a missing value: refused when the data are read, before the charge
    meters.write_text("household,kwh\n1,2\n2,\n", encoding="utf-8")
    failed = _release(meters, "--epsilon", "0.25")
    assert failed.exit_code == 2 and "line 3, column 'kwh': missing value" in failed.stderr
    assert _budget(str(meters))["spent"]["epsilon"] == "1/4"


# -- where the ledger is ----------------------------------------------------------------------------------


def test_ledger_option_and_environment_variable(
    meters: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    by_env, by_option = tmp_path / "env.sqlite", tmp_path / "option.sqlite"
    monkeypatch.setenv(ENVIRONMENT, str(by_env))
    assert _release(meters, "--epsilon", "0.5").exit_code == 0
    assert _release(meters, "--epsilon", "0.75", "--ledger", str(by_option)).exit_code == 0  # --ledger wins
    assert _budget(str(meters))["spent"]["epsilon"] == "1/2"
    assert _budget(str(meters), "--ledger", str(by_option))["spent"]["epsilon"] == "3/4"
    assert by_env.exists() and by_option.exists()


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="the XDG location is the Unix default")
def test_default_location_is_the_xdg_data_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(ENVIRONMENT, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_path() == tmp_path / "data" / "privnoise" / "ledger.sqlite"
    assert Ledger.locate(None).path == default_path() and Ledger.locate(None).option == "the default ledger"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_path() == tmp_path / "home" / ".local" / "share" / "privnoise" / "ledger.sqlite"


# -- totals ---------------------------------------------------------------------------------------------------


def test_the_total_is_set_at_first_use_and_a_different_one_is_refused(meters: Path):
    assert (
        _release(meters, "--epsilon", "1.5", "--total-epsilon", "2", "--total-delta", "1e-5").exit_code == 0
    )
    _one_error_line(_release(meters, "--epsilon", "0.1", "--total-epsilon", "3"),
                    "--total-epsilon 3", "total ε = 2", "privnoise budget set")  # fmt: skip
    _one_error_line(
        _release(meters, "--epsilon", "0.1", "--total-delta", "1e-6"), "--total-delta", "δ = 1e-05"
    )
    assert _release(meters, "--epsilon", "0.5", "--total-epsilon", "2").exit_code == 0  # the same total: fine
    state = _budget(str(meters))
    assert state["total"]["epsilon"] == "2" and state["total"]["delta"] == "1/100000"
    assert state["spent"]["epsilon"] == "2"


def test_budget_set_raises_the_total_and_is_recorded(meters: Path):
    assert _release(meters, "--epsilon", "1").exit_code == 0
    _one_error_line(_release(meters, "--epsilon", "1"), "refused")
    result = runner.invoke(app, ["budget", "set", str(meters), "--total-epsilon", "3"])
    assert result.exit_code == 0, result.output
    assert "total set to ε = 3" in result.stdout and "was ε = 1" in result.stdout
    assert _release(meters, "--epsilon", "1").exit_code == 0
    state = _budget(str(meters))
    totals = [c for c in state["charges"] if c["kind"] == "total"]
    assert [(c["command"], c["epsilon"]) for c in totals] == [("privnoise release", "1"), ("privnoise budget set", "3")]
    assert totals[1]["details"]["previous"] == {"epsilon": "1", "delta": "1/1000000"}
    assert state["spent"]["epsilon"] == "2" and state["remaining"]["epsilon"] == "1"


def test_budget_set_on_a_new_dataset_sets_its_first_total(meters: Path):
    result = runner.invoke(app, ["budget", "set", "--dataset", "households", "--total-epsilon", "1/3"])
    assert result.exit_code == 0, result.output
    assert _release(meters, "--epsilon", "0.3", "--dataset", "households").exit_code == 0
    # budgets print as decimals; `privnoise --exact` prints the exact rationals
    _one_error_line(_release(meters, "--epsilon", "0.1", "--dataset", "households"), "remaining ε = 0.0333333")
    exact = runner.invoke(app, ["--exact", "release", str(meters), *MEAN, "--epsilon", "0.1", "--dataset",
                                "households"])
    _one_error_line(exact, "total ε = 1/3", "remaining ε = 1/30")
    shown = runner.invoke(app, ["budget", "--dataset", "households"]).stdout
    assert "total      ε = 0.333333" in shown and "1/3" not in shown
    assert "total      ε = 1/3" in runner.invoke(app, ["--exact", "budget", "--dataset", "households"]).stdout


# -- identity ---------------------------------------------------------------------------------------------------


def test_a_named_dataset_shares_one_budget_across_files(meters: Path, tmp_path: Path):
    copy = tmp_path / "copy.csv"
    copy.write_bytes(meters.read_bytes())
    assert _release(meters, "--epsilon", "0.5", "--dataset", "households").exit_code == 0
    _one_error_line(_release(copy, "--epsilon", "0.75", "--dataset", "households"), "'households'")
    assert _budget("--dataset", "households")["identity"] == "name"


def test_changed_or_copied_content_is_warned_about_and_keeps_its_budget(meters: Path, tmp_path: Path):
    assert _release(meters, "--epsilon", "0.25").exit_code == 0
    copy = tmp_path / "copy.csv"
    copy.write_bytes(meters.read_bytes())
    copied = _release(copy, "--epsilon", "0.25")
    assert copied.exit_code == 0 and "same content is in the ledger as dataset" in copied.stderr
    with meters.open("a", encoding="utf-8") as handle:
        handle.write("60,12.5\n")
    changed = _release(meters, "--epsilon", "0.25")
    assert changed.exit_code == 0 and "changed since its last ledger entry" in changed.stderr
    assert _budget(str(meters))["spent"]["epsilon"] == "1/2"


def test_budget_list_shows_every_dataset(meters: Path, tmp_path: Path):
    other = tmp_path / "other.csv"
    other.write_text("household,kwh\n1,3\n2,4\n", encoding="utf-8")
    assert _release(meters, "--epsilon", "0.5").exit_code == 0
    assert _release(other, "--epsilon", "0.25", "--total-epsilon", "2").exit_code == 0
    listed = _budget("list")
    rows = {row["dataset"]: row for row in listed["datasets"]}
    assert set(rows) == {str(meters.resolve()), str(other.resolve())}
    assert (
        rows[str(other.resolve())]["total"]["epsilon"] == "2" and rows[str(other.resolve())]["entries"] == 2
    )
    table = runner.invoke(app, ["budget", "list"], env={"COLUMNS": "250"})
    assert table.exit_code == 0 and "other.csv" in table.stdout
    shown = runner.invoke(app, ["budget", str(meters)], env={"COLUMNS": "250"})
    assert shown.exit_code == 0 and "remaining  ε = 0.5" in shown.stdout and "mean(kwh)" in shown.stdout


def test_a_dataset_without_entries_is_shown_as_new(meters: Path):
    state = _budget(str(meters))
    assert state == {"ledger": os.environ[ENVIRONMENT], "dataset": str(meters.resolve()), "in_ledger": False,
                     "charges": []}  # fmt: skip
    result = runner.invoke(app, ["budget", str(meters)])
    assert result.exit_code == 0 and "no entry" in result.stdout and "ε = 1, δ = 1e-06" in result.stdout


# -- releases that charge no ε ---------------------------------------------------------------------------------


def test_a_fisher_release_is_recorded_with_its_information_and_charges_nothing(meters: Path):
    import privnoise as pn

    result = _release(meters, "--support", "-0.1,0.1", "--json")
    assert result.exit_code == 0, result.output
    state = _budget(str(meters))
    fisher = [c for c in state["charges"] if c["kind"] == "fisher"]
    assert len(fisher) == 1 and fisher[0]["epsilon"] is None and state["spent"]["epsilon"] == "0"
    q = pn.queries.mean(60, bounds=(0.0, 60.0))
    expected = pn.fisher.fisher_guarantee(q, pn.fisher.optimal_noise(q, support=(-0.1, 0.1)))
    assert Fraction(fisher[0]["record_information"]) == Fraction(expected.information.max_diagonal())
    assert Fraction(state["record_information"]) == Fraction(expected.information.max_diagonal())
    assert json.loads(result.stdout)["ledger"]["record_information"] == state["record_information"]


def test_a_stream_from_a_file_is_recorded_and_charges_nothing(tmp_path: Path):
    root = Path(__file__).resolve().parents[1]
    readings = tmp_path / "readings.csv"
    readings.write_text("time,co2\n0,410\n1,412\n2,415\n", encoding="utf-8")
    args = ["stream", "--model", str(root / "examples" / "building.toml"), "--columns", "co2",
            "--sidecar", str(tmp_path / "g.json")]  # fmt: skip
    assert runner.invoke(app, [*args, "--input", str(readings)]).exit_code == 0
    state = _budget(str(readings))
    stream = [c for c in state["charges"] if c["kind"] == "input-law"]
    assert len(stream) == 1 and stream[0]["details"]["readings"] == 3 and state["spent"]["epsilon"] == "0"
    assert stream[0]["details"]["delta_per_window"] > 0
    piped = runner.invoke(app, args, input="time,co2\n0,410\n")  # stdin, no --dataset: not recorded
    assert piped.exit_code == 0
    assert [row["dataset"] for row in _budget("list")["datasets"]] == [str(readings.resolve())]


def test_training_on_a_users_file_is_charged(tmp_path: Path):
    row = "39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, 2174, 0, 40, United-States, <=50K"
    adult = tmp_path / "adult.data"
    adult.write_text(row + "\n" + row.replace("39", "50").replace("<=50K", ">50K") + "\n", encoding="utf-8")
    args = ["optimize", "--dataset", "adult", "--adult-file", str(adult), "--iterations", "5", "--radius", "5",
            "--json"]  # fmt: skip
    refused = runner.invoke(app, args)
    _one_error_line(refused, "privnoise optimize refused")
    result = runner.invoke(app, [*args, "--total-epsilon", "1e9", "--total-delta", "1e-5"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    epsilon = payload["guarantee"]["differential_privacy"]["epsilon"]
    assert Fraction(payload["ledger"]["spent"]["epsilon"]) == Fraction(epsilon)
    assert _budget(str(adult))["spent"]["delta"] == "1/100000"


# -- concurrency -------------------------------------------------------------------------------------------------

_WORKER = """
import sys
from fractions import Fraction
from privnoise._cli.ledger import Ledger, LedgerRefusal
from privnoise._cli.ledger_values import Dataset
book = Ledger(__import__("pathlib").Path(sys.argv[1]), "--ledger")
accepted = 0
for _ in range(int(sys.argv[2])):
    try:
        book.charge(Dataset("shared", "name"), command="test", query="q", epsilon=Fraction(sys.argv[3]),
                    delta=Fraction(0))
        accepted += 1
    except LedgerRefusal:
        pass
print(accepted)
"""


def test_processes_charging_at_once_lose_no_charge_and_never_overspend(tmp_path: Path):
    ledger = tmp_path / "ledger.sqlite"
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(ledger), "30", "1/100"], stdout=subprocess.PIPE, text=True
        )
        for _ in range(5)
    ]
    accepted = [int(w.communicate(timeout=300)[0]) for w in workers]
    assert all(w.returncode == 0 for w in workers)
    status = Ledger(ledger, "--ledger").status("shared")
    assert status is not None
    # exactly the total, no more, and every accepted charge is in the ledger
    assert sum(accepted) == 100 == sum(1 for e in status.entries if e.kind == "dp")
    assert status.spent == (Fraction(1), Fraction(0))


def test_two_cli_releases_at_once_both_count(meters: Path, tmp_path: Path):
    env = {**os.environ, ENVIRONMENT: str(tmp_path / "ledger.sqlite")}
    command = [str(PRIVNOISE), "release", str(meters), *MEAN, "--epsilon", "0.5", "--json"]
    runs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
            for _ in range(3)]  # fmt: skip
    outcomes = [(r.communicate(timeout=300), r.returncode) for r in runs]
    assert sorted(code for _, code in outcomes) == [0, 0, 2]  # the total 1 admits exactly two
    refused = next(out for out, code in outcomes if code == 2)
    assert refused[0] == "" and len(refused[1].strip().splitlines()) == 1
    state = json.loads(_cli("budget", str(meters), "--json", env={ENVIRONMENT: env[ENVIRONMENT]}).stdout)
    assert state["spent"]["epsilon"] == "1"


# -- bad input ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "value"),
    [("--total-epsilon", "nan"), ("--total-epsilon", "-1"), ("--total-epsilon", "0"), ("--total-epsilon", "inf"), ("--total-epsilon", "1e400"),
     ("--total-epsilon", "lots"), ("--total-delta", "nan"), ("--total-delta", "1"), ("--total-delta", "-1e-6")],
)  # fmt: skip
def test_a_bad_total_names_its_option_and_charges_nothing(meters: Path, option: str, value: str):
    line = _one_error_line(_release(meters, "--epsilon", "0.5", option, value), option)
    assert value in line
    assert _budget(str(meters))["in_ledger"] is False


def test_an_unusable_ledger_names_where_its_path_came_from(meters: Path, tmp_path: Path, monkeypatch):
    folder = tmp_path / "folder"
    folder.mkdir()
    _one_error_line(
        _release(meters, "--epsilon", "0.5", "--ledger", str(folder)), "--ledger", "cannot use the ledger"
    )
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    _one_error_line(
        _release(meters, "--epsilon", "0.5", "--ledger", str(blocker / "ledger.sqlite")), "--ledger"
    )
    monkeypatch.setenv(ENVIRONMENT, str(blocker))
    _one_error_line(_release(meters, "--epsilon", "0.5"), ENVIRONMENT, "not a database")
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE t (x)")
    _one_error_line(_release(meters, "--epsilon", "0.5", "--ledger", str(other)), "not a privnoise ledger")
    _one_error_line(runner.invoke(app, ["budget", str(meters), "--ledger", str(other)]), "--ledger")


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["budget", "show"], "needs DATA or --dataset"),
        (["budget", "set", "x.csv"], "needs --total-epsilon"),
        (["budget", "set", "--total-epsilon", "2"], "needs DATA or --dataset"),
        (["budget", "set", "x.csv", "--total-epsilon", "-2"], "--total-epsilon must be"),
        (["budget", "--dataset", ""], "--dataset must be a name"),
    ],
)
def test_budget_command_errors(args: list[str], needle: str):
    _one_error_line(runner.invoke(app, args), needle)


def test_budget_shows_by_default_and_lists_its_subcommands(meters: Path):
    assert _release(meters, "--epsilon", "0.5").exit_code == 0
    assert _budget(str(meters)) == _budget("show", str(meters))
    text = runner.invoke(app, ["budget", "-h"]).stdout
    assert all(word in text for word in ("show", "list", "set"))
    wrong = runner.invoke(app, ["budget", str(meters), "--total-epsilon", "2"])
    assert wrong.exit_code == 2 and "No such option" in wrong.output
