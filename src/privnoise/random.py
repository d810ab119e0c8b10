"""Randomness for privnoise: a cryptographically strong numpy Generator by default.

Every sampler in privnoise takes a keyword-only ``rng``:

* ``None`` (the default): a :class:`numpy.random.Generator` on randomgen's ``AESCounter`` (AES-128 in counter mode,
  hardware-accelerated where the CPU has AES-NI) seeded with 256 bits from the operating system. There is one
  generator per thread and per process: it is created lazily in each thread and discarded in a child after
  ``os.fork``, so forked workers never share a stream (SECURITY.md, requirement 1).
* an ``int`` seed: a deterministic ``AESCounter`` stream, for research reproducibility only. Servers never accept it.
* a ``numpy.random.Generator``: used as given.

The global numpy random state is never used, and neither PCG64 nor MT19937 is ever chosen by default.

Examples
--------
>>> from privnoise.random import default_rng
>>> g = default_rng(7)
>>> bool(g.random() == default_rng(7).random())
True
>>> default_rng() is default_rng()        # the per-thread default is reused
True
"""

from __future__ import annotations

import numbers
import os
import secrets
import threading
from typing import TypeAlias

import numpy as np
from randomgen import AESCounter, ChaCha

from .exceptions import InvalidParameterError

__all__ = ["RNGLike", "default_rng", "derived_generator", "is_cryptographic", "secure_generator"]

RNGLike: TypeAlias = "int | np.random.Generator | None"

_local = threading.local()
_fork_generation = 0


def _after_fork_in_child() -> None:
    global _fork_generation
    _fork_generation += 1


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _bit_generator(seed: int | None):  # type: ignore[no-untyped-def]
    entropy = secrets.randbits(256) if seed is None else seed
    sequence = np.random.SeedSequence(entropy)
    bit_generator = AESCounter(seed=sequence)
    if seed is None and not bit_generator.use_aesni:
        # Without AES-NI the software AES is slow; ChaCha20 is just as strong and faster in software.
        return ChaCha(seed=sequence, rounds=20)
    return bit_generator


def secure_generator() -> np.random.Generator:
    """Return a new Generator on a cryptographically strong bit generator seeded from the OS."""
    return np.random.Generator(_bit_generator(None))


def derived_generator(rng: np.random.Generator) -> np.random.Generator:
    """Return a new Generator on AES-128 in counter mode, keyed with 256 bits drawn from ``rng``: a stream of its
    own (deterministic when ``rng`` is seeded), for randomness that one owner draws apart from its noise.

    >>> bool(derived_generator(default_rng(3)).random() == derived_generator(default_rng(3)).random())
    True
    """
    words = rng.integers(0, 1 << 64, size=4, dtype=np.uint64)
    return np.random.Generator(AESCounter(seed=np.random.SeedSequence(int.from_bytes(words.tobytes(), "little"))))


def default_rng(rng: RNGLike = None) -> np.random.Generator:
    """Return the Generator privnoise samples from.

    Parameters
    ----------
    rng : None, int or numpy.random.Generator
        ``None`` for the per-thread cryptographically strong generator; an ``int`` >= 0 for a reproducible
        (research-only) AES counter stream; a Generator to use as given.

    Returns
    -------
    numpy.random.Generator

    Raises
    ------
    InvalidParameterError
        If ``rng`` is of another type or a negative integer.
    """
    if rng is None:
        generator = getattr(_local, "generator", None)
        if (
            generator is None
            or getattr(_local, "generation", -1) != _fork_generation
            or _local.pid != os.getpid()
        ):
            generator = secure_generator()
            _local.generator = generator
            _local.generation = _fork_generation
            _local.pid = os.getpid()
        return generator
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool):
        if int(rng) < 0:
            raise InvalidParameterError(f"`rng` of `default_rng` must be a seed >= 0; got {int(rng)}.")
        return np.random.Generator(_bit_generator(int(rng)))
    raise InvalidParameterError(
        "`rng` of `default_rng` must be None, an integer seed or a numpy.random.Generator; "
        f"got {type(rng).__name__}."
    )


def is_cryptographic(generator: np.random.Generator) -> bool:
    """Whether ``generator`` runs on a cryptographically strong bit generator (AESCounter or ChaCha)."""
    return isinstance(generator.bit_generator, AESCounter | ChaCha)
