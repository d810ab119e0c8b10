"""The result of a release: the noisy answer together with the guarantee that holds for it.

:class:`Release` is what :func:`privnoise.release` returns: the value f(x) + w (or the file it was written to), the
guarantee of the noise for this query, descriptions of the query and of the noise (never the true value), the grid
every output is an exact multiple of, and, for the data owner only, how many records were clamped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..guarantees import Guarantee, json_number

__all__ = ["Release"]


@dataclass(frozen=True, slots=True, eq=False)
class Release:
    """A noisy answer and what it guarantees.

    Attributes
    ----------
    value : float, numpy.ndarray or None
        f(x) + w (None when it was written to ``output``).
    guarantee : Guarantee
        The privacy notion(s) and the numbers that hold for this release: Fisher information, (ε, δ)-DP, both
        (:class:`~privnoise.guarantees.CombinedGuarantee`), or the notion of the noise (statistical inputs, MMSE).
    query, mechanism : dict
        Descriptions of what was asked and of the noise (never the true value).
    clamped : int
        How many records were clamped to the declared bounds (owner-only: it depends on the data).
    grid : float
        The grid Λ = 2^k every output is an exact multiple of (0 for an unhardened research release).
    output : str or None
        The file the value was written to.
    """

    value: Any
    guarantee: Guarantee
    query: dict[str, Any]
    mechanism: dict[str, Any]
    clamped: int = 0
    grid: float = 0.0
    output: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """Publishable JSON-ready form (infinite bounds as the string "inf").

        The number of clamped records depends on the data and is left out; it stays on ``clamped`` for the owner.
        """
        if self.value is None:
            value: Any = None
        elif np.ndim(self.value) == 0:
            value = json_number(float(self.value))
        else:
            value = [json_number(float(v)) for v in np.ravel(self.value)]
        out: dict[str, Any] = {
            "value": value,
            "guarantee": self.guarantee.as_dict(),
            "query": self.query,
            "mechanism": self.mechanism,
            "grid": self.grid,
        }
        if self.output is not None:
            out["output"] = self.output
        return out
