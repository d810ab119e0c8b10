"""Releases and sessions computed on Dask, from a laptop's ``LocalCluster`` to a cluster of many machines.

Needs the ``dask`` extra (``pip install 'privnoise[dask]'``); never imported by ``import privnoise``. The entry
points are the usual ones — they recognise Dask data:

* ``pn.io.dask_parquet("meters/*.parquet")`` — partitioned Parquet as a Dask DataFrame in record order
  (:mod:`privnoise.io.partitioned`);
* ``pn.Session(frame, ...)`` — aggregates computed by Dask, partial aggregates only to the driver, noise drawn once
  there (:class:`DaskBackend`);
* ``pn.release(frame["kwh"], query, noise)`` — partial sums on the workers and the noise on the driver, or, for
  record-level queries, the noise added per partition on the workers and (``out="noisy/"``) one Parquet file per
  partition published exactly once (:mod:`privnoise.scale.release`, :mod:`privnoise.scale.publish`);
* ``privnoise release "meters/*.parquet" ... --scheduler tcp://host:8786`` and, in the server's ``owner.toml``,
  ``engine = "dask"``.

Modules: :mod:`~privnoise.scale.streams` (a CSPRNG stream per partition, replayed on retry),
:mod:`~privnoise.scale.publish` (exactly-once publication), :mod:`~privnoise.scale.backend`,
:mod:`~privnoise.scale.release`, :mod:`~privnoise.scale.cluster` (connecting to a scheduler),
:mod:`~privnoise.scale.shipping` (compact task payloads).
"""

from .backend import DaskBackend
from .cluster import connect
from .publish import MANIFEST, Published
from .release import release_on_dask
from .streams import partition_generator, partition_keys

__all__ = [
    "MANIFEST",
    "DaskBackend",
    "Published",
    "connect",
    "partition_generator",
    "partition_keys",
    "release_on_dask",
]
