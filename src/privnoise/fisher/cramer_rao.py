"""Cramér–Rao bounds on an adversary's estimation error (Farokhi & Sandberg, Section 2 and Appendix A).

The bounds are matrix functions of a Fisher information matrix, computed in :mod:`privnoise.linalg.cramer_rao`
(below every guarantee that states them); this module is where the Fisher-information layer names them, every
one of them (its ``__all__`` is that module's).
"""

from __future__ import annotations

from ..linalg import cramer_rao as matrix_bounds
from ..linalg.cramer_rao import biased_bound as biased_bound
from ..linalg.cramer_rao import cramer_rao_bound as cramer_rao_bound
from ..linalg.cramer_rao import is_invertible as is_invertible
from ..linalg.cramer_rao import jensen_bound as jensen_bound
from ..linalg.cramer_rao import record_bounds as record_bounds
from ..linalg.cramer_rao import trace_bound as trace_bound

__all__ = [*matrix_bounds.__all__]
