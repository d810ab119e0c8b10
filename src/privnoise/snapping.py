"""Hardened addition: values plus noise, rounded to a power-of-two grid without leaking low-order bits.

``x + w`` computed in doubles leaks through its low-order bits: the set of reachable outputs depends on x (Mironov
2012; SECURITY.md, requirement 2). Every release of privnoise is therefore an exact multiple of a grid Λ = 2^k:

* :func:`snapped_sum` — continuous noise: Λ·round((v + w)/Λ) of the *exact* real sum v + w. Scaling by a power of
  two is exact; the sum t + u of the scaled values is rounded to the nearest integer, and where the rounded double
  lands exactly half-way the exact rounding error of the sum (Knuth's TwoSum) decides. The output is thus a
  deterministic function of the real number v + w: for ideal noise the release is post-processing of f(x) + w, so
  its differential privacy is that of the noise, and its Fisher information about x is at most that of f(x) + w
  (data processing) — every stated bound holds without a rounding term. The floating-point noise itself matches
  the ideal law only up to the resolution of its floating-point variates relative to the grid: a relative error of
  order 2⁻⁴⁰ per grid cell at the default grid (the same caveat as :mod:`privnoise.mechanisms.discrete`).
* :func:`lattice_sum` — lattice noise K (integers in units of Λ): Λ·(rint(v/Λ) + K); rounding v moves it by at most
  Λ/2, which the guarantee adds to the sensitivity. A zero output is always +0 (−0 would tell the sign of v).
* :func:`snapped_add`, :func:`lattice_add` — the same two sums with the noise drawn chunk by chunk
  (:data:`CHUNK` values): each chunk is drawn, added, rounded and checked while it is in the CPU's cache, so a
  release costs about one pass over memory besides the noise itself; :func:`scratch` keeps the work buffers per
  thread, :func:`fill_with_rejection` runs rejection samplers into an output without compacting it.

The default grid is the smallest Λ ≥ scale/2^12 (:func:`grid_exponent_for`), so rounding adds a variance below
Λ²/4 < 2⁻²⁴ scale² ≈ 6·10⁻⁸ scale². Arithmetic stays exact while |v|/Λ < 2^50 (:func:`exact_exponent`).

Examples
--------
>>> import numpy as np
>>> y = snapped_sum(np.array([0.1, 0.2]), np.array([1e-9, -3.0]), -10)
>>> (y * 1024).tolist()
[102.0, -2867.0]
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._validation import check_positive, check_positive_int
from .exceptions import InvalidParameterError

__all__ = [
    "DEFAULT_GRID_BITS",
    "MAX_GRID_UNITS",
    "exact_exponent",
    "fill_with_rejection",
    "grid_exponent_for",
    "grid_exponent_for_variances",
    "lattice_add",
    "lattice_point",
    "lattice_sum",
    "proposals_for",
    "scratch",
    "snapped_add",
    "snapped_point",
    "snapped_sum",
]

#: Default resolution of the grid: Λ is the smallest power of two with Λ ≥ scale / 2**DEFAULT_GRID_BITS, so the
#: noise scale spans between 2^11 and 2^12 grid steps.
DEFAULT_GRID_BITS = 12
#: Values may span at most 2^50 grid steps, so that every sum of grid units is an exact double.
MAX_GRID_UNITS = 2.0**50
#: Values per chunk of the fused kernels (:func:`snapped_add`, :func:`lattice_add`): the buffers of one chunk stay
#: in the CPU's cache, so drawing, adding, rounding and checking cost one pass over memory.
CHUNK = 1 << 14


_SCRATCH = threading.local()


def scratch(owner: str, count: int, size: int) -> list[NDArray[np.float64]]:
    """``count`` float64 work buffers of ``size`` values for the kernel ``owner``, kept per thread and reused across
    calls: fresh buffers of a chunk's size would be mapped and faulted in by the allocator on every call. A kernel
    must not call itself (or another user of the same ``owner``) while it holds its buffers."""
    pools = _SCRATCH.__dict__.setdefault("pools", {})
    pool = pools.get(owner)
    if pool is None or len(pool) < count or pool[0].size < size:
        pool = [np.empty(max(size, CHUNK)) for _ in range(max(count, len(pool or ())))]
        pools[owner] = pool
    return [buffer[:size] for buffer in pool[:count]]


def proposals_for(size: int, rejection: float) -> int:
    """How many proposals :func:`fill_with_rejection` makes at once for an output of one chunk (``size`` ≤
    :data:`CHUNK` values) of a law that refuses a proposal with probability ``rejection``: the size plus enough
    extra proposals to fill the refused places in the same call but about once in 10⁴ (mean + 4 standard
    deviations), at most one chunk more."""
    if rejection <= 0.0 or size > CHUNK:
        return size
    expected = size * rejection
    extra = (expected + 4.0 * math.sqrt(expected) + 4.0) / (1.0 - rejection)
    return size + min(CHUNK, math.ceil(extra))


def fill_with_rejection(
    out: NDArray[np.float64], propose: Callable[[NDArray[np.float64]], NDArray[np.intp]], rejection: float = 0.0
) -> NDArray[np.float64]:
    """Fill ``out`` by rejection sampling: ``propose(view)`` writes proposals into ``view`` and returns the positions
    of the rejected ones; a first pass proposes every place chunk by chunk, then the rejected
    places are filled with later accepted proposals, drawn in chunks too.

    An output of one chunk (a chunked kernel's buffer) with the law's probability of refusal ``rejection`` > 0 is
    proposed in one call together with extra proposals (:func:`proposals_for`) that fill its refused places, in
    order: one call per chunk instead of one per round and no compaction, for the cost of copying the chunk.

    Conditional on which proposals are accepted, the accepted values are independent draws of the target law, so
    placing them by that pattern alone gives an i.i.d. sample; nothing is compacted. The number of rounds and of
    proposals depends only on the random draws and the law."""
    if 0 < out.size <= CHUNK and rejection > 0.0:
        return _fill_one_chunk(out, propose, proposals_for(out.size, rejection))
    pending = []
    for start in range(0, out.size, CHUNK):
        refused = propose(out[start : start + CHUNK])
        if refused.size:
            pending.append(refused + start)
    if not pending:
        return out
    return _fill_rejected(out, propose, np.concatenate(pending))


def _fill_one_chunk(
    out: NDArray[np.float64], propose: Callable[[NDArray[np.float64]], NDArray[np.intp]], count: int
) -> NDArray[np.float64]:
    """One chunk proposed with ``count − out.size`` extra proposals: the accepted extras fill the refused places in
    order; places still empty (rarely) go through the rounds of :func:`fill_with_rejection`."""
    m = out.size
    (work,) = scratch("rejection chunk", 1, count)
    refused = propose(work)
    np.copyto(out, work[:m])
    if not refused.size:
        return out
    inside = refused < m
    holes = refused[inside]
    if not holes.size:
        return out
    accepted = np.ones(count - m, dtype=bool)
    accepted[refused[~inside] - m] = False
    good = work[m:][accepted]
    take = min(good.size, holes.size)
    out[holes[:take]] = good[:take]
    return out if take == holes.size else _fill_rejected(out, propose, holes[take:])


def _fill_rejected(
    out: NDArray[np.float64], propose: Callable[[NDArray[np.float64]], NDArray[np.intp]], rejected: NDArray[np.intp]
) -> NDArray[np.float64]:
    """The rounds of :func:`fill_with_rejection`: the ``rejected`` places of ``out`` filled with later accepted
    proposals."""
    (spare,) = scratch("rejection spare", 1, CHUNK)
    while rejected.size:
        batch = spare[: min(CHUNK, rejected.size + rejected.size // 2 + 16)]
        refused = propose(batch)
        good = np.delete(batch, refused) if refused.size else batch
        take = min(good.size, rejected.size)
        out[rejected[:take]] = good[:take]
        rejected = rejected[take:]
    return out


def grid_exponent_for(scale: float, bits: int = DEFAULT_GRID_BITS) -> int:
    """The exponent k of the smallest power of two Λ = 2^k with Λ ≥ ``scale`` / 2^``bits``.

    Examples
    --------
    >>> grid_exponent_for(1.0), grid_exponent_for(3.0, bits=4)
    (-12, -2)
    """
    s = check_positive(scale, "scale", "grid_exponent_for")
    b = check_positive_int(bits, "bits", "grid_exponent_for", minimum=0)
    mantissa, exponent = math.frexp(s)  # s = mantissa · 2^exponent, mantissa in [0.5, 1)
    return exponent - 1 - b if mantissa == 0.5 else exponent - b


def grid_exponent_for_variances(variances: NDArray[np.float64], fallback: float = 1.0) -> int:
    """The default grid for noise whose coordinates have these variances: from the smallest positive standard
    deviation (``fallback`` when no coordinate is noisy)."""
    positive = np.asarray(variances, dtype=float)
    positive = positive[positive > 0]
    return grid_exponent_for(math.sqrt(float(positive.min())) if positive.size else fallback)


def exact_exponent(k: int, bound: float | None) -> int:
    """The smallest exponent ≥ k whose grid keeps values up to ``bound`` within 2^50 grid steps (k if None)."""
    if bound is None or bound <= 0 or not math.isfinite(bound):
        return k
    while bound / math.ldexp(1.0, k) >= MAX_GRID_UNITS:
        k += 1
    return k


def _too_large(k: int) -> InvalidParameterError:
    return InvalidParameterError(
        f"the released value spans more than 2^50 steps of the grid 2^{k}; declare bounds on the query (the grid "
        "is then chosen to fit them) or rescale the data."
    )


def snapped_sum(
    values: NDArray[np.float64],
    noise: NDArray[np.float64],
    exponent: int,
    *,
    in_range: bool = False,
    out: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """Λ·round((v + w)/Λ), Λ = 2^exponent, for the exact real sum v + w (halves to even).

    ``in_range=True`` states that |v|/Λ < 2^50 is known (from declared bounds, :func:`exact_exponent`); the noise
    samplers never exceed 2^40 noise scales, so the sum stays exact and the range check is skipped. ``out``
    receives the result when given.

    Raises
    ------
    InvalidParameterError
        When a value spans 2^51 grid steps or more (the exact arithmetic would fail).
    """
    w = np.reshape(noise, -1)

    def fill(buffer: NDArray[np.float64], start: int) -> None:
        np.copyto(buffer, w[start : start + buffer.size])

    return snapped_add(values, fill, exponent, in_range=in_range, out=out)


_largest, _smallest = np.maximum.reduce, np.minimum.reduce
#: Above this grid exponent 1.5·2^52·Λ would overflow: the sum is rounded in grid units instead.
_LARGEST_DIRECT_EXPONENT = 900


def _chunks(size: int, width: int = 1) -> range:
    """Starts of the chunks of a flat array of ``size`` values, whole rows of ``width`` values per chunk."""
    return range(0, size, max(1, CHUNK // width) * width)


def snapped_add(
    values: NDArray[np.float64],
    fill: Callable[[NDArray[np.float64], int], object],
    exponent: int,
    *,
    in_range: bool = False,
    out: NDArray[np.float64] | None = None,
    width: int = 1,
) -> NDArray[np.float64]:
    """Λ·round((v + w)/Λ), Λ = 2^exponent, of the exact real sum v + w, for noise w drawn chunk by chunk.

    ``fill(buffer, start)`` writes the noise w (in the units of the values) for the flat positions
    ``start, …, start + buffer.size − 1`` of ``values`` into ``buffer``; chunks hold whole rows of ``width`` values.
    Each chunk is drawn, added, rounded and checked while it is in cache:

    * s = fl(v + w); y = (s + 1.5·2^52·Λ) − 1.5·2^52·Λ is Λ·rint(s/Λ), halves to even, for |s| < 2^51·Λ (the sum
      lands where the spacing of doubles is Λ; both operations are otherwise exact);
    * d = s − y is exact; where |d| = Λ/2 the double s is a half-way point and the exact rounding error of v + w
      (Knuth's TwoSum) decides the side, so y is the rounding of the *real* sum.
    """
    shape = np.shape(values)
    flat = np.reshape(values, -1)
    result = np.empty(flat.size) if out is None else out.reshape(-1)
    grid, inverse = math.ldexp(1.0, exponent), math.ldexp(1.0, -exponent)
    scaled = exponent > _LARGEST_DIRECT_EXPONENT
    unit = 1.0 if scaled else grid  # the grid in the units the sum is rounded in
    shift, limit, half = 1.5 * 2.0**52 * unit, 2.0**51 * unit, 0.5 * unit
    step = max(1, CHUNK // width) * width
    w, s = scratch("snapped_add", 2, min(step, flat.size))
    for start in _chunks(flat.size, width):
        v, y = flat[start : start + step], result[start : start + step]
        m = v.size
        ww, ss = w[:m], s[:m]
        fill(ww, start)
        if scaled:
            v = v * inverse
            ww *= inverse
        np.add(v, ww, out=ss)  # s = fl(v + w)
        if not in_range and (_largest(ss) >= limit or _smallest(ss) <= -limit):
            raise _too_large(exponent)
        np.add(ss, shift, out=y)
        y -= shift  # Λ·rint(s/Λ)
        ss -= y  # d = s − y, exact
        if _largest(ss) >= half or _smallest(ss) <= -half:  # a half-way double: the exact error of v + w decides
            ties = np.flatnonzero(np.abs(ss) == half)
            a, b = v[ties], ww[ties]
            total = a + b
            back = total - a
            error = (a - (total - back)) + (b - back)
            d = ss[ties]
            y[ties] += np.where((d > 0) & (error > 0), unit, 0.0) - np.where((d < 0) & (error < 0), unit, 0.0)
        if scaled:
            y *= grid
    return result.reshape(shape) if out is None else out


def lattice_add(
    values: NDArray[np.float64],
    fill: Callable[[NDArray[np.float64], int], object],
    exponent: int,
    *,
    bound: NDArray[np.float64] | None = None,
    out: NDArray[np.float64] | None = None,
    width: int = 1,
) -> NDArray[np.float64]:
    """Λ·(rint(clip(v, −B, B)/Λ) + K) for lattice noise K drawn chunk by chunk (:func:`lattice_sum`, fused).

    ``fill(buffer, start)`` writes K (integer-valued doubles, zeros as +0) for the flat positions ``start, …`` of
    ``values``; ``bound`` (``None``: no clamping) broadcasts against rows of ``width`` values. A zero output is
    always +0, whatever the sign of v.
    """
    shape = np.shape(values)
    flat = np.reshape(values, -1)
    result = np.empty(flat.size) if out is None else out.reshape(-1)
    inverse, grid = math.ldexp(1.0, -exponent), math.ldexp(1.0, exponent)
    if flat.size == 1 and math.isfinite(flat[0]):  # one value: the same draw and arithmetic, in Python floats
        result[0] = _lattice_one(float(flat[0]), fill, exponent, bound)
        return result.reshape(shape) if out is None else out
    step = max(1, CHUNK // width) * width
    (u,) = scratch("lattice_add", 1, min(step, flat.size))
    high: Any = None
    if bound is not None:
        b = np.broadcast_to(np.asarray(bound, dtype=np.float64).reshape(-1), (width,))
        high = float(b[0]) if np.all(b == b[0]) else np.tile(b, u.size // width)
    low: Any = None if high is None else -high
    for start in _chunks(flat.size, width):
        v, o = flat[start : start + step], result[start : start + step]
        m = v.size
        uu = u[:m]
        fill(uu, start)
        if high is None:
            np.multiply(v, inverse, out=o)
        else:
            if isinstance(high, float):
                np.clip(v, low, high, out=o)
            else:
                np.clip(v, low[:m], high[:m], out=o)
            o *= inverse
        np.rint(o, out=o)
        o += uu
        o += 0.0  # −0 + −0 is the only sum giving −0: a zero output is +0
        if m and max(_largest(o), -_smallest(o)) >= 2.0**52:
            raise _too_large(exponent)
        o *= grid
    return result.reshape(shape) if out is None else out


def _lattice_one(v: float, fill: Callable[[NDArray[np.float64], int], object], exponent: int, bound: Any) -> float:
    """:func:`lattice_add` of one finite value: the same draw (``fill`` of a one-value buffer) and the same exact
    operations (clamp, scale by 2^−k, round half to even, add K, +0 for a zero, scale by 2^k) on Python floats,
    without the chunk loop's array set-up (a server answer releases one or two scalars)."""
    (u,) = scratch("lattice_add", 1, 1)
    fill(u, 0)
    high = None if bound is None else bound if isinstance(bound, float) else float(np.reshape(bound, -1)[0])
    return lattice_point(v, float(u[0]), exponent, high)


def snapped_point(v: float, w: float, exponent: int) -> float | None:
    """Λ·round((v + w)/Λ) of the exact real sum of one finite value ``v`` and one draw ``w``: the operations of
    :func:`snapped_add` on Python floats (the same doubles, the same rounding, the same tie rule); None on a grid
    so coarse that :func:`snapped_add` rounds in grid units (the array path then answers)."""
    if exponent > _LARGEST_DIRECT_EXPONENT:
        return None
    grid = math.ldexp(1.0, exponent)
    s = v + w
    if abs(s) >= 2.0**51 * grid:
        raise _too_large(exponent)
    shift = 1.5 * 2.0**52 * grid
    y = (s + shift) - shift
    d = s - y
    if abs(d) == 0.5 * grid:  # a half-way double: the exact rounding error of v + w decides
        back = s - v
        error = (v - (s - back)) + (w - back)
        if d > 0 and error > 0:
            y += grid
        elif d < 0 and error < 0:
            y -= grid
    return y


def lattice_point(v: float, units: float, exponent: int, bound: float | None = None) -> float:
    """Λ·(rint(clip(v, −B, B)/Λ) + K) of one finite value ``v`` and K = ``units`` (an integer-valued float): the
    operations of :func:`lattice_add` on Python floats (exact scaling by 2^∓k, rounding half to even, +0 for a
    zero), with its range check."""
    if bound is not None:
        v = min(max(v, -bound), bound)
    o = float(round(v * math.ldexp(1.0, -exponent))) + units + 0.0
    if abs(o) >= 2.0**52:
        raise _too_large(exponent)
    return o * math.ldexp(1.0, exponent)


def lattice_sum(values: NDArray[np.float64], units: NDArray[np.float64], exponent: int) -> NDArray[np.float64]:
    """Λ·(rint(v/Λ) + K) for lattice noise K given in units of Λ = 2^exponent (a zero output is +0)."""
    k = np.reshape(units, -1)

    def fill(buffer: NDArray[np.float64], start: int) -> None:
        buffer[...] = k[start : start + buffer.size]

    return lattice_add(np.asarray(values, dtype=np.float64), fill, exponent)
