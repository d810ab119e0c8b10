"""The matrix C of a linear query f(x) = Cx as a structured operator, with its closed forms.

=============================  ======================================================================================
:class:`Identity`              s·I_n (identity and scaled identity releases; Farokhi & Sandberg, Example 1), O(1)
:class:`Diagonal`              diag(d): one weight per record, one output per record
:class:`Row`                   a row of weights wᵀ (sum, mean, weighted mean; a constant row is O(1) in memory)
:class:`SparseMatrix`          a ``scipy.sparse`` matrix (kept in CSC form)
:class:`DenseMatrix`           any (m, n) array
:class:`Kronecker`             A ⊗ B (a per-step map repeated over an LTI horizon: I_T ⊗ C)
:class:`BlockDiagonal`         diag(C₁, …, C_k)
=============================  ======================================================================================

Each operator gives, per structure and without building anything n × n:

* ``gram()`` — CCᵀ as a :class:`~privnoise.linalg.forms.SymmetricForm` (its square root, trace and spectrum follow);
* ``max_column_norm(norm)`` — max_i ‖C e_i‖ (ℓ1, ℓ2 or the sum of ℓ2 norms over output blocks): a query's
  sensitivity is this times the width of the declared record bounds;
* ``record_information(J)`` — 𝓘_ii = c_iᵀ J c_i for every record (the diagonal of the Fisher information CᵀJC of a
  release with noise information J), ``max_record_information(J)`` — its maximum (O(1) for s·I and constant rows);
* ``information_inverse_trace(J)`` — Tr (CᵀJC)⁻¹ (the Cramér–Rao bound), ∞ when n > m;
* ``apply`` and ``apply_columns`` (a block of records at a time, for data read in chunks).

Examples
--------
>>> import numpy as np
>>> from privnoise.linalg import Identity, Row, IsotropicForm
>>> c = Identity(10**9)
>>> c.gram(), c.max_column_norm("l1")
(IsotropicForm(size=1000000000, value=1.0), 1.0)
>>> c.information_inverse_trace(IsotropicForm(10**9, 4.0))
250000000.0
>>> Row.constant(4, 0.25).apply(np.array([1.0, 2.0, 3.0, 6.0])).tolist()
[3.0]
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import as_finite_array, as_matrix, check_finite, check_positive_int, readonly
from ..exceptions import DimensionError, InvalidParameterError
from .forms import (
    DENSE_LIMIT,
    BlockDiagonalForm,
    DenseForm,
    DiagonalForm,
    IsotropicForm,
    KroneckerForm,
    SymmetricForm,
)

__all__ = [
    "BlockDiagonal",
    "DenseMatrix",
    "Diagonal",
    "Identity",
    "Kronecker",
    "LinearOperator",
    "MatrixOperator",
    "Row",
    "SparseMatrix",
    "as_operator",
]

NORMS = ("l1", "l2", "l1-l2")


def _check_norm(norm: str, block: int | None) -> None:
    if norm not in NORMS:
        raise InvalidParameterError(f"`norm` must be one of {', '.join(NORMS)}; got {norm!r}.")
    if norm == "l1-l2" and (block is None or block < 1):
        raise InvalidParameterError("`block` must be an integer >= 1 with norm 'l1-l2'.")


def _dense_column_norms(c: NDArray[np.float64], norm: str, block: int | None) -> NDArray[np.float64]:
    if norm == "l1":
        return np.abs(c).sum(axis=0)
    if norm == "l2":
        return np.sqrt((c * c).sum(axis=0))
    assert block is not None
    m = c.shape[0]
    if m % block:
        raise DimensionError(f"the query's {m} outputs do not split into blocks of {block}.")
    return np.sqrt((c * c).reshape(m // block, block, -1).sum(axis=1)).sum(axis=0)


def _dense_record_information(c: NDArray[np.float64], info: SymmetricForm) -> NDArray[np.float64]:
    if isinstance(info, IsotropicForm):
        return info.value * np.einsum("ki,ki->i", c, c)
    if info.is_diagonal:
        return np.einsum("k,ki,ki->i", info.diagonal(), c, c)
    return np.einsum("ki,kl,li->i", c, info.dense(), c)


def _dense_inverse_trace(information: NDArray[np.float64]) -> float:
    from ..fisher.cramer_rao import cramer_rao_bound

    return cramer_rao_bound(information)


def _check_info(info: SymmetricForm, m: int) -> None:
    if info.size != m:
        raise DimensionError(f"the noise information is {info.size}×{info.size}; the query has {m} output(s).")


class LinearOperator(ABC):
    """C, an (m, n) matrix in structured form (see the module docstring for what each structure provides)."""

    __slots__ = ()

    @property
    @abstractmethod
    def shape(self) -> tuple[int, int]:
        """(m, n): outputs and records."""

    @abstractmethod
    def apply(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        """Cx for a database x of length n (an (m,) array)."""

    def apply_columns(self, block: NDArray[np.float64], start: int) -> NDArray[np.float64]:
        """C[:, start:start+k] · block: the contribution of k consecutive records to Cx."""
        x = np.zeros(self.n)
        x[start : start + block.size] = block
        return self.apply(x)

    @abstractmethod
    def gram(self) -> SymmetricForm:
        """CCᵀ."""

    @abstractmethod
    def column_norms(self, norm: str = "l1", block: int | None = None) -> NDArray[np.float64]:
        """‖C e_i‖ for every record i (an (n,) array)."""

    @abstractmethod
    def record_information(self, info: SymmetricForm) -> NDArray[np.float64]:
        """c_iᵀ J c_i for every record i: the diagonal of CᵀJC."""

    @abstractmethod
    def max_abs_row_sum(self) -> float:
        """max_k Σ_i |C_ki|: |Cx|_∞ ≤ this × max_i |x_i|."""

    @abstractmethod
    def absolute(self) -> LinearOperator:
        """C with each entry replaced by its absolute value: the sup of the absolute Jacobian of a linear query."""

    @abstractmethod
    def dense(self) -> NDArray[np.float64]:
        """C as an (m, n) array (refused beyond :data:`~privnoise.linalg.forms.DENSE_LIMIT` unless given dense)."""

    # -- shared, overridden where a structure knows better ---------------------------------------------------------
    @property
    def m(self) -> int:
        return self.shape[0]

    @property
    def n(self) -> int:
        return self.shape[1]

    def record_scale(self, start: int, stop: int) -> Any:
        """For a square diagonal C (output i depends on record i only): the weights of records start:stop.

        None for every other structure. This is what lets an identity release be computed chunk by chunk.
        """
        return None

    def max_column_norm(self, norm: str = "l1", block: int | None = None) -> float:
        """max_i ‖C e_i‖: the sensitivity of Cx to one record moving by 1."""
        _check_norm(norm, block)
        return float(np.max(self.column_norms(norm, block)))

    def max_record_information(self, info: SymmetricForm) -> float:
        """max_i c_iᵀ J c_i (the information about the least protected record)."""
        return float(np.max(self.record_information(info)))

    def information_trace(self, info: SymmetricForm) -> float:
        """Tr(CᵀJC) = Tr(J CCᵀ)."""
        _check_info(info, self.m)
        return info.trace_product(self.gram())

    def information_inverse_trace(self, info: SymmetricForm) -> float | None:
        """Tr (CᵀJC)⁻¹: ∞ when CᵀJC is singular (always when n > m); None when too large to compute densely."""
        _check_info(info, self.m)
        if self.n > self.m:
            return math.inf
        if self.n > DENSE_LIMIT:
            return None
        c = self.dense().reshape(self.m, self.n)
        j = info.dense()
        return _dense_inverse_trace(c.T @ j @ c)

    def max_column_support(self) -> int:
        """max_i #{k : C_ki ≠ 0}: how many outputs one record can move (what rounding each output costs)."""
        return int(np.max(np.count_nonzero(np.asarray(self.dense()).reshape(self.shape), axis=0)))

    def is_zero(self) -> bool:
        return self.max_abs_row_sum() == 0.0

    def __array__(self, dtype: Any = None, copy: Any = None) -> NDArray[np.float64]:
        out = self.dense()
        return out if dtype is None else out.astype(dtype)

    def as_dict(self) -> dict[str, Any]:
        return {"structure": type(self).__name__, "shape": list(self.shape)}


class Identity(LinearOperator):
    """s·I_n: the (scaled) identity release, O(1) in memory."""

    __slots__ = ("_n", "scale")

    def __init__(self, n: int, scale: float = 1.0) -> None:
        self._n = check_positive_int(n, "n", "Identity")
        self.scale = check_finite(scale, "scale", "Identity")

    @property
    def shape(self) -> tuple[int, int]:
        return self._n, self._n

    def apply(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return x.copy() if self.scale == 1.0 else x * self.scale

    def apply_columns(self, block: NDArray[np.float64], start: int) -> NDArray[np.float64]:
        out = np.zeros(self._n)
        out[start : start + block.size] = block * self.scale
        return out

    def record_scale(self, start: int, stop: int) -> float:
        return self.scale

    def gram(self) -> IsotropicForm:
        return IsotropicForm(self._n, self.scale**2)

    def column_norms(self, norm: str = "l1", block: int | None = None) -> NDArray[np.float64]:
        return np.broadcast_to(np.float64(abs(self.scale)), (self._n,))

    def max_column_norm(self, norm: str = "l1", block: int | None = None) -> float:
        _check_norm(norm, block)
        return abs(self.scale)

    def record_information(self, info: SymmetricForm) -> NDArray[np.float64]:
        _check_info(info, self._n)
        return self.scale**2 * info.diagonal()

    def max_record_information(self, info: SymmetricForm) -> float:
        _check_info(info, self._n)
        return self.scale**2 * info.max_diagonal()

    def information_inverse_trace(self, info: SymmetricForm) -> float | None:
        _check_info(info, self._n)
        if self.scale == 0.0 or not info.is_invertible():
            return math.inf
        return info.inverse().trace() / self.scale**2

    def max_abs_row_sum(self) -> float:
        return abs(self.scale)

    def max_column_support(self) -> int:
        return 1

    def absolute(self) -> Identity:
        return Identity(self._n, abs(self.scale))

    def dense(self) -> NDArray[np.float64]:
        if self._n > DENSE_LIMIT:
            raise DimensionError(
                f"the dense identity query would have {self._n}² entries; it is kept structured (use the "
                "query's operator)."
            )
        return readonly(self.scale * np.eye(self._n))

    def __repr__(self) -> str:
        return f"Identity(n={self._n}, scale={self.scale!r})"


class Diagonal(LinearOperator):
    """diag(d): output i is d_i x_i."""

    __slots__ = ("weights",)

    def __init__(self, weights: ArrayLike) -> None:
        d = as_finite_array(weights, "weights", "Diagonal", ndim=1)
        if d.size == 0:
            raise DimensionError("`weights` of `Diagonal` must not be empty.")
        self.weights = readonly(d)

    @property
    def shape(self) -> tuple[int, int]:
        return self.weights.size, self.weights.size

    def apply(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return x * self.weights

    def apply_columns(self, block: NDArray[np.float64], start: int) -> NDArray[np.float64]:
        out = np.zeros(self.weights.size)
        out[start : start + block.size] = block * self.weights[start : start + block.size]
        return out

    def record_scale(self, start: int, stop: int) -> NDArray[np.float64]:
        return self.weights[start:stop]

    def gram(self) -> DiagonalForm:
        return DiagonalForm(self.weights**2)

    def column_norms(self, norm: str = "l1", block: int | None = None) -> NDArray[np.float64]:
        return np.abs(self.weights)

    def record_information(self, info: SymmetricForm) -> NDArray[np.float64]:
        _check_info(info, self.weights.size)
        return self.weights**2 * info.diagonal()

    def information_inverse_trace(self, info: SymmetricForm) -> float | None:
        _check_info(info, self.weights.size)
        if np.any(self.weights == 0.0) or not info.is_invertible():
            return math.inf
        return float(np.sum(info.inverse().diagonal() / self.weights**2))

    def max_abs_row_sum(self) -> float:
        return float(np.max(np.abs(self.weights)))

    def max_column_support(self) -> int:
        return 1

    def absolute(self) -> Diagonal:
        return Diagonal(np.abs(self.weights))

    def dense(self) -> NDArray[np.float64]:
        if self.weights.size > DENSE_LIMIT:
            raise DimensionError(f"the dense diagonal query would have {self.weights.size}² entries.")
        return readonly(np.diag(self.weights))

    def __repr__(self) -> str:
        return f"Diagonal(n={self.weights.size})"


class Row(LinearOperator):
    """A single row of weights wᵀ (m = 1): Σ w_i x_i. ``Row.constant(n, c)`` keeps c·1ᵀ in O(1) memory."""

    __slots__ = ("_n", "constant_value", "weights")

    def __init__(self, weights: ArrayLike | None = None, *, n: int | None = None, value: float = 0.0) -> None:
        if weights is None:
            self._n = check_positive_int(n, "n", "Row")
            self.constant_value: float | None = check_finite(value, "value", "Row")
            self.weights = np.broadcast_to(np.float64(self.constant_value), (self._n,))
            return
        w = as_finite_array(weights, "weights", "Row", ndim=1)
        if w.size == 0:
            raise DimensionError("`weights` of `Row` must not be empty.")
        self._n = int(w.size)
        self.constant_value = None
        self.weights = readonly(w)

    @classmethod
    def constant(cls, n: int, value: float) -> Row:
        """c·1ᵀ on n records (the sum for c = 1, the mean for c = 1/n)."""
        return cls(n=n, value=value)

    @property
    def shape(self) -> tuple[int, int]:
        return 1, self._n

    def apply(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        if self.constant_value is not None:
            return np.array([float(np.sum(x)) * self.constant_value])
        return np.array([float(np.dot(self.weights, x))])

    def apply_columns(self, block: NDArray[np.float64], start: int) -> NDArray[np.float64]:
        if self.constant_value is not None:
            return np.array([float(np.sum(block)) * self.constant_value])
        return np.array([float(np.dot(self.weights[start : start + block.size], block))])

    def gram(self) -> DenseForm:
        if self.constant_value is not None:
            return DenseForm([[self.constant_value**2 * self._n]], check=False)
        return DenseForm([[float(np.dot(self.weights, self.weights))]], check=False)

    def column_norms(self, norm: str = "l1", block: int | None = None) -> NDArray[np.float64]:
        return np.abs(self.weights)

    def max_column_norm(self, norm: str = "l1", block: int | None = None) -> float:
        _check_norm(norm, block)
        if self.constant_value is not None:
            return abs(self.constant_value)
        return float(np.max(np.abs(self.weights)))

    def record_information(self, info: SymmetricForm) -> NDArray[np.float64]:
        _check_info(info, 1)
        return info.max_diagonal() * self.weights**2

    def max_record_information(self, info: SymmetricForm) -> float:
        _check_info(info, 1)
        return info.max_diagonal() * self.max_column_norm("l2") ** 2

    def information_inverse_trace(self, info: SymmetricForm) -> float | None:
        _check_info(info, 1)
        if self._n > 1:
            return math.inf
        value = info.max_diagonal() * float(self.weights[0]) ** 2
        return math.inf if value <= 0 else 1.0 / value

    def max_abs_row_sum(self) -> float:
        if self.constant_value is not None:
            return abs(self.constant_value) * self._n
        return float(np.sum(np.abs(self.weights)))

    def max_column_support(self) -> int:
        return 1

    def absolute(self) -> Row:
        if self.constant_value is not None:
            return Row.constant(self._n, abs(self.constant_value))
        return Row(np.abs(self.weights))

    def dense(self) -> NDArray[np.float64]:
        if self.constant_value is not None and self._n > 64 * DENSE_LIMIT**2:
            raise DimensionError(f"the dense row would have {self._n} entries; it is kept as a constant.")
        return readonly(np.array(self.weights).reshape(1, self._n))

    def __repr__(self) -> str:
        kind = f"constant={self.constant_value!r}" if self.constant_value is not None else "weights"
        return f"Row(n={self._n}, {kind})"


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
        return _dense_column_norms(self.matrix, norm, block)

    def record_information(self, info: SymmetricForm) -> NDArray[np.float64]:
        _check_info(info, self.m)
        return _dense_record_information(self.matrix, info)

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
        return _dense_column_norms(c.toarray(), norm, block)

    def record_information(self, info: SymmetricForm) -> NDArray[np.float64]:
        _check_info(info, self.m)
        c = self.matrix
        if info.is_diagonal:
            weights = info.diagonal()
            return np.asarray(c.multiply(c).T @ weights).ravel()
        jc = info.matvec(c.toarray().T)  # (n, m): columns weighted by J
        return np.asarray(c.multiply(jc.T).sum(axis=0)).ravel()

    def information_inverse_trace(self, info: SymmetricForm) -> float | None:
        _check_info(info, self.m)
        if self.n > self.m:
            return math.inf
        if self.n > DENSE_LIMIT:
            return None
        c = self.matrix.toarray()
        return _dense_inverse_trace(c.T @ info.dense() @ c)

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
            return _dense_column_norms(self.dense(), norm, block)
        return np.outer(self.left.column_norms(norm), self.right.column_norms(norm)).ravel()

    def max_column_norm(self, norm: str = "l1", block: int | None = None) -> float:
        _check_norm(norm, block)
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
        _check_info(info, self.m)
        parts = self._factors(info)
        if parts is None:
            return _dense_record_information(self.dense(), info)
        return np.outer(self.left.record_information(parts[0]), self.right.record_information(parts[1])).ravel()

    def max_record_information(self, info: SymmetricForm) -> float:
        parts = self._factors(info)
        if parts is None:
            return super().max_record_information(info)
        return self.left.max_record_information(parts[0]) * self.right.max_record_information(parts[1])

    def information_inverse_trace(self, info: SymmetricForm) -> float | None:
        _check_info(info, self.m)
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
            return _dense_column_norms(self.dense(), norm, block)
        return np.concatenate([b.column_norms(norm) for b in self.blocks])

    def _info_blocks(self, info: SymmetricForm) -> list[SymmetricForm] | None:
        parts = [info.principal(int(r0), int(r1)) for _, r0, r1, _, _ in self._pieces()]
        return None if any(p is None for p in parts) else [p for p in parts if p is not None]

    def record_information(self, info: SymmetricForm) -> NDArray[np.float64]:
        _check_info(info, self.m)
        parts = self._info_blocks(info)
        if parts is None:
            return _dense_record_information(self.dense(), info)
        return np.concatenate([b.record_information(j) for b, j in zip(self.blocks, parts, strict=True)])

    def information_inverse_trace(self, info: SymmetricForm) -> float | None:
        _check_info(info, self.m)
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
