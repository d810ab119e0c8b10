"""Independent noise streams for the partitions of one computation, derived centrally, replayed on retry.

A computation spread over partitions (a record-level release, the random priorities of contribution bounding)
draws its randomness on the workers. Each partition gets its own stream:

1. **Keys, centrally.** Before any task runs, the driver draws one 128-bit key per partition from its
   cryptographically strong generator (:func:`privnoise.random.default_rng`, seeded by the operating system):
   :func:`partition_keys`. Keys are never derived from one another, from the partition number, from a worker or
   from a clock, and a new computation draws new keys.
2. **Streams, on the workers.** Partition i draws from AES-128 in counter mode under its own key, counter from 0
   (randomgen's ``AESCounter``; AES-NI where the CPU has it, the same stream in software where it has not):
   :func:`partition_generator`.

Two partitions never share a stream (independent uniform 128-bit keys: a collision has probability below
p²·2⁻¹²⁹), nor do two computations, nor two workers (a stream belongs to a partition, not to a process: forked or
spawned workers draw nothing of their own). A **retried** task — its worker died, the scheduler runs it again
elsewhere — replays its partition's stream from the start: it recomputes the same noise on the same records, so a
retry republishes the release already made instead of making a second, independent one (which, published beside
the first, would let a reader average the two). What must never happen with a replayed stream is that two
*different* outputs built from it become visible; :mod:`privnoise.scale.publish` publishes each partition's output
exactly once.

The keys travel with the tasks: whoever can read the task graph (the scheduler, the workers) can recompute the
noise — as they can read the records themselves. Run the cluster inside the owner's trust boundary, with TLS
between its processes (``tls://`` addresses) where the network is shared.

Examples
--------
>>> import numpy as np
>>> from privnoise.random import default_rng
>>> keys = partition_keys(default_rng(1), 3)
>>> keys.shape, keys.dtype
((3, 2), dtype('uint64'))
>>> a, b = partition_generator(keys[0]), partition_generator(keys[0])
>>> bool(a.random() == b.random())          # a retry replays the partition's stream
True
>>> bool(partition_generator(keys[1]).random() != partition_generator(keys[0]).random())
True
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from randomgen import AESCounter

from .._validation import check_positive_int

__all__ = ["partition_generator", "partition_keys"]


def partition_keys(generator: np.random.Generator, count: int) -> NDArray[np.uint64]:
    """``count`` fresh 128-bit keys (rows of two 64-bit words) drawn from ``generator``.

    ``generator`` is the release's or session's generator: the OS-seeded CSPRNG unless a research seed was given.
    """
    n = check_positive_int(count, "count", "partition_keys", minimum=0)
    return generator.integers(0, np.iinfo(np.uint64).max, size=(n, 2), dtype=np.uint64, endpoint=True)


def partition_generator(key: NDArray[np.uint64]) -> np.random.Generator:
    """The generator of one partition: AES-128-CTR under ``key`` (two 64-bit words), counter from 0."""
    words = np.asarray(key, dtype=np.uint64)
    return np.random.Generator(AESCounter(key=(int(words[0]) << 64) | int(words[1])))
