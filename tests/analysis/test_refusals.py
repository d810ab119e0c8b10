"""A refused release says what it asked, what was spent and what is left — from the session's ledger (every
accountant) and from the library's accountants — and nothing is charged."""

from __future__ import annotations

import re

import numpy as np
import pytest

import privnoise as pn
from privnoise.exceptions import BudgetExceededError


def _data(units: int = 90, rows: int = 3, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    unit = np.repeat(np.arange(units), rows)
    return {"id": unit, "mass": rng.normal(4200.0, 800.0, unit.size)}


@pytest.mark.parametrize(("accountant", "delta", "pattern"), [
    ("pure", 0.0, r"^mean refused: the release asks ε = 1, δ = 0; spent so far ε = 2.5, δ = 0, remaining ε = 0.5, "
                  r"δ = 0 of the budget ε = 3, δ = 0: with it the total would be ε = 3.5, δ = 0\.$"),
    ("approximate", 1e-6, r"^mean refused: the release asks ε = 1, δ = 0; spent so far ε = 2.5, δ = 0, remaining "
                          r"ε = 0.5, δ = 1e-06 of the budget ε = 3, δ = 1e-06"),
    ("zcdp", 1e-6, r"^mean refused: the release asks ρ = 0.5, δ = 0; spent so far ρ = 0.15, remaining ρ = 0.035\d* "
                   r"of ρ = [\d.]+"),
    ("advanced", 1e-6, r"^mean refused: it asks ε = 1, δ = 0; spent so far ε = 2.5, remaining ε = 0.5, δ = 1e-06 "
                       r"of the budget ε = 3 at δ = 1e-06 \(accountant 'advanced'\): with it the spent ε would be "),
])
def test_a_refused_query_says_what_it_asked_and_what_is_left(accountant: str, delta: float, pattern: str) -> None:
    s = pn.Session(_data(), epsilon=3.0, delta=delta, accountant=accountant, rng=1)
    first = {"rho": 0.15} if accountant == "zcdp" else {"epsilon": 2.5}
    s.count(**first)
    before = s.remaining()
    with pytest.raises(BudgetExceededError) as refused:
        s.mean("mass", bounds=(2500, 6500), epsilon=1.0)
    assert re.search(pattern, str(refused.value)), str(refused.value)
    assert s.remaining() == before


@pytest.mark.parametrize(("mode", "pattern"), [
    ("approximate", r"^the release asks ε = 1, δ = 0; spent so far ε = 2.5, δ = 0, remaining ε = 0.5, δ = 1e-06 of "
                    r"the budget ε = 3, δ = 1e-06: with it the total would be ε = 3.5, δ = 0\.$"),
    ("pld", r"^the release asks ε = (1|0.99\d*) \(alone\); spent so far ε = 2.5\d*, remaining ε = 0.5\d* of the "
            r"budget ε = 3 at δ = 1e-06: with it the spent ε would be 3.5"),
    ("zcdp", r"^the release asks ρ = 0.5, δ = 0; spent so far ρ = 0.125, remaining ρ = 0.06\d* of ρ = 0.18"),
])
def test_the_accountants_refusals_say_what_was_asked_and_what_is_left(mode: str, pattern: str) -> None:
    if mode == "pld":
        pytest.importorskip("dp_accounting")
    accountant = pn.dp.accountant_for(mode, epsilon_budget=3, delta_budget=1e-6)
    accountant.record_laplace(1 / 2.5 if mode != "zcdp" else 2.0, 1.0)  # ε = 2.5 (ρ = 1/8 for zCDP)
    with pytest.raises(BudgetExceededError) as refused:
        accountant.record_laplace(1.0, 1.0)
    assert re.search(pattern, str(refused.value)), str(refused.value)
