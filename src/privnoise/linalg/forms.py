"""Symmetric positive semi-definite matrices kept in structured form: s·I, diagonal, Kronecker, block, dense.

A query's Gram matrix CCᵀ, a noise covariance Σ, a noise's Fisher information J and the information a release
carries about the data are all symmetric positive semi-definite. For the queries of the papers they have structure
(the identity release of a million households has CCᵀ = I), and everything privnoise needs of them — trace,
diagonal, square root, inverse, eigenvalue range, log-determinant, a Gaussian factor — has a closed form per
structure. Nothing size × size is built unless the matrix was given dense.

==========================  ===================================================================================
:class:`IsotropicForm`      s·I_m, stored as (m, s): O(1) memory
:class:`DiagonalForm`       diag(d)
:class:`KroneckerForm`      A ⊗ B of two forms (the Gram of a Kronecker query; eigenvalues are the products)
:class:`BlockDiagonalForm`  diag(A₁, …, A_k) of forms
:class:`DenseForm`          any symmetric matrix, by eigendecomposition
==========================  ===================================================================================

Examples
--------
>>> from privnoise.linalg import IsotropicForm, DenseForm
>>> g = IsotropicForm(10**8, 4.0)
>>> g.sqrt().trace(), g.inverse().max_diagonal()
(200000000.0, 0.25)
>>> d = DenseForm([[2.0, 1.0], [1.0, 2.0]])
>>> float(round(d.sqrt().dense()[0, 1], 12))
0.366025403784
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import as_finite_array, as_matrix, check_finite, check_positive_int, readonly
from ..exceptions import DimensionError, InvalidParameterError

__all__ = [
    "DENSE_LIMIT",
    "DenseForm",
    "DiagonalForm",
    "IsotropicForm",
    "SymmetricForm",
    "as_form",
    "refuse_dense",
]

#: The largest size for which a structured form is expanded into a dense matrix on request.
DENSE_LIMIT = 4096


def refuse_dense(size: int, what: str) -> None:
    if size > DENSE_LIMIT:
        raise DimensionError(
            f"the dense {what} would have {size}² entries (more than {DENSE_LIMIT}²); use its structured form "
            "(trace, diagonal, max_diagonal) instead."
        )


class SymmetricForm(ABC):
    """A symmetric positive semi-definite ``size × size`` matrix in structured form."""

    __slots__ = ()

    @property
    @abstractmethod
    def size(self) -> int:
        """The number of rows (= columns)."""

    @abstractmethod
    def diagonal(self) -> NDArray[np.float64]:
        """The diagonal as a vector of length ``size`` (O(size) memory)."""

    @abstractmethod
    def trace(self) -> float:
        """Σ diagonal."""

    @abstractmethod
    def eigenvalue_range(self) -> tuple[float, float]:
        """(smallest, largest) eigenvalue."""

    @abstractmethod
    def power(self, exponent: float) -> SymmetricForm:
        """A^p by the spectral theorem (p < 0 needs a positive-definite A)."""

    @abstractmethod
    def scaled(self, factor: float) -> SymmetricForm:
        """factor · A."""

    @abstractmethod
    def matvec(self, y: NDArray[np.float64]) -> NDArray[np.float64]:
        """A y over the last axis of ``y`` (shape (..., size))."""

    @abstractmethod
    def factor_apply(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        """z Lᵀ for a factor L with LLᵀ = A, over the last axis of z (in place where possible).

        Gaussian noise N(0, A) is ``factor_apply(standard normal)``.
        """

    @abstractmethod
    def log_determinant(self) -> float:
        """log det A (−inf when singular)."""

    @abstractmethod
    def dense(self) -> NDArray[np.float64]:
        """The dense matrix (refused beyond :data:`DENSE_LIMIT` unless the form was given dense)."""

    @abstractmethod
    def principal(self, lo: int, hi: int) -> SymmetricForm | None:
        """The principal block A[lo:hi, lo:hi] when coordinates lo:hi are uncoupled from the rest, else None."""

    # -- shared -------------------------------------------------------------------------------------------------
    @property
    def is_diagonal(self) -> bool:
        return False

    def max_diagonal(self) -> float:
        return float(np.max(self.diagonal()))

    def min_diagonal(self) -> float:
        return float(np.min(self.diagonal()))

    def sqrt(self) -> SymmetricForm:
        return self.power(0.5)

    def inverse(self) -> SymmetricForm:
        return self.power(-1.0)

    def is_invertible(self, rtol: float = 1e-12) -> bool:
        low, high = self.eigenvalue_range()
        return bool(high > 0 and low > rtol * high)

    def quadratic(self, y: NDArray[np.float64]) -> NDArray[np.float64]:
        """yᵀ A y over the last axis."""
        return np.asarray(np.einsum("...i,...i->...", y, self.matvec(y)))

    def trace_product(self, other: SymmetricForm) -> float:
        """Tr(A B) without forming either matrix when one is isotropic or both are diagonal."""
        if other.size != self.size:
            raise DimensionError(f"trace of a product of {self.size}×{self.size} and {other.size}×{other.size}.")
        if isinstance(other, IsotropicForm):
            return other.value * self.trace()
        if isinstance(self, IsotropicForm):
            return self.value * other.trace()
        if self.is_diagonal and other.is_diagonal:
            return float(np.dot(self.diagonal(), other.diagonal()))
        return float(np.sum(self.dense() * other.dense()))

    def __array__(self, dtype: Any = None, copy: Any = None) -> NDArray[np.float64]:
        out = self.dense()
        return out if dtype is None else out.astype(dtype)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready summary: the structure, the size, the trace and the diagonal range."""
        return {
            "structure": type(self).__name__,
            "size": self.size,
            "trace": self.trace(),
            "diagonal_range": [self.min_diagonal(), self.max_diagonal()],
        }


class IsotropicForm(SymmetricForm):
    """s·I_size (s ≥ 0), in O(1) memory."""

    __slots__ = ("_size", "value")

    def __init__(self, size: int, value: float) -> None:
        self._size = check_positive_int(size, "size", "IsotropicForm")
        v = check_finite(value, "value", "IsotropicForm")
        if v < 0:
            raise InvalidParameterError(f"`value` of `IsotropicForm` must be >= 0; got {v:g}.")
        self.value = v

    @property
    def size(self) -> int:
        return self._size

    @property
    def is_diagonal(self) -> bool:
        return True

    def diagonal(self) -> NDArray[np.float64]:
        return np.broadcast_to(np.float64(self.value), (self._size,))

    def max_diagonal(self) -> float:
        return self.value

    def min_diagonal(self) -> float:
        return self.value

    def trace(self) -> float:
        return self.value * self._size

    def eigenvalue_range(self) -> tuple[float, float]:
        return self.value, self.value

    def power(self, exponent: float) -> IsotropicForm:
        if exponent < 0 and self.value == 0:
            raise InvalidParameterError("a singular matrix (0·I) has no negative power.")
        return IsotropicForm(self._size, self.value**exponent)

    def scaled(self, factor: float) -> IsotropicForm:
        return IsotropicForm(self._size, self.value * factor)

    def matvec(self, y: NDArray[np.float64]) -> NDArray[np.float64]:
        return y * self.value

    def factor_apply(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        z *= math.sqrt(self.value)
        return z

    def log_determinant(self) -> float:
        return -math.inf if self.value == 0 else self._size * math.log(self.value)

    def dense(self) -> NDArray[np.float64]:
        refuse_dense(self._size, "isotropic matrix")
        return readonly(self.value * np.eye(self._size))

    def principal(self, lo: int, hi: int) -> IsotropicForm:
        return IsotropicForm(hi - lo, self.value)

    def __repr__(self) -> str:
        return f"IsotropicForm(size={self._size}, value={self.value!r})"


class DiagonalForm(SymmetricForm):
    """diag(d) with d ≥ 0."""

    __slots__ = ("values",)

    def __init__(self, values: ArrayLike) -> None:
        d = as_finite_array(values, "values", "DiagonalForm", ndim=1)
        if d.size == 0:
            raise DimensionError("`values` of `DiagonalForm` must not be empty.")
        if np.any(d < 0):
            raise InvalidParameterError("`values` of `DiagonalForm` must be >= 0.")
        self.values = d if d.strides == (0,) else readonly(d)  # a broadcast constant stays O(1) in memory

    @property
    def size(self) -> int:
        return int(self.values.size)

    @property
    def is_diagonal(self) -> bool:
        return True

    def diagonal(self) -> NDArray[np.float64]:
        return self.values

    def trace(self) -> float:
        return float(np.sum(self.values))

    def eigenvalue_range(self) -> tuple[float, float]:
        return float(np.min(self.values)), float(np.max(self.values))

    def power(self, exponent: float) -> DiagonalForm:
        if exponent < 0 and np.any(self.values == 0):
            raise InvalidParameterError("a singular diagonal matrix has no negative power.")
        return DiagonalForm(self.values**exponent)

    def scaled(self, factor: float) -> DiagonalForm:
        return DiagonalForm(self.values * factor)

    def matvec(self, y: NDArray[np.float64]) -> NDArray[np.float64]:
        return y * self.values

    def factor_apply(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        z *= np.sqrt(self.values)
        return z

    def log_determinant(self) -> float:
        with np.errstate(divide="ignore"):
            return float(np.sum(np.log(self.values)))

    def dense(self) -> NDArray[np.float64]:
        refuse_dense(self.size, "diagonal matrix")
        return readonly(np.diag(self.values))

    def principal(self, lo: int, hi: int) -> DiagonalForm:
        return DiagonalForm(self.values[lo:hi])

    def __repr__(self) -> str:
        return f"DiagonalForm(size={self.size})"


class DenseForm(SymmetricForm):
    """Any symmetric positive semi-definite matrix, given dense; powers by eigendecomposition."""

    __slots__ = ("_eig", "matrix")

    def __init__(self, matrix: ArrayLike, *, check: bool = True) -> None:
        if check:
            a = as_matrix(matrix, "matrix", "DenseForm", symmetric=True)
        else:
            a = np.asarray(matrix, dtype=float)
            a = (a + a.T) / 2.0
        self.matrix = readonly(a)
        self._eig: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None

    def _eigen(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        if self._eig is None:
            vals, vecs = np.linalg.eigh(self.matrix)
            self._eig = (vals, vecs)
        return self._eig

    @property
    def size(self) -> int:
        return int(self.matrix.shape[0])

    @property
    def is_diagonal(self) -> bool:
        return bool(np.count_nonzero(self.matrix - np.diag(np.diag(self.matrix))) == 0)

    def diagonal(self) -> NDArray[np.float64]:
        return readonly(np.diag(self.matrix))

    def trace(self) -> float:
        return float(np.trace(self.matrix))

    def eigenvalue_range(self) -> tuple[float, float]:
        vals = self._eigen()[0]
        return float(vals[0]), float(vals[-1])

    def power(self, exponent: float) -> DenseForm:
        vals, vecs = self._eigen()
        if exponent < 0 and not self.is_invertible():
            raise InvalidParameterError("a singular matrix has no negative power.")
        out = (vecs * np.maximum(vals, 0.0) ** exponent) @ vecs.T
        if exponent == -1.0:  # the inverse straight from LAPACK is more accurate than the spectral one
            out = np.linalg.inv(self.matrix)
        return DenseForm(out, check=False)

    def scaled(self, factor: float) -> DenseForm:
        return DenseForm(self.matrix * factor, check=False)

    def matvec(self, y: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(y @ self.matrix)

    def factor_apply(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(z @ np.linalg.cholesky(self.matrix).T)

    def log_determinant(self) -> float:
        sign, value = np.linalg.slogdet(self.matrix)
        return float(value) if sign > 0 else -math.inf

    def dense(self) -> NDArray[np.float64]:
        return self.matrix

    def principal(self, lo: int, hi: int) -> DenseForm | None:
        a = self.matrix
        coupled = np.any(a[lo:hi, :lo]) or np.any(a[lo:hi, hi:])
        return None if coupled else DenseForm(a[lo:hi, lo:hi], check=False)

    def __repr__(self) -> str:
        return f"DenseForm(size={self.size})"


def as_form(value: Any) -> SymmetricForm:
    """A :class:`SymmetricForm` from a form (returned as is), a non-negative scalar (1×1) or a dense matrix."""
    if isinstance(value, SymmetricForm):
        return value
    if np.ndim(value) == 0 and not isinstance(value, str | bytes):
        return DenseForm([[check_finite(value, "value", "as_form")]])
    return DenseForm(value)
