"""The ``privnoise stream`` command on its own typer app."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from privnoise._cli.logs import configure
from privnoise._cli.systems import register

app = typer.Typer()
register(app)


@app.command()
def _other() -> None:  # a second command keeps typer in multi-command mode
    pass


runner = CliRunner()
MODEL = Path(__file__).resolve().parents[1] / "examples" / "building.toml"


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run every command in a temporary directory: a stream to stdout writes its sidecar to the working directory."""
    monkeypatch.chdir(tmp_path)


def run(*args: str, data: str = ""):
    configure(0)  # the command line's logging, as its main callback sets it (this app registers `stream` alone)
    return runner.invoke(app, ["stream", "--model", str(MODEL), *args], input=data)


def test_stdin_to_stdout_with_guarantee_header() -> None:
    result = run(
        "--delta",
        "0.2",
        "--seed",
        "1",
        "--guarantee-header",
        data="co2\n" + "".join(f"{400 + k}\n" for k in range(10)),
    )
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stdout.splitlines() if line]
    assert lines[0].startswith("# privnoise guarantee:")
    guarantee = json.loads(lines[0].split(":", 1)[1])
    assert guarantee["delta"] == 0.2 and guarantee["theorem"] == "III.5"
    assert lines[1] == "co2" and len(lines) == 12


def test_files_and_sidecar(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    src.write_text("".join(f"{k}\n" for k in range(1000)))
    out, side = tmp_path / "out.csv", tmp_path / "out.json"
    result = run("--input", str(src), "--output", str(out), "--sidecar", str(side))
    assert result.exit_code == 0, result.output
    assert len(out.read_text().splitlines()) == 1000
    assert json.loads(side.read_text())["readings"] == 1000


def test_bad_stream_and_model(tmp_path: Path) -> None:
    for data, match in (("1\n2\nx\n", "line 3"), ("1\nNaN\n", "line 2"), ("1\n\n2\n", "line 2")):
        result = run(data=data)
        assert result.exit_code == 2 and match in result.output and "Traceback" not in result.output
    bad = tmp_path / "bad.toml"
    bad.write_text(
        "[system]\nA = [[1, 2]]\nB = [[1]]\nC = [[1]]\n[privacy]\nhorizon = 2\nc = 1.0\ndelta = 0.1\n"
    )
    result = runner.invoke(app, ["stream", "--model", str(bad)], input="1\n")
    assert result.exit_code == 2 and "square" in result.output
    small = tmp_path / "small.toml"
    small.write_text(MODEL.read_text().replace("c = 2.02", "c = 1.0"))
    result = runner.invoke(app, ["stream", "--model", str(small)], input="1\n")
    assert result.exit_code == 2 and "smaller than the W2" in result.output


TIME_CO2 = "time,co2\n" + "".join(f"{k},{410 + k % 5}\n" for k in range(20))


def data_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line and not line.startswith("#")]


def test_time_column_passes_through_and_selection_by_name_or_index(tmp_path: Path) -> None:
    by_name = run("--seed", "3", "--columns", "co2", data=TIME_CO2)
    assert by_name.exit_code == 0, by_name.output
    lines = data_lines(by_name.stdout)
    assert lines[0] == "time,co2" and len(lines) == 21
    assert [line.split(",")[0] for line in lines[1:]] == [str(k) for k in range(20)]
    assert all(line.split(",")[1] != str(410 + k % 5) for k, line in enumerate(lines[1:]))
    by_index = run("--seed", "3", "--columns", "1", data=TIME_CO2)
    assert data_lines(by_index.stdout) == lines
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    src.write_bytes(TIME_CO2.replace("\n", "\r\n").encode())
    from_file = run("--seed", "3", "--columns", "co2", "--input", str(src), "--output", str(out))
    assert from_file.exit_code == 0, from_file.output
    assert data_lines(out.read_text()) == lines


def test_columns_errors_are_clear() -> None:
    result = run(data=TIME_CO2)
    assert result.exit_code == 2 and "--columns" in result.output and "0 'time', 1 'co2'" in result.output
    result = run("--columns", "CO2", data=TIME_CO2)
    assert result.exit_code == 2 and "no column named 'CO2'" in result.output and "1 'co2'" in result.output
    result = run("--columns", "co2", data=TIME_CO2.replace("3,413", "3,n/a"))
    assert result.exit_code == 2 and "line 5, column 'co2' (index 1): not a number." in result.output
    assert "n/a" not in result.output  # the value is not quoted
    assert "Traceback" not in result.output


def test_header_option() -> None:
    result = run("--seed", "1", "--columns", "1", "--no-header", data="0,410\n1,411\n")
    assert result.exit_code == 0 and [ln.split(",")[0] for ln in data_lines(result.stdout)] == ["0", "1"]
    result = run("--seed", "1", "--header", data="410\n411\n")
    assert (
        result.exit_code == 0
        and data_lines(result.stdout)[0] == "410"
        and len(data_lines(result.stdout)) == 2
    )
    result = run("--columns", "1", "--no-header", data=TIME_CO2)
    assert result.exit_code == 2 and "line 1, column index 1: not a number." in result.output


# -- the output is a plain CSV; the guarantee goes to a sidecar by default --------------------------------------


def test_default_sidecar_beside_the_output_and_for_stdout(tmp_path: Path) -> None:
    src, out = tmp_path / "in.csv", tmp_path / "noisy.csv"
    src.write_text(TIME_CO2)
    result = run("--columns", "co2", "--input", str(src), "--output", str(out))
    assert result.exit_code == 0, result.output
    side = json.loads((tmp_path / "noisy.guarantee.json").read_text())
    assert side["readings"] == 20 and side["theorem"] == "III.5" and side["model"] == str(MODEL)
    assert "noisy.guarantee.json" in result.stderr
    assert not out.read_text().startswith("#")
    piped = run("--columns", "co2", data=TIME_CO2)
    assert piped.exit_code == 0, piped.output
    assert piped.stdout.splitlines()[0] == "time,co2"
    assert json.loads((tmp_path / "stream.guarantee.json").read_text())["readings"] == 20


def test_sidecar_and_guarantee_header_exclude_each_other(tmp_path: Path) -> None:
    result = run("--sidecar", str(tmp_path / "g.json"), "--guarantee-header", data=TIME_CO2)
    assert result.exit_code == 2 and "either --sidecar or --guarantee-header" in result.output
    assert not (tmp_path / "g.json").exists()


def _noisy_csv(tmp_path: Path, *extra: str) -> tuple[Path, list[float]]:
    src, out = tmp_path / "in.csv", tmp_path / "noisy.csv"
    src.write_text(TIME_CO2)
    result = run("--columns", "co2", "--seed", "5", "--input", str(src), "--output", str(out), *extra)
    assert result.exit_code == 0, result.output
    values = [float(line.split(",")[1]) for line in data_lines(out.read_text())[1:]]
    return out, values


def test_pandas_reads_the_output_as_it_is(tmp_path: Path) -> None:
    pandas = pytest.importorskip("pandas")
    out, values = _noisy_csv(tmp_path)
    frame = pandas.read_csv(out)
    assert list(frame.columns) == ["time", "co2"]
    assert frame["time"].tolist() == list(range(20))
    assert frame["co2"].dtype == np.float64 and np.array_equal(frame["co2"].to_numpy(), values)
    with_header, _ = _noisy_csv(tmp_path, "--guarantee-header")
    commented = pandas.read_csv(with_header, comment="#")
    assert list(commented.columns) == ["time", "co2"] and len(commented) == 20


@pytest.mark.skipif(importlib.util.find_spec("polars") is None, reason="polars is not installed")
def test_polars_reads_the_output_as_it_is(tmp_path: Path) -> None:
    import polars

    out, values = _noisy_csv(tmp_path)
    frame = polars.read_csv(out)
    assert frame.columns == ["time", "co2"]
    assert frame["time"].to_list() == list(range(20))
    assert frame["co2"].dtype == polars.Float64 and frame["co2"].to_list() == values
