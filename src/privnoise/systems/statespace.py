"""Discrete-time linear time-invariant models x[k+1] = A x[k] + B u[k], y[k] = C x[k] + D u[k].

Both papers of this subpackage use this model: Farokhi & Sandberg, Section 4 (with B = 0: the initial state is
the private quantity) and Liu, Kawano & Cao, eq. (2) (statistical inputs). :class:`StateSpace` also accepts a
discrete-time ``control.StateSpace`` from python-control (anything with ``A, B, C, D`` and a ``dt``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import as_matrix, readonly
from ..exceptions import DimensionError, InvalidParameterError

__all__ = ["StateSpace", "as_statespace"]

_OWNER = "StateSpace"


def _as2d(value: Any, name: str, vector: str = "row") -> NDArray[np.float64]:
    """A finite 2-D matrix: a scalar becomes 1×1, a 1-D array a row (``vector="row"``) or a column."""
    if not isinstance(value, str | bytes):
        try:
            nd = np.ndim(value)
        except ValueError:  # ragged nested lists
            raise InvalidParameterError(
                f"`{name}` of `{_OWNER}` must be a rectangular matrix; got {value!r:.60}."
            ) from None
        if nd == 0:
            value = [[value]]
        elif nd == 1:
            flat = list(np.asarray(value).ravel())
            value = [flat] if vector == "row" else [[v] for v in flat]
    return as_matrix(value, name, _OWNER)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class StateSpace:
    """A discrete-time LTI system x[k+1] = A x[k] + B u[k], y[k] = C x[k] + D u[k].

    Parameters
    ----------
    A : array_like, shape (n, n)
        State matrix (a scalar is read as 1×1).
    B : array_like, shape (n, m), optional
        Input matrix; omitted (or None) means no input (m = 0), as in Farokhi & Sandberg, Section 4.
    C : array_like, shape (q, n)
        Output matrix (a 1-D array is read as one row).
    D : array_like, shape (q, m), optional
        Feedthrough; defaults to zeros.

    Raises
    ------
    DimensionError
        Non-square A or shapes that do not fit together.
    InvalidParameterError
        NaN, infinite or non-numeric entries.

    References
    ----------
    L. Liu, Y. Kawano and M. Cao, "Privacy preservation for statistical input in dynamical systems", eq. (2).

    Examples
    --------
    >>> sys = StateSpace(A=[[0.9]], B=[[1.0]], C=[[1.0]], D=[[0.0]])
    >>> sys.n, sys.m, sys.q
    (1, 1, 1)
    >>> StateSpace(A=[[1, 1], [0, 1]], C=[1, 0]).m
    0
    """

    A: Any
    B: Any = None
    C: Any = None
    D: Any = None

    def __post_init__(self) -> None:
        a = _as2d(self.A, "A")
        if a.shape[0] != a.shape[1]:
            raise DimensionError(f"`A` of `{_OWNER}` must be square; got shape {a.shape}.")
        n = a.shape[0]
        if self.C is None:
            raise InvalidParameterError(f"`C` of `{_OWNER}` must be given; got None.")
        c = _as2d(self.C, "C")
        if c.shape[1] != n:
            raise DimensionError(
                f"`C` of `{_OWNER}` must have {n} column(s) (A is {n}×{n}); got shape {c.shape}."
            )
        q = c.shape[0]
        if self.B is None or np.size(self.B) == 0:
            b = np.zeros((n, 0))
        else:
            b = _as2d(self.B, "B", vector="column")
        if b.shape[0] != n:
            raise DimensionError(
                f"`B` of `{_OWNER}` must have {n} row(s) (A is {n}×{n}); got shape {b.shape}."
            )
        m = b.shape[1]
        if self.D is None or (np.size(self.D) == 0 and m == 0):
            d = np.zeros((q, m))
        else:
            d = _as2d(self.D, "D")
        if d.shape != (q, m):
            raise DimensionError(
                f"`D` of `{_OWNER}` must have shape {(q, m)} (C is {q}×{n}, B is {n}×{m}); got {d.shape}."
            )
        for name, value in (("A", a), ("B", b), ("C", c), ("D", d)):
            object.__setattr__(self, name, readonly(value))

    @property
    def n(self) -> int:
        """State dimension."""
        return int(self.A.shape[0])

    @property
    def m(self) -> int:
        """Input dimension (0 without input)."""
        return int(self.B.shape[1])

    @property
    def q(self) -> int:
        """Output dimension."""
        return int(self.C.shape[0])

    @classmethod
    def from_control(cls, system: Any) -> StateSpace:
        """Convert a discrete-time python-control ``StateSpace`` (``dt`` must be set and not 0)."""
        dt = getattr(system, "dt", None)
        if dt is None or dt is False or (not isinstance(dt, bool) and dt == 0):
            raise InvalidParameterError(
                f"`dt` of `StateSpace` (python-control system) must be set for a discrete-time system; got {dt!r}."
            )
        b = np.asarray(system.B, dtype=float)
        d = np.asarray(system.D, dtype=float)
        return cls(
            A=np.asarray(system.A, dtype=float),
            B=b if b.size else None,
            C=np.asarray(system.C, dtype=float),
            D=d if b.size else None,
        )

    def simulate(self, x0: Any, inputs: Any = None, *, steps: int | None = None) -> NDArray[np.float64]:
        """Outputs y[0..t] of the recursion (no noise), shape (t+1, q); ``inputs`` has shape (t+1, m).

        Examples
        --------
        >>> StateSpace(A=[[0.5]], B=[[1.0]], C=[[1.0]]).simulate([2.0], [[1.0], [0.0]]).ravel().tolist()
        [2.0, 2.0]
        """
        x = np.asarray(x0, dtype=float).reshape(self.n)
        if inputs is None:
            if steps is None:
                raise InvalidParameterError(
                    "`steps` of `StateSpace.simulate` must be given when there are no inputs."
                )
            u = np.zeros((steps, self.m))
        else:
            u = np.asarray(inputs, dtype=float).reshape(-1, self.m)
        out = np.empty((u.shape[0], self.q))
        for k in range(u.shape[0]):  # the recursion itself (a reference, not a hot path)
            out[k] = self.C @ x + self.D @ u[k]
            x = self.A @ x + self.B @ u[k]
        return out


def as_statespace(system: Any) -> StateSpace:
    """Return ``system`` as a :class:`StateSpace` (python-control systems are converted)."""
    if isinstance(system, StateSpace):
        return system
    if all(hasattr(system, name) for name in ("A", "B", "C", "D", "dt")):
        return StateSpace.from_control(system)
    raise InvalidParameterError(
        f"`system` must be a privnoise.systems.StateSpace or a discrete-time python-control StateSpace; "
        f"got {type(system).__name__}."
    )
