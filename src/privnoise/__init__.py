"""privnoise: privacy-preserving additive noise for numerical data.

Design the optimal noise for a query and a privacy goal, sample it from a cryptographically strong generator, and
release answers that carry the guarantee which holds for them.

>>> import numpy as np, privnoise as pn
>>> q = pn.queries.mean(500, bounds=(0.0, 5.0))
>>> mech = pn.fisher.optimal_noise(q, support=(-0.1, 0.1))        # bounded support: cos² noise
>>> rel = pn.release(np.full(500, 1.0), q, mech, rng=0)
>>> rel.guarantee.notion
'fisher-information'

Modules one hop from here: :mod:`privnoise.queries`, :mod:`privnoise.mechanisms`, :mod:`privnoise.fisher`
(Farokhi & Sandberg), :mod:`privnoise.dp` (differential privacy calibration), :mod:`privnoise.guarantees`,
:mod:`privnoise.io` (arrays, frames, CSV and Parquet, whole or in chunks), :mod:`privnoise.linalg` (structured query
operators and covariances),
:mod:`privnoise.recoverability` (Nageswaran: MMSE-optimal responses to linear queries of Gaussian data),
:mod:`privnoise.systems` (dynamical systems: initial-state and statistical-input privacy, streaming),
:mod:`privnoise.optimization` (Farokhi: Fisher-private projected gradient descent for quadratic programs),
:mod:`privnoise.random`,
:mod:`privnoise.reproduce`.

Every name is loaded on first use (PEP 562), so ``import privnoise`` and the ``privnoise`` command start without
importing numpy or scipy; ``pn.fisher`` or ``pn.Gaussian`` imports what it needs when it is first touched.
:mod:`privnoise.client` needs the ``server`` extra.
"""

from __future__ import annotations

import sys
import types
from importlib import import_module
from typing import TYPE_CHECKING

from ._version import __version__

__all__ = [
    "BudgetExceededError",
    "CalibrationError",
    "CombinedGuarantee",
    "DifferentialPrivacyGuarantee",
    "DimensionError",
    "FisherGuarantee",
    "FisherInformation",
    "FunctionQuery",
    "Gaussian",
    "InvalidParameterError",
    "L2Laplace",
    "Laplace",
    "LinearQuery",
    "Mechanism",
    "MissingExtraError",
    "MultiUserLaplace",
    "Noise",
    "PrivnoiseError",
    "RaisedCosine",
    "Release",
    "Session",
    "SolverError",
    "TabulatedDensity",
    "__version__",
    "analysis",
    "default_rng",
    "dp",
    "exceptions",
    "fisher",
    "guarantees",
    "io",
    "linalg",
    "mechanisms",
    "optimization",
    "queries",
    "random",
    "recoverability",
    "release",
    "systems",
]

#: Names exported from the package itself, with the module that defines them.
_EXPORTS = {
    "BudgetExceededError": "exceptions",
    "CalibrationError": "exceptions",
    "DimensionError": "exceptions",
    "InvalidParameterError": "exceptions",
    "MissingExtraError": "exceptions",
    "PrivnoiseError": "exceptions",
    "SolverError": "exceptions",
    "CombinedGuarantee": "guarantees",
    "DifferentialPrivacyGuarantee": "guarantees",
    "FisherGuarantee": "guarantees",
    "FisherInformation": "guarantees",
    "Gaussian": "mechanisms",
    "L2Laplace": "mechanisms",
    "Laplace": "mechanisms",
    "Mechanism": "mechanisms",
    "MultiUserLaplace": "mechanisms",
    "Noise": "mechanisms",
    "RaisedCosine": "mechanisms",
    "TabulatedDensity": "mechanisms",
    "FunctionQuery": "queries",
    "LinearQuery": "queries",
    "default_rng": "random",
    "Release": "release",
    "release": "release",
    "Session": "analysis",
}

#: Subpackages and modules reachable as ``pn.<name>`` (client needs the ``server`` extra, so it is not in ``__all__``).
_MODULES = frozenset(name for name in __all__ if name not in _EXPORTS and name != "__version__") | {"client"}

if TYPE_CHECKING:  # the same names, eagerly, for type checkers and documentation tools
    from . import (
        analysis,
        dp,
        exceptions,
        fisher,
        guarantees,
        io,
        linalg,
        mechanisms,
        optimization,
        queries,
        random,
        recoverability,
        systems,
    )
    from .analysis import Session
    from .exceptions import (
        BudgetExceededError,
        CalibrationError,
        DimensionError,
        InvalidParameterError,
        MissingExtraError,
        PrivnoiseError,
        SolverError,
    )
    from .guarantees import (
        CombinedGuarantee,
        DifferentialPrivacyGuarantee,
        FisherGuarantee,
        FisherInformation,
    )
    from .mechanisms import (
        Gaussian,
        L2Laplace,
        Laplace,
        Mechanism,
        MultiUserLaplace,
        Noise,
        RaisedCosine,
        TabulatedDensity,
    )
    from .queries import FunctionQuery, LinearQuery
    from .random import default_rng
    from .release import Release, release


def __getattr__(name: str) -> object:
    """Import ``pn.<module>`` or an exported name on first access, then keep it in the module namespace."""
    if name in _MODULES:
        value: object = import_module(f".{name}", __name__)
    elif name in _EXPORTS:
        value = getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    """The package's module type: importing the submodule ``privnoise.release`` keeps ``pn.release`` the function.

    The import system binds a submodule to its parent's attribute of the same name once it has loaded it; here that
    name is also the function :func:`privnoise.release.release`, which is what ``pn.release`` must stay.
    """

    def __setattr__(self, name: str, value: object) -> None:
        if name == "release" and isinstance(value, types.ModuleType):
            value = value.release
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
