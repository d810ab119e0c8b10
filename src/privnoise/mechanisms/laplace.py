"""Laplace noise with independent coordinates (the classical ε-DP mechanism; ℓ1 Laplace for vectors)."""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import readonly
from ..exceptions import InvalidParameterError
from ..linalg import SymmetricForm
from ..snapping import CHUNK, scratch
from ._base import Mechanism, vector_or_scalar
from .parameters import broadcast_pair, coordinate_form, elementwise, keep_compact, listed, smallest, total
from .protocol import GridFiller

__all__ = ["Laplace", "flip_signs", "random_bits", "random_signs", "select"]

_WORD = np.iinfo(np.uint64).max  # the largest 64-bit word (integers up to it: whole words of the bit generator)


def random_bits(n: int, generator: np.random.Generator) -> NDArray[np.bool_]:
    """``n`` independent fair booleans, 64 per 64-bit word of the generator."""
    # Full-range 64-bit integers come straight from the bit generator's next_uint64 (the same words as
    # random_raw for 64-bit generators such as AESCounter, ChaCha and PCG64); random_raw itself is not used
    # because some bit generators (MT19937) return only 32 random bits per raw value.
    raw = generator.integers(0, _WORD, size=(n + 63) // 64, dtype=np.uint64, endpoint=True)
    return np.unpackbits(np.ascontiguousarray(raw).view(np.uint8))[:n].view(np.bool_)


def flip_signs(buffer: NDArray[np.float64], generator: np.random.Generator) -> NDArray[np.float64]:
    """Flip the sign of each value of a flat float64 ``buffer`` with an independent fair bit (in place, by the sign
    bit: no masked arithmetic)."""
    if buffer.size == 1:  # one value: the first bit of one word, as random_bits takes it, without arrays
        word = int(generator.integers(0, _WORD, dtype=np.uint64, endpoint=True))
        if word.to_bytes(8, sys.byteorder)[0] >> 7:
            buffer[0] = -buffer[0]
        return buffer
    (work,) = scratch("flip signs", 1, buffer.size)
    mask = work.view(np.uint64)
    np.copyto(mask, random_bits(buffer.size, generator).view(np.uint8), casting="unsafe")
    np.left_shift(mask, np.uint64(63), out=mask)
    bits = buffer.view(np.uint64)
    np.bitwise_xor(bits, mask, out=bits)
    return buffer


def select(first: NDArray[np.float64], second: NDArray[np.float64], generator: np.random.Generator) -> None:
    """Replace each value of ``first`` by the one of ``second`` with an independent fair bit (in place, bit by bit;
    ``second`` is overwritten)."""
    (work,) = scratch("select", 1, first.size)
    mask = work.view(np.uint64)
    np.copyto(mask, random_bits(first.size, generator).view(np.uint8), casting="unsafe")
    np.negative(mask, out=mask)  # 0 or all ones
    a, b = first.view(np.uint64), second.view(np.uint64)
    np.bitwise_xor(b, a, out=b)
    np.bitwise_and(b, mask, out=b)
    np.bitwise_xor(a, b, out=a)


def random_signs(n: int, generator: np.random.Generator) -> NDArray[np.float64]:
    """``n`` independent fair ±1 values, 64 per 64-bit word of the generator."""
    return (1.0 - 2.0 * random_bits(n, generator).view(np.uint8)).astype(np.float64, copy=False)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Laplace(Mechanism):
    """Independent Laplace noise with density ∏ exp(−|w_i − loc_i|/b_i)/(2 b_i).

    Parameters
    ----------
    scale : float or array_like
        Scale b > 0 (per coordinate for a vector mechanism).
    loc : float or array_like, default 0
        Location, broadcast with ``scale``.

    Notes
    -----
    Variance 2b² per coordinate, Fisher information 1/b² (Farokhi & Sandberg, Section 5), entropy log(2eb) nats.
    With scale b = Δ/ε for a query of ℓ1 sensitivity Δ the release is ε-differentially private (the printed
    Proposition 3 of Farokhi & Sandberg inverts this scale).

    Examples
    --------
    >>> from privnoise.mechanisms import Laplace
    >>> lap = Laplace(scale=0.5)
    >>> lap.fisher_information(), lap.second_moment()
    (4.0, 0.5)
    """

    scale: Any
    loc: Any = 0.0

    def __post_init__(self) -> None:
        owner = "Laplace"
        b = vector_or_scalar(self.scale, "scale", owner)
        if smallest(b) <= 0:
            raise InvalidParameterError(f"`scale` of `{owner}` must be > 0; got {smallest(b):g}.")
        b, loc = broadcast_pair(b, vector_or_scalar(self.loc, "loc", owner), ("scale", "loc"), owner)
        keep_compact(self, scale=b, loc=loc)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.scale.shape)

    def _sample(self, n: int, generator: np.random.Generator) -> NDArray[np.float64]:
        w = np.empty((n,) + self.shape)
        fill, width = self._filler(generator, self.scale)
        flat = w.reshape(-1)
        step = max(1, CHUNK // width) * width
        for start in range(0, flat.size, step):
            fill(flat[start : start + step], start)
        if np.any(self.loc != 0.0):
            w += self.loc
        return w

    def _filler(self, generator: np.random.Generator, scale: Any) -> tuple[GridFiller, int]:
        """``fill(buffer, start)``: ± exponentials times ``scale`` (per coordinate), a fair sign per draw."""
        b = np.asarray(scale, dtype=np.float64)
        factor: Any = b
        if isinstance(scale, float):
            factor = scale
        elif b.ndim == 0 or np.all(b == b.flat[0]):
            factor = float(b.flat[0])
        width = 1 if isinstance(factor, float) else len(factor)

        def fill(buffer: NDArray[np.float64], start: int) -> None:
            generator.standard_exponential(out=buffer)
            if width == 1:
                buffer *= factor
            else:
                buffer.reshape(-1, width)[...] *= factor
            flip_signs(buffer, generator)

        return fill, width

    def grid_filler(self, generator: np.random.Generator, exponent: int) -> tuple[GridFiller, int] | None:
        """Centred noise: ± exponentials times b_i·2^−k (exactly ±b_i e scaled); None for a subclass that draws
        otherwise (its own ``_sample``)."""
        if self._sample.__func__ is not _LAPLACE_SAMPLE:  # type: ignore[attr-defined]
            return None
        scale, loc = self.scale, self.loc
        if scale.ndim == 0 and loc.ndim == 0:  # a scalar law (a server answer's): no array operations
            return None if float(loc) != 0.0 else self._filler(generator, math.ldexp(float(scale), -exponent))
        if np.any(loc != 0.0):
            return None
        return self._filler(generator, np.ldexp(scale, -exponent))

    def grid_draw(self, generator: np.random.Generator, exponent: int) -> float | None:
        """One draw of :meth:`grid_filler` for a scalar law: ±exponential·b·2^−k with the same exponential and the
        same sign bit (``flip_signs`` of one value) as its ``fill`` of a one-value buffer."""
        if self._sample.__func__ is not _LAPLACE_SAMPLE or self.scale.ndim or self.loc.ndim:  # type: ignore[attr-defined]
            return None
        if float(self.loc) != 0.0:
            return None
        w = generator.standard_exponential() * math.ldexp(float(self.scale), -exponent)
        word = int(generator.integers(0, _WORD, dtype=np.uint64, endpoint=True))
        return -w if word.to_bytes(8, sys.byteorder)[0] >> 7 else w

    def _logpdf(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        per = -np.log(2.0 * self.scale) - np.abs(x - self.loc) / self.scale
        return per.sum(axis=tuple(range(x.ndim - len(self.shape), x.ndim))) if self.shape else per

    def _score(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return -np.sign(x - self.loc) / self.scale

    def cdf(self, x: ArrayLike, /) -> Any:
        """Joint distribution function (product over coordinates)."""
        arr = self._points(x, "cdf")
        z = (arr - self.loc) / self.scale
        per = np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0.0)), 1.0 - 0.5 * np.exp(-np.maximum(z, 0.0)))
        out = per.prod(axis=tuple(range(arr.ndim - len(self.shape), arr.ndim))) if self.shape else per
        return float(out) if np.ndim(out) == 0 else out

    def mean(self) -> Any:
        return float(self.loc) if not self.shape else self.loc

    def covariance(self) -> Any:
        v = 2.0 * self.scale**2
        return float(v) if not self.shape else readonly(np.diag(v))

    def fisher_information(self) -> Any:
        info = 1.0 / self.scale**2
        return float(info) if not self.shape else readonly(np.diag(info))

    def covariance_form(self) -> SymmetricForm:
        return coordinate_form(elementwise(lambda b: 2.0 * b**2, self.scale))

    def information_form(self) -> SymmetricForm:
        return coordinate_form(elementwise(lambda b: 1.0 / b**2, self.scale))

    def noise_scale(self) -> float:
        return smallest(self.scale)

    def second_moment(self) -> float:
        return total(elementwise(lambda b: 2.0 * b**2, self.scale)) + total(elementwise(lambda c: c**2, self.loc))

    def marginal(self, start: int, stop: int) -> Laplace | None:
        if not self.shape:
            return None
        return Laplace(scale=self.scale[start:stop], loc=self.loc[start:stop])

    @property
    def identical_coordinates(self) -> bool:
        """A vector Laplace law whose scale and location are broadcast constants."""
        return bool(self.shape) and self.scale.strides == (0,) and self.loc.strides == (0,)

    def entropy(self) -> float:
        return float(np.sum(np.log(2.0 * math.e * self.scale)))

    def describe(self) -> dict[str, Any]:
        return {"family": "laplace", "scale": listed(self.scale), "loc": listed(self.loc)}


_LAPLACE_SAMPLE = vars(Laplace)["_sample"]
