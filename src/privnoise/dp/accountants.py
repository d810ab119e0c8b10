"""The accountant for a composition mode, built explicitly: :func:`accountant_for`.

=================  ===========================================================================================
mode               accountant
=================  ===========================================================================================
"pure"             :class:`~privnoise.dp.rational_accountant.RationalAccountant`: Σε in exact rationals
"approximate"      :class:`~privnoise.dp.rational_accountant.RationalAccountant`: (Σε, Σδ), optionally advanced
"pld", "rdp"       :class:`~privnoise.dp.library_accountant.LibraryAccountant`: dp-accounting's PLD or RDP
"zcdp"             :class:`~privnoise.dp.zcdp.ZCDPAccountant`: Σρ in exact rationals, converted at the end
=================  ===========================================================================================

Every accountant derives from :class:`~privnoise.dp.accounting.PrivacyAccountant` and may also be built by its own
class (``RationalAccountant(mode="pure")``); the base itself is not an accountant.

Examples
--------
>>> acc = accountant_for("pure")
>>> for _ in range(10):
...     acc.record_epsilon(0.1)
>>> acc.total_epsilon, type(acc).__name__
(Fraction(1, 1), 'RationalAccountant')
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from ..exceptions import InvalidParameterError
from .accounting import PrivacyAccountant
from .library_accountant import LibraryAccountant
from .rational_accountant import RationalAccountant
from .zcdp import ZCDPAccountant

__all__ = ["ACCOUNTANT_MODES", "accountant_for"]

#: Every mode :func:`accountant_for` builds.
Mode = Literal["pure", "approximate", "pld", "rdp", "zcdp"]
ACCOUNTANT_MODES: tuple[str, ...] = get_args(Mode)


def accountant_for(mode: Mode = "approximate", **options: Any) -> PrivacyAccountant:
    """The accountant of ``mode`` (module docstring), with the options of
    :class:`~privnoise.dp.accounting.PrivacyAccountant` (``advanced``, ``epsilon_budget``, ``delta_budget``,
    ``value_discretization_interval``)."""
    kinds: dict[str, type[PrivacyAccountant]] = {
        "pure": RationalAccountant,
        "approximate": RationalAccountant,
        "pld": LibraryAccountant,
        "rdp": LibraryAccountant,
        "zcdp": ZCDPAccountant,
    }
    kind = kinds.get(mode) if isinstance(mode, str) else None
    if kind is None:
        raise InvalidParameterError(
            f"`mode` of `accountant_for` must be one of {', '.join(ACCOUNTANT_MODES)}; got {mode!r}."
        )
    return kind(mode, **options)  # type: ignore[arg-type]
