"""Noise policies whose law depends on the data: γ(w | x) (Farokhi & Sandberg, Section 2, family (ii)).

A :class:`Policy` turns a query and a database into the mechanism to draw from and the guarantee that holds.

* :class:`OutputConstrainedPolicy` — W(x) = {−f(x)} ⊕ Y: the release always lies in the box Y.
"""

from __future__ import annotations

import dataclasses
from abc import abstractmethod
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..exceptions import InvalidParameterError
from ..guarantees import FisherGuarantee, FisherInformation
from ..mechanisms import Mechanism, NoiseDesign, RaisedCosine
from ..queries import Query

__all__ = ["OutputConstrainedPolicy", "Policy"]


class Policy(NoiseDesign):
    """Noise whose law depends on the database x (or on f(x)): a design without a ``sample`` of its own.

    :meth:`law_at` gives the noise law at the data and :meth:`guarantee_for` the guarantee there (scope "at-data").
    """

    __slots__ = ()

    @abstractmethod
    def mechanism_at(self, query: Query, x: NDArray[np.float64]) -> Mechanism:
        """The noise law γ(· | x) for database ``x`` (already validated)."""

    @abstractmethod
    def guarantee_at(self, query: Query, x: NDArray[np.float64]) -> FisherGuarantee:
        """The guarantee of the release at ``x``."""

    def law_at(self, query: Query, x: NDArray[np.float64]) -> Mechanism:
        return self.mechanism_at(query, x)

    def guarantee_for(
        self, query: Query, x: ArrayLike | None = None, *, delta: float | None = None, grid: float = 0.0
    ) -> FisherGuarantee:
        if x is None:
            raise InvalidParameterError(
                f"`x` is required for the guarantee of {self.name}: its noise law depends on the data."
            )
        data = np.asarray(x, dtype=float)
        return dataclasses.replace(self.guarantee_at(query, data), grid=grid)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class OutputConstrainedPolicy(Policy):
    """The Problem 2 optimum when the *output* must lie in the box Y = [lower, upper].

    With W(x) = {−f(x)} ⊕ Y the noise is cos² on Y − f(x), so the release y = f(x) + w is cos² on Y whatever x
    is. Its Fisher information about x is exactly zero, the global minimum of Tr 𝓘: the constraint alone makes
    the privacy-optimal release independent of the data. The price is the quality
    Q(x) = Var + ‖c_Y − f(x)‖², which depends on the data and is reported with scope "at-data". Use a quality
    term (Problems 3/4) when the release must also be informative.
    """

    lower: Any
    upper: Any
    _output: RaisedCosine = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_output", RaisedCosine(lower=self.lower, upper=self.upper))
        object.__setattr__(self, "lower", self._output.lower)
        object.__setattr__(self, "upper", self._output.upper)

    @property
    def shape(self) -> tuple[int, ...]:
        return self._output.shape

    def mechanism_at(self, query: Query, x: NDArray[np.float64]) -> Mechanism:
        fx = np.asarray(query(x), dtype=float)
        return RaisedCosine(lower=self._output.lower - fx, upper=self._output.upper - fx)

    def guarantee_at(self, query: Query, x: NDArray[np.float64]) -> FisherGuarantee:
        mech = self.mechanism_at(query, x)
        zero = np.zeros((query.m, query.m))
        info = FisherInformation(query.jacobian_at(x), zero)
        return FisherGuarantee(info, quality=mech.second_moment(), scope="at-data")

    def output_range(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Y: every release lies in it (a snapped release is kept on the grid points inside Y)."""
        return self.lower, self.upper

    def describe(self) -> dict[str, Any]:
        return {
            "family": "output-constrained-raised-cosine",
            "lower": self.lower.tolist(),
            "upper": self.upper.tolist(),
        }
