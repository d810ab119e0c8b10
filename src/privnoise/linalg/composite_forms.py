"""Composite symmetric forms: Kronecker products A ⊗ B and block-diagonal stacks diag(A₁, …, A_k)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .._validation import readonly
from ..exceptions import DimensionError
from .forms import SymmetricForm, as_form, refuse_dense

__all__ = ["BlockDiagonalForm", "KroneckerForm"]


class KroneckerForm(SymmetricForm):
    """A ⊗ B of two forms: size = size(A)·size(B); spectra, traces and powers factor."""

    __slots__ = ("left", "right")

    def __init__(self, left: SymmetricForm, right: SymmetricForm) -> None:
        self.left = as_form(left)
        self.right = as_form(right)

    @property
    def size(self) -> int:
        return self.left.size * self.right.size

    @property
    def is_diagonal(self) -> bool:
        return self.left.is_diagonal and self.right.is_diagonal

    def diagonal(self) -> NDArray[np.float64]:
        return np.outer(self.left.diagonal(), self.right.diagonal()).ravel()

    def max_diagonal(self) -> float:
        return self.left.max_diagonal() * self.right.max_diagonal()

    def min_diagonal(self) -> float:
        return self.left.min_diagonal() * self.right.min_diagonal()

    def trace(self) -> float:
        return self.left.trace() * self.right.trace()

    def eigenvalue_range(self) -> tuple[float, float]:
        (a0, a1), (b0, b1) = self.left.eigenvalue_range(), self.right.eigenvalue_range()
        return max(a0, 0.0) * max(b0, 0.0), a1 * b1

    def power(self, exponent: float) -> KroneckerForm:
        return KroneckerForm(self.left.power(exponent), self.right.power(exponent))

    def scaled(self, factor: float) -> KroneckerForm:
        return KroneckerForm(self.left.scaled(factor), self.right)

    def _split(self, y: NDArray[np.float64]) -> NDArray[np.float64]:
        return y.reshape(y.shape[:-1] + (self.left.size, self.right.size))

    def matvec(self, y: NDArray[np.float64]) -> NDArray[np.float64]:
        z = self.right.matvec(self._split(y))  # B acts on the inner index
        z = np.swapaxes(self.left.matvec(np.swapaxes(z, -1, -2)), -1, -2)  # A on the outer one
        return z.reshape(y.shape)

    def factor_apply(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        w = self.right.factor_apply(np.ascontiguousarray(self._split(z)))
        w = np.swapaxes(self.left.factor_apply(np.ascontiguousarray(np.swapaxes(w, -1, -2))), -1, -2)
        return np.ascontiguousarray(w).reshape(z.shape)

    def log_determinant(self) -> float:
        return self.right.size * self.left.log_determinant() + self.left.size * self.right.log_determinant()

    def dense(self) -> NDArray[np.float64]:
        refuse_dense(self.size, "Kronecker product")
        return readonly(np.kron(self.left.dense(), self.right.dense()))

    def principal(self, lo: int, hi: int) -> SymmetricForm | None:
        inner = self.right.size
        if lo % inner or hi % inner:
            return None
        outer = self.left.principal(lo // inner, hi // inner)
        return None if outer is None else KroneckerForm(outer, self.right)

    def __repr__(self) -> str:
        return f"KroneckerForm({self.left!r}, {self.right!r})"


class BlockDiagonalForm(SymmetricForm):
    """diag(A₁, …, A_k) of forms."""

    __slots__ = ("blocks", "offsets")

    def __init__(self, blocks: list[SymmetricForm]) -> None:
        if not blocks:
            raise DimensionError("`blocks` of `BlockDiagonalForm` must not be empty.")
        self.blocks = tuple(as_form(b) for b in blocks)
        self.offsets = np.concatenate([[0], np.cumsum([b.size for b in self.blocks])]).astype(int)

    @property
    def size(self) -> int:
        return int(self.offsets[-1])

    @property
    def is_diagonal(self) -> bool:
        return all(b.is_diagonal for b in self.blocks)

    def diagonal(self) -> NDArray[np.float64]:
        return np.concatenate([b.diagonal() for b in self.blocks])

    def max_diagonal(self) -> float:
        return max(b.max_diagonal() for b in self.blocks)

    def min_diagonal(self) -> float:
        return min(b.min_diagonal() for b in self.blocks)

    def trace(self) -> float:
        return float(sum(b.trace() for b in self.blocks))

    def eigenvalue_range(self) -> tuple[float, float]:
        ranges = [b.eigenvalue_range() for b in self.blocks]
        return min(r[0] for r in ranges), max(r[1] for r in ranges)

    def power(self, exponent: float) -> BlockDiagonalForm:
        return BlockDiagonalForm([b.power(exponent) for b in self.blocks])

    def scaled(self, factor: float) -> BlockDiagonalForm:
        return BlockDiagonalForm([b.scaled(factor) for b in self.blocks])

    def _each(self, y: NDArray[np.float64], method: str) -> NDArray[np.float64]:
        out = np.empty_like(y)
        for block, lo, hi in zip(self.blocks, self.offsets[:-1], self.offsets[1:], strict=True):
            out[..., lo:hi] = getattr(block, method)(np.array(y[..., lo:hi]))
        return out

    def matvec(self, y: NDArray[np.float64]) -> NDArray[np.float64]:
        return self._each(y, "matvec")

    def factor_apply(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        return self._each(z, "factor_apply")

    def log_determinant(self) -> float:
        return float(sum(b.log_determinant() for b in self.blocks))

    def dense(self) -> NDArray[np.float64]:
        refuse_dense(self.size, "block-diagonal matrix")
        out = np.zeros((self.size, self.size))
        for block, lo, hi in zip(self.blocks, self.offsets[:-1], self.offsets[1:], strict=True):
            out[lo:hi, lo:hi] = block.dense()
        return readonly(out)

    def principal(self, lo: int, hi: int) -> SymmetricForm | None:
        starts = list(self.offsets)
        if lo in starts and hi in starts:
            i, j = starts.index(lo), starts.index(hi)
            return self.blocks[i] if j == i + 1 else BlockDiagonalForm(list(self.blocks[i:j]))
        for block, start, stop in zip(self.blocks, self.offsets[:-1], self.offsets[1:], strict=True):
            if start <= lo and hi <= stop:
                return block.principal(lo - int(start), hi - int(start))
        return None

    def __repr__(self) -> str:
        return f"BlockDiagonalForm({len(self.blocks)} blocks, size={self.size})"
