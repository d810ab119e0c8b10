"""Finite-horizon matrices of an LTI system: Y_t = O_t x₀ + N_t U_t (Liu, Kawano & Cao, eqs. (3), (4), (10)).

O_t = Ψ_t = [C; CA; …; CAᵗ] is the observability matrix over {0, …, t} (Farokhi & Sandberg call it Ψ_T), N_t the
lower block-triangular Toeplitz matrix of Markov parameters (D on the diagonal, CA^{i−j−1}B below) and
G_t = O_tᵀO_t the observability Gramian over {0, …, t} (Farokhi & Sandberg, Remark 8).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_positive_int, readonly
from ..exceptions import DimensionError
from .statespace import as_statespace

__all__ = [
    "check_observable",
    "markov_parameters",
    "observability_gramian",
    "observability_matrix",
    "toeplitz_matrix",
]


def _horizon(value: Any, owner: str) -> int:
    return check_positive_int(value, "horizon", owner, minimum=0)


def observability_matrix(system: Any, horizon: int) -> NDArray[np.float64]:
    """O_t = [C; CA; …; CAᵗ], shape ((t+1)q, n) (Liu et al. eq. (4); Farokhi & Sandberg's Ψ_T).

    Examples
    --------
    >>> from privnoise.systems import StateSpace
    >>> observability_matrix(StateSpace(A=[[0.9]], C=[[1.0]]), 2).ravel().tolist()
    [1.0, 0.9, 0.81]
    """
    sys = as_statespace(system)
    t = _horizon(horizon, "observability_matrix")
    blocks = [sys.C]
    for _ in range(t):
        blocks.append(blocks[-1] @ sys.A)
    return readonly(np.vstack(blocks))


def markov_parameters(system: Any, horizon: int) -> NDArray[np.float64]:
    """[D, CB, CAB, …, CA^{t−1}B], shape (t+1, q, m): the impulse response of the system."""
    sys = as_statespace(system)
    t = _horizon(horizon, "markov_parameters")
    out = np.empty((t + 1, sys.q, sys.m))
    out[0] = sys.D
    cak = sys.C
    for k in range(1, t + 1):
        out[k] = cak @ sys.B
        cak = cak @ sys.A
    return out


def toeplitz_matrix(system: Any, horizon: int) -> NDArray[np.float64]:
    """N_t, shape ((t+1)q, (t+1)m): block (i, j) is D if i = j, CA^{i−j−1}B if i > j, 0 above (eq. (10)).

    Examples
    --------
    >>> from privnoise.systems import StateSpace
    >>> toeplitz_matrix(StateSpace(A=[[0.9]], B=[[1.0]], C=[[1.0]]), 2).tolist()
    [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.9, 1.0, 0.0]]
    """
    sys = as_statespace(system)
    t = _horizon(horizon, "toeplitz_matrix")
    h = markov_parameters(sys, t)
    q, m = sys.q, sys.m
    out = np.zeros(((t + 1) * q, (t + 1) * m))
    for i in range(t + 1):
        for j in range(i + 1):
            out[i * q : (i + 1) * q, j * m : (j + 1) * m] = h[i - j]
    return readonly(out)


def observability_gramian(system: Any, horizon: int) -> NDArray[np.float64]:
    """G_t = O_tᵀO_t = Σ_{k=0}^{t} (Aᵀ)ᵏCᵀCAᵏ (Farokhi & Sandberg, Remark 8: Ψ_TᵀΨ_T)."""
    o = observability_matrix(system, horizon)
    g = o.T @ o
    return readonly((g + g.T) / 2.0)


def check_observable(system: Any, horizon: int, *, owner: str = "initial_state_noise") -> None:
    """Raise unless Ψ_TᵀΨ_T is invertible (Farokhi & Sandberg, Remark 8), saying why it is not.

    Raises
    ------
    DimensionError
        When (A, C) is unobservable, or observable but the horizon T is too short (rank of Ψ_T below n).
    """
    sys = as_statespace(system)
    t = _horizon(horizon, owner)
    n = sys.n
    rank = int(np.linalg.matrix_rank(observability_matrix(sys, t)))
    if rank == n:
        return
    full = int(np.linalg.matrix_rank(observability_matrix(sys, max(t, n - 1))))
    if full < n:
        raise DimensionError(
            f"`system` of `{owner}`: the pair (A, C) is not observable (the observability matrix has rank "
            f"{full} < n = {n}), so Ψ_TᵀΨ_T is singular for every horizon (Remark 8)."
        )
    raise DimensionError(
        f"`horizon` of `{owner}` must be >= {n - 1} for this observable pair (Ψ_T has rank {rank} < n = {n} "
        f"at T = {t}; Remark 8); got {t}."
    )
