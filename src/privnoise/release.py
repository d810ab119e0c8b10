"""Release: the noisy answer to a query together with the guarantee that holds for it.

:func:`release` is the one place where data meets noise: it validates everything before touching the data,
applies the declared out-of-bounds policy, evaluates the query, draws the noise and attaches the guarantee.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from ._validation import as_finite_array
from .exceptions import DimensionError, InvalidParameterError
from .fisher.information import fisher_guarantee
from .fisher.policies import Policy
from .guarantees import FisherGuarantee, json_number
from .mechanisms import Mechanism
from .queries import Query
from .random import RNGLike

__all__ = ["Release", "release"]

OutOfBounds = Literal["error", "clamp"]


@dataclass(frozen=True, slots=True, eq=False)
class Release:
    """A noisy answer and what it guarantees.

    Attributes
    ----------
    value : float or numpy.ndarray
        f(x) + w.
    guarantee : FisherGuarantee
        The privacy notion and the numbers that hold for this release.
    query, mechanism : dict
        Descriptions of what was asked and of the noise (never the true value).
    clamped : int
        How many records were clamped to the declared bounds (owner-only: it depends on the data).
    """

    value: Any
    guarantee: FisherGuarantee
    query: dict[str, Any]
    mechanism: dict[str, Any]
    clamped: int = 0

    def as_dict(self) -> dict[str, Any]:
        """Publishable JSON-ready form (infinite bounds as the string "inf").

        The number of clamped records depends on the data and is left out; it stays on ``clamped`` for the owner.
        """
        value = (
            json_number(float(self.value))
            if np.ndim(self.value) == 0
            else [json_number(float(v)) for v in np.ravel(self.value)]
        )
        return {
            "value": value,
            "guarantee": self.guarantee.as_dict(),
            "query": self.query,
            "mechanism": self.mechanism,
        }


def release(
    data: ArrayLike,
    query: Query,
    mechanism: Mechanism | Policy,
    *,
    rng: RNGLike = None,
    out_of_bounds: OutOfBounds = "error",
) -> Release:
    """Answer ``query`` on ``data`` with additive noise from ``mechanism``.

    Parameters
    ----------
    data : array_like, shape (n,)
        The database x. NaN or infinite entries are rejected.
    query : Query
        f, with its Jacobian and declared bounds.
    mechanism : Mechanism or Policy
        The noise (from :func:`privnoise.fisher.optimal_noise` or built directly).
    rng : None, int or numpy.random.Generator
        Randomness; the default is the cryptographically strong per-thread generator.
    out_of_bounds : {"error", "clamp"}
        What to do with records outside the query's declared bounds: refuse, or clamp them to the bounds.

    Returns
    -------
    Release

    Raises
    ------
    InvalidParameterError, DimensionError
        For bad parameters (checked before the data is read) or bad data.

    Examples
    --------
    >>> import numpy as np, privnoise as pn
    >>> x = np.linspace(0.0, 1.0, 500)
    >>> q = pn.queries.mean(500, bounds=(0.0, 1.0))
    >>> rel = pn.release(x, q, pn.fisher.optimal_noise(q, support=(-0.05, 0.05)), rng=1)
    >>> bool(abs(rel.value - 0.5) < 0.05), rel.guarantee.notion
    (True, 'fisher-information')
    """
    if not isinstance(query, Query):
        raise InvalidParameterError(
            f"`query` of `release` must be a privnoise Query; got {type(query).__name__}."
        )
    if not isinstance(mechanism, Mechanism | Policy):
        raise InvalidParameterError(
            f"`mechanism` of `release` must be a privnoise Mechanism or Policy; got {type(mechanism).__name__}."
        )
    if mechanism.shape != query.output_shape:
        raise DimensionError(
            f"`mechanism` of `release` has shape {mechanism.shape}; the query `{query.name}` returns shape "
            f"{query.output_shape}."
        )
    if out_of_bounds not in ("error", "clamp"):
        raise InvalidParameterError(
            f"`out_of_bounds` of `release` must be 'error' or 'clamp'; got {out_of_bounds!r}."
        )
    from .random import default_rng

    generator = default_rng(rng)

    x = query.check_data(as_finite_array(data, "data", "release"), owner="release")
    clamped = 0
    if query.bounds is not None:
        outside = (x < query.bounds.lower) | (x > query.bounds.upper)
        clamped = int(np.count_nonzero(outside))
        if clamped and out_of_bounds == "error":
            raise InvalidParameterError(
                f"`data` of `release` has {clamped} record(s) outside the declared bounds "
                f"[{query.bounds.lower:g}, {query.bounds.upper:g}]; pass out_of_bounds='clamp' to clamp them."
            )
        if clamped:
            x = np.clip(x, query.bounds.lower, query.bounds.upper)

    if isinstance(mechanism, Policy):
        noise = mechanism.mechanism_at(query, x)
        guarantee = mechanism.guarantee_at(query, x)
    else:
        noise = mechanism
        guarantee = fisher_guarantee(query, mechanism, x)
    value = np.asarray(query(x), dtype=float) + np.asarray(noise.sample(rng=generator), dtype=float)
    if not np.all(np.isfinite(value)):  # defensive: a release never contains NaN or inf
        raise InvalidParameterError("the release would not be finite; check the query's scale.")
    out = float(value) if value.ndim == 0 else value
    return Release(out, guarantee, query.describe(), mechanism.describe(), clamped)
