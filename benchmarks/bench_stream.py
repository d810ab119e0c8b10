"""Throughput and peak memory of ``privnoise stream`` on a 1-million-line file.

Run: ``python benchmarks/bench_stream.py [lines]``. Prints readings/s of the streaming sanitizer (parse, noise,
format, write), numpy's own normal sampler on the same count as a ratio reference, and the peak RSS
(resource.getrusage), which stays bounded because the file is processed in blocks of 65 536 lines.
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


def main(lines: int = 1_000_000) -> None:
    sys_ = StateSpace(A=[[0.9]], B=[[1.0]], C=[[1.0]], D=[[0.0]])
    noise = statistical_input_noise(
        sys_, horizon=2, c=2.02, delta=0.1, x0_public=GaussianInput(mean=[90], cov=[[10]])
    )
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "in.csv", Path(tmp) / "out.csv"
        g = np.random.default_rng(0)
        with src.open("w") as f:
            for start in range(0, lines, 100_000):
                block = 400 + 30 * g.standard_normal(min(100_000, lines - start))
                f.write("\n".join(f"{v:.3f}" for v in block) + "\n")
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        t0 = time.perf_counter()
        with src.open() as fin, dst.open("w") as fout:
            count = stream_csv(fin, fout, noise)
        elapsed = time.perf_counter() - t0
        rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        assert count == lines == sum(1 for _ in dst.open())
        t1 = time.perf_counter()
        np.random.default_rng().normal(size=lines)
        numpy_rate = lines / (time.perf_counter() - t1)
    rate = count / elapsed
    print(f"readings: {count}; time {elapsed:.2f} s; {rate:,.0f} readings/s")
    print(f"numpy normal sampler alone: {numpy_rate:,.0f}/s (stream/numpy ratio {rate / numpy_rate:.4f})")
    print(
        f"peak RSS: {rss_after / 1024:.1f} MiB (before streaming {rss_before / 1024:.1f} MiB; input file "
        f"{src.stat().st_size / 2**20 if src.exists() else lines * 8 / 2**20:.1f} MiB)"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
