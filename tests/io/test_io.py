"""pn.io: arrays, frames, tables, CSV and Parquet, whole and in chunks; missing values; optional dependencies."""

from __future__ import annotations

import builtins
import sys

import numpy as np
import pytest

import privnoise as pn
from privnoise.exceptions import DimensionError, InvalidParameterError, MissingExtraError

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pl = pytest.importorskip("polars")

VALUES = [0.5, 1.25, -3.0, 7.0, 2.0]


def test_arrays_frames_series_and_tables_read_alike():
    expected = np.array(VALUES)
    inputs = [
        VALUES,
        np.array(VALUES, dtype=np.float32).astype(np.float64),
        pd.Series(VALUES, name="kwh"),
        pd.DataFrame({"kwh": VALUES}),
        pl.Series("kwh", VALUES),
        pl.DataFrame({"kwh": VALUES, "id": range(5)}),
        pa.array(VALUES),
        pa.chunked_array([VALUES[:2], VALUES[2:]]),
        pa.table({"kwh": VALUES, "region": list("nnsss")}),
    ]
    for data in inputs:
        column = "kwh" if hasattr(data, "columns") or hasattr(data, "column_names") else None
        np.testing.assert_array_equal(pn.io.read(data, column), expected)
    np.testing.assert_array_equal(pn.io.read(np.arange(3)), [0.0, 1.0, 2.0])


def test_files_csv_and_parquet(tmp_path):
    csv = tmp_path / "meters.csv"
    csv.write_bytes("\ufeffid;kwh\n1;0.5\n2;1.25\n3;-3\n4;7\n5;2\n\n".encode())  # BOM, ';', trailing blank line
    parquet = tmp_path / "meters.parquet"
    pq.write_table(pa.table({"id": range(5), "kwh": VALUES}), parquet, row_group_size=2)
    for path in (csv, parquet, str(parquet)):
        np.testing.assert_array_equal(pn.io.read(path, "kwh"), VALUES)
    source = pn.io.chunks(parquet, "kwh", chunk_size=2)
    assert len(source) == 5 and [c.tolist() for c in source] == [[0.5, 1.25], [-3.0, 7.0], [2.0]]
    assert [c.tolist() for c in source] == [[0.5, 1.25], [-3.0, 7.0], [2.0]]  # re-readable
    tabbed = tmp_path / "tabbed.tsv"
    tabbed.write_text("kwh\tnote\n1.5\ta\n2\tb\n", encoding="utf-8")
    assert pn.io.read(tabbed, "kwh").tolist() == [1.5, 2.0]


@pytest.mark.parametrize(
    "text, missing, expected",
    [
        ("kwh,id\n1,a\n,b\n3,c\n", "drop", [1.0, 3.0]),
        ("kwh,id\n1,a\n,b\n3,c\n", 0.0, [1.0, 0.0, 3.0]),
    ],
)
def test_missing_value_policies_in_csv(tmp_path, text, missing, expected):
    path = tmp_path / "m.csv"
    path.write_text(text, encoding="utf-8")
    assert pn.io.read(path, "kwh", missing=missing).tolist() == expected
    with pytest.raises(InvalidParameterError, match=r"line 3, column 'kwh': missing value"):
        pn.io.read(path, "kwh")


@pytest.mark.parametrize("missing", ["error", "drop", 0.0])
def test_a_ragged_row_is_refused_whatever_the_missing_policy(tmp_path, missing):
    path = tmp_path / "m.csv"
    path.write_text("id,kwh\na,1\nb\nc,3\n", encoding="utf-8")
    with pytest.raises(InvalidParameterError, match=r"line 3: 1 field\(s\) where the header has 2"):
        pn.io.read(path, "kwh", missing=missing)


def test_missing_values_in_frames_tables_and_parquet(tmp_path):
    frames = [
        pd.Series([1.0, None, 3.0]),
        pd.Series([1.0, np.nan, 3.0]),
        pd.Series([1, None, 3], dtype="Int64"),
        pl.Series([1.0, None, 3.0]),
        pa.array([1.0, None, 3.0]),
    ]
    for data in frames:
        with pytest.raises(InvalidParameterError, match="row 1 is missing"):
            pn.io.read(data)
        assert pn.io.read(data, missing="drop").tolist() == [1.0, 3.0]
        assert pn.io.read(data, missing=-1.0).tolist() == [1.0, -1.0, 3.0]
    path = tmp_path / "gaps.parquet"
    pq.write_table(pa.table({"kwh": [1.0, 2.0, None]}), path)
    with pytest.raises(InvalidParameterError, match="row 2 is missing"):
        pn.io.read(path, "kwh")
    assert pn.io.read(path, "kwh", missing="drop").tolist() == [1.0, 2.0]


@pytest.mark.parametrize(
    "data, column, match",
    [
        (np.array([1.0, np.inf]), None, "finite"),
        (pd.Series([1.0, np.inf]), None, "NaN and inf are refused"),
        (pd.Series(["a", "b"]), None, "not numbers"),
        (pd.DataFrame({"a": [1.0], "b": [2.0]}), None, "column"),
        (pd.DataFrame({"a": [1.0]}), "b", "'b' is not a column"),
        (pa.array(["x"]), None, "not numbers"),
        ("data.xlsx", "kwh", ".csv or .parquet"),
        ("data.parquet", None, "column"),
        (object(), None, "array"),
    ],
)
def test_bad_inputs(data, column, match):
    with pytest.raises(InvalidParameterError, match=match):
        pn.io.read(data, column)


def test_parquet_without_pyarrow_names_the_extra(tmp_path, monkeypatch):
    real_import = builtins.__import__

    def no_pyarrow(name, *args, **kwargs):
        if name.split(".")[0] == "pyarrow":
            raise ModuleNotFoundError(name, name=name)
        return real_import(name, *args, **kwargs)

    for module in [m for m in sys.modules if m.split(".")[0] == "pyarrow"]:
        monkeypatch.delitem(sys.modules, module)
    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    with pytest.raises(MissingExtraError) as info:
        pn.io.read(tmp_path / "x.parquet", "kwh")
    message = str(info.value)
    assert "\n" not in message and "pip install 'privnoise[data]'" in message and "pyarrow" in message
    csv = tmp_path / "ok.csv"
    csv.write_text("kwh\n1\n2\n", encoding="utf-8")
    assert pn.io.read(csv, "kwh").tolist() == [1.0, 2.0]  # CSV still works, by the strict reader


def test_small_files_are_read_by_the_strict_reader_alone_and_agree_with_the_fast_one(tmp_path, monkeypatch):
    from privnoise.io import csv_files

    values = np.round(np.random.default_rng(1).uniform(-5, 60, 2_000), 4)
    path = tmp_path / "small.csv"
    path.write_text("id;kwh\n" + "\n".join(f"{i};{v}" for i, v in enumerate(values)) + "\n", encoding="utf-8")
    assert path.stat().st_size <= csv_files.STRICT_READER_BYTES
    strict = np.concatenate(list(pn.io.chunks(path, "kwh", chunk_size=700)))
    monkeypatch.setattr(csv_files, "STRICT_READER_BYTES", 0)
    fast = np.concatenate(list(pn.io.chunks(path, "kwh", chunk_size=700)))
    np.testing.assert_array_equal(strict, values)
    np.testing.assert_array_equal(fast, values)


def test_csv_chunks_hand_over_between_readers_at_row_boundaries(tmp_path):
    rows = 50_000
    values = np.round(np.random.default_rng(0).uniform(0, 60, rows), 3)
    text = "kwh\n" + "\n".join(f"{v:.3f}" for v in values) + "\n"
    path = tmp_path / "big.csv"
    path.write_text(text.replace(f"\n{values[30_000]:.3f}\n", f"\n {values[30_000]:.3f}\n", 1), encoding="utf-8")
    got = np.concatenate(list(pn.io.chunks(path, "kwh", chunk_size=7_000)))
    np.testing.assert_array_equal(got, values)


# -- releases over chunks -------------------------------------------------------------------------------------------


@pytest.fixture
def meters(tmp_path):
    rng = np.random.default_rng(4)
    values = np.round(rng.uniform(0.0, 60.0, 200_003), 2)
    path = tmp_path / "meters.parquet"
    pq.write_table(pa.table({"kwh": values}), path, row_group_size=1 << 16)
    csv = tmp_path / "meters.csv"
    csv.write_text("kwh\n" + "\n".join(f"{v:.2f}" for v in values) + "\n", encoding="utf-8")
    return values, path, csv


def test_chunked_releases_equal_in_memory_releases(meters, tmp_path):
    values, parquet, csv = meters
    n = values.size
    mean = pn.queries.mean(n, bounds=(0.0, 60.0))
    lap = pn.dp.laplace_for_epsilon(1.0, sensitivity=mean.sensitivity())
    in_memory = pn.release(values, mean, lap, rng=9)
    for source in (pn.io.chunks(parquet, "kwh", chunk_size=1 << 16), pn.io.chunks(csv, "kwh", chunk_size=1 << 17)):
        chunked = pn.release(source, mean, lap, rng=9)
        assert chunked.value == in_memory.value and chunked.guarantee.epsilon == in_memory.guarantee.epsilon
    ident = pn.queries.identity(n, bounds=(0.0, 60.0))
    gauss = pn.fisher.optimal_noise(ident, quality_budget=float(n))
    whole = pn.release(values, ident, gauss, rng=5).value
    for suffix in (".npy", ".parquet", ".csv"):
        out = tmp_path / f"noisy{suffix}"
        rel = pn.release(pn.io.chunks(parquet, "kwh", chunk_size=1 << 16), ident, gauss, rng=5, out=out)
        assert rel.value is None and rel.output == str(out) and out.exists()
        written = np.load(out) if suffix == ".npy" else pn.io.read(out, "value")
        np.testing.assert_array_equal(written, whole)
        assert not (tmp_path / f"noisy{suffix}.partial").exists()


def test_a_failed_chunked_release_leaves_no_output(meters, tmp_path):
    values, parquet, _ = meters
    n = values.size
    narrow = pn.queries.identity(n, bounds=(0.0, 30.0))  # many records lie above 30
    out = tmp_path / "noisy.npy"
    with pytest.raises(InvalidParameterError, match="outside the declared bounds"):
        pn.release(pn.io.chunks(parquet, "kwh"), narrow, pn.mechanisms.Gaussian.from_std(1.0, n), out=out)
    assert not out.exists() and not (tmp_path / "noisy.npy.partial").exists()
    wrong = pn.queries.mean(n + 1, bounds=(0.0, 60.0))
    with pytest.raises(DimensionError, match="length"):
        pn.release(pn.io.chunks(parquet, "kwh"), wrong, pn.mechanisms.Laplace(scale=1.0))
    csv_wrong = pn.queries.identity(n - 1, bounds=(0.0, 60.0))
    with pytest.raises(DimensionError, match="length"):
        pn.release(pn.io.chunks(_write_csv(tmp_path, values), "kwh"), csv_wrong, pn.mechanisms.Gaussian.from_std(1.0, n - 1), out=out)
    assert not out.exists()


def _write_csv(tmp_path, values):
    path = tmp_path / "again.csv"
    path.write_text("kwh\n" + "\n".join(f"{v:.2f}" for v in values) + "\n", encoding="utf-8")
    return path


def test_release_takes_frames_and_iterators_of_chunks():
    values = np.linspace(0.0, 1.0, 1000)
    q = pn.queries.mean(1000, bounds=(0.0, 1.0))
    noise = pn.mechanisms.Laplace(scale=0.01)
    reference = pn.release(values, q, noise, rng=3).value
    assert pn.release(pd.Series(values), q, noise, rng=3).value == reference
    assert pn.release(pl.Series(values), q, noise, rng=3).value == reference
    assert pn.release(pn.io.chunks(pd.DataFrame({"kwh": values}), "kwh"), q, noise, rng=3).value == reference
    assert pn.release(iter(np.split(values, 4)), q, noise, rng=3).value == reference
    with pytest.raises(InvalidParameterError, match="finite"):
        pn.release(iter([values[:500], np.full(500, np.nan)]), q, noise)


def test_a_small_csv_table_is_the_arrow_tables_columns_and_answers_alike(tmp_path, monkeypatch):
    """The strict reader's columns of a small CSV file of numbers equal pyarrow's table column by column, and a seeded
    session answers the same from either; a text column keeps pyarrow's inferred type (the Arrow table)."""
    from privnoise.io import csv_files
    from privnoise.io.tables import table

    rng = np.random.default_rng(3)
    values, weights = np.round(rng.uniform(0, 60, 500), 3), rng.integers(1, 9, 500)
    path = tmp_path / "small.csv"
    path.write_text("kwh;weight;region\n" + "\n".join(
        f" {v};{w};{r}" for v, w, r in zip(values, weights, rng.choice(["7", "8"], 500), strict=True)) + "\n",
        encoding="utf-8")  # fmt: skip
    small = table(path, numeric=["kwh", "weight"])
    monkeypatch.setattr(csv_files, "STRICT_READER_BYTES", 0)
    arrow = table(path, numeric=["kwh", "weight"])
    assert isinstance(small, dict) and isinstance(arrow, pa.Table)
    for name in ("kwh", "weight"):
        np.testing.assert_array_equal(small[name], arrow.column(name).to_numpy())

    def answers(data):
        session = pn.Session(data, epsilon=1.0, rng=7)
        return session.mean("kwh", bounds=(0, 60), epsilon=0.5).value, session.sum("weight", bounds=(0, 9), epsilon=0.5).value

    assert answers(small) == answers(arrow)
    monkeypatch.undo()
    keyed = table(path, numeric=["kwh"], text=["region"])
    assert isinstance(keyed, pa.Table) and keyed.column("region").type == pa.int64()  # inferred, as for large files
