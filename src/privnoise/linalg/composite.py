"""Composite operators: Kronecker products (an LTI horizon, I_T ⊗ C) and block-diagonal stacks."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import readonly
from ..exceptions import DimensionError
from .composite_forms import BlockDiagonalForm, KroneckerForm
from .forms import IsotropicForm, SymmetricForm
from .linear_operator import (
    LinearOperator,
    check_info,
    check_norm,
    dense_column_norms,
    dense_record_information,
)
from .matrices import as_operator

__all__ = ["BlockDiagonal", "Kronecker"]


class Kronecker(LinearOperator):
    """A ⊗ B: with x reshaped to X (n_A × n_B, row-major), (A ⊗ B)x = vec(A X Bᵀ).

    For an LTI system read over T steps, I_T ⊗ C applies the output map C to every step's state.
    """

    __slots__ = ("left", "right")

    def __init__(self, left: Any, right: Any) -> None:
        self.left = as_operator(left)
        self.right = as_operator(right)

    @property
    def shape(self) -> tuple[int, int]:
        (ma, na), (mb, nb) = self.left.shape, self.right.shape
        return ma * mb, na * nb

    def apply(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        x_matrix = x.reshape(self.left.n, self.right.n)
        a, b = self.left.dense().reshape(self.left.shape), self.right.dense().reshape(self.right.shape)
        return np.asarray(a @ x_matrix @ b.T).ravel()

    def gram(self) -> KroneckerForm:
        return KroneckerForm(self.left.gram(), self.right.gram())

    def column_norms(self, norm: str = "l1", block: int | None = None) -> NDArray[np.float64]:
        if norm == "l1-l2":
            return dense_column_norms(self.dense(), norm, block)
        return np.outer(self.left.column_norms(norm), self.right.column_norms(norm)).ravel()

    def max_column_norm(self, norm: str = "l1", block: int | None = None) -> float:
        check_norm(norm, block)
        if norm == "l1-l2":
            return float(np.max(self.column_norms(norm, block)))
        return self.left.max_column_norm(norm) * self.right.max_column_norm(norm)

    def _factors(self, info: SymmetricForm) -> tuple[SymmetricForm, SymmetricForm] | None:
        if isinstance(info, KroneckerForm) and (info.left.size, info.right.size) == (self.left.m, self.right.m):
            return info.left, info.right
        if isinstance(info, IsotropicForm):
            return IsotropicForm(self.left.m, info.value), IsotropicForm(self.right.m, 1.0)
        return None

    def record_information(self, info: SymmetricForm) -> NDArray[np.float64]:
        check_info(info, self.m)
        parts = self._factors(info)
        if parts is None:
            return dense_record_information(self.dense(), info)
        return np.outer(self.left.record_information(parts[0]), self.right.record_information(parts[1])).ravel()

    def max_record_information(self, info: SymmetricForm) -> float:
        parts = self._factors(info)
        if parts is None:
            return super().max_record_information(info)
        return self.left.max_record_information(parts[0]) * self.right.max_record_information(parts[1])

    def information_inverse_trace(self, info: SymmetricForm) -> float | None:
        check_info(info, self.m)
        parts = self._factors(info)
        if parts is None:
            return super().information_inverse_trace(info)
        a = self.left.information_inverse_trace(parts[0])
        b = self.right.information_inverse_trace(parts[1])
        return None if a is None or b is None else a * b

    def max_abs_row_sum(self) -> float:
        return self.left.max_abs_row_sum() * self.right.max_abs_row_sum()

    def max_column_support(self) -> int:
        return self.left.max_column_support() * self.right.max_column_support()

    def absolute(self) -> Kronecker:
        return Kronecker(self.left.absolute(), self.right.absolute())

    def dense(self) -> NDArray[np.float64]:
        return readonly(np.kron(self.left.dense(), self.right.dense()))

    def __repr__(self) -> str:
        return f"Kronecker({self.left!r}, {self.right!r})"


class BlockDiagonal(LinearOperator):
    """diag(C₁, …, C_k): block j of the output depends on block j of the records only."""

    __slots__ = ("blocks", "columns", "rows")

    def __init__(self, blocks: list[Any]) -> None:
        if not blocks:
            raise DimensionError("`blocks` of `BlockDiagonal` must not be empty.")
        self.blocks = tuple(as_operator(b) for b in blocks)
        self.rows = np.concatenate([[0], np.cumsum([b.m for b in self.blocks])]).astype(int)
        self.columns = np.concatenate([[0], np.cumsum([b.n for b in self.blocks])]).astype(int)

    @property
    def shape(self) -> tuple[int, int]:
        return int(self.rows[-1]), int(self.columns[-1])

    def _pieces(self) -> Any:
        return zip(self.blocks, self.rows[:-1], self.rows[1:], self.columns[:-1], self.columns[1:], strict=True)

    def apply(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.concatenate([b.apply(x[c0:c1]) for b, _, _, c0, c1 in self._pieces()])

    def gram(self) -> BlockDiagonalForm:
        return BlockDiagonalForm([b.gram() for b in self.blocks])

    def column_norms(self, norm: str = "l1", block: int | None = None) -> NDArray[np.float64]:
        if norm == "l1-l2":
            return dense_column_norms(self.dense(), norm, block)
        return np.concatenate([b.column_norms(norm) for b in self.blocks])

    def _info_blocks(self, info: SymmetricForm) -> list[SymmetricForm] | None:
        parts = [info.principal(int(r0), int(r1)) for _, r0, r1, _, _ in self._pieces()]
        return None if any(p is None for p in parts) else [p for p in parts if p is not None]

    def record_information(self, info: SymmetricForm) -> NDArray[np.float64]:
        check_info(info, self.m)
        parts = self._info_blocks(info)
        if parts is None:
            return dense_record_information(self.dense(), info)
        return np.concatenate([b.record_information(j) for b, j in zip(self.blocks, parts, strict=True)])

    def information_inverse_trace(self, info: SymmetricForm) -> float | None:
        check_info(info, self.m)
        parts = self._info_blocks(info)
        if parts is None:
            return super().information_inverse_trace(info)
        total = 0.0
        for b, j in zip(self.blocks, parts, strict=True):
            value = b.information_inverse_trace(j)
            if value is None:
                return None
            total += value
        return total

    def max_abs_row_sum(self) -> float:
        return max(b.max_abs_row_sum() for b in self.blocks)

    def max_column_support(self) -> int:
        return max(b.max_column_support() for b in self.blocks)

    def absolute(self) -> BlockDiagonal:
        return BlockDiagonal([b.absolute() for b in self.blocks])

    def dense(self) -> NDArray[np.float64]:
        out = np.zeros(self.shape)
        for b, r0, r1, c0, c1 in self._pieces():
            out[r0:r1, c0:c1] = b.dense().reshape(b.shape)
        return readonly(out)

    def __repr__(self) -> str:
        return f"BlockDiagonal({len(self.blocks)} blocks, shape={self.shape})"
