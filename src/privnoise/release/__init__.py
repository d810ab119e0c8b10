"""Release: the noisy answer to a query together with the guarantee that holds for it.

:func:`release` is the one place where data meets noise, for every privacy notion: it validates every parameter
before touching the data, reads the data once (in blocks: a fused finite and bounds check in the same pass that
computes the answer), applies the declared out-of-bounds policy, draws the noise from the cryptographically strong
generator, snaps the output to a power-of-two grid, and attaches the guarantee of the noise for this query.

* Identity-like queries (s·I, diagonal) with noise of independent coordinates are computed block by block: the
  output of a block depends only on that block's records, so data read in chunks (:func:`privnoise.io.chunks`) is
  released in memory bounded by the chunk size, and written chunk by chunk with ``out=``.
* Other linear queries with few outputs (sum, mean, weighted mean, a few linear combinations) accumulate Cx over
  the blocks: the data is never held whole.
* Nonlinear queries, data-dependent policies and correlated noise need the whole database, which is then read
  into memory.

Each way executes the same plan of the core, of one component (:mod:`~privnoise.release.direct`): the noise on
the output grid, the guarantee it states and how the noisy value becomes the release. A distributed engine
executes it too, its noise drawn on the workers or on the driver.

=================================================  ===============================================================
:mod:`~privnoise.release.dispatch`                 :func:`release`: the parameters checked, then the way chosen
:mod:`~privnoise.release.direct`                   the one-component plan of a release and its output grid
:mod:`~privnoise.release.paths`                    the three ways (by blocks, accumulated, whole), each executing it
:mod:`~privnoise.release.reading`                  the data read in blocks, each checked against the declared
                                                   bounds in the pass that reads it
:mod:`~privnoise.release.result`                   :class:`Release`, the noisy answer and its guarantee
=================================================  ===============================================================
"""

from __future__ import annotations

from .direct import direct_plan as direct_plan

# The partial sums and checks a distributed engine computes the same way (privnoise.scale) are read from here too.
from .dispatch import release
from .paths import ACCUMULATE_LIMIT as ACCUMULATE_LIMIT
from .paths import accumulate as accumulate
from .reading import check_block as check_block
from .result import Release

__all__ = ["Release", "release"]
