"""What a release guarantees: value objects that carry a privacy notion and the numbers that hold for it.

* :class:`FisherInformation` — the Fisher information of the data carried by a release, kept in the factored form
  𝓘 = Fᵀ J F (F the query's Jacobian, J the noise's location information) so that a mean over a million records
  never builds a million-by-million matrix.
* :class:`FisherGuarantee` — Fisher-information privacy (Farokhi & Sandberg): the information, the Cramér–Rao
  bounds it implies, and the quality Q = E‖w‖² paid for it.
* :class:`DifferentialPrivacyGuarantee` — an (ε, δ) pair.

Bounded-support noise gives no pure ε-DP; privnoise never prints an ε for it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._validation import as_matrix, check_positive, check_probability, readonly
from .exceptions import DimensionError

__all__ = ["DifferentialPrivacyGuarantee", "FisherGuarantee", "FisherInformation", "Guarantee", "json_number"]

_DENSE_LIMIT = 4096


def json_number(value: float) -> float | str:
    """A float for JSON: finite values as they are, infinities as the strings "inf"/"-inf"."""
    if math.isfinite(value):
        return float(value)
    return "inf" if value > 0 else "-inf"


@dataclass(frozen=True, slots=True, eq=False)
class FisherInformation:
    """𝓘 = Fᵀ J F: information about x ∈ ℝⁿ in a release f(x) + w.

    Parameters
    ----------
    jacobian : array_like, shape (m, n)
        F, the query's Jacobian (or, for a worst case, an entrywise bound on it).
    noise_information : array_like, shape (m, m)
        J, the location Fisher information of the noise (or its entrywise absolute value, for a worst case).
    """

    jacobian: Any
    noise_information: Any

    def __post_init__(self) -> None:
        f = as_matrix(self.jacobian, "jacobian", "FisherInformation")
        j = as_matrix(self.noise_information, "noise_information", "FisherInformation", symmetric=True)
        if j.shape[0] != f.shape[0]:
            raise DimensionError(
                f"`noise_information` of `FisherInformation` must be {f.shape[0]}×{f.shape[0]}; got {j.shape}."
            )
        object.__setattr__(self, "jacobian", readonly(f))
        object.__setattr__(self, "noise_information", readonly(j))

    @property
    def n(self) -> int:
        return int(self.jacobian.shape[1])

    def diagonal(self) -> NDArray[np.float64]:
        """𝓘_ii = F_iᵀ J F_i for every record i, in O(n m²)."""
        f = self.jacobian
        return np.einsum("ki,kl,li->i", f, self.noise_information, f)

    def trace(self) -> float:
        """Tr 𝓘 = Tr(J F Fᵀ)."""
        f = self.jacobian
        return float(np.sum(self.noise_information * (f @ f.T)))

    def matrix(self) -> NDArray[np.float64]:
        """The dense n × n matrix (refused beyond 4096 records; use ``diagonal``/``trace`` there)."""
        if self.n > _DENSE_LIMIT:
            raise DimensionError(f"the dense Fisher matrix has {self.n}² entries; use diagonal() or trace().")
        f = self.jacobian
        return f.T @ self.noise_information @ f

    def is_invertible(self) -> bool:
        """𝓘 is invertible iff J is and F has full column rank (so n ≤ m)."""
        m, n = self.jacobian.shape
        if n > m:
            return False
        from .fisher.cramer_rao import is_invertible

        return is_invertible(self.matrix())


class Guarantee:
    """Base of the guarantee value objects: each names its privacy notion."""

    __slots__ = ()
    notion: str

    def as_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    def summary(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True, slots=True, eq=False)
class FisherGuarantee(Guarantee):
    """Fisher-information privacy of one release (Farokhi & Sandberg, Proposition 1, eqs. (7)–(8)).

    Parameters
    ----------
    information : FisherInformation
        The information about the database carried by the release.
    quality : float
        Q = E‖y − f(x)‖², the mean squared distortion (including any bias of the noise).
    scope : {"all-data", "declared-domain", "at-data"}
        "all-data": the numbers hold for every database (linear queries, data-independent noise);
        "declared-domain": worst case over the owner's declared bounds; "at-data": computed at the true data
        (nonlinear query without declared Jacobian bound) — such numbers reveal something about the data and
        must not be published alongside the value.

    Examples
    --------
    >>> import numpy as np
    >>> g = FisherGuarantee(FisherInformation(np.eye(2), np.diag([4.0, 1.0])), quality=1.0)
    >>> g.cramer_rao_bound, g.worst_record_bound
    (1.25, 0.25)
    """

    information: FisherInformation
    quality: float
    scope: str = "all-data"
    notion: str = field(default="fisher-information", init=False)

    def __post_init__(self) -> None:
        check_positive(self.quality, "quality", "FisherGuarantee", allow_zero=True)
        if self.scope not in ("all-data", "declared-domain", "at-data"):
            raise ValueError(
                f"`scope` of `FisherGuarantee` must be all-data, declared-domain or at-data; got {self.scope!r}."
            )

    @property
    def cramer_rao_bound(self) -> float | None:
        """Tr(𝓘⁻¹): lower bound on E‖x − x̂‖² of any unbiased estimator.

        ``inf`` when the release has fewer coordinates than records or 𝓘 is singular (no unbiased estimator
        exists); ``None`` for a declared-domain worst case with n ≤ m, where an entrywise Jacobian bound does not
        bound Tr(𝓘⁻¹).
        """
        m, n = self.information.jacobian.shape
        if n > m:
            return math.inf
        if self.scope == "declared-domain":
            return None
        from .fisher.cramer_rao import cramer_rao_bound

        return cramer_rao_bound(self.information.matrix())

    @property
    def record_bounds(self) -> NDArray[np.float64]:
        """1/𝓘_ii: per-record error bounds when every other record is known (eq. (7))."""
        diag = self.information.diagonal()
        with np.errstate(divide="ignore"):
            return np.where(diag > 0, 1.0 / np.where(diag > 0, diag, 1.0), np.inf)

    @property
    def worst_record_bound(self) -> float:
        """min_i 1/𝓘_ii: the bound for the least protected record."""
        return float(np.min(self.record_bounds))

    @property
    def trace_bound(self) -> float:
        """1/Tr 𝓘, the paper's eq. (8) bound (weaker than ``worst_record_bound``)."""
        tr = self.information.trace()
        return math.inf if tr <= 0 else 1.0 / tr

    def as_dict(self) -> dict[str, Any]:
        return {
            "notion": self.notion,
            "scope": self.scope,
            "fisher_information_trace": json_number(self.information.trace()),
            "cramer_rao_bound": None if (crb := self.cramer_rao_bound) is None else json_number(crb),
            "worst_record_bound": json_number(self.worst_record_bound),
            "trace_bound": json_number(self.trace_bound),
            "quality": json_number(self.quality),
            "records": self.information.n,
        }

    def summary(self) -> str:
        crb = self.cramer_rao_bound
        crb_text = (
            "n/a"
            if crb is None
            else ("∞ (no unbiased estimator exists)" if math.isinf(crb) else f"{crb:.6g}")
        )
        return (
            f"Fisher-information privacy ({self.scope}): Tr 𝓘 = {self.information.trace():.6g}; "
            f"every record's error with all others known ≥ {self.worst_record_bound:.6g} "
            f"(eq. (8) bound {self.trace_bound:.6g}); unbiased Cramér–Rao bound {crb_text}; "
            f"quality Q = E‖w‖² = {self.quality:.6g}"
        )


@dataclass(frozen=True, slots=True, eq=False)
class DifferentialPrivacyGuarantee(Guarantee):
    """(ε, δ)-differential privacy with respect to the stated adjacency (δ = 0 for pure ε-DP)."""

    epsilon: float
    delta: float = 0.0
    adjacency: str = "one record changes within its declared bounds"
    notion: str = field(default="differential-privacy", init=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "epsilon", check_positive(self.epsilon, "epsilon", "DifferentialPrivacyGuarantee")
        )
        object.__setattr__(
            self, "delta", check_probability(self.delta, "delta", "DifferentialPrivacyGuarantee")
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "notion": self.notion,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "adjacency": self.adjacency,
        }

    def summary(self) -> str:
        kind = "pure" if self.delta == 0 else "approximate"
        return f"({self.epsilon:.6g}, {self.delta:.3g})-differential privacy ({kind}; {self.adjacency})"
