"""``SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1, delta = 1e-5, privacy_unit_column = id)``: the per-query
options of BigQuery's differentially private SQL, read before the statement is parsed.

The clause is cut out of the text (blanked, so that every position in the statement stays where it was) and its
``name = value`` pairs returned: ``epsilon``, ``delta`` (numbers), ``privacy_unit_column`` (a column) and
``max_groups_contributed`` (an integer, the cap k; ``max_contributions`` is accepted as its other name). Which of
them a caller may set is the interface's decision: the library and the command line take them; the query server
never lets them exceed the owner's policy.

>>> text, options = read_options("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon=1, privacy_unit_column=id) "
...                              "COUNT(*) FROM t")
>>> options, text.split()
({'epsilon': 1.0, 'privacy_unit_column': 'id'}, ['SELECT', 'COUNT(*)', 'FROM', 't'])
"""

from __future__ import annotations

import math
import re
from typing import Any

from .statement import SqlError

__all__ = ["OPTION_NAMES", "read_options"]

_CLAUSE = re.compile(r"\bSELECT\s+(WITH\s+DIFFERENTIAL_PRIVACY\s+OPTIONS\s*\()", re.IGNORECASE)
_PAIR = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$", re.DOTALL)
#: The options understood, and the kind of value each takes.
OPTION_NAMES = {"epsilon": "number", "delta": "number", "privacy_unit_column": "column",
                "max_groups_contributed": "integer", "max_contributions": "integer"}


def _position(text: str, offset: int) -> tuple[int, int]:
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _value(name: str, raw: str, text: str, offset: int) -> Any:
    kind = OPTION_NAMES[name]
    if kind == "column":
        found = raw.strip("`\"'")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_ ]*", found):
            raise SqlError(f"option {name} takes a column name; got {raw!r}", *_position(text, offset))
        return found
    try:
        number = float(raw)
    except ValueError:
        raise SqlError(f"option {name} takes a number; got {raw!r}", *_position(text, offset)) from None
    if not math.isfinite(number) or number < 0 or (kind == "integer" and (number != int(number) or number < 1)):
        rule = "an integer ≥ 1" if kind == "integer" else "a finite number ≥ 0"
        raise SqlError(f"option {name} must be {rule}; got {raw!r}", *_position(text, offset))
    return int(number) if kind == "integer" else number


def read_options(text: str) -> tuple[str, dict[str, Any]]:
    """(the statement with its options clause blanked, the options); see the module docstring."""
    found = _CLAUSE.search(text)
    if found is None:
        return text, {}
    start = found.start(1)
    depth, end = 1, found.end(1)
    while end < len(text) and depth:
        depth += {"(": 1, ")": -1}.get(text[end], 0)
        end += 1
    if depth:
        raise SqlError("the OPTIONS( of WITH DIFFERENTIAL_PRIVACY is never closed", *_position(text, start))
    inner_start = found.end(1)
    options: dict[str, Any] = {}
    offset = inner_start
    for part in text[inner_start:end - 1].split(","):
        if part.strip():
            pair = _PAIR.match(part)
            if pair is None or pair.group(1).lower() not in OPTION_NAMES:
                raise SqlError(f"unknown differential-privacy option {part.strip()!r}; the options are "
                               f"{', '.join(OPTION_NAMES)}", *_position(text, offset))
            name = pair.group(1).lower()
            if name in options or (name.startswith("max_") and any(k.startswith("max_") for k in options)):
                raise SqlError(f"option {name} is given twice", *_position(text, offset))
            options[name] = _value(name, pair.group(2), text, offset)
        offset += len(part) + 1
    if "max_contributions" in options:
        options["max_groups_contributed"] = options.pop("max_contributions")
    blank = "".join(ch if ch == "\n" else " " for ch in text[start:end])
    return text[:start] + blank + text[end:], options
