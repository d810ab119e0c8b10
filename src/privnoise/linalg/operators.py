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

Each operator implements :class:`~privnoise.linalg.LinearOperator` (:mod:`privnoise.linalg.linear_operator`) per
structure and without building anything n × n: CCᵀ as a :class:`~privnoise.linalg.forms.SymmetricForm`, column
norms and sensitivities, per-record Fisher information and the Cramér–Rao bound, in closed form where the structure
allows (O(1) for s·I and constant rows).

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

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import as_finite_array, check_finite, check_positive_int, readonly
from ..exceptions import DimensionError
from .forms import DENSE_LIMIT, DenseForm, DiagonalForm, IsotropicForm, SymmetricForm
from .linear_operator import (
    NORMS,
    LinearOperator,
    check_info,
    check_norm,
    dense_column_norms,
    dense_inverse_trace,
    dense_record_information,
)

__all__ = [
    "NORMS",
    "Diagonal",
    "Identity",
    "LinearOperator",
    "Row",
    "check_info",
    "check_norm",
    "dense_column_norms",
    "dense_inverse_trace",
    "dense_record_information",
]

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
        check_norm(norm, block)
        return abs(self.scale)

    def record_information(self, info: SymmetricForm) -> NDArray[np.float64]:
        check_info(info, self._n)
        return self.scale**2 * info.diagonal()

    def max_record_information(self, info: SymmetricForm) -> float:
        check_info(info, self._n)
        return self.scale**2 * info.max_diagonal()

    def information_inverse_trace(self, info: SymmetricForm) -> float | None:
        check_info(info, self._n)
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
        check_info(info, self.weights.size)
        return self.weights**2 * info.diagonal()

    def information_inverse_trace(self, info: SymmetricForm) -> float | None:
        check_info(info, self.weights.size)
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
        check_norm(norm, block)
        if self.constant_value is not None:
            return abs(self.constant_value)
        return float(np.max(np.abs(self.weights)))

    def record_information(self, info: SymmetricForm) -> NDArray[np.float64]:
        check_info(info, 1)
        return info.max_diagonal() * self.weights**2

    def max_record_information(self, info: SymmetricForm) -> float:
        check_info(info, 1)
        return info.max_diagonal() * self.max_column_norm("l2") ** 2

    def information_inverse_trace(self, info: SymmetricForm) -> float | None:
        check_info(info, 1)
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
