"""Structured linear algebra: query operators C and symmetric positive semi-definite forms (CCᵀ, Σ, J, 𝓘).

The identity release of 10⁹ records has C = I and CCᵀ = I; privnoise keeps both as (n, scale) pairs and computes
every quantity the papers need — (CCᵀ)^{1/2}, traces, sensitivities, per-record Fisher information, the Cramér–Rao
bound — per structure, in closed form. See :mod:`privnoise.linalg.operators` and :mod:`privnoise.linalg.forms`.
"""

from .composite import BlockDiagonal, Kronecker
from .composite_forms import BlockDiagonalForm, KroneckerForm
from .forms import DENSE_LIMIT, DenseForm, DiagonalForm, IsotropicForm, SymmetricForm, as_form
from .linear_operator import LinearOperator
from .matrices import DenseMatrix, MatrixOperator, SparseMatrix, as_operator
from .operators import Diagonal, Identity, Row

__all__ = [
    "DENSE_LIMIT",
    "BlockDiagonal",
    "BlockDiagonalForm",
    "DenseForm",
    "DenseMatrix",
    "Diagonal",
    "DiagonalForm",
    "Identity",
    "IsotropicForm",
    "Kronecker",
    "KroneckerForm",
    "LinearOperator",
    "MatrixOperator",
    "Row",
    "SparseMatrix",
    "SymmetricForm",
    "as_form",
    "as_operator",
]
