"""Delta tables on Spark: read as the Parquet files of their latest version (rows a delete removed are not read
again, partition columns come from the paths), refused when their files alone are not their rows (deletion vectors,
column mapping), in the command line and in the server's Spark datasets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

deltalake = pytest.importorskip("deltalake")
pd = pytest.importorskip("pandas")
pq = pytest.importorskip("pyarrow.parquet")

from privnoise.cli import app  # noqa: E402
from privnoise.exceptions import InvalidParameterError  # noqa: E402
from privnoise.spark.delta import delta_files, is_delta, read_parquet  # noqa: E402

MASTER = "local[2,3]"  # the tests' session (conftest)


def _frame(seed: int, rows: int) -> Any:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"kwh": rng.uniform(0, 60, rows).round(2), "household": rng.integers(0, 100, rows),
                         "region": rng.choice(["north", "south"], rows)})


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """A table written in two commits, then a delete that rewrites files: removed files stay on disk."""
    path = tmp_path_factory.mktemp("delta") / "meters"
    deltalake.write_deltalake(str(path), _frame(1, 600))
    deltalake.write_deltalake(str(path), _frame(2, 400), mode="append")
    deltalake.DeltaTable(str(path)).delete("kwh > 50")
    current = deltalake.DeltaTable(str(path)).to_pandas()
    return path, current


def _log(path: Path, protocol: dict[str, Any], configuration: dict[str, str]) -> Path:
    """A one-version table whose log states ``protocol`` (written by hand: no writer here makes such tables)."""
    (path / "_delta_log").mkdir(parents=True)
    pq.write_table(__import__("pyarrow").table({"x": [1.0, 2.0]}), path / "part-0.parquet")
    mapped = {"delta.columnMapping.id": 1, "delta.columnMapping.physicalName": "col-1"}
    field = {"name": "x", "type": "double", "nullable": True, "metadata": mapped if configuration.get(
        "delta.columnMapping.mode") else {}}
    schema = json.dumps({"type": "struct", "fields": [field]})
    actions = [
        {"protocol": protocol},
        {"metaData": {"id": "t", "format": {"provider": "parquet", "options": {}}, "schemaString": schema,
                      "partitionColumns": [], "configuration": configuration, "createdTime": 1}},
        {"add": {"path": "part-0.parquet", "partitionValues": {}, "size": 100, "modificationTime": 1,
                 "dataChange": True}},
    ]
    (path / "_delta_log" / "00000000000000000000.json").write_text("\n".join(map(json.dumps, actions)) + "\n")
    return path


def test_the_files_are_those_of_the_latest_version(table: tuple[Path, Any]) -> None:
    path, current = table
    files = delta_files(path)
    on_disk = sorted(str(p) for p in path.glob("*.parquet"))
    assert set(files) < set(on_disk)  # the delete left a removed file on disk
    assert sum(pq.read_metadata(f).num_rows for f in files) == len(current) < 1000
    assert sum(pq.read_metadata(f).num_rows for f in on_disk) > len(current)  # read as a directory: rows twice
    assert is_delta(path) and not is_delta(path.parent)


@pytest.mark.parametrize(("protocol", "configuration", "feature"), [
    ({"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": ["deletionVectors"],
      "writerFeatures": ["deletionVectors"]}, {"delta.enableDeletionVectors": "true"}, "deletionVectors"),
    ({"minReaderVersion": 2, "minWriterVersion": 5}, {"delta.columnMapping.mode": "name",
                                                      "delta.columnMapping.maxColumnId": "1"}, "columnMapping"),
])
def test_a_table_whose_files_are_not_its_rows_is_refused(tmp_path: Path, protocol: dict[str, Any],
                                                         configuration: dict[str, str], feature: str) -> None:
    path = _log(tmp_path / "t", protocol, configuration)
    with pytest.raises(InvalidParameterError, match=f"uses {feature}: its Parquet files alone are not its rows"):
        delta_files(path)


def test_a_log_that_cannot_be_read_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "broken" / "_delta_log").mkdir(parents=True)
    (tmp_path / "broken" / "_delta_log" / "00000000000000000000.json").write_text("not json\n")
    with pytest.raises(InvalidParameterError, match="cannot be read"):
        delta_files(tmp_path / "broken")


def test_spark_reads_the_latest_version_with_its_partition_columns(spark, tmp_path: Path) -> None:
    frame = _frame(3, 300)
    deltalake.write_deltalake(str(tmp_path / "p"), frame, partition_by=["region"])
    deltalake.DeltaTable(str(tmp_path / "p")).delete("region = 'south' and kwh < 30")
    current = deltalake.DeltaTable(str(tmp_path / "p")).to_pandas()
    read = read_parquet(spark, tmp_path / "p").toPandas()
    assert len(read) == len(current) < len(frame) and set(read.columns) == {"kwh", "household", "region"}
    counts = read.groupby("region").size().to_dict()
    assert counts == current.groupby("region").size().to_dict()


def test_the_command_line_releases_a_delta_table_as_its_rows_in_memory(spark, table: tuple[Path, Any],
                                                                      tmp_path: Path) -> None:
    path, current = table
    current.to_parquet(tmp_path / "current.parquet")
    ask = ("--column", "kwh", "--query", "mean", "--bounds", "0,60", "--epsilon", "1", "--group-by", "region",
           "--keys", "north,south", "--seed", "5", "--json", "--total-epsilon", "10")
    runner = CliRunner()
    on_delta = runner.invoke(app, ["release", str(path), *ask, "--engine", "spark", "--master", "local[2]",
                                   "--ledger", str(tmp_path / "a.sqlite")])
    in_memory = runner.invoke(app, ["release", str(tmp_path / "current.parquet"), *ask,
                                    "--ledger", str(tmp_path / "b.sqlite")])
    assert on_delta.exit_code == 0 and in_memory.exit_code == 0, (on_delta.output, in_memory.output)
    a, b = json.loads(on_delta.stdout), json.loads(in_memory.stdout)
    assert a["guarantee"] == b["guarantee"] and a["noise"] == b["noise"] and a["keys"] == b["keys"]
    np.testing.assert_allclose(a["value"], b["value"], rtol=1e-9)


def test_a_server_dataset_on_a_delta_table_counts_its_latest_rows(spark, table: tuple[Path, Any],
                                                                  tmp_path: Path) -> None:
    pytest.importorskip("fastapi")
    from privnoise.server.config import load_config
    from privnoise.server.datafiles import DataImportError
    from privnoise.server.spark_engine import check_files

    path, current = table
    text = (f'[datasets.lake]\nsource = "{path}"\nengine = "spark"\nmaster = "{MASTER}"\nepsilon = 1\n'
            '[datasets.lake.columns.kwh]\nbounds = [0, 60]\n')
    (tmp_path / "owner.toml").write_text(text)
    assert check_files(load_config(tmp_path / "owner.toml").datasets["lake"]) == len(current)
    refused = _log(tmp_path / "dv", {"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures":
                                     ["deletionVectors"], "writerFeatures": ["deletionVectors"]}, {})
    (tmp_path / "owner.toml").write_text(text.replace(str(path), str(refused)).replace("columns.kwh", "columns.x"))
    with pytest.raises(DataImportError, match="deletionVectors"):
        check_files(load_config(tmp_path / "owner.toml").datasets["lake"])
