"""Hostile input files: every command that reads a user's file refuses a malformed one with ONE line on stderr naming
the file, the line (where there is one) and the rule, exit status 2, no traceback, and never a value of the data.

Each hostile file holds the marker :data:`SECRET`; no output ever shows it. A refused release charges nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
from typer.testing import CliRunner

from privnoise.cli import app
from privnoise.io import csv_files

SECRET = "SECRET-7f3a"
S = SECRET.encode()
MIB = 1 << 20
runner = CliRunner()
PRIVNOISE = Path(sys.executable).parent / "privnoise"
MODEL = Path(__file__).resolve().parents[1] / "examples" / "building.toml"
MODES = {"dp": ("--epsilon", "1", "--total-epsilon", "10"), "fisher": ("--support", "-1,1")}


def invoke(*args: str, env: dict[str, str] | None = None):
    return runner.invoke(app, [str(a) for a in args], env=env)


def release(path: Path, mode: str, *extra: str, column: str = "kwh", env: dict[str, str] | None = None):
    return invoke("release", path, "--column", column, "--query", "mean", "--bounds", "0,5", *MODES[mode], *extra,
                  env=env)  # fmt: skip


def ledger() -> Path:
    return Path(os.environ["PRIVNOISE_LEDGER"])


def refused(result, name: str, *rules: str) -> str:
    """Exit status 2, nothing on stdout, one printable line on stderr naming ``name`` and every rule; no marker."""
    everything = result.stdout + result.stderr
    assert result.exit_code == 2, everything
    assert "Traceback" not in everything and SECRET not in everything, everything
    assert result.stdout == "", result.stdout
    line = result.stderr
    assert line.endswith("\n") and line.count("\n") == 1, repr(line)
    line = line[:-1]
    assert line.startswith("error: ") and line.isprintable(), repr(line)
    assert name in line, line
    for rule in rules:
        assert rule in line, line
    return line


def write(path: Path, content: str | bytes) -> Path:
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return path


# -- CSV files given to `privnoise release` (a DP release and a Fisher release) --------------------------------------

CSV_CASES = {
    "duplicated column": (f"id,kwh,kwh\n1,2,{SECRET}\n", "column 'kwh' appears more than once in the header"),
    "long row": (f"id,kwh\n1,2\n3,4,{SECRET}\n", "line 3: 3 field(s) where the header has 2"),
    "short row": (f"id,note,kwh\n1,a,2\n{SECRET},3\n", "line 3: 2 field(s) where the header has 3"),
    "empty file": (b"", "the file is empty"),
    "header only": ("id,kwh\n", "no data rows"),
    "blank header": (f"\n1,{SECRET}\n", "line 1: blank header"),
    "NUL bytes": (b"id,kwh\n1,2" + b"\x00" + S + b"\n", "line 2: NUL byte"),
    "binary garbage": (bytes(range(256)) * 8 + S, "line 1: NUL byte"),
    "invalid UTF-8": (b"id,kwh\n1,2\n2,\xff\xfe" + S + b"\n", "line 3: not UTF-8 text"),
    "invalid UTF-8 in another column": (b"id,kwh\n\xc3" + S + b",2\n", "line 2: not UTF-8 text"),
    "UTF-16 byte-order mark": (f"id,kwh\n1,{SECRET}\n".encode("utf-16"), "line 1: UTF-16 text"),
    "text in a numeric column": (f"id,kwh\n1,2\n2,{SECRET}\n", "line 3, column 'kwh': not a number"),
    "unbalanced quote": (f'id,kwh\n1,2\n2,"{SECRET}\n', "line 3, column 'kwh': not a number"),
    "digit-group underscores": ("id,kwh\n1,1_000\n", "line 2, column 'kwh': not a number"),
    "NaN": ("id,kwh\n1,2\n2,NaN\n", "line 3, column 'kwh': not finite (NaN and inf are refused)"),
    "infinity": ("id,kwh\n1,-Infinity\n", "line 2, column 'kwh': not finite"),
    "missing value": ("id,kwh\n1,\n", "line 2, column 'kwh': missing value"),
    "blank line inside the data": ("id,kwh\n1,2\n\n3,4\n", "line 3: blank line inside the data"),
}


@pytest.mark.parametrize("reader", ["strict", "fast"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", CSV_CASES)
def test_hostile_csv_is_one_line_and_charges_nothing(
    tmp_path: Path, case: str, mode: str, reader: str, monkeypatch: pytest.MonkeyPatch
):
    """Both readers: the strict one alone (small files), and pyarrow's handing over to it (larger ones)."""
    if reader == "fast":
        pytest.importorskip("pyarrow")
        monkeypatch.setattr(csv_files, "STRICT_READER_BYTES", 0)
    content, rule = CSV_CASES[case]
    path = write(tmp_path / "hostile.csv", content)
    refused(release(path, mode), str(path), rule)
    assert not ledger().exists()  # refused before the ledger was opened


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The large hostile files, written once: a 50 MiB field, a 2 MiB field, 200,001 columns, a 5 MiB line in
    another column, a quoted field over 6 MiB of lines."""
    folder = tmp_path_factory.mktemp("big")
    write(folder / "field-50mib.csv", b"id,kwh\n1," + S * (50 * MIB // len(S)) + b"\n")
    write(folder / "field-2mib.csv", b"id,kwh\n1," + S * (2 * MIB // len(S)) + b"\n")
    header = ",".join(f"c{i}" for i in range(200_000)) + ",kwh\n"
    write(folder / "columns.csv", header.encode() + b",".join([S] * 200_001) + b"\n")
    write(folder / "line-5mib.csv", b"note,kwh\n" + S * (5 * MIB // len(S)) + b",1\n")
    write(folder / "record.csv", b'note,kwh\n"' + (S + b"\n") * (6 * MIB // (len(S) + 1)) + b'",1\n')
    return folder


BIG_CASES = {
    "field-50mib.csv": "line 2: the line is longer than the limit of 4 MiB (PRIVNOISE_MAX_LINE_BYTES)",
    "field-2mib.csv": "line 2, column 'kwh': field longer than the limit of 1 MiB (PRIVNOISE_MAX_FIELD_BYTES)",
    "columns.csv": "line 1: the header has 200,001 columns, more than the limit of 10,000 (PRIVNOISE_MAX_COLUMNS)",
    "line-5mib.csv": "line 2: the line is longer than the limit of 4 MiB",
    "record.csv": "the record (quoted fields over several lines) is longer than the limit of 4 MiB",
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", BIG_CASES)
def test_limits_are_enforced_while_reading(big: Path, name: str, mode: str):
    refused(release(big / name, mode), name, BIG_CASES[name])
    assert not ledger().exists()


def test_a_50_mib_field_is_never_held_whole(big: Path):
    tracemalloc.start()
    try:
        result = release(big / "field-50mib.csv", "fisher")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    refused(result, "field-50mib.csv", "longer than the limit")
    assert peak < 16 * MIB, f"peak {peak / MIB:.1f} MiB"


def test_limits_are_raised_by_environment_variables(big: Path, tmp_path: Path):
    refused(release(big / "line-5mib.csv", "fisher"), "line-5mib.csv", "PRIVNOISE_MAX_LINE_BYTES")
    accepted = release(big / "line-5mib.csv", "fisher", env={"PRIVNOISE_MAX_LINE_BYTES": str(8 * MIB)})
    assert accepted.exit_code == 0, accepted.output
    path = write(tmp_path / "three.csv", "id,kwh,note\n1,2,a\n")
    refused(release(path, "dp", env={"PRIVNOISE_MAX_COLUMNS": "2"}), "three.csv",
            "the header has 3 columns, more than the limit of 2 (PRIVNOISE_MAX_COLUMNS)")  # fmt: skip
    bad = release(path, "dp", env={"PRIVNOISE_MAX_COLUMNS": "many"})
    assert bad.exit_code == 2 and bad.stderr.count("\n") == 1
    assert "PRIVNOISE_MAX_COLUMNS must be a whole number" in bad.stderr


# -- paths that are not readable files ------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_paths_that_are_not_readable_files(tmp_path: Path, mode: str):
    folder = tmp_path / "folder.csv"
    folder.mkdir()
    refused(release(folder, mode), "folder.csv", "is a directory")
    loop = tmp_path / "loop.csv"
    loop.symlink_to(tmp_path / "other.csv")
    (tmp_path / "other.csv").symlink_to(loop)
    refused(release(loop, mode), "loop.csv", "symbolic links")
    refused(release(tmp_path / "absent.csv", mode), "absent.csv", "No such file")
    sheet = write(tmp_path / "data.xlsx", SECRET)
    refused(release(sheet, mode), "data.xlsx", "must be a CSV (.csv, .tsv, .txt) or Parquet")
    odd = tmp_path / "a\nb\x1b[31m.csv"  # a name with a newline and an escape: still one printable line
    odd.mkdir()
    refused(release(odd, mode), "a\\nb\\x1b[31m.csv", "is a directory")
    assert not ledger().exists()


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="permissions do not bind root")
def test_unreadable_file(tmp_path: Path):
    path = write(tmp_path / "secret.csv", f"id,kwh\n1,{SECRET}\n")
    path.chmod(0)
    try:
        refused(release(path, "dp"), "secret.csv", "Permission denied")
    finally:
        path.chmod(0o600)


# -- a file that is not what its extension says; Parquet -------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_files_that_are_not_their_format(tmp_path: Path, mode: str):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    fake = write(tmp_path / "fake.parquet", f"id,kwh\n1,{SECRET}\n")
    refused(release(fake, mode), "fake.parquet", "not a Parquet file")
    disguised = tmp_path / "disguised.csv"
    pq.write_table(pa.table({"kwh": [1.0, 2.0], "note": [SECRET, SECRET]}), disguised)
    refused(release(disguised, mode), "disguised.csv", "line 1: NUL byte")
    whole = tmp_path / "whole.parquet"
    pq.write_table(pa.table({"kwh": [1.0, 2.0]}), whole)
    raw = whole.read_bytes()
    cut = write(tmp_path / "cut.parquet", raw[: len(raw) // 2] + raw[-8:])
    refused(release(cut, mode), "cut.parquet", "not a readable Parquet file")
    text = tmp_path / "text.parquet"
    pq.write_table(pa.table({"kwh": [SECRET, "x"]}), text)
    refused(release(text, mode), "text.parquet", "column 'kwh'", "string, not numbers")
    infinite = tmp_path / "inf.parquet"
    pq.write_table(pa.table({"kwh": [1.0, float("inf")]}), infinite)
    refused(release(infinite, mode), "inf.parquet", "column 'kwh': row 1 is not finite")
    refused(release(whole, mode, column="watts"), "whole.parquet", "column 'watts' is not in the file")
    assert not ledger().exists()


# -- hostile headers: names are shown escaped and cut, a name like an option is a name -----------------------------


@pytest.mark.parametrize("mode", MODES)
def test_a_hostile_header_is_shown_escaped_and_cut(tmp_path: Path, mode: str):
    huge = "N" * 100_000
    header = f'"bell\x07\x1b[31mred\nline",{huge},--total-epsilon,' + ",".join(f"c{i}" for i in range(20))
    path = write(tmp_path / "header.csv", header + "\n" + ",".join([SECRET] * 23) + "\n")
    line = refused(release(path, mode), "header.csv", "column 'kwh' is not in the header",
                   "'bell\\x07\\x1b[31mred\\nline'", "'--total-epsilon'", "and 15 more")  # fmt: skip
    assert "N" * 41 not in line and "N" * 40 + "…" in line and len(line) < 1000


@pytest.mark.parametrize("mode", MODES)
def test_a_column_named_like_an_option_is_a_column(tmp_path: Path, mode: str):
    path = write(tmp_path / "options.csv", "id,--epsilon\n1,0.5\n2,0.25\n3,0.75\n")
    result = release(path, mode, column="--epsilon")
    assert result.exit_code == 0, result.output
    assert "'--epsilon'" in result.stdout or "mean" in result.stdout


def test_a_byte_order_mark_is_not_part_of_the_header(tmp_path: Path):
    path = write(tmp_path / "bom.csv", "\ufeffid,kwh\n1,0.5\n2,0.25\n".encode())
    for mode in MODES:
        result = release(path, mode, "--json")
        assert result.exit_code == 0, result.output


# -- the ledger: a refused file leaves the budget as it was -----------------------------------------------------------


def test_a_refused_file_leaves_the_budget_unspent(tmp_path: Path):
    path = write(tmp_path / "meters.csv", "household,kwh\n" + "".join(f"{h},{h % 5}\n" for h in range(50)))
    assert release(path, "dp").exit_code == 0
    for content in (f"household,kwh\n1,{SECRET}\n", f"household,kwh\n1,2,{SECRET}\n", b"household,kwh\n\x00"):
        write(path, content)
        refused(release(path, "dp"), "meters.csv")
    shown = invoke("budget", path, "--json")
    assert shown.exit_code == 0, shown.output
    state = json.loads(shown.stdout)
    assert state["spent"]["epsilon"] == "1" and [c["kind"] for c in state["charges"]] == ["total", "dp"]


def test_a_real_process_refuses_a_ragged_row_with_one_line(tmp_path: Path):
    path = write(tmp_path / "ragged.csv", f"id,kwh\n1,2\n3,4,{SECRET}\n")
    book = tmp_path / "ledger.sqlite"
    done = subprocess.run(
        [str(PRIVNOISE), "release", str(path), "--column", "kwh", "--query", "mean", "--bounds", "0,5", *MODES["dp"]],
        capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "PRIVNOISE_LEDGER": str(book), "COLUMNS": "200"},
    )  # fmt: skip
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr and SECRET not in done.stderr
    assert f"{path}, line 3: 3 field(s) where the header has 2." in done.stderr
    assert not book.exists()


# -- the other commands that read a user's file ---------------------------------------------------------------------

READINGS = {
    "text": (f"time,co2\n0,410\n1,{SECRET}\n", "line 3, column 'co2' (index 1): not a number."),
    "NaN": ("time,co2\n0,410\n1,nan\n", "line 3, column 'co2' (index 1): not finite"),
    "ragged": (f"time,co2\n0,410\n1,411,{SECRET}\n", "line 3: expected 2 field(s) per line; got 3."),
    "quote": (f'time,co2\n0,410\n1,"{SECRET}\n', "line 3: unbalanced double quote."),
    "NUL": (b"time,co2\n0,410\n1,4\x00" + S + b"\n", "line 3: NUL byte"),
    "UTF-8": (b"time,co2\n0,410\n1,\xff" + S + b"\n", "line 3: not UTF-8 text"),
    "long line": (b"time,co2\n0,410\n1," + S * (5 * MIB // len(S)) + b"\n", "line 3: the line is longer than"),
    "fields": (b"time,co2\n" + b",".join([S] * 10_001) + b"\n", "line 2: more fields than the limit of 10,000"),
}


@pytest.mark.parametrize("case", READINGS)
def test_stream_readings(tmp_path: Path, case: str):
    content, rule = READINGS[case]
    path = write(tmp_path / "readings.csv", content)
    result = invoke("stream", "--model", MODEL, "--columns", "co2", "--input", path, "--output", tmp_path / "out.csv")
    refused(result, "readings.csv", rule)


def test_stream_first_line_without_header_is_not_quoted(tmp_path: Path):
    path = write(tmp_path / "readings.csv", f"0,{SECRET}\n1,411\n")
    result = invoke("stream", "--model", MODEL, "--no-header", "--input", path, "--output", tmp_path / "out.csv")
    refused(result, "readings.csv", "line 1: 2 field(s) per line", "the first line (no header) has 2 field(s).")
    folder = tmp_path / "folder.csv"
    folder.mkdir()
    result = invoke("stream", "--model", MODEL, "--columns", "co2", "--input", folder)
    refused(result, "folder.csv", "is a directory")


MODELS = {
    "binary": (bytes(range(256)) + S, "NUL byte"),
    "wrong type": (f'[system]\nA = "{SECRET}"\nB = [[1.0]]\nC = [[1.0]]\n[privacy]\nhorizon = 2\nc = 1\ndelta = 0.1\n',
                   "`A` of `StateSpace` must be a numeric array."),
    "not TOML": (f"[system\nA = {SECRET}\n", "not valid TOML (Expected ']' at the end of a table declaration (at line 1"),
    "inputs not tables": ("inputs = [1, 2]\n[system]\nA = [[0.9]]\nB = [[1.0]]\nC = [[1.0]]\n"
                          "[privacy]\nhorizon = 2\ndelta = 0.1\n", "[[inputs]]: must be a table of keys."),
}


@pytest.mark.parametrize("case", MODELS)
def test_stream_model_files(tmp_path: Path, case: str):
    content, rule = MODELS[case]
    model = write(tmp_path / "model.toml", content)
    readings = write(tmp_path / "readings.csv", "time,co2\n0,410\n")
    refused(invoke("stream", "--model", model, "--columns", "co2", "--input", readings), "model.toml", rule)


MATRICES = {
    "text": (f"1,2\n3,{SECRET}\n", "line 2: entry 2 is not a number."),
    "ragged": ("1,2\n3,4,5\n", "line 2: 3 entries where the rows above have 2."),
    "NaN": ("1,nan\n", "line 1: entry 2 is not finite"),
    "NUL": (b"1,2\n3," + S + b"\x00\n", "line 2: NUL byte"),
    "columns": (",".join(["1"] * 200_001) + "\n", "line 1: more entries than the limit of 10,000"),
    "empty": ("# only a comment\n", "contains no numbers"),
}


@pytest.mark.parametrize("case", MATRICES)
def test_recoverability_matrix_files(tmp_path: Path, case: str):
    content, rule = MATRICES[case]
    path = write(tmp_path / "A.csv", content)
    refused(invoke("recoverability", "--matrix", path, "--rho", "1"), "A.csv", "--matrix", rule)


ADULT = "39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, 2174, 0, 40, " \
        "United-States, <=50K\n"  # fmt: skip
ADULT_CASES = {
    "category": (ADULT.replace("Bachelors", SECRET), "line 1, column 'education' has an unknown category."),
    "number": (ADULT.replace("39", SECRET, 1), "line 1, column 'age' must be a finite number."),
    "label": (ADULT.replace("<=50K", SECRET), "line 1, column 'income' must be <=50K or >50K."),
    "fields": (f"39, {SECRET}\n", "line 1 must have 15 comma-separated fields"),
    "NUL": (ADULT.encode() + S + b"\x00\n", "line 2: NUL byte"),
}


@pytest.mark.parametrize("case", ADULT_CASES)
def test_optimize_adult_files(tmp_path: Path, case: str):
    content, rule = ADULT_CASES[case]
    path = write(tmp_path / "adult.data", content)
    refused(invoke("optimize", "--dataset", "adult", "--adult-file", path), "adult.data", rule)
    assert not ledger().exists()


def test_owner_configuration_and_its_dataset_files(tmp_path: Path):
    pytest.importorskip("fastapi")
    pytest.importorskip("sqlalchemy")
    binary = write(tmp_path / "owner.toml", bytes(range(256)) + S)
    refused(invoke("admin", "init", "--config", binary), "owner.toml", "NUL byte")
    folder = tmp_path / "folder.toml"
    folder.mkdir()
    refused(invoke("admin", "init", "--config", folder), "folder.toml", "is a directory")
    write(tmp_path / "meters.csv", f"id,kwh\n1,2\n2,{SECRET}\n")
    config = write(tmp_path / "owner.toml", '[datasets.meters]\nsource = "meters.csv"\nepsilon = 1\n'
                                            "[datasets.meters.columns.kwh]\nbounds = [0, 5]\n")  # fmt: skip
    refused(invoke("admin", "init", "--config", config), "meters.csv", "line 3, column 'kwh': not a number.")


def test_budget_of_a_loop_of_symbolic_links(tmp_path: Path):
    loop = tmp_path / "loop.csv"
    loop.symlink_to(tmp_path / "other.csv")
    (tmp_path / "other.csv").symlink_to(loop)
    refused(invoke("budget", loop), "loop.csv", "a loop of symbolic links")
