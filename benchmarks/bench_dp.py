"""Throughput of privnoise's hardened and lattice releases against numpy's PCG64 Laplace, measured in the same run.

Usage::

    python benchmarks/bench_dp.py [--n 2000000] [--repeat 5] [--json PATH]

Each figure is values per second of a full release (clamp, round, noise on the 2^k grid) on privnoise's default
cryptographically strong generator, and its ratio to ``Generator(PCG64()).laplace`` (plain floating-point Laplace,
not hardened). Targets, printed and never asserted: hardened Laplace ≥ 0.3× numpy. When installed, OpenDP's vector
Laplace (``make_laplace`` on a vector domain, exact sampler) and diffprivlib's per-value ``Laplace.randomise`` are
measured too, with the ratio ours/OpenDP (target ≥ 100×); they are optional and skipped when absent (their loops
run on fewer values, ``--n-slow``).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import privnoise.random
from privnoise.dp.gaussian import gaussian_for_epsilon_delta
from privnoise.dp.hardening import hardened
from privnoise.dp.laplace import laplace_for_epsilon
from privnoise.dp.lattice import DiscreteGaussian, DiscreteLaplace
from privnoise.mechanisms import L2Laplace


def best_rate(draw: Callable[[], Any], values: int, repeat: int) -> float:
    """Values per second of the fastest of ``repeat`` calls of ``draw`` (after one warm-up call)."""
    draw()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        draw()
        best = min(best, time.perf_counter() - start)
    return values / best


def opendp_rate(n: int, repeat: int) -> float | None:
    try:
        import opendp.prelude as dp
    except ImportError:
        return None
    dp.enable_features("contrib")
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float)
    meas = space >> dp.m.then_laplace(scale=1.0)
    data = [3.7] * n
    return best_rate(lambda: meas(data), n, repeat)


def diffprivlib_rate(n: int, repeat: int) -> float | None:
    try:
        from diffprivlib.mechanisms import Laplace as DPLLaplace
    except Exception:  # ImportError, or an incompatible scikit-learn at import time
        return None
    mech = DPLLaplace(epsilon=1.0, sensitivity=1.0)
    return best_rate(lambda: [mech.randomise(3.7) for _ in range(n)], n, repeat)


def run(n: int, n_slow: int, repeat: int) -> dict[str, Any]:
    pcg = np.random.Generator(np.random.PCG64())
    numpy_laplace = best_rate(lambda: pcg.laplace(0.0, 1.0, n), n, repeat)
    values = np.full(n, 3.7)
    cases = [
        (
            "hardened Laplace",
            hardened(laplace_for_epsilon(1.0, sensitivity=1.0), sensitivity=1.0, bound=100.0),
        ),
        (
            "hardened Gaussian",
            hardened(gaussian_for_epsilon_delta(1.0, 1e-6, sensitivity=1.0), sensitivity=1.0, bound=100.0),
        ),
        ("lattice discrete Laplace", hardened(DiscreteLaplace(scale=1.0), sensitivity=1.0, bound=100.0)),
        ("lattice discrete Gaussian", hardened(DiscreteGaussian(sigma=4.0), sensitivity=1.0, bound=100.0)),
    ]
    rows = []
    for label, mech in cases:
        rate = best_rate(lambda m=mech: m.release(values), n, repeat)
        rows.append({"mechanism": label, "per_s": rate, "ratio_numpy": rate / numpy_laplace})
    hardened_laplace = rows[0]["per_s"]
    # ℓ2-Laplace vectors (dim 3): values per second counts every coordinate, vectors per second is that / 3.
    l2 = L2Laplace(epsilon=1.0, dim=3)
    rate = best_rate(lambda: l2.sample(n // 3), 3 * (n // 3), repeat)
    rows.append(
        {
            "mechanism": "ℓ2-Laplace, dim 3 (values)",
            "per_s": rate,
            "ratio_numpy": rate / numpy_laplace,
            "vectors_per_s": rate / 3,
        }
    )
    others = []
    for label, fn in (
        ("OpenDP vector Laplace", opendp_rate),
        ("diffprivlib Laplace (per value)", diffprivlib_rate),
    ):
        rate = fn(n_slow, max(1, repeat // 2))
        others.append(
            {
                "mechanism": label,
                "per_s": rate,
                "ratio_numpy": None if rate is None else rate / numpy_laplace,
                "ours_over_it": None if rate is None else hardened_laplace / rate,
            }
        )
    generator = privnoise.random.default_rng()
    return {
        "n": n,
        "n_slow": n_slow,
        "repeat": repeat,
        "numpy_pcg64_laplace_per_s": numpy_laplace,
        "default_bit_generator": type(generator.bit_generator).__name__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "results": rows,
        "external": others,
        "targets": {"hardened_laplace_ratio_numpy": 0.3, "ours_over_opendp": 100.0},
    }


def print_report(report: dict[str, Any]) -> None:
    print(
        f"privnoise hardened/lattice releases, n = {report['n']:.0e}, best of {report['repeat']}; "
        f"default rng = {report['default_bit_generator']}; numpy PCG64 Laplace = "
        f"{report['numpy_pcg64_laplace_per_s']:.3g}/s"
    )
    print(f"{'mechanism':34s} {'values/s':>10s} {'÷ numpy':>9s} {'ours ÷ it':>10s}")
    for r in report["results"]:
        print(f"{r['mechanism']:34s} {r['per_s']:10.3g} {r['ratio_numpy']:9.3f} {'':>10s}")
    for r in report["external"]:
        if r["per_s"] is None:
            print(f"{r['mechanism']:34s} {'not installed / not importable':>31s}")
        else:
            print(
                f"{r['mechanism']:34s} {r['per_s']:10.3g} {r['ratio_numpy']:9.2e} {r['ours_over_it']:10.0f}"
            )
    print("targets (not asserted): hardened Laplace ≥ 0.3× numpy; ours ÷ OpenDP ≥ 100×")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--n", type=int, default=2_000_000, help="values per timed call (default 2e6)")
    parser.add_argument("--n-slow", type=int, default=20_000, help="values per call for OpenDP/diffprivlib")
    parser.add_argument("--repeat", type=int, default=5, help="timed calls per figure; the best is kept")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    args = parser.parse_args(argv)
    if args.n < 2 or args.n_slow < 1 or args.repeat < 1:
        parser.error("--n must be >= 2, --n-slow >= 1 and --repeat >= 1")
    report = run(args.n, args.n_slow, args.repeat)
    print_report(report)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(report, fh, indent=2)
            fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
