"""Who states the guarantee of a noise: the rules the layers above register, so that the noise layer imports none.

A noise's :meth:`~privnoise.mechanisms.Mechanism.guarantee_for` states what releasing ``query(x) + w`` gives: the
Fisher information it leaves about each record (Farokhi & Sandberg; the rule of :mod:`privnoise.fisher.information`)
and, where the family has a privacy profile, its (ε, δ) (the rule of :mod:`privnoise.dp.profile`). A hardened
release asks for the privacy profile of the noise it wraps, with the value rounded to its grid (the rule
:data:`PRIVACY_PROFILE`, also of :mod:`privnoise.dp.profile`). Those modules sit above the noise families (they read
the families' densities and profiles), so the families never import them: each registers its rule here, and
:data:`PROVIDERS` names the module that provides a rule not yet registered (it is loaded by name on first use, as
entry points are), so a family works whichever module was imported first.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

__all__ = [
    "DIFFERENTIAL_PRIVACY",
    "FISHER_INFORMATION",
    "PRIVACY_PROFILE",
    "PROVIDERS",
    "register_statement",
    "statement",
]

#: The names of the rules.
FISHER_INFORMATION = "fisher-information"
DIFFERENTIAL_PRIVACY = "differential-privacy"
#: ``rule(noise, *, grid=None)``: the noise's privacy profile, of the value rounded to Λℤ first when ``grid`` = Λ.
PRIVACY_PROFILE = "privacy-profile"

#: rule → the module that registers it when imported.
PROVIDERS: dict[str, str] = {
    FISHER_INFORMATION: "privnoise.fisher.information",
    DIFFERENTIAL_PRIVACY: "privnoise.dp.profile",
    PRIVACY_PROFILE: "privnoise.dp.profile",
}

_RULES: dict[str, Callable[..., Any]] = {}


def register_statement(name: str, rule: Callable[..., Any]) -> None:
    """Register ``rule`` as the statement ``name`` (done once by the module that owns it)."""
    _RULES[name] = rule


def statement(name: str) -> Callable[..., Any]:
    """The registered rule ``name``, loading its provider (:data:`PROVIDERS`) on first use.

    Raises
    ------
    LookupError
        When no module provides it.
    """
    if name not in _RULES and name in PROVIDERS:
        importlib.import_module(PROVIDERS[name])
    try:
        return _RULES[name]
    except KeyError:
        raise LookupError(f"no rule states {name!r}.") from None
