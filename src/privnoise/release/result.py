"""The result of a release: :class:`~privnoise.results.Release`, the one result type of every interface.

:func:`privnoise.release` returns it with the value f(x) + w (or the file it was written to), the guarantee of the
noise for this query, descriptions of the query and of the noise (never the true value), the grid every output is
an exact multiple of, and, for the data owner only, how many records were clamped (``clamped_records``).
"""

from __future__ import annotations

from ..results import Release

__all__ = ["Release"]
