"""Throughput of privnoise's samplers against numpy's own PCG64 samplers, measured in the same run.

Usage::

    python benchmarks/bench_samplers.py [--n 10000000] [--repeat 5] [--json PATH]

For each mechanism it reports samples per second on the default cryptographically strong generator
(``rng=None``) and on a seeded privnoise generator (``rng=privnoise.random.default_rng(1)``), and the ratio
of each to numpy's ``Generator(PCG64())`` drawing the closest plain distribution (``.laplace`` for Laplace
and the raised cosine, ``.normal`` for the Gaussians). A ratio of 1.0 means "as fast as numpy". Each figure
is the median of ``--repeat`` interleaved rounds (every case once per round); the 2-D Gaussian counts scalar values
(two per draw). Target (printed in the issue, never asserted): the raised cosine ≥ 0.8× numpy's Laplace.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import privnoise.random
from privnoise.mechanisms import Gaussian, Laplace, RaisedCosine


def cases(n: int) -> list[tuple[str, Any, int, str]]:
    """(label, mechanism, draws, numpy reference) with ``draws`` chosen so that each case makes n values."""
    return [
        ("RaisedCosine [0.3, 1.7]", RaisedCosine(lower=0.3, upper=1.7), n, "laplace"),
        ("Gaussian scalar", Gaussian(cov=2.0), n, "normal"),
        ("Gaussian 2-D correlated", Gaussian(cov=[[2.0, 1.2], [1.2, 1.0]]), n // 2, "normal"),
        ("Laplace scalar", Laplace(scale=0.5), n, "laplace"),
    ]


def interleaved_seconds(calls: dict[str, Callable[[], Any]], rounds: int) -> dict[str, float]:
    """Median seconds of each call over ``rounds`` rounds, every call once per round (after one warm-up each), so a
    change of machine load hits every case alike."""
    for call in calls.values():
        call()
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            start = time.perf_counter()
            call()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(seconds) for name, seconds in times.items()}


def run(n: int, repeat: int) -> dict[str, Any]:
    pcg = np.random.Generator(np.random.PCG64())
    default_generator = privnoise.random.default_rng()
    seeded = privnoise.random.default_rng(1)
    calls: dict[str, Callable[[], Any]] = {
        "laplace": lambda: pcg.laplace(0.0, 1.0, n),
        "normal": lambda: pcg.normal(0.0, 1.0, n),
    }
    for label, mechanism, draws, _ in cases(n):
        calls[f"{label} csprng"] = lambda m=mechanism, k=draws: m.sample(k)
        calls[f"{label} seeded"] = lambda m=mechanism, k=draws: m.sample(k, rng=seeded)
    seconds = interleaved_seconds(calls, repeat)
    numpy_rate = {name: n / seconds[name] for name in ("laplace", "normal")}
    rows = []
    for label, mechanism, draws, reference in cases(n):
        values = draws * mechanism.dim
        csprng = values / seconds[f"{label} csprng"]
        seeded_rate = values / seconds[f"{label} seeded"]
        rows.append(
            {
                "mechanism": label,
                "values_per_call": values,
                "csprng_per_s": csprng,
                "seeded_per_s": seeded_rate,
                "numpy_reference": f"PCG64.{reference}",
                "numpy_per_s": numpy_rate[reference],
                "csprng_ratio": csprng / numpy_rate[reference],
                "seeded_ratio": seeded_rate / numpy_rate[reference],
            }
        )
    return {
        "n": n,
        "repeat": repeat,
        "default_bit_generator": type(default_generator.bit_generator).__name__,
        "seeded_bit_generator": type(seeded.bit_generator).__name__,
        "aesni": bool(getattr(default_generator.bit_generator, "use_aesni", False)),
        "numpy": np.__version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "load_average": os.getloadavg(),
        "results": rows,
    }


def print_report(report: dict[str, Any]) -> None:
    title = (
        f"privnoise samplers, n = {report['n']:.0e}, median of {report['repeat']} interleaved rounds; default rng = "
        f"{report['default_bit_generator']} (AES-NI: {report['aesni']}), seeded rng = "
        f"{report['seeded_bit_generator']}; load average {tuple(round(x, 2) for x in report['load_average'])}"
    )
    header = [
        "mechanism",
        "CSPRNG /s",
        "seeded /s",
        "numpy ref",
        "numpy /s",
        "CSPRNG ÷ numpy",
        "seeded ÷ numpy",
    ]
    lines = [
        [
            r["mechanism"],
            f"{r['csprng_per_s']:.3g}",
            f"{r['seeded_per_s']:.3g}",
            r["numpy_reference"],
            f"{r['numpy_per_s']:.3g}",
            f"{r['csprng_ratio']:.2f}",
            f"{r['seeded_ratio']:.2f}",
        ]
        for r in report["results"]
    ]
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        widths = [max(len(h), *(len(row[i]) for row in lines)) for i, h in enumerate(header)]
        print(title)
        print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
        for row in lines:
            print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))
        return
    table = Table(title=title)
    for i, h in enumerate(header):
        table.add_column(h, justify="left" if i in (0, 3) else "right")
    for row in lines:
        table.add_row(*row)
    Console(width=None if sys.stdout.isatty() else 140).print(table)  # no squeezing when piped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10_000_000, help="values per timed call (default 1e7)")
    parser.add_argument("--repeat", type=int, default=7, help="interleaved rounds; the median is kept")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    args = parser.parse_args(argv)
    if args.n < 2 or args.repeat < 1:
        parser.error("--n must be >= 2 and --repeat >= 1")
    report = run(args.n, args.repeat)
    print_report(report)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(report, fh, indent=2)
            fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
