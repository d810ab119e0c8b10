"""Privacy accounting: the (ε, δ) spent by a sequence of releases.

:class:`PrivacyAccountant` composes releases in one of four modes:

* ``"pure"`` — ε-DP charges add up (basic composition, Dwork & Roth, Theorem 3.14); δ must be 0.
* ``"approximate"`` — (ε_i, δ_i) charges add up to (Σε_i, Σδ_i) (basic composition, Dwork & Roth, Theorem 3.16);
  with ``advanced=True``, :meth:`~PrivacyAccountant.epsilon` also applies the advanced composition theorem
  (Dwork, Rothblum & Vadhan 2010, Theorem III.3; Dwork & Roth, Theorem 3.20) in its heterogeneous form: for any
  δ' > 0 the composition is (ε', Σδ_i + δ')-DP with ε' = √(2 ln(1/δ') Σε_i²) + Σ ε_i(e^{ε_i} − 1) (the privacy
  losses are bounded by ε_i and have mean at most ε_i(e^{ε_i} − 1); Azuma's inequality), and reports the smaller
  of the two.
* ``"pld"`` — tight numerical composition with Google's privacy-loss-distribution accountant
  (:class:`dp_accounting.pld.PLDAccountant`, pessimistic discretisation, so the result is an upper bound).
* ``"rdp"`` — Rényi-DP composition (:class:`dp_accounting.rdp.RdpAccountant`), looser than PLD.

In the pure and approximate modes the budget is kept in exact rationals (:class:`fractions.Fraction`): ten charges of
ε = 0.1 spend exactly 1 (SECURITY.md, requirement 10). A float charge is read as its shortest decimal representation
(``0.1`` is 1/10, not the binary double nearest to it); computed ε values (a Gaussian's ε at a δ) are rounded *up* to
a rational before they are charged.

The dp-accounting modes use the add-or-remove-one neighbouring relation with the shift Δ of the query: an event of
noise multiplier b/Δ (Laplace) or σ/Δ (Gaussian).

References
----------
.. [1] C. Dwork, A. Roth, "The algorithmic foundations of differential privacy", 2014, Section 3.5.
.. [2] C. Dwork, G. Rothblum, S. Vadhan, "Boosting and differential privacy", FOCS 2010.
.. [3] Google, dp-accounting (PLD and RDP accountants), https://github.com/google/differential-privacy.

Examples
--------
>>> acc = PrivacyAccountant(mode="pure")
>>> for _ in range(10):
...     acc.record_epsilon(0.1)
>>> acc.total_epsilon
Fraction(1, 1)
>>> pld = PrivacyAccountant(mode="pld")
>>> pld.record_gaussian(2.0, sensitivity=1.0, count=4)
>>> round(pld.epsilon(1e-5), 2)
4.38
"""

from __future__ import annotations

import math
import numbers
import threading
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any, Literal, get_args

import numpy as np

from .._optional import check as _check_extra
from .._validation import check_positive, check_positive_int, check_probability
from ..exceptions import BudgetExceededError, CalibrationError, InvalidParameterError
from ..guarantees import DifferentialPrivacyGuarantee
from ..mechanisms import Gaussian, Laplace
from ..mechanisms._base import Mechanism
from .gaussian import gaussian_epsilon

__all__ = ["AccountingMode", "Charge", "PrivacyAccountant", "exact_rational"]

#: The composition modes of :class:`PrivacyAccountant` (pld and rdp need the ``dp`` extra, dp-accounting).
AccountingMode = Literal["pure", "approximate", "pld", "rdp"]
_MODES: tuple[str, ...] = get_args(AccountingMode)
_OWNER = "PrivacyAccountant"


def exact_rational(value: Any, name: str, owner: str, *, allow_zero: bool = False) -> Fraction:
    """``value`` (Fraction, int, Decimal, decimal string or float) as an exact, finite, non-negative Fraction.

    Floats are read through their shortest decimal representation, so ``0.1`` becomes ``Fraction(1, 10)``.

    Examples
    --------
    >>> exact_rational(0.1, "epsilon", "doc"), exact_rational("1/3", "epsilon", "doc")
    (Fraction(1, 10), Fraction(1, 3))
    """
    if isinstance(value, bool):
        raise InvalidParameterError(f"`{name}` of `{owner}` must be a number; got {value!r}.")
    try:
        if isinstance(value, Fraction):
            q = value
        elif isinstance(value, numbers.Integral | np.integer):
            q = Fraction(int(value))
        elif isinstance(value, float | np.floating):
            if not math.isfinite(float(value)):
                raise ValueError
            q = Fraction(repr(float(value)))
        elif isinstance(value, Decimal | str):
            q = Fraction(value)
        else:
            raise TypeError
    except (TypeError, ValueError, ZeroDivisionError, OverflowError):
        raise InvalidParameterError(
            f"`{name}` of `{owner}` must be a finite rational number; got {value!r}."
        ) from None
    if q < 0 or (q == 0 and not allow_zero):
        raise InvalidParameterError(
            f"`{name}` of `{owner}` must be {'>= 0' if allow_zero else '> 0'}; got {q}."
        )
    return q


def _round_up(value: float) -> Fraction:
    """A rational ≥ ``value`` (a computed float, possibly a few ulp low)."""
    return Fraction(math.nextafter(value * (1.0 + 1e-12) + 1e-15, math.inf))


@dataclass(frozen=True, slots=True)
class Charge:
    """One recorded release: its (ε, δ) (pure/approximate modes) or its dp-accounting event (pld/rdp modes)."""

    epsilon: Fraction | None
    delta: Fraction | None
    event: Any
    count: int
    label: str


class PrivacyAccountant:
    """The privacy spent by a sequence of releases, composed in one of four modes.

    Parameters
    ----------
    mode : {"pure", "approximate", "pld", "rdp"}
        Composition method (see the module docstring).
    advanced : bool, default False
        In approximate mode, let :meth:`epsilon` use the advanced composition theorem when it is tighter.
    epsilon_budget, delta_budget : optional
        A budget: a record that would exceed it raises :class:`~privnoise.exceptions.BudgetExceededError` and is
        not recorded. In the pld/rdp modes both are needed (ε is evaluated at ``delta_budget``).
    value_discretization_interval : float, default 1e-4
        Discretisation of the PLD accountant (smaller is tighter and slower).

    Notes
    -----
    Thread-safe: a record is checked against the budget and committed under one lock.
    """

    __slots__ = (
        "_advanced",
        "_budget_delta",
        "_budget_epsilon",
        "_charges",
        "_interval",
        "_library",
        "_lock",
        "_mode",
    )

    def __init__(
        self,
        mode: AccountingMode = "approximate",
        *,
        advanced: bool = False,
        epsilon_budget: Any = None,
        delta_budget: Any = None,
        value_discretization_interval: float = 1e-4,
    ) -> None:
        if mode not in _MODES:
            raise InvalidParameterError(
                f"`mode` of `{_OWNER}` must be one of {', '.join(_MODES)}; got {mode!r}."
            )
        if mode in ("pld", "rdp"):
            _check_extra("dp_accounting", feature=f"{_OWNER}(mode={mode!r})")
        if not isinstance(advanced, bool):
            raise InvalidParameterError(f"`advanced` of `{_OWNER}` must be a bool; got {advanced!r}.")
        if advanced and mode != "approximate":
            raise InvalidParameterError(
                f"`advanced` of `{_OWNER}` applies to mode 'approximate'; got {mode!r}."
            )
        self._mode = mode
        self._advanced = advanced
        self._budget_epsilon = (
            None if epsilon_budget is None else exact_rational(epsilon_budget, "epsilon_budget", _OWNER)
        )
        self._budget_delta = (
            None
            if delta_budget is None
            else exact_rational(delta_budget, "delta_budget", _OWNER, allow_zero=True)
        )
        if self._budget_delta is not None and self._budget_delta >= 1:
            raise InvalidParameterError(
                f"`delta_budget` of `{_OWNER}` must be < 1; got {self._budget_delta}."
            )
        if mode in ("pld", "rdp") and self._budget_epsilon is not None and not self._budget_delta:
            raise InvalidParameterError(
                f"`delta_budget` of `{_OWNER}` must be > 0 with an ε budget in mode {mode}."
            )
        if mode == "pure" and self._budget_delta:
            raise InvalidParameterError(f"`delta_budget` of `{_OWNER}` must be 0 in mode 'pure'.")
        self._interval = check_positive(
            value_discretization_interval, "value_discretization_interval", _OWNER
        )
        self._charges: list[Charge] = []
        self._library: Any = None  # dp-accounting accountant holding every committed charge (pld/rdp modes)
        self._lock = threading.Lock()

    # -- properties ------------------------------------------------------------------------------------------
    @property
    def mode(self) -> AccountingMode:
        return self._mode

    @property
    def charges(self) -> tuple[Charge, ...]:
        return tuple(self._charges)

    @property
    def total_epsilon(self) -> Fraction:
        """Σ count·ε_i, exactly (pure and approximate modes)."""
        self._require_rational("total_epsilon")
        return sum((c.count * c.epsilon for c in self._charges if c.epsilon is not None), Fraction(0))

    @property
    def total_delta(self) -> Fraction:
        """Σ count·δ_i, exactly (pure and approximate modes)."""
        self._require_rational("total_delta")
        return sum((c.count * c.delta for c in self._charges if c.delta is not None), Fraction(0))

    def _require_rational(self, what: str) -> None:
        if self._mode not in ("pure", "approximate"):
            raise InvalidParameterError(
                f"`{what}` of `{_OWNER}` exists in modes 'pure' and 'approximate'; this accountant is {self._mode!r}."
            )

    # -- recording ---------------------------------------------------------------------------------------------
    def record_epsilon(self, epsilon: Any, delta: Any = 0, *, count: int = 1, label: str = "") -> None:
        """Charge ``count`` releases of (ε, δ)-DP each (pure and approximate modes only)."""
        owner = f"{_OWNER}.record_epsilon"
        self._require_rational("record_epsilon")
        eps = exact_rational(epsilon, "epsilon", owner)
        dl = exact_rational(delta, "delta", owner, allow_zero=True)
        if dl >= 1:
            raise InvalidParameterError(f"`delta` of `{owner}` must be < 1; got {dl}.")
        if self._mode == "pure" and dl != 0:
            raise InvalidParameterError(f"`delta` of `{owner}` must be 0 in mode 'pure'; got {dl}.")
        k = check_positive_int(count, "count", owner)
        self._commit(Charge(eps, dl, None, k, label or "epsilon-delta"))

    def record_guarantee(self, guarantee: DifferentialPrivacyGuarantee, *, count: int = 1) -> None:
        """Charge releases with a stated :class:`~privnoise.guarantees.DifferentialPrivacyGuarantee`."""
        if not isinstance(guarantee, DifferentialPrivacyGuarantee):
            raise InvalidParameterError(
                f"`guarantee` of `{_OWNER}.record_guarantee` must be a DifferentialPrivacyGuarantee; "
                f"got {type(guarantee).__name__}."
            )
        self.record_epsilon(guarantee.epsilon, guarantee.delta, count=count, label="guarantee")

    def record_laplace(self, scale: Any, sensitivity: Any, count: int = 1) -> None:
        """Charge ``count`` Laplace releases of scale b at sensitivity Δ (ε = Δ/b each)."""
        owner = f"{_OWNER}.record_laplace"
        k = check_positive_int(count, "count", owner)
        if self._mode in ("pure", "approximate"):
            # ε = Δ/b exactly for the noise actually drawn: the scale at its binary value, the sensitivity at
            # the larger of its binary and decimal readings (0.1 declared means at least 1/10).
            b_exact = exact_rational(scale, "scale", owner)
            if isinstance(scale, float | np.floating):
                b_exact = Fraction(float(scale))
            d_exact = exact_rational(sensitivity, "sensitivity", owner)
            if isinstance(sensitivity, float | np.floating):
                d_exact = max(d_exact, Fraction(float(sensitivity)))
            self._commit(Charge(d_exact / b_exact, Fraction(0), None, k, "laplace"))
            return
        import dp_accounting

        b = check_positive(scale, "scale", owner)
        d = check_positive(sensitivity, "sensitivity", owner)
        event = dp_accounting.LaplaceDpEvent(b / d)
        self._commit(Charge(None, None, _self_composed(event, k), k, "laplace"))

    def record_gaussian(self, sigma: Any, sensitivity: Any, count: int = 1, *, delta: Any = None) -> None:
        """Charge ``count`` Gaussian releases of standard deviation σ at ℓ2 sensitivity Δ.

        In approximate mode each release is charged (ε(δ), δ) from the exact Gaussian profile at the per-release
        ``delta`` (required); the pure mode refuses Gaussian noise.
        """
        owner = f"{_OWNER}.record_gaussian"
        s = check_positive(sigma, "sigma", owner)
        d = check_positive(sensitivity, "sensitivity", owner)
        k = check_positive_int(count, "count", owner)
        if self._mode == "pure":
            raise InvalidParameterError(f"Gaussian noise gives no pure ε-DP; `{_OWNER}` is in mode 'pure'.")
        if self._mode == "approximate":
            if delta is None:
                raise InvalidParameterError(f"`delta` of `{owner}` is required in mode 'approximate'.")
            dl = exact_rational(delta, "delta", owner)
            if dl >= 1:
                raise InvalidParameterError(f"`delta` of `{owner}` must be < 1; got {dl}.")
            eps = gaussian_epsilon(s, float(dl), sensitivity=d)
            self._commit(Charge(_round_up(eps), dl, None, k, "gaussian"))
            return
        import dp_accounting

        event = dp_accounting.GaussianDpEvent(s / d)
        self._commit(Charge(None, None, _self_composed(event, k), k, "gaussian"))

    def record(self, mechanism: Any, *, sensitivity: Any = None, delta: Any = None, count: int = 1) -> None:
        """Charge ``count`` releases of ``mechanism``.

        Laplace (ℓ1 sensitivity; vector Laplace via its smallest scale in the pure/approximate modes only),
        Gaussian (ℓ2 sensitivity, through σ_min = √λ_min(Σ)), or a hardened mechanism
        (:class:`~privnoise.dp.hardening.HardenedMechanism`, whose own sensitivity and rounding are used).
        """
        from .hardening import HardenedMechanism

        owner = f"{_OWNER}.record"
        if isinstance(mechanism, HardenedMechanism):
            self._record_hardened(mechanism, delta=delta, count=count)
            return
        if not isinstance(mechanism, Mechanism):
            raise InvalidParameterError(
                f"`mechanism` of `{owner}` must be a Mechanism or HardenedMechanism; got {type(mechanism).__name__}."
            )
        if sensitivity is None:
            raise InvalidParameterError(f"`sensitivity` of `{owner}` is required for `{mechanism.name}`.")
        if isinstance(mechanism, Laplace):
            scale = np.atleast_1d(mechanism.scale)
            if scale.size > 1 and self._mode in ("pld", "rdp"):
                raise InvalidParameterError(
                    f"`{owner}` composes vector Laplace noise in modes 'pure' and 'approximate' only."
                )
            self.record_laplace(float(scale.min()), sensitivity, count)
        elif isinstance(mechanism, Gaussian):
            from .hardening import _gaussian_sigma_min

            self.record_gaussian(_gaussian_sigma_min(mechanism), sensitivity, count, delta=delta)
        else:
            raise InvalidParameterError(
                f"`{owner}` accounts Laplace, Gaussian and hardened mechanisms; got `{mechanism.name}` "
                "(bounded-support noise gives no pure ε-DP)."
            )

    def _record_hardened(self, mechanism: Any, *, delta: Any, count: int) -> None:
        from .lattice import DiscreteGaussian

        inner = mechanism.mechanism
        if self._mode in ("pure", "approximate"):
            guarantee = mechanism.guarantee(delta=None if mechanism.pure else delta)
            if guarantee is None:
                raise InvalidParameterError(f"`{inner.name}` noise has no differential-privacy guarantee.")
            k = check_positive_int(count, "count", f"{_OWNER}.record")
            if mechanism.pure:
                self._commit(Charge(mechanism.epsilon_fraction(), Fraction(0), None, k, "hardened"))
            else:
                self.record_epsilon(_round_up(guarantee.epsilon), Fraction(repr(float(delta))), count=k)
            return
        import dp_accounting

        k = check_positive_int(count, "count", f"{_OWNER}.record")
        from .lattice import lattice_sensitivity

        if isinstance(inner, Laplace) and inner.dim == 1:
            sens = lattice_sensitivity(mechanism.sensitivity, mechanism.grid) * mechanism.grid
            event = dp_accounting.LaplaceDpEvent(float(inner.scale) / sens)
        elif isinstance(inner, Gaussian):
            sigma, sens = mechanism._gaussian_parts()
            event = dp_accounting.GaussianDpEvent(sigma / sens)
        elif isinstance(inner, DiscreteGaussian) and self._mode == "rdp":
            sigma, sens = mechanism._gaussian_parts()
            event = dp_accounting.ZCDpEvent(sens**2 / (2.0 * sigma**2))  # CKS20 Theorem 14
        else:
            raise InvalidParameterError(
                f"`{_OWNER}` in mode {self._mode!r} cannot compose hardened `{inner.name}` noise; "
                "use mode 'approximate' (or 'rdp' for the discrete Gaussian)."
            )
        self._commit(Charge(None, None, _self_composed(event, k), k, "hardened"))

    def _commit(self, charge: Charge) -> None:
        with self._lock:
            candidate = [*self._charges, charge]
            if self._budget_epsilon is not None or self._budget_delta is not None:
                self._check_budget(candidate)
            if charge.event is not None:
                if self._library is None:
                    self._library = self._library_accountant([])
                self._library.compose(charge.event)
            self._charges.append(charge)

    def _check_budget(self, charges: list[Charge]) -> None:
        if self._mode in ("pure", "approximate"):
            eps = sum((c.count * c.epsilon for c in charges if c.epsilon is not None), Fraction(0))
            dl = sum((c.count * c.delta for c in charges if c.delta is not None), Fraction(0))
            if (self._budget_epsilon is not None and eps > self._budget_epsilon) or (
                self._budget_delta is not None and dl > self._budget_delta
            ):
                raise BudgetExceededError(
                    f"the release would spend (ε, δ) = ({float(eps):.6g}, {float(dl):.3g}), beyond the budget "
                    f"({_fmt(self._budget_epsilon)}, {_fmt(self._budget_delta)})."
                )
            return
        assert self._budget_delta is not None
        eps_f = self._library_epsilon(charges, float(self._budget_delta))
        if self._budget_epsilon is not None and eps_f > self._budget_epsilon:
            raise BudgetExceededError(
                f"the release would spend ε = {eps_f:.6g} at δ = {float(self._budget_delta):.3g}, beyond the "
                f"budget ε = {float(self._budget_epsilon):.6g}."
            )

    # -- queries -----------------------------------------------------------------------------------------------
    def _library_accountant(self, charges: list[Charge]) -> Any:
        import dp_accounting
        from dp_accounting import pld, rdp

        relation = dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE
        accountant: Any
        if self._mode == "pld":
            accountant = pld.PLDAccountant(relation, value_discretization_interval=self._interval)
        else:
            accountant = rdp.RdpAccountant(neighboring_relation=relation)
        if charges:
            accountant.compose(dp_accounting.ComposedDpEvent([c.event for c in charges]))
        return accountant

    def _library_epsilon(self, charges: list[Charge], delta: float) -> float:
        if not charges:
            return 0.0
        if self._library is not None and len(charges) == len(self._charges):
            return float(self._library.get_epsilon(delta))
        return float(self._library_accountant(charges).get_epsilon(delta))

    def epsilon(self, delta: float = 0.0) -> float:
        """The ε for which the composition so far is (ε, δ)-DP.

        Pure mode: Σε_i (any δ). Approximate mode: Σε_i when δ ≥ Σδ_i (and, with ``advanced``, the smaller
        advanced-composition ε when δ > Σδ_i); ``inf`` when δ < Σδ_i. PLD/RDP modes: the library's ε(δ).
        """
        owner = f"{_OWNER}.epsilon"
        dl = check_probability(delta, "delta", owner)
        charges = list(self._charges)
        if self._mode == "pure":
            return float(self.total_epsilon)
        if self._mode == "approximate":
            total_delta = self.total_delta
            slack = Fraction(repr(dl)) - total_delta
            if slack < 0:
                return math.inf
            basic = float(self.total_epsilon)
            if self._advanced and slack > 0 and charges:
                return min(basic, _advanced_epsilon(charges, float(slack)))
            return basic
        if dl == 0.0:
            raise CalibrationError(f"`delta` of `{owner}` must be > 0 in mode {self._mode!r}.")
        return self._library_epsilon(charges, dl)

    def delta(self, epsilon: float) -> float:
        """The smallest δ (as computed by the mode) for which the composition so far is (ε, δ)-DP."""
        owner = f"{_OWNER}.delta"
        eps = check_positive(epsilon, "epsilon", owner, allow_zero=True)
        charges = list(self._charges)
        if not charges:
            return 0.0
        if self._mode in ("pure", "approximate"):
            total_eps = self.total_epsilon
            total_delta = float(self.total_delta)
            if Fraction(repr(eps)) >= total_eps:
                return total_delta
            if self._advanced:
                return min(1.0, total_delta + _advanced_delta(charges, eps))
            return 1.0
        return float(min(1.0, self._library.get_delta(eps)))

    def spent(self, delta: float | None = None) -> DifferentialPrivacyGuarantee:
        """The guarantee of the composition: (Σε, Σδ) in the pure/approximate modes, (ε(δ), δ) given ``delta``."""
        if delta is None:
            if self._mode in ("pld", "rdp"):
                raise InvalidParameterError(
                    f"`delta` of `{_OWNER}.spent` is required in mode {self._mode!r}."
                )
            eps, dl = float(self.total_epsilon), float(self.total_delta)
        else:
            dl = check_probability(delta, "delta", f"{_OWNER}.spent")
            eps = self.epsilon(dl)
        if eps == 0.0:
            raise CalibrationError(f"`{_OWNER}` has recorded no release yet: nothing is spent.")
        if not math.isfinite(eps):
            raise CalibrationError(
                f"δ = {dl:g} is below the δ already spent ({float(self.total_delta):.3g})."
            )
        return DifferentialPrivacyGuarantee(
            epsilon=eps, delta=dl, adjacency=f"composition of {len(self)} records"
        )

    def __len__(self) -> int:
        return sum(c.count for c in self._charges)

    def __repr__(self) -> str:
        return f"PrivacyAccountant(mode={self._mode!r}, releases={len(self)})"


def _self_composed(event: Any, count: int) -> Any:
    import dp_accounting

    return event if count == 1 else dp_accounting.SelfComposedDpEvent(event, count)


def _fmt(value: Fraction | None) -> str:
    return "∞" if value is None else f"{float(value):.6g}"


def _eps_array(charges: list[Charge]) -> tuple[np.ndarray, np.ndarray]:
    eps = np.array([float(c.epsilon) for c in charges if c.epsilon is not None])
    counts = np.array([c.count for c in charges if c.epsilon is not None], dtype=float)
    return eps, counts


def _advanced_epsilon(charges: list[Charge], slack: float) -> float:
    """ε' = √(2 ln(1/δ') Σε_i²) + Σ ε_i(e^{ε_i} − 1) (heterogeneous advanced composition)."""
    eps, counts = _eps_array(charges)
    square = float(np.sum(counts * eps**2))
    drift = float(np.sum(counts * eps * np.expm1(eps)))
    return math.sqrt(2.0 * math.log(1.0 / slack) * square) + drift


def _advanced_delta(charges: list[Charge], epsilon: float) -> float:
    """The δ' at which the advanced composition bound equals ``epsilon`` (1 when it cannot)."""
    eps, counts = _eps_array(charges)
    square = float(np.sum(counts * eps**2))
    drift = float(np.sum(counts * eps * np.expm1(eps)))
    if epsilon <= drift or square == 0.0:
        return 1.0
    return min(1.0, math.exp(-((epsilon - drift) ** 2) / (2.0 * square)))
