"""The fused snapping kernels against exact rational arithmetic: every chunk, every grid, half-way points on both
sides, the range check, and zeros that carry no sign."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from privnoise.exceptions import InvalidParameterError
from privnoise.snapping import CHUNK, lattice_add, lattice_sum, snapped_add, snapped_sum


def exact_snap(v: np.ndarray, w: np.ndarray, exponent: int) -> list[float]:
    grid = Fraction(2) ** exponent
    return [float(round((Fraction(a) + Fraction(b)) / grid) * grid) for a, b in zip(v, w, strict=True)]


@pytest.mark.parametrize("exponent", [-40, -3, 0, 7, 950])
def test_snapped_sum_is_the_rounded_exact_sum_across_chunks(exponent):
    rng = np.random.default_rng(exponent + 100)
    n = CHUNK + 1234  # two chunks, the second partial
    scale = math.ldexp(1.0, exponent)
    v = rng.uniform(-1000, 1000, n) * scale
    w = rng.normal(size=n) * 37.0 * scale
    picks = rng.choice(n, 3000, replace=False)
    got = snapped_sum(v, w.copy(), exponent)
    assert got[picks].tolist() == exact_snap(v[picks], w[picks], exponent)


@pytest.mark.parametrize("exponent", [-3, 0, 950])
def test_half_way_doubles_follow_the_exact_sum(exponent):
    grid = math.ldexp(1.0, exponent)
    tiny = math.ldexp(1.0, exponent - 80)
    # the double sum lands half-way; the exact sum lies just above, just below, or exactly on the half-way point
    v = np.array([0.5, 0.5, 0.5, -0.5, -0.5, 2.5, -2.5]) * grid
    w = np.array([tiny, -tiny, 0.0, tiny, -tiny, 0.0, 0.0])
    assert snapped_sum(v, w.copy(), exponent).tolist() == exact_snap(v, w, exponent)
    assert exact_snap(v, w, exponent) == [grid, 0.0, 0.0, 0.0, -grid, 2 * grid, -2 * grid]


def test_snapped_add_fills_by_chunk_and_checks_the_range():
    v = np.zeros(3 * CHUNK + 5)
    seen = []

    def fill(buffer, start):
        seen.append((start, buffer.size))
        buffer[...] = 0.25

    assert np.array_equal(snapped_add(v, fill, 0, in_range=True), np.zeros(v.size))
    assert [s for s, _ in seen] == [0, CHUNK, 2 * CHUNK, 3 * CHUNK] and sum(k for _, k in seen) == v.size
    with pytest.raises(InvalidParameterError, match="2\\^50"):
        snapped_sum(np.array([2.0**51]), np.zeros(1), 0)


def test_zero_outputs_are_positive():
    v = np.array([-(2.0**-30), 2.0**-30, -0.0, 0.0])
    assert not np.signbit(snapped_sum(v, np.full(4, -(2.0**-31)), 0)).any()
    assert not np.signbit(lattice_sum(v, np.array([-0.0, -0.0, 0.0, -0.0]), 0)).any()

    def fill(buffer, start):
        buffer[...] = -0.0

    assert not np.signbit(lattice_add(v, fill, 0, bound=1.0)).any()


def test_a_subclass_that_draws_otherwise_is_drawn_from():
    """The chunked kernels draw with the family's own sampler only: a subclass's ``_sample`` / ``_units`` is used."""
    from dataclasses import dataclass

    from privnoise.mechanisms import Gaussian, Laplace
    from privnoise.mechanisms.discrete import DiscreteGaussian
    from privnoise.mechanisms.hardening import hardened

    @dataclass(frozen=True, slots=True, kw_only=True, eq=False)
    class ConstantGaussian(Gaussian):
        def _sample(self, n, generator):
            return np.full((n,) + self.shape, 3.0)

    @dataclass(frozen=True, slots=True, kw_only=True, eq=False)
    class ConstantLaplace(Laplace):
        def _sample(self, n, generator):
            return np.full((n,) + self.shape, -2.0)

    @dataclass(frozen=True, slots=True, kw_only=True, eq=False)
    class ConstantLattice(DiscreteGaussian):
        def _units(self, n, generator):
            return np.full((n,) + self.shape, 5.0)

    x = np.zeros(CHUNK + 7)
    assert np.all(ConstantGaussian(cov=1.0).add_to(x, rng=1) == 3.0)
    assert np.all(ConstantLaplace(scale=1.0).add_to(x, rng=1) == -2.0)
    assert np.all(hardened(ConstantGaussian(cov=1.0), sensitivity=1.0, bound=10.0).release(x, rng=1) == 3.0)
    lattice = ConstantLattice(sigma=1.0, grid_exponent=-2, dimension=3)
    assert np.all(lattice.add_to(np.zeros((CHUNK // 3 + 5, 3)), rng=1) == 1.25)
    assert np.all(hardened(lattice, sensitivity=1.0, bound=10.0).release(np.zeros((9, 3)), rng=1) == 1.25)


@pytest.mark.parametrize("exponent", [-12, 0, 5])
def test_one_value_is_released_as_in_an_array(exponent):
    """The one-value path of lattice_add (a server answer's scalars) gives the bits of the array path: clamping,
    half-way values rounded to even, zeros as +0 and the range check."""
    grid = math.ldexp(1.0, exponent)
    values = [3.7, -0.2, 0.0, -0.0, 2.5 * grid, -2.5 * grid, 0.5 * grid, -0.5 * grid, 1e9, -1e9, 999.99]
    units = [0.0, -0.0, 3.0, -3.0, 1.0, -1.0]
    for v in values:
        for k in units:

            def fill(buffer: np.ndarray, start: int, k: float = k) -> None:
                buffer[...] = k

            one = lattice_add(np.array([v]), fill, exponent, bound=np.array([1000.0]))
            many = lattice_add(np.array([v, v]), fill, exponent, bound=np.array([1000.0]))
            assert one.view(np.uint64)[0] == many.view(np.uint64)[0], (v, k)
    with pytest.raises(InvalidParameterError):
        lattice_add(np.array([2.0**60 * grid]), lambda b, s: b.fill(0.0), exponent)


def test_a_scalar_laplace_adds_one_value_as_add_to_does():
    """Noise.add_one draws what add_to draws from the same generator state, and leaves the same state; a noise
    without a scalar path (a vector, a Gaussian, a subclass that draws otherwise, a non-finite value) draws
    nothing and defers to add_to."""
    from dataclasses import dataclass

    from privnoise.mechanisms import Gaussian, Laplace

    @dataclass(frozen=True, slots=True, kw_only=True, eq=False)
    class ConstantLaplace(Laplace):
        def _sample(self, n, generator):
            return np.full((n,) + self.shape, -2.0)

    for scale, exponent in [(1.0, None), (3.7, -20), (0.001, 0), (2.0**-10, -3)]:
        noise = Laplace(scale=scale)
        for seed, value in enumerate([0.0, 12.25, -7.3, 1e6]):
            first, second = np.random.default_rng(seed), np.random.default_rng(seed)
            one = noise.add_one(value, first, exponent)
            many = noise.add_to(np.array([value]), rng=second, grid_exponent=exponent)
            assert one is not None and np.array([one]).view(np.uint64)[0] == many.view(np.uint64)[0]
            assert first.integers(0, 2**62) == second.integers(0, 2**62)
    generator = np.random.default_rng(0)
    state = generator.bit_generator.state
    for noise, value in [(Laplace(scale=[1.0, 2.0]), 1.0), (Gaussian(cov=1.0), 1.0), (ConstantLaplace(scale=1.0), 1.0),
                         (Laplace(scale=1.0), math.inf)]:
        assert noise.add_one(value, generator) is None
    assert generator.bit_generator.state == state


def toy_proposer(generator: np.random.Generator, calls: list[int]):
    """Proposals uniform on {0, …, 9}, those ≥ 7 refused: the target law is uniform on {0, …, 6}."""

    def propose(view: np.ndarray) -> np.ndarray:
        calls.append(view.size)
        view[...] = generator.integers(0, 10, view.size)
        return np.flatnonzero(view >= 7)

    return propose


@pytest.mark.parametrize("hint", [0.3, 0.05])  # the law's refusal rate, and one too low (the rounds finish the job)
def test_one_chunk_is_filled_from_its_extra_proposals_with_the_target_law(hint):
    """χ² of chunk-by-chunk fills against the uniform law on {0, …, 6} at α = 1e-6, with the power to reject a law
    3 % per value off it."""
    from scipy import stats

    from privnoise.snapping import fill_with_rejection, proposals_for

    generator, calls = np.random.default_rng(5), []
    propose = toy_proposer(generator, calls)
    out = np.full(CHUNK, np.nan)
    parts = []
    for _ in range(12):
        calls.clear()
        fill_with_rejection(out, propose, hint)
        assert calls[0] == proposals_for(CHUNK, hint) > CHUNK
        assert len(calls) == 1 or hint < 0.3  # with the true rate the extras suffice (but about once in 10⁴)
        parts.append(out.copy())
    counts = np.bincount(np.concatenate(parts).astype(int), minlength=10)
    assert counts[7:].sum() == 0 and stats.chisquare(counts[:7]).pvalue > 1e-6
    tilted = 1.0 + 0.03 * np.arange(7)  # a law 3 % per value off the target
    assert stats.chisquare(counts[:7], tilted / tilted.sum() * counts.sum()).pvalue < 1e-6


def test_fill_with_rejection_keeps_its_rounds_for_outputs_of_several_chunks():
    from privnoise.snapping import fill_with_rejection, proposals_for

    calls: list[int] = []
    out = np.empty(3 * CHUNK + 5)
    fill_with_rejection(out, toy_proposer(np.random.default_rng(6), calls), 0.3)
    assert calls[:4] == [CHUNK, CHUNK, CHUNK, 5] and set(np.unique(out)) <= set(range(7))
    assert proposals_for(3 * CHUNK, 0.3) == 3 * CHUNK and proposals_for(100, 0.0) == 100
