"""The interface of a query's matrix C as a structured operator, and the dense computations structures share.

:class:`LinearOperator` is C, an (m, n) matrix in structured form (:mod:`privnoise.linalg.operators`,
:mod:`privnoise.linalg.matrices`, :mod:`privnoise.linalg.composite`). Each operator gives, per structure and
without building anything n × n:

* ``gram()`` — CCᵀ as a :class:`~privnoise.linalg.forms.SymmetricForm` (its square root, trace and spectrum follow);
* ``max_column_norm(norm)`` — max_i ‖C e_i‖ (ℓ1, ℓ2 or the sum of ℓ2 norms over output blocks): a query's
  sensitivity is this times the width of the declared record bounds;
* ``record_information(J)`` — 𝓘_ii = c_iᵀ J c_i for every record (the diagonal of the Fisher information CᵀJC of a
  release with noise information J), ``max_record_information(J)`` — its maximum (O(1) for s·I and constant rows);
* ``information_inverse_trace(J)`` — Tr (CᵀJC)⁻¹ (the Cramér–Rao bound), ∞ when n > m;
* ``apply`` and ``apply_columns`` (a block of records at a time, for data read in chunks).

The helpers below (norm and information checks, column norms and record information of a dense block, the
Cramér–Rao trace of a dense information matrix) are shared by the structures that fall back on dense blocks.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..exceptions import DimensionError, InvalidParameterError
from .forms import DENSE_LIMIT, IsotropicForm, SymmetricForm

__all__ = [
    "NORMS",
    "LinearOperator",
    "check_info",
    "check_norm",
    "dense_column_norms",
    "dense_inverse_trace",
    "dense_record_information",
]

NORMS = ("l1", "l2", "l1-l2")


def check_norm(norm: str, block: int | None) -> None:
    if norm not in NORMS:
        raise InvalidParameterError(f"`norm` must be one of {', '.join(NORMS)}; got {norm!r}.")
    if norm == "l1-l2" and (block is None or block < 1):
        raise InvalidParameterError("`block` must be an integer >= 1 with norm 'l1-l2'.")


def dense_column_norms(c: NDArray[np.float64], norm: str, block: int | None) -> NDArray[np.float64]:
    if norm == "l1":
        return np.abs(c).sum(axis=0)
    if norm == "l2":
        return np.sqrt((c * c).sum(axis=0))
    assert block is not None
    m = c.shape[0]
    if m % block:
        raise DimensionError(f"the query's {m} outputs do not split into blocks of {block}.")
    return np.sqrt((c * c).reshape(m // block, block, -1).sum(axis=1)).sum(axis=0)


def dense_record_information(c: NDArray[np.float64], info: SymmetricForm) -> NDArray[np.float64]:
    if isinstance(info, IsotropicForm):
        return info.value * np.einsum("ki,ki->i", c, c)
    if info.is_diagonal:
        return np.einsum("k,ki,ki->i", info.diagonal(), c, c)
    return np.einsum("ki,kl,li->i", c, info.dense(), c)


def dense_inverse_trace(information: NDArray[np.float64]) -> float:
    from .cramer_rao import cramer_rao_bound

    return cramer_rao_bound(information)


def check_info(info: SymmetricForm, m: int) -> None:
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
        check_norm(norm, block)
        return float(np.max(self.column_norms(norm, block)))

    def max_record_information(self, info: SymmetricForm) -> float:
        """max_i c_iᵀ J c_i (the information about the least protected record)."""
        return float(np.max(self.record_information(info)))

    def information_trace(self, info: SymmetricForm) -> float:
        """Tr(CᵀJC) = Tr(J CCᵀ)."""
        check_info(info, self.m)
        return info.trace_product(self.gram())

    def information_inverse_trace(self, info: SymmetricForm) -> float | None:
        """Tr (CᵀJC)⁻¹: ∞ when CᵀJC is singular (always when n > m); None when too large to compute densely."""
        check_info(info, self.m)
        if self.n > self.m:
            return math.inf
        if self.n > DENSE_LIMIT:
            return None
        c = self.dense().reshape(self.m, self.n)
        j = info.dense()
        return dense_inverse_trace(c.T @ j @ c)

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
