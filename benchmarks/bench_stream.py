"""Throughput and peak memory of ``privnoise stream`` on a 1-million-line ``time,value`` file.

Run: ``python benchmarks/bench_stream.py [lines]``. Streams a CSV with a header and two columns (an integer time
stamp copied unchanged, a CO₂ reading that receives the noise; ``columns="value"``) and prints lines/s of the
streaming sanitizer (parse, noise, format, write) and the peak RSS (resource.getrusage), which stays bounded
because the file is processed in blocks of 65 536 lines. As references in the same run: the same readings as a
one-column file (every field noised), and numpy's own normal sampler on the same count (ratio).
"""

from __future__ import annotations

import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from privnoise.systems import GaussianInput, StateSpace, statistical_input_noise
from privnoise.systems.streaming import stream_csv


def _write(path: Path, lines: int, *, with_time: bool) -> None:
    g = np.random.default_rng(0)
    with path.open("w") as f:
        if with_time:
            f.write("time,value\n")
        for start in range(0, lines, 100_000):
            block = 400 + 30 * g.standard_normal(min(100_000, lines - start))
            if with_time:
                f.write("\n".join(f"{start + k},{v:.3f}" for k, v in enumerate(block)) + "\n")
            else:
                f.write("\n".join(f"{v:.3f}" for v in block) + "\n")


def _stream(src: Path, dst: Path, noise: object, columns: str | None) -> tuple[int, float]:
    t0 = time.perf_counter()
    with src.open() as fin, dst.open("w") as fout:
        count = stream_csv(fin, fout, noise, columns=columns)
    return count, time.perf_counter() - t0


def main(lines: int = 1_000_000) -> None:
    sys_ = StateSpace(A=[[0.9]], B=[[1.0]], C=[[1.0]], D=[[0.0]])
    noise = statistical_input_noise(
        sys_, horizon=2, c=2.02, delta=0.1, x0_public=GaussianInput(mean=[90], cov=[[10]])
    )
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "in.csv", Path(tmp) / "out.csv"
        _write(src, lines, with_time=True)
        size = src.stat().st_size
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        count, elapsed = _stream(src, dst, noise, "value")
        rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        with src.open() as a, dst.open() as b:
            next(a), next(b)
            n_out = 0
            for line_in, line_out in zip(a, b, strict=True):  # time column copied byte for byte
                assert line_in.split(",")[0] == line_out.split(",")[0]
                n_out += 1
        assert count == lines == n_out
        src1 = Path(tmp) / "in1.csv"
        _write(src1, lines, with_time=False)
        count1, elapsed1 = _stream(src1, dst, noise, None)
        assert count1 == lines
        t1 = time.perf_counter()
        np.random.Generator(np.random.PCG64()).normal(
            size=lines
        )  # the numpy reference, as in every benchmark
        numpy_rate = lines / (time.perf_counter() - t1)
    rate, rate1 = count / elapsed, count1 / elapsed1
    print(f"time,value file ({size / 2**20:.1f} MiB): {count} lines in {elapsed:.2f} s; {rate:,.0f} lines/s")
    print(f"peak RSS: {rss_after / 1024:.1f} MiB (before streaming {rss_before / 1024:.1f} MiB)")
    print(
        f"one-column file (every field noised): {rate1:,.0f} lines/s (time,value / one-column {rate / rate1:.2f})"
    )
    print(
        f"numpy normal sampler alone: {numpy_rate:,.0f}/s (time,value stream / numpy ratio {rate / numpy_rate:.4f})"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
