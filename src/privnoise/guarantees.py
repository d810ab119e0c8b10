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
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._validation import as_matrix, check_positive, check_probability
from .exceptions import DimensionError, InvalidParameterError
from .linalg import DENSE_LIMIT, DenseForm, DenseMatrix, LinearOperator, SymmetricForm

__all__ = [
    "CombinedGuarantee",
    "ConcentratedGuarantee",
    "DifferentialPrivacyGuarantee",
    "FisherGuarantee",
    "FisherInformation",
    "Guarantee",
    "combine",
    "json_number",
]


def json_number(value: float) -> float | str:
    """A float for JSON: finite values as they are, infinities as the strings "inf"/"-inf"."""
    if math.isfinite(value):
        return float(value)
    return "inf" if value > 0 else "-inf"


class FisherInformation:
    """𝓘 = Fᵀ J F: information about x ∈ ℝⁿ in a release f(x) + w, kept factored and structured.

    Parameters
    ----------
    jacobian : array_like (m, n) or LinearOperator
        F, the query's Jacobian (or, for a worst case, an entrywise bound on it). A structured operator from
        :mod:`privnoise.linalg` (an identity, a constant row, …) is never expanded.
    noise_information : array_like (m, m) or SymmetricForm
        J, the location Fisher information of the noise (or its entrywise absolute value, for a worst case).

    Notes
    -----
    Per record, 𝓘_ii = F_iᵀ J F_i; Tr 𝓘 = Tr(J FFᵀ); Tr 𝓘⁻¹ is ∞ when n > m. For an identity query with isotropic
    noise all three are O(1); for a row of weights, O(n) (Farokhi & Sandberg, eqs. (4), (7), (8)).
    """

    __slots__ = ("noise_form", "operator")
    operator: LinearOperator
    noise_form: SymmetricForm

    def __init__(self, jacobian: Any, noise_information: Any) -> None:
        owner = "FisherInformation"
        operator = (
            jacobian
            if isinstance(jacobian, LinearOperator)
            else DenseMatrix(as_matrix(jacobian, "jacobian", owner))
        )
        form = (
            noise_information
            if isinstance(noise_information, SymmetricForm)
            else DenseForm(as_matrix(noise_information, "noise_information", owner, symmetric=True))
        )
        if form.size != operator.m:
            raise DimensionError(
                f"`noise_information` of `{owner}` must be {operator.m}×{operator.m}; got {form.size}×{form.size}."
            )
        object.__setattr__(self, "operator", operator)
        object.__setattr__(self, "noise_form", form)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"`FisherInformation` is immutable; cannot set {name!r}.")

    @property
    def jacobian(self) -> NDArray[np.float64]:
        """F as a dense (m, n) array (refused for structured operators too large to expand)."""
        return np.asarray(self.operator.dense(), dtype=np.float64).reshape(self.operator.shape)

    @property
    def noise_information(self) -> NDArray[np.float64]:
        """J as a dense (m, m) array."""
        return np.asarray(self.noise_form.dense())

    @property
    def n(self) -> int:
        return int(self.operator.n)

    @property
    def m(self) -> int:
        return int(self.operator.m)

    def diagonal(self) -> NDArray[np.float64]:
        """𝓘_ii = F_iᵀ J F_i for every record i (O(n) for structured F and J)."""
        return np.asarray(self.operator.record_information(self.noise_form))

    def max_diagonal(self) -> float:
        """max_i 𝓘_ii, the information about the least protected record (O(1) for an identity query)."""
        return float(self.operator.max_record_information(self.noise_form))

    def trace(self) -> float:
        """Tr 𝓘 = Tr(J F Fᵀ)."""
        return float(self.operator.information_trace(self.noise_form))

    def inverse_trace(self) -> float | None:
        """Tr 𝓘⁻¹: ∞ when 𝓘 is singular (always when n > m); None when n is too large for a dense computation and
        the structure gives no closed form."""
        return self.operator.information_inverse_trace(self.noise_form)

    def matrix(self) -> NDArray[np.float64]:
        """The dense n × n matrix (refused beyond 4096 records; use ``diagonal``/``trace`` there)."""
        if self.n > DENSE_LIMIT:
            raise DimensionError(f"the dense Fisher matrix has {self.n}² entries; use diagonal() or trace().")
        f = self.jacobian
        return f.T @ self.noise_information @ f

    def is_invertible(self) -> bool:
        """𝓘 is invertible iff J is and F has full column rank (so n ≤ m)."""
        if self.n > self.m:
            return False
        value = self.inverse_trace()
        if value is None:
            from .linalg.cramer_rao import is_invertible

            return is_invertible(self.matrix())
        return math.isfinite(value)

    def __repr__(self) -> str:
        return f"FisherInformation({self.operator!r}, {self.noise_form!r})"


class Guarantee(ABC):
    """Base of the guarantee value objects: each names its privacy notion, gives its numbers as a JSON-ready
    dict and a one-line summary."""

    __slots__ = ()
    notion: str

    @abstractmethod
    def as_dict(self) -> dict[str, Any]:
        """The notion and its numbers, JSON-ready (infinities as "inf")."""

    @abstractmethod
    def summary(self) -> str:
        """One line for people."""


def _rounding_note(grid: float) -> str:
    return f"; output snapped to the grid 2^{int(math.log2(grid))}" if grid > 0 else ""


@dataclass(frozen=True, slots=True, eq=False)
class FisherGuarantee(Guarantee):
    """Fisher-information privacy of one release (Farokhi & Sandberg, Proposition 1, eqs. (7)–(8)).

    Parameters
    ----------
    information : FisherInformation
        The information about the database carried by the release.
    quality : float
        Q = E‖w‖², the mean squared distortion of the noise (including any bias of the noise).
    scope : {"all-data", "declared-domain", "at-data"}
        "all-data": the numbers hold for every database (linear queries, data-independent noise);
        "declared-domain": worst case over the owner's declared bounds; "at-data": computed at the true data
        (nonlinear query without declared Jacobian bound) — such numbers reveal something about the data and
        must not be published alongside the value.
    grid : float, default 0
        Λ > 0 when the release was snapped to the grid Λℤ (hardened). The snapped release is a deterministic
        function of f(x) + w (exact rounding of the sum), so by the data-processing inequality its information is
        at most 𝓘 and every bound below still holds; its mean squared error is at most (√Q + √m Λ/2)²
        (:attr:`quality_with_rounding`).

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
    grid: float = 0.0
    notion: str = field(default="fisher-information", init=False)

    def __post_init__(self) -> None:
        check_positive(self.quality, "quality", "FisherGuarantee", allow_zero=True)
        check_positive(self.grid, "grid", "FisherGuarantee", allow_zero=True)
        if self.scope not in ("all-data", "declared-domain", "at-data"):
            raise ValueError(
                f"`scope` of `FisherGuarantee` must be all-data, declared-domain or at-data; got {self.scope!r}."
            )

    @property
    def cramer_rao_bound(self) -> float | None:
        """Tr(𝓘⁻¹): lower bound on E‖x − x̂‖² of any unbiased estimator.

        ``inf`` when the release has fewer coordinates than records or 𝓘 is singular (no unbiased estimator
        exists); ``None`` for a declared-domain worst case with n ≤ m, where an entrywise Jacobian bound does not
        bound Tr(𝓘⁻¹), and when n is too large for a dense computation and no closed form applies.
        """
        if self.information.n > self.information.m:
            return math.inf
        if self.scope == "declared-domain":
            return None
        return self.information.inverse_trace()

    @property
    def record_bounds(self) -> NDArray[np.float64]:
        """1/𝓘_ii: per-record error bounds when every other record is known (eq. (7))."""
        diag = self.information.diagonal()
        with np.errstate(divide="ignore"):
            return np.where(diag > 0, 1.0 / np.where(diag > 0, diag, 1.0), np.inf)

    @property
    def worst_record_bound(self) -> float:
        """min_i 1/𝓘_ii: the bound for the least protected record."""
        top = self.information.max_diagonal()
        return math.inf if top <= 0 else 1.0 / top

    @property
    def trace_bound(self) -> float:
        """1/Tr 𝓘, the paper's eq. (8) bound (weaker than ``worst_record_bound``)."""
        tr = self.information.trace()
        return math.inf if tr <= 0 else 1.0 / tr

    @property
    def quality_with_rounding(self) -> float:
        """An upper bound on E‖y − f(x)‖² of the snapped release: (√Q + √m Λ/2)² (= Q when not snapped)."""
        return (math.sqrt(self.quality) + math.sqrt(self.information.m) * self.grid / 2.0) ** 2

    def as_dict(self) -> dict[str, Any]:
        out = {
            "notion": self.notion,
            "scope": self.scope,
            "fisher_information_trace": json_number(self.information.trace()),
            "cramer_rao_bound": None if (crb := self.cramer_rao_bound) is None else json_number(crb),
            "worst_record_bound": json_number(self.worst_record_bound),
            "trace_bound": json_number(self.trace_bound),
            "quality": json_number(self.quality),
            "records": self.information.n,
        }
        if self.grid > 0:
            out["grid"] = self.grid
            out["quality_with_rounding"] = json_number(self.quality_with_rounding)
        return out

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
            f"quality Q = E‖w‖² = {self.quality:.6g}{_rounding_note(self.grid)}"
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
            self, "epsilon",
            check_positive(self.epsilon, "epsilon", "DifferentialPrivacyGuarantee", allow_zero=True),
        )  # ε = 0: nothing released yet (a fresh session), or (0, δ)-DP
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


@dataclass(frozen=True, slots=True)
class ConcentratedGuarantee(Guarantee):
    """ρ-zero-concentrated DP, δ-approximate when ``delta`` > 0 (Bun & Steinke 2016, Definitions 1.1 and 8.1)."""

    rho: float
    delta: float
    adjacency: str
    notion: str = field(default="zero-concentrated-differential-privacy", init=False)

    def as_dict(self) -> dict[str, Any]:
        return {"notion": self.notion, "rho": self.rho, "delta": self.delta, "adjacency": self.adjacency}

    def summary(self) -> str:
        approximate = f", δ-approximate with δ = {self.delta:.3g}" if self.delta else ""
        return f"ρ-zCDP with ρ = {self.rho:.6g}{approximate} ({self.adjacency})"


@dataclass(frozen=True, slots=True, eq=False)
class CombinedGuarantee(Guarantee):
    """A release that satisfies two notions at once: Fisher-information privacy and (ε, δ)-DP.

    Laplace and Gaussian noise have a Fisher information (1/b², Σ⁻¹) and, for a query whose sensitivity is
    declared, a differential-privacy guarantee; both hold for the same release. The attributes of each part are
    reachable directly (``epsilon``, ``worst_record_bound``, …).
    """

    fisher: FisherGuarantee
    differential_privacy: DifferentialPrivacyGuarantee
    notion: str = field(default="fisher-information+differential-privacy", init=False)

    @property
    def parts(self) -> tuple[Guarantee, ...]:
        return (self.fisher, self.differential_privacy)

    epsilon = property(lambda self: self.differential_privacy.epsilon, doc="ε of the DP part.")
    delta = property(lambda self: self.differential_privacy.delta, doc="δ of the DP part.")
    adjacency = property(lambda self: self.differential_privacy.adjacency, doc="Adjacency of the DP part.")
    information = property(lambda self: self.fisher.information, doc="𝓘 of the Fisher part.")
    quality = property(lambda self: self.fisher.quality, doc="Q of the Fisher part.")
    scope = property(lambda self: self.fisher.scope, doc="Scope of the Fisher part.")
    grid = property(lambda self: self.fisher.grid, doc="The output grid (0 when not snapped).")
    cramer_rao_bound = property(lambda self: self.fisher.cramer_rao_bound, doc="Tr 𝓘⁻¹.")
    record_bounds = property(lambda self: self.fisher.record_bounds, doc="1/𝓘_ii per record.")
    worst_record_bound = property(lambda self: self.fisher.worst_record_bound, doc="min_i 1/𝓘_ii.")
    trace_bound = property(lambda self: self.fisher.trace_bound, doc="1/Tr 𝓘.")

    def as_dict(self) -> dict[str, Any]:
        return {
            "notion": self.notion,
            "fisher": self.fisher.as_dict(),
            "differential_privacy": self.differential_privacy.as_dict(),
        }

    def summary(self) -> str:
        return f"{self.differential_privacy.summary()}; {self.fisher.summary()}"


def combine(*parts: Guarantee | None) -> Guarantee | None:
    """One guarantee from the parts that hold (None entries skipped): the part itself, or a
    :class:`CombinedGuarantee` of a Fisher and a DP part."""
    present = [p for p in parts if p is not None]
    if not present:
        return None
    if len(present) == 1:
        return present[0]
    fisher = [p for p in present if isinstance(p, FisherGuarantee)]
    dp = [p for p in present if isinstance(p, DifferentialPrivacyGuarantee)]
    if len(fisher) != 1 or len(dp) != 1 or len(present) != 2:
        raise InvalidParameterError("`combine` joins one Fisher guarantee and one DP guarantee.")
    return CombinedGuarantee(fisher[0], dp[0])
