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
:mod:`privnoise.recoverability` (Nageswaran: MMSE-optimal responses to linear queries of Gaussian data),
:mod:`privnoise.systems` (dynamical systems: initial-state and statistical-input privacy, streaming),
:mod:`privnoise.optimization` (Farokhi: Fisher-private projected gradient descent for quadratic programs),
:mod:`privnoise.solvers` (numerical optimal noise: LP, Fisher program), :mod:`privnoise.random`,
:mod:`privnoise.reproduce`.
"""

from . import (
    dp,
    exceptions,
    fisher,
    guarantees,
    mechanisms,
    optimization,
    queries,
    random,
    recoverability,
    solvers,
    systems,
)
from .exceptions import (
    BudgetExceededError,
    CalibrationError,
    DimensionError,
    InvalidParameterError,
    PrivnoiseError,
    SolverError,
)
from .guarantees import DifferentialPrivacyGuarantee, FisherGuarantee, FisherInformation
from .mechanisms import (
    Gaussian,
    L2Laplace,
    Laplace,
    Mechanism,
    MultiUserLaplace,
    RaisedCosine,
    TabulatedDensity,
    TiltedRaisedCosine,
)
from .queries import FunctionQuery, LinearQuery
from .random import default_rng
from .release import Release, release

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    """Load :mod:`privnoise.client` (which needs the ``server`` extra) on first access of ``pn.client``."""
    if name == "client":
        import importlib

        return importlib.import_module(".client", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BudgetExceededError",
    "CalibrationError",
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
    "MultiUserLaplace",
    "PrivnoiseError",
    "RaisedCosine",
    "Release",
    "SolverError",
    "TabulatedDensity",
    "TiltedRaisedCosine",
    "__version__",
    "default_rng",
    "dp",
    "exceptions",
    "fisher",
    "guarantees",
    "mechanisms",
    "optimization",
    "queries",
    "random",
    "recoverability",
    "release",
    "solvers",
    "systems",
]
