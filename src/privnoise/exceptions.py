"""Exceptions raised by privnoise.

Every error privnoise raises derives from :class:`PrivnoiseError` and, where one fits, from the builtin
exception it refines, so ``except ValueError`` keeps working in code that does not know privnoise::

    PrivnoiseError
    ├── InvalidParameterError (ValueError)   a parameter breaks its rule (sign, range, finiteness, type)
    │   └── DimensionError                   shapes that do not agree
    ├── CalibrationError (ArithmeticError)   no parameter meets the privacy target (nothing to bracket)
    ├── BudgetExceededError                  a release would spend more than a budget allows
    ├── SolverError (RuntimeError)           a numerical solver did not converge or is not available
    └── MissingExtraError (ImportError)      an optional dependency is not installed; names the pip extra

    ContributionCapWarning (UserWarning)     a privacy unit is declared without a cap on its rows: one row each

Messages name the parameter, its owner, the rule and the value, for example
"`sigma` of `Gaussian` must be > 0; got -1.0."
"""

from __future__ import annotations

__all__ = [
    "BudgetExceededError",
    "CalibrationError",
    "ContributionCapWarning",
    "DimensionError",
    "InvalidParameterError",
    "MissingExtraError",
    "PrivnoiseError",
    "SolverError",
]


class PrivnoiseError(Exception):
    """Base class of every privnoise error."""


class InvalidParameterError(PrivnoiseError, ValueError):
    """A parameter or an input breaks a documented rule; raised before any data is touched."""


class DimensionError(InvalidParameterError):
    """Array shapes do not agree (a query, a mechanism and the data must fit together)."""


class CalibrationError(PrivnoiseError, ArithmeticError):
    """No parameter value meets the requested privacy target."""


class BudgetExceededError(PrivnoiseError):
    """A release would exceed a privacy budget."""


class SolverError(PrivnoiseError, RuntimeError):
    """A numerical solver failed, or the problem needs a solver privnoise does not provide."""


class MissingExtraError(PrivnoiseError, ImportError):
    """A feature needs an optional dependency that is not installed; the message names the extra to install."""


class ContributionCapWarning(UserWarning):
    """A session declares a privacy unit without ``max_contributions``: at most one row of each unit is used."""
