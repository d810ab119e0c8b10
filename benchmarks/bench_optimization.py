"""Iterations per second of private gradient descent (Theorem 1 noise) against the same loop without noise.

python benchmarks/bench_optimization.py
"""

from __future__ import annotations

import time

import numpy as np

import privnoise.optimization as po
from privnoise.mechanisms import Gaussian
from privnoise.optimization.descent import run_iterations


def _rate(fn, iterations: int) -> float:
    best = np.inf
    for _ in range(3):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return iterations / best


def main() -> None:
    iterations = 200
    print("iterations/s of projected gradient descent on a box-constrained QP, T = 200, best of 3")
    print(
        f"{'n':>6} {'noisy loop':>12} {'plain loop':>12} {'ratio':>7} {'full call':>12}"
        "   (noisy loop = Theorem 1 noise drawn from the CSPRNG + the loop; full call adds set-up and guarantee)"
    )
    for n in (10, 100, 1000):
        rng = np.random.default_rng(n)
        m = rng.standard_normal((n, n)) / np.sqrt(n)
        prob = po.QuadraticProgram(
            m @ m.T + np.eye(n), rng.standard_normal(n), constraint=po.Box(-np.ones(n), np.ones(n))
        )
        steps = np.full(iterations, 1.0 / prob.smoothness)
        x0 = np.zeros(n)
        noise = Gaussian.from_std(np.sqrt(0.1 / n), n)

        def noisy_loop(prob=prob, x0=x0, steps=steps, noise=noise) -> None:
            run_iterations(prob, x0, steps, noise.sample(iterations))

        noisy = _rate(noisy_loop, iterations)
        plain = _rate(lambda prob=prob, x0=x0, steps=steps: run_iterations(prob, x0, steps, None), iterations)
        full = _rate(
            lambda prob=prob: po.private_gradient_descent(prob, noise_variance=0.1, iterations=iterations),
            iterations,
        )
        print(f"{n:>6} {noisy:>12.4g} {plain:>12.4g} {noisy / plain:>7.2f} {full:>12.4g}")


if __name__ == "__main__":
    main()
