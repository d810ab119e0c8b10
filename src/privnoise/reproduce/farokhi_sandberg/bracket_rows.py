"""Rows that check a guaranteed bracket [λ_low, λ_up] of λ₁ (Theorem 2 of Farokhi & Sandberg, eq. (12)).

Two kinds of ``check`` row serve every support of :mod:`.theorem2_brackets` and :mod:`.theorem2_particular`: a
reference value (a closed form or a published λ₁) that must lie inside the bracket, and a bracket whose two ends
are the row's printed and computed values, compared with a bracket of another method that it must overlap.
"""

from __future__ import annotations

from .._report import Row, make_row

__all__ = ["bracket_row", "overlap_text", "reference_row"]


def reference_row(key: str, claim: str, reference: float, computed: float, bracket: tuple[float, float],
                  description: str, reference_name: str, method: str) -> Row:
    """A ``check`` row of a ``reference`` value (printed) against ``computed``, an end of the bracket or inside it.

    The reason is ``description``, then whether the ``reference_name`` lies inside ``bracket`` = (low, up).
    """
    low, up = bracket
    where = "inside" if low <= reference <= up else "OUTSIDE"
    reason = f"{description}; the {reference_name} lies {where} the bracket"
    return make_row(key, claim, reference, computed, "check", reason, method)


def bracket_row(key: str, claim: str, bracket: tuple[float, float], reason: str, method: str) -> Row:
    """A ``check`` row of a bracket (low, up) of λ₁: printed = its lower end, computed = its upper end."""
    low, up = bracket
    return make_row(key, claim, low, up, "check", reason, method)


def overlap_text(bracket: tuple[float, float], other: tuple[float, float]) -> str:
    """"overlaps it" when the intervals ``bracket`` and ``other`` share a point, else "does NOT overlap it".

    >>> overlap_text((1.0, 2.0), (1.5, 3.0)), overlap_text((1.0, 2.0), (2.5, 3.0))
    ('overlaps it', 'does NOT overlap it')
    """
    return "overlaps it" if max(bracket[0], other[0]) <= min(bracket[1], other[1]) else "does NOT overlap it"
