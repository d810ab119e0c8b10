"""Streaming sanitizer: window noise, chunk independence, resumption, CSV errors with line numbers."""

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
    example4_system,
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
    mech = initial_state_noise(example4_system(), horizon=3, quality_weight=1.0)
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
        ("1\n2\nabc\n", "line 3: not a number"),
        ("1\nnan\n", "line 2: 'nan' is not finite"),
        ("1\n\n3\n", "line 2: missing value"),
        ("1,2\n", "line 1: expected 1 value"),
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
