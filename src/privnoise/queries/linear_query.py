"""Linear queries f(x) = Cx, with C dense, sparse or a structured operator of :mod:`privnoise.linalg`.

The Jacobian of a linear query is C itself, whatever the data, so its Fisher information and its sensitivity
(``(b − a)·max_i ‖C e_i‖`` over declared bounds [a, b]) hold for every database (Farokhi & Sandberg, Theorem 2 and
Examples 1–2). A structured C (identity, diagonal, row, Kronecker, block diagonal) is never expanded.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import as_finite_array, as_matrix, readonly
from ..exceptions import DimensionError, InvalidParameterError
from ..linalg import DenseMatrix, LinearOperator, Row, SparseMatrix, SymmetricForm
from .base import Bounds, Query, SensitivityNorm

__all__ = ["LinearQuery"]


def _frozen(self: Any, name: str, value: Any) -> None:
    raise AttributeError(f"`{type(self).__name__}` is immutable; build a new query instead of setting {name!r}.")


class LinearQuery(Query):
    """A linear query f(x) = Cx with C of shape (m, n); a 1-d C (or a :class:`~privnoise.linalg.Row`) gives a
    scalar query.

    Parameters
    ----------
    matrix : array_like, scipy.sparse matrix or LinearOperator
        C: an (m, n) matrix, a length-n vector for a scalar query, a sparse matrix, or a structured operator from
        :mod:`privnoise.linalg` (identity, diagonal, row, Kronecker, block diagonal) which is never expanded.
    bounds : (lower, upper), optional
        Declared bounds on every record.
    name : str, optional
        A label for reports.

    Examples
    --------
    >>> from privnoise.linalg import Identity
    >>> q = LinearQuery(Identity(10**9), bounds=(0.0, 60.0), name="identity")
    >>> q.n, q.sensitivity("l2"), q.gram_form()
    (1000000000, 60.0, IsotropicForm(size=1000000000, value=1.0))
    """

    __slots__ = ("_scalar", "bounds", "n", "name", "operator")
    operator: LinearOperator
    _scalar: bool

    def __init__(self, matrix: Any, bounds: Any = None, name: str = "linear") -> None:
        owner = "LinearQuery"
        scalar = False
        if isinstance(matrix, LinearOperator):
            operator = matrix
            scalar = isinstance(operator, Row)
        else:
            from scipy import sparse

            if sparse.issparse(matrix):
                operator = SparseMatrix(matrix)
            elif np.ndim(matrix) == 1 and not isinstance(matrix, str | bytes):
                c = as_finite_array(matrix, "matrix", owner, ndim=1)
                if c.size == 0:
                    raise DimensionError(f"`matrix` of `{owner}` must not be empty.")
                operator, scalar = Row(c), True
            else:
                operator = DenseMatrix(as_matrix(matrix, "matrix", owner))
        if operator.is_zero():
            raise InvalidParameterError(f"`matrix` of `{owner}` must have a non-zero entry.")
        set_ = object.__setattr__
        set_(self, "operator", operator)
        set_(self, "_scalar", scalar)
        set_(self, "n", int(operator.n))
        set_(self, "bounds", Bounds.coerce(bounds))
        set_(self, "name", str(name))

    __setattr__ = _frozen
    __delattr__ = _frozen  # type: ignore[assignment]

    @property
    def matrix(self) -> NDArray[np.float64]:
        """C as a dense array (1-d for a scalar query); refused for structured operators too large to expand."""
        dense = np.asarray(self.operator.dense(), dtype=float)
        return readonly(dense.ravel()) if self._scalar else dense

    @property
    def output_shape(self) -> tuple[int, ...]:
        return () if self._scalar else (self.operator.m,)

    @property
    def is_linear(self) -> bool:
        return True

    @property
    def matrix_2d(self) -> NDArray[np.float64]:
        """C as an (m, n) array."""
        return np.atleast_2d(self.matrix)

    def gram(self) -> NDArray[np.float64]:
        """CCᵀ (m × m) as a dense array; :meth:`gram_form` keeps its structure."""
        return np.array(self.operator.gram().dense())

    def gram_form(self) -> SymmetricForm:
        """CCᵀ in structured form (s·I for an identity query, whatever n)."""
        return self.operator.gram()

    def _evaluate(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        out = self.operator.apply(x)
        return out.reshape(()) if self._scalar else out

    def _jacobian(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return self.matrix_2d

    def jacobian_operator(self, x: ArrayLike | None = None) -> LinearOperator:
        return self.operator

    def sup_jacobian(self) -> NDArray[np.float64]:
        return np.abs(self.matrix_2d)

    def sup_jacobian_operator(self) -> LinearOperator:
        return self.operator.absolute()

    def sensitivity(self, norm: SensitivityNorm = "l1", *, block: int | None = None) -> float:
        """Largest change of Cx when one record moves across its declared bounds (ℓ1, ℓ2 or per-user ℓ2 norm)."""
        if norm not in ("l1", "l2", "l1-l2"):
            raise InvalidParameterError(
                f"`norm` of `sensitivity` must be 'l1', 'l2' or 'l1-l2'; got {norm!r}."
            )
        if self.bounds is None:
            raise InvalidParameterError(
                f"`bounds` of `{self.name}` must be declared to compute a sensitivity."
            )
        return float(self.bounds.width * self.operator.max_column_norm(norm, block))

    def changed_outputs(self) -> int:
        return self.operator.max_column_support()

    def output_bound(self) -> float | None:
        if self.bounds is None:
            return None
        reach = max(abs(self.bounds.lower), abs(self.bounds.upper))
        return float(self.operator.max_abs_row_sum() * reach)

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": "linear", "name": self.name, "n": self.n, "m": self.m}
        if self.bounds is not None:
            out["bounds"] = [self.bounds.lower, self.bounds.upper]
        return out

    def __repr__(self) -> str:
        return f"LinearQuery({self.operator!r}, bounds={self.bounds!r}, name={self.name!r})"
