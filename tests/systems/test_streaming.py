"""Streaming sanitizer: window noise, chunk independence, resumption; CSV columns, headers, errors with line numbers."""

from __future__ import annotations

import io

import numpy as np
import pytest

from privnoise.exceptions import InvalidParameterError
from privnoise.systems import (
    GaussianInput,
    StateSpace,
    StreamSanitizer,
    StreamState,
    initial_state_noise,
    sanitize_stream,
    statistical_input_noise,
)
from privnoise.systems.streaming import iter_csv_chunks, stream_csv

SYS = StateSpace(A=[[0.9]], B=[[1.0]], C=[[1.0]])
NOISE = statistical_input_noise(
    SYS, horizon=2, c=2.02, delta=0.1, x0_public=GaussianInput(mean=[90], cov=[[10]])
)


def test_chunking_does_not_change_the_output() -> None:
    y = np.arange(20.0)
    whole = StreamSanitizer(NOISE, rng=1).process(y)
    parts = np.concatenate(list(sanitize_stream([y[:1], y[1:7], y[7:8], y[8:]], NOISE, rng=1)))
    np.testing.assert_array_equal(whole, parts)


def test_noise_law_and_count() -> None:
    s = StreamSanitizer(NOISE, rng=2)
    out = s.process(np.zeros(300_000))
    assert s.state == StreamState(300_000, 0)
    assert np.std(out) == pytest.approx(NOISE.sigma, rel=0.01)


def test_correlated_window_noise_is_kept_across_chunks() -> None:
    mech = initial_state_noise(StateSpace(A=[[1.0, 1.0], [0.0, 1.0]], C=[[1.0, 0.0]]), horizon=3, quality_weight=1.0)
    s = StreamSanitizer(mech, rng=3)
    rows = np.concatenate([s.process(np.zeros(k)) for k in [1, 2, 1] * 20000])  # windows of 4 split 1+2+1
    w = rows.reshape(-1, 4)
    psi = np.array([[1, k] for k in range(4)], dtype=float)
    np.testing.assert_allclose(np.cov(w.T), psi @ mech.initial_covariance @ psi.T, rtol=0.05, atol=0.02)
    with pytest.raises(InvalidParameterError, match="mid-window"):
        StreamSanitizer(mech, state=StreamState(5, 1))


def test_resume_from_state() -> None:
    s = StreamSanitizer(NOISE, rng=4)
    s.process(np.zeros(5))
    resumed = StreamSanitizer(NOISE, rng=5, state=s.state)
    resumed.process(np.zeros(4))
    assert resumed.state == StreamState(9, 0)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("1\n2\nabc\n", "line 3, column index 0: not a number"),
        ("1\nnan\n", "line 2, column index 0: 'nan' is not finite"),
        ("1\n\n3\n", "line 2: missing value"),
        ("1,2\n", r"line 1: expected 1 field\(s\) per line; got 2"),
    ],
)
def test_bad_streams_name_the_line(text: str, match: str) -> None:
    with pytest.raises(InvalidParameterError, match=match):
        list(iter_csv_chunks(io.StringIO(text), chunk_lines=2))


def test_stream_csv_keeps_every_reading() -> None:
    text = "".join(f"{k}\n" for k in range(1001)) + "\n"
    sink = io.StringIO()
    count = stream_csv(io.StringIO(text), sink, NOISE, rng=6, chunk_lines=64)
    assert count == 1001 and len(sink.getvalue().splitlines()) == 1001


TIME_CO2 = "time,co2\n" + "".join(f"2024-01-01T00:{k:02d}:00Z,{400 + k % 7}\n" for k in range(50))


def _noisy(text: str, noise=NOISE, **kwargs) -> str:
    sink = io.StringIO()
    stream_csv(io.StringIO(text), sink, noise, **kwargs)
    return sink.getvalue()


def test_time_column_passes_through_byte_identical_and_values_round_trip() -> None:
    out = _noisy(TIME_CO2, rng=7, columns="co2").splitlines()
    src = TIME_CO2.splitlines()
    assert out[0] == "time,co2" and len(out) == len(src)
    assert [line.split(",")[0] for line in out] == [line.split(",")[0] for line in src]
    values = np.array([float(line.split(",")[1]) for line in src[1:]])
    expected = StreamSanitizer(NOISE, rng=7).process(values)
    assert [line.split(",")[1] for line in out[1:]] == [repr(v) for v in expected.tolist()]
    assert np.array_equal([float(line.split(",")[1]) for line in out[1:]], expected)  # full precision


def test_selection_by_name_and_by_index_agree() -> None:
    by_name = _noisy(TIME_CO2, rng=8, columns="co2")
    assert _noisy(TIME_CO2, rng=8, columns=[1]) == by_name
    assert _noisy(TIME_CO2, rng=8, columns="1") == by_name
    assert _noisy(TIME_CO2, rng=8, columns=["co2"]) == by_name


@pytest.mark.parametrize("chunk_lines", [1, 2, 3, 7, 64, 65_536])
def test_chunk_size_does_not_change_the_output(chunk_lines: int) -> None:
    assert _noisy(TIME_CO2, rng=9, columns="co2", chunk_lines=chunk_lines) == _noisy(
        TIME_CO2, rng=9, columns="co2", chunk_lines=5
    )


def test_columns_map_to_model_outputs_in_the_given_order() -> None:
    sys2 = StateSpace(A=[[0.9]], B=[[1.0]], C=[[1.0], [0.5]])
    noise2 = statistical_input_noise(sys2, horizon=1, c=2.0, delta=0.1)
    text = "id,b,a,site\n" + "".join(f"{k},{k + 0.5},{-k},s{k}\n" for k in range(11))
    out = [line.split(",") for line in _noisy(text, noise2, rng=10, columns="a,b").splitlines()]
    src = [line.split(",") for line in text.splitlines()]
    assert [[r[0], r[3]] for r in out] == [[r[0], r[3]] for r in src]
    y = np.array([[float(r[2]), float(r[1])] for r in src[1:]])  # model output 0 is column a
    expected = StreamSanitizer(noise2, rng=10).process(y)
    np.testing.assert_array_equal([[float(r[2]), float(r[1])] for r in out[1:]], expected)
    # all columns, q = 2: no columns needed; header auto-detected
    both = _noisy("a,b\n1,2\n3,4\n", noise2, rng=11).splitlines()
    assert both[0] == "a,b" and len(both) == 3


def test_header_detection_and_override() -> None:
    assert _noisy("co2\n410\n411\n", rng=1).splitlines()[0] == "co2"
    out = _noisy("0,410\n1,411\n", rng=1, columns=[1]).splitlines()  # numbers: no header
    assert [line.split(",")[0] for line in out] == ["0", "1"]
    with pytest.raises(InvalidParameterError, match=r"line 1, column index 1: not a number: 'co2'"):
        _noisy("time,co2\n0,410\n", rng=1, columns=[1], header=False)
    out = _noisy("1,2\n0,410\n", rng=1, columns=[1], header=True).splitlines()  # numeric names, forced
    assert out[0] == "1,2" and len(out) == 2
    out = _noisy("1,0\n0,410\n", rng=1, columns="0", header=True).splitlines()  # a header name wins
    assert out[1].split(",")[0] == "0" and out[1].split(",")[1] != "410"
    # leading comments, then the header, both copied after the preamble; BOM, CRLF and quotes
    text = '\ufeff# site 4\r\n"time","co2"\r\n"2024-01-01, 00:00",410\r\n"b",411\r\n\r\n'
    raw = _noisy(text, rng=1, columns="co2", preamble="# guarantee\n")
    assert "\r" not in raw and "\ufeff" not in raw
    out = raw.splitlines()
    assert out[:3] == ["# guarantee", "# site 4", '"time","co2"']
    assert [line.rsplit(",", 1)[0] for line in out[3:]] == ['"2024-01-01, 00:00"', '"b"']


def test_empty_input_and_comments_only() -> None:
    assert _noisy("", rng=1, columns="co2") == ""
    assert _noisy("# nothing\n\n\n", rng=1, preamble="# g\n") == "# g\n# nothing\n"


@pytest.mark.parametrize(
    ("text", "kwargs", "match"),
    [
        (TIME_CO2, {}, r"2 field\(s\) per line but the model has q = 1.*--columns.*0 'time', 1 'co2'"),
        (
            TIME_CO2,
            {"columns": "co"},
            r"line 1: no column named 'co'; the header columns are 0 'time', 1 'co2'",
        ),
        (TIME_CO2, {"columns": [2]}, r"column index 2 is out of range \(0\.\.1\)"),
        ("0,410\n", {"columns": "co2"}, r"'co2' is a name, but the input has no header line.*'0,410'"),
        ("a,a\n1,2\n", {"columns": "a"}, "several columns named 'a'"),
        (
            "time,co2\n0,410\n1,4l2\n",
            {"columns": "co2"},
            r"line 3, column 'co2' \(index 1\): not a number: '4l2'",
        ),
        ("time,co2\n0,410\n1,\n", {"columns": "co2"}, r"line 3, column 'co2' \(index 1\): missing value"),
        (
            "time,co2\n0,410\n1,inf\n",
            {"columns": "co2"},
            r"line 3, column 'co2' \(index 1\): 'inf' is not finite",
        ),
        ("time,co2\n0,410\n1,411,5\n", {"columns": "co2"}, r"line 3: expected 2 field\(s\) per line; got 3"),
        ("time,co2\n0,410\n\n1,411\n", {"columns": "co2"}, r"line 3: missing value \(blank line inside"),
        ('time,co2\n"0,410\n', {"columns": "co2"}, r"line 2: unbalanced double quote"),
        (
            "# c\ntime,co2\n0,410\nx,y\n",
            {"columns": 1},
            r"line 4, column 'co2' \(index 1\): not a number: 'y'",
        ),
    ],
)
def test_bad_csv_names_the_line_and_column(text: str, kwargs: dict, match: str) -> None:
    with pytest.raises(InvalidParameterError, match=match):
        _noisy(text, rng=1, chunk_lines=2, **kwargs)


def test_non_numeric_pass_through_cells_are_fine() -> None:
    out = _noisy("id,co2\nabc,410\n,411\n", rng=1, columns="co2").splitlines()
    assert [line.split(",")[0] for line in out] == ["id", "abc", ""]


@pytest.mark.parametrize(
    ("columns", "match"),
    [
        ([1.5], "names or 0-based indices"),
        ([True], "names or 0-based"),
        ([-1], ">= 0"),
        ("a,b", "q = 1"),
        ("", "empty name"),
        ([0, 0], "q = 1"),
    ],
)
def test_bad_columns_are_refused_before_reading(columns, match: str) -> None:
    source = iter(())  # never read
    with pytest.raises(InvalidParameterError, match=match):
        stream_csv(source, io.StringIO(), NOISE, rng=1, columns=columns)


def test_duplicate_selection_is_refused() -> None:
    sys2 = StateSpace(A=[[0.9]], B=[[1.0]], C=[[1.0], [0.5]])
    noise2 = statistical_input_noise(sys2, horizon=1, c=2.0, delta=0.1)
    with pytest.raises(InvalidParameterError, match="selected twice"):
        _noisy("a,b,c\n1,2,3\n", noise2, rng=1, columns="a,0")


@pytest.mark.parametrize("chunk_lines", [1, 2, 3, 100])
def test_blank_lines_only_at_the_end(chunk_lines: int) -> None:
    for text in ("1\n2\n\n \n\n\n", "1\r\n2\r\n\r\n", "1\n2"):
        assert len(_noisy(text, rng=1, chunk_lines=chunk_lines).splitlines()) == 2
    assert [len(b) for b in iter_csv_chunks(["1", "2", "3"], chunk_lines=chunk_lines)] == [
        min(chunk_lines, 3 - k) for k in range(0, 3, chunk_lines)
    ]  # lines without terminators (Python lists) work too
    for text, line in (("1\n\n\n\n2\n", 2), ("1\n2\n \n3\n", 3), ("\n1\n", 1), ("1\n2\n3\n\t\n\n4", 4)):
        with pytest.raises(InvalidParameterError, match=f"line {line}: missing value \\(blank line inside"):
            _noisy(text, rng=1, chunk_lines=chunk_lines)


def test_first_column_and_quoted_lines_in_some_blocks() -> None:
    flags = ["ok", '"door open, window shut"', "", '"a ""quoted"" flag"']
    text = "co2,flag\n" + "".join(f"{400 + k},{flags[k % 4] if k % 9 else 'x'}\n" for k in range(40))
    outs = {chunk: _noisy(text, rng=12, columns="co2", chunk_lines=chunk) for chunk in (1, 3, 8, 64)}
    assert len(set(outs.values())) == 1  # fast path on some blocks, field splitting on others: same output
    out, src = outs[64].splitlines(), text.splitlines()
    assert out[0] == src[0]
    assert [line.split(",", 1)[1] for line in out[1:]] == [line.split(",", 1)[1] for line in src[1:]]
    expected = StreamSanitizer(NOISE, rng=12).process(400.0 + np.arange(40))
    assert [line.split(",", 1)[0] for line in out[1:]] == [repr(v) for v in expected.tolist()]
