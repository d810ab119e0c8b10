"""Cramér–Rao bounds on an adversary's estimation error (Farokhi & Sandberg, Section 2 and Appendix A).

The bounds are matrix functions of a Fisher information matrix, computed in :mod:`privnoise.linalg.cramer_rao`
(below every guarantee that states them); this module is where the Fisher-information layer names them.

Examples
--------
>>> import numpy as np
>>> from privnoise.fisher import cramer_rao
>>> info = np.diag([4.0, 1.0])
>>> cramer_rao.cramer_rao_bound(info), cramer_rao.trace_bound(info), cramer_rao.jensen_bound(info)
(1.25, 0.2, 0.8)
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
