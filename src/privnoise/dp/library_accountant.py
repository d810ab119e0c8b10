"""The dp-accounting-backed accountant: tight numerical composition (PLD) or Rényi DP (RDP).

Modes ``"pld"`` and ``"rdp"`` of :class:`~privnoise.dp.accounting.PrivacyAccountant`. Each release is recorded as the
dp-accounting event of its privacy profile (Laplace, Gaussian, the discrete Gaussian's zCDP in RDP mode) under the
add-or-remove-one relation; the PLD accountant discretises pessimistically, so its ε(δ) is an upper bound up to
the floating-point error of its convolutions (FFTs over many compositions): measured against exact compositions of
Gaussian noise (tests/conformance), that error reaches a few 1e-11 of ε, so every ε and δ the library gives is
stated :data:`LIBRARY_MARGIN` (relatively) above it.

Examples
--------
>>> acc = LibraryAccountant(mode="pld")
>>> acc.record_gaussian(2.0, sensitivity=1.0, count=4)
>>> round(acc.epsilon(1e-5), 2)
4.38
"""

from __future__ import annotations

from typing import Any

from .._validation import check_positive, check_probability
from ..exceptions import CalibrationError, InvalidParameterError
from .accounting import OWNER, AccountingMode, Charge, PrivacyAccountant, budget_exceeded

__all__ = ["LIBRARY_MARGIN", "LibraryAccountant", "outward"]

#: The relative step above dp-accounting's ε(δ) and δ(ε) (see the module docstring): a thousand times the largest
#: deficit measured against exact compositions.
LIBRARY_MARGIN = 1e-8


def outward(value: float) -> float:
    """``value`` stated :data:`LIBRARY_MARGIN` above a dp-accounting figure (infinity and 0 unchanged)."""
    return float(value) * (1.0 + LIBRARY_MARGIN)


def _self_composed(event: Any, count: int) -> Any:
    import dp_accounting

    return event if count == 1 else dp_accounting.SelfComposedDpEvent(event, count)


class LibraryAccountant(PrivacyAccountant):
    """Composition through dp-accounting's PLD or RDP accountant (see the module docstring)."""

    __slots__ = ("_library",)
    modes = ("pld", "rdp")

    def __init__(self, mode: AccountingMode = "pld", **options: Any) -> None:
        super().__init__(mode, **options)
        self._library: Any = None  # the dp-accounting accountant holding every committed charge

    def _record_profile(
        self, profile: Any, sensitivity: float, delta: Any, count: int, label: str, *, exact: Any = None
    ) -> None:
        event = profile.event(sensitivity, mode=self._mode)
        if event is None:
            raise InvalidParameterError(
                f"`{OWNER}` in mode {self._mode!r} cannot compose {profile.label} noise of this kind (dp-accounting "
                "has no event for vector Laplace, ℓ2 or multi-user Laplace, or lattice Laplace noise); use mode "
                "'approximate' (or 'rdp' for the discrete Gaussian)."
            )
        self._commit(Charge(None, None, _self_composed(event, count), count, label))

    def _on_commit(self, charge: Charge) -> None:
        if self._library is None:
            self._library = self._library_accountant([])
        self._library.compose(charge.event)

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
            return outward(self._library.get_epsilon(delta))
        return outward(self._library_accountant(charges).get_epsilon(delta))

    def _check_budget(self, charges: list[Charge]) -> None:
        assert self._budget_delta is not None
        eps = self._library_epsilon(charges, float(self._budget_delta))
        if self._budget_epsilon is not None and eps > self._budget_epsilon:
            spent = self._library_epsilon(charges[:-1], float(self._budget_delta))
            alone = outward(self._library_accountant(charges[-1:]).get_epsilon(float(self._budget_delta)))
            raise budget_exceeded(
                f"ε = {alone:.6g} (alone)",
                f"ε = {spent:.6g}",
                f"ε = {max(float(self._budget_epsilon) - spent, 0.0):.6g}",
                f"the budget ε = {float(self._budget_epsilon):.6g} at δ = {float(self._budget_delta):.3g}: "
                f"with it the spent ε would be {eps:.6g}.",
            )

    def epsilon(self, delta: float = 0.0) -> float:
        """The library's ε(δ) (δ > 0)."""
        owner = f"{OWNER}.epsilon"
        dl = check_probability(delta, "delta", owner)
        if dl == 0.0:
            raise CalibrationError(f"`delta` of `{owner}` must be > 0 in mode {self._mode!r}.")
        return self._library_epsilon(list(self._charges), dl)

    def delta(self, epsilon: float) -> float:
        eps = check_positive(epsilon, "epsilon", f"{OWNER}.delta", allow_zero=True)
        if not self._charges:
            return 0.0
        return float(min(1.0, outward(self._library.get_delta(eps))))
