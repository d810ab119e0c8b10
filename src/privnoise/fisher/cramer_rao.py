"""Cramér–Rao bounds on an adversary's estimation error (Farokhi & Sandberg, Section 2 and Appendix A).

The bounds are matrix functions of a Fisher information matrix, computed in :mod:`privnoise.linalg.cramer_rao`
(below every guarantee that states them); this module is where the Fisher-information layer names them.
"""

from __future__ import annotations

from ..linalg.cramer_rao import (
    biased_bound,
    cramer_rao_bound,
    is_invertible,
    jensen_bound,
    record_bounds,
    trace_bound,
)

__all__ = [
    "biased_bound",
    "cramer_rao_bound",
    "is_invertible",
    "jensen_bound",
    "record_bounds",
    "trace_bound",
]
