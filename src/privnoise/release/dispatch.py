"""The entry point of a release: every parameter checked before the data is read, then the way it is computed.

:func:`release` validates the query, the noise and the options, hands data a distributed engine recognises to
that engine (:mod:`privnoise.engines`), and otherwise opens the data as a :class:`~privnoise.io.Source` and
computes the release by blocks, by accumulation or whole (:class:`~privnoise.release.paths.ReleasePlan`).
"""

from __future__ import annotations

from typing import Any

from .._validation import check_positive_int, check_probability
from ..engines import engine_for
from ..exceptions import DimensionError, InvalidParameterError
from ..io import as_source, check_output
from ..mechanisms import Noise, NoiseDesign
from ..queries import Query
from ..random import RNGLike, default_rng
from .paths import ACCUMULATE_LIMIT, ReleasePlan
from .reading import OutOfBounds
from .result import Release

__all__ = ["release"]

_OWNER = "release"


def _check_parameters(
    query: Any, mechanism: Any, out_of_bounds: Any, harden: Any, delta: Any
) -> float | None:
    if not isinstance(query, Query):
        raise InvalidParameterError(f"`query` of `release` must be a privnoise Query; got {type(query).__name__}.")
    if not isinstance(mechanism, NoiseDesign):
        raise InvalidParameterError(
            "`mechanism` of `release` must be privnoise noise (a mechanism, lattice or hardened noise, a policy, "
            f"system noise, a recoverability response); got {type(mechanism).__name__}."
        )
    # The shapes must agree; a vector noise of another shape with as many coordinates (a window of system outputs,
    # (t+1, q), for a flattened query) is reshaped.
    same = mechanism.shape == query.output_shape
    reshaped = bool(mechanism.shape) and bool(query.output_shape) and mechanism.dim == query.m
    if not (same or reshaped):
        raise DimensionError(
            f"`mechanism` of `release` has shape {mechanism.shape}; the query `{query.name}` returns shape "
            f"{query.output_shape}."
        )
    if out_of_bounds not in ("error", "clamp"):
        raise InvalidParameterError(
            f"`out_of_bounds` of `release` must be 'error' or 'clamp'; got {out_of_bounds!r}."
        )
    if not isinstance(harden, bool):
        raise InvalidParameterError(f"`harden` of `release` must be True or False; got {harden!r}.")
    return None if delta is None else check_probability(delta, "delta", _OWNER)

def release(
    data: Any,
    query: Query,
    mechanism: NoiseDesign,
    *,
    rng: RNGLike = None,
    out_of_bounds: OutOfBounds = "error",
    harden: bool = True,
    delta: float | None = None,
    out: Any = None,
    chunk_size: int = 1 << 20,
) -> Release:
    """Answer ``query`` on ``data`` with additive noise from ``mechanism``, hardened, with its guarantee.

    Parameters
    ----------
    data : array_like, Series, DataFrame, Table, path or Source
        The database x: an array; a pandas/polars Series or one-column frame; a pyarrow array; or chunks from
        :func:`privnoise.io.chunks` (files, frames, iterators), read in bounded memory. NaN and inf are rejected.
        A Dask Series or 1-d array is computed on its cluster (:mod:`privnoise.scale`), and a one-column Spark
        DataFrame on its executors (:mod:`privnoise.spark.release`): partial sums only, or the noise added per
        partition on the workers for identity-like queries.
    query : Query
        f, with its Jacobian and declared bounds.
    mechanism : Noise or Policy
        The noise: a Fisher design (:func:`privnoise.fisher.optimal_noise`), DP noise (Laplace, Gaussian, ℓ2 and
        multi-user Laplace), lattice or hardened noise, a policy, system noise, a recoverability response.
    rng : None, int or numpy.random.Generator
        Randomness; the default is the cryptographically strong per-thread generator (seeds: research only).
    out_of_bounds : {"error", "clamp"}
        What to do with records outside the query's declared bounds: refuse, or clamp them to the bounds.
    harden : bool, default True
        Snap the output to a 2^k grid so that no low-order bit depends on the data (:mod:`privnoise.snapping`);
        ``False`` is for research on the raw floating-point release only.
    delta : float, optional
        The δ at which Gaussian-type noise states its (ε, δ) (pure-ε noise needs none).
    out : path, optional
        Write the (vector) value to a ``.npy``, ``.parquet`` or ``.csv`` file, chunk by chunk; ``value`` is None.
        For Dask or Spark data: a directory that receives one Parquet file per partition, each published exactly
        once.
    chunk_size : int
        Records per chunk when ``data`` is a file or frame read by :func:`privnoise.io.chunks`.

    Returns
    -------
    Release

    Raises
    ------
    InvalidParameterError, DimensionError
        For bad parameters (checked before the data is read) or bad data.
    CalibrationError
        For noise that states no guarantee for this query (lattice noise without declared bounds).

    Examples
    --------
    >>> import numpy as np, privnoise as pn
    >>> x = np.linspace(0.0, 1.0, 500)
    >>> q = pn.queries.mean(500, bounds=(0.0, 1.0))
    >>> rel = pn.release(x, q, pn.fisher.optimal_noise(q, support=(-0.05, 0.05)), rng=1)
    >>> bool(abs(rel.value - 0.5) < 0.05), rel.guarantee.notion
    (True, 'fisher-information')
    >>> dp = pn.release(x, q, pn.dp.laplace_for_epsilon(1.0, sensitivity=q.sensitivity("l1")), rng=1)
    >>> dp.guarantee.epsilon, dp.guarantee.notion
    (1.0, 'fisher-information+differential-privacy')
    """
    dl = _check_parameters(query, mechanism, out_of_bounds, harden, delta)
    engine = engine_for(data)
    if engine is not None:  # computed where the data lives (privnoise.engines)
        return engine.release(data, query, mechanism, rng=rng, out_of_bounds=out_of_bounds, harden=harden,
                              delta=dl, out=out)
    size = check_positive_int(chunk_size, "chunk_size", _OWNER)
    path = None if out is None else check_output(out, _OWNER)
    if path is not None and not query.output_shape:
        raise InvalidParameterError("`out` of `release` is for vector releases; this query returns a scalar.")
    generator = default_rng(rng)  # validated before the data is touched
    plan = ReleasePlan(as_source(data, chunk_size=size), query, mechanism, generator, out_of_bounds, harden, dl, path)
    if plan.source.length is not None and plan.source.length != query.n:
        raise DimensionError(
            f"`data` of `release` must have length {query.n} (the query's n); got {plan.source.length}."
        )
    if isinstance(mechanism, Noise):
        operator = getattr(query, "operator", None)
        if operator is not None and operator.record_scale(0, 1) is not None and mechanism.marginal(0, 1) is not None:
            return plan.by_blocks(mechanism, operator)
        if operator is not None and query.m <= ACCUMULATE_LIMIT:
            return plan.accumulated(mechanism, operator)
    return plan.whole()
