"""Reading data once for the library, the command line and the server: arrays, frames, tables, CSV and Parquet
files, whole or as chunks; writing released vectors chunk by chunk.

:func:`read`
    One column as a float64 array: a numpy array or list, a pandas or polars Series or DataFrame (``column``), a
    pyarrow Array or Table, a ``.csv`` or ``.parquet`` path (``column``).
:func:`chunks`
    The same as chunks of at most ``chunk_size`` values, re-readable, with the total length where it is known without
    reading (arrays, frames, Parquet metadata): what :func:`privnoise.release` consumes in bounded memory.
:func:`read_text`
    A label column of a CSV or Parquet file. The query server imports its datasets through :func:`read` and
    :func:`read_text`, so a byte-order mark, a delimiter or a missing value is handled alike everywhere.
:func:`dask_parquet`
    Partitioned Parquet (a directory, a glob, local or remote) as a Dask DataFrame in record order, for sessions and
    releases computed on a Dask cluster (:mod:`privnoise.scale`); needs the ``dask`` extra.
Missing values
    ``missing="error"`` (the default) refuses them with the file, line or row; ``"drop"`` drops the record; a number
    imputes it. NaN in an array and infinities anywhere are refused. For pandas and polars, NaN is a missing value.
Optional dependencies
    Parquet, Arrow and pandas need the ``data`` extra (``pip install 'privnoise[data]'``); polars needs polars. They
    are imported on first use, with a one-line error naming the extra when absent. CSV works without them (pyarrow
    makes it faster).

Examples
--------
>>> import numpy as np, privnoise as pn
>>> source = pn.io.chunks(np.arange(10.0), chunk_size=4)
>>> len(source), [c.size for c in source]
(10, [4, 4, 2])
"""

from .missing import Missing
from .partitioned import dask_parquet
from .sources import ArraySource, ChunkSource, Source, as_source, chunks, read, read_text
from .writers import OUTPUT_SUFFIXES, Writer, check_output, open_writer

__all__ = [
    "OUTPUT_SUFFIXES",
    "ArraySource",
    "ChunkSource",
    "Missing",
    "Source",
    "Writer",
    "as_source",
    "check_output",
    "chunks",
    "dask_parquet",
    "open_writer",
    "read",
    "read_text",
]
