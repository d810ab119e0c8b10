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
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from ._validation import check_positive_int, check_probability
from .engines import engine_for
from .exceptions import DimensionError, InvalidParameterError
from .guarantees import Guarantee, json_number
from .io import Source, as_source, check_output, open_writer
from .mechanisms import Mechanism, Noise, NoiseDesign
from .queries import Query
from .random import RNGLike, default_rng
from .snapping import MAX_GRID_UNITS, exact_exponent

__all__ = ["Release", "release"]

OutOfBounds = Literal["error", "clamp"]

#: Records per block: large enough to amortise Python, small enough to stay in cache.
BLOCK = 1 << 16
#: Linear queries with at most this many outputs accumulate Cx block by block.
ACCUMULATE_LIMIT = 4096
_OWNER = "release"


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


def check_block(
    block: NDArray[np.float64], bounds: Any, policy: OutOfBounds, reach: float
) -> tuple[NDArray[np.float64], int]:
    """One block of records checked against the query's declared ``bounds`` (None: none declared): the block
    (clamped under ``policy="clamp"``) and how many records were clamped; NaN, inf, records outside the bounds under
    ``policy="error"``, and undeclared records beyond ``reach`` raise.

    The minimum and maximum decide everything: NaN or an infinity makes one of them non-finite, and the declared
    bounds compare with them; only a failing block is looked at further (count, clamp).
    """
    with np.errstate(over="ignore", invalid="ignore"):
        low, high = float(block.min()), float(block.max())
    if bounds is not None and bounds.lower <= low and high <= bounds.upper:
        return block, 0
    if bounds is None and math.isfinite(low) and math.isfinite(high):
        if max(-low, high) >= reach:
            raise InvalidParameterError(
                "`data` of `release` spans more than 2^50 steps of the output grid; declare bounds on the query "
                "(the grid is then chosen to fit them) or rescale the data."
            )
        return block, 0
    bad = int(block.size - np.count_nonzero(np.isfinite(block)))
    if bad:
        raise InvalidParameterError(
            f"`data` of `release` must contain only finite numbers; got {bad} NaN or infinite "
            f"entr{'y' if bad == 1 else 'ies'}."
        )
    assert bounds is not None
    outside = int(np.count_nonzero((block < bounds.lower) | (block > bounds.upper)))
    if policy == "error":
        raise InvalidParameterError(
            f"`data` of `release` has {outside} record(s) outside the declared bounds "
            f"[{bounds.lower:g}, {bounds.upper:g}]; pass out_of_bounds='clamp' to clamp them."
        )
    return np.clip(block, bounds.lower, bounds.upper), outside


class _Reader:
    """Reads a source in blocks of at most :data:`BLOCK` records, each checked by :func:`check_block`."""

    def __init__(self, source: Source, query: Query, policy: OutOfBounds, reach: float) -> None:
        self.source = source
        self.n = query.n
        self.bounds = query.bounds
        self.policy = policy
        self.reach = reach  # largest |x_i| the grid arithmetic can take (inf when unhardened)
        self.clamped = 0
        self.position = 0

    def _check(self, block: NDArray[np.float64]) -> NDArray[np.float64]:
        checked, clamped = check_block(block, self.bounds, self.policy, self.reach)
        self.clamped += clamped
        return checked

    def blocks(self) -> Iterator[tuple[int, NDArray[np.float64]]]:
        """(start, checked block) pairs covering records 0 … n − 1 in order."""
        with np.errstate(over="ignore", invalid="ignore"):
            for chunk in self.source.chunks():
                for offset in range(0, chunk.size, BLOCK):
                    block = chunk[offset : offset + BLOCK]
                    start = self.position
                    if start + block.size > self.n:
                        raise DimensionError(
                            f"`data` of `release` must have length {self.n} (the query's n); got more records."
                        )
                    self.position += block.size
                    yield start, self._check(block)
        if self.position != self.n:
            raise DimensionError(
                f"`data` of `release` must have length {self.n} (the query's n); got {self.position}."
            )


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


def output_grid(law: Noise, query: Query, harden: bool) -> tuple[int | None, float]:
    """The exponent of the output grid (None unhardened) and the largest |x_i| its exact arithmetic takes."""
    if not harden and isinstance(law, Mechanism):
        return None, math.inf
    k = law.default_grid_exponent()
    if isinstance(law, Mechanism):  # continuous noise: coarsen the grid until the declared outputs fit
        k = exact_exponent(k, query.output_bound())
    operator = getattr(query, "operator", None)
    growth = operator.max_abs_row_sum() if operator is not None else 1.0
    return k, MAX_GRID_UNITS * math.ldexp(1.0, k) / max(growth, 1e-300)


def accumulate(parts: Iterable[NDArray[np.float64]], query: Query) -> NDArray[np.float64]:
    """Cx from its partial sums C[:, block] x[block] over blocks of records (an exactly rounded sum when the query
    has one output); a total that overflows is refused."""
    partials: list[float] = []
    total = np.zeros(query.m)
    with np.errstate(over="ignore", invalid="ignore"):
        for part in parts:
            if query.m == 1:
                partials.append(float(part[0]))
            else:
                total += part
        if query.m == 1:
            try:
                total = np.array([math.fsum(partials)])
            except (OverflowError, ValueError):
                total = np.array([math.inf])
    if not np.all(np.isfinite(total)):
        raise InvalidParameterError(f"the value of query `{query.name}` is not finite (overflow); rescale the data.")
    return total


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
        A Dask Series or 1-d array is computed on its cluster (:mod:`privnoise.scale`): partial sums only, or the
        noise added per partition on the workers for identity-like queries.
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
        For Dask data: a directory that receives one Parquet file per partition, each published exactly once.
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
    plan = _Plan(as_source(data, chunk_size=size), query, mechanism, generator, out_of_bounds, harden, dl, path)
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


@dataclass(frozen=True, slots=True)
class _Plan:
    """One release: what is read, asked and added, and how (see the module docstring for the three ways)."""

    source: Source
    query: Query
    design: NoiseDesign
    generator: np.random.Generator
    policy: OutOfBounds
    harden: bool
    delta: float | None
    path: Any

    def _start(self, law: Noise, x: NDArray[np.float64] | None = None) -> tuple[int | None, float, Guarantee]:
        """The grid exponent, the record magnitude its arithmetic takes, and the guarantee (before any noise)."""
        k, reach = output_grid(law, self.query, self.harden)
        grid = 0.0 if k is None or not isinstance(law, Mechanism) else math.ldexp(1.0, k)
        return k, reach, self.design.guarantee_for(self.query, x, delta=self.delta, grid=grid)

    def _result(
        self, value: Any, guarantee: Guarantee, reader: _Reader, k: int | None, output: str | None = None
    ) -> Release:
        grid = 0.0 if k is None else math.ldexp(1.0, k)
        describe = self.query.describe(), self.design.describe()
        return Release(value, guarantee, *describe, reader.clamped, grid, output)

    def _publish(self, value: NDArray[np.float64], guarantee: Guarantee, reader: _Reader, k: int | None) -> Release:
        """A release computed whole: returned, or written to ``path``."""
        if self.path is None:
            return self._result(float(value) if value.ndim == 0 else value, guarantee, reader, k)
        writer = open_writer(self.path, int(value.size))
        try:
            for start in range(0, value.size, BLOCK):
                writer.write(value.ravel()[start : start + BLOCK])
            output = str(writer.commit())
        except BaseException:
            writer.abort()
            raise
        return self._result(None, guarantee, reader, k, output)

    def by_blocks(self, noise: Noise, operator: Any) -> Release:
        """Identity-like queries: every block of records gives the same block of outputs, with its own noise."""
        query = self.query
        k, reach, guarantee = self._start(noise)
        reader = _Reader(self.source, query, self.policy, reach)
        writer = None if self.path is None else open_writer(self.path, query.n)
        result = np.empty(query.n) if writer is None else None
        buffer = np.empty(BLOCK) if writer is not None else None
        try:
            for start, block in reader.blocks():
                stop = start + block.size
                scale = operator.record_scale(start, stop)
                values = block if np.all(scale == 1.0) else block * scale
                law = noise.marginal(start, stop)
                assert law is not None
                target = result[start:stop] if result is not None else buffer[: block.size]  # type: ignore[index]
                law.add_to(values, rng=self.generator, harden=self.harden, grid_exponent=k, checked=True, out=target)
                if writer is not None:
                    writer.write(target)
            output = None if writer is None else str(writer.commit())
        except BaseException:
            if writer is not None:
                writer.abort()
            raise
        return self._result(result, guarantee, reader, k, output)

    def accumulated(self, noise: Noise, operator: Any) -> Release:
        """Linear queries with few outputs: Cx = Σ_blocks C[:, block] x[block], in one pass over the data."""
        query = self.query
        k, reach, guarantee = self._start(noise)
        reader = _Reader(self.source, query, self.policy, reach)
        total = accumulate((operator.apply_columns(block, start) for start, block in reader.blocks()), query)
        value = total.reshape(noise.shape)
        noisy = noise.add_to(value, rng=self.generator, harden=self.harden, grid_exponent=k)
        return self._publish(np.asarray(noisy).reshape(query.output_shape), guarantee, reader, k)

    def whole(self) -> Release:
        """Nonlinear queries, policies, correlated noise: read the whole database, then release."""
        query = self.query
        reader = _Reader(self.source, query, self.policy, math.inf)
        x = np.concatenate([block for _, block in reader.blocks()]) if query.n else np.empty(0)
        value = query.evaluate(x)
        law = self.design.law_at(query, x)
        k, _, guarantee = self._start(law, x)
        noisy = law.add_to(
            np.asarray(value, dtype=float).reshape(law.shape), rng=self.generator, harden=self.harden, grid_exponent=k
        )
        box = self.design.output_range()
        if box is not None and k is not None:  # rounding must not leave the promised box: keep to grid points inside
            lattice = math.ldexp(1.0, k)
            noisy = np.clip(noisy, np.ceil(box[0] / lattice) * lattice, np.floor(box[1] / lattice) * lattice)
        if not np.all(np.isfinite(noisy)):  # defensive: a release never contains NaN or inf
            raise InvalidParameterError("the release would not be finite; check the query's scale.")
        return self._publish(np.asarray(noisy).reshape(query.output_shape), guarantee, reader, k)
