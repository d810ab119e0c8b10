"""What the command line's privacy ledger holds: datasets, their entries and budgets, in exact rationals.

The storage is :mod:`privnoise._cli.ledger`; this module holds the values it reads and writes, the identity rule of
a dataset (:func:`identify`), the reading of a total (:func:`parse_total`) and the composition of charges, done by
the library's exact accountant (:class:`~privnoise.dp.rational_accountant.RationalAccountant`, approximate mode:
basic composition, Dwork & Roth Theorem 3.16).
"""

from __future__ import annotations

import hashlib
import math
import os
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from ..exceptions import BudgetExceededError
from .errors import CliInputError

__all__ = [
    "DEFAULT_TOTAL_DELTA",
    "DEFAULT_TOTAL_EPSILON",
    "Dataset",
    "Entry",
    "LedgerRefusal",
    "Status",
    "admits",
    "amount",
    "exact_amounts",
    "identify",
    "parse_total",
    "read_fraction",
    "read_information",
    "spent_by",
]

#: The total budget a dataset gets at its first use unless ``--total-epsilon``/``--total-delta`` say otherwise.
DEFAULT_TOTAL_EPSILON = Fraction(1)
DEFAULT_TOTAL_DELTA = Fraction(1, 10**6)

_GLOB = frozenset("*?[")


class LedgerRefusal(BudgetExceededError):
    """A release would spend more than its dataset's total: nothing is charged and nothing is released."""


def amount(value: Fraction | float | None, *, exact: bool | None = None) -> str:
    """An amount as a decimal of six significant digits ("" for None); with ``exact`` (default: the root option
    ``privnoise --exact`` of the running command) as the exact rational, itself a short decimal when one is exact.

    Examples
    --------
    >>> amount(Fraction(1, 10)), amount(Fraction(1, 10**6)), amount(Fraction(1, 3)), amount(Fraction(2))
    ('0.1', '1e-06', '0.333333', '2')
    >>> amount(Fraction(1, 3), exact=True), amount(Fraction(1, 10), exact=True)
    ('1/3', '0.1')
    """
    if value is None:
        return ""
    if isinstance(value, float):
        return "∞" if math.isinf(value) else f"{value:.6g}"
    if not (exact_amounts() if exact is None else exact):
        return f"{float(value):.6g}"
    text = f"{float(value):.15g}"
    return text if Fraction(text) == value else str(value)


def exact_amounts() -> bool:
    """Whether the running command was asked for exact rationals (``privnoise --exact ...``)."""
    from .errors import current_context

    ctx = current_context()
    obj = ctx.find_root().obj if ctx is not None else None
    return bool(obj.get("exact", False)) if isinstance(obj, dict) else False


def parse_total(text: str | None, option: str) -> Fraction | None:
    """The exact total given to ``option`` (a decimal such as ``3`` or ``1e-6``, or a fraction such as ``1/3``).

    ``--total-epsilon`` must be > 0, ``--total-delta`` in [0, 1); None stays None.

    Examples
    --------
    >>> parse_total("0.1", "--total-epsilon"), parse_total("1/3", "--total-epsilon")
    (Fraction(1, 10), Fraction(1, 3))
    >>> parse_total("nan", "--total-delta")
    Traceback (most recent call last):
    ...
    privnoise._cli.errors.CliInputError: --total-delta must be a number in [0, 1) (a decimal such as 1e-6 or a fraction such as 1/3); got 'nan'.
    """
    if text is None:
        return None
    delta = option == "--total-delta"
    rule = "a number in [0, 1)" if delta else "a finite number > 0"
    example = "1e-6" if delta else "3"
    message = (
        f"{option} must be {rule} (a decimal such as {example} or a fraction such as 1/3); got {text!r}."
    )
    try:
        value = Fraction(text.strip())
        float(value)  # finite as a double too: every amount is also shown as a float
    except (ValueError, ZeroDivisionError, OverflowError):
        raise CliInputError(message) from None
    if (delta and not 0 <= value < 1) or (not delta and value <= 0):
        raise CliInputError(message)
    return value


def _sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


@dataclass(frozen=True, slots=True)
class Dataset:
    """Who a ledger entry is about: its key (``name``), how the key was found and the content's SHA-256."""

    name: str
    identity: str  # "file", "pattern" or "name"
    sha256: str | None = None

    @property
    def reference(self) -> str:
        """How to name this dataset on the command line (``privnoise budget REFERENCE``)."""
        import shlex

        return f"--dataset {shlex.quote(self.name)}" if self.identity == "name" else shlex.quote(self.name)


def identify(data: Path | str | None, name: str | None, *, content: bool = True) -> Dataset:
    """The dataset of a release of ``data``: ``name`` (``--dataset``) when given, else the file's resolved path.

    ``content`` hashes a regular file (SHA-256), stored with each entry; a directory or glob has no hash.
    """
    path = None if data is None else Path(data).expanduser()
    sha = _sha256(path) if content and path is not None and path.is_file() else None
    if name is not None:
        text = name.strip()
        if not text or len(text) > 255 or any(not ch.isprintable() for ch in text):
            raise CliInputError("--dataset must be a name of 1 to 255 printable characters.")
        return Dataset(text, "name", sha)
    if path is None:
        raise CliInputError(
            "give the data file (DATA) or --dataset NAME: the ledger keeps one budget per dataset."
        )
    if _GLOB & set(str(data)) or path.is_dir():
        return Dataset(os.path.abspath(path), "pattern", None)
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError):  # a loop of symbolic links (RuntimeError before Python 3.13)
        raise CliInputError(f"{path}: the path cannot be resolved (a loop of symbolic links).") from None
    return Dataset(str(resolved), "file", sha)


def read_fraction(text: str | None) -> Fraction | None:
    return None if text is None else Fraction(text)


def read_information(text: str | None) -> Fraction | float | None:
    if text is None:
        return None
    return math.inf if text == "inf" else Fraction(text)


def _pair(value: tuple[Fraction, Fraction]) -> dict[str, Any]:
    return {
        "epsilon": str(value[0]),
        "delta": str(value[1]),
        "epsilon_value": float(value[0]),
        "delta_value": float(value[1]),
    }


@dataclass(frozen=True, slots=True)
class Entry:
    """One row of a dataset's ledger: a charge ("dp"), a Fisher release ("fisher"), a sensor stream ("input-law"),
    or a total set ("total")."""

    id: int
    time: str
    kind: str
    command: str
    query: str
    epsilon: Fraction | None
    delta: Fraction | None
    information: Fraction | float | None
    sha256: str | None
    details: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "time": self.time,
            "kind": self.kind,
            "command": self.command,
            "query": self.query,
            "epsilon": None if self.epsilon is None else str(self.epsilon),
            "delta": None if self.delta is None else str(self.delta),
            "record_information": None if self.information is None else str(self.information),
            "sha256": self.sha256,
            "details": self.details,
        }


@dataclass(frozen=True, slots=True)
class Status:
    """A dataset's budget: its total, what its charges spend (exact) and its entries, oldest first."""

    dataset: Dataset
    created: str
    total: tuple[Fraction, Fraction]
    spent: tuple[Fraction, Fraction]
    entries: tuple[Entry, ...]

    @property
    def remaining(self) -> tuple[Fraction, Fraction]:
        """total − spent, never below 0 (a total lowered under what is spent leaves nothing)."""
        epsilon, delta = self.total[0] - self.spent[0], self.total[1] - self.spent[1]
        return max(epsilon, Fraction(0)), max(delta, Fraction(0))

    @property
    def record_information(self) -> Fraction | float | None:
        """Σ over Fisher releases of the largest Fisher information about one record (None without one).

        Information of independent releases adds, and Σₖ maxᵢ 𝓘ᵏᵢᵢ ≥ maxᵢ Σₖ 𝓘ᵏᵢᵢ, so every record's error, with all
        others known, is at least 1/this (Farokhi & Sandberg, eq. (7)).
        """
        values = [e.information for e in self.entries if e.kind == "fisher" and e.information is not None]
        if not values:
            return None
        if any(isinstance(v, float) for v in values):
            return math.inf
        return sum(values, Fraction(0))

    def as_dict(self) -> dict[str, Any]:
        info = self.record_information
        return {
            "dataset": self.dataset.name,
            "identity": self.dataset.identity,
            "created": self.created,
            "total": _pair(self.total),
            "spent": _pair(self.spent),
            "remaining": _pair(self.remaining),
            "record_information": None if info is None else str(info),
            "record_information_value": None if info is None else float(info),
            "charges": [e.as_dict() for e in self.entries],
        }

    def summary(self) -> str:
        """One line: spent, total and remaining (ε, δ)."""
        (se, sd), (te, td), (re, rd) = self.spent, self.total, self.remaining
        return (
            f"spent ε = {amount(se)}, δ = {amount(sd)} of the total ε = {amount(te)}, δ = {amount(td)}; "
            f"remaining ε = {amount(re)}, δ = {amount(rd)}"
        )


def spent_by(entries: tuple[Entry, ...]) -> tuple[Fraction, Fraction]:
    """(Σε, Σδ) of the charges, composed by the library's exact accountant ((0, 0) without a charge: a dataset of
    sensor streams only, whose entries charge no (ε, δ), loads no accountant)."""
    charges = [entry for entry in entries if entry.kind == "dp" and entry.epsilon is not None]
    if not charges:
        return Fraction(0), Fraction(0)
    from ..dp.rational_accountant import RationalAccountant

    accountant = RationalAccountant("approximate")
    for entry in charges:
        accountant.record_epsilon(entry.epsilon, entry.delta or 0, label=entry.query)
    return accountant.total_epsilon, accountant.total_delta


def admits(
    total: tuple[Fraction, Fraction], spent: tuple[Fraction, Fraction], asked: tuple[Fraction, Fraction]
) -> bool:
    """Whether the charge ``asked`` fits the total after ``spent`` (the exact accountant's own budget check)."""
    from ..dp.rational_accountant import RationalAccountant

    accountant = RationalAccountant("approximate", epsilon_budget=total[0], delta_budget=total[1])
    try:
        if spent[0] > 0:
            accountant.record_epsilon(spent[0], spent[1], label="spent")
        accountant.record_epsilon(asked[0], asked[1], label="asked")
    except BudgetExceededError:
        return False
    return True
