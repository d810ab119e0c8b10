"""Privacy accounting: the (ε, δ) spent by a sequence of releases, behind one base class.

:class:`PrivacyAccountant` is the base; :func:`privnoise.dp.accountant_for` builds the accountant for a mode:

* :class:`~privnoise.dp.rational_accountant.RationalAccountant` — modes ``"pure"`` (ε-DP charges add up: basic
  composition, Dwork & Roth, Theorem 3.14) and ``"approximate"`` ((ε_i, δ_i) charges add up to (Σε_i, Σδ_i),
  Theorem 3.16; with ``advanced=True`` also the heterogeneous advanced composition theorem of Dwork, Rothblum &
  Vadhan 2010). Budgets are exact rationals (:class:`fractions.Fraction`): ten charges of ε = 0.1 spend exactly 1
  (SECURITY.md, requirement 10). The query server's budgets follow these rules.
* :class:`~privnoise.dp.library_accountant.LibraryAccountant` — modes ``"pld"`` (Google's privacy-loss-distribution
  accountant, pessimistic discretisation, an upper bound) and ``"rdp"`` (Rényi DP), through dp-accounting events.

Every accountant records a noise object through its privacy profile (:func:`privnoise.dp.profile.profile_of`): the
exact rational ε of pure noise, ε(δ) rounded up for Gaussian-type noise, or the family's dp-accounting event.

A float charge is read as its shortest decimal representation (``0.1`` is 1/10, not the binary double nearest to it);
computed ε values (a Gaussian's ε at a δ) are rounded *up* to a rational before they are charged. The dp-accounting
modes use the add-or-remove-one neighbouring relation with the shift Δ of the query.

References
----------
.. [1] C. Dwork, A. Roth, "The algorithmic foundations of differential privacy", 2014, Section 3.5.
.. [2] C. Dwork, G. Rothblum, S. Vadhan, "Boosting and differential privacy", FOCS 2010.
.. [3] Google, dp-accounting (PLD and RDP accountants), https://github.com/google/differential-privacy.

Examples
--------
>>> from privnoise.dp import accountant_for
>>> acc = accountant_for(mode="pure")
>>> for _ in range(10):
...     acc.record_epsilon(0.1)
>>> acc.total_epsilon
Fraction(1, 1)
>>> type(acc).__name__
'RationalAccountant'
>>> pld = accountant_for(mode="pld")
>>> pld.record_gaussian(2.0, sensitivity=1.0, count=4)
>>> round(pld.epsilon(1e-5), 2)
4.38
"""

from __future__ import annotations

import math
import numbers
import threading
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any, Literal, get_args

import numpy as np

from .._optional import check as check_extra
from .._validation import check_positive, check_positive_int, check_probability
from ..exceptions import BudgetExceededError, CalibrationError, InvalidParameterError
from ..guarantees import DifferentialPrivacyGuarantee

__all__ = ["AccountingMode", "Charge", "PrivacyAccountant", "exact_rational"]

#: The composition modes of :class:`PrivacyAccountant` (pld and rdp need the ``dp`` extra, dp-accounting).
AccountingMode = Literal["pure", "approximate", "pld", "rdp"]
MODES: tuple[str, ...] = get_args(AccountingMode)
OWNER = "PrivacyAccountant"


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


@dataclass(frozen=True, slots=True)
class Charge:
    """What one recorded release spends: its (ε, δ) in exact rationals (rational accountant and query server) or its
    dp-accounting event (library accountant), ``count`` times, and the Fisher information it adds about each record
    of a column (the query server's per-record budgets; Farokhi & Sandberg, Proposition 1). ``events`` are the
    privacy events of its parts (:mod:`privnoise.dp.events`), which the server's Rényi filter composes one by one."""

    epsilon: Fraction | None
    delta: Fraction | None
    event: Any = None
    count: int = 1
    label: str = ""
    information: dict[str, Fraction] = field(default_factory=dict)
    events: tuple[Any, ...] = ()


class PrivacyAccountant:
    """The privacy spent by a sequence of releases (the base of the rational and the library accountants).

    Parameters
    ----------
    mode : {"pure", "approximate", "pld", "rdp"}
        Composition method (see the module docstring): :func:`privnoise.dp.accountant_for` builds a
        :class:`~privnoise.dp.rational_accountant.RationalAccountant` for "pure" and "approximate" and a
        :class:`~privnoise.dp.library_accountant.LibraryAccountant` for "pld" and "rdp".
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
        "_lock",
        "_mode",
    )

    #: The modes a concrete accountant serves.
    modes: tuple[str, ...] = MODES

    def __init__(
        self,
        mode: AccountingMode = "approximate",
        *,
        advanced: bool = False,
        epsilon_budget: Any = None,
        delta_budget: Any = None,
        value_discretization_interval: float = 1e-4,
    ) -> None:
        if type(self) is PrivacyAccountant:
            raise TypeError(
                "`PrivacyAccountant` is the base of the accountants; build one with "
                f"`privnoise.dp.accountant_for(mode={mode!r})` or a concrete class (RationalAccountant, "
                "LibraryAccountant, ZCDPAccountant)."
            )
        if mode not in self.modes:
            raise InvalidParameterError(
                f"`mode` of `{type(self).__name__}` must be one of {', '.join(self.modes)}; got {mode!r}."
            )
        if mode in ("pld", "rdp"):
            check_extra("dp_accounting", feature=f"accountant_for(mode={mode!r})")
        if not isinstance(advanced, bool):
            raise InvalidParameterError(f"`advanced` of `{OWNER}` must be a bool; got {advanced!r}.")
        if advanced and mode != "approximate":
            raise InvalidParameterError(f"`advanced` of `{OWNER}` applies to mode 'approximate'; got {mode!r}.")
        self._mode = mode
        self._advanced = advanced
        self._budget_epsilon = (
            None if epsilon_budget is None else exact_rational(epsilon_budget, "epsilon_budget", OWNER)
        )
        self._budget_delta = (
            None if delta_budget is None else exact_rational(delta_budget, "delta_budget", OWNER, allow_zero=True)
        )
        if self._budget_delta is not None and self._budget_delta >= 1:
            raise InvalidParameterError(f"`delta_budget` of `{OWNER}` must be < 1; got {self._budget_delta}.")
        if mode in ("pld", "rdp") and self._budget_epsilon is not None and not self._budget_delta:
            raise InvalidParameterError(f"`delta_budget` of `{OWNER}` must be > 0 with an ε budget in mode {mode}.")
        if mode == "pure" and self._budget_delta:
            raise InvalidParameterError(f"`delta_budget` of `{OWNER}` must be 0 in mode 'pure'.")
        self._interval = check_positive(value_discretization_interval, "value_discretization_interval", OWNER)
        self._charges: list[Charge] = []
        self._lock = threading.Lock()

    def checkpoint(self) -> tuple[Charge, ...]:
        """The charges recorded so far, to :meth:`restore` them (a statement of several releases charged whole)."""
        with self._lock:
            return tuple(self._charges)

    def restore(self, checkpoint: tuple[Charge, ...]) -> None:
        """Forget every charge recorded after ``checkpoint`` (from :meth:`checkpoint`)."""
        with self._lock:
            if tuple(self._charges[: len(checkpoint)]) != checkpoint:
                raise InvalidParameterError("`checkpoint` of `restore` is not a checkpoint of this accountant.")
            del self._charges[len(checkpoint):]

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
        raise InvalidParameterError(
            f"`total_epsilon` of `{OWNER}` exists in modes 'pure' and 'approximate'; this accountant is {self._mode!r}."
        )

    @property
    def total_delta(self) -> Fraction:
        """Σ count·δ_i, exactly (pure and approximate modes)."""
        raise InvalidParameterError(
            f"`total_delta` of `{OWNER}` exists in modes 'pure' and 'approximate'; this accountant is {self._mode!r}."
        )

    # -- recording: one method per way a release is described, each turned into a charge by the subclass -------
    def record_epsilon(self, epsilon: Any, delta: Any = 0, *, count: int = 1, label: str = "") -> None:
        """Charge ``count`` releases of (ε, δ)-DP each (pure and approximate modes only)."""
        raise InvalidParameterError(
            f"`record_epsilon` of `{OWNER}` exists in modes 'pure' and 'approximate'; this accountant is "
            f"{self._mode!r}."
        )

    def record_guarantee(self, guarantee: DifferentialPrivacyGuarantee, *, count: int = 1) -> None:
        """Charge releases with a stated :class:`~privnoise.guarantees.DifferentialPrivacyGuarantee`."""
        if not isinstance(guarantee, DifferentialPrivacyGuarantee):
            raise InvalidParameterError(
                f"`guarantee` of `{OWNER}.record_guarantee` must be a DifferentialPrivacyGuarantee; "
                f"got {type(guarantee).__name__}."
            )
        self.record_epsilon(guarantee.epsilon, guarantee.delta, count=count, label="guarantee")

    def record_laplace(self, scale: Any, sensitivity: Any, count: int = 1) -> None:
        """Charge ``count`` Laplace releases of scale b at sensitivity Δ (ε = Δ/b each)."""
        from .profile import LaplaceProfile

        owner = f"{OWNER}.record_laplace"
        k = check_positive_int(count, "count", owner)
        b = check_positive(scale, "scale", owner)
        d = check_positive(sensitivity, "sensitivity", owner)
        self._record_profile(LaplaceProfile(np.atleast_1d(b), 1), d, None, k, "laplace", exact=(scale, sensitivity))

    def record_gaussian(self, sigma: Any, sensitivity: Any, count: int = 1, *, delta: Any = None) -> None:
        """Charge ``count`` Gaussian releases of standard deviation σ at ℓ2 sensitivity Δ.

        In approximate mode each release is charged (ε(δ), δ) from the exact Gaussian profile at the per-release
        ``delta`` (required); the pure mode refuses Gaussian noise.
        """
        from .profile import GaussianProfile

        owner = f"{OWNER}.record_gaussian"
        s = check_positive(sigma, "sigma", owner)
        d = check_positive(sensitivity, "sensitivity", owner)
        k = check_positive_int(count, "count", owner)
        self._record_profile(GaussianProfile(s, 1), d, delta, k, "gaussian")

    def record(self, mechanism: Any, *, sensitivity: Any = None, delta: Any = None, count: int = 1) -> None:
        """Charge ``count`` releases of ``mechanism`` through its privacy profile.

        Laplace (ℓ1 sensitivity; vector Laplace via its smallest scale), Gaussian (ℓ2 sensitivity, through
        σ_min = √λ_min(Σ)), ℓ2/multi-user Laplace, lattice noise, or a hardened mechanism (whose own sensitivity
        and rounding are used).
        """
        from ..mechanisms import Noise
        from .profile import NoProfile, profile_of

        owner = f"{OWNER}.record"
        if not isinstance(mechanism, Noise):
            raise InvalidParameterError(
                f"`mechanism` of `{owner}` must be a privnoise Mechanism or HardenedMechanism; "
                f"got {type(mechanism).__name__}."
            )
        k = check_positive_int(count, "count", owner)
        declared = mechanism.declared_sensitivity
        if declared is None and sensitivity is None:
            raise InvalidParameterError(f"`sensitivity` of `{owner}` is required for `{mechanism.name}`.")
        sens = declared if declared is not None else check_positive(sensitivity, "sensitivity", owner)
        profile = profile_of(mechanism)
        if isinstance(profile, NoProfile):
            raise InvalidParameterError(
                f"`{owner}` accounts noise with a differential-privacy profile; got `{mechanism.name}`: "
                f"{profile.reason}"
            )
        self._record_profile(profile, sens, delta, k, "hardened" if declared is not None else mechanism.name)

    # Each concrete accountant implements the methods below.
    def _record_profile(
        self, profile: Any, sensitivity: float, delta: Any, count: int, label: str, *, exact: Any = None
    ) -> None:
        """Commit ``count`` releases of noise with this privacy profile at this sensitivity."""
        raise NotImplementedError  # pragma: no cover - every concrete accountant implements it

    def _check_budget(self, charges: list[Charge]) -> None:
        """Raise BudgetExceededError when ``charges`` would exceed the budget."""
        raise NotImplementedError  # pragma: no cover

    def _commit(self, charge: Charge) -> None:
        with self._lock:
            candidate = [*self._charges, charge]
            if self._budget_epsilon is not None or self._budget_delta is not None:
                self._check_budget(candidate)
            self._on_commit(charge)
            self._charges.append(charge)

    def _on_commit(self, charge: Charge) -> None:
        """Hook run under the lock when a charge is committed (the library accountant composes its event)."""

    # -- queries -----------------------------------------------------------------------------------------------
    def epsilon(self, delta: float = 0.0) -> float:
        """The ε for which the composition so far is (ε, δ)-DP."""
        raise NotImplementedError  # pragma: no cover

    def delta(self, epsilon: float) -> float:
        """The smallest δ (as computed by the mode) for which the composition so far is (ε, δ)-DP."""
        raise NotImplementedError  # pragma: no cover

    def spent(self, delta: float | None = None) -> DifferentialPrivacyGuarantee:
        """The guarantee of the composition: (Σε, Σδ) in the pure/approximate modes, (ε(δ), δ) given ``delta``."""
        if delta is None:
            if self._mode in ("pld", "rdp"):
                raise InvalidParameterError(f"`delta` of `{OWNER}.spent` is required in mode {self._mode!r}.")
            eps, dl = float(self.total_epsilon), float(self.total_delta)
        else:
            dl = check_probability(delta, "delta", f"{OWNER}.spent")
            eps = self.epsilon(dl)
        if eps == 0.0:
            raise CalibrationError(f"`{OWNER}` has recorded no release yet: nothing is spent.")
        if not math.isfinite(eps):
            raise CalibrationError(f"δ = {dl:g} is below the δ already spent ({float(self.total_delta):.3g}).")
        return DifferentialPrivacyGuarantee(epsilon=eps, delta=dl, adjacency=f"composition of {len(self)} records")

    def __len__(self) -> int:
        return sum(c.count for c in self._charges)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(mode={self._mode!r}, releases={len(self)})"


def budget_text(value: Fraction | None) -> str:
    return "∞" if value is None else f"{float(value):.6g}"


def budget_exceeded(asked: str, spent: str, remaining: str, budget: str) -> BudgetExceededError:
    """The refusal of a release that does not fit the budget, in the one form every accountant states it: what
    the release asks, what is spent so far, what remains, and of which budget."""
    return BudgetExceededError(
        f"the release asks {asked}; spent so far {spent}, remaining {remaining} of {budget}"
    )
