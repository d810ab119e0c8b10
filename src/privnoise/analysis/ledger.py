"""A session's budget: every query is priced from public parameters and charged before any data is read.

=============  =================  ==========================================================================
accountant     noise              composition and refusal
=============  =================  ==========================================================================
"pure"         Laplace            Σε in exact rationals (:class:`~privnoise.dp.RationalAccountant`); δ = 0,
                                  so group-by with unknown keys (partition selection) is refused
"approximate"  Laplace            basic composition (Σε, Σδ) in exact rationals
"advanced"     Laplace            as "approximate", and a charge is also accepted when the advanced
                                  composition theorem (slack δ′ = δ_budget − Σδ) keeps ε within budget
"pld"          Laplace            tight numerical composition of privacy-loss distributions (dp-accounting;
                                  pessimistic discretisation): ε(δ_budget) ≤ ε_budget
"zcdp"         Gaussian           Σρ and Σδ (approximate zCDP) in exact rationals
                                  (:class:`~privnoise.dp.zcdp.ZCDPAccountant`): Σρ ≤ ρ_max(δ_budget − Σδ)
"rdp"          Gaussian           Rényi DP (dp-accounting) at δ_budget − Σδ (approximate part)
=============  =================  ==========================================================================

A query's ``epsilon`` is its price in the accountant's currency: ε for the accountants of ε, ρ = ε²/2 for those of
ρ (the ρ of an ε-DP mechanism; Bun & Steinke 2016, Proposition 1.4), or ``rho`` directly. The noise is the
session's family (:mod:`privnoise.dp.families`: Laplace for ε and Gaussian for ρ unless another registered family
of that currency is named); the numerical accountants compose each part's privacy event (:mod:`privnoise.dp.events`).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal, get_args

from .._optional import require
from ..dp.accounting import exact_rational
from ..dp.families import Currency, default_family, family_named
from ..dp.library_accountant import outward
from ..dp.rational_accountant import RationalAccountant
from ..dp.zcdp import ZCDPAccountant
from ..exceptions import BudgetExceededError, InvalidParameterError
from ..guarantees import DifferentialPrivacyGuarantee
from ..planning.plan import Cost

__all__ = ["ACCOUNTANTS", "Accountant", "Ledger", "Remaining"]

Accountant = Literal["pure", "approximate", "advanced", "pld", "rdp", "zcdp"]
ACCOUNTANTS: tuple[str, ...] = get_args(Accountant)
_OWNER = "Session"


@dataclass(frozen=True, slots=True)
class Remaining:
    """What is left of a session's budget.

    ``epsilon``: ε_budget minus the ε spent at δ_budget (exact for "pure"/"approximate"); ``delta``: δ not yet
    charged to approximate parts; ``rho``: the zCDP budget left ("zcdp" only).
    """

    epsilon: float
    delta: float
    rho: float | None = None
    spent_epsilon: float = 0.0
    exact_epsilon: Fraction | None = None
    queries: int = 0
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"epsilon": self.epsilon, "delta": self.delta, "spent_epsilon": self.spent_epsilon,
                               "queries": self.queries}
        if self.rho is not None:
            out["rho"] = self.rho
        if self.exact_epsilon is not None:
            out["epsilon_exact"] = str(self.exact_epsilon)
        return out


class Ledger:
    """The accountant of a session (module docstring)."""

    def __init__(self, mode: Any, epsilon: Any, delta: Any, noise: Any = None) -> None:
        if mode not in ACCOUNTANTS:
            raise InvalidParameterError(
                f"`accountant` of `{_OWNER}` must be one of {', '.join(map(repr, ACCOUNTANTS))}; got {mode!r}."
            )
        self.mode: str = mode
        self.epsilon = exact_rational(epsilon, "epsilon", _OWNER)
        self.delta = exact_rational(delta, "delta", _OWNER, allow_zero=True)
        if self.delta >= 1:
            raise InvalidParameterError(f"`delta` of `{_OWNER}` must be < 1; got {float(self.delta):g}.")
        if mode == "pure" and self.delta:
            raise InvalidParameterError(f"`delta` of `{_OWNER}` must be 0 with accountant 'pure'; got {float(self.delta):g}.")
        if mode in ("zcdp", "rdp", "pld", "advanced") and not self.delta:
            raise InvalidParameterError(f"`delta` of `{_OWNER}` must be > 0 with accountant {mode!r}.")
        if mode in ("pld", "rdp"):
            require("dp_accounting", feature=f"Session(accountant={mode!r})")
        self.currency: Currency = "rho" if mode in ("zcdp", "rdp") else "epsilon"
        self.family = (default_family(self.currency) if noise is None
                       else family_named(noise, owner=_OWNER, currency=self.currency))
        self.costs: list[Cost] = []
        self._pld: Any = None  # the composed privacy-loss distribution of the committed costs ("pld")
        self._rational: RationalAccountant | None = None
        self._zcdp: ZCDPAccountant | None = None
        if mode in ("pure", "approximate"):
            self._rational = RationalAccountant(mode, epsilon_budget=self.epsilon, delta_budget=self.delta)
        elif mode == "zcdp":
            self._zcdp = ZCDPAccountant(epsilon_budget=self.epsilon, delta_budget=self.delta)

    # -- pricing -----------------------------------------------------------------------------------------------
    def price(self, epsilon: Any, rho: Any, owner: str) -> Fraction:
        """A query's budget in the accountant's currency: ε (Laplace family) or ρ (Gaussian family)."""
        if (epsilon is None) == (rho is None):
            raise InvalidParameterError(f"`{owner}` needs exactly one of `epsilon` and `rho`.")
        if rho is not None:
            if self.currency != "rho":
                raise InvalidParameterError(f"`rho` of `{owner}` needs accountant 'zcdp' or 'rdp'; this is {self.mode!r}.")
            return exact_rational(rho, "rho", owner)
        eps = exact_rational(epsilon, "epsilon", owner)
        return eps if self.currency == "epsilon" else eps * eps / 2

    # -- charging ----------------------------------------------------------------------------------------------
    def charge(self, cost: Cost) -> None:
        """Commit ``cost`` or raise :class:`~privnoise.exceptions.BudgetExceededError` (nothing recorded)."""
        if self.mode in ("pure", "approximate"):
            assert self._rational is not None
            if self.mode == "pure" and cost.delta:
                raise InvalidParameterError(
                    f"{cost.label} needs δ > 0 (partition selection); accountant 'pure' has δ = 0: declare the keys "
                    "or use another accountant."
                )
            with _refusal(cost.label):
                self._rational.record_epsilon(cost.epsilon, cost.delta, label=cost.label)
        elif self.mode == "zcdp":
            assert self._zcdp is not None
            with _refusal(cost.label):
                self._zcdp.record_rho(cost.rho, delta=cost.delta, label=cost.label, gaussian=cost.gaussian)
        else:
            candidate = _pld_compose(self._pld, cost) if self.mode == "pld" else None
            if candidate is not None:
                spent = outward(candidate.get_epsilon_for_delta(float(self.delta)))
            else:
                spent = self._spent_epsilon([*self.costs, cost], float(self.delta))
            if spent > float(self.epsilon):
                before = self.remaining()
                asked = (f"ρ = {float(cost.rho):.6g}" if self.currency == "rho" else f"ε = {float(cost.epsilon):.6g}")
                after = (f"the spent ε would be {spent:.6g}" if math.isfinite(spent) else
                         "the approximate parts would spend all of δ, and no ε holds with none left")
                raise BudgetExceededError(
                    f"{cost.label} refused: it asks {asked}, δ = {float(cost.delta):.3g}; spent so far "
                    f"ε = {before.spent_epsilon:.6g}, remaining ε = {max(before.epsilon, 0.0):.6g}, "
                    f"δ = {before.delta:.3g} of the budget ε = {float(self.epsilon):.6g} at δ = {float(self.delta):.3g} "
                    f"(accountant {self.mode!r}): with it {after}."
                )
            self._pld = candidate
        self.costs.append(cost)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Charges inside the block are kept only if the block completes: on any error the ledger is as before it
        (for a statement of several releases, none of which is returned unless all are)."""
        costs, pld = list(self.costs), self._pld
        accountants = [(a, a.checkpoint()) for a in (self._rational, self._zcdp) if a is not None]
        try:
            yield
        except BaseException:
            self.costs, self._pld = costs, pld
            for accountant, checkpoint in accountants:
                accountant.restore(checkpoint)
            raise

    def trial(self, *costs: Cost) -> tuple[Remaining | None, str | None]:
        """What charging ``costs`` in turn would leave, or why it would be refused — with nothing recorded (a dry
        run; :mod:`privnoise.analysis.dry_run`)."""
        found: list[Remaining] = []
        try:
            with self.transaction():
                for cost in costs:
                    self.charge(cost)
                found.append(self.remaining())
                raise _Undo
        except _Undo:
            return found[0], None
        except BudgetExceededError as exc:
            return None, str(exc)

    def _spent_epsilon(self, costs: list[Cost], delta: float) -> float:
        """The ε spent at δ by ``costs`` (advanced and rdp modes; "pld" keeps its composition in ``_pld``)."""
        if not costs:
            return 0.0
        if self.mode == "advanced":
            total_delta = sum((c.delta for c in costs), Fraction(0))
            if total_delta > Fraction(repr(delta)):
                return math.inf
            acc = RationalAccountant("approximate", advanced=True)
            for c in costs:
                acc.record_epsilon(c.epsilon, c.delta, label=c.label)
            return acc.epsilon(delta)
        return _rdp_epsilon(costs, delta)

    # -- views -------------------------------------------------------------------------------------------------
    def spent(self) -> DifferentialPrivacyGuarantee:
        """The (ε, δ) spent so far, at the session's δ."""
        remaining = self.remaining()
        return DifferentialPrivacyGuarantee(
            remaining.spent_epsilon, float(self.delta), f"composition of {len(self.costs)} queries ({self.mode})"
        )

    def remaining(self) -> Remaining:
        n = len(self.costs)
        if self._rational is not None:
            eps = self.epsilon - self._rational.total_epsilon
            dl = self.delta - self._rational.total_delta
            return Remaining(float(eps), float(dl), None, float(self._rational.total_epsilon), eps, n)
        delta_left = float(self.delta - sum((c.delta for c in self.costs), Fraction(0)))
        if self._zcdp is not None:
            rho_left = self._zcdp.rho_budget() - self._zcdp.total_rho if self.costs else self._zcdp.rho_budget()
            spent = self._zcdp.epsilon(float(self.delta)) if self.costs else 0.0
            return Remaining(float(self.epsilon) - spent, delta_left, float(rho_left), spent, None, n)
        if self.mode == "pld":
            spent = 0.0 if self._pld is None else outward(self._pld.get_epsilon_for_delta(float(self.delta)))
        else:
            spent = self._spent_epsilon(self.costs, float(self.delta))
        return Remaining(float(self.epsilon) - spent, delta_left, None, spent, None, n)


class _Undo(Exception):
    """Raised inside :meth:`Ledger.trial`'s transaction so that it is rolled back."""


@contextlib.contextmanager
def _refusal(label: str) -> Iterator[None]:
    """An accountant's refusal, named after the query refused."""
    try:
        yield
    except BudgetExceededError as exc:
        raise BudgetExceededError(f"{label} refused: {exc}") from None


def _pld_compose(composed: Any, cost: Cost) -> Any:
    """``composed`` (a privacy-loss distribution, or None) composed with the events of ``cost``."""
    for event in cost.events:
        part = event.pld(1e-4)
        composed = part if composed is None else composed.compose(part)
    return composed


def _rdp_epsilon(costs: list[Cost], delta: float) -> float:
    import dp_accounting
    from dp_accounting import rdp

    approximate = float(sum((c.delta for c in costs), Fraction(0)))
    slack = delta - approximate
    if slack <= 0:
        return math.inf
    accountant = rdp.RdpAccountant(neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE)
    for cost in costs:
        for event in cost.events:
            accountant.compose(event.rdp())
    return outward(accountant.get_epsilon(slack))
