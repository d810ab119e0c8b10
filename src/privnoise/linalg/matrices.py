"""Operators held as matrices: dense arrays and ``scipy.sparse`` matrices, and :func:`as_operator`."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import as_matrix, readonly
from ..exceptions import DimensionError, InvalidParameterError
from .forms import DENSE_LIMIT, DenseForm, DiagonalForm, SymmetricForm
from .linear_operator import LinearOperator, check_info, dense_column_norms, dense_record_information
from .operators import Row

__all__ = ["DenseMatrix", "MatrixOperator", "SparseMatrix", "as_operator"]


class MatrixOperator(LinearOperator):
    """An operator held as a matrix (dense or sparse) that supports ``@`` and column slices."""

    __slots__ = ("matrix",)
    matrix: Any

    @property
    def shape(self) -> tuple[int, int]:
        m, n = self.matrix.shape
        return int(m), int(n)

    def apply(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(self.matrix @ x)

    def apply_columns(self, block: NDArray[np.float64], start: int) -> NDArray[np.float64]:
        return np.asarray(self.matrix[:, start : start + block.size] @ block)


class DenseMatrix(MatrixOperator):
    """Any (m, n) matrix, given dense."""

    __slots__ = ()

    def __init__(self, matrix: ArrayLike) -> None:
        self.matrix = readonly(as_matrix(matrix, "matrix", "DenseMatrix"))

    def gram(self) -> DenseForm:
        return DenseForm(self.matrix @ self.matrix.T, check=False)

    def column_norms(self, norm: str = "l1", block: int | None = None) -> NDArray[np.float64]:
        return dense_column_norms(self.matrix, norm, block)

    def record_information(self, info: SymmetricForm) -> NDArray[np.float64]:
        check_info(info, self.m)
        return dense_record_information(self.matrix, info)

    def max_abs_row_sum(self) -> float:
        return float(np.max(np.abs(self.matrix).sum(axis=1)))

    def absolute(self) -> DenseMatrix:
        return DenseMatrix(np.abs(self.matrix))

    def dense(self) -> NDArray[np.float64]:
        return self.matrix

    def __repr__(self) -> str:
        return f"DenseMatrix(shape={self.shape})"


class SparseMatrix(MatrixOperator):
    """A ``scipy.sparse`` matrix (kept in CSC form, so blocks of records are column slices)."""

    __slots__ = ()

    def __init__(self, matrix: Any) -> None:
        from scipy import sparse

        if not sparse.issparse(matrix):
            raise InvalidParameterError("`matrix` of `SparseMatrix` must be a scipy.sparse matrix or array.")
        c = sparse.csc_array(matrix, dtype=float)
        if c.ndim != 2 or 0 in c.shape:
            raise DimensionError(f"`matrix` of `SparseMatrix` must be a non-empty 2-d matrix; got {c.shape}.")
        if not np.all(np.isfinite(c.data)):
            raise InvalidParameterError("`matrix` of `SparseMatrix` must contain only finite numbers.")
        c.eliminate_zeros()
        self.matrix = c

    def gram(self) -> SymmetricForm:
        g = (self.matrix @ self.matrix.T).tocoo()
        if np.all(g.row == g.col):
            diag = np.zeros(self.m)
            diag[g.row] = g.data
            return DiagonalForm(diag)
        return DenseForm(g.toarray(), check=False)

    def column_norms(self, norm: str = "l1", block: int | None = None) -> NDArray[np.float64]:
        c = self.matrix
        if norm == "l1":
            return np.asarray(abs(c).sum(axis=0)).ravel()
        if norm == "l2":
            return np.sqrt(np.asarray(c.multiply(c).sum(axis=0)).ravel())
        return dense_column_norms(c.toarray(), norm, block)

    def record_information(self, info: SymmetricForm) -> NDArray[np.float64]:
        check_info(info, self.m)
        c = self.matrix
        if info.is_diagonal:
            weights = info.diagonal()
            return np.asarray(c.multiply(c).T @ weights).ravel()
        jc = info.matvec(c.toarray().T)  # (n, m): columns weighted by J
        return np.asarray(c.multiply(jc.T).sum(axis=0)).ravel()

    def max_abs_row_sum(self) -> float:
        return float(np.max(np.asarray(abs(self.matrix).sum(axis=1)).ravel()))

    def max_column_support(self) -> int:
        return int(np.max(np.diff(self.matrix.indptr)))

    def absolute(self) -> SparseMatrix:
        return SparseMatrix(abs(self.matrix))

    def dense(self) -> NDArray[np.float64]:
        if self.m * self.n > 64 * DENSE_LIMIT**2:
            raise DimensionError(f"the dense form of this sparse {self.shape} query is too large.")
        return readonly(self.matrix.toarray())

    def __repr__(self) -> str:
        return f"SparseMatrix(shape={self.shape}, nnz={self.matrix.nnz})"


def as_operator(value: Any) -> LinearOperator:
    """A :class:`LinearOperator` from an operator (as is), a scipy.sparse matrix, a 1-d row or a 2-d array."""
    if isinstance(value, LinearOperator):
        return value
    from scipy import sparse

    if sparse.issparse(value):
        return SparseMatrix(value)
    if np.ndim(value) == 1:
        return Row(value)
    return DenseMatrix(value)
