"""SECURITY.md requirement 1: noise comes from a cryptographically strong, OS-seeded generator, distinct
per thread and per forked process; integer seeds are reproducible (research only); bad ``rng`` values are
refused."""

from __future__ import annotations

import os
import threading
import warnings

import numpy as np
import pytest
from randomgen import AESCounter, ChaCha

from privnoise.exceptions import InvalidParameterError
from privnoise.mechanisms import Gaussian, Laplace, RaisedCosine
from privnoise.random import default_rng, is_cryptographic, secure_generator

WEAK_BIT_GENERATORS = (
    np.random.PCG64,
    np.random.PCG64DXSM,
    np.random.MT19937,
    np.random.Philox,
    np.random.SFC64,
)


def _first_words(generator: np.random.Generator, k: int = 4) -> tuple[int, ...]:
    return tuple(int(v) for v in generator.bit_generator.random_raw(k))


# -- the default generator ---------------------------------------------------------------------------


def test_default_is_cryptographic() -> None:
    g = default_rng(None)
    assert isinstance(g, np.random.Generator)
    assert is_cryptographic(g)
    assert isinstance(g.bit_generator, AESCounter | ChaCha)
    assert not isinstance(g.bit_generator, WEAK_BIT_GENERATORS)
    assert default_rng() is g  # reused within a thread


def test_secure_generator_is_cryptographic_and_fresh() -> None:
    a, b = secure_generator(), secure_generator()
    assert is_cryptographic(a) and is_cryptographic(b)
    assert a is not b
    assert _first_words(a) != _first_words(b)


@pytest.mark.parametrize("bit_generator", WEAK_BIT_GENERATORS)
def test_weak_bit_generators_are_not_cryptographic(bit_generator) -> None:
    assert not is_cryptographic(np.random.Generator(bit_generator(1)))


def test_seeded_generator_is_aes_counter() -> None:
    assert isinstance(default_rng(3).bit_generator, AESCounter)


def test_default_never_touches_global_numpy_state() -> None:
    before = np.random.get_state()  # noqa: NPY002 - the legacy global state is what is checked
    default_rng().random(10)
    Laplace(scale=1.0).sample(100)
    Gaussian(cov=1.0).sample(100)
    RaisedCosine(lower=0.0, upper=1.0).sample(100)
    after = np.random.get_state()  # noqa: NPY002
    assert before[0] == after[0]
    np.testing.assert_array_equal(before[1], after[1])
    assert before[2:] == after[2:]


def test_two_default_generators_in_one_process_never_repeat() -> None:
    # Two OS-seeded generators agreeing on 256 bits would mean the seeding is broken.
    assert _first_words(secure_generator()) != _first_words(secure_generator())


# -- threads -----------------------------------------------------------------------------------------


def test_per_thread_generators_are_distinct() -> None:
    barrier = threading.Barrier(2)
    results: dict[int, tuple[np.random.Generator, bool, tuple[int, ...]]] = {}
    errors: list[BaseException] = []

    def worker(slot: int) -> None:
        try:
            g = default_rng()
            barrier.wait(timeout=10)  # both threads alive (and holding their generators) at once
            results[slot] = (g, default_rng() is g and is_cryptographic(g), _first_words(g))
            barrier.wait(timeout=10)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not errors, errors
    (g0, ok0, words0), (g1, ok1, words1) = results[0], results[1]
    assert ok0 and ok1
    assert g0 is not g1
    main = default_rng()
    assert main is not g0 and main is not g1
    assert words0 != words1
    assert _first_words(main) not in (words0, words1)


# -- fork --------------------------------------------------------------------------------------------


def _read_exactly(fd: int, n: int) -> bytes:
    chunks = []
    while n:
        chunk = os.read(fd, n)
        if not chunk:
            break
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _child_words(k: int) -> tuple[int, ...]:
    """Fork; the child reports the first ``k`` raw words of its default generator through a pipe."""
    read_fd, write_fd = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter(
            "ignore", DeprecationWarning
        )  # "process is multi-threaded, fork() may deadlock"
        pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        code = 1
        try:
            os.close(read_fd)
            words = np.array(_first_words(default_rng(), k), dtype=np.uint64)
            os.write(write_fd, words.tobytes())
            code = 0
        finally:
            os._exit(code)
    os.close(write_fd)
    try:
        data = _read_exactly(read_fd, 8 * k)
    finally:
        os.close(read_fd)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert len(data) == 8 * k
    return tuple(int(v) for v in np.frombuffer(data, dtype=np.uint64))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_forked_child_gets_a_different_stream() -> None:
    parent = default_rng()
    parent.random()  # the parent's generator exists (and has state) before the fork
    child_a = _child_words(4)
    parent_next = _first_words(default_rng(), 4)  # what the child would have drawn had it kept the state
    child_b = _child_words(4)
    assert default_rng() is parent  # the parent keeps its generator
    assert child_a != parent_next
    assert child_b != parent_next
    assert child_a != child_b


# -- seeds and explicit generators -------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 7, np.int64(7), 2**100])
def test_int_seeds_are_reproducible(seed) -> None:
    a = default_rng(seed).random(8)
    b = default_rng(seed).random(8)
    np.testing.assert_array_equal(a, b)


def test_numpy_int_seed_equals_python_int_seed() -> None:
    np.testing.assert_array_equal(default_rng(np.int64(7)).random(4), default_rng(7).random(4))
    np.testing.assert_array_equal(default_rng(np.uint8(7)).random(4), default_rng(7).random(4))


def test_different_seeds_give_different_streams() -> None:
    assert not np.array_equal(default_rng(1).random(8), default_rng(2).random(8))


@pytest.mark.parametrize(
    "mechanism",
    [RaisedCosine(lower=0.3, upper=1.7), Gaussian(cov=[[2.0, 0.5], [0.5, 1.0]]), Laplace(scale=[1.0, 2.0])],
    ids=["raised_cosine", "gaussian", "laplace"],
)
def test_seeded_samples_are_reproducible(mechanism) -> None:
    np.testing.assert_array_equal(mechanism.sample(50, rng=11), mechanism.sample(50, rng=11))
    assert not np.array_equal(mechanism.sample(50, rng=11), mechanism.sample(50, rng=12))


def test_generator_is_used_as_given() -> None:
    g = np.random.Generator(np.random.PCG64(5))
    assert default_rng(g) is g
    expected = np.random.Generator(np.random.PCG64(5)).standard_normal(3)
    np.testing.assert_array_equal(Gaussian(cov=1.0).sample(3, rng=g), expected)


@pytest.mark.parametrize(
    "bad",
    [
        -1,
        -(2**70),
        1.0,
        0.5,
        float("nan"),
        "1",
        b"1",
        True,
        False,
        [1],
        (1,),
        np.float64(1.0),
        np.random.PCG64(1),
        np.random.RandomState(1),
        object(),
    ],
    ids=lambda v: type(v).__name__ + ":" + repr(v)[:20],
)
def test_bad_rng_values_are_refused(bad) -> None:
    with pytest.raises(InvalidParameterError, match="`rng`") as excinfo:
        default_rng(bad)
    assert isinstance(excinfo.value, ValueError)
    with pytest.raises(InvalidParameterError, match="`rng`"):
        Laplace(scale=1.0).sample(3, rng=bad)
